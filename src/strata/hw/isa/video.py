# Source of truth for the semantics of PTX's video instructions on the virtual GPU (PTX ISA 9.7.18):
# the scalar vadd/vsub/vabsdiff/vmin/vmax/vshl/vshr/vmad/vset with byte/half-word selectors,
# saturation, a secondary operation or a sub-word merge, and the SIMD vop2/vop4/vset2/vset4 families
# with lane selectors, masks and the accumulate form NVRTC emits for __vsadu4 (vabsdiff4...add).
"""Video instructions: integer byte/half-word arithmetic in 32-bit registers (PTX ISA 9.7.18).

Scalar (`vop.dtype.atype.btype{.sat}{.op2} d{.dsel}, a{.asel}, b{.bsel}{, c}`): each source is a
byte (`.b0`-`.b3`), half-word (`.h0`/`.h1`) or the word, sign- or zero-extended by its type; the
primary operation runs exactly (33-bit inputs); `.sat` clamps to the destination type, narrowed to the
merge size when `d` has a selector; then either a secondary `.add/.min/.max` with `c` (read by dtype's
sign) or a merge of the low byte/half-word into `c` at `dsel`. The low 32 bits are written.
`vshl/vshr` take `.clamp` (shift amounts over 32 become 32) or `.wrap` (amount mod 32). `vmad` is
`(a*b) + c` exact in 128 bits with `-a`/`-b` (negating the product) or `-c`, `.po` (+1), `.shr7/.shr15`
(arithmetic shift of the exact value) and `.sat` to the 32-bit range of the final signedness.
`vset.atype.btype.cmp` gives 1/0 and takes the same secondary forms (unsigned).

SIMD (`vop2`/`vop4`, `vset2`/`vset4`): lane i of a and b is selected from the 4 half-words / 8 bytes
of {b, a} by `.hxy` / `.bxyzw` (digits list lanes from the highest; defaults `.h10`/`.b3210` for a,
`.h32`/`.b7654` for b); results are clamped to the lane type with `.sat`; `d{.mask}` merges the masked
lanes' low bits over c's lanes, or with `.add` adds the masked lanes' (untruncated) results to c.
`vavrg` rounds halves away from minus infinity: (x + y + 1) >> 1 when x + y >= 0, else (x + y) >> 1.
Counter class: 'integer'.

Example:
    >>> hex(int(_simd_lanes(np.array([0x80FF0102], dtype=np.int64), np.zeros(1, np.int64), "b3210", 4,
    ...                     True)[3][0]))
    '-0x80'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa.registry import Op, lowers, split_mods, write
from strata.hw.ptx.ir import Imm, Instruction, Operand, Reg, Sel

_SCALAR = ("vadd", "vsub", "vabsdiff", "vmin", "vmax")
_SHIFT = ("vshl", "vshr")
_SIMD = {"vadd2": "vadd", "vsub2": "vsub", "vavrg2": "vavrg", "vabsdiff2": "vabsdiff", "vmin2": "vmin",
         "vmax2": "vmax", "vadd4": "vadd", "vsub4": "vsub", "vavrg4": "vavrg", "vabsdiff4": "vabsdiff",
         "vmin4": "vmin", "vmax4": "vmax"}
_CMP: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal,
}
_SCALAR_SELECTORS = ("b0", "b1", "b2", "b3", "h0", "h1")
_INT_TYPES = ("u32", "s32")
_BIG = np.int64(1 << 40)  # stands for |a << 32| (>= 2^32): saturates either way, low 32 bits zero


def _arith(op: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if op == "vadd":
        return x + y
    if op == "vsub":
        return x - y
    if op == "vabsdiff":
        return np.abs(x - y)
    if op == "vmin":
        return np.minimum(x, y)
    if op == "vmax":
        return np.maximum(x, y)
    s = x + y  # vavrg
    return np.where(s >= 0, (s + 1) >> 1, s >> 1)


def _clamp(x: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return np.clip(x, lo, hi)


def _word(v: Any) -> np.ndarray:
    """A source register's 32 bits as int64 (unsigned)."""
    return np.asarray(v).astype(np.uint32, copy=False).astype(np.int64)


