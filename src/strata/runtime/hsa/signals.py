"""Signals: the `Signal` handle (user signals, and queue doorbells), create/destroy, the atomic
load/store/read-modify-write calls with every memory-order suffix, waits, and dispatch timestamps."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from strata.driver import EVENTS
from strata.hw.signals import SIGNALS
from strata.runtime.hsa._runtime import _destroy_signal, _rt
from strata.runtime.hsa.agent import Agent, _agent
from strata.runtime.hsa.status import UINT64_MAX, HsaError, Status, WaitState, _enum
from strata.runtime.signals import Condition
from strata.runtime.signals import Signal as CoreSignal

if TYPE_CHECKING:  # only an annotation: queues.py imports this module
    from strata.runtime.hsa.queues import Queue


class Signal:
    """hsa_signal_t: `handle` is what packets carry (never 0). A queue's doorbell is a Signal too;
    storing to it rings the doorbell."""

    __slots__ = ("core", "handle", "queue")

    def __init__(self, core: CoreSignal, queue: Queue | None = None) -> None:
        self.core = core
        self.handle = core.handle
        self.queue = queue  # set for a doorbell signal

    def __repr__(self) -> str:
        kind = "doorbell" if self.queue is not None else "user"
        return f"<hsa_signal {self.handle} ({kind}) value={self.core.value}>"


def signal_create(initial_value: int, num_consumers: int = 0, consumers: Iterable[Agent] = ()) -> Signal:
    """hsa_signal_create: a signal holding `initial_value`; its changes raise an interrupt that
    wakes waiters (`num_consumers`/`consumers` are accepted and ignored: every agent may use every
    signal)."""
    rt = _rt()
    sig = Signal(CoreSignal(int(initial_value), EVENTS.create()))
    with rt.lock:
        rt.signals[sig.handle] = sig
    return sig


def signal_destroy(signal: Signal | int) -> None:
    """hsa_signal_destroy. Raises HsaError ERROR_INVALID_SIGNAL for an unknown, destroyed or doorbell signal."""
    sig = _user_signal(signal, "signal_destroy")
    _destroy_signal(sig)


def _signal(signal: Signal | int, op: str) -> Signal:
    handle = signal.handle if isinstance(signal, Signal) else int(signal)
    found = _rt().signals.get(handle)
    if found is None:
        raise HsaError(Status.ERROR_INVALID_SIGNAL, f"[{op}] signal {handle} does not exist (destroyed, or 0)")
    return found


def _user_signal(signal: Signal | int, op: str) -> Signal:
    sig = _signal(signal, op)
    if sig.queue is not None:
        raise HsaError(Status.ERROR_INVALID_SIGNAL, f"[{op}] a doorbell signal only supports load and store")
    return sig


def signal_load_scacquire(signal: Signal | int) -> int:
    """hsa_signal_load_scacquire: the current value."""
    return _signal(signal, "signal_load").core.value


def signal_store_screlease(signal: Signal | int, value: int) -> None:
    """hsa_signal_store_screlease: set the value and wake waiters. On a queue's doorbell signal,
    `value` is the index of the last packet made ready: it rings the doorbell of that queue."""
    sig = _signal(signal, "signal_store")
    if sig.queue is not None:
        sig.core.hw.value = value
        sig.queue.agent.device.ring_doorbell(sig.queue.hw, value)
    else:
        sig.core.store(value)


def signal_silent_store_screlease(signal: Signal | int, value: int) -> None:
    """hsa_signal_silent_store_screlease: set the value without waking host waiters."""
    sig = _user_signal(signal, "signal_silent_store")
    SIGNALS.store(sig.handle, value)


def signal_add_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_add_*: atomically add `value`."""
    _user_signal(signal, "signal_add").core.add(value)


