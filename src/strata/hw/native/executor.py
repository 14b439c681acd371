"""The native executor: a launch whose basic blocks run as compiled x86 code, on two host threads.

What stays the reference's, unchanged: the chunking of blocks, the reconvergence stack (branches,
divergence, exits, `pure_exit`), barriers (`bar.sync` blocks run the reference handler, with its
exited-thread rule and deadlock detection), the watchdog and cancel polls, fault reports and the
per-basic-block instruction counters. What is native: the body of every other basic block, one
compiled function per block over the chunk's lanes (see codegen.py), which also keeps the memory
counters. A native memory instruction that would fault hands the rest of its block to the reference
handlers at the same state, so the fault report is the reference's own.

Peer access (NCCL's transport): the allocations native code checks against are the device's own and
its enabled peers' (one table in address order); a warp's access inside a peer's allocation counts its
bytes as interconnect traffic (DeviceMemory.peer_bytes), as the reference's memory check does.
"""

from __future__ import annotations

import copy
import ctypes
import dataclasses
import functools
import json
import os
import threading
import time
from typing import Any

import numpy as np

from strata import config as cfg
from strata import trace
from strata.hw.engine import (
    EXIT,
    GRID_WORKSPACE_BYTES,
    LOCAL_CHUNK_BYTES,
    MAX_LOCAL_BYTES,
    Chunk,
    Frame,
    Launch,
    LaunchConfig,
    LaunchResult,
    _device_fault,
    _execute_reference,
    _fold_counters,
    _shared_size,
    cluster_dims,
    run_frame,
)
from strata.hw.isa.registry import LaneFault
from strata.hw.jit import JitFunction, Program
from strata.hw.memory import UVA_SLOTS, Allocation, DeviceMemory
from strata.hw.native import codegen as cg
from strata.hw.native import driver as drv
from strata.hw.native import optimizer, tiering
from strata.hw.native.compiler import LoadedObject, cache_get, cache_has, cache_key, cache_put, compile_ir
from strata.hw.native.runloop import DriverState, drive_entry, finished, run_root

_PROTO = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)
_DRIVE = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                          ctypes.c_void_p)
_U32 = np.dtype(np.uint32)
THREADS = 2  # host threads a launch's chunks are spread over
_COMPILE_LOCK = threading.Lock()


@dataclasses.dataclass
class CompiledKernel:
    """A kernel's native blocks: block index -> callable, and per worker the patched program."""

    name: str
    funcs: dict[int, Any]
    specials: list[str]  # the lane-varying special registers the blocks read, in ctx order
    obj: LoadedObject
    compile_s: float
    cached: bool
    opt: int = 3  # LLVM's optimization level of the code: 0 (the first tier) or 3 (tiering.py)
    quick_s: float = 0.0  # launches' time on this code while it is -O0 (tiering.optimize_due)
    optimizing: bool = False  # an -O3 recompile is queued or running (optimizer.py)
    # launch shape -> slow one-thread launches in a row (_split_key); the -O3 code takes over the -O0 code's
    split_runs: dict[tuple[Any, ...], int] = dataclasses.field(default_factory=dict)
    drive: Any = None  # the driver (driver.py): uniform control flow in one native call
    driveable: frozenset[int] = frozenset()  # blocks the driver runs (native, barrier, empty)
    barriers: frozenset[int] = frozenset()  # blocks of one bar.sync
    programs: dict[int, Program] = dataclasses.field(default_factory=dict)
    ref_ops: dict[int, list[Any]] = dataclasses.field(default_factory=dict)  # native block -> reference ops
    invariants: list[tuple[str, int, int]] = dataclasses.field(default_factory=list)  # codegen.launch_invariants
    # blocks the reference handlers run (partial.py): block -> why it is not native
    reference_blocks: dict[int, str] = dataclasses.field(default_factory=dict)
    serial: str | None = None  # why the chunks must run one after another (partial.serial_reason)
    # block -> its native pieces after an op the reference runs: (first op, end op, function) (partial.py)
    pieces: dict[int, list[tuple[int, int, Any]]] = dataclasses.field(default_factory=dict)
    # the device addresses of the module variables the code reads (codegen.CTX_SYMBOLS), of this program's load
    symbol_table: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(1, dtype=np.uint64))
    block_table: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(1, dtype=np.int64))  # driver.py


def compiled(program: Program, kernel: str, *, optimize_now: bool = False) -> CompiledKernel | str:
    """The kernel compiled (memoized on the program, then the disk cache), or why it cannot be. Its first
    code is -O0 unless STRATA_NATIVE_OPT or `optimize_now` (tiering.optimize_now) says -O3."""
    memo = known_kernels(program)
    hit: CompiledKernel | str | None = memo.get(kernel)
    if hit is not None and not _upgrade(hit):
        return hit
    with _COMPILE_LOCK:
        hit = memo.get(kernel)
        if hit is None:
            hit = _compile(program, kernel, optimize_now)
            memo[kernel] = hit
        elif _upgrade(hit):  # (-O0 code, and STRATA_NATIVE_OPT=3 set since it compiled)
            hit = memo[kernel] = _optimized(program, kernel, hit)
    return hit


def _upgrade(hit: CompiledKernel | str) -> bool:
    return isinstance(hit, CompiledKernel) and tiering.upgrade_due(hit.opt)


def known_kernels(program: Program) -> dict[str, Any]:
    """The program's kernels compiled (or found not compilable) so far: name -> CompiledKernel or reason."""
    memo: dict[str, Any] = program.__dict__.setdefault("_native", {})
    return memo


def _object_key(program: Program, kernel: str, opt: int) -> str:
    """The kernel's key at LLVM level `opt` in the disk cache of objects (memoized on the program: hashing the
    PTX text costs)."""
    memo: dict[tuple[str, int], str] = program.__dict__.setdefault("_native_keys", {})
    key = memo.get((kernel, opt))
    if key is None:
        # Not the variables' addresses: the code reads them from ctx (codegen.CTX_SYMBOLS), so one object serves
        # every load of the module in every process. Shared offsets are the PTX's layout, the same in each load.
        key = memo[kernel, opt] = cache_key({
            "ptx": _digest(program.module.text), "kernel": kernel, "opt": opt,
            "globals": sorted(program.global_addresses), "shared": sorted(program.shared_offsets.items()),
            "dynamic": program.dynamic_shared_offset() if program.dynamic_shared else -1})
    return key


def _warm(program: Program, kernel: str, config: LaunchConfig, chunk_lanes: int) -> bool:
    """Whether the kernel runs natively this launch: compiled already, in the disk cache, or worth compiling
    now (tiering.py: the reference's time on it reaches STRATA_NATIVE_AFTER_MS)."""
    if kernel in program.__dict__.get("_native", {}):
        return True
    settings = cfg.settings()
    return (tiering.worth_compiling(program, kernel, config, after_s=settings.native_after_ms / 1e3,
                                    chunk_lanes=chunk_lanes, quick=settings.native_opt != "3")
            or any(cache_has(_object_key(program, kernel, opt)) for opt in tiering.levels(settings.native_opt)))


