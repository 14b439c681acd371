# Conformance: f32/f64 floating point: IEEE rounding-mode intrinsics (add/sub/mul/div/fma/sqrt/rcp
# in rn/rz/ru/rd, checked bit-exactly against Fraction oracles), NaN and unordered comparisons,
# fmin/fmax with NaN, saturate, integer rounding (cvt.rni/rzi/rmi/rpi.f32.f32), flush-to-zero,
# fast approximate intrinsics under --use_fast_math (documented tolerances), and libdevice math.
"""Floating-point kernels against exact or tolerance-documented NumPy oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import (
    MODES,
    assert_close,
    assert_exact,
    assert_ulp,
    binop_exact,
    both_compilers,
    fma_exact,
    kernel,
    rcp_exact,
    rng,
    run,
    sqrt_exact,
)


def float_inputs(seed: int, n: int, dtype: type, emin: int, emax: int, wide_frac: float = 0.2) -> np.ndarray:
    """Random floats: most with exponents in [-20, 20], some across [emin, emax], plus specials."""
    r = rng(seed)
    mant = r.uniform(1, 2, n)
    exp = r.integers(-20, 21, n)
    wide = r.random(n) < wide_frac
    exp[wide] = r.integers(emin, emax + 1, int(wide.sum()))
    sign = r.choice([-1.0, 1.0], n)
    with np.errstate(over="ignore", under="ignore"):
        x = (sign * mant * np.ldexp(1.0, exp)).astype(dtype)
    fi = np.finfo(dtype)
    specials = [
        0.0,
        -0.0,
        np.inf,
        -np.inf,
        np.nan,
        float(fi.max),
        -float(fi.max),
        float(fi.smallest_subnormal),
        -float(fi.tiny),
        1.0,
        -1.0,
        3.0,
    ]
    x[: len(specials)] = np.array(specials, dtype=dtype)
    return x


ROUND_F32 = kernel(
    "float.f32_rounding_intrinsics",
    r"""
extern "C" __global__ void fround(int n, const float* a, const float* b, const float* c, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], z = c[i];
    float* r = o + i;
    r[0 * n] = __fadd_rn(x, y);  r[1 * n] = __fadd_rz(x, y);
    r[2 * n] = __fadd_ru(x, y);  r[3 * n] = __fadd_rd(x, y);
    r[4 * n] = __fsub_rn(x, y);  r[5 * n] = __fsub_rz(x, y);
    r[6 * n] = __fsub_ru(x, y);  r[7 * n] = __fsub_rd(x, y);
    r[8 * n] = __fmul_rn(x, y);  r[9 * n] = __fmul_rz(x, y);
    r[10 * n] = __fmul_ru(x, y);  r[11 * n] = __fmul_rd(x, y);
    r[12 * n] = __fdiv_rn(x, y);  r[13 * n] = __fdiv_rz(x, y);
    r[14 * n] = __fdiv_ru(x, y);  r[15 * n] = __fdiv_rd(x, y);
    r[16 * n] = __fmaf_rn(x, y, z); r[17 * n] = __fmaf_rz(x, y, z);
    r[18 * n] = __fmaf_ru(x, y, z); r[19 * n] = __fmaf_rd(x, y, z);
    r[20 * n] = __fsqrt_rn(x);  r[21 * n] = __fsqrt_rz(x);
    r[22 * n] = __fsqrt_ru(x);  r[23 * n] = __fsqrt_rd(x);
    r[24 * n] = __frcp_rn(x);  r[25 * n] = __frcp_rz(x);  r[26 * n] = __frcp_ru(x);  r[27 * n] = __frcp_rd(x);
    r[28 * n] = fmaf(x, y, z);   // single rounding, same as __fmaf_rn
}
""",
)


@both_compilers
def test_f32_rounding_intrinsics(compiler: str) -> None:
    n = 256
    a = float_inputs(50, n, np.float32, -149, 127)
    b = float_inputs(51, n, np.float32, -149, 127)
    c = float_inputs(52, n, np.float32, -149, 127)
    b[:12] = b[12:24]  # pair the specials in a with ordinary values too
    c[: n // 2] *= np.float32(1e-3)  # make a*b and c comparable for some, so fma cancels
    outs = run(ROUND_F32, compiler, "fround", 1, 256, np.int32(n), a, b, c, np.zeros(29 * n, np.float32))
    got = outs[3].reshape(29, n)
    k = 0
    for op in ("add", "sub", "mul", "div"):
        for mode in MODES:
            assert_exact(got[k], binop_exact(op, a, b, mode))
            k += 1
    for mode in MODES:
        assert_exact(got[k], fma_exact(a, b, c, mode))
        k += 1
    for mode in MODES:
        assert_exact(got[k], sqrt_exact(a, mode))
        k += 1
    for mode in MODES:
        assert_exact(got[k], rcp_exact(a, mode))
        k += 1
    assert_exact(got[28], fma_exact(a, b, c, "rn"))


ROUND_F64 = kernel(
    "float.f64_rounding_intrinsics",
    r"""
