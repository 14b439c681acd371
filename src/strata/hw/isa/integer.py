"""Semantics of PTX's integer, bit-manipulation and comparison instructions: the source of truth for
what add/sub/mul/mad/div/rem (and carries), shifts, bit fields, prmt/lop3, setp/set/selp/slct and
testp compute per lane, including the float forms of min/max/abs/neg/setp/set/selp/slct/testp.

Each lowering resolves its operands to frame slots once and returns a closure over NumPy ufuncs
that writes straight into the destination register view (`out=`, `where=mask`); results are
bit-exact. Unspecified PTX results (integer division by zero) are documented where they are chosen.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata.hw.isa.registry import DTYPES, REGISTRY, Op, lowers, split_mods, write
from strata.hw.ptx.ir import FImm, Imm, Operand, Pair, Reg, Sink

# Lowerings other families registered before us for opcodes we share (`add.f32` belongs to the
# float family; `add.s32` to us): float types are handed back to them.
_SHARED = ("add", "sub", "mul", "mad", "div")
_PREVIOUS = {op: REGISTRY[op] for op in _SHARED if op in REGISTRY}

INT_TYPES = frozenset(("u16", "u32", "u64", "s16", "s32", "s64", "b16", "b32", "b64"))
ARITH_TYPES = frozenset(("u16", "u32", "u64", "s16", "s32", "s64"))
X2_TYPES = ("u16x2", "s16x2")
FLOAT_TYPES = frozenset(("f16", "bf16", "f16x2", "bf16x2", "f32", "f64"))
_U: dict[int, np.dtype[Any]] = {16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
_S: dict[int, np.dtype[Any]] = {16: np.dtype(np.int16), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}
_I32_MIN, _I32_MAX = -(1 << 31), (1 << 31) - 1

Run = Callable[[Any, Any], None]


# ------------------------------------------------------------------------------------------------
# Parsing helpers
# ------------------------------------------------------------------------------------------------


def _mods(ins: Any, ctx: Any) -> tuple[list[str], list[str]]:
    """(flags, types) with the packed integer types `.u16x2/.s16x2` counted as types."""
    flags, types = split_mods(ins.mods)
    x2 = [f for f in flags if f in X2_TYPES]
    return [f for f in flags if f not in X2_TYPES], x2 + types


def _check(ctx: Any, flags: list[str], allowed: set[str] | frozenset[str]) -> None:
    for f in flags:
        if f not in allowed:
            raise ctx.unsupported()


def _one_type(ins: Any, ctx: Any, types: list[str], allowed: frozenset[str] | set[str]) -> str:
    if len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode} needs exactly one type suffix")
    if types[0] not in allowed:
        raise ctx.unsupported()
    return types[0]


def _operands(ins: Any, ctx: Any, n: int) -> tuple[Operand, ...]:
    if len(ins.operands) != n:
        raise ctx.fail(f"{ins.full_opcode} needs {n} operands, got {len(ins.operands)}")
    return tuple(ins.operands)


def _width(t: str) -> int:
    """Bits of one element: 'u32' -> 32, 'bf16x2' -> 16."""
    return int("".join(ch for ch in t.split("x")[0] if ch.isdigit()))


def _ut(t: str) -> str:
    return f"u{_width(t)}"


def _st(t: str) -> str:
    return f"s{_width(t)}"


def _same_reg(a: Operand, b: Operand) -> bool:
    return isinstance(a, Reg) and isinstance(b, Reg) and a.name == b.name


def _delegate(ins: Any, ctx: Any) -> Op:
    prev = _PREVIOUS.get(ins.opcode)
    if prev is None:
        raise ctx.unsupported()
    return prev(ins, ctx)


def _pred_src(ctx: Any, op: Operand) -> tuple[int, bool]:
    if isinstance(op, Reg):
        return ctx.pred(op)
    return ctx.src(op, "pred"), False


def _binary(uf: np.ufunc, d: int, a: int, b: int, dt: np.dtype) -> Run:
    """`d = uf(a, b)` computed in dtype `dt`, written in place for the lanes in the mask."""

    def run(f: Any, m: Any) -> None:
        V = f.V
        uf(V[a], V[b], out=V[d], dtype=dt, casting="unsafe", where=True if m is None else m)

    return run


def _unary(uf: np.ufunc, d: int, a: int, dt: np.dtype) -> Run:
    def run(f: Any, m: Any) -> None:
        V = f.V
        uf(V[a], out=V[d], dtype=dt, casting="unsafe", where=True if m is None else m)

    return run


def _computed(d: int, compute: Callable[[list[Any]], Any]) -> Run:
    """`d = compute(V)` (a temporary) stored for the lanes in the mask."""

    def run(f: Any, m: Any) -> None:
        V = f.V
        write(V[d], compute(V), m)

    return run


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
    """`d = compute(V) +/- z (+/- CF)`, optionally updating CF."""

    def run(f: Any, m: Any) -> None:
        V = f.V
        D = V[d]
        cc = _carry_flag(f, D.shape[0])
        s, c = _add_carry(compute(V), V[z], cc if cin else None, dt, sub)
        write(D, s, m)
        if cout:
            np.copyto(cc, c, where=True if m is None else m)

    return run


# ------------------------------------------------------------------------------------------------
# add, sub, addc, subc
# ------------------------------------------------------------------------------------------------


@lowers("add", "sub")
def lower_add_sub(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    if len(types) != 1 or (types[0] not in ARITH_TYPES and types[0] not in X2_TYPES):
        return _delegate(ins, ctx)
    t = types[0]
    _check(ctx, flags, {"sat", "cc"})
    d_op, a_op, b_op = _operands(ins, ctx, 3)
    sub = ins.opcode == "sub"
    uf = np.subtract if sub else np.add
    if t in X2_TYPES:
        if flags:
            raise ctx.unsupported()
        return Op(_x2_run(ctx, d_op, a_op, b_op, t, lambda x, y: uf(x, y, dtype=x.dtype)), "integer")
    if "cc" in flags:
        if "sat" in flags or _width(t) < 32:
            raise ctx.unsupported()
        ut = _ut(t)
        d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, ut), ctx.src(b_op, ut)
        return Op(_carry_run(d, lambda V: V[a], b, DTYPES[ut], sub, False, True), "integer")
    if "sat" in flags:
        if t != "s32":
            raise ctx.unsupported()
        d, a, b = ctx.dst(d_op, "s32"), ctx.src(a_op, "s32"), ctx.src(b_op, "s32")

        def sat(V: list[Any]) -> Any:
            r = uf(V[a], V[b], dtype=np.int64)
            return np.clip(r, _I32_MIN, _I32_MAX, out=r)

        return Op(_computed(d, sat), "integer")
    # low bits of a sum don't depend on signedness: compute on unsigned views (no overflow UB)
    ut = _ut(t)
    d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, ut), ctx.src(b_op, ut)
    return Op(_binary(uf, d, a, b, DTYPES[ut]), "integer")


@lowers("addc", "subc")
def lower_addc_subc(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    _check(ctx, flags, {"cc"})
    d_op, a_op, b_op = _operands(ins, ctx, 3)
    ut = _ut(t)
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
        lo = fn(_lo16(x).view(half), _lo16(y).view(half))
        hi = fn(_hi16(x).view(half), _hi16(y).view(half))
        return _pack16(lo, hi)

    return _computed(d, compute)


def _lo16(x: Any) -> np.ndarray:
    return np.asarray(x).astype(np.uint16)


def _hi16(x: Any) -> np.ndarray:
    return (np.asarray(x) >> np.uint32(16)).astype(np.uint16)


def _pack16(lo: Any, hi: Any) -> np.ndarray:
    lo32 = np.asarray(lo).view(np.uint16).astype(np.uint32)
    return lo32 | (np.asarray(hi).view(np.uint16).astype(np.uint32) << np.uint32(16))


# ------------------------------------------------------------------------------------------------
# mul, mad, madc, mul24, mad24, sad
# ------------------------------------------------------------------------------------------------

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def _mulhi_u64(x: Any, y: Any) -> Any:
    """High 64 bits of the 128-bit product of uint64 values, via 32-bit limbs."""
    x, y = np.asarray(x, np.uint64), np.asarray(y, np.uint64)
    xl, xh, yl, yh = x & _M32, x >> _S32, y & _M32, y >> _S32
    mid = np.multiply(xl, yl)
    np.right_shift(mid, _S32, out=mid)
    lh = np.multiply(xl, yh)
    hl = np.multiply(xh, yl)
    hh = np.multiply(xh, yh)
    mid += lh & _M32
    mid += hl & _M32
    np.right_shift(lh, _S32, out=lh)
    np.right_shift(hl, _S32, out=hl)
    np.right_shift(mid, _S32, out=mid)
    hh += lh
    hh += hl
    hh += mid
    return hh


def _mulhi_s64(xu: Any, yu: Any, xs: Any, ys: Any) -> Any:
    """Signed high half: the unsigned one minus b where a < 0 and minus a where b < 0 (mod 2^64)."""
    hi = _mulhi_u64(xu, yu)
    hi -= yu & _sign_mask(xs, 64)
    hi -= xu & _sign_mask(ys, 64)
    return hi


def _sign_mask(x: Any, w: int) -> Any:
    """All ones (unsigned) where the signed value x is negative, else 0: branch-free selects."""
    return (np.asarray(x) >> _S[w].type(w - 1)).view(_U[w])


def _product(ctx: Any, mode: str, t: str, a_op: Operand, b_op: Operand) -> Callable[[list[Any]], Any]:
    """The `.lo`/`.hi`/`.wide` part of a*b as a temporary (unsigned bits for lo/hi)."""
    w = _width(t)
    signed = t[0] == "s"
    if mode == "lo":
        ut = _ut(t)
        a, b = ctx.src(a_op, ut), ctx.src(b_op, ut)
        dt = DTYPES[ut]
        return lambda V: np.multiply(V[a], V[b], dtype=dt)
    if mode == "wide":
        if w == 64:
            raise ctx.unsupported()
        a, b = ctx.src(a_op, t), ctx.src(b_op, t)
        wt = (_S if signed else _U)[2 * w]
        return lambda V: np.multiply(V[a], V[b], dtype=wt)
    if w == 64:
        au, bu = ctx.src(a_op, "u64"), ctx.src(b_op, "u64")
        if not signed:
            return lambda V: _mulhi_u64(V[au], V[bu])
        as_, bs = ctx.src(a_op, "s64"), ctx.src(b_op, "s64")
        return lambda V: _mulhi_s64(V[au], V[bu], V[as_], V[bs])
    a, b = ctx.src(a_op, t), ctx.src(b_op, t)
    wt = (_S if signed else _U)[2 * w]
    sh = wt.type(w)
    udt = _U[w]

    def hi(V: list[Any]) -> Any:
        p = np.multiply(V[a], V[b], dtype=wt)
        return np.right_shift(p, sh, out=p).astype(udt)

    return hi


def _mode(ctx: Any, flags: list[str], allowed: tuple[str, ...]) -> str:
    modes = [f for f in flags if f in ("lo", "hi", "wide")]
    if len(modes) != 1 or modes[0] not in allowed:
        raise ctx.fail("expected exactly one of " + "/".join(f".{x}" for x in allowed))
    return modes[0]


@lowers("mul")
def lower_mul(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    if len(types) != 1 or types[0] not in ARITH_TYPES:
        return _delegate(ins, ctx)
    t = types[0]
    _check(ctx, flags, {"lo", "hi", "wide"})
    mode = _mode(ctx, flags, ("lo", "hi", "wide"))
    d_op, a_op, b_op = _operands(ins, ctx, 3)
    w = _width(t)
    if mode == "lo":
        ut = _ut(t)
        d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, ut), ctx.src(b_op, ut)
        return Op(_binary(np.multiply, d, a, b, DTYPES[ut]), "integer")
    if mode == "wide":
        if w == 64:
            raise ctx.unsupported()
        wt = f"{t[0]}{2 * w}"
        d, a, b = ctx.dst(d_op, wt), ctx.src(a_op, t), ctx.src(b_op, t)
        # inputs widen (safe cast) inside the ufunc loop: one pass, no temporaries
        return Op(_binary(np.multiply, d, a, b, DTYPES[wt]), "integer")
    d = ctx.dst(d_op, _ut(t))
    if w == 64:
        return Op(_computed(d, _product(ctx, "hi", t, a_op, b_op)), "integer")
    a, b = ctx.src(a_op, t), ctx.src(b_op, t)
    wide = (_S if t[0] == "s" else _U)[2 * w]
    sh = wide.type(w)

    def run_hi(f: Any, m: Any) -> None:  # the shifted wide product stores straight into d
        V = f.V
        p = np.multiply(V[a], V[b], dtype=wide)
        np.right_shift(p, sh, out=V[d], casting="unsafe", where=True if m is None else m)

    return Op(run_hi, "integer")


@lowers("mad")
def lower_mad(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    if len(types) != 1 or types[0] not in ARITH_TYPES:
        return _delegate(ins, ctx)
    t = types[0]
    _check(ctx, flags, {"lo", "hi", "wide", "sat", "cc"})
    mode = _mode(ctx, flags, ("lo", "hi", "wide"))
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    w = _width(t)
    if "cc" in flags:
        if mode == "wide" or "sat" in flags or w < 32:
            raise ctx.unsupported()
        ut = _ut(t)
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
            return np.clip(r, _I32_MIN, _I32_MAX, out=r)

        return Op(_computed(d, sat), "integer")
    if mode == "wide":
        if w == 64:
            raise ctx.unsupported()
        rt = f"{t[0]}{2 * w}"
        d, a, b, c = ctx.dst(d_op, rt), ctx.src(a_op, t), ctx.src(b_op, t), ctx.src(c_op, rt)
        rdt = DTYPES[rt]
    else:
        rt = _ut(t)
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
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    _check(ctx, flags, {"lo", "hi", "cc"})
    mode = _mode(ctx, flags, ("lo", "hi"))
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    ut = _ut(t)
    prod = _product(ctx, mode, t, a_op, b_op)
    d, c = ctx.dst(d_op, ut), ctx.src(c_op, ut)
    return Op(_carry_run(d, prod, c, DTYPES[ut], False, True, "cc" in flags), "integer")


@lowers("mul24", "mad24")
def lower_mul24(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("u32", "s32")))
    mad = ins.opcode == "mad24"
    _check(ctx, flags, {"lo", "hi", "sat"} if mad else {"lo", "hi"})
    mode = _mode(ctx, flags, ("lo", "hi"))
    sat = "sat" in flags
    if sat and (mode != "hi" or t != "s32"):
        raise ctx.unsupported()
    ops = _operands(ins, ctx, 4 if mad else 3)
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

    return Op(_computed(d, compute), "integer")


@lowers("sad")
def lower_sad(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, ARITH_TYPES)
    _check(ctx, flags, set())
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    ut = _ut(t)
    dt = DTYPES[ut]
    d, c = ctx.dst(d_op, ut), ctx.src(c_op, ut)
    a, b = ctx.src(a_op, t), ctx.src(b_op, t)
    au, bu = ctx.src(a_op, ut), ctx.src(b_op, ut)

    def compute(V: list[Any]) -> Any:
        # |a - b| fits the unsigned width even when a - b overflows the signed one
        diff = np.subtract(V[au], V[bu], dtype=dt)
        s = np.negative(np.less(V[a], V[b]), dtype=dt)  # all ones where a < b: negate
        return np.add((diff ^ s) - s, V[c], dtype=dt)

    return Op(_computed(d, compute), "integer")


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
    flags, types = _mods(ins, ctx)
    if ins.opcode == "div" and (len(types) != 1 or types[0] not in ARITH_TYPES):
        return _delegate(ins, ctx)
    t = _one_type(ins, ctx, types, ARITH_TYPES)
    _check(ctx, flags, set())
    d_op, a_op, b_op = _operands(ins, ctx, 3)
    w = _width(t)
    ut = _ut(t)
    udt = DTYPES[ut]
    d, a, b = ctx.dst(d_op, ut), ctx.src(a_op, t), ctx.src(b_op, t)
    is_div = ins.opcode == "div"
    signed = t[0] == "s"
    ones = udt.type(np.iinfo(udt).max)
    # a nonzero immediate divisor needs no zero check, and NumPy divides by a scalar much faster
    const_b = isinstance(b_op, Imm)
    if isinstance(b_op, Imm) and b_op.value & ((1 << w) - 1) == 0:
        return Op(_computed(d, lambda V: ones), "integer")

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
                s = _sign_mask(x ^ y, w)
                res = (res ^ s) - s
        else:
            res = mx - q * my
            if signed:
                s = _sign_mask(x, w)
                res = (res ^ s) - s
        if not const_b:
            res = res | np.negative(np.equal(y, 0), dtype=udt)
        return res

    return Op(_computed(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# abs, neg, min, max (integer and floating point)
# ------------------------------------------------------------------------------------------------


@lowers("abs", "neg")
def lower_abs_neg(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    if len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode} needs one type")
    t = types[0]
    d_op, a_op = _operands(ins, ctx, 2)
    if t in FLOAT_TYPES:
        return _float_sign_op(ins, ctx, flags, t, d_op, a_op)
    if t not in ("s16", "s32", "s64"):
        raise ctx.unsupported()
    _check(ctx, flags, set())
    if ins.opcode == "neg":
        ut = _ut(t)
        return Op(_unary(np.negative, ctx.dst(d_op, ut), ctx.src(a_op, ut), DTYPES[ut]), "integer")
    ut = _ut(t)
    w = _width(t)
    d, a, au = ctx.dst(d_op, ut), ctx.src(a_op, t), ctx.src(a_op, ut)

    def compute(V: list[Any]) -> Any:  # (x ^ s) - s negates where s is all ones; |INT_MIN| wraps
        s = _sign_mask(V[a], w)
        return (V[au] ^ s) - s

    return Op(_computed(d, compute), "integer")


@lowers("min", "max")
def lower_min_max(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    if len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode} needs one type")
    t = types[0]
    if t in FLOAT_TYPES:
        return _float_min_max(ins, ctx, flags, t)
    if t not in ARITH_TYPES and t not in X2_TYPES:
        raise ctx.unsupported()
    _check(ctx, flags, {"relu"})
    relu = "relu" in flags
    if relu and t not in ("s32", "s16x2"):
        raise ctx.unsupported()
    d_op, a_op, b_op = _operands(ins, ctx, 3)
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
    return Op(_binary(uf, d, a, b, dt), "integer")


@dataclass(frozen=True)
class _FloatFormat:
    """How a float type's bits are laid out; `to_float` gives comparable NumPy values."""

    name: str
    bits: np.dtype  # unsigned container of one element
    sign: int
    exp: int
    canon: int  # the canonical NaN min/max return
    cls: str

    def to_float(self, b: Any) -> np.ndarray:
        b = np.asarray(b, dtype=self.bits)
        if self.name == "bf16":  # bfloat16 is the top half of a float32: exact
            return (b.astype(np.uint32) << np.uint32(16)).view(np.float32)
        return b.view({"f16": np.float16, "f32": np.float32, "f64": np.float64}[self.name])

    def from_float(self, f: Any) -> np.ndarray:
        """Bits of values produced by `to_float` (exact: they are inputs or NaNs), writable."""
        f = np.asarray(f)
        if self.name == "bf16":
            return (f.view(np.uint32) >> np.uint32(16)).astype(np.uint16)
        return f.view(self.bits)

    def flush(self, b: np.ndarray) -> np.ndarray:
        """.ftz: subnormals become zero of the same sign (branch-free)."""
        t = self.bits.type
        subnormal = np.negative((b & t(self.exp)) == 0, dtype=self.bits)  # all ones where exp == 0
        return b & (~subnormal | t(self.sign))


