"""The native driver: one compiled function that runs a kernel's blocks one after another, following
uniform control flow, so a chunk's whole straight-line and loop structure runs in one native call.

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


def emit(module: ir.Module, jf: JitFunction, native: list[int], barriers: list[int],
         reg_index: dict[str, int]) -> None:
    """Add `drive` to `module` (which holds the native blocks `b<k>` for k in `native`)."""
    fns = {b: module.get_global(f"b{b}") for b in native}
    for f in fns.values():
        f.attributes.add("noinline")  # one copy of each block: compile time stays linear in the kernel
    f = ir.Function(module, ir.FunctionType(I32, [I8P.as_pointer(), I8P, I64, I64P, I64P]), name="drive")
    regs, mask, n, ctx, st = f.args
    for a in (regs, mask, ctx, st):
        a.add_attribute("noalias")
    entry = f.append_basic_block("entry")
    b = ir.IRBuilder(entry)

    def slot(k: int) -> Any:
        return b.gep(st, [ir.Constant(I64, k)])

    pc_p = b.alloca(I64)
    b.store(b.load(slot(ST_PC)), pc_p)
    tc, wc = b.load(slot(ST_TC)), b.load(slot(ST_WC))
    rpc = b.load(slot(ST_RPC))
    deep = b.icmp_signed("!=", b.load(slot(ST_DEEP)), ir.Constant(I64, 0))
    loop = f.append_basic_block("loop")
    to_py = f.append_basic_block("to_py")
    b.branch(loop)

    def leave(code: int, pc: Any) -> None:
        b.store(pc, slot(ST_PC))
        b.ret(ir.Constant(I32, code))

    b.position_at_end(to_py)
    leave(R_PY, b.load(pc_p))

    b.position_at_end(loop)
    pc = b.load(pc_p)
    blocks = jf.blocks
    driveable = [k for k, blk in enumerate(blocks) if k in fns or k in barriers or not blk.ops]
    sw = b.switch(pc, to_py)
    for k in driveable:
        bb = f.append_basic_block(f"blk{k}")
        sw.add_case(ir.Constant(I64, k), bb)
        b.position_at_end(bb)
        _block(b, f, k, jf, fns.get(k), k in barriers, regs, mask, n, ctx, slot, pc_p, tc, wc, loop, reg_index,
               rpc, deep)


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


def _block(b: ir.IRBuilder, f: ir.Function, k: int, jf: JitFunction, fn: Any, barrier: bool, regs: Any, mask: Any,
           n: Any, ctx: Any, slot: Any, pc_p: Any, tc: Any, wc: Any, loop: ir.Block, reg_index: dict[str, int],
           rpc: Any, deep: Any) -> None:
    blk = jf.blocks[k]
    kc = ir.Constant(I64, k)

    def leave(code: int, pc: Any) -> None:
        b.store(pc, slot(ST_PC))
        b.ret(ir.Constant(I32, code))

    def bump(p: Any, v: Any) -> None:
        b.store(b.add(b.load(p), v), p)

    if fn is not None:
        rc = b.call(fn, [regs, mask, n, ctx])
        bail, ok = f.append_basic_block(f"bail{k}"), f.append_basic_block(f"ran{k}")
        b.cbranch(b.icmp_unsigned("!=", rc, ir.Constant(I32, 0)), bail, ok)
        b.position_at_end(bail)
        b.store(b.sext(rc, I64), slot(ST_BAIL))
        leave(R_BAIL, kc)
        b.position_at_end(ok)
    elif barrier:  # completes at once when every live lane of each block is here (the only entry)
        py, here = f.append_basic_block(f"bar_py{k}"), f.append_basic_block(f"bar{k}")
        b.cbranch(deep, py, here)
        b.position_at_end(py)
        leave(R_PY, kc)  # other paths hold lanes: the reference's barrier parks and releases them
        b.position_at_end(here)
        bump(slot(ST_BARRIERS), b.load(slot(ST_BAR_BLOCKS)))
    # what engine.run_frame does after a block's ops (one function per module: small IR per block)
    due = b.call(after_block_helper(f.module), [f.args[4], kc, ir.Constant(I64, blk.n_instructions)])
    poll, term = f.append_basic_block(f"poll{k}"), f.append_basic_block(f"term{k}")
    b.cbranch(due, poll, term)
    b.position_at_end(poll)
    leave(R_TERM, kc)
    b.position_at_end(term)
    nxt = k + 1 if k + 1 < len(jf.blocks) else EXIT

    def go(dest: Any, backward: bool = False) -> None:
        """Continue at `dest`: out at the entry's reconvergence point (or EXIT); a jump back to a loop head
        while other paths wait goes through the reference's scheduler (engine._spin)."""
        b.store(dest, pc_p)
        done, more = f.append_basic_block(), f.append_basic_block()
        at_end = b.or_(b.icmp_signed("==", dest, ir.Constant(I64, EXIT)), b.icmp_signed("==", dest, rpc))
        b.cbranch(at_end, done, more)
        b.position_at_end(done)
        leave(R_DONE, dest)
        b.position_at_end(more)
        if backward:
            spin, on = f.append_basic_block(), f.append_basic_block()
            b.cbranch(deep, spin, on)
            b.position_at_end(spin)
            leave(R_SPIN, dest)
            b.position_at_end(on)
        b.branch(loop)

    if blk.term == "fall":
        go(ir.Constant(I64, nxt))
        return
    if blk.term != "bra":  # ret, exit, brx: the reference's
        leave(R_TERM, kc)
        return
    if blk.guard < 0:
        go(ir.Constant(I64, blk.target), blk.target <= k)
        return
    reg = guard_register(jf, blk.guard)
    if reg is None:
        leave(R_TERM, kc)
        return
    # the active lanes that take the branch
    p = b.load(b.gep(regs, [ir.Constant(I64, reg_index[reg])]))
    taken = b.call(count_taken_helper(f.module), [mask, p, n, ir.Constant(I8, 1 if blk.guard_neg else 0)])
    all_, none_, split = (f.append_basic_block() for _ in range(3))
    sw = b.switch(taken, split)
    sw.add_case(ir.Constant(I64, 0), none_)
    b.position_at_end(split)
    b.cbranch(b.icmp_signed("==", taken, tc), all_, f.append_basic_block(f"div{k}"))
    b.position_at_end(f.blocks[-1])
    leave(R_TERM, kc)  # divergent: engine._branch splits the entry (and counts the branch)
    b.position_at_end(all_)
    bump(slot(ST_BRANCHES), wc)
    go(ir.Constant(I64, blk.target), blk.target <= k)
    b.position_at_end(none_)
    bump(slot(ST_BRANCHES), wc)
    go(ir.Constant(I64, nxt))