def signal_subtract_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_subtract_*: atomically subtract `value`."""
    _user_signal(signal, "signal_subtract").core.add(-value)


def signal_cas_scacq_screl(signal: Signal | int, expected: int, value: int) -> int:
    """hsa_signal_cas_*: set `value` if the signal holds `expected`; returns the value observed."""
    sig = _user_signal(signal, "signal_cas")
    seen = SIGNALS.cas(sig.handle, expected, value)
    if seen == expected:
        EVENTS.set(sig.core.event_id)
    return seen


def _rmw(signal: Signal | int, op: str, fn: Callable[[int], int]) -> int:
    sig = _user_signal(signal, op)
    while True:
        seen = sig.core.value
        if SIGNALS.cas(sig.handle, seen, fn(seen)) == seen:
            EVENTS.set(sig.core.event_id)
            return seen


def signal_exchange_scacq_screl(signal: Signal | int, value: int) -> int:
    """hsa_signal_exchange_*: set `value`; returns the previous value."""
    return _rmw(signal, "signal_exchange", lambda _: value)


def signal_and_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_and_*: atomically AND `value` in."""
    _rmw(signal, "signal_and", lambda v: v & value)


def signal_or_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_or_*: atomically OR `value` in."""
    _rmw(signal, "signal_or", lambda v: v | value)


def signal_xor_scacq_screl(signal: Signal | int, value: int) -> None:
    """hsa_signal_xor_*: atomically XOR `value` in."""
    _rmw(signal, "signal_xor", lambda v: v ^ value)


def signal_wait_scacquire(signal: Signal | int, condition: Condition | int, compare_value: int,
                          timeout_hint: float | None = None,
                          wait_state_hint: WaitState | int = WaitState.BLOCKED) -> int:
    """hsa_signal_wait_scacquire: block until `value <condition> compare_value` or the timeout.

    As in HSA, it returns the value it observed, which the caller must re-check: the condition held
    at some moment during the wait, or the timeout passed (then the value is whatever it was).

    Args:
        signal: the signal (or its handle).
        condition: SIGNAL_CONDITION_EQ / NE / LT / GTE.
        compare_value: the value to compare with.
        timeout_hint: seconds (HSA counts system-timestamp ticks); None or UINT64_MAX waits forever.
        wait_state_hint: WAIT_STATE_BLOCKED or WAIT_STATE_ACTIVE; both sleep on the signal's interrupt.

    Returns:
        The observed value.

    Raises:
        HsaError: ERROR_INVALID_SIGNAL, ERROR_INVALID_ARGUMENT (bad condition), or the error of a queue
            the packet processor stopped and that has no error callback (ROCr would abort).
    """
    rt = _rt()
    sig = _user_signal(signal, "signal_wait")
    cond = _enum(Condition, condition, "signal_wait")
    _enum(WaitState, wait_state_hint, "signal_wait")
    timeout = None if timeout_hint is None or timeout_hint >= UINT64_MAX else max(0.0, float(timeout_hint))
    return sig.core.wait(cond, compare_value, timeout, check=rt.check)


signal_load_relaxed = signal_load_scacquire
signal_store_relaxed = signal_store_screlease
signal_silent_store_relaxed = signal_silent_store_screlease
signal_wait_relaxed = signal_wait_scacquire
signal_add_scacquire = signal_add_screlease = signal_add_relaxed = signal_add_scacq_screl
signal_subtract_scacquire = signal_subtract_screlease = signal_subtract_relaxed = signal_subtract_scacq_screl
signal_cas_scacquire = signal_cas_screlease = signal_cas_relaxed = signal_cas_scacq_screl
signal_exchange_scacquire = signal_exchange_screlease = signal_exchange_relaxed = signal_exchange_scacq_screl
signal_and_scacquire = signal_and_screlease = signal_and_relaxed = signal_and_scacq_screl
signal_or_scacquire = signal_or_screlease = signal_or_relaxed = signal_or_scacq_screl
signal_xor_scacquire = signal_xor_screlease = signal_xor_relaxed = signal_xor_scacq_screl


def amd_profiling_get_dispatch_time(agent: Agent, signal: Signal | int) -> tuple[float, float]:
    """hsa_amd_profiling_get_dispatch_time: (start, end) of the packet that completed `signal`, in
    modeled device seconds (HSA: system-clock ticks)."""
    _agent(agent, gpu=True, op="amd_profiling_get_dispatch_time")
    hw = _user_signal(signal, "amd_profiling_get_dispatch_time").core.hw
    return hw.start_ts, hw.end_ts


def _handle(signal: Signal | int) -> int:
    return signal.handle if isinstance(signal, Signal) else int(signal)
