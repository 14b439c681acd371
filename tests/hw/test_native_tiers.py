"""The native executor's two code tiers (hw/native/tiering.py, optimizer.py): a kernel's first code is LLVM -O0,
a kernel whose launches have spent as long on it as the -O3 compile costs is recompiled at -O3 on the background
optimizer thread, and later launches run that code; a launch predicted to be big compiles at -O3 at once.
Both tiers compile the same IR, so outputs and counters are the same bit for bit; each result is also checked
against NumPy."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata import config, trace  # noqa: E402
from strata.hw.engine import LaunchConfig  # noqa: E402
from strata.hw.jit import Program  # noqa: E402
from strata.hw.native import executor, optimizer, tiering  # noqa: E402
from strata.hw.ptx.parser import parse  # noqa: E402

SRC = r"""
extern "C" __global__ void tile_sum(const float* x, float* out, unsigned* hist, int n) {
  __shared__ float tile[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) tile[threadIdx.x] += tile[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = tile[0];
  if (i < n) atomicAdd(&hist[(unsigned)(x[i] * 4.0f) & 7u], 1u);
}
"""
N, BLOCK = 4096, 128


@pytest.fixture
def tiers(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """A cold object cache, kernels compiled at their first launch, the default tiering (auto)."""
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    monkeypatch.delenv("STRATA_NATIVE_OPT", raising=False)
    yield cuda.compile(SRC)
    assert optimizer.settle(60.0)


def _run(mod: Any) -> tuple[np.ndarray, np.ndarray, dict[str, Any], list[Any]]:
    """One launch of tile_sum, its outputs checked against NumPy: (sums, histogram, counters, native events)."""
    x = np.random.default_rng(7).random(N, dtype=np.float32)
    out, hist = cuda.to_device(np.zeros(N // BLOCK, np.float32)), cuda.to_device(np.zeros(8, np.uint32))
    with trace.record() as rec:
        r = mod.get_function("tile_sum")(N // BLOCK, BLOCK, (cuda.to_device(x), out, hist, np.int32(N)))
        r.wait()
    assert r.executor == "native"
    sums, counts = out.get(), hist.get()
    np.testing.assert_allclose(sums, x.reshape(-1, BLOCK).astype(np.float64).sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(counts, np.bincount((x * 4.0).astype(np.uint32) & 7, minlength=8))
    return sums, counts, dataclasses.asdict(r.counters), [e for e in rec.events if e.name.startswith("native_")]


def _code(mod: Any) -> executor.CompiledKernel:
    ck = executor.known_kernels(mod.loaded(cuda.current_device()).program)["tile_sum"]
    assert isinstance(ck, executor.CompiledKernel)
    return ck


def test_the_first_code_is_O0_and_a_hot_kernel_is_recompiled_at_O3(tiers: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    first = _run(tiers)
    ck = _code(tiers)
    assert (ck.opt, ck.cached) == (0, False)
    assert [(e.name, e.args["opt"]) for e in first[3]] == [("native_compile", 0)]
    # the -O3 compile predicted to cost less than the time spent: the next launch queues the recompile
    monkeypatch.setattr(tiering, "OPTIMIZE_AFTER_S", 0.0)
    monkeypatch.setattr(tiering, "COMPILE_S_PER_INSTRUCTION", 0.0)
    _run(tiers)
    assert optimizer.settle(60.0)
    assert not optimizer.errors
    hot = _code(tiers)
    assert hot is not ck and hot.opt == 3 and ck.quick_s > 0
    again = _run(tiers)
    assert [a.tobytes() for a in again[:2]] == [a.tobytes() for a in first[:2]]  # the same bits
    assert again[2] == first[2]  # and the same counters
    assert not again[3]  # (nothing compiled: the -O3 code ran)


def test_a_kernel_below_the_threshold_keeps_its_O0_code(tiers: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiering, "OPTIMIZE_AFTER_S", 10.0)  # (however slow the machine: 3 launches stay below)
    for _ in range(3):
        _run(tiers)
    assert optimizer.settle(60.0)
    ck = _code(tiers)
    assert ck.opt == 0 and not ck.optimizing and 0 < ck.quick_s < 10.0


def test_the_O3_object_is_cached_for_the_next_process(tiers: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NATIVE_OPT", "3")
    _run(tiers)
    assert _code(tiers).opt == 3
    monkeypatch.delenv("STRATA_NATIVE_OPT")
    loaded = tiers.loaded(cuda.current_device()).program
    fresh = Program(parse(loaded.module.text), dict(loaded.global_addresses))  # as a new process would load it
    ck = executor.compiled(fresh, "tile_sum")
    assert isinstance(ck, executor.CompiledKernel)
    assert (ck.opt, ck.cached) == (3, True)  # auto takes the best code the cache holds


def test_opt_0_never_optimizes_and_opt_3_upgrades_O0_code(tiers: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NATIVE_OPT", "0")
    monkeypatch.setattr(tiering, "OPTIMIZE_AFTER_S", 0.0)
    monkeypatch.setattr(tiering, "COMPILE_S_PER_INSTRUCTION", 0.0)
    quick = _run(tiers)
    _run(tiers)
    assert optimizer.settle(60.0)
    assert _code(tiers).opt == 0
    monkeypatch.setenv("STRATA_NATIVE_OPT", "3")
    optimized = _run(tiers)
    assert _code(tiers).opt == 3
    assert [e.args["opt"] for e in optimized[3] if e.name == "native_compile"] == [3]
    assert optimized[2] == quick[2] and optimized[0].tobytes() == quick[0].tobytes()


def test_a_launch_predicted_to_run_long_compiles_at_O3_at_once(tiers: Any) -> None:
    jf = tiers.loaded(cuda.current_device()).program.functions["tile_sum"]
    small = LaunchConfig(grid=(N // BLOCK, 1, 1), block=(BLOCK, 1, 1), params=b"")
    big = LaunchConfig(grid=(1 << 16, 1, 1), block=(1024, 1, 1), params=b"")
    assert not tiering.optimize_now(jf, small, 65536)
    assert tiering.optimize_now(jf, big, 65536)


def test_a_big_launch_on_O0_code_queues_the_recompile_as_it_starts(tiers: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    first = _run(tiers)
    quick = _code(tiers)
    assert quick.opt == 0
    # the launch at hand predicted long; the time spent alone never reaches the -O3 compile's cost (10 s here)
    monkeypatch.setattr(tiering, "OPTIMIZE_AFTER_S", 10.0)
    monkeypatch.setattr(tiering, "QUICK_VS_REFERENCE", 1e9)
    second = _run(tiers)
    assert quick.optimizing and quick.quick_s < 10.0
    assert optimizer.settle(60.0)
    assert _code(tiers).opt == 3
    assert second[2] == first[2]


def test_the_setting_and_strata_info(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config.settings({}).native_opt == "auto"
    assert config.settings({"STRATA_NATIVE_OPT": "3"}).native_opt == "3"
    with pytest.raises(ValueError, match="STRATA_NATIVE_OPT must be one of auto, 0, 3"):
        config.settings({"STRATA_NATIVE_OPT": "2"})
    from strata.info import _executor

    assert "-O0, then at -O3 in the background" in _executor("native", 0, "auto")


def test_an_optimizer_job_that_fails_is_kept_not_raised() -> None:
    before = len(optimizer.errors)
    ran: list[int] = []

    def boom() -> None:
        raise RuntimeError("compile failed")

    optimizer.submit(boom)
    optimizer.submit(lambda: ran.append(1))  # the thread goes on after a failed job
    assert optimizer.settle(30.0)
    assert ran == [1] and optimizer.pending() == 0
    assert isinstance(optimizer.errors[-1], RuntimeError) and len(optimizer.errors) in (before + 1, 16)
    optimizer.errors.pop()  # (other tests check that their recompiles left no error)


def _child(q: Any) -> None:
    ran: list[int] = []
    optimizer.submit(lambda: ran.append(1))
    q.put(optimizer.settle(30.0) and ran == [1])


def test_a_forked_child_gets_an_optimizer_thread_of_its_own() -> None:
    optimizer.submit(lambda: None)  # (the parent's thread exists at the fork)
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q,))
    p.start()
    try:
        assert q.get(timeout=60) is True
    finally:
        p.join(60)
    assert p.exitcode == 0


EXIT_SCRIPT = r"""
import numpy as np
import strata.cuda as cuda
from strata.hw.native import optimizer, tiering
mod = cuda.compile('''
extern "C" __global__ void axpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}''')
x, y = cuda.to_device(np.ones(4096, np.float32)), cuda.to_device(np.ones(4096, np.float32))
fn = mod.get_function("axpy")
fn(16, 256, (np.int32(4096), np.float32(2.0), x, y)).wait()  # -O0 code
tiering.OPTIMIZE_AFTER_S, tiering.COMPILE_S_PER_INSTRUCTION = 0.0, 0.0
fn(16, 256, (np.int32(4096), np.float32(2.0), x, y)).wait()  # queues the -O3 recompile as it starts
assert np.all(y.get() == 5.0)
print("pending", optimizer.pending())
"""


def test_the_process_exits_cleanly_with_a_recompile_in_flight(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "STRATA_CACHE_DIR": str(tmp_path), "STRATA_NATIVE_AFTER_MS": "0",
           "STRATA_EXECUTOR": "native", "STRATA_NATIVE_OPT": "auto"}
    done = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("pending ")  # (0 or 1: the compile may have finished by then)
