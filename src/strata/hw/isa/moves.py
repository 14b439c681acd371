"""Semantics of `mov`: copies between registers, constants, special registers and addresses,
and the vector forms that pack and unpack register halves (`mov.b64 %rd, {%r1, %r2}`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.hw.isa.registry import Op, lowers, split_mods, write
from strata.hw.ptx.ir import Reg, Sink, Vec

DYNAMIC_SPECIALS = ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi")
_HALF = {"b32": ("b16", 16, np.uint32), "b64": ("b32", 32, np.uint64), "b16": ("b8", 8, np.uint16)}


@lowers("mov")
def lower_mov(ins: Any, ctx: Any) -> Op:
    _, types = split_mods(ins.mods)
    if "b128" in ins.mods:  # registers are at most 64 bits wide here (see jit.LoweringContext._declare)
        raise ctx.unsupported()
    if len(types) != 1 or len(ins.operands) != 2:
        raise ctx.fail(f"{ins.full_opcode} needs one type and two operands")
    t = types[0]
    dst_op, src_op = ins.operands
    if isinstance(src_op, Vec):
        return _pack(ctx, t, dst_op, src_op)
    if isinstance(dst_op, Vec):
        return _unpack(ctx, t, dst_op, src_op)
    d = ctx.dst(dst_op, t)
    if isinstance(src_op, Reg) and src_op.name in DYNAMIC_SPECIALS:
        name = src_op.name
        pos = getattr(ctx, "block_pos", 0)  # the block's instructions issued before this read

        def run_clock(f: Any, m: Any) -> None:
            warps = f.chunk.count(m)[1] if pos else 0
            write(f.V[d], f.chunk.clock(name, pos * warps), m)

        return Op(run_clock, "integer")
    a = ctx.src(src_op, t)

    def run(f: Any, m: Any) -> None:
        V = f.V
        write(V[d], V[a], m)

    return Op(run, "integer")


def _pack(ctx: Any, t: str, dst_op: Any, vec: Vec) -> Op:
    if t not in _HALF:
        raise ctx.unsupported()
    part_t, bits, wide = _HALF[t]
    n = len(vec.elems)
    if n * bits != int(t[1:]):
        if t == "b64" and n == 4:
            part_t, bits = "b16", 16
        else:
            raise ctx.fail(f"mov.{t} cannot pack {n} elements")
    d = ctx.dst(dst_op, t)
    srcs = [ctx.src(e, part_t) for e in vec.elems]
    shifts = [wide(bits * i) for i in range(len(srcs))]

    def run(f: Any, m: Any) -> None:
        V = f.V
        acc = np.asarray(V[srcs[0]]).astype(wide)
        for s, sh in zip(srcs[1:], shifts[1:], strict=True):
            acc = acc | (np.asarray(V[s]).astype(wide) << sh)
        write(V[d], acc, m)

    return Op(run, "integer")


def _unpack(ctx: Any, t: str, vec: Vec, src_op: Any) -> Op:
    if t not in _HALF:
        raise ctx.unsupported()
    part_t, bits, wide = _HALF[t]
    n = len(vec.elems)
    if n * bits != int(t[1:]):
        if t == "b64" and n == 4:
            part_t, bits = "b16", 16
        else:
            raise ctx.fail(f"mov.{t} cannot unpack into {n} elements")
    a = ctx.src(src_op, t)
    outs = [(None if isinstance(e, Sink) else ctx.dst(e, part_t), wide(bits * i))
            for i, e in enumerate(vec.elems)]
    mask = wide((1 << bits) - 1)

    def run(f: Any, m: Any) -> None:
        V = f.V
        v = V[a]
        for d, sh in outs:
            if d is not None:
                write(V[d], (v >> sh) & mask, m)

    return Op(run, "integer")
