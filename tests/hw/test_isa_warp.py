# Tests of the warp-level instruction family (src/strata/hw/isa/warp.py): shfl.sync in every mode and
# segment width, vote/ballot/activemask in divergent code, match.sync, redux.sync, partial warps, and
# the PTX ISA's source-lane pseudo-code as a property test. Oracles are NumPy or plain Python.
"""Warp intrinsics from real NVRTC kernels (and a little hand-written PTX) against NumPy oracles."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ptx_harness import PTX_HEAD, launch, launch_entry

import strata.cuda as cuda
from strata.hw.isa import warp

FULL = 0xFFFFFFFF


def bits(p: np.ndarray) -> int:
    return int(sum(1 << i for i, x in enumerate(p) if x))


def shfl_oracle(vals: np.ndarray, mode: str, b: int, c: int, active: np.ndarray | None = None) -> tuple:
    """The PTX ISA pseudo-code, one lane at a time: (values, predicate) per lane."""
    out = vals.copy()
    pred = np.zeros(vals.size, dtype=bool)
    seg, clamp = (c >> 8) & 31, c & 31
    for i in range(vals.size):
        lane, base = i % 32, i - i % 32
        bval = b & 31
        max_lane = (lane & seg) | (clamp & ~seg & 31)
        min_lane = lane & seg
        j = {"up": lane - bval, "down": lane + bval, "bfly": lane ^ bval,
             "idx": min_lane | (bval & ~seg & 31)}[mode]
        ok = j >= max_lane if mode == "up" else j <= max_lane
        pred[i] = ok
        out[i] = vals[base + (j if ok else lane)]
    return out, pred


def c_of(mode: str, width: int) -> int:
    """CUDA's packed c operand for a given width (what __shfl_*_sync passes)."""
    return ((32 - width) << 8) | (0 if mode == "up" else 31)


# -- shfl --------------------------------------------------------------------------------------
SHFL = r'''
extern "C" __global__ void shfl(const int* in, int* out, int width, int delta) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n = gridDim.x * blockDim.x;
    int v = in[t];
    out[0 * n + t] = __shfl_sync(0xffffffffu, v, delta, width);
    out[1 * n + t] = __shfl_up_sync(0xffffffffu, v, delta, width);
    out[2 * n + t] = __shfl_down_sync(0xffffffffu, v, delta, width);
    out[3 * n + t] = __shfl_xor_sync(0xffffffffu, v, delta, width);
    out[4 * n + t] = __shfl_sync(0xffffffffu, v, (threadIdx.x * 5 + 7) & 31);
}
'''


@pytest.mark.parametrize("width", [32, 16, 8, 4, 2])
@pytest.mark.parametrize("delta", [0, 1, 3, 5, 16, 31])
def test_shfl_modes_and_widths(width: int, delta: int) -> None:
    n = 128
    v = np.random.default_rng(width * 100 + delta).integers(-(2**31), 2**31, n).astype(np.int32)
    (_, out), _ = launch(SHFL, "shfl", 2, 64, v, np.zeros(5 * n, np.int32), np.int32(width), np.int32(delta))
    out = out.reshape(5, n)
    for row, mode in enumerate(("idx", "up", "down", "bfly")):
        exp, _ = shfl_oracle(v, mode, delta, c_of(mode, width))
        np.testing.assert_array_equal(out[row], exp, err_msg=f"{mode} width={width} delta={delta}")
    src = (np.arange(n) % 64 * 5 + 7) & 31
    np.testing.assert_array_equal(out[4], v[np.arange(n) - np.arange(n) % 32 + src])


def test_shfl_out_of_range_keeps_own_value() -> None:
    """shfl_up by 3 leaves lanes 0..2 of each segment with their own value; shfl_down the top ones."""
    n = 64
    v = np.arange(1000, 1000 + n, dtype=np.int32)
    (_, out), _ = launch(SHFL, "shfl", 1, 64, v, np.zeros(5 * n, np.int32), np.int32(8), np.int32(3))
    up, down = out.reshape(5, n)[1], out.reshape(5, n)[2]
    lane_in_seg = np.arange(n) % 8
    np.testing.assert_array_equal(up[lane_in_seg < 3], v[lane_in_seg < 3])
    np.testing.assert_array_equal(up[lane_in_seg >= 3], v[np.flatnonzero(lane_in_seg >= 3) - 3])
    np.testing.assert_array_equal(down[lane_in_seg >= 5], v[lane_in_seg >= 5])


