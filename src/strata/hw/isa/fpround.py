# Source of truth for how the virtual GPU rounds floating-point results exactly: error-free
# transforms (TwoSum, TwoProduct), round-to-odd, directed rounding from the sign of a residual, and
# the bit-level conversions between f64/f32/f16/bf16/tf32/fp8 that the float, half and cvt families
# share. Everything here is vectorized over lanes and bit-exact (IEEE 754 with every PTX mode).
"""Exact rounding helpers for the floating-point instruction families.

The host FPU only rounds to nearest-even, in f32 or f64. Everything else is built from that:

- ``two_sum``/``two_prod`` give the exact error of an f64 addition/multiplication, so a result and
  its error form an exact unevaluated sum.
- ``round_odd`` turns (result, error) into round-to-odd in f64; rounding that again to any format
  with at most 51 bits of precision is correct for every rounding mode (Boldo & Melquiond).
- ``step`` fixes a round-to-nearest result for ``.rz/.rm/.rp`` from the sign of ``exact - result``.
- ``narrow`` rounds exact (or round-to-odd) f64 values to f32/f16/bf16/fp8 bits in any mode.
- ``round_fraction`` is the scalar exact fallback (Python rationals) for the rare lanes whose
  operands are so large or tiny that the error-free transforms would over/underflow.

Example:
    >>> import numpy as np
    >>> x = np.array([1 + 2.0**-24, 1 + 3 * 2.0**-24])      # exact f64 values between two f32s
    >>> narrow(x, "f32", "rn").view(np.float32).tolist() == [1.0, 1 + 2.0**-22]
    True
    >>> hex(int(narrow(np.array([1.0 + 2.0**-11]), "f16", "rp")[0]))
    '0x3c01'
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

ROUND_MODES = ("rn", "rz", "rm", "rp")
INT_ROUND_MODES = ("rni", "rzi", "rmi", "rpi")

CANON_NAN32 = np.uint32(0x7FFFFFFF)  # what NVIDIA GPUs return for an f32 NaN result
CANON_NAN16 = np.uint16(0x7FFF)  # f16 and bf16 NaN results
FLT_MIN = np.float32(2.0**-126)  # smallest normal f32
HALF_MIN = np.float32(2.0**-14)  # smallest normal f16

SPLIT = 134217729.0  # 2^27 + 1, Veltkamp's splitter for f64


@dataclass(frozen=True)
class Format:
    """A binary floating-point format: precision p (with the hidden bit), exponent range, width."""

    name: str
    p: int
    emin: int
    emax: int
    width: int
    max_finite: float
    has_inf: bool = True

    @property
    def min_normal(self) -> float:
        return 2.0**self.emin


FORMATS: dict[str, Format] = {
    "f64": Format("f64", 53, -1022, 1023, 64, float(np.finfo(np.float64).max)),
    "f32": Format("f32", 24, -126, 127, 32, float(np.finfo(np.float32).max)),
    "f16": Format("f16", 11, -14, 15, 16, 65504.0),
    "bf16": Format("bf16", 8, -126, 127, 16, (2 - 2.0**-7) * 2.0**127),
    "tf32": Format("tf32", 11, -126, 127, 32, (2 - 2.0**-10) * 2.0**127),
    "e4m3": Format("e4m3", 4, -6, 8, 8, 448.0, has_inf=False),  # OCP E4M3 ("fn"): no inf, S.1111.111 is NaN
    "e5m2": Format("e5m2", 3, -14, 15, 8, 57344.0),
}


# ------------------------------------------------------------------------------------------------
# Scratch buffers: ops reuse their temporaries instead of allocating (and page-faulting) each call
# ------------------------------------------------------------------------------------------------


class Scratch:
    """Per-thread reusable work arrays, keyed by a tag, the lane count and the dtype."""

    def __init__(self) -> None:
        self._local = threading.local()

    def get(self, tag: str, n: int, dtype: Any) -> np.ndarray:
        pool: dict[tuple[str, int, Any], np.ndarray] | None = getattr(self._local, "pool", None)
        if pool is None:
            pool = self._local.pool = {}
        key = (tag, n, dtype)
        a = pool.get(key)
        if a is None:
            if len(pool) > 256:
                pool.clear()
            a = pool[key] = np.empty(n, dtype=dtype)
        return a


# ------------------------------------------------------------------------------------------------
# Error-free transforms
# ------------------------------------------------------------------------------------------------


def two_sum(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """(s, e) with s = RN(a + b) and s + e == a + b exactly (Knuth; any magnitudes, no overflow)."""
    s = np.add(a, b)
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    return s, e


def split(a: Any) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp split: a == hi + lo with 26-bit halves (needs |a| < 2^996)."""
    t = np.multiply(a, SPLIT)
    hi = t - (t - a)
    return hi, a - hi


