# Conformance: cvt between every scalar type pair used by CUDA code: float/double -> s32/u32/s64/
# u64 in rni/rzi/rpi/rmi (saturating, with the PTX NaN rule), integers -> float/double in rn/rz/
# rp/rm, double -> float in four modes, float -> double, 8/16-bit narrowing and sign extension,
# and bit reinterpretation (mov.b32/b64, hi/lo halves of doubles).
"""Conversion kernels against exact NumPy / Fraction oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import (
    MODES,
    assert_exact,
    both_compilers,
    exact_float_op,
    exact_int_to_float,
    float_to_int_sat,
    kernel,
    rng,
    run,
)

F2I = kernel(
    "cvt.float_to_int_all_modes",
    r"""
extern "C" __global__ void f2i(int n, const float* a, int* s32, unsigned* u32, long long* s64,
                               unsigned long long* u64) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    s32[0 * n + i] = __float2int_rn(x);  s32[1 * n + i] = __float2int_rz(x);
    s32[2 * n + i] = __float2int_ru(x);  s32[3 * n + i] = __float2int_rd(x);
    u32[0 * n + i] = __float2uint_rn(x); u32[1 * n + i] = __float2uint_rz(x);
    u32[2 * n + i] = __float2uint_ru(x); u32[3 * n + i] = __float2uint_rd(x);
    s64[0 * n + i] = __float2ll_rn(x);   s64[1 * n + i] = __float2ll_rz(x);
    s64[2 * n + i] = __float2ll_ru(x);   s64[3 * n + i] = __float2ll_rd(x);
    u64[0 * n + i] = __float2ull_rn(x);  u64[1 * n + i] = __float2ull_rz(x);
    u64[2 * n + i] = __float2ull_ru(x);  u64[3 * n + i] = __float2ull_rd(x);
}
""",
)


def _float_specials(dtype: type) -> list[float]:
    return [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999997,
        -0.9999999,
        np.nan,
        np.inf,
        -np.inf,
        2147483520.0,
        2147483648.0,
        -2147483648.0,
        -2147483904.0,
        4294967040.0,
        4294967296.0,
        9.223372e18,
        9.2233725e18,
        -9.2233725e18,
        1.8446743e19,
        1.9e19,
        1e-40,
        -1e-40,
        8388608.5,
    ]


@both_compilers
def test_float_to_int_all_modes(compiler: str) -> None:
    r = rng(90)
    sp = _float_specials(np.float32)
    x = np.concatenate(
        [sp, r.uniform(-100, 100, 100), r.uniform(-3e9, 5e9, 60), r.standard_normal(60) * 1e19]
    ).astype(np.float32)
    n = len(x)
    outs = run(
        F2I,
        compiler,
        "f2i",
        1,
        256,
        np.int32(n),
        x,
        np.zeros(4 * n, np.int32),
        np.zeros(4 * n, np.uint32),
        np.zeros(4 * n, np.int64),
        np.zeros(4 * n, np.uint64),
    )
    for j, mode in enumerate(MODES):
        assert_exact(outs[1].reshape(4, n)[j], float_to_int_sat(x, np.int32, mode))
        assert_exact(outs[2].reshape(4, n)[j], float_to_int_sat(x, np.uint32, mode))
        assert_exact(outs[3].reshape(4, n)[j], float_to_int_sat(x, np.int64, mode))
        assert_exact(outs[4].reshape(4, n)[j], float_to_int_sat(x, np.uint64, mode))


D2I = kernel(
    "cvt.double_to_int_all_modes",
    r"""
