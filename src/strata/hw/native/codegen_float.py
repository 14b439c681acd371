"""Native `rcp`, `sqrt`, `rsqrt`, `div.approx/.full` and `copysign`: the reference's functions
(hw/isa/floating.py), bit for bit.

The reference computes these with IEEE operations the host's LLVM code performs identically:

- `.rn` rcp/sqrt on f32 and f64: one correctly rounded division or square root (f32: .ftz flush of the
  operand and the result, canonical NaN; f64: the host's NaN);
- `.approx` rcp/div/rsqrt on f32 (and div.full): the f64 quotient or 1/sqrt(x) of the f64-extended
  operands, rounded once to f32; `div.approx` gives a * (+-0) when 2^126 < |b| < inf, as the hardware's
  a * (1/b) does; `sqrt.approx.f32` is the correctly rounded square root;
- the PTX ISA 1.0-1.3 spellings without a rounding or .approx modifier mean `.approx.ftz` on f32;
- `rcp.approx.ftz.f64` / `rsqrt.approx.ftz.f64` work on the operand's upper 32 bits (subnormal in and out
  flush to zero, the result's low 32 bits are zero, NaN gives 0x7fffffff00000000);
- `rsqrt.approx.f64`: 1/sqrt(x) in f64;
- `copysign d, a, b`: b's magnitude with a's sign (bits: NaN payloads kept).

16-bit float add/sub/mul/fma and the f32 -> f16/bf16 narrowing `cvt` go to codegen_half.py.

Directed rounding (`.rz/.rm/.rp`) of f32 add, sub, mul and fma: `directed32` (called by codegen.py's
`_farith`/`_ffma`). Directed rounding elsewhere (div, rcp, sqrt, f64) raises NativeUnsupported: that
instruction runs on the reference.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.isa import approx
from strata.hw.native import codegen_half
from strata.hw.ptx.ir import Instruction

I32, I64 = ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
OPCODES = frozenset({"rcp", "sqrt", "rsqrt", "copysign", "div", "add", "sub", "mul", "fma", "cvt", "setp", "abs",
                     "neg", "min", "max", "ex2", "lg2"})
_HI = 0xFFFFFFFF00000000
# only their 16-bit float forms come here (codegen_half.handles)
_HALF_OPS = ("add", "sub", "mul", "fma", "cvt", "setp", "abs", "neg", "min", "max")


def handles(ins: Instruction) -> bool:
    """Whether this module emits the instruction (div: only its .approx/.full and legacy f32 forms)."""
    if ins.opcode not in OPCODES:
        return False
    if ins.opcode in _HALF_OPS:
        return codegen_half.handles(ins)
    if ins.opcode in ("ex2", "lg2"):  # the f32 forms (the 16-bit ones run on the reference)
        return [m for m in ins.mods if m in ("f16", "bf16", "f16x2", "bf16x2", "f32", "f64")] == ["f32"]
    if ins.opcode != "div":
        return True
    types = [m for m in ins.mods if m in ("f32", "f64")]
    return bool(types) and not {"rn", "rz", "rm", "rp"}.intersection(ins.mods)


def emit(g: Any, ins: Instruction) -> None:
    """The instruction for the current lane (codegen's _instruction contract: g.i, g.cur_guard)."""
    from strata.hw.native.codegen import _flags, _types  # (codegen imports this module)

    if ins.opcode in _HALF_OPS:
        codegen_half.emit(g, ins)
        return
    types = _types(ins)
    if len(types) != 1 or types[0] not in ("f32", "f64"):
        raise g.fail()
    t = types[0]
    fl = set(_flags(ins))
    rnd = fl & {"rn", "rz", "rm", "rp"}
    if rnd - {"rn"}:
        raise g.fail("(directed rounding runs on the reference)")
    op = ins.opcode
    if op in ("ex2", "lg2"):
        _ex2_lg2(g, ins, fl)
        return
    nsrc = 2 if op in ("div", "copysign") else 1
    if len(ins.operands) != 1 + nsrc:
        raise g.fail("operands")
    if op == "copysign":
        if fl:
            raise g.fail()
        _copysign(g, ins, t)
        return
    allowed = {"ftz", "approx", "rn"} | ({"full"} if op == "div" else set())
    if fl - allowed:
        raise g.fail()
    approx = bool(fl & {"approx", "full"})
    ftz = "ftz" in fl
    if approx and rnd:
        raise g.fail()
    if op == "rsqrt" and rnd:
        raise g.fail()
    if t == "f64":
        if op in ("rcp", "rsqrt") and ftz:
            if not approx:
                raise g.fail()
            _hi32(g, ins, op == "rsqrt")
            return
        if ftz or (approx and op != "rsqrt"):  # (the reference rejects these)
            raise g.fail()
    elif op == "rsqrt":
        ftz = ftz or not approx  # rsqrt.f32 without .approx: the legacy .approx.ftz
    elif not approx and not rnd:  # PTX ISA 1.0-1.3: div/rcp/sqrt.f32 mean .approx.ftz
        approx, ftz = True, True
    bld = g.bld
    div_approx = op == "div" and approx and "full" not in fl

    def compute(i: ir.Value) -> tuple[ir.Value, str]:
        if t == "f64":
            x = g.read(ins.operands[1], t, i)
            if op == "div":
                return bld.fdiv(x, g.read(ins.operands[2], t, i)), t
            if op == "rcp":
                return bld.fdiv(ir.Constant(F64, 1.0), x), t
            if op == "sqrt":
                return bld.call(g.intrinsic("llvm.sqrt.f64", F64, [F64]), [x]), t
            return bld.fdiv(ir.Constant(F64, 1.0), bld.call(g.intrinsic("llvm.sqrt.f64", F64, [F64]), [x])), t
        srcs = [g.read(o, t, i) for o in ins.operands[1:]]
        if ftz:
            srcs = [g.flush32(v) for v in srcs]
        num, den = (srcs[0], srcs[1]) if op == "div" else (ir.Constant(F32, 1.0), srcs[0])
        if op == "sqrt":
            r = bld.call(g.intrinsic("llvm.sqrt.f32", F32, [F32]), [den])
        elif op == "rsqrt":
            s = bld.call(g.intrinsic("llvm.sqrt.f64", F64, [F64]), [bld.fpext(den, F64)])
            r = bld.fptrunc(bld.fdiv(ir.Constant(F64, 1.0), s), F32)
        elif approx:
            r = bld.fptrunc(bld.fdiv(bld.fpext(num, F64), bld.fpext(den, F64)), F32)
            if div_approx:  # a * (1/b): 1/b flushes to zero for 2^126 < |b| < inf
                mag = bld.and_(bld.bitcast(den, I32), ir.Constant(I32, 0x7FFFFFFF))
                big = bld.and_(bld.icmp_unsigned(">", mag, ir.Constant(I32, 0x7E800000)),
                               bld.icmp_unsigned("<", mag, ir.Constant(I32, 0x7F800000)))
                zero = bld.bitcast(bld.and_(bld.bitcast(den, I32), ir.Constant(I32, 0x80000000)), F32)
                r = bld.select(big, bld.fmul(num, zero), r)
        else:
            r = bld.fdiv(num, den)
        return g.post32(r, ftz, False), t
    g._simple(ins, compute)


def _copysign(g: Any, ins: Instruction, t: str) -> None:
    bld = g.bld
    bt = "b32" if t == "f32" else "b64"
    ity = I32 if t == "f32" else I64
    w = ity.width
    sign = 1 << (w - 1)

    def compute(i: ir.Value) -> tuple[ir.Value, str]:
        a = bld.bitcast(g.read(ins.operands[1], t, i), ity)
        b = bld.bitcast(g.read(ins.operands[2], t, i), ity)
        return bld.or_(bld.and_(b, ir.Constant(ity, sign - 1)), bld.and_(a, ir.Constant(ity, sign))), bt
    g._simple(ins, compute)


def _hi32(g: Any, ins: Instruction, rsqrt: bool) -> None:
    """rcp/rsqrt.approx.ftz.f64 on the operand's upper 32 bits (see the module docstring)."""
    bld = g.bld
    hi = ir.Constant(I64, _HI)
    sign = ir.Constant(I64, 1 << 63)
    tiny = ir.Constant(I64, 0x0010000000000000)  # 2^-1022: below it (in magnitude) is subnormal

    def flush(v: ir.Value) -> ir.Value:  # +-subnormal -> +-0 (NaN and the rest unchanged)
        bits = bld.bitcast(v, I64)
        sub = bld.icmp_unsigned("<", bld.and_(bits, ir.Constant(I64, (1 << 63) - 1)), tiny)
        return bld.select(sub, bld.bitcast(bld.and_(bits, sign), F64), v)

    def compute(i: ir.Value) -> tuple[ir.Value, str]:
        x = bld.bitcast(g.read(ins.operands[1], "f64", i), I64)
        tmp = flush(bld.bitcast(bld.and_(x, hi), F64))
        if rsqrt:
            r = bld.fdiv(ir.Constant(F64, 1.0), bld.call(g.intrinsic("llvm.sqrt.f64", F64, [F64]), [tmp]))
            is_zero = bld.fcmp_ordered("==", tmp, ir.Constant(F64, 0.0))
            inf = bld.or_(bld.and_(bld.bitcast(tmp, I64), sign), ir.Constant(I64, 0x7FF0000000000000))
            r = bld.select(is_zero, bld.bitcast(inf, F64), r)
        else:
            r = bld.fdiv(ir.Constant(F64, 1.0), tmp)
        r = flush(r)
        rb = bld.and_(bld.bitcast(r, I64), hi)
        nan = bld.fcmp_unordered("uno", r, r)
        return bld.bitcast(bld.select(nan, ir.Constant(I64, 0x7FFFFFFF00000000), rb), F64), "f64"
    g._simple(ins, compute)


def directed32(g: Any, p: ir.Value, c: ir.Value | None, rnd: str) -> ir.Value:
    """The f32 nearest to p + c in direction `rnd` ('rz', 'rm', 'rp'), for f64 operands whose exact sum the
    reference rounds once (f32 add/sub: the operands; mul: the exact f64 product, no `c`; fma: the exact
    product and the addend). IEEE's directed rounding is unique, so this gives the reference's bits.

    How: s + e = p + c exactly (TwoSum in f64); r = s rounded to nearest f32; the sign of (s - r) + e (s - r
    is exact: r is within a factor of 2 of s, or zero) says on which side of r the exact value lies, and r
    steps one ulp toward the rounding direction when the value lies beyond it. A finite value that rounds to
    an infinity to nearest gives +-FLT_MAX when the direction points back toward zero. An exact zero sum of
    two operands is -0 under .rm unless both are +0 (IEEE's sign of a zero sum), +0 otherwise.
    """
    bld = g.bld
    zero64 = ir.Constant(F64, 0.0)
    if c is None:
        s, e = p, zero64
    else:
        s = bld.fadd(p, c)  # TwoSum (Knuth): no fast-math flags, so LLVM keeps every step
        bb = bld.fsub(s, p)
        e = bld.fadd(bld.fsub(p, bld.fsub(s, bb)), bld.fsub(c, bb))
    r = bld.fptrunc(s, F32)
    rbits = bld.bitcast(r, I32)
    R = bld.fpext(r, F64)
    d = bld.fadd(bld.fsub(s, R), e)
    above = bld.fcmp_ordered(">", d, zero64)  # the exact value lies above r (false for NaN d)
    below = bld.fcmp_ordered("<", d, zero64)
    r_neg = bld.icmp_signed("<", rbits, ir.Constant(I32, 0))
    r_pos = bld.fcmp_ordered(">", r, ir.Constant(F32, 0.0))
    if rnd == "rp":
        up, down = above, ir.Constant(ir.IntType(1), 0)
    elif rnd == "rm":
        up, down = ir.Constant(ir.IntType(1), 0), below
    else:  # rz: toward zero
        up, down = bld.and_(above, r_neg), bld.and_(below, r_pos)
    mag = bld.and_(rbits, ir.Constant(I32, 0x7FFFFFFF))
    is_zero = bld.icmp_unsigned("==", mag, ir.Constant(I32, 0))
    one = ir.Constant(I32, 1)
    # one ulp up (toward +inf) or down, on the bits: a zero steps to the smallest subnormal of that side
    next_up = bld.select(is_zero, one, bld.select(r_neg, bld.sub(rbits, one), bld.add(rbits, one)))
    next_down = bld.select(is_zero, ir.Constant(I32, 0x80000001),
                           bld.select(r_neg, bld.add(rbits, one), bld.sub(rbits, one)))
    out = bld.select(up, next_up, bld.select(down, next_down, rbits))
    # a finite sum that rounds to +-inf to nearest: the directions toward zero stop at +-FLT_MAX
    s_finite = bld.fcmp_ordered("<", bld.call(g.intrinsic("llvm.fabs.f64", F64, [F64]), [s]),
                                ir.Constant(F64, float("inf")))
    r_inf = bld.icmp_unsigned("==", mag, ir.Constant(I32, 0x7F800000))
    back = {"rz": ir.Constant(ir.IntType(1), 1), "rm": bld.not_(r_neg), "rp": r_neg}[rnd]
    fmax = bld.or_(bld.and_(rbits, ir.Constant(I32, 0x80000000)), ir.Constant(I32, 0x7F7FFFFF))
    out = bld.select(bld.and_(bld.and_(s_finite, r_inf), back), fmax, out)
    if c is not None and rnd == "rm":
        exact_zero = bld.and_(bld.fcmp_ordered("==", s, zero64), bld.fcmp_ordered("==", e, zero64))
        both_plus_zero = bld.icmp_unsigned("==", bld.or_(bld.bitcast(p, I64), bld.bitcast(c, I64)),
                                           ir.Constant(I64, 0))
        out = bld.select(bld.and_(exact_zero, bld.not_(both_plus_zero)), ir.Constant(I32, 0x80000000), out)
    return bld.bitcast(out, F32)


def _ex2_lg2(g: Any, ins: Instruction, fl: set[str]) -> None:
    """ex2/lg2.approx{.ftz}.f32: the reference's float64 sequence (hw/isa/approx.py), step for step, then one
    rounding to f32 (no .approx: the PTX ISA 1.0-1.3 .approx.ftz)."""
    if fl - {"approx", "ftz"} or len(ins.operands) != 2:
        raise g.fail()
    ftz = "ftz" in fl or "approx" not in fl
    bld = g.bld
    series = _exp2 if ins.opcode == "ex2" else _log2

    def compute(i: ir.Value) -> tuple[ir.Value, str]:
        x = g.read(ins.operands[1], "f32", i)
        if ftz:
            x = g.flush32(x)
        r = bld.fptrunc(series(g, bld.fpext(x, F64)), F32)
        return g.post32(r, ftz, False), "f32"
    g._simple(ins, compute)


def _horner(bld: Any, coeffs: tuple[float, ...], t: ir.Value) -> ir.Value:
    """((c[-1] t + c[-2]) t + ...) t + c[0], as approx.py's loops."""
    p: ir.Value = ir.Constant(F64, coeffs[-1])
    for c in coeffs[-2::-1]:
        p = bld.fadd(bld.fmul(p, t), ir.Constant(F64, c))
    return p


def _exp2(g: Any, x: ir.Value) -> ir.Value:
    bld = g.bld
    nan = bld.fcmp_unordered("uno", x, x)
    xz = bld.select(nan, ir.Constant(F64, 0.0), x)
    lo, hi = ir.Constant(F64, -approx.EXP2_LIMIT), ir.Constant(F64, approx.EXP2_LIMIT)
    xc = bld.select(bld.fcmp_ordered("<", xz, lo), lo, xz)
    xc = bld.select(bld.fcmp_ordered(">", xc, hi), hi, xc)
    k = bld.call(g.intrinsic("llvm.rint.f64", F64, [F64]), [xc])
    t = bld.fmul(bld.fsub(xc, k), ir.Constant(F64, approx.LN2))
    p = _horner(bld, approx.EXP_COEFFS, t)
    # 2^k for |k| <= 200 built from its exponent field: p * 2^k is exact, as np.ldexp's
    scale = bld.bitcast(bld.shl(bld.add(bld.fptosi(k, I64), ir.Constant(I64, 1023)), ir.Constant(I64, 52)), F64)
    return bld.select(nan, x, bld.fmul(p, scale))


def _log2(g: Any, x: ir.Value) -> ir.Value:
    bld = g.bld
    zero = ir.Constant(F64, 0.0)
    inf = ir.Constant(F64, float("inf"))
    special = bld.or_(bld.fcmp_unordered("<=", x, zero), bld.fcmp_ordered("==", x, inf))  # not (x > 0), or +inf
    bits = bld.bitcast(bld.select(special, ir.Constant(F64, 1.0), x), I64)
    # frexp of a positive normal f64 (every f32 is one): m in [1/2, 1) and its exponent e
    e = bld.sub(bld.and_(bld.lshr(bits, ir.Constant(I64, 52)), ir.Constant(I64, 0x7FF)), ir.Constant(I64, 1022))
    m = bld.bitcast(bld.or_(bld.and_(bits, ir.Constant(I64, 0x800FFFFFFFFFFFFF)), ir.Constant(I64, 1022 << 52)), F64)
    low = bld.fcmp_ordered("<", m, ir.Constant(F64, approx.SQRT_HALF))
    m = bld.select(low, bld.fadd(m, m), m)
    ef = bld.fsub(bld.sitofp(e, F64), bld.select(low, ir.Constant(F64, 1.0), zero))
    one = ir.Constant(F64, 1.0)
    s = bld.fdiv(bld.fsub(m, one), bld.fadd(m, one))
    q = _horner(bld, approx.ATANH_COEFFS, bld.fmul(s, s))
    out = bld.fadd(ef, bld.fmul(bld.fmul(bld.fadd(s, s), q), ir.Constant(F64, approx.INV_LN2)))
    edge = bld.select(bld.fcmp_ordered("==", x, zero), ir.Constant(F64, float("-inf")),
                      bld.select(bld.fcmp_ordered(">", x, zero), x, ir.Constant(F64, float("nan"))))
    return bld.select(special, edge, out)
