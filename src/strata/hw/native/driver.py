"""The native driver: one compiled function that runs a kernel's blocks one after another, following
uniform control flow, so a chunk's whole straight-line and loop structure runs in one native call. It is
part of the runtime library (runtime.py), compiled once per process: a kernel is described to it by a table
of its blocks (`block_table`, in ctx), not by code of its own.

    i32 drive(i8** regs, i8* mask, i64 n, i64* ctx, i64* st)

runs for the reconvergence stack's only entry (every live lane of the chunk, `mask`), starting at block
`st[ST_PC]`. Each block runs its native body (codegen's `b<k>`), an empty body, or a `bar.sync` that
completes at once (every live lane of each block is in the one entry, and no lane waits elsewhere);
then the driver does what the reference engine's loop (`engine.run_frame`) does after a block: the
per-block instruction accumulators, the executed-instruction and cycle counts, the poll countdown, and
the terminator. A fall-through, an unconditional branch and a conditional branch whose active lanes
all agree stay in the driver; everything else returns to Python, which runs the reference machinery
from exactly that point:

- R_DONE: the entry reached EXIT (st[ST_PC] = EXIT);
- R_PY: block st[ST_PC] is not the driver's (run it whole in Python);
- R_TERM: block st[ST_PC] ran and was counted; Python polls (when due) and runs its terminator
  (a divergent branch, `ret`/`exit`, `brx`, or the poll countdown ran out);
- R_BAIL: block st[ST_PC]'s body handed over at its instruction st[ST_BAIL] - 1 (a failed memory
  check); Python runs the rest with the reference handlers, then counts, polls, and branches.

Counters the driver keeps (branches, barriers, per-block accumulators) are added to the launch's by
Python, so they are the reference's exactly: a conditional branch counts its warps once (uniform ones
here, divergent ones in `engine._branch`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.jit import EXIT, JitFunction

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
I8P, I64P = I8.as_pointer(), I64.as_pointer()

# st slots (an int64 array per worker, see executor)
ST_PC, ST_TC, ST_WC, ST_EXECUTED, ST_CYCLES, ST_POLLS, ST_BUDGET = 0, 1, 2, 3, 4, 5, 6
ST_BRANCHES, ST_BARRIERS, ST_BAR_BLOCKS, ST_BAIL, ST_ACC_T, ST_ACC_W = 7, 8, 9, 10, 11, 12
ST_RPC, ST_DEEP = 13, 14  # the entry's reconvergence point; 1 when other entries are on the stack
ST_SIZE = 15
R_DONE, R_PY, R_TERM, R_BAIL, R_SPIN = 0, 1, 2, 3, 4


def guard_register(jf: JitFunction, slot: int) -> str | None:
    """The predicate register a branch's guard slot views (None: not a plain register view)."""
    if slot < 0 or slot >= len(jf.slots):
        return None
    s = jf.slots[slot]
    if s.kind != "view" or s.dtype.kind != "b" or s.key not in jf.reg_storage:
        return None
    return str(s.key)


