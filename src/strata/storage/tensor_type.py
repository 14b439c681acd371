"""The tensor type strata.storage hands out. strata.storage sits at layer 3, below the framework, so it
cannot import strata's Tensor; the framework registers it here at import (dependency inversion, as a
plugin registers itself): how to wrap a loaded device array (or host array) as a tensor, and how to get
the array back out of a tensor to save it.

Example:
    >>> import numpy as np, strata
    >>> t = wrap(np.arange(3, dtype=np.float32), None)
    >>> type(t).__name__, t.tolist(), unwrap(t).tolist()
    ('Tensor', [0.0, 1.0, 2.0], [0.0, 1.0, 2.0])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.cuda.device import Device
from strata.cuda.memory import DeviceArray

Array = DeviceArray | np.ndarray
_registered: tuple[type, Callable[[Array, DeviceArray | None], Any], Callable[[Any], Array]] | None = None


def register_tensor_type(cls: type, wrap: Callable[[Array, DeviceArray | None], Any],
                         unwrap: Callable[[Any], Array]) -> None:
    """Make `cls` the tensor type: `wrap(array, owner)` views a device array (keeping `owner`, the
    allocation it views, alive) or takes a host array; `unwrap(tensor)` gives its data as an array."""
    global _registered
    _registered = (cls, wrap, unwrap)


def wrap(array: Array, owner: DeviceArray | None) -> Any:
    """`array` as the registered tensor type.

    Raises:
        RuntimeError: no tensor type is registered (strata's framework was not imported).
    """
    if _registered is None:
        raise RuntimeError("strata.storage: no tensor type registered (import strata, whose framework registers "
                           "its Tensor); read_tensors gives device arrays without it")
    return _registered[1](array, owner)


def unwrap(value: Any) -> Any:
    """A tensor's data as a DeviceArray or host array; anything else unchanged."""
    if _registered is not None and isinstance(value, _registered[0]):
        return _registered[2](value)
    return value


def device_kind(device: Any) -> Any:
    """"cpu", or what read_tensors takes ("cuda", "cuda:N", an index, a Device), from any device spelling
    (including the framework's device objects, which have `type` and `index`)."""
    if isinstance(device, str | int | Device):
        return device
    kind, index = getattr(device, "type", None), getattr(device, "index", None)
    if kind == "cpu":
        return "cpu"
    if kind == "cuda":
        return "cuda" if index is None else f"cuda:{index}"
    raise ValueError(f"strata.storage: unknown device {device!r}")
