# Source of truth for the semantics of fma and mad on .f32/.f64 (every rounding mode, .ftz, .sat):
# one rounding of the exact a*b + c, bit-exact for all inputs, as fma.rnd.f32/.f64 and mad.rnd.f32/.f64
# compute on the virtual GPU. (fma on f16/bf16 lives in half.py, integer mad in integer.py.)
"""Fused multiply-add on .f32 and .f64 (PTX ISA 9.7.3: fma, mad).

Exactness: the round-to-nearest result is computed with the host's f64 arithmetic and the
error-free transforms in :mod:`strata.hw.isa.fpround`; directed modes step it one ulp when the
sign of the exact residual says the exact value lies on the other side.

- ``fma.rn.f32``: the product is exact in f64 and ``p + c`` is rounded once in f64. That double
  rounding can only differ from a single rounding when the f64 sum is exactly halfway between two
  f32 values (any magnitude, subnormal grid included); such sums have their low 28 bits zero, so
  only those lanes (rare) are examined and recomputed with round-to-odd (TwoSum). Directed f32
  fma rounds the f64 sum directly and fixes the lanes where it is an f32 value but inexact.
- ``fma.rn.f64``: RN(RN(a*b) + c) is kept where TwoSum's error plus the bound on the product's
  error leaves the exact value inside the result's rounding interval (the common case when the
  addend dominates, as in accumulations and Horner steps); other lanes, and directed modes, use
  Boldo-Melquiond (TwoProduct, TwoSum, round-to-odd, one RN addition). Lanes whose magnitudes
  would make its error terms over/underflow (|a|, |b| > 2^995, |a*b| < 2^-969 or > 2^1000,
  |c| > 2^1000, |result| < 2^-1000) are recomputed exactly with Python rationals, lane by lane
  (rare: tiny/huge values only); lanes with a NaN/inf operand or a zero product use the plain
  IEEE expression, which is exact there.

NaNs, ``.ftz`` and ``.sat`` follow the same f32 rules as floating.py (:func:`~strata.hw.isa.fpbase.post32`:
canonical NaN 0x7fffffff, flush to zero of the same sign, clamp to [+0.0, 1.0]); f64 NaNs keep the host's
payload.
Legacy ``mad.f32`` without a rounding modifier is ``mad.rn.f32`` (what ptxas does for sm_20+).
Counter class 'fp32'/'fp64', 2 flops per lane.

Example:
    >>> import numpy as np
    >>> x = np.float32(1 + 2**-12)
    >>> float(fma32(x, x, np.float32(-1), "rn")[0]) == 2**-11 + 2**-24  # x*x - 1 rounded once
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa import fpround as fr
from strata.hw.isa.fpbase import F32, F64, FLOAT_TYPES, FloatMods, all_finite, post32, rm_zero, store
from strata.hw.isa.registry import Op, lowers_for_types
from strata.hw.ptx.ir import Instruction

_SCRATCH = fr.Scratch()

Run = Callable[[Any, Any], None]


# ------------------------------------------------------------------------------------------------
# fma, mad
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("fma", "mad"), FLOAT_TYPES | {"f32x2"})
def lower_fma(ins: Instruction, ctx: Any) -> Op:
    mods = FloatMods(ins, ctx, {"ftz", "sat"}, 3)
    if mods.rnd is None and not (ins.opcode == "mad"):
        raise ctx.fail(f"{ins.full_opcode} needs a rounding modifier (.rn/.rz/.rm/.rp)")
    # legacy `mad.f32` without rounding: ptxas maps it to mad.rn.f32 for sm_20+ (PTX ISA errata)
    rnd = mods.rnd or "rn"
    a, b, c = mods.srcs
    d, bits = mods.d, mods.bits
    if mods.t == "f32" and rnd == "rn" and not mods.sat:
        run = _fma32_rn_fast(a, b, c, d, bits, mods.ftz)
    elif mods.t == "f32":
        compute32 = _fma32(rnd, mods.ftz, mods.sat)

        def run(f: Any, m: Any) -> None:
            V = f.V
            store(V, d, bits, compute32(V[a], V[b], V[c]), m)
    else:
        def run(f: Any, m: Any) -> None:
            V = f.V
            store(V, d, bits, fma64(V[a], V[b], V[c], rnd), m)

    return Op(run, mods.cls, flops=2, flop_cls=mods.cls)


def _fma32(rnd: str, ftz: bool, sat: bool) -> Callable[[Any, Any, Any], np.ndarray]:
    def compute(x: Any, y: Any, z: Any) -> np.ndarray:
        if ftz:
            x, y, z = fr.flush32(x), fr.flush32(y), fr.flush32(z)
        r = fma32(x, y, z, rnd)
        return post32(r, ftz, sat)

    return compute


def fma32(x: Any, y: Any, z: Any, rnd: str) -> np.ndarray:
    """fma.rnd.f32 for any lanes: the exact f64 product plus c, rounded once to f32.

    .rn: TwoSum + round-to-odd in f64, then round to f32. Directed modes: rounding the f64 sum s
    directly is already correct unless s is itself an f32 value while p + c was inexact (then
    the exact value sits just off that f32); only those lanes need the TwoSum error's sign.
    """
    p = np.multiply(x, y, dtype=np.float64)  # 24 x 24 bits: exact
    z64 = np.asarray(z, F64)
    shape = np.broadcast(p, z64).shape or (1,)
    p, z64 = np.broadcast_to(p, shape), np.broadcast_to(z64, shape)
    if rnd == "rn":
        s, e = fr.two_sum(p, z64)
        return fr.to_f32(fr.round_odd(s, e), rnd)
    s = p + z64
    r = s.astype(np.float32)
    back = r.astype(np.float64)
    on_grid = back == s
    fr.step(r.view(np.int32), s > back, s < back, rnd)
    inexact_on_grid = on_grid & ((s - p != z64) | (s - z64 != p))  # exact sums satisfy both
    if inexact_on_grid.any():
        idx = np.flatnonzero(inexact_on_grid)
        _, e = fr.two_sum(p[idx], z64[idx])
        ri = r[idx]
        fr.step(ri.view(np.int32), e > 0, e < 0, rnd)
        r[idx] = ri
    return rm_zero(r, p, z64, s) if rnd == "rm" else r


def _fma32_rn_fast(a: int, b: int, c: int, d: int, bits: Any, ftz: bool) -> Run:
    """fma.rn{.ftz}.f32: p + c rounded in f64, then to f32, fixing the rare lanes where that double
    rounding can differ from one rounding.

    RN32(RN64(x)) != RN32(x) only when RN64(x) is exactly halfway between two f32 values (at the
    f32 grid of its own magnitude, subnormal grid included). Such an f64 has at least its low 28
    mantissa bits zero, so lanes without that pattern are final; among the others (which include
    exact f32 values, NaN and infinities) the ones that are not f32 values are redone with
    round-to-odd. .ftz also flushes subnormal inputs and results.
    """

    def run(f: Any, m: Any) -> None:
        V = f.V
        A, B, C = V[a], V[b], V[c]
        if ftz:
            A, B, C = fr.flush32(A), fr.flush32(B), fr.flush32(C)
        n = V[d].shape[0]
        S = _SCRATCH.get("fma_s", n, F64)
        L = _SCRATCH.get("fma_l", n, np.uint32)
        np.copyto(S, A)
        np.multiply(S, B, out=S)  # exact: 24 x 24 bits (the loop must run in f64, not f32)
        np.add(S, C, out=S)  # RN to 53 bits
        np.copyto(L, S.view(np.uint64), casting="unsafe")  # the low 32 bits of each f64
        np.left_shift(L, np.uint32(4), out=L)  # zero iff the low 28 bits are
        fix_idx, fix = _fma32_fixes(A, B, C, S, L, n)  # before any write: d may alias a, b or c
        if ftz or bits is not None:
            R = _SCRATCH.get("fma_r", n, F32)
            np.copyto(R, S, casting="unsafe")
            if fix_idx is not None:
                R[fix_idx] = fix
            store(V, d, bits, fr.flush32(R) if ftz else R, m)
            return
        out = V[d]
        np.copyto(out, S, casting="unsafe", where=True if m is None else m)  # RN to 24 bits
        if fix_idx is not None:
            if m is not None:
                sel = m[fix_idx]
                fix_idx, fix = fix_idx[sel], fix[sel]
            out[fix_idx] = fix

    return run


def _fma32_fixes(A: Any, B: Any, C: Any, S: np.ndarray, L: np.ndarray, n: int) -> tuple[Any, Any]:
    """(lanes, values) where RN32(S) is not the correctly rounded fma, or (None, None).

    Candidates have the low 28 bits of S zero (L == 0). A candidate that is the exact sum rounds
    right already (ties to even); S = P + C exactly iff S - P == C and S - C == P (a nonzero f64
    rounding error is at least the finer operand's ulp, too big to vanish from both differences).
    Of the inexact candidates, those whose S is an f32 value are final too; the rest are f32
    midpoints or NaN and are recomputed with round-to-odd (NaN becomes canonical).
    """
    if np.minimum.reduce(L) != 0:
        return None, None
    # whole-array passes: compacting lanes by a data-dependent mask costs more than these
    P = _SCRATCH.get("fma_p", n, F64)
    T = _SCRATCH.get("fma_t", n, F64)
    np.multiply(A, B, out=P, dtype=F64)  # exact
    np.subtract(S, P, out=T)
    inexact = np.not_equal(T, C)  # NaN compares unequal: kept
    np.subtract(S, C, out=T, dtype=F64)
    inexact |= np.not_equal(T, P)
    inexact &= L == 0
    cand = np.flatnonzero(inexact)
    if cand.size == 0:
        return None, None
    Sc = S[cand]
    idx = cand[Sc.astype(np.float32).astype(np.float64) != Sc]
    if idx.size == 0:
        return None, None
    return idx, post32(fma32(_take(A, idx), _take(B, idx), _take(C, idx), "rn"), False, False)


def fma64(x: Any, y: Any, z: Any, rnd: str) -> np.ndarray:
    """fma.rnd.f64, exact for all inputs (see the module docstring)."""
    x, y, z = np.asarray(x, F64), np.asarray(y, F64), np.asarray(z, F64)
    shape = np.broadcast(x, y, z).shape or (1,)
    x, y, z = (np.broadcast_to(v, shape) for v in (x, y, z))
    if rnd != "rn":
        return _fma64_exact(x, y, z, rnd)
    r, unsure = _fma64_rn_quick(x, y, z)
    if unsure.any():
        idx = np.flatnonzero(unsure)
        r[idx] = _fma64_exact(x[idx], y[idx], z[idx], "rn")
    return r


def _fma64_rn_quick(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RN(RN(x*y) + z) and the lanes where it might differ from RN(x*y + z).

    With uh = RN(x*y), s = RN(uh + z) and e1 = uh + z - s (TwoSum), the exact value is
    s + e1 + ul where |ul| <= ulp(uh)/2 <= |uh| 2^-53 + 2^-1075. s is the correct result when
    |e1| + that bound < ulp(s)/2 (and s is not a power of two, whose lower gap is half as wide):
    the exact value is then strictly inside s's rounding interval. Other lanes (cancellation,
    ties, tiny/huge/non-finite values) are reported unsure.
    """
    n = x.size
    uh, t, bb = (_SCRATCH.get(f"fq{k}", n, F64).reshape(x.shape) for k in range(3))
    np.multiply(x, y, out=uh)
    r = np.add(uh, z)
    np.subtract(r, uh, out=bb)  # TwoSum error of uh + z into t
    np.subtract(r, bb, out=t)
    np.subtract(uh, t, out=t)
    np.subtract(z, bb, out=bb)
    t += bb
    np.abs(t, out=t)
    np.abs(uh, out=bb)
    bb *= 2.0**-52  # twice the bound on |ul|: slack for rounding in this test's own additions
    bb += 2.0**-1073
    t += bb
    rb = r.view(np.int64)
    hb = _SCRATCH.get("fq_h", n, np.int64).reshape(x.shape)
    np.bitwise_and(rb, 0x7FF0000000000000, out=hb)
    hb -= 53 << 52  # ulp(s)/2 as bits; negative (so no lane passes) for tiny s
    unsure = ~np.less(t, hb.view(np.float64))  # NaN (inf/NaN lanes) -> unsure
    np.bitwise_and(rb, 0x000FFFFFFFFFFFFF, out=hb)
    unsure |= hb == 0  # powers of two (and zeros)
    return r, unsure


def _fma64_exact(x: np.ndarray, y: np.ndarray, z: np.ndarray, rnd: str) -> np.ndarray:
    """fma.rnd.f64 by Boldo-Melquiond; out-of-range lanes exactly (plain IEEE or rationals)."""
    uh, ul, r = _boldo_melquiond(x, y, z)
    if rnd != "rn":
        r = fr.step_by_sign(r, fr.sum_sign(uh, ul, z, -r), rnd)
    if not _fma64_in_range(x, y, z, uh, r):
        au, ar = np.abs(uh), np.abs(r)
        safe = (np.abs(x) <= 2.0**995) & (np.abs(y) <= 2.0**995) & (au >= 2.0**-969) & (au <= 2.0**1000)
        safe &= (np.abs(z) <= 2.0**1000) & (ar >= 2.0**-1000)
        r = np.array(r)
        idx = np.flatnonzero(~safe)
        xs, ys, zs = x[idx], y[idx], z[idx]
        plain = ~all_finite(xs, ys, zs) | (xs == 0) | (ys == 0)
        pr = xs * ys
        # finite a*b with c = +-inf (or NaN) is c exactly, even where a*b alone would overflow
        pv = np.where(all_finite(xs, ys) & ~np.isfinite(zs), zs + 0.0, pr + zs)
        if rnd == "rm":
            pv = rm_zero(pv, pr, zs, pv)  # zero products: pr + zs is exact
        r[idx[plain]] = pv[plain]
        fmt = fr.FORMATS["f64"]
        for i in idx[~plain].tolist():  # over/underflow-prone lanes: exact rationals (rare)
            r[i] = fr.exact_fma_scalar(float(x[i]), float(y[i]), float(z[i]), fmt, rnd)
    return r


_BM_BLOCK = 8192  # lanes per block: the ~10 work arrays then stay in the L2 cache


def _boldo_melquiond(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
    """(uh, ul, RN(x*y + z)) for lanes in range: TwoProduct, TwoSum, round-to-odd, one addition."""
    n = x.size
    if n <= 2 * _BM_BLOCK or x.ndim != 1:
        return _bm_block(x, y, z)
    uh, ul, r = np.empty(n), np.empty(n), np.empty(n)
    for i in range(0, n, _BM_BLOCK):
        sl = slice(i, i + _BM_BLOCK)
        uh[sl], ul[sl], r[sl] = _bm_block(x[sl], y[sl], z[sl])
    return uh, ul, r


def _bm_block(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
    """Boldo-Melquiond on one block: the same steps as fpround.two_prod/two_sum/round_odd, in
    place on scratch buffers (fma.rn.f64 is the inner op of f64 math; temporaries would dominate).
    """
    n = x.size
    sc = [_SCRATCH.get(f"bm{k}", n, F64).reshape(x.shape) for k in range(8)]
    uh, ul, t, xh, xl, yh, yl, bb = sc
    np.multiply(x, y, out=uh)
    for v, hi, lo in ((x, xh, xl), (y, yh, yl)):  # Veltkamp split: hi = t - (t - v), lo = v - hi
        np.multiply(v, fr.SPLIT, out=t)
        np.subtract(t, v, out=hi)
        np.subtract(t, hi, out=hi)
        np.subtract(v, hi, out=lo)
    np.multiply(xh, yh, out=ul)  # ul = ((xh*yh - uh) + xh*yl + xl*yh) + xl*yl, all exact
    ul -= uh
    np.multiply(xh, yl, out=t)
    ul += t
    np.multiply(xl, yh, out=t)
    ul += t
    np.multiply(xl, yl, out=t)
    ul += t
    th, tl, vs = xh, xl, yh  # (th, tl) = TwoSum(z, uh)
    np.add(z, uh, out=th)
    np.subtract(th, z, out=bb)
    np.subtract(th, bb, out=tl)
    np.subtract(z, tl, out=tl)
    np.subtract(uh, bb, out=bb)
    tl += bb
    np.add(tl, ul, out=vs)  # (vs, ve) = TwoSum(tl, ul), ve in t
    np.subtract(vs, tl, out=bb)
    np.subtract(vs, bb, out=t)
    np.subtract(tl, t, out=t)
    np.subtract(ul, bb, out=bb)
    t += bb
    # round vs to odd: an even vs with a nonzero error steps one ulp toward the error
    np.sign(t, out=t)
    np.sign(vs, out=bb)
    t *= bb  # +1: away from zero, -1: toward zero (NaN lanes are out of range, redone later)
    vb = vs.view(np.int64)
    odd = yl.view(np.int64)
    np.bitwise_and(vb, 1, out=odd)
    np.subtract(1.0, odd, out=bb)
    t *= bb
    np.nan_to_num(t, copy=False)
    vb += t.astype(np.int64)
    r = th + vs
    return uh, ul, r  # uh, ul are scratch: valid until the next call


def _fma64_in_range(x: np.ndarray, y: np.ndarray, z: np.ndarray, uh: np.ndarray, r: np.ndarray) -> bool:
    """True when no lane can make the error-free transforms over/underflow (NaNs say False)."""

    def max_abs(v: np.ndarray) -> Any:
        return max(np.max(v), -np.min(v))

    return bool(max_abs(x) <= 2.0**995 and max_abs(y) <= 2.0**995 and max_abs(z) <= 2.0**1000
                and max_abs(uh) <= 2.0**1000 and np.min(np.abs(uh)) >= 2.0**-969
                and np.min(np.abs(r)) >= 2.0**-1000)


def _take(x: Any, idx: np.ndarray) -> Any:
    return x[idx] if np.ndim(x) else x


__all__ = ["fma32", "fma64"]