extern "C" __global__ void d2i(int n, const double* a, int* s32, unsigned* u32, long long* s64,
                               unsigned long long* u64) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i];
    s32[0 * n + i] = __double2int_rn(x);  s32[1 * n + i] = __double2int_rz(x);
    s32[2 * n + i] = __double2int_ru(x);  s32[3 * n + i] = __double2int_rd(x);
    u32[0 * n + i] = __double2uint_rn(x); u32[1 * n + i] = __double2uint_rz(x);
    u32[2 * n + i] = __double2uint_ru(x); u32[3 * n + i] = __double2uint_rd(x);
    s64[0 * n + i] = __double2ll_rn(x);   s64[1 * n + i] = __double2ll_rz(x);
    s64[2 * n + i] = __double2ll_ru(x);   s64[3 * n + i] = __double2ll_rd(x);
    u64[0 * n + i] = __double2ull_rn(x);  u64[1 * n + i] = __double2ull_rz(x);
    u64[2 * n + i] = __double2ull_ru(x);  u64[3 * n + i] = __double2ull_rd(x);
}
""",
)


@both_compilers
def test_double_to_int_all_modes(compiler: str) -> None:
    r = rng(91)
    sp = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        0.49999999999999994,
        np.nan,
        np.inf,
        -np.inf,
        2147483647.4,
        2147483647.5,
        2147483648.0,
        -2147483648.6,
        -2147483649.0,
        4294967295.5,
        4294967296.0,
        9223372036854774784.0,
        9223372036854775808.0,
        -9223372036854775808.0,
        18446744073709549568.0,
        18446744073709551616.0,
        4503599627370497.5,
        -1e-300,
    ]
    x = np.concatenate(
        [sp, r.uniform(-1000, 1000, 100), r.uniform(-5e9, 5e9, 60), r.standard_normal(60) * 1e19]
    )
    n = len(x)
    outs = run(
        D2I,
        compiler,
        "d2i",
        1,
        256,
        np.int32(n),
        x,
        np.zeros(4 * n, np.int32),
        np.zeros(4 * n, np.uint32),
        np.zeros(4 * n, np.int64),
        np.zeros(4 * n, np.uint64),
    )
    for j, mode in enumerate(MODES):
        assert_exact(outs[1].reshape(4, n)[j], float_to_int_sat(x, np.int32, mode))
        assert_exact(outs[2].reshape(4, n)[j], float_to_int_sat(x, np.uint32, mode))
        assert_exact(outs[3].reshape(4, n)[j], float_to_int_sat(x, np.int64, mode))
        assert_exact(outs[4].reshape(4, n)[j], float_to_int_sat(x, np.uint64, mode))


I2F = kernel(
    "cvt.int_to_float_all_modes",
    r"""
extern "C" __global__ void i2f(int n, const int* a, const long long* b, float* of, double* od) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i];
    unsigned ux = (unsigned)x;
    long long p = b[i];
    unsigned long long up = (unsigned long long)p;
    float* f = of + i;
    f[0 * n] = __int2float_rn(x);  f[1 * n] = __int2float_rz(x);
    f[2 * n] = __int2float_ru(x);  f[3 * n] = __int2float_rd(x);
    f[4 * n] = __uint2float_rn(ux);  f[5 * n] = __uint2float_rz(ux);
    f[6 * n] = __uint2float_ru(ux);  f[7 * n] = __uint2float_rd(ux);
    f[8 * n] = __ll2float_rn(p);  f[9 * n] = __ll2float_rz(p);
    f[10 * n] = __ll2float_ru(p);  f[11 * n] = __ll2float_rd(p);
    f[12 * n] = __ull2float_rn(up);  f[13 * n] = __ull2float_rz(up);
    f[14 * n] = __ull2float_ru(up);  f[15 * n] = __ull2float_rd(up);
    f[16 * n] = (float)x;           // C conversion: rn
    double* d = od + i;
    d[0 * n] = __ll2double_rn(p);  d[1 * n] = __ll2double_rz(p);
    d[2 * n] = __ll2double_ru(p);  d[3 * n] = __ll2double_rd(p);
    d[4 * n] = __ull2double_rn(up);  d[5 * n] = __ull2double_rz(up);
    d[6 * n] = __ull2double_ru(up);  d[7 * n] = __ull2double_rd(up);
    d[8 * n] = __int2double_rn(x);  d[9 * n] = __uint2double_rn(ux);  // exact
    d[10 * n] = (double)p;
}
""",
)


@both_compilers
def test_int_to_float_all_modes(compiler: str) -> None:
    r = rng(92)
    a = r.integers(-(2**31), 2**31, 300, dtype=np.int64).astype(np.int32)
    b = r.integers(-(2**63), 2**63, 300, dtype=np.int64) >> r.integers(0, 60, 300)
    a[:8] = [0, 1, -1, 2**31 - 1, -(2**31), 16777217, -16777219, 2**24 + 3]
    b[:6] = [2**63 - 1, -(2**63), 2**53 + 1, -(2**53 + 3), (1 << 62) + (1 << 9), 0]
    n = len(a)
    outs = run(
        I2F, compiler, "i2f", 2, 256, np.int32(n), a, b, np.zeros(17 * n, np.float32), np.zeros(11 * n)
    )
    f, d = outs[2].reshape(17, n), outs[3].reshape(11, n)
    ua = a.view(np.uint32)
    ub = b.view(np.uint64)
    for j, mode in enumerate(MODES):
        assert_exact(f[j], exact_int_to_float(a, np.float32, mode))
        assert_exact(f[4 + j], exact_int_to_float(ua, np.float32, mode))
        assert_exact(f[8 + j], exact_int_to_float(b, np.float32, mode))
        assert_exact(f[12 + j], exact_int_to_float(ub, np.float32, mode))
        assert_exact(d[j], exact_int_to_float(b, np.float64, mode))
        assert_exact(d[4 + j], exact_int_to_float(ub, np.float64, mode))
    assert_exact(f[16], exact_int_to_float(a, np.float32, "rn"))
    assert_exact(d[8], a.astype(np.float64))
    assert_exact(d[9], ua.astype(np.float64))
    assert_exact(d[10], exact_int_to_float(b, np.float64, "rn"))


D2F = kernel(
    "cvt.double_float_rounding",
    r"""
