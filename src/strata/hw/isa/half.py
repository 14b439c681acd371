# Source of truth for the semantics of the half-precision instructions of the virtual GPU on .f16,
# .f16x2, .bf16 and .bf16x2 (raw bits in 16/32-bit registers): add, sub, mul, fma (.rn, .ftz, .sat,
# .relu) and ex2.approx/tanh.approx. Results are bit-exact (single rounding to nearest-even).
# (neg/abs/min/max on these types live in compare.py, packing moves in moves.py, cvt in convert.py.)
"""Half-precision floating-point instructions (PTX ISA 9.7.4).

Registers hold raw bits: one element in the low 16 bits, or two packed in 32 bits (element 0 in
bits 15:0, element 1 in bits 31:16). Values are widened exactly to f32/f64 and rounded once:

- f16 add/sub/mul and bf16 add/sub run in f32 and round to the 16-bit format: the product of two
  11-bit significands is exact in f32, and for sums rounding twice (24 bits, then 11 or 8) equals
  rounding once because 24 >= 2p + 2.
- bf16 mul runs in f64 (the product's exponent range exceeds f32's), fma of both types in f64 with
  TwoSum + round-to-odd, then one rounding to the format.

NaN results are the canonical 0x7fff; ``.sat`` clamps to [+0, 1] (NaN, -0 -> +0); ``.relu``
clamps negatives (and -0) to +0 and keeps NaN (canonical); ``.ftz`` (f16 only) flushes subnormal
inputs and results to zero of the same sign. ``ex2.approx``/``tanh.approx`` are evaluated in f64
and rounded once (PTX bounds: ex2 rel 2^-9.9 (f16) / 2^-7 (bf16); tanh abs 2^-10.987 / 2^-8).

Counter classes: 'fp16' (flops: add/sub/mul 1, fma 2, doubled for x2); ex2/tanh 'sfu'.

Example:
    >>> import numpy as np
    >>> hex(int(_arith("f16", "add", [np.uint16(0x3C00), np.uint16(0x3C00)], False, False, False)[0]))
    '0x4000'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa import fpround as fr
from strata.hw.isa.registry import Op, lowers_for_types, split_mods, write
from strata.hw.ptx.ir import FImm, Imm, Instruction, Operand

HALF_TYPES = frozenset(("f16", "f16x2", "bf16", "bf16x2"))
_U16_MASK = np.uint32(0xFFFF)
_SIXTEEN = np.uint32(16)

# per element type: sign, exponent mask, +1.0, smallest normal magnitude
_SIGN = np.uint16(0x8000)
_EXP = {"f16": np.uint16(0x7C00), "bf16": np.uint16(0x7F80)}
_ONE = {"f16": np.uint16(0x3C00), "bf16": np.uint16(0x3F80)}


# ------------------------------------------------------------------------------------------------
# Element arithmetic on bit patterns
# ------------------------------------------------------------------------------------------------


def _to_f32(et: str, bits: Any) -> np.ndarray:
    return fr.f16_to_f32(bits) if et == "f16" else fr.bf16_to_f32(bits)


def _flush(et: str, bits: np.ndarray) -> np.ndarray:
    """Subnormal (exponent field zero) -> zero of the same sign."""
    return np.where((bits & _EXP[et]) == 0, bits & _SIGN, bits).astype(np.uint16)


def _is_nan(et: str, bits: np.ndarray) -> np.ndarray:
    return (bits & np.uint16(0x7FFF)) > _EXP[et]


def _arith(et: str, op: str, xs: list[Any], ftz: bool, sat: bool, relu: bool) -> np.ndarray:
    """One element of add/sub/mul/fma on bit patterns of type et ('f16' or 'bf16')."""
    xs = [np.array(x, dtype=np.uint16, ndmin=1) for x in xs]
    if ftz:
        xs = [_flush(et, x) for x in xs]
    vals = [_to_f32(et, x) for x in xs]  # exact
    if op == "fma" or (op == "mul" and et == "bf16"):
        p = np.multiply(vals[0], vals[1], dtype=np.float64)  # exact
        if op == "fma":
            s, e = fr.two_sum(p, vals[2].astype(np.float64))
            p = fr.round_odd(s, e)
        r = fr.narrow(p, et, "rn")
    else:
        uf = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
        r32 = uf(vals[0], vals[1], dtype=np.float32)
        r = fr.f32_to_f16(r32) if et == "f16" else fr.f32_to_bf16(r32)
    return _post(et, r, ftz, sat, relu)


def _post(et: str, r: np.ndarray, ftz: bool, sat: bool, relu: bool) -> np.ndarray:
    """Result modifiers on bits: .ftz flush, .sat clamp to [+0, 1], .relu clamp negatives to +0."""
    if ftz:
        r = _flush(et, r)
    nan = _is_nan(et, r)
    if sat:
        big = (r > _ONE[et]) & ~nan & ((r & _SIGN) == 0)  # includes +inf
        r = np.where(((r & _SIGN) != 0) | nan, np.uint16(0), np.where(big, _ONE[et], r))
    elif relu:
        r = np.where(((r & _SIGN) != 0) & ~nan, np.uint16(0), r)
    return np.where(_is_nan(et, r), fr.CANON_NAN16, r).astype(np.uint16)


def _approx(et: str, fn: Callable[[np.ndarray], np.ndarray], x: Any, ftz: bool) -> np.ndarray:
    """ex2/tanh: evaluated in f64, rounded once to the element type."""
    x = np.array(x, dtype=np.uint16, ndmin=1)
    if ftz:
        x = _flush(et, x)
    r = fr.narrow(fn(_to_f32(et, x).astype(np.float64)), et, "rn")
    return _flush(et, r) if ftz else r


# ------------------------------------------------------------------------------------------------
# Packing and operands
# ------------------------------------------------------------------------------------------------


def per_element(packed: bool, fn: Callable[..., np.ndarray], *xs: Any) -> np.ndarray:
    """Apply an element function to 16-bit values, or to both halves of packed 32-bit values."""
    if not packed:
        return fn(*xs)
    xs32 = [np.asarray(x).astype(np.uint32) for x in xs]
    lo = fn(*[(x & _U16_MASK).astype(np.uint16) for x in xs32])
    hi = fn(*[(x >> _SIXTEEN).astype(np.uint16) for x in xs32])
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << _SIXTEEN)


def half_src(ctx: Any, op: Operand, et: str, packed: bool) -> int:
    """Slot of an operand's raw bits; a float literal converts by value (to nearest) at load time."""
    if isinstance(op, FImm):
        if packed:
            raise ctx.fail("a packed half operand cannot be a float literal")
        raw = np.array([op.bits], dtype=np.uint32 if op.width == 32 else np.uint64)
        v = raw.view(np.float32 if op.width == 32 else np.float64).astype(np.float64)
        with np.errstate(all="ignore"):
            bits = int(fr.narrow(v, et, "rn")[0])
        return ctx.src(Imm(bits), "b16")
    return ctx.src(op, "b32" if packed else "b16")


