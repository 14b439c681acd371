"""Device memory of the virtual GPU (HBM), its address map, and memcheck for global accesses.

The source of truth for what a device address means: HBM is one flat host mapping (lazily committed,
so 141 GB of addresses cost only the pages touched), and an address is valid only inside a range the
driver mapped. Every global access the engine makes is checked here, as compute-sanitizer does.

Unified virtual addressing (CUDA's UVA): the devices of a process share one address space, and each
device's memory owns its own range of it, `UVA_RANGE` bytes (512 GiB, more than any catalogued HBM)
starting at `GLOBAL_BASE + slot * UVA_RANGE`, so the device a pointer belongs to follows from the
address (`memory_of`). All ranges are views of one lazily committed host mapping, so an engine that
indexes HBM by `address - GLOBAL_BASE` reaches any device's bytes; whether it may is memcheck's call:
an address in another device's range is valid only if peer access to that device is enabled
(`enable_peer`), and then the access is counted as interconnect traffic (`peer_bytes`).
"""

from __future__ import annotations

import bisect
import mmap
import os
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from strata.errors import CudaError
from strata.hw.texture import DescriptorTable

# Device virtual addresses. The windows are where generic addresses of shared and local memory live.
GLOBAL_BASE = 0x7000_0000_0000
SHARED_WINDOW = 0x7F00_0000_0000
LOCAL_WINDOW = 0x7E00_0000_0000
FUNCTION_WINDOW = 0x7C00_0000_0000  # function addresses (for function pointers), 16 bytes apart
PARAM_WINDOW = 0x7B00_0000_0000  # a kernel parameter's address (`mov.b64 %rd, k_param_0`), for ld.param
WINDOW_SIZE = 1 << 32

# One device's range of the unified address space. 512 GiB holds the largest catalogued HBM (192 GiB on
# MI300X) with room for the guard pages the VRAM manager leaves after allocations.
UVA_SHIFT = 39
UVA_RANGE = 1 << UVA_SHIFT
UVA_SLOTS = (PARAM_WINDOW - GLOBAL_BASE) >> UVA_SHIFT  # 22 ranges below the parameter window

_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)

# An emulated read-modify-write (a reference executor's atomic: a read, then a write) is not atomic with respect
# to another thread's write of the same bytes, and a DMA write landing between its read and its write would be
# lost (a flag the host sets while a kernel spins on `atomicAdd(flag, 0)`: the kernel writes the 0 it read back
# over the host's 1). A GPU performs atomics where the memory is, so a DMA write lands before or after one, never
# inside it. One lock per unified-address range orders the two: atomics hold it over their read and write
# (`DeviceMemory.rmw_guard`), host-side writes into device memory (DMA copies and fills, the driver's writes) while
# they write. The native executors' atomics are CPU atomic instructions and need none. (Re-entrant: a finalizer
# the garbage collector runs inside a guarded section on the same thread must not deadlock.)
_RMW_LOCKS = tuple(threading.RLock() for _ in range(UVA_SLOTS))


class _Held:
    """Several locks held as one (a read-modify-write whose lanes span devices' ranges), taken in address order."""

    __slots__ = ("locks",)

    def __init__(self, locks: tuple[threading.RLock, ...]) -> None:
        self.locks = locks

    def __enter__(self) -> None:
        for lock in self.locks:
            lock.acquire()

    def __exit__(self, *exc: object) -> None:
        for lock in reversed(self.locks):
            lock.release()


