# Conformance: fp16 and bf16 through cuda_fp16.h / cuda_bf16.h: scalar and packed (x2) add/sub/
# mul/fma/max/min/neg/abs, NaN-propagating max, comparisons, and every float<->half/bf16 and
# half<->int conversion with its rounding mode. Oracles round exact rationals, so no double rounding.
"""Half-precision and bfloat16 kernels against exact NumPy / ml_dtypes oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import (
    BF16,
    MODES,
    assert_exact,
    assert_ulp,
    binop_exact,
    both_compilers,
    exact_float_op,
    float_to_int_sat,
    fma_exact,
    kernel,
    rng,
    run,
)


def half_inputs(seed: int, n: int, dtype: type = np.float16) -> np.ndarray:
    """Random values over the whole fp16 (or bf16) exponent range, plus specials."""
    r = rng(seed)
    lo, hi = (-24, 15) if dtype == np.float16 else (-133, 127)
    exp = np.where(r.random(n) < 0.7, r.integers(-6, 7, n), r.integers(lo, hi + 1, n))
    x = r.choice([-1.0, 1.0], n) * r.uniform(1, 2, n) * np.ldexp(1.0, exp)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.0, 0.5]
    x[: len(specials)] = specials
    out: np.ndarray = x.astype(np.float32).astype(dtype)  # bf16: via float32 (RNE), fine for inputs
    return out


HALF_SCALAR = kernel(
    "half.fp16_scalar_ops",
    r"""
#include <cuda_fp16.h>
extern "C" __global__ void hops(int n, const __half* a, const __half* b, const __half* c, __half* o,
                                unsigned* cmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half x = a[i], y = b[i], z = c[i];
    __half* r = o + i;
    r[0 * n] = __hadd(x, y);       // add.f16 (rn)
    r[1 * n] = __hsub(x, y);
    r[2 * n] = __hmul(x, y);
    r[3 * n] = __hfma(x, y, z);    // fma.rn.f16: one rounding
    r[4 * n] = __hneg(x);
    r[5 * n] = __habs(x);
    r[6 * n] = __hmax(x, y);       // NaN-ignoring
    r[7 * n] = __hmin(x, y);
    r[8 * n] = __hmax_nan(x, y);   // NaN-propagating
    r[9 * n] = __hdiv(x, y);
    r[10 * n] = __hadd_sat(x, y);  // clamp to [0, 1]
    unsigned v = 0;
    v |= __hlt(x, y) << 0;  v |= __hle(x, y) << 1;  v |= __hgt(x, y) << 2;  v |= __hge(x, y) << 3;
    v |= __heq(x, y) << 4;  v |= __hne(x, y) << 5;  v |= __hltu(x, y) << 6; v |= __hneu(x, y) << 7;
    v |= __hisnan(x) << 8;  v |= (__hisinf(x) != 0) << 9;
    cmp[i] = v;
}
""",
)


def _max_ignore_nan(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.fmax(x, y)


@both_compilers
def test_fp16_scalar_ops(compiler: str) -> None:
    n = 256
    a, b, c = half_inputs(70, n), half_inputs(71, n), half_inputs(72, n)
    b[:8] = b[8:16]
    b[20:40] = a[20:40]  # equal pairs for == / <=
    outs = run(
        HALF_SCALAR,
        compiler,
        "hops",
        1,
        256,
        np.int32(n),
        a,
        b,
        c,
        np.zeros(11 * n, np.float16),
        np.zeros(n, np.uint32),
    )
    got = outs[3].reshape(11, n)
    both_zero = (a == 0) & (b == 0)  # max/min of +-0 pairs is not pinned down; skip those
    assert_exact(got[0], binop_exact("add", a, b))
    assert_exact(got[1], binop_exact("sub", a, b))
    assert_exact(got[2], binop_exact("mul", a, b))
    assert_exact(got[3], fma_exact(a, b, c))
    assert_exact(got[4], -a)
    assert_exact(got[5], np.abs(a))
    assert_exact(got[6][~both_zero], np.fmax(a, b)[~both_zero])
    assert_exact(got[7][~both_zero], np.fmin(a, b)[~both_zero])
    assert_exact(got[8][~both_zero], np.maximum(a, b)[~both_zero])
    assert_ulp(got[9], binop_exact("div", a, b), 1)
    s = binop_exact("add", a, b)
    sat = np.where(np.isnan(s), np.float16(0), np.clip(s, np.float16(0), np.float16(1))).astype(np.float16)
    assert_exact(np.abs(got[10]), np.abs(sat))
    with np.errstate(invalid="ignore"):
        ordered_ne = (a != b) & ~np.isnan(a) & ~np.isnan(b)  # __hne is ordered: false when either is NaN
        preds = [a < b, a <= b, a > b, a >= b, a == b, ordered_ne, ~(a >= b), a != b, np.isnan(a), np.isinf(a)]
    exp_bits = sum(p.astype(np.uint32) << np.uint32(k) for k, p in enumerate(preds)).astype(np.uint32)
    assert_exact(outs[4], exp_bits)


HALF2 = kernel(
    "half.fp16x2_packed_ops",
    r"""