class _HalfMods:
    def __init__(self, ins: Instruction, ctx: Any, allowed: set[str], nsrc: int) -> None:
        flags, types = split_mods(ins.mods)
        if len(types) != 1 or types[0] not in HALF_TYPES:
            raise ctx.fail(f"{ins.full_opcode} needs one of the types .f16/.f16x2/.bf16/.bf16x2")
        self.t = types[0]
        self.et = self.t.removesuffix("x2")
        self.packed = self.t.endswith("x2")
        self.flags = set(flags)
        for f in flags:
            if f not in allowed:
                raise ctx.unsupported()
        if len(ins.operands) != nsrc + 1:
            raise ctx.fail(f"{ins.full_opcode} needs {nsrc + 1} operands, got {len(ins.operands)}")
        self.srcs = [half_src(ctx, op, self.et, self.packed) for op in ins.operands[1:]]
        self.d = ctx.dst(ins.operands[0], "b32" if self.packed else "b16")


# ------------------------------------------------------------------------------------------------
# Lowerings
# ------------------------------------------------------------------------------------------------


@lowers_for_types(("add", "sub", "mul", "fma"), HALF_TYPES)
def lower_half_arith(ins: Instruction, ctx: Any) -> Op:
    op = ins.opcode
    flags, types = split_mods(ins.mods)
    is_f16 = bool(types) and types[0].startswith("f16")
    allowed = {"rn"}
    if is_f16:
        allowed |= {"ftz", "sat"}
    if op == "fma":
        allowed.add("relu")
    if "oob" in flags:
        raise ctx.unsupported()  # .oob needs the tensor OOB-NaN encoding; not modeled
    mods = _HalfMods(ins, ctx, allowed, 3 if op == "fma" else 2)
    if op == "fma" and "rn" not in mods.flags:
        raise ctx.fail(f"{ins.full_opcode} needs the rounding modifier .rn")
    if "sat" in mods.flags and "relu" in mods.flags:
        raise ctx.fail(f"{ins.full_opcode}: .sat and .relu are exclusive")
    et, packed, d, srcs = mods.et, mods.packed, mods.d, mods.srcs
    ftz, sat, relu = "ftz" in mods.flags, "sat" in mods.flags, "relu" in mods.flags

    def elem(*xs: Any) -> np.ndarray:
        return _arith(et, op, list(xs), ftz, sat, relu)

    def run(f: Any, m: Any) -> None:
        V = f.V
        write(V[d], per_element(packed, elem, *(V[s] for s in srcs)), m)

    flops = (2 if op == "fma" else 1) * (2 if packed else 1)
    return Op(run, "fp16", flops=flops, flop_cls="fp16")


_APPROX: dict[str, Callable[[np.ndarray], np.ndarray]] = {"ex2": np.exp2, "tanh": np.tanh}


@lowers_for_types(("ex2", "tanh"), HALF_TYPES)
def lower_half_approx(ins: Instruction, ctx: Any) -> Op:
    flags, types = split_mods(ins.mods)
    bf = bool(types) and types[0].startswith("bf16")
    # ex2.approx.f16, ex2.approx.ftz.bf16 (the .ftz is mandatory there), tanh.approx.{f16,bf16}
    allowed = {"approx", "ftz"} if (ins.opcode == "ex2" and bf) else {"approx"}
    mods = _HalfMods(ins, ctx, allowed, 1)
    if "approx" not in mods.flags or (ins.opcode == "ex2" and bf and "ftz" not in mods.flags):
        raise ctx.fail(f"{ins.full_opcode}: expected .approx{'.ftz' if bf and ins.opcode == 'ex2' else ''}")
    et, packed, d, (a,) = mods.et, mods.packed, mods.d, mods.srcs
    ftz = "ftz" in mods.flags
    fn = _APPROX[ins.opcode]

    def elem(x: Any) -> np.ndarray:
        return _approx(et, fn, x, ftz)

    def run(f: Any, m: Any) -> None:
        V = f.V
        write(V[d], per_element(packed, elem, V[a]), m)

    return Op(run, "sfu")


__all__ = ["HALF_TYPES", "half_src", "per_element"]
