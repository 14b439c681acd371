"""A launch that fits in one of the reference's chunks but holds several blocks runs as two sub-chunks on two
host threads once its kernel proved slow enough (executor.SPLIT_AFTER_S): outputs bit for bit and counters
identical to the reference's, and a fault report that is the reference's. Kernels compiled by NVRTC; NumPy
oracles."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata.hw.native import executor  # noqa: E402

from .native_harness import fault_report, on_both_executors  # noqa: E402

SRC = r"""
extern "C" __global__ void smooth(int n, const float* x, float* y, int bad_from, long long bad_off) {
  __shared__ float s[258];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x + 1] = i < n ? x[i] : 0.f;
  if (threadIdx.x == 0) s[0] = i > 0 && i - 1 < n ? x[i - 1] : 0.f;
  if (threadIdx.x == blockDim.x - 1) s[blockDim.x + 1] = i + 1 < n ? x[i + 1] : 0.f;
  __syncthreads();
  if (i < n) {
    float v = 0.25f * s[threadIdx.x] + 0.5f * s[threadIdx.x + 1] + 0.25f * s[threadIdx.x + 2];
    if (blockIdx.x % 3 == 1) v = sqrtf(fabsf(v));     // blocks take different paths
    y[i] = v;
  }
  if (bad_from >= 0 && (int)blockIdx.x >= bad_from && threadIdx.x == 7) y[i + bad_off] = 1.f;
}
"""

N, BLOCKS, THREADS = 1900, 8, 256  # one chunk of the reference's (8 x 256 lanes), the last block partial


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC)


@pytest.fixture
def split(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every one-chunk launch splits once its kernel ran (SPLIT_AFTER_S = 0); returns the names of the threads
    that ran the launches' chunks."""
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    monkeypatch.setattr(executor, "SPLIT_AFTER_S", 0.0)
    names: list[str] = []
    run_root = executor.run_root

    def spy(*args: Any, **kwargs: Any) -> Any:
        names.append(threading.current_thread().name)
        return run_root(*args, **kwargs)

    monkeypatch.setattr(executor, "run_root", spy)
    return names


def _oracle(x: np.ndarray) -> np.ndarray:
    pad = np.concatenate([[0.0], x, [0.0]]).astype(np.float32)
    v = np.float32(0.25) * pad[:-2] + np.float32(0.5) * pad[1:-1] + np.float32(0.25) * pad[2:]
    blocks = np.arange(x.size) // THREADS
    return np.where(blocks % 3 == 1, np.sqrt(np.abs(v)), v).astype(np.float32)


def _warm(monkeypatch: pytest.MonkeyPatch, mod: Any, names: list[str]) -> None:
    """Native launches on one thread (SPLIT_AFTER_RUNS of them): they record that the kernel's launches of this
    shape split."""
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    x = cuda.to_device(np.zeros(N, np.float32))
    for _ in range(executor.SPLIT_AFTER_RUNS):
        mod.get_function("smooth")(BLOCKS, THREADS, (np.int32(N), x, cuda.to_device(np.zeros(N, np.float32)),
                                                     np.int32(-1), np.int64(0))).wait()
    names.clear()


def test_a_one_chunk_launch_runs_on_two_threads_as_the_reference_would(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                                                       split: list[str]) -> None:
    _warm(monkeypatch, mod, split)
    x = np.random.default_rng(4).standard_normal(N).astype(np.float32)

    def make() -> Any:
        y = cuda.to_device(np.zeros(N, np.float32))
        return (np.int32(N), cuda.to_device(x), y, np.int32(-1), np.int64(0)), [y]

    split.clear()
    (y,), _, _ = on_both_executors(monkeypatch, lambda args: mod.get_function("smooth")(BLOCKS, THREADS, args), make)
    np.testing.assert_allclose(y, _oracle(x), rtol=1e-6)
    # each native launch (-O0 code, then -O3 code, which keeps the -O0 code's launch history): two sub-chunks,
    # one per host thread
    assert len(split) == 4 and len(set(split)) == 2 and len(set(split[:2])) == 2


@pytest.mark.parametrize("bad_from", [5, 2], ids=["second-half-only", "both-halves"])
def test_a_split_launchs_fault_is_the_references(monkeypatch: pytest.MonkeyPatch, mod: Any, split: list[str],
                                                 bad_from: int) -> None:
    _warm(monkeypatch, mod, split)
    def launch() -> Any:
        x, y = cuda.to_device(np.ones(N, np.float32)), cuda.to_device(np.zeros(N, np.float32))
        return mod.get_function("smooth")(BLOCKS, THREADS, (np.int32(N), x, y, np.int32(bad_from), np.int64(1 << 24)))

    ref = fault_report(monkeypatch, "reference", launch)
    _warm(monkeypatch, mod, split)  # (the reset dropped the module's state with the context)
    # Whether it split is counted in the sub-launches made, not in the threads that ran chunks: when both halves
    # fault and the first half's fault comes first, the second thread stops before its chunk (a lower chunk's
    # fault wins), which is right, and depends on timing.
    made: list[object] = []
    real = executor.Launch

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(executor, "Launch", counted)
    nat = fault_report(monkeypatch, "native", launch)
    assert nat == ref
    assert ref["block"] == (bad_from, 0, 0) and ref["thread"] == (7, 0, 0)
    # the -O0 launch as two sub-launches (it had the warm-up's history); the -O3 one after the fault's context
    # reset (no history: one)
    assert len(made) == 3
