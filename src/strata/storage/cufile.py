"""cuFile, the GPUDirect Storage API, in snake_case: open the driver, register a file handle and
(optionally) device buffers, then read file bytes straight into device memory and write them back.
The DMA itself is the driver's (strata.driver.storage_dma, nvidia-fs.ko's role); this module keeps
cuFile's bookkeeping and its errors (`CuFileError` carrying the CUfileOpError code and name).

A handle whose file system refuses O_DIRECT, or any handle when the driver was opened with
`force_compat_mode`, runs in compatibility mode as cuFile does: POSIX reads into a pinned host buffer
followed by a cudaMemcpy to the device (and the reverse for writes). `allow_compat_mode=False` makes
such a handle fail to register instead (CU_FILE_IO_NOT_SUPPORTED).

Example:
    >>> import os, tempfile, numpy as np
    >>> import strata.cuda as cuda
    >>> path = os.path.join(tempfile.mkdtemp(), "x.bin")
    >>> np.arange(1024, dtype=np.float32).tofile(path)
    >>> driver_open()
    >>> fh = handle_register(path)
    >>> d = cuda.empty(1024, np.float32)
    >>> buf_register(d, d.nbytes)
    >>> read(fh, d, 4096, 0, 0), d.get()[:3].tolist()
    (4096, [0.0, 1.0, 2.0])
    >>> buf_deregister(d); handle_deregister(fh); driver_close()
"""

from __future__ import annotations

import enum
import errno
import os
import stat
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from strata import trace
from strata.cuda.device import Device
from strata.cuda.memcpy import MemcpyKind, memcpy, memcpy_async
from strata.cuda.memory import DeviceArray, pinned_empty
from strata.cuda.stream import Event, Stream
from strata.driver import opened_devices
from strata.driver.device import DeviceFile
from strata.driver.storage_dma import (
    CHUNK,
    DmaTransfer,
    StorageFile,
    advise_huge_pages,
    read_to_device,
    write_from_device,
)
from strata.hw import storage_model

CUFILEOP_BASE_ERR = 5000
RDMA_REGISTER = 1  # CU_FILE_RDMA_REGISTER, a buf_register flag (accepted; RDMA is not modeled)


class OpError(enum.IntEnum):
    """CUfileOpError: cuFile's status codes (|code| > CUFILEOP_BASE_ERR; cufile.h)."""

    SUCCESS = 0
    DRIVER_NOT_INITIALIZED = 5001
    DRIVER_INVALID_PROPS = 5002
    DRIVER_UNSUPPORTED_LIMIT = 5003
    DRIVER_VERSION_MISMATCH = 5004
    DRIVER_VERSION_READ_ERROR = 5005
    DRIVER_CLOSING = 5006
    PLATFORM_NOT_SUPPORTED = 5007
    IO_NOT_SUPPORTED = 5008
    DEVICE_NOT_SUPPORTED = 5009
    NVFS_DRIVER_ERROR = 5010
    CUDA_DRIVER_ERROR = 5011
    CUDA_POINTER_INVALID = 5012
    CUDA_MEMORY_TYPE_INVALID = 5013
    CUDA_POINTER_RANGE_ERROR = 5014
    CUDA_CONTEXT_MISMATCH = 5015
    INVALID_MAPPING_SIZE = 5016
    INVALID_MAPPING_RANGE = 5017
    INVALID_FILE_TYPE = 5018
    INVALID_FILE_OPEN_FLAG = 5019
    DIO_NOT_SET = 5020
    INVALID_VALUE = 5022
    MEMORY_ALREADY_REGISTERED = 5023
    MEMORY_NOT_REGISTERED = 5024
    PERMISSION_DENIED = 5025
    DRIVER_ALREADY_OPEN = 5026
    HANDLE_NOT_REGISTERED = 5027
    HANDLE_ALREADY_REGISTERED = 5028
    DEVICE_NOT_FOUND = 5029
    INTERNAL_ERROR = 5030
    GETNEWFD_FAILED = 5031
    NVFS_SETUP_ERROR = 5033
    IO_DISABLED = 5034
    BATCH_SUBMIT_FAILED = 5035
    GPU_MEMORY_PINNING_FAILED = 5036
    BATCH_FULL = 5037
    ASYNC_NOT_SUPPORTED = 5038
    IO_MAX_ERROR = 5039


