# Conformance: integer instructions: 64-bit arithmetic, mul.wide/mul.hi (__mulhi, __umulhi,
# __mul64hi, __umul64hi), __mul24, div/rem (signed/unsigned, 32/64, negative operands, constant
# divisors), brev/clz/ffs/popc, prmt (__byte_perm), bfi (bit-field structs), shf (funnel shifts),
# sad, dp4a/dp2a, fns, averaging (__hadd/__rhadd), shifts by >= width, and setp/selp comparisons.
"""Integer kernels against exact NumPy / Python-int oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import assert_exact, both_compilers, kernel, rng, run

M32 = (1 << 32) - 1
M64 = (1 << 64) - 1


def s32(v: int) -> int:
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def s64(v: int) -> int:
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def cdiv(a: int, b: int) -> int:
    """C division: truncate toward zero."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


WIDE = kernel(
    "int.wide_mulhi_64bit",
    r"""
extern "C" __global__ void wide(int n, const int* a, const int* b, const long long* c, const long long* d,
                                long long* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    long long p = c[i], q = d[i];
    long long* o = out + 16 * i;
    o[0] = (long long)x * y;                                          // mul.wide.s32
    o[1] = (long long)((unsigned long long)(unsigned)x * (unsigned)y);  // mul.wide.u32
    o[2] = __mulhi(x, y);                                             // mul.hi.s32
    o[3] = __umulhi((unsigned)x, (unsigned)y);                        // mul.hi.u32
    o[4] = __mul64hi(p, q);                                           // mul.hi.s64
    o[5] = (long long)__umul64hi((unsigned long long)p, (unsigned long long)q);  // mul.hi.u64
    o[6] = (long long)((unsigned long long)p * (unsigned long long)q);  // mul.lo.s64
    o[7] = (long long)((unsigned long long)p + (unsigned long long)q);
    o[8] = (long long)((unsigned long long)p - (unsigned long long)q);
    o[9] = p >> 13;                                                   // shr.s64
    o[10] = (long long)((unsigned long long)p >> 13);                 // shr.u64
    o[11] = (long long)((unsigned long long)p << 7);                  // shl.b64
    o[12] = __mul24(x, y);
    o[13] = __umul24((unsigned)x, (unsigned)y);
    o[14] = (long long)x * 1000000007LL + p;                          // mad.wide-ish
    o[15] = (p & q) | (~p & (q >> 32));
}
""",
)


@both_compilers
def test_wide_mulhi_64bit(compiler: str) -> None:
    n = 400
    r = rng(40)
    a = r.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    b = r.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    c = r.integers(-(2**63), 2**63, n, dtype=np.int64)
    d = r.integers(-(2**63), 2**63, n, dtype=np.int64)
    a[:3] = [-(2**31), 2**31 - 1, -1]
    b[:3] = [-(2**31), -(2**31), -1]
    c[:3] = [-(2**63), 2**63 - 1, -1]
    d[:3] = [-(2**63), -(2**63), -1]
    outs = run(WIDE, compiler, "wide", 2, 256, np.int32(n), a, b, c, d, np.zeros(16 * n, np.int64))
    exp = []
    for x, y, p, q in zip(a.tolist(), b.tolist(), c.tolist(), d.tolist()):
        ux, uy, up, uq = x & M32, y & M32, p & M64, q & M64
        x24, y24 = s32(x << 8) >> 8, s32(y << 8) >> 8
        exp.append(
            [
                x * y,
                s64(ux * uy),
                (x * y) >> 32,
                (ux * uy) >> 32,
                (p * q) >> 64,
                s64((up * uq) >> 64),
                s64(p * q),
                s64(p + q),
                s64(p - q),
                p >> 13,
                s64(up >> 13),
                s64(up << 7),
                s32(x24 * y24),
                ((ux & 0xFFFFFF) * (uy & 0xFFFFFF)) & M32,
                s64(x * 1000000007 + p),
                s64((p & q) | (~p & (q >> 32))),
            ]
        )
    assert_exact(outs[4], np.array(exp, dtype=np.int64).ravel())


