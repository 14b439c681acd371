"""Native warp votes and reductions: `vote` (.all .any .uni .ballot, with or without .sync), `activemask`,
`match.any/.all.sync` and `redux.sync` (.add .min .max on .u32/.s32, .and .or .xor on .b32), with the
reference's semantics (hw/isa/warp.py).

As there: the lanes that execute the instruction (the chunk's mask and the guard) are the ones that
arrived; a lane takes part when it executes and its own membermask names it; each lane's result is over
`g = ballot(participants) & its own membermask` (converged lanes may pass different masks). Results are
written for every executing lane. Like `shfl` (codegen._shfl), each of these is emitted warp by warp: a
first pass over the warp's 32 lanes gathers the participants, the votes and the operand values, then a
second pass computes and writes each executing lane's result, so a destination that is also the source
never feeds a later lane. A source register the reference keeps as a uniform scalar gives every lane the
reading lane's own value, as the scalar does there.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.native import codegen_int
from strata.hw.ptx.ir import Instruction, Pair, Reg, Sink

I1, I32, I64 = ir.IntType(1), ir.IntType(32), ir.IntType(64)
FULL = 0xFFFFFFFF
_REDUX = {"add": ("u32", "s32"), "min": ("u32", "s32"), "max": ("u32", "s32"), "and": ("b32",), "or": ("b32",),
          "xor": ("b32",)}
OPCODES = frozenset({"vote", "activemask", "match", "redux"})


def emit(g: Any, k: int, ins: Instruction) -> None:
    """The warp instruction at op k of the block being emitted by codegen.KernelCodegen `g`."""
    from strata.hw.native.codegen import _flags, _types  # (codegen imports this module)

    g.k, g.ins = k, ins
    flags, types = _flags(ins), _types(ins)
    ops = list(ins.operands)
    if ins.opcode == "activemask":
        if types != ["b32"] or flags or len(ops) != 1:
            raise g.fail()
        _warp_op(g, ins, None, None, "activemask", ops[0], None)
        return
    if ins.opcode == "vote":
        modes = [x for x in flags if x in ("all", "any", "uni", "ballot")]
        if len(modes) != 1 or set(flags) - {modes[0], "sync"}:
            raise g.fail()
        mode = modes[0]
        nops = 3 if "sync" in flags else 2
        if types != (["b32"] if mode == "ballot" else ["pred"]) or len(ops) != nops or not isinstance(ops[1], Reg):
            raise g.fail()
        _warp_op(g, ins, ops[1], ops[2] if nops == 3 else None, mode, ops[0], None)
        return
    if ins.opcode == "match":
        modes = [x for x in flags if x in ("any", "all")]
        if len(modes) != 1 or set(flags) != {modes[0], "sync"} or types != ["b32"] or len(ops) != 3:
            raise g.fail()  # (b64 runs on the reference)
        d_op, p_op = (ops[0].first, ops[0].second) if isinstance(ops[0], Pair) else (ops[0], None)
        if p_op is not None and modes[0] == "any":
            raise g.fail()
        _warp_op(g, ins, ops[1], ops[2], "match_" + modes[0], d_op, p_op)
        return
    if ins.opcode == "redux":
        names = [x for x in flags if x in _REDUX]
        if len(names) != 1 or set(flags) != {names[0], "sync"} or len(types) != 1 or \
                types[0] not in _REDUX[names[0]] or len(ops) != 3:
            raise g.fail()
        _warp_op(g, ins, ops[1], ops[2], "redux_" + names[0], ops[0], None, types[0])
        return
    raise g.fail()


def _warp_op(g: Any, ins: Instruction, a_op: Any, m_op: Any, mode: str, d_op: Any, p_op: Any,
             t: str = "b32") -> None:
    bld = g.bld
    g.seg_local = set()
    g.seg_vals = None
    g.cur_guard = None
    if isinstance(a_op, Reg) and a_op.name not in g.fn.regs:
        raise g.fail("source operand")
    scalar = isinstance(a_op, Reg) and a_op.name in g._scalar_registers()
    vals = g.entry_alloca(I32, 32)  # the warp's operand values (match, redux)
    voters_p, votes_p = g.entry_alloca(I32), g.entry_alloca(I32)
    c32 = ir.Constant(I64, 32)
    one = ir.Constant(I32, 1)
    zero = ir.Constant(I32, 0)
    is_vote = mode in ("all", "any", "uni", "ballot")

    def member(i: ir.Value) -> ir.Value:
        return ir.Constant(I32, FULL) if m_op is None else g.read(m_op, "b32", i)

    def warp(w: ir.Value) -> None:
        bld.store(zero, voters_p)
        bld.store(zero, votes_p)

        def gather(j: ir.Value) -> None:
            i = bld.add(bld.mul(w, c32), j)
            bit = bld.shl(one, bld.trunc(j, I32))
            with bld.if_then(g.active(i, ins.guard)):
                g.i = i
                part = bld.icmp_unsigned("!=", bld.and_(member(i), bit), zero)
                bld.store(bld.or_(bld.load(voters_p), bld.select(part, bit, zero)), voters_p)
                if is_vote:
                    p = g.read(a_op, "pred", i)  # (a negated operand reads its complement)
                    bld.store(bld.or_(bld.load(votes_p), bld.select(bld.and_(part, p), bit, zero)), votes_p)
            if not is_vote and mode != "activemask" and not scalar:
                bld.store(g.read(a_op, t, i), bld.gep(vals, [j]))
        g._count_loop(c32, gather)

        def lane(j: ir.Value) -> None:
            i = bld.add(bld.mul(w, c32), j)
            with bld.if_then(g.active(i, ins.guard)):
                g.i = i
                voters = bld.load(voters_p)
                if mode == "activemask":
                    _write(g, d_op, "b32", _executing(g, w), i)
                    return
                grp = bld.and_(voters, member(i))
                if is_vote:
                    yes = bld.and_(bld.load(votes_p), grp)
                    if mode == "ballot":
                        _write(g, d_op, "b32", yes, i)
                    elif mode == "any":
                        _write(g, d_op, "pred", bld.icmp_unsigned("!=", yes, zero), i)
                    elif mode == "all":
                        _write(g, d_op, "pred", bld.icmp_unsigned("==", yes, grp), i)
                    else:
                        uni = bld.or_(bld.icmp_unsigned("==", yes, zero), bld.icmp_unsigned("==", yes, grp))
                        _write(g, d_op, "pred", uni, i)
                    return
                mine = g.read(a_op, t, i) if scalar else bld.load(bld.gep(vals, [j]))
                if mode.startswith("match"):
                    hits = _fold(g, grp, vals, scalar, mine, zero,
                                 lambda acc, v, b: bld.select(bld.icmp_unsigned("==", v, mine), bld.or_(acc, b), acc))
                    if mode == "match_any":
                        _write(g, d_op, "b32", hits, i)
                        return
                    uniform = bld.icmp_unsigned("==", hits, grp)
                    _write(g, d_op, "b32", bld.select(uniform, grp, zero), i)
                    if p_op is not None:
                        _write(g, p_op, "pred", uniform, i)
                    return
                _write(g, d_op, t, _redux(g, mode[6:], t, grp, vals, scalar, mine), i)
        g._count_loop(c32, lane)
    g._count_loop(bld.sdiv(g.n_arg, c32), warp)


def _executing(g: Any, w: ir.Value) -> ir.Value:
    """activemask: bit j set when lane j of warp w executes (mask and guard)."""
    bld = g.bld
    acc = g.entry_alloca(I32)
    bld.store(ir.Constant(I32, 0), acc)

    def step(j: ir.Value) -> None:
        i = bld.add(bld.mul(w, ir.Constant(I64, 32)), j)
        bit = bld.shl(ir.Constant(I32, 1), bld.trunc(j, I32))
        bld.store(bld.or_(bld.load(acc), bld.select(g.active(i, g.ins.guard), bit, ir.Constant(I32, 0))), acc)
    g._count_loop(ir.Constant(I64, 32), step)
    return bld.load(acc)


def _fold(g: Any, grp: ir.Value, vals: ir.Value, scalar: bool, mine: ir.Value, init: ir.Value, step: Any) -> ir.Value:
    """acc = init; for each lane k of the warp in grp: acc = step(acc, value of k, 1 << k)."""
    bld = g.bld
    acc = g.entry_alloca(init.type)
    bld.store(init, acc)

    def body(k: ir.Value) -> None:
        bit = bld.shl(ir.Constant(I32, 1), bld.trunc(k, I32))
        with bld.if_then(bld.icmp_unsigned("!=", bld.and_(grp, bit), ir.Constant(I32, 0))):
            v = mine if scalar else bld.load(bld.gep(vals, [k]))
            bld.store(step(bld.load(acc), v, bit), acc)
    g._count_loop(ir.Constant(I64, 32), body)
    return bld.load(acc)


def _redux(g: Any, op: str, t: str, grp: ir.Value, vals: ir.Value, scalar: bool, mine: ir.Value) -> ir.Value:
    """The reduction over the lanes of grp (the operation's identity when empty); add wraps to 32 bits."""
    bld = g.bld
    signed = t == "s32"
    ident = {"add": 0, "and": FULL, "or": 0, "xor": 0, "min": 0x7FFFFFFF if signed else FULL,
             "max": 0x80000000 if signed else 0}[op]

    def step(acc: ir.Value, v: ir.Value, _bit: ir.Value) -> ir.Value:
        return codegen_int.combine(bld, op, acc, v, signed)
    return _fold(g, grp, vals, scalar, mine, ir.Constant(I32, ident), step)


def _write(g: Any, op: Any, t: str, v: ir.Value, i: ir.Value) -> None:
    if op is not None and not isinstance(op, Sink):
        g.write(op, t, v, i)
