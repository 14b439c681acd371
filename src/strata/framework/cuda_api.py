"""The `torch.cuda` face of strata: device queries, the current device as an int, synchronization, the
caching allocator's statistics and the CUDA RNG seeds, with PyTorch's names and argument conventions
(a device is an int, "cuda:N", a `strata.device` or None for the current one). `strata run --as-torch`
serves this module as `torch.cuda`; `strata.cuda` itself is the L3 runtime API (`cudaSetDevice` and
friends), whose `current_device()` returns a Device object, not an int.

Example:
    >>> from strata.framework import cuda_api as cuda
    >>> cuda.is_available(), cuda.current_device(), cuda.get_device_capability()
    (True, 0, (9, 0))
    >>> cuda.get_device_name()
    'NVIDIA H200 (SXM)'
"""

from __future__ import annotations

import importlib
from typing import Any

from strata import cuda as _cuda
from strata.cuda import caching_allocator as _alloc
from strata.cuda.caching_allocator import empty_cache
from strata.framework.device import device as _device


def _index(device: Any = None) -> int:
    """A device index from None (current), an int, "cuda"/"cuda:N" or a strata.device."""
    if device is None:
        return current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    d = device if isinstance(device, _device) else _device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


def memory_allocated(device: Any = None) -> int:
    """Bytes held by "cuda" tensors on `device` (default: the current device)."""
    return _alloc.memory_allocated(_index(device))


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds from the driver on `device`."""
    return _alloc.memory_reserved(_index(device))


def max_memory_allocated(device: Any = None) -> int:
    """The peak of memory_allocated on `device` since the start or the last reset."""
    return _alloc.max_memory_allocated(_index(device))


def reset_peak_memory_stats(device: Any = None) -> None:
    """Restart max_memory_allocated's peak from the current value."""
    _alloc.reset_peak_memory_stats(_index(device))


def is_available() -> bool:
    """True when a (virtual) CUDA device is present."""
    return _cuda.is_available()


def is_initialized() -> bool:
    """Always True: strata's runtime initializes on first use."""
    return True


def init() -> None:
    """No-op (PyTorch's lazy CUDA initialization)."""


def device_count() -> int:
    """The number of virtual GPUs (STRATA_DEVICES)."""
    return _cuda.device_count()


def current_device() -> int:
    """The index of the current device (an int, as in PyTorch)."""
    return _cuda.get_device()


def set_device(device: Any) -> None:
    """Make `device` (an int, "cuda:N" or a strata.device) current."""
    _cuda.set_device(_index(device))


def synchronize(device: Any = None) -> None:
    """Wait for all work queued on `device` (default: the current one)."""
    _cuda.Device(_index(device)).synchronize()


def get_device_name(device: Any = None) -> str:
    """The product name, e.g. 'NVIDIA H200'."""
    return str(get_device_properties(device).name)


def get_device_capability(device: Any = None) -> tuple[int, int]:
    """(major, minor) compute capability."""
    p = get_device_properties(device)
    return int(p.major), int(p.minor)


def get_device_properties(device: Any = None) -> Any:
    """The device's cudaDeviceProp (strata.cuda.DeviceProperties)."""
    return _cuda.get_device_properties(_index(device))


def mem_get_info(device: Any = None) -> tuple[int, int]:
    """(free, total) bytes of device memory."""
    with _on(_index(device)):
        free, total = _cuda.mem_get_info()
    return int(free), int(total)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """True: the virtual GPUs run bfloat16."""
    return True


def manual_seed(seed: int) -> None:
    """Seed the current device's CUDA generator."""
    _random().cuda_manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    """Seed the CUDA generator of every device."""
    _random().cuda_manual_seed_all(seed)


def seed() -> None:
    """Seed the current device's CUDA generator from the system's entropy."""
    _random().cuda_seed()


def seed_all() -> None:
    """One entropy seed for the CUDA generator of every device."""
    _random().cuda_seed_all()


def initial_seed() -> int:
    """The current device's CUDA generator seed."""
    return int(_random().cuda_initial_seed())


def get_rng_state(device: Any = "cuda") -> Any:
    """A device's CUDA generator state (a uint8 tensor)."""
    return _random().cuda_get_rng_state(device)


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """Restore a device's CUDA generator state."""
    _random().cuda_set_rng_state(new_state, device)


class device:  # noqa: N801 - PyTorch's name
    """Context manager that makes a device current for its body (`with torch.cuda.device(1):`)."""

    def __init__(self, device: Any) -> None:
        self.idx = _index(device) if device is not None else -1

    def __enter__(self) -> None:
        self._prev = current_device()
        if self.idx >= 0:
            set_device(self.idx)

    def __exit__(self, *exc: object) -> None:
        set_device(self._prev)


class _on(device):
    pass


def _random() -> Any:
    # NOTE: same layer, imported when first needed: the RNG module is heavier than this one
    return importlib.import_module("strata.framework.random")


__all__ = ["current_device", "device", "device_count", "empty_cache", "get_device_capability", "get_device_name",
           "get_device_properties", "get_rng_state", "init", "initial_seed", "is_available", "is_bf16_supported",
           "is_initialized", "manual_seed", "manual_seed_all", "max_memory_allocated", "mem_get_info",
           "memory_allocated", "memory_reserved", "reset_peak_memory_stats", "seed", "seed_all", "set_device",
           "set_rng_state", "synchronize"]
