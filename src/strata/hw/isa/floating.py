# Source of truth for the semantics of the .f32/.f64 floating-point instructions of the virtual GPU:
# add, sub, mul, div, rcp, sqrt, rsqrt, sin, cos, lg2, ex2, tanh, copysign, with every rounding mode,
# .ftz and .sat. IEEE operations are bit-exact; .approx ones are within the PTX ISA's documented error
# bounds. (fma/mad live in fma.py; min/max/abs/neg/setp/testp in compare.py.)
"""Floating-point instructions on .f32 and .f64 (PTX ISA 9.7.3).

Exactness: ``.rn`` add/sub/mul/div/sqrt run as the host's IEEE f32/f64 operations (correctly
rounded). Directed modes (``.rz/.rm/.rp``) use the error-free transforms in
:mod:`strata.hw.isa.fpround`: the round-to-nearest result is stepped one ulp when the sign of the
exact residual says the exact value lies on the wrong side.

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

Counter classes: IEEE ops 'fp32'/'fp64' (flops: add/sub/mul 1, div/rcp/sqrt 1);
.approx transcendental ops and rsqrt 'sfu' (no flops).

Example (through the JIT, with a frame whose V holds the registers):
    >>> from strata.hw.isa import REGISTRY
    >>> all(op in REGISTRY for op in ("add", "div", "sqrt", "ex2", "copysign"))
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa import approx
from strata.hw.isa import fpround as fr
from strata.hw.isa.fma import fma32, fma64  # re-exported: tests call floating.fma32
from strata.hw.isa.fpbase import F64, FLOAT_TYPES, FloatMods, all_finite, post32, rm_zero, store
from strata.hw.isa.registry import DTYPES, Op, lowers_for_types, write
from strata.hw.ptx.ir import Instruction

# ------------------------------------------------------------------------------------------------
# add, sub, mul
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("add", "sub", "mul"), FLOAT_TYPES | {"f32x2"})
def lower_add_sub_mul(ins: Instruction, ctx: Any) -> Op:
    mods = FloatMods(ins, ctx, {"ftz", "sat"}, 2)
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
            store(V, d, bits, compute(V[a], V[b]), m)

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
                    r = rm_zero(r, x64, y64, s)
        return post32(r, ftz, sat)

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
            sgn = np.where(np.isinf(r) & all_finite(x, y), -r, sgn)
        if rnd == "rn":
            return np.asarray(r)
        r = fr.step_by_sign(r, sgn, rnd)
        return rm_zero(r, x, y, r) if (rnd == "rm" and op != "mul") else r

    return compute


def _mul64_residual_sign(x: np.ndarray, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """sign(x*y - p) for p = RN(x*y), exact for all finite inputs (scaled into a safe range)."""
    mx, ex = np.frexp(x)
    my, ey = np.frexp(y)
    P = np.ldexp(p, -(ex + ey))  # exact power-of-two scaling, ~ mx*my in [1/4, 1)
    h, l = fr.two_prod(mx, my)
    sgn = fr.sum_sign(h, l, -P)
    return np.where(np.isinf(p) & all_finite(x, y), -p, sgn)


# ------------------------------------------------------------------------------------------------
# div, rcp, sqrt
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("div",), FLOAT_TYPES)
def lower_div(ins: Instruction, ctx: Any) -> Op:
    mods = FloatMods(ins, ctx, {"ftz", "approx", "full"}, 2)
    return _lower_quotient(ins, ctx, mods, *mods.srcs)


@lowers_for_types(("rcp",), FLOAT_TYPES)
def lower_rcp(ins: Instruction, ctx: Any) -> Op:
    mods = FloatMods(ins, ctx, {"ftz", "approx"}, 1)
    if mods.t == "f64" and "approx" in mods.flags:
        return _lower_hi32_approx(ins, ctx, mods, rsqrt=False)
    return _lower_quotient(ins, ctx, mods, None, mods.srcs[0])


def _lower_quotient(ins: Instruction, ctx: Any, mods: FloatMods, a: int | None, b: int) -> Op:
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
        return post32(q, ftz, False)

    one = np.float32(1) if t == "f32" else np.float64(1)

    def run(f: Any, m: Any) -> None:
        V = f.V
        store(V, d, bits, compute(one if a is None else V[a], V[b]), m)

    cls = "sfu" if approx else mods.cls
    return Op(run, cls, flops=0 if approx else 1, flop_cls=mods.cls)


def _div32(x: Any, y: Any, rnd: str) -> np.ndarray:
    q = np.divide(x, y, dtype=np.float32)  # IEEE: correctly rounded to nearest
    if rnd == "rn":
        return np.asarray(q)
    x64, y64, q64 = np.asarray(x, F64), np.asarray(y, F64), np.asarray(q, F64)
    res = x64 - q64 * y64  # exact: q*y has 48 bits and cancels against x
    sgn = np.sign(res) * np.sign(y64)
    over = np.isinf(q64) & all_finite(x64, y64) & (y64 != 0)
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
    over = np.isinf(q) & all_finite(x, y) & (y != 0)
    sgn = np.where(over, -np.sign(q), sgn)
    return fr.step_by_sign(q, sgn, rnd)


@lowers_for_types(("sqrt",), FLOAT_TYPES)
def lower_sqrt(ins: Instruction, ctx: Any) -> Op:
    mods = FloatMods(ins, ctx, {"ftz", "approx"}, 1)
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
        return post32(q, ftz, False)

    def run(f: Any, m: Any) -> None:
        V = f.V
        store(V, d, bits, compute(V[a]), m)

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
    mods = FloatMods(ins, ctx, {"ftz", "approx"}, 1)
    if mods.rnd:
        raise ctx.fail(f"{ins.full_opcode}: rsqrt takes no rounding modifier")
    if mods.t == "f64" and mods.ftz:
        return _lower_hi32_approx(ins, ctx, mods, rsqrt=True)
    return _lower_unary_approx(mods, lambda x: 1.0 / np.sqrt(x), ftz=mods.ftz or "approx" not in mods.flags)


# ex2/lg2: strata's fixed float64 sequences (approx.py), which the native executor repeats bit for bit; sin, cos
# and tanh: the host's float64 functions (their last bits are the host math library's)
_TRANSCENDENTAL: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "sin": np.sin, "cos": np.cos, "lg2": approx.log2, "ex2": approx.exp2, "tanh": np.tanh,
}


@lowers_for_types(("sin", "cos", "lg2", "ex2", "tanh"), frozenset({"f32"}))
def lower_transcendental(ins: Instruction, ctx: Any) -> Op:
    allowed = {"approx"} if ins.opcode == "tanh" else {"approx", "ftz"}
    mods = FloatMods(ins, ctx, allowed, 1)
    if mods.rnd:
        raise ctx.fail(f"{ins.full_opcode} takes no rounding modifier")
    # PTX ISA 1.0-1.3: no .approx means .approx.ftz
    ftz = mods.ftz or ("approx" not in mods.flags and ins.opcode != "tanh")
    return _lower_unary_approx(mods, _TRANSCENDENTAL[ins.opcode], ftz)


def _lower_unary_approx(mods: FloatMods, fn: Callable[[np.ndarray], np.ndarray], ftz: bool) -> Op:
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
            return post32(r, ftz, False)

    def run(f: Any, m: Any) -> None:
        V = f.V
        store(V, d, bits, compute(V[a]), m)

    return Op(run, "sfu")


def _lower_hi32_approx(ins: Instruction, ctx: Any, mods: FloatMods, rsqrt: bool) -> Op:
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
        store(V, d, bits, compute(V[a]), m)

    return Op(run, "sfu")


# ------------------------------------------------------------------------------------------------
# copysign
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("copysign",), FLOAT_TYPES)
def lower_copysign(ins: Instruction, ctx: Any) -> Op:
    """copysign d, a, b: b's magnitude with a's sign bit (bit operations: NaN payloads kept)."""
    mods = FloatMods(ins, ctx, set(), 2)
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


def _canon_inplace(out: np.ndarray, m: Any) -> None:
    """Canonical NaN for an f32 destination written in place (only lanes in m)."""
    if np.isnan(np.minimum.reduce(out, axis=None)):
        nan = np.isnan(out)
        if m is not None:
            nan &= m
        out.view(np.uint32)[nan] = fr.CANON_NAN32


# lowers_for_types (registry.py) and fma32/fma64 (fma.py) are re-exported for existing imports
__all__ = ["FLOAT_TYPES", "fma32", "fma64", "lowers_for_types"]
