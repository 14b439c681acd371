"""strata: a whole GPU software stack in Python, from a PyTorch-style framework down to a virtual
GPU that executes real PTX. See README.md and ARCHITECTURE.md.

The PyTorch-style surface (`strata.tensor`, `strata.float32`, `strata.device`, `strata.version`, ...)
is imported on first use (PEP 562), not by `import strata`: a process that needs only a lower layer
(`strata run ./prog` serving a native program's CUDA calls, `strata nvcc`) does not pay for the
framework's import, which is most of `import strata`'s time.

    >>> import strata
    >>> strata.tensor([1.0, 2.0]).sum().item()
    3.0
"""

from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:  # for mypy and editors: the same names, imported eagerly
    # the packages (src/strata/nn/, ...), bound before the star import so they win over the framework's modules
    from strata import autograd as autograd
    from strata import nn as nn
    from strata import optim as optim
    from strata.framework import *  # type: ignore[no-redef]  # noqa: F403 - (nn, optim, autograd: see above)
    from strata.framework import version  # noqa: F401


from strata._exports import FRAMEWORK_NAMES  # noqa: E402 - (after the TYPE_CHECKING block above)

# Packages of their own (src/strata/nn/, ...) whose names are the framework's modules at run time.
# torch's subpackages that `import torch` makes reachable as attributes (torch.cuda.synchronize(), ...)
_PACKAGES = frozenset({"autograd", "cuda", "distributed", "nn", "optim"})


def _framework_names() -> list[str]:
    from strata.framework import __all__ as names
    return [*names, "version"]


def _is_submodule(name: str) -> builtins.bool:  # `bool` is strata.bool (the dtype) for mypy here
    import importlib.util
    return importlib.util.find_spec(f"strata.{name}") is not None


def __getattr__(name: str) -> Any:
    # Only names the framework exports (and `__all__`) trigger its import; anything else, a submodule
    # not yet imported included, is the usual AttributeError, so `hasattr(strata, "x")` stays cheap.
    if name == "__all__":
        return _framework_names()
    if f"strata.{name}" in sys.modules:  # the framework registers aliases such as strata.linalg
        return sys.modules[f"strata.{name}"]
    if name in _PACKAGES:  # `strata.nn` without `import strata.nn`, as torch.nn after `import torch`
        import importlib
        return importlib.import_module(f"strata.{name}")
    if name.startswith("__") or _is_submodule(name) or (name not in FRAMEWORK_NAMES and name != "version"):
        # `from strata import trace` asks here before importing the submodule: answering by importing the
        # framework would recurse (the framework itself imports strata's submodules this way); a name the
        # framework does not export is answered from the list of its names, without importing it
        raise AttributeError(f"module 'strata' has no attribute {name!r}")
    import strata.framework as framework
    if name == "version":  # a submodule of the framework (torch.version), not one of its names
        import strata.framework.version as version
        globals()[name] = version
        return version
    if name in framework.__all__:
        value = getattr(framework, name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError(f"module 'strata' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_framework_names()})
