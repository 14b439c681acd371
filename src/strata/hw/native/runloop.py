"""The kernel frame's run loop under the native executor: the reference engine's loop
(`engine.run_frame`), with one addition: while no lane waits at a barrier, the compiled driver
(driver.py) runs the top entry of the reconvergence stack (its lanes as a mask) through its blocks and
uniform branches in one native call, up to its reconvergence point, and hands back at the first thing
it does not do (a divergent branch, `ret`/`exit`, a poll, a memory check that failed, a loop's jump back
while other paths wait, a barrier other paths hold lanes of, a block it does not run). From
there this loop does exactly what the reference's does, with the reference's own helpers, so branches,
divergence, exits, barriers, watchdog and faults behave, and count, as there.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.hw.engine import EXIT, Frame, _branch, _Entry, _exit_lanes, _jump, _poll, _spin
from strata.hw.native import driver as drv


class DriverState:
    """One worker's driver state: the st array and the per-block accumulators it adds to."""

    def __init__(self, nblocks: int) -> None:
        self.st = np.zeros(drv.ST_SIZE, dtype=np.int64)
        self.acc_t = np.zeros(max(nblocks, 1), dtype=np.int64)
        self.acc_w = np.zeros(max(nblocks, 1), dtype=np.int64)
        self.st[drv.ST_ACC_T] = self.acc_t.ctypes.data
        self.st[drv.ST_ACC_W] = self.acc_w.ctypes.data
        self.addr = int(self.st.ctypes.data)

    def fold(self, acc: tuple[list[int], list[int]]) -> None:
        """Add the driver's per-block accumulators into the launch's (and clear them)."""
        acc_t = self.acc_t
        if acc_t.size <= 64:  # (a kernel's few blocks: one list each beats finding the nonzero ones)
            t, w = acc_t.tolist(), self.acc_w.tolist()
            a_t, a_w = acc
            for k, v in enumerate(t):
                if v:
                    a_t[k] += v
                    a_w[k] += w[k]
        else:
            for k in np.flatnonzero(acc_t).tolist():
                acc[0][k] += int(acc_t[k])
                acc[1][k] += int(self.acc_w[k])
        acc_t.fill(0)
        self.acc_w.fill(0)


def drive_entry(ck: Any, ds: DriverState, launch: Any, regs: int, mask: int, n: int, ctx: int, pc: int, tc: int,
                wc: int, rpc: int, deep: bool, bar_blocks: int) -> tuple[int, int, int]:
    """One driver call for a stack entry at block `pc` (its lanes `mask`: tc of them in wc warps); the launch's
    executed, cycle, poll, branch and barrier counts follow. Returns (code, block where it stopped, bail op)."""
    st = ds.st
    st[drv.ST_PC] = pc
    st[drv.ST_TC] = tc
    st[drv.ST_WC] = wc
    st[drv.ST_EXECUTED] = launch.executed
    st[drv.ST_CYCLES] = launch.cycles
    st[drv.ST_POLLS] = launch.polls
    st[drv.ST_BUDGET] = min(launch.budget or 1 << 126, 1 << 62)
    st[drv.ST_BRANCHES] = 0
    st[drv.ST_BARRIERS] = 0
    st[drv.ST_RPC] = rpc
    st[drv.ST_DEEP] = deep
    st[drv.ST_BAR_BLOCKS] = bar_blocks
    rc = ck.drive(regs, mask, n, ctx, ds.addr)
    out = st.tolist()
    launch.executed = out[drv.ST_EXECUTED]
    launch.cycles = out[drv.ST_CYCLES]
    launch.polls = min(launch.polls, out[drv.ST_POLLS])  # a cancel meanwhile set it to 0
    counters = launch.counters
    counters.branches += out[drv.ST_BRANCHES]
    counters.barriers += out[drv.ST_BARRIERS]
    return rc, out[drv.ST_PC], out[drv.ST_BAIL]


def finished(launch: Any, jf: Any, rc: int, b: int) -> bool:
    """Whether a driver call for a chunk's only entry, every lane of the chunk (its first, from block 0),
    that returned (rc, b) finished the chunk with nothing left for Python to do: it reached EXIT, or ran
    and counted an unguarded `exit` (or the kernel's `ret`) with no poll due (run_root would only pop)."""
    if rc == drv.R_DONE:
        return b == EXIT
    if rc != drv.R_TERM:
        return False
    blk = jf.blocks[b]
    return blk.guard < 0 and (blk.term == "exit" or (blk.term == "ret" and jf.fn.is_entry)) and \
        launch.polls > 0 and launch.executed <= (launch.budget or 1 << 126)


