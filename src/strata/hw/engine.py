"""The SIMT engine: runs a kernel launch as NumPy vectors of threads, many blocks at a time.

Source of truth for how the virtual GPU executes: lanes are array elements (one per thread; each
block's threads padded to whole 32-lane warps), a chunk holds as many whole blocks as fit in
`STRATA_CHUNK_LANES`, and control flow follows a reconvergence stack: a branch whose lanes disagree
splits the active mask, both sides run, and lanes rejoin at the branch's immediate post-dominator.
"""

from __future__ import annotations

import mmap
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from strata import config as _settings
from strata.errors import CudaError, DeviceFault, InvalidLaunchConfig, LaunchCancelled, LaunchTimeout
from strata.hw.counters import INSTRUCTION_CLASSES, Counters
from strata.hw.isa.registry import LaneFault
from strata.hw.jit import EXIT, JitFunction, Program, const_value
from strata.hw.memory import DeviceMemory


def _keep_freed_memory() -> None:
    """Ask glibc to keep freed blocks instead of returning them to the OS.

    Every instruction makes temporaries of chunk size (~0.5 MB); by default glibc maps and unmaps
    each one, so each use page-faults afresh. Measured 3-5x faster on multi-step ops.
    """
    import ctypes
    import ctypes.util
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: serve big blocks from the heap
        libc.mallopt(-1, 1 << 31)  # M_TRIM_THRESHOLD: don't give the heap back eagerly
    except (OSError, AttributeError):
        pass


_keep_freed_memory()

POLL_BLOCKS = 32  # basic blocks between looks at the watchdog clock and the cancel flag
MAX_LOCAL_BYTES = 512 * 1024  # per thread (CUDA's local memory limit on sm_70..sm_100)
DEFAULT_STACK_BYTES = 1024  # cudaLimitStackSize's default, per thread
LOCAL_CHUNK_BYTES = 256 << 20  # most local memory one chunk may back; bigger footprints get fewer lanes
SPIN_YIELD = 16  # loop iterations of one stack entry before it lets another path of the chunk run (_spin)
STUCK_YIELDS = 64  # yields of a looping entry before lanes parked at its joins are released (yield_path)
GRID_WORKSPACE_BYTES = 16  # cooperative groups' grid workspace: a 32-bit barrier word at +4 (CUDA 13)
MAX_CLUSTER_BLOCKS = 16  # sm_90's largest (non-portable) cluster; 8 is the portable size
_LAZY_BYTES = 1 << 20  # local arrays this big are mapped, so only pages threads touch take host RAM


