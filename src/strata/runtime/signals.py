"""Signals as the runtime uses them: create, load, store, and wait with HSA's semantics.

A `Signal` owns one slot of signal memory (hw/signals.py) and names the interrupt event that wakes
its waiters. `wait` follows `hsa_signal_wait_scacquire`: it returns the value it observed once the
condition held at some moment, or when the timeout passed, and it tolerates spurious wake-ups by
re-checking. It sleeps at most `_MAX_SLEEP_S` at a time, so a KeyboardInterrupt reaches the waiting
thread promptly. `failure` names the error that stopped the queue of the packet that would complete
the signal (so the runtime can raise it rather than wait forever). Packets hold on to the signals they name until
they retire, so a signal is destroyed only when neither the program nor an in-flight packet can still
use it.

Example:
    >>> from strata.driver import EVENTS
    >>> s = Signal(1, EVENTS.create())
    >>> s.wait(Condition.LT, 1, timeout=0.01)  # nothing decrements it: times out, returns what it saw
    1
    >>> s.subtract(1); s.wait(Condition.EQ, 0)
    0
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from strata.driver import EVENTS
from strata.hw.signals import SIGNALS

if TYPE_CHECKING:
    from strata.hw.cp import HwQueue

_MAX_SLEEP_S = 0.25  # re-check at least this often (a fault broadcasts, but be robust)


class Condition(enum.IntEnum):
    """hsa_signal_condition_t."""

    EQ = 0
    NE = 1
    LT = 2
    GTE = 3


_TESTS: dict[int, Callable[[int, int], bool]] = {
    Condition.EQ: lambda v, c: v == c, Condition.NE: lambda v, c: v != c,
    Condition.LT: lambda v, c: v < c, Condition.GTE: lambda v, c: v >= c,
}


class Signal:
    """One signal: value, modeled start/end timestamps of the packet that completed it, its event."""

    __slots__ = ("__weakref__", "event_id", "handle", "hw", "queue")

    def __init__(self, value: int, event_id: int = 0) -> None:
        self.hw = SIGNALS.create(value, event_id)
        self.handle = self.hw.handle
        self.event_id = event_id
        # the queue of the packet that completes it, where the runtime queued one (a host that waits for
        # it may run that queue's packets itself: Context.wait)
        self.queue: HwQueue | None = None

    def __del__(self) -> None:
        SIGNALS.destroy(self.handle)

    @property
    def value(self) -> int:
        return self.hw.value

    @property
    def failure(self) -> BaseException | None:
        """The error that stopped the queue holding the packet that would complete this signal."""
        return SIGNALS.failure(self.handle)

    @property
    def done(self) -> bool:
        """True once a completion signal reached 0 (its packet finished)."""
        return self.hw.value == 0

    def store(self, value: int) -> None:
        """hsa_signal_store_screlease: set the value and wake waiters and packet processors."""
        SIGNALS.store(self.handle, value)
        if self.event_id:
            EVENTS.set(self.event_id)

    def add(self, delta: int) -> None:
        SIGNALS.add(self.handle, delta)
        if self.event_id:
            EVENTS.set(self.event_id)

    def subtract(self, delta: int) -> None:
        self.add(-delta)

    def wait(self, condition: Condition, compare: int, timeout: float | None = None,
             check: Callable[[], None] | None = None) -> int:
        """Wait until `value <condition> compare` or `timeout` seconds pass; returns the observed value.
        `check` runs after every wake-up (the runtime raises a context's sticky error there)."""
        test = _TESTS[condition]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            seen = EVENTS.generation(self.event_id)
            value = self.hw.value
            if test(value, compare):
                return value
            if check is not None:
                check()
            remaining = _MAX_SLEEP_S if deadline is None else min(_MAX_SLEEP_S, deadline - time.monotonic())
            if remaining <= 0:
                return value
            if self.event_id:
                EVENTS.wait(self.event_id, seen, remaining)
            else:
                time.sleep(min(remaining, 1e-4))  # no event to sleep on: poll, like an ACTIVE wait
