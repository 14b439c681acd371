# Source of truth for the semantics of the .f32/.f64 floating-point instructions of the virtual GPU:
# add, sub, mul, fma, mad, div, rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh, copysign, with every
# rounding mode, .ftz and .sat. IEEE operations are bit-exact; .approx ones are within the PTX ISA's
# documented error bounds. (min/max/abs/neg/setp/testp live in integer.py.)
"""Floating-point instructions on .f32 and .f64 (PTX ISA 9.7.3).

Exactness: ``.rn`` add/sub/mul/div/sqrt run as the host's IEEE f32/f64 operations (correctly
rounded). Directed modes (``.rz/.rm/.rp``) and fused multiply-add use the error-free transforms in
:mod:`strata.hw.isa.fpround`: the round-to-nearest result is stepped one ulp when the sign of the
exact residual says the exact value lies on the wrong side.

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

NaNs: f32 NaN results are the canonical 0x7fffffff NVIDIA GPUs produce ("unspecified" in PTX);
f64 results keep the host's NaN (payload of an input NaN propagated, as PTX specifies).
``.ftz`` flushes f32 subnormal inputs and (rounded) results to zero of the same sign. ``.sat``
clamps to [+0.0, 1.0] with NaN and -0.0 giving +0.0.

Approximate ops (computed in f64 and rounded once to f32, which is inside every bound below):
rcp.approx.f32 (PTX: max 1 ulp), sqrt.approx.f32 (rel 2^-23), rsqrt.approx.f32 (rel 2^-22.9),
div.approx.f32 and div.full.f32 (2 ulp; div.approx returns a*0 for 2^126 < |b| < 2^128 as the
hardware does), ex2.approx.f32 (2 ulp), lg2.approx.f32 (abs 2^-22 in (0.5, 2), else rel 2^-22),
sin/cos.approx.f32 (abs 2^-20.5 in [-2pi, 2pi]), tanh.approx.f32 (rel 2^-11).
rcp.approx.ftz.f64 / rsqrt.approx.ftz.f64 use the upper 32 bits of the input and zero the low 32
bits of the result, as documented; input NaNs give 0x7fffffff00000000.

Counter classes: IEEE ops 'fp32'/'fp64' (flops: add/sub/mul 1, fma/mad 2, div/rcp/sqrt 1);
.approx transcendental ops and rsqrt 'sfu' (no flops).

Example (through the JIT, with a frame whose V holds the registers):
    >>> from strata.hw.isa import REGISTRY
    >>> all(op in REGISTRY for op in ("fma", "div", "sqrt", "ex2", "copysign"))
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa import fpround as fr
from strata.hw.isa.registry import DTYPES, REGISTRY, Op, split_mods, write
from strata.hw.ptx.ir import Instruction

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
FLOAT_TYPES = frozenset(("f32", "f64"))
_CLS = {"f32": "fp32", "f64": "fp64"}
_SCRATCH = fr.Scratch()
_MID = np.uint32(0x80000000)

Run = Callable[[Any, Any], None]
Lowering = Callable[[Instruction, Any], Op]


# ------------------------------------------------------------------------------------------------
# Registration shared with other families (add.s32 is integer.py's, add.f32 ours, add.f16 half.py's)
# ------------------------------------------------------------------------------------------------


def lowers_for_types(opcodes: tuple[str, ...], types: frozenset[str]) -> Callable[[Lowering], Lowering]:
    """Register a lowering for the variants of `opcodes` whose suffixes include one of `types`.

    Other variants go to whatever lowering was registered for the opcode before (another family's),
    so families sharing an opcode can load in any order as long as each one chains like this.
    """

    def deco(fn: Lowering) -> Lowering:
        for op in opcodes:
            REGISTRY[op] = _dispatch(fn, REGISTRY.get(op), types)
        return fn

    return deco


def _dispatch(fn: Lowering, prev: Lowering | None, types: frozenset[str]) -> Lowering:
    def lower(ins: Instruction, ctx: Any) -> Op:
        if any(m in types for m in ins.mods):
            return fn(ins, ctx)
        if prev is not None:
            return prev(ins, ctx)
        raise ctx.unsupported()

    return lower


# ------------------------------------------------------------------------------------------------
# Operand and modifier helpers
# ------------------------------------------------------------------------------------------------


class _Mods:
    """Parsed modifiers of one float instruction."""

    def __init__(self, ins: Instruction, ctx: Any, allowed: set[str], nsrc: int) -> None:
        flags, types = split_mods(ins.mods)
        if "f32x2" in flags:
            raise ctx.unsupported()  # sm_100 packed f32
        if len(types) != 1 or types[0] not in FLOAT_TYPES:
            raise ctx.fail(f"{ins.full_opcode} needs one of the types .f32/.f64")
        self.t = types[0]
        rnds = [f for f in flags if f in fr.ROUND_MODES]
        if len(rnds) > 1:
            raise ctx.fail(f"{ins.full_opcode} has more than one rounding modifier")
        self.rnd = rnds[0] if rnds else None
        self.flags = {f for f in flags if f not in fr.ROUND_MODES}
        for f in self.flags:
            if f not in allowed:
                raise ctx.unsupported()
        if self.t == "f64" and self.flags & {"ftz", "sat"} and not (self.flags >= {"approx", "ftz"}):
            raise ctx.fail(f"{ins.full_opcode}: .ftz/.sat are not allowed on .f64")
        self.ftz = "ftz" in self.flags
        self.sat = "sat" in self.flags
        if len(ins.operands) != nsrc + 1:
            raise ctx.fail(f"{ins.full_opcode} needs {nsrc + 1} operands, got {len(ins.operands)}")
        self.srcs = [ctx.src(op, self.t) for op in ins.operands[1:]]
        self.d, self.bits = _dst(ctx, ins.operands[0], self.t)

    @property
    def cls(self) -> str:
        return _CLS[self.t]


def _dst(ctx: Any, op: Any, t: str) -> tuple[int, Any]:
    """Destination slot; when the register is wider than the type the result is written as bits."""
    d = ctx.dst(op, t)
    if ctx.slots[d].dtype == DTYPES[t]:
        return d, None
    bt = "b32" if t == "f32" else "b64"
    return ctx.dst(op, bt), DTYPES[bt]


def _store(V: list[Any], d: int, bits: Any, r: Any, m: Any) -> None:
    if bits is not None:
        r = np.asarray(r).view(bits)
    write(V[d], r, m)


def _take(x: Any, idx: np.ndarray) -> Any:
    return x[idx] if np.ndim(x) else x


def _post32(r: Any, ftz: bool, sat: bool) -> np.ndarray:
    """f32 result post-processing: .ftz flush, .sat clamp, canonical NaN."""
    if ftz:
        r = fr.flush32(r)
    if sat:
        r = np.where(r > 0, np.minimum(r, np.float32(1)), np.float32(0)).astype(np.float32)
    return fr.canon_nan32(r)


def _canon_inplace(out: np.ndarray, m: Any) -> None:
    """Canonical NaN for an f32 destination written in place (only lanes in m)."""
    if np.isnan(np.minimum.reduce(out, axis=None)):
        nan = np.isnan(out)
        if m is not None:
            nan &= m
        out.view(np.uint32)[nan] = fr.CANON_NAN32


def _rm_zero(r: np.ndarray, x: Any, y: Any, s: Any) -> np.ndarray:
    """Round-toward-minus: an exact zero sum s = x + y is -0 unless both are +0 (IEEE 754 6.3).

    s is the f64 sum (zero only when exactly zero); results that merely round to zero keep the
    sign of the exact value.
    """
    z = s == 0
    if np.any(z):
        neg = np.signbit(x) | np.signbit(y)
        r = np.where(z & neg, -np.abs(r), r).astype(r.dtype)
    return r


def _finite(*xs: Any) -> Any:
    ok = np.isfinite(xs[0])
    for x in xs[1:]:
        ok = ok & np.isfinite(x)
    return ok


# ------------------------------------------------------------------------------------------------
# add, sub, mul
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("add", "sub", "mul"), FLOAT_TYPES | {"f32x2"})
def lower_add_sub_mul(ins: Instruction, ctx: Any) -> Op:
    mods = _Mods(ins, ctx, {"ftz", "sat"}, 2)
    op = ins.opcode
    rnd = mods.rnd or "rn"  # no modifier: round to nearest (the optimizer may fuse; we don't)
    a, b = mods.srcs
    d, bits = mods.d, mods.bits
    uf = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    op_fn = _op32 if mods.t == "f32" else _op64
    fast = rnd == "rn" and not (mods.ftz or mods.sat) and bits is None

    if fast and mods.t == "f32":
        def run(f: Any, m: Any) -> None:
            V = f.V
            out = V[d]
            uf(V[a], V[b], out=out, where=True if m is None else m)
            _canon_inplace(out, m)
    elif fast:
        def run(f: Any, m: Any) -> None:
            V = f.V
            uf(V[a], V[b], out=V[d], where=True if m is None else m)
    else:
        compute = op_fn(op, rnd, mods.ftz, mods.sat)

        def run(f: Any, m: Any) -> None:
            V = f.V
            _store(V, d, bits, compute(V[a], V[b]), m)

    return Op(run, mods.cls, flops=1, flop_cls=mods.cls)


def _op32(op: str, rnd: str, ftz: bool, sat: bool) -> Callable[[Any, Any], np.ndarray]:
    def compute(x: Any, y: Any) -> np.ndarray:
        if ftz:
            x, y = fr.flush32(x), fr.flush32(y)
        if rnd == "rn":
            r = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op](x, y, dtype=np.float32)
        else:
            x64, y64 = np.asarray(x, F64), np.asarray(y, F64)
            if op == "mul":
                r = fr.to_f32(x64 * y64, rnd)  # the f64 product of two f32s is exact
            else:
                y64 = -y64 if op == "sub" else y64
                s, e = fr.two_sum(x64, y64)
                r = fr.to_f32(fr.round_odd(s, e), rnd)
                if rnd == "rm":
                    r = _rm_zero(r, x64, y64, s)
        return _post32(r, ftz, sat)

    return compute


def _op64(op: str, rnd: str, ftz: bool, sat: bool) -> Callable[[Any, Any], np.ndarray]:
    def compute(x: Any, y: Any) -> np.ndarray:
        x, y = np.asarray(x, F64), np.asarray(y, F64)
        if op == "sub":
            y = -y
        if op == "mul":
            r = x * y
            sgn = _mul64_residual_sign(x, y, r)
        else:
            r, sgn = fr.two_sum(x, y)
            # overflow to inf from finite operands: the exact value is below it in magnitude
            sgn = np.where(np.isinf(r) & _finite(x, y), -r, sgn)
        if rnd == "rn":
            return np.asarray(r)
        r = fr.step_by_sign(r, sgn, rnd)
        return _rm_zero(r, x, y, r) if (rnd == "rm" and op != "mul") else r

    return compute


def _mul64_residual_sign(x: np.ndarray, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """sign(x*y - p) for p = RN(x*y), exact for all finite inputs (scaled into a safe range)."""
    mx, ex = np.frexp(x)
    my, ey = np.frexp(y)
    P = np.ldexp(p, -(ex + ey))  # exact power-of-two scaling, ~ mx*my in [1/4, 1)
    h, l = fr.two_prod(mx, my)
    sgn = fr.sum_sign(h, l, -P)
    return np.where(np.isinf(p) & _finite(x, y), -p, sgn)


# ------------------------------------------------------------------------------------------------
# fma, mad
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("fma", "mad"), FLOAT_TYPES | {"f32x2"})
def lower_fma(ins: Instruction, ctx: Any) -> Op:
    mods = _Mods(ins, ctx, {"ftz", "sat"}, 3)
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
            _store(V, d, bits, compute32(V[a], V[b], V[c]), m)
    else:
        def run(f: Any, m: Any) -> None:
            V = f.V
            _store(V, d, bits, fma64(V[a], V[b], V[c], rnd), m)

    return Op(run, mods.cls, flops=2, flop_cls=mods.cls)


def _fma32(rnd: str, ftz: bool, sat: bool) -> Callable[[Any, Any, Any], np.ndarray]:
    def compute(x: Any, y: Any, z: Any) -> np.ndarray:
        if ftz:
            x, y, z = fr.flush32(x), fr.flush32(y), fr.flush32(z)
        r = fma32(x, y, z, rnd)
        return _post32(r, ftz, sat)

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
    return _rm_zero(r, p, z64, s) if rnd == "rm" else r


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
            _store(V, d, bits, fr.flush32(R) if ftz else R, m)
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
    return idx, _post32(fma32(_take(A, idx), _take(B, idx), _take(C, idx), "rn"), False, False)


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
        plain = ~_finite(xs, ys, zs) | (xs == 0) | (ys == 0)
        pr = xs * ys
        # finite a*b with c = +-inf (or NaN) is c exactly, even where a*b alone would overflow
        pv = np.where(_finite(xs, ys) & ~np.isfinite(zs), zs + 0.0, pr + zs)
        if rnd == "rm":
            pv = _rm_zero(pv, pr, zs, pv)  # zero products: pr + zs is exact
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


# ------------------------------------------------------------------------------------------------
# div, rcp, sqrt
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("div",), FLOAT_TYPES)
def lower_div(ins: Instruction, ctx: Any) -> Op:
    mods = _Mods(ins, ctx, {"ftz", "approx", "full"}, 2)
    return _lower_quotient(ins, ctx, mods, *mods.srcs)


@lowers_for_types(("rcp",), FLOAT_TYPES)
def lower_rcp(ins: Instruction, ctx: Any) -> Op:
    mods = _Mods(ins, ctx, {"ftz", "approx"}, 1)
    if mods.t == "f64" and "approx" in mods.flags:
        return _lower_hi32_approx(ins, ctx, mods, rsqrt=False)
    return _lower_quotient(ins, ctx, mods, None, mods.srcs[0])


def _lower_quotient(ins: Instruction, ctx: Any, mods: _Mods, a: int | None, b: int) -> Op:
    """div (a / b) and rcp (1 / b)."""
    t, d, bits, ftz = mods.t, mods.d, mods.bits, mods.ftz
    approx = mods.flags & {"approx", "full"}
    if approx and mods.rnd:
        raise ctx.fail(f"{ins.full_opcode}: .approx/.full take no rounding modifier")
    if not approx and mods.rnd is None:
        if t == "f32":  # PTX ISA 1.0-1.3 default: div/rcp.approx.ftz.f32
            approx, ftz = {"approx"}, True
        else:
            mods.rnd = "rn"
    if approx and t == "f64":
        raise ctx.unsupported()
    rnd = mods.rnd or "rn"
    div_approx = ins.opcode == "div" and "approx" in approx

    def compute(num: Any, den: Any) -> np.ndarray:
        if t == "f64":
            return _div64(np.asarray(num, F64), np.asarray(den, F64), rnd)
        if ftz:
            num, den = fr.flush32(num), fr.flush32(den)
        if approx:
            q = (np.asarray(num, F64) / np.asarray(den, F64)).astype(np.float32)
            if div_approx:  # computed as a * (1/b): 1/b is a flushed subnormal for |b| > 2^126
                big = (np.abs(den) > np.float32(2.0**126)) & np.isfinite(den)
                q = np.where(big, num * np.copysign(np.float32(0), den), q).astype(np.float32)
        else:
            q = _div32(num, den, rnd)
        return _post32(q, ftz, False)

    one = np.float32(1) if t == "f32" else np.float64(1)

    def run(f: Any, m: Any) -> None:
        V = f.V
        _store(V, d, bits, compute(one if a is None else V[a], V[b]), m)

    cls = "sfu" if approx else mods.cls
    return Op(run, cls, flops=0 if approx else 1, flop_cls=mods.cls)


def _div32(x: Any, y: Any, rnd: str) -> np.ndarray:
    q = np.divide(x, y, dtype=np.float32)  # IEEE: correctly rounded to nearest
    if rnd == "rn":
        return np.asarray(q)
    x64, y64, q64 = np.asarray(x, F64), np.asarray(y, F64), np.asarray(q, F64)
    res = x64 - q64 * y64  # exact: q*y has 48 bits and cancels against x
    sgn = np.sign(res) * np.sign(y64)
    over = np.isinf(q64) & _finite(x64, y64) & (y64 != 0)
    sgn = np.where(over, -np.sign(q64), sgn)
    return fr.step_by_sign(q, sgn, rnd)


def _div64(x: np.ndarray, y: np.ndarray, rnd: str) -> np.ndarray:
    q = np.asarray(x / y)
    if rnd == "rn":
        return q
    mx, ex = np.frexp(x)
    my, ey = np.frexp(y)
    Q = np.ldexp(q, ey - ex)  # exact scaling of q to ~ mx/my
    h, l = fr.two_prod(Q, my)
    sgn = fr.sum_sign(mx, -h, -l) * np.sign(my)
    over = np.isinf(q) & _finite(x, y) & (y != 0)
    sgn = np.where(over, -np.sign(q), sgn)
    return fr.step_by_sign(q, sgn, rnd)


@lowers_for_types(("sqrt",), FLOAT_TYPES)
def lower_sqrt(ins: Instruction, ctx: Any) -> Op:
    mods = _Mods(ins, ctx, {"ftz", "approx"}, 1)
    t, d, bits, (a,) = mods.t, mods.d, mods.bits, mods.srcs
    approx = "approx" in mods.flags
    ftz = mods.ftz
    if approx and (mods.rnd or t == "f64"):
        raise ctx.fail(f"{ins.full_opcode}: .approx is .f32 only and takes no rounding modifier")
    if not approx and mods.rnd is None and t == "f32":  # PTX ISA 1.0-1.3: sqrt.approx.ftz.f32
        approx, ftz = True, True
    rnd = mods.rnd or "rn"

    def compute(x: Any) -> np.ndarray:
        if t == "f64":
            return _sqrt64(np.asarray(x, F64), rnd)
        if ftz:
            x = fr.flush32(x)
        q = np.sqrt(x, dtype=np.float32)
        if rnd != "rn":
            x64, q64 = np.asarray(x, F64), np.asarray(q, F64)
            q = fr.step_by_sign(q, np.sign(x64 - q64 * q64), rnd)  # x - q^2 is exact in f64
        return _post32(q, ftz, False)

    def run(f: Any, m: Any) -> None:
        V = f.V
        _store(V, d, bits, compute(V[a]), m)

    return Op(run, "sfu" if approx else mods.cls, flops=0 if approx else 1, flop_cls=mods.cls)


def _sqrt64(x: np.ndarray, rnd: str) -> np.ndarray:
    q = np.sqrt(x)
    if rnd == "rn":
        return np.asarray(q)
    _, e = np.frexp(x)
    k = e // 2
    X = np.ldexp(x, -2 * k)  # in [1/2, 2): exact
    Q = np.ldexp(q, -k)
    h, l = fr.two_prod(Q, Q)
    return fr.step_by_sign(q, fr.sum_sign(X, -h, -l), rnd)


# ------------------------------------------------------------------------------------------------
# rsqrt, rcp.approx.ftz.f64, and the .approx transcendentals
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("rsqrt",), FLOAT_TYPES)
def lower_rsqrt(ins: Instruction, ctx: Any) -> Op:
    mods = _Mods(ins, ctx, {"ftz", "approx"}, 1)
    if mods.rnd:
        raise ctx.fail(f"{ins.full_opcode}: rsqrt takes no rounding modifier")
    if mods.t == "f64" and mods.ftz:
        return _lower_hi32_approx(ins, ctx, mods, rsqrt=True)
    return _lower_unary_approx(mods, lambda x: 1.0 / np.sqrt(x), ftz=mods.ftz or "approx" not in mods.flags)


_TRANSCENDENTAL: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sin": np.sin, "cos": np.cos, "lg2": np.log2, "ex2": np.exp2, "tanh": np.tanh,
}


@lowers_for_types(("sin", "cos", "lg2", "ex2", "tanh"), frozenset({"f32"}))
def lower_transcendental(ins: Instruction, ctx: Any) -> Op:
    allowed = {"approx"} if ins.opcode == "tanh" else {"approx", "ftz"}
    mods = _Mods(ins, ctx, allowed, 1)
    if mods.rnd:
        raise ctx.fail(f"{ins.full_opcode} takes no rounding modifier")
    # PTX ISA 1.0-1.3: no .approx means .approx.ftz
    ftz = mods.ftz or ("approx" not in mods.flags and ins.opcode != "tanh")
    return _lower_unary_approx(mods, _TRANSCENDENTAL[ins.opcode], ftz)


def _lower_unary_approx(mods: _Mods, fn: Callable[[np.ndarray], np.ndarray], ftz: bool) -> Op:
    """An .approx op: evaluated in f64 and rounded once (well inside the documented bounds)."""
    d, bits, (a,) = mods.d, mods.bits, mods.srcs
    if mods.t == "f64":
        def compute(x: Any) -> np.ndarray:
            return np.asarray(fn(np.asarray(x, F64)))
    else:
        def compute(x: Any) -> np.ndarray:
            if ftz:
                x = fr.flush32(x)
            r = np.asarray(fn(np.asarray(x, F64))).astype(np.float32)
            return _post32(r, ftz, False)

    def run(f: Any, m: Any) -> None:
        V = f.V
        _store(V, d, bits, compute(V[a]), m)

    return Op(run, "sfu")


def _lower_hi32_approx(ins: Instruction, ctx: Any, mods: _Mods, rsqrt: bool) -> Op:
    """rcp.approx.ftz.f64 / rsqrt.approx.ftz.f64: computed on the upper 32 bits of the operand
    (1.11.20 format); the low 32 bits of the result are zero; input NaN -> 0x7fffffff00000000."""
    if not mods.ftz or "approx" not in mods.flags:
        raise ctx.fail(f"{ins.full_opcode}: only .approx.ftz is defined on .f64")
    d, bits, (a,) = mods.d, mods.bits, mods.srcs
    hi_mask = np.uint64(0xFFFFFFFF00000000)

    def compute(x: Any) -> np.ndarray:
        xb = np.array(x, F64, ndmin=1).view(np.uint64) & hi_mask
        tmp = xb.view(np.float64)
        tmp = np.where(np.abs(tmp) < 2.0**-1022, np.copysign(0.0, tmp), tmp)  # subnormal in: +-0
        r = 1.0 / np.sqrt(tmp) if rsqrt else 1.0 / tmp
        if rsqrt:  # the table: -0 and -subnormal give -inf (1/sqrt(-0) does too)
            r = np.where(tmp == 0, np.copysign(np.inf, tmp), r)
        r = np.where(np.abs(r) < 2.0**-1022, np.copysign(0.0, r), r)  # subnormal out: +-0
        rb = np.asarray(r, F64).view(np.uint64) & hi_mask
        rb = np.where(np.isnan(r), np.uint64(0x7FFFFFFF00000000), rb)
        return rb.view(np.float64)

    def run(f: Any, m: Any) -> None:
        V = f.V
        _store(V, d, bits, compute(V[a]), m)

    return Op(run, "sfu")


# ------------------------------------------------------------------------------------------------
# copysign
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("copysign",), FLOAT_TYPES)
def lower_copysign(ins: Instruction, ctx: Any) -> Op:
    """copysign d, a, b: b's magnitude with a's sign bit (bit operations: NaN payloads kept)."""
    mods = _Mods(ins, ctx, set(), 2)
    if mods.rnd:
        raise ctx.fail(f"{ins.full_opcode} takes no rounding modifier")
    bt = "b32" if mods.t == "f32" else "b64"
    a_op, b_op = ins.operands[1], ins.operands[2]
    a, b = ctx.src(a_op, mods.t), ctx.src(b_op, mods.t)
    d = ctx.dst(ins.operands[0], bt)
    ut = DTYPES[bt].type
    sign = ut(1 << (8 * DTYPES[bt].itemsize - 1))
    mag = ut(sign - ut(1))

    def run(f: Any, m: Any) -> None:
        V = f.V
        xa = np.asarray(V[a]).view(ut)
        xb = np.asarray(V[b]).view(ut)
        write(V[d], (xb & mag) | (xa & sign), m)

    return Op(run, mods.cls)


__all__ = ["FLOAT_TYPES", "fma32", "fma64", "lowers_for_types"]
