# Source of truth for the virtual GPU's mbarrier objects (PTX ISA 9.7.13.15): init, inval, arrive (count,
# .expect_tx, .noComplete), arrive_drop, expect_tx, complete_tx, test_wait / try_wait (state or .parity),
# pending_count; the 64-bit state word in shared memory; and how lanes spinning on an incomplete phase
# yield to the lanes they wait for (the engine's reconvergence stack runs one entry at a time).
"""mbarrier: split arrive/wait barriers in shared memory, with phases and transaction counts.

The whole barrier lives in its 8 bytes of shared memory, so the program may read it as data:

    bits  0..19  pending arrivals of the current phase
    bits 20..39  expected arrivals per phase (init's count, lowered by arrive_drop)
    bits 40..60  tx-count, 21-bit two's complement (expect_tx adds, complete_tx subtracts)
    bit  62      initialized (set by mbarrier.init, cleared by mbarrier.inval)
    bit  63      phase parity

A phase completes when its pending arrivals and its tx-count both reach 0: the parity flips, the pending
count reloads from the expected count and the tx-count restarts at 0. Lanes of one instruction act in
lane order. The state an arrive returns is the word right after its own arrival, before any phase
completion: `pending_count` of it is the arrivals the phase still waited for, and test_wait/try_wait on it
succeed once the barrier's parity differs from the state's.

Waiting: a try_wait/test_wait that finds its phase incomplete asks the engine (`Chunk.stall`) to let other
lanes run before the next basic block: the waiting entry of the reconvergence stack moves below a sibling
whose lanes have not stalled (a producer warp on the other side of a branch), or lanes parked at a
reconvergence point are released to run ahead. When every lane of the frame spins (each stalled twice at
the same place with no mbarrier changing in between), nothing can ever complete the phase: the launch
stops with a DeviceFault naming the barrier. A wait inside a device function, whose arriving lanes may be
in the caller, spins until the watchdog (STRATA_KERNEL_TIMEOUT), which names the barrier too.

Example:
    >>> hex(_pack(np.array([1]), np.array([4]), np.array([0]), np.array([0]))[0])
    '0x4000000000400001'
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from strata.hw.isa.memory import Addresser
from strata.hw.isa.registry import LaneFault, Op, lowers, split_mods, write
from strata.hw.ptx.ir import Instruction, Mem, Reg, Sink

MAX_COUNT = (1 << 20) - 1  # arrival counts and tx-counts: 20 bits (PTX ISA mbarrier contents)
_PEND = np.uint64(MAX_COUNT)
_TX_MASK = np.uint64((1 << 21) - 1)
_VALID = np.uint64(1 << 62)
_PHASE = np.uint64(1 << 63)
_BYTES = np.arange(8)


# -- the state word
def _pack(pend: np.ndarray, exp: np.ndarray, tx: np.ndarray, phase: np.ndarray) -> np.ndarray:
    """The 64-bit words of initialized barriers from their fields."""
    w = (pend.astype(np.uint64) & _PEND) | ((exp.astype(np.uint64) & _PEND) << np.uint64(20))
    w |= (tx.astype(np.int64).astype(np.uint64) & _TX_MASK) << np.uint64(40)
    return w | _VALID | (phase.astype(np.uint64) << np.uint64(63))


def _fields(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pending, expected, tx, phase, valid) of barrier words, as int64 / bool arrays."""
    pend = (w & _PEND).astype(np.int64)
    exp = ((w >> np.uint64(20)) & _PEND).astype(np.int64)
    tx = ((w >> np.uint64(40)) & _TX_MASK).astype(np.int64)
    tx = np.where(tx >= 1 << 20, tx - (1 << 21), tx)
    return pend, exp, tx, (w >> np.uint64(63)).astype(np.int64), (w & _VALID) != 0


