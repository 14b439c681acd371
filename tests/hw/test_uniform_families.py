# Every registered instruction family run with all-uniform operands (kernel parameters, which the JIT
# keeps as scalars, and immediates) against the same instruction on per-lane operands (loaded from
# global memory, so lane arrays): the per-lane result is the oracle. The registry is iterated, so an
# opcode added later fails here until it has a form below (or a stated reason it takes no operands).
"""Uniform (scalar) operands give the same results as per-lane ones, for every registered opcode."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
from ptx_harness import PTX_HEAD

import strata.cuda as cuda
import strata.hw.isa.families  # noqa: F401  (registers every family)
from strata.hw.isa.registry import REGISTRY

LANES = 40  # one full warp and a partial one (ghost lanes)
F32, F64 = "f32", "f64"


@dataclass(frozen=True)
class Form:
    """One instruction: `text` with {d0}.. for destinations and {s0}.. for sources, or just the opcode
    (then `opcode d0, .., s0, ..`). Sources are (register type, value); a type ending in '!' cannot be
    an immediate in PTX (f16 and packed halves), so the immediate variant loads it from a parameter."""

    text: str
    dsts: tuple[str, ...]
    srcs: tuple[tuple[str, Any], ...]

    @property
    def opcodes(self) -> set[str]:
        return {part.split()[0].split(".")[0] for part in self.text.split(";")}


def F(text: str, dsts: str, *srcs: tuple[str, Any]) -> Form:
    return Form(text, tuple(dsts.split()) if dsts else (), srcs)


B16, B32, B64, P = "b16", "b32", "b64", "pred"
H = "b16!"  # an f16 / bf16 value: registers only
H2 = "b32!"  # packed halves: registers only
PR = "pred!"  # a predicate operand that must be a register (vote)


def h(x: float) -> int:
    return int(np.float16(x).view(np.uint16))


def h2(lo: float, hi: float) -> int:
    return h(lo) | h(hi) << 16


FORMS: list[Form] = [
    # integer arithmetic
    F("add.s32", "b32", (B32, 7), (B32, -9)),
    F("add.sat.s32", "b32", (B32, 0x7FFFFFF0), (B32, 100)),
    F("add.u64", "b64", (B64, 2**40 + 3), (B64, -1)),
    F("add.cc.u32 {d0}, {s0}, {s1}; addc.u32 {d1}, {s2}, {s3}", "b32 b32", (B32, -1), (B32, 2), (B32, 5), (B32, 6)),
    F("sub.s32", "b32", (B32, 3), (B32, 10)),
    F("sub.cc.u32 {d0}, {s0}, {s1}; subc.u32 {d1}, {s2}, {s3}", "b32 b32", (B32, 1), (B32, 2), (B32, 5), (B32, 1)),
    F("mul.lo.s32", "b32", (B32, -7), (B32, 12345)),
    F("mul.hi.u32", "b32", (B32, 0xDEADBEEF), (B32, 0x12345678)),
    F("mul.wide.s32", "b64", (B32, -70000), (B32, 90000)),
    F("mad.lo.s32", "b32", (B32, 3), (B32, -4), (B32, 100)),
    F("mad.wide.u32", "b64", (B32, 0xFFFFFFFF), (B32, 3), (B64, 11)),
    F("mad.lo.cc.u32 {d0}, {s0}, {s1}, {s2}; madc.hi.u32 {d1}, {s0}, {s1}, {s3}", "b32 b32",
      (B32, 0xFFFF), (B32, 0x10001), (B32, 0xFFFFFFFF), (B32, 1)),
    F("mul24.lo.s32", "b32", (B32, -5000), (B32, 300)),
    F("mad24.lo.u32", "b32", (B32, 5000), (B32, 300), (B32, 7)),
    F("sad.s32", "b32", (B32, -5), (B32, 9), (B32, 1)),
    F("div.s32", "b32", (B32, -100), (B32, 7)),
    F("div.u64", "b64", (B64, 10**12), (B64, 999)),
    F("rem.s32", "b32", (B32, -100), (B32, 7)),
    F("abs.s32", "b32", (B32, -17)),
    F("neg.s64", "b64", (B64, 12)),
    F("min.s32", "b32", (B32, -3), (B32, 2)),
    F("max.u32", "b32", (B32, 0xFFFFFFFE), (B32, 2)),
    F("dp4a.s32.u32", "b32", (B32, 0x01FF7F80), (B32, 0x02030405), (B32, 10)),
    F("dp2a.lo.u32.s32", "b32", (B32, 0x00050007), (B32, 0x80FF7F01), (B32, -3)),
    F("szext.clamp.s32", "b32", (B32, 0x1F0), (B32, 8)),
    # bits
    F("and.b32", "b32", (B32, 0xF0F0), (B32, 0xFF00)),
    F("or.b64", "b64", (B64, 1 << 40), (B64, 5)),
    F("xor.b32", "b32", (B32, 0xFFFF), (B32, 0x0F0F)),
    F("not.b32", "b32", (B32, 0x1234)),
    F("cnot.b32", "b32", (B32, 0)),
    F("shl.b32", "b32", (B32, 3), (B32, 4)),
    F("shr.s32", "b32", (B32, -64), (B32, 3)),
    F("shr.u64", "b64", (B64, -1), (B32, 60)),
    F("shf.l.wrap.b32", "b32", (B32, 0x12345678), (B32, 0x9ABCDEF0), (B32, 12)),
    F("popc.b64", "b32", (B64, 0xF0F0F0F0F)),
    F("clz.b32", "b32", (B32, 0x00F00000)),
    F("brev.b32", "b32", (B32, 0x1)),
    F("bfind.u32", "b32", (B32, 0x00F00000)),
    F("bfe.s32", "b32", (B32, 0x0000F800), (B32, 8), (B32, 8)),
    F("bfi.b32", "b32", (B32, 0xA), (B32, 0xFFFF0000), (B32, 4), (B32, 8)),
    F("bmsk.clamp.b32", "b32", (B32, 4), (B32, 8)),
    F("fns.b32", "b32", (B32, 0xF0F0), (B32, 2), (B32, 3)),
    F("prmt.b32", "b32", (B32, 0x33221100), (B32, 0x77665544), (B32, 0x4321)),
    F("lop3.b32", "b32", (B32, 0xF0), (B32, 0xCC), (B32, 0xAA), ("b32#", 0x96)),
    # compare / select
    F("setp.lt.s32", "pred", (B32, -1), (B32, 1)),
    F("setp.gt.and.u32 {d0}, {s0}, {s1}, {s2}", "pred", (B32, 9), (B32, 1), (P, 1)),
    F("setp.ltu.f32", "pred", (F32, 1.5), (F32, float("nan"))),
    F("set.le.u32.s32", "b32", (B32, -2), (B32, 3)),
    F("selp.b32", "b32", (B32, 7), (B32, 3), (P, 1)),
    F("selp.b32", "b32", (B32, 7), (B32, 3), (P, 0)),
    F("selp.f64", "b64", (F64, 2.5), (F64, -1.0), (P, 1)),
    F("slct.s32.s32", "b32", (B32, 7), (B32, 3), (B32, -1)),
    F("slct.f32.f32", "f32", (F32, 7.0), (F32, 3.0), (F32, 0.5)),
    F("testp.finite.f32", "pred", (F32, float("inf"))),
    F("copysign.f32", "f32", (F32, -1.0), (F32, 3.0)),
    # floating point
    F("add.rn.f32", "f32", (F32, 1.5), (F32, 2.25)),
    F("sub.f64", "f64", (F64, 1.5), (F64, 1e-20)),
    F("mul.rz.f32", "f32", (F32, 3.3), (F32, 1.7)),
    F("div.rn.f32", "f32", (F32, 1.0), (F32, 3.0)),
    F("div.full.f32", "f32", (F32, 1.0), (F32, 3.0)),
    F("div.rn.f64", "f64", (F64, 2.0), (F64, 7.0)),
    F("fma.rn.f32", "f32", (F32, 1.1), (F32, 2.2), (F32, 3.3)),
    F("fma.rn.f64", "f64", (F64, 1.1), (F64, 2.2), (F64, 3.3)),
    F("mad.rn.f32", "f32", (F32, 1.1), (F32, 2.2), (F32, 3.3)),
    F("min.f32", "f32", (F32, -0.0), (F32, 0.0)),
    F("max.NaN.f32", "f32", (F32, 1.0), (F32, float("nan"))),
    F("abs.f64", "f64", (F64, -2.0)),
    F("neg.f32", "f32", (F32, 2.0)),
    F("rcp.rn.f32", "f32", (F32, 3.0)),
    F("rcp.approx.ftz.f64", "f64", (F64, 3.0)),
    F("sqrt.rn.f32", "f32", (F32, 2.0)),
    F("rsqrt.approx.f32", "f32", (F32, 4.0)),
    F("sin.approx.f32", "f32", (F32, 1.0)),
    F("cos.approx.f32", "f32", (F32, 1.0)),
    F("lg2.approx.f32", "f32", (F32, 8.0)),
    F("ex2.approx.f32", "f32", (F32, 3.0)),
    F("tanh.approx.f32", "f32", (F32, 0.5)),
    # half precision
    F("add.f16", "b16", (H, h(1.5)), (H, h(2.0))),
    F("mul.f16x2", "b32", (H2, h2(1.5, -2.0)), (H2, h2(2.0, 3.0))),
    F("fma.rn.f16", "b16", (H, h(1.5)), (H, h(2.0)), (H, h(0.25))),
    F("fma.rn.bf16x2", "b32", (H2, 0x3F804000), (H2, 0x40003F80), (H2, 0)),
    F("max.f16", "b16", (H, h(1.5)), (H, h(-2.0))),
    F("neg.f16x2", "b32", (H2, h2(1.0, -1.0))),
    F("ex2.approx.f16", "b16", (H, h(2.0))),
    F("setp.lt.f16", "pred", (H, h(1.0)), (H, h(2.0))),
    F("set.lt.u32.f16x2", "b32", (H2, h2(1.0, 3.0)), (H2, h2(2.0, 2.0))),
    # conversions and moves
    F("cvt.rn.f32.s32", "f32", (B32, -7)),
    F("cvt.rzi.s32.f32", "b32", (F32, -7.9)),
    F("cvt.u64.u32", "b64", (B32, 0xFFFFFFFF)),
    F("cvt.s64.s32", "b64", (B32, -5)),
    F("cvt.rn.f16.f32", "b16", (F32, 1.0 / 3.0)),
    F("cvt.f32.f16", "f32", (H, h(0.5))),
    F("cvt.rn.f16x2.f32", "b32", (F32, 1.5), (F32, -2.0)),
    F("cvt.rn.bf16.f32", "b16", (F32, 3.14159)),
    F("cvt.sat.u8.s32", "b16", (B32, 300)),
    F("cvt.f64.f32", "f64", (F32, 0.1)),
    F("cvta.to.global.u64", "b64", (B64, 0x7000_0000_1000)),
    F("mov.b32", "b32", (B32, 0x12345678)),
    F("mov.b64 {d0}, {{{s0}, {s1}}}", "b64", (B32, 1), (B32, 2)),
    F("mov.f32", "f32", (F32, 2.5)),
    # video
    F("vadd.s32.s32.s32", "b32", (B32, -5), (B32, 9)),
    F("vsub.u32.u32.u32.sat", "b32", (B32, 5), (B32, 9)),
    F("vabsdiff.s32.s32.s32", "b32", (B32, -5), (B32, 9)),
    F("vmin.s32.s32.s32", "b32", (B32, -5), (B32, 9)),
    F("vmax.u32.u32.u32.add", "b32", (B32, 5), (B32, 9), (B32, 100)),
    F("vshl.u32.u32.u32.clamp", "b32", (B32, 5), (B32, 3)),
    F("vshr.s32.s32.u32.wrap", "b32", (B32, -64), (B32, 3)),
    F("vmad.s32.s32.s32", "b32", (B32, -5), (B32, 9), (B32, 7)),
    F("vset.s32.s32.lt", "b32", (B32, -5), (B32, 9)),
    F("vadd2.u32.u32.u32", "b32", (B32, 0x00050007), (B32, 0x00010002), (B32, 0)),
    F("vsub2.s32.s32.s32", "b32", (B32, 0x00050007), (B32, 0x00010002), (B32, 0)),
    F("vavrg2.u32.u32.u32", "b32", (B32, 0x00050007), (B32, 0x00010002), (B32, 0)),
    F("vabsdiff2.s32.s32.s32", "b32", (B32, 0x00050007), (B32, 0x00010009), (B32, 0)),
    F("vmin2.u32.u32.u32", "b32", (B32, 0x00050007), (B32, 0x00010009), (B32, 0)),
    F("vmax2.s32.s32.s32", "b32", (B32, 0x00050007), (B32, 0x00010009), (B32, 0)),
    F("vset2.u32.u32.lt", "b32", (B32, 0x00050007), (B32, 0x00010009), (B32, 0)),
    F("vadd4.u32.u32.u32", "b32", (B32, 0x05070102), (B32, 0x01020304), (B32, 0)),
    F("vsub4.s32.s32.s32", "b32", (B32, 0x05070102), (B32, 0x01020304), (B32, 0)),
    F("vavrg4.u32.u32.u32", "b32", (B32, 0x05070102), (B32, 0x01020304), (B32, 0)),
    F("vabsdiff4.u32.u32.u32", "b32", (B32, 0x05070102), (B32, 0x01020304), (B32, 0)),
    F("vmin4.s32.s32.s32", "b32", (B32, 0x05070102), (B32, 0x01020304), (B32, 0)),
    F("vmax4.u32.u32.u32", "b32", (B32, 0x05070102), (B32, 0x01020304), (B32, 0)),
    F("vset4.u32.u32.ne", "b32", (B32, 0x05070102), (B32, 0x05020304), (B32, 0)),
    # warp
    F("shfl.sync.idx.b32", "b32", (B32, 77), (B32, 3), (B32, 0x1F), (B32, -1)),
    F("shfl.sync.bfly.b32 {d0}|{d1}, {s0}, {s1}, {s2}, {s3}", "b32 pred", (B32, 77), (B32, 1), (B32, 0x1F),
      (B32, -1)),
    F("vote.sync.ballot.b32", "b32", (PR, 1), (B32, -1)),
    F("vote.sync.any.pred", "pred", (PR, 0), (B32, -1)),
    F("match.any.sync.b32", "b32", (B32, 5), (B32, -1)),
    F("match.all.sync.b32 {d0}|{d1}, {s0}, {s1}", "b32 pred", (B32, 5), (B32, 0x0000FFFF)),
    F("redux.sync.add.u32", "b32", (B32, 5), (B32, -1)),
    F("redux.sync.max.s32", "b32", (B32, -5), (B32, 0x0F0F0F0F)),
    F("activemask.b32", "b32"),
    F("elect.sync {d0}|{d1}, {s0}", "b32 pred", (B32, -1)),
    F("bar.warp.sync {s0}", "", (B32, -1)),
    # more widths and modes of the same families
    F("mul.hi.s64", "b64", (B64, -(2**40) - 7), (B64, 2**35 + 3)),
    F("mul.hi.u64", "b64", (B64, -1), (B64, 2**63 + 5)),
    F("mul.lo.u64", "b64", (B64, 2**33 + 1), (B64, 2**31 + 7)),
    F("mul.wide.u32", "b64", (B32, 0xFFFFFFFF), (B32, 0xFFFFFFF0)),
    F("mul.hi.s32", "b32", (B32, -70000), (B32, 90000)),
    F("mad.hi.u32", "b32", (B32, 0xDEADBEEF), (B32, 0x12345678), (B32, 5)),
    F("mad.hi.s64", "b64", (B64, -(2**40)), (B64, 2**35), (B64, 9)),
    F("mad.hi.sat.s32", "b32", (B32, 2**30), (B32, 8), (B32, 2**31 - 1)),
    F("mad.lo.cc.u64 {d0}, {s0}, {s1}, {s2}; madc.lo.cc.u64 {d1}, {s0}, {s1}, {s2}", "b64 b64",
      (B64, -1), (B64, 3), (B64, 7)),
    F("sub.sat.s32", "b32", (B32, -(2**31) + 5), (B32, 100)),
    F("div.u32", "b32", (B32, 1000), (B32, 7)),
    F("div.s64", "b64", (B64, -(10**12)), (B64, 999)),
    F("rem.u64", "b64", (B64, 10**12), (B64, 999)),
    F("rem.s64", "b64", (B64, -(10**12)), (B64, 999)),
    F("min.s64", "b64", (B64, -3), (B64, 2)),
    F("max.s16", "b16", (B16, -3), (B16, 2)),
    F("abs.s64", "b64", (B64, -(2**40))),
    F("neg.s32", "b32", (B32, 5)),
    F("add.s16", "b16", (B16, 30000), (B16, 30000)),
    F("add.u16x2", "b32", (B32, 0xFFFF0001), (B32, 0x00020003)),
    F("min.u16x2", "b32", (B32, 0xFFFF0001), (B32, 0x00020003)),
    F("clz.b64", "b32", (B64, 0xF0000)),
    F("popc.b32", "b32", (B32, 0xF0F0F0F)),
    F("bfind.shiftamt.s64", "b32", (B64, -(2**40))),
    F("brev.b64", "b64", (B64, 3)),
    F("bfe.u64", "b64", (B64, 0xFF00FF00FF), (B32, 12), (B32, 20)),
    F("bfi.b64", "b64", (B64, 0x3), (B64, -1), (B32, 40), (B32, 4)),
    F("prmt.b32.f4e", "b32", (B32, 0x33221100), (B32, 0x77665544), (B32, 3)),
    F("shf.r.clamp.b32", "b32", (B32, 0x12345678), (B32, 0x9ABCDEF0), (B32, 40)),
    F("shl.b64", "b64", (B64, 3), (B32, 40)),
    F("shr.b16", "b16", (B16, 0x8000), (B32, 3)),
    F("and.pred {d0}, {s0}, {s1}", "pred", (P, 1), (P, 0)),
    F("not.pred {d0}, {s0}", "pred", (P, 0)),
    F("xor.b16", "b16", (B16, 0xF0F0), (B16, 0x00FF)),
    F("setp.ne.s64", "pred", (B64, -1), (B64, 1)),
    F("setp.hs.u32", "pred", (B32, 3), (B32, 3)),
    F("setp.nan.f64", "pred", (F64, float("nan")), (F64, 1.0)),
    F("setp.eq.f32 {d0}|{d1}, {s0}, {s1}", "pred pred", (F32, 1.0), (F32, 1.0)),
    F("setp.ge.or.f32 {d0}|{d1}, {s0}, {s1}, {s2}", "pred pred", (F32, 1.0), (F32, 2.0), (P, 1)),
    F("set.gt.f32.f32", "f32", (F32, 3.0), (F32, 2.0)),
    F("set.eq.and.u32.u32 {d0}, {s0}, {s1}, {s2}", "b32", (B32, 3), (B32, 3), (P, 0)),
    F("selp.s16", "b16", (B16, -3), (B16, 4), (P, 1)),
    F("slct.u64.s32", "b64", (B64, 7), (B64, 3), (B32, 0)),
    F("testp.subnormal.f64", "pred", (F64, 1e-310)),
    F("testp.notanumber.f32", "pred", (F32, float("nan"))),
    F("copysign.f64", "f64", (F64, -1.0), (F64, 3.0)),
    F("add.rz.f64", "f64", (F64, 1.0), (F64, 1e-17)),
    F("add.sat.f32", "f32", (F32, 0.75), (F32, 0.5)),
    F("add.ftz.f32", "f32", (F32, 1e-39), (F32, 0.0)),
    F("sub.rm.f32", "f32", (F32, 1.0), (F32, 1e-10)),
    F("mul.rn.f64", "f64", (F64, 1.1), (F64, 3.3)),
    F("mul.rp.f64", "f64", (F64, 1.1), (F64, 3.3)),
    F("fma.rz.f32", "f32", (F32, 1.1), (F32, 2.2), (F32, -3.3)),
    F("fma.rm.f64", "f64", (F64, 1.1), (F64, 2.2), (F64, -3.3)),
    F("fma.rn.sat.f32", "f32", (F32, 0.5), (F32, 0.5), (F32, 0.9)),
    F("div.approx.f32", "f32", (F32, 1.0), (F32, 3.0)),
    F("div.rz.f64", "f64", (F64, 1.0), (F64, 3.0)),
    F("sqrt.rn.f64", "f64", (F64, 2.0)),
    F("sqrt.approx.f32", "f32", (F32, 2.0)),
    F("rcp.rn.f64", "f64", (F64, 3.0)),
    F("rcp.approx.f32", "f32", (F32, 3.0)),
    F("rsqrt.approx.f64", "f64", (F64, 3.0)),
    F("min.f64", "f64", (F64, float("nan")), (F64, 1.0)),
    F("max.xorsign.abs.f32", "f32", (F32, -3.0), (F32, 2.0)),
    F("min.ftz.f32", "f32", (F32, 1e-39), (F32, 1.0)),
    F("abs.ftz.f32", "f32", (F32, -1e-39)),
    F("neg.f64", "f64", (F64, 0.0)),
    F("sub.f16x2", "b32", (H2, h2(1.5, -2.0)), (H2, h2(2.0, 3.0))),
    F("mul.rn.bf16", "b16", (H, 0x3FC0), (H, 0x4040)),
    F("add.sat.f16", "b16", (H, h(0.75)), (H, h(0.5))),
    F("fma.rn.relu.f16x2", "b32", (H2, h2(1.5, -2.0)), (H2, h2(2.0, 3.0)), (H2, 0)),
    F("min.NaN.bf16x2", "b32", (H2, 0x7FC03F80), (H2, 0x3F804000)),
    F("abs.bf16", "b16", (H, 0xBF80)),
    F("neg.bf16x2", "b32", (H2, 0xBF803F80)),
    F("tanh.approx.f16x2", "b32", (H2, h2(0.5, -1.0))),
    F("ex2.approx.ftz.bf16x2", "b32", (H2, 0x3F804000)),
    F("setp.gtu.f16x2 {d0}|{d1}, {s0}, {s1}", "pred pred", (H2, h2(1.0, 3.0)), (H2, h2(2.0, 2.0))),
    F("set.ne.f16.f16", "b16", (H, h(1.0)), (H, h(2.0))),
    F("cvt.rni.s32.f64", "b32", (F64, -2.5)),
    F("cvt.rn.f32.u64", "f32", (B64, 2**60 + 1)),
    F("cvt.rn.f64.s64", "f64", (B64, -(2**60) - 1)),
    F("cvt.sat.f32.f32", "f32", (F32, 1.5)),
    F("cvt.rzi.f32.f32", "f32", (F32, -1.5)),
    F("cvt.rpi.u64.f64", "b64", (F64, 1e10 + 0.5)),
    F("cvt.u16.u32", "b16", (B32, 0x12345)),
    F("cvt.s8.s32", "b16", (B32, 0x1FF)),
    F("cvt.u32.u16", "b32", (B16, 0xFFFF)),
    F("cvt.s32.s16", "b32", (B16, 0x8000)),
    F("cvt.rn.bf16x2.f32", "b32", (F32, 1.5), (F32, -2.0)),
    F("cvt.f32.bf16", "f32", (H, 0x3FC0)),
    F("cvt.rn.f16.f64", "b16", (F64, 0.1)),
    F("cvt.rn.satfinite.e4m3x2.f32", "b16", (F32, 0.40625), (F32, 12.9)),
    F("cvt.rn.f16x2.e4m3x2", "b32", (B16, 0x2D55)),
    F("cvt.rna.tf32.f32", "b32", (F32, 1.0 / 3.0)),
    F("mov.u16", "b16", (B16, 0x1234)),
    F("mov.pred {d0}, {s0}", "pred", (P, 1)),
    F("mov.b32 {d0}, {{{s0}, {s1}}}", "b32", (B16, 1), (B16, 2)),
    F("mov.b64 {{{d0}, {d1}}}, {s0}", "b32 b32", (B64, 2**40 + 5)),
    F("shfl.sync.up.b32", "b32", (B32, 77), (B32, 1), (B32, 0), (B32, -1)),
    # 8-lane segments: no lane reads past the partial warp's last thread (a ghost lane is undefined)
    F("shfl.sync.down.b32 {d0}|{d1}, {s0}, {s1}, {s2}, {s3}", "b32 pred", (B32, 77), (B32, 4), (B32, 0x181F),
      (B32, -1)),
    F("vote.sync.all.pred", "pred", (PR, 1), (B32, -1)),
    F("vote.sync.uni.pred", "pred", (PR, 1), (B32, 0x0000FFFF)),
    F("match.any.sync.b64", "b32", (B64, 2**40), (B32, -1)),
    F("redux.sync.and.b32", "b32", (B32, 0xF0F0), (B32, -1)),
    F("redux.sync.or.b32", "b32", (B32, 0xF0F0), (B32, 0xFF)),
    F("redux.sync.xor.b32", "b32", (B32, 0xF0F0), (B32, -1)),
    F("redux.sync.min.u32", "b32", (B32, 9), (B32, -1)),
    F("add.cc.s64 {d0}, {s0}, {s1}; addc.cc.s64 {d1}, {s2}, {s3}", "b64 b64", (B64, -1), (B64, 1), (B64, 3), (B64, 4)),
    F("sub.cc.u64 {d0}, {s0}, {s1}; subc.cc.u64 {d1}, {s2}, {s3}", "b64 b64", (B64, 0), (B64, 1), (B64, 3), (B64, 4)),
    F("bfe.s64", "b64", (B64, 0xF0F0_0000_0000), (B32, 36), (B32, 8)),
    F("prmt.b32.b4e", "b32", (B32, 0x33221100), (B32, 0x77665544), (B32, 5)),
    F("prmt.b32.ecl", "b32", (B32, 0x33221100), (B32, 0x77665544), (B32, 2)),
    F("prmt.b32.rc16", "b32", (B32, 0x33221100), (B32, 0x77665544), (B32, 1)),
    F("szext.wrap.u32", "b32", (B32, 0x1F0), (B32, 36)),
    F("bmsk.wrap.b32", "b32", (B32, 30), (B32, 8)),
    F("dp4a.u32.u32", "b32", (B32, 0x01FF7F80), (B32, 0x02030405), (B32, 10)),
    F("dp2a.hi.s32.s32", "b32", (B32, 0x00050007), (B32, 0x80FF7F01), (B32, -3)),
    F("sad.u64", "b64", (B64, 5), (B64, 9), (B64, 1)),
    F("mul24.hi.u32", "b32", (B32, 0xFFFFFF), (B32, 0xFFFFFF)),
    F("mad24.hi.s32", "b32", (B32, -5000000), (B32, 3000000), (B32, 7)),
    F("not.b64", "b64", (B64, 0x1234)),
    F("cnot.b16", "b16", (B16, 3)),
    F("abs.s16", "b16", (B16, -7)),
    F("max.u64", "b64", (B64, -1), (B64, 2)),
    F("rem.u32", "b32", (B32, 1000), (B32, 7)),
    F("div.s16", "b16", (B16, -1000), (B16, 7)),
    F("shr.u16", "b16", (B16, 0x8000), (B32, 20)),
    F("popc.b64", "b32", (B64, -1)),
    F("bfind.s32", "b32", (B32, -5)),
    F("add.f16x2", "b32", (H2, h2(1.5, -2.0)), (H2, h2(2.0, 3.0))),
    F("sub.bf16", "b16", (H, 0x3FC0), (H, 0x4040)),
    F("fma.rn.bf16", "b16", (H, 0x3FC0), (H, 0x4040), (H, 0x3F80)),
    F("fma.rn.sat.f16", "b16", (H, h(0.5)), (H, h(0.5)), (H, h(0.9))),
    F("mul.f16", "b16", (H, h(1.5)), (H, h(-2.5))),
    F("abs.f16", "b16", (H, h(-1.5))),
    F("neg.f16", "b16", (H, h(1.5))),
    F("min.f16x2", "b32", (H2, h2(1.5, -2.0)), (H2, h2(2.0, 3.0))),
    F("max.bf16x2", "b32", (H2, 0x3F80BF80), (H2, 0x40003F00)),
    F("setp.eq.bf16", "pred", (H, 0x3F80), (H, 0x3F80)),
    F("ex2.approx.f16x2", "b32", (H2, h2(1.0, -1.0))),
    F("cvt.rmi.f32.f32", "f32", (F32, -1.5)),
    F("cvt.rni.f64.f64", "f64", (F64, 2.5)),
    F("cvt.rz.f32.f64", "f32", (F64, 0.1)),
    F("cvt.rn.f32.f64", "f32", (F64, 0.1)),
    F("cvt.u8.u16", "b16", (B16, 0x1FF)),
    F("cvt.s16.s8", "b16", (B16, 0x80)),
    F("cvt.rni.u32.f32", "b32", (F32, 2.5)),
    F("cvt.rzi.s64.f32", "b64", (F32, -1e10)),
    F("cvt.rn.f32.s64", "f32", (B64, -(2**40) - 1)),
    F("cvt.rn.f64.u32", "f64", (B32, 0xFFFFFFFF)),
    F("cvt.rn.satfinite.e5m2x2.f32", "b16", (F32, 0.375), (F32, -5256.6)),
    F("cvt.rn.f16x2.e5m2x2", "b32", (B16, 0x36ED)),
    F("cvt.rn.relu.f16.f32", "b16", (F32, -1.0)),
    F("cvt.rn.relu.satfinite.bf16x2.f32", "b32", (F32, 3e38), (F32, -2.0)),
    F("cvt.rz.f16.f32", "b16", (F32, 1.0 / 3.0)),
    F("cvt.f64.f16", "f64", (H, h(0.5))),
    F("add.rm.f32", "f32", (F32, 1.0), (F32, -1e-10)),
    F("sub.rp.f64", "f64", (F64, 1.0), (F64, 1e-20)),
    F("mul.ftz.f32", "f32", (F32, 1e-20), (F32, 1e-20)),
    F("mul.sat.f32", "f32", (F32, 0.5), (F32, 3.0)),
    F("fma.rp.f32", "f32", (F32, 1.1), (F32, 2.2), (F32, 3.3)),
    F("fma.rn.ftz.sat.f32", "f32", (F32, 1e-39), (F32, 2.0), (F32, 0.25)),
    F("mad.rn.f64", "f64", (F64, 1.1), (F64, 2.2), (F64, 3.3)),
    F("div.rn.ftz.f32", "f32", (F32, 1e-39), (F32, 3.0)),
    F("div.full.ftz.f32", "f32", (F32, 1.0), (F32, 3.0)),
    F("div.rp.f32", "f32", (F32, 1.0), (F32, 3.0)),
    F("sqrt.rz.f32", "f32", (F32, 2.0)),
    F("sqrt.rn.ftz.f32", "f32", (F32, 1e-39)),
    F("rcp.rz.f64", "f64", (F64, 3.0)),
    F("rcp.rn.ftz.f32", "f32", (F32, 3.0)),
    F("rsqrt.approx.ftz.f32", "f32", (F32, 1e-39)),
    F("sin.approx.ftz.f32", "f32", (F32, 2.0)),
    F("lg2.approx.ftz.f32", "f32", (F32, 1e-39)),
    F("ex2.approx.ftz.f32", "f32", (F32, -200.0)),
    F("min.NaN.f32", "f32", (F32, float("nan")), (F32, 1.0)),
    F("max.f64", "f64", (F64, -0.0), (F64, 0.0)),
    F("abs.f32", "f32", (F32, -0.0)),
    F("neg.ftz.f32", "f32", (F32, 1e-39)),
    F("testp.normal.f32", "pred", (F32, 1.0)),
    F("testp.infinite.f64", "pred", (F64, float("-inf"))),
    F("testp.number.f32", "pred", (F32, float("nan"))),
    F("setp.num.f32", "pred", (F32, 1.0), (F32, 2.0)),
    F("setp.lt.ftz.f32", "pred", (F32, -1e-39), (F32, 0.0)),
    F("set.equ.u32.f32", "b32", (F32, float("nan")), (F32, 1.0)),
    F("setp.lo.u16", "pred", (B16, 3), (B16, 5)),
    F("selp.f32", "f32", (F32, 1.5), (F32, 2.5), (P, 0)),
    F("selp.u64", "b64", (B64, -1), (B64, 2), (P, 1)),
    F("slct.ftz.f32.f32", "f32", (F32, 1.5), (F32, 2.5), (F32, -1e-39)),
    # control flow and barriers with operands
    F("nanosleep.u32 {s0}", "", (B32, 20)),
    F("bar.sync {s0}", "", (B32, 0)),
    F("barrier.sync {s0}, {s1}", "", (B32, 0), (B32, 64)),
    F("setmaxnreg.inc.sync.aligned.u32 {s0}", "", (B32, 240)),
    F("pmevent {s0}", "", (B32, 1)),
    # distributed shared memory addresses (rank 0: a plain launch is its own 1x1x1 cluster)
    F("mapa.shared::cluster.u32", "b32", (B32, 0x40), (B32, 0)),
    F("mapa.u64", "b64", (B64, 0x7F00_0000_0080), (B32, 0)),
]

# Opcodes whose every form takes no value operand, or whose operands are addresses, fragments or
# callee names (tested with uniform values where they take them: see MEMORY_FORMS and the tests below).
NO_VALUE_OPERANDS = {
    "brkpt": "no operands", "trap": "no operands (faults by design)", "nop": "no operands",
    "membar": "no operands", "fence": "no operands", "griddepcontrol": "no operands",
    "call": "operands are a callee and .param slots (per-lane by construction)",
    "applypriority": "cache hint on an address: see MEMORY_FORMS", "discard": "cache hint on an address",
    "createpolicy": "cache policy descriptor: immediates only",
    **dict.fromkeys(("suld", "sust", "suq"), "surface handle and coordinates: uniform vs per-lane in "
                    "tests/cuda/test_arrays_surfaces.py (test_uniform_handles_and_coordinates_match_per_lane_ones)"),
    **dict.fromkeys(("tex", "tld4", "txq", "istypep"), "texture handle and coordinates: uniform vs per-lane in "
                    "tests/cuda/test_textures.py (test_uniform_texture_operands_sample_as_per_lane_ones)"),
    "mbarrier": "barrier address and counts: uniform vs per-lane in tests/hw/test_mbarrier.py "
                "(test_uniform_barrier_operands_act_as_per_lane_ones)",
}
# memory, atomics and tensor-core ops: their addresses come from kernel parameters (uniform) or global
# loads (per lane), checked in test_memory_families_with_uniform_addresses
MEMORY_OPCODES = {"ld", "ldu", "st", "atom", "red", "prefetch", "prefetchu", "isspacep", "cvta", "cp", "wmma",
                  "mma", "ldmatrix", "stmatrix", "movmatrix"}


def _bits(t: str, v: Any) -> int:
    t = t.rstrip("!#")
    if t == F32:
        return struct.unpack("<I", struct.pack("<f", v))[0]
    if t == F64:
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    if t == P:
        return int(bool(v))
    return int(v) & ((1 << int(t[1:])) - 1)


def _imm(t: str, v: Any) -> str:
    if t == F32:
        return f"0f{_bits(t, v):08X}"
    if t == F64:
        return f"0d{_bits(t, v):016X}"
    return str(int(bool(v))) if t == P else str(int(v))


def _reg_decl(t: str) -> str:
    return t.rstrip("!#")


def kernel_text(forms: list[Form], variant: str) -> tuple[str, list[int]]:
    """One kernel running `forms` with sources as immediates ('imm'), kernel parameters ('param') or
    per-lane global loads ('lane'); every destination stored per lane. Returns (PTX, source bits)."""
    decl = [".reg .b32 %tid, %w;", ".reg .b64 %out, %g, %o, %off;", ".reg .pred %lanes;"]
    code = ["mov.u32 %tid, %tid.x;", "ld.param.u64 %out, [out];", "cvta.to.global.u64 %out, %out;",
            "ld.param.u64 %g, [vals];", "cvta.to.global.u64 %g, %g;",
            "mul.wide.u32 %off, %tid, 8;", "add.s64 %o, %out, %off;"]
    params = [".param .u64 out", ".param .u64 vals"]
    values: list[int] = []
    slot = 0
    for i, form in enumerate(forms):
        srcs = []
        for k, (t, v) in enumerate(form.srcs):
            name = f"%s{i}_{k}"
            rt = _reg_decl(t)
            values.append(_bits(t, v))
            pk = len(values) - 1
            params.append(f".param .u64 p{pk}")
            if t.endswith("#"):  # an operand PTX requires as a constant (lop3's immLut)
                srcs.append(str(int(v)))
                continue
            if variant == "imm" and not t.endswith("!"):
                srcs.append(_imm(rt, v))
                continue
            decl.append(f".reg .{rt} {name};")
            if rt == P:  # predicates come from a setp (PTX cannot load one)
                decl.append(f".reg .b32 {name}_v;")
                src = f"[p{pk}]" if variant != "lane" else f"[%g+{8 * pk}]"
                space = "param" if variant != "lane" else "global"
                code += [f"ld.{space}.b32 {name}_v, {src};", f"setp.ne.b32 {name}, {name}_v, 0;"]
            elif variant == "lane":
                code.append(f"ld.global.{rt} {name}, [%g+{8 * pk}];")
            else:
                code.append(f"ld.param.{rt} {name}, [p{pk}];")
            srcs.append(name)
        dsts = []
        for k, t in enumerate(form.dsts):
            name = f"%d{i}_{k}"
            decl.append(f".reg .{t} {name};")
            dsts.append(name)
        if "{" in form.text:
            code.append(form.text.format(**{f"d{k}": d for k, d in enumerate(dsts)},
                                         **{f"s{k}": s for k, s in enumerate(srcs)}) + ";")
        else:
            code.append(f"{form.text} {', '.join([*dsts, *srcs])};")
        for k, t in enumerate(form.dsts):
            where = f"[%o+{slot * 8 * LANES}]"
            if t == P:
                code += [f"selp.b32 %w, 1, 0, %d{i}_{k};", f"st.global.b32 {where}, %w;"]
            else:
                code.append(f"st.global.{t} {where}, %d{i}_{k};")
            slot += 1
    text = PTX_HEAD + f".visible .entry k({', '.join(params)})\n{{\n" + "\n".join([*decl, *code, "ret;"]) + "\n}\n"
    return text, values


def run_forms(forms: list[Form], variant: str) -> np.ndarray:
    """(destinations, LANES) uint64: each destination's bits per lane (a fresh launch)."""
    text, values = kernel_text(forms, variant)
    nd = sum(len(f.dsts) for f in forms)
    out = cuda.zeros(max(nd, 1) * LANES, np.uint64)
    vals = cuda.to_device(np.array(values or [0], dtype=np.uint64))
    args = (out, vals, *(np.uint64(v) for v in values))
    cuda.Module.from_ptx(text).get_function("k")((1,), (LANES,), args).wait()
    return out.get().reshape(max(nd, 1), LANES)[:nd]