def two_prod(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p = RN(a * b) and p + e == a * b exactly (Dekker).

    Valid when |a|, |b| < 2^996 and the error is representable (|a * b| >= 2^-969, or a * b == 0).
    """
    p = np.multiply(a, b)
    ah, al = split(a)
    bh, bl = split(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def round_odd(s: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Round-to-odd of the exact value s + e, where s = RN(s + e) (both f64).

    An inexact result gets an odd last bit: s itself if odd, else its neighbour toward e. Rounding
    that to a format of p <= 51 bits, in any mode, equals rounding s + e directly.
    """
    s = np.array(s, dtype=np.float64, ndmin=1)  # copy: the result is new storage
    bits = s.view(np.int64)
    need = (bits & 1) == 0
    need &= (e > 0) | (e < 0)  # NaN errors (non-finite s) never adjust
    # sign-magnitude: +1 on the int64 view moves away from zero for either sign
    away = (e > 0) == (s > 0)
    bits += np.where(need, np.where(away, 1, -1), 0)
    return s


def sum_sign(*terms: Any) -> np.ndarray:
    """Sign (-1, 0, +1 as f64) of the exact sum of a few f64 arrays (Shewchuk's grow-expansion).

    The terms are summed into a non-overlapping expansion; the sign of the sum is the sign of its
    largest nonzero component. Exact for any finite inputs whose partial sums do not overflow.
    """
    comps: list[Any] = []
    for t in terms:
        q = t
        for i, c in enumerate(comps):
            q, h = two_sum(q, c)
            comps[i] = h
        comps.append(q)
    sign = np.zeros(np.broadcast(*terms).shape)
    for c in comps:  # increasing magnitude: the last nonzero component decides
        sign = np.where(c != 0, np.sign(c), sign)
    return sign


# ------------------------------------------------------------------------------------------------
# Directed rounding by one step
# ------------------------------------------------------------------------------------------------


def step(bits: np.ndarray, gt: Any, lt: Any, mode: str) -> np.ndarray:
    """Adjust round-to-nearest result bits for a directed mode, in place and returned.

    bits: signed-integer view of the result's bit patterns (sign-magnitude floats).
    gt, lt: where the exact value is greater / less than the result.
    Adding 1 to the signed view moves away from zero, subtracting moves toward zero (for both signs).
    (Plain arithmetic on 0/1 arrays: masked ufuncs with scattered masks are far slower.)
    """
    if mode == "rn":
        return bits
    neg = (bits < 0).view(np.int8)  # 0/1 bytes: small temporaries
    if mode == "rz":  # exact nearer zero than the result: one step toward zero
        bits -= ((lt & (neg == 0)) | (gt & (neg == 1))).view(np.int8)
    elif mode == "rm":  # exact below the result: one step toward -inf (+1 on negatives)
        bits += np.asarray(lt, dtype=np.bool_).view(np.int8) * (neg * np.int8(2) - np.int8(1))
    elif mode == "rp":  # exact above: one step toward +inf (-1 on negatives)
        bits += np.asarray(gt, dtype=np.bool_).view(np.int8) * (np.int8(1) - neg * np.int8(2))
    else:
        raise ValueError(f"[step] unknown rounding mode {mode!r}")
    return bits


def step_by_sign(r: np.ndarray, sgn: Any, mode: str) -> np.ndarray:
    """Directed rounding of float array r (an RN result) given sgn = sign(exact - r) (NaN: keep)."""
    r = np.array(r, ndmin=1)
    if mode != "rn":
        ib = r.view(np.int32 if r.dtype == np.float32 else np.int64)
        step(ib, sgn > 0, sgn < 0, mode)
    return r


# ------------------------------------------------------------------------------------------------
# f64 -> f32
# ------------------------------------------------------------------------------------------------


def ro_f32(x: Any) -> np.ndarray:
    """Round-to-odd of f64 values to f32 (the f32 whose odd last bit records inexactness)."""
    x = np.array(x, dtype=np.float64, ndmin=1, copy=None)
    r = x.astype(np.float32)
    back = r.astype(np.float64)
    rb = r.view(np.int32)
    need = (back != x) & ((rb & 1) == 0) & ~np.isnan(x)
    away = np.abs(x) > np.abs(back)  # inf results (overflow) step back to the largest finite
    rb += np.where(need, np.where(away, 1, -1), 0).astype(np.int32)
    return r


def to_f32(x: Any, mode: str) -> np.ndarray:
    """Round exact (or round-to-odd) f64 values to f32 with a PTX rounding mode."""
    x = np.array(x, dtype=np.float64, ndmin=1, copy=None)
    r = x.astype(np.float32)
    if mode != "rn":
        back = r.astype(np.float64)
        step(r.view(np.int32), x > back, x < back, mode)
    return r


def canon_nan32(r: Any) -> np.ndarray:
    """Replace NaNs in an f32 array by the canonical 0x7fffffff (in place for arrays of ndim >= 1)."""
    r = np.array(r, dtype=np.float32, ndmin=1, copy=None)
    if np.isnan(np.minimum.reduce(r, axis=None)):  # a NaN anywhere propagates through min
        r.view(np.uint32)[np.isnan(r)] = CANON_NAN32
    return r


def flush32(x: Any) -> Any:
    """.ftz for f32: subnormals become zero of the same sign (returns x itself when none are)."""
    x = np.asarray(x, dtype=np.float32)
    # |bits| - 1 wraps zero to the top, so only subnormals fall below 0x7fffff
    m = (x.view(np.uint32) & np.uint32(0x7FFFFFFF)) - np.uint32(1)
    if m.size == 0 or np.min(m) >= 0x7FFFFF:
        return x
    return np.where(m < np.uint32(0x7FFFFF), np.copysign(np.float32(0), x), x)


def flush64_as32(x: Any) -> Any:
    """.ftz applied to f64 values that hold f32 numbers (flush below the f32 normal range)."""
    a = np.abs(x)
    sub = (a < 2.0**-126) & (a > 0)
    if not sub.any():
        return x
    return np.where(sub, np.copysign(0.0, x), x)


# ------------------------------------------------------------------------------------------------
# f16 and bf16 bit patterns
# ------------------------------------------------------------------------------------------------

_F16_EXP_SHIFT = np.uint32(13)
_MAGIC_112 = np.float32(2.0**112)


def f16_to_f32(h: Any) -> np.ndarray:
    """Exact f16 bits -> f32 values (NaN payloads kept, quiet bit as stored)."""
    h32 = np.array(h, ndmin=1).astype(np.uint32)
    sign = (h32 & np.uint32(0x8000)) << np.uint32(16)
    em = (h32 & np.uint32(0x7FFF)) << _F16_EXP_SHIFT
    # the exponent/mantissa field read as an f32 is the value times 2^-112 (subnormals included)
    f = em.view(np.float32) * _MAGIC_112
    fb = f.view(np.uint32)
    special = em >= np.uint32(0x7C00 << 13)  # inf/NaN: all-ones exponent
    fb |= np.where(special, np.uint32(0x7F800000), np.uint32(0)) | sign
    return f


def f32_to_f16(x: Any, mode: str = "rn") -> np.ndarray:
    """f32 values -> f16 bits (uint16) in a PTX rounding mode; NaN -> canonical 0x7fff."""
    x = np.array(x, dtype=np.float32, ndmin=1, copy=None)
    u = x.view(np.uint32)
    sign = (u >> np.uint32(16)) & np.uint32(0x8000)
    a = u & np.uint32(0x7FFFFFFF)
    # normal results: rebias the exponent and round the 13 dropped bits to nearest-even
    odd = (a >> np.uint32(13)) & np.uint32(1)
    o = (a + np.uint32(0xC8000FFF) + odd) >> np.uint32(13)  # 0xC8000FFF = ((15-127) << 23) + 0xfff
    # subnormal results: let the FPU round by adding 0.5, whose ulp is the f16 subnormal quantum
    tiny = a < np.uint32(113 << 23)
    if tiny.any():
        s = (a.view(np.float32) + np.float32(0.5)).view(np.uint32) - np.uint32(0x3F000000)
        o = np.where(tiny, s, o)
    o = np.where(a >= np.uint32(0x47800000), np.uint32(0x7C00), o) | sign  # >= 65536: inf
    o = np.where(a > np.uint32(0x7F800000), np.uint32(0x7FFF), o)
    r = o.astype(np.uint16)
    if mode != "rn":
        back = f16_to_f32(r)
        step(r.view(np.int16), x > back, x < back, mode)
    return r


def bf16_to_f32(h: Any) -> np.ndarray:
    """Exact bf16 bits -> f32 values."""
    return (np.array(h, ndmin=1).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(x: Any, mode: str = "rn") -> np.ndarray:
    """f32 values -> bf16 bits (uint16) in a PTX rounding mode; NaN -> canonical 0x7fff."""
    x = np.array(x, dtype=np.float32, ndmin=1, copy=None)
    u = x.view(np.uint32)
    if mode == "rz":
        o = u >> np.uint32(16)
    else:
        o = (u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    r = np.where(np.isnan(x), np.uint32(0x7FFF), o).astype(np.uint16)
    if mode not in ("rn", "rz"):
        back = bf16_to_f32(r)
        step(r.view(np.int16), x > back, x < back, mode)
    return r


def f32_to_tf32(x: Any, mode: str) -> np.ndarray:
    """f32 values -> tf32 (f32 bits with the low 13 mantissa bits zero): rn, rna, rz."""
    u = np.array(x, dtype=np.float32, ndmin=1, copy=None).view(np.uint32)
    keep = np.uint32(0xFFFFE000)
    if mode == "rz":
        o = u & keep
    elif mode == "rna":
        o = (u + np.uint32(0x1000)) & keep
    elif mode == "rn":
        o = (u + np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))) & keep
    else:
        raise ValueError(f"[tf32] unsupported rounding mode {mode!r}")
    return np.where(np.isnan(u.view(np.float32)), CANON_NAN32, o)


# ------------------------------------------------------------------------------------------------
# Generic narrowing
# ------------------------------------------------------------------------------------------------


def round_small(x: Any, fmt: Format, mode: str) -> np.ndarray:
    """Round exact f64 values to a small format's value set (p <= 24), returned as f64 values.

    Overflow follows IEEE for the mode (inf, or the largest finite value for modes that round
    toward it). Formats without infinities (e4m3) also get +-inf: their conversions are always
    .satfinite, which clamps it to the largest finite value.
    """
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    _, e = np.frexp(ax)  # ax = m * 2^e, m in [0.5, 1)
    q = np.maximum(e - 1, fmt.emin) - (fmt.p - 1)  # exponent of the quantum (ulp)
    y = np.ldexp(ax, -q)  # exact: a power-of-two scaling into [0, 2^p)
    neg = np.signbit(x)
    if mode == "rn":
        r = np.rint(y)
    elif mode == "rna":
        r = np.floor(y + 0.5)
    elif mode == "rz":
        r = np.floor(y)
    elif mode == "rm":
        r = np.where(neg, np.ceil(y), np.floor(y))
    elif mode == "rp":
        r = np.where(neg, np.floor(y), np.ceil(y))
    else:
        raise ValueError(f"[round_small] unknown rounding mode {mode!r}")
    v = np.ldexp(r, q)
    big = v > fmt.max_finite
    if big.any():
        to_inf = {"rn": True, "rna": True, "rz": False, "rm": neg, "rp": ~neg}[mode]
        v = np.where(big, np.where(to_inf, np.inf, fmt.max_finite), v)
    v = np.where(np.isfinite(ax), v, ax)  # inf and NaN pass through
    return np.copysign(v, x)


def narrow(x: Any, fmt_name: str, mode: str) -> np.ndarray:
    """Round exact (or round-to-odd f64) values to the bits of an f32/f16/bf16 format.

    Returns uint32 bits for f32, uint16 for f16/bf16. NaN results are the canonical NaN.
    """
    x = np.asarray(x, dtype=np.float64)
    if fmt_name == "f32":
        r = to_f32(x, mode)
        return canon_nan32(r).view(np.uint32)
    x32 = ro_f32(x)  # exact when x is an f32 value; otherwise round-to-odd (24 >= 11 + 2 bits)
    if fmt_name == "f16":
        return f32_to_f16(x32, mode)
    if fmt_name == "bf16":
        return f32_to_bf16(x32, mode)
    raise ValueError(f"[narrow] unknown format {fmt_name!r}")


# ------------------------------------------------------------------------------------------------
# Integers
# ------------------------------------------------------------------------------------------------


def int_parts(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hi, lo) f64 arrays with hi + lo == v exactly, for any int64/uint64 array."""
    v = np.asarray(v)
    if v.dtype.itemsize < 8:
        return v.astype(np.float64), np.zeros(v.shape)
    hi = (v >> v.dtype.type(32)).astype(np.float64) * 2.0**32  # exact: 32 significant bits
    lo = (v & v.dtype.type(0xFFFFFFFF)).astype(np.float64)
    return hi, lo


def int_to_float(v: Any, fmt_name: str, mode: str) -> np.ndarray:
    """Correctly rounded integer -> float conversion; returns the float bits (uint16/32/64)."""
    v = np.asarray(v)
    hi, lo = int_parts(v)
    s, e = two_sum(hi, lo)  # s + e is the integer exactly
    if fmt_name == "f64":
        return step_by_sign(s, e, mode).view(np.uint64)
    return narrow(round_odd(s, e), fmt_name, mode)


def round_integral(x: Any, irnd: str) -> np.ndarray:
    """Round float values to integral values of the same type (rni: ties to even)."""
    fn = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[irnd]
    return fn(x)


# ------------------------------------------------------------------------------------------------
# Scalar exact fallback
# ------------------------------------------------------------------------------------------------


def round_fraction(q: Fraction, fmt: Format, mode: str, negative_zero: bool = False) -> float:
    """Round an exact rational to fmt with mode (rn/rna/rz/rm/rp); a Python float (inf on overflow).

    Used lane by lane only where the vectorized error-free transforms cannot be exact.
    """
    if q == 0:
        return -0.0 if negative_zero else 0.0
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, fmt.emin) - fmt.p + 1)
    m = a / quantum
    lo = m.numerator // m.denominator
    rem = m - lo
    half = Fraction(1, 2)
    if mode == "rn":
        up = rem > half or (rem == half and lo % 2 == 1)
    elif mode == "rna":
        up = rem >= half
    elif mode == "rz":
        up = False
    elif mode == "rp":
        up = rem > 0 and not neg
    elif mode == "rm":
        up = rem > 0 and neg
    else:
        raise ValueError(f"[round_fraction] unknown rounding mode {mode!r}")
    r = (lo + int(up)) * quantum
    if r > Fraction(fmt.max_finite):
        to_inf = mode in ("rn", "rna") or (mode == "rp" and not neg) or (mode == "rm" and neg)
        f = float("inf") if to_inf else fmt.max_finite
    else:
        f = float(r)
    return -f if neg else f


def exact_fma_scalar(a: float, b: float, c: float, fmt: Format, mode: str) -> float:
    """fma(a, b, c) rounded once to fmt (finite inputs), with IEEE signed-zero rules."""
    q = Fraction(a) * Fraction(b) + Fraction(c)
    if q == 0:
        prod_neg = (np.signbit(a) != np.signbit(b))
        exact_zero_prod = a == 0 or b == 0
        if exact_zero_prod and c == 0 and prod_neg == bool(np.signbit(c)):
            return -0.0 if prod_neg else 0.0
        return -0.0 if mode == "rm" else 0.0
    return round_fraction(q, fmt, mode)


__all__ = [
    "CANON_NAN16", "CANON_NAN32", "FLT_MIN", "FORMATS", "HALF_MIN", "INT_ROUND_MODES", "ROUND_MODES", "SPLIT",
    "Format", "Scratch", "bf16_to_f32", "canon_nan32", "exact_fma_scalar", "f16_to_f32", "f32_to_bf16",
    "f32_to_f16", "f32_to_tf32", "flush32", "flush64_as32", "int_parts", "int_to_float", "narrow",
    "ro_f32", "round_fraction", "round_integral", "round_odd", "round_small", "split", "step",
    "step_by_sign", "sum_sign", "to_f32", "two_prod", "two_sum",
]