extern "C" __global__ void d2f(int n, const double* a, const float* b, float* of, double* od) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i];
    of[0 * n + i] = __double2float_rn(x);   // cvt.rn.f32.f64
    of[1 * n + i] = __double2float_rz(x);
    of[2 * n + i] = __double2float_ru(x);
    of[3 * n + i] = __double2float_rd(x);
    of[4 * n + i] = (float)x;
    od[i] = (double)b[i];                  // cvt.f64.f32: exact, keeps subnormals and -0
}
""",
)


@both_compilers
def test_double_float_rounding(compiler: str) -> None:
    r = rng(93)
    n = 300
    x = r.choice([-1.0, 1.0], n) * r.uniform(1, 2, n) * np.ldexp(1.0, r.integers(-160, 135, n))
    x[:10] = [0.0, -0.0, np.nan, np.inf, -np.inf, 3.5e38, -3.5e38, 2.0**-150, 2.0**-149 * 1.5, 1.0 + 2.0**-24]
    b = (r.standard_normal(n) * np.ldexp(1.0, r.integers(-149, 127, n))).astype(np.float32)
    b[:3] = [np.float32(1e-45), -0.0, np.nan]
    outs = run(D2F, compiler, "d2f", 2, 256, np.int32(n), x, b, np.zeros(5 * n, np.float32), np.zeros(n))
    of = outs[2].reshape(5, n)
    for j, mode in enumerate(MODES):
        exp = exact_float_op(
            lambda q: q, np.float32, mode, x, special=lambda v: v, zero_sign=lambda v: bool(np.signbit(v))
        )
        assert_exact(of[j], exp)
    with np.errstate(over="ignore"):
        assert_exact(of[4], x.astype(np.float32))  # NumPy's double->float is correctly rounded (rn)
    assert_exact(outs[3], b.astype(np.float64))


NARROW = kernel(
    "cvt.narrowing_and_sign_extension",
    r"""
