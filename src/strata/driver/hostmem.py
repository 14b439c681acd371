"""Host memory the driver hands the runtime: pageable, or pinned (page-locked) for DMA.

Pinned memory is an anonymous mapping the driver tries to lock in RAM (`mlock`, as
`cudaHostAlloc`/`hsaKmtAllocMemory` do); if the process's lock limit refuses, the pages stay
unlocked but are still registered as pinned, so copies from them are modeled at pinned speed
(`locked` says which happened). Copy engines read pinned memory directly; pageable memory is staged
by the driver first, which is why it is slower on real systems and in the model.

Example:
    >>> buf = HOST_MEMORY.pinned(4096)
    >>> HOST_MEMORY.is_pinned(buf.ctypes.data, 4096), HOST_MEMORY.is_pinned(buf.ctypes.data, 4097)
    (True, False)
"""

from __future__ import annotations

import bisect
import ctypes
import ctypes.util
import itertools
import mmap
import threading
import weakref

import numpy as np

_libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


class HostMemory:
    """Registry of pinned host allocations (address ranges), process-wide and thread-safe.

    A dropped buffer's pages are unmapped before its registration is forgotten, so another thread may
    get the same address in between: each registration carries a token, and only its own buffer's
    finalizer forgets it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._starts: list[int] = []
        self._ranges: dict[int, tuple[int, bool, int]] = {}  # start -> (size, locked, token)
        self._tokens = itertools.count(1)

    def pinned(self, nbytes: int) -> np.ndarray:
        """A page-locked byte buffer of `nbytes` (rounded up to whole pages in the mapping)."""
        if nbytes < 0:
            raise ValueError(f"[pinned] size must be >= 0, got {nbytes}")
        length = max(mmap.PAGESIZE, -(-nbytes // mmap.PAGESIZE) * mmap.PAGESIZE)
        mapping = mmap.mmap(-1, length)
        arr = np.frombuffer(mapping, dtype=np.uint8, count=nbytes)
        start = int(np.frombuffer(mapping, dtype=np.uint8).ctypes.data)
        locked = _libc.mlock(ctypes.c_void_p(start), ctypes.c_size_t(length)) == 0
        with self._lock:
            token = next(self._tokens)
            if start not in self._ranges:  # else: a stale registration of unmapped pages at this address
                bisect.insort(self._starts, start)
            self._ranges[start] = (length, locked, token)
        weakref.finalize(mapping, self._forget, start, token)
        return arr

    def register(self, address: int, nbytes: int) -> int:
        """Treat an existing mapping [address, address + nbytes) as pinned (cudaHostRegister without the
        lock): copies from and to it may run after the call that queued them returns. The caller keeps
        the mapping alive until `unregister(address, token)` with the token returned here."""
        if nbytes <= 0:
            raise ValueError(f"[register] size must be > 0, got {nbytes}")
        with self._lock:
            token = next(self._tokens)
            if address not in self._ranges:
                bisect.insort(self._starts, address)
            self._ranges[address] = (nbytes, False, token)
        return token

    def unregister(self, address: int, token: int) -> None:
        """Forget a `register`ed range (copies queued from it must have completed)."""
        self._forget(address, token)

    def is_pinned(self, address: int, nbytes: int) -> bool:
        """True if [address, address + nbytes) lies inside one pinned allocation."""
        with self._lock:
            i = bisect.bisect_right(self._starts, address) - 1
            if i < 0:
                return False
            start = self._starts[i]
            return address + nbytes <= start + self._ranges[start][0]

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {"pinned_allocations": len(self._ranges),
                    "pinned_bytes": sum(s for s, _, _ in self._ranges.values()),
                    "locked_bytes": sum(s for s, locked, _ in self._ranges.values() if locked)}

    def _forget(self, start: int, token: int) -> None:
        with self._lock:
            entry = self._ranges.get(start)
            if entry is not None and entry[2] == token:
                del self._ranges[start]
                self._starts.remove(start)


HOST_MEMORY = HostMemory()
