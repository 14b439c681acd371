"""Timing model v1 of the virtual GPU: a launch's counters -> a modeled kernel time.

Source of truth for how strata turns what a kernel did (strata.hw.counters.Counters) into how
long it would take on a catalogue GPU. It is an analytical roofline with occupancy, wave and latency
terms; every result is labelled "modeled" and carries its formulas with numbers (docs/perf-model.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from strata.hw.catalog import GPUSpec, get_spec
from strata.hw.counters import Counters
from strata.hw.occupancy import Occupancy, max_registers_per_thread, occupancy

PTX_WARP = 32  # the counters count 32-lane PTX warps, whatever the device's warp size


@dataclass(frozen=True)
class ModeledTime:
    """The modeled time of one launch; never a measurement (`label` is always "modeled").

    `seconds` = kernel time + launch overhead. `bound` names the largest of the three kernel-time
    terms. Achieved rates divide by the kernel time (launch overhead excluded), as a profiler would.
    """

    seconds: float
    bound: str  # 'compute' | 'memory' | 'latency'
    compute_s: float  # throughput time of the instruction mix, tail effect included
    memory_s: float  # DRAM bytes over achievable HBM bandwidth
    latency_s: float  # waves x one warp's dependent chain
    launch_overhead_s: float
    occupancy: Occupancy
    waves: int
    achieved_flops: float  # FLOP/s
    achieved_bytes_per_s: float  # DRAM bytes/s
    explanation: list[str] = field(default_factory=list)  # filled with explain=True; see explain()
    device: str = ""
    kernel_s: float = 0.0
    dram_bytes: float = 0.0
    tail_efficiency: float = 1.0
    label: str = "modeled"
    inputs: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    def explain(self) -> list[str]:
        """The derivation of this time, line by line (rebuilt from the launch's inputs if needed)."""
        if self.explanation or not self.inputs:
            return self.explanation
        return model_launch(**self.inputs, explain=True).explanation  # type: ignore[arg-type]

    def __str__(self) -> str:
        return (f"modeled {_fmt_s(self.seconds)} on {self.device} ({self.bound}-bound: "
                f"compute {_fmt_s(self.compute_s)}, memory {_fmt_s(self.memory_s)}, "
                f"latency {_fmt_s(self.latency_s)}, launch {_fmt_s(self.launch_overhead_s)})")

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {k: v for k, v in self.__dict__.items() if k not in ("occupancy", "inputs")}
        d["explanation"] = self.explain()
        d["occupancy"] = {
            "blocks_per_sm": self.occupancy.blocks_per_sm,
            "active_warps": self.occupancy.active_warps,
            "occupancy": self.occupancy.occupancy,
            "limiting_factor": self.occupancy.limiting_factor,
        }
        return d


def model_launch(
    spec: GPUSpec | str,
    counters: Counters,
    *,
    grid_blocks: int,
    threads_per_block: int,
    regs_per_thread: int,
    smem_per_block: int,
    unique_global_bytes: int | None = None,
    tensor_precision: str = "tensor_fp16",
    explain: bool = False,
) -> ModeledTime:
    """Model one launch's time: max(compute, memory, latency) + launch overhead.

        occupancy   -> blocks_per_sm;  waves = ceil(blocks / (SMs * blocks_per_sm))
        tail_eff    = blocks / (SMs * ceil(blocks / SMs))
        compute     = max(issue, busiest pipe) / tail_eff,  pipe = warp_inst * 32 / (lanes/clk * SMs * clock)
        memory      = dram_bytes / (hbm_bandwidth * hbm_efficiency)   (L2-footprint rule for dram_bytes)
        latency     = waves * (alu_inst/warp * alu_latency + loads/warp * mem_latency) / clock

    Args:
        spec: the device (a `GPUSpec` or a catalogue name).
        counters: what the launch did.
        grid_blocks: blocks in the grid (product of the grid dims).
        threads_per_block: threads per block.
        regs_per_thread: registers per thread (ptxas count or `estimate_registers`); a count too
            large for one block is taken as an over-estimate and clamped (noted in the explanation).
        smem_per_block: static + dynamic shared memory per block, bytes.
        unique_global_bytes: total size of the distinct allocations the kernel touched, if known;
            without it every touched sector is assumed to come from DRAM (no reuse).
        tensor_precision: which `peak_flops` entry prices tensor FLOPs the counters do not attribute to a
            precision (`counters.tensor_flops` holds those that are, each priced at its own peak).
        explain: also build `explanation` now; otherwise `ModeledTime.explain()` rebuilds it on demand.
    Returns:
        A `ModeledTime`.
    Raises:
        ValueError: grid_blocks < 1.
        InvalidLaunchConfig: from `occupancy`, for too many threads or too much shared memory.

    Example:
        >>> from strata.hw.counters import Counters
        >>> c = Counters(global_load_bytes=2**30, global_load_sectors=2**25, threads_launched=2**20)
        >>> t = model_launch("h100", c, grid_blocks=4096, threads_per_block=256, regs_per_thread=16,
        ...                  smem_per_block=0)
        >>> t.bound, t.label
        ('memory', 'modeled')
    """
    if isinstance(spec, str):
        spec = get_spec(spec)
    if grid_blocks < 1:
        raise ValueError(f"[model_launch] grid_blocks must be >= 1, got {grid_blocks}")
    sms = spec.sm_count
    # The explanation text costs as much as the model; it is built only when asked for.
    lines: list[str] | None = [
        f"device {spec.name} ({spec.product}): {sms} SMs @ {spec.clock_mhz:.0f} MHz; "
        "every time below is modeled, not measured",
    ] if explain else None
    # The kernel already ran, so a register count too large for one block can only be an
    # over-estimate (the launch path validates ptxas counts): model with the most that fits.
    requested_regs = regs_per_thread
    fit = max_registers_per_thread(spec, threads_per_block)
    if regs_per_thread > fit:
        if lines is not None:
            lines.append(f"registers: {regs_per_thread}/thread cannot fit a {threads_per_block}-thread block; "
                         f"modeled with {fit}, the most that fits")
        regs_per_thread = fit
    occ = occupancy(spec, threads_per_block, regs_per_thread, smem_per_block)
    if lines is not None:
        lines.append(f"occupancy: {occ}; blocks/SM by " + ", ".join(f"{k}={v}" for k, v in occ.limits.items()))

    # Waves and tail. An SM's throughput is shared by its resident blocks, so the busiest SM runs
    # ceil(blocks / SMs) blocks' worth of work whatever the residency (see docs/perf-model.md).
    slots = sms * occ.blocks_per_sm
    waves = -(-grid_blocks // slots)
    per_sm = -(-grid_blocks // sms)
    tail_eff = grid_blocks / (sms * per_sm)
    if lines is not None:
        lines.append(
            f"waves = ceil({grid_blocks} blocks / ({sms} SMs x {occ.blocks_per_sm} blocks/SM)) = {waves}; "
            f"tail efficiency = {grid_blocks} / ({sms} x ceil({grid_blocks}/{sms})={per_sm}) = {tail_eff:.3f}"
        )

    compute_s = _compute_time(spec, counters, tail_eff, tensor_precision, lines)
    dram_bytes, memory_s = _memory_time(spec, counters, unique_global_bytes, lines)
    latency_s = _latency_time(spec, counters, grid_blocks, threads_per_block, waves, lines)

    terms = {"compute": compute_s, "memory": memory_s, "latency": latency_s}
    bound = max(terms, key=lambda k: terms[k]) if any(terms.values()) else "latency"
    kernel_s = terms[bound]
    seconds = kernel_s + spec.launch_overhead_s
    if lines is not None:
        lines.append(f"kernel = max(compute {_fmt_s(compute_s)}, memory {_fmt_s(memory_s)}, "
                     f"latency {_fmt_s(latency_s)}) = {_fmt_s(kernel_s)} ({bound}-bound)")
        lines.append(f"total = kernel {_fmt_s(kernel_s)} + launch overhead {_fmt_s(spec.launch_overhead_s)} "
                     f"= {_fmt_s(seconds)} (modeled)")

    flops = sum(counters.flops.values())
    return ModeledTime(
        seconds=seconds,
        bound=bound,
        compute_s=compute_s,
        memory_s=memory_s,
        latency_s=latency_s,
        launch_overhead_s=spec.launch_overhead_s,
        occupancy=occ,
        waves=waves,
        achieved_flops=flops / kernel_s if kernel_s else 0.0,
        achieved_bytes_per_s=dram_bytes / kernel_s if kernel_s else 0.0,
        explanation=lines or [],
        device=spec.name,
        kernel_s=kernel_s,
        dram_bytes=dram_bytes,
        tail_efficiency=tail_eff,
        inputs={} if explain else {
            "spec": spec, "counters": counters, "grid_blocks": grid_blocks, "threads_per_block": threads_per_block,
            "regs_per_thread": requested_regs, "smem_per_block": smem_per_block,
            "unique_global_bytes": unique_global_bytes, "tensor_precision": tensor_precision},
    )


# --- the three terms ---------------------------------------------------------------------------

def pipe_lanes_per_clk(spec: GPUSpec) -> dict[str, float]:
    """Lanes per clock per SM of each pipe; floating-point pipes are derived from `peak_flops`.

        fp32, fp64: peak / (2 FLOP per FMA * SMs * clock)
        fp16:       peak / (2 * 2 * SMs * clock)   (peak counts packed half2 FMAs: 4 FLOP per lane)

    Example:
        >>> from strata.hw.catalog import get_spec
        >>> round(pipe_lanes_per_clk(get_spec("h100"))["fp32"])
        128
        >>> round(pipe_lanes_per_clk(get_spec("a100"))["fp64"])
        32
    """
    denom = spec.sm_count * spec.clock_hz
    lanes = {
        "fp32": spec.peak_flops["fp32"] / (2 * denom),
        "fp64": spec.peak_flops["fp64"] / (2 * denom),
        "fp16": spec.peak_flops["fp16"] / (4 * denom),
    }
    lanes.update(spec.pipe_lanes_per_clk)
    return lanes


# Counter class -> pipe. Classes not listed (and 'tensor') only cost issue slots here; tensor work
# is priced by its FLOPs below.
_PIPE_OF = {
    "fp32": "fp32", "fp64": "fp64", "fp16": "fp16", "integer": "integer", "sfu": "sfu",
    "memory": "lsu", "atomic": "lsu", "control": "branch", "sync": "branch",
}


def _compute_time(
    spec: GPUSpec, c: Counters, tail_eff: float, tensor_precision: str, lines: list[str] | None
) -> float:
    sms, clock = spec.sm_count, spec.clock_hz
    lanes = pipe_lanes_per_clk(spec)
    pipe_inst: dict[str, float] = {}
    for cls, n in c.warp_instructions.items():
        if cls in _PIPE_OF and n:
            pipe_inst[_PIPE_OF[cls]] = pipe_inst.get(_PIPE_OF[cls], 0) + n
    if c.shared_bank_conflicts:  # each extra wavefront occupies the LSU again
        pipe_inst["lsu"] = pipe_inst.get("lsu", 0) + c.shared_bank_conflicts

    total = c.total_warp_instructions + c.shared_bank_conflicts
    issue_s = total * PTX_WARP / (spec.issue_lanes_per_clk * sms * clock)
    if lines is not None:
        lines.append(f"issue: {total:,} warp-inst x {PTX_WARP} / ({spec.issue_lanes_per_clk} lanes/clk "
                     f"x {sms} SMs x {clock:.3g} Hz) = {_fmt_s(issue_s)}")
    pipe_s: dict[str, float] = {}
    for pipe, count in sorted(pipe_inst.items()):
        if lanes.get(pipe, 0) <= 0:
            continue
        pipe_s[pipe] = count * PTX_WARP / (lanes[pipe] * sms * clock)
        if lines is not None:
            lines.append(f"pipe {pipe}: {count:,.0f} warp-inst x {PTX_WARP} / ({lanes[pipe]:.1f} lanes/clk "
                         f"x {sms} x {clock:.3g} Hz) = {_fmt_s(pipe_s[pipe])}")
    tensor_flops = c.flops.get("tensor", 0)
    if tensor_flops:
        # Each precision at its own peak; tensor work counted without one at `tensor_precision`.
        parts = dict(c.tensor_flops)
        rest = tensor_flops - sum(parts.values())
        if rest > 0:
            parts[tensor_precision] = parts.get(tensor_precision, 0) + rest
        pipe_s["tensor"] = 0.0
        for prec, amount in sorted(parts.items()):
            used = prec if spec.peak_flops.get(prec, 0.0) else "tensor_fp16"
            peak = spec.peak_flops[used]  # e.g. FP8 on A100 (no FP8 tensor cores): priced as FP16
            pipe_s["tensor"] += amount / peak
            if lines is not None:
                lines.append(f"pipe tensor: {amount:,} FLOP / {peak:.4g} FLOP/s ({used}) "
                             f"= {_fmt_s(amount / peak)}")
    busiest = max(pipe_s, key=lambda p: pipe_s[p]) if pipe_s else "none"
    ideal = max(issue_s, pipe_s.get(busiest, 0.0))
    compute_s = ideal / tail_eff
    if lines is not None:
        lines.append(f"compute = max(issue {_fmt_s(issue_s)}, busiest pipe {busiest} "
                     f"{_fmt_s(pipe_s.get(busiest, 0.0))}) / tail efficiency {tail_eff:.3f} "
                     f"= {_fmt_s(compute_s)}")
    return compute_s


def _memory_time(spec: GPUSpec, c: Counters, unique: int | None, lines: list[str] | None) -> tuple[float, float]:
    # Bytes moved in 32-byte sectors; fall back to requested bytes if the engine left sectors at 0.
    loads = max(32 * c.global_load_sectors, c.global_load_bytes)
    stores = max(32 * c.global_store_sectors, c.global_store_bytes)
    traffic = loads + stores + c.local_bytes
    footprint = unique if unique is not None else loads + stores
    hit = min(1.0, spec.llc_bytes / footprint) if footprint else 1.0
    compulsory = min(traffic, footprint)
    dram = compulsory + max(0, traffic - footprint) * (1.0 - hit)
    bw = spec.achievable_hbm_bandwidth
    memory_s = dram / bw
    source = "unique_global_bytes" if unique is not None else "no reuse assumed"
    if lines is not None:
        lines.append(f"traffic T = loads {loads:,} + stores {stores:,} + local {c.local_bytes:,} B "
                     f"= {traffic:,} B; footprint U = {footprint:,} B ({source})")
        lines.append(f"DRAM = min(T, U) + max(0, T - U) x (1 - min(1, LLC {spec.llc_bytes:,} / U)={hit:.3f}) "
                     f"= {dram:,.0f} B")
        lines.append(f"memory = {dram:,.0f} B / ({spec.hbm_bandwidth:.4g} B/s x {spec.hbm_efficiency}) "
                     f"= {_fmt_s(memory_s)}")
    return dram, memory_s


def _latency_time(
    spec: GPUSpec, c: Counters, blocks: int, threads: int, waves: int, lines: list[str] | None
) -> float:
    warps = blocks * -(-threads // PTX_WARP)
    inst = c.total_warp_instructions / warps
    mem = min(inst, (c.global_load_requests + c.warp_instructions.get("atomic", 0)) / warps)
    chain = (inst - mem) * spec.alu_latency_cycles + mem * spec.mem_latency_cycles
    latency_s = waves * chain / spec.clock_hz
    if lines is not None:
        lines.append(f"latency = {waves} waves x ({inst - mem:.1f} inst/warp x {spec.alu_latency_cycles:g} cyc + "
                     f"{mem:.1f} loads/warp x {spec.mem_latency_cycles:g} cyc) / {spec.clock_hz:.3g} Hz "
                     f"= {_fmt_s(latency_s)}")
    return latency_s


def _fmt_s(s: float) -> str:
    if s == 0:
        return "0 s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"

