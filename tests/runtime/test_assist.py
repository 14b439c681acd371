"""A host thread that waits for a completion runs the ready packets itself (CommandProcessor.assist):
no hand-off to the engine thread and back, with the same results, order, timeline and faults.

The `quiet` fixture stops doorbells from waking the engine threads (and stretches their idle poll), so
only a waiting host thread can run a packet: without assist these waits would take the idle poll's time
and run on the engine thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
from strata.hw import cp

SRC = r"""
extern "C" __global__ void add1(int n, float* x) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
extern "C" __global__ void spin_until_set(int* flag) {
    while (atomicAdd(flag, 0) == 0) {}
}
extern "C" __global__ void write_past(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + 3) y[i] = 1.0f;
}
"""


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SRC, name="assist.cu")


@pytest.fixture
def quiet(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Doorbells wake no engine thread; yields the names of the threads that ran each kernel."""
    dev = cuda.current_device()
    dev.synchronize()
    monkeypatch.setattr(cp, "_IDLE_POLL_S", 60.0)
    eng = dev.file.cp.engines["compute"]
    if eng.thread is not None:  # wake it once, so it goes back to sleep with the long idle poll
        dev.file.cp.kick(eng)
        deadline = time.monotonic() + 10
        while (eng.kicked or not eng.sleeping) and time.monotonic() < deadline:
            time.sleep(0.001)
    monkeypatch.setattr(dev.file.cp, "kick", lambda eng: None)
    ran: list[str] = []
    run = dev.file.cp.run_kernel

    def recording(*args: Any) -> Any:
        ran.append(threading.current_thread().name)
        return run(*args)

    monkeypatch.setattr(dev.file.cp, "run_kernel", recording)
    yield ran
    monkeypatch.undo()
    dev.reset()  # a test that faulted leaves a sticky error


def test_a_synchronous_launch_runs_on_the_waiting_thread(mod: cuda.Module, quiet: list[str]) -> None:
    x = np.arange(1000, dtype=np.float32)
    d = cuda.to_device(x)
    t = time.monotonic()
    for _ in range(5):
        mod.get_function("add1")(4, 256, (np.int32(1000), d)).wait()
    assert time.monotonic() - t < 5.0  # not the engines' idle poll
    assert quiet == [threading.current_thread().name] * 5
    np.testing.assert_array_equal(d.get(), x + 5)


def test_queued_launches_run_in_order_on_one_wait(mod: cuda.Module, quiet: list[str]) -> None:
    x = np.zeros(64, dtype=np.float32)
    d = cuda.to_device(x)
    s = cuda.Stream()
    reports = [mod.get_function("add1")(1, 64, (np.int32(64 - k), d), stream=s) for k in range(8)]
    assert not quiet and not reports[0].done  # nothing ran yet: no engine was woken
    reports[-1].wait()
    assert len(quiet) == 8 and all(r.done for r in reports)
    ends = [(r.device_start, r.device_end) for r in reports]
    assert all(b[0] >= a[1] for a, b in zip(ends, ends[1:]))  # the stream's order on the modeled timeline
    np.testing.assert_array_equal(d.get(), np.minimum(8, 64 - np.arange(64)).astype(np.float32))


def test_a_fault_in_an_assisted_launch_is_the_context_s_sticky_error(mod: cuda.Module, quiet: list[str]) -> None:
    y = cuda.zeros(100, np.float32)
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("write_past")(1, 128, (y, np.int32(100))).wait()
    assert "write_past" in str(ei.value) and "PTX line" in str(ei.value)
    assert quiet == [threading.current_thread().name]
    with pytest.raises(cuda.DeviceFault):
        cuda.synchronize()  # sticky
    assert cuda.current_device().file.idle()


def test_ctrl_c_in_an_assisted_launch_cancels_it(mod: cuda.Module, quiet: list[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    dev = cuda.current_device()
    run = dev.file.cp.run_kernel

    def interrupted(*args: Any) -> Any:
        raise KeyboardInterrupt  # as a Ctrl-C would, in the kernel the waiting thread runs

    monkeypatch.setattr(dev.file.cp, "run_kernel", interrupted)
    d = cuda.zeros(64, np.float32)
    report = mod.get_function("add1")(1, 64, (np.int32(64), d))
    with pytest.raises(KeyboardInterrupt):
        report.wait()
    assert dev.file.idle()  # the packet is not left half-run: its queue stopped
    with pytest.raises(cuda.CudaError) as ei:
        cuda.synchronize()
    assert ei.value.name == "cudaErrorLaunchFailure" and "KeyboardInterrupt" in str(ei.value)
    monkeypatch.setattr(dev.file.cp, "run_kernel", run)
    dev.reset()
    d = cuda.zeros(64, np.float32)
    mod.get_function("add1")(1, 64, (np.int32(64), d)).wait()  # and the device works again
    np.testing.assert_array_equal(d.get(), np.ones(64, np.float32))


def test_an_engine_running_a_packet_is_left_to_its_thread(mod: cuda.Module) -> None:
    dev = cuda.current_device()
    eng = dev.file.cp.engines["compute"]
    d = cuda.zeros(64, np.float32)
    with eng.run_lock:  # as if the engine thread were running a packet
        report = mod.get_function("add1")(1, 64, (np.int32(64), d))
        queue = dev.context.null_stream.queues["compute"].hw
        assert not dev.file.assist(queue, lambda: report.done)
        assert not report.done
    report.wait()  # the engine thread (kicked by the doorbell) or this thread runs it now
    np.testing.assert_array_equal(d.get(), np.ones(64, np.float32))


def test_a_wait_runs_only_the_awaited_queue(mod: cuda.Module, quiet: list[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that spins until the host sets a flag is queued (not yet run: no engine thread was woken);
    the host then sets the flag with a synchronous copy on another stream. Waiting for that copy must not
    run the spinning kernel on the host thread (it would spin until the watchdog: the flag is set only
    after the wait), only the copy's own queue."""
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "10")  # (before the fix: a LaunchTimeout after 10 s)
    flag = cuda.zeros(1, np.int32)
    spinning, setter = cuda.Stream(non_blocking=True), cuda.Stream(non_blocking=True)
    t = time.monotonic()
    report = mod.get_function("spin_until_set")(1, 1, (flag,), stream=spinning)
    flag.set(np.ones(1, np.int32), stream=setter)  # pageable: the call waits for the copy
    assert not report.done and not quiet  # the kernel did not run on the waiting thread
    report.wait()  # now it runs (here, or on the engine thread) and sees the flag at once
    assert quiet and time.monotonic() - t < 5.0
    np.testing.assert_array_equal(flag.get(), np.ones(1, np.int32))