class LaunchControl:
    """The host's handle on a running launch: `cancel(reason)` makes the engine stop it at the next
    basic block (raising LaunchCancelled). Safe to call from any thread, before or during the launch."""

    def __init__(self) -> None:
        self.reason: str | None = None
        self.launch: Launch | None = None

    def cancel(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
        launch = self.launch
        if launch is not None:
            launch.polls = 0  # the engine polls at its next basic block instead of up to POLL_BLOCKS later


@dataclass
class LaunchConfig:
    """Grid and block shape (3-D), dynamic shared memory bytes, and packed kernel parameters."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int = 0
    params: bytes = b""
    # a cooperative launch's grid workspace (what cooperative groups reads from %envreg1:%envreg2 for
    # this_grid().sync()); 0 for an ordinary launch, where grid_group::is_valid() is false
    grid_workspace: int = 0
    # thread-block cluster dims asked for at launch (cudaLaunchAttributeClusterDimension); (0, 0, 0) takes the
    # kernel's compile-time `__cluster_dims__` (.reqnctapercluster), else the implicit 1x1x1 cluster
    cluster: tuple[int, int, int] = (0, 0, 0)

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def num_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass
class LaunchResult:
    """What the engine reports after a launch: counters and the host time it took."""

    counters: Counters
    wall_time_s: float
    shared_bytes_per_block: int
    local_bytes_per_thread: int
    children: list[Any] = field(default_factory=list)  # device launches it made (isa/device_runtime.ChildLaunch)
    executor: str = "reference"  # which executor ran it: 'reference' (this module) or 'native' (hw/native)


@dataclass
class Launch:
    """State shared by all chunks of one launch."""

    program: Program
    kernel: JitFunction
    config: LaunchConfig
    mem: DeviceMemory
    sm_count: int
    budget: int
    chunk_lanes: int
    counters: Counters = field(default_factory=Counters)
    executed: int = 0
    # the modeled SM clock (%clock/%clock64): one cycle per warp-instruction issued, plus __nanosleep time
    cycles: int = 0
    clock_mhz: float = 1980.0  # the catalogue's clock, which converts nanosleep's ns to cycles
    cluster: tuple[int, int, int] = (1, 1, 1)  # thread-block cluster dims (cluster_dims())
    explicit_cluster: bool = False  # launched with cluster dims (at launch or compiled in)
    acc: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)
    start_ns: int = 0
    timeout_s: float = 0.0  # the wall-clock watchdog (STRATA_KERNEL_TIMEOUT); 0 = off
    stack_bytes: int = DEFAULT_STACK_BYTES  # cudaLimitStackSize, per thread
    control: LaunchControl | None = None
    polls: int = POLL_BLOCKS  # basic blocks left before the next watchdog/cancel look
    start_s: float = 0.0  # time.monotonic() at start
    runtime: Any = None  # the device runtime's state for this grid (isa/device_runtime.GridRuntime)

    def shared_size(self) -> int:
        """Shared memory per block, padded to 16 bytes (the same for the whole launch: asked once)."""
        shared = self.__dict__.get("_shared_size")
        if shared is None:
            shared = self.__dict__["_shared_size"] = _shared_size(self)
        return shared

    def shared_limit(self) -> int:
        """Shared memory per block, unpadded: the bound of the block's shared accesses."""
        limit = self.__dict__.get("_shared_limit")
        if limit is None:
            limit = self.__dict__["_shared_limit"] = self.program.shared_bytes(self.kernel.name, self.config.shared_mem)
        return limit

    def cached(self, key: str, nblocks: int, make: Any) -> Any:
        """A chunk-geometry array, shared by launches with the same block shape (read-only)."""
        k = (key, nblocks, self.config.block, self.chunk_lanes, self.shared_size())
        v = _GEOMETRY.get(k)
        if v is None:
            v = make()
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
            if len(_GEOMETRY) > 512:
                _GEOMETRY.clear()
            v = _GEOMETRY.setdefault(k, v)  # (threads that raced here all get the first one's object)
        return v

    def accumulators(self, jf: JitFunction) -> tuple[list[int], list[int]]:
        a = self.acc.get(jf.index)
        if a is None:
            a = ([0] * len(jf.blocks), [0] * len(jf.blocks))
            self.acc[jf.index] = a
        return a


_GEOMETRY: dict[tuple[Any, ...], Any] = {}


def _geometry(launch: Launch, nblocks: int, threads: int, lpb: int,
              shared: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """(in_block, block_local, alive or None when no lane is padding, shared_base) of a chunk of `nblocks`
    blocks: one lookup for all four (each chunk of every launch asks)."""
    k = ("chunk", nblocks, launch.config.block, launch.chunk_lanes, shared)
    geo = _GEOMETRY.get(k)
    if geo is None:
        in_block = np.tile(np.arange(lpb, dtype=np.int64), nblocks)
        block_local = np.repeat(np.arange(nblocks, dtype=np.int64), lpb)
        alive = in_block < threads if threads != lpb else None
        geo = (in_block, block_local, alive, block_local * shared)
        for a in geo:
            if a is not None:
                a.flags.writeable = False
        if len(_GEOMETRY) > 512:
            _GEOMETRY.clear()
        geo = _GEOMETRY.setdefault(k, geo)  # (threads that raced here all get the first one's arrays)
    return geo


class Chunk:
    """The lanes of a group of whole blocks, run together."""

    def __init__(self, launch: Launch, first_block: int, nblocks: int) -> None:
        cfg = launch.config
        self.launch = launch
        self.mem = launch.mem
        self.threads = cfg.threads_per_block
        self.lanes_per_block = -(-self.threads // 32) * 32
        self.first_block = first_block
        self.nblocks = nblocks
        self.n = nblocks * self.lanes_per_block
        self.shared_size = launch.shared_size()  # per block, padded to 16 bytes
        self.shared_limit = launch.shared_limit()
        # the chunk's geometry (read-only, shared by every chunk of this shape): each lane's index in its
        # block, its block's index in the chunk, which lanes are threads (not a partial warp's padding), and
        # where its block's shared memory starts in `self.shared`
        self.in_block, self.block_local, alive, self.shared_base = _geometry(launch, nblocks, self.threads,
                                                                             self.lanes_per_block, self.shared_size)
        self.alive: np.ndarray | None = alive.copy() if alive is not None else None
        self.entry_mask = None if self.alive is None else self.alive.copy()
        self.shared = np.zeros(max(nblocks * self.shared_size, 16), dtype=np.uint8)
        self.local: np.ndarray | None = None  # (n, capacity) bytes, grown on demand, mapped lazily when big
        self.local_top = 0
        self.frames: list[Frame] = []
        self._specials: dict[str, Any] = {}
        # set by an mbarrier wait that found its phase incomplete (isa/mbarrier.py): called with the frame
        # before the next basic block, it lets the lanes the waiters wait for run first
        self.stall: Any = None
        # bar.warp.sync's, bar.sync's and barrier.cluster.wait's per-lane states (isa/warp.py): 0 not at the
        # barrier, 1 waiting, 2 released; None while no lane waits. `parked`: what `_park` needs
        self.warp_sync: np.ndarray | None = None
        self.block_sync: np.ndarray | None = None
        self.cluster_sync: np.ndarray | None = None
        self.named_sync: np.ndarray | None = None  # bar.sync id, count (isa/warp.lower_named_barrier)
        self.named_id: np.ndarray | None = None
        self.named_arrivals: dict[int, np.ndarray] = {}
        self.parked: tuple[np.ndarray, int, Any, str] | None = None

    def park(self, lanes: np.ndarray, block: int, ins: Any, deadlock: str) -> None:
        """Lanes of the running stack entry wait at a barrier (basic block `block`, which holds only the
        barrier): before the next basic block they stop there and the other paths of the chunk run. When
        no other path can run, the launch stops with `deadlock` (a LaneFault's message)."""
        self.parked = (lanes, block, ins, deadlock)
        self.stall = _park

    def alloc_local(self, size: int) -> int:
        base = self.local_top
        top = base + (-(-size // 16) * 16)
        cap = 0 if self.local is None else self.local.shape[1]
        if top > cap:
            new_cap = max(top, 2 * cap, 64)
            grown = _zeros(self.n, new_cap)
            if self.local is not None:
                grown[:, :cap] = self.local
            self.local = grown
        self.local_top = top
        return base

    def stack_limit(self) -> int:
        """Bytes of call stack each thread may use (cudaLimitStackSize of the launching device).
        Device-function calls check it (isa/control.py) and fault with "stack overflow" past it."""
        return self.launch.stack_bytes

    def special(self, name: str, dtype: np.dtype) -> Any:
        key = f"{name}:{dtype.str}"
        v = self._specials.get(key)
        if v is None:
            # differ between chunks, or between launches of one block shape (the geometry cache's key)
            if name.startswith(("%ctaid", "%smid", "%clock", "%globaltimer", "%nctaid", "%dynamic_smem_size",
                                "%envreg", "%cluster", "%nclusterid", "%is_explicit_cluster")):
                v = self._special_value(name, dtype)
            else:
                v = self.launch.cached(key, self.nblocks, lambda: self._special_value(name, dtype))
            self._specials[key] = v
        return v

    def _special_value(self, name: str, dtype: np.dtype) -> Any:
        v = self._compute_special(name)
        return v.astype(dtype) if isinstance(v, np.ndarray) else const_value(int(v), dtype)

    def _compute_special(self, name: str) -> Any:
        cfg = self.launch.config
        bx, by, bz = cfg.block
        gx, gy, gz = cfg.grid
        base, _, axis = name.partition(".")
        k = "xyz".index(axis) if axis in ("x", "y", "z") else -1
        if base == "%tid":
            t = self.in_block
            return (t % bx, (t // bx) % by, t // (bx * by))[k]
        if base == "%ntid":
            return cfg.block[k]
        if base == "%ctaid":
            if cfg.grid[1] == cfg.grid[2] == 1:  # 1-D grid: the block's index is its linear id
                return (self.block_local + self.first_block) if k == 0 else 0
            lin = np.arange(self.first_block, self.first_block + self.nblocks, dtype=np.int64)
            per_block = (lin % gx, (lin // gx) % gy, lin // (gx * gy))[k]
            return np.repeat(per_block, self.lanes_per_block)
        if base == "%nctaid":
            return cfg.grid[k]
        if base == "%laneid":
            return self.in_block % 32
        if base == "%warpid":
            return self.in_block // 32
        if base == "%nwarpid":
            return 64
        if base == "%smid":
            lin = np.arange(self.first_block, self.first_block + self.nblocks, dtype=np.int64)
            return np.repeat(lin % self.launch.sm_count, self.lanes_per_block)
        if base == "%nsmid":
            return self.launch.sm_count
        if base == "%gridid":
            return 1
        if base.startswith("%lanemask_"):
            lane = (self.in_block % 32).astype(np.uint64)
            one = np.uint64(1)
            lt = (one << lane) - one
            le = (one << (lane + one)) - one
            full = np.uint64(0xFFFFFFFF)
            return {"%lanemask_eq": one << lane, "%lanemask_lt": lt, "%lanemask_le": le,
                    "%lanemask_gt": full & ~le, "%lanemask_ge": full & ~lt}[base]
        if base == "%dynamic_smem_size":
            return cfg.shared_mem
        if base in ("%total_smem_size", "%aggr_smem_size"):
            return self.shared_size
        if base.startswith("%reserved_smem_offset"):  # the region jit.Program reserves (RESERVED_SMEM_BYTES)
            reserved = self.launch.program.reserved_smem(base)
            if reserved is not None:
                return reserved
        if base.startswith("%envreg"):
            # the driver's per-launch environment: envreg1 (high) and envreg2 (low 32 bits) hold the grid
            # workspace of a cooperative launch, as CUDA 13's cooperative_groups reads them
            ws = cfg.grid_workspace
            return {"%envreg1": ws >> 32, "%envreg2": ws & 0xFFFFFFFF}.get(base, 0)
        if base in ("%clock", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi"):
            return self.clock(base)
        # Every sm_90 launch runs in thread-block clusters; without cluster dims each block is its own
        # implicit 1x1x1 cluster: rank 0 of 1, the cluster grid is the block grid, not an explicit cluster.
        if base.startswith(("%cluster", "%nclusterid", "%is_explicit_cluster")):
            return self._cluster_special(base, k)
        raise DeviceFault("cudaErrorIllegalInstruction", f"special register {name} is not modeled")

    def _cluster_special(self, base: str, k: int) -> Any:
        cdim = self.launch.cluster
        if base == "%is_explicit_cluster":
            return int(self.launch.explicit_cluster)
        if base == "%cluster_nctarank":
            return cdim[0] * cdim[1] * cdim[2]
        if base == "%cluster_nctaid":
            return cdim[k]
        if base == "%nclusterid":
            return self.launch.config.grid[k] // cdim[k]
        if base == "%cluster_ctarank":
            x, y, z = (self._cluster_special("%cluster_ctaid", a) for a in range(3))
            return x + cdim[0] * (y + cdim[1] * z)
        ctaid = self._compute_special(f"%ctaid.{'xyz'[k]}")
        if base == "%clusterid":
            return ctaid // cdim[k] if cdim[k] > 1 else ctaid
        if base == "%cluster_ctaid":
            return ctaid % cdim[k] if cdim[k] > 1 else 0
        raise DeviceFault("cudaErrorIllegalInstruction", f"special register {base} is not modeled")

    def cluster_peers(self) -> np.ndarray:
        """(nblocks, cluster size): the chunk-local index of each block's cluster-rank-r block (distributed
        shared memory, isa/memory.py). The chunk holds whole clusters (execute sizes chunks so)."""
        peers = self._specials.get("peers")
        if peers is None:
            cx, cy, cz = self.launch.cluster
            gx, gy, _ = self.launch.config.grid
            lin = np.arange(self.first_block, self.first_block + self.nblocks, dtype=np.int64)
            x, y, z = lin % gx, (lin // gx) % gy, lin // (gx * gy)
            r = np.arange(cx * cy * cz, dtype=np.int64)
            px = (x - x % cx)[:, None] + r % cx
            py = (y - y % cy)[:, None] + (r // cx) % cy
            pz = (z - z % cz)[:, None] + r // (cx * cy)
            peers = px + gx * (py + gy * pz) - self.first_block
            self._specials["peers"] = peers
        return peers

    def cluster_of_lane(self) -> np.ndarray:
        """Each lane's cluster, numbered within the chunk (barrier.cluster's groups)."""
        return self.cluster_peers()[:, 0][self.block_local]

    def clock(self, name: str, issued: int = 0) -> int:
        """A monotonic counter: modeled cycles (clock), or ns (globaltimer). Cycles are the warp-instructions
        the launch issued before the current basic block, plus the `issued` ones of this block before the
        read, plus the time __nanosleep slept; deterministic, and never decreasing along a thread."""
        if name in ("%clock", "%clock64"):
            c = self.launch.cycles + issued + 1
            return c & 0xFFFFFFFF if name == "%clock" else c & 0x7FFFFFFFFFFFFFFF
        ns = time.perf_counter_ns() - self.launch.start_ns
        if name == "%globaltimer_hi":
            return ns >> 32
        return ns if name == "%globaltimer" else ns & 0xFFFFFFFF

    def count(self, m: np.ndarray | None) -> tuple[int, int]:
        """(active lanes, active warps) of a mask."""
        if m is None:
            return self.n, self.n // 32
        return int(np.count_nonzero(m)), int(np.count_nonzero(m.reshape(-1, 32).any(axis=1)))


def _zeros(n: int, cap: int) -> np.ndarray:
    """A zeroed (n, cap) byte array; a big one is an anonymous mapping, whose pages the OS backs
    only when first written, so host memory follows what the kernel's threads touch."""
    if n * cap < _LAZY_BYTES:
        return np.zeros((n, cap), dtype=np.uint8)
    m = mmap.mmap(-1, n * cap)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):  # with transparent huge pages "always", one touch would back 2 MiB
        m.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(m, dtype=np.uint8).reshape(n, cap)


def _shared_size(launch: Launch) -> int:
    size = launch.program.shared_bytes(launch.kernel.name, launch.config.shared_mem)
    return -(-size // 16) * 16


class _Entry:
    __slots__ = ("pc", "mask", "rpc", "full", "tc", "wc", "spins", "yields", "snapshot")

    def __init__(self, pc: int, mask: np.ndarray | None, rpc: int, full: bool, tc: int, wc: int) -> None:
        self.pc, self.mask, self.rpc, self.full, self.tc, self.wc = pc, mask, rpc, full, tc, wc
        self.spins = 0  # backward branches taken by all its lanes since it last yielded (see _spin)
        self.yields = 0  # times it yielded (yield_path)
        self.snapshot: list[np.ndarray] | None = None  # its lanes' registers when it last yielded (_stuck)


class RegisterSet:
    """A frame's register arrays by name (`bases`), with what derives from them alone: the frame's value list
    with every register view and constant in place (`template`; special registers and local symbols, which
    depend on the chunk, are None there), and `memo`, where an executor keeps its own derived state (the
    native executor's pointer table and the invariant values it wrote). Frames of one function and lane count
    reuse sets (JitFunction.reg_pool), so building the views, about one per register slot, is paid once per
    set rather than once per frame."""

    __slots__ = ("bases", "template", "late", "memo")

    def __init__(self, jf: JitFunction, n: int) -> None:
        bases = {name: np.zeros(n, dtype=dt) for name, dt in jf.reg_storage.items()}
        template: list[Any] = []
        late: list[tuple[int, str, Any, np.dtype]] = []  # (slot, kind, key, dtype) of the per-frame slots
        for i, s in enumerate(jf.slots):
            if s.kind == "view":
                b = bases[s.key]
                if b.dtype == s.dtype:
                    template.append(b)
                elif b.dtype.itemsize == s.dtype.itemsize:
                    template.append(b.view(s.dtype))
                else:
                    template.append(b.view(s.dtype)[:: b.dtype.itemsize // s.dtype.itemsize])
            elif s.kind == "const":
                template.append(const_value(s.key, s.dtype))
            elif s.kind in ("special", "local_sym"):
                template.append(None)
                late.append((i, s.kind, s.key, s.dtype))
            else:
                raise AssertionError(s.kind)
        self.bases = bases
        self.template = template
        self.late = late
        self.memo: dict[Any, Any] = {}


class Frame:
    """One activation of a function on a chunk: its registers (`V`) and reconvergence stack."""

    def __init__(self, jf: JitFunction, chunk: Chunk, params: dict[str, np.ndarray] | None = None) -> None:
        self.jf = jf
        self.chunk = chunk
        self.params: dict[str, np.ndarray] = params or {}
        self.local_base = chunk.alloc_local(jf.local_size) if jf.local_size else chunk.local_top
        self.stack: list[_Entry] = []
        self.addr_cache: dict[Any, Any] = {}  # address work shared within one basic-block execution
        n = chunk.n
        pool = jf.reg_pool.get(n)
        # registers start undefined in PTX; reusing a finished frame's arrays saves allocating them
        rs: RegisterSet = pool.pop() if pool else RegisterSet(jf, n)
        self.regset = rs
        self._bases = rs.bases
        V = rs.template.copy()  # (a copy: ops may put a uniform register's scalar in its slot)
        for i, kind, key, dtype in rs.late:
            V[i] = chunk.special(key, dtype) if kind == "special" else const_value(self.local_base + key, dtype)
        self.V = V

    def release(self) -> None:
        """Return this frame's register arrays for the next frame of the same function and size."""
        pool = self.jf.reg_pool.setdefault(self.chunk.n, [])
        if len(pool) < 4:
            pool.append(self.regset)

    def regs(self) -> list[np.ndarray]:
        """This frame's register arrays (the scheduler compares them to tell a spin from a counting loop)."""
        return list(self._bases.values())

    def param(self, name: str, size: int) -> np.ndarray:
        """Per-lane storage of a `.param` variable (call arguments and return values)."""
        p = self.params.get(name)
        if p is None:
            p = np.zeros((self.chunk.n, max(size, 1)), dtype=np.uint8)
            self.params[name] = p
        return p

    def remove_lanes(self, lanes: np.ndarray) -> None:
        """Lanes that returned or exited leave every entry of this frame's stack."""
        keep = []
        for e in self.stack:
            e.mask = ~lanes if e.mask is None else e.mask & ~lanes
            e.tc, e.wc = self.chunk.count(e.mask)
            if e.tc:
                keep.append(e)
        self.stack[:] = keep


def run_frame(f: Frame, mask: np.ndarray | None) -> None:
    """Run a function on the lanes in `mask` until all of them return or exit."""
    chunk = f.chunk
    launch = chunk.launch
    blocks = f.jf.blocks
    acc_t, acc_w = launch.accumulators(f.jf)
    tc, wc = chunk.count(mask)
    if tc == 0:
        return
    stack = f.stack
    stack.append(_Entry(0, mask, EXIT, True, tc, wc))
    chunk.frames.append(f)
    V = f.V
    budget = launch.budget or 1 << 126
    try:
        while stack:
            if chunk.stall is not None:
                chunk.stall(f)
                continue
            e = stack[-1]
            b = e.pc
            if b == e.rpc or b == EXIT:
                stack.pop()
                continue
            blk = blocks[b]
            m = e.mask
            am = None if e.full else m
            if f.addr_cache:
                f.addr_cache.clear()
            for fn, exact in blk.ops:
                fn(f, m if exact else am)
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
            if term == "bra":
                if g < 0:
                    e.pc = blk.target
                    if blk.target <= b and len(stack) > 1:  # `bra.uni` back to a loop's head: may spin too
                        _spin(f, e)
                    continue
                _branch(f, e, b, blk, V[g])
                continue
            if term == "brx":
                _jump(f, e, b, blk)
                continue
            # ret / exit
            if g < 0:
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
        f.release()


def _poll(launch: Launch, f: Frame, blk: Any) -> None:
    """Every POLL_BLOCKS basic blocks (at once after a cancel): stop the launch if the host cancelled
    it, the watchdog's time ran out, or the optional instruction cap was passed."""
    launch.polls = POLL_BLOCKS
    where = f"in {f.jf.name} at PTX line {blk.lines[-1] if blk.lines else '?'}"
    name = launch.kernel.name
    control = launch.control
    if control is not None and control.reason is not None:
        raise LaunchCancelled(message=f"kernel {name} was stopped {where}: {control.reason}")
    elapsed = time.monotonic() - launch.start_s
    if launch.budget and launch.executed > launch.budget:
        raise LaunchTimeout(message=(
            f"kernel {name} ran past the launch budget of {launch.budget:,} thread-instructions "
            f"(STRATA_LAUNCH_BUDGET) after {elapsed:.1f} s; stopped {where}"))
    if launch.timeout_s and elapsed > launch.timeout_s:
        from strata.hw.isa.mbarrier import hang_note  # NOTE: the ISA's barriers say what a hung block waits on

        note = hang_note(f.chunk)
        if note is None and launch.config.grid_workspace:
            note = _grid_sync_note(launch)
        if note is None:
            note = _barrier_note(f.chunk)
        raise LaunchTimeout(message=(
            f"kernel {name} ran for {elapsed:.1f} s, past the kernel watchdog of {launch.timeout_s:g} s "
            f"(STRATA_KERNEL_TIMEOUT; 0 turns it off); stopped {where} after {launch.executed:,} "
            "thread-instructions" + (f"; the block hangs: {note}" if note else "")))


_BARRIERS = (("warp_sync", "bar.warp.sync (__syncwarp)"), ("block_sync", "bar.sync (__syncthreads)"),
             ("cluster_sync", "barrier.cluster.wait"), ("named_sync", "a named bar.sync (id, thread count)"))


def _barrier_note(chunk: Chunk) -> str | None:
    """For the watchdog's report: threads parked at a barrier whose other threads never come."""
    parts = []
    for attr, what in _BARRIERS:
        st = getattr(chunk, attr)
        waiting = 0 if st is None else int(np.count_nonzero(st == 1))
        if waiting:
            parts.append(f"{waiting} threads wait at {what} for threads that never arrive (they spin or wait "
                         "elsewhere)")
    return "; ".join(parts) or None


def _all_parked(f: Frame) -> bool:
    """Whether every path of the frame waits at a barrier (each leaf of the reconvergence tree has all its
    lanes waiting, and no join holds lanes of its own): then no barrier can ever complete."""
    chunk = f.chunk
    waiting = np.zeros(chunk.n, dtype=bool)
    for attr, _ in _BARRIERS:
        st = getattr(chunk, attr)
        if st is not None:
            if (st == 2).any():  # released lanes have yet to run on
                return False
            waiting |= st == 1
    for nd in _walk(_forest(f.stack)):
        if nd.children:
            if _own_lanes(chunk, nd) is not None:
                return False
            continue
        m = nd.entry.mask
        lanes = m if m is not None else (chunk.alive if chunk.alive is not None else np.ones(chunk.n, bool))
        if (lanes & ~waiting).any():
            return False
    return True


def _grid_sync_note(launch: Launch) -> str:
    """How far a cooperative launch's grid barrier got, for the watchdog's report. Each block adds 1 to
    the word at workspace+4 as it arrives, block 0 adds 0x80000001 - nblocks instead, so its low 31
    bits count arrivals, less nblocks once block 0 is in."""
    n = launch.config.num_blocks
    low = int.from_bytes(launch.mem.read(launch.config.grid_workspace + 4, 4), "little") & 0x7FFFFFFF
    arrived = low if low < n else n - ((1 << 31) - low)
    return (f"threads were spinning in cooperative groups' grid sync with {arrived} of {n} blocks arrived (every "
            "block must reach each this_grid().sync(); one that returned or took another path never will)")


def _branch(f: Frame, e: _Entry, b: int, blk: Any, p: np.ndarray) -> None:
    chunk = f.chunk
    m = e.mask
    taken = ~p if blk.guard_neg else p
    if m is not None:
        taken = taken & m
    tcount = int(np.count_nonzero(taken))
    counters = chunk.launch.counters
    counters.branches += e.wc
    if tcount == e.tc:
        e.pc = blk.target
        if blk.target <= b and len(f.stack) > 1:
            _spin(f, e)
        return
    if tcount == 0:
        e.pc = b + 1
        return
    not_taken = ~taken if m is None else m & ~taken
    blocks = f.jf.blocks
    # lanes branching to a bare `ret`/`exit` leave now rather than wait to reconverge there, so a
    # barrier the others reach next does not wait for them (CUDA: exited threads don't count)
    for lanes, dest, other in ((taken, blk.target, b + 1), (not_taken, b + 1, blk.target)):
        if dest < len(blocks) and dest != EXIT and blocks[dest].pure_exit:
            counters.divergent_branches += int(np.count_nonzero(
                taken.reshape(-1, 32).any(axis=1) & not_taken.reshape(-1, 32).any(axis=1)))
            if blocks[dest].term == "exit" or f.jf.fn.is_entry:
                _exit_lanes(chunk, lanes)
            else:
                f.remove_lanes(lanes)
            e.pc = other
            return
    tw = taken.reshape(-1, 32).any(axis=1)
    nw = not_taken.reshape(-1, 32).any(axis=1)
    counters.divergent_branches += int(np.count_nonzero(tw & nw))
    r = blk.ipdom
    stack = f.stack
    if e.rpc == r:
        stack.pop()
    else:
        e.pc = r
    if b + 1 != r:
        stack.append(_Entry(b + 1, not_taken, r, False, e.tc - tcount, int(np.count_nonzero(nw))))
    if blk.target != r:
        stack.append(_Entry(blk.target, taken, r, False, tcount, int(np.count_nonzero(tw))))


def _jump(f: Frame, e: _Entry, b: int, blk: Any) -> None:
    """`brx.idx`: a multi-way branch. Lanes split by destination (isa/control.jump_table); each group
    runs on its own stack entry until the block's immediate post-dominator, where they all reconverge."""
    chunk = f.chunk
    m = e.mask
    dest = blk.jump(f, m)
    counters = chunk.launch.counters
    counters.branches += e.wc
    live = dest if m is None else dest[m]
    first = int(live[0])
    if (live == first).all():
        e.pc = first
        if first <= b and len(f.stack) > 1:
            _spin(f, e)
        return
    blocks = f.jf.blocks
    groups = []
    for d in np.unique(live).tolist():
        lanes = dest == d if m is None else m & (dest == d)
        if d != EXIT and d < len(blocks) and blocks[d].pure_exit:  # leave now (see _branch)
            if blocks[d].term == "exit" or f.jf.fn.is_entry:
                _exit_lanes(chunk, lanes)
            else:
                f.remove_lanes(lanes)
            continue
        groups.append((d, lanes, lanes.reshape(-1, 32).any(axis=1)))
    if not groups:  # every lane left
        return
    warps = sum(w.astype(np.int64) for _, _, w in groups)
    counters.divergent_branches += int(np.count_nonzero(np.asarray(warps) > 1))
    if len(groups) == 1:
        e.pc = groups[0][0]
        return
    r = _common_post_dominator(blocks, [d for d, _, _ in groups])  # blk.ipdom unless some lanes left
    stack = f.stack
    if e.rpc == r:
        stack.pop()
    else:
        e.pc = r
    for d, lanes, w in reversed(groups):  # the lowest target runs first
        if d != r:
            stack.append(_Entry(d, lanes, r, False, int(np.count_nonzero(lanes)), int(np.count_nonzero(w))))


def _common_post_dominator(blocks: list[Any], dests: list[int]) -> int:
    """The first block every one of `dests` must pass through: where lanes sent to them reconverge."""
    def chain(d: int) -> list[int]:
        out = []
        while d != EXIT and d not in out:
            out.append(d)
            d = blocks[d].ipdom
        return [*out, EXIT]

    common = set(chain(dests[0]))
    for d in dests[1:]:
        common &= set(chain(d))
    return next(x for x in chain(dests[0]) if x in common)


def _spin(f: Frame, e: _Entry) -> None:
    """A loop went round SPIN_YIELD times on the same lanes: it may be waiting for lanes on another path
    (a flag another warp sets, cooperative groups' grid sync while blocks on the other side of a branch
    have yet to arrive), so let another path of the chunk run first (`yield_path`)."""
    e.spins += 1
    if e.spins < SPIN_YIELD:
        return
    e.spins = 0
    yield_path(f, e)


class _Node:
    __slots__ = ("entry", "parent", "children")

    def __init__(self, entry: _Entry, parent: _Node | None) -> None:
        self.entry, self.parent = entry, parent
        self.children: list[_Node] = []


def _forest(stack: list[_Entry]) -> list[_Node]:
    """The reconvergence stack as a tree: an entry's lanes are a subset of the nearest entry below it
    whose lanes overlap (the join it reconverges into); siblings (the sides of a branch) are disjoint."""
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


def yield_path(f: Frame, e: _Entry, release: bool | None = None) -> bool:
    """Let the lanes of stack entry `e` (the top, which cannot progress now) wait while other lanes run.

    A fair round-robin over the paths of the chunk, as independent thread scheduling guarantees every
    thread eventually progresses: on the stack seen as a tree of joins and their branch sides, the subtree
    holding `e` goes first (runs last) among its siblings at every level, so the next path in turn comes
    to the top and, as each path yields in turn, every path runs. With `release` (lanes waiting at a
    barrier; by default when `e` looks stuck, `_stuck`), lanes parked at an enclosing reconvergence point
    (that took a branch straight to it, or left a loop early) are released to run ahead and reconverge one
    level further out; that costs the reconvergence, so an ordinary loop whose finished lanes wait at its
    exit keeps it. False when no other lanes can run."""
    if release is None:
        release = _stuck(f, e)
    stack = f.stack
    roots = _forest(stack)
    node = next((nd for nd in _walk(roots) if nd.entry is e), None)
    if node is None:
        return False
    moved = False
    up: _Node | None = node
    while up is not None:
        parent = up.parent
        if release and parent is not None:
            own = _own_lanes(f.chunk, parent)
            if own is not None:  # `up` becomes a sibling of the released lanes, one level further out
                _unjoin(f.chunk, roots, parent, own)
                moved = True
                continue
        sibs = parent.children if parent is not None else roots
        if len(sibs) > 1:
            sibs.remove(up)
            sibs.insert(0, up)
            moved = True
        up = parent
    if moved:
        out: list[_Entry] = []
        _flatten(roots, out)
        stack[:] = out
    return moved


def _stuck(f: Frame, e: _Entry) -> bool:
    """Whether looping entry `e` looks stuck: its lanes' registers did not change since its last yield (a
    spin that only re-reads memory), or it has yielded STUCK_YIELDS times (a spin counting its tries)."""
    e.yields += 1
    m = e.mask
    regs = [b if m is None else b[m] for b in f.regs()]
    same = e.snapshot is not None and len(regs) == len(e.snapshot) and all(
        np.array_equal(a, b) for a, b in zip(regs, e.snapshot, strict=True))
    e.snapshot = [r.copy() for r in regs] if m is None else regs
    return same or e.yields >= STUCK_YIELDS


def _walk(nodes: list[_Node]) -> Any:
    for nd in nodes:
        yield nd
        yield from _walk(nd.children)


def _flatten(nodes: list[_Node], out: list[_Entry]) -> None:
    for nd in nodes:
        out.append(nd.entry)
        _flatten(nd.children, out)


def _own_lanes(chunk: Chunk, nd: _Node) -> np.ndarray | None:
    """The live lanes a join holds that none of its branch sides does: lanes parked at its reconvergence
    point. None when there are none."""
    e = nd.entry
    covered = np.zeros(chunk.n, dtype=bool)
    for c in nd.children:
        if c.entry.mask is None:
            return None
        covered |= c.entry.mask
    own = ~covered if e.mask is None else e.mask & ~covered
    if chunk.alive is not None:
        own &= chunk.alive
    return own if own.any() else None


def _unjoin(chunk: Chunk, roots: list[_Node], nd: _Node, own: np.ndarray) -> None:
    """Release the lanes parked at join `nd`: they run on (on top) as a sibling of the paths `nd` was
    waiting for, and all of them reconverge one level further out (nd's own reconvergence point)."""
    e = nd.entry
    for c in nd.children:
        c.entry.rpc = e.rpc
        c.parent = nd.parent
    tc, wc = chunk.count(own)
    rest = _Node(_Entry(e.pc, own, e.rpc, False, tc, wc), nd.parent)
    sibs = nd.parent.children if nd.parent is not None else roots
    i = sibs.index(nd)
    sibs[i:i + 1] = [*nd.children, rest]


def _park(f: Frame) -> None:
    """Chunk.stall after a barrier parked some lanes of the top entry: those lanes stay at the barrier's
    block (they run it again when their turn comes, and go on once released); the others run on."""
    chunk = f.chunk
    chunk.stall = None
    assert chunk.parked is not None
    lanes, block, ins, deadlock = chunk.parked
    chunk.parked = None
    stack = f.stack
    e = stack[-1]
    live = e.mask if e.mask is not None else (chunk.alive if chunk.alive is not None else np.ones(chunk.n, bool))
    go = live & ~lanes
    if go.any():  # e becomes an empty join at its reconvergence point; the waiters go under the others
        wtc, wwc = chunk.count(lanes)
        gtc, gwc = chunk.count(go)
        stack.append(_Entry(block, lanes, e.rpc, False, wtc, wwc))
        stack.append(_Entry(e.pc, go, e.rpc, False, gtc, gwc))
        e.pc = e.rpc
        return
    e.pc = block
    if not yield_path(f, e, release=True) or _all_parked(f):
        lane = int(np.flatnonzero(lanes)[0])
        where = " (the threads it waits for may be in a calling function)" if len(chunk.frames) > 1 else ""
        raise LaneFault(lane, ins, deadlock + where, "cudaErrorLaunchFailure", reason="divergent barrier")


def _exit_lanes(chunk: Chunk, lanes: np.ndarray) -> None:
    chunk.alive = ~lanes if chunk.alive is None else chunk.alive & ~lanes
    for fr in chunk.frames:
        fr.remove_lanes(lanes)


def execute(program: Program, kernel_name: str, config: LaunchConfig, mem: DeviceMemory, *,
            sm_count: int, budget: int, chunk_lanes: int, timeout_s: float = 0.0,
            stack_bytes: int = DEFAULT_STACK_BYTES, control: LaunchControl | None = None,
            runtime: Any = None, clock_mhz: float = 1980.0) -> LaunchResult:
    """Run one kernel launch to completion on the virtual GPU.

    `budget` caps thread-instructions (0 = no cap); `timeout_s` is the wall-clock watchdog (0 = off);
    `control.cancel()` from another thread stops the launch. Raises DeviceFault (memcheck, trap,
    assert), LaunchTimeout or LaunchCancelled; device memory outside what the kernel wrote stays
    intact and the device stays usable.
    """
    native = _native_executor() if _settings.settings().executor == "native" else None
    if native is not None:
        execute_native, spent_on_reference = native
        result = execute_native(program, kernel_name, config, mem, sm_count=sm_count, budget=budget,
                                chunk_lanes=chunk_lanes, timeout_s=timeout_s, stack_bytes=stack_bytes,
                                control=control, runtime=runtime, clock_mhz=clock_mhz)
        if result is not None:
            return result
    result = _execute_reference(program, kernel_name, config, mem, sm_count=sm_count, budget=budget,
                                chunk_lanes=chunk_lanes, timeout_s=timeout_s, stack_bytes=stack_bytes,
                                control=control, runtime=runtime, clock_mhz=clock_mhz)
    if native is not None:  # the native executor declined: the reference's time counts towards compiling it
        spent_on_reference(program, kernel_name, result.wall_time_s)
    return result


_NATIVE: list[Any] = []  # [(the native executor's execute, tiering's spent_on_reference) or None], looked up once


def _native_executor() -> Any:
    """The native executor's `execute` and tiering's `spent_on_reference` (None without llvmlite), imported
    once: an import statement in a function costs a few microseconds on every launch."""
    if not _NATIVE:
        from strata.hw.native import available  # NOTE: L0 to L0; the native executor reuses this module's machinery

        if available():
            from strata.hw.native.executor import execute as execute_native
            from strata.hw.native.tiering import spent_on_reference

            _NATIVE.append((execute_native, spent_on_reference))
        else:
            _NATIVE.append(None)
    return _NATIVE[0]


def _execute_reference(program: Program, kernel_name: str, config: LaunchConfig, mem: DeviceMemory, *,
                       sm_count: int, budget: int, chunk_lanes: int, timeout_s: float, stack_bytes: int,
                       control: LaunchControl | None, runtime: Any, clock_mhz: float) -> LaunchResult:
    """The reference executor: this module's NumPy handlers run every instruction."""
    jf = program.functions[kernel_name]
    if jf.local_size > MAX_LOCAL_BYTES:
        raise CudaError("cudaErrorLaunchOutOfResources",
                        f"[launch {kernel_name}] {jf.local_size:,} bytes of local memory per thread; the limit is "
                        f"{MAX_LOCAL_BYTES:,} (512 KiB)")
    launch = Launch(program, jf, config, mem, sm_count, budget, chunk_lanes, timeout_s=timeout_s,
                    stack_bytes=stack_bytes, control=control, runtime=runtime, clock_mhz=clock_mhz)
    launch.cluster, launch.explicit_cluster = cluster_dims(jf, config)
    launch.start_ns = time.perf_counter_ns()
    launch.start_s = time.monotonic()
    if control is not None:
        control.launch = launch
        if control.reason is not None:
            launch.polls = 0
    t0 = time.perf_counter()
    lanes_per_block = -(-config.threads_per_block // 32) * 32
    per_chunk = max(1, chunk_lanes // lanes_per_block)
    # local memory is per lane: a big footprint (the kernel's depot and the largest device function's)
    # runs fewer blocks at a time, so one chunk never backs more than LOCAL_CHUNK_BYTES
    callee = program.__dict__.get("_callee_local")
    if callee is None:  # (a property of the program: computed once, not per launch)
        callee = program.__dict__["_callee_local"] = max(
            (g.local_size for g in program.functions.values() if not g.fn.is_entry), default=0)
    per_lane = -(-(jf.local_size + callee) // 16) * 16
    if per_lane:
        per_chunk = max(1, min(per_chunk, LOCAL_CHUNK_BYTES // (per_lane * lanes_per_block)))
    nblocks = config.num_blocks
    slab = _cluster_slab(config.grid, launch.cluster)
    if slab > 1:  # a chunk holds whole clusters: their blocks share distributed shared memory and barriers
        per_chunk = max(slab, per_chunk // slab * slab)
    if config.grid_workspace:
        # a cooperative grid is resident all at once (launch checked co-residency), so it runs as one
        # chunk: blocks spinning in this_grid().sync() share the lockstep with the blocks still arriving
        per_chunk = nblocks
        mem.fill(config.grid_workspace, GRID_WORKSPACE_BYTES, 0)  # the barrier starts at 0, as the driver sets it
    with np.errstate(all="ignore"):
        for first in range(0, nblocks, per_chunk):
            chunk = Chunk(launch, first, min(per_chunk, nblocks - first))
            frame = Frame(jf, chunk)
            try:
                run_frame(frame, chunk.entry_mask)
            except LaneFault as fault:
                raise _device_fault(launch, chunk, fault) from None
    c = launch.counters
    c.threads_launched = nblocks * config.threads_per_block
    c.blocks_launched = nblocks
    _fold_counters(launch)
    return LaunchResult(c, time.perf_counter() - t0, _shared_size(launch), jf.local_size)


def cluster_dims(jf: JitFunction, config: LaunchConfig) -> tuple[tuple[int, int, int], bool]:
    """(cluster dims, explicit?) of a launch: the launch attribute, else the kernel's `.reqnctapercluster`
    (`__cluster_dims__`), else the implicit 1x1x1. InvalidLaunchConfig (cudaErrorInvalidClusterSize) when
    the grid is not a whole number of clusters or a cluster has more than MAX_CLUSTER_BLOCKS blocks."""
    d = jf.fn.directives
    compiled = d.get("reqnctapercluster", ())
    if any(config.cluster):
        dims = config.cluster
    elif compiled:
        dims = (*compiled, 1, 1)[:3]  # type: ignore[assignment]
    else:
        return (1, 1, 1), "explicitcluster" in d
    if any(c < 1 for c in dims) or any(g % c for g, c in zip(config.grid, dims, strict=True)) or \
            dims[0] * dims[1] * dims[2] > MAX_CLUSTER_BLOCKS:
        raise InvalidLaunchConfig("cudaErrorInvalidClusterSize", (
            f"[launch {jf.name}] cluster dims {dims} must divide the grid {config.grid} and hold at most "
            f"{MAX_CLUSTER_BLOCKS} blocks"))
    return (int(dims[0]), int(dims[1]), int(dims[2])), True


def _cluster_slab(grid: tuple[int, int, int], cluster: tuple[int, int, int]) -> int:
    """The fewest consecutive blocks (in linear block order) made of whole clusters."""
    cx, cy, cz = cluster
    if cz > 1:
        return grid[0] * grid[1] * cz
    if cy > 1:
        return grid[0] * cy
    return cx


def _fold_counters(launch: Launch) -> None:
    c = launch.counters
    funcs = _by_index(launch.program)
    for index in sorted(launch.acc):  # (in the program's order of functions, as they are numbered)
        if index >= len(funcs):
            continue
        classes, tensor, flops = _folded(funcs[index], launch.acc[index])
        for name, t, w in classes:
            c.thread_instructions[name] += t
            c.warp_instructions[name] += w
        for k, v in tensor:
            c.tensor_flops[k] = c.tensor_flops.get(k, 0) + v
        for k, v in flops:
            c.flops[k] = c.flops.get(k, 0) + v


_FoldedCounts = tuple[list[tuple[str, int, int]], list[tuple[str, int]], list[tuple[str, int]]]


def _folded(jf: JitFunction, acc: tuple[list[int], list[int]]) -> _FoldedCounts:
    """What a function's per-block accumulators add to the counters: (instruction class, thread, warp
    instructions), tensor flops by precision and flops by kind, in the order the blocks first name them.
    Memoized on the function by the accumulators' values: a loop's launches of one shape run the same blocks
    the same number of times, and folding them anew cost as much as a small launch's run."""
    memo: dict[tuple[int, ...], _FoldedCounts] = jf.__dict__.setdefault("_folded", {})
    key = (*acc[0], -1, *acc[1])
    hit = memo.get(key)
    if hit is not None:
        return hit
    # (Python ints, not NumPy vectors: a launch runs few distinct blocks, and two vector ops per block cost
    # more than the ten multiply-adds; the sums are the same)
    thread = [0] * len(INSTRUCTION_CLASSES)
    warp = [0] * len(INSTRUCTION_CLASSES)
    tensor: dict[str, int] = {}
    flops: dict[str, int] = {}
    for (hist, block_flops), t, w in zip(_block_static(jf), acc[0], acc[1], strict=True):
        if t:
            for i, h in hist:
                thread[i] += h * t
                warp[i] += h * w
            for k, v in block_flops:
                if k.startswith("tensor:"):  # tensor work, by the peak that prices it
                    prec = k[7:]
                    tensor[prec] = tensor.get(prec, 0) + v * t
                    k = "tensor"
                flops[k] = flops.get(k, 0) + v * t
    hit = ([(name, thread[i], warp[i]) for i, name in enumerate(INSTRUCTION_CLASSES) if thread[i] or warp[i]],
           list(tensor.items()), list(flops.items()))
    if len(memo) >= 64:
        memo.clear()
    memo[key] = hit
    return hit


def _by_index(program: Program) -> list[JitFunction]:
    """The program's functions by JitFunction.index (memoized for this dict of functions: a copy of the
    program with other functions, the native executor's, gets its own)."""
    hit = program.__dict__.get("_by_index")
    if hit is None or hit[0] is not program.functions:
        hit = program.__dict__["_by_index"] = (program.functions, list(program.functions.values()))
    return hit[1]


def _block_static(jf: JitFunction) -> list[tuple[list[tuple[int, int]], list[tuple[str, int]]]]:
    """Per basic block of `jf`: its instruction-class histogram as (class, count) pairs of the classes it has,
    and its flops; memoized on the function (fixed at lowering; every launch folds them)."""
    got = jf.__dict__.get("_block_static")
    if got is None:
        got = jf.__dict__["_block_static"] = [([(i, h) for i, h in enumerate(blk.hist.tolist()) if h],
                                               list(blk.flops.items())) for blk in jf.blocks]
    return got


def _device_fault(launch: Launch, chunk: Chunk, fault: LaneFault) -> DeviceFault:
    cfg = launch.config
    lane = fault.lane
    blk_lin = chunk.first_block + lane // chunk.lanes_per_block
    t = lane % chunk.lanes_per_block
    bx, by, _ = cfg.block
    gx, gy, _ = cfg.grid
    thread = (t % bx, (t // bx) % by, t // (bx * by))
    block = (blk_lin % gx, (blk_lin // gx) % gy, blk_lin // (gx * gy))
    ins = fault.ins
    source = None
    if ins.loc is not None:
        fname = launch.program.module.files.get(ins.loc[0], "?")
        source = f"{fname}:{ins.loc[1]}"
    report = {
        "kernel": launch.kernel.name,
        "ptx_line": ins.line,
        "instruction": ins.full_opcode,
        "source": source,
        "block": block,
        "thread": thread,
        **fault.fields,
    }
    where = f"in {launch.kernel.name} at PTX line {ins.line} ({ins.full_opcode})"
    if source:
        where += f", source {source}"
    msg = f"{fault.message}\n    {where}\n    by thread {thread} in block {block}"
    if fault.cuda_name == "cudaErrorAssert":  # the headline PyTorch (c10's CUDA check) shows for an assert
        msg = f"CUDA error: device-side assert triggered\n{msg}"
    if "nearest" in fault.fields:
        msg += f"\n    address is {fault.fields['nearest']}"
    if fault.fields.get("reason") == "trap" and not cfg.grid_workspace and _reads_grid_workspace(launch.program):
        # cooperative groups' grid_group::sync() traps when the grid workspace is NULL, as on CUDA
        msg += ("\n    likely cause: grid sync outside a cooperative launch (this kernel reads cooperative groups' "
                "grid workspace, which only launch_cooperative / cudaLaunchCooperativeKernel sets; "
                "cg::this_grid().sync() traps without it)")
        report["cause"] = "grid sync outside a cooperative launch"
    return DeviceFault(fault.cuda_name, msg, report)


def _reads_grid_workspace(program: Program) -> bool:
    """Whether any function of the program reads %envreg1/%envreg2 (cooperative groups' grid workspace)."""
    return any(s.kind == "special" and str(s.key).startswith(("%envreg1", "%envreg2"))
               for jf in program.functions.values() for s in jf.slots)