def is_typed(e: BaseException) -> bool:
    """strata's own errors (CudaError, PTXSyntaxError, UnsupportedInstruction, ...) name what went wrong."""
    return type(e).__module__.startswith("strata.")


def test_every_registered_opcode_has_a_uniform_form():
    covered = {op for f in FORMS for op in f.opcodes} | set(NO_VALUE_OPERANDS) | MEMORY_OPCODES
    missing = sorted(set(REGISTRY) - covered)
    assert not missing, f"opcodes without a uniform-operand form in this test: {missing}"


def _check(form: Form, lane: np.ndarray) -> list[str]:
    problems = []
    for variant in ("param", "imm"):
        try:
            got = run_forms([form], variant)
        except Exception as e:  # noqa: BLE001  (the point: which exceptions escape)
            cuda.current_device().reset()
            if is_typed(e) and variant == "imm":
                continue  # a form PTX only allows with register operands
            problems.append(f"{form.text} [{variant}]: {type(e).__name__}: {e}")
            continue
        if not np.array_equal(got, lane):
            problems.append(f"{form.text} [{variant}]: {got[:, 0].tolist()} != per-lane {lane[:, 0].tolist()}")
    return problems


def test_uniform_operands_match_per_lane_operands_for_every_family():
    lane = run_forms(FORMS, "lane")  # the oracle: every source a lane array
    # per-lane results agree across lanes (same values everywhere), except ops that read the lane
    problems: list[str] = []
    for variant in ("param", "imm"):
        try:
            got = run_forms(FORMS, variant)
        except Exception:  # noqa: BLE001  (find the forms that fail, one at a time, below)
            cuda.current_device().reset()
            got = None
        if got is not None and np.array_equal(got, lane):
            continue
        row = 0
        for form in FORMS:
            nd = len(form.dsts)
            one = lane[row: row + nd]
            if got is None or not np.array_equal(got[row: row + nd], one):
                problems += [p for p in _check(form, one) if f"[{variant}]" in p]
            row += nd
    assert not problems, "\n".join(problems)