def run_root(f: Frame, mask: np.ndarray | None, ck: Any, ds: DriverState, frame_state: Any,
             resume: tuple[int, int, int] | None = None, release: bool = True, ready: Any = None) -> bool:
    """Run the kernel's frame on the lanes in `mask` until all of them exit (engine.run_frame's contract).
    `resume`: the first driver call already ran (drive_entry's result), from block 0 for every lane of `mask`.
    `release=False` keeps the frame's register arrays (the caller releases them). `ready(f)`, when given, is
    called before anything but native code may read the frame's registers (the reference handlers, the branch
    machinery, a barrier or spin): what native code takes from elsewhere (the launch's invariant registers)
    is written there only if it comes to that. Returns whether the chunk ran as one driver call that finished
    it (`finished`), so the caller may run the next like it."""
    chunk = f.chunk
    launch = chunk.launch
    blocks = f.jf.blocks
    acc_t, acc_w = launch.accumulators(f.jf)
    tc, wc = chunk.count(mask)
    if tc == 0:
        return False
    stack = f.stack
    stack.append(_Entry(0, mask, EXIT, True, tc, wc))
    chunk.frames.append(f)
    V = f.V
    budget = launch.budget or 1 << 126
    driveable = ck.driveable
    simple: tuple[int, int] | bool | None = None  # (rc, b) of the one driver call, while nothing else ran
    # id of an entry mask -> (the mask, kept so its id stays its own; its blocks with an active lane)
    barrier_blocks: dict[int, tuple[np.ndarray, int]] = {}
    try:
        while stack:
            if chunk.stall is not None:
                simple = False
                if ready is not None:
                    ready(f)
                chunk.stall(f)
                continue
            e = stack[-1]
            b = e.pc
            if b == e.rpc or b == EXIT:
                stack.pop()
                continue
            m = e.mask
            first_op = 0  # 0: run the block; > 0: ops from first_op - 1 (a bail); -1: body done
            if b in driveable and chunk.block_sync is None:
                if resume is not None:
                    rc, b, bail = resume
                    resume = None
                else:
                    deep = len(stack) > 1
                    regs, ones, n, ctx, _ = frame_state(f)
                    if m is None or deep or not ck.barriers:  # (the driver counts barriers of the only entry)
                        bar_blocks = chunk.nblocks
                    else:
                        hit = barrier_blocks.get(id(m))
                        if hit is None:
                            busy = int(np.count_nonzero(m.reshape(chunk.nblocks, -1).any(axis=1)))
                            hit = barrier_blocks[id(m)] = (m, busy)
                        bar_blocks = hit[1]
                    rc, b, bail = drive_entry(ck, ds, launch, regs, ones if m is None else m.ctypes.data, n, ctx, b,
                                              e.tc, e.wc, e.rpc, deep, bar_blocks)
                simple = (rc, b) if simple is None else False
                e.pc = b
                if rc == drv.R_DONE:
                    continue
                if rc == drv.R_SPIN:  # a jump back to a loop head while other paths wait
                    if ready is not None:  # (a yield compares registers)
                        ready(f)
                    _spin(f, e)
                    continue
                if rc == drv.R_TERM:
                    first_op = -1
                elif rc == drv.R_BAIL:
                    first_op = bail
            else:
                simple = False
            blk = blocks[b]
            if first_op >= 0:
                simple = False
                if ready is not None:
                    ready(f)
                am = None if e.full else m
                if f.addr_cache:
                    f.addr_cache.clear()
                if first_op == 0:
                    for fn, exact in blk.ops:
                        fn(f, m if exact else am)
                else:  # the native body handed over at a failed check: the reference runs the rest
                    for op in ck.ref_ops[b][first_op - 1:]:
                        op(f, m)
                acc_t[b] += e.tc
                acc_w[b] += e.wc
                launch.executed += blk.n_instructions * e.tc
                launch.cycles += blk.n_instructions * e.wc
                launch.polls -= 1
            if launch.polls <= 0 or launch.executed > budget:
                _poll(launch, f, blk)
            term = blk.term
            if term == "fall":
                e.pc = b + 1 if b + 1 < len(blocks) else EXIT
                continue
            g = blk.guard
            # (Past the ops, Python reads only predicates, which are never invariant registers, except where
            # a loop may yield (_spin compares registers) and in a multi-way jump's index: `ready` first there.)
            if term == "bra":
                if ready is not None and blk.target <= b and len(stack) > 1:
                    ready(f)
                if g < 0:
                    e.pc = blk.target
                    if blk.target <= b and len(stack) > 1:
                        _spin(f, e)
                    continue
                _branch(f, e, b, blk, V[g])
                continue
            if term == "brx":
                if ready is not None:
                    ready(f)
                _jump(f, e, b, blk)
                continue
            if g < 0:
                if len(stack) == 1 and (term == "exit" or f.jf.fn.is_entry):
                    stack.pop()  # every live lane of the chunk leaves: nothing is left to run or update
                    continue
                lanes = m
            else:
                p = V[g]
                lanes = ~p if blk.guard_neg else p
                if m is not None:
                    lanes = lanes & m
                if not lanes.any():
                    e.pc = b + 1
                    continue
                e.pc = b + 1
            if lanes is None:
                lanes = np.ones(chunk.n, dtype=bool)
            if term == "exit" or f.jf.fn.is_entry:
                _exit_lanes(chunk, lanes)
            else:
                f.remove_lanes(lanes)
    finally:
        chunk.frames.pop()
        if release:
            f.release()  # (the driver's per-block accumulators stay in ds until the worker folds them, once)
    return isinstance(simple, tuple) and finished(launch, f.jf, *simple)
