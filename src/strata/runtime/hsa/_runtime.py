"""Private to `strata.runtime.hsa`: the runtime state `init()` sets up and `shut_down()` tears down
(agents, pools, live signals, queues, allocations, executables), its reference count, and the
teardown helpers more than one module needs."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from strata.driver import EVENTS
from strata.errors import CudaError
from strata.hw.signals import SIGNALS
from strata.runtime.hsa.status import HsaError, Status
from strata.runtime.queue import UserQueue

if TYPE_CHECKING:  # only annotations: the handle modules import this one
    from strata.runtime.hsa.agent import Agent
    from strata.runtime.hsa.loader import Executable
    from strata.runtime.hsa.memory import MemoryPool
    from strata.runtime.hsa.queues import Queue
    from strata.runtime.hsa.signals import Signal


@dataclass
class _Runtime:
    agents: list[Agent]
    pools: dict[int, list[MemoryPool]] = field(default_factory=dict)  # agent handle -> pools
    signals: dict[int, Signal] = field(default_factory=dict)  # live user and doorbell signals by handle
    queues: dict[int, Queue] = field(default_factory=dict)
    host_allocs: dict[int, np.ndarray] = field(default_factory=dict)  # address -> pinned buffer
    host_starts: list[int] = field(default_factory=list)
    gpu_allocs: dict[int, Agent] = field(default_factory=dict)
    executables: list[Executable] = field(default_factory=list)
    copy_queues: dict[tuple[int, str], UserQueue] = field(default_factory=dict)
    copy_errors: list[HsaError] = field(default_factory=list)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def unhandled(self) -> HsaError | None:
        """A queue error nobody registered a callback for (ROCr's default handler would abort)."""
        for q in list(self.queues.values()):
            if q.error is not None and q.callback is None:
                return q.error
        return self.copy_errors[0] if self.copy_errors else None

    def check(self) -> None:
        err = self.unhandled()
        if err is not None:
            raise HsaError(err.status, err.message) from err.__cause__


_state: _Runtime | None = None
_refcount = 0
_init_lock = threading.Lock()


def _rt() -> _Runtime:
    state = _state
    if state is None:
        raise HsaError(Status.ERROR_NOT_INITIALIZED, "[hsa] the runtime is not initialized: call init() first")
    return state


def _acquire(make_agents: Callable[[], list[Agent]]) -> None:
    """Take one reference; the first one builds the state around the agents `make_agents()` returns."""
    global _state, _refcount
    with _init_lock:
        if _refcount == 0:
            _state = _Runtime(make_agents())
        _refcount += 1


def _release() -> _Runtime | None:
    """Drop one reference; returns the state to tear down when it was the last one, else None.

    Raises:
        HsaError: ERROR_NOT_INITIALIZED if the runtime is not initialized.
    """
    global _state, _refcount
    with _init_lock:
        rt = _rt()
        _refcount -= 1
        if _refcount:
            return None
        _state = None
    return rt


def _destroy_queue(rt: _Runtime, q: Queue) -> None:
    q.destroyed = True
    q.core.destroy()
    SIGNALS.destroy(q.doorbell_signal.handle)
    with rt.lock:
        rt.queues.pop(q.id, None)
        rt.signals.pop(q.doorbell_signal.handle, None)


def _destroy_signal(sig: Signal) -> None:
    if _state is not None:
        _state.signals.pop(sig.handle, None)
    SIGNALS.destroy(sig.handle)
    EVENTS.destroy(sig.core.event_id)


def _unload(exe: Executable) -> None:
    for _, loaded in exe.modules:
        with contextlib.suppress(CudaError):  # a device reset already freed its variables
            loaded.unload()
    exe.modules.clear()
