# Conformance: warp-level primitives: shfl.sync (idx/up/down/bfly, sub-warp widths, 64-bit and
# partial masks), vote.sync (ballot/any/all/uni), activemask, match.sync (any/all, 32/64-bit) and
# redux.sync (add/min/max/and/or/xor, signed and unsigned).
"""Warp intrinsics against NumPy oracles that follow the PTX ISA definitions."""

from __future__ import annotations

import numpy as np
from conformance_lib import assert_exact, both_compilers, kernel, rng, run

FULL = 0xFFFFFFFF


def shfl_oracle(vals: np.ndarray, mode: str, b: int, width: int) -> np.ndarray:
    """PTX shfl.sync for one value per lane (array of length 32*k), CUDA's c operand for `width`.

    CUDA passes c = ((32 - width) << 8) | (0 for up, 31 otherwise); PTX then computes the source
    lane j and falls back to the own lane when j is outside [segment start, segment end].
    """
    out = vals.copy()
    seg = 32 - width
    cval = 0 if mode == "up" else 31
    for w in range(len(vals) // 32):
        for lane in range(32):
            max_lane = (lane & seg) | (cval & ~seg & 31)
            min_lane = lane & seg
            if mode == "up":
                j = lane - b
                ok = j >= max_lane
            elif mode == "down":
                j = lane + b
                ok = j <= max_lane
            elif mode == "bfly":
                j = lane ^ b
                ok = j <= max_lane
            else:
                j = min_lane | (b & 31 & ~seg)
                ok = j <= max_lane
            out[32 * w + lane] = vals[32 * w + (j if ok else lane)]
    return out


SHFL = kernel(
    "warp.shfl_variants",
    r"""
extern "C" __global__ void shfl_all(const int* in, int* out, int width) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n = gridDim.x * blockDim.x;
    int v = in[t];
    int lane = threadIdx.x % 32;
    out[0 * n + t] = __shfl_sync(0xffffffffu, v, (lane * 7 + 3) % 32);   // per-lane source
    out[1 * n + t] = __shfl_sync(0xffffffffu, v, 5, width);
    out[2 * n + t] = __shfl_up_sync(0xffffffffu, v, 3, width);
    out[3 * n + t] = __shfl_down_sync(0xffffffffu, v, 3, width);
    out[4 * n + t] = __shfl_xor_sync(0xffffffffu, v, 1, width);
    out[5 * n + t] = __shfl_xor_sync(0xffffffffu, v, 12, width);         // may leave the segment
    out[6 * n + t] = __shfl_up_sync(0xffffffffu, v, 1);
    out[7 * n + t] = __shfl_down_sync(0xffffffffu, v, 16);
}
""",
)


def _shfl_expected(v: np.ndarray, width: int) -> np.ndarray:
    src = np.array([(lane * 7 + 3) % 32 for lane in range(32)])
    idx_var = v.reshape(-1, 32)[:, src].ravel()
    return np.concatenate(
        [
            idx_var,
            shfl_oracle(v, "idx", 5, width),
            shfl_oracle(v, "up", 3, width),
            shfl_oracle(v, "down", 3, width),
            shfl_oracle(v, "bfly", 1, width),
            shfl_oracle(v, "bfly", 12, width),
            shfl_oracle(v, "up", 1, 32),
            shfl_oracle(v, "down", 16, 32),
        ]
    )


@both_compilers
def test_shfl_variants(compiler: str) -> None:
    v = rng(20).integers(-(2**31), 2**31, 128, dtype=np.int64).astype(np.int32)
    for width in (32, 16, 8, 4):
        (_, out) = run(SHFL, compiler, "shfl_all", 2, 64, v, np.zeros(8 * 128, np.int32), np.int32(width))
        assert_exact(out, _shfl_expected(v, width))


SHFL64 = kernel(
    "warp.shfl_64bit_and_partial_mask",
    r"""
extern "C" __global__ void shfl64(const double* in, double* out, const long long* li, long long* lo) {
    int t = threadIdx.x;
    double d = in[t];
    // Butterfly all-reduce in double: each step shuffles the two 32-bit halves.
    for (int m = 16; m > 0; m >>= 1) d += __shfl_xor_sync(0xffffffffu, d, m);
    out[t] = d;
    lo[t] = __shfl_sync(0xffffffffu, li[t], 31 - t % 32);
}
extern "C" __global__ void shfl_partial(const int* in, int* out) {
    int t = threadIdx.x;
    int v = in[t];
    int r = -1;
    if (t < 16) {
        // Only the low half-warp participates; mask names exactly those lanes.
        r = __shfl_sync(0x0000ffffu, v, 15 - t);
    } else {
        r = __shfl_down_sync(0xffff0000u, v, 2, 16);
    }
    out[t] = r;
}
""",
)


@both_compilers
def test_shfl_64bit_and_partial_mask(compiler: str) -> None:
    r = rng(21)
    d = r.integers(-1000, 1000, 64).astype(np.float64) * 0.25  # exact sums in any order
    li = r.integers(-(2**63), 2**63, 64, dtype=np.int64)
    (_, out, _, lo) = run(SHFL64, compiler, "shfl64", 1, 64, d, np.zeros(64), li, np.zeros(64, np.int64))
    assert_exact(out, np.repeat(d.reshape(2, 32).sum(axis=1), 32))
    assert_exact(lo, li.reshape(2, 32)[:, ::-1].ravel())
    v = r.integers(0, 1000, 32).astype(np.int32)
    (_, o2) = run(SHFL64, compiler, "shfl_partial", 1, 32, v, np.zeros(32, np.int32))
    exp = np.empty(32, np.int32)
    exp[:16] = v[:16][::-1]
    exp[16:] = shfl_oracle(v, "down", 2, 16)[16:]
    assert_exact(o2, exp)


VOTE = kernel(
    "warp.vote_ballot_activemask",
    r"""
extern "C" __global__ void vote(const int* in, unsigned* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int n = gridDim.x * blockDim.x;
    int v = in[t];
    out[0 * n + t] = __ballot_sync(0xffffffffu, v > 0);
    out[1 * n + t] = __any_sync(0xffffffffu, v > 900);
    out[2 * n + t] = __all_sync(0xffffffffu, v > -1000);
    out[3 * n + t] = __uni_sync(0xffffffffu, v > 0);
    unsigned m = 0xdeadbeefu, b = 0xdeadbeefu;
    if (v % 3 == 0) {                         // divergent: only some lanes are active here
        m = __activemask();
        b = __ballot_sync(m, v > 0);
    }
    out[4 * n + t] = m;
    out[5 * n + t] = b;
}
""",
)


@both_compilers
def test_vote_ballot_activemask(compiler: str) -> None:
    r = rng(22)
    v = r.integers(-1000, 1000, 96).astype(np.int32)
    v[32:64] = np.abs(v[32:64]) + 1  # warp 1: all positive -> uni/all true
    v[64:96] = -np.abs(v[64:96]) - 1  # warp 2: all negative
    (_, out) = run(VOTE, compiler, "vote", 1, 96, v, np.zeros(6 * 96, np.uint32))
    out = out.reshape(6, 96)
    exp = np.zeros((6, 96), np.uint32)
    for w in range(3):
        s = slice(32 * w, 32 * w + 32)
        vw = v[s]
        bits = lambda p: np.uint32(sum(1 << i for i in range(32) if p[i]))  # noqa: E731
        exp[0, s] = bits(vw > 0)
        exp[1, s] = np.uint32(np.any(vw > 900))
        exp[2, s] = np.uint32(np.all(vw > -1000))
        exp[3, s] = np.uint32(np.all(vw > 0) or np.all(vw <= 0))
        div = vw % 3 == 0  # C's % on negatives: sign follows dividend, zero test unaffected
        m = bits(div)
        exp[4, s] = np.where(div, m, np.uint32(0xDEADBEEF))
        exp[5, s] = np.where(div, bits(div & (vw > 0)), np.uint32(0xDEADBEEF))
    assert_exact(out, exp)


MATCH = kernel(
    "warp.match_any_all",
    r"""
extern "C" __global__ void match(const int* in, const long long* in64, unsigned* out) {
    int t = threadIdx.x;
    int n = blockDim.x;
    int pred = -1;
    out[0 * n + t] = __match_any_sync(0xffffffffu, in[t]);
    out[1 * n + t] = __match_all_sync(0xffffffffu, in[t], &pred);
    out[2 * n + t] = pred;
    out[3 * n + t] = __match_any_sync(0xffffffffu, in64[t]);
    out[4 * n + t] = __match_all_sync(0xffffffffu, in64[t], &pred);
    out[5 * n + t] = pred;
}
""",
)


@both_compilers
def test_match_any_all(compiler: str) -> None:
    r = rng(23)
    v = r.integers(0, 5, 64).astype(np.int32)
    v[32:] = 7  # warp 1 uniform
    v64 = (r.integers(0, 3, 64).astype(np.int64) << 40) + 5  # differ only in the high word
    v64[32:] = -3
    (_, _, out) = run(MATCH, compiler, "match", 1, 64, v, v64, np.zeros(6 * 64, np.uint32))
    out = out.reshape(6, 64)
    exp = np.zeros((6, 64), np.uint32)
    for w in range(2):
        s = slice(32 * w, 32 * w + 32)
        for k, vals in ((0, v[s]), (3, v64[s])):
            masks = [sum(1 << j for j in range(32) if vals[j] == vals[i]) for i in range(32)]
            exp[k, s] = masks
            uniform = bool(np.all(vals == vals[0]))
            exp[k + 1, s] = FULL if uniform else 0
            exp[k + 2, s] = 1 if uniform else 0
    assert_exact(out, exp)


REDUX = kernel(
    "warp.redux_sync",
    r"""
extern "C" __global__ void redux(const int* in, unsigned* uout, int* sout) {
    int t = threadIdx.x;
    int n = blockDim.x;
    int v = in[t];
    unsigned u = (unsigned)v;
    uout[0 * n + t] = __reduce_add_sync(0xffffffffu, u);
    uout[1 * n + t] = __reduce_min_sync(0xffffffffu, u);
    uout[2 * n + t] = __reduce_max_sync(0xffffffffu, u);
    uout[3 * n + t] = __reduce_and_sync(0xffffffffu, u);
    uout[4 * n + t] = __reduce_or_sync(0xffffffffu, u);
    uout[5 * n + t] = __reduce_xor_sync(0xffffffffu, u);
    sout[0 * n + t] = __reduce_add_sync(0xffffffffu, v);
    sout[1 * n + t] = __reduce_min_sync(0xffffffffu, v);
    sout[2 * n + t] = __reduce_max_sync(0xffffffffu, v);
    int part = 12345;
    if ((t % 32) < 20) part = __reduce_min_sync(0x000fffffu, v);   // lanes 0..19 only
    sout[3 * n + t] = part;
}
""",
)


@both_compilers
def test_redux_sync(compiler: str) -> None:
    v = rng(24).integers(-(2**31), 2**31, 64, dtype=np.int64).astype(np.int32)
    (_, uo, so) = run(
        REDUX, compiler, "redux", 1, 64, v, np.zeros(6 * 64, np.uint32), np.zeros(4 * 64, np.int32)
    )
    u = v.view(np.uint32).reshape(2, 32)
    s = v.reshape(2, 32)
    rep = lambda x: np.repeat(np.asarray(x), 32)  # noqa: E731
    exp_u = (
        np.stack(
            [
                rep((u.astype(np.uint64).sum(axis=1) % 2**32).astype(np.uint32)),
                rep(u.min(axis=1)),
                rep(u.max(axis=1)),
                rep(np.bitwise_and.reduce(u, axis=1)),
                rep(np.bitwise_or.reduce(u, axis=1)),
                rep(np.bitwise_xor.reduce(u, axis=1)),
            ]
        )
        .astype(np.uint32)
        .ravel()
    )
    assert_exact(uo, exp_u)
    part = np.full((2, 32), 12345, np.int32)
    part[:, :20] = s[:, :20].min(axis=1, keepdims=True)
    exp_s = (
        np.stack(
            [
                rep((s.astype(np.int64).sum(axis=1) % 2**32).astype(np.uint32).view(np.int32)),
                rep(s.min(axis=1)),
                rep(s.max(axis=1)),
                part.ravel(),
            ]
        )
        .astype(np.int32)
        .ravel()
    )
    assert_exact(so, exp_s)
