"""The VRAM manager: hands out ranges of a device's HBM and maps them so the GPU may touch them."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from strata.errors import CudaError, OutOfMemoryError
from strata.hw.memory import GLOBAL_BASE, DeviceMemory

ALIGNMENT = 512  # cudaMalloc returns addresses aligned to at least 256 bytes; we use 512


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
        (1024, 1536)
    """

    def __init__(self, memory: DeviceMemory) -> None:
        self.memory = memory
        self._free: list[tuple[int, int]] = [(GLOBAL_BASE, memory.capacity)]  # (start, size), sorted
        self._sizes: dict[int, int] = {}

    def alloc(self, size: int, tag: str = "") -> int:
        if size < 0:
            raise CudaError("cudaErrorInvalidValue", f"[malloc] size must be >= 0, got {size}")
        rounded = max(ALIGNMENT, -(-size // ALIGNMENT) * ALIGNMENT)
        for i, (start, length) in enumerate(self._free):
            if length >= rounded:
                if length == rounded:
                    del self._free[i]
                else:
                    self._free[i] = (start + rounded, length - rounded)
                self._sizes[start] = rounded
                self.memory.map(start, max(size, 1), tag)
                return start
        st = self.stats()
        raise OutOfMemoryError(message=(
            f"[malloc] out of device memory: requested {size:,} bytes, {st.free:,} bytes free, "
            f"largest free block {st.largest_free_block:,} bytes"))

    def free(self, address: int) -> None:
        size = self._sizes.pop(address, None)
        if size is None:
            raise CudaError("cudaErrorInvalidValue", f"[free] {address:#x} is not an allocation's start "
                            "(double free or foreign pointer)")
        self.memory.unmap(address)
        i = bisect.bisect_left(self._free, (address, 0))
        self._free.insert(i, (address, size))
        # coalesce with neighbours
        if i + 1 < len(self._free) and self._free[i][0] + self._free[i][1] == self._free[i + 1][0]:
            self._free[i] = (self._free[i][0], self._free[i][1] + self._free[i + 1][1])
            del self._free[i + 1]
        if i > 0 and self._free[i - 1][0] + self._free[i - 1][1] == self._free[i][0]:
            self._free[i - 1] = (self._free[i - 1][0], self._free[i - 1][1] + self._free[i][1])
            del self._free[i]

    def size_of(self, address: int) -> int | None:
        return self._sizes.get(address)

    def stats(self) -> VramStats:
        free = sum(s for _, s in self._free)
        largest = max((s for _, s in self._free), default=0)
        total = self.memory.capacity
        return VramStats(total, total - free, free, largest)