class CuFileError(RuntimeError):
    """A cuFile call failed: `code` is the CUfileOpError (an `OpError`), `name` its cufile.h name
    (e.g. "CU_FILE_DRIVER_NOT_INITIALIZED"), or, for an I/O error, `code` is the errno and `name` its
    symbol (e.g. "EIO")."""

    def __init__(self, code: int, message: str) -> None:
        self.code = int(code)
        if self.code > CUFILEOP_BASE_ERR:
            self.name = "CU_FILE_" + OpError(self.code).name
        else:
            self.name = errno.errorcode.get(self.code, f"errno {self.code}")
        super().__init__(f"{self.name} ({self.code}): {message}")


@dataclass
class FileHandle:
    """A registered file (CUfileHandle_t). `compat` is True when it runs in compatibility mode."""

    file: StorageFile
    compat: bool
    key: tuple[int, int]  # (st_dev, st_ino) of the file, to refuse registering one file twice
    closed: bool = False
    last_transfer: DmaTransfer | None = field(default=None, repr=False)  # what the last read/write did

    @property
    def fd(self) -> int:
        return self.file.fd


@dataclass
class _Driver:
    open: bool = False
    allow_compat_mode: bool = True
    force_compat_mode: bool = False
    handles: dict[tuple[int, int], FileHandle] = field(default_factory=dict)
    buffers: dict[int, int] = field(default_factory=dict)  # registered device base -> length
    lock: threading.Lock = field(default_factory=threading.Lock)


_driver = _Driver()


def driver_open(*, allow_compat_mode: bool = True, force_compat_mode: bool = False) -> None:
    """cuFileDriverOpen: start the GDS driver (cufile.json's allow_compat_mode / force_compat_mode
    become arguments).

    Raises:
        CuFileError: CU_FILE_DRIVER_ALREADY_OPEN when it is open.
    """
    with _driver.lock:
        if _driver.open:
            raise CuFileError(OpError.DRIVER_ALREADY_OPEN, "[driver_open] the cuFile driver is already open")
        _driver.open = True
        _driver.allow_compat_mode = allow_compat_mode
        _driver.force_compat_mode = force_compat_mode
    trace.emit("L3", "cuFileDriverOpen", compat=force_compat_mode)


def driver_close() -> None:
    """cuFileDriverClose: deregister every handle and buffer and stop the driver.

    Raises:
        CuFileError: CU_FILE_DRIVER_NOT_INITIALIZED when it is not open.
    """
    _require_driver("driver_close")
    with _driver.lock:
        for h in _driver.handles.values():
            h.file.close()
            h.closed = True
        _driver.handles.clear()
        _driver.buffers.clear()
        _driver.open = False
    trace.emit("L3", "cuFileDriverClose")


def is_driver_open() -> bool:
    """True between driver_open and driver_close."""
    return _driver.open


