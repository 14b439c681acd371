"""strata's AMD hip_fp16.h / hip_bf16.h on a virtual MI300X against NumPy oracles: half and bfloat16 arithmetic
(fma rounded once, checked on inputs where rounding twice goes wrong), saturation, NaN-ignoring and NaN-propagating
max/min, ordered and unordered comparisons, packed half2 / bfloat162 operations and constructors, and every
conversion, the directed-rounding ones checked against the neighbours of the exact value in a table of all
16-bit values. Kernels come from clang-19 compiling real HIP C++ with the header."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from fractions import Fraction

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")
pytestmark = needs_clang


# ------------------------------------------------------------------------------------------------ oracles
@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    """NaN and infinity inputs are the point here: no floating-point warnings from the oracles."""
    with np.errstate(all="ignore"):
        yield


def _bf16_values(bits: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return (bits.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)


def _table(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Every non-NaN value of the 16-bit format, ascending (+0 only; zeros get their sign separately)."""
    bits = np.arange(0x10000, dtype=np.uint32).astype(np.uint16)
    vals = bits.view(np.float16).astype(np.float64) if kind == "f16" else _bf16_values(bits)
    keep = ~np.isnan(vals) & (bits != 0x8000)
    order = np.argsort(vals[keep], kind="stable")
    return vals[keep][order], bits[keep][order]


TABLES = {k: _table(k) for k in ("f16", "bf16")}


def round16(x: float | int | Fraction, kind: str, mode: str = "rn") -> int:
    """The bits of x rounded to the 16-bit format (rn ties to even, rz, ru, rd), from its exact neighbours."""
    vals, bits = TABLES[kind]
    if isinstance(x, float) and np.isnan(x):
        return 0x7E00 if kind == "f16" else 0x7FC0
    fx = Fraction(x) if not (isinstance(x, float) and np.isinf(x)) else None
    if fx is None:
        return int(bits[-1] if x > 0 else bits[0])
    if fx == 0:
        return 0x8000 if isinstance(x, float) and np.signbit(x) else 0
    i = int(np.searchsorted(vals, float(fx)))
    near = range(max(i - 2, 0), min(i + 2, len(vals)))
    lo = max(j for j in near if vals[j] == -np.inf or (vals[j] != np.inf and Fraction(vals[j]) <= fx))
    hi = min(j for j in near if vals[j] == np.inf or (vals[j] != -np.inf and Fraction(vals[j]) >= fx))
    if lo == hi or mode == "rd":
        r = lo
    elif mode == "ru":
        r = hi
    elif mode == "rz":
        r = lo if fx > 0 else hi
    else:
        finite = [j for j in (lo, hi) if np.isfinite(vals[j])]
        if len(finite) == 1:  # between the largest finite value and infinity: infinity from half an ulp past it
            edge = finite[0]
            ulp = Fraction(vals[edge]) - Fraction(vals[edge - 1 if vals[edge] > 0 else edge + 1])
            past = abs(fx) >= abs(Fraction(vals[edge])) + abs(ulp) / 2
            r = (hi if fx > 0 else lo) if past else edge
        else:
            dl, dh = fx - Fraction(vals[lo]), Fraction(vals[hi]) - fx
            r = lo if dl < dh or (dl == dh and int(bits[lo]) % 2 == 0) else hi
    out = int(bits[r])
    if vals[r] == 0 and fx < 0:
        out = 0x8000
    return out


def fma16(x: np.ndarray, y: np.ndarray, z: np.ndarray, kind: str) -> np.ndarray:
    """x*y+z rounded once to the 16-bit format (exact rationals); non-finite operands and exact zeros (signed as
    IEEE says) through float64, where they are exact."""
    out = []
    for p, q, s in zip(x, y, z, strict=True):
        t = p * q + s
        exact = np.isfinite([p, q, s]).all() and t != 0
        out.append(round16(Fraction(p) * Fraction(q) + Fraction(s), kind) if exact else round16(float(t), kind))
    return np.array(out, np.uint16)


