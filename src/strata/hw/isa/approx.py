"""`ex2.approx.f32` and `lg2.approx.f32` as strata defines them: float64 arithmetic in a fixed order, then
one rounding to f32.

The PTX ISA bounds these instructions' error (ex2: 2 ulp; lg2: 2^-22 absolute in (0.5, 2), else
relative) without defining their bits. strata computes 2^x and log2(x) in float64 with only IEEE
additions, multiplications, divisions and exact steps (rounding to an integer, scaling by a power of
two, splitting off the exponent), in one fixed order; the result has a relative error near 1e-16 before
it is rounded to f32, so it is the correctly rounded f32 but for values within about 1e-16 of a halfway
point. Because every step is an IEEE operation, the native executor performs the very same steps
(hw/native/codegen_float.py) and gets the same bits on every host, which a host math library's exp2 or
log2 would not promise.

Example:
    >>> import numpy as np
    >>> exp2(np.array([3.0, -1.0, 0.5])).astype(np.float32).tolist() == [8.0, 0.5, float(np.float32(np.sqrt(2.0)))]
    True
    >>> log2(np.array([8.0, 0.5, 1.0])).tolist()
    [3.0, -1.0, 0.0]
"""

from __future__ import annotations

import math

import numpy as np

LN2 = 0.6931471805599453  # ln 2 rounded to f64
INV_LN2 = 1.4426950408889634  # 1 / ln 2 rounded to f64
SQRT_HALF = 0.7071067811865476
EXP2_LIMIT = 200.0  # |x| clamped here first: 2^200 overflows f32 and 2^-200 underflows it, as the exact value
# e^t = sum t^n / n! for |t| <= ln2 / 2: through n = 13 the remainder is below 1e-18 of the result
EXP_COEFFS = tuple(1.0 / math.factorial(n) for n in range(14))
# ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m - 1) / (m + 1), |s| <= 0.172: through s^21
ATANH_COEFFS = tuple(1.0 / (2 * j + 1) for j in range(11))


def exp2(x: np.ndarray) -> np.ndarray:
    """2^x in float64 for float64 x (which hold f32 values): x = k + r with k an integer and |r| <= 1/2,
    2^r = e^(r ln 2) by Horner's rule on EXP_COEFFS (highest first), scaled by 2^k. NaN stays NaN."""
    x = np.asarray(x, np.float64)
    nan = np.isnan(x)
    xc = np.clip(np.where(nan, 0.0, x), -EXP2_LIMIT, EXP2_LIMIT)
    k = np.rint(xc)
    t = (xc - k) * LN2
    p = np.full_like(t, EXP_COEFFS[-1])
    for c in EXP_COEFFS[-2::-1]:
        p = p * t + c
    out = np.ldexp(p, k.astype(np.int64))
    return np.where(nan, x, out)


def log2(x: np.ndarray) -> np.ndarray:
    """log2(x) in float64 for float64 x (which hold f32 values): x = m 2^e with m in [sqrt(1/2), sqrt(2)),
    ln m = 2 atanh((m - 1) / (m + 1)) by Horner's rule in s^2 on ATANH_COEFFS, then e + ln m / ln 2.
    Negative x and NaN give NaN, +-0 gives -inf, +inf gives +inf."""
    x = np.asarray(x, np.float64)
    special = ~(x > 0) | np.isinf(x)
    m, e = np.frexp(np.where(special, 1.0, x))
    low = m < SQRT_HALF
    m = np.where(low, m + m, m)
    ef = e.astype(np.float64) - low
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    q = np.full_like(s, ATANH_COEFFS[-1])
    for c in ATANH_COEFFS[-2::-1]:
        q = q * s2 + c
    out = ef + ((s + s) * q) * INV_LN2
    with np.errstate(invalid="ignore", divide="ignore"):
        edge = np.where(x == 0, -np.inf, np.where(x > 0, x, np.nan))  # +inf stays, negatives and NaN: NaN
    return np.where(special, edge, out)