extern "C" __global__ void dround(int n, const double* a, const double* b, const double* c, double* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i], z = c[i];
    double* r = o + i;
    r[0 * n] = __dadd_rn(x, y);  r[1 * n] = __dadd_rz(x, y);
    r[2 * n] = __dadd_ru(x, y);  r[3 * n] = __dadd_rd(x, y);
    r[4 * n] = __dsub_rn(x, y);  r[5 * n] = __dsub_rz(x, y);
    r[6 * n] = __dsub_ru(x, y);  r[7 * n] = __dsub_rd(x, y);
    r[8 * n] = __dmul_rn(x, y);  r[9 * n] = __dmul_rz(x, y);
    r[10 * n] = __dmul_ru(x, y);  r[11 * n] = __dmul_rd(x, y);
    r[12 * n] = __ddiv_rn(x, y);  r[13 * n] = __ddiv_rz(x, y);
    r[14 * n] = __ddiv_ru(x, y);  r[15 * n] = __ddiv_rd(x, y);
    r[16 * n] = __fma_rn(x, y, z); r[17 * n] = __fma_rz(x, y, z);
    r[18 * n] = __fma_ru(x, y, z); r[19 * n] = __fma_rd(x, y, z);
    r[20 * n] = __dsqrt_rn(x);  r[21 * n] = __dsqrt_rz(x);
    r[22 * n] = __dsqrt_ru(x);  r[23 * n] = __dsqrt_rd(x);
    r[24 * n] = __drcp_rn(x);  r[25 * n] = __drcp_rz(x);  r[26 * n] = __drcp_ru(x);  r[27 * n] = __drcp_rd(x);
}
""",
)


@both_compilers
def test_f64_rounding_intrinsics(compiler: str) -> None:
    n = 160
    a = float_inputs(53, n, np.float64, -1074, 1023)
    b = float_inputs(54, n, np.float64, -1074, 1023)
    c = float_inputs(55, n, np.float64, -1074, 1023)
    b[:12] = b[12:24]
    outs = run(ROUND_F64, compiler, "dround", 1, 160, np.int32(n), a, b, c, np.zeros(28 * n))
    got = outs[3].reshape(28, n)
    k = 0
    for op in ("add", "sub", "mul", "div"):
        for mode in MODES:
            assert_exact(got[k], binop_exact(op, a, b, mode))
            k += 1
    for mode in MODES:
        assert_exact(got[k], fma_exact(a, b, c, mode))
        k += 1
    for mode in MODES:
        assert_exact(got[k], sqrt_exact(a, mode))
        k += 1
    for mode in MODES:
        assert_exact(got[k], rcp_exact(a, mode))
        k += 1


NAN_CMP = kernel(
    "float.nan_unordered_compare_minmax",
    r"""
