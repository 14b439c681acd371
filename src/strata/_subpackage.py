"""How `strata.nn`, `strata.optim` and `strata.autograd` answer at run time.

Each is a real package under src/strata/ (so mypy, editors and `importlib.util.find_spec` find it, and
`import strata.autograd` works in a fresh interpreter), whose `__init__` names what it exports for the type
checker and then hands its name to the framework's module: `strata.nn is strata.framework.nn`, and
`strata.nn.functional is strata.framework.nn.functional`, however the two were imported first. The
framework's modules stay the one place the code lives (PyTorch's `torch.nn` is likewise one object under
every name it is reached by).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping


def answer_with(name: str, target: types.ModuleType, extra: Mapping[str, types.ModuleType] | None = None) -> None:
    """Make `name` (and `name.X` for every imported `target.X`, and `name.K` for each of `extra`) resolve to
    `target`'s modules. Called from the package's own `__init__`: the import system returns what
    sys.modules holds for the name once the `__init__` has run."""
    prefix = target.__name__ + "."
    sys.modules[name] = target
    for mod_name, mod in list(sys.modules.items()):
        if mod_name.startswith(prefix):
            sys.modules.setdefault(name + "." + mod_name[len(prefix):], mod)
    for child, mod in (extra or {}).items():
        sys.modules.setdefault(f"{name}.{child}", mod)
        if not hasattr(target, child):  # reached as an attribute too, as `torch.autograd.functional` is
            setattr(target, child, mod)
