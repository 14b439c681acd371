"""Device arrays: `to_device`, `empty`, `zeros` and the `DeviceArray` they return (cudaMalloc +
cudaMemcpy in one object)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from strata import trace
from strata.cuda.device import Device, current_device
from strata.errors import CudaError


class DeviceArray:
    """An n-dimensional array in device memory (C order).

    `.ptr` is its device address; `.get()` copies it back into a new ndarray. Memory is freed by
    `.free()` or when the array is garbage-collected.

    Example:
        >>> a = to_device(np.arange(4, dtype=np.float32))
        >>> a.shape, a.dtype, a.nbytes, a.get().tolist()
        ((4,), dtype('float32'), 16, [0.0, 1.0, 2.0, 3.0])
    """

    def __init__(self, shape: tuple[int, ...], dtype: Any, device: Device | None = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"[empty] negative dimension in shape {self.shape}")
        self.dtype = np.dtype(dtype)
        self.device = device or current_device()
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        with trace.span("L3", "cudaMalloc", bytes=self.nbytes):
            self.ptr = self.device.file.alloc(self.nbytes, f"DeviceArray{self.shape} {self.dtype}")
        self._finalizer = weakref.finalize(self, _release, self.device, self.ptr)

    @property
    def size(self) -> int:
        return self.nbytes // self.dtype.itemsize if self.dtype.itemsize else 0

    def get(self) -> np.ndarray:
        """Copy to a new host ndarray (cudaMemcpy DeviceToHost)."""
        self._check_live("get")
        out = np.empty(self.shape, dtype=self.dtype)
        with trace.span("L3", "cudaMemcpy", kind="DeviceToHost", bytes=self.nbytes):
            self.device.file.copy_from_device(self.ptr, out)
        return out

    def set(self, host: np.ndarray) -> None:
        """Copy a host array of the same shape and dtype in (cudaMemcpy HostToDevice)."""
        self._check_live("set")
        host = np.asarray(host)
        if host.shape != self.shape or host.dtype != self.dtype:
            raise ValueError(f"[set] expected shape {self.shape} and dtype {self.dtype}, "
                             f"got {host.shape} and {host.dtype}")
        with trace.span("L3", "cudaMemcpy", kind="HostToDevice", bytes=self.nbytes):
            self.device.file.copy_to_device(self.ptr, np.ascontiguousarray(host))

    def free(self) -> None:
        """Release the device memory now (cudaFree); the array can't be used afterwards."""
        self._check_live("free")
        self._finalizer()

    @property
    def freed(self) -> bool:
        return not self._finalizer.alive

    def _check_live(self, op: str) -> None:
        if self.freed:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] DeviceArray at {self.ptr:#x} was freed")

    def __repr__(self) -> str:
        state = " freed" if self.freed else ""
        return f"<DeviceArray shape={self.shape} dtype={self.dtype} ptr={self.ptr:#x}{state}>"


def _release(device: Device, ptr: int) -> None:
    with trace.span("L3", "cudaFree", address=hex(ptr)):
        device.file.free(ptr)


def empty(shape: int | tuple[int, ...], dtype: Any = np.float32) -> DeviceArray:
    """Allocate an uninitialised device array (cudaMalloc)."""
    return DeviceArray((shape,) if isinstance(shape, int) else tuple(shape), dtype)


def zeros(shape: int | tuple[int, ...], dtype: Any = np.float32) -> DeviceArray:
    """Allocate a device array filled with zeros (cudaMalloc + cudaMemset)."""
    a = empty(shape, dtype)
    a.device.file.memset(a.ptr, 0, a.nbytes)
    return a


def to_device(host: Any) -> DeviceArray:
    """Copy a host array to a new device array (cudaMalloc + cudaMemcpy HostToDevice)."""
    arr = np.ascontiguousarray(host)
    if arr.dtype == object:
        raise TypeError("[to_device] object arrays cannot live in device memory")
    a = DeviceArray(arr.shape, arr.dtype)
    if a.nbytes:
        with trace.span("L3", "cudaMemcpy", kind="HostToDevice", bytes=a.nbytes):
            a.device.file.copy_to_device(a.ptr, arr)
    return a
