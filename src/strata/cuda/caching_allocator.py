"""The caching device allocator behind the framework's "cuda" tensors, in the manner of PyTorch's
CUDACachingAllocator (which lives in c10/cuda, beside the CUDA runtime, below the framework).

Sizes are rounded up to 512 B. Requests up to 1 MiB come from the small pool, whose segments are
2 MiB cudaMallocs; larger ones from the large pool (20 MiB segments for 1-10 MiB requests, else the
request rounded to 2 MiB). The smallest cached free block that fits is taken and split when the rest is
worth keeping; a freed block merges with free neighbours of its segment and stays cached for reuse
(`memory_reserved` counts segments, `memory_allocated` blocks in use). `empty_cache` returns whole free
segments to the driver; a failed cudaMalloc frees the cache and retries once. All tensors use the
device's default stream, so a block freed on the host may be reused at once: later work on that
stream is ordered after the work that used it.

Thread-safe: each device's allocator serializes its calls with one lock, and its segments are
cudaMalloc'd on its own device directly (never by switching the process's current device, which
another thread may be using).

memcheck sees segments, not blocks: an access past a block but inside its segment is not caught, as
with compute-sanitizer and PyTorch's allocator (PYTORCH_NO_CUDA_MEMORY_CACHING=1 is the cure there).

Example:
    >>> a = CachingAllocator(0)
    >>> b = a.malloc(1000)
    >>> b.size, a.memory_allocated(), a.memory_reserved()
    (1024, 1024, 2097152)
    >>> a.free(b); a.memory_allocated(), a.memory_reserved()
    (0, 2097152)
    >>> a.empty_cache(); a.memory_reserved()
    0
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass, field
from typing import Any

from strata import trace
from strata.cuda import device as _cuda_device
from strata.errors import OutOfMemoryError

K_MIN_BLOCK = 512
K_SMALL_SIZE = 1 << 20
K_SMALL_BUFFER = 2 << 20
K_MIN_LARGE_ALLOC = 10 << 20
K_ROUND_LARGE = 2 << 20
K_LARGE_BUFFER = 20 << 20


@dataclass(eq=False)
class Block:
    """A piece of a segment: [ptr, ptr + size). Neighbours in the same segment are prev/next."""

    ptr: int
    size: int
    small: bool
    segment: int  # the address cudaMalloc returned for the segment
    generation: int = 0  # the context generation (Device.reset count) it was allocated in
    allocated: bool = False
    requested: int = 0
    prev: Block | None = field(default=None, repr=False)
    next: Block | None = field(default=None, repr=False)

    @property
    def is_split(self) -> bool:
        """True when the block shares its segment with other blocks."""
        return self.prev is not None or self.next is not None


def round_size(size: int) -> int:
    """Requested bytes rounded up to a multiple of 512 (at least 512)."""
    return max(K_MIN_BLOCK, (size + K_MIN_BLOCK - 1) // K_MIN_BLOCK * K_MIN_BLOCK)


def allocation_size(size: int) -> int:
    """The segment size cudaMalloc'd for a rounded request that no cached block fits."""
    if size <= K_SMALL_SIZE:
        return K_SMALL_BUFFER
    if size < K_MIN_LARGE_ALLOC:
        return K_LARGE_BUFFER
    return (size + K_ROUND_LARGE - 1) // K_ROUND_LARGE * K_ROUND_LARGE


