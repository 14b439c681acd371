"""The Philox4x32-10 stream on the host and strata's mapping of its 32-bit words to values: the "cpu" half
of strata's random numbers (random.py), defined to give bit for bit what the "cuda" kernels
(kernels/random.py) compute from the same words (normal and exponential draws to the last bits of
log/sin/cos). Pure NumPy: the cpu backend's random kernels and the dropout mask use it.

Example:
    >>> philox_words(0, 0, 4).tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    True
    >>> from strata.framework import dtypes as dt
    >>> bool((values("uniform", dt.float32, philox_words(7, 0, 8), 8, 0.0, 1.0) < 1).all())
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.framework import dtypes as dt

_U64 = (1 << 64) - 1


def philox_words(seed: int, offset: int, n: int) -> np.ndarray:
    """Words offset .. offset+n-1 of the Philox4x32-10 stream keyed by `seed` (strata.libs.rand's
    mapping: word v is output word v % 4 of counter v // 4), computed with NumPy."""
    if n == 0:
        return np.zeros(0, np.uint32)
    first, last = offset // 4, (offset + n - 1) // 4
    q = np.arange(first, last + 1, dtype=np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    c0, c1 = q & m32, q >> np.uint64(32)
    c2, c3 = np.zeros_like(q), np.zeros_like(q)
    k0, k1 = np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = (p1 >> np.uint64(32)) ^ c1 ^ k0, p1 & m32, (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & m32
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & m32, (k1 + np.uint64(0xBB67AE85)) & m32
    words = np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32).reshape(-1)
    return words[offset - 4 * first: offset - 4 * first + n]


def draws(w: np.ndarray, double: bool) -> np.ndarray:
    """Uniforms in [0, 1): 24 bits of each word (float32), or 53 bits of each pair of words (float64)."""
    if double:
        z = (w[0::2].astype(np.uint64) << np.uint64(21)) | (w[1::2] >> np.uint32(11)).astype(np.uint64)
        return z.astype(np.float64) * 2.0 ** -53
    return (w >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


def opmath_np(d: dt.dtype) -> type:
    return np.float64 if d is dt.float64 else np.float32


def words_needed(kind: str, d: dt.dtype, n: int, wide: bool = False) -> int:
    per = 2 if d is dt.float64 else 1
    if kind == "normal":
        return 2 * ((n + 1) // 2) * per
    if kind in ("uniform", "exponential"):
        return n * per
    if kind == "randint":
        return n * (2 if wide else 1)
    return n  # bernoulli


def values(kind: str, d: dt.dtype, w: np.ndarray, n: int, a: Any, b: Any) -> np.ndarray:
    """The n values of `kind` in dtype d from words w, exactly as the kernels compute them."""
    A = opmath_np(d)
    with np.errstate(all="ignore"):
        if kind == "uniform":
            lo, hi = a, b
            x = A(lo) + A(hi - lo) * draws(w, A is np.float64)
            v = x.astype(d.np)
            if hi - lo > 0:
                v[v.astype(np.float64) >= hi] = np.asarray(A(lo)).astype(d.np)
            return v
        if kind == "normal":
            u = draws(w, A is np.float64)
            u1, u2 = A(1) - u[0::2], u[1::2]
            r, t = np.sqrt(A(-2) * np.log(u1)), A(6.283185307179586) * u2
            z = np.stack([r * np.cos(t), r * np.sin(t)], axis=1).reshape(-1)[:n]
            return (A(a) + A(b) * z).astype(d.np)
        if kind == "exponential":
            return (-np.log(A(1) - draws(w, A is np.float64)) / A(a)).astype(d.np)
        if kind == "randint":
            low, span = a, b
            x = (w[0::2].astype(np.uint64) << np.uint64(32)) | w[1::2] if span > 1 << 32 else w.astype(np.uint64)
            v = (np.uint64(low & _U64) + x % np.uint64(span)).view(np.int64)
            return v.astype(d.np)
        # bernoulli: a is a float32 array broadcast to the output (flattened), or a float
        return (draws(w, False) < np.asarray(a, np.float32)).astype(d.np)