def count_taken_helper(module: ir.Module) -> ir.Function:
    """i64 count_taken(i8* mask, i8* pred, i64 n, i8 neg): lanes with mask and (pred xor neg) set, one
    per module. 64 lanes a step: each byte array compared with zero as one 64-byte vector, the two
    64-bit masks combined and counted with a popcount (a plain loop keeps a vector of partial counts,
    several times slower); then the remaining lanes one by one."""
    f = module.globals.get("count_taken")
    if f is not None:
        return f
    f = ir.Function(module, ir.FunctionType(I64, [I8P, I8P, I64, I8]), name="count_taken")
    f.linkage = "internal"
    f.attributes.add("noinline")
    mask, pred, n, neg = f.args
    b = ir.IRBuilder(f.append_basic_block())
    v64 = ir.VectorType(I8, 64)
    zero64 = ir.Constant(v64, [0] * 64)
    ctpop = module.globals.get("llvm.ctpop.i64") or ir.Function(module, ir.FunctionType(I64, [I64]),
                                                                 name="llvm.ctpop.i64")
    flip = b.icmp_unsigned("!=", neg, ir.Constant(I8, 0))
    flip64 = b.select(flip, ir.Constant(I64, -1), ir.Constant(I64, 0))
    whole = b.and_(n, ir.Constant(I64, -64))
    pre = b.block
    vhead, vbody, thead, tbody, done = (f.append_basic_block() for _ in range(5))
    b.branch(vhead)
    b.position_at_end(vhead)
    i = b.phi(I64)
    cnt = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), pre)
    cnt.add_incoming(ir.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", i, whole), vbody, thead)
    b.position_at_end(vbody)

    def bits(arr: Any) -> Any:
        vec = b.load(b.bitcast(b.gep(arr, [i]), v64.as_pointer()), align=1)
        return b.bitcast(b.icmp_unsigned("!=", vec, zero64), I64)  # <64 x i1>: lane k is bit k

    both = b.and_(bits(mask), b.xor(bits(pred), flip64))
    cnt.add_incoming(b.add(cnt, b.call(ctpop, [both])), vbody)
    i.add_incoming(b.add(i, ir.Constant(I64, 64)), vbody)
    b.branch(vhead)
    b.position_at_end(thead)
    j = b.phi(I64)
    tcnt = b.phi(I64)
    j.add_incoming(i, vhead)
    tcnt.add_incoming(cnt, vhead)
    b.cbranch(b.icmp_signed("<", j, n), tbody, done)
    b.position_at_end(tbody)
    act = b.icmp_unsigned("!=", b.load(b.gep(mask, [j])), ir.Constant(I8, 0))
    pv = b.xor(b.icmp_unsigned("!=", b.load(b.gep(pred, [j])), ir.Constant(I8, 0)), flip)
    tcnt.add_incoming(b.add(tcnt, b.zext(b.and_(act, pv), I64)), tbody)
    j.add_incoming(b.add(j, ir.Constant(I64, 1)), tbody)
    b.branch(thead)
    b.position_at_end(done)
    b.ret(tcnt)
    return f


def after_block_helper(module: ir.Module) -> ir.Function:
    """i1 after_block(i64* st, i64 k, i64 ni): what engine.run_frame does after block k's ni instructions ran
    for the entry's lanes (st[ST_TC]) and warps (st[ST_WC]): the block's accumulators, the executed-instruction
    and cycle counts, the poll countdown; returns whether a poll is due (countdown out, or budget passed)."""
    f = module.globals.get("after_block")
    if f is not None:
        return f
    f = ir.Function(module, ir.FunctionType(I1, [I64P, I64, I64]), name="after_block")
    f.linkage = "internal"
    f.attributes.add("noinline")
    st, k, ni = f.args
    b = ir.IRBuilder(f.append_basic_block())

    def slot(j: int) -> Any:
        return b.gep(st, [ir.Constant(I64, j)])

    def bump(p: Any, v: Any) -> None:
        b.store(b.add(b.load(p), v), p)

    tc, wc = b.load(slot(ST_TC)), b.load(slot(ST_WC))
    bump(b.gep(b.inttoptr(b.load(slot(ST_ACC_T)), I64P), [k]), tc)
    bump(b.gep(b.inttoptr(b.load(slot(ST_ACC_W)), I64P), [k]), wc)
    executed = b.add(b.load(slot(ST_EXECUTED)), b.mul(ni, tc))
    b.store(executed, slot(ST_EXECUTED))
    bump(slot(ST_CYCLES), b.mul(ni, wc))
    polls = b.sub(b.load(slot(ST_POLLS)), ir.Constant(I64, 1))
    b.store(polls, slot(ST_POLLS))
    b.ret(b.or_(b.icmp_signed("<=", polls, ir.Constant(I64, 0)), b.icmp_signed(">", executed, b.load(slot(ST_BUDGET)))))
    return f


# The block table (`block_table`): a header slot (the number of blocks), then one record of REC int64 per block.
REC = 8
B_FN, B_FLAGS, B_NI, B_TERM, B_TARGET, B_NEXT, B_GUARD, B_NEG = range(REC)
F_DRIVEABLE, F_BARRIER = 1, 2  # B_FLAGS bits
T_FALL, T_GOTO, T_COND, T_PY = 0, 1, 2, 3  # B_TERM: fall through, unconditional bra, guarded bra, Python's


def block_table(jf: JitFunction, addresses: dict[int, int], barriers: frozenset[int] | set[int],
                reg_index: dict[str, int]) -> np.ndarray:
    """The kernel's blocks as the runtime library's `drive` reads them (ctx's CTX_BLOCKS): per block its native
    body's address (`addresses`, 0 for none), whether the driver runs it (a native body, a barrier or no ops) or
    a barrier, its instruction count, and its terminator (kind, target, fall-through block, guard register's
    index in the register table, negated). What each kernel's own `drive` function used to have as code: the
    driver is now compiled once per process (runtime.py) instead of once per kernel, which cost a fifth to a
    third of a kernel's compile time (a switch over every block, and each block's terminator)."""
    blocks = jf.blocks
    t = np.zeros(1 + REC * len(blocks), dtype=np.int64)
    t[0] = len(blocks)
    for k, blk in enumerate(blocks):
        r = t[1 + REC * k: 1 + REC * (k + 1)]
        fn = addresses.get(k, 0)
        r[B_FN] = fn
        r[B_FLAGS] = (F_DRIVEABLE if fn or k in barriers or not blk.ops else 0) | (F_BARRIER if k in barriers else 0)
        r[B_NI] = blk.n_instructions
        r[B_NEXT] = k + 1 if k + 1 < len(blocks) else EXIT
        r[B_TARGET] = blk.target if blk.term == "bra" else 0
        reg = guard_register(jf, blk.guard) if blk.term == "bra" and blk.guard >= 0 else None
        if blk.term == "fall":
            r[B_TERM] = T_FALL
        elif blk.term == "bra" and blk.guard < 0:
            r[B_TERM] = T_GOTO
        elif blk.term == "bra" and reg is not None:
            r[B_TERM], r[B_GUARD], r[B_NEG] = T_COND, reg_index[reg], int(bool(blk.guard_neg))
        else:  # ret, exit, brx, a guard that is not a plain register: the reference's
            r[B_TERM] = T_PY
    return t


def drive_helper(module: ir.Module, ctx_blocks: int) -> ir.Function:
    """`i32 drive(regs, mask, n, ctx, st)` for every kernel: the loop of the module docstring over the block table
    at ctx[ctx_blocks] (`block_table`), calling each block's native body through its address."""
    block_ty = ir.FunctionType(I32, [I8P.as_pointer(), I8P, I64, I64P])
    f = ir.Function(module, ir.FunctionType(I32, [I8P.as_pointer(), I8P, I64, I64P, I64P]), name="drive")
    regs, mask, n, ctx, st = f.args
    for a in (regs, mask, ctx, st):
        a.add_attribute("noalias")
    names = ("entry", "loop", "look", "run", "body", "bail", "nofn", "barrier", "bar_py", "bar_here", "after",
             "poll", "term", "goto", "cond", "split", "all", "none", "div", "go", "done", "more", "spin", "to_py",
             "py_term")
    bb = {name: f.append_basic_block(name) for name in names}
    b = ir.IRBuilder(bb["entry"])

    def c64(v: int) -> Any:
        return ir.Constant(I64, v)

    def slot(k: int) -> Any:
        return b.gep(st, [c64(k)])

    def leave(code: int, pc: Any) -> None:
        b.store(pc, slot(ST_PC))
        b.ret(ir.Constant(I32, code))

    def bump(p: Any, v: Any) -> None:
        b.store(b.add(b.load(p), v), p)

    pc_p = b.alloca(I64)
    b.store(b.load(slot(ST_PC)), pc_p)
    tc, wc = b.load(slot(ST_TC)), b.load(slot(ST_WC))
    rpc = b.load(slot(ST_RPC))
    deep = b.icmp_signed("!=", b.load(slot(ST_DEEP)), c64(0))
    table = b.inttoptr(b.load(b.gep(ctx, [c64(ctx_blocks)])), I64P)
    nblocks = b.load(table)
    b.branch(bb["loop"])

    b.position_at_end(bb["loop"])
    pc = b.load(pc_p)
    b.cbranch(b.icmp_unsigned("<", pc, nblocks), bb["look"], bb["to_py"])  # (EXIT is -1: not a block)
    b.position_at_end(bb["look"])
    rec = b.gep(table, [b.add(c64(1), b.mul(pc, c64(REC)))])

    def field(k: int) -> Any:
        return b.load(b.gep(rec, [c64(k)]))

    flags = field(B_FLAGS)
    driveable = b.icmp_unsigned("!=", b.and_(flags, c64(F_DRIVEABLE)), c64(0))
    b.cbranch(driveable, bb["run"], bb["to_py"])
    b.position_at_end(bb["run"])
    fn = field(B_FN)
    b.cbranch(b.icmp_unsigned("!=", fn, c64(0)), bb["body"], bb["nofn"])
    b.position_at_end(bb["body"])
    rc = b.call(b.inttoptr(fn, block_ty.as_pointer()), [regs, mask, n, ctx])
    b.cbranch(b.icmp_unsigned("!=", rc, ir.Constant(I32, 0)), bb["bail"], bb["after"])
    b.position_at_end(bb["bail"])
    b.store(b.sext(rc, I64), slot(ST_BAIL))
    leave(R_BAIL, pc)
    b.position_at_end(bb["nofn"])
    barrier = b.icmp_unsigned("!=", b.and_(flags, c64(F_BARRIER)), c64(0))
    b.cbranch(barrier, bb["barrier"], bb["after"])
    b.position_at_end(bb["barrier"])  # completes at once when every live lane of each block is here (the only entry)
    b.cbranch(deep, bb["bar_py"], bb["bar_here"])
    b.position_at_end(bb["bar_py"])
    leave(R_PY, pc)  # other paths hold lanes: the reference's barrier parks and releases them
    b.position_at_end(bb["bar_here"])
    bump(slot(ST_BARRIERS), b.load(slot(ST_BAR_BLOCKS)))
    b.branch(bb["after"])

    # what engine.run_frame does after a block's ops
    b.position_at_end(bb["after"])
    due = b.call(after_block_helper(module), [st, pc, field(B_NI)])
    b.cbranch(due, bb["poll"], bb["term"])
    b.position_at_end(bb["poll"])
    leave(R_TERM, pc)
    b.position_at_end(bb["term"])
    nxt, target = field(B_NEXT), field(B_TARGET)
    back_target = b.icmp_signed("<=", target, pc)  # (a jump back: to a loop head)
    sw = b.switch(field(B_TERM), bb["py_term"])
    sw.add_case(ir.Constant(I64, T_GOTO), bb["goto"])
    sw.add_case(ir.Constant(I64, T_COND), bb["cond"])
    sw.add_case(ir.Constant(I64, T_FALL), bb["go"])
    b.position_at_end(bb["py_term"])  # ret, exit, brx: the reference's
    leave(R_TERM, pc)
    b.position_at_end(bb["goto"])
    b.branch(bb["go"])
    b.position_at_end(bb["cond"])  # the active lanes that take the branch
    p = b.load(b.gep(regs, [field(B_GUARD)]))
    taken = b.call(count_taken_helper(module), [mask, p, n, b.trunc(field(B_NEG), I8)])
    sw2 = b.switch(taken, bb["split"])
    sw2.add_case(ir.Constant(I64, 0), bb["none"])
    b.position_at_end(bb["split"])
    b.cbranch(b.icmp_signed("==", taken, tc), bb["all"], bb["div"])
    b.position_at_end(bb["div"])
    leave(R_TERM, pc)  # divergent: engine._branch splits the entry (and counts the branch)
    b.position_at_end(bb["all"])
    bump(slot(ST_BRANCHES), wc)
    b.branch(bb["go"])
    b.position_at_end(bb["none"])
    bump(slot(ST_BRANCHES), wc)
    b.branch(bb["go"])

    # Continue at dest: out at the entry's reconvergence point (or EXIT); a jump back to a loop head while other
    # paths wait goes through the reference's scheduler (engine._spin)
    b.position_at_end(bb["go"])
    dest = b.phi(I64)
    for src, v in (("term", nxt), ("goto", target), ("all", target), ("none", nxt)):
        dest.add_incoming(v, bb[src])
    back = b.phi(I1)
    for src, v in (("term", ir.Constant(I1, 0)), ("goto", back_target), ("all", back_target),
                   ("none", ir.Constant(I1, 0))):
        back.add_incoming(v, bb[src])
    b.store(dest, pc_p)
    at_end = b.or_(b.icmp_signed("==", dest, c64(EXIT)), b.icmp_signed("==", dest, rpc))
    b.cbranch(at_end, bb["done"], bb["more"])
    b.position_at_end(bb["done"])
    leave(R_DONE, dest)
    b.position_at_end(bb["more"])
    b.cbranch(b.and_(back, deep), bb["spin"], bb["loop"])
    b.position_at_end(bb["spin"])
    leave(R_SPIN, dest)

    b.position_at_end(bb["to_py"])
    leave(R_PY, b.load(pc_p))
    return f
