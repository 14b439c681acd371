"""Raw device memory and copies in the CUDA runtime's shape: cudaMalloc, cudaMemcpy(Async), cudaMemset.

Device pointers are ints (device addresses) or DeviceArrays; host memory is a NumPy array (pinned if
it came from `pinned_empty`). `count` is in bytes, as in CUDA. `kind` is a `MemcpyKind` or its name;
`MemcpyKind.Default` infers the direction from the pointers, as unified addressing allows.

Example:
    >>> import numpy as np
    >>> p = malloc(16)
    >>> memcpy(p, np.arange(4, dtype=np.int32), 16, MemcpyKind.HostToDevice)
    >>> out = np.zeros(4, np.int32); memcpy(out, p, 16, "DeviceToHost"); out.tolist()
    [0, 1, 2, 3]
    >>> free(p)
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from strata import trace
from strata.cuda.device import Device, current_device
from strata.cuda.memory import DeviceArray
from strata.cuda.module import Module
from strata.errors import CudaError
from strata.runtime import Stream


class MemcpyKind(enum.IntEnum):
    """cudaMemcpyKind / hipMemcpyKind."""

    HostToHost = 0
    HostToDevice = 1
    DeviceToHost = 2
    DeviceToDevice = 3
    Default = 4


def malloc(nbytes: int) -> int:
    """cudaMalloc: `nbytes` of device memory on the current device; returns its device address."""
    with trace.span("L3", "cudaMalloc", bytes=nbytes):
        return current_device().context.malloc(int(nbytes), "cudaMalloc")


def free(ptr: int | DeviceArray) -> None:
    """cudaFree (waits for the device first, as cudaFree does). `free(0)` does nothing, as in CUDA."""
    if isinstance(ptr, DeviceArray):
        ptr.free()
        return
    if ptr == 0:
        return
    dev = _owner(ptr, "free")
    with trace.span("L3", "cudaFree", address=hex(ptr)):
        dev.context.free(ptr)


def mem_get_info() -> tuple[int, int]:
    """cudaMemGetInfo: (free, total) bytes of the current device."""
    st = current_device().file.vram.stats()
    return st.free, st.total


def memcpy(dst: Any, src: Any, count: int, kind: MemcpyKind | str | int = MemcpyKind.Default) -> None:
    """cudaMemcpy: copy `count` bytes; returns when the copy is done (synchronous, on the legacy
    default stream, so it also waits for earlier work there)."""
    _copy(dst, src, count, kind, None, asynchronous=False)


def memcpy_async(dst: Any, src: Any, count: int, kind: MemcpyKind | str | int = MemcpyKind.Default,
                 stream: Stream | None = None) -> None:
    """cudaMemcpyAsync: queue the copy on `stream`. With pinned host memory it returns at once (leave
    the buffer alone until the stream is synchronized); pageable memory makes it wait, as in CUDA."""
    _copy(dst, src, count, kind, stream, asynchronous=True)


def memset(ptr: int | DeviceArray, value: int, count: int) -> None:
    """cudaMemset: set `count` bytes at `ptr` to the byte `value`."""
    address, dev = _device_side(ptr, "memset")
    with trace.span("L3", "cudaMemset", bytes=count):
        dev.context.memset(address, value, count)


def memset_async(ptr: int | DeviceArray, value: int, count: int, stream: Stream | None = None) -> None:
    """cudaMemsetAsync."""
    address, dev = _device_side(ptr, "memset")
    with trace.span("L3", "cudaMemsetAsync", bytes=count):
        dev.context.memset(address, value, count, stream, asynchronous=True)


# --- internals --------------------------------------------------------------------------------------


_DIRECTION = {(False, False): MemcpyKind.HostToHost, (False, True): MemcpyKind.HostToDevice,
              (True, False): MemcpyKind.DeviceToHost, (True, True): MemcpyKind.DeviceToDevice}


def _kind(kind: MemcpyKind | str | int) -> MemcpyKind:
    try:
        if isinstance(kind, str):
            return MemcpyKind[kind.removeprefix("cudaMemcpy").removeprefix("hipMemcpy")]
        return MemcpyKind(kind)
    except (KeyError, ValueError):
        raise CudaError("cudaErrorInvalidMemcpyDirection",
                        f"[memcpy] kind must be a MemcpyKind (HostToHost, HostToDevice, DeviceToHost, "
                        f"DeviceToDevice, Default), got {kind!r}") from None


def _is_device(p: Any) -> bool:
    return isinstance(p, DeviceArray) or (isinstance(p, int | np.integer) and not isinstance(p, bool))


def _owner(address: int, op: str) -> Device:
    for dev in [current_device(), *Device._by_index.values()]:
        if dev.file.gpu.memory.allocation_at(int(address)) is not None:
            return dev
    raise CudaError("cudaErrorInvalidValue", f"[{op}] {int(address):#x} is not a device address of any open device")


def _device_side(p: Any, op: str) -> tuple[int, Device]:
    if isinstance(p, DeviceArray):
        p._check_live(op)
        return p.ptr, p.device
    if _is_device(p):
        return int(p), _owner(int(p), op)
    raise CudaError("cudaErrorInvalidValue", f"[{op}] expected a device pointer (int) or DeviceArray, "
                    f"got {type(p).__name__}")


def _host_side(p: Any, count: int, op: str, writable: bool) -> np.ndarray:
    if not isinstance(p, np.ndarray):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] host memory must be a NumPy array, got {type(p).__name__}")
    if not p.flags.c_contiguous:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] host array must be C-contiguous")
    if writable and not p.flags.writeable:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] destination host array is read-only")
    if count > p.nbytes:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] count {count} exceeds the host array's {p.nbytes} bytes")
    return p.reshape(-1).view(np.uint8)[:count]


def _copy(dst: Any, src: Any, count: int, kind_arg: MemcpyKind | str | int, stream: Stream | None,
          asynchronous: bool) -> None:
    kind = _kind(kind_arg)
    if count < 0:
        raise CudaError("cudaErrorInvalidValue", f"[memcpy] count must be >= 0, got {count}")
    if kind == MemcpyKind.Default:  # unified addressing: the pointers say which side is which
        kind = _DIRECTION[(_is_device(src), _is_device(dst))]
    want_src, want_dst = kind in (MemcpyKind.DeviceToHost, MemcpyKind.DeviceToDevice), \
        kind in (MemcpyKind.HostToDevice, MemcpyKind.DeviceToDevice)
    if _is_device(src) != want_src or _is_device(dst) != want_dst:
        raise CudaError("cudaErrorInvalidMemcpyDirection",
                        f"[memcpy] kind {kind.name} needs a {'device' if want_dst else 'host'} destination and a "
                        f"{'device' if want_src else 'host'} source, got {type(dst).__name__} <- {type(src).__name__}")
    name = "cudaMemcpyAsync" if asynchronous else "cudaMemcpy"
    with trace.span("L3", name, kind=kind.name, bytes=count):
        if count == 0:
            return
        if kind == MemcpyKind.HostToHost:
            _host_side(dst, count, "memcpy", True)[:] = _host_side(src, count, "memcpy", False)
            return
        if kind == MemcpyKind.HostToDevice:
            address, dev = _device_side(dst, "memcpy")
            dev.context.memcpy_htod(address, _host_side(src, count, "memcpy", False), stream,
                                    asynchronous=asynchronous)
        elif kind == MemcpyKind.DeviceToHost:
            address, dev = _device_side(src, "memcpy")
            dev.context.memcpy_dtoh(_host_side(dst, count, "memcpy", True), address, stream,
                                    asynchronous=asynchronous)
        else:
            to, dev = _device_side(dst, "memcpy")
            frm, _ = _device_side(src, "memcpy")
            dev.context.memcpy_dtod(to, frm, count, stream, asynchronous=asynchronous)


def memcpy_to_symbol(module: Module, symbol: str, src: np.ndarray, count: int | None = None, offset: int = 0,
                     stream: Stream | None = None) -> None:
    """cudaMemcpyToSymbol: copy host `src` into the `__device__`/`__constant__` variable `symbol` of
    `module` at byte `offset` (all of `src` unless `count` is given)."""
    address, size = module.get_global(symbol)
    n = src.nbytes if count is None else count
    if offset < 0 or offset + n > size:
        raise CudaError("cudaErrorInvalidValue", f"[memcpy_to_symbol] {n} bytes at offset {offset} do not fit "
                        f"{symbol!r} of {size} bytes")
    _copy(address + offset, src, n, MemcpyKind.HostToDevice, stream, asynchronous=stream is not None)


def memcpy_from_symbol(dst: np.ndarray, module: Module, symbol: str, count: int | None = None, offset: int = 0,
                       stream: Stream | None = None) -> None:
    """cudaMemcpyFromSymbol: copy the variable `symbol` (from byte `offset`) into host `dst`."""
    address, size = module.get_global(symbol)
    n = dst.nbytes if count is None else count
    if offset < 0 or offset + n > size:
        raise CudaError("cudaErrorInvalidValue", f"[memcpy_from_symbol] {n} bytes at offset {offset} do not fit "
                        f"{symbol!r} of {size} bytes")
    _copy(dst, address + offset, n, MemcpyKind.DeviceToHost, stream, asynchronous=stream is not None)