_FMT = {
    "f16": _FloatFormat("f16", np.dtype(np.uint16), 0x8000, 0x7C00, 0x7FFF, "fp16"),
    "bf16": _FloatFormat("bf16", np.dtype(np.uint16), 0x8000, 0x7F80, 0x7FFF, "fp16"),
    "f32": _FloatFormat("f32", np.dtype(np.uint32), 0x80000000, 0x7F800000, 0x7FFFFFFF, "fp32"),
    "f64": _FloatFormat("f64", np.dtype(np.uint64), 1 << 63, 0x7FF0000000000000, (1 << 63) - 1, "fp64"),
}


def _elem(t: str) -> str:
    """Element type of a packed float type (`f16x2` -> `f16`)."""
    return t[:-2] if t.endswith("x2") else t


def _float_bits_src(ctx: Any, op: Operand, t: str) -> tuple[int, bool]:
    """Slot holding operand bits for float type t; (slot, is_float_view).

    f32/f64/f16 registers are read through float views so literals convert by value; the bits are
    then a free `.view`. bf16 and packed types are read as raw bits.
    """
    if t in ("f32", "f64", "f16"):
        return ctx.src(op, t), True
    return ctx.src(op, "b32" if t.endswith("x2") else "b16"), False


def _bits_of(v: Any, is_float: bool, fmt: _FloatFormat) -> np.ndarray:
    """Raw bits of an operand: a free view of float registers; packed ones stay 32-bit."""
    a = np.asarray(v)
    return a.view(fmt.bits) if is_float else a


