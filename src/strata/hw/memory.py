"""Device memory of the virtual GPU (HBM), its address map, and memcheck for global accesses.

The source of truth for what a device address means: HBM is one flat host mapping (lazily committed,
so 141 GB of addresses cost only the pages touched), and an address is valid only inside a range the
driver mapped. Every global access the engine makes is checked here, as compute-sanitizer does.
"""

from __future__ import annotations

import bisect
import mmap
from dataclasses import dataclass

import numpy as np

# Device virtual addresses. The windows are where generic addresses of shared and local memory live.
GLOBAL_BASE = 0x7000_0000_0000
SHARED_WINDOW = 0x7F00_0000_0000
LOCAL_WINDOW = 0x7E00_0000_0000
FUNCTION_WINDOW = 0x7C00_0000_0000  # function addresses (for function pointers), 16 bytes apart
PARAM_WINDOW = 0x7B00_0000_0000  # a kernel parameter's address (`mov.b64 %rd, k_param_0`), for ld.param
WINDOW_SIZE = 1 << 32

_MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)


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
    """HBM of one virtual GPU: `capacity` bytes at device addresses from GLOBAL_BASE.

    Example:
        >>> mem = DeviceMemory(1 << 20)
        >>> mem.map(GLOBAL_BASE, 64, "x")
        >>> mem.write(GLOBAL_BASE, b"abcd"); mem.read(GLOBAL_BASE, 4)
        b'abcd'
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._mmap = mmap.mmap(-1, capacity, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE)
        self.bytes = np.frombuffer(self._mmap, dtype=np.uint8)
        self._base = int(self.bytes.ctypes.data)
        self._views: dict[np.dtype, np.ndarray] = {}
        self._starts: list[int] = []  # sorted live allocation starts
        self._live: dict[int, Allocation] = {}
        self._freed: list[Allocation] = []  # recent frees, for use-after-free reports

    # -- address map (the driver maps; the engine checks)
    def map(self, address: int, size: int, tag: str = "") -> None:
        if address < GLOBAL_BASE or address + size > GLOBAL_BASE + self.capacity:
            raise ValueError(f"[map] range {address:#x}+{size} is outside HBM")
        bisect.insort(self._starts, address)
        self._live[address] = Allocation(address, size, tag)
        self._freed = [a for a in self._freed if a.end <= address or a.address >= address + size]

    def unmap(self, address: int) -> Allocation:
        alloc = self._live.pop(address)
        self._starts.remove(address)
        alloc.freed = True
        self._freed.append(alloc)
        del self._freed[:-64]
        return alloc

    def allocation_at(self, address: int) -> Allocation | None:
        i = bisect.bisect_right(self._starts, address) - 1
        if i >= 0:
            a = self._live[self._starts[i]]
            if address < a.end:
                return a
        return None

    def typed(self, dtype: np.dtype | type) -> np.ndarray:
        """HBM viewed as an array of `dtype` (index = byte offset // itemsize)."""
        dt = np.dtype(dtype)
        v = self._views.get(dt)
        if v is None:
            v = self.bytes[: self.capacity - self.capacity % dt.itemsize].view(dt)
            self._views[dt] = v
        return v

    # -- host access (DMA engines and the driver use these)
    def write(self, address: int, data: bytes | np.ndarray) -> None:
        buf = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes | bytearray) else \
            np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        off = address - GLOBAL_BASE
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
        self.bytes[off: off + size] = value & 0xFF

    # -- memcheck
    def check(self, addr: np.ndarray, size: int) -> AccessFault | None:
        """Check lanes' accesses of `size` bytes at `addr` (uint64). None when all are valid."""
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
        starts = np.asarray(self._starts, dtype=np.uint64)
        ends = np.asarray([self._live[s].end for s in self._starts], dtype=np.uint64)
        idx = np.searchsorted(starts, addr, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        if starts.size:
            ok &= addr + np.uint64(size) <= ends[safe]
        else:
            ok[:] = False
        bad = np.flatnonzero(~ok)
        if bad.size == 0:
            return None
        lane = int(bad[0])
        return AccessFault(lane, int(addr[lane]), size, "out of bounds", self.describe_nearest(int(addr[lane])))

    def describe_nearest(self, address: int) -> str:
        """Where `address` lies relative to the closest allocation, live or recently freed."""
        best: tuple[int, str] | None = None
        for a in [*self._live.values(), *self._freed]:
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
