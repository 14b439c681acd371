# Source of truth for what PTX's integer arithmetic instructions compute per lane: add/sub (with .sat
# and the carry chain add.cc/addc/sub.cc/subc/mad.cc/madc), mul/mad (.lo/.hi/.wide), mul24/mad24, sad,
# div/rem, abs/neg/min/max and dp4a/dp2a. The float forms of abs/neg/min/max are handed to compare.py;
# bit and logic ops live in bits.py, setp/set/selp/slct/testp in compare.py.
"""Integer arithmetic instructions of the virtual GPU.

Each lowering resolves its operands to frame slots once and returns a closure over NumPy ufuncs
that writes straight into the destination register view (`out=`, `where=mask`); results are
bit-exact. Unspecified PTX results (integer division by zero) are documented where they are chosen.

Example:
    >>> from strata.hw.isa import REGISTRY
    >>> all(op in REGISTRY for op in ("add", "addc", "mad", "mul24", "sad", "rem", "dp4a"))
    True
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa.bits import lop3_function  # re-exported (tests import it from here)
from strata.hw.isa.compare import FLOAT_CMPS, float_min_max, float_sign_op  # FLOAT_CMPS: re-exported
from strata.hw.isa.intbase import (
    FLOAT_TYPES,
    INT_TYPES,
    MASK32,
    SHIFT32,
    SIGNED,
    UNSIGNED,
    X2_TYPES,
    Run,
    binary_run,
    check_flags,
    computed_run,
    hi16,
    int_mods,
    lo16,
    one_type,
    operands,
    pack16,
    sign_mask,
    type_width,
    unary_run,
    utype,
)
from strata.hw.isa.registry import DTYPES, REGISTRY, Op, lowers, write
from strata.hw.ptx.ir import Imm, Operand, Reg

# Lowerings other families registered before us for opcodes we share (`add.f32` belongs to the
# float family; `add.s32` to us): float types are handed back to them.
_SHARED = ("add", "sub", "mul", "mad", "div")
_PREVIOUS = {op: REGISTRY[op] for op in _SHARED if op in REGISTRY}

ARITH_TYPES = frozenset(("u16", "u32", "u64", "s16", "s32", "s64"))
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1


# ------------------------------------------------------------------------------------------------
# Carry flag (add.cc / addc / sub.cc / subc / mad.cc / madc)
# ------------------------------------------------------------------------------------------------


def _carry_flag(f: Any, n: int) -> np.ndarray:
    """The frame's per-lane CC.CF; created on first use (a frame's lane count never grows)."""
    cc = getattr(f, "cc", None)
    if cc is None or cc.shape != (n,):
        cc = np.zeros(n, dtype=np.bool_)
        f.cc = cc
    return cc


def _add_carry(x: Any, y: Any, cin: Any, dt: np.dtype, sub: bool) -> tuple[Any, Any]:
    """(x + y + cin, carry out) or (x - (y + cin), borrow out) on unsigned bit patterns."""
    if sub:
        t = np.subtract(x, y, dtype=dt)
        out = np.less(x, y)
        if cin is None:
            return t, out
        s = np.subtract(t, cin, dtype=dt, casting="unsafe")
        return s, out | np.less(t, cin)  # t - 1 borrows only when t == 0
    t = np.add(x, y, dtype=dt)
    out = np.less(t, x)
    if cin is None:
        return t, out
    s = np.add(t, cin, dtype=dt, casting="unsafe")
    return s, out | np.less(s, t)


def _carry_run(d: int, compute: Callable[[list[Any]], Any], z: int, dt: np.dtype, sub: bool,
               cin: bool, cout: bool) -> Run:
    """`d = compute(V) +/- z (+/- CF)`, optionally updating CF.

    CC.CF holds a carry, as the hardware computes `a - b` as `a + ~b + 1`: sub.cc/subc.cc leave
    NOT borrow in it and subc subtracts `1 - CF`. Chains of one kind read the same either way (the
    PTX ISA's `d = a - (b + CC.CF)` with borrow-out); mixing kinds shows the carry: after a borrowing
    `sub.cc`, `addc d, 0, 0` reads 0 on hardware.
    """

    def run(f: Any, m: Any) -> None:
        V = f.V
        D = V[d]
        cc = _carry_flag(f, D.shape[0])
        s, c = _add_carry(compute(V), V[z], ((~cc) if sub else cc) if cin else None, dt, sub)
        write(D, s, m)
        if cout:
            np.copyto(cc, np.logical_not(c) if sub else c, where=True if m is None else m)

    return run


# ------------------------------------------------------------------------------------------------
# add, sub, addc, subc
# ------------------------------------------------------------------------------------------------


@lowers("add", "sub")
def lower_add_sub(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    if len(types) != 1 or (types[0] not in ARITH_TYPES and types[0] not in X2_TYPES):
        return _delegate(ins, ctx)
    t = types[0]
    check_flags(ctx, flags, {"sat", "cc"})
    d_op, a_op, b_op = operands(ins, ctx, 3)
    sub = ins.opcode == "sub"
    uf = np.subtract if sub else np.add
    if t in X2_TYPES:
        if flags:
            raise ctx.unsupported()
        return Op(_x2_run(ctx, d_op, a_op, b_op, t, lambda x, y: uf(x, y, dtype=x.dtype)), "integer")
    if "cc" in flags:
        if "sat" in flags or type_width(t) < 32:
            raise ctx.unsupported()
        ut = utype(t)
        d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, ut), ctx.src(b_op, ut)
        return Op(_carry_run(d, lambda V: V[a], b, DTYPES[ut], sub, False, True), "integer")
    if "sat" in flags:
        if t != "s32":
            raise ctx.unsupported()
        d, a, b = ctx.dst(d_op, "s32"), ctx.src(a_op, "s32"), ctx.src(b_op, "s32")

        def sat(V: list[Any]) -> Any:
            r = uf(V[a], V[b], dtype=np.int64)
            return np.clip(r, _I32_MIN, _I32_MAX, out=r if isinstance(r, np.ndarray) else None)

        return Op(computed_run(d, sat), "integer")
    # low bits of a sum don't depend on signedness: compute on unsigned views (no overflow UB)
    ut = utype(t)
    d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, ut), ctx.src(b_op, ut)
    return Op(binary_run(uf, d, a, b, DTYPES[ut]), "integer")


@lowers("addc", "subc")
def lower_addc_subc(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    check_flags(ctx, flags, {"cc"})
    d_op, a_op, b_op = operands(ins, ctx, 3)
    ut = utype(t)
    d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, ut), ctx.src(b_op, ut)
    sub = ins.opcode == "subc"
    return Op(_carry_run(d, lambda V: V[a], b, DTYPES[ut], sub, True, "cc" in flags), "integer")


def _x2_run(ctx: Any, d_op: Operand, a_op: Operand, b_op: Operand, t: str,
            fn: Callable[[np.ndarray, np.ndarray], Any]) -> Run:
    """Apply `fn` to the 16-bit halves of packed `.u16x2/.s16x2` operands."""
    d, a, b = ctx.dst(d_op, "b32"), ctx.src(a_op, "b32"), ctx.src(b_op, "b32")
    half = np.int16 if t == "s16x2" else np.uint16

    def compute(V: list[Any]) -> Any:
        x, y = V[a], V[b]
        lo = fn(lo16(x).view(half), lo16(y).view(half))
        hi = fn(hi16(x).view(half), hi16(y).view(half))
        return pack16(lo, hi)

    return computed_run(d, compute)


# ------------------------------------------------------------------------------------------------
# mul, mad, madc, mul24, mad24, sad
# ------------------------------------------------------------------------------------------------


def _mulhi_u64(x: Any, y: Any) -> Any:
    """High 64 bits of the 128-bit product of uint64 values, via 32-bit limbs."""
    x, y = np.atleast_1d(np.asarray(x, np.uint64)), np.atleast_1d(np.asarray(y, np.uint64))  # scalars too
    xl, xh, yl, yh = x & MASK32, x >> SHIFT32, y & MASK32, y >> SHIFT32
    mid = np.multiply(xl, yl)
    np.right_shift(mid, SHIFT32, out=mid)
    lh = np.multiply(xl, yh)
    hl = np.multiply(xh, yl)
    hh = np.multiply(xh, yh)
    mid += lh & MASK32
    mid += hl & MASK32
    np.right_shift(lh, SHIFT32, out=lh)
    np.right_shift(hl, SHIFT32, out=hl)
    np.right_shift(mid, SHIFT32, out=mid)
    hh += lh
    hh += hl
    hh += mid
    return hh


def _mulhi_s64(xu: Any, yu: Any, xs: Any, ys: Any) -> Any:
    """Signed high half: the unsigned one minus b where a < 0 and minus a where b < 0 (mod 2^64)."""
    hi = _mulhi_u64(xu, yu)
    hi -= yu & sign_mask(xs, 64)
    hi -= xu & sign_mask(ys, 64)
    return hi


def _product(ctx: Any, mode: str, t: str, a_op: Operand, b_op: Operand) -> Callable[[list[Any]], Any]:
    """The `.lo`/`.hi`/`.wide` part of a*b as a temporary (unsigned bits for lo/hi)."""
    w = type_width(t)
    signed = t[0] == "s"
    if mode == "lo":
        ut = utype(t)
        a, b = ctx.src(a_op, ut), ctx.src(b_op, ut)
        dt = DTYPES[ut]
        return lambda V: np.multiply(V[a], V[b], dtype=dt)
    if mode == "wide":
        if w == 64:
            raise ctx.unsupported()
        a, b = ctx.src(a_op, t), ctx.src(b_op, t)
        wt = (SIGNED if signed else UNSIGNED)[2 * w]
        return lambda V: np.multiply(V[a], V[b], dtype=wt)
    if w == 64:
        au, bu = ctx.src(a_op, "u64"), ctx.src(b_op, "u64")
        if not signed:
            return lambda V: _mulhi_u64(V[au], V[bu])
        as_, bs = ctx.src(a_op, "s64"), ctx.src(b_op, "s64")
        return lambda V: _mulhi_s64(V[au], V[bu], V[as_], V[bs])
    a, b = ctx.src(a_op, t), ctx.src(b_op, t)
    wt = (SIGNED if signed else UNSIGNED)[2 * w]
    sh = wt.type(w)
    udt = UNSIGNED[w]

    def hi(V: list[Any]) -> Any:
        p = np.atleast_1d(np.multiply(V[a], V[b], dtype=wt))  # an array even for scalar operands
        return np.right_shift(p, sh, out=p).astype(udt)

    return hi


def _mode(ctx: Any, flags: list[str], allowed: tuple[str, ...]) -> str:
    modes = [f for f in flags if f in ("lo", "hi", "wide")]
    if len(modes) != 1 or modes[0] not in allowed:
        raise ctx.fail("expected exactly one of " + "/".join(f".{x}" for x in allowed))
    return modes[0]


@lowers("mul")
def lower_mul(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    if len(types) != 1 or types[0] not in ARITH_TYPES:
        return _delegate(ins, ctx)
    t = types[0]
    check_flags(ctx, flags, {"lo", "hi", "wide"})
    mode = _mode(ctx, flags, ("lo", "hi", "wide"))
    d_op, a_op, b_op = operands(ins, ctx, 3)
    w = type_width(t)
    if mode == "lo":
        ut = utype(t)
        d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, ut), ctx.src(b_op, ut)
        return Op(binary_run(np.multiply, d, a, b, DTYPES[ut]), "integer")
    if mode == "wide":
        if w == 64:
            raise ctx.unsupported()
        wt = f"{t[0]}{2 * w}"
        d, a, b = ctx.dst(d_op, wt), ctx.src(a_op, t), ctx.src(b_op, t)
        # inputs widen (safe cast) inside the ufunc loop: one pass, no temporaries
        return Op(binary_run(np.multiply, d, a, b, DTYPES[wt]), "integer")
    d = ctx.dst(d_op, utype(t))
    if w == 64:
        return Op(computed_run(d, _product(ctx, "hi", t, a_op, b_op)), "integer")
    a, b = ctx.src(a_op, t), ctx.src(b_op, t)
    wide = (SIGNED if t[0] == "s" else UNSIGNED)[2 * w]
    sh = wide.type(w)

    def run_hi(f: Any, m: Any) -> None:  # the shifted wide product stores straight into d
        V = f.V
        p = np.multiply(V[a], V[b], dtype=wide)
        np.right_shift(p, sh, out=V[d], casting="unsafe", where=True if m is None else m)

    return Op(run_hi, "integer")


@lowers("mad")
def lower_mad(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    if len(types) != 1 or types[0] not in ARITH_TYPES:
        return _delegate(ins, ctx)
    t = types[0]
    check_flags(ctx, flags, {"lo", "hi", "wide", "sat", "cc"})
    mode = _mode(ctx, flags, ("lo", "hi", "wide"))
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    w = type_width(t)
    if "cc" in flags:
        if mode == "wide" or "sat" in flags or w < 32:
            raise ctx.unsupported()
        ut = utype(t)
        prod = _product(ctx, mode, t, a_op, b_op)
        d, c = ctx.dst(d_op, ut), ctx.src(c_op, ut)
        return Op(_carry_run(d, prod, c, DTYPES[ut], False, False, True), "integer")
    if "sat" in flags:
        if mode != "hi" or t != "s32":
            raise ctx.unsupported()
        prod = _product(ctx, "hi", t, a_op, b_op)
        d, c = ctx.dst(d_op, "s32"), ctx.src(c_op, "s32")

        def sat(V: list[Any]) -> Any:
            r = np.add(prod(V).view(np.int32), V[c], dtype=np.int64)
            return np.clip(r, _I32_MIN, _I32_MAX, out=r if isinstance(r, np.ndarray) else None)

        return Op(computed_run(d, sat), "integer")
    if mode == "wide":
        if w == 64:
            raise ctx.unsupported()
        rt = f"{t[0]}{2 * w}"
        d, a, b, c = ctx.dst(d_op, rt), ctx.src(a_op, t), ctx.src(b_op, t), ctx.src(c_op, rt)
        rdt = DTYPES[rt]
    else:
        rt = utype(t)
        d, c = ctx.dst(d_op, rt), ctx.src(c_op, rt)
        rdt = DTYPES[rt]
        if mode == "hi":
            prod = _product(ctx, "hi", t, a_op, b_op)

            def run_hi(f: Any, m: Any) -> None:
                V = f.V
                np.add(prod(V), V[c], out=V[d], dtype=rdt, casting="unsafe",
                       where=True if m is None else m)

            return Op(run_hi, "integer")
        a, b = ctx.src(a_op, rt), ctx.src(b_op, rt)
    if _same_reg(d_op, c_op):  # d = a*b + d: the product needs a temporary

        def run_acc(f: Any, m: Any) -> None:
            V = f.V
            p = np.multiply(V[a], V[b], dtype=rdt)
            np.add(p, V[c], out=V[d], dtype=rdt, casting="unsafe", where=True if m is None else m)

        return Op(run_acc, "integer")

    def run(f: Any, m: Any) -> None:
        V = f.V
        D = V[d]
        w_ = True if m is None else m
        np.multiply(V[a], V[b], out=D, dtype=rdt, casting="unsafe", where=w_)
        np.add(D, V[c], out=D, dtype=rdt, casting="unsafe", where=w_)

    return Op(run, "integer")


@lowers("madc")
def lower_madc(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    check_flags(ctx, flags, {"lo", "hi", "cc"})
    mode = _mode(ctx, flags, ("lo", "hi"))
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    ut = utype(t)
    prod = _product(ctx, mode, t, a_op, b_op)
    d, c = ctx.dst(d_op, ut), ctx.src(c_op, ut)
    return Op(_carry_run(d, prod, c, DTYPES[ut], False, True, "cc" in flags), "integer")


@lowers("mul24", "mad24")
def lower_mul24(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("u32", "s32")))
    mad = ins.opcode == "mad24"
    check_flags(ctx, flags, {"lo", "hi", "sat"} if mad else {"lo", "hi"})
    mode = _mode(ctx, flags, ("lo", "hi"))
    sat = "sat" in flags
    if sat and (mode != "hi" or t != "s32"):
        raise ctx.unsupported()
    ops = operands(ins, ctx, 4 if mad else 3)
    d = ctx.dst(ops[0], t)
    a, b = ctx.src(ops[1], t), ctx.src(ops[2], t)
    c = ctx.src(ops[3], t) if mad else -1
    signed = t == "s32"

    def compute(V: list[Any]) -> Any:
        if signed:  # sign-extend the low 24 bits
            x = (np.asarray(V[a], np.int32) << np.int32(8)) >> np.int32(8)
            y = (np.asarray(V[b], np.int32) << np.int32(8)) >> np.int32(8)
            p = np.multiply(x, y, dtype=np.int64)
        else:
            p = np.multiply(np.asarray(V[a]) & np.uint32(0xFFFFFF), np.asarray(V[b]) & np.uint32(0xFFFFFF),
                            dtype=np.uint64)
        if mode == "hi":
            p = p >> p.dtype.type(16)
        p32 = p.astype(np.int32 if signed else np.uint32)  # bits 31..0 (or 47..16)
        if not mad:
            return p32
        if sat:
            return np.clip(np.add(p32, V[c], dtype=np.int64), _I32_MIN, _I32_MAX)
        return np.add(p32, V[c], dtype=p32.dtype)

    return Op(computed_run(d, compute), "integer")


@lowers("sad")
def lower_sad(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, ARITH_TYPES)
    check_flags(ctx, flags, set())
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    ut = utype(t)
    dt = DTYPES[ut]
    d, c = ctx.dst(d_op, ut), ctx.src(c_op, ut)
    a, b = ctx.src(a_op, t), ctx.src(b_op, t)
    au, bu = ctx.src(a_op, ut), ctx.src(b_op, ut)

    def compute(V: list[Any]) -> Any:
        # |a - b| fits the unsigned width even when a - b overflows the signed one
        diff = np.subtract(V[au], V[bu], dtype=dt)
        s = np.negative(np.less(V[a], V[b]), dtype=dt)  # all ones where a < b: negate
        return np.add((diff ^ s) - s, V[c], dtype=dt)

    return Op(computed_run(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# div, rem
# ------------------------------------------------------------------------------------------------


@lowers("div", "rem")
def lower_div_rem(ins: Any, ctx: Any) -> Op:
    """Truncating integer division. Division by zero is unspecified in PTX: strata returns all
    ones (0xffff.., i.e. -1 for signed types) for both quotient and remainder, which is what the
    instruction sequences ptxas emits for 32-bit division select for a zero divisor. The overflow
    case INT_MIN / -1 wraps to INT_MIN (remainder 0).
    """
    flags, types = int_mods(ins, ctx)
    if ins.opcode == "div" and (len(types) != 1 or types[0] not in ARITH_TYPES):
        return _delegate(ins, ctx)
    t = one_type(ins, ctx, types, ARITH_TYPES)
    check_flags(ctx, flags, set())
    d_op, a_op, b_op = operands(ins, ctx, 3)
    w = type_width(t)
    ut = utype(t)
    udt = DTYPES[ut]
    d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, t), ctx.src(b_op, t)
    is_div = ins.opcode == "div"
    signed = t[0] == "s"
    ones = udt.type(np.iinfo(udt).max)
    # a nonzero immediate divisor needs no zero check, and NumPy divides by a scalar much faster
    const_b = isinstance(b_op, Imm)
    if isinstance(b_op, Imm) and b_op.value & ((1 << w) - 1) == 0:
        return Op(computed_run(d, lambda V: ones), "integer")

    def compute(V: list[Any]) -> Any:
        x, y = np.asarray(V[a]), np.asarray(V[b])
        if signed:  # divide magnitudes (|INT_MIN| is fine as unsigned), then fix signs branch-free
            mx, my = np.abs(x).view(udt), np.abs(y).view(udt)
        else:
            mx, my = x, y
        q = np.floor_divide(mx, my)  # y == 0 gives 0 (fixed below)
        if is_div:
            res = q
            if signed:
                s = sign_mask(x ^ y, w)
                res = (res ^ s) - s
        else:
            res = mx - q * my
            if signed:
                s = sign_mask(x, w)
                res = (res ^ s) - s
        if not const_b:
            res = res | np.negative(np.equal(y, 0), dtype=udt)
        return res

    return Op(computed_run(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# abs, neg, min, max (integer and floating point)
# ------------------------------------------------------------------------------------------------


@lowers("abs", "neg")
def lower_abs_neg(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    if len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode} needs one type")
    t = types[0]
    d_op, a_op = operands(ins, ctx, 2)
    if t in FLOAT_TYPES:
        return float_sign_op(ins, ctx, flags, t, d_op, a_op)
    if t not in ("s16", "s32", "s64"):
        raise ctx.unsupported()
    check_flags(ctx, flags, set())
    if ins.opcode == "neg":
        ut = utype(t)
        return Op(unary_run(np.negative, ctx.dst(d_op, ut), ctx.src(a_op, ut), DTYPES[ut]), "integer")
    ut = utype(t)
    w = type_width(t)
    d, a, au = ctx.dst(d_op, ut), ctx.src(a_op, t), ctx.src(a_op, ut)

    def compute(V: list[Any]) -> Any:  # (x ^ s) - s negates where s is all ones; |INT_MIN| wraps
        s = sign_mask(V[a], w)
        return (V[au] ^ s) - s

    return Op(computed_run(d, compute), "integer")


@lowers("min", "max")
def lower_min_max(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    if len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode} needs one type")
    t = types[0]
    if t in FLOAT_TYPES:
        return float_min_max(ins, ctx, flags, t)
    if t not in ARITH_TYPES and t not in X2_TYPES:
        raise ctx.unsupported()
    check_flags(ctx, flags, {"relu"})
    relu = "relu" in flags
    if relu and t not in ("s32", "s16x2"):
        raise ctx.unsupported()
    d_op, a_op, b_op = operands(ins, ctx, 3)
    uf = np.maximum if ins.opcode == "max" else np.minimum
    if t in X2_TYPES:
        if relu:
            return Op(_x2_run(ctx, d_op, a_op, b_op, t,
                              lambda x, y: np.maximum(uf(x, y), np.int16(0))), "integer")
        return Op(_x2_run(ctx, d_op, a_op, b_op, t, uf), "integer")
    d, a, b = ctx.dst(d_op, t), ctx.src(a_op, t), ctx.src(b_op, t)
    dt = DTYPES[t]
    if relu:

        def run_relu(f: Any, m: Any) -> None:
            V = f.V
            w_ = True if m is None else m
            r = uf(V[a], V[b], dtype=dt)
            np.maximum(r, dt.type(0), out=V[d], where=w_)

        return Op(run_relu, "integer")
    return Op(binary_run(uf, d, a, b, dt), "integer")


# ------------------------------------------------------------------------------------------------
# dp4a, dp2a
# ------------------------------------------------------------------------------------------------


@lowers("dp4a", "dp2a")
def lower_dp(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    if len(types) != 2 or any(t not in ("u32", "s32") for t in types):
        raise ctx.unsupported()
    dp2 = ins.opcode == "dp2a"
    check_flags(ctx, flags, {"lo", "hi"} if dp2 else set())
    if dp2 and len(flags) != 1:
        raise ctx.fail("dp2a needs .lo or .hi")
    at, bt = types
    ct = "u32" if at == bt == "u32" else "s32"
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    d, a, b, c = ctx.dst(d_op, ct), ctx.src(a_op, "u32"), ctx.src(b_op, "u32"), ctx.src(c_op, ct)
    first = 2 if dp2 and flags[0] == "hi" else 0

    def parts(x: Any, n: int, signed: bool) -> list[np.ndarray]:
        bits = 32 // n
        x = np.asarray(x, np.uint32)
        out = []
        for i in range(n):
            v = ((x >> np.uint32(bits * i)) & np.uint32((1 << bits) - 1)).astype(np.int64)
            if signed:
                v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
            out.append(v)
        return out

    def compute(V: list[Any]) -> Any:
        va = parts(V[a], 2 if dp2 else 4, at == "s32")
        vb = parts(V[b], 4, bt == "s32")[first:first + len(va)]
        acc = np.asarray(V[c], np.int64)
        for x, y in zip(va, vb):
            acc = acc + x * y
        return acc  # the store keeps the low 32 bits

    return Op(computed_run(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# Helpers
# ------------------------------------------------------------------------------------------------


def _same_reg(a: Operand, b: Operand) -> bool:
    return isinstance(a, Reg) and isinstance(b, Reg) and a.name == b.name


def _delegate(ins: Any, ctx: Any) -> Op:
    prev = _PREVIOUS.get(ins.opcode)
    if prev is None:
        raise ctx.unsupported()
    return prev(ins, ctx)


# Lowerings of the integer, bit and comparison families by opcode (bits.py and compare.py are imported
# above, so theirs are registered too), for families that share an opcode (the float family's `add`).
INTEGER_LOWERINGS = {op: REGISTRY[op] for op in (
    "add", "sub", "addc", "subc", "mul", "mad", "madc", "mul24", "mad24", "sad", "div", "rem", "abs",
    "neg", "min", "max", "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "bmsk", "szext", "prmt",
    "lop3", "dp4a", "dp2a", "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "setp", "set",
    "selp", "slct", "testp")}

# lop3_function, FLOAT_CMPS and INT_TYPES are re-exported from bits.py, compare.py and intbase.py
__all__ = ["FLOAT_CMPS", "INTEGER_LOWERINGS", "INT_TYPES", "lop3_function"]
