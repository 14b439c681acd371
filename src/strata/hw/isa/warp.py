"""Semantics of warp-level instructions: shfl(.sync), vote(.sync), activemask, match.sync, redux.sync,
plus elect.sync and bar.warp.sync (lowerings control.py routes here: their opcodes are its). Source of
truth for how the 32 lanes of a warp see each other's registers.

A warp is 32 consecutive lanes of a chunk (`arr.reshape(-1, 32)`), so these ops work on (warps, 32)
views. The engine runs a warp's active lanes in lockstep, which gives the .sync forms their meaning
directly: the lanes that execute (the mask `m`) are the ones that arrived. Lanes that are inactive here
(diverged elsewhere, exited, or ghost lanes padding a partial warp) do not take part; a lane named in
`membermask` but not active is treated as not participating (hardware would wait for it or leave the
result undefined). Each lane's result is over the participants ITS OWN membermask names: converged lanes
may pass different masks (cg::labeled_partition, tiled groups) and each group then votes, matches and
reduces on its own (see `_Groups`). Reading a register from an inactive lane (shfl) returns whatever that
lane's register holds now; the PTX ISA leaves that value undefined.

Counters: these ops issue on the integer/ALU side of the SM, so they count as class "integer".
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from strata.hw.isa.registry import Op, lowers, split_mods, write
from strata.hw.ptx.ir import Pair, Reg, Sink

FULL = 0xFFFFFFFF
_SHFL_MODES = ("up", "down", "bfly", "idx")


# -- lane geometry (the same for every chunk of n lanes: warps never straddle blocks)
@functools.lru_cache(maxsize=16)
def _geometry(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lane index 0..n-1, lane id within its warp, 1 << laneid as uint32), all read-only."""
    iota = np.arange(n, dtype=np.int64)
    lane = iota & 31
    bit = (np.uint32(1) << lane.astype(np.uint32)).astype(np.uint32)
    for a in (iota, lane, bit):
        a.flags.writeable = False
    return iota, lane, bit


def _active(f: Any, m: np.ndarray | None) -> np.ndarray | None:
    """Lanes that execute this instruction (None: every lane of the chunk)."""
    alive = f.chunk.alive
    if m is None:
        return alive
    return m if alive is None else m & alive


def _ballot(bits: np.ndarray) -> np.ndarray:
    """Per warp, the uint32 whose bit i is bits[warp, i]; bits is (n,) bool -> (n // 32,) uint32."""
    packed = np.packbits(bits.reshape(-1, 32), axis=1, bitorder="little")  # (W, 4) uint8
    return packed.view("<u4").reshape(-1).astype(np.uint32, copy=False)


def _per_lane(per_warp: np.ndarray) -> np.ndarray:
    return np.repeat(per_warp, 32)


class _Members:
    """The membermask operand: which lanes take part (each active lane whose own bit is set)."""

    def __init__(self, ctx: Any, op: Any | None) -> None:
        self.slot = None if op is None else ctx.src(op, "b32")

    def mask(self, f: Any) -> Any:
        return np.uint32(FULL) if self.slot is None else f.V[self.slot]

    def participants(self, f: Any, m: np.ndarray | None) -> tuple[np.ndarray, Any]:
        """(bool per lane: takes part, membermask per lane or as a scalar)."""
        n = f.chunk.n
        act = _active(f, m)
        part = np.ones(n, dtype=bool) if act is None else act
        mask = self.mask(f)
        if isinstance(mask, np.ndarray) or int(mask) != FULL:
            _, _, bit = _geometry(n)
            part = part & ((mask & bit) != 0)
        return part, mask


