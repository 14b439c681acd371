"""`torch.accelerator` for strata: the device-agnostic accelerator API that PyTorch's official examples
use to pick their device (`torch.accelerator.current_accelerator()` ...). strata's accelerator is always
"cuda" (the virtual GPUs), so every call forwards to the `torch.cuda` face (`strata.framework.cuda_api`).

Example:
    >>> from strata.framework import accelerator
    >>> accelerator.is_available(), accelerator.current_accelerator(), accelerator.current_device_index()
    (True, device(type='cuda'), 0)
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from strata.framework import cuda_api as _cuda
from strata.framework.device import device as _device


def _index(device: Any, optional: bool = True) -> int:
    """PyTorch's `_get_device_index`: None is the current device; an int, "cuda:N" or a device otherwise."""
    if device is None:
        return _cuda.current_device()
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if device.type != "cuda":
            raise ValueError(f"{device.type} doesn't match the current accelerator cuda.")
        return _cuda.current_device() if device.index is None else int(device.index)
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise TypeError(f"Expected a torch.device, str or int for the accelerator device, but got {type(device).__name__}")


def device_count() -> int:
    """How many virtual GPUs there are."""
    return _cuda.device_count()


def is_available() -> bool:
    """True when an accelerator device is present (always, on strata)."""
    return device_count() > 0


def current_accelerator(check_available: bool = False) -> _device | None:
    """The accelerator's device type as a device without index: `device(type='cuda')`."""
    if check_available and not is_available():
        return None
    return _device("cuda")


def current_device_index() -> int:
    """The index of the current accelerator device."""
    return _cuda.current_device()


current_device_idx = current_device_index  # the name before PyTorch 2.7


def set_device_index(device: Any, /) -> None:
    """Make `device` (an int, "cuda:N" or a device) the current accelerator device."""
    _cuda.set_device(_index(device))


set_device_idx = set_device_index


def synchronize(device: Any = None, /) -> None:
    """Wait until all work queued on `device` (default: the current one) has finished."""
    _cuda.synchronize(_index(device))


def get_device_capability(device: Any = None, /) -> dict[str, Any]:
    """The device's capability as PyTorch reports it for accelerators (the dtypes it supports)."""
    _index(device)
    from strata.framework import dtypes as dt  # NOTE: same layer; only this query needs it

    return {"supported_dtypes": [dt.float32, dt.float64, dt.float16, dt.bfloat16, dt.int64, dt.int32, dt.int16,
                                 dt.int8, dt.uint8, dt.bool_]}


class device_index:  # noqa: N801 - PyTorch's name
    """Context manager: make a device index current for its body (None: no change)."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc: object) -> None:
        if self.idx is not None:
            set_device_index(self.prev_idx)


# ---- memory (torch.accelerator.memory): the caching allocator's statistics
def empty_cache() -> None:
    """Release the cached, unused device memory."""
    _cuda.empty_cache()


def memory_allocated(device_index: Any = None, /) -> int:
    """Bytes held by tensors on the device."""
    return _cuda.memory_allocated(_index(device_index))


def max_memory_allocated(device_index: Any = None, /) -> int:
    """Peak of memory_allocated since the start or the last reset."""
    return _cuda.max_memory_allocated(_index(device_index))


def memory_reserved(device_index: Any = None, /) -> int:
    """Bytes the caching allocator holds (in use and cached)."""
    return _cuda.memory_reserved(_index(device_index))


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    """Restart the peak statistics."""
    _cuda.reset_peak_memory_stats(_index(device_index))


def memory_stats(device_index: Any = None, /) -> OrderedDict[str, Any]:
    """The allocator's statistics under PyTorch's key names (current and peak, "all" pools)."""
    i = _index(device_index)
    return OrderedDict([("allocated_bytes.all.current", _cuda.memory_allocated(i)),
                        ("allocated_bytes.all.peak", _cuda.max_memory_allocated(i)),
                        ("reserved_bytes.all.current", _cuda.memory_reserved(i))])


def get_memory_info(device_index: Any = None, /) -> tuple[int, int]:
    """(free, total) bytes of the device."""
    return _cuda.mem_get_info(_index(device_index))


__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "device_index",
           "empty_cache", "get_device_capability", "get_memory_info", "is_available", "max_memory_allocated",
           "memory_allocated", "memory_reserved", "memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "synchronize"]
