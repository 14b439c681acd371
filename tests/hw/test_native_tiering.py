"""When the default native executor compiles a kernel (hw/native/tiering.py): a small launch of a kernel
that is neither compiled nor cached runs on the reference executor (a `native_deferred` trace event says
why); a launch predicted to cost the reference more than STRATA_NATIVE_AFTER_MS compiles at once; the
reference's time on a kernel counts towards compiling it; a kernel in the disk cache runs natively at once.
Every launch's result is checked against NumPy, whichever executor ran it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata import config, trace  # noqa: E402
from strata.hw.native import tiering  # noqa: E402

SRC = r"""
extern "C" __global__ void axpb(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + 1.0f;
}
"""


def _launch(mod: Any, n: int) -> tuple[str, list[str]]:
    """Run axpb over n elements; check y against NumPy; (executor, names of the native trace events)."""
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    y = cuda.to_device(np.zeros_like(x))
    with trace.record() as rec:
        r = mod.get_function("axpb")(-(-n // 256), 256, (np.int32(n), np.float32(3.0), cuda.to_device(x), y))
        r.wait()
    # 3 * x + 1 rounded once (fma) and rounded twice agree unless the product is inexact: compare with fma's
    np.testing.assert_array_equal(y.get(), (x.astype(np.float64) * 3.0 + 1.0).astype(np.float32))
    return r.executor, [e.name for e in rec.events if e.name.startswith("native_")]


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("STRATA_EXECUTOR", raising=False)  # the default


def test_the_default_is_native_with_tiering(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STRATA_NATIVE_AFTER_MS")
    s = config.settings()
    assert (s.executor, s.native_after_ms) == ("native", config.DEFAULT_NATIVE_AFTER_MS)


def test_a_small_launch_waits_on_the_reference(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "1000000")
    mod = cuda.compile(SRC)
    assert _launch(mod, 1000) == ("reference", ["native_deferred"])
    assert _launch(mod, 1000) == ("reference", [])  # (the trace says why once per kernel)


def test_a_big_launch_compiles_at_once(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "5")
    mod = cuda.compile(SRC)
    jf = mod.loaded(cuda.current_device()).program.functions["axpb"]
    static = sum(b.n_instructions for b in jf.blocks)
    # 8M lanes of ~15 instructions: the reference is predicted at ~130 ms, past the kernel's predicted compile
    assert tiering.threshold_s(0.005, static) < 0.1
    executor, events = _launch(mod, 1 << 23)
    assert executor == "native" and events == ["native_compile"]


def test_a_big_kernel_waits_for_its_compile_cost(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # the threshold is the kernel's predicted compile time when that exceeds STRATA_NATIVE_AFTER_MS
    assert tiering.threshold_s(0.15, 2000) == pytest.approx(2000 * tiering.COMPILE_S_PER_INSTRUCTION)
    assert tiering.threshold_s(0.15, 10) == 0.15


def test_the_reference_time_counts_towards_compiling(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "50")
    mod = cuda.compile(SRC)
    assert _launch(mod, 1000)[0] == "reference"
    for _ in range(5000):  # each reference launch adds its wall time; the kernel compiles once they pass 50 ms
        executor, _events = _launch(mod, 1000)  # (a small launch takes ~0.1 ms on a quiet machine)
        if executor == "native":
            break
    else:
        pytest.fail("5000 reference launches never added up to 50 ms")
    assert _launch(mod, 1000) == ("native", [])  # compiled once, for every later launch


def test_a_cached_kernel_is_native_at_once(fresh_cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    first = cuda.compile(SRC)
    assert _launch(first, 1000) == ("native", ["native_compile"])
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "1000000")
    second = cuda.Module.from_ptx(first.ptx)  # a new load: nothing compiled in memory, the object on disk
    assert _launch(second, 1000) == ("native", ["native_compile"])


def test_the_prediction_grows_with_lanes_and_loops() -> None:
    mod = cuda.compile(SRC + r"""
extern "C" __global__ void looped(int n, float* y) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] += 1.0f;
}
""")
    from strata.hw.engine import LaunchConfig

    program = mod.loaded(cuda.current_device()).program
    small, big = LaunchConfig((4, 1, 1), (256, 1, 1)), LaunchConfig((4096, 1, 1), (256, 1, 1))
    axpb, looped = program.functions["axpb"], program.functions["looped"]
    assert tiering.predicted_reference_s(axpb, big, 65536) > 10 * tiering.predicted_reference_s(axpb, small, 65536)
    # a loop counts LOOP_TRIPS times: the loop kernel is predicted dearer per static instruction
    per_ins = [tiering.predicted_reference_s(f, small, 65536) / sum(b.n_instructions for b in f.blocks)
               for f in (axpb, looped)]
    assert per_ins[1] == pytest.approx(per_ins[0] * tiering.LOOP_TRIPS)
