"""Native bit instructions: `popc`, `clz`, `brev` (.b32 .b64), `bfind` (.u32 .s32 .u64 .s64, .shiftamt),
`bfe` (.u32 .s32 .u64 .s64), `shf` (.l/.r, .clamp/.wrap), `lop3.b32` (without a .BoolOp) and `prmt.b32`
(every mode), `sad` and `add/sub.sat.s32`, with the
reference's semantics (hw/isa/bits.py), bit for bit.

LLVM's shifts by the type's width or more are poison, where NumPy's give 0; every shift amount that can
reach the width is clamped here first, to the value NumPy's shift produces.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.ptx.ir import Imm, Instruction

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
OPCODES = frozenset({"popc", "clz", "brev", "bfind", "bfe", "shf", "lop3", "prmt", "sad"})
_TYPES = {"popc": ("b32", "b64"), "clz": ("b32", "b64"), "brev": ("b32", "b64"), "bfind": ("u32", "s32", "u64", "s64"),
          "bfe": ("u32", "s32", "u64", "s64"), "shf": ("b32",), "lop3": ("b32",), "prmt": ("b32",),
          "sad": ("u16", "s16", "u32", "s32", "u64", "s64"), "add": ("s32",), "sub": ("s32",)}
_FLAGS = {"bfind": {"shiftamt"}, "shf": {"l", "r", "clamp", "wrap"},
          "prmt": {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}, "add": {"sat"}, "sub": {"sat"}}
_NOPS = {"popc": 2, "clz": 2, "brev": 2, "bfind": 2, "bfe": 4, "shf": 4, "lop3": 5, "prmt": 4, "sad": 4, "add": 3,
         "sub": 3}


def handles(ins: Instruction) -> bool:
    """Whether this module emits the instruction (add/sub only in their saturating s32 form)."""
    if ins.opcode in ("add", "sub"):
        return "sat" in ins.mods and "s32" in ins.mods
    return ins.opcode in OPCODES


def emit(g: Any, ins: Instruction) -> None:
    """The instruction for the current lane (codegen's _instruction contract)."""
    from strata.hw.native.codegen import _flags, _types  # (codegen imports this module)

    op = ins.opcode
    types, fl = _types(ins), set(_flags(ins))
    if len(types) != 1 or types[0] not in _TYPES[op] or fl - _FLAGS.get(op, set()) or len(ins.operands) != _NOPS[op]:
        raise g.fail()
    t = types[0]
    w = int(t[1:])
    ity = ir.IntType(w)
    bld = g.bld
    srcs = list(ins.operands[1:])

    def c(v: int, ty: ir.Type = ity) -> ir.Constant:
        return ir.Constant(ty, v & ((1 << ty.width) - 1))

    def to32(v: ir.Value) -> ir.Value:
        return bld.trunc(v, I32) if w > 32 else v

    def compute(i: ir.Value) -> tuple[ir.Value, str]:
        if op in ("popc", "clz", "brev"):
            x = g.read(srcs[0], t, i)
            if op == "brev":
                return bld.call(g.intrinsic(f"llvm.bitreverse.i{w}", ity, [ity]), [x]), t
            if op == "popc":
                return to32(bld.call(g.intrinsic(f"llvm.ctpop.i{w}", ity, [ity]), [x])), "u32"
            return to32(bld.call(g.intrinsic(f"llvm.ctlz.i{w}", ity, [ity, I1]), [x, ir.Constant(I1, 0)])), "u32"
        if op == "bfind":
            x = g.read(srcs[0], "u" + t[1:], i)
            if t[0] == "s":  # negative values: the most significant 0
                x = bld.xor(x, bld.ashr(x, c(w - 1)))
            lz = bld.call(g.intrinsic(f"llvm.ctlz.i{w}", ity, [ity, I1]), [x, ir.Constant(I1, 0)])
            n = bld.sub(c(w), lz)  # bit length
            pos = bld.sub(c(w), n) if "shiftamt" in fl else bld.sub(n, c(1))
            return to32(bld.select(bld.icmp_unsigned("==", n, c(0)), c(-1), pos)), "u32"
        if op == "bfe":
            return _bfe(g, t, w, ity, srcs, i), "u" + t[1:]
        if op == "shf":
            return _shf(g, fl, srcs, i), "u32"
        if op == "prmt":
            return _prmt(g, fl, srcs, i), "u32"
        if op in ("add", "sub"):  # .sat.s32: the exact sum clamped to the s32 range
            if fl != {"sat"}:
                raise g.fail()
            name = f"llvm.{'s' + op}.sat.i32"
            return bld.call(g.intrinsic(name, I32, [I32, I32]), [g.read(s_, "s32", i) for s_ in srcs]), "s32"
        if op == "sad":  # c + |a - b|, modulo 2^w (|a - b| fits the unsigned width)
            ut = "u" + t[1:]
            a, b = g.read(srcs[0], t, i), g.read(srcs[1], t, i)
            less = (bld.icmp_signed if t[0] == "s" else bld.icmp_unsigned)("<", a, b)
            diff = bld.select(less, bld.sub(b, a), bld.sub(a, b))
            return bld.add(diff, g.read(srcs[2], ut, i)), ut
        return _lop3(g, srcs, i), "u32"
    g._simple(ins, compute)


def _bfe(g: Any, t: str, w: int, ity: ir.Type, srcs: list[Any], i: ir.Value) -> ir.Value:
    bld = g.bld
    x = g.read(srcs[0], "u" + t[1:], i)
    pos = bld.and_(g.read(srcs[1], "u32", i), ir.Constant(I32, 0xFF))
    ln = bld.and_(g.read(srcs[2], "u32", i), ir.Constant(I32, 0xFF))
    umin = g.intrinsic("llvm.umin.i32", I32, [I32, I32])
    wc = ir.Constant(I32, w)
    k = bld.call(umin, [ln, bld.sub(wc, bld.call(umin, [pos, wc]))])  # bits taken, 0..w

    def widen(v: ir.Value) -> ir.Value:
        return bld.zext(v, ity) if w > 32 else v
    zero, one = ir.Constant(ity, 0), ir.Constant(ity, 1)
    full = bld.icmp_unsigned(">=", k, wc)
    low = bld.select(full, ir.Constant(ity, (1 << w) - 1),
                     bld.sub(bld.shl(one, widen(bld.select(full, ir.Constant(I32, 0), k))), one))
    big = bld.icmp_unsigned(">=", pos, wc)
    r = bld.select(big, zero, bld.lshr(x, widen(bld.select(big, ir.Constant(I32, 0), pos))))
    r = bld.and_(r, low)
    if t[0] == "s":
        top = bld.call(umin, [bld.sub(bld.add(pos, ln), ir.Constant(I32, 1)), ir.Constant(I32, w - 1)])
        sbit = bld.trunc(bld.lshr(x, widen(top)), ir.IntType(1))
        sbit = bld.and_(sbit, bld.icmp_unsigned("!=", ln, ir.Constant(I32, 0)))
        r = bld.select(sbit, bld.or_(r, bld.not_(low)), r)
    return r


def _shf(g: Any, fl: set[str], srcs: list[Any], i: ir.Value) -> ir.Value:
    if ("l" in fl) == ("r" in fl) or ("clamp" in fl) == ("wrap" in fl):
        raise g.fail()
    bld = g.bld
    a, b, n = (g.read(s, "u32", i) for s in srcs)
    if "clamp" in fl:
        n = bld.call(g.intrinsic("llvm.umin.i32", I32, [I32, I32]), [n, ir.Constant(I32, 32)])
    else:
        n = bld.and_(n, ir.Constant(I32, 31))
    both = bld.or_(bld.zext(a, I64), bld.shl(bld.zext(b, I64), ir.Constant(I64, 32)))
    n64 = bld.zext(n, I64)
    if "l" in fl:
        return bld.trunc(bld.lshr(bld.shl(both, n64), ir.Constant(I64, 32)), I32)
    return bld.trunc(bld.lshr(both, n64), I32)


def _prmt(g: Any, fl: set[str], srcs: list[Any], i: ir.Value) -> ir.Value:
    """prmt.b32{.mode} d, a, b, c: each result byte a byte of {b, a} (bytes 0-3 of a, 4-7 of b), or its sign
    replicated (control bit 3); the controls are c's nibbles, or the mode's table for c & 3 (bits.py)."""
    from strata.hw.isa.bits import _prmt_table  # the reference's own controls

    if len(fl) > 1:
        raise g.fail()
    mode = next(iter(fl), None)
    bld = g.bld
    a, b = (g.read(s_, "u32", i) for s_ in srcs[:2])
    both = bld.or_(bld.zext(a, I64), bld.shl(bld.zext(b, I64), ir.Constant(I64, 32)))

    def assemble(ctls: list[int]) -> ir.Value:
        out = ir.Constant(I32, 0)
        for k, ctl in enumerate(ctls):
            byte = bld.and_(bld.trunc(bld.lshr(both, ir.Constant(I64, 8 * (ctl & 7))), I32), ir.Constant(I32, 0xFF))
            if ctl & 8:  # the byte's sign bit, replicated: 0x00 or 0xff
                byte = bld.mul(bld.lshr(byte, ir.Constant(I32, 7)), ir.Constant(I32, 0xFF))
            out = bld.or_(out, bld.shl(byte, ir.Constant(I32, 8 * k)))
        return out

    c = srcs[2]
    if isinstance(c, Imm):
        return assemble(_prmt_table(mode, c.value & 0xFFFF))
    sel = g.read(c, "u32", i)
    if mode is not None:  # four possible tables, by c & 3
        which = bld.and_(sel, ir.Constant(I32, 3))
        r = assemble(_prmt_table(mode, 0))
        for v in (1, 2, 3):
            r = bld.select(bld.icmp_unsigned("==", which, ir.Constant(I32, v)), assemble(_prmt_table(mode, v)), r)
        return r
    out = ir.Constant(I32, 0)
    for k in range(4):  # control nibble k picks byte (ctl & 7), sign-replicated when ctl & 8
        ctl = bld.and_(bld.lshr(sel, ir.Constant(I32, 4 * k)), ir.Constant(I32, 0xF))
        shift = bld.zext(bld.mul(bld.and_(ctl, ir.Constant(I32, 7)), ir.Constant(I32, 8)), I64)
        byte = bld.and_(bld.trunc(bld.lshr(both, shift), I32), ir.Constant(I32, 0xFF))
        rep = bld.icmp_unsigned("!=", bld.and_(ctl, ir.Constant(I32, 8)), ir.Constant(I32, 0))
        byte = bld.select(rep, bld.mul(bld.lshr(byte, ir.Constant(I32, 7)), ir.Constant(I32, 0xFF)), byte)
        out = bld.or_(out, bld.shl(byte, ir.Constant(I32, 8 * k)))
    return out


def _lop3(g: Any, srcs: list[Any], i: ir.Value) -> ir.Value:
    """Bit j of the result: bit (4 a_j + 2 b_j + c_j) of the table (PTX: immLut = F(0xF0, 0xCC, 0xAA))."""
    lut = srcs[3]
    if not isinstance(lut, Imm) or not 0 <= lut.value <= 255:
        raise g.fail("immLut")
    bld = g.bld
    a, b, c = (g.read(s, "u32", i) for s in srcs[:3])
    na, nb, nc = bld.not_(a), bld.not_(b), bld.not_(c)
    r = ir.Constant(I32, 0)
    for m in range(8):
        if lut.value >> m & 1:
            term = bld.and_(bld.and_(a if m & 4 else na, b if m & 2 else nb), c if m & 1 else nc)
            r = bld.or_(r, term)
    return r


def combine(bld: ir.IRBuilder, op: str, acc: ir.Value, v: ir.Value, signed: bool) -> ir.Value:
    """acc op v for the integer reductions atomics and redux share: add (wrapping), and, or, xor, min, max (v
    replaces acc only when strictly smaller / larger)."""
    if op == "add":
        return bld.add(acc, v)
    if op == "and":
        return bld.and_(acc, v)
    if op == "or":
        return bld.or_(acc, v)
    if op == "xor":
        return bld.xor(acc, v)
    cmp = bld.icmp_signed if signed else bld.icmp_unsigned
    return bld.select(cmp("<" if op == "min" else ">", v, acc), v, acc)