class _Groups:
    """Which lanes each lane's .sync op runs over: the participants named in ITS OWN membermask.

    Converged lanes may pass different masks (cg::labeled_partition, tiled groups): lane i's result
    is over `g[i] = ballot(participants) & membermask[i]`. `warp` is the per-warp group when every
    participant of each warp names the same group (the common case, one reduction per warp), else None.
    """

    __slots__ = ("part", "g", "warp")

    def __init__(self, f: Any, m: np.ndarray | None, members: _Members) -> None:
        part, mask = members.participants(f, m)
        self.part = part
        voters = _ballot(part)  # (W,)
        if not isinstance(mask, np.ndarray):
            gw = voters & np.uint32(int(mask) & FULL)
            self.warp: np.ndarray | None = gw
            self.g = _per_lane(gw)
            return
        g = _per_lane(voters) & mask.astype(np.uint32, copy=False)
        self.g = g
        gw2 = g.reshape(-1, 32)
        pw = part.reshape(-1, 32)
        first = np.where(pw, gw2, np.uint32(0)).max(axis=1)  # a participant's group (0: none)
        self.warp = first if bool(((gw2 == first[:, None]) | ~pw).all()) else None

    def reduce(self, vals: np.ndarray, ufunc: Any, ident: Any, wrap_add: bool = False) -> np.ndarray:
        """Per lane, `ufunc` over the values (n,) of the lanes in its group (the identity if empty)."""
        w = vals.reshape(-1, 32)
        _, lane, _ = _geometry(32)
        if self.warp is not None:
            inw = ((self.warp[:, None] >> lane.astype(np.uint32)) & 1).astype(bool)  # (W, 32 other)
            picked = np.where(inw, w, ident)
            axis = 1
        else:
            g = self.g.reshape(-1, 32)
            sel = ((g[:, :, None] >> lane.astype(np.uint32)) & 1).astype(bool)  # (W, 32 me, 32 other)
            picked = np.where(sel, w[:, None, :], ident)
            axis = 2
        if wrap_add:
            out = picked.view(np.uint32).sum(axis=axis, dtype=np.uint64).astype(np.uint32).view(vals.dtype)
        else:
            out = ufunc.reduce(picked, axis=axis)
        return _per_lane(out) if self.warp is not None else out.reshape(-1)


# -- shfl
@lowers("shfl")
def lower_shfl(ins: Any, ctx: Any) -> Op:
    """shfl.sync.mode.b32 d[|p], a, b, c, membermask (and legacy shfl without .sync / membermask)."""
    flags, types = split_mods(ins.mods)
    modes = [x for x in flags if x in _SHFL_MODES]
    if len(modes) != 1 or types != ["b32"] or any(x not in (*_SHFL_MODES, "sync") for x in flags):
        raise ctx.unsupported()
    mode = modes[0]
    nops = 5 if "sync" in flags else 4
    if len(ins.operands) != nops:
        raise ctx.fail(f"{ins.full_opcode} takes {nops} operands, got {len(ins.operands)}")
    dst = ins.operands[0]
    d_op, p_op = (dst.first, dst.second) if isinstance(dst, Pair) else (dst, None)
    d = None if isinstance(d_op, Sink) else ctx.dst(d_op, "b32")
    p = None if p_op is None or isinstance(p_op, Sink) else ctx.dst(p_op, "pred")
    a = ctx.src(ins.operands[1], "b32")
    b = ctx.src(ins.operands[2], "b32")
    c = ctx.src(ins.operands[3], "b32")
    # membermask names lanes that must converge; in lockstep the active lanes already have, and
    # the source lane is read whether or not it is active (undefined on hardware), so it is unused.

    def run(f: Any, m: Any) -> None:
        V = f.V
        n = f.chunk.n
        iota, lane, _ = _geometry(n)
        j, ok = shfl_source(mode, lane, V[b], V[c])
        if d is not None:
            src = V[a]
            val = src[iota + (j - lane)] if isinstance(src, np.ndarray) else src
            write(V[d], val, m)
        if p is not None:
            write(V[p], ok, m)

    return Op(run, "integer", exact=True)


def shfl_source(mode: str, lane: np.ndarray, b: Any, c: Any) -> tuple[np.ndarray, np.ndarray]:
    """Source lane j (within the warp) and the in-range predicate, per the PTX ISA pseudo-code.

    c packs the clamp value (bits 0-4) and the segment mask (bits 8-12); an out-of-range source
    falls back to the lane itself.

    Example:
        >>> j, ok = shfl_source("down", np.arange(32), np.uint32(16), np.uint32(0x1F))
        >>> int(j[3]), bool(ok[3]), int(j[20]), bool(ok[20])
        (19, True, 20, False)
    """
    bval = np.asarray(b).astype(np.int64) & 31
    cv = np.asarray(c).astype(np.int64)
    clamp, seg = cv & 31, (cv >> 8) & 31
    max_lane = (lane & seg) | (clamp & ~seg & 31)
    if mode == "up":
        j = lane - bval
        ok = j >= max_lane
    elif mode == "down":
        j = lane + bval
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ bval
        ok = j <= max_lane
    else:  # idx
        j = (lane & seg) | (bval & ~seg & 31)
        ok = j <= max_lane
    return np.where(ok, j, lane), ok