def _compile(program: Program, kernel: str, optimize_now: bool = False) -> CompiledKernel | str:
    """The kernel's first native code: from the disk cache at the best level there, else built at -O0 (-O3
    under STRATA_NATIVE_OPT=3 or when `optimize_now`)."""
    t0 = time.perf_counter()
    mode = cfg.settings().native_opt
    for opt in tiering.levels(mode):
        got = cache_get(_object_key(program, kernel, opt))
        if got is not None:
            manifest, obj = got
            return str(manifest["reason"]) if obj is None else _load(program, kernel, manifest, obj, opt, True, t0)
    opt = 3 if mode == "3" or (optimize_now and mode == "auto") else 0
    built = _build(program, kernel, opt)
    if isinstance(built, str):
        return built
    return _load(program, kernel, *built, opt, False, t0)


def _build(program: Program, kernel: str, opt: int) -> tuple[dict[str, Any], bytes] | str:
    """Generate the kernel's IR and compile it at LLVM level `opt` into the disk cache: (manifest, object), or
    why it cannot be compiled (cached too)."""
    key = _object_key(program, kernel, opt)
    gen = cg.KernelCodegen(program, program.functions[kernel], lane_groups=opt == 3)
    try:
        text = gen.build()
    except cg.NativeUnsupported as e:
        cache_put(key, {"reason": str(e)}, None)
        return str(e)
    obj = compile_ir(text, optimize=opt == 3)
    # (the manifest in its JSON form, so that a fresh build and a cache hit load through the same code)
    manifest = json.loads(json.dumps({
        "blocks": gen.native_blocks, "specials": gen.specials, "barriers": gen.barrier_blocks,
        "invariants": [(r, off, size) for r, (off, size) in gen.invariants.items()], "symbols": gen.symbols,
        "reference_blocks": gen.reference_blocks, "serial": gen.serial, "pieces": getattr(gen, "pieces", {})}))
    cache_put(key, manifest, obj)
    return manifest, obj


def _load(program: Program, kernel: str, manifest: dict[str, Any], obj: bytes, opt: int, cached: bool,
          t0: float) -> CompiledKernel:
    """Link an object and build the kernel's CompiledKernel from its manifest."""
    jf = program.functions[kernel]
    blocks = [int(b) for b in manifest["blocks"]]
    barriers = [int(b) for b in manifest["barriers"]]
    reference_blocks = {int(k): str(v) for k, v in manifest.get("reference_blocks", {}).items()}
    pieces = {int(k): [(int(s), int(e)) for s, e in v] for k, v in manifest.get("pieces", {}).items()}
    loaded = LoadedObject(obj)
    funcs = {b: _PROTO(loaded.address(f"b{b}")) for b in blocks}
    ck = CompiledKernel(kernel, funcs, list(manifest["specials"]), loaded, time.perf_counter() - t0, cached, opt)
    ck.drive = _DRIVE(loaded.address("drive"))  # (the runtime library's: it runs ck.block_table)
    ck.block_table = drv.block_table(jf, {b: loaded.address(f"b{b}") for b in blocks}, frozenset(barriers),
                                     {name: i for i, name in enumerate(jf.reg_storage)})
    ck.invariants = [(str(r), int(off), int(size)) for r, off, size in manifest["invariants"]]
    ck.symbol_table = np.array([program.global_addresses[s] for s in manifest["symbols"]] or [0], dtype=np.uint64)
    ck.barriers = frozenset(barriers)
    ck.reference_blocks, ck.serial = reference_blocks, manifest.get("serial")
    ck.pieces = {b: [(s, e, _PROTO(loaded.address(f"b{b}c{s}"))) for s, e in ps] for b, ps in pieces.items()}
    ck.driveable = frozenset(k for k, blk in enumerate(jf.blocks) if k in funcs or k in barriers or not blk.ops)
    trace.emit("L0", "native_compile", kernel=kernel, cached=cached, opt=opt, blocks=len(blocks),
               reference_blocks=len(reference_blocks), compile_ms=round(ck.compile_s * 1e3, 3))
    return ck


def _ran_unoptimized(program: Program, kernel: str, ck: CompiledKernel, seconds: float,
                     predicted_reference_s: float = 0.0) -> None:
    """Count a launch on -O0 code (tiering.count_unoptimized) and queue the -O3 recompile when it is due."""
    if tiering.count_unoptimized(ck, tiering.static_instructions(program.functions[kernel]), seconds,
                                 predicted_reference_s):
        optimizer.submit(functools.partial(_optimize, program, kernel, ck))


def _optimized(program: Program, kernel: str, quick: CompiledKernel) -> CompiledKernel:
    """The kernel at -O3, from the disk cache or compiled (its -O0 code `quick`, from the same IR, compiled
    already), with the launch history the -O0 code gathered."""
    t0 = time.perf_counter()
    got = cache_get(_object_key(program, kernel, 3))
    built = _build(program, kernel, 3) if got is None else got
    if isinstance(built, str) or built[1] is None:  # (not expected: the same IR compiled at -O0)
        raise RuntimeError(f"{kernel}: the -O3 recompile failed: {built if isinstance(built, str) else built[0]}")
    ck = _load(program, kernel, built[0], built[1], 3, got is not None, t0)
    ck.split_runs = quick.split_runs
    return ck


def _optimize(program: Program, kernel: str, quick: CompiledKernel) -> None:
    """(On the optimizer thread) compile the kernel at -O3, or read it from the disk cache, and make it the code
    later launches run; launches running now finish on the -O0 code, which they hold."""
    ck = _optimized(program, kernel, quick)
    with _COMPILE_LOCK:
        memo = program.__dict__["_native"]
        if memo.get(kernel) is quick:
            memo[kernel] = ck
    trace.emit("L0", "native_optimized", kernel=kernel, quick_ms=round(quick.quick_s * 1e3, 3),
               compile_ms=round(ck.compile_s * 1e3, 3))


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def _patched(program: Program, ck: CompiledKernel, worker: int) -> Program:
    """A shallow copy of the program whose kernel runs native blocks (one per worker thread, so
    each has its own register pool)."""
    p = ck.programs.get(worker)
    if p is not None:
        return p
    jf = program.functions[ck.name]
    blocks = []
    for b, blk in enumerate(jf.blocks):
        fn = ck.funcs.get(b)
        if fn is not None:
            ck.ref_ops[b] = _chain([_per_lane(op) for op, _exact in blk.ops], ck.pieces.get(b, []))
            blk = dataclasses.replace(blk, ops=[(_native_op(fn, ck.ref_ops[b]), True)])
        elif b in ck.reference_blocks:  # (partial.py) its writes must reach the lane arrays native blocks read
            ops = [(_per_lane(op), exact) for op, exact in blk.ops]
            if b in ck.pieces:  # the ops before its first native piece, then that piece (and on)
                chained = _chain([op for op, _exact in ops], ck.pieces[b])
                ops = [*ops[:len(chained) - 1], (chained[-1], True)]
            blk = dataclasses.replace(blk, ops=ops)
        blocks.append(blk)
    njf: JitFunction = dataclasses.replace(jf, blocks=blocks, reg_pool={})
    p = copy.copy(program)
    p.functions = {**program.functions, ck.name: njf}
    ck.programs[worker] = p
    return p