def _part(w: np.ndarray, sel: str, signed: bool) -> np.ndarray:
    """partSelectSignExtend: the selected byte/half-word (or the word) of `w`, sign- or zero-extended."""
    if not sel:
        bits, shift = 32, 0
    else:
        bits = 8 if sel[0] == "b" else 16
        shift = bits * int(sel[1])
    v = (w >> shift) & ((1 << bits) - 1)
    if signed:
        v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
    return v


def _simd_lanes(a: np.ndarray, b: np.ndarray, sel: str, n: int, signed: bool) -> list[np.ndarray]:
    """Lanes 0..n-1 picked from the 8 bytes (n=4) or 4 half-words (n=2) of {b, a} by `sel`."""
    bits = 32 // n
    both = a | (b << 32)
    digits = sel[1:]
    out = []
    for i in range(n):
        k = int(digits[n - 1 - i])
        v = (both >> (bits * k)) & ((1 << bits) - 1)
        if signed:
            v = np.where(v >= 1 << (bits - 1), v - (1 << bits), v)
        out.append(v)
    return out


class _Video:
    """Operand plumbing shared by the lowerings: selectors, sources and the destination."""

    def __init__(self, ins: Instruction, ctx: Any) -> None:
        self.ins, self.ctx = ins, ctx
        self.flags, self.types = split_mods(ins.mods)
        if any(t not in _INT_TYPES for t in self.types):
            raise ctx.fail(f"{ins.full_opcode}: video instructions take .u32 and .s32 types only")

    def operand(self, op: Operand, what: str) -> tuple[int, str, bool]:
        """(slot of the 32-bit register or immediate, selector, negated)."""
        if isinstance(op, Sel):
            return self.ctx.src(op.reg, "u32"), op.sel, op.negated
        if isinstance(op, Reg | Imm):
            return self.ctx.src(op, "u32"), "", False
        raise self.ctx.fail(f"{self.ins.full_opcode}: bad {what} operand {op!r}")

    def dest(self, op: Operand) -> tuple[int, str]:
        if isinstance(op, Sel) and not op.negated:
            return self.ctx.dst(op.reg, "u32"), op.sel
        if isinstance(op, Reg):
            return self.ctx.dst(op, "u32"), ""
        raise self.ctx.fail(f"{self.ins.full_opcode}: the destination must be a register, got {op!r}")

    def op(self, d: int, compute: Callable[[list[Any]], np.ndarray]) -> Op:
        def run(f: Any, m: Any) -> None:
            V = f.V
            write(V[d], (compute(V) & 0xFFFFFFFF).astype(np.uint32), m)

        return Op(run, "integer")