extern "C" __global__ void nancmp(int n, const float* a, const float* b, const double* da, const double* db,
                                  unsigned* bits, float* fo, double* dout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    double p = da[i], q = db[i];
    unsigned v = 0;
    v |= (x < y) << 0;   v |= (x <= y) << 1;  v |= (x > y) << 2;   v |= (x >= y) << 3;
    v |= (x == y) << 4;  v |= (x != y) << 5;                       // != is unordered-or-not-equal
    v |= (!(x < y)) << 6;  v |= (!(x <= y)) << 7;                   // setp.geu / setp.gtu
    v |= (!(x > y)) << 8;  v |= (!(x >= y)) << 9;                   // setp.leu / setp.ltu
    v |= (!(x == y)) << 10;
    v |= (isnan(x) != 0) << 11;  v |= (isnan(x) || isnan(y)) << 12;  // setp.nan
    v |= (!isnan(x) && !isnan(y)) << 13;                             // setp.num
    v |= (isinf(x) != 0) << 14;  v |= (isfinite(x) != 0) << 15;  v |= (signbit(x) != 0) << 16;
    v |= (p < q) << 17;  v |= (!(p >= q)) << 18;  v |= (p != q) << 19;  v |= (isnan(p) != 0) << 20;
    v |= (x == x) << 21;                                              // false only for NaN
    bits[i] = v;
    fo[5 * i + 0] = fmaxf(x, y);        // NaN-ignoring max.f32
    fo[5 * i + 1] = fminf(x, y);
    fo[5 * i + 2] = copysignf(2.5f, x);
    fo[5 * i + 3] = fabsf(x);
    fo[5 * i + 4] = x < y ? x : y;      // selp on an ordered compare: NaN picks y
    dout[2 * i + 0] = fmax(p, q);
    dout[2 * i + 1] = fmin(p, q);
}
""",
)


@both_compilers
def test_nan_unordered_compare_minmax(compiler: str) -> None:
    xs = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, 1e-40, -3.0]
    ys = [np.nan, np.inf, -np.inf, 1.0, 2.5, -3.0, 1e-40]  # no zeros: min/max of ±0 is not compared
    a = np.array([x for x in xs for _ in ys], np.float32)
    b = np.array([y for _ in xs for y in ys], np.float32)
    da, db = a.astype(np.float64), b.astype(np.float64)
    n = len(a)
    outs = run(
        NAN_CMP,
        compiler,
        "nancmp",
        1,
        128,
        np.int32(n),
        a,
        b,
        da,
        db,
        np.zeros(n, np.uint32),
        np.zeros(5 * n, np.float32),
        np.zeros(2 * n),
    )
    bits, fo, dout = outs[4], outs[5].reshape(n, 5), outs[6].reshape(n, 2)
    with np.errstate(invalid="ignore"):
        preds = [
            a < b,
            a <= b,
            a > b,
            a >= b,
            a == b,
            a != b,
            ~(a < b),
            ~(a <= b),
            ~(a > b),
            ~(a >= b),
            ~(a == b),
            np.isnan(a),
            np.isnan(a) | np.isnan(b),
            ~np.isnan(a) & ~np.isnan(b),
            np.isinf(a),
            np.isfinite(a),
            np.signbit(a),
            da < db,
            ~(da >= db),
            da != db,
            np.isnan(da),
            a == a,
        ]
    exp_bits = sum(p.astype(np.uint32) << np.uint32(k) for k, p in enumerate(preds)).astype(np.uint32)
    assert_exact(bits, exp_bits)
    assert_exact(fo[:, 0].copy(), np.fmax(a, b))
    assert_exact(fo[:, 1].copy(), np.fmin(a, b))
    assert_exact(fo[:, 2].copy(), np.copysign(np.float32(2.5), a))
    assert_exact(fo[:, 3].copy(), np.abs(a))
    with np.errstate(invalid="ignore"):
        assert_exact(fo[:, 4].copy(), np.where(a < b, a, b))
    assert_exact(dout[:, 0].copy(), np.fmax(da, db))
    assert_exact(dout[:, 1].copy(), np.fmin(da, db))


def round_half_away(x: np.ndarray) -> np.ndarray:
    """C roundf/round: halfway cases away from zero, exact for every float (keeps -0)."""
    t = np.trunc(x)
    with np.errstate(invalid="ignore"):  # inf - inf for infinite inputs; NaN flows through
        frac = np.abs(x - t)  # exact: the fraction of a float is representable
        return np.where(frac >= 0.5, t + np.sign(x), t).astype(x.dtype)


INT_ROUND = kernel(
    "float.integer_rounding_and_saturate",
    r"""
