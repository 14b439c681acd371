"""Device arrays: `to_device`, `empty`, `zeros` and the `DeviceArray` they return (cudaMalloc +
cudaMemcpy in one object)."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from strata import trace
from strata.cuda.device import Device, current_device
from strata.errors import CudaError
from strata.runtime import Context, Stream


class DeviceArray:
    """An n-dimensional array in device memory (C order).

    `.ptr` is its device address; `.get()` copies it back into a new ndarray. Memory is freed by
    `.free()` or when the array is garbage-collected.

    Example:
        >>> a = to_device(np.arange(4, dtype=np.float32))
        >>> a.shape, a.dtype, a.nbytes, a.get().tolist()
        ((4,), dtype('float32'), 16, [0.0, 1.0, 2.0, 3.0])
    """

    _is_view = False
    _owner: object = None
    _finalizer: weakref.finalize[Any, Any]

    def __init__(self, shape: tuple[int, ...], dtype: Any, device: Device | None = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in self.shape):
            raise ValueError(f"[empty] negative dimension in shape {self.shape}")
        self.dtype = np.dtype(dtype)
        self.device = device or current_device()
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        ctx = self.device.context
        with trace.span("L3", "cudaMalloc", bytes=self.nbytes):
            self.ptr = ctx.malloc(self.nbytes, f"DeviceArray{self.shape} {self.dtype}")
        self._generation = ctx.generation
        self._finalizer = weakref.finalize(self, _release, ctx, self.ptr, self._generation)

    @classmethod
    def view(cls, ptr: int, shape: tuple[int, ...], dtype: Any, device: Device | None = None, *,
             owner: object = None) -> DeviceArray:
        """A DeviceArray over memory someone else owns (a framework tensor's storage, a pool block):
        libraries take it like any array; it is never freed through this object. `owner` is kept
        alive as long as the view.

        Example:
            >>> base = to_device(np.arange(6, dtype=np.float32))
            >>> tail = DeviceArray.view(base.ptr + 8, (2, 2), np.float32, owner=base)
            >>> tail.get().tolist()
            [[2.0, 3.0], [4.0, 5.0]]
        """
        self = cls.__new__(cls)
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.device = device or current_device()
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        self.ptr = int(ptr)
        self._generation = self.device.context.generation
        self._owner = owner
        self._is_view = True
        self._finalizer = weakref.finalize(self, _no_release)
        return self

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return self.nbytes // self.dtype.itemsize if self.dtype.itemsize else 0

    def get(self, out: np.ndarray | None = None, *, stream: Stream | None = None) -> np.ndarray:
        """Copy to host (cudaMemcpy DeviceToHost): into a new ndarray, or into `out`.

        With `stream`, the copy is queued on it (cudaMemcpyAsync) and returns at once when `out` is
        pinned (see `pinned_empty`); read `out` after synchronizing. Pageable memory copies wait."""
        self._check_live("get")
        if out is None:
            out = np.empty(self.shape, dtype=self.dtype)
        elif out.nbytes != self.nbytes:
            raise ValueError(f"[get] out has {out.nbytes} bytes, the array {self.nbytes}")
        name = "cudaMemcpy" if stream is None else "cudaMemcpyAsync"
        with trace.span("L3", name, kind="DeviceToHost", bytes=self.nbytes):
            if self.nbytes:
                self.device.context.memcpy_dtoh(out, self.ptr, stream, asynchronous=stream is not None)
        return out

    def set(self, host: np.ndarray, *, stream: Stream | None = None) -> None:
        """Copy a host array of the same shape and dtype in (cudaMemcpy HostToDevice; with `stream`,
        cudaMemcpyAsync, which returns at once for pinned memory: keep it unchanged until done)."""
        self._check_live("set")
        host = np.asarray(host)
        if host.shape != self.shape or host.dtype != self.dtype:
            raise ValueError(f"[set] expected shape {self.shape} and dtype {self.dtype}, "
                             f"got {host.shape} and {host.dtype}")
        name = "cudaMemcpy" if stream is None else "cudaMemcpyAsync"
        with trace.span("L3", name, kind="HostToDevice", bytes=self.nbytes):
            if self.nbytes:
                self.device.context.memcpy_htod(self.ptr, host, stream, asynchronous=stream is not None)

    def copy_from(self, other: DeviceArray, *, stream: Stream | None = None) -> None:
        """Device-to-device copy of an array of the same size (cudaMemcpy DeviceToDevice)."""
        self._check_live("copy_from")
        other._check_live("copy_from")
        if other.nbytes != self.nbytes or other.device is not self.device:
            raise ValueError(f"[copy_from] expected {self.nbytes} bytes on {self.device}, "
                             f"got {other.nbytes} bytes on {other.device}")
        with trace.span("L3", "cudaMemcpy" if stream is None else "cudaMemcpyAsync", kind="DeviceToDevice",
                        bytes=self.nbytes):
            if self.nbytes:
                self.device.context.memcpy_dtod(self.ptr, other.ptr, self.nbytes, stream,
                                                asynchronous=stream is not None)

    def free(self) -> None:
        """Release the device memory now (cudaFree); the array can't be used afterwards.

        Raises:
            CudaError: cudaErrorInvalidValue for a `view` (its memory belongs to its owner)."""
        self._check_live("free")
        if self._is_view:
            raise CudaError("cudaErrorInvalidValue", f"[free] DeviceArray at {self.ptr:#x} is a view of memory "
                            "it does not own")
        self._finalizer()

    @property
    def freed(self) -> bool:
        return not self._finalizer.alive or self._generation != self.device.context.generation

    def _check_live(self, op: str) -> None:
        if not self._finalizer.alive:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] DeviceArray at {self.ptr:#x} was freed")
        if self._generation != self.device.context.generation:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] DeviceArray at {self.ptr:#x} was released by "
                            f"Device.reset() of device {self.device.index}")

    def __repr__(self) -> str:
        state = " freed" if self.freed else ""
        return f"<DeviceArray shape={self.shape} dtype={self.dtype} ptr={self.ptr:#x}{state}>"


def _no_release() -> None:
    """The finalizer of a view: its memory is its owner's to free."""


def _release(ctx: Context, ptr: int, generation: int) -> None:
    if generation != ctx.generation:
        return  # a device reset already freed it
    with trace.span("L3", "cudaFree", address=hex(ptr)):
        ctx.free(ptr)


def empty(shape: int | tuple[int, ...], dtype: Any = np.float32) -> DeviceArray:
    """Allocate an uninitialised device array (cudaMalloc)."""
    return DeviceArray((shape,) if isinstance(shape, int) else tuple(shape), dtype)


def zeros(shape: int | tuple[int, ...], dtype: Any = np.float32) -> DeviceArray:
    """Allocate a device array filled with zeros (cudaMalloc + cudaMemset)."""
    a = empty(shape, dtype)
    if a.nbytes:
        with trace.span("L3", "cudaMemset", bytes=a.nbytes):
            a.device.context.memset(a.ptr, 0, a.nbytes)
    return a


def to_device(host: Any) -> DeviceArray:
    """Copy a host array to a new device array (cudaMalloc + cudaMemcpy HostToDevice)."""
    arr = np.ascontiguousarray(host).reshape(np.shape(host))  # ascontiguousarray makes 0-d arrays 1-d
    if arr.dtype == object:
        raise TypeError("[to_device] object arrays cannot live in device memory")
    a = DeviceArray(arr.shape, arr.dtype)
    if a.nbytes:
        a.set(arr)
    return a


def pinned_empty(shape: int | tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    """A host ndarray in pinned (page-locked) memory (cudaHostAlloc): copies from and to it run at
    pinned speed on the modeled link and may be asynchronous.

    Example:
        >>> h = pinned_empty(4); h[:] = 1; d = empty(4); d.set(h); d.get().tolist()
        [1.0, 1.0, 1.0, 1.0]
    """
    shape_t = (shape,) if isinstance(shape, int) else tuple(shape)
    dt = np.dtype(dtype)
    n = int(np.prod(shape_t, dtype=np.int64))
    with trace.span("L3", "cudaHostAlloc", bytes=n * dt.itemsize):
        raw = current_device().file.pinned_host(n * dt.itemsize)
    return raw.view(dt).reshape(shape_t)
