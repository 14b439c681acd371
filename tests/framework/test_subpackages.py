"""strata.nn, strata.optim and strata.autograd as real packages: importable first thing in a fresh
interpreter, the framework's modules at run time whichever is imported first, followed by mypy, and
`import strata` still lazy."""

from __future__ import annotations

import ast
import doctest
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import strata
import strata.framework as fw

SRC = Path(__file__).resolve().parents[2] / "src"
ROOT = SRC.parent

_IDENTITY = """
import strata, strata.framework as fw
import strata.autograd.functional, strata.nn.functional, strata.nn.init, strata.nn.utils.rnn, strata.optim.lr_scheduler
assert strata.autograd is fw.autograd and strata.autograd.functional is fw.autograd_functional
assert strata.nn is fw.nn and strata.nn.functional is fw.nn.functional and strata.nn.init is fw.nn.init
assert strata.nn.utils.rnn is fw.nn.utils.rnn and strata.optim is fw.optim
assert strata.optim.lr_scheduler is fw.optim.lr_scheduler
assert fw.autograd.functional is fw.autograd_functional  # torch.autograd.functional is an attribute too
import sys
dupes = [n for n, m in sys.modules.items() if n.startswith(("strata.nn", "strata.optim", "strata.autograd"))
         and not m.__name__.startswith("strata.framework.")]
assert not dupes, dupes  # no second copy of a framework module under the short name
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)


@pytest.mark.parametrize("first", ["import strata.autograd", "import strata.nn", "import strata.optim",
                                   "import strata.autograd.functional", "import strata; strata.zeros(1)"])
def test_fresh_interpreter_imports(first: str) -> None:
    # before: `import strata.autograd` first thing raised ModuleNotFoundError (only an alias the framework set up)
    res = _run(first + "\n" + _IDENTITY)
    assert res.returncode == 0, res.stderr


def test_submodule_not_yet_imported_is_not_loaded_twice() -> None:
    # strata.nn is the framework's package, whose folder would give a second copy of a framework module not
    # imported yet under the short name: the finder answers with the framework's own instead
    res = _run("import sys, strata.nn\n"
               "for n in ('strata.nn.utils.convert_parameters', 'strata.framework.nn.utils.convert_parameters'):\n"
               "    del sys.modules[n]\n"
               "import strata.nn.utils.convert_parameters as a\n"
               "import strata.framework.nn.utils.convert_parameters as b\n"
               "assert a is b, (a, b)\n"
               "try:\n"
               "    import strata.nn.no_such_module\n"
               "except ModuleNotFoundError as e:\n"
               "    assert e.name == 'strata.nn.no_such_module', e.name\n"
               "else:\n"
               "    raise AssertionError('imported a module that does not exist')\n")
    assert res.returncode == 0, res.stderr


def test_import_strata_stays_lazy() -> None:
    res = _run("import sys, strata\n"
               "assert 'strata.framework' not in sys.modules, 'import strata imported the framework'\n"
               "assert not any(n.startswith(('strata.nn', 'strata.optim', 'strata.autograd')) for n in sys.modules)\n"
               "import strata.nn\n"
               "assert strata.nn.Linear is sys.modules['strata.framework.nn'].Linear")
    assert res.returncode == 0, res.stderr


def test_attribute_access_imports_the_package() -> None:
    # `strata.nn` after `import strata` alone, as torch.nn after `import torch`
    assert strata.nn is fw.nn and strata.optim is fw.optim and strata.autograd is fw.autograd
    assert strata.autograd.functional.jacobian is fw.autograd_functional.jacobian
    from strata import autograd, nn, optim
    assert (nn, optim, autograd) == (fw.nn, fw.optim, fw.autograd)


def test_package_names_match_the_framework() -> None:
    # what mypy reads (the package files' explicit re-exports) exists at run time under the same name
    for pkg in ("nn", "optim", "autograd"):
        tree = ast.parse((SRC / "strata" / pkg / "__init__.py").read_text(encoding="utf-8"))
        names = [a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 for a in node.names if node.module and node.module.startswith("strata.framework") and a.name != "*"]
        assert names
        module = getattr(strata, pkg)
        assert all(hasattr(module, n) for n in names), [n for n in names if not hasattr(module, n)]


@pytest.mark.parametrize("pkg", ["nn", "optim", "autograd"])
def test_package_docstring_examples(pkg: str) -> None:
    # at run time strata.<pkg> is the framework's module, so test_doctests never sees these files' own examples
    doc = ast.get_docstring(ast.parse((SRC / "strata" / pkg / "__init__.py").read_text(encoding="utf-8")))
    test = doctest.DocTestParser().get_doctest(doc or "", {}, f"strata/{pkg}/__init__.py", None, 0)
    assert test.examples
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_torch_alias_autograd_functional() -> None:
    res = _run(textwrap.dedent("""
        import strata
        strata.install_torch_alias()
        import torch
        from torch.autograd.functional import hessian
        import strata.framework as fw
        assert torch.autograd.functional is fw.autograd_functional and hessian is fw.autograd_functional.hessian
        x = torch.tensor([1.0, 2.0])
        assert torch.autograd.functional.jacobian(lambda t: t * t, x).tolist() == [[2.0, 0.0], [0.0, 4.0]]
    """))
    assert res.returncode == 0, res.stderr


_MYPY_SNIPPET = """
import strata
import strata.autograd
import strata.autograd.functional as AF
import strata.nn as nn
import strata.nn.functional as F
import strata.optim
from strata.nn.utils.rnn import pad_sequence
from strata.optim.lr_scheduler import StepLR

reveal_type(nn.Linear)
reveal_type(strata.nn.Linear)
reveal_type(strata.optim.SGD)
reveal_type(StepLR)
reveal_type(AF.jacobian)
reveal_type(strata.autograd.functional.hessian)
reveal_type(F.relu)
reveal_type(pad_sequence)
layer: nn.Module = nn.Linear(2, 3)
bad: int = nn.Linear(2, 3)
"""


def test_mypy_follows_the_packages(tmp_path: Path) -> None:
    mypy = Path(sys.executable).with_name("mypy")
    if not mypy.exists():
        pytest.skip("mypy is not installed in this environment")
    (tmp_path / "snippet.py").write_text(_MYPY_SNIPPET, encoding="utf-8")
    res = subprocess.run([str(mypy), "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir",
                          str(ROOT / ".mypy_cache"), str(tmp_path / "snippet.py")],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    notes = [ln.split("Revealed type is ", 1)[1] for ln in res.stdout.splitlines() if "Revealed type is" in ln]
    assert len(notes) == 8, res.stdout
    assert all(n.strip('"') != "Any" for n in notes), notes
    assert notes[0].endswith('-> strata.framework.nn.modules.Linear"') and notes[1] == notes[0]
    assert notes[2].endswith('-> strata.framework.optim.sgd.SGD"')
    assert notes[3].endswith('-> strata.framework.optim.lr_scheduler.StepLR"')
    assert "strategy: str" in notes[4] and "outer_jacobian_strategy: str" in notes[5]
    assert notes[6].endswith('-> strata.framework.tensor.Tensor"') and "batch_first: bool" in notes[7]
    # the one error is the deliberate one: mypy knows Linear is a class, not an int
    errors = [ln for ln in res.stdout.splitlines() if ": error:" in ln]
    assert len(errors) == 1 and 'variable has type "int"' in errors[0], res.stdout