@lowers(*_SCALAR, *_SHIFT, "vset")
def lower_scalar(ins: Instruction, ctx: Any) -> Op:
    v = _Video(ins, ctx)
    flags = v.flags
    vset = ins.opcode == "vset"
    shift = ins.opcode in _SHIFT
    cmp = [f for f in flags if f in _CMP]
    op2 = [f for f in flags if f in ("add", "min", "max")]
    mode = [f for f in flags if f in ("clamp", "wrap")]
    allowed = {"sat", *op2, *cmp, *mode}
    if set(flags) - allowed or len(op2) > 1 or (vset and "sat" in flags):
        raise ctx.unsupported()
    if vset:
        if len(v.types) != 2 or len(cmp) != 1:
            raise ctx.fail(f"{ins.full_opcode} needs .atype.btype and one comparison")
        dsigned, (at, bt) = False, v.types
    else:
        if len(v.types) != 3 or cmp:
            raise ctx.fail(f"{ins.full_opcode} needs .dtype.atype.btype")
        dsigned, at, bt = v.types[0] == "s32", v.types[1], v.types[2]
    if shift and (len(mode) != 1 or bt != "u32"):
        raise ctx.fail(f"{ins.full_opcode} needs a .u32 shift amount and one of .clamp/.wrap")
    if not shift and mode:
        raise ctx.unsupported()
    ops = ins.operands
    if len(ops) not in (3, 4):
        raise ctx.fail(f"{ins.full_opcode} takes 3 or 4 operands")
    d, dsel = v.dest(ops[0])
    a, asel, aneg = v.operand(ops[1], "a")
    b, bsel, bneg = v.operand(ops[2], "b")
    merge = bool(dsel)
    if aneg or bneg or any(s and s not in _SCALAR_SELECTORS for s in (asel, bsel, dsel)):
        raise ctx.fail(f"{ins.full_opcode}: selectors are .b0-.b3, .h0, .h1; operands cannot be negated")
    if bool(merge or op2) != (len(ops) == 4) or (merge and op2):
        raise ctx.fail(f"{ins.full_opcode}: c is needed exactly with a secondary operation or a merge")
    c = v.operand(ops[3], "c")[0] if len(ops) == 4 else None
    if c is not None and isinstance(ops[3], Sel):
        raise ctx.fail(f"{ins.full_opcode}: c takes no selector")
    sat = "sat" in flags
    sat_bits = 8 if dsel.startswith("b") else 16 if dsel.startswith("h") else 32
    name = ins.opcode

    def compute(V: list[Any]) -> np.ndarray:
        ta = _part(_word(V[a]), asel, at == "s32")
        tb = _part(_word(V[b]), bsel, bt == "s32")
        if vset:
            tmp = _CMP[cmp[0]](ta, tb).astype(np.int64)
        elif shift:
            tb = np.minimum(tb, 32) if mode[0] == "clamp" else tb & 31
            if name == "vshl":
                tmp = np.where(tb >= 32, np.sign(ta) * _BIG, ta << np.minimum(tb, 31))
            else:
                tmp = ta >> tb
        else:
            tmp = _arith(name, ta, tb)
        if sat:
            tmp = _clamp(tmp, sat_bits, dsigned)
        if c is None:
            return tmp
        cw = _word(V[c])
        if op2:
            cv = _part(cw, "", dsigned)
            return tmp + cv if op2[0] == "add" else np.minimum(tmp, cv) if op2[0] == "min" else np.maximum(tmp, cv)
        bits = 8 if dsel[0] == "b" else 16
        pos = bits * int(dsel[1])
        keep = 0xFFFFFFFF & ~(((1 << bits) - 1) << pos)
        return ((tmp & ((1 << bits) - 1)) << pos) | (cw & keep)

    return v.op(d, compute)


@lowers("vmad")
def lower_vmad(ins: Instruction, ctx: Any) -> Op:
    v = _Video(ins, ctx)
    scale = [f for f in v.flags if f in ("shr7", "shr15")]
    if set(v.flags) - {"sat", "po", *scale} or len(scale) > 1 or len(v.types) != 3:
        raise ctx.unsupported() if set(v.flags) - {"sat", "po", *scale} else \
            ctx.fail(f"{ins.full_opcode} needs .dtype.atype.btype and at most one scale")
    if len(ins.operands) != 4:
        raise ctx.fail(f"{ins.full_opcode} takes 4 operands")
    d, dsel = v.dest(ins.operands[0])
    a, asel, aneg = v.operand(ins.operands[1], "a")
    b, bsel, bneg = v.operand(ins.operands[2], "b")
    c, csel, cneg = v.operand(ins.operands[3], "c")
    if dsel or csel or any(s and s not in _SCALAR_SELECTORS for s in (asel, bsel)):
        raise ctx.fail(f"{ins.full_opcode}: only a and b take selectors (.b0-.b3, .h0, .h1)")
    po = "po" in v.flags
    pneg = aneg != bneg
    if (po and (aneg or bneg or cneg)) or (pneg and cneg):
        raise ctx.fail(f"{ins.full_opcode}: negate either the product or c, and nothing with .po")
    at, bt = v.types[1], v.types[2]
    signed_final = "s32" in (at, bt) or pneg or cneg
    shr = int(scale[0][3:]) if scale else 0
    sat = "sat" in v.flags

    def compute(V: list[Any]) -> np.ndarray:
        # exact 128-bit arithmetic in Python integers: a 33-bit product plus c overflows int64
        ta = _part(_word(V[a]), asel, at == "s32").astype(object)
        tb = _part(_word(V[b]), bsel, bt == "s32").astype(object)
        cw = _word(V[c]).astype(object)
        tmp = ta * tb
        lsb = 0
        if po:
            lsb = 1
        elif pneg:
            tmp, lsb = -tmp - 1, 1  # ~tmp
        elif cneg:
            cw, lsb = cw ^ 0xFFFFFFFF, 1
        if signed_final:
            cw = np.where(cw >= 1 << 31, cw - (1 << 32), cw)
        res = (tmp + cw + lsb) >> shr
        if sat:
            res = np.clip(res, -(1 << 31) if signed_final else 0, (1 << 31) - 1 if signed_final else (1 << 32) - 1)
        return np.asarray(res & 0xFFFFFFFF).astype(np.int64)

    return v.op(d, compute)