extern "C" __global__ void iround(int n, const float* a, const double* d, float* o, double* od) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    double y = d[i];
    o[7 * i + 0] = floorf(x);      // cvt.rmi.f32.f32
    o[7 * i + 1] = ceilf(x);       // cvt.rpi.f32.f32
    o[7 * i + 2] = truncf(x);      // cvt.rzi.f32.f32
    o[7 * i + 3] = rintf(x);       // cvt.rni.f32.f32
    o[7 * i + 4] = roundf(x);      // half away from zero: a short instruction sequence
    o[7 * i + 5] = __saturatef(x); // clamp to [0, 1], NaN -> 0
    o[7 * i + 6] = __saturatef(x * 0.75f);   // can fold into mul.sat.f32
    od[5 * i + 0] = floor(y);
    od[5 * i + 1] = ceil(y);
    od[5 * i + 2] = trunc(y);
    od[5 * i + 3] = rint(y);
    od[5 * i + 4] = round(y);
}
""",
)


@both_compilers
def test_integer_rounding_and_saturate(compiler: str) -> None:
    r = rng(56)
    halves = np.arange(-8, 8) + 0.5
    a = np.concatenate(
        [
            halves,
            r.uniform(-100, 100, 200),
            r.uniform(-2, 2, 50),
            [0.49999997, -0.49999997, 8388609.0, 1e30, -0.0, 0.0],
            [np.nan, np.inf, -np.inf, 1.0, 0.99999994, 1.0000001],
        ]
    ).astype(np.float32)
    d = np.concatenate([halves, [0.49999999999999994, 4503599627370497.0, -0.0, np.nan, np.inf]])
    d = np.concatenate([d, r.uniform(-1e6, 1e6, len(a) - len(d))])  # same length as a
    outs = run(
        INT_ROUND,
        compiler,
        "iround",
        2,
        256,
        np.int32(len(a)),
        a,
        d,
        np.zeros(7 * len(a), np.float32),
        np.zeros(5 * len(d)),
    )
    o = outs[2].reshape(-1, 7)[: len(a)]
    od = outs[3].reshape(-1, 5)[: len(d)]
    assert_exact(o[:, 0].copy(), np.floor(a))
    assert_exact(o[:, 1].copy(), np.ceil(a))
    assert_exact(o[:, 2].copy(), np.trunc(a))
    assert_exact(o[:, 3].copy(), np.rint(a))
    assert_exact(o[:, 4].copy(), round_half_away(a))
    sat = np.where(np.isnan(a), np.float32(0), np.clip(a, np.float32(0), np.float32(1))).astype(np.float32)
    assert_exact(np.abs(o[:, 5]), np.abs(sat))  # sign of a saturated -0 is not pinned down
    x75 = binop_exact("mul", a, np.full_like(a, 0.75))
    sat75 = np.where(np.isnan(x75), np.float32(0), np.clip(x75, np.float32(0), np.float32(1))).astype(
        np.float32
    )
    assert_exact(np.abs(o[:, 6]), np.abs(sat75))
    assert_exact(od[:, 0].copy(), np.floor(d))
    assert_exact(od[:, 1].copy(), np.ceil(d))
    assert_exact(od[:, 2].copy(), np.trunc(d))
    assert_exact(od[:, 3].copy(), np.rint(d))
    assert_exact(od[:, 4].copy(), round_half_away(d))


FTZ_SRC = r"""
extern "C" __global__ void ftz_ops(int n, const float* a, const float* b, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    o[3 * i + 0] = x * y;
    o[3 * i + 1] = x + y;
    o[3 * i + 2] = x * 0.5f;
}
"""
FTZ_ON = kernel("float.ftz_on", FTZ_SRC, options=("--ftz=true",))
FTZ_OFF = kernel("float.ftz_off", FTZ_SRC, options=("--ftz=false",))


def _flush(x: np.ndarray) -> np.ndarray:
    tiny = np.finfo(np.float32).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.float32(0), x), x).astype(np.float32)


@both_compilers
def test_flush_to_zero(compiler: str) -> None:
    r = rng(57)
    n = 200
    sub = np.float32(2.0**-149)
    # Operand classes chosen so no exact result lies near 2^-126, where flushing before or after
    # rounding could differ: subnormal*1, small*small (< 2^-127), subnormal+(-subnormal), normal ops.
    a = np.concatenate(
        [
            r.integers(1, 2**22, 50) * sub,
            (r.uniform(1, 2, 50) * 2.0**-66),
            r.integers(1, 2**20, 50) * sub,
            r.uniform(-100, 100, 50),
        ]
    ).astype(np.float32)
    b = np.concatenate(
        [
            np.ones(50),
            -(r.uniform(1, 2, 50) * 2.0**-64),
            -(r.integers(1, 2**20, 50) * sub),
            r.uniform(-100, 100, 50),
        ]
    ).astype(np.float32)
    a[::7] *= -1
    args = (np.int32(n), a, b, np.zeros(3 * n, np.float32))
    off = run(FTZ_OFF, compiler, "ftz_ops", 1, 256, *args)[2].reshape(n, 3)
    on = run(FTZ_ON, compiler, "ftz_ops", 1, 256, *args)[2].reshape(n, 3)
    half = np.full(n, 0.5, np.float32)
    for k, (op, y) in enumerate((("mul", b), ("add", b), ("mul", half))):
        assert_exact(off[:, k].copy(), binop_exact(op, a, y))
        # ftz: subnormal inputs become sign-preserving zeros, then subnormal results do too.
        assert_exact(on[:, k].copy(), _flush(binop_exact(op, _flush(a), _flush(y))))


FAST = kernel(
    "float.fast_math_approx",
    r"""