# -- vote, activemask
@lowers("vote")
def lower_vote(ins: Any, ctx: Any) -> Op:
    """vote.sync.{all,any,uni}.pred d, {!}a, membermask; vote.sync.ballot.b32 d, {!}a, membermask.

    Only participating lanes (active and in membermask) vote; a ballot bit is 0 for every other lane.
    The legacy form without .sync takes every active lane.
    """
    flags, types = split_mods(ins.mods)
    modes = [x for x in flags if x in ("all", "any", "uni", "ballot")]
    if len(modes) != 1 or any(x not in ("all", "any", "uni", "ballot", "sync") for x in flags):
        raise ctx.unsupported()
    mode = modes[0]
    want_t = ["b32"] if mode == "ballot" else ["pred"]
    if types != want_t:
        raise ctx.fail(f"{ins.full_opcode}: expected type .{want_t[0]}")
    nops = 3 if "sync" in flags else 2
    if len(ins.operands) != nops:
        raise ctx.fail(f"{ins.full_opcode} takes {nops} operands, got {len(ins.operands)}")
    d = ctx.dst(ins.operands[0], "b32" if mode == "ballot" else "pred")
    if not isinstance(ins.operands[1], Reg):
        raise ctx.fail(f"{ins.full_opcode}: the source must be a predicate register")
    a, neg = ctx.pred(ins.operands[1])
    members = _Members(ctx, ins.operands[2] if nops == 3 else None)

    def run(f: Any, m: Any) -> None:
        V = f.V
        grp = _Groups(f, m, members)
        g = grp.g
        pv = V[a]
        votes = grp.part & (~pv if neg else pv)
        yes = _per_lane(_ballot(votes)) & g  # each lane counts the votes of its own group only
        if mode == "ballot":
            write(V[d], yes, m)
            return
        if mode == "any":
            res = yes != 0
        elif mode == "all":
            res = yes == g
        else:  # uni: every voter of the group agrees
            res = (yes == 0) | (yes == g)
        write(V[d], res, m)

    return Op(run, "integer", exact=True)


@lowers("activemask")
def lower_activemask(ins: Any, ctx: Any) -> Op:
    """activemask.b32 d: bit i set when lane i of the warp executes this instruction."""
    if len(ins.operands) != 1 or split_mods(ins.mods)[1] != ["b32"]:
        raise ctx.fail("activemask takes .b32 and one destination")
    d = ctx.dst(ins.operands[0], "b32")

    def run(f: Any, m: Any) -> None:
        act = _active(f, m)
        if act is None:
            write(f.V[d], np.uint32(FULL), m)
        else:
            write(f.V[d], _per_lane(_ballot(act)), m)

    return Op(run, "integer", exact=True)


# -- match
@lowers("match")
def lower_match(ins: Any, ctx: Any) -> Op:
    """match.any.sync.{b32,b64} d, a, membermask; match.all.sync.{b32,b64} d[|p], a, membermask.

    any: d = lanes of membermask (that take part) whose a equals this lane's a.
    all: d = the participating lanes of membermask when they all hold the same a, else 0; p = that test.
    """
    flags, types = split_mods(ins.mods)
    modes = [x for x in flags if x in ("any", "all")]
    if len(modes) != 1 or "sync" not in flags or len(types) != 1 or types[0] not in ("b32", "b64"):
        raise ctx.unsupported()
    mode, t = modes[0], types[0]
    if len(ins.operands) != 3:
        raise ctx.fail(f"{ins.full_opcode} takes 3 operands, got {len(ins.operands)}")
    dst = ins.operands[0]
    d_op, p_op = (dst.first, dst.second) if isinstance(dst, Pair) else (dst, None)
    if p_op is not None and mode == "any":
        raise ctx.fail("match.any has no predicate destination")
    d = None if isinstance(d_op, Sink) else ctx.dst(d_op, "b32")
    p = None if p_op is None or isinstance(p_op, Sink) else ctx.dst(p_op, "pred")
    a = ctx.src(ins.operands[1], t)
    members = _Members(ctx, ins.operands[2])

    def run(f: Any, m: Any) -> None:
        V = f.V
        n = f.chunk.n
        grp = _Groups(f, m, members)
        av = V[a]
        if not isinstance(av, np.ndarray):
            av = np.full(n, av)
        w = av.reshape(-1, 32)
        same = (w[:, :, None] == w[:, None, :]) & grp.part.reshape(-1, 1, 32)  # (W, 32 me, 32 other)
        packed = np.packbits(same, axis=2, bitorder="little")  # (W, 32, 4)
        hits = packed.view("<u4").reshape(n) & grp.g  # within this lane's own group
        if mode == "any":
            if d is not None:
                write(V[d], hits, m)
            return
        uniform = hits == grp.g
        if d is not None:
            write(V[d], np.where(uniform, grp.g, np.uint32(0)), m)
        if p is not None:
            write(V[p], uniform, m)

    return Op(run, "integer", exact=True)


