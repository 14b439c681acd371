"""When the native executor compiles a kernel: once compiling pays for itself, as a tiered JIT decides.

Compiling a kernel costs 50 ms to several seconds (LLVM at O3), while the reference executor finishes a
small launch in a millisecond or two. So a kernel runs on the reference executor until the time the
reference has spent on it, plus what its next launch is predicted to cost there, reaches what compiling
it is predicted to cost (COMPILE_S_PER_INSTRUCTION per static instruction: 80 ms for SAXPY, 7 s for the
BLAS library's biggest GEMM kernel), and at least `STRATA_NATIVE_AFTER_MS` (default 150 ms); from then
on it is compiled and every later launch runs natively (the ski-rental rule: never more than about twice
the better of "always compile" and "never compile"). A kernel whose object is already in the disk cache
runs natively at once (a hit loads in about 1.5 ms), and `STRATA_NATIVE_AFTER_MS=0` compiles every
kernel at its first launch, which is what the native executor's own tests and a whole-suite native run
use.

Native code has two tiers, as in a JIT with a baseline compiler (STRATA_NATIVE_OPT=auto, the default):
a kernel's first native code is LLVM -O0, about a tenth of the -O3 compile's cost (QUICK_COMPILE_S_PER_
INSTRUCTION) and 2 to 7 times slower to run than -O3 code, though still several times faster than the
reference. Once a kernel's launches have spent as long on -O0 code as its -O3 compile is predicted to cost,
the kernel is recompiled at -O3 on a background thread, and launches after that run the -O3 code
(`optimize_due`). A launch predicted to run longer at -O0 than the -O3 compile takes is compiled at -O3 at
once (`optimize_now`). STRATA_NATIVE_OPT=0 keeps -O0 code, and 3 compiles at -O3 from the start.

Which executor runs a launch changes only its speed: the two give the same bits, counters and fault
reports (the differential tests check it), and `LaunchReport.executor` says which one ran.

    >>> from strata.hw.native.tiering import predicted_reference_s
    >>> callable(predicted_reference_s)
    True
"""

from __future__ import annotations

import threading
from typing import Protocol

from strata import config as cfg
from strata.hw.engine import LaunchConfig
from strata.hw.jit import JitFunction, Program

# The reference's cost model, fitted on this project's kernels (2-core EPYC): each instruction costs a
# fixed overhead per chunk (handler dispatch, ~5 us) plus its lanes at about 1e9 lane-instructions a second.
PER_CHUNK_INSTRUCTION_S = 5e-6
PER_LANE_INSTRUCTION_S = 1e-9
LOOP_TRIPS = 16  # how many times a loop body is assumed to run when predicting a launch with loops
# LLVM's O3 compile of a kernel, per static instruction, fitted on the framework's 31 kernels (16 to 1,878
# instructions: 3-5 ms each on a loaded 2-core machine) and the benchmarks' SAXPY (86 ms) and SGEMM (184 ms)
COMPILE_S_PER_INSTRUCTION = 0.004
# The -O0 tier: code generation in Python plus LLVM's fast path, fitted on the same kernels (35 of the
# framework's: 14 to 100 ms, the tiled GEMMs 0.5-0.6 s, on a quiet 2-core machine)
QUICK_COMPILE_S_PER_INSTRUCTION = 0.0004
# -O0 code's time as a fraction of the reference's (tiled SGEMM about 1/9, SAXPY about 1/2.5): the pessimistic end,
# so a big launch rather compiles at -O3 at once
QUICK_VS_REFERENCE = 0.4
OPTIMIZE_AFTER_S = 0.05  # at least this much -O0 time before a kernel is optimized (a small kernel compiles in ~50 ms)


def threshold_s(after_s: float, static_instructions: int, *, quick: bool = False) -> float:
    """The reference time a kernel must have cost before it compiles: its predicted compile time (of the -O0
    tier when `quick`), at least `after_s` (STRATA_NATIVE_AFTER_MS)."""
    per = QUICK_COMPILE_S_PER_INSTRUCTION if quick else COMPILE_S_PER_INSTRUCTION
    return max(after_s, per * static_instructions)


def predict_s(static: int, loops: bool, chunks: int, lanes: int) -> float:
    """The cost model: `static` instructions (LOOP_TRIPS times each when the code loops) over `chunks` chunks
    (or batches) and `lanes` lanes. Both executors' predictions (this module's, amd_executor's) use it."""
    if loops:
        static *= LOOP_TRIPS
    return static * (chunks * PER_CHUNK_INSTRUCTION_S + lanes * PER_LANE_INSTRUCTION_S)


def due(spent_s: float, predicted_s: float, static: int, after_s: float, *, quick: bool = False) -> bool:
    """The tiering rule: compile once the reference's time on a kernel, spent plus predicted for the launch at
    hand, reaches the kernel's predicted compile time (at least `after_s`); `after_s` <= 0: always."""
    return after_s <= 0 or spent_s + predicted_s >= threshold_s(after_s, static, quick=quick)


