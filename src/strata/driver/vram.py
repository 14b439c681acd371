"""The VRAM manager: hands out page-granular ranges of a device's HBM and maps them for the GPU.

HBM is a lazily committed host mapping the size of the model's memory (141 GB of addresses on an
H200); only pages something touched cost host RAM, and freeing gives them back. Allocations are
whole 4 KiB pages (the GPU's small page), aligned to `alignment` (a power of two, at least a page),
placed first-fit; free ranges coalesce.

Guard pages: a device's address range (its slice of the unified address space) is larger than its
HBM, so each allocation is followed by one unmapped page of addresses (compute-sanitizer's
`--padding`): an access just past an allocation whose size is a whole number of pages faults instead
of landing in the next allocation. Guards cost addresses, not memory: `stats()` counts HBM only.
A memory whose addresses are exactly its capacity (a standalone `DeviceMemory`) gets no guards.

Thread safety: allocations and frees from any number of host threads are serialized by one lock.
"""

from __future__ import annotations

import bisect
import threading
import warnings
from dataclasses import dataclass

from strata.errors import CudaError, OutOfMemoryError
from strata.hw.memory import DeviceMemory

PAGE_SIZE = 4096  # the GPU MMU's small page; cudaMalloc promises 256-byte alignment, pages give more


@dataclass
class VramStats:
    """Memory statistics of one device, in bytes."""

    total: int
    used: int
    free: int
    largest_free_block: int

    @property
    def fragmentation(self) -> float:
        """1 - largest free block / free memory (0 = one contiguous free range)."""
        return 0.0 if self.free == 0 else 1.0 - self.largest_free_block / self.free


class VramManager:
    """First-fit allocator over a device's HBM.

    Example:
        >>> vram = VramManager(DeviceMemory(1 << 20))
        >>> a = vram.alloc(1000); b = vram.alloc(10)
        >>> b - a, vram.stats().used
        (4096, 8192)
        >>> c = vram.alloc(5000, alignment=65536); c % 65536, vram.size_of(c)
        (0, 8192)
    """

    def __init__(self, memory: DeviceMemory) -> None:
        self.memory = memory
        self._free: list[tuple[int, int]] = [(memory.base, memory.va_size)]  # (start, size) of addresses, sorted
        self._sizes: dict[int, tuple[int, int]] = {}  # start -> (bytes of HBM, bytes of addresses incl. guard)
        self._used = 0
        self._guard = PAGE_SIZE if memory.va_size > memory.capacity else 0
        self._lock = threading.RLock()
        # A garbage-collected array's finalizer frees at once on an idle device (Context.release), and the
        # collector runs finalizers wherever this thread allocates a Python object, inside an alloc or free
        # of this manager included (the lock is re-entrant). A free arriving while the free list is being
        # changed is deferred to the end of that operation; run there, it would splice the list under an
        # index computed before it, and hand one range out twice.
        self._busy = False
        self._deferred: list[int] = []

    def alloc(self, size: int, tag: str = "", alignment: int = PAGE_SIZE) -> int:
        """Map `size` bytes (rounded up to pages) at an address aligned to `alignment`."""
        if size < 0:
            raise CudaError("cudaErrorInvalidValue", f"[malloc] size must be >= 0, got {size}")
        if alignment < PAGE_SIZE or alignment & (alignment - 1):
            raise CudaError("cudaErrorInvalidValue",
                            f"[malloc] alignment must be a power of two >= {PAGE_SIZE}, got {alignment}")
        rounded = max(PAGE_SIZE, -(-size // PAGE_SIZE) * PAGE_SIZE)
        with self._lock:
            self._busy = True
            try:
                address = self._alloc(size, rounded, tag, alignment)
            finally:
                self._busy = False
            self._run_deferred()
        if address is not None:
            return address
        st = self.stats()
        raise OutOfMemoryError(message=(
            f"[malloc] out of device memory: requested {size:,} bytes, {st.free:,} bytes free, "
            f"largest free block {st.largest_free_block:,} bytes"))

    def _alloc(self, size: int, rounded: int, tag: str, alignment: int) -> int | None:
        # under the lock, with frees deferred (see __init__)
        if self._used + rounded <= self.memory.capacity:
            # with a guard page if addresses allow, else without (addresses are never the limit then)
            for reserve in dict.fromkeys((rounded + self._guard, rounded)):
                aligned = self._place(reserve, alignment)
                if aligned is not None:
                    self._sizes[aligned] = (rounded, reserve)
                    self._used += rounded
                    self.memory.map(aligned, max(size, 1), tag, reserved=reserve)
                    return aligned
        return None

    def _place(self, reserve: int, alignment: int) -> int | None:
        """First fit of `reserve` addresses at `alignment`; takes them from the free list."""
        for i, (start, length) in enumerate(self._free):
            aligned = -(-start // alignment) * alignment
            if aligned + reserve > start + length:
                continue
            pieces = [(start, aligned - start), (aligned + reserve, start + length - aligned - reserve)]
            self._free[i:i + 1] = [p for p in pieces if p[1] > 0]
            return aligned
        return None

    def free(self, address: int) -> None:
        with self._lock:
            if self._busy:  # re-entered by a finalizer mid-operation (see __init__)
                self._deferred.append(address)
                return
            self._busy = True
            try:
                self._free_one(address)
            finally:
                self._busy = False
            self._run_deferred()

    def _run_deferred(self) -> None:
        """The frees deferred during the operation that just ended (finalizers' frees: a failure is
        reported as a warning, not raised into the unrelated call that happened to run them)."""
        while self._deferred:
            address = self._deferred.pop()
            self._busy = True
            try:
                self._free_one(address)
            except CudaError as e:
                warnings.warn(f"a deferred free failed: {e}", RuntimeWarning, stacklevel=2)
            finally:
                self._busy = False

    def _free_one(self, address: int) -> None:
        # under the lock, with frees deferred
        entry = self._sizes.pop(address, None)
        if entry is None:
            raise CudaError("cudaErrorInvalidValue", f"[free] {address:#x} is not an allocation's start "
                            "(double free or foreign pointer)")
        size, reserve = entry
        self._used -= size
        self.memory.unmap(address)
        self.memory.release(address, size)
        i = bisect.bisect_left(self._free, (address, 0))
        self._free.insert(i, (address, reserve))
        # coalesce with neighbours
        if i + 1 < len(self._free) and self._free[i][0] + self._free[i][1] == self._free[i + 1][0]:
            self._free[i] = (self._free[i][0], self._free[i][1] + self._free[i + 1][1])
            del self._free[i + 1]
        if i > 0 and self._free[i - 1][0] + self._free[i - 1][1] == self._free[i][0]:
            self._free[i - 1] = (self._free[i - 1][0], self._free[i - 1][1] + self._free[i][1])
            del self._free[i]

    def free_all(self) -> int:
        """Free every allocation (a device reset); returns how many there were."""
        with self._lock:
            live = list(self._sizes)
            for address in live:
                self.free(address)
            return len(live)

    def size_of(self, address: int) -> int | None:
        """Bytes of HBM behind the allocation starting at `address` (whole pages), or None."""
        with self._lock:
            entry = self._sizes.get(address)
        return None if entry is None else entry[0]

    @property
    def allocations(self) -> int:
        return len(self._sizes)

    def stats(self) -> VramStats:
        with self._lock:
            total = self.memory.capacity
            free = total - self._used
            largest = min(free, max((s for _, s in self._free), default=0))
            return VramStats(total, self._used, free, largest)