class CachingAllocator:
    """One device's caching allocator: pools of free blocks ordered by (size, address)."""

    def __init__(self, index: int) -> None:
        self.index = index
        self._pools: dict[bool, list[tuple[int, int, Block]]] = {True: [], False: []}
        self._segments: dict[int, int] = {}  # segment address -> size
        self._lock = threading.RLock()
        self._context: Any = None
        self._generation = self._context_generation()
        self.allocated = 0
        self.peak = 0
        self.reserved = 0

    def _context_generation(self) -> int:
        # (the device's primary context outlives resets; looked up once, as every malloc, free and
        # tensor pointer asks this)
        ctx = self._context
        if ctx is None:
            ctx = self._context = _cuda_device.Device(self.index).context
        return ctx.generation

    def _check_reset(self) -> None:
        # cudaDeviceReset freed every segment behind our back: forget them.
        gen = self._context_generation()
        if gen != self._generation:
            self._pools = {True: [], False: []}
            self._segments.clear()
            self.allocated = self.reserved = 0
            self._generation = gen

    def malloc(self, nbytes: int) -> Block:
        """A block of at least `nbytes` (rounded to 512 B) from the cache, or from a new segment.

        Raises:
            OutOfMemoryError: the device has no room even after the cache was emptied.
        """
        with self._lock:
            self._check_reset()
            size = round_size(nbytes)
            small = size <= K_SMALL_SIZE
            pool = self._pools[small]
            i = bisect.bisect_left(pool, (size, -1))
            if i < len(pool):
                _, _, block = pool.pop(i)
            else:
                block = self._new_segment(size, small)
            remaining = block.size - size
            if (remaining >= K_MIN_BLOCK) if small else (remaining > K_SMALL_SIZE):
                rest = Block(block.ptr + size, remaining, small, block.segment, prev=block, next=block.next)
                if block.next is not None:
                    block.next.prev = rest
                block.next = rest
                block.size = size
                bisect.insort(pool, (rest.size, rest.ptr, rest))
            block.allocated = True
            block.requested = nbytes
            block.generation = self._generation
            self.allocated += block.size
            self.peak = max(self.peak, self.allocated)
            return block

    def _new_segment(self, size: int, small: bool) -> Block:
        seg = allocation_size(size)
        try:
            ptr = _segment_malloc(self.index, seg)
        except OutOfMemoryError:
            self._release_cached()
            ptr = _segment_malloc(self.index, seg)
        self._segments[ptr] = seg
        self.reserved += seg
        return Block(ptr, seg, small, ptr)

    def free(self, block: Block) -> None:
        """Return `block` to its pool, merged with free neighbours (the memory stays reserved)."""
        with self._lock:
            self._check_reset()
            if block.generation != self._generation or not block.allocated:
                return  # a device reset freed it already
            block.allocated = False
            self.allocated -= block.size
            pool = self._pools[block.small]
            for nb in (block.prev, block.next):
                if nb is not None and not nb.allocated:
                    pool.remove((nb.size, nb.ptr, nb))
                    if nb is block.prev:
                        nb.size += block.size
                        nb.next = block.next
                        if block.next is not None:
                            block.next.prev = nb
                        block = nb
                    else:
                        block.size += nb.size
                        block.next = nb.next
                        if nb.next is not None:
                            nb.next.prev = block
            bisect.insort(pool, (block.size, block.ptr, block))

    def _release_cached(self) -> None:
        for small in (True, False):
            keep = []
            for entry in self._pools[small]:
                b = entry[2]
                if b.is_split:
                    keep.append(entry)
                    continue
                _segment_free(self.index, b.segment)
                self.reserved -= self._segments.pop(b.segment)
            self._pools[small] = keep

    def empty_cache(self) -> None:
        """Give every wholly free segment back to the driver (cudaFree)."""
        with self._lock:
            self._check_reset()
            self._release_cached()

    def is_live(self, block: Block) -> bool:
        """False once a device reset released the block's memory."""
        return block.generation == self._context_generation()

    def memory_allocated(self) -> int:
        """Bytes in blocks handed out (rounded sizes), as torch.cuda.memory_allocated."""
        with self._lock:
            self._check_reset()
            return self.allocated

    def memory_reserved(self) -> int:
        """Bytes in segments obtained from cudaMalloc, as torch.cuda.memory_reserved."""
        with self._lock:
            self._check_reset()
            return self.reserved

    def max_memory_allocated(self) -> int:
        """The peak of memory_allocated since start or `reset_peak_memory_stats`."""
        return self.peak

    def reset_peak_memory_stats(self) -> None:
        """Restart the peak at the current memory_allocated."""
        with self._lock:
            self.peak = self.allocated


_allocators: dict[int, CachingAllocator] = {}
_allocators_lock = threading.Lock()


def get_allocator(index: int) -> CachingAllocator:
    """The caching allocator of CUDA device `index` (made on first use)."""
    a = _allocators.get(index)
    if a is None:
        with _allocators_lock:  # two threads' first use must not make two allocators of one device
            a = _allocators.get(index)
            if a is None:
                a = _allocators[index] = CachingAllocator(index)
    return a


def _segment_malloc(index: int, nbytes: int) -> int:
    """cudaMalloc of a segment on device `index`."""
    with trace.span("L3", "cudaMalloc", bytes=nbytes):
        return _cuda_device.Device(index).context.malloc(nbytes, "cudaMalloc")


def _segment_free(index: int, ptr: int) -> None:
    """cudaFree of a segment (waits for the device, as cudaFree does)."""
    with trace.span("L3", "cudaFree", address=hex(ptr)):
        _cuda_device.Device(index).context.free(ptr)


def _index(d: Any) -> int:
    """A device index from None (current), an int, "cuda"/"cuda:N", or a device object with `.index`."""
    if d is None:
        return _cuda_device.current_device().index
    if isinstance(d, int):
        return d
    if isinstance(d, str):  # before getattr: str has an `index` method
        if d != "cuda" and not d.startswith("cuda:"):
            raise ValueError(f"Expected a cuda device, but got: {d}")
        index = int(d.split(":")[1]) if ":" in d else None
    else:
        index = getattr(d, "index", None)
    return index if index is not None else _cuda_device.current_device().index


def memory_allocated(device: Any = None) -> int:
    """Bytes held by "cuda" tensors on `device` (default: the current device)."""
    return get_allocator(_index(device)).memory_allocated()


def memory_reserved(device: Any = None) -> int:
    """Bytes the caching allocator holds from the driver on `device`."""
    return get_allocator(_index(device)).memory_reserved()


def max_memory_allocated(device: Any = None) -> int:
    """Peak of memory_allocated on `device`."""
    return get_allocator(_index(device)).max_memory_allocated()


def reset_peak_memory_stats(device: Any = None) -> None:
    """Reset the peak tracked by max_memory_allocated."""
    get_allocator(_index(device)).reset_peak_memory_stats()


def empty_cache() -> None:
    """Release all unused cached segments of every device (torch.cuda.empty_cache)."""
    for a in _allocators.values():
        a.empty_cache()