# -- memory, atomics, address and tensor-core ops: uniform addresses and values ----------------------
MEMORY_BODY = r"""
    .reg .b32 %x<12>, %v, %cmp, %sa, %st;
    .reg .b64 %a, %ga, %y;
    .reg .pred %p;
    .shared .align 16 .b8 smem[512];
    {LOAD}
    ld.global.u32 %x0, [%a+4];
    ldu.global.u32 %x1, [%a+8];
    st.global.u32 [%a+12], %v;
    atom.global.add.u32 %x2, [%a+16], %v;
    red.global.add.u32 [%a+20], %v;
    atom.global.cas.b32 %x3, [%a+24], %cmp, %v;
    atom.global.max.s32 %x4, [%a+28], %v;
    prefetch.global.L2 [%a];
    isspacep.global %p, %a;
    selp.b32 %x5, 1, 0, %p;
    cvta.global.u64 %ga, %a;
    ld.u32 %x6, [%ga+4];
    st.shared.u32 [%sa+64], %v;
    bar.sync 0;
    ld.shared.u32 %x7, [%sa+64];
    cp.async.ca.shared.global [%sa+128], [%a+4], 4;
    cp.async.wait_all;
    bar.sync 0;
    ld.shared.u32 %x8, [%sa+128];
    atom.shared.add.u32 %x9, [%sa+192], %v;
    ld.global.v2.u32 {%x10, %x11}, [%a+32];
    st.global.u32 [%o], %x0;
    st.global.u32 [%o+320], %x1;
    st.global.u32 [%o+640], %x2;
    st.global.u32 [%o+960], %x3;
    st.global.u32 [%o+1280], %x4;
    st.global.u32 [%o+1600], %x5;
    st.global.u32 [%o+1920], %x6;
    st.global.u32 [%o+2240], %x7;
    st.global.u32 [%o+2560], %x8;
    st.global.u32 [%o+2880], %x9;
    st.global.u32 [%o+3200], %x10;
    st.global.u32 [%o+3520], %x11;
"""
UNIFORM_LOAD = """ld.param.u64 %a, [buf]; cvta.to.global.u64 %a, %a; ld.param.u32 %v, [val]; ld.param.u32 %cmp, [cmpv];
    mov.u32 %sa, smem;"""