def handle_register(file: int | str | os.PathLike[str], *, writable: bool = False) -> FileHandle:
    """cuFileHandleRegister: register a file descriptor (used as is, not closed by deregistering) or a
    path (opened here; `writable` opens it read-write and creates it if missing) for cuFile I/O.
    Checks O_DIRECT support: without it the handle is in compatibility mode, if allowed.

    Raises:
        CuFileError: CU_FILE_DRIVER_NOT_INITIALIZED; CU_FILE_HANDLE_ALREADY_REGISTERED for a file already
            registered; CU_FILE_IO_NOT_SUPPORTED when the file system refuses O_DIRECT and compatibility
            mode is off; CU_FILE_INVALID_FILE_TYPE for a file that is not a regular file; an errno-coded
            error when the file cannot be opened.
    """
    _require_driver("handle_register")
    try:
        if isinstance(file, bool):
            raise TypeError("a file must be a descriptor or a path, got bool")
        if isinstance(file, int):
            sf = StorageFile.from_fd(file)
        else:
            sf = StorageFile.open(file, writable=writable, create=writable)
    except OSError as e:
        raise CuFileError(e.errno or OpError.INTERNAL_ERROR, f"[handle_register] cannot open {file!r}: "
                          f"{e.strerror}") from e
    st = os.fstat(sf.fd)
    if not stat.S_ISREG(st.st_mode):
        sf.close()
        raise CuFileError(OpError.INVALID_FILE_TYPE, f"[handle_register] {file!r} is not a regular file")
    key = (st.st_dev, st.st_ino)
    with _driver.lock:
        if key in _driver.handles:
            sf.close()
            raise CuFileError(OpError.HANDLE_ALREADY_REGISTERED, f"[handle_register] {file!r} is already registered")
        compat = _driver.force_compat_mode or not sf.direct
        if compat and not _driver.allow_compat_mode:
            sf.close()
            raise CuFileError(OpError.IO_NOT_SUPPORTED, f"[handle_register] the file system of {file!r} refuses "
                              "O_DIRECT and compatibility mode is off (allow_compat_mode=False)")
        handle = FileHandle(sf, compat, key)
        _driver.handles[key] = handle
    trace.emit("L3", "cuFileHandleRegister", file=sf.name, mode="compat" if compat else "gds")
    return handle


def handle_deregister(handle: FileHandle) -> None:
    """cuFileHandleDeregister: forget the handle (closes the file if it was registered by path).

    Raises:
        CuFileError: CU_FILE_HANDLE_NOT_REGISTERED for an unknown or already deregistered handle.
    """
    _require_driver("handle_deregister")
    with _driver.lock:
        if _driver.handles.get(handle.key) is not handle:
            raise CuFileError(OpError.HANDLE_NOT_REGISTERED, "[handle_deregister] the handle is not registered")
        del _driver.handles[handle.key]
    handle.file.close()
    handle.closed = True
    trace.emit("L3", "cuFileHandleDeregister", file=handle.file.name)


def buf_register(buf: int | DeviceArray, length: int, flags: int = 0) -> None:
    """cuFileBufRegister: register (pin for DMA) `length` bytes of device memory at `buf`, a buffer
    reused across many reads or writes.

    Raises:
        CuFileError: CU_FILE_DRIVER_NOT_INITIALIZED; CU_FILE_INVALID_VALUE for a negative length or unknown
            flags; CU_FILE_CUDA_POINTER_INVALID when `buf` is not device memory; CU_FILE_CUDA_POINTER_RANGE_ERROR
            when the range leaves its allocation; CU_FILE_MEMORY_ALREADY_REGISTERED.
    """
    _require_driver("buf_register")
    if length < 0 or flags & ~RDMA_REGISTER:
        raise CuFileError(OpError.INVALID_VALUE, f"[buf_register] length must be >= 0 and flags 0 or "
                          f"RDMA_REGISTER, got {length} and {flags}")
    address, dev = _device_range(buf, length, 0, "buf_register")
    with _driver.lock:
        if address in _driver.buffers:
            raise CuFileError(OpError.MEMORY_ALREADY_REGISTERED,
                              f"[buf_register] device buffer {address:#x} is already registered")
        _driver.buffers[address] = length
    trace.emit("L3", "cuFileBufRegister", address=hex(address), bytes=length, device=dev.index)


def buf_deregister(buf: int | DeviceArray) -> None:
    """cuFileBufDeregister.

    Raises:
        CuFileError: CU_FILE_MEMORY_NOT_REGISTERED when `buf` was not registered.
    """
    _require_driver("buf_deregister")
    address = buf.ptr if isinstance(buf, DeviceArray) else int(buf)
    with _driver.lock:
        if _driver.buffers.pop(address, None) is None:
            raise CuFileError(OpError.MEMORY_NOT_REGISTERED, f"[buf_deregister] {address:#x} is not registered")
    trace.emit("L3", "cuFileBufDeregister", address=hex(address))


