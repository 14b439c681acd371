"""The device heap: what device-side `malloc`/`free` (and so `new`/`delete`) allocate from.

Source of truth for device allocation. As on CUDA, the heap is one region of device memory of
cudaLimitMallocHeapSize bytes (8 MiB by default), reserved from the device's VRAM when the first
kernel of a module that calls malloc/free is launched; from then on the limit can't change
(cudaErrorInvalidValue) until the device is reset, which frees the heap and restores the default.

Memcheck sees each heap block as its own allocation (tag "device malloc"), not the region: an access
past a block's end, or to a freed block, faults with the usual report, naming the block. Each block is
preceded by a 16-byte header (allocator metadata, never mapped), so overflowing one block by a few
bytes never lands in the next one. Blocks are 16-byte aligned, placed first-fit in address order;
free ranges coalesce. A request that does not fit returns NULL (0), as device malloc does.

Calls are vectorized over lanes: `malloc(sizes)` serves every active lane of one instruction in lane
order, with a bump fast path while the free space is one range (the common case of a fresh heap).

Example:
    >>> from strata.hw.memory import DeviceMemory, GLOBAL_BASE
    >>> import numpy as np
    >>> mem = DeviceMemory(1 << 20)
    >>> heap = DeviceHeap(mem, reserve=lambda n: GLOBAL_BASE)
    >>> heap.set_limit(4096)
    >>> p = heap.malloc(np.array([10, 20], dtype=np.uint64))
    >>> int(p[1] - p[0]), int(p[0]) % 16
    (32, 0)
    >>> heap.free(p).size, heap.live_blocks
    (0, 0)
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable

import numpy as np

from strata.errors import CudaError
from strata.hw.memory import DeviceMemory

DEFAULT_HEAP_BYTES = 8 << 20  # cudaLimitMallocHeapSize's default
ALIGN = 16  # device malloc's alignment guarantee
HEADER = 16  # bytes before each block (allocator metadata; unmapped so overflow into it faults)
TAG = "device malloc"


class DeviceHeap:
    """One device's malloc heap. `reserve(nbytes) -> address` takes the region from the device's
    memory manager (the driver supplies it); the region's first 16 bytes are mapped as the heap's
    own header so the memory manager can unmap the region like any allocation."""

    def __init__(self, memory: DeviceMemory, reserve: Callable[[int], int] | None = None) -> None:
        self.memory = memory
        self.reserve = reserve
        self.limit = DEFAULT_HEAP_BYTES
        self.base: int | None = None  # the region's address once reserved
        self._free: list[tuple[int, int]] = []  # (start, size) of free spans, sorted by start
        self._blocks: dict[int, tuple[int, int]] = {}  # block address -> (span start, span size)
        self._lock = threading.Lock()

    # -- the limit (cudaDeviceSetLimit(cudaLimitMallocHeapSize))
    def set_limit(self, nbytes: int) -> None:
        """Set the heap size for the next reservation. CUDA's rule: only before a kernel that uses
        malloc/free has been launched on the device (cudaErrorInvalidValue after)."""
        if self.base is not None:
            raise CudaError("cudaErrorInvalidValue", "[set_limit] cudaLimitMallocHeapSize cannot change after a "
                            "kernel that uses malloc/free was launched on this device (reset the device first)")
        if nbytes < 0:
            raise CudaError("cudaErrorInvalidValue", f"[set_limit] heap size must be >= 0, got {nbytes}")
        self.limit = -(-int(nbytes) // ALIGN) * ALIGN

    @property
    def reserved(self) -> bool:
        return self.base is not None

    @property
    def live_blocks(self) -> int:
        return len(self._blocks)

    def ensure(self) -> None:
        """Reserve the region (once): the launch of a kernel whose module calls malloc/free does this."""
        if self.base is not None:
            return
        if self.reserve is None:
            raise CudaError("cudaErrorMemoryAllocation", "[heap] this device memory has no allocator for the "
                            "device heap (a standalone DeviceMemory: pass reserve=)")
        size = HEADER + self.limit
        base = int(self.reserve(size))
        # the region is not one allocation to memcheck: only the header and the live blocks are mapped
        if self.memory.allocation_at(base) is not None:
            self.memory.unmap(base)
        self.memory.map(base, HEADER, "device heap header")
        self.base = base
        self._free = [(base + HEADER, self.limit)] if self.limit else []

    def reset(self) -> None:
        """Forget the heap (device reset): unmap live blocks; the region itself is the caller's to free."""
        with self._lock:
            for addr in self._blocks:
                self.memory.unmap(addr)
            self._blocks.clear()
            self._free = []
            self.base = None
            self.limit = DEFAULT_HEAP_BYTES

    # -- malloc / free, over lanes
    def malloc(self, sizes: np.ndarray) -> np.ndarray:
        """Addresses of new blocks of `sizes` bytes (uint64 per lane), 0 where the heap is exhausted."""
        self.ensure()
        sizes = np.asarray(sizes, dtype=np.uint64)
        fits = sizes <= np.uint64(self.limit)  # larger requests fail at once (and can't overflow the sums)
        payload = np.where(fits, np.maximum(sizes, 1), 1).astype(np.uint64)  # malloc(0) gets a unique block
        spans: np.ndarray = np.uint64(HEADER) + (payload + np.uint64(ALIGN - 1)) // np.uint64(ALIGN) * np.uint64(ALIGN)
        out: np.ndarray = np.zeros(sizes.shape, dtype=np.uint64)
        with self._lock:
            if bool(fits.all()) and len(self._free) == 1 and int(spans.sum()) <= self._free[0][1]:
                start, length = self._free[0]
                ends = np.cumsum(spans, dtype=np.uint64)
                starts: np.ndarray = np.uint64(start) + ends - spans
                out[:] = starts + np.uint64(HEADER)
                total = int(ends[-1]) if ends.size else 0
                self._free = [(start + total, length - total)] if length > total else []
                for a, s, n in zip(out.tolist(), starts.tolist(), spans.tolist(), strict=True):
                    self._blocks[a] = (s, n)
            else:
                for i, (ok, span) in enumerate(zip(fits.tolist(), spans.tolist(), strict=True)):
                    if not ok:
                        continue
                    at = self._take(span)
                    if at is not None:
                        out[i] = at + HEADER
                        self._blocks[at + HEADER] = (at, span)
            for a, size in zip(out.tolist(), np.asarray(sizes).tolist(), strict=True):
                if a:
                    self.memory.map(a, size, TAG)
        return out

    def _take(self, span: int) -> int | None:
        for i, (start, length) in enumerate(self._free):
            if length >= span:
                if length == span:
                    del self._free[i]
                else:
                    self._free[i] = (start + span, length - span)
                return start
        return None

    def free(self, addresses: np.ndarray) -> np.ndarray:
        """Free the blocks at `addresses` (0 is ignored, as free(NULL)). Returns the indices of the
        addresses that are not live blocks (double free, or a pointer malloc did not return); those
        are left alone and the caller reports the first."""
        bad: list[int] = []
        with self._lock:
            for i, a in enumerate(np.asarray(addresses, dtype=np.uint64).tolist()):
                if a == 0:
                    continue
                entry = self._blocks.pop(a, None)
                if entry is None:
                    bad.append(i)
                    continue
                self.memory.unmap(a)
                self._give_back(*entry)
        return np.asarray(bad, dtype=np.int64)

    def _give_back(self, start: int, span: int) -> None:
        i = bisect.bisect_left(self._free, (start, 0))
        self._free.insert(i, (start, span))
        if i + 1 < len(self._free) and start + span == self._free[i + 1][0]:
            self._free[i] = (start, span + self._free[i + 1][1])
            del self._free[i + 1]
        if i > 0 and self._free[i - 1][0] + self._free[i - 1][1] == start:
            self._free[i - 1] = (self._free[i - 1][0], self._free[i - 1][1] + self._free[i][1])
            del self._free[i]

    def owns(self, address: int) -> bool:
        """Whether `address` lies in the heap's region (live block or not)."""
        return self.base is not None and self.base <= address < self.base + HEADER + self.limit
