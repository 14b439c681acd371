"""Untyped storage behind tensors: host bytes (a NumPy uint8 array) for "cpu", a block of the caching
allocator for "cuda", or device memory borrowed from a strata.cuda DeviceArray (`Storage.borrow`: a
checkpoint loaded by strata.storage). Views share one Storage; it is released when the last tensor using
it goes.

Example:
    >>> from strata.framework.device import device
    >>> s = Storage(16, device("cpu")); s.nbytes, s.device
    (16, device(type='cpu'))
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from strata.cuda import CudaError, DeviceArray, MemcpyKind, memcpy
from strata.cuda.caching_allocator import get_allocator
from strata.framework.device import device, on


class Storage:
    """`nbytes` bytes on `device`: `.host` (cpu) or `.ptr` (cuda device address)."""

    # a cpu storage made by `of_array` keeps the array and makes its byte view on first use of `.host`
    _array: np.ndarray | None = None
    _host_bytes: np.ndarray | None = None
    _block: Any = None  # the caching allocator's Block of a "cuda" storage it allocated

    def __init__(self, nbytes: int, dev: device, host: np.ndarray | None = None) -> None:
        self.nbytes = int(nbytes)
        self.device = dev
        self._ptr = 0
        self._owner: DeviceArray | None = None
        if dev.type == "cpu":
            self._host_bytes = host if host is not None else np.empty(self.nbytes, np.uint8)
        elif nbytes < 0:  # `borrow` fills it in
            pass
        else:
            assert dev.index is not None
            self._alloc = get_allocator(dev.index)
            self._block = self._alloc.malloc(self.nbytes)
            self._ptr = self._block.ptr
            self._finalizer = weakref.finalize(self, self._alloc.free, self._block)

    @classmethod
    def of_array(cls, array: np.ndarray, dev: device) -> Storage:
        """cpu storage over the C-contiguous array `array` (no copy; `dev` is the cpu device). Its byte
        view (`.host`) is made only when something asks for it: most results of cpu kernels are only
        ever read through the tensor's own array view."""
        s = cls.__new__(cls)
        s.nbytes, s.device, s._ptr, s._owner, s._array = array.nbytes, dev, 0, None, array
        return s

    def __getstate__(self) -> dict[str, object]:
        # (pickle would copy the array and its byte view apart: keep one, the other is remade from it)
        state = self.__dict__.copy()
        if state.get("_host_bytes") is not None:
            state.pop("_array", None)
        return state

    @property
    def host(self) -> np.ndarray | None:
        """The bytes of a cpu storage (a flat uint8 array), None on cuda."""
        h = self._host_bytes
        if h is None and self._array is not None:
            h = self._host_bytes = self._array.reshape(-1).view(np.uint8)
        return h

    @classmethod
    def borrow(cls, array: DeviceArray, dev: device, owner: DeviceArray | None = None) -> Storage:
        """Storage over `array`'s device memory, keeping `owner` (the allocation `array` views; default
        `array` itself) alive; not counted by the caching allocator, as PyTorch does not count memory it
        did not allocate."""
        s = cls(-1, dev)
        s.nbytes, s._ptr, s._owner = array.nbytes, array.ptr, owner or array
        return s

    @property
    def ptr(self) -> int:
        """The device address of the data.

        Raises:
            CudaError: cudaErrorInvalidValue after `Device.reset()` released the memory.
        """
        block = self._block
        if block is not None:  # (the common case first: every launch asks for its operands' addresses)
            if block.generation != self._alloc._context_generation():
                raise CudaError("cudaErrorInvalidValue", f"[strata] tensor storage at {self._ptr:#x} was released "
                                f"by Device.reset() of device {self.device.index}")
            return self._ptr
        if self._owner is not None:
            if self._owner.freed:
                raise CudaError("cudaErrorInvalidValue", f"[strata] tensor storage at {self._ptr:#x} was freed or "
                                "released by a device reset")
            return self._ptr
        if self.host is None and not self._alloc.is_live(self._block):
            raise CudaError("cudaErrorInvalidValue", f"[strata] tensor storage at {self._ptr:#x} was released by "
                            f"Device.reset() of device {self.device.index}")
        return self._ptr

    def copy_from_host(self, data: np.ndarray, byte_offset: int = 0) -> None:
        """Write the bytes of a contiguous host array at `byte_offset` (cudaMemcpy HostToDevice for cuda)."""
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        if self.host is not None:
            self.host[byte_offset:byte_offset + raw.size] = raw
        elif raw.size:
            with on(self.device):
                memcpy(self.ptr + byte_offset, raw, raw.size, MemcpyKind.HostToDevice)

    def read_to_host(self, out: np.ndarray, byte_offset: int = 0) -> None:
        """Fill the contiguous host array `out` from the bytes at `byte_offset`."""
        raw = out.reshape(-1).view(np.uint8)
        if self.host is not None:
            raw[:] = self.host[byte_offset:byte_offset + raw.size]
        elif raw.size:
            with on(self.device):
                memcpy(raw, self.ptr + byte_offset, raw.size, MemcpyKind.DeviceToHost)