def _per_half(t: str, fn: Callable[..., np.ndarray], *xs: Any) -> np.ndarray:
    """Apply a bits -> bits function to each element; packed x2 types run it on both halves."""
    if not t.endswith("x2"):
        return fn(*xs)
    lo = fn(*(_lo16(x) for x in xs))
    hi = fn(*(_hi16(x) for x in xs))
    return _pack16(lo, hi)


def _float_sign_op(ins: Any, ctx: Any, flags: list[str], t: str, d_op: Operand, a_op: Operand) -> Op:
    """abs/neg on floats: clear or flip the sign bit (NaN payloads kept); .ftz flushes first."""
    fmt = _FMT[_elem(t)]
    _check(ctx, flags, {"ftz"} if fmt.name in ("f32", "f16") else set())
    ftz = "ftz" in flags
    a, is_f = _float_bits_src(ctx, a_op, t)
    d = ctx.dst(d_op, {"f32": "b32", "f64": "b64", "f16": "b16", "bf16": "b16"}.get(t, "b32"))
    st = fmt.bits.type
    is_abs = ins.opcode == "abs"

    def elem(b: np.ndarray) -> np.ndarray:
        if ftz:
            b = fmt.flush(b)
        return b & st(~fmt.sign & ((1 << 8 * fmt.bits.itemsize) - 1)) if is_abs else b ^ st(fmt.sign)

    def compute(V: list[Any]) -> Any:
        return _per_half(t, elem, _bits_of(V[a], is_f, fmt))

    return Op(_computed(d, compute), fmt.cls)