def optimize_due(quick_spent_s: float, static: int) -> bool:
    """Whether a kernel's -O0 code has run long enough to be recompiled at -O3: its time on it reaches the
    -O3 compile's predicted cost (at least OPTIMIZE_AFTER_S)."""
    return quick_spent_s >= max(OPTIMIZE_AFTER_S, COMPILE_S_PER_INSTRUCTION * static)


def optimize_now(jf: JitFunction, config: LaunchConfig, chunk_lanes: int) -> bool:
    """Whether a kernel's first native code should be -O3 rather than -O0: this launch alone is predicted to
    run longer at -O0 than the -O3 compile takes (a one-off big launch, such as a 1024^3 GEMM)."""
    return optimize_now_for(predicted_reference_s(jf, config, chunk_lanes), static_instructions(jf))


def optimize_now_for(predicted_reference_s: float, static: int) -> bool:
    """`optimize_now` from a launch's predicted reference time and the kernel's static instruction count (the
    AMD executor predicts its dispatches itself)."""
    return predicted_reference_s * QUICK_VS_REFERENCE >= COMPILE_S_PER_INSTRUCTION * static


def levels(mode: str) -> tuple[int, ...]:
    """The LLVM levels a kernel's code may start with under STRATA_NATIVE_OPT `mode`, the best first (the
    disk cache is asked in this order)."""
    return {"auto": (3, 0), "0": (0,), "3": (3,)}[mode]


def upgrade_due(opt: int) -> bool:
    """Whether code compiled at LLVM level `opt` must be recompiled at -O3 before its next launch: it is -O0
    and STRATA_NATIVE_OPT=3 was set since it compiled."""
    return opt == 0 and cfg.settings().native_opt == "3"


class Unoptimized(Protocol):
    """What `count_unoptimized` keeps on a kernel's -O0 code (executor.CompiledKernel, amd_executor.CompiledAmd)."""

    quick_s: float  # launches' time on the code
    optimizing: bool  # its -O3 recompile is queued or running


_TIER_LOCK = threading.Lock()


def count_unoptimized(code: Unoptimized, static: int, seconds: float, predicted_reference_s: float = 0.0) -> bool:
    """Count a launch's time on a kernel's -O0 code: `seconds` once it ran, or, as it starts, the launch's
    predicted reference time (times QUICK_VS_REFERENCE). True once, when the time spent and predicted reaches
    the -O3 compile's predicted cost under STRATA_NATIVE_OPT=auto: the caller then queues the recompile, so a
    big launch queues it as it starts and the -O3 code compiles on the other core while the -O0 code runs."""
    with _TIER_LOCK:
        code.quick_s += seconds
        if code.optimizing or cfg.settings().native_opt != "auto" or \
                not optimize_due(code.quick_s + predicted_reference_s * QUICK_VS_REFERENCE, static):
            return False
        code.optimizing = True
        return True


def static_instructions(jf: JitFunction) -> int:
    """A kernel's static instruction count (what compile-time predictions scale with)."""
    return _static(jf)[0]


def _static(jf: JitFunction) -> tuple[int, bool]:
    """(static instructions, whether a block branches backwards) of a kernel: asked by every launch that waits
    on the reference, so computed once."""
    hit: tuple[int, bool] | None = jf.__dict__.get("_tier_static")
    if hit is None:
        hit = jf.__dict__["_tier_static"] = (
            sum(b.n_instructions for b in jf.blocks),
            any(b.term == "bra" and 0 <= b.target <= k for k, b in enumerate(jf.blocks)))
    return hit


def predicted_reference_s(jf: JitFunction, config: LaunchConfig, chunk_lanes: int) -> float:
    """A rough prediction of the reference executor's time for this launch: the kernel's static instruction
    count (times LOOP_TRIPS when it has a backward branch) over its chunks and lanes."""
    static, loops = _static(jf)
    lanes = config.num_blocks * (-(-config.threads_per_block // 32) * 32)
    return predict_s(static, loops, -(-lanes // max(chunk_lanes, 1)), lanes)


def _spent(program: Program) -> dict[str, float]:
    memo: dict[str, float] = program.__dict__.setdefault("_native_spent_s", {})
    return memo


def worth_compiling(program: Program, kernel: str, config: LaunchConfig, *, after_s: float,
                    chunk_lanes: int, quick: bool = False) -> bool:
    """Whether this launch should compile the kernel (when it is not compiled or cached yet)."""
    if after_s <= 0:
        return True
    jf = program.functions[kernel]
    return due(_spent(program).get(kernel, 0.0), predicted_reference_s(jf, config, chunk_lanes), _static(jf)[0],
               after_s, quick=quick)


def first_deferral(owner: object, kernel: str) -> bool:
    """True the first time a launch of `kernel` (of a program or code object `owner`) waits on the reference:
    the trace says why once, not under every launch."""
    seen: set[str] = owner.__dict__.setdefault("_native_deferred", set())
    if kernel in seen:
        return False
    seen.add(kernel)
    return True


def spent_on_reference(program: Program, kernel: str, seconds: float) -> None:
    """Count a launch the reference executor ran towards compiling the kernel."""
    spent = _spent(program)
    spent[kernel] = spent.get(kernel, 0.0) + seconds