def _read(chunk: Any, off: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(chunk.shared[off[:, None] + _BYTES]).view("<u8").reshape(-1)


def _write(chunk: Any, off: np.ndarray, w: np.ndarray) -> None:
    chunk.shared[off[:, None] + _BYTES] = np.ascontiguousarray(w, dtype="<u8").view(np.uint8).reshape(-1, 8)


# -- per-chunk bookkeeping
class _State:
    """A chunk's mbarrier epoch (bumped by every change of any barrier) and its stalled stack entries."""

    def __init__(self) -> None:
        self.epoch = 0
        self.stalls: dict[int, tuple[Any, int, int, int]] = {}  # id(entry) -> (entry, epoch, pc, times)
        self.frame: Any = None  # the frame whose wait stalled
        self.wait: tuple[Instruction, int, int, str] | None = None  # (ins, lane, shared offset, what it waits for)


_STATES: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()


def _state(chunk: Any) -> _State:
    st = _STATES.get(chunk)
    if st is None:
        st = _State()
        _STATES[chunk] = st
    return st


def _describe(chunk: Any, lane: int, off: int) -> str:
    """`name` at shared offset 0x.. of block (x, y, z), and its current fields."""
    base = int(chunk.shared_base[lane])
    rel = off - base
    launch = chunk.launch
    prog = launch.program
    # the variables this kernel can see: the module's, device functions', its own (kernels overlap)
    visible = [*prog.module.variables, *(v for fn in prog.module.functions.values()
                                         if not fn.is_entry or fn.name == launch.kernel.name
                                         for v in fn.variables)]
    label = "(dynamic shared memory)"
    for v in visible:
        o = prog.shared_offsets.get(v.name) if v.space == "shared" else None
        if o is not None and o <= rel < o + max(v.size, 1):
            label = f"`{v.name}`" if o == rel else f"`{v.name}`+{rel - o}"
            break
    pend, exp, tx, phase, valid = (int(x[0]) for x in _fields(_read(chunk, np.array([off]))))
    cfg = chunk.launch.config
    gx, gy, _ = cfg.grid
    b = chunk.first_block + lane // chunk.lanes_per_block
    block = (b % gx, (b // gx) % gy, b // (gx * gy))
    if not valid:
        return f"mbarrier {label} at shared offset {rel:#x} of block {block} (not initialized)"
    return (f"mbarrier {label} at shared offset {rel:#x} of block {block}: phase parity {phase}, "
            f"{pend} of {exp} arrivals pending, tx-count {tx}")


def hang_note(chunk: Any) -> str | None:
    """What the chunk's lanes were last seen waiting on (for the watchdog's report), or None."""
    st = _STATES.get(chunk)
    if st is None or st.wait is None:
        return None
    _, lane, off, what = st.wait
    return f"threads were spinning on {_describe(chunk, lane, off)}, waiting for {what}"


# -- lowering helpers
def _space_ok(flags: list[str]) -> bool:
    return all(m in ("shared", "shared::cta", "shared::cluster", "release", "acquire", "relaxed", "cta",
                     "cluster", "parity", "expect_tx", "noComplete") for m in flags)


def barrier_operand(ins: Instruction, ctx: Any, op: Any, access: str) -> Addresser:
    """The barrier operand: a shared address with .shared{::cta,::cluster}, else a generic address
    (which must point into shared memory; barrier_lanes checks)."""
    if not isinstance(op, Mem):
        raise ctx.fail(f"{ins.full_opcode}: the barrier operand must be an address [addr]")
    shared = any(m.split("::")[0] == "shared" for m in ins.mods)
    return Addresser(ctx, ins, op, "shared" if shared else "generic", 8, access)


def barrier_lanes(f: Any, m: Any, addr: Addresser) -> tuple[np.ndarray, np.ndarray]:
    """(lanes, their barriers' offsets in the chunk's shared memory) for the active lanes, lane order."""
    lanes_l: list[np.ndarray] = []
    offs: list[np.ndarray] = []
    for acc in addr.resolve(f, m):
        lanes = np.arange(f.chunk.n) if acc.sel is None else np.asarray(acc.sel)
        if acc.space != "shared":
            raise LaneFault(int(lanes[0]), addr.ins, f"{addr.ins.full_opcode}: the generic address points into "
                            f"{acc.space} memory; an mbarrier object lives in shared memory",
                            "cudaErrorIllegalAddress", reason="mbarrier outside shared memory", space=acc.space)
        lanes_l.append(lanes)
        offs.append(np.asarray(acc.off, dtype=np.int64))
    if not lanes_l:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lanes, off = np.concatenate(lanes_l), np.concatenate(offs)
    order = np.argsort(lanes, kind="stable")
    return lanes[order], off[order]


def _check_valid(chunk: Any, ins: Instruction, lanes: np.ndarray, off: np.ndarray, w: np.ndarray) -> None:
    bad = (w & _VALID) == 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        rel = int(off[i] - chunk.shared_base[lanes[i]])
        raise LaneFault(int(lanes[i]), ins, f"{ins.full_opcode} on shared offset {rel:#x}, which holds no "
                        "initialized mbarrier (mbarrier.init was not executed there, or mbarrier.inval "
                        "invalidated it)", "cudaErrorLaunchFailure", reason="uninitialized mbarrier",
                        address=rel, space="shared")


def _counts(f: Any, slot: int | None, lanes: np.ndarray, default: int) -> np.ndarray:
    if slot is None:
        return np.full(lanes.size, default, dtype=np.int64)
    v = f.V[slot]
    if isinstance(v, np.ndarray):
        return v[lanes].astype(np.int64)
    return np.full(lanes.size, int(v), dtype=np.int64)


def _update(chunk: Any, ins: Instruction, lanes: np.ndarray, off: np.ndarray, arrive: np.ndarray,
            expect: np.ndarray, complete: np.ndarray, drop: bool, no_complete: bool) -> np.ndarray:
    """Apply, lane by lane, expect_tx (+expect), complete_tx (-complete) and an arrival of `arrive` (0 = none)
    to each lane's barrier; returns each lane's state word right after its arrival."""
    st = _state(chunk)
    st.epoch += 1
    uniq, first, inv = np.unique(off, return_index=True, return_inverse=True)
    words = _read(chunk, uniq)
    _check_valid(chunk, ins, lanes[first], uniq, words)
    pend, exp, tx, phase, _ = _fields(words)
    k = uniq.size
    # every barrier at once, lanes grouped by barrier in lane order, while no phase completes before a
    # barrier's last arrival of the instruction (the usual case: each thread of a block arrives once)
    order = np.argsort(inv, kind="stable")
    g = inv[order]
    counts = np.bincount(inv, minlength=k)
    before = np.concatenate(([0], np.cumsum(counts)[:-1]))

    def within(v: np.ndarray) -> np.ndarray:
        c = np.cumsum(v[order])
        return c - np.repeat(c[before] - v[order][before], counts)

    cum_a, cum_x, cum_c = within(arrive), within(expect), within(complete)
    last = before + counts - 1
    tot_a, tot_t = cum_a[last], cum_x[last] - cum_c[last]
    # a phase that completes before a barrier's last lane (or, with .noComplete, at all) goes lane by lane
    mid = (pend[g] - cum_a == 0) & (tx[g] + cum_x - cum_c == 0)
    if not no_complete:
        mid[last] = False
    simple = (tot_a <= pend) & (np.bincount(g, weights=mid, minlength=k) == 0)
    tokens = np.zeros(lanes.size, dtype=np.uint64)
    pend_f, exp_f, tx_f, phase_f = pend - tot_a, exp - tot_a if drop else exp.copy(), tx + tot_t, phase.copy()
    ok = simple[g]
    if ok.any():
        tokens[order[ok]] = _pack(pend[g][ok] - cum_a[ok], (exp[g] - cum_a if drop else exp[g])[ok],
                                  tx[g][ok] + cum_x[ok] - cum_c[ok], phase[g][ok])
    done = simple & (pend_f == 0) & (tx_f == 0)
    pend_f[done], phase_f[done] = exp_f[done], phase_f[done] ^ 1
    for b in np.flatnonzero(~simple):  # phases complete inside this instruction: lane by lane
        sel = order[g == b]
        pend_f[b], exp_f[b], tx_f[b], phase_f[b] = _lane_by_lane(
            chunk, ins, lanes, off, sel, arrive, expect, complete, drop, no_complete, tokens,
            int(pend[b]), int(exp[b]), int(tx[b]), int(phase[b]))
    bad = np.abs(tx_f) > MAX_COUNT
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        lane = int(lanes[order[last[j]]])
        raise LaneFault(lane, ins, f"{ins.full_opcode}: tx-count {int(tx_f[j])} is outside [-{MAX_COUNT}, "
                        f"{MAX_COUNT}]; {_describe(chunk, lane, int(uniq[j]))}", "cudaErrorLaunchFailure",
                        reason="mbarrier tx-count overflow")
    _write(chunk, uniq, _pack(pend_f, exp_f, tx_f, phase_f))
    return tokens


def _lane_by_lane(chunk: Any, ins: Instruction, lanes: np.ndarray, off: np.ndarray, sel: np.ndarray,
                  arrive: np.ndarray, expect: np.ndarray, complete: np.ndarray, drop: bool, no_complete: bool,
                  tokens: np.ndarray, p: int, e: int, t: int, ph: int) -> tuple[int, int, int, int]:
    """One barrier's lanes `sel` (lane order) one at a time; fills their tokens, returns the final fields."""
    for i in sel:
        lane = int(lanes[i])
        t += int(expect[i]) - int(complete[i])
        a = int(arrive[i])
        if a:
            if p == 0 or a > p:
                raise LaneFault(lane, ins, f"{ins.full_opcode}: arrival count {a} exceeds the {p} arrivals "
                                f"pending in the current phase; {_describe(chunk, lane, int(off[i]))}",
                                "cudaErrorLaunchFailure", reason="mbarrier over-arrival")
            p -= a
            if drop:
                e -= a
        tokens[i] = _pack(np.array([p]), np.array([e]), np.array([t]), np.array([ph]))[0]
        if p == 0 and t == 0:
            if no_complete:
                raise LaneFault(lane, ins, f"{ins.full_opcode} completed the current phase (.noComplete "
                                f"promises it does not); {_describe(chunk, lane, int(off[i]))}",
                                "cudaErrorLaunchFailure", reason="mbarrier noComplete completed")
            p, ph = e, ph ^ 1
    return p, e, t, ph


def arrive_lanes(f: Any, ins: Instruction, lanes: np.ndarray, off: np.ndarray) -> None:
    """One arrival per lane on each lane's barrier (cp.async.mbarrier.arrive.noinc's async arrive)."""
    if lanes.size:
        z = np.zeros(lanes.size, dtype=np.int64)
        _update(f.chunk, ins, lanes, off, np.ones(lanes.size, dtype=np.int64), z, z, False, False)


def check_initialized(f: Any, ins: Instruction, lanes: np.ndarray, off: np.ndarray) -> None:
    """Fault unless every lane's barrier is initialized."""
    if lanes.size:
        _check_valid(f.chunk, ins, lanes, off, _read(f.chunk, off))


def complete_tx(f: Any, ins: Instruction, lanes: np.ndarray, off: np.ndarray, nbytes: np.ndarray) -> None:
    """complete_tx of `nbytes` per lane (a bulk copy's bytes arriving at its barrier)."""
    if lanes.size:
        z = np.zeros(lanes.size, dtype=np.int64)
        _update(f.chunk, ins, lanes, off, z, z, nbytes.astype(np.int64), False, False)


# -- lowerings
@lowers("mbarrier")
def lower_mbarrier(ins: Instruction, ctx: Any) -> Op:
    """mbarrier.{init, inval, arrive, arrive_drop, expect_tx, complete_tx, test_wait, try_wait, pending_count}."""
    flags, types = split_mods(ins.mods)
    if not flags or types != ["b64"]:
        raise ctx.unsupported()
    kind, rest = flags[0], flags[1:]
    if kind == "pending_count":
        return _lower_pending(ins, ctx, rest)
    if not _space_ok(rest):
        raise ctx.unsupported()
    if kind == "init":
        return _lower_init(ins, ctx)
    if kind == "inval":
        return _lower_inval(ins, ctx)
    if kind in ("arrive", "arrive_drop"):
        return _lower_arrive(ins, ctx, kind == "arrive_drop", rest)
    if kind in ("expect_tx", "complete_tx"):
        return _lower_tx(ins, ctx, kind == "expect_tx")
    if kind in ("test_wait", "try_wait"):
        return _lower_wait(ins, ctx, "parity" in rest)
    raise ctx.unsupported()


def _lower_init(ins: Instruction, ctx: Any) -> Op:
    if len(ins.operands) != 2:
        raise ctx.fail("mbarrier.init takes [addr], count")
    addr = barrier_operand(ins, ctx, ins.operands[0], "write")
    cnt = ctx.src(ins.operands[1], "u32")

    def run(f: Any, m: Any) -> None:
        lanes, off = barrier_lanes(f, m, addr)
        if not lanes.size:
            return
        n = _counts(f, cnt, lanes, 0)
        bad = (n < 1) | (n > MAX_COUNT)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise LaneFault(int(lanes[i]), ins, f"mbarrier.init count {int(n[i])} is outside [1, {MAX_COUNT}]",
                            "cudaErrorLaunchFailure", reason="mbarrier count")
        z = np.zeros(lanes.size, dtype=np.int64)
        _write(f.chunk, off, _pack(n, n, z, z))  # lanes in order: the last lane's init of a barrier wins
        _state(f.chunk).epoch += 1

    return Op(run, "sync", exact=True)


def _lower_inval(ins: Instruction, ctx: Any) -> Op:
    if len(ins.operands) != 1:
        raise ctx.fail("mbarrier.inval takes [addr]")
    addr = barrier_operand(ins, ctx, ins.operands[0], "write")

    def run(f: Any, m: Any) -> None:
        lanes, off = barrier_lanes(f, m, addr)
        if lanes.size:
            _write(f.chunk, off, np.zeros(lanes.size, dtype=np.uint64))
            _state(f.chunk).epoch += 1

    return Op(run, "sync", exact=True)


def _lower_arrive(ins: Instruction, ctx: Any, drop: bool, rest: list[str]) -> Op:
    """arrive{_drop}{.noComplete|.expect_tx} state|_, [addr]{, count|txCount}."""
    ops = ins.operands
    expect = "expect_tx" in rest
    no_complete = "noComplete" in rest
    if len(ops) not in (2, 3) or (expect and len(ops) != 3) or (no_complete and len(ops) != 3):
        raise ctx.fail(f"{ins.full_opcode} takes state, [addr] and " +
                       ("txCount" if expect else "an optional count"))
    d = None if isinstance(ops[0], Sink) else ctx.dst(ops[0], "b64")
    addr = barrier_operand(ins, ctx, ops[1], "write")
    extra = ctx.src(ops[2], "u32") if len(ops) == 3 else None

    def run(f: Any, m: Any) -> None:
        lanes, off = barrier_lanes(f, m, addr)
        if not lanes.size:
            return
        z = np.zeros(lanes.size, dtype=np.int64)
        if expect:
            arrive, tx = np.ones(lanes.size, dtype=np.int64), _counts(f, extra, lanes, 0)
        else:
            arrive, tx = _counts(f, extra, lanes, 1), z
            bad = (arrive < 1) | (arrive > MAX_COUNT)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise LaneFault(int(lanes[i]), ins, f"{ins.full_opcode}: count {int(arrive[i])} is outside "
                                f"[1, {MAX_COUNT}]", "cudaErrorLaunchFailure", reason="mbarrier count")
        tokens = _update(f.chunk, ins, lanes, off, arrive, tx, z, drop, no_complete)
        if d is not None:
            full = np.zeros(f.chunk.n, dtype=np.uint64)
            full[lanes] = tokens
            write(f.V[d], full, m)

    return Op(run, "sync", exact=True)


def _lower_tx(ins: Instruction, ctx: Any, expect: bool) -> Op:
    if len(ins.operands) != 2:
        raise ctx.fail(f"{ins.full_opcode} takes [addr], txCount")
    addr = barrier_operand(ins, ctx, ins.operands[0], "write")
    cnt = ctx.src(ins.operands[1], "u32")

    def run(f: Any, m: Any) -> None:
        lanes, off = barrier_lanes(f, m, addr)
        if not lanes.size:
            return
        n = _counts(f, cnt, lanes, 0)
        z = np.zeros(lanes.size, dtype=np.int64)
        _update(f.chunk, ins, lanes, off, z, n if expect else z, z if expect else n, False, False)

    return Op(run, "sync", exact=True)


def _lower_wait(ins: Instruction, ctx: Any, parity: bool) -> Op:
    """{test,try}_wait{.parity} waitComplete, [addr], state|phaseParity{, suspendTimeHint}."""
    ops = ins.operands
    if len(ops) not in (3, 4):
        raise ctx.fail(f"{ins.full_opcode} takes waitComplete, [addr], " +
                       ("phaseParity" if parity else "state") + " and an optional suspend-time hint")
    if not isinstance(ops[0], Reg) or ctx.reg_type(ops[0].name) != "pred":
        raise ctx.fail(f"{ins.full_opcode}: waitComplete must be a predicate register")
    d = ctx.dst(ops[0], "pred")
    addr = barrier_operand(ins, ctx, ops[1], "read")
    what = ctx.src(ops[2], "u32" if parity else "b64")
    if len(ops) == 4:
        ctx.src(ops[3], "u32")  # a hint only

    def run(f: Any, m: Any) -> None:
        chunk = f.chunk
        lanes, off = barrier_lanes(f, m, addr)
        if not lanes.size:
            return
        w = _read(chunk, off)
        _check_valid(chunk, ins, lanes, off, w)
        cur = (w >> np.uint64(63)).astype(np.int64)
        v = f.V[what]
        v = v[lanes] if isinstance(v, np.ndarray) else np.full(lanes.size, v)
        want = (v.astype(np.int64) & 1) if parity else (v.astype(np.uint64) >> np.uint64(63)).astype(np.int64)
        done = cur != want
        full = np.zeros(chunk.n, dtype=bool)
        full[lanes] = done
        write(f.V[d], full, m)
        st = _state(chunk)
        if done.all():
            st.wait = None
            return
        i = int(np.flatnonzero(~done)[0])
        st.wait = (ins, int(lanes[i]), int(off[i]), f"the phase with parity {int(want[i])} to complete")
        st.frame = f
        chunk.stall = _reschedule

    return Op(run, "sync", exact=True)


def _lower_pending(ins: Instruction, ctx: Any, rest: list[str]) -> Op:
    if rest or len(ins.operands) != 2:
        raise ctx.fail("mbarrier.pending_count.b64 takes count, state")
    d = ctx.dst(ins.operands[0], "u32")
    s = ctx.src(ins.operands[1], "b64")

    def run(f: Any, m: Any) -> None:
        v = f.V[s]
        write(f.V[d], (np.asarray(v, dtype=np.uint64) & _PEND).astype(np.uint32), m)

    return Op(run, "sync")


# -- letting the waiting lanes yield
class _Node:
    __slots__ = ("entry", "parent", "children")

    def __init__(self, entry: Any, parent: _Node | None) -> None:
        self.entry, self.parent = entry, parent
        self.children: list[_Node] = []


def _forest(stack: list[Any]) -> list[_Node]:
    """The reconvergence stack as a tree: an entry's lanes are a subset of the entry below it that it
    reconverges into (its join); siblings (the sides of a branch) have disjoint lanes."""
    roots: list[_Node] = []
    path: list[_Node] = []
    for e in stack:
        while path and path[-1].entry.mask is not None and e.mask is not None and \
                not (path[-1].entry.mask & e.mask).any():
            path.pop()
        parent = path[-1] if path else None
        node = _Node(e, parent)
        (parent.children if parent is not None else roots).append(node)
        path.append(node)
    return roots


def _flatten(nodes: list[_Node], out: list[Any]) -> None:
    for nd in nodes:
        out.append(nd.entry)
        _flatten(nd.children, out)


def _reschedule(f: Any) -> None:
    """The engine calls this before its next basic block after a wait found its phase incomplete."""
    chunk = f.chunk
    chunk.stall = None
    st = _state(chunk)
    stack = f.stack
    if st.frame is not f or not stack:
        return
    st.frame = None
    top = stack[-1]
    rec = st.stalls.get(id(top))
    times = rec[3] + 1 if rec is not None and rec[0] is top and rec[1] == st.epoch and rec[2] == top.pc else 1
    st.stalls[id(top)] = (top, st.epoch, top.pc, times)
    if len(st.stalls) > 1024:  # records of earlier epochs never count again
        st.stalls = {k: r for k, r in st.stalls.items() if r[1] == st.epoch}
    roots = _forest(stack)

    def stalled(e: Any) -> int:
        r = st.stalls.get(id(e))
        return r[3] if r is not None and r[0] is e and r[1] == st.epoch and r[2] == e.pc else 0

    fresh: _Node | None = None
    once: _Node | None = None
    join: tuple[_Node, np.ndarray] | None = None
    nodes: list[_Node] = []
    todo = list(roots)
    while todo:
        nd = todo.pop()
        nodes.append(nd)
        todo.extend(nd.children)
    by_entry = {id(nd.entry): nd for nd in nodes}
    for e in reversed(stack[:-1]):  # nearest the top first
        nd = by_entry[id(e)]
        if nd.children:
            if join is None:
                covered = np.zeros(chunk.n, dtype=bool)
                for c in nd.children:
                    covered |= True if c.entry.mask is None else c.entry.mask
                own = ~covered if e.mask is None else e.mask & ~covered
                if chunk.alive is not None:
                    own &= chunk.alive
                if own.any():
                    join = (nd, own)
            continue
        s = stalled(e)
        if s == 0 and fresh is None:
            fresh = nd
        elif s == 1 and once is None:
            once = nd
    target = fresh
    if target is None and join is not None:
        target = _unjoin(chunk, roots, *join)
    if target is None:
        target = once
    if target is None:
        if times >= 2 and len(chunk.frames) == 1:
            _deadlock(chunk, st)
        return  # spin again (a second failure proves it spins; in a device function, the watchdog decides)
    # bring `target` to the top: at each level the subtree holding it goes last among its siblings
    up: _Node | None = target
    while up is not None:
        sibs = up.parent.children if up.parent is not None else roots
        sibs.remove(up)
        sibs.append(up)
        up = up.parent
    out: list[Any] = []
    _flatten(roots, out)
    stack[:] = out


def _unjoin(chunk: Any, roots: list[_Node], nd: _Node, own: np.ndarray) -> _Node:
    """Release the lanes parked at join `nd`'s reconvergence point: they run on as a sibling of the lanes
    `nd` was waiting for, and all of them reconverge one level further out (nd's own join point)."""
    e = nd.entry
    for c in nd.children:
        c.entry.rpc = e.rpc
        c.parent = nd.parent
    tc, wc = chunk.count(own)
    rest = _Node(type(e)(e.pc, own, e.rpc, False, tc, wc), nd.parent)
    sibs = nd.parent.children if nd.parent is not None else roots
    i = sibs.index(nd)
    sibs[i:i + 1] = [rest, *nd.children]
    return rest


def _deadlock(chunk: Any, st: _State) -> None:
    assert st.wait is not None
    ins, lane, off, what = st.wait
    raise LaneFault(lane, ins, "mbarrier deadlock: the block hangs; every thread still running in it (and in the "
                    "blocks run alongside it) waits on an mbarrier phase that can never complete (too few "
                    "arrivals or transaction bytes; no asynchronous copy is pending); this thread waits for "
                    f"{what} of {_describe(chunk, lane, off)}",
                    "cudaErrorLaunchFailure", reason="mbarrier deadlock", space="shared",
                    address=int(off - chunk.shared_base[lane]))