LANE_LOAD = """ld.param.u64 %y, [buf]; cvta.to.global.u64 %y, %y; ld.global.u64 %a, [%y+40];
    ld.global.u32 %v, [%y+48]; ld.global.u32 %cmp, [%y+52]; mov.u32 %sa, smem; ld.global.u32 %st, [%y+56];
    add.u32 %sa, %sa, %st;"""


def test_memory_families_with_uniform_addresses_and_values():
    results = []
    for load in (UNIFORM_LOAD, LANE_LOAD):
        text = PTX_HEAD + """.visible .entry k(.param .u64 out, .param .u64 buf, .param .u32 val, .param .u32 cmpv)
{
    .reg .b32 %tid;
    .reg .b64 %out, %o, %off;
    mov.u32 %tid, %tid.x;
    ld.param.u64 %out, [out];
    cvta.to.global.u64 %out, %out;
    mul.wide.u32 %off, %tid, 8;
    add.s64 %o, %out, %off;
""" + MEMORY_BODY.replace("{LOAD}", load) + "ret;\n}\n"
        buf = cuda.zeros(8, np.uint64)
        init = np.zeros(16, np.uint32)
        init[1:10] = [11, 12, 0, 5, 0, 7, 3, 21, 22]
        host = init.view(np.uint64).copy()
        host[5] = buf.ptr  # the lane variant loads the address, value and compare value from here
        host[6] = 7 | (7 << 32)
        host[7] = 0
        buf.set(host)
        out = cuda.zeros(12 * LANES, np.uint64)
        cuda.Module.from_ptx(text).get_function("k")((1,), (LANES,), (out, buf, np.uint32(7), np.uint32(7))).wait()
        results.append((out.get().reshape(12, LANES), buf.get()[:5]))
    (u_out, u_mem), (l_out, l_mem) = results
    np.testing.assert_array_equal(u_out, l_out)
    np.testing.assert_array_equal(u_mem, l_mem)
    assert (l_out[0] == 11).all() and (l_out[5] == 1).all()  # the loads read what is there; isspacep
    assert sorted(l_out[2].tolist()) == [5 + 7 * k for k in range(LANES)]  # each atomic add saw a distinct old