# -- redux
_REDUX: dict[str, tuple[Any, str]] = {
    "add": (np.add, "int"), "min": (np.minimum, "int"), "max": (np.maximum, "int"),
    "and": (np.bitwise_and, "b"), "or": (np.bitwise_or, "b"), "xor": (np.bitwise_xor, "b"),
}


@lowers("redux")
def lower_redux(ins: Any, ctx: Any) -> Op:
    """redux.sync.op.type d, a, membermask over the participating lanes; .add wraps to 32 bits.

    .add/.min/.max take .u32/.s32, .and/.or/.xor take .b32. The sm_100a .f32 min/max (with .abs,
    .NaN) is not modeled (the virtual GPUs are sm_90 and older).
    """
    flags, types = split_mods(ins.mods)
    ops = [x for x in flags if x in _REDUX]
    if "sync" not in flags or len(ops) != 1 or len(types) != 1 or len(flags) != 2:
        raise ctx.unsupported()
    op, t = ops[0], types[0]
    ufunc, kind = _REDUX[op]
    if (kind == "int" and t not in ("u32", "s32")) or (kind == "b" and t != "b32"):
        raise ctx.unsupported()
    if len(ins.operands) != 3:
        raise ctx.fail(f"{ins.full_opcode} takes 3 operands, got {len(ins.operands)}")
    d = ctx.dst(ins.operands[0], t)
    a = ctx.src(ins.operands[1], t)
    members = _Members(ctx, ins.operands[2])
    dt = np.dtype(np.int32 if t == "s32" else np.uint32)
    info = np.iinfo(dt)
    # the value a non-participating lane contributes: the identity of the operation
    identity = {"add": 0, "min": info.max, "max": info.min, "and": FULL, "or": 0, "xor": 0}[op]
    ident = dt.type(identity)

    def run(f: Any, m: Any) -> None:
        V = f.V
        n = f.chunk.n
        grp = _Groups(f, m, members)
        av = V[a]
        if not isinstance(av, np.ndarray):
            av = np.full(n, av, dtype=dt)
        elif av.dtype != dt:
            av = av.view(dt)
        write(V[d], grp.reduce(av, ufunc, ident, wrap_add=op == "add"), m)

    return Op(run, "integer", exact=True)


# -- elect.sync
@lowers("elect")
def lower_elect(ins: Any, ctx: Any) -> Op:
    """elect.sync d|p, membermask: the lowest lane of each lane's own group leads; d = its laneid,
    p = "I lead"."""
    if "sync" not in ins.mods or len(ins.operands) != 2:
        raise ctx.unsupported()
    dst = ins.operands[0]
    d_op, p_op = (dst.first, dst.second) if isinstance(dst, Pair) else (dst, None)
    d = None if isinstance(d_op, Sink) else ctx.dst(d_op, "b32")
    p = None if p_op is None or isinstance(p_op, Sink) else ctx.dst(p_op, "pred")
    members = _Members(ctx, ins.operands[1])

    def run(f: Any, m: Any) -> None:
        V = f.V
        _, lane, _ = _geometry(f.chunk.n)
        grp = _Groups(f, m, members)
        g = grp.g.astype(np.int64)
        low = g & -g  # the lowest lane of each lane's own group (0 if none: unused)
        leader = np.where(low > 0, np.log2(np.maximum(low, 1)).astype(np.int64), 0)
        if d is not None:
            write(V[d], leader.astype(np.uint32), m)
        if p is not None:
            write(V[p], grp.part & (lane == leader), m)

    return Op(run, "integer", exact=True)


