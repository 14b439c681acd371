"""Semantics of memory instructions: ld, st, ldu, cvta, isspacep, prefetch, and memcheck on each.

Source of truth for how an address becomes bytes: global (HBM, checked against the driver's
allocations), shared (per block, checked against the block's shared size), local (per thread,
checked against the thread's stack), param (kernel arguments and call slots) and generic addresses,
which resolve to one of those by window. Every access is checked before it happens.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.hw.isa.registry import DTYPES, LaneFault, Op, lowers, split_mods, write
from strata.hw.memory import GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE, uva_slot
from strata.hw.ptx.ir import Mem, Reg, Sink, Sym, Vec

SPACES = ("global", "shared", "local", "param", "const", "generic")
_U64 = np.uint64
# Distributed shared memory: a .shared::cluster address of cluster rank r's block is its offset plus
# (r + 1) << CLUSTER_SHIFT (mapa makes them); untagged offsets are the own block's (.shared::cta ones).
CLUSTER_SHIFT = 24
_OFFSET_MASK = (1 << CLUSTER_SHIFT) - 1
_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}


class AddrEntry:
    """Address work for one base register, shared by the ops of one basic-block execution that
    use it with different constant offsets (`[%r1]`, `[%r1+4]`, ...; e.g. an unrolled loop)."""

    __slots__ = ("_byte", "_make", "lo", "hi", "orr", "words", "alloc", "conflicts", "warp_first", "linear",
                 "stride")

    def __init__(self, byte: np.ndarray | None, lo: int, hi: int, orr: int, make: Any = None,
                 stride: int = 0) -> None:
        self._byte, self._make, self.lo, self.hi, self.orr = byte, make, lo, hi, orr
        self.words: dict[int, np.ndarray] = {}
        self.alloc: Any = None
        self.conflicts: tuple[int, int] | None = None  # (requests, conflicts), offset-invariant
        self.warp_first: np.ndarray | None = None
        self.linear: dict[int, bool] = {}
        self.stride = stride  # > 0: lane i's address is lo + i * stride (then `byte` is built lazily)

    @property
    def byte(self) -> np.ndarray:
        if self._byte is None:
            self._byte = self._make()
        return self._byte

    def index(self, shift: int) -> np.ndarray:
        w = self.words.get(shift)
        if w is None:
            w = self.byte >> shift
            self.words[shift] = w
        return w


class Access:
    """Resolved addresses of the active lanes in one state space.

    `off` are byte offsets into `buf`, one per selected lane; on the shared fast path they are
    `entry.byte + const` and built only if a consumer asks (`index()` avoids it).
    """

    __slots__ = ("space", "sel", "buf", "_off", "raw32", "entry", "const")

    def __init__(self, space: str, sel: np.ndarray | None, buf: Any, off: np.ndarray | None,
                 raw32: np.ndarray | None = None, entry: AddrEntry | None = None, const: int = 0) -> None:
        self.space, self.sel, self.buf, self._off = space, sel, buf, off
        self.raw32, self.entry, self.const = raw32, entry, const

    @property
    def off(self) -> np.ndarray:
        if self._off is None:
            assert self.entry is not None
            self._off = self.entry.byte + self.const
        return self._off

    @property
    def lanes(self) -> int:
        e = self.entry
        if e is not None:
            return (e.hi - e.lo) // e.stride + 1 if e.stride else e.byte.size
        return self._off.size  # type: ignore[union-attr]

    def linear_slice(self, view: np.ndarray, size: int, vec: int, k: int) -> np.ndarray | None:
        """Element k of every lane's vector as a strided slice of `view`, when lanes are consecutive."""
        e = self.entry
        if e is None or e.stride != size * vec or self.space != "global":
            return None
        start = (e.lo - GLOBAL_BASE + self.const) // size + k
        n = (e.hi - e.lo) // e.stride + 1
        return view[start: start + n * vec: vec]

    def view_index(self, view: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        """(view, index) so that view[index] are the accessed elements of `size` bytes."""
        shift = _SHIFT[size]
        if self.entry is not None and self.const >= 0 and self.const % size == 0:
            return view[self.const >> shift:], self.entry.index(shift)
        return view, self.off >> shift


_RAMPS: dict[tuple[int, int], np.ndarray] = {}


def _ramp(n: int, stride: int) -> np.ndarray:
    """0, stride, 2*stride, ... as uint64 (cached)."""
    r = _RAMPS.get((n, stride))
    if r is None:
        r = np.arange(n, dtype=np.uint64) * _U64(stride)
        r.flags.writeable = False
        _RAMPS[(n, stride)] = r
    return r


def space_of(ins: Any) -> str:
    for mod in ins.mods:
        base = mod.split("::", 1)[0]  # `.shared::cta` and `.shared::cluster` (mapa's addresses) are .shared
        if base in SPACES and (mod == base or mod in ("shared::cta", "shared::cluster")):
            return base
    return "generic"


class Addresser:
    """Computes and checks the addresses of `[base+offset]` for the active lanes."""

    def __init__(self, ctx: Any, ins: Any, op: Mem, space: str, size: int, access: str) -> None:
        self.ins, self.space, self.size, self.access = ins, space, size, access
        self.offset = op.offset
        self.key: tuple[Any, ...] | None = None
        # address arithmetic wraps at the address's width: a 32-bit register (shared/local offsets) wraps
        # mod 2^32, so NVRTC's folded `sub.s32 %r2, %r1, 64; ld.shared [%r2+68]` reads offset 4
        self.addr_mask = 0xFFFFFFFFFFFFFFFF
        if isinstance(op.base, Reg):
            rt = ctx.reg_type(op.base.name)
            wide = rt.endswith("64")
            if not wide:
                self.addr_mask = 0xFFFFFFFF
            self.base = ctx.src(op.base, "u64" if wide else "u32")
            self.const: int | None = None
            name = op.base.name
            self.key = (space, name, getattr(ctx, "last_write", {}).get(name, -1))
        elif isinstance(op.base, Sym):
            self.base = ctx.symbol_slot(op.base.name, np.dtype(np.uint64))
            self.const = None
        else:  # an absolute address `[0x1000]`
            self.base = -1
            self.const = op.offset
            self.offset = 0

    def lanes(self, f: Any, m: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray]:
        """(selected lanes or None, their addresses as uint64)."""
        if self.const is not None:
            v: Any = _U64(self.const & 0xFFFFFFFFFFFFFFFF)  # `[-4]`: an absolute address, 64 bits wide
        else:
            v = f.V[self.base]
        amask = self.addr_mask
        if isinstance(v, np.ndarray):
            a = v if v.dtype == np.uint64 else v.astype(np.uint64)
            if self.offset:
                a = a + _U64(self.offset & 0xFFFFFFFFFFFFFFFF)  # uint64 arithmetic wraps mod 2^64
                if amask != 0xFFFFFFFFFFFFFFFF:
                    a &= _U64(amask)
            if m is None:
                return None, a
            sel = np.flatnonzero(m)
            return sel, a[sel]
        addr = _U64((int(v) + self.offset) & amask)
        if m is None:
            return None, np.full(f.chunk.n, addr, dtype=np.uint64)
        lanes = np.flatnonzero(m)
        return lanes, np.full(lanes.size, addr, dtype=np.uint64)

    def resolve(self, f: Any, m: np.ndarray | None) -> list[Access]:
        if m is None and self.key is not None:
            v = f.V[self.base]
            if isinstance(v, np.ndarray):
                if self.space == "shared" and v.dtype == np.uint32:
                    acc = self._shared_fast(f, v)
                    if acc is not None:
                        return [acc]
                elif self.space in ("global", "const") and v.dtype == np.uint64:
                    acc = self._global_fast(f, v)
                    if acc is not None:
                        return [acc]
        sel, a = self.lanes(f, m)
        if a.size == 0:
            return []
        space = self.space
        if space == "generic":
            return self._generic(f, sel, a)
        return [self._one(f, space, sel, a)]

    def _generic(self, f: Any, sel: np.ndarray | None, a: np.ndarray) -> list[Access]:
        lo, hi = int(a.min()), int(a.max())
        if lo >= GLOBAL_BASE and hi < PARAM_WINDOW:
            return [self._one(f, "global", sel, a)]
        out = []
        lanes = np.arange(a.size) if sel is None else sel
        windows = (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW), ("param", PARAM_WINDOW))
        rest = np.ones(a.size, dtype=bool)
        for space, base in windows:
            inside = (a >= _U64(base)) & (a < _U64(base + WINDOW_SIZE))
            if inside.any():
                out.append(self._one(f, space, lanes[inside], a[inside] - _U64(base)))
                rest &= ~inside
        if rest.any():
            out.append(self._one(f, "global", lanes[rest], a[rest]))
        return out

    def _entry(self, f: Any, a: np.ndarray, make_byte: Any) -> AddrEntry:
        e = f.addr_cache.get(self.key)
        if e is None:
            e = AddrEntry(make_byte(a), int(a.min()), int(a.max()), int(np.bitwise_or.reduce(a)))
            f.addr_cache[self.key] = e
        return e

    def _shared_fast(self, f: Any, a: np.ndarray) -> Access | None:
        """All lanes, 32-bit shared addresses: bounds from the register's cached min/max."""
        chunk = f.chunk
        size, off = self.size, self.offset
        e = self._entry(f, a, lambda r: r.astype(np.int64) + chunk.shared_base)
        if (e.orr | off) & (size - 1) or e.hi + off + size > chunk.shared_limit or e.lo + off < 0:
            return None  # the general path finds and reports the offending lane
        return Access("shared", None, chunk.shared, None, a, e, off)

    def _global_fast(self, f: Any, a: np.ndarray) -> Access | None:
        """All lanes, 64-bit global addresses inside one allocation: one check per register.

        The common case, lane i at base + i * size, is recognised once and needs no gather."""
        mem = f.chunk.mem
        size, off = self.size, self.offset
        e = f.addr_cache.get(self.key)
        if e is None:
            first = int(a[0])
            if first + (a.size - 1) * size == int(a[-1]) and np.array_equal(a - a[0], _ramp(a.size, size)):
                e = AddrEntry(None, first, int(a[-1]), first, lambda: (a - _U64(GLOBAL_BASE)).view(np.int64),
                              stride=size)
                f.addr_cache[self.key] = e
            else:
                e = self._entry(f, a, lambda r: (r - _U64(GLOBAL_BASE)).view(np.int64))
        if e.alloc is None:
            e.alloc = mem.allocation_at(e.lo) or _peer_allocation(mem, e.lo) or False
        alloc = e.alloc
        if not alloc or (e.orr | off) & (size - 1) or e.lo + off < alloc.address or \
                e.hi + off + size > alloc.end or alloc.freed:
            return None
        if not mem.base <= alloc.address < mem.end:  # an enabled peer's allocation: interconnect traffic
            slot = uva_slot(alloc.address)
            mem.add_peer_bytes(slot, int(a.size) * size)
        return Access("global", None, mem, None, None, e, off)

    def _fault(self, f: Any, sel: np.ndarray | None, i: int, addr: int, why: str, nearest: str,
               name: str = "cudaErrorIllegalAddress", space: str = "global") -> LaneFault:
        lane = int(i if sel is None else sel[i])
        verb = {"read": "read", "write": "write", "atomic": "atomic"}.get(self.access, self.access)
        return LaneFault(
            lane, self.ins,
            f"Invalid {space} {verb} of size {self.size} bytes at address {addr:#x}: {why}",
            name, address=addr, size=self.size, access=self.access, space=space, reason=why,
            nearest=nearest,
        )

    def _one(self, f: Any, space: str, sel: np.ndarray | None, a: np.ndarray) -> Access:
        chunk = f.chunk
        size = self.size
        if space in ("global", "const"):
            top = int(a.max())
            if top > 0xFFFFFFFFFFFFFFFF - size:  # the access runs past 2^64: no allocation holds it
                i = int(np.argmax(a))
                raise self._fault(f, sel, i, top, "out of bounds", chunk.mem.describe_nearest(top))
            bad = chunk.mem.check(a, size)
            if bad is not None:
                name = "cudaErrorMisalignedAddress" if bad.kind == "misaligned" else "cudaErrorIllegalAddress"
                raise self._fault(f, sel, bad.lane, bad.address, bad.kind, bad.nearest, name, "global")
            return Access("global", sel, chunk.mem, (a - _U64(GLOBAL_BASE)).view(np.int64))
        if space == "shared":
            limit = chunk.shared_limit
            base = chunk.shared_base if sel is None else chunk.shared_base[sel]
            if int(a.max()) >> CLUSTER_SHIFT:  # distributed shared memory: another block of the cluster
                a, base = self._cluster_shared(f, sel, a, base)
            return Access("shared", sel, chunk.shared, self._window(f, sel, a, limit, "shared") + base)
        if space == "local":
            limit = chunk.local_top
            off = self._window(f, sel, a, limit, "local")
            cap = 0 if chunk.local is None else chunk.local.shape[1]
            lanes = np.arange(chunk.n) if sel is None else sel
            return Access("local", sel, chunk.local.reshape(-1) if chunk.local is not None else None,
                          off + lanes * cap)
        if space == "param":  # a generic address of a kernel parameter (cvta.param, __grid_constant__)
            params = chunk.launch.config.params
            if self.access != "read":
                raise self._fault(f, sel, 0, int(a[0]) + PARAM_WINDOW, "kernel parameters are read-only "
                                  "(a __grid_constant__ parameter cannot be written)", "kernel parameter buffer",
                                  space="param")
            off = self._window(f, sel, a, len(params), "param")
            buf = np.zeros(-(-len(params) // 16) * 16 or 16, dtype=np.uint8)  # whole elements for typed views
            buf[:len(params)] = np.frombuffer(params, dtype=np.uint8)
            return Access("param", sel, buf, off)
        raise AssertionError(space)

    def _cluster_shared(self, f: Any, sel: np.ndarray | None, a: np.ndarray,
                        base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(offsets, shared bases) of .shared::cluster addresses: the tag names the cluster rank's block."""
        chunk = f.chunk
        tag = (a >> _U64(CLUSTER_SHIFT)).astype(np.int64)
        peers = chunk.cluster_peers()
        size = peers.shape[1]
        ok = (tag > 0) & (tag <= size)  # other addresses stay as they are, for _window to report
        lanes = np.arange(chunk.n) if sel is None else sel
        peer = peers[chunk.block_local[lanes], np.clip(tag - 1, 0, size - 1)]
        return np.where(ok, a & _U64(_OFFSET_MASK), a), np.where(ok, peer * chunk.shared_size, base)

    def _window(self, f: Any, sel: np.ndarray | None, a: np.ndarray, limit: int, space: str) -> np.ndarray:
        size = self.size
        if size > 1:
            mis = a & _U64(size - 1)
            if mis.any():
                i = int(np.flatnonzero(mis)[0])
                raise self._fault(f, sel, i, int(a[i]), "misaligned", f"{space} window",
                                  "cudaErrorMisalignedAddress", space)
        if int(a.max()) + size > limit:
            # compare without `a + size`, which wraps for addresses near 2^64 (a negative 64-bit offset)
            i = int(np.flatnonzero(a > _U64(limit - size))[0]) if limit >= size else 0
            what = {"shared": f"the block's shared memory is {limit} bytes",
                    "param": f"the kernel's parameter buffer is {limit} bytes"}.get(
                        space, f"the thread's local memory is {limit} bytes")
            raise self._fault(f, sel, i, int(a[i]), f"out of bounds ({what})", what, space=space)
        return a.view(np.int64)


def _peer_allocation(mem: Any, address: int) -> Any:
    """The live allocation at `address` in the memory of a peer `mem` may access (peer access enabled),
    or None: lane-linear reads of a neighbour's buffer (NCCL's P2P transport) take the fast path too."""
    if not mem.peers:
        return None
    slot = uva_slot(address)
    peer = mem.peers.get(slot) if slot is not None else None
    return peer.allocation_at(address) if peer is not None else None


def typed(buf: Any, dtype: np.dtype) -> np.ndarray:
    if hasattr(buf, "typed"):
        return buf.typed(dtype)
    return buf.view(dtype)


# -- counters
def count_global(f: Any, acc: Access, nbytes: int, store: bool) -> None:
    c = f.chunk.launch.counters
    lanes = acc.lanes
    sectors, requests, ideal = _sectors(f, acc, nbytes)
    if store:
        c.global_store_bytes += lanes * nbytes
        c.global_store_sectors += sectors
        c.global_store_requests += requests
        c.global_store_ideal_sectors += ideal
    else:
        c.global_load_bytes += lanes * nbytes
        c.global_load_sectors += sectors
        c.global_load_requests += requests
        c.global_load_ideal_sectors += ideal


def _sectors(f: Any, acc: Access, nbytes: int) -> tuple[int, int, int]:
    """(32-byte sectors the warps touched, warp-level requests, sectors a perfectly coalesced request
    would touch: its distinct bytes over 32, rounded up). ideal <= sectors: lanes reading the same
    address (a broadcast) ask for its bytes once."""
    e = acc.entry
    if e is not None and e.stride == nbytes:
        n = (e.hi - e.lo) // nbytes + 1
        if n % 32 == 0:
            # warp w starts at first + w * 32 * nbytes, a multiple of 32 bytes further: every warp sits
            # the same way across sector boundaries, so all of them touch as many sectors as the first
            first = e.lo - GLOBAL_BASE + acc.const
            sectors = ((first + (32 * nbytes - 1)) >> 5) - (first >> 5) + 1
            return sectors * (n // 32), n // 32, n // 32 * nbytes  # 32 distinct lanes: 32 * nbytes bytes
    if e is not None and e.byte.size % 32 == 0:
        lin = e.linear.get(nbytes)
        if lin is None:
            w = e.byte.reshape(-1, 32)
            lin = bool(((w[:, 1:] - w[:, :-1]) == nbytes).all())
            e.linear[nbytes] = lin
            e.warp_first = w[:, 0].copy()
        if lin:
            assert e.warp_first is not None
            starts = e.warp_first + acc.const
            per_warp = ((starts + (31 * nbytes + nbytes - 1)) >> 5) - (starts >> 5) + 1
            return int(per_warp.sum()), int(starts.size), int(starts.size) * nbytes
    off = acc.off
    if acc.sel is None and off.size % 32 == 0:
        w = off.reshape(-1, 32)
        if ((w[:, 1:] - w[:, :-1]) == nbytes).all():
            lo, hi = w[:, 0] >> 5, (w[:, -1] + (nbytes - 1)) >> 5
            return int((hi - lo + 1).sum()), w.shape[0], w.shape[0] * nbytes
        warp_ids = None
    else:
        lanes = np.arange(off.size) if acc.sel is None else acc.sel
        warp_ids = lanes >> 5
    start = off >> 5
    end = (off + (nbytes - 1)) >> 5
    if warp_ids is None:
        warp_ids = np.arange(off.size) >> 5
    keys = np.concatenate([warp_ids * (1 << 40) + start, warp_ids * (1 << 40) + end])
    return _distinct(keys), _distinct(warp_ids), _ideal_sectors(warp_ids, off, nbytes)


def _ideal_sectors(warp_ids: np.ndarray, off: np.ndarray, nbytes: int) -> int:
    """Per warp request, its distinct addresses times `nbytes` over 32, rounded up; summed.

    Accesses are `nbytes`-aligned (memcheck), so distinct addresses never overlap."""
    if off.size == 0:
        return 0
    order = np.lexsort((off, warp_ids))
    w, o = warp_ids[order], off[order]
    new = np.ones(o.size, dtype=bool)
    new[1:] = (w[1:] != w[:-1]) | (o[1:] != o[:-1])  # first lane of each distinct (warp, address)
    warp_start = np.ones(o.size, dtype=bool)
    warp_start[1:] = w[1:] != w[:-1]
    per_warp = np.add.reduceat(new.astype(np.int64), np.flatnonzero(warp_start))  # distinct addresses
    return int(((per_warp * nbytes + 31) >> 5).sum())


def _distinct(a: np.ndarray) -> int:
    """How many distinct values `a` holds (np.unique(a).size, without building the set)."""
    if a.size == 0:
        return 0
    s = np.sort(a)
    return int(np.count_nonzero(s[1:] != s[:-1])) + 1


def count_shared(f: Any, acc: Access, nbytes: int, store: bool) -> None:
    c = f.chunk.launch.counters
    lanes = acc.lanes
    if store:
        c.shared_store_bytes += lanes * nbytes
    else:
        c.shared_load_bytes += lanes * nbytes
    e = acc.entry
    if e is not None:
        # a constant offset shifts every lane of a warp alike, so the conflicts don't change
        if e.conflicts is None:
            before = (c.shared_requests, c.shared_bank_conflicts)
            _count_conflicts(c, Access("shared", None, None, e.byte, acc.raw32))
            e.conflicts = (c.shared_requests - before[0], c.shared_bank_conflicts - before[1])
        else:
            c.shared_requests += e.conflicts[0]
            c.shared_bank_conflicts += e.conflicts[1]
        return
    _count_conflicts(c, acc)


def count_shared_requests(f: Any, nbytes: int, requests: int, conflicts: int, store: bool) -> None:
    """Add shared traffic counted elsewhere: `nbytes` moved in `requests` warp requests that needed
    `conflicts` extra wavefronts (e.g. a wmma.load whose warps share one cached address pattern)."""
    c = f.chunk.launch.counters
    if store:
        c.shared_store_bytes += nbytes
    else:
        c.shared_load_bytes += nbytes
    c.shared_requests += requests
    c.shared_bank_conflicts += conflicts


def warp_bank_conflicts(words: np.ndarray) -> np.ndarray:
    """Extra wavefronts of each request: row i of `words` (requests, L) are the 4-byte words one
    warp request touches (repeats allowed); a bank serves one distinct word per wavefront, so the
    request needs as many wavefronts as its busiest bank has distinct words. Returns (requests,) int64.

    Example:
        >>> warp_bank_conflicts(np.array([[0, 1, 2, 3], [0, 32, 64, 0], [5, 5, 5, 5]])).tolist()
        [0, 2, 0]
    """
    k, L = words.shape
    if k == 0 or L == 0:
        return np.zeros(k, dtype=np.int64)
    w = np.sort(words, axis=1)
    first = np.ones((k, L), dtype=bool)  # first occurrence of each distinct word in its row
    np.not_equal(w[:, 1:], w[:, :-1], out=first[:, 1:])
    keys = (np.arange(k, dtype=np.int64) * 32)[:, None] + (w & 31)
    per_bank = np.bincount(keys[first], minlength=32 * k).reshape(k, 32)
    return per_bank.max(axis=1).astype(np.int64) - 1


def _grouped_conflicts(wids: np.ndarray, words: np.ndarray) -> tuple[int, int]:
    """(requests, extra wavefronts) of word accesses tagged with their warp: one request per warp."""
    if wids.size == 0:
        return 0, 0
    if (wids[1:] >= wids[:-1]).all():
        # warps in order: with equal-sized groups (e.g. E elements per lane, whole warps), per-row sort
        sizes = np.diff(np.flatnonzero(np.concatenate(([True], wids[1:] != wids[:-1], [True]))))
        if (sizes == sizes[0]).all():
            rows = words.reshape(-1, int(sizes[0]))
            return rows.shape[0], int(warp_bank_conflicts(rows).sum())
    keys = np.sort(wids.astype(np.int64) * (1 << 40) + words)  # (warp, word) pairs, warp-major
    first = np.ones(keys.size, dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    kw = keys >> 40
    new_warp = np.ones(keys.size, dtype=bool)
    np.not_equal(kw[1:], kw[:-1], out=new_warp[1:])
    warp = np.cumsum(new_warp) - 1  # compact warp index 0 .. warps-1
    nw = int(warp[-1]) + 1
    per_bank = np.bincount((warp * 32 + (keys & 31))[first], minlength=32 * nw).reshape(nw, 32)
    return nw, int((per_bank.max(axis=1) - 1).sum())


def _count_conflicts(c: Any, acc: Access) -> None:
    if acc.raw32 is not None and acc.raw32.size % 32 == 0:
        # a uniform shift of a warp's addresses keeps its conflicts, so test the raw register:
        # lane 0 lowest and every lane within 128 bytes of it -> one wavefront per request
        r = acc.raw32.reshape(-1, 32)
        if ((r - r[:, :1]) < 128).all():
            c.shared_requests += r.shape[0]
            return
    word = acc.off >> 2  # conflicts are per warp, and a warp's lanes share one block base
    if acc.sel is None and word.size % 32 == 0:
        w = word.reshape(-1, 32)
        c.shared_requests += w.shape[0]
        span = w.max(axis=1) - w.min(axis=1)
        if (span < 32).all():  # distinct words within 32 of each other sit in distinct banks
            return
        c.shared_bank_conflicts += int(warp_bank_conflicts(w[span >= 32]).sum())
        return
    lanes_idx = np.arange(word.size) if acc.sel is None else acc.sel
    requests, conflicts = _grouped_conflicts(lanes_idx >> 5, word)
    c.shared_requests += requests
    c.shared_bank_conflicts += conflicts


# -- ld / st
def _vec_dsts(ctx: Any, op: Any, t: str) -> list[int | None]:
    elems = op.elems if isinstance(op, Vec) else (op,)
    return [None if isinstance(e, Sink) else ctx.dst(e, t) for e in elems]


def _vec_srcs(ctx: Any, op: Any, t: str) -> list[int]:
    elems = op.elems if isinstance(op, Vec) else (op,)
    return [ctx.src(e, t) for e in elems]


def _mem_type(ctx: Any, ins: Any) -> tuple[str, int]:
    _, types = split_mods(ins.mods)
    if len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode} needs exactly one type")
    t = types[0]
    vec = 1
    for mod in ins.mods:
        if mod in ("v2", "v4", "v8"):
            vec = int(mod[1:])
    return t, vec


@lowers("ld", "ldu")
def lower_ld(ins: Any, ctx: Any) -> Op:
    t, vec = _mem_type(ctx, ins)
    space = space_of(ins)
    if len(ins.operands) < 2 or not isinstance(ins.operands[1], Mem):
        raise ctx.fail(f"{ins.full_opcode} needs a destination and an address")
    dtype = DTYPES[t] if t != "pred" else None
    if dtype is None:
        raise ctx.fail("ld cannot load a predicate")
    # loads move bits: a float type loads as its same-size unsigned type, so a wider destination register
    # (`ld.global.f32 %rd1`, allowed by the PTX ISA) gets the bits zero-extended, not the value converted
    load_t = {"f16": "u16", "bf16": "u16", "f32": "u32", "f64": "u64"}.get(t, t)
    dsts = _vec_dsts(ctx, ins.operands[0], load_t)
    if len(dsts) != vec:
        raise ctx.fail(f"{ins.full_opcode} expects {vec} destination registers, got {len(dsts)}")
    if space == "param":
        return _ld_param(ins, ctx, dsts, np.dtype(DTYPES[load_t]))
    ldt = np.dtype(DTYPES[load_t])
    size = ldt.itemsize
    addresser = Addresser(ctx, ins, ins.operands[1], space, size * vec, "read")

    def run(f: Any, m: Any) -> None:
        V = f.V
        for acc in addresser.resolve(f, m):
            tv = typed(acc.buf, ldt)
            if acc.entry is not None and acc.entry.stride:
                for k, d in enumerate(dsts):
                    sl = acc.linear_slice(tv, size, vec, k)
                    if sl is None:
                        break
                    if d is not None:
                        np.copyto(V[d], sl, casting="unsafe")
                else:
                    count_global(f, acc, size * vec, False)
                    continue
            view, idx = acc.view_index(tv, size)
            for k, d in enumerate(dsts):
                if d is None:
                    continue
                ix = idx + k if k else idx
                out = V[d]
                if acc.sel is None:
                    if out.dtype == ldt and out.flags.c_contiguous:
                        np.take(view, ix, out=out, mode="clip")  # bounds already checked
                    else:
                        np.copyto(out, view[ix], casting="unsafe")
                else:
                    out[acc.sel] = view[ix]
            if acc.space == "global":
                count_global(f, acc, size * vec, False)
            elif acc.space == "shared":
                count_shared(f, acc, size * vec, False)
            elif acc.space == "local":  # (a kernel parameter read through a generic address is a constant-bank read)
                f.chunk.launch.counters.local_bytes += acc.lanes * size * vec

    return Op(run, "memory", exact=True)


@lowers("st")
def lower_st(ins: Any, ctx: Any) -> Op:
    t, vec = _mem_type(ctx, ins)
    space = space_of(ins)
    if len(ins.operands) != 2 or not isinstance(ins.operands[0], Mem):
        raise ctx.fail(f"{ins.full_opcode} needs an address and a value")
    store_t = {"f16": "u16", "bf16": "u16"}.get(t, t)
    srcs = _vec_srcs(ctx, ins.operands[1], store_t)
    if len(srcs) != vec:
        raise ctx.fail(f"{ins.full_opcode} expects {vec} source registers, got {len(srcs)}")
    stt = np.dtype(DTYPES[store_t])
    if space == "param":
        return _st_param(ins, ctx, srcs, stt)
    size = stt.itemsize
    addresser = Addresser(ctx, ins, ins.operands[0], space, size * vec, "write")

    def run(f: Any, m: Any) -> None:
        V = f.V
        for acc in addresser.resolve(f, m):
            tv = typed(acc.buf, stt)
            if acc.entry is not None and acc.entry.stride:
                for k, s in enumerate(srcs):
                    sl = acc.linear_slice(tv, size, vec, k)
                    if sl is None:
                        break
                    sl[...] = V[s]
                else:
                    count_global(f, acc, size * vec, True)
                    continue
            view, idx = acc.view_index(tv, size)
            for k, s in enumerate(srcs):
                v = V[s]
                if isinstance(v, np.ndarray) and acc.sel is not None:
                    v = v[acc.sel]
                view[idx + k if k else idx] = v
            if acc.space == "global":
                count_global(f, acc, size * vec, True)
            elif acc.space == "shared":
                count_shared(f, acc, size * vec, True)
            else:
                f.chunk.launch.counters.local_bytes += acc.lanes * size * vec

    return Op(run, "memory", exact=True)


# -- the param space: kernel arguments (uniform) and call slots (per lane)
def _param_target(ins: Any, ctx: Any, op: Any) -> tuple[str, int, str]:
    if not isinstance(op, Mem) or not isinstance(op.base, Sym):
        raise ctx.unsupported(f"{ins.full_opcode} through a register address")
    name = op.base.name
    fn = ctx.fn
    if fn.is_entry:
        off = 0
        for p in fn.params:
            off = -(-off // p.align) * p.align
            if p.name == name:
                return "kernel", off + op.offset, name
            off += p.size
    for p in (*fn.params, *fn.returns):
        if p.name == name:
            return "frame", op.offset, name
    if name in ctx.param_vars:
        return "frame", op.offset, name
    raise ctx.fail(f"unknown parameter {name!r}")


def _param_size(ctx: Any, name: str) -> int:
    for p in (*ctx.fn.params, *ctx.fn.returns):
        if p.name == name:
            return p.size
    return ctx.param_vars.get(name, 8)


def _check_param_range(ctx: Any, name: str, off: int, nbytes: int, psize: int) -> None:
    """A call's `.param` accesses have static offsets: one outside its variable is malformed PTX."""
    if off < 0 or off + nbytes > max(psize, 1):
        raise ctx.fail(f"{ctx.ins.full_opcode} accesses bytes {off}..{off + nbytes} of .param {name}, "
                       f"which has {psize}")


def _ld_param_through_register(ins: Any, ctx: Any, dsts: list[int | None], dt: np.dtype) -> Op:
    """`ld.param [%rd+off]` where %rd holds a kernel parameter's address (PARAM_WINDOW + its offset)."""
    op = ins.operands[1]
    wide = ctx.reg_type(op.base.name).endswith("64")
    base = ctx.src(op.base, "u64" if wide else "u32")
    size = dt.itemsize

    def run(f: Any, m: Any) -> None:
        params = np.frombuffer(f.chunk.launch.config.params, dtype=np.uint8)
        V = f.V
        offs = np.broadcast_to(np.asarray(V[base], dtype=np.int64) - PARAM_WINDOW + op.offset, (f.chunk.n,))
        live = offs if m is None else offs[m]
        if live.size and (int(live.min()) < 0 or int(live.max()) + size * len(dsts) > len(params)):
            lane = int(np.flatnonzero((offs < 0) | (offs + size * len(dsts) > len(params)))[0])
            raise LaneFault(lane, ins, f"ld.param through a register reads outside the kernel's {len(params)}-byte "
                            f"parameter buffer (offset {int(offs[lane])})", "cudaErrorIllegalAddress")
        for k, d in enumerate(dsts):
            if d is not None:
                idx = np.clip(offs[:, None] + (k * size + np.arange(size)), 0, max(len(params) - 1, 0))
                write(V[d], np.ascontiguousarray(params[idx]).view(dt)[:, 0], m)

    return Op(run, "memory", exact=False)


def _ld_param(ins: Any, ctx: Any, dsts: list[int | None], dt: np.dtype) -> Op:
    op = ins.operands[1]
    if isinstance(op, Mem) and isinstance(op.base, Reg) and ctx.fn.is_entry:
        return _ld_param_through_register(ins, ctx, dsts, dt)
    kind, off, name = _param_target(ins, ctx, op)
    size = dt.itemsize
    if kind == "kernel":
        def run_kernel(f: Any, m: Any) -> None:
            params = f.chunk.launch.config.params
            V = f.V
            for k, d in enumerate(dsts):
                if d is not None:
                    o = off + k * size
                    if o + size > len(params):
                        raise LaneFault(0, ins, f"ld.param reads past the kernel's {len(params)}-byte parameter "
                                        f"buffer at offset {o}", "cudaErrorInvalidValue")
                    write(V[d], np.frombuffer(params, dtype=dt, count=1, offset=o)[0], m)

        return Op(run_kernel, "memory", exact=False)
    psize = _param_size(ctx, name)
    _check_param_range(ctx, name, off, len(dsts) * size, psize)

    def run_frame(f: Any, m: Any) -> None:
        store = f.param(name, psize)
        V = f.V
        for k, d in enumerate(dsts):
            if d is not None:
                o = off + k * size
                write(V[d], store[:, o:o + size].copy().view(dt)[:, 0], m)

    return Op(run_frame, "memory", exact=False)


def _st_param(ins: Any, ctx: Any, srcs: list[int], dt: np.dtype) -> Op:
    kind, off, name = _param_target(ins, ctx, ins.operands[0])
    if kind == "kernel":
        raise ctx.fail("st.param cannot write a kernel parameter")
    size = dt.itemsize
    psize = _param_size(ctx, name)
    _check_param_range(ctx, name, off, len(srcs) * size, psize)

    def run(f: Any, m: Any) -> None:
        store = f.param(name, psize)
        V = f.V
        for k, s in enumerate(srcs):
            o = off + k * size
            vals = np.broadcast_to(np.asarray(V[s], dtype=dt), (f.chunk.n,))
            raw = np.ascontiguousarray(vals).view(np.uint8).reshape(-1, size)
            if m is None:
                store[:, o:o + size] = raw
            else:
                store[m, o:o + size] = raw[m]

    return Op(run, "memory", exact=True)


# -- address conversion
@lowers("cvta")
def lower_cvta(ins: Any, ctx: Any) -> Op:
    flags, types = split_mods(ins.mods)
    to = "to" in flags
    spaces = [s for s in flags if s in ("global", "shared", "local", "const", "param")]
    if len(spaces) != 1 or len(types) != 1:
        raise ctx.fail(f"bad {ins.full_opcode}")
    space, t = spaces[0], types[0]
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    if space == "param" and not ctx.fn.is_entry:
        raise ctx.unsupported(f"{ins.full_opcode} in a device function")  # its .param are per-call slots
    d = ctx.dst(ins.operands[0], t)
    a = ctx.src(ins.operands[1], t)
    wide = np.dtype(DTYPES[t]).type
    delta = wide(base & (2 ** (8 * np.dtype(DTYPES[t]).itemsize) - 1))

    # global and const generic addresses are the addresses themselves, and so are a kernel parameter's:
    # `mov.b64 %rd, k_param_0` already gives PARAM_WINDOW + its offset, which generic loads read
    if not delta:
        def run_copy(f: Any, m: Any) -> None:
            V = f.V
            write(V[d], V[a], m)

        return Op(run_copy, "integer")

    def run(f: Any, m: Any) -> None:
        V = f.V
        v = V[a]
        write(V[d], v - delta if to else v + delta, m)

    return Op(run, "integer")


@lowers("mapa")
def lower_mapa(ins: Any, ctx: Any) -> Op:
    """mapa{.shared::cluster}.u32/.u64 d, a, r: the address of the variable at shared address a in the block
    of cluster rank r (distributed shared memory); without a space, generic addresses in and out."""
    flags, types = split_mods(ins.mods)
    if len(types) != 1 or types[0] not in ("u32", "u64") or any(x != "shared::cluster" for x in flags) or \
            len(ins.operands) != 3:
        raise ctx.fail(f"bad {ins.full_opcode}: expected mapa{{.shared::cluster}}.u32/.u64 d, a, rank")
    t = types[0]
    generic = not flags
    d = ctx.dst(ins.operands[0], t)
    a = ctx.src(ins.operands[1], t)
    r = ctx.src(ins.operands[2], "u32")
    wide = np.dtype(DTYPES[t]).type

    def run(f: Any, m: Any) -> None:
        V = f.V
        n = f.chunk.n
        rank = np.broadcast_to(np.asarray(V[r], dtype=np.int64), (n,))
        size = f.chunk.cluster_peers().shape[1]
        bad = rank >= size if m is None else (rank >= size) & m
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise LaneFault(lane, ins, f"mapa to cluster rank {int(rank[lane])} of a {size}-block cluster",
                            "cudaErrorIllegalAddress", reason="cluster rank out of range")
        addr = np.broadcast_to(np.asarray(V[a], dtype=np.uint64), (n,))
        off = (addr - _U64(SHARED_WINDOW) if generic else addr) & _U64(_OFFSET_MASK)
        out = off | ((rank.astype(np.uint64) + _U64(1)) << _U64(CLUSTER_SHIFT))
        write(V[d], (out + _U64(SHARED_WINDOW) if generic else out).astype(wide), m)

    return Op(run, "integer")


@lowers("isspacep")
def lower_isspacep(ins: Any, ctx: Any) -> Op:
    flags, _ = split_mods(ins.mods)
    space = flags[0] if flags else ""
    ranges = {"shared": (SHARED_WINDOW, SHARED_WINDOW + WINDOW_SIZE),
              "local": (LOCAL_WINDOW, LOCAL_WINDOW + WINDOW_SIZE),
              "param": (PARAM_WINDOW, PARAM_WINDOW + WINDOW_SIZE),
              "global": (GLOBAL_BASE, PARAM_WINDOW), "const": (GLOBAL_BASE, PARAM_WINDOW)}
    if space not in ranges:
        raise ctx.unsupported()
    lo, hi = (_U64(x) for x in ranges[space])
    d = ctx.dst(ins.operands[0], "pred")
    a = ctx.src(ins.operands[1], "u64")

    def run(f: Any, m: Any) -> None:
        V = f.V
        v = V[a]
        write(V[d], (v >= lo) & (v < hi), m)

    return Op(run, "integer")


@lowers("prefetch", "prefetchu", "applypriority", "discard", "createpolicy")
def lower_prefetch(ins: Any, ctx: Any) -> Op:
    if ins.opcode == "createpolicy":
        d = ctx.dst(ins.operands[0], "b64")

        def run_policy(f: Any, m: Any) -> None:
            write(f.V[d], 0, m)

        return Op(run_policy, "integer")

    def run(f: Any, m: Any) -> None:  # cache hints: no architectural effect
        return None

    return Op(run, "memory")