def _chain(ref: list[Any], pieces: list[tuple[int, int, Any]]) -> list[Any]:
    """The ops the reference runs from an op k on, by index: the block's reference ops up to the next native
    piece (partial.py), then one op that runs that piece natively, and on from there (a piece that hands
    over at its op j, a failed check or its end before an op it does not compile, continues the same way
    from j). Without pieces: the reference ops."""
    if not pieces:
        return ref
    (s, _e, fn), rest = pieces[0], pieces[1:]
    after = _chain(ref, rest)

    def run_piece(f: Any, m: Any) -> None:
        st = _frame_state(f)
        rc = fn(st[0], st[1] if m is None else m.ctypes.data, st[2], st[3])
        if rc:  # its op rc - 1 (counted from s) and what follows run from `after`
            for op in after[s + rc - 1:]:
                op(f, m)

    return [*ref[:s], run_piece]


def _per_lane(op: Any) -> Any:
    """The lane-array form of a reference op. The JIT wraps definitions of uniform registers
    (hw/uniform.scalar_definition) so they leave NumPy scalars in the frame; native blocks keep every
    register as a lane array, so a reference op run after a native one must write the array too."""
    if getattr(op, "__name__", "") == "run_uniform" and op.__closure__:
        inner = dict(zip(op.__code__.co_freevars, (c.cell_contents for c in op.__closure__), strict=True))
        return inner.get("run", op)
    return op


def _frame_state(f: Frame) -> tuple[int, int, int, int, tuple[np.ndarray, ...]]:
    """(register pointer table, all-ones mask, lanes, ctx, the arrays those addresses are in) of a frame, made
    once per frame and chunk (`_rearm` drops it). The tuple holds the arrays it gives the addresses of, so an
    address in it never outlives its memory (a kit's ctx array is replaced when the launch's shape changes)."""
    st = f.__dict__.get("_native")
    if st is None:
        memo = f.regset.memo  # the frame's register set, reused chunk after chunk (the engine's pool): its table too
        ptrs = memo.get("ptrs")
        if ptrs is None:
            bases = f._bases  # the frame's register arrays, which the reference ops see through f.V
            ptrs = memo["ptrs"] = np.array([bases[n].ctypes.data for n in f.jf.reg_storage] or [0], dtype=np.uint64)
        chunk = f.chunk
        ones, ctx = chunk._native_ones, chunk._native_ctx  # type: ignore[attr-defined]
        st = (int(ptrs.ctypes.data), int(ones.ctypes.data), chunk.n, int(ctx.ctypes.data), (ptrs, ones, ctx))
        f._native = st  # type: ignore[attr-defined]
    return st


def _native_op(fn: Any, ref_ops: list[Any]) -> Any:
    def run(f: Any, m: Any) -> None:
        st = _frame_state(f)
        mp = st[1] if m is None else m.ctypes.data
        rc = fn(st[0], mp, st[2], st[3])
        if rc:  # a memory check failed at op rc-1: the reference runs the rest of the block from there
            for op in ref_ops[rc - 1:]:
                op(f, m)

    return run


def _launch_reason(program: Program, kernel: str, config: LaunchConfig, mem: DeviceMemory) -> str | None:
    """launch_reason, memoized on the program by what it reads: the launch's shape (not its grid's size unless
    it has clusters) and the settings (each launch of a training step's few shapes asked anew cost ~5 us)."""
    s = cfg.settings()
    key = (kernel, config.block, config.grid if any(config.cluster) or "reqnctapercluster" in
           program.functions[kernel].fn.directives else None, config.cluster, bool(config.grid_workspace),
           config.shared_mem, s.chunk_lanes, s.debug >= 4)
    memo: dict[tuple[Any, ...], str | None] = program.__dict__.setdefault("_native_reasons", {})
    try:
        return memo[key]
    except KeyError:
        pass
    reason = launch_reason(program, kernel, config, mem)
    if len(memo) > 256:
        memo.clear()
    memo[key] = reason
    return reason


