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

from strata.cuda import Device
from strata.framework.device import device, on

_handles: dict[tuple[str, int, int], Any] = {}


def library(name: str) -> ModuleType:
    """strata.libs.`name` ("blas", "dnn", "solver")."""
    return importlib.import_module(f"strata.libs.{name}")


def library_handle(name: str, dev: device | int) -> Any:
    """The `name` library's handle on "cuda" device `dev` (a device or an index)."""
    index = dev if isinstance(dev, int) else (dev.index or 0)
    key = (name, index, Device(index).context.generation)
    h = _handles.get(key)
    if h is None:
        with on(device("cuda", index)):
            h = _handles[key] = library(name).create_handle()
    return h
