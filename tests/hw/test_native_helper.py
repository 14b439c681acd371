"""The native executor's second host thread is one persistent daemon helper (executor._Helper), not a thread per
launch: launches reuse it, a fault or an interrupt in either half leaves it usable, and what escapes a task is
raised on the launching thread. Kernels compiled by NVRTC; NumPy oracles."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata.errors import DeviceFault  # noqa: E402
from strata.hw.native import executor  # noqa: E402

SRC = r"""
extern "C" __global__ void scale(int n, const float* x, float* y, float a, int bad_block) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + (float)blockIdx.x;
  if ((int)blockIdx.x == bad_block && threadIdx.x == 3) y[i + (1 << 24)] = 1.f;
}
"""

N, BLOCKS, THREADS = 1000, 4, 256  # one reference chunk of four blocks: split in two halves of two blocks


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC)


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """Native executor, every one-chunk launch split (SPLIT_AFTER_S = 0); returns the threads that ran chunks."""
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    monkeypatch.setattr(executor, "SPLIT_AFTER_S", 0.0)
    monkeypatch.setattr(executor, "SPLIT_AFTER_RUNS", 1)
    seen: list[threading.Thread] = []
    run_root = executor.run_root

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(threading.current_thread())
        return run_root(*args, **kwargs)

    monkeypatch.setattr(executor, "run_root", spy)
    return seen


def _launch(mod: Any, x: np.ndarray, bad_block: int = -1) -> np.ndarray:
    y = cuda.to_device(np.zeros(N, np.float32))
    mod.get_function("scale")(BLOCKS, THREADS, (np.int32(N), cuda.to_device(x), y, np.float32(1.5),
                                                np.int32(bad_block))).wait()
    return y.get()


def _oracle(x: np.ndarray) -> np.ndarray:
    # NVRTC contracts a * x + b into one fma: exact in float64 here (1.5 * a float32 fits), then rounded once
    return (1.5 * x.astype(np.float64) + np.arange(N) // THREADS).astype(np.float32)


def _helpers(seen: list[threading.Thread]) -> set[threading.Thread]:
    return {t for t in seen if t.name == "strata-native"}


def test_launches_reuse_one_persistent_daemon_helper(mod: Any, threads: list[threading.Thread]) -> None:
    x = np.random.default_rng(1).standard_normal(N).astype(np.float32)
    _launch(mod, x)  # (records that this shape splits)
    threads.clear()
    for _ in range(3):
        np.testing.assert_array_equal(_launch(mod, x), _oracle(x))
    helpers = _helpers(threads)
    assert len(threads) == 6 and len(helpers) == 1  # two halves per launch; the second half always on one helper
    (helper,) = helpers
    assert helper.daemon and helper.is_alive()  # (it waits for the next launch; exit never joins it)


@pytest.mark.parametrize("bad_block", [3, 0], ids=["fault-in-second-half", "fault-in-first-half"])
def test_a_fault_in_either_half_leaves_the_helper_usable(mod: Any, threads: list[threading.Thread],
                                                         bad_block: int) -> None:
    x = np.random.default_rng(2).standard_normal(N).astype(np.float32)
    _launch(mod, x)
    try:
        with pytest.raises(DeviceFault) as info:
            _launch(mod, x, bad_block)
    finally:
        cuda.current_device().reset()  # (the fault is sticky on the context)
    assert info.value.report["block"] == (bad_block, 0, 0) and info.value.report["thread"] == (3, 0, 0)
    threads.clear()
    mod2 = cuda.compile(SRC)
    _launch(mod2, x)
    np.testing.assert_array_equal(_launch(mod2, x), _oracle(x))
    assert len(_helpers(threads)) == 1


def test_what_escapes_a_helper_task_is_raised_by_wait_and_the_helper_stays() -> None:
    def boom(arg: int) -> None:
        raise RuntimeError(f"task {arg}")

    done = executor.hand_over(boom, 7)
    with pytest.raises(RuntimeError, match="task 7"):
        done.wait()
    ran: list[threading.Thread] = []
    executor.hand_over(lambda arg: ran.append(threading.current_thread()), 0).wait()
    assert ran and ran[0] is not threading.current_thread() and ran[0].daemon


def test_an_interrupt_on_the_launching_thread_stops_the_helpers_half(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                                                     threads: list[threading.Thread]) -> None:
    x = np.random.default_rng(3).standard_normal(N).astype(np.float32)
    _launch(mod, x)
    run_root = executor.run_root  # (the spy)

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name != "strata-native":  # (worker 0: the thread that runs the packet)
            raise KeyboardInterrupt
        return run_root(*args, **kwargs)

    monkeypatch.setattr(executor, "run_root", interrupted)
    try:
        with pytest.raises(KeyboardInterrupt):
            _launch(mod, x)
    finally:
        monkeypatch.setattr(executor, "run_root", run_root)
        cuda.current_device().reset()  # (the interrupted launch cancelled its queue)
    mod2 = cuda.compile(SRC)
    _launch(mod2, x)
    threads.clear()
    np.testing.assert_array_equal(_launch(mod2, x), _oracle(x))
    assert len(_helpers(threads)) == 1


def test_kept_launch_state_follows_the_allocation_table_and_the_grid(mod: Any, threads: list[threading.Thread]) -> None:
    """The per-kernel kits keep ctx from launch to launch: a launch after a free must see the new allocation table
    (a write into the freed array faults, as on the reference), and launches of other grids their own grid."""
    x = np.random.default_rng(5).standard_normal(N).astype(np.float32)
    xd = cuda.to_device(x)
    y = cuda.to_device(np.zeros(N, np.float32))
    args = (np.int32(N), xd, np.uint64(y.ptr), np.float32(1.5), np.int32(-1))  # (a raw pointer: kept after free)
    f = mod.get_function("scale")
    small = cuda.to_device(np.zeros(N, np.float32))
    for _ in range(2):  # another grid, then the full one twice: the last reuses the kit, ctx and invariant values
        f(2, THREADS, (np.int32(2 * THREADS), xd, small, np.float32(1.5), np.int32(-1))).wait()
        f(BLOCKS, THREADS, args).wait()
        f(BLOCKS, THREADS, args).wait()
    np.testing.assert_array_equal(y.get(), _oracle(x))
    np.testing.assert_array_equal(small.get()[:2 * THREADS], _oracle(x)[:2 * THREADS])
    np.testing.assert_array_equal(small.get()[2 * THREADS:], 0)
    y.free()
    try:
        with pytest.raises(DeviceFault, match="(?i)illegal|out of bounds|outside"):
            f(BLOCKS, THREADS, args).wait()  # the very same parameters, into the freed array
    finally:
        cuda.current_device().reset()