def same_bits(what: str, got: np.ndarray, want: np.ndarray, nan_of: str | None = None) -> None:
    """Bit for bit; with nan_of ('f16'/'bf16') a NaN pattern matches any NaN pattern."""
    got, want = np.asarray(got), np.asarray(want)
    same = got == want
    if nan_of == "f16":
        same |= np.isnan(got.astype(np.uint16).view(np.float16)) & np.isnan(want.astype(np.uint16).view(np.float16))
    elif nan_of == "bf16":
        same |= np.isnan(_bf16_values(got.astype(np.uint16))) & np.isnan(_bf16_values(want.astype(np.uint16)))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{what}: {bad.size} differ, first at {bad[:5]}: got {got.ravel()[bad[:5]]} want " \
                          f"{want.ravel()[bad[:5]]}"


def _h(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float16).view(np.uint16)


def _half_inputs(n: int, seed: int) -> np.ndarray:
    """Halves over many binades, a quarter random bit patterns, with zeros, infinities, NaN and denormals."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal(n) * 10.0 ** r.integers(-3, 4, n)).astype(np.float16)
    x = np.where(r.random(n) < 0.25, r.integers(0, 0x10000, n).astype(np.uint16).view(np.float16), x)
    x[:10] = [0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, -3e-5, 65504, 1.0, -0.5]
    return x.astype(np.float16)


# ------------------------------------------------------------------------------------------------ half
HALF_OPS = r"""
#include <hip/hip_fp16.h>
extern "C" __global__ void hops(int n, const __half* a, const __half* b, const __half* c, __half* o, int* cmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half x = a[i], y = b[i], z = c[i];
    o[0 * n + i] = __hsub(x, y);
    o[1 * n + i] = __hdiv(x, y);
    o[2 * n + i] = __hneg(x);
    o[3 * n + i] = __habs(x);
    o[4 * n + i] = __hadd_sat(x, y);
    o[5 * n + i] = __hmax_nan(x, y);
    o[6 * n + i] = __hmin_nan(x, y);
    o[7 * n + i] = __hfma(x, y, z);
    o[8 * n + i] = __hmul_sat(x, y);
    o[9 * n + i] = __hmax(x, y);
    int v = __heq(x, y) | __hne(x, y) << 1 | __hlt(x, y) << 2 | __hle(x, y) << 3 | __hgt(x, y) << 4 |
            __hge(x, y) << 5 | __hequ(x, y) << 6 | __hneu(x, y) << 7 | __hltu(x, y) << 8 | __hleu(x, y) << 9 |
            __hgtu(x, y) << 10 | __hgeu(x, y) << 11 | __hisnan(x) << 12;
    cmp[2 * i] = v;
    cmp[2 * i + 1] = __hisinf(x);
}
"""


def _half_fma_traps() -> tuple[list[float], list[float], list[float]]:
    """a*b+c where rounding a*b to half first gives another answer than one rounding: (1+2^-10)(1+2^-9) - 1."""
    u = 2.0 ** -10
    return [1 + u, -(1 + u), 1 + 2 * u], [1 + 2 * u, 1 + 2 * u, 1 + u], [-1.0, 1.0, -1.0]


def test_half_scalar_ops(mi300x_module: cuda.Device) -> None:
    n = 600
    a, b, c = _half_inputs(n, 1), _half_inputs(n, 2)[::-1].copy(), _half_inputs(n, 3)
    ta, tb, tc = _half_fma_traps()
    a[-3:], b[-3:], c[-3:] = ta, tb, tc
    two_roundings = (a[-3:].astype(np.float64) * b[-3:]).astype(np.float16).astype(np.float64) + c[-3:]
    exact = a[-3:].astype(np.float64) * b[-3:] + c[-3:]
    assert (two_roundings.astype(np.float16) != exact.astype(np.float16)).all()  # the traps are real
    k = hip.compile(HALF_OPS).get_function("hops")
    o, cmp = hip.zeros(10 * n, np.uint16), hip.zeros(2 * n, np.int32)
    k(3, 256, (np.int32(n), hip.to_device(a), hip.to_device(b), hip.to_device(c), o, cmp))
    got, flags = o.get().reshape(10, n), cmp.get().reshape(n, 2)
    x, y, z = (v.astype(np.float64) for v in (a, b, c))
    nan = np.isnan(x) | np.isnan(y)
    with np.errstate(all="ignore"):
        sat = lambda r: np.where(r > 0, np.minimum(r, 1.0), 0.0)  # noqa: E731  (NaN and -0 give +0)
        want = [_h(a - b), _h(a / b), _h(-a), _h(np.abs(a)), _h(sat(x + y)),
                np.where(nan, 0x7E00, _h(np.fmax(a, b))), np.where(nan, 0x7E00, _h(np.fmin(a, b))),
                fma16(x, y, z, "f16"),
                _h(sat((a * b).astype(np.float64))), _h(np.fmax(a, b))]
    names = ["hsub", "hdiv", "hneg", "habs", "hadd_sat", "hmax_nan", "hmin_nan", "hfma", "hmul_sat", "hmax"]
    for i, name in enumerate(names):
        ok = ~((x == 0) & (y == 0)) if name in ("hmax_nan", "hmin_nan", "hmax") else np.ones(n, bool)  # +-0: either
        same_bits(name, got[i][ok], np.asarray(want[i], np.uint16)[ok], "f16")
    with np.errstate(invalid="ignore"):
        bits = [x == y, (x < y) | (x > y), x < y, x <= y, x > y, x >= y, ~((x < y) | (x > y)), ~(x == y), ~(x >= y),
                ~(x > y), ~(x <= y), ~(x < y), np.isnan(x)]
    np.testing.assert_array_equal(flags[:, 0], sum(v.astype(np.int32) << k for k, v in enumerate(bits)))
    np.testing.assert_array_equal(flags[:, 1], np.where(np.isinf(x), np.sign(x), 0).astype(np.int32))


HALF2_OPS = r"""
#include <hip/hip_fp16.h>
extern "C" __global__ void h2ops(int n, const __half2* a, const __half2* b, const __half2* c, __half2* o,
                                 int* cmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = a[i], y = b[i], z = c[i];
    o[0 * n + i] = __hsub2(x, y);
    o[1 * n + i] = __hfma2(x, y, z);
    o[2 * n + i] = __h2div(x, y);
    o[3 * n + i] = __hneg2(x);
    o[4 * n + i] = __habs2(x);
    o[5 * n + i] = __hmin2(x, y);
    o[6 * n + i] = __hlt2(x, y);
    o[7 * n + i] = __lowhigh2highlow(x);
    o[8 * n + i] = __halves2half2(__high2half(x), __low2half(y));
    o[9 * n + i] = __lows2half2(x, y);
    o[10 * n + i] = __highs2half2(x, y);
    o[11 * n + i] = __floats2half2_rn(__low2float(x) * 0.5f, __high2float(y));
    cmp[i] = __hbgt2(x, y) | __hbleu2(x, y) << 1;
}
"""


def test_half2_packed_ops(mi300x_module: cuda.Device) -> None:
    n = 300  # half2 elements
    a, b, c = _half_inputs(2 * n, 4), _half_inputs(2 * n, 5)[::-1].copy(), _half_inputs(2 * n, 6)
    ta, tb, tc = _half_fma_traps()
    a[-3:], b[-3:], c[-3:] = ta, tb, tc
    k = hip.compile(HALF2_OPS).get_function("h2ops")
    o, cmp = hip.zeros(12 * 2 * n, np.uint16), hip.zeros(n, np.int32)
    k(2, 256, (np.int32(n), hip.to_device(a), hip.to_device(b), hip.to_device(c), o, cmp))
    got = o.get().reshape(12, 2 * n)
    x, y, z = (v.astype(np.float64) for v in (a, b, c))
    lo, hi = slice(0, None, 2), slice(1, None, 2)
    swap = np.empty_like(a)
    swap[lo], swap[hi] = a[hi], a[lo]
    mixed, lows, highs = np.empty_like(a), np.empty_like(a), np.empty_like(a)
    mixed[lo], mixed[hi] = a[hi], b[lo]
    lows[lo], lows[hi] = a[lo], b[lo]
    highs[lo], highs[hi] = a[hi], b[hi]
    conv = np.empty_like(a)
    conv[lo], conv[hi] = (a[lo].astype(np.float32) * np.float32(0.5)).astype(np.float16), b[hi]
    with np.errstate(all="ignore"):
        fma = fma16(x, y, z, "f16")
        want = [_h(a - b), fma, _h(a / b), _h(-a), _h(np.abs(a)), _h(np.fmin(a, b)),
                _h((x < y).astype(np.float16)), _h(swap), _h(mixed), _h(lows), _h(highs), _h(conv)]
        for i, w in enumerate(want):
            ok = ~((x == 0) & (y == 0)) if i == 5 else np.ones(2 * n, bool)
            same_bits(f"half2 op {i}", got[i][ok], np.asarray(w, np.uint16)[ok], "f16")
        gt, leu = (x > y).reshape(n, 2).all(1), (~(x > y)).reshape(n, 2).all(1)
    np.testing.assert_array_equal(cmp.get(), gt.astype(np.int32) | leu.astype(np.int32) << 1)


@pytest.mark.parametrize("opt", [[], ["-O0"]])
def test_half2_kernel_at_O0_too(mi300x_module: cuda.Device, opt: list[str]) -> None:
    """-O0 keeps __half2 locals in scratch behind generic pointers: flat_store_short_d16_hi to the private
    aperture (it went to global memory and faulted before)."""
    src = r"""
    #include <hip/hip_fp16.h>
    extern "C" __global__ void k(const __half2* a, __half2* o) {
        int i = threadIdx.x;
        __half2 v = a[i];
        __half t = __high2half(v);
        o[i] = __halves2half2(t, __low2half(v));
    }"""
    a = _half_inputs(128, 7)
    o = hip.zeros(128, np.uint16)
    hip.compile(src, options=opt).get_function("k")(1, 64, (hip.to_device(a), o))
    want = a.copy()
    want[0::2], want[1::2] = a[1::2], a[0::2]
    same_bits("swap", o.get(), _h(want), "f16")


CONVERSIONS = r"""
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
extern "C" __global__ void cvt(int n, const float* f, const double* d, const int* k, const __half* h,
                               unsigned short* oh, unsigned short* ob, int* oi) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[i];
    __half r[9] = {__float2half_rn(x), __float2half_rz(x), __float2half_ru(x), __float2half_rd(x),
                   __double2half(d[i]), __int2half_rn(k[i]), __int2half_rz(k[i]), __int2half_ru(k[i]),
                   __int2half_rd(k[i])};
    for (int j = 0; j < 9; ++j) oh[j * n + i] = __half_as_ushort(r[j]);
    __hip_bfloat16 s[5] = {__float2bfloat16_rn(x), __float2bfloat16_rz(x), __float2bfloat16_ru(x),
                           __float2bfloat16_rd(x), __double2bfloat16(d[i])};
    for (int j = 0; j < 5; ++j) ob[j * n + i] = __bfloat16_as_ushort(s[j]);
    oi[0 * n + i] = __half2int_rn(h[i]);
    oi[1 * n + i] = __half2int_rz(h[i]);
    oi[2 * n + i] = __half2int_ru(h[i]);
    oi[3 * n + i] = __half2int_rd(h[i]);
    oi[4 * n + i] = __half2short_rn(h[i]);
    oi[5 * n + i] = (int)__half2uint_rz(h[i]);
}
"""


def test_conversions_and_directed_rounding(mi300x_module: cuda.Device) -> None:
    n = 400
    r = np.random.default_rng(8)
    f = (r.standard_normal(n) * 10.0 ** r.integers(-9, 6, n)).astype(np.float32)
    f[:12] = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65519.0, 65520.0, 1e6, -7e-8, 3e-41, 3.4e38]
    d = r.standard_normal(n) * 10.0 ** r.integers(-12, 8, n)
    # doubles whose float32 rounding lands on a half/bfloat16 midpoint they are not on: one rounding differs
    d[:4] = [1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40), 1e300]
    assert np.float16(np.float32(d[0])) != np.float16(d[0])  # the traps are real (NumPy rounds double -> half once)
    assert round16(float(np.float32(d[1])), "bf16") != round16(float(d[1]), "bf16")
    k = r.integers(-(2 ** 31), 2 ** 31 - 1, n).astype(np.int32)
    k[:8] = [0, 1, -1, 65504, 65519, 65520, 2049, -2 ** 31]
    k[8:60] = r.integers(-70000, 70000, 52)
    h = _half_inputs(n, 9)
    oh, ob, oi = hip.zeros(9 * n, np.uint16), hip.zeros(5 * n, np.uint16), hip.zeros(6 * n, np.int32)
    hip.compile(CONVERSIONS).get_function("cvt")(2, 256, (np.int32(n), hip.to_device(f), hip.to_device(d),
                                                           hip.to_device(k), hip.to_device(h), oh, ob, oi))
    gh, gb, gi = oh.get().reshape(9, n), ob.get().reshape(5, n), oi.get().reshape(6, n)
    fx = [float(v) for v in f]
    modes = ["rn", "rz", "ru", "rd"]
    for j, mode in enumerate(modes):
        same_bits(f"__float2half_{mode}", gh[j], np.array([round16(v, "f16", mode) for v in fx]), "f16")
        same_bits(f"__int2half_{mode}", gh[5 + j], np.array([round16(int(v), "f16", mode) for v in k]), "f16")
        same_bits(f"__float2bfloat16_{mode}", gb[j], np.array([round16(v, "bf16", mode) for v in fx]), "bf16")
    same_bits("__double2half", gh[4], np.array([round16(float(v), "f16") for v in d]), "f16")
    same_bits("__double2bfloat16", gb[4], np.array([round16(float(v), "bf16") for v in d]), "bf16")
    hv = h.astype(np.float64)
    fin = np.isfinite(hv)
    for j, fn in enumerate([np.rint, np.trunc, np.ceil, np.floor]):
        want = np.where(np.isnan(hv), 0, np.where(fin, fn(np.where(fin, hv, 0)),
                                                  np.where(hv > 0, 2 ** 31 - 1, -2 ** 31)))
        np.testing.assert_array_equal(gi[j], want.astype(np.int64).astype(np.int32), err_msg=f"__half2int {j}")
    short = np.where(np.isnan(hv), 0, np.clip(np.rint(np.nan_to_num(hv, posinf=1e9, neginf=-1e9)), -32768, 32767))
    np.testing.assert_array_equal(gi[4], short.astype(np.int32))
    uint = np.where(np.isnan(hv), 0, np.clip(np.trunc(np.nan_to_num(hv, posinf=1e10, neginf=-1)), 0, 2 ** 32 - 1))
    np.testing.assert_array_equal(gi[5], uint.astype(np.uint32).view(np.int32))


# ------------------------------------------------------------------------------------------------ bfloat16
BF16_OPS = r"""
#include <hip/hip_bf16.h>
extern "C" __global__ void bops(int n, const __hip_bfloat16* a, const __hip_bfloat16* b, const __hip_bfloat16* c,
                                __hip_bfloat16* o, int* cmp) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __hip_bfloat16 x = a[i], y = b[i], z = c[i];
    o[0 * n + i] = __hadd(x, y);
    o[1 * n + i] = __hsub(x, y);
    o[2 * n + i] = __hmul(x, y);
    o[3 * n + i] = __hdiv(x, y);
    o[4 * n + i] = __hfma(x, y, z);
    o[5 * n + i] = __hneg(x);
    o[6 * n + i] = __habs(x);
    o[7 * n + i] = __hmax(x, y);
    o[8 * n + i] = __hmin_nan(x, y);
    __hip_bfloat162 s = __hfma2(__halves2bfloat162(x, y), __halves2bfloat162(y, x), __bfloat162bfloat162(z));
    o[9 * n + i] = __low2bfloat16(s);
    o[10 * n + i] = __high2bfloat16(__hsub2(__halves2bfloat162(x, y), __halves2bfloat162(z, z)));
    cmp[i] = __hlt(x, y) | __hge(x, y) << 1 | __hequ(x, y) << 2 | __hneu(x, y) << 3 | __hisnan(x) << 4 |
             __hbgt2(__halves2bfloat162(x, x), __halves2bfloat162(y, z)) << 5;
}
"""

# a*b + c where the float32 fma lands on a bfloat16 midpoint beside the exact value (c far below a*b)
BF16_FMA_TRAPS = [(0x31B2, 0xAA40, 0x0DAE), (0xB3FC, 0xC820, 0xB030), (0xB892, 0x31E0, 0x1E5B),
                  (0xF8F0, 0x17B8, 0xC47A), (0x76A0, 0xA52A, 0xCD5D), (0xC298, 0x9798, 0x0E55)]


def test_bf16_ops(mi300x_module: cuda.Device) -> None:
    n = 500
    r = np.random.default_rng(10)
    a, b, c = (r.integers(0, 0x10000, n).astype(np.uint16) for _ in range(3))
    mags = (r.standard_normal((3, 200)) * 10.0 ** r.integers(-3, 4, (3, 200))).astype(np.float32)
    for arr, m in zip((a, b, c), mags, strict=True):  # most of them ordinary values, a few random patterns
        arr[:200] = m.view(np.uint32) >> 16
    a[:6], b[:6] = [0, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0x3F80], [0x3F80, 0, 0x7F80, 0x7F80, 0x3F80, 0x7FC1]
    for j, (p, q, s) in enumerate(BF16_FMA_TRAPS):
        a[200 + j], b[200 + j], c[200 + j] = p, q, s
        x32 = [np.float32(_bf16_values(np.array([v], np.uint16))[0]) for v in (p, q, s)]
        via_f32 = round16(float(np.float32(np.float64(x32[0]) * np.float64(x32[1]) + np.float64(x32[2]))), "bf16")
        assert via_f32 != round16(Fraction(float(x32[0])) * Fraction(float(x32[1])) + Fraction(float(x32[2])), "bf16")
    o, cmp = hip.zeros(11 * n, np.uint16), hip.zeros(n, np.int32)
    hip.compile(BF16_OPS).get_function("bops")(2, 256, (np.int32(n), hip.to_device(a), hip.to_device(b),
                                                        hip.to_device(c), o, cmp))
    got = o.get().reshape(11, n)
    x, y, z = (_bf16_values(v) for v in (a, b, c))

    def rn(v: np.ndarray) -> np.ndarray:
        return np.array([round16(float(t), "bf16") for t in v], np.uint16)

    nan = np.isnan(x) | np.isnan(y)
    with np.errstate(all="ignore"):  # +, -, * of bfloat16s are exact in float64; / rounds twice harmlessly
        want = [rn(x + y), rn(x - y), rn(x * y), rn(x / y), fma16(x, y, z, "bf16"), a ^ 0x8000, a & 0x7FFF,
                rn(np.fmax(x, y)), np.where(nan, 0x7FC0, rn(np.fmin(x, y))), fma16(x, y, z, "bf16"), rn(y - z)]
    for i, w in enumerate(want):
        ok = ~((x == 0) & (y == 0)) if i in (7, 8) else np.ones(n, bool)
        same_bits(f"bf16 op {i}", got[i][ok], np.asarray(w, np.uint16)[ok], "bf16")
    with np.errstate(invalid="ignore"):
        bits = [x < y, x >= y, ~((x < y) | (x > y)), ~(x == y), np.isnan(x), (x > y) & (x > z)]
    np.testing.assert_array_equal(cmp.get(), sum(v.astype(np.int32) << k for k, v in enumerate(bits)))