#include <cuda_fp16.h>
extern "C" __global__ void h2ops(int n2, const __half2* a, const __half2* b, const __half2* c, __half2* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n2) return;
    __half2 x = a[i], y = b[i], z = c[i];
    __half2* r = o + i;
    r[0 * n2] = __hadd2(x, y);      // add.f16x2
    r[1 * n2] = __hsub2(x, y);
    r[2 * n2] = __hmul2(x, y);
    r[3 * n2] = __hfma2(x, y, z);   // fma.rn.f16x2
    r[4 * n2] = __hneg2(x);
    r[5 * n2] = __habs2(x);
    r[6 * n2] = __hmax2(x, y);
    r[7 * n2] = __hlt2(x, y);       // 1.0 / 0.0 per lane
    r[8 * n2] = __lowhigh2highlow(x);   // swap halves
    r[9 * n2] = __halves2half2(__high2half(x), __low2half(y));
}
""",
)


@both_compilers
def test_fp16x2_packed_ops(compiler: str) -> None:
    n = 512  # halves; n // 2 half2 values
    a, b, c = half_inputs(73, n), half_inputs(74, n), half_inputs(75, n)
    b[:8] = b[8:16]
    outs = run(HALF2, compiler, "h2ops", 1, 256, np.int32(n // 2), a, b, c, np.zeros(10 * n, np.float16))
    got = outs[3].reshape(10, n)
    both_zero = (a == 0) & (b == 0)
    assert_exact(got[0], binop_exact("add", a, b))
    assert_exact(got[1], binop_exact("sub", a, b))
    assert_exact(got[2], binop_exact("mul", a, b))
    assert_exact(got[3], fma_exact(a, b, c))
    assert_exact(got[4], -a)
    assert_exact(got[5], np.abs(a))
    assert_exact(got[6][~both_zero], np.fmax(a, b)[~both_zero])
    with np.errstate(invalid="ignore"):
        assert_exact(got[7], (a < b).astype(np.float16))
    pa, pb = a.reshape(-1, 2), b.reshape(-1, 2)
    assert_exact(got[8], pa[:, ::-1].ravel())
    assert_exact(got[9], np.stack([pa[:, 1], pb[:, 0]], axis=1).ravel())


BF16_OPS = kernel(
    "half.bf16_scalar_and_packed_ops",
    r"""
#include <cuda_bf16.h>
extern "C" __global__ void bops(int n, const __nv_bfloat16* a, const __nv_bfloat16* b, const __nv_bfloat16* c,
                                __nv_bfloat16* o, unsigned* cmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 x = a[i], y = b[i], z = c[i];
    __nv_bfloat16* r = o + i;
    r[0 * n] = __hadd(x, y);
    r[1 * n] = __hsub(x, y);
    r[2 * n] = __hmul(x, y);
    r[3 * n] = __hfma(x, y, z);
    r[4 * n] = __hneg(x);
    r[5 * n] = __hmax(x, y);
    r[6 * n] = __hmin_nan(x, y);
    cmp[i] = __hlt(x, y) | (__hge(x, y) << 1) | (__hequ(x, y) << 2) | (__hisnan(x) << 3);
    if ((i & 1) == 0 && i + 1 < n) {
        __nv_bfloat162 x2 = __halves2bfloat162(x, a[i + 1]);
        __nv_bfloat162 y2 = __halves2bfloat162(y, b[i + 1]);
        __nv_bfloat162 z2 = __halves2bfloat162(z, c[i + 1]);
        __nv_bfloat162 s = __hadd2(x2, y2), m = __hmul2(x2, y2), f = __hfma2(x2, y2, z2);
        r[7 * n] = __low2bfloat16(s);  r[7 * n + 1] = __high2bfloat16(s);
        r[8 * n] = __low2bfloat16(m);  r[8 * n + 1] = __high2bfloat16(m);
        r[9 * n] = __low2bfloat16(f);  r[9 * n + 1] = __high2bfloat16(f);
    }
}
""",
)


@both_compilers
def test_bf16_scalar_and_packed_ops(compiler: str) -> None:
    n = 256
    a, b, c = half_inputs(76, n, BF16), half_inputs(77, n, BF16), half_inputs(78, n, BF16)
    b[:8] = b[8:16]
    b[20:30] = a[20:30]
    u16 = lambda v: v.view(np.uint16)  # noqa: E731  (bf16 travels as raw 16-bit words)
    outs = run(
        BF16_OPS,
        compiler,
        "bops",
        1,
        256,
        np.int32(n),
        u16(a),
        u16(b),
        u16(c),
        np.zeros(10 * n, np.uint16),
        np.zeros(n, np.uint32),
    )
    got = outs[3].view(BF16).reshape(10, n)
    both_zero = (a == 0) & (b == 0)
    add, mul, fma = binop_exact("add", a, b), binop_exact("mul", a, b), fma_exact(a, b, c)
    assert_exact(got[0], add)
    assert_exact(got[1], binop_exact("sub", a, b))
    assert_exact(got[2], mul)
    assert_exact(got[3], fma)
    assert_exact(got[4], -a)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    assert_exact(got[5][~both_zero], np.fmax(af, bf).astype(BF16)[~both_zero])
    assert_exact(got[6][~both_zero], np.minimum(af, bf).astype(BF16)[~both_zero])
    assert_exact(got[7], add)
    assert_exact(got[8], mul)
    assert_exact(got[9], fma)
    with np.errstate(invalid="ignore"):
        exp = (
            (af < bf).astype(np.uint32)
            | ((af >= bf).astype(np.uint32) << 1)
            | (((af == bf) | np.isnan(af) | np.isnan(bf)).astype(np.uint32) << 2)
            | (np.isnan(af).astype(np.uint32) << 3)
        )
    assert_exact(outs[4], exp.astype(np.uint32))


CONVERT = kernel(
    "half.conversions",
    r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void hcvt(int n, const float* f, const double* d, const int* k, const __half* h,
                                __half* oh, __nv_bfloat16* ob, float* of, int* oi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[i];
    oh[0 * n + i] = __float2half_rn(x);     // cvt.rn.f16.f32
    oh[1 * n + i] = __float2half_rz(x);
    oh[2 * n + i] = __float2half_ru(x);
    oh[3 * n + i] = __float2half_rd(x);
    oh[4 * n + i] = __double2half(d[i]);    // cvt.rn.f16.f64: one rounding, not via float
    oh[5 * n + i] = __int2half_rn(k[i]);
    oh[6 * n + i] = __int2half_rz(k[i]);
    oh[7 * n + i] = __int2half_ru(k[i]);
    oh[8 * n + i] = __int2half_rd(k[i]);
    ob[0 * n + i] = __float2bfloat16_rn(x);
    ob[1 * n + i] = __float2bfloat16_rz(x);
    ob[2 * n + i] = __float2bfloat16_ru(x);
    ob[3 * n + i] = __float2bfloat16_rd(x);
    ob[4 * n + i] = __double2bfloat16(d[i]);
    of[0 * n + i] = __half2float(h[i]);     // exact
    of[1 * n + i] = __bfloat162float(__float2bfloat16_rn(x));
    oi[0 * n + i] = __half2int_rn(h[i]);
    oi[1 * n + i] = __half2int_rz(h[i]);
    oi[2 * n + i] = __half2int_ru(h[i]);
    oi[3 * n + i] = __half2int_rd(h[i]);
    oi[4 * n + i] = (int)__half2short_rn(h[i]);
}
""",
)