@lowers(*_SIMD, "vset2", "vset4")
def lower_simd(ins: Instruction, ctx: Any) -> Op:
    v = _Video(ins, ctx)
    n = int(ins.opcode[-1])
    vset = ins.opcode.startswith("vset")
    cmp = [f for f in v.flags if f in _CMP]
    if set(v.flags) - {"sat", "add", *cmp} or ("sat" in v.flags and ("add" in v.flags or vset)):
        raise ctx.unsupported() if set(v.flags) - {"sat", "add", *cmp} else \
            ctx.fail(f"{ins.full_opcode}: .sat cannot be combined with .add or used by vset")
    if vset:
        if len(v.types) != 2 or len(cmp) != 1:
            raise ctx.fail(f"{ins.full_opcode} needs .atype.btype and one comparison")
        dsigned, (at, bt) = False, v.types
    else:
        if len(v.types) != 3 or cmp:
            raise ctx.fail(f"{ins.full_opcode} needs .dtype.atype.btype")
        dsigned, at, bt = v.types[0] == "s32", v.types[1], v.types[2]
    if len(ins.operands) != 4:
        raise ctx.fail(f"{ins.full_opcode} takes 4 operands: d, a, b, c")
    letter = "b" if n == 4 else "h"
    d, mask = v.dest(ins.operands[0])
    a, asel, aneg = v.operand(ins.operands[1], "a")
    b, bsel, bneg = v.operand(ins.operands[2], "b")
    c, csel, cneg = v.operand(ins.operands[3], "c")
    asel = asel or ("b3210" if n == 4 else "h10")
    bsel = bsel or ("b7654" if n == 4 else "h32")
    mask = mask or ("b3210" if n == 4 else "h10")
    lane_limit = "3" if n == 2 else "7"
    for s, what in ((asel, "a"), (bsel, "b")):
        if len(s) != n + 1 or s[0] != letter or max(s[1:]) > lane_limit:
            raise ctx.fail(f"{ins.full_opcode}: bad selector .{s} for {what}")
    digits = mask[1:]
    if mask[0] != letter or max(digits) >= str(n) or len(set(digits)) != len(digits) or \
            list(digits) != sorted(digits, reverse=True):
        raise ctx.fail(f"{ins.full_opcode}: bad mask .{mask}")
    if aneg or bneg or cneg or csel:
        raise ctx.fail(f"{ins.full_opcode}: operands take no negation, c no selector")
    lanes = {int(x) for x in digits}
    bits = 32 // n
    sat = "sat" in v.flags
    add = "add" in v.flags
    name = _SIMD.get(ins.opcode, "")

    def compute(V: list[Any]) -> np.ndarray:
        wa, wb = _word(V[a]), _word(V[b])
        va = _simd_lanes(wa, wb, asel, n, at == "s32")
        vb = _simd_lanes(wa, wb, bsel, n, bt == "s32")
        cw = _word(V[c])
        out = cw if add else np.zeros_like(cw)
        for i in range(n):
            t = _CMP[cmp[0]](va[i], vb[i]).astype(np.int64) if vset else _arith(name, va[i], vb[i])
            if sat:
                t = _clamp(t, bits, dsigned)
            if add:
                if i in lanes:
                    out = out + t
                continue
            src = t if i in lanes else cw >> (bits * i)
            out = out | ((src & ((1 << bits) - 1)) << (bits * i))
        return np.asarray(out)

    return v.op(d, compute)
