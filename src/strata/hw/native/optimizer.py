"""The background optimizer: one daemon thread that recompiles hot kernels at -O3 (tiering.py says when).

LLVM releases the interpreter lock while it optimizes and emits, so the recompile runs on the second core
while launches go on with a kernel's -O0 code; the executor swaps the -O3 code in when it is ready. Jobs
are zero-argument callables run one at a time, in order. A job's exception is kept in `errors` (the -O0
code keeps running: optimizing only changes speed), never raised into a launch.

At interpreter exit the thread takes no new job and the exit waits for the job in hand, at most
EXIT_WAIT_S: LLVM's static destructors run after Python's exit handlers and must not run under a compile.
In a child process after `fork` the thread does not exist, so the first `submit` there starts a new one.

    >>> from strata.hw.native import optimizer
    >>> ran = []
    >>> optimizer.submit(lambda: ran.append(1))
    >>> optimizer.settle(10.0)
    True
    >>> ran
    [1]
"""

from __future__ import annotations

import atexit
import collections
import os
import threading
from collections.abc import Callable

EXIT_WAIT_S = 30.0  # a whole -O3 compile of the biggest kernel takes ~5 s on a loaded 2-core machine

_cond = threading.Condition()
_jobs: collections.deque[Callable[[], None]] = collections.deque()


class _State:
    thread: threading.Thread | None = None
    busy = False  # a job is running
    closed = False  # the interpreter is exiting


_state = _State()
errors: list[BaseException] = []  # exceptions jobs raised (kept for tests and debugging; the last 16)


def submit(job: Callable[[], None]) -> None:
    """Queue `job` for the optimizer thread (started on first use). After interpreter exit began: dropped."""
    with _cond:
        if _state.closed:
            return
        _jobs.append(job)
        if _state.thread is None or not _state.thread.is_alive():
            _state.thread = threading.Thread(target=_loop, name="strata-native-optimizer", daemon=True)
            _state.thread.start()
        _cond.notify()


def pending() -> int:
    """Jobs queued or running."""
    with _cond:
        return len(_jobs) + (1 if _state.busy else 0)


def settle(timeout_s: float | None = None) -> bool:
    """Wait until every queued job has run; False if `timeout_s` passed first. Benchmarks call it after a
    warm-up, so that what they time is the code later launches run."""
    with _cond:
        return _cond.wait_for(lambda: not _jobs and not _state.busy, timeout_s)


def _loop() -> None:
    while True:
        with _cond:
            _cond.wait_for(lambda: bool(_jobs) or _state.closed)
            if _state.closed:
                _jobs.clear()
                _cond.notify_all()
                return
            job = _jobs.popleft()
            _state.busy = True
        try:
            job()
        except BaseException as e:  # (a bug in a compile: the kernel keeps its -O0 code)
            errors.append(e)
            del errors[:-16]
        finally:
            with _cond:
                _state.busy = False
                _cond.notify_all()


def _close() -> None:
    """At exit: no new jobs, queued ones dropped, the running one waited for (bounded)."""
    with _cond:
        _state.closed = True
        _jobs.clear()
        _cond.notify_all()
        _cond.wait_for(lambda: not _state.busy, EXIT_WAIT_S)


def _after_fork() -> None:
    global _cond
    _cond = threading.Condition()  # (the parent's may have been held by its optimizer thread at the fork)
    _jobs.clear()
    _state.thread, _state.busy = None, False


atexit.register(_close)
os.register_at_fork(after_in_child=_after_fork)