@both_compilers
def test_half_conversions(compiler: str) -> None:
    n = 300
    r = rng(79)
    exp = r.integers(-30, 20, n)
    f = (r.choice([-1.0, 1.0], n) * r.uniform(1, 2, n) * np.ldexp(1.0, exp)).astype(np.float32)
    f[:10] = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65520.0, 1e6, 2.0**-25, 3.0 * 2.0**-26]
    f[10:14] = [3.3895314e38, -3.3895314e38, 1.0039062, 1.0019531]  # bf16 overflow / ties
    d = r.standard_normal(n) * np.ldexp(1.0, r.integers(-30, 17, n))
    d[0] = 1.0 + 2.0**-11 + 2.0**-40  # double rounding via float would give 1.0; correct is 1.0009766
    k = r.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    k[:40] = r.integers(-3000, 3000, 40)
    h = half_inputs(80, n)
    h[8:12] = [2.5, -2.5, 3.5, -0.5]
    outs = run(
        CONVERT,
        compiler,
        "hcvt",
        2,
        256,
        np.int32(n),
        f,
        d,
        k,
        h,
        np.zeros(9 * n, np.float16),
        np.zeros(5 * n, np.uint16),
        np.zeros(2 * n, np.float32),
        np.zeros(5 * n, np.int32),
    )
    oh = outs[4].reshape(9, n)
    ob = outs[5].view(BF16).reshape(5, n)
    of = outs[6].reshape(2, n)
    oi = outs[7].reshape(5, n)

    def conv(x: np.ndarray, dtype: object, mode: str) -> np.ndarray:
        return exact_float_op(
            lambda q: q, dtype, mode, x, special=lambda v: v, zero_sign=lambda v: bool(np.signbit(v))
        )

    for j, mode in enumerate(MODES):
        assert_exact(oh[j], conv(f, np.float16, mode))
        assert_exact(oh[5 + j], conv(k.astype(np.float64), np.float16, mode))
        assert_exact(ob[j], conv(f, BF16, mode))
    assert_exact(oh[4], conv(d, np.float16, "rn"))
    assert_exact(ob[4], conv(d, BF16, "rn"))
    assert_exact(of[0], h.astype(np.float32))
    assert_exact(of[1], conv(f, BF16, "rn").astype(np.float32))
    for j, mode in enumerate(MODES):
        assert_exact(oi[j], float_to_int_sat(h, np.int32, mode))
    assert_exact(oi[4], float_to_int_sat(h, np.int16, "rn").astype(np.int32))
