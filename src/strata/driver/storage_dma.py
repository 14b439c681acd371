"""DMA between files and device memory with no staging buffer in host memory: the role of nvidia-fs.ko
(GPUDirect Storage's kernel module). The source of truth for how file bytes reach a virtual GPU's HBM.

A file is opened twice, as kvikio does: once with O_DIRECT (the page cache is bypassed and the block
layer DMAs straight into the destination pages, here the HBM mapping of the virtual GPU) and once
buffered. O_DIRECT needs the file offset, the length and the memory address 4 KiB-aligned; the aligned
middle of a transfer goes direct in `CHUNK`-byte requests (cuFile's max_direct_io_size, 16 MiB),
issued by a few I/O threads so the drive sees several outstanding requests; unaligned heads and tails,
and whole transfers whose memory and file offsets disagree mod 4 KiB, go through the buffered
descriptor into the same destination. A file system that refuses O_DIRECT (older tmpfs, some FUSE and
network file systems) makes every byte buffered: cuFile's compatibility mode. Each transfer emits an
L1 trace event ("dma_nvme_to_device" / "dma_device_to_nvme") with its bytes, how many went direct and
its modeled device time (strata.hw.storage_model).

Example:
    >>> import os, tempfile
    >>> from strata.driver import open_device
    >>> dev = open_device(0)
    >>> path = os.path.join(tempfile.mkdtemp(), "blob.bin")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(bytes(range(256)) * 64)  # 16 KiB
    >>> addr = dev.alloc(16384)
    >>> with StorageFile.open(path) as sf:
    ...     t = read_to_device(dev, sf, addr, 16384, 0)
    >>> t.nbytes, dev.gpu.memory.read(addr + 255, 2)
    (16384, b'\\xff\\x00')
    >>> dev.free(addr)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import mmap
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from strata import trace
from strata.hw import storage_model

if TYPE_CHECKING:
    from strata.driver.device import DeviceFile

ALIGN = 4096  # O_DIRECT alignment of file offsets, lengths and memory (the logical block / page size)
CHUNK = storage_model.MAX_DIRECT_IO_SIZE  # bytes per direct request
IO_THREADS = 4  # outstanding direct requests (kvikio's KVIKIO_NTHREADS; the drive wants a queue depth > 1)
_O_DIRECT = getattr(os, "O_DIRECT", 0)
HUGE_PAGE = 2 << 20
_MADV_HUGEPAGE = getattr(mmap, "MADV_HUGEPAGE", 0)
try:
    _libc: ctypes.CDLL | None = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
except OSError:  # pragma: no cover - no libc to load
    _libc = None


@dataclass
class DmaTransfer:
    """What one file <-> device transfer did.

    `nbytes` moved in total (fewer than asked only at end of file); `direct_bytes` went by O_DIRECT
    (no host copy); `buffered_bytes` through the page cache (compatibility mode: one host copy each);
    `requests` I/O calls; `wall_s` host seconds; `device_start`/`device_end` the modeled interval."""

    nbytes: int
    direct_bytes: int
    buffered_bytes: int
    requests: int
    wall_s: float
    device_start: float
    device_end: float

    @property
    def modeled_s(self) -> float:
        return self.device_end - self.device_start


class StorageFile:
    """A file opened for storage DMA: a buffered descriptor plus an O_DIRECT one when the file system
    allows it (`direct`). Use `open(path)` or `from_fd(fd)`; close with `close()` or a `with` block."""

    def __init__(self, fd: int, direct_fd: int | None, *, owns_fd: bool, owns_direct: bool = True,
                 name: str = "") -> None:
        self.fd = fd
        self.direct_fd = direct_fd
        self.name = name
        self._owns_fd = owns_fd
        self._owns_direct = owns_direct
        self._lock = threading.Lock()
        self._retired: list[int] = []  # O_DIRECT descriptors given up after a refused request

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, writable: bool = False, create: bool = False) -> StorageFile:
        """Open `path` for reading (and writing with `writable`; `create` makes it if missing).

        Raises:
            OSError: the file cannot be opened (FileNotFoundError, PermissionError, ...).
        """
        flags = (os.O_RDWR if writable else os.O_RDONLY) | (os.O_CREAT if create else 0)
        fd = os.open(path, flags, 0o644)
        try:
            direct = _open_direct(os.fspath(path), flags & ~os.O_CREAT)
        except OSError:
            os.close(fd)
            raise
        return cls(fd, direct, owns_fd=True, name=os.fspath(path))

    @classmethod
    def from_fd(cls, fd: int) -> StorageFile:
        """Wrap an open descriptor (which `close()` leaves open); the twin descriptor is opened through
        /proc/self/fd with the same access mode. A descriptor opened with O_DIRECT serves direct I/O.

        Raises:
            OSError: EBADF for a descriptor that is not open.
        """
        try:
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError as e:
            raise OSError(e.errno, f"[storage_dma] bad file descriptor {fd}: {e.strerror}") from e
        access = flags & os.O_ACCMODE
        if _O_DIRECT and flags & _O_DIRECT:
            buffered = os.open(f"/proc/self/fd/{fd}", access)
            return cls(buffered, fd, owns_fd=True, owns_direct=False, name=f"fd {fd}")
        return cls(fd, _open_direct(f"/proc/self/fd/{fd}", access), owns_fd=False, name=f"fd {fd}")

    @property
    def direct(self) -> bool:
        """True when reads and writes can bypass the page cache (O_DIRECT)."""
        return self.direct_fd is not None

    def size(self) -> int:
        """The file's current size in bytes."""
        return os.fstat(self.fd).st_size

    def fall_back_to_buffered(self) -> None:
        """Stop using O_DIRECT for this file (the file system refused a direct request). The descriptor
        stays open until `close()`: other I/O threads may still hold it."""
        with self._lock:
            if self.direct_fd is not None and self._owns_direct:
                self._retired.append(self.direct_fd)
            self.direct_fd = None

    def close(self) -> None:
        """Close the descriptors this object opened (idempotent)."""
        if self.direct_fd is not None and self._owns_direct:
            os.close(self.direct_fd)
        self.direct_fd = None
        for fd in self._retired:
            os.close(fd)
        self._retired.clear()
        if self._owns_fd and self.fd >= 0:
            os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> StorageFile:
        return self

    def __exit__(self, t: type[BaseException] | None, v: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<StorageFile {self.name} {'O_DIRECT' if self.direct else 'buffered (compat)'}>"


def read_to_device(dev: DeviceFile, sf: StorageFile, address: int, size: int, file_offset: int, *,
                   chunk: int = CHUNK) -> DmaTransfer:
    """DMA `size` bytes of the file at `file_offset` into device memory at `address` (stopping early
    only at end of file). Returns what was moved and how.

    Raises:
        CudaError: cudaErrorInvalidValue when the device range is not inside one allocation.
        ValueError: a negative size or offset.
        OSError: the file system failed the read.
    """
    return _transfer(dev, sf, address, size, file_offset, chunk, write=False)


def write_from_device(dev: DeviceFile, sf: StorageFile, address: int, size: int, file_offset: int, *,
                      chunk: int = CHUNK) -> DmaTransfer:
    """DMA `size` bytes of device memory at `address` into the file at `file_offset` (extending it).

    Raises:
        CudaError: cudaErrorInvalidValue when the device range is not inside one allocation.
        ValueError: a negative size or offset.
        OSError: the file system failed the write (EBADF for a file opened read-only).
    """
    return _transfer(dev, sf, address, size, file_offset, chunk, write=True)


def advise_huge_pages(dev: DeviceFile, address: int, size: int) -> None:
    """Back the 2 MiB-aligned interior of a device range with huge host pages before it is filled, as
    GPU drivers map large allocations with 2 MiB pages. The HBM here is host memory, where first-touch
    faults of 4 KiB pages would otherwise cost ~0.5 s per GiB loaded. A hint only: failures are ignored."""
    host = dev.gpu.memory.host_pointer(address)
    lo, hi = -(-host // HUGE_PAGE) * HUGE_PAGE, (host + size) // HUGE_PAGE * HUGE_PAGE
    if hi > lo and _libc is not None and _MADV_HUGEPAGE:
        _libc.madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), _MADV_HUGEPAGE)