def test_tensor_core_families_with_uniform_fragments():
    """mma/wmma/ldmatrix/stmatrix/movmatrix take register fragments (per lane by construction) and
    addresses: uniform addresses and strides from parameters against the same ones loaded per lane."""
    results = []
    for uniform in (True, False):
        get = ("ld.param.u64 %a, [buf]; cvta.to.global.u64 %a, %a; ld.param.u32 %s, [stride];" if uniform else
               "ld.param.u64 %y, [buf]; cvta.to.global.u64 %y, %y; ld.global.u64 %a, [%y+512]; "
               "ld.global.u32 %s, [%y+520];")
        text = PTX_HEAD + """.visible .entry k(.param .u64 out, .param .u64 buf, .param .u32 stride)
{
    .reg .b32 %tid, %s, %sa, %f<8>, %b<4>, %c<4>, %m<4>, %t;
    .reg .f32 %d<4>;
    .reg .b64 %out, %o, %off, %a, %y;
    .shared .align 16 .b8 smem[512];
    mov.u32 %tid, %tid.x;
    ld.param.u64 %out, [out];
    cvta.to.global.u64 %out, %out;
    mul.wide.u32 %off, %tid, 8;
    add.s64 %o, %out, %off;
    """ + get + """
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7}, [%a], %s;
    mov.u32 %sa, smem;
    mul.lo.u32 %t, %tid, 16;
    add.u32 %t, %sa, %t;
    st.shared.v4.b32 [%t], {%f0, %f1, %f2, %f3};
    bar.warp.sync -1;
    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%m0, %m1, %m2, %m3}, [%t];
    movmatrix.sync.aligned.m8n8.trans.b16 %c0, %m0;
    mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%d0, %d1, %d2, %d3}, {%f0, %f1, %f2, %f3}, {%m0, %m1},
        {%d0, %d1, %d2, %d3};
    stmatrix.sync.aligned.m8n8.x1.shared.b16 [%t], {%c0};
    st.global.b32 [%o], %m1;
    st.global.b32 [%o+256], %c0;
    st.global.f32 [%o+512], %d0;
    st.global.f32 [%o+768], %d3;
    ret;
}
"""
        host = np.zeros(72, np.uint64)
        halves = (np.arange(256, dtype=np.float32) / 64).astype(np.float16).view(np.uint16)
        host[:64] = halves.view(np.uint64)
        buf = cuda.zeros(72, np.uint64)
        host[64] = buf.ptr
        host[65] = 16
        buf.set(host)
        out = cuda.zeros(4 * 32, np.uint64)
        try:
            cuda.Module.from_ptx(text).get_function("k")((1,), (32,), (out, buf, np.uint32(16))).wait()
        except Exception as e:
            cuda.current_device().reset()
            assert is_typed(e), f"untyped {type(e).__name__}: {e}"
            raise
        results.append(out.get())
    np.testing.assert_array_equal(results[0], results[1])
