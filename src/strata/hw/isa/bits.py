# Source of truth for what PTX's bit and logic instructions compute per lane: and/or/xor/not (integer
# and .pred), cnot, shl/shr/shf, popc/clz/bfind/fns/brev, the bit fields bfe/bfi/bmsk/szext, and the
# byte permute prmt and three-input logic lop3 (with .BoolOp).
"""Bit-manipulation and logic instructions of the virtual GPU.

Lowerings follow integer.py's pattern (see intbase.py): operands resolve to frame slots once, and the
returned closure writes every lane of a chunk at once; results are bit-exact. Shift and bit-field
amounts clamp as the PTX ISA specifies.

Example:
    >>> import numpy as np
    >>> hex(int(lop3_function(0x96)(np.uint32(0xF0), np.uint32(0xCC), np.uint32(0xAA))))  # a ^ b ^ c
    '0x96'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa.intbase import (
    INT_TYPES,
    MASK32,
    SHIFT32,
    binary_run,
    check_flags,
    computed_run,
    int_mods,
    one_type,
    operands,
    pred_src,
    sign_mask,
    type_width,
    unary_run,
    utype,
)
from strata.hw.isa.registry import DTYPES, Op, lowers, write
from strata.hw.ptx.ir import Imm, Pair, Sink

# ------------------------------------------------------------------------------------------------
# Logic and shifts: and, or, xor, not, cnot, shl, shr, shf
# ------------------------------------------------------------------------------------------------

_LOGIC = {"and": (np.bitwise_and, np.logical_and), "or": (np.bitwise_or, np.logical_or),
          "xor": (np.bitwise_xor, np.logical_xor)}


@lowers("and", "or", "xor", "not")
def lower_logic(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, INT_TYPES | {"pred"})
    check_flags(ctx, flags, set())
    unary = ins.opcode == "not"
    ops = operands(ins, ctx, 2 if unary else 3)
    if t == "pred":
        d = ctx.dst(ops[0], "pred")
        srcs = [pred_src(ctx, o) for o in ops[1:]]
        if unary:
            (a, an), = srcs
            if an:
                return Op(computed_run(d, lambda V: V[a]), "integer")
            return Op(unary_run(np.logical_not, d, a, np.dtype(np.bool_)), "integer")
        (a, an), (b, bn) = srcs
        luf = _LOGIC[ins.opcode][1]
        if not (an or bn):
            return Op(binary_run(luf, d, a, b, np.dtype(np.bool_)), "integer")
        return Op(computed_run(d, lambda V: luf(~V[a] if an else V[a], ~V[b] if bn else V[b])), "integer")
    ut = utype(t)
    dt = DTYPES[ut]
    d = ctx.dst(ops[0], ut)
    srcs_u = [ctx.src(o, ut) for o in ops[1:]]
    if unary:
        return Op(unary_run(np.invert, d, srcs_u[0], dt), "integer")
    return Op(binary_run(_LOGIC[ins.opcode][0], d, srcs_u[0], srcs_u[1], dt), "integer")


@lowers("cnot")
def lower_cnot(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("b16", "b32", "b64")))
    check_flags(ctx, flags, set())
    d_op, a_op = operands(ins, ctx, 2)
    d, a = ctx.dst(d_op, t), ctx.src(a_op, t)
    return Op(computed_run(d, lambda V: np.equal(V[a], 0)), "integer")


@lowers("shl", "shr")
def lower_shift(ins: Any, ctx: Any) -> Op:
    """Shifts clamp: amounts >= the width give 0 (or the sign fill for shr.s)."""
    flags, types = int_mods(ins, ctx)
    allowed = frozenset(("b16", "b32", "b64")) if ins.opcode == "shl" else INT_TYPES
    t = one_type(ins, ctx, types, allowed)
    check_flags(ctx, flags, set())
    d_op, a_op, b_op = operands(ins, ctx, 3)
    w = type_width(t)
    vt = t if t[0] == "s" else utype(t)
    dt = DTYPES[vt]
    d, a = ctx.dst(d_op, vt), ctx.src(a_op, vt)
    uf = np.left_shift if ins.opcode == "shl" else np.right_shift
    if isinstance(b_op, Imm):  # the common `shl.b64 %rd2, %rd1, 2`
        n = b_op.value & 0xFFFFFFFF
        amount = ctx.src(Imm(min(n, w)), vt)  # NumPy shifts clamp at the width as PTX does
        return Op(binary_run(uf, d, a, amount, dt), "integer")
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
    return Op(binary_run(uf, d, a, b, dt), "integer")


@lowers("shf")
def lower_shf(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    one_type(ins, ctx, types, frozenset(("b32",)))
    check_flags(ctx, flags, {"l", "r", "clamp", "wrap"})
    if ("l" in flags) == ("r" in flags) or ("clamp" in flags) == ("wrap" in flags):
        raise ctx.fail("shf needs one of .l/.r and one of .clamp/.wrap")
    left, clamp = "l" in flags, "clamp" in flags
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    d, a, b, c = (ctx.dst(d_op, "u32"), ctx.src(a_op, "u32"), ctx.src(b_op, "u32"),
                  ctx.src(c_op, "u32"))

    def compute(V: list[Any]) -> Any:
        n = np.asarray(V[c])
        n = np.minimum(n, np.uint32(32)) if clamp else n & np.uint32(31)
        both = np.asarray(V[a], np.uint64) | (np.asarray(V[b], np.uint64) << SHIFT32)
        n64 = n.astype(np.uint64)
        return (both << n64) >> SHIFT32 if left else both >> n64  # the store keeps the low 32 bits

    return Op(computed_run(d, compute), "integer")


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
    hi = (x >> SHIFT32).astype(np.uint32)
    return np.where(hi != 0, _bit_length32(hi) + np.uint32(32), _bit_length32((x & MASK32).astype(np.uint32)))


@lowers("popc", "clz")
def lower_popc_clz(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("b32", "b64")))
    check_flags(ctx, flags, set())
    d_op, a_op = operands(ins, ctx, 2)
    d, a = ctx.dst(d_op, "u32"), ctx.src(a_op, t)
    if ins.opcode == "popc":
        return Op(computed_run(d, lambda V: np.bitwise_count(V[a])), "integer")
    w = type_width(t)
    if w == 32:

        def clz32(V: list[Any]) -> Any:  # float64 exponent e = 1022 + bit length; x == 0 -> e = 0
            e = np.atleast_1d(np.asarray(V[a], dtype=np.float64)).view(np.uint64) >> np.uint64(52)
            np.subtract(np.uint64(1054), e, out=e)
            return np.minimum(e, np.uint64(32), out=e)

        return Op(computed_run(d, clz32), "integer")
    return Op(computed_run(d, lambda V: np.uint32(w) - _bit_length(V[a], w)), "integer")


@lowers("bfind")
def lower_bfind(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    check_flags(ctx, flags, {"shiftamt"})
    shiftamt = "shiftamt" in flags
    d_op, a_op = operands(ins, ctx, 2)
    w = type_width(t)
    d, a, au = ctx.dst(d_op, "u32"), ctx.src(a_op, t), ctx.src(a_op, utype(t))
    signed = t[0] == "s"
    none = np.uint32(0xFFFFFFFF)

    def compute(V: list[Any]) -> Any:
        x = V[au]
        if signed:  # negative values: find the most significant 0
            x = x ^ sign_mask(V[a], w)
        n = _bit_length(x, w)
        pos = (np.uint32(w) - n) if shiftamt else (n - np.uint32(1))
        return np.where(n == 0, none, pos)

    return Op(computed_run(d, compute), "integer")


@lowers("fns")
def lower_fns(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    one_type(ins, ctx, types, frozenset(("b32",)))
    check_flags(ctx, flags, set())
    d_op, mask_op, base_op, off_op = operands(ins, ctx, 4)
    d, mk, base, off = (ctx.dst(d_op, "u32"), ctx.src(mask_op, "u32"), ctx.src(base_op, "u32"),
                        ctx.src(off_op, "s32"))
    pos = np.arange(32, dtype=np.int64)

    def compute(V: list[Any]) -> Any:
        mk_v, base_v, off_v = np.broadcast_arrays(np.atleast_1d(np.asarray(V[mk], np.uint64)),
                                                  np.atleast_1d(np.asarray(V[base], np.int64) & 31),
                                                  np.atleast_1d(np.asarray(V[off], np.int64)))
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

    return Op(computed_run(d, compute), "integer")


_BREV8 = np.array([int(f"{i:08b}"[::-1], 2) for i in range(256)], dtype=np.uint8)


@lowers("brev")
def lower_brev(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("b32", "b64")))
    check_flags(ctx, flags, set())
    d_op, a_op = operands(ins, ctx, 2)
    d, a = ctx.dst(d_op, t), ctx.src(a_op, t)
    dt = DTYPES[t]

    def compute(V: list[Any]) -> Any:
        x = np.ascontiguousarray(V[a], dtype=dt)
        flipped = _BREV8[x.view(np.uint8)].view(dt)  # reverse bits within each byte
        return flipped.byteswap()  # then the byte order

    return Op(computed_run(d, compute), "integer")


@lowers("bfe")
def lower_bfe(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("u32", "s32", "u64", "s64")))
    check_flags(ctx, flags, set())
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    w = type_width(t)
    ut = utype(t)
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

    return Op(computed_run(d, compute), "integer")


@lowers("bfi")
def lower_bfi(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("b32", "b64")))
    check_flags(ctx, flags, set())
    f_op, a_op, b_op, c_op, d_op = operands(ins, ctx, 5)
    w = type_width(t)
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

    return Op(computed_run(out, compute), "integer")


@lowers("bmsk")
def lower_bmsk(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    one_type(ins, ctx, types, frozenset(("b32",)))
    check_flags(ctx, flags, {"clamp", "wrap"})
    clamp = "clamp" in flags
    if clamp == ("wrap" in flags):
        raise ctx.fail("bmsk needs one of .clamp/.wrap")
    d_op, a_op, b_op = operands(ins, ctx, 3)
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

    return Op(computed_run(d, compute), "integer")


@lowers("szext")
def lower_szext(ins: Any, ctx: Any) -> Op:
    flags, types = int_mods(ins, ctx)
    t = one_type(ins, ctx, types, frozenset(("u32", "s32")))
    check_flags(ctx, flags, {"clamp", "wrap"})
    clamp = "clamp" in flags
    if clamp == ("wrap" in flags):
        raise ctx.fail("szext needs one of .clamp/.wrap")
    d_op, a_op, b_op = operands(ins, ctx, 3)
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

    return Op(computed_run(d, compute), "integer")


# ------------------------------------------------------------------------------------------------
# prmt, lop3
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
    flags, types = int_mods(ins, ctx)
    one_type(ins, ctx, types, frozenset(("b32",)))
    check_flags(ctx, flags, set(_PRMT_MODES))
    if len(flags) > 1:
        raise ctx.fail("prmt takes at most one mode")
    mode = flags[0] if flags else None
    d_op, a_op, b_op, c_op = operands(ins, ctx, 4)
    d, a, b = ctx.dst(d_op, "u32"), ctx.src(a_op, "u32"), ctx.src(b_op, "u32")

    def source(V: list[Any]) -> np.ndarray:  # (N, 8) bytes of {b, a}
        x, y = np.broadcast_arrays(np.atleast_1d(np.asarray(V[a], np.uint64)),
                                   np.atleast_1d(np.asarray(V[b], np.uint64)))
        return (x | (y << SHIFT32)).view(np.uint8).reshape(-1, 8)

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

        return Op(computed_run(d, compute_const), "integer")
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

    return Op(computed_run(d, compute), "integer")


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
    flags, types = int_mods(ins, ctx)
    one_type(ins, ctx, types, frozenset(("b32",)))
    check_flags(ctx, flags, {"and", "or"})
    if len(flags) > 1:
        raise ctx.fail("lop3 takes at most one .BoolOp")
    boolop = flags[0] if flags else None
    ops = operands(ins, ctx, 6 if boolop else 5)
    lut_op = ops[4]
    if not isinstance(lut_op, Imm) or not 0 <= lut_op.value <= 255:
        raise ctx.fail("lop3 immLut must be an integer constant 0..255")
    fn = lop3_function(lut_op.value)
    a, b, c = (ctx.src(o, "u32") for o in ops[1:4])
    if boolop is None:
        d = ctx.dst(ops[0], "u32")
        return Op(computed_run(d, lambda V: fn(V[a], V[b], V[c])), "integer")
    pair = ops[0]
    if not isinstance(pair, Pair):
        raise ctx.fail("lop3.BoolOp needs a d|p destination")
    d = None if isinstance(pair.first, Sink) else ctx.dst(pair.first, "u32")
    p = ctx.dst(pair.second, "pred")
    q, qneg = pred_src(ctx, ops[5])
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


__all__ = ["lop3_function"]