# -- bar.warp.sync
def lower_bar_warp(ins: Any, ctx: Any) -> Op:
    """bar.warp.sync membermask (CUDA's __syncwarp): a barrier over the lanes of the warp the mask names.

    sm_70+ lets the named lanes arrive at different bar.warp.sync instructions (the two sides of a branch
    each calling __syncwarp), so a lane that arrives waits, parked by the engine (`Chunk.park`), until
    every named lane that has not exited has arrived at one; then all of them continue. Exited lanes count
    as arrived (CUDA leaves naming them undefined; strata must not hang). Per lane, `Chunk.warp_sync`
    holds 0 (not at a barrier), 1 (arrived, waiting) or 2 (released, not yet run on). The JIT gives each
    bar.warp.sync a basic block of its own, so a parked lane re-runs just the barrier when it runs again.

    NOTE: `bar.warp.sync` parses as opcode `bar`, which control.py owns; control.lower_bar delegates here
    when 'warp' is among the modifiers (a block barrier's convergence check would wrongly fault on
    __syncwarp inside divergent code).
    """
    if len(ins.operands) != 1:
        raise ctx.fail(f"{ins.full_opcode} takes one membermask operand")
    members = ctx.src(ins.operands[0], "b32")
    block = ctx.block_index

    def complete(f: Any, arrived: np.ndarray, act: np.ndarray) -> np.ndarray:
        named = np.broadcast_to(np.asarray(f.V[members], dtype=np.uint32), arrived.shape)
        return (named & ~_per_lane(_ballot(arrived))) == 0

    deadlock = ("Barrier error: bar.warp.sync waits for lanes its member mask names that have not exited, but they "
                "can never reach one (every other path waits at a barrier, or none is left to run)")
    return Op(lambda f, m: park_at_barrier(f, m, ins, block, "warp_sync", complete, deadlock), "sync", exact=True)


def block_barrier(f: Any, m: Any, ins: Any, block: int) -> None:
    """bar.sync / barrier.sync over a whole block: sm_70+ lets its threads arrive at different instructions
    of the barrier (the sides of a branch), so arriving lanes wait until every live thread of their block
    has arrived; threads that exited count as arrived."""
    chunk = f.chunk

    def complete(f: Any, arrived: np.ndarray, act: np.ndarray) -> np.ndarray:
        return np.repeat(arrived.reshape(chunk.nblocks, -1).all(axis=1), chunk.lanes_per_block)

    deadlock = ("Barrier error: bar.sync reached by some threads of the block while other live threads of the "
                "block are elsewhere and can never reach it (divergent barrier: every other path waits at a barrier, "
                "or none is left to run); this thread waits")
    park_at_barrier(f, m, ins, block, "block_sync", complete, deadlock)


def cluster_barrier(f: Any, m: Any, ins: Any, block: int) -> None:
    """barrier.cluster.wait: arriving lanes wait until every live thread of their cluster's blocks has
    reached a barrier.cluster.wait (modeled as its arrival: the chunk runs whole clusters, so each block's
    stores before its arrive are visible); threads that exited count as arrived."""
    chunk = f.chunk

    def complete(f: Any, arrived: np.ndarray, act: np.ndarray) -> np.ndarray:
        cl = chunk.cluster_of_lane()
        missing = np.bincount(cl[~arrived], minlength=chunk.nblocks)
        return missing[cl] == 0

    deadlock = ("Barrier error: barrier.cluster.wait reached by some threads of the cluster while other live "
                "threads of its blocks are elsewhere and can never reach it (divergent cluster barrier: every other "
                "path waits at a barrier, or none is left to run); this thread waits")
    if m is not None or chunk.cluster_sync is not None:
        park_at_barrier(f, m, ins, block, "cluster_sync", complete, deadlock)
    chunk.launch.counters.barriers += chunk.nblocks


