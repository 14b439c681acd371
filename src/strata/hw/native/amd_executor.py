"""The native executor for AMD dispatches: the wave64 kernel compiled once (amd_codegen.py), run over batches of
workgroups, with the reference executor's semantics, checks and counters.

Scheduling: the compiled function runs each runnable wave of a batch until it ends or reaches `s_barrier`; once
every wave of a workgroup has had its turn and none of them can run, the workgroup's waves at a barrier are
released (ended waves count as arrived: the reference's rule, applied to the workgroup the barrier belongs to)
and the workgroup runs on, so it goes barrier phase after barrier phase while its registers and LDS are in
cache. Python releases what is left when no wave of its range can run (after a yield or a replay). Waves run one
after another instead of in lock step, and a batch's workgroups are split over THREADS host threads (whole
workgroups each, so barriers stay within a thread; the second range runs on a persistent helper thread of the
PTX side's pool); kernels whose waves communicate without a barrier (a data race on the GPU too) may see other
orders, and global atomics are not compiled. A kernel without barriers keeps a running wave's VGPRs on the
stack (amd_codegen.local_vgprs): the batch's register file is written only for a wave that stops early. A wave
that takes FUEL backward branches in a call lets the next wave run (a wave spinning on a flag another sets), and
between calls the watchdog and the cancel flag are polled. When the native code cannot serve an access with its
fast check (lanes over several allocations, misaligned LDS, a bad address), it stops the wave before the
instruction and the reference handler runs that one instruction on that one wave: it serves it, or raises the
reference's own DeviceFault with its report.

A kernel falls back whole to the reference (`execute` returns None after a `native_fallback` trace event with
the reason) when an instruction is not compiled, a load's register might be read before its `s_waitcnt`
(amd_plan.py), it uses float32 denormal flushing, private (scratch) memory, peers' memory, or an instruction
budget (printf's atomics are not compiled).
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import functools
import hashlib
import threading
import time
from typing import Any

import numpy as np

from strata import config, trace
from strata.errors import DeviceFault, LaunchCancelled, LaunchTimeout
from strata.hw.amdgpu import executor as ref
from strata.hw.amdgpu.decoder import flat_width
from strata.hw.counters import Counters
from strata.hw.memory import DeviceMemory
from strata.hw.native import amd_codegen as cg
from strata.hw.native import amd_ir as air
from strata.hw.native import optimizer, tiering
from strata.hw.native.amd_plan import SMEM_DWORDS, loads_observed_early
from strata.hw.native.executor import hand_over

THREADS = 2  # host threads a dispatch's workgroups are split over (the machine's cores; compiled code drops the GIL)
FUEL = 1 << 12  # backward branches a wave may take in one call before the next wave runs (and Python polls)
_FN = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p)
_COMPILE_LOCK = threading.Lock()


LOCAL_V_BATCH_FACTOR = 2  # a batch's register file may be this many times VGPR_BATCH_BYTES when waves keep
# their VGPRs on the stack (amd_codegen.local_vgprs): address space, touched only by waves that stop early


@dataclasses.dataclass
class CompiledAmd:
    """A kernel's native code and what the Python side needs to turn its counts into Counters."""

    fn: Any
    obj: Any  # the LoadedObject (kept alive with the function)
    nv: int
    classes: list[tuple[str | None, bool, str | None]]  # per instruction: count_class
    groups: np.ndarray  # per instruction: the leader whose wave count it shares (AmdCodegen.count_groups)
    local_v: bool = False  # waves keep their VGPRs on the stack (amd_codegen.local_vgprs)
    opt: int = 3  # LLVM's level of the code: 0 (the first tier) or 3 (tiering.py, as for PTX kernels)
    quick_s: float = 0.0  # dispatches' time on this code while it is -O0
    optimizing: bool = False  # an -O3 recompile is queued or running (optimizer.py)


def nv_of(prog: ref.AmdProgram) -> int:
    """VGPRs a wave holds (the reference's count: AGPRs follow the arch VGPRs, plus one)."""
    k = prog.kernel
    return max(k.vgpr_count, k.descriptor.accum_offset + k.agpr_count if k.agpr_count else 0, 1) + 1


