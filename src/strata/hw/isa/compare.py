# Source of truth for what PTX's comparison and selection instructions compute per lane: setp, set,
# selp, slct and testp on integer and float types, plus the float forms of min/max/abs/neg (.ftz, .NaN,
# .xorsign.abs, -0 < +0, canonical NaN) on f16/bf16 (packed too), f32 and f64.
"""Comparison, selection and float min/max/abs/neg instructions of the virtual GPU.

Float values are compared as NumPy floats (bf16 widened exactly to f32); min/max/abs/neg work on the
raw bits so NaN payloads and signed zeros come out exactly as on the GPU. integer.py's abs/neg/min/max
lowerings hand float types to :func:`float_sign_op` and :func:`float_min_max`.

Example:
    >>> sorted(FLOAT_CMPS - {"eq", "ne", "lt", "le", "gt", "ge"})
    ['equ', 'geu', 'gtu', 'leu', 'ltu', 'nan', 'neu', 'num']
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata.hw.isa.intbase import (
    FLOAT_TYPES,
    INT_TYPES,
    UNSIGNED,
    check_flags,
    computed_run,
    hi16,
    int_mods,
    lo16,
    one_type,
    operands,
    pack16,
    pred_src,
    type_width,
    utype,
)
from strata.hw.isa.registry import DTYPES, Op, lowers, write
from strata.hw.ptx.ir import FImm, Operand, Pair, Reg, Sink

# ------------------------------------------------------------------------------------------------
# Float formats
# ------------------------------------------------------------------------------------------------


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
            vt = utype(t)
        else:
            vt = utype(t) if cmp in _UNSIGNED_CMP else t
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
    return _Compare(lambda V: (fcmp(values(lo16(V[a])), values(lo16(V[b]))),
                               fcmp(values(hi16(V[a])), values(hi16(V[b])))), fmt.cls, packed=True)


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
    flags, types = int_mods(ins, ctx)
    cmp, boolop, ftz = _cmp_mods(ins, ctx, flags)
    t = one_type(ins, ctx, types, INT_TYPES | FLOAT_TYPES)
    ops = operands(ins, ctx, 4 if boolop else 3)
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
    cslot, cneg = pred_src(ctx, ops[3]) if boolop else (-1, False)
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
    flags, types = int_mods(ins, ctx)
    cmp, boolop, ftz = _cmp_mods(ins, ctx, flags)
    if len(types) != 2:
        raise ctx.fail(f"{ins.full_opcode} needs .dtype.stype")
    dtype, stype = types
    ops = operands(ins, ctx, 4 if boolop else 3)
    c = _compare(ctx, cmp, stype, ops[1], ops[2], ftz)
    table = _SET_TRUE_X2 if c.packed else _SET_TRUE
    if dtype not in table:
        raise ctx.unsupported()
    true = table[dtype]
    width = 16 if dtype in ("f16", "bf16") else 32
    d = ctx.dst(ops[0], f"b{width}")
    udt = UNSIGNED[width]
    tv, zero = udt.type(true), udt.type(0)
    cslot, cneg = pred_src(ctx, ops[3]) if boolop else (-1, False)
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
            return pack16(finish(r[0], V).astype(np.uint16), finish(r[1], V).astype(np.uint16))
        return finish(r, V)

    cls = c.cls
    return Op(computed_run(d, compute), cls)


@lowers("selp")
def lower_selp(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, INT_TYPES | FLOAT_TYPES)
    check_flags(ctx, flags, set())
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    bt = f"b{32 if t.endswith('x2') else type_width(t)}"
    dt = DTYPES[bt]
    # float literals convert by value through a float slot; registers are read as raw bits
    a, b = (ctx.src(o, t if t in ("f32", "f64", "f16") and not isinstance(o, Reg) else bt)
            for o in (a_op, b_op))
    d = ctx.dst(d_op, bt)
    cslot, cneg = pred_src(ctx, c_op)

    def run(f: Any, m: Any) -> None:
        # d = b ^ ((a ^ b) & -c): branch-free, ~5x faster than np.where for lane-varying c
        V = f.V
        cv = np.atleast_1d(V[cslot])  # an array even for a scalar (immediate) predicate: `out=` below
        sel = np.negative(~cv if cneg else cv, dtype=dt, casting="unsafe")  # True -> all ones
        y = np.asarray(V[b]).view(dt)
        np.bitwise_and(sel, np.bitwise_xor(np.asarray(V[a]).view(dt), y), out=sel)
        np.bitwise_xor(sel, y, out=V[d], where=True if m is None else m)

    return Op(run, "integer")


@lowers("slct")
def lower_slct(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    if len(types) != 2 or types[1] not in ("s32", "f32") or types[0] not in INT_TYPES | {"f32", "f64"}:
        raise ctx.unsupported()
    dtype, ctype = types
    check_flags(ctx, flags, {"ftz"} if ctype == "f32" else set())
    ftz = "ftz" in flags
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    bt = f"b{type_width(dtype)}"
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

    return Op(computed_run(d, compute), "fp32" if ctype == "f32" else "integer")


@lowers("testp")
def lower_testp(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("f32", "f64")))
    tests = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"}
    check_flags(ctx, flags, tests)
    if len(flags) != 1:
        raise ctx.fail("testp needs one test")
    test = flags[0]
    d_op, a_op = operands(ins, ctx, 2)
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

    return Op(computed_run(d, compute), _FMT[t].cls)


# ------------------------------------------------------------------------------------------------
# abs, neg, min, max on floating-point types (integer.py's lowerings call these for float types)
# ------------------------------------------------------------------------------------------------


def float_sign_op(ins: Any, ctx: Any, flags: list[str], t: str, d_op: Operand, a_op: Operand) -> Op:
    """abs/neg on floats: clear or flip the sign bit (NaN payloads kept); .ftz flushes first."""
    fmt = _FMT[_elem(t)]
    check_flags(ctx, flags, {"ftz"} if fmt.name in ("f32", "f16") else set())
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

    return Op(computed_run(d, compute), fmt.cls)


def float_min_max(ins: Any, ctx: Any, flags: list[str], t: str) -> Op:
    """min/max on floats: a NaN operand loses to a number; both NaN (or any NaN with .NaN) gives the
    canonical NaN; -0.0 < +0.0. `.xorsign.abs` compares magnitudes and sets the sign to the XOR of
    the operands' signs (not for a NaN result). Three operands (PTX 8.8) fold pairwise.
    """
    fmt = _FMT[_elem(t)]
    allowed = {"NaN", "xorsign", "abs"}
    if fmt.name in ("f32", "f16"):
        allowed.add("ftz")
    check_flags(ctx, flags, allowed)
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
        r = np.atleast_1d(fmt.from_float(rf))  # written in place below, also for scalar operands
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

    return Op(computed_run(d, compute), fmt.cls)


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
    lo = fn(*(lo16(x) for x in xs))
    hi = fn(*(hi16(x) for x in xs))
    return pack16(lo, hi)


__all__ = ["FLOAT_CMPS", "float_min_max", "float_sign_op"]
