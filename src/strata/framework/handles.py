"""The framework's library handles: one strata.libs handle per (library, device), as PyTorch keeps one
cuBLAS and one cuDNN handle per device; a handle is remade after a device reset (which frees its
workspace). The libraries are imported on first use so `import strata` stays light.

Example:
    >>> import strata
    >>> h = library_handle("blas", strata.device("cuda"))
    >>> h is library_handle("blas", strata.device("cuda:0"))
    True
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from strata.framework.device import cuda_device, device, on

_handles: dict[tuple[str, int, int], Any] = {}


_modules: dict[str, ModuleType] = {}


def library(name: str) -> ModuleType:
    """strata.libs.`name` ("blas", "dnn", "solver")."""
    m = _modules.get(name)
    if m is None:
        m = _modules[name] = importlib.import_module(f"strata.libs.{name}")
    return m


def library_handle(name: str, dev: device | int) -> Any:
    """The `name` library's handle on "cuda" device `dev` (a device or an index)."""
    index = dev if isinstance(dev, int) else (dev.index or 0)
    key = (name, index, cuda_device(index).context.generation)
    h = _handles.get(key)
    if h is None:
        with on(device("cuda", index)):
            h = _handles[key] = library(name).create_handle()
    return h