def lower_named_barrier(ins: Any, ctx: Any, block: int, arrive: bool) -> Op:
    """bar.sync / barrier.sync / bar.arrive `id, count`: a named barrier of `count` threads of the block
    (warp-specialized producers arrive, consumers sync). Arrivals add up per block and barrier id; when
    they reach `count` (or every live thread of the block, if fewer: exited threads count as arrived) the
    phase completes and the lanes waiting at it go on; bar.arrive never waits.
    `Chunk.named_sync` holds each lane's wait state (0, 1 waiting, 2 released), `named_id` the barrier
    it waits at, and `named_arrivals` the arrivals of each barrier's current phase, per block."""
    ident = ctx.src(ins.operands[0], "u32")
    count = ctx.src(ins.operands[1], "u32")
    deadlock = (f"Barrier error: {ins.full_opcode} waits for more threads of the block than can ever arrive at "
                "the named barrier (every other path waits at a barrier, or none is left to run)")

    def run(f: Any, m: Any) -> None:
        chunk = f.chunk
        n = chunk.n
        act = np.ones(n, dtype=bool) if m is None else m
        if chunk.alive is not None:
            act = act & chunk.alive
        if not act.any():
            return
        first = int(np.flatnonzero(act)[0])
        bid = int(np.broadcast_to(np.asarray(f.V[ident]), (n,))[first])
        need = int(np.broadcast_to(np.asarray(f.V[count]), (n,))[first])
        if chunk.named_sync is None:
            chunk.named_sync = np.zeros(n, dtype=np.int8)
            chunk.named_id = np.zeros(n, dtype=np.int16)
            chunk.named_arrivals = {}
        st, ids = chunk.named_sync, chunk.named_id
        arrivals = chunk.named_arrivals.setdefault(bid, np.zeros(chunk.nblocks, dtype=np.int64))
        released = act & (st == 2) & (ids == bid)
        st[released] = 0
        fresh = act & ~released
        arrivals += np.bincount(chunk.block_local[fresh], minlength=chunk.nblocks)
        live = chunk.threads if chunk.alive is None else np.bincount(chunk.block_local[chunk.alive],
                                                                     minlength=chunk.nblocks)
        full = arrivals >= np.maximum(np.minimum(need, live), 1)  # exited threads count as arrived
        arrivals[full] = 0
        done = full[chunk.block_local]
        st[done & ~act & (st == 1) & (ids == bid)] = 2  # the phase completes for the lanes waiting at it
        chunk.launch.counters.barriers += int(np.count_nonzero(full))
        if arrive:
            return
        wait = fresh & ~done
        if wait.any():
            st[wait] = 1
            ids[wait] = bid
            chunk.park(wait, block, ins, deadlock)

    return Op(run, "sync", exact=True)


def park_at_barrier(f: Any, m: Any, ins: Any, block: int, state: str, complete: Any, deadlock: str) -> None:
    """A barrier that waits (bar.warp.sync, bar.sync): the active lanes arrive; lanes whose barrier is
    complete (`complete(f, arrived, act)`, per lane, given which lanes have arrived, here or waiting at
    another instruction of the same barrier, exited lanes included) go on, and lanes still waiting
    elsewhere for it are released; the others are parked (`Chunk.park`). `state` names the chunk's
    per-lane array: 0 not at the barrier, 1 waiting, 2 released (not yet run on)."""
    chunk = f.chunk
    st = getattr(chunk, state)
    if m is None and st is None:  # the whole chunk is here at once: every lane arrives together
        return
    n = chunk.n
    act = np.ones(n, dtype=bool) if m is None else m
    alive = chunk.alive
    if alive is not None:
        act = act & alive
    if not act.any():
        return
    here = act if alive is None else act | ~alive  # exited and padding lanes count as arrived
    if st is None:
        if complete(f, here, act)[act].all():  # every lane it waits for is here: nothing waits
            return
        st = np.zeros(n, dtype=np.int8)
        setattr(chunk, state, st)
    released = act & (st == 2)
    st[released] = 0
    fresh = act & ~released
    st[fresh] = 1
    done = complete(f, here | (st > 0), act)
    st[fresh & done] = 0
    st[~act & (st == 1) & done] = 2  # lanes waiting at another instruction of this barrier go on too
    wait = fresh & ~done
    if wait.any():
        chunk.park(wait, block, ins, deadlock)
    elif not (st > 0).any():
        setattr(chunk, state, None)