extern "C" __global__ void fast(int n, const float* a, const float* b, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float* r = o + i;
    r[0 * n] = __expf(x);          // ex2.approx.ftz.f32 after a multiply by log2(e)
    r[1 * n] = exp2f(x);           // ex2.approx.ftz.f32
    r[2 * n] = __logf(y);          // lg2.approx.ftz.f32 times ln(2)
    r[3 * n] = log2f(y);           // lg2.approx.ftz.f32
    r[4 * n] = __sinf(x * 0.31f);  // sin.approx.ftz.f32 on [-pi, pi]
    r[5 * n] = __cosf(x * 0.31f);  // cos.approx.ftz.f32
    r[6 * n] = rsqrtf(y);          // rsqrt.approx.ftz.f32
    r[7 * n] = tanhf(x * 0.4f);    // tanh.approx.f32
    r[8 * n] = __fdividef(x, y);   // div.approx.ftz.f32
    r[9 * n] = sqrtf(y);           // sqrt.approx.ftz.f32
    r[10 * n] = x / y;             // div.approx / div.full under --use_fast_math
    r[11 * n] = 1.0f / y;          // rcp.approx.ftz.f32
}
""",
    options=("--use_fast_math",),
)


@both_compilers
def test_fast_math_approx(compiler: str) -> None:
    """Tolerances are the CUDA Programming Guide's maximum errors for each intrinsic (plus the
    0.5 ulp the float64 oracle's final rounding may add)."""
    n = 512
    r = rng(58)
    x = r.uniform(-10, 10, n).astype(np.float32)  # x*0.31 stays inside [-pi, pi]
    # Half of y inside [0.5, 2] (absolute-error regime), half well outside it (ulp regime).
    far = r.choice([-1.0, 1.0], n - n // 2) * r.uniform(1.5, 20, n - n // 2)
    y = np.concatenate([r.uniform(0.5, 2, n // 2), np.exp(far)]).astype(np.float32)
    outs = run(FAST, compiler, "fast", 2, 256, np.int32(n), x, y, np.zeros(12 * n, np.float32))
    got = outs[2].reshape(12, n)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    x31 = (x * np.float32(0.31)).astype(np.float64)
    x04 = (x * np.float32(0.4)).astype(np.float64)
    f32 = np.float32
    # __expf: 2 + floor(|1.173 x|) ulp.
    assert_ulp(got[0], np.exp(xd).astype(f32), 2.5 + np.floor(np.abs(1.173 * xd)))
    # exp2f fast path: 2 ulp.
    assert_ulp(got[1], np.exp2(xd).astype(f32), 2.5)
    # __logf / log2f: absolute error 2^-21.41 on [0.5, 2], otherwise 3 ulp.
    inside = (y >= 0.5) & (y <= 2)
    assert_close(got[2][inside], np.log(yd[inside]).astype(f32), atol=2.0**-21.41 + 2.0**-25)
    assert_ulp(got[2][~inside], np.log(yd[~inside]).astype(f32), 3.5)
    assert_close(got[3][inside], np.log2(yd[inside]).astype(f32), atol=2.0**-21.41 + 2.0**-25)
    assert_ulp(got[3][~inside], np.log2(yd[~inside]).astype(f32), 3.5)
    # __sinf / __cosf on [-pi, pi]: absolute error 2^-21.41.
    assert_close(got[4], np.sin(x31).astype(f32), atol=2.0**-21.41 + 2.0**-25)
    assert_close(got[5], np.cos(x31).astype(f32), atol=2.0**-21.41 + 2.0**-25)
    # rsqrtf: 2 ulp.
    assert_ulp(got[6], (1 / np.sqrt(yd)).astype(f32), 2.5)
    # tanh.approx.f32: maximum relative error 2^-10.987 (PTX ISA).
    assert_close(got[7], np.tanh(x04).astype(f32), rtol=2.0**-10.9)
    # __fdividef and fast x/y: 2 ulp for |y| in [2^-126, 2^126].
    assert_ulp(got[8], (xd / yd).astype(f32), 2.5)
    # fast sqrtf: 1 ulp in the guide; allow 2.
    assert_ulp(got[9], np.sqrt(yd).astype(f32), 2.5)
    assert_ulp(got[10], (xd / yd).astype(f32), 2.5)
    # rcp.approx: 1 ulp.
    assert_ulp(got[11], (1 / yd).astype(f32), 1.5)


LIBM_F32 = kernel(
    "float.libdevice_f32_precise",
    r"""
extern "C" __global__ void libm32(int n, const float* a, const float* b, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float* r = o + i;
    r[0 * n] = expf(x);
    r[1 * n] = logf(y);
    r[2 * n] = sinf(x * 1000.0f);      // large arguments take the slow reduction path
    r[3 * n] = cosf(x);
    r[4 * n] = tanf(x * 0.1f);
    r[5 * n] = powf(y, x * 0.25f);
    r[6 * n] = erff(x * 0.3f);
    r[7 * n] = atan2f(x, y - 10.0f);
    r[8 * n] = cbrtf(x);
    r[9 * n] = log1pf(y);
}
""",
)


@both_compilers
def test_libdevice_f32_precise(compiler: str) -> None:
    """Tolerances: the CUDA Programming Guide's maximum ulp error per function, plus 1 for the
    float64 oracle's own rounding to float32."""
    n = 400
    r = rng(59)
    x = r.uniform(-10, 10, n).astype(np.float32)
    y = np.exp(r.uniform(-10, 10, n)).astype(np.float32)
    outs = run(LIBM_F32, compiler, "libm32", 2, 256, np.int32(n), x, y, np.zeros(10 * n, np.float32))
    got = outs[2].reshape(10, n)
    f32 = np.float32
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    big = (x * f32(1000)).astype(np.float64)
    assert_ulp(got[0], np.exp(xd).astype(f32), 3)  # expf: 2 ulp
    assert_ulp(got[1], np.log(yd).astype(f32), 2)  # logf: 1 ulp
    assert_ulp(got[2], np.sin(big).astype(f32), 3)  # sinf: 2 ulp
    assert_ulp(got[3], np.cos(xd).astype(f32), 3)  # cosf: 2 ulp
    assert_ulp(got[4], np.tan((x * f32(0.1)).astype(np.float64)).astype(f32), 5)  # tanf: 4 ulp
    assert_ulp(got[5], np.power(yd, (x * f32(0.25)).astype(np.float64)).astype(f32), 5)  # powf: 4 ulp
    assert_ulp(got[6], _erf((x * f32(0.3)).astype(np.float64)).astype(f32), 3)  # erff: 2 ulp
    assert_ulp(got[7], np.arctan2(xd, (y - f32(10)).astype(np.float64)).astype(f32), 4)  # atan2f: 3 ulp
    assert_ulp(got[8], np.cbrt(xd).astype(f32), 2)  # cbrtf: 1 ulp
    assert_ulp(got[9], np.log1p(yd).astype(f32), 2)  # log1pf: 1 ulp


def _erf(x: np.ndarray) -> np.ndarray:
    import math

    return np.array([math.erf(v) for v in x.tolist()])


LIBM_F64 = kernel(
    "float.libdevice_f64",
    r"""
extern "C" __global__ void libm64(int n, const double* a, const double* b, double* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    double* r = o + i;
    r[0 * n] = exp(x);
    r[1 * n] = log(y);
    r[2 * n] = sin(x);
    r[3 * n] = cos(x * 100.0);
    r[4 * n] = tanh(x * 0.2);
    r[5 * n] = pow(y, x * 0.1);
    r[6 * n] = atan2(x, y);
    r[7 * n] = cbrt(y);
    r[8 * n] = sqrt(y);
    r[9 * n] = x / y;
}
""",
)


@both_compilers
def test_libdevice_f64(compiler: str) -> None:
    """Tolerances: CUDA Programming Guide maximum ulp error + 1 for the NumPy oracle itself."""
    n = 300
    r = rng(60)
    x = r.uniform(-20, 20, n)
    y = np.exp(r.uniform(-30, 30, n))
    outs = run(LIBM_F64, compiler, "libm64", 2, 256, np.int32(n), x, y, np.zeros(10 * n))
    got = outs[2].reshape(10, n)
    assert_ulp(got[0], np.exp(x), 2)  # exp: 1 ulp
    assert_ulp(got[1], np.log(y), 2)  # log: 1 ulp
    assert_ulp(got[2], np.sin(x), 3)  # sin: 2 ulp
    assert_ulp(got[3], np.cos(x * 100.0), 3)  # cos: 2 ulp
    assert_ulp(got[4], np.tanh(x * 0.2), 2)  # tanh: 1 ulp
    assert_ulp(got[5], np.power(y, x * 0.1), 3)  # pow: 2 ulp
    assert_ulp(got[6], np.arctan2(x, y), 3)  # atan2: 2 ulp
    assert_ulp(got[7], np.cbrt(y), 2)  # cbrt: 1 ulp
    assert_exact(got[8], np.sqrt(y))  # IEEE
    assert_exact(got[9], x / y)  # IEEE