def read(handle: FileHandle, buf: int | DeviceArray, size: int, file_offset: int = 0, buf_offset: int = 0) -> int:
    """cuFileRead: read `size` bytes of the file at `file_offset` into device memory at `buf` +
    `buf_offset`. Returns the bytes read (fewer than `size` only at end of file).

    Raises:
        CuFileError: CU_FILE_DRIVER_NOT_INITIALIZED, CU_FILE_HANDLE_NOT_REGISTERED, CU_FILE_INVALID_VALUE
            (negative size or offset), CU_FILE_CUDA_POINTER_INVALID / _RANGE_ERROR, or an errno-coded error
            (EIO, EBADF, ...) from the file system.
    """
    return _io(handle, buf, size, file_offset, buf_offset, write=False)


def write(handle: FileHandle, buf: int | DeviceArray, size: int, file_offset: int = 0, buf_offset: int = 0) -> int:
    """cuFileWrite: write `size` bytes of device memory at `buf` + `buf_offset` into the file at
    `file_offset`. Returns the bytes written.

    Raises:
        CuFileError: as `read`; EBADF when the file was not opened for writing.
    """
    return _io(handle, buf, size, file_offset, buf_offset, write=True)


# ------------------------------------------------------------------------------------------ helpers
def bounce_read(dev: DeviceFile, fd: int, address: int, size: int, file_offset: int, *,
                chunk: int = CHUNK) -> DmaTransfer:
    """The bounce path: POSIX reads into pinned host buffers, each followed by an asynchronous
    cudaMemcpy to the device (what cuFile's compatibility mode and a plain loader do). Two staging
    buffers alternate, so reading chunk k+1 overlaps copying chunk k. Stops early only at end of file."""
    t0 = time.perf_counter()
    n_buf = min(chunk, max(size, 1))
    staging = [pinned_empty(n_buf, np.uint8), pinned_empty(n_buf, np.uint8) if size > chunk else None]
    stream = _bounce_stream(dev)
    advise_huge_pages(dev, address, size)  # the same page backing as the direct path, for a fair comparison
    copied: list[Event | None] = [None, None]
    done = requests = 0
    start = dev.cp.now()
    with trace.span("L3", "posix_read_bounce", bytes=size):
        while done < size:
            i = requests % 2
            host = staging[i]
            assert host is not None
            ev = copied[i]
            if ev is not None:
                ev.synchronize()  # the copy out of this buffer has finished: it may be refilled
            n = min(chunk, size - done)
            got = os.preadv(fd, [memoryview(host[:n].data)], file_offset + done)
            requests += 1
            if got == 0:
                break
            memcpy_async(address + done, host[:got], got, MemcpyKind.HostToDevice, stream)
            ev = copied[i] = Event(timing=False, device=Device(dev.index))
            ev.record(stream)
            done += got
            if got < n:
                break
        stream.synchronize()
    modeled = storage_model.bounce_read_seconds(dev.gpu.spec, done, requests=max(requests, 1))
    nvme = storage_model.nvme_read_seconds(done, requests=max(requests, 1))
    trace.emit("L1", "dma_nvme_to_host", device_start=start, device_end=start + nvme, bytes=done, requests=requests,
               host_copy_bytes=done)
    return DmaTransfer(done, 0, done, requests, time.perf_counter() - t0, start, start + modeled)


def bounce_write(dev: DeviceFile, fd: int, address: int, size: int, file_offset: int, *,
                 chunk: int = CHUNK) -> DmaTransfer:
    """The reverse bounce: cudaMemcpy device -> pinned host buffer, then a POSIX write, per chunk."""
    t0 = time.perf_counter()
    staging = pinned_empty(min(chunk, max(size, 1)), np.uint8)
    done = requests = 0
    start = dev.cp.now()
    while done < size:
        n = min(chunk, size - done)
        memcpy(staging[:n], address + done, n, MemcpyKind.DeviceToHost)
        view = staging[:n].data
        w = 0
        while w < n:
            w += os.pwritev(fd, [view[w:]], file_offset + done + w)
        requests += 1
        done += n
    modeled = storage_model.gds_write_seconds(dev.gpu.spec, done, requests=max(requests, 1)) + \
        storage_model.host_memcpy_seconds(done)
    return DmaTransfer(done, 0, done, requests, time.perf_counter() - t0, start, start + modeled)


