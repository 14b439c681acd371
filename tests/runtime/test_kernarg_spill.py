"""Kernel arguments past a ring slot's 256 bytes go in a separate pinned buffer (runtime/queue.py `_spill`):
each launch reads its own arguments, even with many such launches queued at once, and the buffers of
completed launches are reused instead of mapping fresh pinned pages per launch."""

from __future__ import annotations

import numpy as np

import strata.cuda as cuda
from strata.driver.hostmem import HOST_MEMORY

SRC = r"""
struct Big { float v[96]; };                      // 384 bytes by value: more than a ring slot holds
extern "C" __global__ void pick(Big b, int k, float* out) {
  out[threadIdx.x] = b.v[(threadIdx.x + k) % 96] * 2.0f;
}
"""


def test_big_arguments_each_launch_its_own_and_buffers_reused() -> None:
    fn = cuda.compile(SRC).get_function("pick")
    stream = cuda.Stream()
    outs, expected = [], []
    fn(1, 96, (np.arange(96, dtype=np.float32).view(np.uint8), np.int32(0), cuda.empty(96)), stream=stream).wait()
    before = HOST_MEMORY.stats()["pinned_allocations"]
    for launch in range(40):  # queued back to back: the spilled arguments of in-flight launches stay apart
        v = np.random.default_rng(launch).standard_normal(96).astype(np.float32)
        out = cuda.empty(96)
        fn(1, 96, (v.view(np.uint8), np.int32(launch), out), stream=stream)
        outs.append(out)
        expected.append(v[(np.arange(96) + launch) % 96] * np.float32(2))
    stream.synchronize()
    for out, want in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(out.get(), want)
    for _ in range(40):  # one at a time: every launch finds a completed launch's buffer to reuse
        fn(1, 96, (np.zeros(96, np.float32).view(np.uint8), np.int32(0), outs[0]), stream=stream).wait()
    assert HOST_MEMORY.stats()["pinned_allocations"] - before <= 41
