"""strata's AMD hip_runtime.h additions on a virtual MI300X against NumPy oracles: 64-bit atomicCAS (a CAS loop
summing doubles, CAS with a long long argument), the _block and _system atomics on LDS and global memory,
__double2hiint/__double2loint/__hiloint2double, __saturatef, __byte_perm, __syncthreads_count/_and/_or on 2-D
blocks with a partial wavefront, and 64-bit count-leading-zeros of 0 (clang's saturating add: VOP3 clamp on
v_add_u32). Kernels come from clang-19 compiling real HIP C++ with the header."""

from __future__ import annotations

import shutil
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")
pytestmark = needs_clang


CAS = r"""
__device__ double cas_add(double* addr, double v) {
    unsigned long long* p = (unsigned long long*)addr;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));  // long long new
    } while (assumed != old);
    return __longlong_as_double(old);
}
extern "C" __global__ void cas(int n, const double* v, double* sum, unsigned long long* big, int* won) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cas_add(sum, v[i]);
    // exactly one thread swaps the 64-bit word: its high half must take part in the comparison
    won[i] = atomicCAS(big, 0x100000000ull, 0xABCD00000000ull + i) == 0x100000000ull;
    atomicCAS_system(big + 1, 0ull, 1ull);  // never matches (big[1] starts at 5): no change
}
"""


def test_64bit_atomic_cas(mi300x_module: cuda.Device) -> None:
    n = 700
    v = np.random.default_rng(1).integers(-1000, 1000, n).astype(np.float64) * 0.25  # sums exact in any order
    total, won = hip.to_device(np.array([3.5])), hip.zeros(n, np.int32)
    big = hip.to_device(np.array([1 << 32, 5], np.uint64))
    hip.compile(CAS).get_function("cas")(3, 256, (np.int32(n), hip.to_device(v), total, big, won))
    assert total.get()[0] == 3.5 + v.sum()
    w = won.get()
    assert w.sum() == 1
    assert big.get()[0] == 0xABCD00000000 + int(np.flatnonzero(w)[0]) and big.get()[1] == 5


SCOPED = r"""
extern "C" __global__ void scoped(const int* v, int* g, unsigned long long* g64, float* gf, int* per_block) {
    __shared__ int s[4];
    int t = threadIdx.x, x = v[blockIdx.x * blockDim.x + t];
    if (t < 4) s[t] = t == 2 ? 0x7fffffff : 0;
    __syncthreads();
    atomicAdd_block(&s[0], 1);
    atomicMax_block(&s[1], x);
    atomicMin_block(&s[2], x);
    atomicOr_block(&s[3], 1 << (t & 31));
    atomicMax_system(&g[0], x);
    atomicMin_system(&g[1], x);
    atomicExch_system(&g[2], 42);
    atomicSub_system(&g[3], 2);
    atomicAnd_block(&g[4], ~(1 << (t & 31)));
    atomicXor_system(&g[5], x);
    atomicAdd_system(g64, (unsigned long long)x << 20);
    atomicAdd_block(gf, 0.5f);
    __syncthreads();
    if (t < 4) per_block[4 * blockIdx.x + t] = s[t];
}
"""


def test_block_and_system_atomics(mi300x_module: cuda.Device) -> None:
    blocks, threads = 3, 192
    v = np.random.default_rng(2).integers(-(2 ** 30), 2 ** 30, blocks * threads).astype(np.int32)
    g0 = np.array([-5, 5, 0, 100, -1, 0x1234], np.int32)
    g, g64, gf, pb = hip.to_device(g0), hip.to_device(np.array([7], np.uint64)), hip.to_device(
        np.array([1.0], np.float32)), hip.zeros(4 * blocks, np.int32)
    hip.compile(SCOPED).get_function("scoped")(blocks, threads, (hip.to_device(v), g, g64, gf, pb))
    per = v.reshape(blocks, threads)
    want_pb = np.stack([np.full(blocks, threads), np.maximum(per.max(1), 0), np.minimum(per.min(1), 0x7FFFFFFF),
                        np.full(blocks, -1)], 1).astype(np.int32)
    np.testing.assert_array_equal(pb.get().reshape(blocks, 4), want_pb)
    xor = np.bitwise_xor.reduce(v) ^ g0[5]
    want_g = [max(g0[0], v.max()), min(g0[1], v.min()), 42, 100 - 2 * v.size, 0, xor]
    np.testing.assert_array_equal(g.get(), np.array(want_g, np.int32))
    want64 = (7 + sum(int(x) << 20 for x in v)) % (1 << 64)
    assert int(g64.get()[0]) == want64
    assert gf.get()[0] == 1.0 + 0.5 * v.size