extern "C" __global__ void narrow(int n, const signed char* s8, const unsigned char* u8, const short* s16,
                                  const unsigned short* u16, const int* s32, const float* f,
                                  int* oi, signed char* o8, unsigned short* o16, long long* o64) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = s32[i];
    oi[8 * i + 0] = s8[i];                      // ld.global.s8: sign extension
    oi[8 * i + 1] = u8[i];                      // ld.global.u8: zero extension
    oi[8 * i + 2] = s16[i];
    oi[8 * i + 3] = u16[i];
    oi[8 * i + 4] = (signed char)x;             // truncate then sign-extend (cvt.s8.s32)
    oi[8 * i + 5] = (unsigned char)x;
    oi[8 * i + 6] = (short)x;
    oi[8 * i + 7] = (signed char)(int)f[i];     // float -> int (rzi) -> s8 (values in range)
    o8[i] = (signed char)(x >> 3);              // st.global.u8
    o16[i] = (unsigned short)(s8[i] * 1000);    // negative values wrap mod 2^16
    o64[2 * i + 0] = (long long)x;              // cvt.s64.s32
    o64[2 * i + 1] = (long long)(unsigned)x;    // cvt.u64.u32
}
""",
)


@both_compilers
def test_narrowing_and_sign_extension(compiler: str) -> None:
    r = rng(94)
    n = 256
    s8 = r.integers(-128, 128, n).astype(np.int8)
    u8 = r.integers(0, 256, n).astype(np.uint8)
    s16 = r.integers(-(2**15), 2**15, n).astype(np.int16)
    u16 = r.integers(0, 2**16, n).astype(np.uint16)
    s32 = r.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    f = r.uniform(-128.9, 127.9, n).astype(np.float32)
    s8[:2], s16[:2], s32[:4] = [-128, 127], [-32768, 32767], [-1, 255, 128, -129]
    outs = run(
        NARROW,
        compiler,
        "narrow",
        1,
        256,
        np.int32(n),
        s8,
        u8,
        s16,
        u16,
        s32,
        f,
        np.zeros(8 * n, np.int32),
        np.zeros(n, np.int8),
        np.zeros(n, np.uint16),
        np.zeros(2 * n, np.int64),
    )
    oi, o8, o16, o64 = outs[6].reshape(n, 8), outs[7], outs[8], outs[9].reshape(n, 2)
    exp = np.stack(
        [
            s8.astype(np.int32),
            u8.astype(np.int32),
            s16.astype(np.int32),
            u16.astype(np.int32),
            s32.astype(np.int8).astype(np.int32),
            s32.astype(np.uint8).astype(np.int32),
            s32.astype(np.int16).astype(np.int32),
            np.trunc(f).astype(np.int32).astype(np.int8).astype(np.int32),
        ],
        axis=1,
    )
    assert_exact(oi, exp)
    assert_exact(o8, (s32 >> 3).astype(np.int8))
    assert_exact(o16, (s8.astype(np.int32) * 1000).astype(np.uint16))
    assert_exact(o64[:, 0].copy(), s32.astype(np.int64))
    assert_exact(o64[:, 1].copy(), s32.view(np.uint32).astype(np.int64))


REINTERPRET = kernel(
    "cvt.bit_reinterpretation",
    r"""
extern "C" __global__ void reinterp(int n, const float* f, const double* d, int* oi, float* of, long long* ol,
                                    double* od) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[i];
    double y = d[i];
    oi[3 * i + 0] = __float_as_int(x);
    oi[3 * i + 1] = __double2hiint(y);
    oi[3 * i + 2] = __double2loint(y);
    of[i] = __int_as_float(__float_as_int(x) ^ 0x80000000);   // sign flip through the integer view
    ol[i] = __double_as_longlong(y);
    od[2 * i + 0] = __longlong_as_double(__double_as_longlong(y) + 1);  // next double up (for y > 0)
    od[2 * i + 1] = __hiloint2double(__double2loint(y), __double2hiint(y));  // halves swapped
}
""",
)


@both_compilers
def test_bit_reinterpretation(compiler: str) -> None:
    r = rng(95)
    n = 128
    f = r.standard_normal(n).astype(np.float32)
    d = np.abs(r.standard_normal(n)) * 1e5
    f[:3] = [np.inf, -0.0, 1e-45]
    outs = run(
        REINTERPRET,
        compiler,
        "reinterp",
        1,
        128,
        np.int32(n),
        f,
        d,
        np.zeros(3 * n, np.int32),
        np.zeros(n, np.float32),
        np.zeros(n, np.int64),
        np.zeros(2 * n),
    )
    oi, of, ol, od = outs[2].reshape(n, 3), outs[3], outs[4], outs[5].reshape(n, 2)
    bits = d.view(np.int64)
    assert_exact(oi[:, 0].copy(), f.view(np.int32))
    assert_exact(oi[:, 1].copy(), (bits >> 32).astype(np.int32))
    assert_exact(oi[:, 2].copy(), bits.astype(np.int32))  # low word, wrapping
    assert_exact(of, -f)
    assert_exact(ol, bits)
    assert_exact(od[:, 0].copy(), np.nextafter(d, np.inf))
    swapped = ((bits.view(np.uint64) << np.uint64(32)) | (bits.view(np.uint64) >> np.uint64(32))).view(
        np.float64
    )
    assert_exact(od[:, 1].copy(), swapped)
