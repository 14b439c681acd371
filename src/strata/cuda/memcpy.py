"""Raw device memory and copies in the CUDA runtime's shape: cudaMalloc, cudaMemcpy(Async), cudaMemset.

Device pointers are ints (device addresses) or DeviceArrays; host memory is a NumPy array (pinned if
it came from `pinned_empty`). `count` is in bytes, as in CUDA. `kind` is a `MemcpyKind` or its name;
`MemcpyKind.Default` infers the direction from the pointers, as unified addressing allows.

Every device range is checked up front, byte-exact: `count` bytes at a device pointer must lie inside
one live allocation (cudaErrorInvalidValue otherwise, before anything is queued). Unified addressing:
each device owns its own range of addresses, so a pointer says which device it belongs to
(`pointer_get_attributes`), and a device-to-device copy between two devices is a peer copy
(`memcpy_peer`): one copy-engine transfer over the link between them when they share a fabric
(NVLink, xGMI: `hw/topology.py` times it), else staged through pinned host memory.

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
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata import trace
from strata.cuda.device import Device, current_device
from strata.cuda.memory import DeviceArray
from strata.cuda.module import Module
from strata.driver import opened_devices
from strata.driver.hostmem import HOST_MEMORY
from strata.errors import CudaError
from strata.hw.memory import memory_of
from strata.runtime import Event, Stream


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
    """cudaMemGetInfo: (free, total) bytes of the current device. Memory of arrays the garbage collector
    dropped while the device was busy counts as free: their frees are carried out first."""
    dev = current_device()
    dev.context.reclaim()
    st = dev.file.vram.stats()
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


def memcpy_mapped(device_ptr: int | DeviceArray, count: int, kind: MemcpyKind | str | int,
                  stream: Stream | None = None) -> None:
    """The device's half of a cudaMemcpy whose host moves the bytes itself through a mapping of device
    memory (a native program's pageable copy; `hw.memory.share_device_memory`): checks the range and queues
    the copy on `stream` for the copy engine to time; returns once earlier work there is done, so the host
    may then write (HostToDevice) or read (DeviceToHost) the range.

    Raises:
        CudaError: cudaErrorInvalidValue if `count` bytes at `device_ptr` are not inside one allocation."""
    kind = _kind(kind)
    if kind not in (MemcpyKind.HostToDevice, MemcpyKind.DeviceToHost):
        raise CudaError("cudaErrorInvalidMemcpyDirection", f"[memcpy] a copy through a mapping of device memory is "
                        f"HostToDevice or DeviceToHost, got {kind.name}")
    _check_count(count, "memcpy")
    address, dev = _device_side(device_ptr, "memcpy", count)
    name = "cudaMemcpy" if stream is None else "cudaMemcpyAsync"
    with trace.span("L3", name, kind=kind.name, bytes=count):
        if count:
            dev.context.memcpy_mapped("HtoD" if kind == MemcpyKind.HostToDevice else "DtoH", address, count, stream)


def memset(ptr: int | DeviceArray, value: int, count: int) -> None:
    """cudaMemset: set `count` bytes at `ptr` to the byte `value` (its low 8 bits, as in CUDA).

    Raises:
        CudaError: cudaErrorInvalidValue for a negative count or a range outside one allocation."""
    _check_count(count, "memset")
    address, dev = _device_side(ptr, "memset", count)
    with trace.span("L3", "cudaMemset", bytes=count):
        if count:
            dev.context.memset(address, int(value), count)


def memset_async(ptr: int | DeviceArray, value: int, count: int, stream: Stream | None = None) -> None:
    """cudaMemsetAsync (same checks as `memset`)."""
    _check_count(count, "memset_async")
    address, dev = _device_side(ptr, "memset_async", count)
    with trace.span("L3", "cudaMemsetAsync", bytes=count):
        if count:
            dev.context.memset(address, int(value), count, stream, asynchronous=True)


def memcpy_peer(dst: int | DeviceArray, dst_device: Device | int, src: int | DeviceArray, src_device: Device | int,
                count: int) -> None:
    """cudaMemcpyPeer: copy `count` bytes from `src` on `src_device` to `dst` on `dst_device`.

    Works with or without peer access (CUDA stages through the host when there is none; the model
    always does: a device-to-host copy into pinned memory, then host-to-device)."""
    _peer(dst, dst_device, src, src_device, count, None, asynchronous=False)


def memcpy_peer_async(dst: int | DeviceArray, dst_device: Device | int, src: int | DeviceArray,
                      src_device: Device | int, count: int, stream: Stream | None = None) -> None:
    """cudaMemcpyPeerAsync: as `memcpy_peer`; the host-to-device half is queued on `stream` (a stream
    of the destination device)."""
    _peer(dst, dst_device, src, src_device, count, stream, asynchronous=True)


@dataclass(frozen=True)
class PointerAttributes:
    """cudaPointerAttributes: what unified addressing knows about a pointer.

    `type` is "device" (inside a live allocation), "host" (pinned host memory) or "unregistered";
    `device` is the index of the device whose address range holds a device address (-1 for host
    memory or an address outside every device's range); `start`/`size` name the allocation."""

    type: str
    device: int
    device_pointer: int | None
    host_pointer: int | None
    start: int | None = None
    size: int | None = None


def pointer_get_attributes(ptr: Any) -> PointerAttributes:
    """cudaPointerGetAttributes: the device an address belongs to follows from the address itself.

    Example:
        >>> p = malloc(64); a = pointer_get_attributes(p + 8)
        >>> a.type, a.device == current_device().index, a.start == p, a.size
        ('device', True, True, 64)
        >>> free(p)
    """
    if isinstance(ptr, DeviceArray):
        ptr = ptr.ptr
    if isinstance(ptr, np.ndarray):
        host = int(ptr.ctypes.data)
        kind = "host" if HOST_MEMORY.is_pinned(host, max(ptr.nbytes, 1)) else "unregistered"
        return PointerAttributes(kind, -1, None, host)
    address = int(ptr)
    dev = _device_of(address)
    if dev is None:
        return PointerAttributes("unregistered", -1, None, None)
    a = dev.file.gpu.memory.allocation_at(address)
    if a is None:
        return PointerAttributes("unregistered", dev.index, None, None)
    return PointerAttributes("device", dev.index, address, None, a.address, a.size)


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


def _device_of(address: int) -> Device | None:
    """The device whose unified-address range holds `address`."""
    mem = memory_of(address)
    if mem is None:
        return None
    for dev in list(Device._by_index.values()):
        if dev.file.gpu.memory is mem:
            return dev
    for f in opened_devices():  # opened below the runtime API, not yet wrapped in a Device
        if f.gpu.memory is mem:
            return Device(f.index)
    return None


def _owner(address: int, op: str) -> Device:
    dev = _device_of(int(address))
    if dev is None or dev.file.gpu.memory.allocation_at(int(address)) is None:
        raise CudaError("cudaErrorInvalidValue",
                        f"[{op}] {int(address):#x} is not a device address of any open device")
    return dev


def _check_count(count: Any, op: str) -> None:
    if isinstance(count, bool) or not isinstance(count, int | np.integer):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] count must be an int (bytes), got {count!r}")
    if count < 0:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] count must be >= 0, got {count}")