_streams: dict[int, Stream] = {}


def _bounce_stream(dev: DeviceFile) -> Stream:
    """One stream per device for bounce copies (created once: a stream owns hardware queues)."""
    s = _streams.get(dev.index)
    if s is None or s.context is not Device(dev.index).context:
        s = _streams[dev.index] = Stream(device=Device(dev.index))  # ordered after the legacy default stream
    return s


def device_of(address: int) -> DeviceFile | None:
    """The opened device whose memory holds `address`, or None."""
    for dev in opened_devices():
        if dev.gpu.memory.allocation_at(address) is not None:
            return dev
    return None


def _require_driver(op: str) -> None:
    if not _driver.open:
        raise CuFileError(OpError.DRIVER_NOT_INITIALIZED, f"[{op}] the cuFile driver is not open (call driver_open() "
                          "first); nvidia-fs driver is not loaded")


def _device_range(buf: int | DeviceArray, size: int, offset: int, op: str) -> tuple[int, DeviceFile]:
    if isinstance(buf, DeviceArray):
        if buf.freed:
            raise CuFileError(OpError.CUDA_POINTER_INVALID, f"[{op}] DeviceArray at {buf.ptr:#x} was freed")
        base = buf.ptr
    elif isinstance(buf, int | np.integer) and not isinstance(buf, bool):
        base = int(buf)
    else:
        raise CuFileError(OpError.CUDA_POINTER_INVALID, f"[{op}] expected a device pointer (int) or DeviceArray, "
                          f"got {type(buf).__name__}")
    dev = device_of(base)
    if dev is None:
        raise CuFileError(OpError.CUDA_POINTER_INVALID, f"[{op}] {base:#x} is not device memory of an open device")
    alloc = dev.gpu.memory.allocation_at(base)
    assert alloc is not None
    address = base + offset
    if address < alloc.address or address + size > alloc.end:
        raise CuFileError(OpError.CUDA_POINTER_RANGE_ERROR, f"[{op}] device range {address:#x}+{size} leaves the "
                          f"allocation {alloc.address:#x} of {alloc.size} bytes")
    return address, dev


def _io(handle: FileHandle, buf: int | DeviceArray, size: int, file_offset: int, buf_offset: int, *,
        write: bool) -> int:
    op = "cuFileWrite" if write else "cuFileRead"
    _require_driver(op)
    with _driver.lock:
        registered = _driver.handles.get(handle.key) is handle
    if not registered:
        raise CuFileError(OpError.HANDLE_NOT_REGISTERED, f"[{op}] the file handle is not registered")
    if size < 0 or file_offset < 0 or buf_offset < 0:
        raise CuFileError(OpError.INVALID_VALUE, f"[{op}] size, file_offset and buf_offset must be >= 0, got "
                          f"{size}, {file_offset} and {buf_offset}")
    address, dev = _device_range(buf, size, buf_offset, op)
    with trace.span("L3", op, bytes=size, file_offset=file_offset, mode="compat" if handle.compat else "gds") as a:
        try:
            if handle.compat:
                fn = bounce_write if write else bounce_read
                t = fn(dev, handle.file.fd, address, size, file_offset)
            else:
                dma = write_from_device if write else read_to_device
                t = dma(dev, handle.file, address, size, file_offset)
        except OSError as e:
            raise CuFileError(e.errno or OpError.INTERNAL_ERROR, f"[{op}] {handle.file.name}: {e.strerror or e}") \
                from e
        a.update(device_start=t.device_start, device_end=t.device_end, done=t.nbytes)
    handle.last_transfer = t
    return t.nbytes


def _reset_for_tests() -> None:
    """Close the driver if open (tests start from a closed driver)."""
    if _driver.open:
        driver_close()


__all__ = ["CUFILEOP_BASE_ERR", "RDMA_REGISTER", "CuFileError", "FileHandle", "OpError", "buf_deregister",
           "buf_register", "driver_close", "driver_open", "handle_deregister", "handle_register", "is_driver_open",
           "read", "write"]