# --------------------------------------------------------------------------------------------- core
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _io_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(IO_THREADS, thread_name_prefix="strata-nvme")
        return _pool


def _transfer(dev: DeviceFile, sf: StorageFile, address: int, size: int, file_offset: int, chunk: int, *,
              write: bool) -> DmaTransfer:
    op = "dma_device_to_nvme" if write else "dma_nvme_to_device"
    if size < 0 or file_offset < 0:
        raise ValueError(f"[{op}] size and file_offset must be >= 0, got {size} and {file_offset}")
    if chunk <= 0 or chunk % ALIGN:
        raise ValueError(f"[{op}] chunk must be a positive multiple of {ALIGN}, got {chunk}")
    if sf.fd < 0:
        raise ValueError(f"[{op}] the file {sf.name} is closed")
    dev.check_range(address, size, op)
    memory = dev.gpu.memory
    t0 = time.perf_counter()
    if not write:
        advise_huge_pages(dev, address, size)
    # pieces: (file offset, device address, length, direct?)
    head = (-file_offset) % ALIGN
    if sf.direct and (address - file_offset) % ALIGN == 0 and size > head:
        middle = (size - head) // ALIGN * ALIGN
        pieces = [(file_offset, address, head, False)] if head else []
        pieces += [(file_offset + head + o, address + head + o, min(chunk, middle - o), True)
                   for o in range(0, middle, chunk)]
        rest = size - head - middle
        if rest:
            pieces.append((file_offset + head + middle, address + head + middle, rest, False))
    else:
        pieces = [(file_offset + o, address + o, min(chunk, size - o), False) for o in range(0, size, chunk)]

    def run(piece: tuple[int, int, int, bool]) -> tuple[int, bool]:
        off, addr, n, direct = piece
        buf = memory.view(addr, n)
        fd = sf.direct_fd if direct and sf.direct_fd is not None else sf.fd
        direct = direct and fd == sf.direct_fd
        try:
            done = _io(fd, buf, off, write)
        except OSError as e:
            if not (direct and e.errno == errno.EINVAL):
                raise
            sf.fall_back_to_buffered()  # the file system accepted O_DIRECT at open but refuses the request
            done, direct = _io(sf.fd, buf, off, write), False
        return done, direct

    # direct requests go to the I/O threads; the buffered head and tail run here meanwhile. Every request
    # finishes before this returns or raises: the caller may free the destination right after.
    direct_pieces = [p for p in pieces if p[3]] if sum(p[3] for p in pieces) > 1 else []
    futures = {p[0]: _io_pool().submit(run, p) for p in direct_pieces}
    results: dict[int, tuple[int, bool]] = {}
    try:
        for p in pieces:
            if p[0] not in futures:
                results[p[0]] = run(p)
    finally:
        wait(futures.values())
    for off, fut in futures.items():
        results[off] = fut.result()
    moved = direct_bytes = buffered_bytes = 0
    for p in pieces:  # in file order; a short piece means end of file
        done, direct = results[p[0]]
        moved += done
        if direct:
            direct_bytes += done
        else:
            buffered_bytes += done
        if done < p[2]:
            break
    if write and moved != size:
        raise OSError(errno.EIO, f"[{op}] short write: {moved} of {size} bytes to {sf.name}")
    wall = time.perf_counter() - t0
    spec = dev.gpu.spec
    n_direct = sum(1 for p in pieces if p[3])
    n_buffered = len(pieces) - n_direct
    if write:
        modeled = storage_model.gds_write_seconds(spec, direct_bytes, requests=n_direct) + \
            storage_model.gds_write_seconds(spec, buffered_bytes, requests=n_buffered) + \
            storage_model.host_memcpy_seconds(buffered_bytes)
    else:
        modeled = storage_model.gds_read_seconds(spec, direct_bytes, requests=n_direct) + \
            (storage_model.bounce_read_seconds(spec, buffered_bytes, requests=n_buffered) if n_buffered else 0.0)
    start = dev.cp.now()
    trace.emit("L1", op, device_start=start, device_end=start + modeled, bytes=moved, direct_bytes=direct_bytes,
               buffered_bytes=buffered_bytes, requests=len(pieces), file=sf.name,
               mode="gds" if buffered_bytes == 0 else "compat" if direct_bytes == 0 else "mixed")
    return DmaTransfer(moved, direct_bytes, buffered_bytes, len(pieces), wall, start, start + modeled)


def _io(fd: int, buf: object, offset: int, write: bool) -> int:
    """preadv/pwritev until done or end of file (a read may return short at EOF)."""
    view = memoryview(buf)  # type: ignore[arg-type]
    done = 0
    while done < len(view):
        if write:
            n = os.pwritev(fd, [view[done:]], offset + done)
        else:
            n = os.preadv(fd, [view[done:]], offset + done)
        if n == 0:
            break
        done += n
    return done


def _open_direct(path: str, flags: int) -> int | None:
    """An O_DIRECT descriptor of `path`, or None when the file system refuses it (compat mode)."""
    if not _O_DIRECT:
        return None
    try:
        return os.open(path, flags | _O_DIRECT)
    except OSError as e:
        if e.errno in (errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
            return None
        raise


__all__ = ["ALIGN", "CHUNK", "DmaTransfer", "StorageFile", "advise_huge_pages", "read_to_device", "write_from_device"]