def _device_side(p: Any, op: str, count: int = 0) -> tuple[int, Device]:
    """(address, device) of a device pointer whose `count` bytes must lie inside one live allocation."""
    if isinstance(p, DeviceArray):
        p._check_live(op)
        if count > p.nbytes:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] {count} bytes exceed the DeviceArray's {p.nbytes}")
        return p.ptr, p.device
    if _is_device(p):
        address = int(p)
        dev = _owner(address, op)
        a = dev.file.gpu.memory.allocation_at(address)
        if a is not None and address + count > a.end:
            raise CudaError("cudaErrorInvalidValue",
                            f"[{op}] {count} bytes at {address:#x} run {address + count - a.end} bytes past the end "
                            f"of the allocation {a.address:#x} of {a.size} bytes")
        return address, dev
    raise CudaError("cudaErrorInvalidValue", f"[{op}] expected a device pointer (int) or DeviceArray, "
                    f"got {type(p).__name__}")


def _peer(dst: Any, dst_device: Device | int, src: Any, src_device: Device | int, count: int,
          stream: Stream | None, asynchronous: bool) -> None:
    _check_count(count, "memcpy_peer")
    to, dev_to = _device_side(dst, "memcpy_peer", count)
    frm, dev_from = _device_side(src, "memcpy_peer", count)
    for want, got, what in ((dst_device, dev_to, "dst"), (src_device, dev_from, "src")):
        index = want.index if isinstance(want, Device) else int(want)
        if index != got.index:
            raise CudaError("cudaErrorInvalidValue", f"[memcpy_peer] {what} belongs to device {got.index}, "
                            f"not device {index}")
    name = "cudaMemcpyPeerAsync" if asynchronous else "cudaMemcpyPeer"
    with trace.span("L3", name, bytes=count, src_device=dev_from.index, dst_device=dev_to.index):
        if count:
            _copy_between(dev_to, to, dev_from, frm, count, stream, asynchronous)


def _copy_between(dev_to: Device, to: int, dev_from: Device, frm: int, count: int, stream: Stream | None,
                  asynchronous: bool) -> None:
    if dev_to is dev_from:
        dev_to.context.memcpy_dtod(to, frm, count, stream, asynchronous=asynchronous)
        return
    if dev_to.can_access_peer(dev_from):  # a fabric joins them (hw/topology.py): one copy over the link
        after = Event(dev_from.context)  # ordered after the source device's work, as CUDA's peer copy is
        after.record(None)
        dev_to.context.stream(stream).wait_event(after)
        dev_to.context.memcpy_dtod(to, frm, count, stream, asynchronous=asynchronous, peer=True)
        return
    staging = dev_from.file.pinned_host(count)
    dev_from.context.memcpy_dtoh(staging, frm)
    dev_to.context.memcpy_htod(to, staging, stream, asynchronous=asynchronous)


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
    _check_count(count, "memcpy")
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
            host = _host_side(src, count, "memcpy", False)
            address, dev = _device_side(dst, "memcpy", count)
            dev.context.memcpy_htod(address, host, stream, asynchronous=asynchronous)
        elif kind == MemcpyKind.DeviceToHost:
            host = _host_side(dst, count, "memcpy", True)
            address, dev = _device_side(src, "memcpy", count)
            dev.context.memcpy_dtoh(host, address, stream, asynchronous=asynchronous)
        else:  # between two devices this is a peer copy, as unified addressing makes it in CUDA
            to, dev = _device_side(dst, "memcpy", count)
            frm, dev_from = _device_side(src, "memcpy", count)
            _copy_between(dev, to, dev_from, frm, count, stream, asynchronous)


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
