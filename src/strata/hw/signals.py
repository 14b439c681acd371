"""Signal memory: the 64-bit values packet processors and hosts use to say 'done' to each other.

Each signal models ROCr's `amd_signal_t`: a value, the modeled start and end timestamps of the
packet that completed it (`start_ts`/`end_ts`, what profilers read), and an event id: when a packet
processor changes a signal that has one, it raises that interrupt so sleeping host threads wake.
Signals are system-wide (one device's queue may wait on a signal another device completes), so
there is one `SIGNALS` table per process. Handles are never reused, so a stale handle cannot name
a newer signal; handle 0 means 'no signal', as in HSA.

Example:
    >>> s = SIGNALS.create(1)
    >>> SIGNALS.add(s.handle, -1), SIGNALS.get(s.handle).value
    (0, 0)
    >>> SIGNALS.destroy(s.handle); SIGNALS.get(s.handle) is None
    True
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any


class HwSignal:
    """One signal's memory (amd_signal_t's fields strata uses)."""

    __slots__ = ("end_ts", "event_id", "handle", "profile", "start_ts", "value")

    def __init__(self, handle: int, value: int, event_id: int) -> None:
        self.handle = handle
        self.value = value
        self.event_id = event_id
        self.start_ts = 0.0  # modeled device seconds
        self.end_ts = 0.0
        self.profile: Any = None  # what the completing packet left for profilers (a DispatchRecord)


class SignalMemory:
    """All signals of the process; every change notifies the registered listeners (the packet
    processors, which may be waiting on a barrier)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._signals: dict[int, HwSignal] = {}
        self._handles = itertools.count(1)
        self._listeners: list[Callable[[], None]] = []
        self._failed: dict[int, BaseException] = {}  # signals whose packet can never complete, and why

    def create(self, value: int, event_id: int = 0) -> HwSignal:
        sig = HwSignal(next(self._handles), value, event_id)
        self._signals[sig.handle] = sig
        return sig

    def destroy(self, handle: int) -> None:
        self._signals.pop(handle, None)
        self._failed.pop(handle, None)

    def fail(self, handle: int, error: BaseException) -> None:
        """Mark a signal as never going to complete: the packet that would decrement it sits in a
        queue stopped by `error`. Barriers depending on it stop too, and waiters get the error,
        instead of both waiting forever."""
        if handle and handle in self._signals and handle not in self._failed:
            self._failed[handle] = error
            self._notify()

    def failure(self, handle: int) -> BaseException | None:
        """The error that stopped the packet which would complete `handle`, if one did."""
        return self._failed.get(handle) if self._failed else None

    def get(self, handle: int) -> HwSignal | None:
        return self._signals.get(handle)

    def store(self, handle: int, value: int) -> None:
        with self._lock:  # not between another thread's read and write of an add
            sig = self._signals.get(handle)
            if sig is None:
                return
            sig.value = value
        self._notify()

    def add(self, handle: int, delta: int) -> int:
        """Atomically add `delta` and return the new value (0 if the handle is gone)."""
        with self._lock:
            sig = self._signals.get(handle)
            if sig is None:
                return 0
            sig.value += delta
            value = sig.value
        self._notify()
        return value

    def cas(self, handle: int, expected: int, value: int) -> int:
        """Compare-and-swap; returns the value observed."""
        with self._lock:
            sig = self._signals.get(handle)
            if sig is None:
                return 0
            seen = sig.value
            if seen == expected:
                sig.value = value
        self._notify()
        return seen

    def add_listener(self, wake: Callable[[], None]) -> None:
        self._listeners.append(wake)

    def remove_listener(self, wake: Callable[[], None]) -> None:
        if wake in self._listeners:
            self._listeners.remove(wake)

    def __len__(self) -> int:
        return len(self._signals)

    def _notify(self) -> None:
        for wake in list(self._listeners):
            wake()


SIGNALS = SignalMemory()
