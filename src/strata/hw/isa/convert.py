# Source of truth for the semantics of `cvt` on the virtual GPU: every pair of integer and float
# types (u8..u64, s8..s64, f16, bf16, f32, f64), packed f16x2/bf16x2 from two f32s, tf32, and the
# fp8 pairs e4m3x2/e5m2x2, with every rounding mode (.rn/.rna/.rz/.rm/.rp, .rni/.rzi/.rmi/.rpi)
# and .ftz/.sat/.relu/.satfinite. All conversions are bit-exact.
"""cvt: conversions between types (PTX ISA 9.7.9.21).

- int -> int: sign/zero extension or truncation; ``.sat`` clamps to the destination range.
- float -> int (``.rni/.rzi/.rmi/.rpi`` required): saturating; NaN gives 0, except from .f64 or
  into a 64-bit type, where it gives 1 << (width - 1) (PTX ISA).
- int -> float (``.rn/.rz/.rm/.rp`` required): correctly rounded from the exact integer (a 64-bit
  integer is split into two exact f64 halves and rounded once; no double rounding).
- float -> float: widening is exact (NaN payloads kept); narrowing needs a rounding mode and
  rounds once (round-to-odd through f32 for 16-bit targets); same-type with an integer rounding
  mode rounds to an integral value. ``.ftz`` flushes f32 subnormal inputs/results, ``.sat`` clamps
  to [0, 1] (NaN -> +0), ``.relu`` clamps negatives to +0 (NaN -> canonical NaN), ``.satfinite``
  turns infinities into the largest finite value of the destination (NaN stays NaN).
- ``cvt.frnd.f16x2.f32 d, a, b`` / ``.bf16x2``: a goes to the upper half, b to the lower.
- ``cvt.{rna,rn,rz}.tf32.f32``: the f32 bits with the low 13 mantissa bits rounded off.
- ``cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.{f32,f16x2}`` and ``cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2}``.
- ``cvt.pack.sat.{u16,s16}.s32 d, a, b`` and ``cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c``
  (PTX ISA 9.7.9.22): a and b saturate to the narrow type; b fills the low field, a the next, and the
  bits above come from the low bits of c (``d = b' | a' << n | c << 2n``).
Not modeled (UnsupportedInstruction): ``.rs`` stochastic rounding, fp4/fp6/ue8m0.

NaN results of narrowing are canonical (0x7fffffff for f32, 0x7fff for f16/bf16).
Counter class: 'integer' for int <-> int, else by the widest float type involved: 'fp64', 'fp32'
(also tf32), or 'fp16' (f16/bf16/fp8 only).

Example:
    >>> import numpy as np
    >>> hex(int(fr.int_to_float(np.array([2**53 + 1], dtype=np.uint64), "f64", "rp")[0]))
    '0x4340000000000001'
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa import fpround as fr
from strata.hw.isa.half import half_src
from strata.hw.isa.registry import DTYPES, Op, lowers, split_mods, write
from strata.hw.ptx.ir import Instruction

INT_TYPES = frozenset(("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "b8", "b16", "b32", "b64"))
FLOAT_TYPES = frozenset(("f16", "bf16", "f32", "f64"))
F8_TYPES = frozenset(("e4m3x2", "e5m2x2"))
_UNMODELED = frozenset(("rs", "e2m1x2", "e2m3x2", "e3m2x2", "ue8m0x2", "e2m1x4", "e4m3x4",
                        "e5m2x4", "e2m3x4", "e3m2x4", "s2f6x2", "oob"))
_FRND = ("rn", "rna", "rz", "rm", "rp")
_WIDTH = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}
_BITS = {16: "b16", 32: "b32", 64: "b64"}
_UINT: dict[int, Any] = {16: np.uint16, 32: np.uint32, 64: np.uint64}


@lowers("cvt")
def lower_cvt(ins: Instruction, ctx: Any) -> Op:
    flags, types = split_mods(ins.mods)
    if "pack" in flags:
        return _cvt_pack(ins, ctx)
    if any(f in _UNMODELED for f in flags):
        raise ctx.unsupported()
    f8 = [f for f in flags if f in F8_TYPES]
    flags = [f for f in flags if f not in F8_TYPES]
    frnd = [f for f in flags if f in _FRND]
    irnd = [f for f in flags if f in fr.INT_ROUND_MODES]
    rest = {f for f in flags if f not in _FRND and f not in fr.INT_ROUND_MODES}
    if len(frnd) + len(irnd) > 1:
        raise ctx.fail(f"{ins.full_opcode} has more than one rounding modifier")
    if rest - {"ftz", "sat", "relu", "satfinite"}:
        raise ctx.unsupported()
    c = _Cvt(ins, ctx, frnd[0] if frnd else None, irnd[0] if irnd else None, rest)
    if f8:
        return c.fp8(f8[0], types)
    if len(types) != 2:
        raise ctx.fail(f"{ins.full_opcode} needs a destination and a source type")
    dt, at = types
    if dt in ("f16x2", "bf16x2"):
        return c.pack_half(dt, at)
    if dt == "tf32":
        return c.tf32(at)
    if at not in INT_TYPES | FLOAT_TYPES or dt not in INT_TYPES | FLOAT_TYPES:
        raise ctx.unsupported()
    if dt in INT_TYPES and at in INT_TYPES:
        return c.int_to_int(dt, at)
    if dt in INT_TYPES:
        return c.float_to_int(dt, at)
    if at in INT_TYPES:
        return c.int_to_float(dt, at)
    return c.float_to_float(dt, at)


class _Cvt:
    """One cvt instruction being lowered."""

    def __init__(self, ins: Instruction, ctx: Any, frnd: str | None, irnd: str | None, flags: set[str]):
        self.ins, self.ctx, self.frnd, self.irnd = ins, ctx, frnd, irnd
        self.ftz, self.sat = "ftz" in flags, "sat" in flags
        self.relu, self.satfinite = "relu" in flags, "satfinite" in flags

    # -- helpers
    def _operands(self, n: int) -> tuple[Any, ...]:
        if len(self.ins.operands) != n:
            raise self.ctx.fail(f"{self.ins.full_opcode} needs {n} operands, got {len(self.ins.operands)}")
        return tuple(self.ins.operands)

    def _no(self, *what: str) -> None:
        for w in what:
            if getattr(self, w):
                raise self.ctx.fail(f"{self.ins.full_opcode}: .{w} is not allowed here")

    def _float_src(self, op: Any, at: str) -> Callable[[list[Any]], np.ndarray]:
        """Reader of a float operand as f32 (f16/bf16/f32) or f64 values, exactly."""
        if at in ("f16", "bf16"):
            s = half_src(self.ctx, op, at, packed=False)
            to = fr.f16_to_f32 if at == "f16" else fr.bf16_to_f32
            return lambda V: to(V[s])
        s = self.ctx.src(op, at)
        dtype = np.float32 if at == "f32" else np.float64
        return lambda V: np.array(V[s], dtype=dtype, ndmin=1, copy=None)

    def _op(self, dst: int, compute: Callable[[list[Any]], Any], cls: str) -> Op:
        def run(f: Any, m: Any) -> None:
            V = f.V
            write(V[dst], compute(V), m)

        return Op(run, cls)

    # -- int -> int
    def int_to_int(self, dt: str, at: str) -> Op:
        self._no("ftz", "relu", "satfinite")
        if self.frnd or self.irnd:
            raise self.ctx.fail(f"{self.ins.full_opcode}: integer conversions take no rounding modifier")
        d_op, a_op = self._operands(2)
        dts, ats = _int_view(dt), _int_view(at)
        a = self.ctx.src(a_op, ats)
        d = self.ctx.dst(d_op, dts)
        out = DTYPES[dts]
        info = np.iinfo(out)
        signed_src = DTYPES[ats].kind == "i"
        sat = self.sat

        def compute(V: list[Any]) -> Any:
            v = V[a]
            if sat:
                if signed_src:
                    v = np.clip(np.asarray(v, np.int64), max(info.min, -(2**63)), min(info.max, 2**63 - 1))
                else:
                    v = np.minimum(np.asarray(v, np.uint64), np.uint64(min(info.max, 2**64 - 1)))
            return np.asarray(v).astype(out)  # wraps (truncates) like the hardware

        return self._op(d, compute, "integer")

    # -- float -> int
    def float_to_int(self, dt: str, at: str) -> Op:
        self._no("relu", "satfinite")
        if self.irnd is None:
            raise self.ctx.fail(f"{self.ins.full_opcode}: float-to-int needs .rni/.rzi/.rmi/.rpi")
        if self.ftz and at != "f32":
            raise self.ctx.fail(f"{self.ins.full_opcode}: .ftz applies to .f32 sources only")
        d_op, a_op = self._operands(2)
        dts = _int_view(dt)
        read = self._float_src(a_op, at)
        d = self.ctx.dst(d_op, dts)
        out = DTYPES[dts]
        w = 8 * out.itemsize
        signed = out.kind == "i"
        lo = -(2 ** (w - 1)) if signed else 0
        hi = 2 ** (w - 1) - 1 if signed else 2**w - 1
        # NaN -> 0, or 1 << (w-1) for .f64 sources and 64-bit destinations (PTX ISA)
        nan_bits = (1 << (w - 1)) if (at == "f64" or w == 64) else 0
        nan_val = np.array([nan_bits], dtype=f"u{out.itemsize}").view(out)[0]
        cont = np.int64 if signed else np.uint64
        irnd, ftz = self.irnd, self.ftz

        def compute(V: list[Any]) -> Any:
            x = read(V)
            if ftz:
                x = fr.flush32(x)
            r = fr.round_integral(np.asarray(x, np.float64), irnd)
            below, above, nan = r < lo, r >= float(hi) + 1.0, np.isnan(r)  # hi + 1 is a power of 2
            mid = np.where(below | above | nan, 0.0, r).astype(cont)  # exact in range
            v = np.where(below, cont(lo), np.where(above, cont(hi), mid))
            return np.where(nan, nan_val, v.astype(out))

        return self._op(d, compute, _cls(at))

    # -- int -> float
    def int_to_float(self, dt: str, at: str) -> Op:
        self._no("relu", "satfinite")
        if self.frnd is None or self.frnd == "rna":
            raise self.ctx.fail(f"{self.ins.full_opcode}: int-to-float needs .rn/.rz/.rm/.rp")
        if self.ftz and dt != "f32":
            raise self.ctx.fail(f"{self.ins.full_opcode}: .ftz applies to .f32 results only")
        d_op, a_op = self._operands(2)
        a = self.ctx.src(a_op, _int_view(at))
        d = self.ctx.dst(d_op, _BITS[_WIDTH[dt]])
        rnd, sat = self.frnd, self.sat

        def compute(V: list[Any]) -> Any:
            bits = fr.int_to_float(np.array(V[a], ndmin=1), dt, rnd)  # integers are never subnormal
            return _sat_bits(bits, dt) if sat else bits

        return self._op(d, compute, _cls(dt))

    # -- float -> float
    def float_to_float(self, dt: str, at: str) -> Op:
        d_op, a_op = self._operands(2)
        ctx = self.ctx
        if self.ftz and "f32" not in (dt, at):
            raise ctx.fail(f"{self.ins.full_opcode}: .ftz needs an .f32 source or destination")
        if (self.relu or self.satfinite) and dt not in ("f16", "bf16"):
            raise ctx.fail(f"{self.ins.full_opcode}: .relu/.satfinite need an f16/bf16 destination")
        read = self._float_src(a_op, at)
        d = ctx.dst(d_op, _BITS[_WIDTH[dt]])
        wa, wd = _WIDTH[at], _WIDTH[dt]
        narrowing = wd < wa or (dt != at and wd == wa)  # f16 <-> bf16 lose precision or range
        if self.irnd and dt != at:
            raise ctx.fail(f"{self.ins.full_opcode}: integer rounding needs equal source and destination")
        if narrowing and self.frnd is None:
            raise ctx.fail(f"{self.ins.full_opcode}: a narrowing conversion needs .rn/.rz/.rm/.rp")
        frnd, irnd = self.frnd or "rn", self.irnd
        ftz_in = self.ftz and at == "f32"
        ftz_out = self.ftz and dt == "f32"
        sat, relu, satfinite = self.sat, self.relu, self.satfinite
        plain = dt == at and not (irnd or self.ftz or sat)  # a move: bits unchanged (NaN payloads too)

        def compute(V: list[Any]) -> Any:
            x = read(V)
            if plain:
                return _bits_of(x, dt)
            if ftz_in:
                x = fr.flush32(x)
            if irnd:
                x = fr.round_integral(x, irnd)  # exact: integral values are representable
                bits = _bits_of(x, dt) if dt in ("f32", "f64") else fr.narrow(x, dt, "rn")
                if dt == "f32":
                    bits = fr.canon_nan32(x).view(np.uint32)
            elif not narrowing:
                bits = _bits_of(np.asarray(x, np.float64) if dt == "f64" else x, dt)  # exact
            else:
                bits = fr.narrow(x, dt, frnd)
            return _float_post(bits, dt, ftz_out, sat, relu, satfinite)

        return self._op(d, compute, _cls(dt, at))

    # -- f16x2 / bf16x2 from two f32
    def pack_half(self, dt: str, at: str) -> Op:
        if at != "f32":
            raise self.ctx.unsupported()
        self._no("ftz", "sat")
        if self.frnd is None or self.frnd == "rna":
            raise self.ctx.fail(f"{self.ins.full_opcode} needs .rn/.rz/.rm/.rp")
        d_op, a_op, b_op = self._operands(3)
        ra, rb = self._float_src(a_op, "f32"), self._float_src(b_op, "f32")
        d = self.ctx.dst(d_op, "b32")
        et = dt.removesuffix("x2")
        rnd, relu, satfinite = self.frnd, self.relu, self.satfinite
        conv = fr.f32_to_f16 if et == "f16" else fr.f32_to_bf16

        def one(x: np.ndarray) -> np.ndarray:
            return _float_post(conv(x, rnd), et, False, False, relu, satfinite).astype(np.uint32)

        def compute(V: list[Any]) -> Any:
            return (one(ra(V)) << np.uint32(16)) | one(rb(V))

        return self._op(d, compute, "fp32")

    # -- tf32
    def tf32(self, at: str) -> Op:
        if at != "f32" or self.frnd not in ("rna", "rn", "rz"):
            raise self.ctx.fail(f"{self.ins.full_opcode}: expected cvt.{{rna,rn,rz}}.tf32.f32")
        self._no("ftz", "sat")
        d_op, a_op = self._operands(2)
        read = self._float_src(a_op, "f32")
        d = self.ctx.dst(d_op, "b32")
        rnd, relu, satfinite = self.frnd, self.relu, self.satfinite
        tf32_max = np.uint32(0x7F7FE000)

        def compute(V: list[Any]) -> Any:
            x = read(V)
            bits = fr.f32_to_tf32(x, rnd)
            if satfinite:  # infinities (inputs or overflow) -> largest finite tf32, sign kept
                inf = (bits & np.uint32(0x7FFFFFFF)) == np.uint32(0x7F800000)
                bits = np.where(inf, (bits & np.uint32(0x80000000)) | tf32_max, bits)
            if relu:
                bits = np.where((bits >> np.uint32(31)).astype(bool) & ~np.isnan(x), np.uint32(0), bits)
            return bits

        return self._op(d, compute, "fp32")

    # -- fp8 pairs
    def fp8(self, f8: str, types: list[str]) -> Op:
        import ml_dtypes  # NOTE: only fp8 conversions need it (a core dependency anyway)

        fmt = fr.FORMATS[f8[:4]]
        f8_dtype = np.dtype(ml_dtypes.float8_e4m3fn if f8.startswith("e4m3") else ml_dtypes.float8_e5m2)
        canon8 = np.uint8(0x7F)
        if self.frnd != "rn":
            raise self.ctx.fail(f"{self.ins.full_opcode}: fp8 conversions need .rn")
        self._no("ftz", "sat")
        relu = self.relu
        mods = self.ins.mods
        decode_to_half = types == ["f16x2"] and mods.index("f16x2") < mods.index(f8)
        if decode_to_half:  # cvt.rn{.relu}.f16x2.e4m3x2 d, a: a's high byte -> d's high half
            d_op, a_op = self._operands(2)
            a = self.ctx.src(a_op, "b16")
            d = self.ctx.dst(d_op, "b32")

            def dec(b: np.ndarray) -> np.ndarray:
                v = b.view(f8_dtype).astype(np.float32)  # exact (NaN -> NaN)
                return _float_post(fr.f32_to_f16(v), "f16", False, False, relu, False).astype(np.uint32)

            def decode(V: list[Any]) -> Any:
                x = np.array(V[a], dtype=np.uint16, ndmin=1)
                hi = dec((x >> np.uint16(8)).astype(np.uint8))
                return (hi << np.uint32(16)) | dec((x & np.uint16(0xFF)).astype(np.uint8))

            return self._op(d, decode, "fp16")
        if not self.satfinite:
            raise self.ctx.fail(f"{self.ins.full_opcode}: conversions to fp8 need .satfinite")

        def enc(x: np.ndarray) -> np.ndarray:
            v = fr.round_small(np.asarray(x, np.float64), fmt, "rn")
            v = np.clip(v, -fmt.max_finite, fmt.max_finite)  # .satfinite (NaN stays NaN)
            if relu:  # negatives and -0 -> +0 (NaN stays NaN)
                v = np.where(np.signbit(v) & ~np.isnan(v), 0.0, v)
            out = v.astype(f8_dtype).view(np.uint8)  # exact: v is representable
            return np.where(np.isnan(v), canon8, out).astype(np.uint16)

        d = self.ctx.dst(self.ins.operands[0], "b16")
        if types == ["f32"]:  # cvt.rn.satfinite.e4m3x2.f32 d, a, b: a -> high byte
            _, a_op, b_op = self._operands(3)
            ra, rb = self._float_src(a_op, "f32"), self._float_src(b_op, "f32")
            return self._op(d, lambda V: (enc(ra(V)) << np.uint16(8)) | enc(rb(V)), "fp32")
        if types == ["f16x2"]:  # cvt.rn.satfinite.e4m3x2.f16x2 d, a: a's high half -> high byte
            _, a_op = self._operands(2)
            a = self.ctx.src(a_op, "b32")

            def encode_pair(V: list[Any]) -> Any:
                x = np.array(V[a], dtype=np.uint32, ndmin=1)
                hi = enc(fr.f16_to_f32((x >> np.uint32(16)).astype(np.uint16)))
                return (hi << np.uint16(8)) | enc(fr.f16_to_f32((x & np.uint32(0xFFFF)).astype(np.uint16)))

            return self._op(d, encode_pair, "fp16")
        raise self.ctx.unsupported()


_PACK_WIDTH = {"u16": 16, "s16": 16, "u8": 8, "s8": 8, "u4": 4, "s4": 4, "u2": 2, "s2": 2}


def _cvt_pack(ins: Instruction, ctx: Any) -> Op:
    """cvt.pack.sat: two s32 values saturated to a narrow type, packed over c's low bits."""
    mods = list(ins.mods)
    if mods[:2] != ["pack", "sat"] or len(mods) not in (4, 5) or mods[2] not in _PACK_WIDTH or mods[3] != "s32":
        raise ctx.fail(f"{ins.full_opcode}: expected cvt.pack.sat.{{u16,s16,u8,s8,u4,s4,u2,s2}}.s32[.b32]")
    size = _PACK_WIDTH[mods[2]]
    with_c = size < 16
    if (len(mods) == 5) != with_c or (with_c and mods[4] != "b32") or len(ins.operands) != 3 + with_c:
        raise ctx.fail(f"{ins.full_opcode}: .u16/.s16 pack two operands; narrower types take a .b32 c operand")
    signed = mods[2][0] == "s"
    lo, hi = (-(1 << (size - 1)), (1 << (size - 1)) - 1) if signed else (0, (1 << size) - 1)
    d = ctx.dst(ins.operands[0], "u32")
    a, b = ctx.src(ins.operands[1], "s32"), ctx.src(ins.operands[2], "s32")
    c = ctx.src(ins.operands[3], "u32") if with_c else None
    field = (1 << size) - 1

    def run(f: Any, m: Any) -> None:
        V = f.V
        ta = np.clip(np.asarray(V[a], dtype=np.int64), lo, hi) & field
        tb = np.clip(np.asarray(V[b], dtype=np.int64), lo, hi) & field
        out = tb | (ta << size)
        if c is not None:
            out = out | ((np.asarray(V[c], dtype=np.int64) << (2 * size)) & 0xFFFFFFFF)
        write(V[d], out.astype(np.uint32), m)

    return Op(run, "integer")


