"""How `strata.nn`, `strata.optim` and `strata.autograd` answer at run time.

Each is a real package under src/strata/ (so mypy, editors and `importlib.util.find_spec` find it, and
`import strata.autograd` works in a fresh interpreter), whose `__init__` names what it exports for the type
checker and then hands its name to the framework's module: `strata.nn is strata.framework.nn`, and
`strata.nn.functional is strata.framework.nn.functional`, however the two were imported first. The
framework's modules stay the one place the code lives (PyTorch's `torch.nn` is likewise one object under
every name it is reached by).

Once `strata.nn` is the framework's package, Python would look for `strata.nn.X` in the framework's folder
and load a second copy of that module under the short name; a finder answers such names with the
framework's module instead.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Mapping, Sequence

# short package name -> the framework module it answers with
_ROOTS: dict[str, str] = {}


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        # the import system returns whatever sys.modules holds for the name after exec_module
        sys.modules[module.__name__] = importlib.import_module(_target(module.__name__) or module.__name__)


class _Finder(importlib.abc.MetaPathFinder):
    """Answers `strata.nn.X` (not yet imported) with `strata.framework.nn.X`."""

    _loader = _Loader()

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        real = _target(fullname)
        if real is None or importlib.util.find_spec(real) is None:
            return None  # not ours, or missing: the usual ModuleNotFoundError
        return importlib.util.spec_from_loader(fullname, self._loader)


def _target(fullname: str) -> str | None:
    for short, real in _ROOTS.items():
        if fullname.startswith(short + "."):
            return real + fullname[len(short):]
    return None


_FINDER = _Finder()


def answer_with(name: str, target: types.ModuleType, extra: Mapping[str, types.ModuleType] | None = None) -> None:
    """Make `name` (and `name.X` for every `target.X`, and `name.K` for each of `extra`) resolve to
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
    _ROOTS[name] = target.__name__
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
