"""Chunks that run as a streak (executor.chunks: the next chunk on the last finished chunk's frame) when the
kit's ctx array for their size is replaced mid-launch. A streak's driver call that stops early (a watchdog poll
every POLL_BLOCKS basic blocks) gives the frame a new Chunk, whose ctx `_ctx` makes anew when the launch's key
changed (another geometry array, as when two workers race to fill the shared geometry cache, or the cache is
cleared). The frame's native state must then name the new ctx: the old one's memory is freed with it (this was a
segfault on CI, 1 run in 6 of the largest-grid test). Kernel compiled by NVRTC; NumPy oracle."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata.hw import engine  # noqa: E402
from strata.hw.native import executor  # noqa: E402

SRC = r"""
extern "C" __global__ void mix(int n, int iters, const unsigned* x, unsigned* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    unsigned acc = 0;
#pragma unroll 1
    for (int k = 0; k < iters; ++k) acc = acc * 3u + x[i] * (unsigned)k;
    y[i] = acc;
  }
}
"""

# 64 chunks of 4 blocks (STRATA_CHUNK_LANES = 1024), a dozen basic blocks each: a watchdog poll falls inside
# every third chunk or so, so streaks start and stop all through the launch
BLOCKS, THREADS, ITERS = 256, 256, 4


def _oracle(x: np.ndarray) -> np.ndarray:
    acc = np.zeros_like(x)
    for k in range(ITERS):
        acc = acc * np.uint32(3) + x * np.uint32(k)
    return acc


def test_a_streak_frame_follows_its_chunk_s_new_ctx(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    monkeypatch.setenv("STRATA_CHUNK_LANES", "1024")
    geometry = engine._geometry

    def fresh(*args: Any) -> Any:  # every Chunk gets new geometry arrays: its kit's ctx is replaced each time
        return tuple(None if a is None else a.copy() for a in geometry(*args))

    monkeypatch.setattr(engine, "_geometry", fresh)
    frame_state = executor._frame_state
    calls = {"n": 0, "stale": 0, "rearmed": 0}
    rearm = executor._rearm

    def counted(*args: Any) -> Any:
        calls["rearmed"] += 1
        return rearm(*args)

    monkeypatch.setattr(executor, "_rearm", counted)

    def checked(f: Any) -> Any:
        st = frame_state(f)
        calls["n"] += 1
        calls["stale"] += st[3] != f.chunk._native_ctx.ctypes.data  # the ctx native code would read
        return st

    monkeypatch.setattr(executor, "_frame_state", checked)
    n = BLOCKS * THREADS
    x = np.random.default_rng(7).integers(0, 2**32, n, dtype=np.uint32)
    dx, dy = cuda.to_device(x), cuda.zeros(n, np.uint32)
    f = cuda.compile(SRC).get_function("mix")
    for _ in range(3):  # (the streak starts at each worker's second chunk)
        report = f(BLOCKS, THREADS, (np.int32(n), np.int32(ITERS), dx, dy)).wait()
        assert report.executor == "native"
        np.testing.assert_array_equal(dy.get(), _oracle(x))
    assert calls["rearmed"] > 0  # (the case this tests happened)
    assert calls["stale"] == 0