def _int_view(t: str) -> str:
    """Bit types convert like unsigned ones."""
    return "u" + t[1:] if t.startswith("b") else t


def _cls(*ts: str) -> str:
    if "f64" in ts:
        return "fp64"
    if "f32" in ts:
        return "fp32"
    return "fp16"


def _bits_of(x: Any, t: str) -> np.ndarray:
    """Bits of exact values of float type t (f32/f64 arrays view; 16-bit types encode exactly)."""
    if t == "f32":
        return np.array(x, dtype=np.float32, ndmin=1, copy=None).view(np.uint32)
    if t == "f64":
        return np.array(x, dtype=np.float64, ndmin=1, copy=None).view(np.uint64)
    return fr.narrow(np.asarray(x, np.float64), t, "rn")


def _sat_bits(bits: np.ndarray, t: str) -> np.ndarray:
    """.sat on float bits: clamp to [+0, 1]; NaN and negatives (and -0) -> +0."""
    w = _WIDTH[t]
    ut = _UINT[w]
    sign = ut(1 << (w - 1))
    one = ut({"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f64": 0x3FF0000000000000}[t])
    exp = ut({"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000, "f64": 0x7FF0000000000000}[t])
    mag = bits & ut(sign - ut(1))
    nan = mag > exp
    r = np.where((bits & sign) != 0, ut(0), np.where(mag > one, one, bits))
    return np.where(nan, ut(0), r)


def _float_post(bits: np.ndarray, t: str, ftz: bool, sat: bool, relu: bool, satfinite: bool) -> np.ndarray:
    """Result modifiers on float bits of type t."""
    w = _WIDTH[t]
    ut = _UINT[w]
    bits = np.asarray(bits).astype(ut, copy=False)
    sign = ut(1 << (w - 1))
    exp = ut({"f16": 0x7C00, "bf16": 0x7F80, "f32": 0x7F800000, "f64": 0x7FF0000000000000}[t])
    mag = bits & ut(sign - ut(1))
    if ftz:  # subnormal results -> zero of the same sign
        bits = np.where((bits & exp) == 0, bits & sign, bits)
    if satfinite:
        maxf = ut({"f16": 0x7BFF, "bf16": 0x7F7F, "f32": 0x7F7FFFFF, "f64": 0x7FEFFFFFFFFFFFFF}[t])
        bits = np.where(mag == exp, (bits & sign) | maxf, bits)
    if relu:
        nan = mag > exp
        bits = np.where(((bits & sign) != 0) & ~nan, ut(0), bits)
        canon = ut(0x7FFF) if w == 16 else ut(0x7FFFFFFF)
        bits = np.where(nan, canon, bits)
    if sat:
        bits = _sat_bits(bits, t)
    return bits


__all__ = ["lower_cvt"]
