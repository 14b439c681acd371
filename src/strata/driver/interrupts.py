"""Interrupts and events: how completions on a device wake host threads that wait.

The role of KFD's event ioctls (`hsaKmtCreateEvent`, `hsaKmtSetEvent`, `hsaKmtWaitOnEvent`). A
signal that has an event id makes the packet processor raise that interrupt when it changes it; the
handler here bumps the event's generation and wakes waiters. A waiter remembers the generation it
saw before checking its condition, so a wake-up between the check and the wait is never lost.
Waits may return early (spuriously); callers re-check, as HSA requires.

Example:
    >>> eid = EVENTS.create()
    >>> seen = EVENTS.generation(eid)
    >>> EVENTS.set(eid)
    >>> EVENTS.wait(eid, seen, timeout=1.0)  # returns at once: the event fired after `seen`
    True
"""

from __future__ import annotations

import itertools
import threading


class EventTable:
    """Process-wide events (signals are system-wide, so any device may complete any of them)."""

    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._generation: dict[int, int] = {}
        self._ids = itertools.count(1)
        self.interrupts = 0
        self._waiters = 0  # threads inside wait(): a set() with none skips Condition.notify_all's Python work

    def create(self) -> int:
        eid = next(self._ids)
        self._generation[eid] = 0
        return eid

    def destroy(self, eid: int) -> None:
        self._generation.pop(eid, None)

    def generation(self, eid: int) -> int:
        return self._generation.get(eid, 0)

    def set(self, eid: int) -> None:
        """The interrupt handler: the event fired; wake whoever waits."""
        with self._cv:
            self.interrupts += 1
            if eid in self._generation:
                self._generation[eid] += 1
            if self._waiters:  # (a host that ran the packet itself waits for nothing)
                self._cv.notify_all()

    def broadcast(self) -> None:
        """Wake every waiter (a device fault: waiters must go and look at their context's error)."""
        with self._cv:
            for eid in self._generation:
                self._generation[eid] += 1
            self._cv.notify_all()

    def wait(self, eid: int, seen: int, timeout: float | None) -> bool:
        """Sleep until event `eid` fires after generation `seen`, or `timeout` seconds pass.
        True if it fired."""
        with self._cv:
            self._waiters += 1  # (under the lock, as set() reads it: a wake-up is never skipped)
            try:
                return self._cv.wait_for(lambda: self._generation.get(eid, seen + 1) != seen, timeout)
            finally:
                self._waiters -= 1


EVENTS = EventTable()