BITS = r"""
extern "C" __global__ void bits(int n, const double* d, const float* f, const unsigned* x, const unsigned* y,
                                const unsigned* s, const unsigned long long* z, int* oi, double* od, float* of,
                                unsigned* ob) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    oi[3 * i] = __double2hiint(d[i]);
    oi[3 * i + 1] = __double2loint(d[i]);
    oi[3 * i + 2] = __clzll(z[i]);
    od[i] = __hiloint2double(__double2loint(d[i]), __double2hiint(d[i]));
    of[i] = __saturatef(f[i]);
    ob[2 * i] = __byte_perm(x[i], y[i], s[i]);
    ob[2 * i + 1] = __byte_perm(x[i], y[i], 0x5140);
}
"""


def _byte_perm(x: np.ndarray, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Byte k of the result is byte (s >> 4k) & 7 of y:x."""
    eight = np.stack([x, y], 1).astype(np.uint32).view(np.uint8).reshape(-1, 8)  # little endian: x bytes first
    out = np.zeros(x.size, np.uint32)
    for k in range(4):
        sel = ((s.astype(np.uint32) >> np.uint32(4 * k)) & np.uint32(7)).astype(np.int64)
        out |= eight[np.arange(x.size), sel].astype(np.uint32) << np.uint32(8 * k)
    return out


def test_bit_intrinsics(mi300x_module: cuda.Device) -> None:
    n = 400
    r = np.random.default_rng(3)
    d = r.integers(0, 2 ** 64, n, dtype=np.uint64).view(np.float64)
    f = (r.standard_normal(n) * 2).astype(np.float32)
    f[:6] = [np.nan, -np.nan, -0.0, 0.0, np.inf, -np.inf]
    x, y, s = (r.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    s[:3] = [0x3210, 0x7654, 0xFFFF]  # identity, y, and selector bits above 3 ignored
    z = (r.integers(0, 2 ** 64, n, dtype=np.uint64) >> r.integers(0, 64, n).astype(np.uint64)).astype(np.uint64)
    z[:4] = [0, 1, 1 << 32, (1 << 32) - 1]  # 0 needs the saturating add (ffbh of a zero half is -1)
    oi, od, of, ob = hip.zeros(3 * n, np.int32), hip.zeros(n, np.float64), hip.zeros(n, np.float32), hip.zeros(
        2 * n, np.uint32)
    hip.compile(BITS).get_function("bits")(2, 256, (np.int32(n), hip.to_device(d), hip.to_device(f), hip.to_device(x),
                                                    hip.to_device(y), hip.to_device(s), hip.to_device(z), oi, od, of,
                                                    ob))
    words = d.view(np.uint64)
    gi = oi.get().reshape(n, 3)
    np.testing.assert_array_equal(gi[:, 0], (words >> np.uint64(32)).astype(np.uint32).view(np.int32))
    np.testing.assert_array_equal(gi[:, 1], (words & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32))
    clz = np.array([64 - int(v).bit_length() for v in z], np.int32)
    np.testing.assert_array_equal(gi[:, 2], clz)
    swapped = (words << np.uint64(32)) | (words >> np.uint64(32))
    np.testing.assert_array_equal(od.get().view(np.uint64), swapped)
    with np.errstate(invalid="ignore"):
        sat = np.where(f > 0, np.minimum(f, 1), 0).astype(np.float32)  # NaN and -0 -> +0
    np.testing.assert_array_equal(of.get().view(np.uint32), sat.view(np.uint32))
    gb = ob.get().reshape(n, 2)
    np.testing.assert_array_equal(gb[:, 0], _byte_perm(x, y, s))
    np.testing.assert_array_equal(gb[:, 1], _byte_perm(x, y, np.full(n, 0x5140, np.uint32)))


SYNC_COUNT = r"""
extern "C" __global__ void barred(const int* in, int* out) {
    int t = threadIdx.y * blockDim.x + threadIdx.x;
    int v = in[blockIdx.x * blockDim.x * blockDim.y + t];
    int cnt = __syncthreads_count(v > 0);
    int all = __syncthreads_and(v > -50);
    int any = __syncthreads_or(v > 90);
    int again = __syncthreads_count(v & 1);   // a second count right after: the counter is reset in between
    out[4 * (blockIdx.x * blockDim.x * blockDim.y + t)] = cnt;
    out[4 * (blockIdx.x * blockDim.x * blockDim.y + t) + 1] = all;
    out[4 * (blockIdx.x * blockDim.x * blockDim.y + t) + 2] = any;
    out[4 * (blockIdx.x * blockDim.x * blockDim.y + t) + 3] = again;
}
"""


def test_syncthreads_count_and_or(mi300x_module: cuda.Device) -> None:
    blocks, bx, by = 5, 16, 6  # 96 threads: one full and one half-full wavefront
    r = np.random.default_rng(4)
    v = r.integers(-100, 100, (blocks, bx * by)).astype(np.int32)
    v[1] = np.abs(v[1]) - 40  # every thread > -50: _and is 1
    v[2] = np.minimum(v[2], 50)  # no thread > 90: _or is 0
    out = hip.zeros(4 * v.size, np.int32)
    hip.compile(SYNC_COUNT).get_function("barred")(blocks, (bx, by), (hip.to_device(v), out))
    got = out.get().reshape(blocks, bx * by, 4)
    want = np.stack([(v > 0).sum(1), (v > -50).all(1), (v > 90).any(1), (v & 1).sum(1)], 1).astype(np.int32)
    np.testing.assert_array_equal(got, np.broadcast_to(want[:, None, :], got.shape))
    assert want[1, 1] == 1 and want[2, 2] == 0 and want[0, 1] == 0  # both answers of _and/_or are checked


def round_to(x: Fraction, dtype: type, mode: str) -> float:
    """x rounded to float32/float64 (rn ties to even, rz, ru, rd) from its exact neighbours; overflow as IEEE."""
    fin = np.finfo(dtype)
    if x == 0:
        return 0.0
    top = Fraction(float(fin.max))
    with np.errstate(over="ignore"):  # (float() of a Fraction past the double range raises)
        g = dtype(float(x)) if abs(x) <= top else dtype(np.inf if x > 0 else -np.inf)
    cands = {g, np.nextafter(g, dtype(np.inf)), np.nextafter(g, dtype(-np.inf))}
    ulp = top - Fraction(float(np.nextafter(fin.max, dtype(0))))

    def val(c: Any) -> Fraction:  # the infinities as values beyond every finite x here
        return Fraction(float(c)) if np.isfinite(c) else (top * 2 ** 4096) * (1 if c > 0 else -1)

    lo = max((c for c in cands if val(c) <= x), key=val)
    hi = min((c for c in cands if val(c) >= x), key=val)
    if val(lo) == x or mode == "rd":
        r = lo
    elif mode == "ru":
        r = hi
    elif mode == "rz":
        r = lo if x > 0 else hi
    elif abs(x) >= top + ulp / 2:  # rn: infinity from half an ulp past the largest finite value
        r = dtype(np.inf if x > 0 else -np.inf)
    else:
        dl, dh = x - val(lo), val(hi) - x
        even = int(np.array(lo, dtype).view(f"u{np.dtype(dtype).itemsize}")) % 2 == 0
        r = lo if dl < dh or (dl == dh and even) else hi
    out = float(r)
    return -0.0 if out == 0 and x < 0 else out


CONVERT = r"""
extern "C" __global__ void cvt(int n, const float* f, const double* d, const int* k, const long long* q,
                               long long* oi, unsigned long long* ou, float* of, double* od) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[i];
    double y = d[i];
    long long* a = oi + 8 * i;
    unsigned long long* b = ou + 8 * i;
    a[0] = __float2ll_rn(x); a[1] = __float2ll_rz(x); a[2] = __float2ll_ru(x); a[3] = __float2ll_rd(x);
    a[4] = __double2ll_rn(y); a[5] = __double2ll_rz(y); a[6] = __double2ll_ru(y); a[7] = __double2ll_rd(y);
    b[0] = __float2ull_rn(x); b[1] = __float2ull_ru(x); b[2] = __double2ull_rd(y); b[3] = __double2ull_rz(y);
    b[4] = __double2uint_rn(y); b[5] = __double2uint_ru(y); b[6] = __float2uint_ru(x); b[7] = __float2uint_rd(x);
    float* g = of + 12 * i;
    g[0] = __int2float_rz(k[i]); g[1] = __int2float_ru(k[i]); g[2] = __int2float_rd(k[i]);
    g[3] = __uint2float_rd((unsigned)k[i]); g[4] = __ll2float_rn(q[i]); g[5] = __ll2float_rz(q[i]);
    g[6] = __ll2float_ru(q[i]); g[7] = __ull2float_rd((unsigned long long)q[i]);
    g[8] = __double2float_rz(y); g[9] = __double2float_ru(y); g[10] = __double2float_rd(y);
    g[11] = __ull2float_ru((unsigned long long)q[i]);
    double* h = od + 4 * i;
    h[0] = __ll2double_rz(q[i]); h[1] = __ll2double_ru(q[i]); h[2] = __ull2double_rd((unsigned long long)q[i]);
    h[3] = __ull2double_ru((unsigned long long)q[i]);
}
"""


def test_conversions_every_rounding(mi300x_module: cuda.Device) -> None:
    n = 300
    r = np.random.default_rng(5)
    f = (r.standard_normal(n) * 10.0 ** r.integers(-2, 21, n)).astype(np.float32)
    f[:9] = [np.nan, np.inf, -np.inf, -0.5, 2.5, -2.5, 9.3e18, -9.3e18, 1.9e19]
    d = r.standard_normal(n) * 10.0 ** r.integers(-2, 21, n)
    d[:9] = [np.nan, np.inf, -1e300, -0.5, 4294967295.5, 3.5, 1e-310, -1e-310, 3.5e38]
    d[9:30] = r.standard_normal(21) * 3.4e38  # past float32's range: directed results saturate or overflow
    k = r.integers(-(2 ** 31), 2 ** 31, n).astype(np.int32)
    q = (r.integers(-(2 ** 63), 2 ** 63 - 1, n, dtype=np.int64) >> r.integers(0, 63, n)).astype(np.int64)
    q[:4] = [-(2 ** 63), 2 ** 63 - 1, (1 << 53) + 1, -((1 << 60) + 3)]
    oi, ou = hip.zeros(8 * n, np.int64), hip.zeros(8 * n, np.uint64)
    of, od = hip.zeros(12 * n, np.float32), hip.zeros(4 * n, np.float64)
    hip.compile(CONVERT).get_function("cvt")(2, 256, (np.int32(n), hip.to_device(f), hip.to_device(d),
                                                      hip.to_device(k), hip.to_device(q), oi, ou, of, od))
    gi, gu, gf, gd = oi.get().reshape(n, 8), ou.get().reshape(n, 8), of.get().reshape(n, 12), od.get().reshape(n, 4)

    def to_int(v: float, mode: str, lo: int, hi: int) -> int:  # saturating; NaN -> 0 (AMD's cvt)
        if np.isnan(v):
            return 0
        if np.isinf(v):
            return hi if v > 0 else lo
        fx = Fraction(v)
        rounded = {"rn": round(fx), "rz": int(fx), "ru": -((-fx.numerator) // fx.denominator),
                   "rd": fx.numerator // fx.denominator}[mode]  # round(): ties to even
        return min(max(rounded, lo), hi)

    i64, u64, u32 = (-(2 ** 63), 2 ** 63 - 1), (0, 2 ** 64 - 1), (0, 2 ** 32 - 1)
    modes = ["rn", "rz", "ru", "rd"]
    for i in range(n):
        x, y = float(f[i]), float(d[i])
        want_i = [to_int(x, m, *i64) for m in modes] + [to_int(y, m, *i64) for m in modes]
        assert gi[i].tolist() == want_i, (x, y)
        want_u = [to_int(x, "rn", *u64), to_int(x, "ru", *u64), to_int(y, "rd", *u64), to_int(y, "rz", *u64),
                  to_int(y, "rn", *u32), to_int(y, "ru", *u32), to_int(x, "ru", *u32), to_int(x, "rd", *u32)]
        assert gu[i].tolist() == want_u, (x, y)
        kk, qq = int(k[i]), int(q[i])
        uq = qq % (1 << 64)
        want_f = [round_to(Fraction(kk), np.float32, "rz"), round_to(Fraction(kk), np.float32, "ru"),
                  round_to(Fraction(kk), np.float32, "rd"), round_to(Fraction(kk % (1 << 32)), np.float32, "rd"),
                  round_to(Fraction(qq), np.float32, "rn"), round_to(Fraction(qq), np.float32, "rz"),
                  round_to(Fraction(qq), np.float32, "ru"), round_to(Fraction(uq), np.float32, "rd")]
        want_f += [y if not np.isfinite(y) else round_to(Fraction(y), np.float32, m) for m in ("rz", "ru", "rd")]
        want_f += [round_to(Fraction(uq), np.float32, "ru")]
        got_f = gf[i]
        for j, w in enumerate(want_f):
            assert (np.isnan(w) and np.isnan(got_f[j])) or np.float32(w).view(np.uint32) == got_f[j].view(np.uint32), \
                (i, j, got_f[j], w)
        want_d = [round_to(Fraction(qq), np.float64, "rz"), round_to(Fraction(qq), np.float64, "ru"),
                  round_to(Fraction(uq), np.float64, "rd"), round_to(Fraction(uq), np.float64, "ru")]
        np.testing.assert_array_equal(gd[i].view(np.uint64), np.array(want_d).view(np.uint64), err_msg=str(i))


F32_DIRECTED = r"""
extern "C" __global__ void fdir(int n, const float* a, const float* b, const float* c, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], z = c[i];
    float r[21] = {__fadd_rz(x, y), __fadd_ru(x, y), __fadd_rd(x, y), __fsub_rz(x, y), __fsub_ru(x, y),
                   __fsub_rd(x, y), __fmul_rz(x, y), __fmul_ru(x, y), __fmul_rd(x, y), __fdiv_rz(x, y),
                   __fdiv_ru(x, y), __fdiv_rd(x, y), __fmaf_rz(x, y, z), __fmaf_ru(x, y, z), __fmaf_rd(x, y, z),
                   __fsqrt_rz(x), __fsqrt_ru(x), __fsqrt_rd(x), __frcp_rz(x), __frcp_ru(x), __frcp_rd(x)};
    for (int k = 0; k < 21; ++k) o[21 * i + k] = r[k];
}
"""


def test_f32_directed_rounding_arithmetic(mi300x_module: cuda.Device) -> None:
    n = 160
    r = np.random.default_rng(6)
    a, b, c = ((r.standard_normal(n) * 10.0 ** r.integers(-40, 39, n)).astype(np.float32) for _ in range(3))
    big, tiny = 3e38, 1e-45
    special: list[tuple[float, float, float]] = [
               (1.5, -1.5, 0.0), (0.0, 0.0, -0.0), (-0.0, 0.0, 0.0), (big, big, big), (-big, big, -big),
               (tiny, 0.5, tiny), (1.0, 0.0, 1.0), (np.inf, 2.0, -np.inf), (np.nan, 1.0, 1.0), (2.0, 3.0, -6.0),
               (1e-20, 1e-20, 0.0), (3.0, 7.0, 1e-30)]
    for j, (p, q, s) in enumerate(special):
        a[j], b[j], c[j] = p, q, s
    a[20:40] = np.abs(a[20:40])  # square roots of positive values
    o = hip.zeros(21 * n, np.float32)
    hip.compile(F32_DIRECTED).get_function("fdir")(1, 256, (np.int32(n), hip.to_device(a), hip.to_device(b),
                                                            hip.to_device(c), o))
    got = o.get().reshape(n, 21)
    modes = ("rz", "ru", "rd")

    def exact(op: str, x: float, y: float, z: float) -> Fraction | None:  # None: a special case
        if not np.isfinite([x, y, z]).all():
            return None
        fx, fy, fz = Fraction(x), Fraction(y), Fraction(z)
        if op == "add":
            return fx + fy
        if op == "sub":
            return fx - fy
        if op == "mul":
            return fx * fy
        if op == "div":
            return None if y == 0 else fx / fy
        if op == "fma":
            return fx * fy + fz
        return None  # sqrt and rcp are checked below

    for i in range(n):
        x, y, z = float(a[i]), float(b[i]), float(c[i])
        for k, op in enumerate(("add", "sub", "mul", "div", "fma")):
            e = exact(op, x, y, z)
            for m, mode in enumerate(modes):
                g = got[i, 3 * k + m]
                if e is None:
                    continue
                w = round_to(e, np.float32, mode)
                if e == 0:  # an exact zero: its sign by IEEE's rules (rd: -0 unless both addends are +0)
                    addends = {"add": (x, y), "sub": (x, -y), "fma": (x * y, z)}.get(op)
                    if addends and mode == "rd":
                        w = 0.0 if all(v == 0 and not np.signbit(v) for v in addends) else -0.0
                    elif addends:
                        w = -0.0 if all(np.signbit(v) for v in addends) else 0.0
                    else:
                        w = -0.0 if np.signbit(x) != np.signbit(y) else 0.0
                assert np.float32(w).view(np.uint32) == g.view(np.uint32), (i, op, mode, x, y, z, g, w)
        if x > 0 and np.isfinite(x):
            # sqrt: the neighbours s of the exact root are found by comparing s^2 with x exactly
            s0 = np.float32(np.sqrt(np.float64(x)))
            cands = sorted({s0, np.nextafter(s0, np.float32(0)), np.nextafter(s0, np.float32(np.inf))})
            lo = max(s for s in cands if Fraction(float(s)) ** 2 <= Fraction(x))
            hi = min(s for s in cands if Fraction(float(s)) ** 2 >= Fraction(x))
            np.testing.assert_array_equal(got[i, 15:18].view(np.uint32),
                                          np.array([lo, hi, lo], np.float32).view(np.uint32), err_msg=str(x))
            np.testing.assert_array_equal(got[i, 18:21].view(np.uint32), np.array(
                [round_to(1 / Fraction(x), np.float32, m) for m in modes], np.float32).view(np.uint32), err_msg=str(x))
    # the special rows: overflow saturates towards zero, 1/0 and inf stay infinite, NaN stays NaN
    assert got[3, 0] == np.finfo(np.float32).max and got[3, 1] == np.inf
    assert got[6, 9] == np.inf and np.isnan(got[8]).all()


SHFL64 = r"""
extern "C" __global__ void shfl64(const double* d, const long long* q, double* od, long long* oq,
                                  unsigned long long* ou, unsigned* o32) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    od[t] = __shfl(d[t], (int)(threadIdx.x * 7 + 3));                 // every lane of the wavefront
    oq[t] = __shfl_xor(q[t], 5);
    ou[t] = __shfl_down((unsigned long long)q[t], 3u, 16);
    o32[t] = __shfl_up((unsigned)q[t], 1u);
}
"""


def test_64bit_and_unsigned_shuffles(mi300x_module: cuda.Device) -> None:
    n = 128  # two wavefronts
    r = np.random.default_rng(7)
    d = r.standard_normal(n) * 1e300
    q = r.integers(-(2 ** 63), 2 ** 63 - 1, n, dtype=np.int64)
    od, oq = hip.zeros(n, np.float64), hip.zeros(n, np.int64)
    ou, o32 = hip.zeros(n, np.uint64), hip.zeros(n, np.uint32)
    hip.compile(SHFL64).get_function("shfl64")(1, n, (hip.to_device(d), hip.to_device(q), od, oq, ou, o32))
    t = np.arange(n)
    lane, base = t % 64, t - t % 64
    src = base + (t * 7 + 3) % 64
    xor = base + (lane ^ 5)
    down = np.where(lane % 16 + 3 >= 16, t, t + 3)
    up = np.where(lane == 0, t, t - 1)
    np.testing.assert_array_equal(od.get().view(np.uint64), d[src].view(np.uint64))
    np.testing.assert_array_equal(oq.get(), q[xor])
    np.testing.assert_array_equal(ou.get(), q[down].view(np.uint64))
    np.testing.assert_array_equal(o32.get(), q[up].astype(np.uint64).astype(np.uint32))


F64_DIRECTED = r"""
extern "C" __global__ void ddir(int n, const double* a, const double* b, const double* c, double* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i], z = c[i];
    double r[18] = {__dadd_rz(x, y), __dadd_ru(x, y), __dadd_rd(x, y), __dsub_rz(x, y), __dsub_ru(x, y),
                    __dsub_rd(x, y), __dmul_rz(x, y), __dmul_ru(x, y), __dmul_rd(x, y), __ddiv_rz(x, y),
                    __ddiv_ru(x, y), __ddiv_rd(x, y), __fma_rz(x, y, z), __fma_ru(x, y, z), __fma_rd(x, y, z),
                    __dsqrt_rz(x), __dsqrt_ru(x), __drcp_rd(x)};
    for (int k = 0; k < 18; ++k) o[18 * i + k] = r[k];
}
"""


def test_f64_directed_rounding_arithmetic(mi300x_module: cuda.Device) -> None:
    """Exponents across the whole range: products and quotients that underflow to subnormals or overflow, fma
    addends 2^-1000 apart (the smaller one decides only by its sign), exact cancellations."""
    n = 120
    r = np.random.default_rng(8)
    a, b, c = (r.standard_normal(n) * 2.0 ** r.integers(-560, 560, n) for _ in range(3))
    # (the last: a product underflowing to -0 plus +0, whose sign the engine's v_fma_f64 used to lose)
    a[:9], b[:9], c[:9] = ([3.0, 1e-300, 1e300, 1.5, 0.1, 2.0, 1e-160, 1.0, 4.76e-312],
                           [-3.0, 1e-20, 1e10, -1.5, 10.0, 3.0, 1e-160, 1e-300, -7.16e-308],
                           [9.0, -1e-320, -1.7e308, 2.25, -1.0, 1e-300, 5e-324, -1.0, 0.0])
    c[8:20] = a[8:20] * b[8:20] * 2.0 ** r.integers(-1100, 1100, 12)  # addends far apart
    a[20:40] = np.abs(a[20:40])
    o = hip.zeros(18 * n, np.float64)
    hip.compile(F64_DIRECTED).get_function("ddir")(1, 128, (np.int32(n), hip.to_device(a), hip.to_device(b),
                                                            hip.to_device(c), o))
    got = o.get().reshape(n, 18)
    modes = ("rz", "ru", "rd")
    for i in range(n):
        x, y, z = float(a[i]), float(b[i]), float(c[i])
        fx, fy, fz = Fraction(x), Fraction(y), Fraction(z)
        exact = {"add": fx + fy, "sub": fx - fy, "mul": fx * fy, "div": fx / fy, "fma": fx * fy + fz}
        addends = {"add": (x, y), "sub": (x, -y), "fma": (x * y, z)}
        for k, op in enumerate(("add", "sub", "mul", "div", "fma")):
            for m, mode in enumerate(modes):
                w = round_to(exact[op], np.float64, mode)
                if exact[op] == 0 and op in addends:
                    w = 0.0 if mode != "rd" or all(v == 0 and not np.signbit(v) for v in addends[op]) else -0.0
                g = got[i, 3 * k + m]
                assert np.float64(w).view(np.uint64) == g.view(np.uint64), (i, op, mode, x, y, z, g, w)
        if x > 0:
            s0 = np.sqrt(x)
            cands = sorted({s0, np.nextafter(s0, 0.0), np.nextafter(s0, np.inf)})
            lo = max(s for s in cands if Fraction(float(s)) ** 2 <= fx)
            hi = min(s for s in cands if Fraction(float(s)) ** 2 >= fx)
            assert (got[i, 15], got[i, 16]) == (lo, hi), x
        assert got[i, 17] == round_to(1 / fx, np.float64, "rd"), x
