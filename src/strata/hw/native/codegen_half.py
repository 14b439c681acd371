"""Native 16-bit float arithmetic and narrowing: `add/sub/mul/fma.{f16,f16x2}` (.rn .ftz .sat, fma .relu),
`add/sub/mul/fma.{bf16,bf16x2}` (.rn, fma .relu), `cvt.rn{.ftz}.{f16,bf16}.f32` and `cvt.rn.{f16x2,bf16x2}.f32`
(a to the high half, b to the low), and `setp`, `abs`, `neg`, `min` and `max` on all four types, with the
reference's functions (hw/isa/half.py, hw/isa/convert.py, hw/isa/compare.py), bit for bit.

Registers hold raw bits (one element in 16 bits, two packed in 32: element 0 in bits 15:0). As in the
reference: the operands widen exactly to f32, the f32 operation rounds once, and the f32 result rounds
to the 16-bit format with the reference's own bit algorithms (fpround.f32_to_f16: rebias and round the
13 dropped bits to nearest even, subnormal results through an f32 add of 0.5 whose ulp is the f16
subnormal quantum; f32_to_bf16: add 0x7fff plus the kept lsb), so no conversion goes through a host
library. Then the result rules: .ftz flushes subnormal inputs and results, .sat clamps to [+0, 1] (NaN and
negatives give +0), .relu (fma) clamps negatives to +0, and NaN results are the canonical 0x7fff. `fma.rn`
(both formats) and bf16 `mul` follow the reference's f64 path: the exact product, TwoSum with the addend
and round-to-odd, round-to-odd to f32, then the same narrowing. Other narrowing sources and modes run on
the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.ptx.ir import FImm, Instruction, Pair, Sink

I16, I32, I64 = ir.IntType(16), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
_EXP = {"f16": 0x7C00, "bf16": 0x7F80}
_ONE = {"f16": 0x3C00, "bf16": 0x3F80}
_ARITH = {"add", "sub", "mul", "fma"}


def handles(ins: Instruction) -> bool:
    """Whether the instruction is one this module emits (by opcode and types; modifiers are checked later)."""
    types = [m for m in ins.mods if m in ("f16", "f16x2", "bf16", "bf16x2", "f32")]
    if ins.opcode in _ARITH or ins.opcode in ("setp", "abs", "neg", "min", "max"):
        return len(types) == 1 and types[0] != "f32"
    return ins.opcode == "cvt" and types in (["f16", "f32"], ["bf16", "f32"], ["f16x2", "f32"], ["bf16x2", "f32"])


def emit(g: Any, ins: Instruction) -> None:
    from strata.hw.native.codegen import _flags  # (codegen imports this module)

    fl = set(_flags(ins)) - {"f16", "f16x2", "bf16", "bf16x2"}  # (codegen's WIDTH has no 16-bit floats)
    if ins.opcode == "setp":
        _setp(g, ins, fl)
        return
    if ins.opcode in ("abs", "neg", "min", "max"):
        _sign_min_max(g, ins, fl)
        return
    if ins.opcode == "cvt" and ("f16x2" in ins.mods or "bf16x2" in ins.mods):  # d = {a (high), b (low)}
        et = "f16" if "f16x2" in ins.mods else "bf16"
        if fl != {"rn"} or len(ins.operands) != 3:
            raise g.fail("(narrowing modes other than .rn run on the reference)")

        def pack(i: ir.Value) -> tuple[ir.Value, str]:
            hi, lo = (g.bld.zext(narrow(g, et, g.read(o, "f32", i)), I32) for o in ins.operands[1:])
            return g.bld.or_(g.bld.shl(hi, ir.Constant(I32, 16)), lo), "b32"
        g._simple(ins, pack)
        return
    if ins.opcode == "cvt":
        et = "f16" if "f16" in ins.mods else "bf16"
        if fl - {"rn", "ftz"} or "rn" not in fl or len(ins.operands) != 2:
            raise g.fail("(narrowing modes other than .rn run on the reference)")
        ftz = "ftz" in fl

        def conv(i: ir.Value) -> tuple[ir.Value, str]:
            x = g.read(ins.operands[1], "f32", i)
            if ftz:
                x = g.flush32(x)
            return narrow(g, et, x), "b16"
        g._simple(ins, conv)
        return
    t = next(m for m in ins.mods if m in ("f16", "f16x2", "bf16", "bf16x2"))
    et, packed = t.removesuffix("x2"), t.endswith("x2")
    op = ins.opcode
    allowed = ({"rn", "ftz", "sat"} if et == "f16" else {"rn"}) | ({"relu"} if op == "fma" else set())
    if fl - allowed or len(ins.operands) != (4 if op == "fma" else 3) or (op == "fma" and "rn" not in fl):
        raise g.fail()
    ftz, sat, relu = "ftz" in fl, "sat" in fl, "relu" in fl
    if sat and relu:
        raise g.fail()
    rt = "b32" if packed else "b16"
    bld = g.bld

    def compute(i: ir.Value) -> tuple[ir.Value, str]:
        xs = [_operand(g, o, et, rt, i) for o in ins.operands[1:]]
        if not packed:
            return _arith(g, et, op, [bld.trunc(x, I16) if x.type != I16 else x for x in xs], ftz, sat, relu), "b16"
        halves = []
        for shift in (0, 16):
            parts = [bld.trunc(bld.lshr(x, ir.Constant(I32, shift)), I16) for x in xs]
            halves.append(bld.zext(_arith(g, et, op, parts, ftz, sat, relu), I32))
        return bld.or_(halves[0], bld.shl(halves[1], ir.Constant(I32, 16))), "b32"
    g._simple(ins, compute)


def _setp(g: Any, ins: Instruction, fl: set[str]) -> None:
    """setp.cmp{.ftz}{.bool}.{f16,bf16,f16x2,bf16x2} p[|q], a, b{, c}: the values compared as f32 (exact),
    subnormals flushed with .ftz (f16); a packed pair gives p for the low halves, q for the high ones."""
    from strata.hw.native.codegen import _FCMP  # (codegen imports this module)

    t = next(m for m in ins.mods if m in ("f16", "f16x2", "bf16", "bf16x2"))
    et, packed = t.removesuffix("x2"), t.endswith("x2")
    cmps = [f for f in fl if f in _FCMP]
    bools = [f for f in fl if f in ("and", "or", "xor")]
    ftz = "ftz" in fl
    ops = ins.operands
    if len(cmps) != 1 or len(bools) > 1 or fl - {*cmps, *bools, "ftz"} or (ftz and et != "f16") or \
            len(ops) != (4 if bools else 3):
        raise g.fail()
    pred, ordered = _FCMP[cmps[0]]
    first, second = (ops[0].first, ops[0].second) if isinstance(ops[0], Pair) else (ops[0], None)
    if packed and second is None:
        raise g.fail("a packed comparison needs p|q")
    bld = g.bld
    rt = "b32" if packed else "b16"

    def compare(x: ir.Value, y: ir.Value) -> ir.Value:
        if ftz:
            x, y = _flush(g, et, x), _flush(g, et, y)
        a, b = widen(g, et, x), widen(g, et, y)
        return bld.fcmp_ordered(pred, a, b) if ordered else bld.fcmp_unordered(pred, a, b)

    def body(i: ir.Value) -> None:
        xs = [_operand(g, o, et, rt, i) for o in ops[1:3]]
        if packed:
            lo, hi = ([bld.trunc(bld.lshr(x, ir.Constant(I32, sh)), I16) for x in xs] for sh in (0, 16))
            tp, tq = compare(*lo), compare(*hi)
        else:
            tp = compare(*[bld.trunc(x, I16) if x.type != I16 else x for x in xs])
            tq = bld.not_(tp)
        if bools:
            c = g.read(ops[3], "pred", i)
            comb = {"and": bld.and_, "or": bld.or_, "xor": bld.xor}[bools[0]]
            tp, tq = comb(tp, c), comb(tq, c)
        if not isinstance(first, Sink):
            g.write(first, "pred", tp, i)
        if second is not None and not isinstance(second, Sink):
            g.write(second, "pred", tq, i)
    g.per_lane(body)


def _sign_min_max(g: Any, ins: Instruction, fl: set[str]) -> None:
    """abs/neg (the sign bit; NaN payloads kept) and min/max (a NaN loses to a number, two NaNs give the
    canonical NaN, -0 < +0) on 16-bit floats, .ftz (f16) flushing the operands first (compare.py)."""
    t = next(m for m in ins.mods if m in ("f16", "f16x2", "bf16", "bf16x2"))
    et, packed = t.removesuffix("x2"), t.endswith("x2")
    op = ins.opcode
    nsrc = 1 if op in ("abs", "neg") else 2
    if fl - ({"ftz"} if et == "f16" else set()) or len(ins.operands) != 1 + nsrc:
        raise g.fail()
    ftz = "ftz" in fl
    bld = g.bld
    rt = "b32" if packed else "b16"
    sign, mag = ir.Constant(I16, 0x8000), ir.Constant(I16, 0x7FFF)

    def elem(xs: list[ir.Value]) -> ir.Value:
        if ftz:
            xs = [_flush(g, et, x) for x in xs]
        if op == "abs":
            return bld.and_(xs[0], mag)
        if op == "neg":
            return bld.xor(xs[0], sign)
        a, b = xs
        fa, fb = widen(g, et, a), widen(g, et, b)
        na, nb = bld.fcmp_unordered("uno", fa, fa), bld.fcmp_unordered("uno", fb, fb)
        wins = bld.fcmp_ordered(">" if op == "max" else "<", fa, fb)
        eq = bld.fcmp_ordered("==", fa, fb)  # (+0 and -0: max ANDs the bits, min ORs them)
        r = bld.select(eq, bld.and_(a, b) if op == "max" else bld.or_(a, b), bld.select(wins, a, b))
        r = bld.select(na, b, bld.select(nb, a, r))
        return bld.select(bld.and_(na, nb), ir.Constant(I16, 0x7FFF), r)

    def compute(i: ir.Value) -> tuple[ir.Value, str]:
        xs = [_operand(g, o, et, rt, i) for o in ins.operands[1:]]
        if not packed:
            return elem([bld.trunc(x, I16) if x.type != I16 else x for x in xs]), "b16"
        lo, hi = (elem([bld.trunc(bld.lshr(x, ir.Constant(I32, sh)), I16) for x in xs]) for sh in (0, 16))
        return bld.or_(bld.zext(lo, I32), bld.shl(bld.zext(hi, I32), ir.Constant(I32, 16))), "b32"
    g._simple(ins, compute)


def _operand(g: Any, op: Any, et: str, rt: str, i: ir.Value) -> ir.Value:
    """An operand's raw bits; a float literal converts by value, to nearest (the reference's half_src)."""
    if isinstance(op, FImm):
        if rt == "b32":
            raise g.fail("a packed half operand cannot be a float literal")
        from strata.hw.isa import fpround as fr  # the reference's own rounding, once at compile time

        raw = np.array([op.bits], dtype=np.uint32 if op.width == 32 else np.uint64)
        v = raw.view(np.float32 if op.width == 32 else np.float64).astype(np.float64)
        with np.errstate(all="ignore"):
            return ir.Constant(I16, int(fr.narrow(v, et, "rn")[0]))
    return g.read(op, rt, i)


def _arith(g: Any, et: str, op: str, xs: list[ir.Value], ftz: bool, sat: bool, relu: bool = False) -> ir.Value:
    bld = g.bld
    if ftz:
        xs = [_flush(g, et, x) for x in xs]
    vals = [widen(g, et, x) for x in xs]
    if op == "fma" or (op == "mul" and et == "bf16"):
        # the reference: the exact f64 product, TwoSum with c and round-to-odd, then one rounding to the format
        # (round-to-odd f64 -> f32, then f32 -> 16 bits); bf16 mul in f64 too (its exponents exceed f32's)
        p = bld.fmul(bld.fpext(vals[0], F64), bld.fpext(vals[1], F64))
        if op == "fma":
            c = bld.fpext(vals[2], F64)
            s_ = bld.fadd(p, c)
            bb = bld.fsub(s_, p)
            e = bld.fadd(bld.fsub(p, bld.fsub(s_, bb)), bld.fsub(c, bb))
            p = _round_odd(g, s_, e)
        r = _ro_f32(g, p)
    else:
        r = {"add": bld.fadd, "sub": bld.fsub, "mul": bld.fmul}[op](vals[0], vals[1])
    return _post(g, et, narrow(g, et, r), ftz, sat, relu)


def _round_odd(g: Any, s: ir.Value, e: ir.Value) -> ir.Value:
    """fpround.round_odd: s = RN(s + e); an inexact result gets an odd last bit (its neighbour toward e)."""
    bld = g.bld
    zero = ir.Constant(F64, 0.0)
    bits = bld.bitcast(s, I64)
    need = bld.and_(bld.icmp_unsigned("==", bld.and_(bits, ir.Constant(I64, 1)), ir.Constant(I64, 0)),
                    bld.fcmp_ordered("one", e, zero))
    away = bld.icmp_unsigned("==", bld.fcmp_ordered(">", e, zero), bld.fcmp_ordered(">", s, zero))
    step = bld.select(need, bld.select(away, ir.Constant(I64, 1), ir.Constant(I64, -1)), ir.Constant(I64, 0))
    return bld.bitcast(bld.add(bits, step), F64)


def _ro_f32(g: Any, x: ir.Value) -> ir.Value:
    """fpround.ro_f32: f64 -> f32 rounding to odd (an overflow steps back to the largest finite)."""
    bld = g.bld
    r = bld.fptrunc(x, F32)
    back = bld.fpext(r, F64)
    rb = bld.bitcast(r, I32)
    fabs = g.intrinsic("llvm.fabs.f64", F64, [F64])
    need = bld.and_(bld.fcmp_ordered("one", back, x), bld.icmp_unsigned("==", bld.and_(rb, ir.Constant(I32, 1)),
                                                                         ir.Constant(I32, 0)))
    away = bld.fcmp_ordered(">", bld.call(fabs, [x]), bld.call(fabs, [back]))
    step = bld.select(need, bld.select(away, ir.Constant(I32, 1), ir.Constant(I32, -1)), ir.Constant(I32, 0))
    return bld.bitcast(bld.add(rb, step), F32)


def _flush(g: Any, et: str, h: ir.Value) -> ir.Value:
    """Subnormal (exponent field zero) -> zero of the same sign."""
    bld = g.bld
    sub = bld.icmp_unsigned("==", bld.and_(h, ir.Constant(I16, _EXP[et])), ir.Constant(I16, 0))
    return bld.select(sub, bld.and_(h, ir.Constant(I16, 0x8000)), h)


def widen(g: Any, et: str, h: ir.Value) -> ir.Value:
    """16-bit float bits -> the f32 value, exactly (integer operations)."""
    bld = g.bld
    w = bld.zext(h, I32)
    if et == "bf16":
        return bld.bitcast(bld.shl(w, ir.Constant(I32, 16)), F32)
    sign = bld.shl(bld.and_(w, ir.Constant(I32, 0x8000)), ir.Constant(I32, 16))
    e = bld.and_(bld.lshr(w, ir.Constant(I32, 10)), ir.Constant(I32, 0x1F))
    m = bld.and_(w, ir.Constant(I32, 0x3FF))
    normal = bld.or_(bld.shl(bld.add(e, ir.Constant(I32, 112)), ir.Constant(I32, 23)), bld.shl(m, ir.Constant(I32, 13)))
    special = bld.or_(ir.Constant(I32, 0x7F800000), bld.shl(m, ir.Constant(I32, 13)))
    tiny = bld.bitcast(bld.fmul(bld.uitofp(m, F32), ir.Constant(F32, 2.0 ** -24)), I32)  # exact: m < 2^10
    mag = bld.select(bld.icmp_unsigned("==", e, ir.Constant(I32, 0)), tiny,
                     bld.select(bld.icmp_unsigned("==", e, ir.Constant(I32, 31)), special, normal))
    return bld.bitcast(bld.or_(mag, sign), F32)


def narrow(g: Any, et: str, x: ir.Value) -> ir.Value:
    """f32 -> 16-bit float bits, to nearest even; NaN -> 0x7fff (fpround.f32_to_f16 / f32_to_bf16)."""
    bld = g.bld
    u = bld.bitcast(x, I32)
    a = bld.and_(u, ir.Constant(I32, 0x7FFFFFFF))
    nan = bld.icmp_unsigned(">", a, ir.Constant(I32, 0x7F800000))
    if et == "bf16":
        lsb = bld.and_(bld.lshr(u, ir.Constant(I32, 16)), ir.Constant(I32, 1))
        o = bld.lshr(bld.add(bld.add(u, ir.Constant(I32, 0x7FFF)), lsb), ir.Constant(I32, 16))
    else:
        sign = bld.and_(bld.lshr(u, ir.Constant(I32, 16)), ir.Constant(I32, 0x8000))
        odd = bld.and_(bld.lshr(a, ir.Constant(I32, 13)), ir.Constant(I32, 1))
        o = bld.lshr(bld.add(bld.add(a, ir.Constant(I32, 0xC8000FFF)), odd), ir.Constant(I32, 13))
        half = bld.bitcast(bld.fadd(bld.bitcast(a, F32), ir.Constant(F32, 0.5)), I32)
        o = bld.select(bld.icmp_unsigned("<", a, ir.Constant(I32, 113 << 23)),
                       bld.sub(half, ir.Constant(I32, 0x3F000000)), o)
        o = bld.select(bld.icmp_unsigned(">=", a, ir.Constant(I32, 0x47800000)), ir.Constant(I32, 0x7C00), o)
        o = bld.or_(o, sign)
    return bld.trunc(bld.select(nan, ir.Constant(I32, 0x7FFF), o), I16)


def _post(g: Any, et: str, r: ir.Value, ftz: bool, sat: bool, relu: bool = False) -> ir.Value:
    """.ftz flush, .sat clamp to [+0, 1] (NaN, negatives -> +0), .relu (negatives -> +0, NaN kept),
    canonical NaN (half._post)."""
    bld = g.bld
    if ftz:
        r = _flush(g, et, r)
    exp = ir.Constant(I16, _EXP[et])
    nan = bld.icmp_unsigned(">", bld.and_(r, ir.Constant(I16, 0x7FFF)), exp)
    if sat:
        neg = bld.icmp_unsigned("!=", bld.and_(r, ir.Constant(I16, 0x8000)), ir.Constant(I16, 0))
        big = bld.icmp_unsigned(">", r, ir.Constant(I16, _ONE[et]))  # (positive: no sign bit)
        r = bld.select(bld.or_(neg, nan), ir.Constant(I16, 0), bld.select(big, ir.Constant(I16, _ONE[et]), r))
        nan = bld.icmp_unsigned(">", bld.and_(r, ir.Constant(I16, 0x7FFF)), exp)
    elif relu:
        neg = bld.icmp_unsigned("!=", bld.and_(r, ir.Constant(I16, 0x8000)), ir.Constant(I16, 0))
        r = bld.select(bld.and_(neg, bld.not_(nan)), ir.Constant(I16, 0), r)
    return bld.select(nan, ir.Constant(I16, 0x7FFF), r)