def _float_min_max(ins: Any, ctx: Any, flags: list[str], t: str) -> Op:
    """min/max on floats: a NaN operand loses to a number; both NaN (or any NaN with .NaN) gives the
    canonical NaN; -0.0 < +0.0. `.xorsign.abs` compares magnitudes and sets the sign to the XOR of
    the operands' signs (not for a NaN result). Three operands (PTX 8.8) fold pairwise.
    """
    fmt = _FMT[_elem(t)]
    allowed = {"NaN", "xorsign", "abs"}
    if fmt.name in ("f32", "f16"):
        allowed.add("ftz")
    _check(ctx, flags, allowed)
    if "xorsign" in flags and "abs" not in flags:
        raise ctx.fail(".xorsign needs .abs")
    ftz, nan_mode, xorsign, absm = ("ftz" in flags, "NaN" in flags, "xorsign" in flags, "abs" in flags)
    if fmt.name == "f64" and (nan_mode or absm):
        raise ctx.unsupported()
    if not 3 <= len(ins.operands) <= 4:
        raise ctx.fail(f"{ins.full_opcode} needs 3 or 4 operands")
    if len(ins.operands) == 4 and (xorsign or t != "f32"):
        raise ctx.unsupported()
    d_op, *src_ops = ins.operands
    is_max = ins.opcode == "max"
    if t in ("f32", "f64") and not flags and len(src_ops) == 2:
        fast = _min_max_literal(ctx, t, is_max, d_op, src_ops)
        if fast is not None:
            return fast
    srcs = [_float_bits_src(ctx, op, t) for op in src_ops]
    d = ctx.dst(d_op, {"f32": "b32", "f64": "b64", "f16": "b16", "bf16": "b16"}.get(t, "b32"))
    st = fmt.bits.type
    sign, mag = st(fmt.sign), st(~fmt.sign & ((1 << 8 * fmt.bits.itemsize) - 1))
    canon = st(fmt.canon)
    uf = np.fmax if is_max else np.fmin  # IEEE maxNum/minNum: NaN only when both are NaN

    def pair(ab: np.ndarray, bb: np.ndarray) -> np.ndarray:
        fa, fb = fmt.to_float(ab), fmt.to_float(bb)
        rf = uf(fa, fb)
        r = fmt.from_float(rf)
        # equal values have equal bits except +0/-0: max(+0,-0) = +0 (AND), min = -0 (OR)
        eq = fa == fb
        if is_max:
            np.bitwise_and(r, ab & bb, out=r, where=eq)
        else:
            np.bitwise_or(r, ab | bb, out=r, where=eq)
        np.copyto(r, canon, where=((fa != fa) | (fb != fb)) if nan_mode else (rf != rf))
        return r

    def elem(*bs: np.ndarray) -> np.ndarray:
        if ftz:
            bs = tuple(fmt.flush(b) for b in bs)
        sgn = (bs[0] ^ bs[1]) & sign if xorsign else None
        if absm:
            bs = tuple(b & mag for b in bs)
        r = pair(bs[0], bs[1])
        for b in bs[2:]:
            r = pair(r, b)
        if sgn is not None:  # a NaN result is the canonical NaN, which keeps its sign
            np.bitwise_or(r, sgn, out=r, where=r != canon)
        return r

    def compute(V: list[Any]) -> Any:
        return _per_half(t, elem, *(_bits_of(V[s], is_f, fmt) for s, is_f in srcs))

    return Op(_computed(d, compute), fmt.cls)