def compiled(prog: ref.AmdProgram, *, optimize_now: bool = False) -> CompiledAmd | str:
    """The kernel's native code (compiled once per program, objects cached on disk), or why there is none. Its
    first code is -O0 unless STRATA_NATIVE_OPT or `optimize_now` says -O3 (the PTX executor's two tiers)."""
    memo: dict[str, Any] = prog.__dict__.setdefault("_native_amd", {})
    hit = memo.get("ck")
    if hit is not None and not _upgrade(hit):
        return hit
    with _COMPILE_LOCK:
        hit = memo.get("ck")
        if hit is None:
            hit = memo["ck"] = _compile(prog, optimize_now and config.settings().native_opt == "auto")
        elif _upgrade(hit):  # (-O0 code, and STRATA_NATIVE_OPT=3 set since it compiled)
            hit = memo["ck"] = _compile(prog, True)
    return hit


def _upgrade(hit: CompiledAmd | str) -> bool:
    return isinstance(hit, CompiledAmd) and tiering.upgrade_due(hit.opt)


def _object_key(prog: ref.AmdProgram, opt: int) -> str:
    """The kernel's key at LLVM level `opt` in the disk cache of objects: its machine code (and device
    functions'), name, target and register count (the code reads everything launch-specific from ctx)."""
    from strata.hw.native.compiler import cache_key

    memo: dict[Any, Any] = prog.__dict__.setdefault("_native_amd", {})
    if ("key", opt) not in memo:
        k = prog.kernel
        h = hashlib.sha256(k.code)
        for fname, vaddr, code in k.functions:
            h.update(f"{fname}:{vaddr}".encode())
            h.update(code)
        memo["key", opt] = cache_key({"kind": "amdgcn", "code": h.hexdigest(), "name": k.name, "arch": k.arch,
                                      "nv": nv_of(prog), "opt": opt})
    return str(memo["key", opt])



