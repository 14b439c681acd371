"""LDS bank conflicts on the CDNA engine: 32 banks of 4 bytes, a wave64 served in two passes of 32 lanes, the
cycles past the ideal counted in `shared_bank_conflicts` (as the PTX engine counts shared memory's), shown in the
L0 execute span as `lds_bank_conflicts` and priced by the timing model. Kernels compiled by clang-19."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata import trace

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")

SRC = """#include <hip/hip_runtime.h>
extern "C" __global__ void strided(float* out, int stride, int active) {
    __shared__ float s[64 * 64];
    int t = threadIdx.x;
    if (t < active) s[t * stride] = (float)t;          // one ds_write_b32
    __syncthreads();
    float v = t < active ? s[t * stride] : 0.0f;       // one ds_read_b32
    out[blockIdx.x * blockDim.x + t] = v;
}
extern "C" __global__ void pairs(float2* out, int stride) {
    __shared__ float2 s[64 * 32];
    int t = threadIdx.x;
    s[t * stride] = make_float2((float)t, (float)-t);  // 8-byte accesses: ds_write_b64 / ds_read_b64
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[t * stride];
}
"""


def expected_conflicts(word_of_lane: np.ndarray, dwords: int) -> int:
    """The oracle, lane by lane: per 32-lane pass, the busiest bank's distinct dwords minus the ideal."""
    total = 0
    for half in word_of_lane.reshape(-1, 32, dwords):
        words = {int(w) for w in half.ravel()}
        per_bank = np.bincount([w % 32 for w in words], minlength=32)
        total += max(int(per_bank.max()) - dwords, 0)
    return total


def _launch(mod: Any, name: str, args: tuple[Any, ...], blocks: int) -> tuple[Any, dict[str, Any]]:
    with trace.record() as rec:
        rep = mod.get_function(name)(blocks, 64, args)
        rep.wait()
    span = next(e for e in rec.events if e.layer == "L0" and e.name == "execute")
    return rep, span.args


@needs_clang
@pytest.mark.parametrize("stride", [1, 2, 32, 33])
def test_strided_lds_conflicts(mi300x: cuda.Device, stride: int) -> None:
    mod = hip.compile(SRC, options=["-O3"])
    blocks = 3
    out = hip.zeros(64 * blocks, np.float32)
    rep, span = _launch(mod, "strided", (out, np.int32(stride), np.int32(64)), blocks)
    np.testing.assert_array_equal(out.get(), np.tile(np.arange(64, dtype=np.float32), blocks))
    per_access = expected_conflicts(np.arange(64) * stride, 1)
    assert per_access == {1: 0, 2: 2, 32: 62, 33: 0}[stride]  # 31 extra cycles per pass at stride 32
    want = 2 * blocks * per_access  # one write and one read per wave
    assert rep.counters.shared_bank_conflicts == want
    assert span["lds_bank_conflicts"] == want


@needs_clang
def test_inactive_lanes_take_no_part(mi300x: cuda.Device) -> None:
    """Only the first 8 lanes touch the LDS at stride 32: 7 extra cycles in the first pass, none in the second."""
    mod = hip.compile(SRC)
    out = hip.zeros(64, np.float32)
    rep, _ = _launch(mod, "strided", (out, np.int32(32), np.int32(8)), 1)
    assert rep.counters.shared_bank_conflicts == 2 * 7


@needs_clang
@pytest.mark.parametrize("stride", [1, 16, 17])
def test_eight_byte_accesses(mi300x: cuda.Device, stride: int) -> None:
    mod = hip.compile(SRC)
    out = hip.zeros(2 * 64, np.float32)
    rep, _ = _launch(mod, "pairs", (out, np.int32(stride)), 1)
    got = out.get().reshape(64, 2)
    np.testing.assert_array_equal(got[:, 0], np.arange(64, dtype=np.float32))
    words = (np.arange(64) * 2 * stride)[:, None] + np.arange(2)
    assert rep.counters.shared_bank_conflicts == 2 * expected_conflicts(words, 2)
    assert (rep.counters.shared_bank_conflicts > 0) == (stride == 16)


@needs_clang
def test_conflicts_cost_modeled_time(mi300x: cuda.Device) -> None:
    """The timing model prices each extra pass on the load/store pipe: a conflicted launch is not cheaper."""
    mod = hip.compile(SRC)
    out = hip.zeros(64 * 2048, np.float32)
    fast, _ = _launch(mod, "strided", (out, np.int32(1), np.int32(64)), 2048)
    slow, _ = _launch(mod, "strided", (out, np.int32(32), np.int32(64)), 2048)
    assert slow.counters.shared_bank_conflicts == 2 * 2048 * 62 and fast.counters.shared_bank_conflicts == 0
    assert slow.modeled_time_s > fast.modeled_time_s


@needs_clang
def test_same_count_as_the_ptx_engine_for_the_same_source() -> None:
    """A 32-lane pass of a wave64 is a warp's request: the HIP source through NVRTC on an H200 counts the same."""
    before = cuda.current_device()
    got = {}
    try:
        for model in ("h200", "mi300x"):
            cuda.set_device(cuda.Device(model=model))
            mod = hip.compile(SRC)
            out = hip.zeros(64 * 4, np.float32)
            got[model] = mod.get_function("strided")(4, 64, (out, np.int32(32), np.int32(64))).counters
    finally:
        cuda.set_device(before)
    assert got["mi300x"].shared_bank_conflicts == got["h200"].shared_bank_conflicts == 2 * 4 * 62