DIVREM = kernel(
    "int.div_rem_signed_unsigned",
    r"""
extern "C" __global__ void divrem(int n, const int* a, const int* b, const long long* c, const long long* d,
                                  int* o32, long long* o64) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    long long p = c[i], q = d[i];
    int* r = o32 + 10 * i;
    long long* s = o64 + 6 * i;
    r[0] = x / y;                                  // div.s32 (truncates toward zero)
    r[1] = x % y;                                  // rem.s32 (sign of dividend)
    r[2] = (int)((unsigned)x / (unsigned)y);       // div.u32
    r[3] = (int)((unsigned)x % (unsigned)y);       // rem.u32
    r[4] = x / 7;                                  // constant divisors: mul.hi + shifts
    r[5] = x % -3;
    r[6] = (int)((unsigned)x / 10u);
    r[7] = (int)((unsigned)x % 1000u);
    r[8] = x / 16;                                 // power of two: rounding fix-up for negatives
    r[9] = x % 16;
    s[0] = p / q;                                  // div.s64
    s[1] = p % q;
    s[2] = (long long)((unsigned long long)p / (unsigned long long)q);
    s[3] = (long long)((unsigned long long)p % (unsigned long long)q);
    s[4] = p / 1000003LL;
    s[5] = (long long)((unsigned long long)p % 12345ULL);
}
""",
)


