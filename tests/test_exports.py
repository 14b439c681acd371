"""strata's list of its framework's names (src/strata/_exports.py) agrees with strata.framework.__all__, and
asking `strata` for another name does not import the framework."""

from __future__ import annotations

import subprocess
import sys


def test_the_list_is_the_frameworks() -> None:
    import strata.framework as framework
    from strata._exports import FRAMEWORK_NAMES

    missing, extra = set(framework.__all__) - FRAMEWORK_NAMES, FRAMEWORK_NAMES - set(framework.__all__)
    assert not missing and not extra, (f"update src/strata/_exports.py: add {sorted(missing)}, remove {sorted(extra)}; "
                                       f"the framework's names: {sorted(set(framework.__all__))}")


def test_an_unknown_name_does_not_import_the_framework() -> None:
    code = ("import sys, strata; assert not hasattr(strata, 'no_such_name'); "
            "print('strata.framework' in sys.modules); strata.tensor; print('strata.framework' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["False", "True"]


def test_torch_subpackages_are_attributes_after_import_strata() -> None:
    # as `import torch; torch.cuda.synchronize()`: no `import strata.cuda` needed (a program written for torch
    # and run under --as-torch does exactly this)
    code = ("import strata; strata.cuda.synchronize(); print(strata.cuda.is_available(), "
            "strata.distributed.is_available(), strata.nn.Linear.__name__, strata.optim.SGD.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "Linear", "SGD"]