REDUCE = r'''
extern "C" __global__ void warp_sum(int n, const float* x, const int* xi, float* out, int* outi) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = t < n ? x[t] : 0.0f;
    int vi = t < n ? xi[t] : 0;
    for (int off = 16; off > 0; off >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, off);
        vi += __shfl_xor_sync(0xffffffffu, vi, off);
    }
    if ((threadIdx.x & 31) == 0) out[t >> 5] = v;
    outi[t] = vi;   // butterfly: every lane holds the warp's total
}
'''


def test_warp_shuffle_reduction() -> None:
    n = 1000
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, 1024).astype(np.float32)
    xi = rng.integers(-(10**6), 10**6, 1024).astype(np.int32)
    x[n:] = 0
    xi[n:] = 0
    (_, _, out, outi), rep = launch(REDUCE, "warp_sum", 4, 256, np.int32(n), x, xi, np.zeros(32, np.float32),
                                    np.zeros(1024, np.int32))
    # shfl_down tree: lane 0 adds partner sums in the order off = 16, 8, 4, 2, 1
    w = x.reshape(32, 32).copy()
    for off in (16, 8, 4, 2, 1):
        w[:, :32 - off] = w[:, :32 - off] + w[:, off:]
    np.testing.assert_array_equal(out, w[:, 0])
    np.testing.assert_allclose(out, x.reshape(32, 32).astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    totals = xi.reshape(32, 32).sum(axis=1, dtype=np.int64).astype(np.int32)
    np.testing.assert_array_equal(outi, np.repeat(totals, 32))
    assert rep.counters.thread_instructions["integer"] >= 10 * 1024  # 10 shuffles per thread


# -- vote, ballot, activemask in divergent code -------------------------------------------------
VOTE = r'''
extern "C" __global__ void vote(const int* in, unsigned* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n = gridDim.x * blockDim.x;
    int v = in[t];
    unsigned am = 0xdeadbeefu, b = 0xdeadbeefu, any = 7, all = 7;
    if (threadIdx.x % 3 == 0) {
        am = __activemask();
        b = __ballot_sync(__activemask(), v > 0);
        any = __any_sync(__activemask(), v > 50);
        all = __all_sync(__activemask(), v > -50);
    }
    out[0 * n + t] = am;
    out[1 * n + t] = b;
    out[2 * n + t] = any;
    out[3 * n + t] = all;
    out[4 * n + t] = __ballot_sync(0xffffffffu, v > 0);
    out[5 * n + t] = __activemask();
}
'''


@pytest.mark.parametrize("block", [96, 40, 7])
def test_vote_in_divergent_code_and_partial_warps(block: int) -> None:
    """Only active lanes vote; ghost lanes of a partial warp (blockDim % 32 != 0) never appear."""
    grid = 2
    n = grid * block
    v = np.random.default_rng(block).integers(-100, 100, n).astype(np.int32)
    (_, out), _ = launch(VOTE, "vote", grid, block, v, np.zeros(6 * n, np.uint32))
    out = out.reshape(6, n)
    exp = np.zeros((6, n), np.uint32)
    for blk in range(grid):
        for w0 in range(0, block, 32):
            tids = np.arange(w0, min(w0 + 32, block))
            g = blk * block + tids
            div = tids % 3 == 0
            vw = v[g]
            am = bits(div)
            exp[0, g] = np.where(div, am, 0xDEADBEEF)
            exp[1, g] = np.where(div, bits(div & (vw > 0)), 0xDEADBEEF)
            exp[2, g] = np.where(div, int(np.any(vw[div] > 50)), 7)
            exp[3, g] = np.where(div, int(np.all(vw[div] > -50)), 7)
            exp[4, g] = bits(vw > 0)
            exp[5, g] = bits(np.ones(tids.size, bool))
    np.testing.assert_array_equal(out, exp)


# -- match --------------------------------------------------------------------------------------
MATCH = r'''
extern "C" __global__ void match(const int* in, const long long* in64, unsigned* out) {
    int t = threadIdx.x;
    int n = blockDim.x;
    int pred = -1;
    out[0 * n + t] = __match_any_sync(0xffffffffu, in[t]);
    out[1 * n + t] = __match_all_sync(0xffffffffu, in[t], &pred);
    out[2 * n + t] = pred;
    out[3 * n + t] = __match_any_sync(0xffffffffu, in64[t]);
    unsigned sub = 0;
    if (t % 2 == 1) sub = __match_any_sync(__activemask(), in[t]);   // only odd lanes compare
    out[4 * n + t] = sub;
}
'''


def test_match_any_all() -> None:
    rng = np.random.default_rng(5)
    n = 96
    v = rng.integers(0, 4, n).astype(np.int32)
    v[32:64] = 9  # warp 1 uniform
    v64 = (rng.integers(0, 3, n).astype(np.int64) << 33) + 1  # equal low words, differing high words
    (_, _, out), _ = launch(MATCH, "match", 1, n, v, v64, np.zeros(5 * n, np.uint32))
    out = out.reshape(5, n)
    for w in range(3):
        s = slice(32 * w, 32 * w + 32)
        vw, v64w = v[s], v64[s]
        np.testing.assert_array_equal(out[0, s], [bits(vw == x) for x in vw])
        uni = bool(np.all(vw == vw[0]))
        np.testing.assert_array_equal(out[1, s], np.full(32, FULL if uni else 0))
        np.testing.assert_array_equal(out[2, s], np.full(32, int(uni)))
        np.testing.assert_array_equal(out[3, s], [bits(v64w == x) for x in v64w])
        odd = np.arange(32) % 2 == 1
        np.testing.assert_array_equal(out[4, s], [bits(odd & (vw == x)) if o else 0 for x, o in zip(vw, odd)])


# -- redux --------------------------------------------------------------------------------------
REDUX = r'''
extern "C" __global__ void redux(const int* in, unsigned* u, int* s) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n = gridDim.x * blockDim.x;
    int v = in[t];
    u[0 * n + t] = __reduce_add_sync(0xffffffffu, (unsigned)v);
    u[1 * n + t] = __reduce_min_sync(0xffffffffu, (unsigned)v);
    u[2 * n + t] = __reduce_max_sync(0xffffffffu, (unsigned)v);
    u[3 * n + t] = __reduce_and_sync(0xffffffffu, (unsigned)v);
    u[4 * n + t] = __reduce_or_sync(0xffffffffu, (unsigned)v);
    u[5 * n + t] = __reduce_xor_sync(0xffffffffu, (unsigned)v);
    s[0 * n + t] = __reduce_add_sync(0xffffffffu, v);
    s[1 * n + t] = __reduce_min_sync(0xffffffffu, v);
    s[2 * n + t] = __reduce_max_sync(0xffffffffu, v);
    int part = 12345;
    if ((threadIdx.x & 31) >= 12) part = __reduce_max_sync(0xfffff000u, v);
    s[3 * n + t] = part;
}
'''


@pytest.mark.parametrize("block", [64, 48])
def test_redux_sync(block: int) -> None:
    n = 2 * block
    v = np.random.default_rng(block).integers(-(2**31), 2**31, n).astype(np.int32)
    (_, u, s), _ = launch(REDUX, "redux", 2, block, v, np.zeros(6 * n, np.uint32), np.zeros(4 * n, np.int32))
    u, s = u.reshape(6, n), s.reshape(4, n)
    for blk in range(2):
        for w0 in range(0, block, 32):
            g = blk * block + np.arange(w0, min(w0 + 32, block))  # partial last warp when block = 48
            vw = v[g]
            uw = vw.view(np.uint32)
            total = np.uint32(int(uw.astype(np.uint64).sum()) % 2**32)
            np.testing.assert_array_equal(u[:, g], np.array([
                total, uw.min(), uw.max(), np.bitwise_and.reduce(uw), np.bitwise_or.reduce(uw),
                np.bitwise_xor.reduce(uw)], np.uint32)[:, None].repeat(g.size, 1))
            np.testing.assert_array_equal(s[:3, g], np.array(
                [total.view(np.int32), vw.min(), vw.max()], np.int32)[:, None].repeat(g.size, 1))
            lanes = np.arange(g.size)
            hi = lanes >= 12
            exp = np.where(hi, vw[hi].max() if hi.any() else 0, 12345)
            np.testing.assert_array_equal(s[3, g], exp)


# -- hand-written PTX: predicate outputs, immediates, legacy forms, unsupported variants ------
SHFL_PTX = PTX_HEAD + r'''
.visible .entry k(.param .u64 pin, .param .u64 pout, .param .u64 ppred)
{
    .reg .pred %p<6>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [pin];
    ld.param.u64 %rd2, [pout];
    ld.param.u64 %rd3, [ppred];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    ld.global.u32 %r2, [%rd5];
    shfl.sync.up.b32 %r3|%p1, %r2, 2, 0, -1;
    shfl.sync.idx.b32 %r4|%p2, %r2, 33, 0x1f, 0xffffffff;
    shfl.down.b32 %r5|%p3, %r2, 4, 0x1f;
    setp.gt.s32 %p4, %r2, 10;
    vote.sync.ballot.b32 %r6, !%p4, -1;
    vote.ballot.b32 %r7, %p4;
    selp.u32 %r8, 1, 0, %p1;
    selp.u32 %r9, 2, 0, %p2;
    or.b32 %r8, %r8, %r9;
    selp.u32 %r9, 4, 0, %p3;
    or.b32 %r8, %r8, %r9;
    add.s64 %rd6, %rd3, %rd4;
    st.global.u32 [%rd6], %r8;
    mul.wide.u32 %rd4, %r1, 20;
    add.s64 %rd6, %rd2, %rd4;
    st.global.u32 [%rd6], %r3;
    st.global.u32 [%rd6+4], %r4;
    st.global.u32 [%rd6+8], %r5;
    st.global.u32 [%rd6+12], %r6;
    st.global.u32 [%rd6+16], %r7;
    ret;
}
'''


def test_hand_ptx_predicates_immediates_and_legacy_forms() -> None:
    n = 32
    v = np.random.default_rng(9).integers(0, 20, n).astype(np.int32)
    mod = cuda.Module.from_ptx(SHFL_PTX)
    (_, out, pred), _ = launch(mod, "k", 1, n, v, np.zeros(5 * n, np.int32), np.zeros(n, np.uint32))
    out = out.reshape(n, 5)
    up, p_up = shfl_oracle(v, "up", 2, 0)
    idx, p_idx = shfl_oracle(v, "idx", 33, 0x1F)  # b = 33 uses only bits 0-4: lane 1
    down, p_down = shfl_oracle(v, "down", 4, 0x1F)
    np.testing.assert_array_equal(out[:, 0], up)
    np.testing.assert_array_equal(out[:, 1], np.full(n, v[1]))
    np.testing.assert_array_equal(out[:, 1], idx)
    np.testing.assert_array_equal(out[:, 2], down)
    np.testing.assert_array_equal(out[:, 3].view(np.uint32), np.full(n, bits(~(v > 10)), np.uint32))
    np.testing.assert_array_equal(out[:, 4].view(np.uint32), np.full(n, bits(v > 10), np.uint32))
    np.testing.assert_array_equal(pred, p_up.astype(np.uint32) | 2 * p_idx.astype(np.uint32)
                                  | 4 * p_down.astype(np.uint32))


@pytest.mark.parametrize("line", [
    "redux.sync.min.f32 %r2, %r1, -1;",
    "redux.sync.add.u64 %r2, %r1, -1;",
    "shfl.sync.idx.b64 %r2, %r1, 0, 31, -1;",
])
def test_unsupported_variants_fail_at_load(line: str) -> None:
    with pytest.raises(cuda.UnsupportedInstruction):
        launch_entry(".reg .b32 %r<4>;", "mov.u32 %r1, %tid.x;", line, block=32)


SYNCWARP = r'''
extern "C" __global__ void syncwarp_divergent(int* out) {
    __shared__ int s[32];
    int t = threadIdx.x;
    if (t < 32) {               // the second warp of the block never gets here
        s[t] = t * 3;
        __syncwarp();
        out[t] = s[31 - t];
    }
}
'''


def test_syncwarp_in_divergent_code() -> None:
    (out,), _ = launch(SYNCWARP, "syncwarp_divergent", 1, 64, np.zeros(32, np.int32))
    np.testing.assert_array_equal(out, (31 - np.arange(32)) * 3)


def test_counters_class_integer() -> None:
    n = 64
    v = np.arange(n, dtype=np.int32)
    (_, _), rep = launch(SHFL, "shfl", 1, n, v, np.zeros(5 * n, np.int32), np.int32(32), np.int32(1))
    assert rep.counters.warp_instructions["integer"] >= 5 * 2  # five shuffles, two warps
    assert rep.counters.atomic_ops == 0


# -- the source-lane computation against the ISA pseudo-code ------------------------------------
@settings(max_examples=300, deadline=None)
@given(mode=st.sampled_from(["up", "down", "bfly", "idx"]), b=st.integers(0, 2**32 - 1),
       c=st.integers(0, 2**32 - 1))
def test_shfl_source_matches_isa(mode: str, b: int, c: int) -> None:
    lane = np.arange(32, dtype=np.int64)
    j, ok = warp.shfl_source(mode, lane, np.uint32(b), np.uint32(c))
    vals = np.arange(100, 132)
    exp, pred = shfl_oracle(vals, mode, b, c)
    np.testing.assert_array_equal(vals[j], exp)
    np.testing.assert_array_equal(ok, pred)


ELECT_PTX = PTX_HEAD + r'''
.visible .entry k(.param .u64 pout)
{
    .reg .pred %p<4>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [pout];
    mov.u32 %r1, %tid.x;
    mov.u32 %r5, 0xdead;
    mov.u32 %r6, 7;
    setp.lt.u32 %p2, %r1, 5;
    @%p2 bra DONE;
    elect.sync %r5|%p1, 0xfffffff0;
    selp.u32 %r6, 1, 0, %p1;
    bar.warp.sync -1;
DONE:
    mul.wide.u32 %rd2, %r1, 8;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r5;
    st.global.u32 [%rd3+4], %r6;
    ret;
}
'''


def test_elect_sync_and_bar_warp_lowerings(monkeypatch: pytest.MonkeyPatch) -> None:
    """elect.sync and bar.warp.sync as control.py should route them (see warp.lower_elect's note)."""
    from strata.hw.isa import registry

    bar = registry.REGISTRY["bar"]

    def route_bar(ins: Any, ctx: Any) -> Any:
        return warp.lower_bar_warp(ins, ctx) if "warp" in ins.mods else bar(ins, ctx)

    monkeypatch.setitem(registry.REGISTRY, "elect", warp.lower_elect)
    monkeypatch.setitem(registry.REGISTRY, "bar", route_bar)
    (out,), _ = launch(cuda.Module.from_ptx(ELECT_PTX), "k", 1, 40, np.zeros(2 * 40, np.uint32))
    out = out.reshape(40, 2)
    tid = np.arange(40)
    # membermask drops laneids 0..3: warp 0 runs it on lanes 5..31 (lane 5 leads), warp 1 on its
    # 8 real lanes (laneid 4, thread 36, leads)
    exp_d = np.where(tid < 5, 0xDEAD, np.where(tid < 32, 5, 4))
    exp_p = np.where(tid < 5, 7, (tid == 5) | (tid == 36))
    np.testing.assert_array_equal(out[:, 0], exp_d)
    np.testing.assert_array_equal(out[:, 1], exp_p)