@both_compilers
def test_div_rem_signed_unsigned(compiler: str) -> None:
    n = 500
    r = rng(41)
    a = r.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    b = (r.integers(-(2**31), 2**31, n, dtype=np.int64) >> r.integers(0, 31, n)).astype(np.int32)
    c = r.integers(-(2**63), 2**63, n, dtype=np.int64)
    d = r.integers(-(2**63), 2**63, n, dtype=np.int64) >> r.integers(0, 63, n)
    b[b == 0] = 3
    d[d == 0] = -5
    a[:4] = [-(2**31), 2**31 - 1, -7, 7]
    b[:4] = [1, -1, 2, -2]
    c[:4] = [-(2**63), 2**63 - 1, -7, 7]
    d[:4] = [1, -1, 2, -2]
    outs = run(
        DIVREM,
        compiler,
        "divrem",
        2,
        256,
        np.int32(n),
        a,
        b,
        c,
        d,
        np.zeros(10 * n, np.int32),
        np.zeros(6 * n, np.int64),
    )
    e32, e64 = [], []
    for x, y, p, q in zip(a.tolist(), b.tolist(), c.tolist(), d.tolist()):
        ux, uy, up, uq = x & M32, y & M32, p & M64, q & M64
        e32.append(
            [
                cdiv(x, y),
                x - cdiv(x, y) * y,
                s32(ux // uy),
                s32(ux % uy),
                cdiv(x, 7),
                x - cdiv(x, -3) * -3,
                s32(ux // 10),
                s32(ux % 1000),
                cdiv(x, 16),
                x - cdiv(x, 16) * 16,
            ]
        )
        e64.append(
            [
                cdiv(p, q),
                p - cdiv(p, q) * q,
                s64(up // uq),
                s64(up % uq),
                cdiv(p, 1000003),
                s64(up % 12345),
            ]
        )
    assert_exact(outs[4], np.array(e32, dtype=np.int32).ravel())
    assert_exact(outs[5], np.array(e64, dtype=np.int64).ravel())


BITS = kernel(
    "int.bit_manipulation",
    r"""
extern "C" __global__ void bits(int n, const unsigned* a, const unsigned* b, const unsigned long long* c,
                                unsigned* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i];
    unsigned long long p = c[i];
    unsigned* r = o + 20 * i;
    r[0] = __brev(x);                              // brev.b32
    r[1] = (unsigned)(__brevll(p) >> 17);          // brev.b64
    r[2] = __clz(x);                               // clz.b32
    r[3] = __clzll(p);                             // clz.b64
    r[4] = __ffs(x);                               // 1-based lowest set bit, 0 for 0
    r[5] = __ffsll(p);
    r[6] = __popc(x);                              // popc.b32
    r[7] = __popcll(p);                            // popc.b64
    r[8] = __byte_perm(x, y, 0x3210);              // prmt.b32: identity
    r[9] = __byte_perm(x, y, 0x0123);              // byte reverse
    r[10] = __byte_perm(x, y, 0x7531);
    r[11] = __byte_perm(x, y, y & 0x7777);         // per-thread selector
    r[12] = (x & y) ^ (~y | x);                    // three-input logic (lop3 in SASS)
    r[13] = (x >> 7) & 0x3ffu;                     // field extract
    r[14] = (unsigned)(((int)(x << 9)) >> 20);     // signed field extract
    r[15] = (x & ~(0xffu << 12)) | ((y & 0xffu) << 12);   // field insert
    r[16] = 31 - __clz(x | 1u);                    // highest set bit (bfind-like)
    r[17] = x ^ (x >> 16) ^ (x << 5);
    r[18] = (unsigned)(p >> 32) ^ (unsigned)p;     // 64-bit halves
    r[19] = __popc(x & -x);                        // neg on unsigned
}
""",
)


def _prmt(x: int, y: int, s: int) -> int:
    """PTX prmt.b32 default mode (selectors here never set the sign-replicate bit)."""
    src = (y << 32) | x
    out = 0
    for k in range(4):
        sel = (s >> (4 * k)) & 0xF
        byte = (src >> (8 * (sel & 7))) & 0xFF
        if sel & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << (8 * k)
    return out


def _brev(v: int, w: int) -> int:
    return int(format(v, f"0{w}b")[::-1], 2)


def _clz(v: int, w: int) -> int:
    return w - v.bit_length()


def _ffs(v: int) -> int:
    return (v & -v).bit_length()


@both_compilers
def test_bit_manipulation(compiler: str) -> None:
    n = 300
    r = rng(42)
    a = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    c = r.integers(0, 2**64, n, dtype=np.uint64)
    a[:4] = [0, 1, 0x80000000, M32]
    c[:4] = [0, 1, 1 << 63, M64]
    a[4:40] >>= r.integers(0, 32, 36).astype(np.uint32)  # varied leading-zero counts
    c[4:40] >>= r.integers(0, 64, 36).astype(np.uint64)
    outs = run(BITS, compiler, "bits", 2, 256, np.int32(n), a, b, c, np.zeros(20 * n, np.uint32))
    exp = []
    for x, y, p in zip(a.tolist(), b.tolist(), c.tolist()):
        exp.append(
            [
                _brev(x, 32),
                (_brev(p, 64) >> 17) & M32,
                _clz(x, 32),
                _clz(p, 64),
                _ffs(x),
                _ffs(p),
                bin(x).count("1"),
                bin(p).count("1"),
                _prmt(x, y, 0x3210),
                _prmt(x, y, 0x0123),
                _prmt(x, y, 0x7531),
                _prmt(x, y, y & 0x7777),
                (x & y) ^ ((~y & M32) | x),
                (x >> 7) & 0x3FF,
                (s32(x << 9) >> 20) & M32,
                (x & ~(0xFF << 12) & M32) | ((y & 0xFF) << 12),
                (x | 1).bit_length() - 1,
                (x ^ (x >> 16) ^ (x << 5)) & M32,
                (p >> 32) ^ (p & M32),
                bin(x & -x & M32).count("1"),
            ]
        )
    assert_exact(outs[3], np.array(exp, dtype=np.uint64).astype(np.uint32).ravel())


FUNNEL = kernel(
    "int.funnel_shift_sad_dp4a_avg",
    r"""
extern "C" __global__ void funnel(int n, const unsigned* a, const unsigned* b, const unsigned* s,
                                  unsigned* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i], k = s[i];
    unsigned* r = o + 14 * i;
    r[0] = __funnelshift_l(x, y, k);      // shf.l.wrap.b32: shift mod 32
    r[1] = __funnelshift_lc(x, y, k);     // shf.l.clamp.b32: shift clamped to 32
    r[2] = __funnelshift_r(x, y, k);      // shf.r.wrap.b32
    r[3] = __funnelshift_rc(x, y, k);     // shf.r.clamp.b32
    r[4] = __sad((int)x, (int)y, k);      // sad.s32: |x - y| + k
    r[5] = __usad(x, y, k);               // sad.u32
    r[6] = (unsigned)__dp4a((int)x, (int)y, (int)k);    // dp4a.s32.s32
    r[7] = __dp4a(x, y, k);                             // dp4a.u32.u32
    r[8] = (unsigned)__dp2a_lo((int)x, (int)y, (int)k); // dp2a.lo.s32.s32
    r[9] = __dp2a_hi(x, y, k);                          // dp2a.hi.u32.u32
    r[10] = (unsigned)__hadd((int)x, (int)y);   // floor((x + y) / 2) without overflow
    r[11] = (unsigned)__rhadd((int)x, (int)y);  // floor((x + y + 1) / 2)
    r[12] = __uhadd(x, y);
    r[13] = __urhadd(x, y);
}
""",
)


def _bytes(v: int, signed: bool, size: int = 8) -> list[int]:
    out = []
    for k in range(32 // size):
        f = (v >> (size * k)) & ((1 << size) - 1)
        if signed and f >> (size - 1):
            f -= 1 << size
        out.append(f)
    return out


@both_compilers
def test_funnel_shift_sad_dp4a_avg(compiler: str) -> None:
    n = 300
    r = rng(43)
    a = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    b = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    k = r.integers(0, 70, n).astype(np.uint32)
    k[:5] = [0, 31, 32, 33, 64]
    outs = run(FUNNEL, compiler, "funnel", 2, 256, np.int32(n), a, b, k, np.zeros(14 * n, np.uint32))
    exp = []
    for x, y, s in zip(a.tolist(), b.tolist(), k.tolist()):
        cat = (y << 32) | x
        sx, sy = s32(x), s32(y)
        bx, by = _bytes(x, True), _bytes(y, True)
        ux, uy = _bytes(x, False), _bytes(y, False)
        hx_s, hx_u = _bytes(x, True, 16), _bytes(x, False, 16)
        exp.append(
            [
                ((cat << (s & 31)) >> 32) & M32,
                ((cat << min(s, 32)) >> 32) & M32,
                (cat >> (s & 31)) & M32,
                (cat >> min(s, 32)) & M32,
                (abs(sx - sy) + s) & M32,
                (abs(x - y) + s) & M32,
                (sum(p * q for p, q in zip(bx, by)) + s32(s)) & M32,
                (sum(p * q for p, q in zip(ux, uy)) + s) & M32,
                (hx_s[0] * by[0] + hx_s[1] * by[1] + s32(s)) & M32,
                (hx_u[0] * uy[2] + hx_u[1] * uy[3] + s) & M32,
                ((sx + sy) >> 1) & M32,
                ((sx + sy + 1) >> 1) & M32,
                (x + y) >> 1,
                (x + y + 1) >> 1,
            ]
        )
    assert_exact(outs[3], np.array(exp, dtype=np.uint64).astype(np.uint32).ravel())


SHIFTS = kernel(
    "int.shift_by_width_or_more",
    r"""
extern "C" __global__ void shifts(int n, const unsigned* a, const unsigned long long* c, const unsigned* s,
                                  unsigned* o32, unsigned long long* o64) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], k = s[i];
    unsigned long long p = c[i];
    // Runtime shift amounts go straight to shl/shr, whose PTX semantics clamp amounts >= width:
    // shl/shr.u give 0, shr.s gives the sign fill. (C leaves these undefined; PTX does not.)
    o32[3 * i + 0] = x << k;
    o32[3 * i + 1] = x >> k;
    o32[3 * i + 2] = (unsigned)((int)x >> k);
    o64[3 * i + 0] = p << k;
    o64[3 * i + 1] = p >> k;
    o64[3 * i + 2] = (unsigned long long)((long long)p >> k);
}
""",
)


@both_compilers
def test_shift_by_width_or_more(compiler: str) -> None:
    n = 200
    r = rng(44)
    a = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    c = r.integers(0, 2**64, n, dtype=np.uint64)
    k = r.integers(0, 100, n).astype(np.uint32)
    k[:6] = [0, 31, 32, 33, 63, 64]
    outs = run(
        SHIFTS,
        compiler,
        "shifts",
        1,
        256,
        np.int32(n),
        a,
        c,
        k,
        np.zeros(3 * n, np.uint32),
        np.zeros(3 * n, np.uint64),
    )
    e32, e64 = [], []
    for x, p, s in zip(a.tolist(), c.tolist(), k.tolist()):
        s32c, s64c = min(s, 32), min(s, 64)
        e32.append([(x << s32c) & M32, x >> s32c, (s32(x) >> s32c) & M32])
        e64.append([(p << s64c) & M64, p >> s64c, (s64(p) >> s64c) & M64])
    assert_exact(outs[3], np.array(e32, dtype=np.uint64).astype(np.uint32).ravel())
    assert_exact(outs[4], np.array(e64, dtype=np.uint64).ravel())


COMPARE = kernel(
    "int.setp_selp_comparisons",
    r"""
extern "C" __global__ void cmp(int n, const int* a, const int* b, const long long* c, const long long* d,
                               unsigned* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    long long p = c[i], q = d[i];
    unsigned long long up = (unsigned long long)p, uq = (unsigned long long)q;
    unsigned bitsv = 0;
    bitsv |= (x < y) << 0;   bitsv |= (x <= y) << 1;  bitsv |= (x > y) << 2;   bitsv |= (x >= y) << 3;
    bitsv |= (x == y) << 4;  bitsv |= (x != y) << 5;
    bitsv |= (ux < uy) << 6; bitsv |= (ux <= uy) << 7; bitsv |= (ux > uy) << 8; bitsv |= (ux >= uy) << 9;
    bitsv |= (p < q) << 10;  bitsv |= (p <= q) << 11; bitsv |= (p > q) << 12;  bitsv |= (p >= q) << 13;
    bitsv |= (p == q) << 14; bitsv |= (p != q) << 15;
    bitsv |= (up < uq) << 16; bitsv |= (up <= uq) << 17; bitsv |= (up > uq) << 18; bitsv |= (up >= uq) << 19;
    bitsv |= ((x < 0) && (p > 0)) << 20;
    bitsv |= ((x < 0) || (uy > 100u)) << 21;
    bitsv |= ((x < y) != (p < q)) << 22;             // xor of predicates
    o[4 * i + 0] = bitsv;
    o[4 * i + 1] = (x < y) ? ux : uy;                 // selp
    o[4 * i + 2] = (unsigned)min(x, y) ^ max(ux, uy); // min.s32 / max.u32
    o[4 * i + 3] = (unsigned)(p < q ? p : q) ^ (unsigned)(up > uq ? up : uq);  // 64-bit min/max
}
""",
)


@both_compilers
def test_setp_selp_comparisons(compiler: str) -> None:
    n = 500
    r = rng(45)
    a = r.integers(-5, 5, n).astype(np.int32)  # many ties
    b = r.integers(-5, 5, n).astype(np.int32)
    a[::3] = r.integers(-(2**31), 2**31, len(a[::3]), dtype=np.int64).astype(np.int32)
    c = r.integers(-3, 3, n).astype(np.int64) << 40
    d = r.integers(-3, 3, n).astype(np.int64) << 40
    c[::5] = r.integers(-(2**63), 2**63, len(c[::5]), dtype=np.int64)
    outs = run(COMPARE, compiler, "cmp", 2, 256, np.int32(n), a, b, c, d, np.zeros(4 * n, np.uint32))
    exp = []
    for x, y, p, q in zip(a.tolist(), b.tolist(), c.tolist(), d.tolist()):
        ux, uy, up, uq = x & M32, y & M32, p & M64, q & M64
        preds = [
            x < y,
            x <= y,
            x > y,
            x >= y,
            x == y,
            x != y,
            ux < uy,
            ux <= uy,
            ux > uy,
            ux >= uy,
            p < q,
            p <= q,
            p > q,
            p >= q,
            p == q,
            p != q,
            up < uq,
            up <= uq,
            up > uq,
            up >= uq,
            x < 0 and p > 0,
            x < 0 or uy > 100,
            (x < y) != (p < q),
        ]
        bitsv = sum(int(v) << k for k, v in enumerate(preds))
        exp.append(
            [
                bitsv,
                ux if x < y else uy,
                (min(x, y) & M32) ^ max(ux, uy),
                (min(p, q) & M32) ^ (max(up, uq) & M32),
            ]
        )
    assert_exact(outs[4], np.array(exp, dtype=np.uint64).astype(np.uint32).ravel())


FNS = kernel(
    "int.fns_find_nth_set",
    r"""
extern "C" __global__ void fns(int n, const unsigned* mask, const unsigned* base, const int* off,
                               unsigned* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) o[i] = __fns(mask[i], base[i], off[i]);
}
""",
)


def _fns(mask: int, base: int, off: int) -> int:
    """PTX fns.b32: the |off|-th set bit counting from `base` inclusive, upward for off > 0 and
    downward for off < 0; off == 0 tests bit `base` itself; 0xffffffff when there is none."""
    if off == 0:
        return base if mask >> base & 1 else M32
    positions = range(base, 32) if off > 0 else range(base, -1, -1)
    count = 0
    for p in positions:
        if mask >> p & 1:
            count += 1
            if count == abs(off):
                return p
    return M32


@both_compilers
def test_fns_find_nth_set(compiler: str) -> None:
    n = 256
    r = rng(46)
    mask = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    base = r.integers(0, 32, n).astype(np.uint32)
    mask[::2] |= (np.uint32(1) << base[::2]).astype(np.uint32)  # base lane in the mask, as in cg
    mask[1::8] = 0
    off = r.choice(np.array([-6, -3, -2, -1, 0, 1, 2, 3, 7, 40]), n).astype(np.int32)
    outs = run(FNS, compiler, "fns", 1, 256, np.int32(n), mask, base, off, np.zeros(n, np.uint32))
    exp = [_fns(m, b, o) for m, b, o in zip(mask.tolist(), base.tolist(), off.tolist())]
    assert_exact(outs[3], np.array(exp, dtype=np.uint32))


NARROW = kernel(
    "int.short_and_char_arithmetic",
    r"""
extern "C" __global__ void narrow(int n, const short* a, const short* b, const unsigned char* c, short* o16,
                                  unsigned char* o8) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    short x = a[i], y = b[i];
    unsigned char u = c[i];
    o16[3 * i + 0] = (short)(x + y);          // wraps to 16 bits
    o16[3 * i + 1] = (short)(x * y);
    o16[3 * i + 2] = (short)(x >> 3) ^ y;
    o8[2 * i + 0] = (unsigned char)(u * 3 + 7);
    o8[2 * i + 1] = (unsigned char)(u > 128 ? u - 128 : u + 100);
}
""",
)


@both_compilers
def test_short_and_char_arithmetic(compiler: str) -> None:
    n = 300
    r = rng(47)
    a = r.integers(-(2**15), 2**15, n).astype(np.int16)
    b = r.integers(-(2**15), 2**15, n).astype(np.int16)
    c = r.integers(0, 256, n).astype(np.uint8)
    outs = run(
        NARROW,
        compiler,
        "narrow",
        2,
        256,
        np.int32(n),
        a,
        b,
        c,
        np.zeros(3 * n, np.int16),
        np.zeros(2 * n, np.uint8),
    )
    a32, b32, c32 = a.astype(np.int32), b.astype(np.int32), c.astype(np.int32)
    e16 = np.stack([a32 + b32, a32 * b32, (a32 >> 3) ^ b32], axis=1).astype(np.int16).ravel()
    e8 = np.stack([c32 * 3 + 7, np.where(c32 > 128, c32 - 128, c32 + 100)], axis=1).astype(np.uint8).ravel()
    assert_exact(outs[3], e16)
    assert_exact(outs[4], e8)