class _UnifiedAddressSpace:
    """The process's unified address space: one reserved mapping, one range (slot) per device memory."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.mapping: mmap.mmap | None = None
        self.bytes: np.ndarray | None = None
        self.slots: dict[int, weakref.ref[DeviceMemory]] = {}
        self.fd: int | None = None  # the memfd behind a shared mapping (see `share`)

    def share(self) -> int | None:
        """Back the address space with a memfd another process can map (MAP_SHARED), and return its file
        descriptor; None if the private mapping already exists (a device was opened first)."""
        with self.lock:
            if self.mapping is None:
                fd = os.memfd_create("strata-device-memory", os.MFD_CLOEXEC)
                os.ftruncate(fd, UVA_SLOTS * UVA_RANGE)  # sparse: pages cost RAM only once touched
                self.mapping = mmap.mmap(fd, UVA_SLOTS * UVA_RANGE, flags=mmap.MAP_SHARED | _MAP_NORESERVE)
                self.bytes = np.frombuffer(self.mapping, dtype=np.uint8)
                self.fd = fd
            return self.fd

    def claim(self, memory: DeviceMemory) -> int:
        """The lowest free slot for `memory` (device memories opened in order get slots 0, 1, ...)."""
        with self.lock:
            if self.mapping is None:  # reserved, never committed: pages cost RAM only once touched
                self.mapping = mmap.mmap(-1, UVA_SLOTS * UVA_RANGE,
                                         flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
                self.bytes = np.frombuffer(self.mapping, dtype=np.uint8)
            for slot in range(UVA_SLOTS):
                ref = self.slots.get(slot)
                if ref is None or ref() is None:
                    if ref is not None:  # dropped, its finalizer not yet run: zero the range here
                        self._zero(slot)
                    self.slots[slot] = weakref.ref(memory)
                    return slot
        raise CudaError("cudaErrorInvalidDevice", f"[uva] cannot open another device: all {UVA_SLOTS} device "
                        f"ranges of the unified address space are in use")

    def release(self, slot: int) -> None:
        """Forget a dropped device memory's range and give its host pages back (it reads as zeros),
        unless a new memory has claimed the range since (then `claim` zeroed it)."""
        with self.lock:
            ref = self.slots.get(slot)
            if ref is not None and ref() is None:
                del self.slots[slot]
                self._zero(slot)

    def _zero(self, slot: int) -> None:
        if self.mapping is not None and hasattr(self.mapping, "madvise"):  # a shared mapping's pages are the
            advice = mmap.MADV_REMOVE if self.fd is not None else mmap.MADV_DONTNEED  # file's: punch them out
            self.mapping.madvise(advice, slot * UVA_RANGE, UVA_RANGE)

    def owner(self, address: int) -> DeviceMemory | None:
        slot = uva_slot(address)
        ref = self.slots.get(slot) if slot is not None else None
        return ref() if ref is not None else None


_UVA = _UnifiedAddressSpace()


def share_device_memory() -> int | None:
    """Make all device memory of this process mappable by another process, and return the memfd to map:
    byte `address - GLOBAL_BASE` of the file is device address `address`. A native program run by
    `strata run` maps it to copy its pageable memory straight into device memory, one copy, as the CPU
    writes a GPU's memory through its PCIe BAR. Must run before the first device opens (None after).
    (`strata.cuda.bridge.server.run` calls it; no example here, since it changes the process's backing.)"""
    return _UVA.share()


def uva_slot(address: int) -> int | None:
    """The unified-address range `address` falls in (None outside every device's range)."""
    if GLOBAL_BASE <= address < GLOBAL_BASE + UVA_SLOTS * UVA_RANGE:
        return (address - GLOBAL_BASE) >> UVA_SHIFT
    return None


def memory_of(address: int) -> DeviceMemory | None:
    """The device memory whose unified-address range holds `address` (cudaPointerGetAttributes'
    device), or None if no device owns that range."""
    return _UVA.owner(int(address))


@dataclass
class Allocation:
    """One mapped range of device memory (a cudaMalloc, a module variable, ...)."""

    address: int
    size: int
    tag: str = ""
    freed: bool = False

    @property
    def end(self) -> int:
        return self.address + self.size


@dataclass
class AccessFault:
    """Why a lane's access failed; the engine turns it into a DeviceFault with kernel context."""

    lane: int  # index into the addresses checked
    address: int
    size: int
    kind: str  # 'out of bounds' | 'misaligned'
    nearest: str  # human-readable nearest allocation


class DeviceMemory:
    """HBM of one virtual GPU: `capacity` bytes of memory behind the address range [base, end).

    A standalone memory (the default) has addresses from GLOBAL_BASE, `capacity` of them. With
    `uva=True` (a device's memory) it takes the next free range of the unified address space:
    `base = GLOBAL_BASE + slot * UVA_RANGE` and `UVA_RANGE` addresses, more than `capacity`, so the
    VRAM manager can leave unmapped guard pages between allocations.

    Example:
        >>> mem = DeviceMemory(1 << 20)
        >>> mem.map(GLOBAL_BASE, 64, "x")
        >>> mem.write(GLOBAL_BASE, b"abcd"); mem.read(GLOBAL_BASE, 4)
        b'abcd'
    """

    def __init__(self, capacity: int, *, uva: bool = False) -> None:
        self.capacity = capacity
        self.slot: int | None = None
        if uva:
            if capacity > UVA_RANGE:
                raise ValueError(f"[memory] {capacity:,} bytes do not fit a {UVA_RANGE:,}-byte address range")
            self.slot = _UVA.claim(self)
            assert _UVA.mapping is not None and _UVA.bytes is not None
            self._mmap = _UVA.mapping
            self.bytes = _UVA.bytes  # the whole unified space, indexed by address - GLOBAL_BASE
            self.base = GLOBAL_BASE + self.slot * UVA_RANGE
            self.va_size = UVA_RANGE
            weakref.finalize(self, _UVA.release, self.slot)
        else:
            self._mmap = mmap.mmap(-1, capacity, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
            self.bytes = np.frombuffer(self._mmap, dtype=np.uint8)
            self.base = GLOBAL_BASE
            self.va_size = capacity
        self.end = self.base + self.va_size
        self._base = int(self.bytes.ctypes.data)
        self._views: dict[np.dtype, np.ndarray] = {}
        self._lock = threading.RLock()  # the map is changed by host threads while engines read it
        self._starts: list[int] = []  # sorted live allocation starts
        self._live: dict[int, Allocation] = {}
        self._freed: list[Allocation] = []  # recent frees, for use-after-free reports
        self.generation = 0  # bumped by every map and unmap (the native executor caches its table on it)
        self.peers: dict[int, DeviceMemory] = {}  # slot -> peer memory this device's kernels may access
        self.peer_bytes: dict[int, int] = {}  # slot -> bytes kernels moved over the interconnect
        self._peer_lock = threading.Lock()  # engine worker threads count peer traffic at once
        self._rmw_lock = threading.RLock()  # (a memory outside the unified space: see _RMW_LOCKS)
        # texture and surface objects' descriptors (the texture header/sampler tables), by handle
        self.descriptors = DescriptorTable()

    # -- peer access (cudaDeviceEnablePeerAccess): the routing of addresses in other devices' ranges
    def enable_peer(self, peer: DeviceMemory) -> None:
        """Let kernels on this device access `peer`'s memory through its unified addresses."""
        if peer.slot is None or self.slot is None or peer is self:
            raise ValueError("[peer] peer access needs two different device memories in the unified space")
        self.peers[peer.slot] = peer

    def disable_peer(self, peer: DeviceMemory) -> None:
        if peer.slot is not None:
            self.peers.pop(peer.slot, None)

    def add_peer_bytes(self, slot: int, nbytes: int) -> None:
        """Count `nbytes` a kernel moved from or to the peer memory in unified slot `slot` (thread-safe: both
        engine worker threads count at once)."""
        with self._peer_lock:
            self.peer_bytes[slot] = self.peer_bytes.get(slot, 0) + nbytes

    # -- address map (the driver maps; the engine checks)
    def map(self, address: int, size: int, tag: str = "", reserved: int = 0) -> None:
        """Map `size` bytes at `address`. `reserved` (>= size) is the extent of addresses the allocator
        set aside for it (its pages and guard page): records of freed allocations there are forgotten,
        so a fault just past the new allocation is reported against it, not as a use after free."""
        if address < self.base or address + size > self.end:
            raise ValueError(f"[map] range {address:#x}+{size} is outside this device's addresses "
                             f"[{self.base:#x}, {self.end:#x})")
        with self._lock:
            if address in self._live:
                held = self._live[address]
                raise ValueError(f"[map] {address:#x} ({tag or 'untagged'}, {size} bytes) is already mapped by "
                                 f"'{held.tag}' ({held.size} bytes): the allocator handed out a live address")
            bisect.insort(self._starts, address)
            self._live[address] = Allocation(address, size, tag)
            self.generation += 1
            extent = max(size, reserved)
            self._freed = [a for a in self._freed if a.end <= address or a.address >= address + extent]

    def unmap(self, address: int) -> Allocation:
        with self._lock:
            alloc = self._live.pop(address, None)
            if alloc is None:
                raise ValueError(f"[unmap] {address:#x} is not a mapped allocation's start")
            self._starts.remove(address)
            self.generation += 1
            alloc.freed = True
            self._freed.append(alloc)
            del self._freed[:-64]
            return alloc

    def allocation_at(self, address: int) -> Allocation | None:
        with self._lock:
            i = bisect.bisect_right(self._starts, address) - 1
            if i >= 0:
                a = self._live[self._starts[i]]
                if address < a.end:
                    return a
        return None

    def allocations(self) -> list[Allocation]:
        """The live allocations, in address order (a snapshot)."""
        with self._lock:
            return [self._live[s] for s in self._starts]

    def typed(self, dtype: np.dtype | type) -> np.ndarray:
        """HBM viewed as an array of `dtype` (index = byte offset // itemsize)."""
        dt = np.dtype(dtype)
        v = self._views.get(dt)
        if v is None:
            n = self.bytes.size
            v = self.bytes[: n - n % dt.itemsize].view(dt)
            self._views[dt] = v
        return v

    def rmw_guard(self, lo: int, hi: int) -> threading.RLock | _Held:
        """What an emulated read-modify-write of the bytes at offsets `lo`..`hi` (inclusive; offsets are
        `address - GLOBAL_BASE`) holds over its read and write, and a host-side write of them while it writes,
        so that neither lands inside the other (see _RMW_LOCKS).

        Example:
            >>> mem = DeviceMemory(1 << 20)
            >>> with mem.rmw_guard(0, 3):
            ...     pass
        """
        if self.slot is None:
            return self._rmw_lock
        first, last = max(lo, 0) >> UVA_SHIFT, min(max(hi, lo, 0) >> UVA_SHIFT, UVA_SLOTS - 1)
        return _RMW_LOCKS[first] if first >= last else _Held(_RMW_LOCKS[first:last + 1])

    # -- host access (DMA engines and the driver use these)
    def write(self, address: int, data: bytes | np.ndarray) -> None:
        buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes | bytearray) else \
            np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        off = address - GLOBAL_BASE
        with self.rmw_guard(off, off + buf.size - 1):  # (never inside a kernel's emulated atomic)
            self.bytes[off: off + buf.size] = buf

    def read(self, address: int, size: int) -> bytes:
        off = address - GLOBAL_BASE
        return self.bytes[off: off + size].tobytes()

    def view(self, address: int, size: int) -> np.ndarray:
        off = address - GLOBAL_BASE
        return self.bytes[off: off + size]

    def host_pointer(self, address: int) -> int:
        """The host address backing device `address` (what a DMA engine reads or writes)."""
        return self._base + (address - GLOBAL_BASE)

    def release(self, address: int, size: int) -> None:
        """Give the host RAM behind a freed page-aligned range back (it reads as zeros afterwards)."""
        off = address - GLOBAL_BASE
        lo, hi = -(-off // mmap.PAGESIZE) * mmap.PAGESIZE, (off + size) // mmap.PAGESIZE * mmap.PAGESIZE
        if hi > lo and hasattr(self._mmap, "madvise"):
            self._mmap.madvise(mmap.MADV_DONTNEED, lo, hi - lo)

    def fill(self, address: int, size: int, value: int) -> None:
        off = address - GLOBAL_BASE
        with self.rmw_guard(off, off + size - 1):  # (never inside a kernel's emulated atomic)
            self.bytes[off: off + size] = value & 0xFF

    # -- memcheck
    def check(self, addr: np.ndarray, size: int) -> AccessFault | None:
        """Check lanes' accesses of `size` bytes at `addr` (uint64). None when all are valid.

        Byte-exact: an access is valid only if all its bytes lie inside one live allocation of this
        device, or of a peer whose access is enabled (then its bytes count as peer traffic)."""
        if addr.size == 0:
            return None
        if size > 1 and (np.bitwise_or.reduce(addr) & np.uint64(size - 1)):
            bad = np.flatnonzero(addr & np.uint64(size - 1))
            lane = int(bad[0])
            return AccessFault(lane, int(addr[lane]), size, "misaligned", self.describe_nearest(int(addr[lane])))
        lo, hi = int(addr.min()), int(addr.max())
        a = self.allocation_at(lo)
        if a is not None and hi + size <= a.end:
            return None
        if self.peers and (lo < self.base or hi >= self.end):
            owner = memory_of(lo)  # fast path: all lanes inside one allocation of one enabled peer (NCCL's reads)
            if owner is not None and owner.slot in self.peers and owner.slot == uva_slot(hi):
                pa = owner.allocation_at(lo)
                if pa is not None and hi + size <= pa.end:
                    self.add_peer_bytes(owner.slot, int(addr.size) * size)
                    return None
            return self._check_routed(addr, size)
        return self._check_own(addr, size)

    def _check_own(self, addr: np.ndarray, size: int) -> AccessFault | None:
        with self._lock:
            starts = np.asarray(self._starts, dtype=np.uint64)
            ends = np.asarray([self._live[s].end for s in self._starts], dtype=np.uint64)
        idx = np.searchsorted(starts, addr, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        if starts.size:
            ok &= addr <= ends[safe] - np.uint64(size)  # not `addr + size`: it wraps near 2^64
        else:
            ok[:] = False
        bad = np.flatnonzero(~ok)
        if bad.size == 0:
            return None
        lane = int(bad[0])
        return AccessFault(lane, int(addr[lane]), size, "out of bounds", self.describe_nearest(int(addr[lane])))

    def _check_routed(self, addr: np.ndarray, size: int) -> AccessFault | None:
        """The slow path for accesses that leave this device's range: each lane is checked by the
        memory that owns its address, if it is this device or an enabled peer."""
        rel = addr - np.uint64(GLOBAL_BASE)
        inside = addr >= np.uint64(GLOBAL_BASE)
        slot = np.where(inside, rel >> np.uint64(UVA_SHIFT), np.uint64(UVA_SLOTS)).astype(np.int64)
        faults: list[AccessFault] = []
        for s in np.unique(slot).tolist():
            lanes = np.flatnonzero(slot == s)
            owner = self.peers.get(int(s))
            fault = (owner or self)._check_own(addr[lanes], size)
            if fault is not None:
                fault.lane = int(lanes[fault.lane])
                if owner is None:
                    fault.nearest = self.describe_nearest(fault.address)
                faults.append(fault)
            elif owner is not None:
                self.add_peer_bytes(int(s), int(lanes.size) * size)
        return min(faults, key=lambda f: f.lane) if faults else None

    def describe_nearest(self, address: int) -> str:
        """Where `address` lies relative to the closest allocation, live or recently freed."""
        if self.slot is not None and not self.base <= address < self.end:
            owner = memory_of(address)
            if owner is not None and owner is not self:
                where = owner.describe_nearest(address) if owner._live else "no allocation there"
                access = "enabled" if owner.slot in self.peers else "not enabled"
                return (f"address is in another device's memory (unified range {owner.slot}: {where}); "
                        f"peer access to it is {access}")
        best: tuple[int, str] | None = None
        with self._lock:
            candidates = [*self._live.values(), *self._freed]
        for a in candidates:
            if a.address <= address < a.end:
                dist, text = 0, f"{address - a.address} bytes inside"
            elif address >= a.end:
                dist = address - a.end + 1
                text = f"{address - a.end} bytes after the end of"
            else:
                dist = a.address - address
                text = f"{dist} bytes before"
            state = "freed allocation" if a.freed else "allocation"
            label = f"{text} {state} {a.address:#x} of {a.size} bytes" + (f" ({a.tag})" if a.tag else "")
            if best is None or dist < best[0]:
                best = (dist, label)
        return best[1] if best else "no allocation nearby"
