"""Device arrays: `to_device`, `empty`, `zeros` and the `DeviceArray` they return (cudaMalloc +
cudaMemcpy in one object).

Shapes and dtypes are validated before anything is allocated: a dtype must be plain numbers (see
`SUPPORTED_DTYPES`; object, string, void and structured dtypes raise TypeError, since device memory
holds bytes, not Python objects), and a byte count that does not fit a 64-bit signed size raises
ValueError (as NumPy and PyTorch do). A size that fits but exceeds the device is cudaMalloc's
cudaErrorMemoryAllocation (OutOfMemoryError), as in CUDA.
"""

from __future__ import annotations

import math
import operator
import weakref
from typing import Any

import numpy as np

from strata import trace
from strata.cuda.device import Device, current_device
from strata.errors import CudaError
from strata.runtime import Context, Stream

SUPPORTED_DTYPES = ("bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, "
                    "complex64, complex128, and ml_dtypes' bfloat16 and float8 types")
MAX_NBYTES = (1 << 63) - 1  # the largest byte count a signed 64-bit size holds (NumPy's and PyTorch's limit)


def device_dtype(dtype: Any, op: str) -> np.dtype:
    """`dtype` as a NumPy dtype if device memory can hold it; TypeError naming the supported ones if not."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"[{op}] {dtype!r} is not a dtype; supported: {SUPPORTED_DTYPES}") from None
    plain = dt.names is None and dt.subdtype is None
    ok = plain and ((dt.kind in "biuf" and dt.itemsize <= 8) or (dt.kind == "c" and dt.itemsize <= 16)
                    or (dt.kind == "V" and dt.type.__module__ == "ml_dtypes"))
    if not ok:
        raise TypeError(f"[{op}] dtype {dt} cannot live in device memory (it holds plain numbers, not Python "
                        f"objects, strings or records); supported: {SUPPORTED_DTYPES}")
    return dt


def checked_nbytes(shape: tuple[int, ...], dtype: np.dtype, op: str) -> int:
    """The byte count of `shape` elements of `dtype`, computed exactly (never wrapping around)."""
    n = math.prod(shape) * dtype.itemsize
    if n > MAX_NBYTES:
        raise ValueError(f"[{op}] shape {shape} of {dtype} is {n:,} bytes, more than a 64-bit size can hold "
                         f"(at most {MAX_NBYTES:,})")
    return n


def _shape(shape: Any, op: str) -> tuple[int, ...]:
    try:
        dims = tuple(operator.index(s) for s in ((shape,) if not isinstance(shape, tuple | list) else shape))
    except TypeError:
        raise TypeError(f"[{op}] shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in dims):
        raise ValueError(f"[{op}] negative dimension in shape {dims}")
    return dims


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
        self.shape = _shape(shape, "empty")
        self.dtype = device_dtype(dtype, "empty")
        self.nbytes = checked_nbytes(self.shape, self.dtype, "empty")
        self.device = device or current_device()
        ctx = self.device.context
        with trace.span("L3", "cudaMalloc", bytes=self.nbytes):
            self.ptr = ctx.malloc(self.nbytes, f"DeviceArray{self.shape} {self.dtype}")
        self._generation = ctx.generation
        self._finalizer = weakref.finalize(self, release_dropped, ctx, self.ptr, self._generation, "cudaFree")

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
        self.shape = _shape(shape, "view")
        self.dtype = device_dtype(dtype, "view")
        self.nbytes = checked_nbytes(self.shape, self.dtype, "view")
        self.device = device or current_device()
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
        """Device-to-device copy of an array of the same size (cudaMemcpy DeviceToDevice). From another
        device it is a peer copy, staged through pinned host memory (`stream` then orders its second half)."""
        self._check_live("copy_from")
        other._check_live("copy_from")
        if other.nbytes != self.nbytes:
            raise ValueError(f"[copy_from] expected {self.nbytes} bytes, got {other.nbytes} bytes")
        with trace.span("L3", "cudaMemcpy" if stream is None else "cudaMemcpyAsync", kind="DeviceToDevice",
                        bytes=self.nbytes):
            if not self.nbytes:
                return
            if other.device is self.device:
                self.device.context.memcpy_dtod(self.ptr, other.ptr, self.nbytes, stream,
                                                asynchronous=stream is not None)
                return
            staging = other.device.file.pinned_host(self.nbytes)
            other.device.context.memcpy_dtoh(staging, other.ptr)
            self.device.context.memcpy_htod(self.ptr, staging, stream, asynchronous=stream is not None)

    def free(self) -> None:
        """Release the device memory now (cudaFree); the array can't be used afterwards.

        Raises:
            CudaError: cudaErrorInvalidValue for a `view` (its memory belongs to its owner)."""
        self._check_live("free")
        if self._is_view:
            raise CudaError("cudaErrorInvalidValue", f"[free] DeviceArray at {self.ptr:#x} is a view of memory "
                            "it does not own")
        free_now(self._finalizer, self.device.context, self.ptr, self._generation, "cudaFree")

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


def release_dropped(ctx: Context, ptr: int, generation: int, api: str) -> None:
    """The finalizer of device memory nobody references any more: never waits (see Context.release)."""
    if generation != ctx.generation:
        return  # a device reset already freed it
    with trace.span("L3", api, address=hex(ptr)):
        ctx.release(ptr)


def free_now(finalizer: weakref.finalize[Any, Any], ctx: Context, ptr: int, generation: int, api: str) -> None:
    """An explicit free (cudaFree, cudaFreeArray): a host call, so it waits for the device's queued work,
    and the finalizer is disarmed so the memory is freed once."""
    if finalizer.detach() is not None and generation == ctx.generation:
        with trace.span("L3", api, address=hex(ptr)):
            ctx.free(ptr)


def empty(shape: int | tuple[int, ...], dtype: Any = np.float32) -> DeviceArray:
    """Allocate an uninitialised device array (cudaMalloc)."""
    return DeviceArray(_shape(shape, "empty"), dtype)


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
    device_dtype(arr.dtype, "to_device")
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
    shape_t = _shape(shape, "pinned_empty")
    dt = device_dtype(dtype, "pinned_empty")
    nbytes = checked_nbytes(shape_t, dt, "pinned_empty")
    with trace.span("L3", "cudaHostAlloc", bytes=nbytes):
        raw = current_device().file.pinned_host(nbytes)
    return raw.view(dt).reshape(shape_t)