def _literal_value(op: Operand) -> float | None:
    if isinstance(op, FImm):
        fmt = "<f" if op.width == 32 else "<d"
        return float(struct.unpack(fmt, op.bits.to_bytes(op.width // 8, "little"))[0])
    return None


def _min_max_literal(ctx: Any, t: str, is_max: bool, d_op: Operand, src_ops: list[Operand]) -> Op | None:
    """min/max of a register and a non-NaN literal (ReLU is `max.f32 d, x, 0f00000000`): one
    fmax/fmin already gives the PTX result, except max(-0, +0) = +0, which adding +0.0 fixes."""
    lit = [_literal_value(op) for op in src_ops]
    k = 1 if lit[1] is not None else 0 if lit[0] is not None else -1
    if k < 0:
        return None
    c = lit[k]
    assert c is not None
    if math.isnan(c) or (c == 0 and not (is_max and math.copysign(1, c) > 0)):
        return None
    x, y = ctx.src(src_ops[1 - k], t), ctx.src(src_ops[k], t)
    d = ctx.dst(d_op, t)
    uf = np.fmax if is_max else np.fmin
    zero = DTYPES[t].type(0)
    fix_zero = c == 0

    def run(f: Any, m: Any) -> None:
        V = f.V
        w_ = True if m is None else m
        uf(V[x], V[y], out=V[d], where=w_)
        if fix_zero:
            np.add(V[d], zero, out=V[d], where=w_)  # -0.0 + 0.0 = +0.0; all else unchanged

    return Op(run, _FMT[t].cls)


# ------------------------------------------------------------------------------------------------
# Bit counting and bit fields: popc, clz, bfind, fns, brev, bfe, bfi, bmsk, szext
# ------------------------------------------------------------------------------------------------


def _bit_length32(x: Any) -> np.ndarray:
    """Number of significant bits of uint32 values (0 for 0): float64 holds them exactly, so the
    biased exponent is bit_length + 1022."""
    e = (np.asarray(x, dtype=np.float64).view(np.uint64) >> np.uint64(52)).astype(np.int32)
    return np.maximum(e - 1022, 0).astype(np.uint32)


def _bit_length(x: Any, w: int) -> np.ndarray:
    if w <= 32:
        return _bit_length32(x)
    x = np.asarray(x, dtype=np.uint64)
    hi = (x >> _S32).astype(np.uint32)
    return np.where(hi != 0, _bit_length32(hi) + np.uint32(32), _bit_length32((x & _M32).astype(np.uint32)))


@lowers("popc", "clz")
def lower_popc_clz(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("b32", "b64")))
    _check(ctx, flags, set())
    d_op, a_op = _operands(ins, ctx, 2)
    d, a = ctx.dst(d_op, "u32"), ctx.src(a_op, t)
    if ins.opcode == "popc":
        return Op(_computed(d, lambda V: np.bitwise_count(V[a])), "integer")
    w = _width(t)
    if w == 32:

        def clz32(V: list[Any]) -> Any:  # float64 exponent e = 1022 + bit length; x == 0 -> e = 0
            e = np.asarray(V[a], dtype=np.float64).view(np.uint64) >> np.uint64(52)
            np.subtract(np.uint64(1054), e, out=e)
            return np.minimum(e, np.uint64(32), out=e)

        return Op(_computed(d, clz32), "integer")
    return Op(_computed(d, lambda V: np.uint32(w) - _bit_length(V[a], w)), "integer")


@lowers("bfind")
def lower_bfind(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    _check(ctx, flags, {"shiftamt"})
    shiftamt = "shiftamt" in flags
    d_op, a_op = _operands(ins, ctx, 2)
    w = _width(t)
    d, a, au = ctx.dst(d_op, "u32"), ctx.src(a_op, t), ctx.src(a_op, _ut(t))
    signed = t[0] == "s"
    none = np.uint32(0xFFFFFFFF)

    def compute(V: list[Any]) -> Any:
        x = V[au]
        if signed:  # negative values: find the most significant 0
            x = x ^ _sign_mask(V[a], w)
        n = _bit_length(x, w)
        pos = (np.uint32(w) - n) if shiftamt else (n - np.uint32(1))
        return np.where(n == 0, none, pos)

    return Op(_computed(d, compute), "integer")


@lowers("fns")
def lower_fns(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    _one_type(ins, ctx, types, frozenset(("b32",)))
    _check(ctx, flags, set())
    d_op, mask_op, base_op, off_op = _operands(ins, ctx, 4)
    d, mk, base, off = (ctx.dst(d_op, "u32"), ctx.src(mask_op, "u32"), ctx.src(base_op, "u32"),
                        ctx.src(off_op, "s32"))
    pos = np.arange(32, dtype=np.int64)

    def compute(V: list[Any]) -> Any:
        mk_v, base_v, off_v = np.broadcast_arrays(np.asarray(V[mk], np.uint64),
                                                  np.asarray(V[base], np.int64) & 31,
                                                  np.asarray(V[off], np.int64))
        bits = ((mk_v[:, None] >> pos.astype(np.uint64)) & np.uint64(1)).astype(bool)  # (N, 32)
        b = base_v[:, None]
        o = off_v[:, None]
        up = bits & (pos >= b)  # offset > 0: count upwards from base
        down = bits & (pos <= b)  # offset < 0: count downwards from base
        cnt_up = np.cumsum(up, axis=1)
        cnt_down = np.cumsum(down[:, ::-1], axis=1)[:, ::-1]
        hit = np.where(o > 0, up & (cnt_up == o), np.where(o < 0, down & (cnt_down == -o), bits & (pos == b)))
        found = hit.any(axis=1)
        return np.where(found, hit.argmax(axis=1).astype(np.uint32), np.uint32(0xFFFFFFFF))

    return Op(_computed(d, compute), "integer")


_BREV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


@lowers("brev")
def lower_brev(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("b32", "b64")))
    _check(ctx, flags, set())
    d_op, a_op = _operands(ins, ctx, 2)
    d, a = ctx.dst(d_op, t), ctx.src(a_op, t)
    dt = DTYPES[t]

    def compute(V: list[Any]) -> Any:
        x = np.ascontiguousarray(V[a], dtype=dt)
        flipped = _BREV8[x.view(np.uint8)].view(dt)  # reverse bits within each byte
        return flipped.byteswap()  # then the byte order

    return Op(_computed(d, compute), "integer")


@lowers("bfe")
def lower_bfe(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    _check(ctx, flags, set())
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    w = _width(t)
    ut = _ut(t)
    udt = DTYPES[ut]
    d, a = ctx.dst(d_op, ut), ctx.src(a_op, ut)
    b, c = ctx.src(b_op, "u32"), ctx.src(c_op, "u32")
    signed = t[0] == "s"
    one = udt.type(1)

    def compute(V: list[Any]) -> Any:
        x = np.asarray(V[a])
        pos = np.asarray(V[b]) & np.uint32(0xFF)
        ln = np.asarray(V[c]) & np.uint32(0xFF)
        k = np.minimum(ln, np.uint32(w) - np.minimum(pos, np.uint32(w))).astype(udt)  # bits taken
        low = np.left_shift(one, k) - one  # k == w: the shift clamps to 0, then wraps to all ones
        r = np.right_shift(x, pos.astype(udt)) & low
        if signed:
            top = np.minimum(pos.astype(np.int64) + ln - 1, w - 1).astype(udt)
            sbit = ((x >> top) & one).astype(bool) & (ln != 0)
            r = np.where(sbit, r | ~low, r)
        return r

    return Op(_computed(d, compute), "integer")


@lowers("bfi")
def lower_bfi(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("b32", "b64")))
    _check(ctx, flags, set())
    f_op, a_op, b_op, c_op, d_op = _operands(ins, ctx, 5)
    w = _width(t)
    dt = DTYPES[t]
    out, a, b = ctx.dst(f_op, t), ctx.src(a_op, t), ctx.src(b_op, t)
    c, dd = ctx.src(c_op, "u32"), ctx.src(d_op, "u32")
    one = dt.type(1)

    def compute(V: list[Any]) -> Any:
        pos = np.asarray(V[c]) & np.uint32(0xFF)
        ln = np.asarray(V[dd]) & np.uint32(0xFF)
        k = np.minimum(ln, np.uint32(w) - np.minimum(pos, np.uint32(w))).astype(dt)
        p = pos.astype(dt)
        field = np.left_shift(np.left_shift(one, k) - one, p)  # pos >= w: shifts clamp to 0
        return (np.asarray(V[b]) & ~field) | (np.left_shift(V[a], p) & field)

    return Op(_computed(out, compute), "integer")


@lowers("bmsk")
def lower_bmsk(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    _one_type(ins, ctx, types, frozenset(("b32",)))
    _check(ctx, flags, {"clamp", "wrap"})
    clamp = "clamp" in flags
    if clamp == ("wrap" in flags):
        raise ctx.fail("bmsk needs one of .clamp/.wrap")
    d_op, a_op, b_op = _operands(ins, ctx, 3)
    d, a, b = ctx.dst(d_op, "u32"), ctx.src(a_op, "u32"), ctx.src(b_op, "u32")
    ones, zero, f31 = np.uint32(0xFFFFFFFF), np.uint32(0), np.uint32(31)

    def compute(V: list[Any]) -> Any:
        x, y = np.asarray(V[a]), np.asarray(V[b])
        a1, b1 = x & f31, y & f31
        s = a1 + b1
        mask0 = np.left_shift(ones, a1)
        mask1 = np.left_shift(ones, s)
        overflow = s >= 32
        if clamp:
            mask0 = np.where(x >= 32, zero, mask0)
            overflow = overflow | (x >= 32) | (y >= 32)
        mask1 = np.where(overflow, zero, np.where(b1 == 0, ones, mask1))
        return mask0 & ~mask1

    return Op(_computed(d, compute), "integer")


@lowers("szext")
def lower_szext(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("u32", "s32")))
    _check(ctx, flags, {"clamp", "wrap"})
    clamp = "clamp" in flags
    if clamp == ("wrap" in flags):
        raise ctx.fail("szext needs one of .clamp/.wrap")
    d_op, a_op, b_op = _operands(ins, ctx, 3)
    d, a, b = ctx.dst(d_op, "u32"), ctx.src(a_op, "u32"), ctx.src(b_op, "u32")
    ones, zero, f31, one = np.uint32(0xFFFFFFFF), np.uint32(0), np.uint32(31), np.uint32(1)
    signed = t == "s32"

    def compute(V: list[Any]) -> Any:
        x, y = np.asarray(V[a]), np.asarray(V[b])
        b1 = y & f31
        too_large = (y >= 32) if clamp else np.zeros(y.shape, bool)
        mask = np.where(too_large, zero, np.left_shift(ones, b1))
        if signed:
            sbit = ((x >> ((b1 - one) & f31)) & one).astype(bool) & (b1 != 0) & ~too_large
        else:
            sbit = np.zeros(mask.shape, bool)
        return (x & ~mask) | np.where(sbit, mask, zero)

    return Op(_computed(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# prmt, lop3, dp4a, dp2a
# ------------------------------------------------------------------------------------------------

_PRMT_MODES: dict[str, Callable[[int, int], int]] = {  # (selector, output byte i) -> source byte
    "f4e": lambda s, i: (s + i) % 8,
    "b4e": lambda s, i: (s - i) % 8,
    "rc8": lambda s, i: s,
    "ecl": lambda s, i: max(i, s),
    "ecr": lambda s, i: min(i, s),
    "rc16": lambda s, i: 2 * (s & 1) + (i & 1),
}


def _prmt_table(mode: str | None, c: int) -> list[int]:
    """Per output byte: a 4-bit control (bit 3 = replicate the selected byte's sign)."""
    if mode is None:
        return [(c >> (4 * i)) & 0xF for i in range(4)]
    return [_PRMT_MODES[mode](c & 3, i) for i in range(4)]


@lowers("prmt")
def lower_prmt(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    _one_type(ins, ctx, types, frozenset(("b32",)))
    _check(ctx, flags, set(_PRMT_MODES))
    if len(flags) > 1:
        raise ctx.fail("prmt takes at most one mode")
    mode = flags[0] if flags else None
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    d, a, b = ctx.dst(d_op, "u32"), ctx.src(a_op, "u32"), ctx.src(b_op, "u32")

    def source(V: list[Any]) -> np.ndarray:  # (N, 8) bytes of {b, a}
        x, y = np.broadcast_arrays(np.atleast_1d(np.asarray(V[a], np.uint64)),
                                   np.atleast_1d(np.asarray(V[b], np.uint64)))
        return (x | (y << _S32)).view(np.uint8).reshape(-1, 8)

    def assemble(src8: np.ndarray, ctl: np.ndarray) -> np.ndarray:
        """ctl: (N, 4) or (4,) controls -> uint32 per lane."""
        idx = np.broadcast_to(ctl & 7, (src8.shape[0], 4))
        out = np.take_along_axis(src8, idx.astype(np.intp), axis=1)
        rep = np.broadcast_to((ctl & 8) != 0, out.shape)
        out = np.where(rep, ((out >> 7) * np.uint8(0xFF)).astype(np.uint8), out)
        return np.ascontiguousarray(out, dtype=np.uint8).view(np.uint32).reshape(-1)

    if isinstance(c_op, Imm):  # compile-time selector: four byte-column copies
        moves = [(i, k & 7, bool(k & 8)) for i, k in enumerate(_prmt_table(mode, c_op.value & 0xFFFF))]

        def compute_const(V: list[Any]) -> Any:
            x, y = V[a], V[b]
            n = np.size(x) if np.ndim(x) else np.size(y)
            xb = np.ascontiguousarray(np.broadcast_to(x, (n,)), dtype=np.uint32).view(np.uint8).reshape(n, 4)
            yb = np.ascontiguousarray(np.broadcast_to(y, (n,)), dtype=np.uint32).view(np.uint8).reshape(n, 4)
            out = np.empty((n, 4), dtype=np.uint8)
            for i, k, rep in moves:
                col = (xb if k < 4 else yb)[:, k & 3]
                if rep:  # replicate the byte's sign bit: 0x00 or 0xff
                    np.negative(col >> np.uint8(7), out=out[:, i])
                else:
                    out[:, i] = col
            return out.view(np.uint32).reshape(n)

        return Op(_computed(d, compute_const), "integer")
    c = ctx.src(c_op, "u32")
    tables = np.array([_prmt_table(mode, s) for s in range(4)], np.uint8) if mode else None
    nibbles = np.arange(0, 16, 4, dtype=np.uint32)

    def compute(V: list[Any]) -> Any:
        sel = np.atleast_1d(np.asarray(V[c]))
        if tables is not None:
            ctl = tables[sel & np.uint32(3)]
        else:
            ctl = ((sel[:, None] >> nibbles) & np.uint32(0xF)).astype(np.uint8)
        return assemble(source(V), ctl)

    return Op(_computed(d, compute), "integer")


# 2-input functions of (b, c) by 4-bit truth table (bit index = 2*b + c)
_LUT2: dict[int, Callable[[Any, Any], Any]] = {
    0x0: lambda b, c: np.zeros_like(np.asarray(b | c)),
    0xF: lambda b, c: ~np.zeros_like(np.asarray(b | c)),
    0xC: lambda b, c: np.asarray(b | (c & 0)), 0xA: lambda b, c: np.asarray(c | (b & 0)),
    0x3: lambda b, c: ~np.asarray(b | (c & 0)), 0x5: lambda b, c: ~np.asarray(c | (b & 0)),
    0x8: lambda b, c: b & c, 0xE: lambda b, c: b | c, 0x6: lambda b, c: b ^ c,
    0x9: lambda b, c: ~(b ^ c), 0x7: lambda b, c: ~(b & c), 0x1: lambda b, c: ~(b | c),
    0x4: lambda b, c: b & ~c, 0x2: lambda b, c: ~b & c, 0xD: lambda b, c: b | ~c,
    0xB: lambda b, c: ~b | c,
}


def lop3_function(lut: int) -> Callable[[Any, Any, Any], Any]:
    """F(a, b, c) for an immLut, as a few NumPy bit operations (Shannon expansion on a:
    F = F0(b,c) ^ (a & (F0 ^ F1)(b,c)) with F1/F0 the cofactors at a = 1/0)."""
    f1, f0 = (lut >> 4) & 0xF, lut & 0xF
    g0, g1, g = _LUT2[f0], _LUT2[f1], _LUT2[f0 ^ f1]
    if f0 == f1:  # a does not matter
        return lambda a, b, c: g0(b, c) | (a & 0)
    if f0 ^ f1 == 0xF:  # a flips the result: F = F0 ^ a (e.g. 0x96 = a ^ b ^ c)
        return lambda a, b, c: g0(b, c) ^ a
    if f0 == 0:
        return lambda a, b, c: a & g1(b, c)
    if f1 == 0:
        return lambda a, b, c: ~a & g0(b, c)
    if f1 == 0xF:
        return lambda a, b, c: a | g0(b, c)
    if f0 == 0xF:
        return lambda a, b, c: ~a | g1(b, c)
    return lambda a, b, c: g0(b, c) ^ (a & g(b, c))


@lowers("lop3")
def lower_lop3(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    _one_type(ins, ctx, types, frozenset(("b32",)))
    _check(ctx, flags, {"and", "or"})
    if len(flags) > 1:
        raise ctx.fail("lop3 takes at most one .BoolOp")
    boolop = flags[0] if flags else None
    ops = _operands(ins, ctx, 6 if boolop else 5)
    lut_op = ops[4]
    if not isinstance(lut_op, Imm) or not 0 <= lut_op.value <= 255:
        raise ctx.fail("lop3 immLut must be an integer constant 0..255")
    fn = lop3_function(lut_op.value)
    a, b, c = (ctx.src(o, "u32") for o in ops[1:4])
    if boolop is None:
        d = ctx.dst(ops[0], "u32")
        return Op(_computed(d, lambda V: fn(V[a], V[b], V[c])), "integer")
    pair = ops[0]
    if not isinstance(pair, Pair):
        raise ctx.fail("lop3.BoolOp needs a d|p destination")
    d = None if isinstance(pair.first, Sink) else ctx.dst(pair.first, "u32")
    p = ctx.dst(pair.second, "pred")
    q, qneg = _pred_src(ctx, ops[5])
    comb = np.logical_and if boolop == "and" else np.logical_or

    def run(f: Any, m: Any) -> None:
        V = f.V
        r = np.asarray(fn(V[a], V[b], V[c]))
        qv = V[q]
        t = comb(r != 0, ~qv if qneg else qv)
        if d is not None:
            write(V[d], r, m)
        write(V[p], t, m)

    return Op(run, "integer")


@lowers("dp4a", "dp2a")
def lower_dp(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    if len(types) != 2 or any(t not in ("u32", "s32") for t in types):
        raise ctx.unsupported()
    dp2 = ins.opcode == "dp2a"
    _check(ctx, flags, {"lo", "hi"} if dp2 else set())
    if dp2 and len(flags) != 1:
        raise ctx.fail("dp2a needs .lo or .hi")
    at, bt = types
    ct = "u32" if at == bt == "u32" else "s32"
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
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

    return Op(_computed(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# Logic and shifts: and, or, xor, not, cnot, shl, shr, shf
# ------------------------------------------------------------------------------------------------

_LOGIC = {"and": (np.bitwise_and, np.logical_and), "or": (np.bitwise_or, np.logical_or),
          "xor": (np.bitwise_xor, np.logical_xor)}


@lowers("and", "or", "xor", "not")
def lower_logic(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, INT_TYPES | {"pred"})
    _check(ctx, flags, set())
    unary = ins.opcode == "not"
    ops = _operands(ins, ctx, 2 if unary else 3)
    if t == "pred":
        d = ctx.dst(ops[0], "pred")
        srcs = [_pred_src(ctx, o) for o in ops[1:]]
        if unary:
            (a, an), = srcs
            if an:
                return Op(_computed(d, lambda V: V[a]), "integer")
            return Op(_unary(np.logical_not, d, a, np.dtype(np.bool_)), "integer")
        (a, an), (b, bn) = srcs
        luf = _LOGIC[ins.opcode][1]
        if not (an or bn):
            return Op(_binary(luf, d, a, b, np.dtype(np.bool_)), "integer")
        return Op(_computed(d, lambda V: luf(~V[a] if an else V[a], ~V[b] if bn else V[b])), "integer")
    ut = _ut(t)
    dt = DTYPES[ut]
    d = ctx.dst(ops[0], ut)
    srcs_u = [ctx.src(o, ut) for o in ops[1:]]
    if unary:
        return Op(_unary(np.invert, d, srcs_u[0], dt), "integer")
    return Op(_binary(_LOGIC[ins.opcode][0], d, srcs_u[0], srcs_u[1], dt), "integer")


@lowers("cnot")
def lower_cnot(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("b16", "b32", "b64")))
    _check(ctx, flags, set())
    d_op, a_op = _operands(ins, ctx, 2)
    d, a = ctx.dst(d_op, t), ctx.src(a_op, t)
    return Op(_computed(d, lambda V: np.equal(V[a], 0)), "integer")


@lowers("shl", "shr")
def lower_shift(ins: Any, ctx: Any) -> Op:
    """Shifts clamp: amounts >= the width give 0 (or the sign fill for shr.s)."""
    flags, types = _mods(ins, ctx)
    allowed = frozenset(("b16", "b32", "b64")) if ins.opcode == "shl" else INT_TYPES
    t = _one_type(ins, ctx, types, allowed)
    _check(ctx, flags, set())
    d_op, a_op, b_op = _operands(ins, ctx, 3)
    w = _width(t)
    vt = t if t[0] == "s" else _ut(t)
    dt = DTYPES[vt]
    d, a = ctx.dst(d_op, vt), ctx.src(a_op, vt)
    uf = np.left_shift if ins.opcode == "shl" else np.right_shift
    if isinstance(b_op, Imm):  # the common `shl.b64 %rd2, %rd1, 2`
        n = b_op.value & 0xFFFFFFFF
        amount = ctx.src(Imm(min(n, w)), vt)  # NumPy shifts clamp at the width as PTX does
        return Op(_binary(uf, d, a, amount, dt), "integer")
    b = ctx.src(b_op, "u32")
    if w == 16:  # a u32 amount would wrap when cast to 16 bits: clamp first
        cap = np.uint32(16)

        def run16(f: Any, m: Any) -> None:
            V = f.V
            uf(V[a], np.minimum(V[b], cap), out=V[d], dtype=dt, casting="unsafe",
               where=True if m is None else m)

        return Op(run16, "integer")
    # 32/64-bit: the u32 amount casts to the operand type; NumPy treats any amount outside
    # [0, width) (including ones that turn negative) as a full shift
    return Op(_binary(uf, d, a, b, dt), "integer")


@lowers("shf")
def lower_shf(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    _one_type(ins, ctx, types, frozenset(("b32",)))
    _check(ctx, flags, {"l", "r", "clamp", "wrap"})
    if ("l" in flags) == ("r" in flags) or ("clamp" in flags) == ("wrap" in flags):
        raise ctx.fail("shf needs one of .l/.r and one of .clamp/.wrap")
    left, clamp = "l" in flags, "clamp" in flags
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    d, a, b, c = (ctx.dst(d_op, "u32"), ctx.src(a_op, "u32"), ctx.src(b_op, "u32"),
                  ctx.src(c_op, "u32"))

    def compute(V: list[Any]) -> Any:
        n = np.asarray(V[c])
        n = np.minimum(n, np.uint32(32)) if clamp else n & np.uint32(31)
        both = np.asarray(V[a], np.uint64) | (np.asarray(V[b], np.uint64) << _S32)
        n64 = n.astype(np.uint64)
        return (both << n64) >> _S32 if left else both >> n64  # the store keeps the low 32 bits

    return Op(_computed(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# Comparison and selection: setp, set, selp, slct, testp
# ------------------------------------------------------------------------------------------------

_INT_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
            "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
            "hi": np.greater, "hs": np.greater_equal}
_UNSIGNED_CMP = frozenset(("lo", "ls", "hi", "hs"))
# float comparisons that are a single NumPy ufunc (ordered ones are false with a NaN; neu is true)
_FLOAT_DIRECT = {"eq": np.equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
                 "ge": np.greater_equal, "neu": np.not_equal}
# unordered ones are the negation of the opposite ordered comparison
_FLOAT_NEGATED = {"ltu": np.greater_equal, "leu": np.greater, "gtu": np.less_equal, "geu": np.less}
FLOAT_CMPS = frozenset(("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu",
                        "num", "nan"))
_BOOLOPS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}

Cmp = Callable[[Any, Any], Any]


def _float_cmp(op: str) -> Cmp:
    if op in _FLOAT_DIRECT:
        return _FLOAT_DIRECT[op]
    if op in _FLOAT_NEGATED:
        uf = _FLOAT_NEGATED[op]
        return lambda x, y: np.logical_not(uf(x, y))
    if op == "ne":
        return lambda x, y: np.less(x, y) | np.greater(x, y)
    if op == "equ":
        return lambda x, y: ~(np.less(x, y) | np.greater(x, y))
    if op == "num":
        return lambda x, y: np.equal(x, x) & np.equal(y, y)
    if op == "nan":
        return lambda x, y: np.not_equal(x, x) | np.not_equal(y, y)
    raise KeyError(op)


def _ftz_value(x: Any) -> Any:
    """Flush subnormal float32/float16 values to zero (the sign is irrelevant to comparisons)."""
    x = np.asarray(x)
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, x.dtype.type(0), x)


@dataclass
class _Compare:
    """A lowered comparison: `fn(V)` -> bool array (or (lo, hi) for packed halves)."""

    fn: Callable[[list[Any]], Any]
    cls: str
    packed: bool = False
    direct: tuple[np.ufunc, int, int] | None = None  # (ufunc, a, b) when one ufunc does it


def _compare(ctx: Any, cmp: str, t: str, a_op: Operand, b_op: Operand, ftz: bool) -> _Compare:
    if t in INT_TYPES:
        if cmp not in _INT_CMP:
            raise ctx.unsupported()
        if ftz:
            raise ctx.fail(".ftz applies to floating-point comparisons only")
        if t[0] == "b" and cmp not in ("eq", "ne"):  # bit types only compare for equality
            vt = _ut(t)
        else:
            vt = _ut(t) if cmp in _UNSIGNED_CMP else t
        a, b = ctx.src(a_op, vt), ctx.src(b_op, vt)
        uf = _INT_CMP[cmp]
        return _Compare(lambda V: uf(V[a], V[b]), "integer", direct=(uf, a, b))
    if t not in FLOAT_TYPES or cmp not in FLOAT_CMPS:
        raise ctx.unsupported()
    fmt = _FMT[_elem(t)]
    if ftz and fmt.name not in ("f32", "f16"):
        raise ctx.fail(f".ftz is not allowed with .{t}")
    fcmp = _float_cmp(cmp)
    if t in ("f32", "f64", "f16"):
        a, b = ctx.src(a_op, t), ctx.src(b_op, t)
        if ftz:
            return _Compare(lambda V: fcmp(_ftz_value(V[a]), _ftz_value(V[b])), fmt.cls)
        direct = (fcmp, a, b) if isinstance(fcmp, np.ufunc) else None
        return _Compare(lambda V: fcmp(V[a], V[b]), fmt.cls, direct=direct)
    a, b = ctx.src(a_op, "b16" if t == "bf16" else "b32"), ctx.src(b_op, "b16" if t == "bf16" else "b32")

    def values(x: Any) -> Any:
        v = fmt.to_float(x)
        return _ftz_value(v) if ftz else v

    if t == "bf16":
        return _Compare(lambda V: fcmp(values(V[a]), values(V[b])), fmt.cls)
    return _Compare(lambda V: (fcmp(values(_lo16(V[a])), values(_lo16(V[b]))),
                               fcmp(values(_hi16(V[a])), values(_hi16(V[b])))), fmt.cls, packed=True)


def _cmp_mods(ins: Any, ctx: Any, flags: list[str]) -> tuple[str, str | None, bool]:
    cmps = [f for f in flags if f in _INT_CMP or f in FLOAT_CMPS]
    bools = [f for f in flags if f in _BOOLOPS]
    rest = [f for f in flags if f not in cmps and f not in bools and f != "ftz"]
    if len(cmps) != 1 or len(bools) > 1 or rest:
        if rest:
            raise ctx.unsupported()
        raise ctx.fail(f"{ins.full_opcode}: expected one comparison and at most one boolean operator")
    return cmps[0], (bools[0] if bools else None), "ftz" in flags


@lowers("setp")
def lower_setp(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    cmp, boolop, ftz = _cmp_mods(ins, ctx, flags)
    t = _one_type(ins, ctx, types, INT_TYPES | FLOAT_TYPES)
    ops = _operands(ins, ctx, 4 if boolop else 3)
    dst = ops[0]
    first, second = (dst.first, dst.second) if isinstance(dst, Pair) else (dst, None)
    p = None if isinstance(first, Sink) else ctx.dst(first, "pred")
    q = None if second is None or isinstance(second, Sink) else ctx.dst(second, "pred")
    c = _compare(ctx, cmp, t, ops[1], ops[2], ftz)
    if c.packed and second is None:
        raise ctx.fail(f"setp.{t} needs two destinations p|q")
    if boolop is None and q is None and p is not None and c.direct is not None:
        uf, a, b = c.direct

        def run_direct(f: Any, m: Any) -> None:  # setp.lt.s32 %p, %r1, %r2 -> one ufunc
            V = f.V
            uf(V[a], V[b], out=V[p], where=True if m is None else m)

        return Op(run_direct, c.cls)
    cslot, cneg = _pred_src(ctx, ops[3]) if boolop else (-1, False)
    comb = _BOOLOPS[boolop] if boolop else None
    fn = c.fn
    packed = c.packed

    def run(f: Any, m: Any) -> None:
        V = f.V
        r = fn(V)
        tp: Any
        tq: Any
        tp, tq = r if packed else (r, None)
        if comb is not None:
            cv = V[cslot]
            if cneg:
                cv = ~cv
            rp = comb(tp, cv)
            rq = comb(tq if packed else np.logical_not(tp), cv)
        else:
            rp, rq = tp, (tq if packed else None)
        if p is not None:
            write(V[p], rp, m)
        if q is not None:
            write(V[q], rq if rq is not None else np.logical_not(tp), m)

    return Op(run, c.cls)


# set: the value written for "true" per destination type (per half for packed destinations)
_SET_TRUE = {"u32": 0xFFFFFFFF, "s32": 0xFFFFFFFF, "f32": 0x3F800000, "f16": 0x3C00, "bf16": 0x3F80}
_SET_TRUE_X2 = {"u32": 0xFFFF, "s32": 0xFFFF, "f16x2": 0x3C00, "bf16x2": 0x3F80}


@lowers("set")
def lower_set(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    cmp, boolop, ftz = _cmp_mods(ins, ctx, flags)
    if len(types) != 2:
        raise ctx.fail(f"{ins.full_opcode} needs .dtype.stype")
    dtype, stype = types
    ops = _operands(ins, ctx, 4 if boolop else 3)
    c = _compare(ctx, cmp, stype, ops[1], ops[2], ftz)
    table = _SET_TRUE_X2 if c.packed else _SET_TRUE
    if dtype not in table:
        raise ctx.unsupported()
    true = table[dtype]
    width = 16 if dtype in ("f16", "bf16") else 32
    d = ctx.dst(ops[0], f"b{width}")
    udt = _U[width]
    tv, zero = udt.type(true), udt.type(0)
    cslot, cneg = _pred_src(ctx, ops[3]) if boolop else (-1, False)
    comb = _BOOLOPS[boolop] if boolop else None
    fn = c.fn
    packed = c.packed

    def finish(r: Any, V: list[Any]) -> Any:
        if comb is not None:
            cv = V[cslot]
            r = comb(r, ~cv if cneg else cv)
        return np.where(r, tv, zero)

    def compute(V: list[Any]) -> Any:
        r = fn(V)
        if packed:
            return _pack16(finish(r[0], V).astype(np.uint16), finish(r[1], V).astype(np.uint16))
        return finish(r, V)

    cls = c.cls
    return Op(_computed(d, compute), cls)


@lowers("selp")
def lower_selp(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, INT_TYPES | FLOAT_TYPES)
    _check(ctx, flags, set())
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    bt = f"b{32 if t.endswith('x2') else _width(t)}"
    dt = DTYPES[bt]
    # float literals convert by value through a float slot; registers are read as raw bits
    a, b = (ctx.src(o, t if t in ("f32", "f64", "f16") and not isinstance(o, Reg) else bt)
            for o in (a_op, b_op))
    d = ctx.dst(d_op, bt)
    cslot, cneg = _pred_src(ctx, c_op)

    def run(f: Any, m: Any) -> None:
        # d = b ^ ((a ^ b) & -c): branch-free, ~5x faster than np.where for lane-varying c
        V = f.V
        cv = np.asarray(V[cslot])
        sel = np.negative(~cv if cneg else cv, dtype=dt, casting="unsafe")  # True -> all ones
        y = np.asarray(V[b]).view(dt)
        np.bitwise_and(sel, np.bitwise_xor(np.asarray(V[a]).view(dt), y), out=sel)
        np.bitwise_xor(sel, y, out=V[d], where=True if m is None else m)

    return Op(run, "integer")


@lowers("slct")
def lower_slct(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    if len(types) != 2 or types[1] not in ("s32", "f32") or types[0] not in INT_TYPES | {"f32", "f64"}:
        raise ctx.unsupported()
    dtype, ctype = types
    _check(ctx, flags, {"ftz"} if ctype == "f32" else set())
    ftz = "ftz" in flags
    d_op, a_op, b_op, c_op = _operands(ins, ctx, 4)
    bt = f"b{_width(dtype)}"
    if dtype in ("f32", "f64"):
        a, b = ctx.src(a_op, dtype), ctx.src(b_op, dtype)
    else:
        a, b = ctx.src(a_op, bt), ctx.src(b_op, bt)
    d, c = ctx.dst(d_op, bt), ctx.src(c_op, ctype)
    udt = DTYPES[bt]

    def compute(V: list[Any]) -> Any:
        cv = V[c]
        if ftz:
            cv = _ftz_value(cv)
        # c >= 0 selects a; -0.0 counts as zero and a NaN selects b. Blend: b ^ ((a ^ b) & -cond)
        y = np.asarray(V[b]).view(udt)
        sel = np.negative(np.greater_equal(cv, 0), dtype=udt)
        return ((np.asarray(V[a]).view(udt) ^ y) & sel) ^ y

    return Op(_computed(d, compute), "fp32" if ctype == "f32" else "integer")


@lowers("testp")
def lower_testp(ins: Any, ctx: Any) -> Op:
    flags, types = _mods(ins, ctx)
    t = _one_type(ins, ctx, types, frozenset(("f32", "f64")))
    tests = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"}
    _check(ctx, flags, tests)
    if len(flags) != 1:
        raise ctx.fail("testp needs one test")
    test = flags[0]
    d_op, a_op = _operands(ins, ctx, 2)
    d, a = ctx.dst(d_op, "pred"), ctx.src(a_op, t)
    tiny = np.finfo(DTYPES[t]).tiny

    def compute(V: list[Any]) -> Any:
        x = np.asarray(V[a])
        if test == "finite":
            return np.isfinite(x)
        if test == "infinite":
            return np.isinf(x)
        if test == "number":
            return ~np.isnan(x)
        if test == "notanumber":
            return np.isnan(x)
        mag = np.abs(x)
        if test == "normal":
            return np.isfinite(x) & (mag >= tiny)
        return (mag < tiny) & (mag > 0)

    return Op(_computed(d, compute), _FMT[t].cls)


# Integer lowerings by opcode, for families that share an opcode (the float family's `add`) to call.
INTEGER_LOWERINGS = {op: REGISTRY[op] for op in (
    "add", "sub", "addc", "subc", "mul", "mad", "madc", "mul24", "mad24", "sad", "div", "rem", "abs",
    "neg", "min", "max", "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "bmsk", "szext", "prmt",
    "lop3", "dp4a", "dp2a", "and", "or", "xor", "not", "cnot", "shl", "shr", "shf", "setp", "set",
    "selp", "slct", "testp")}

__all__ = ["FLOAT_CMPS", "INTEGER_LOWERINGS", "INT_TYPES", "lop3_function"]