def predicted_reference_s(prog: ref.AmdProgram, launch: ref.AmdLaunch, batch_lanes: int) -> float:
    """A rough prediction of the reference executor's time for a dispatch (tiering.py's model: a fixed cost per
    instruction and batch plus one per lane; loops assumed to run LOOP_TRIPS times)."""
    loops = any(ins.fmt == "SOPP" and ins.name.startswith(("s_branch", "s_cbranch")) and ins.f["simm16"] & 0x8000
                for ins in prog.insts)
    threads = launch.block[0] * launch.block[1] * launch.block[2]
    n_wg = launch.grid[0] * launch.grid[1] * launch.grid[2]
    lanes = n_wg * -(-threads // ref.WAVE) * ref.WAVE
    return tiering.predict_s(len(prog.insts), loops, -(-lanes // max(ref.BATCH_FACTOR * batch_lanes, 1)), lanes)


def _warm(prog: ref.AmdProgram, launch: ref.AmdLaunch, batch_lanes: int) -> bool:
    """Whether the kernel runs natively this launch: compiled already, in the disk cache, or worth compiling now
    (the reference's predicted time on it, summed over its launches, reaches its predicted compile time, at least
    STRATA_NATIVE_AFTER_MS: tiering.threshold_s)."""
    from strata.hw.native.compiler import cache_has

    memo: dict[str, Any] = prog.__dict__.setdefault("_native_amd", {})
    if "ck" in memo:
        return True
    after_s = config.settings().native_after_ms / 1e3
    spent, predicted = memo.get("spent", 0.0), predicted_reference_s(prog, launch, batch_lanes)
    quick = config.settings().native_opt != "3"
    if tiering.due(spent, predicted, len(prog.insts), after_s, quick=quick) or \
            any(cache_has(_object_key(prog, opt)) for opt in tiering.levels(config.settings().native_opt)):
        return True
    memo["spent"] = spent + predicted
    return False


def _compile(prog: ref.AmdProgram, optimize: bool = False) -> CompiledAmd | str:
    """The kernel's code: from the disk cache at the best level there (at -O3 only when `optimize`), else
    built at -O0 (-O3 when `optimize` or under STRATA_NATIVE_OPT=3)."""
    if prog.ftz:
        return "float32 denormals flush (FLOAT_DENORM_MODE_32): not compiled"
    early = loads_observed_early(prog.insts)
    if early:
        return f"the load at offset {early[0]:#x} may be read before the s_waitcnt that retires it"
    from strata.hw.native.compiler import LoadedObject, cache_get, cache_put, compile_ir

    nv = nv_of(prog)
    k = prog.kernel
    t0 = time.perf_counter()
    obj: bytes | None = None
    groups: list[int] = []
    hit = None
    opt = 3
    for opt in (3,) if optimize else tiering.levels(config.settings().native_opt):
        hit = cache_get(_object_key(prog, opt))
        if hit is not None and hit[1] is None:
            return str(hit[0]["reason"])
        if hit is not None and "groups" in hit[0]:
            obj, groups = hit[1], hit[0]["groups"]
            break
    if obj is None:
        opt = 3 if optimize or config.settings().native_opt == "3" else 0
        key = _object_key(prog, opt)
        gen = cg.AmdCodegen(prog, nv)
        try:
            text = gen.build()
        except cg.Unsupported as e:
            cache_put(key, {"reason": f"not compiled: {e}"}, None)
            return f"not compiled: {e}"
        obj = compile_ir(text, optimize=opt == 3)
        groups = gen.count_groups()
        cache_put(key, {"kernel": k.name, "groups": groups}, obj)
    loaded = LoadedObject(obj)
    fn = _FN(loaded.address("amd_run"))
    trace.emit("L0", "native_compile", kernel=k.name, cached=hit is not None, engine="amdgpu", opt=opt,
               ms=round(1000 * (time.perf_counter() - t0), 1))
    return CompiledAmd(fn, loaded, nv, [cg.count_class(ins) for ins in prog.insts], np.asarray(groups, np.int64),
                       cg.local_vgprs(prog.insts, nv), opt)


def _ran_unoptimized(prog: ref.AmdProgram, ck: CompiledAmd, seconds: float,
                     predicted_reference_s: float = 0.0) -> None:
    """Count a dispatch on -O0 code (tiering.count_unoptimized) and queue the -O3 recompile when it is due."""
    if tiering.count_unoptimized(ck, len(prog.insts), seconds, predicted_reference_s):
        optimizer.submit(functools.partial(_optimize, prog, ck))


def _optimize(prog: ref.AmdProgram, quick: CompiledAmd) -> None:
    """(On the optimizer thread) the kernel at -O3, made the code later dispatches run."""
    ck = _compile(prog, True)
    if isinstance(ck, str):  # (not expected: the same IR compiled at -O0)
        raise RuntimeError(f"{prog.name}: the -O3 recompile failed: {ck}")
    with _COMPILE_LOCK:
        memo = prog.__dict__["_native_amd"]
        if memo.get("ck") is quick:
            memo["ck"] = ck
    trace.emit("L0", "native_optimized", kernel=prog.name, engine="amdgpu", quick_ms=round(quick.quick_s * 1e3, 3))


def launch_reason(prog: ref.AmdProgram, launch: ref.AmdLaunch, mem: DeviceMemory, budget: int) -> str | None:
    """Why this dispatch runs on the reference executor (None: it may run natively)."""
    if budget:
        return "an instruction budget (counted in the reference's scheduler steps)"
    if launch.private_bytes or prog.kernel.private_segment_fixed_size or \
            prog.kernel.metadata.get(".uses_dynamic_stack"):
        return "private (scratch) memory"
    if mem.peers:
        return "peer access enabled (native code checks the device's own allocations)"
    return None


def execute(prog: ref.AmdProgram, launch: ref.AmdLaunch, mem: DeviceMemory, *, budget: int, batch_lanes: int,
            timeout_s: float, control: Any, isa_counts: dict[str, int] | None) -> Counters | None:
    """Run the dispatch natively; None (after a `native_fallback` trace event) when it cannot."""
    reason = launch_reason(prog, launch, mem, budget)
    if reason is None and not _warm(prog, launch, batch_lanes):
        if tiering.first_deferral(prog, prog.name):  # (once per kernel: not a row under every launch)
            trace.emit("L0", "native_deferred", kernel=prog.name, engine="amdgpu",
                       reason="not compiled yet: the reference's time on it is below its compile cost")
        return None
    known = prog.__dict__.get("_native_amd", {}).get("ck")
    # (the dispatch's predicted reference time: for the choice of a first tier, or to count on -O0 code)
    optimized = isinstance(known, CompiledAmd) and known.opt == 3
    predicted = 0.0 if optimized else predicted_reference_s(prog, launch, batch_lanes)
    ck = reason if reason else compiled(prog, optimize_now=known is None and tiering.optimize_now_for(
        predicted, len(prog.insts)))
    if isinstance(ck, str):
        trace.emit("L0", "native_fallback", kernel=prog.name, reason=ck, engine="amdgpu")
        return None
    if ck.opt == 0 and not ck.optimizing:
        _ran_unoptimized(prog, ck, 0.0, predicted)
    bx, by, bz = launch.block
    threads = bx * by * bz
    waves_per_wg = -(-threads // ref.WAVE)
    gx, gy, gz = launch.grid
    n_wg = gx * gy * gz
    counters = Counters()
    counters.blocks_launched = n_wg
    counters.threads_launched = n_wg * threads
    # batches as big as the reference's VGPR budget allows (its batch size bounds the cost of its per-instruction
    # Python work; here a batch's cost is its setup, so fewer and larger batches are faster)
    per_wave = 4 * ref.WAVE * ck.nv
    # (a kernel whose waves keep their VGPRs on the stack touches a batch's register file only for waves that
    # stop before their end, so its batches may be larger: fewer batches, less per-batch work)
    budget_bytes = ref.VGPR_BATCH_BYTES * (LOCAL_V_BATCH_FACTOR if ck.local_v else 1)
    per_batch = max(1, ref.BATCH_FACTOR * batch_lanes // (waves_per_wg * ref.WAVE),
                    budget_bytes // (per_wave * waves_per_wg))
    workers = [_Worker(prog, len(prog.insts)) for _ in range(THREADS if n_wg > 1 else 1)]
    start = time.perf_counter()
    table = _allocation_table(mem)
    init = _initial_state(prog, launch, waves_per_wg)
    regs = _take_registers(min(n_wg, per_batch) * waves_per_wg, ck.nv)
    for first in range(0, n_wg, per_batch):
        count = min(n_wg, first + per_batch) - first
        # registers left unset: the native code sets each wave's as it starts it (amd_codegen.start_wave)
        n = count * waves_per_wg
        wg, wg_ids = _layout(prog, launch, first, count, waves_per_wg)
        lds = np.zeros((count, (max(launch.lds_bytes, 4) // 4 + 4) & ~3), np.uint32)  # as the reference's batch
        st = _State(wg_ids, waves_per_wg, regs[0][:n], regs[1][:n], np.zeros(n, np.uint8),
                    np.full(n, prog.index[0], np.int32), np.full(n, air.FRESH, np.uint8), lds, wg)
        _run_batch(prog, launch, mem, ck, st, workers, waves_per_wg, table, start, timeout_s, control, init)
    _give_registers(regs)
    for w in workers:
        counters.add(w.counters)
    counts = np.asarray(np.sum([w.counts for w in workers], axis=0, dtype=np.uint64))
    replayed = np.sum([w.replayed for w in workers], axis=0)
    _fold(prog, ck, counts, replayed, sum(w.replay_lanes for w in workers), counters, isa_counts)
    if isa_counts is not None:
        isa_counts["waves"] = n_wg * waves_per_wg
        isa_counts["wavefront_size"] = ref.WAVE
        isa_counts["lds_bank_conflicts"] = counters.shared_bank_conflicts
    launch.executor = "native"
    if ck.opt == 0:
        _ran_unoptimized(prog, ck, time.perf_counter() - start)
    return counters


class _Worker:
    """One host thread's share of a dispatch: its own counts, memo, replay tallies and Counters for the
    instructions the reference serves (the threads share nothing they write but the kernel's memory)."""

    def __init__(self, prog: ref.AmdProgram, npc: int) -> None:
        self.counts = np.zeros((air.ROWS, npc), np.uint64)
        self.replayed = np.zeros(npc, np.int64)
        self.replay_lanes = 0
        self.counters = Counters()
        self.ctx = np.zeros(air.CTX_SIZE, np.int64)
        self.memo = np.zeros(0, np.int32)  # per batch: bank conflicts by pattern (amd_codegen.bank_conflicts)


_POOL: dict[tuple[int, int], list[tuple[np.ndarray, np.ndarray]]] = {}
_POOL_LOCK = threading.Lock()
_POOL_KEYS = 2  # register-file shapes kept (a large dispatch's are ~80 MB)


def _take_registers(n: int, nv: int) -> tuple[np.ndarray, np.ndarray]:
    """Register files for n waves of nv VGPRs ((n, 128) SGPRs, (n, nv, 64) VGPRs), unset: reused from an earlier
    dispatch of the same shape when one is free (fresh pages cost the kernel's zeroing on first touch, as much as
    the kernel's run for a large dispatch)."""
    with _POOL_LOCK:
        free = _POOL.get((n, nv))
        if free:
            return free.pop()
    return np.empty((n, 128), np.uint32), np.empty((n, nv, ref.WAVE), np.uint32)


def _give_registers(regs: tuple[np.ndarray, np.ndarray]) -> None:
    key = (regs[0].shape[0], regs[1].shape[1])
    with _POOL_LOCK:
        _POOL.setdefault(key, []).append(regs)
        _POOL[key] = _POOL.pop(key)  # (most recently used last)
        while len(_POOL) > _POOL_KEYS:
            del _POOL[next(iter(_POOL))]


def _initial_state(prog: ref.AmdProgram, launch: ref.AmdLaunch, waves_per_wg: int) -> tuple[Any, ...]:
    """What a wave's start needs (amd_codegen.start_wave): the SGPR row of each wave of a workgroup (user SGPRs
    and EXEC; the workgroup ids added per wave), v0 of each, and the SGPRs that take the workgroup ids."""
    fixed, wg_slots = ref.initial_sgprs(prog, launch)
    rows = np.zeros((waves_per_wg, 128), np.uint32)
    for at, value in fixed:
        rows[:, at] = value
    v0, lo, hi = ref._wave_template(launch.block, waves_per_wg, 1)
    rows[:, ref.EXEC], rows[:, ref.EXEC + 1] = lo, hi
    wg_at = [-1, -1, -1]
    for at, dim in wg_slots:  # (stored after the row, so they win over a user SGPR as in the reference)
        wg_at[dim] = at
    return rows, np.ascontiguousarray(v0), wg_at


def _allocation_table(mem: DeviceMemory) -> tuple[np.ndarray, np.ndarray, int]:
    allocs = sorted(mem.allocations(), key=lambda a: a.address)
    return (np.array([a.address for a in allocs] or [0], dtype=np.uint64),
            np.array([a.end for a in allocs] or [0], dtype=np.uint64), len(allocs))


def _layout(prog: ref.AmdProgram, launch: ref.AmdLaunch, first: int, count: int, waves_per_wg: int
            ) -> tuple[np.ndarray, np.ndarray]:
    """A batch of `count` workgroups from `first`: each wave's workgroup in the batch ((W,) int32) and each
    workgroup's id in the grid ((G, 3) uint32), as the reference's _init_batch numbers them; kept per kernel and
    launch shape (the same from launch to launch)."""
    memo: dict[Any, tuple[np.ndarray, np.ndarray]] = prog.__dict__.setdefault("_native_amd", {}).setdefault(
        "layout", {})
    key = (launch.grid, first, count, waves_per_wg)
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= 64:
            memo.clear()
        gx, gy, _ = launch.grid
        lin = np.arange(first, first + count)
        ids = np.ascontiguousarray(np.stack([lin % gx, (lin // gx) % gy, lin // (gx * gy)], axis=1), np.uint32)
        hit = memo[key] = (np.repeat(np.arange(count, dtype=np.int32), waves_per_wg), ids)
    return hit


@dataclasses.dataclass
class _State:
    """A batch's wave state as the native code keeps it (views of it serve the reference's one-wave replays)."""

    wg_ids: np.ndarray  # (G, 3) uint32: each workgroup's id in the grid
    wpw: int  # waves per workgroup
    s: np.ndarray  # (W, 128) uint32
    v: np.ndarray  # (W, NV, 64) uint32
    scc: np.ndarray
    pc: np.ndarray
    state: np.ndarray
    lds: np.ndarray
    wg: np.ndarray  # (W,) int32: each wave's workgroup in the batch


def _run_batch(prog: ref.AmdProgram, launch: ref.AmdLaunch, mem: DeviceMemory, ck: CompiledAmd, st: _State,
               workers: list[_Worker], waves_per_wg: int, table: tuple[np.ndarray, np.ndarray, int], start: float,
               timeout_s: float, control: Any, init: tuple[Any, ...]) -> None:
    """Run a batch's waves, split by whole workgroups over the workers' threads (`init`: _initial_state)."""
    n = st.s.shape[0]
    rows, v0, wg_at = init
    wg_ids, wg = st.wg_ids, st.wg
    starts, ends, nalloc = table
    n_wg = n // waves_per_wg
    use = workers[:max(1, min(len(workers), n_wg))]
    cuts = [waves_per_wg * (n_wg * k // len(use)) for k in range(len(use) + 1)]
    for w in use:
        ctx = w.ctx
        w.memo = np.zeros(len(prog.insts) * air.MEMO_STRIDE, np.int32)
        for slot, arr in ((air.C_S, st.s), (air.C_V, st.v), (air.C_SCC, st.scc), (air.C_PC, st.pc),
                          (air.C_STATE, st.state), (air.C_WG, wg), (air.C_LDS, st.lds), (air.C_STARTS, starts),
                          (air.C_ENDS, ends), (air.C_COUNTS, w.counts), (air.C_MEMO, w.memo),
                          (air.C_INIT_S, rows), (air.C_INIT_V0, v0)):
            ctx[slot] = arr.ctypes.data
        ctx[air.C_WPW] = waves_per_wg
        ctx[air.C_WGIDS] = wg_ids.ctypes.data
        ctx[air.C_WGID_AT:air.C_WGID_AT + 3] = wg_at
        ctx[air.C_MEM] = mem.bytes.ctypes.data
        ctx[air.C_LDS_ROW] = st.lds.shape[1]
        ctx[air.C_LDS_BYTES] = launch.lds_bytes
        ctx[air.C_NALLOC] = nalloc
        ctx[air.C_FUEL] = FUEL
        ctx[air.C_NPC] = len(prog.insts)
    stop = threading.Event()
    if len(use) == 1:
        _drive(prog, launch, mem, ck, st, use[0], cuts[0], cuts[1], start, timeout_s, control, stop)
        return
    # the second range on a persistent helper thread of the PTX side's pool (a thread started per batch cost
    # 0.1-0.2 ms)
    done = hand_over(lambda _: _drive(prog, launch, mem, ck, st, use[1], cuts[1], cuts[2], start, timeout_s,
                                      control, stop), 0)
    try:
        _drive(prog, launch, mem, ck, st, use[0], cuts[0], cuts[1], start, timeout_s, control, stop)
    except BaseException:
        stop.set()  # the first range's error is the one reported: the second range stops where it is
        with contextlib.suppress(BaseException):  # (the first range's error wins)
            done.wait()
        raise
    done.wait()  # (raises the second range's error)


def _drive(prog: ref.AmdProgram, launch: ref.AmdLaunch, mem: DeviceMemory, ck: CompiledAmd, st: _State,
           worker: _Worker, lo: int, hi: int, start: float, timeout_s: float, control: Any,
           stop: threading.Event) -> None:
    """Call the native code on waves [lo, hi) until every one has ended: barriers released when none can run,
    instructions the reference serves run between calls, the watchdog and cancel flag polled."""
    ctx = worker.ctx
    ctx[air.C_HI] = hi
    address = ctx.ctypes.data
    cursor = lo  # the first wave of the next call: after a wave the reference served, the waves behind it run first
    while not stop.is_set():
        ctx[air.C_YIELDED] = 0
        ctx[air.C_LO] = cursor
        rc = ck.fn(address)
        if rc == air.R_DONE and cursor != lo:
            cursor = lo  # (the waves before the cursor may still run)
        elif rc == air.R_DONE:
            mine = st.state[lo:hi]
            waiting = mine == air.BARRIER
            if not waiting.any():
                break
            mine[waiting] = air.RUN  # every live wave is at a barrier: release them all
        elif rc == air.R_REFERENCE:
            w = int(ctx[air.C_STOPPED])
            _replay(prog, launch, mem, st, w, worker)
            cursor = w + 1 if w + 1 < hi else lo  # a wave spinning on memory served by the reference lets others run
        elif rc == air.R_YIELD:
            cursor = lo
        elif rc == air.R_BAD_PC:
            raise DeviceFault("cudaErrorIllegalInstruction", f"[{prog.name}] execution ran past the end of the code "
                              "without s_endpgm")
        if control is not None and getattr(control, "reason", None):
            raise LaunchCancelled(message=f"[{prog.name}] {control.reason}")
        if timeout_s and time.perf_counter() - start > timeout_s:
            raise LaunchTimeout(message=f"[{prog.name}] still running after {timeout_s:g} s (STRATA_KERNEL_TIMEOUT)")


def _replay(prog: ref.AmdProgram, launch: ref.AmdLaunch, mem: DeviceMemory, st: _State, w: int,
            worker: _Worker) -> None:
    """Run instruction pc[w] of wave w on the reference handler (views of the wave's registers and its
    workgroup's LDS as a one-wave batch), then let its queued register writes land at once (amd_plan.py
    proved nothing reads them before their wait)."""
    i = int(st.pc[w])
    ins = prog.insts[i]
    g = int(st.wg[w])
    one = ref._Batch(st.s[w:w + 1], st.v[w][:, None, :], st.scc[w:w + 1].view(bool), np.array([i], np.int64),
                     np.zeros(1, bool), np.zeros(1, bool), np.zeros(1, np.int64), st.wg_ids[g:g + 1].astype(np.int64),
                     np.array([w - g * st.wpw], np.int64), st.lds[g:g + 1], np.zeros((1, ref.WAVE, 1), np.uint32),
                     all_waves=np.arange(1))
    c = ref._Ctx(one, slice(None), 1, mem, prog, launch, worker.counters, ins=ins)
    prog.handlers[i](c, ins)
    for p in one.pending:
        p.apply(np.ones(p.waves.size, bool))
    worker.replayed[i] += 1
    if prog.categories[i] == "valu" and (c._exec is not None or c._full is not None):
        worker.replay_lanes += c.active()
    st.pc[w] = int(c.jump[0]) if c.jump is not None and c.jump[0] >= 0 else i + 1
    st.state[w] = air.DONE if one.done[0] else air.BARRIER if one.barrier[0] else air.RUN


def _fold(prog: ref.AmdProgram, ck: CompiledAmd, counts: np.ndarray, replayed: np.ndarray, replay_lanes: int,
          counters: Counters, isa_counts: dict[str, int] | None) -> None:
    """Turn the per-instruction counts into the reference's Counters and isa_counts."""
    # an instruction's waves: its block's count, plus (not a leader) its own entry: minus the stops before it
    own = counts[air.K_WAVES]
    waves = own[ck.groups] + np.where(ck.groups == np.arange(own.size), np.uint64(0), own)
    waves_all, lanes_all = waves.astype(np.int64), counts[air.K_LANES].astype(np.int64)
    valu_lanes = replay_lanes
    for i in np.flatnonzero(waves_all).tolist():
        ins, w, lanes = prog.insts[i], int(waves_all[i]), int(lanes_all[i])
        cls, in_valu, extra = ck.classes[i]
        if cls is not None:
            counters.thread_instructions[cls] += lanes
            counters.warp_instructions[cls] += 2 * w
            if cls == "fp32":
                counters.flops["fp32"] += lanes
        if extra:
            counters.flops[extra] += lanes
        if in_valu:
            valu_lanes += lanes
        name = ins.name
        if ins.fmt == "SOPP":
            if name.startswith(("s_branch", "s_cbranch")):
                counters.branches += w
            elif name == "s_barrier":
                counters.barriers += w
        elif ins.fmt == "SMEM":
            counters.global_load_bytes += 4 * SMEM_DWORDS[name] * w
        elif ins.fmt in ("GLOBAL", "FLAT"):
            size = cg._SUBDWORD.get(name.rsplit("_", 1)[-1], (4 * flat_width(name), False))[0]
            sec, ideal = int(counts[air.K_SECTORS, i]), int(counts[air.K_IDEAL, i])
            if "_load_" in name:
                counters.global_load_bytes += lanes * size
                counters.global_load_requests += w
                counters.global_load_sectors += sec
                counters.global_load_ideal_sectors += ideal
            else:
                counters.global_store_bytes += lanes * size
                counters.global_store_requests += w
                counters.global_store_sectors += sec
                counters.global_store_ideal_sectors += ideal
        elif ins.fmt == "DS" and name == "ds_bpermute_b32":
            counters.shared_requests += w  # (the LDS crossbar only: no banks, no bytes)
        elif ins.fmt == "DS":
            counters.shared_requests += w
            counters.shared_bank_conflicts += int(counts[air.K_BANK, i])
            width = int(name.rsplit("_b", 1)[1]) // 32
            dwords = width * (2 if name.startswith(("ds_read2", "ds_write2")) else 1)
            if name.startswith("ds_read"):
                counters.shared_load_bytes += lanes * 4 * dwords
            else:
                counters.shared_store_bytes += lanes * 4 * dwords
    if isa_counts is not None:
        per_pc = waves_all + replayed
        for cat, n in zip(prog.categories, per_pc.tolist(), strict=True):
            if n:
                isa_counts[cat] = isa_counts.get(cat, 0) + n
        isa_counts["valu_lanes"] = isa_counts.get("valu_lanes", 0) + valu_lanes