def launch_reason(program: Program, kernel: str, config: LaunchConfig, mem: DeviceMemory) -> str | None:
    """Why this launch must run on the reference executor (None: it may run natively)."""
    jf = program.functions[kernel]
    if cluster_dims(jf, config)[1]:
        return "thread-block clusters"
    if jf.local_size > MAX_LOCAL_BYTES:
        return "local memory past the limit (the reference reports it)"
    lpb = -(-config.threads_per_block // 32) * 32
    # (a cooperative grid runs as one chunk, as on the reference: see execute)
    per_chunk = config.num_blocks if config.grid_workspace else _per_chunk(program, jf, cfg.settings().chunk_lanes,
                                                                             lpb)
    if per_chunk * -(-program.shared_bytes(kernel, config.shared_mem) // 16) * 16 >= 1 << 31:
        return "a chunk's shared memory reaches 2 GiB (native code indexes it with 32 bits)"
    if cfg.settings().debug >= 4:
        return "STRATA_DEBUG=4 traces each instruction"
    # (No rule for branch-free load/store kernels over wide chunks any more: since the dry run's whole-chunk
    # check (chunkcheck.py), native code runs them as fast as the reference's slices or faster, NCCL's tiles
    # included, and it leaves the interpreter lock free, so several devices' kernels run at once.)
    return None


def _per_chunk(program: Program, jf: JitFunction, chunk_lanes: int, lpb: int) -> int:
    """Blocks a chunk holds: the reference's count (engine.execute), fewer when local memory is big (the
    kernel's and the largest device function's, per lane: one chunk backs at most LOCAL_CHUNK_BYTES)."""
    per_chunk = max(1, chunk_lanes // lpb)
    callee = max((g.local_size for g in program.functions.values() if not g.fn.is_entry), default=0)
    per_lane = -(-(jf.local_size + callee) // 16) * 16
    if per_lane:
        per_chunk = max(1, min(per_chunk, LOCAL_CHUNK_BYTES // (per_lane * lpb)))
    return per_chunk


# per block shape: spare (all-ones masks by lane count, %ctaid.x buffers, chunk-independent specials) of workers
_SCRATCH: dict[tuple[int, int, int], list[tuple[dict[int, np.ndarray], dict[tuple[int, str], np.ndarray],
                                                dict[int, dict[str, Any]]]]] = {}


def execute(program: Program, kernel_name: str, config: LaunchConfig, mem: DeviceMemory, *, sm_count: int,
            budget: int, chunk_lanes: int, timeout_s: float, stack_bytes: int, control: Any, runtime: Any,
            clock_mhz: float) -> LaunchResult | None:
    """Run the launch natively, or return None (after a `native_fallback` trace event) when it cannot."""
    known = program.__dict__.get("_native")
    hit = known.get(kernel_name) if known else None
    if isinstance(hit, CompiledKernel) and not hit.funcs and not hit.pieces and not config.grid_workspace and \
            not cluster_dims(program.functions[kernel_name], config)[1]:
        # compiled already, and nothing of it is native code: the reference's loop runs it whatever launch_reason
        # would say (its other reasons send a launch to that same loop), so it need not be asked
        return _no_native_code(hit, program, kernel_name, config, mem, sm_count=sm_count, budget=budget,
                               chunk_lanes=chunk_lanes, timeout_s=timeout_s, stack_bytes=stack_bytes, control=control,
                               runtime=runtime, clock_mhz=clock_mhz)
    reason = _launch_reason(program, kernel_name, config, mem)
    if reason is None and not _warm(program, kernel_name, config, chunk_lanes):
        if tiering.first_deferral(program, kernel_name):  # (once per kernel: not a row under every launch)
            trace.emit("L0", "native_deferred", kernel=kernel_name,
                       reason="not compiled yet: the reference's time on it is below its compile cost")
        return None  # (the reference runs it, and its time counts towards compiling: tiering.py)
    ck: CompiledKernel | str = reason if reason else compiled(
        program, kernel_name,
        optimize_now=kernel_name not in known_kernels(program)
        and tiering.optimize_now(program.functions[kernel_name], config, chunk_lanes))
    if isinstance(ck, str):
        trace.emit("L0", "native_fallback", kernel=kernel_name, reason=ck)
        return None
    if not ck.funcs and not ck.pieces:
        return _no_native_code(ck, program, kernel_name, config, mem, sm_count=sm_count, budget=budget,
                               chunk_lanes=chunk_lanes, timeout_s=timeout_s, stack_bytes=stack_bytes, control=control,
                               runtime=runtime, clock_mhz=clock_mhz)
    _report_partial(ck, kernel_name)
    if ck.opt == 0 and not ck.optimizing:
        _ran_unoptimized(program, kernel_name, ck, 0.0,
                         tiering.predicted_reference_s(program.functions[kernel_name], config, chunk_lanes))
    t0 = time.perf_counter()
    nblocks = config.num_blocks
    one_d = config.grid[1] == config.grid[2] == 1
    per_chunk, ctaid_slots, static_specials, streaky = _plan(program, kernel_name, ck, config, one_d, chunk_lanes)
    if config.grid_workspace:
        # a cooperative grid is resident all at once, so it runs as one chunk (the reference's rule): blocks
        # spinning in this_grid().sync() yield to the blocks still on their way there (runloop: R_SPIN)
        per_chunk = nblocks
        mem.fill(config.grid_workspace, GRID_WORKSPACE_BYTES, 0)  # the barrier starts at 0, as the driver sets it
    firsts = range(0, nblocks, per_chunk)
    split = _split_key(ck, config, len(firsts), budget)
    if split is not None and ck.split_runs.get(split, 0) >= SPLIT_AFTER_RUNS:
        per_chunk = -(-nblocks // THREADS)  # the reference's one chunk as THREADS sub-chunks (see _split_key)
        firsts = range(0, nblocks, per_chunk)
    nthreads = THREADS if len(firsts) > 1 and not budget and ck.serial is None else 1
    table = _allocation_table(mem)
    launches = []
    for t in range(nthreads):
        p = _patched(program, ck, t)
        L = Launch(p, p.functions[kernel_name], config, mem, sm_count, budget, chunk_lanes, timeout_s=timeout_s,
                   stack_bytes=stack_bytes, control=control, runtime=runtime, clock_mhz=clock_mhz)
        L.start_ns, L.start_s = time.perf_counter_ns(), time.monotonic()
        launches.append(L)
    inv, inv_values = _invariant_values(ck, config.params)
    kits = [_take_kit(ck, config, inv_values) for _ in launches]
    ncounters = [k.counters for k in kits]
    npeer = [k.peer for k in kits]  # bytes to each peer slot (see _ctx)
    dstates = [_driver_state(len(L.kernel.blocks)) for L in launches]
    if control is not None:
        control.launch = launches[0]
        if control.reason is not None:
            launches[0].polls = 0
    state: dict[str, Any] = {"idx": None, "exc": None}
    lock = threading.Lock()

    def work(t: int) -> None:
        L = launches[t]
        # arrays that depend only on the block shape, kept from launch to launch (a fresh big array costs the
        # OS's page zeroing on first touch): taken from a pool, so concurrent launches never share one
        pool = _SCRATCH.setdefault(config.block, [])
        try:
            ones_cache, ctaid_bufs, statics = pool.pop()
        except IndexError:
            ones_cache, ctaid_bufs, statics = {}, {}, {}
        with np.errstate(all="ignore"):
            try:
                chunks(t, L, ones_cache, kits[t], ctaid_bufs, statics)
            finally:  # the driver's per-block instruction accumulators, into the launch's (run_root leaves them)
                dstates[t].fold(L.accumulators(L.kernel))
                _DSTATES.setdefault(len(dstates[t].acc_t), []).append(dstates[t])  # (folded: all zero again)
                if len(pool) < THREADS:
                    pool.append((ones_cache, ctaid_bufs, statics))

    def chunks(t: int, L: Launch, ones_cache: dict[int, np.ndarray], kit: _Kit,
               ctaid_bufs: dict[tuple[int, str], np.ndarray], statics: dict[int, dict[str, Any]]) -> None:
        """Worker t's chunks, in order, until they are done or a chunk of a lower index faulted."""
        ds = dstates[t]
        # the frame of the worker's last chunk when one driver call ran it to the end (run_root's result):
        # the next chunk of its size then needs no Python objects unless its driver call stops early
        streak: Frame | None = None
        try:
            for idx in range(t, len(firsts), nthreads):
                if state["idx"] is not None and idx > state["idx"]:
                    return
                first = firsts[idx]
                count = min(per_chunk, nblocks - first)
                resume = None
                if streak is not None:
                    if streak.chunk.nblocks == count:
                        resume = _streak_drive(streak, first, count, ck, ds, L)
                        if finished(L, L.kernel, resume[0], resume[1]):
                            continue
                    else:
                        streak.release()
                        streak = None
                chunk = Chunk(L, first, count)
                if resume is not None:
                    assert streak is not None
                    chunk.shared = streak.chunk.shared  # (what the driver call ran on)
                if one_d:
                    _prefill_ctaid(chunk, ctaid_slots, ctaid_bufs)
                _prefill_statics(chunk, static_specials, statics)
                if ck.funcs:  # a kernel with no native block (an empty one) needs no native state
                    chunk._native_ctx = _ctx(chunk, mem, table, kit, ck)  # type: ignore[attr-defined]
                    ones = ones_cache.get(chunk.n)
                    if ones is None:
                        ones = ones_cache[chunk.n] = np.ones(chunk.n, dtype=np.bool_)
                    chunk._native_ones = ones  # type: ignore[attr-defined]
                if streak is not None:  # the driver already ran this chunk's start on the streak's registers
                    frame, streak = _rearm(streak, chunk), None
                else:
                    frame = Frame(L.kernel, chunk)
                    if inv:  # written when Python first reads the frame's registers (_fill_pending), if it does
                        frame._native_inv = (ck, inv)  # type: ignore[attr-defined]
                try:
                    if ck.funcs:
                        if run_root(frame, chunk.entry_mask, ck, ds, _frame_state, resume, release=not streaky,
                                    ready=_fill_pending if inv else None):
                            streak = frame if streaky else None
                        elif streaky:
                            frame.release()
                    else:
                        _fill_pending(frame)
                        run_frame(frame, chunk.entry_mask)
                except LaneFault as fault:
                    exc: BaseException = _device_fault(L, chunk, fault)
                except BaseException as e:  # watchdog, cancel, device faults: the first chunk's wins
                    exc = e
                else:
                    continue
                with lock:
                    if state["idx"] is None or idx < state["idx"]:
                        state["idx"], state["exc"] = idx, exc
                return
        finally:
            if streak is not None:
                streak.release()

    if nthreads > 1:
        done = hand_over(work, 1)
        work(0)
        try:
            done.wait()
        except BaseException:  # (Ctrl-C while worker 1 runs: it stops at its next chunk, as after a fault)
            with lock:
                state["idx"] = -1
            raise
    else:
        work(0)
    peers = [bytes_ for bytes_ in npeer if bytes_.any()]
    if peers:
        _add_peer_bytes(mem, peers)  # (before a fault is raised: the reference counts what ran until it)
        for bytes_ in peers:
            bytes_.fill(0)
    if state["exc"] is not None:
        for kit in kits:
            kit.counters.fill(0)
        _give_back(ck, config, kits)
        raise state["exc"] from None
    L0 = launches[0]
    c = L0.counters
    for L in launches[1:]:
        c.add(L.counters)
        for k, (t_acc, w_acc) in L.acc.items():
            a = L0.accumulators(L.program.functions[kernel_name]) if k not in L0.acc else L0.acc[k]
            a[0][:] = [x + y for x, y in zip(a[0], t_acc, strict=True)]
            a[1][:] = [x + y for x, y in zip(a[1], w_acc, strict=True)]
    for nc in ncounters:
        values = nc.tolist()
        if any(values):
            for name, v in zip(cg.COUNTER_NAMES, values, strict=True):
                if v:
                    setattr(c, name, getattr(c, name) + v)
            nc.fill(0)
    _give_back(ck, config, kits)
    c.threads_launched = nblocks * config.threads_per_block
    c.blocks_launched = nblocks
    _fold_counters(L0)
    result = LaunchResult(c, time.perf_counter() - t0, _shared_size(L0), L0.kernel.local_size)
    result.executor = "native"
    if ck.opt == 0:
        _ran_unoptimized(program, kernel_name, ck, result.wall_time_s)
    if split is not None and nthreads == 1:  # two slow launches in a row split the next (one may be noise)
        seen = ck.split_runs
        seen[split] = seen.get(split, 0) + 1 if result.wall_time_s >= SPLIT_AFTER_S else 0
    return result


class _Done:
    """The hand-back of one task given to a helper thread: `wait()` returns once the task ran (and re-raises
    what escaped it: worker code records its chunks' faults itself, so that would be a bug in the executor)."""

    __slots__ = ("lock", "error")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()  # released by the helper when the task is done
        self.error: BaseException | None = None

    def wait(self) -> None:
        self.lock.acquire()
        if self.error is not None:
            raise self.error


class _Helper:
    """A persistent daemon thread that runs worker 1's share of launches (starting a thread per launch cost
    about as much as a small launch runs). Idle helpers wait in `_IDLE`; a launch takes one, or makes one when
    every helper is busy (launches on several devices' engine threads at once). Daemon: it never holds up
    the interpreter's exit, and nothing joins it."""

    def __init__(self) -> None:
        self.go = threading.Lock()
        self.go.acquire()  # released by `run`: one task each time
        self.task: tuple[Any, int, _Done] | None = None
        self.thread = threading.Thread(target=self._loop, name="strata-native", daemon=True)
        self.thread.start()

    def run(self, fn: Any, arg: int, done: _Done) -> None:
        self.task = (fn, arg, done)
        self.go.release()

    def _loop(self) -> None:
        while True:
            self.go.acquire()
            task, self.task = self.task, None
            assert task is not None
            if not self._one(*task):
                return  # (more helpers than concurrent launches needed: this one ends)

    def _one(self, fn: Any, arg: int, done: _Done) -> bool:
        """Run one task (its closures go with this frame, not when the next task comes); whether to stay."""
        try:
            fn(arg)
        except BaseException as e:  # noqa: BLE001 - handed to the launch's thread, which raises it
            done.error = e
        stay = len(_IDLE) < _IDLE_KEPT
        if stay:
            _IDLE.append(self)  # (before the hand-back: the launch's next launch finds it idle)
        done.lock.release()
        return stay


_IDLE: list[_Helper] = []  # helpers waiting for a task (list.pop and append are atomic)
_IDLE_KEPT = 8


def hand_over(fn: Any, arg: int) -> _Done:
    """Run `fn(arg)` on an idle helper thread (a new one if none is idle); wait for it with the result's wait()."""
    done = _Done()
    try:
        helper = _IDLE.pop()
    except IndexError:
        helper = _Helper()
    helper.run(fn, arg, done)
    return done


def _forget_helpers() -> None:
    """After fork: the parent's helper threads do not exist in the child."""
    _IDLE.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


# A one-chunk launch of several blocks runs on THREADS once SPLIT_AFTER_RUNS launches of its kernel and shape in
# a row took longer than SPLIT_AFTER_S on one thread. Below about a millisecond the hand-over and the second
# worker's Python cost more than half the launch (SAXPY on 65,536 elements: 0.2 ms on one thread, 0.34 ms split).
SPLIT_AFTER_S = 1e-3
SPLIT_AFTER_RUNS = 2


def _split_key(ck: CompiledKernel, config: LaunchConfig, nchunks: int, budget: int) -> tuple[Any, ...] | None:
    """The key under which a launch of one chunk and several blocks records whether it runs as THREADS
    sub-chunks (None: it never does)."""
    if nchunks != 1 or config.num_blocks < 2 or budget or ck.serial is not None or config.grid_workspace:
        return None  # (a cooperative grid's blocks wait for each other: they share one chunk's lockstep)
    return (config.grid, config.block)


def _no_native_code(ck: CompiledKernel, program: Program, kernel_name: str, config: LaunchConfig, mem: DeviceMemory,
                    **kw: Any) -> LaunchResult:
    """A compiled kernel of which nothing is native code (an empty kernel, or every block on the reference
    handlers): its chunks would run the reference's own loop anyway (run_frame), so they do so without the native
    per-launch state (driver states, counter arrays, ctx), which costs more than such a launch runs."""
    _report_partial(ck, kernel_name)
    result = _execute_reference(program, kernel_name, config, mem, **kw)
    result.executor = "native"
    return result


def _report_partial(ck: CompiledKernel, kernel_name: str) -> None:
    """The `native_partial` trace event of a kernel some of whose blocks run on the reference handlers."""
    if ck.reference_blocks:
        trace.emit("L0", "native_partial", kernel=kernel_name, blocks=len(ck.reference_blocks),
                   reasons=sorted(set(ck.reference_blocks.values())), serial=ck.serial)


# blocks of a kernel -> driver states kept for the next launch (one per worker of a launch; see _driver_state)
_DSTATES: dict[int, list[DriverState]] = {}


def _driver_state(nblocks: int) -> DriverState:
    """A worker's driver state: a spare one (its accumulators folded back to zero) or a new one. Each costs
    three arrays; a small launch would spend more on making them than on running. (list.pop is atomic, so
    concurrent launches never share one.)"""
    spare = _DSTATES.get(max(nblocks, 1))
    try:
        return spare.pop() if spare else DriverState(nblocks)
    except IndexError:  # another thread took the last one meanwhile
        return DriverState(nblocks)


def _plan(program: Program, kernel: str, ck: CompiledKernel, config: LaunchConfig, one_d: bool,
          chunk_lanes: int) -> tuple[int, dict[str, np.dtype], list[tuple[str, np.dtype]], bool]:
    """What a launch's setup derives from the kernel and the launch's shape alone, memoized on the compiled
    kernel: blocks per chunk, the %ctaid.x register types to prefill, the chunk-independent special registers,
    and whether chunks may run as a streak (executor.chunks)."""
    plans: dict[tuple[Any, ...], Any] = ck.__dict__.setdefault("_plans", {})
    key = (kernel, config.block, one_d, chunk_lanes)
    hit = plans.get(key)
    if hit is None:
        jf = program.functions[kernel]
        lpb = -(-config.threads_per_block // 32) * 32
        ctaid_slots = {s.dtype.str: s.dtype for s in jf.slots
                       if s.kind == "special" and s.key == "%ctaid.x" and s.dtype.kind in "iu"}
        ctaid_slots.setdefault(np.dtype(np.uint32).str, np.dtype(np.uint32))  # what _ctx passes native code
        hit = (_per_chunk(program, jf, chunk_lanes, lpb), ctaid_slots, _static_specials(jf, ck),
               _streaky(jf, ck, config, one_d))
        if len(plans) > 64:
            plans.clear()
        plans[key] = hit
    return hit


def _prefill_ctaid(chunk: Chunk, dtypes: dict[str, np.dtype], bufs: dict[tuple[int, str], np.ndarray]) -> None:
    """%ctaid.x of a 1-D grid's chunk (first block + each lane's block in the chunk), written into a
    buffer the worker reuses and put in the chunk's special-register cache before anything asks: the
    engine would compute it in int64 and convert it, two passes and two allocations per chunk."""
    for key, dt in dtypes.items():
        buf = bufs.get((chunk.n, key))
        if buf is None:
            buf = bufs[(chunk.n, key)] = np.empty(chunk.n, dtype=dt)
            bufs[(chunk.n, "local:" + key)] = chunk.block_local.astype(dt)  # the same for every chunk of n lanes
        np.add(bufs[(chunk.n, "local:" + key)], dt.type(chunk.first_block), out=buf, casting="unsafe")
        chunk._specials[f"%ctaid.x:{key}"] = buf  # Chunk.special's cache (the same values it would compute)


# special registers whose values depend only on the block shape and the chunk's number of blocks (every other
# one may depend on the chunk's first block, the time, the device or the launch's shared memory size)
_SHAPE_ONLY = ("%tid.", "%ntid.", "%laneid", "%warpid", "%nwarpid", "%lanemask_")


def _static_specials(jf: JitFunction, ck: CompiledKernel) -> list[tuple[str, np.dtype]]:
    """The kernel's special registers (its frame's slots, and what native code reads) that are the same
    for every chunk of a size and every launch of a block shape."""
    keys = [(str(s.key), s.dtype) for s in jf.slots if s.kind == "special"] + [(n, _U32) for n in ck.specials]
    return list(dict.fromkeys((k, dt) for k, dt in keys if k.startswith(_SHAPE_ONLY)))


def _streaky(jf: JitFunction, ck: CompiledKernel, config: LaunchConfig, one_d: bool) -> bool:
    """Whether a chunk of this launch may run without its own Chunk and Frame objects after a chunk that one
    driver call ran to the end (executor.chunks): native blocks, a 1-D grid (%ctaid.x is the worker's buffer,
    refilled), no padding lanes (every lane starts active), no local memory, and no special register whose
    value the frame would have to compute anew for the chunk (only the block shape's, %ctaid.x, %ntid, %nctaid)."""
    keys = [str(s.key) for s in jf.slots if s.kind == "special"] + list(ck.specials)
    return bool(ck.funcs) and one_d and config.threads_per_block % 32 == 0 and not jf.local_size and \
        all(k.startswith((*_SHAPE_ONLY, "%ctaid.x", "%nctaid.", "%ntid.")) for k in keys)


def _streak_drive(f: Frame, first: int, count: int, ck: CompiledKernel, ds: DriverState,
                  L: Launch) -> tuple[int, int, int]:
    """The driver call of the chunk of `count` blocks from `first`, every lane from block 0, on the registers,
    shared memory, masks and ctx of the streak's frame `f` (a chunk of the same size that finished): shared
    memory zeroed (as a new Chunk's), ctx's first block set (native code adds it to %ctaid.x's block-local
    array: the frame's own %ctaid.x buffers are filled only if the chunk needs its Chunk). (drive_entry's
    result.)"""
    chunk = f.chunk
    n = chunk.n
    if chunk.shared_size:
        chunk.shared.fill(0)
    slots = chunk._native_ctx  # type: ignore[attr-defined]
    slots[cg.CTX_FIRST_BLOCK] = first
    slots[cg.CTX_CTAID_X_ADD] = first
    regs, ones, _n, ctx, _kept = _frame_state(f)
    return drive_entry(ck, ds, L, regs, ones, n, ctx, 0, n, n // 32, EXIT, False, count)


def _rearm(f: Frame, chunk: Chunk) -> Frame:
    """The streak's frame for `chunk` (the chunk its last driver call ran the start of): Frame.__init__'s
    per-chunk fields anew; its registers and their views (V) stay, as do its special registers' arrays (the
    same objects: `_streaky`), and nothing but native code ran on it since it was made."""
    f.chunk = chunk
    f.params = {}
    f.local_base = chunk.local_top
    f.stack = []
    f.addr_cache = {}
    # the native state names the old chunk's ctx, which is this chunk's only while the kit's ctx for its size was
    # not replaced meanwhile (`_ctx`: another key, e.g. a new geometry array): made anew from this chunk
    f.__dict__.pop("_native", None)
    return f


def _prefill_statics(chunk: Chunk, keys: list[tuple[str, np.dtype]], cache: dict[int, dict[str, Any]]) -> None:
    """Put the chunk-independent special registers in the chunk's cache before the frame asks for them:
    the values Chunk.special would find in the launch's geometry cache, looked up once per worker and chunk
    size instead of once per chunk and register (each lookup builds a key and asks the program)."""
    got = cache.setdefault(chunk.nblocks, {})
    if len(got) < len(keys):  # (first chunk of this size, or another kernel of this block shape filled it)
        for name, dt in keys:
            got[f"{name}:{dt.str}"] = chunk.special(name, dt)
    chunk._specials.update(got)


def _fill_invariants(frame: Frame, ck: CompiledKernel, values: tuple[int, ...]) -> None:
    """Write the launch's invariant registers into the frame's lane arrays (the reference handlers and
    the branch machinery read them there; native code takes them from ctx), unless this register set
    already holds these values (the engine reuses register sets across chunks and launches)."""
    memo = frame.regset.memo
    if memo.get("invariants") == values:
        return
    bases = frame._bases
    for (r, _off, _size), v in zip(ck.invariants, values, strict=True):
        bases[r].fill(v)
    memo["invariants"] = values


def _invariant_values(ck: CompiledKernel, params: bytes) -> tuple[tuple[int, ...], np.ndarray]:
    """The launch's values of the kernel's invariant registers (codegen.launch_invariants): as unsigned ints
    (what their lane arrays are filled with) and as the int64 array native code reads through ctx. When every
    one is a whole aligned 8-byte parameter (pointers, sizes: the common case), one gather reads them all."""
    gather = ck.__dict__.get("_inv_gather")
    if gather is None:
        whole = bool(ck.invariants) and all(size == 8 and off % 8 == 0 for _r, off, size in ck.invariants)
        gather = ck.__dict__["_inv_gather"] = (
            np.array([off // 8 for _r, off, _size in ck.invariants], dtype=np.intp) if whole else None,
            max((off + size for _r, off, size in ck.invariants), default=0))
    memo: dict[bytes, tuple[tuple[int, ...], np.ndarray]] = ck.__dict__.setdefault("_inv_memo", {})
    hit = memo.get(params)  # (a loop's launches pass the same parameters again and again)
    if hit is not None:
        return hit
    if len(memo) >= 32:
        memo.clear()
    hit = memo[params] = _invariants_of(ck, params, gather)
    return hit


def _invariants_of(ck: CompiledKernel, params: bytes, gather: tuple[np.ndarray | None, int]) -> tuple[
        tuple[int, ...], np.ndarray]:
    """_invariant_values, computed."""
    index, end = gather
    if index is not None and len(params) >= end and len(params) % 8 == 0:
        values = np.frombuffer(params, dtype=np.int64)[index]  # (a new array: the params buffer is not kept)
        values.flags.writeable = False  # (memoized: shared by the launches with these parameters)
        return tuple(values.view(np.uint64).tolist()), values
    inv = tuple(int.from_bytes(params[off:off + size], "little") if off + size <= len(params) else 0
                for _r, off, size in ck.invariants)
    values = np.array([v if v < 1 << 63 else v - (1 << 64) for v in inv] or [0], dtype=np.int64)
    values.flags.writeable = False
    return inv, values


def _fill_pending(frame: Frame) -> None:
    """The frame's invariant registers written into its lane arrays (_fill_invariants), if not yet: run_root
    calls it before anything but native code reads them. (A streak's frame (_rearm) keeps what is pending.)"""
    pending = frame.__dict__.pop("_native_inv", None)
    if pending is not None:
        _fill_invariants(frame, *pending)


def _allocation_table(mem: DeviceMemory) -> tuple[np.ndarray, np.ndarray, int]:
    """(starts, ends, count) of the allocations native code may access, in address order: the device's own
    and, with peer access enabled, its peers' (each device owns one range of the unified address space, so
    their allocations never interleave; native code finds an address's allocation by binary search over
    them all). Kept on the memory until it or a peer maps or unmaps (a launch on a device with 8 peers of
    thousands of allocations would otherwise list them all: milliseconds)."""
    peers = list(mem.peers.values())
    key = (mem.generation, tuple((p.slot, p.generation) for p in peers))
    hit = mem.__dict__.get("_native_table")
    if hit is not None and hit[0] == key:
        return hit[1]
    allocs: list[Allocation] = mem.allocations()
    for peer in peers:
        allocs += peer.allocations()
    if peers:
        allocs.sort(key=lambda a: a.address)
    table = (np.array([a.address for a in allocs] or [0], dtype=np.uint64),
             np.array([a.end for a in allocs] or [0], dtype=np.uint64), len(allocs))
    if key == (mem.generation, tuple((p.slot, p.generation) for p in peers)):  # (nobody mapped meanwhile)
        mem._native_table = (key, table)  # type: ignore[attr-defined]
    return table


def _add_peer_bytes(mem: DeviceMemory, npeer: list[np.ndarray]) -> None:
    """Add native code's peer traffic (bytes per unified slot) to the device's, as the reference's
    memory checks count it (DeviceMemory.peer_bytes)."""
    total = np.sum(npeer, axis=0) if len(npeer) > 1 else npeer[0]
    for slot in np.flatnonzero(total).tolist():
        mem.add_peer_bytes(slot, int(total[slot]))


class _Kit:
    """A worker's native launch state kept from launch to launch of one kernel and block shape: its counter
    and peer-byte arrays (all zero between launches), its copies of the parameters and invariant values (fixed
    addresses), and its ctx arrays by chunk size (_ctx), which then need only the slots that changed. Making
    them anew cost about as much as a small launch runs."""

    __slots__ = ("counters", "peer", "params", "inv", "ctx")

    def __init__(self) -> None:
        self.counters = np.zeros(len(cg.COUNTER_NAMES), dtype=np.int64)
        self.peer = np.zeros(UVA_SLOTS, dtype=np.int64)
        self.params = np.zeros(64, dtype=np.uint8)
        self.inv = np.zeros(1, dtype=np.int64)
        self.ctx: dict[int, Any] = {}  # lane count -> (ctx, specials table, shared base, its lane arrays, key)

    def load(self, params: bytes, inv_values: np.ndarray) -> None:
        """This launch's parameters and invariant values, into the kit's arrays (grown when too small)."""
        if len(params) > self.params.size:
            self.params = np.zeros(-(-len(params) // 64) * 64, dtype=np.uint8)
        if params:
            self.params[:len(params)] = np.frombuffer(params, dtype=np.uint8)
        if inv_values.size > self.inv.size:
            self.inv = np.zeros(inv_values.size, dtype=np.int64)
        self.inv[:inv_values.size] = inv_values


_KITS_KEPT = 2 * THREADS  # spare kits per kernel and block shape (concurrent launches each take their own)


def _take_kit(ck: CompiledKernel, config: LaunchConfig, inv_values: np.ndarray) -> _Kit:
    """A spare kit of this kernel and block shape, or a new one; loaded with the launch's parameters."""
    spare = ck.__dict__.setdefault("_kits", {}).get(config.block)
    try:
        kit = spare.pop() if spare else _Kit()
    except IndexError:  # another thread took the last one meanwhile
        kit = _Kit()
    kit.load(config.params, inv_values)
    return kit


def _give_back(ck: CompiledKernel, config: LaunchConfig, kits: list[_Kit]) -> None:
    """The launch's kits back to the spares (their counter and peer arrays zeroed by the caller)."""
    spare = ck.__dict__["_kits"].setdefault(config.block, [])
    for kit in kits:
        if len(spare) < _KITS_KEPT:
            spare.append(kit)


def _ctx(chunk: Chunk, mem: DeviceMemory, table: tuple[np.ndarray, np.ndarray, int], kit: _Kit,
         ck: CompiledKernel) -> np.ndarray:
    """The chunk's ctx array. One per kit and chunk size, made once and then updated in the slots that
    change from chunk to chunk (its shared memory, first block, lane-varying special registers), and from
    launch to launch when the launch's shape or the allocation table changed (`key`)."""
    lanes = []
    grid = chunk.launch.config.grid
    one_d = grid[1] == grid[2] == 1
    for name in ck.specials:
        if name == "%ctaid.x" and one_d:  # the same array for every chunk: native code adds the first block
            v = chunk.launch.cached("block_local:u32", chunk.nblocks, lambda: chunk.block_local.astype(_U32))
        else:
            v = chunk.special(name, _U32)
        if not (isinstance(v, np.ndarray) and v.shape == (chunk.n,) and v.dtype == _U32 and v.flags.c_contiguous):
            v = np.ascontiguousarray(np.broadcast_to(v, (chunk.n,)), dtype=_U32)
        lanes.append(v)
    cfg = chunk.launch.config
    starts, ends, nalloc = table
    # everything ctx holds that may change between launches of this kernel (the kit's and ck's arrays stay)
    key = (id(mem), id(starts), id(ends), nalloc, cfg.block, cfg.grid, len(cfg.params), chunk.shared_size,
           chunk.shared_limit, id(chunk.shared_base), id(kit.params), id(kit.inv))
    hit = kit.ctx.get(chunk.n)
    if hit is None or hit[4] != key:
        base = np.ascontiguousarray(chunk.shared_base, dtype=np.int64)
        specials = np.zeros(max(len(lanes), 1), dtype=np.int64)
        values = [0] * cg.CTX_SIZE
        values[cg.CTX_MEM] = mem.bytes.ctypes.data
        values[cg.CTX_NALLOC] = nalloc
        values[cg.CTX_STARTS] = starts.ctypes.data
        values[cg.CTX_ENDS] = ends.ctypes.data
        values[cg.CTX_SHARED_SIZE] = chunk.shared_size
        values[cg.CTX_SHARED_LIMIT] = chunk.shared_limit
        values[cg.CTX_LPB] = chunk.lanes_per_block
        values[cg.CTX_BLOCK:cg.CTX_BLOCK + 3] = cfg.block
        values[cg.CTX_GRID:cg.CTX_GRID + 3] = cfg.grid
        values[cg.CTX_PARAMS] = kit.params.ctypes.data
        values[cg.CTX_PARAMS_LEN] = len(cfg.params)
        values[cg.CTX_COUNTERS] = kit.counters.ctypes.data
        values[cg.CTX_PEER_BYTES] = kit.peer.ctypes.data
        values[cg.CTX_OWN_LO], values[cg.CTX_OWN_HI] = mem.base, mem.end
        values[cg.CTX_SHARED_BASE] = base.ctypes.data
        values[cg.CTX_SPECIALS] = specials.ctypes.data
        values[cg.CTX_INVARIANTS] = kit.inv.ctypes.data
        values[cg.CTX_SYMBOLS] = ck.symbol_table.ctypes.data  # (alive with ck, which the program memoizes)
        values[cg.CTX_BLOCKS] = ck.block_table.ctypes.data
        # (what `key` names by id is kept with it, so that no other object takes its id meanwhile)
        kept = (mem, starts, ends, chunk.shared_base, base, kit.params, kit.inv)
        hit = kit.ctx[chunk.n] = (np.array(values, dtype=np.int64), specials, kept, [], key)
    ctx, specials_table, _kept, last, _key = hit
    if lanes and not (len(last) == len(lanes) and all(a is b for a, b in zip(last, lanes, strict=True))):
        specials_table[:len(lanes)] = [a.ctypes.data for a in lanes]  # (the same arrays chunk after chunk, mostly)
        last[:] = lanes
    ctx[cg.CTX_SHARED] = chunk.shared.ctypes.data
    ctx[cg.CTX_FIRST_BLOCK] = chunk.first_block
    ctx[cg.CTX_CTAID_X_ADD] = chunk.first_block if one_d else 0
    chunk._native_keep = lanes  # type: ignore[attr-defined]  # alive as long as the chunk
    return ctx
