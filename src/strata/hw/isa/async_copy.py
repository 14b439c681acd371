# Source of truth for the asynchronous global->shared copies of the virtual GPU (PTX ISA 9.7.9.25.3):
# cp.async (.ca/.cg, 4/8/16 bytes, src-size zero fill, ignore-src), cp.async.commit_group,
# cp.async.wait_group and cp.async.wait_all, with the per-thread bulk-group bookkeeping they imply.
"""Asynchronous copies: cp.async, cp.async.commit_group, cp.async.wait_group N, cp.async.wait_all.

strata reads the source when a cp.async issues (after memcheck of both addresses, so a fault names
the cp.async's PTX line) and writes the destination when the thread waits for the copy's group:
until then shared memory keeps its old bytes, a deterministic choice among the outcomes the ISA
allows, which makes a missing wait show up as stale data instead of passing by luck.

Per thread: copies issued since the last commit form the open group; `commit_group` closes it;
`wait_group N` completes every copy of all but the N most recent committed groups (copies not yet
committed are not waited for); `wait_all` is `commit_group` then `wait_group 0`. Copies complete in
issue order. No other instruction (not even bar.sync) completes a copy, as on hardware.

cp.async.mbarrier.arrive{.noinc} [mbar] completes every outstanding copy of the thread at once (a legal
moment: they must complete before the arrive it triggers) and then, with .noinc, arrives on the mbarrier;
without .noinc the pending count's increment and the triggered arrival cancel out (isa/mbarrier.py).

cp.async.bulk.shared::{cta,cluster}.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar] (what
cuda::memcpy_async emits on sm_90 for 16-byte aligned sizes) copies its bytes when it issues and signals
complete_tx of `size` bytes on the mbarrier; an mbarrier's tx-count may go negative until the matching
expect_tx, as the ISA allows.

Counters: cp.async is class 'memory' (the source bytes count as global loads, the destination bytes
as shared stores, when it issues); commit_group and wait_group are class 'sync'.

Example:
    >>> st = _State(4)
    >>> st.committed.tolist()
    [0, 0, 0, 0]
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from strata.hw.isa.memory import Addresser, count_global, count_shared
from strata.hw.isa.registry import LaneFault, Op, lowers
from strata.hw.isa.tensor import ElementAddresser
from strata.hw.ptx.ir import Imm, Instruction, Mem, Reg

_HINTS = ("L2::cache_hint", "L2::64B", "L2::128B", "L2::256B")


class _Copy:
    """One cp.async's lanes, their groups, destination offsets in the chunk's shared memory, and data."""

    __slots__ = ("lanes", "group", "dst", "data")

    def __init__(self, lanes: np.ndarray, group: np.ndarray, dst: np.ndarray, data: np.ndarray) -> None:
        self.lanes, self.group, self.dst, self.data = lanes, group, dst, data


class _State:
    """A chunk's outstanding copies and each lane's count of committed groups."""

    def __init__(self, n: int) -> None:
        self.committed = np.zeros(n, dtype=np.int64)
        self.pending: list[_Copy] = []


# NOTE: keyed by the engine's Chunk (a chunk's blocks run to completion before the next chunk), so a
# chunk's copies and group counters live and die with it; weak, so nothing outlives a launch.
_STATES: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()


def _state(chunk: Any) -> _State:
    st = _STATES.get(chunk)
    if st is None:
        st = _State(chunk.n)
        _STATES[chunk] = st
    return st


@lowers("cp")
def lower_cp(ins: Instruction, ctx: Any) -> Op:
    """cp.async{.ca,.cg}, cp.async.commit_group, cp.async.wait_group, cp.async.wait_all."""
    mods = ins.mods
    if len(mods) < 2 or mods[0] != "async":
        raise ctx.unsupported()  # cp.reduce.async.bulk and friends
    if mods[1:] == ("commit_group",):
        return _lower_commit(ins, ctx)
    if mods[1:] in (("wait_group",), ("wait_all",)):
        return _lower_wait(ins, ctx)
    if mods[1] in ("ca", "cg"):
        return _lower_copy(ins, ctx)
    if mods[1] == "mbarrier":
        return _lower_mbarrier_arrive(ins, ctx)
    if mods[1] == "bulk":
        return _lower_bulk(ins, ctx)
    raise ctx.unsupported()


def _lower_copy(ins: Instruction, ctx: Any) -> Op:
    """cp.async.{ca,cg}.shared{::cta}.global{.hints} [dst], [src], cp-size{, src-size | ignore-src}{, policy}."""
    flags = ins.mods[2:]
    spaces = [m.split("::")[0] for m in flags if m not in _HINTS]
    if spaces != ["shared", "global"] or (flags[0] not in ("shared", "shared::cta")):
        raise ctx.unsupported()
    ops = list(ins.operands)
    if "L2::cache_hint" in flags:
        if len(ops) < 4:
            raise ctx.fail(f"{ins.full_opcode}: .L2::cache_hint needs a cache-policy operand")
        ctx.src(ops.pop(), "b64")  # a hint only
    if len(ops) not in (3, 4) or not isinstance(ops[0], Mem) or not isinstance(ops[1], Mem) or \
            not isinstance(ops[2], Imm):
        raise ctx.fail(f"{ins.full_opcode} takes [dst], [src], cp-size and an optional src-size or ignore-src")
    size = ops[2].value
    if size not in (4, 8, 16) or (ins.mods[1] == "cg" and size != 16):
        raise ctx.fail(f"{ins.full_opcode}: cp-size must be 4, 8 or 16 (16 with .cg), got {size}")
    src_size = ignore = None
    neg = False
    if len(ops) == 4:
        extra = ops[3]
        if isinstance(extra, Reg) and ctx.reg_type(extra.name) == "pred":
            ignore, neg = ctx.pred(extra)
        else:
            src_size = ctx.src(extra, "u32")
    dst = Addresser(ctx, ins, ops[0], "shared", size, "write")
    src = Addresser(ctx, ins, ops[1], "global", size, "read")
    part = ElementAddresser(ctx, ins, ops[1], "global", 1, "read")
    cols = np.arange(size)

    def run(f: Any, m: Any) -> None:
        chunk, V = f.chunk, f.V
        accs = dst.resolve(f, m)
        if not accs:
            return
        dacc = accs[0]
        lanes = np.arange(chunk.n) if dacc.sel is None else dacc.sel
        dst_off = np.array(dacc.off, dtype=np.int64)
        count_shared(f, dacc, size, True)
        data = np.zeros((lanes.size, size), dtype=np.uint8)
        # bytes each lane reads from src: cp-size, src-size (the rest is zero-filled) or 0 (ignore-src)
        nread: Any = size
        if src_size is not None:
            nread = np.minimum(np.broadcast_to(np.asarray(V[src_size], dtype=np.int64), (chunk.n,)), size)
        elif ignore is not None:
            p = np.broadcast_to(V[ignore], (chunk.n,))
            nread = np.where(~p if neg else p, 0, size)
        if isinstance(nread, int):
            full_mask = m
        else:
            full_mask = nread == size if m is None else m & (nread == size)
        if full_mask is None or full_mask.any():
            for sacc in src.resolve(f, full_mask):
                got = chunk.mem.bytes[sacc.off[:, None] + cols[None, :]]
                rows = slice(None) if sacc.sel is None and dacc.sel is None else \
                    np.searchsorted(lanes, np.arange(chunk.n) if sacc.sel is None else sacc.sel)
                data[rows] = got
                count_global(f, sacc, size, False)
        if not isinstance(nread, int):
            part_mask = (nread > 0) & (nread < size)
            if m is not None:
                part_mask &= m
            if part_mask.any():
                sel, a = part.lanes(f, part_mask)
                assert sel is not None
                valid = cols[None, :] < nread[sel][:, None]
                rows_p = np.searchsorted(lanes, sel)
                for pos, sacc in part.resolve_elements(f, sel, a, cols, valid):
                    data[rows_p[pos // size], pos % size] = chunk.mem.bytes[sacc.off]
                    count_global(f, sacc, 1, False)
        st = _state(chunk)
        st.pending.append(_Copy(lanes, st.committed[lanes].copy(), dst_off, data))

    return Op(run, "memory", exact=True)


def _lower_commit(ins: Instruction, ctx: Any) -> Op:
    if ins.operands:
        raise ctx.fail("cp.async.commit_group takes no operands")

    def run(f: Any, m: Any) -> None:
        st = _state(f.chunk)
        if m is None:
            st.committed += 1
        else:
            st.committed[m] += 1

    return Op(run, "sync", exact=True)


def _lower_wait(ins: Instruction, ctx: Any) -> Op:
    wait_all = ins.mods[1] == "wait_all"
    if wait_all:
        if ins.operands:
            raise ctx.fail("cp.async.wait_all takes no operands")
        keep = 0
    else:
        if len(ins.operands) != 1 or not isinstance(ins.operands[0], Imm) or ins.operands[0].value < 0:
            raise ctx.fail("cp.async.wait_group takes one non-negative integer constant")
        keep = ins.operands[0].value

    def run(f: Any, m: Any) -> None:
        chunk = f.chunk
        st = _state(chunk)
        if wait_all:  # commit the open group, then wait for everything
            if m is None:
                st.committed += 1
            else:
                st.committed[m] += 1
        if not st.pending:
            return
        limit = st.committed - keep  # a copy completes when its group index is below this
        waiting = np.ones(chunk.n, dtype=bool) if m is None else m
        still: list[_Copy] = []
        for cp in st.pending:
            done = waiting[cp.lanes] & (cp.group < limit[cp.lanes])
            if done.any():
                idx = cp.dst[done][:, None] + np.arange(cp.data.shape[1])[None, :]
                chunk.shared[idx] = cp.data[done]
            if not done.all():
                rest = ~done
                still.append(_Copy(cp.lanes[rest], cp.group[rest], cp.dst[rest], cp.data[rest]))
        st.pending = still

    return Op(run, "sync", exact=True)


def complete_lanes(chunk: Any, lanes: np.ndarray) -> None:
    """Complete every outstanding cp.async of `lanes` (a bool mask) now, whatever its group."""
    st = _STATES.get(chunk)
    if st is None or not st.pending:
        return
    still: list[_Copy] = []
    for cp in st.pending:
        done = lanes[cp.lanes]
        if done.any():
            idx = cp.dst[done][:, None] + np.arange(cp.data.shape[1])[None, :]
            chunk.shared[idx] = cp.data[done]
        if not done.all():
            rest = ~done
            still.append(_Copy(cp.lanes[rest], cp.group[rest], cp.dst[rest], cp.data[rest]))
    st.pending = still


def _lower_mbarrier_arrive(ins: Instruction, ctx: Any) -> Op:
    """cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [mbar]."""
    from strata.hw.isa import mbarrier  # NOTE: a sibling family; imported late so either may load first

    flags = ins.mods[2:]
    noinc = "noinc" in flags
    if any(m not in ("arrive", "noinc", "shared", "shared::cta", "b64") for m in flags) or "arrive" not in flags \
            or "b64" not in flags:
        raise ctx.unsupported()
    if len(ins.operands) != 1 or not isinstance(ins.operands[0], Mem):
        raise ctx.fail(f"{ins.full_opcode} takes one operand, [mbar]")
    addr = mbarrier.barrier_operand(ins, ctx, ins.operands[0], "write")

    def run(f: Any, m: Any) -> None:
        lanes, off = mbarrier.barrier_lanes(f, m, addr)
        if not lanes.size:
            return
        mbarrier.check_initialized(f, ins, lanes, off)
        mask = np.zeros(f.chunk.n, dtype=bool)
        mask[lanes] = True
        complete_lanes(f.chunk, mask)
        if noinc:
            mbarrier.arrive_lanes(f, ins, lanes, off)

    return Op(run, "sync", exact=True)


def _lower_bulk(ins: Instruction, ctx: Any) -> Op:
    """cp.async.bulk.shared::{cta,cluster}.global.mbarrier::complete_tx::bytes{.L2::cache_hint}
    [dst], [src], size, [mbar]{, policy}."""
    from strata.hw.isa import mbarrier  # NOTE: a sibling family; imported late so either may load first

    flags = ins.mods[2:]
    if len(flags) < 3 or flags[0] not in ("shared::cta", "shared::cluster") or flags[1] != "global" or \
            flags[2] != "mbarrier::complete_tx::bytes" or any(m != "L2::cache_hint" for m in flags[3:]):
        raise ctx.unsupported()  # bulk copies to global (bulk_group), multicast, prefetch: not modeled
    ops = list(ins.operands)
    if "L2::cache_hint" in flags:
        if len(ops) != 5:
            raise ctx.fail(f"{ins.full_opcode}: .L2::cache_hint needs a cache-policy operand")
        ctx.src(ops.pop(), "b64")  # a hint only
    if len(ops) != 4 or not isinstance(ops[0], Mem) or not isinstance(ops[1], Mem) or not isinstance(ops[3], Mem):
        raise ctx.fail(f"{ins.full_opcode} takes [dst], [src], size, [mbar]")
    dst = ElementAddresser(ctx, ins, ops[0], "shared", 16, "write")
    src = ElementAddresser(ctx, ins, ops[1], "global", 16, "read")
    size_slot = ctx.src(ops[2], "u32")
    bar = Addresser(ctx, ins, ops[3], "shared", 8, "write")
    cols16 = np.arange(16)

    def run(f: Any, m: Any) -> None:
        chunk = f.chunk
        lanes, boff = mbarrier.barrier_lanes(f, m, bar)
        if not lanes.size:
            return
        mbarrier.check_initialized(f, ins, lanes, boff)
        mask = np.zeros(chunk.n, dtype=bool)
        mask[lanes] = True
        v = f.V[size_slot]
        size = (v[lanes] if isinstance(v, np.ndarray) else np.full(lanes.size, v)).astype(np.int64)
        if (size % 16).any():
            i = int(np.flatnonzero(size % 16)[0])
            raise LaneFault(int(lanes[i]), ins, f"{ins.full_opcode}: size {int(size[i])} is not a multiple of 16",
                            "cudaErrorMisalignedAddress", reason="bulk copy size")
        nel = int(size.max()) // 16
        if nel:
            offsets = np.arange(nel, dtype=np.int64) * 16
            valid = offsets[None, :] < size[:, None]
            sel_s, a_s = src.lanes(f, mask)
            sel_d, a_d = dst.lanes(f, mask)
            assert sel_s is not None and sel_d is not None
            data = np.zeros((lanes.size * nel, 16), dtype=np.uint8)
            for pos, acc in src.resolve_elements(f, sel_s, a_s, offsets, valid):
                data[pos] = chunk.mem.bytes[np.asarray(acc.off)[:, None] + cols16]
                count_global(f, acc, 16, False)
            for pos, acc in dst.resolve_elements(f, sel_d, a_d, offsets, valid):
                chunk.shared[np.asarray(acc.off)[:, None] + cols16] = data[pos]
                count_shared(f, acc, 16, True)
        mbarrier.complete_tx(f, ins, lanes, boff, size)

    return Op(run, "memory", exact=True)
