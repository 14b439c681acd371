# The native executor (issue 17) side by side with the reference executor and NumPy, in one process:
# SAXPY n = 4,194,304 (target: strata native / NumPy a*x + y <= 3x, as the issue states),
# tiled SGEMM 1024^3 (target <= 0.5 s wall), the bf16 WMMA GEMM 1024^3 of strata.libs.blas (blas.gemm_ex bf16
# in, f32 out: the gemm_wmma kernel; target <= 0.3 s wall, NumPy's float32 a @ b beside it), a synchronous
# empty launch (reported), the first-launch
# compile time (target <= 200 ms; the runtime library every kernel links is built once first, its own row)
# and a disk-cache hit (target < 5 ms). Each row also reports the reference executor's time from the same run.
# Against the Numba CUDA simulator, in the same run (its rows say why when numba-cuda is missing): SAXPY
# n = 65,536, launch + wait (target: >= 20,000x faster than the simulator), and a synchronous empty launch of
# one thread (target: faster than the simulator's).
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_native.py [--repeat 3] [--skip-sgemm-reference]
#       [--sim-repeat 3] [--quick] [--skip-numba-sim]

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np
import peers
from bench_launch import numba_sim_launch
from bench_saxpy import SAXPY_SRC
from harness import NO_TARGET, BenchResult, best_of, executor, format_table, import_strata_cuda, judge, log

SAXPY_N = 4_194_304
SAXPY_TARGET = 3.0
SGEMM_N = 1024
SGEMM_TARGET_S = 0.5
BF16_GEMM_N = 1024
BF16_GEMM_TARGET_S = 0.3
COMPILE_TARGET_S = 0.2
CACHE_HIT_TARGET_S = 0.005
SIM_SAXPY_N = 65_536
SIM_SAXPY_TARGET = 20_000.0  # strata native at least this many times faster than the Numba simulator
SIM_SYNC_LAUNCHES = 200  # synchronous empty launches per timed round (both sides)
SIM_SYNC_ROUNDS = 10  # timed rounds, best reported (both sides): short rounds, so each side may find a quiet moment
COMPILE_REPEATS = 3
TILE = 16

SRC = r"""
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
#define T 16
extern "C" __global__ void sgemm(int n, const float* A, const float* B, float* C) {
  __shared__ float As[T][T], Bs[T][T];
  int tx = threadIdx.x, ty = threadIdx.y, row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += T) {
    As[ty][tx] = A[row * n + k0 + tx]; Bs[ty][tx] = B[(k0 + ty) * n + col];
    __syncthreads();
    for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = acc;
}
extern "C" __global__ void empty() {}
"""


def bench_native(repeats: int = 3, sgemm_reference: bool = True, *, numba_sim: bool = True, sim_repeats: int = 3,
                 quick: bool = False) -> list[BenchResult]:
    cuda = import_strata_cuda()
    os.environ.setdefault("STRATA_KERNEL_TIMEOUT", "600")
    mod = cuda.compile(SRC)  # through the PTX cache as usual
    old = os.environ.get("STRATA_CACHE_DIR")
    try:
        with tempfile.TemporaryDirectory() as cache:  # a cold object cache: the compile rows measure LLVM
            os.environ["STRATA_CACHE_DIR"] = cache
            rows = [*_compile_rows(cuda, mod), _saxpy(cuda, mod, repeats),
                    _sgemm(cuda, mod, repeats, sgemm_reference), _bf16_gemm(repeats, sgemm_reference),
                    _empty(cuda, mod, repeats)]
            if numba_sim:
                rows += [_saxpy_vs_sim(cuda, repeats, sim_repeats, quick),
                         _sync_vs_sim(cuda, mod, repeats, sim_repeats)]
            return rows
    finally:
        if old is None:
            os.environ.pop("STRATA_CACHE_DIR", None)
        else:
            os.environ["STRATA_CACHE_DIR"] = old


def _compile_rows(cuda: Any, mod: Any) -> list[BenchResult]:
    from strata.hw.native import runtime

    # the runtime library (the helpers every kernel's code calls): built once per process, or read from the
    # object cache (here cold); measured on its own, so the kernel rows measure each kernel's own code
    runtime.forget()
    t0 = time.perf_counter()
    runtime.runtime_object()
    built = time.perf_counter() - t0
    r = BenchResult("native_runtime_build", "native executor: build its runtime library (once per process, "
                    "cold cache)", NO_TARGET, strata_value=built, correct=True)
    r.status = "PASS"
    r.add_note("later processes read it from the object cache (the kernel cache-hit rows include that read)")
    out = [r]
    with executor("native", opt="auto"):  # (what a first launch compiles by default, whatever the environment says)
        return out + [row for kernel in ("saxpy", "sgemm") for row in _compile_kernel_rows(mod, kernel)]


def _compile_kernel_rows(mod: Any, kernel: str) -> list[BenchResult]:
    """The kernel's cold first-launch compile (the -O0 tier; the -O3 recompile in the note) and a cache hit."""
    from strata.hw.jit import Program
    from strata.hw.native import executor as native_executor
    from strata.hw.ptx.parser import parse

    out = []
    cold = {False: float("inf"), True: float("inf")}  # first-tier (-O0) and -O3 compiles
    for _ in range(COMPILE_REPEATS):  # each cold: a fresh Program (PTX parsed and lowered) and no object cached
        for optimized in cold:
            for f in executor_cache_files():
                f.unlink()
            t0 = time.perf_counter()
            ck = native_executor.compiled(Program(parse(mod.ptx), {}), kernel, optimize_now=optimized)
            cold[optimized] = min(cold[optimized], time.perf_counter() - t0)
    program = Program(parse(mod.ptx), {})
    t0 = time.perf_counter()
    hit = native_executor.compiled(program, kernel)
    warm = time.perf_counter() - t0
    ok = isinstance(ck, native_executor.CompiledKernel) and isinstance(hit, native_executor.CompiledKernel) and \
        hit.cached
    r = BenchResult(f"native_compile_{kernel}", f"native executor: first-launch compile of {kernel} (LLVM -O0, "
                    "the first tier), cold", f"<= {COMPILE_TARGET_S * 1e3:.0f} ms", strata_value=cold[False],
                    correct=ok)
    r.details = {"o3_compile_s": cold[True]}
    r.add_note(f"best of {COMPILE_REPEATS} cold compiles: PTX parse and lowering, IR, LLVM, link; the -O3 "
               f"recompile a hot kernel gets in the background: {cold[True] * 1e3:.0f} ms")
    judge(r, cold[False] <= COMPILE_TARGET_S)
    out.append(r)
    r = BenchResult(f"native_cache_hit_{kernel}", f"native executor: load {kernel} from the object cache",
                    f"< {CACHE_HIT_TARGET_S * 1e3:.0f} ms", strata_value=warm, correct=ok)
    r.add_note("a fresh Program (its PTX lowering not timed): key, object read, MCJIT link; no IR generated")
    judge(r, warm < CACHE_HIT_TARGET_S)
    out.append(r)
    return out


def executor_cache_files() -> list[Any]:
    """The kernel objects (and their manifests) in the native object cache; not the runtime library's."""
    from strata.hw.native import compiler

    d = compiler.cache_dir()
    runtime_key = compiler.cache_key({"runtime": 1})
    return [f for f in d.glob("*") if f.is_file() and not f.name.startswith(runtime_key)] if d.is_dir() else []


def _saxpy(cuda: Any, mod: Any, repeats: int) -> BenchResult:
    n = SAXPY_N
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a = np.float32(2.0)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    fn = mod.get_function("saxpy")
    grid = (n + 255) // 256
    times = {}
    execs = {}
    for ex in ("native", "reference"):
        def run(ex: str = ex) -> None:
            r = fn(grid, 256, (np.int32(n), a, dx, dy))
            r.wait()
            execs[ex] = r.executor
        with executor(ex):
            times[ex], _ = best_of(run, repeats if ex == "native" else 1)
    dy.set(y)
    with executor("native"):
        fn(grid, 256, (np.int32(n), a, dx, dy)).wait()
    correct = bool(np.allclose(dy.get(), a * x + y, rtol=1e-6))
    t_np, _ = best_of(lambda: a * x + y, 5)
    r = BenchResult("native_saxpy_vs_numpy", f"SAXPY n={n:,}: native executor / NumPy a*x + y",
                    f"<= {SAXPY_TARGET:g}x (slowdown)", strata_value=times["native"], peer_name="numpy",
                    peer_value=t_np, ratio=times["native"] / t_np, ratio_def="strata/peer", correct=correct)
    r.details = {"reference_s": times["reference"], "native_over_reference": times["native"] / times["reference"],
                 "executors": execs}
    r.add_note(f"reference executor {times['reference'] * 1e3:.1f} ms "
               f"({times['reference'] / t_np:.1f}x NumPy); native ran as {execs['native']}")
    return judge(r, r.ratio is not None and r.ratio <= SAXPY_TARGET and execs["native"] == "native")


def _sgemm(cuda: Any, mod: Any, repeats: int, with_reference: bool) -> BenchResult:
    n = SGEMM_N
    rng = np.random.default_rng(1)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.to_device(np.zeros((n, n), np.float32))
    fn = mod.get_function("sgemm")
    execs = {}

    def run(ex: str) -> None:
        r = fn((n // TILE, n // TILE), (TILE, TILE), (np.int32(n), da, db, dc))
        r.wait()
        execs[ex] = r.executor

    with executor("native"):
        t_nat, _ = best_of(lambda: run("native"), max(1, repeats - 1))
    c_nat = dc.get()
    t_ref = None
    if with_reference:
        with executor("reference"):
            t_ref, _ = best_of(lambda: run("reference"), 1, warmups=0)
        same = dc.get().tobytes() == c_nat.tobytes()
    else:
        same = True
    t_np, _ = best_of(lambda: a @ b, 3)
    correct = bool(np.allclose(c_nat, a.astype(np.float64) @ b, rtol=1e-4)) and same
    r = BenchResult("native_sgemm_1024", f"tiled SGEMM {n}^3 (16x16 tiles, bar.sync): native executor wall",
                    f"<= {SGEMM_TARGET_S:g} s", strata_value=t_nat, peer_name="numpy a @ b", peer_value=t_np,
                    ratio=t_nat / t_np, ratio_def="strata/peer", correct=correct)
    r.details = {"reference_s": t_ref, "bit_identical_to_reference": same if with_reference else None,
                 "executors": execs}
    if t_ref is not None:
        r.add_note(f"reference executor {t_ref:.2f} s ({t_ref / t_nat:.1f}x slower than native); outputs "
                   f"{'bit-identical' if same else 'DIFFER'}")
    return judge(r, t_nat <= SGEMM_TARGET_S and execs["native"] == "native")


def _bf16_gemm(repeats: int, with_reference: bool) -> BenchResult:
    """blas.gemm_ex with bf16 A and B, f32 C and compute (bench_blas.run_gemm: a 64^3 warm-up call pays the
    compiles, then the best of the timed 1024^3 calls; the product checked against float64 NumPy with a
    rounding-error bound) on the native executor, beside NumPy's float32 a @ b of the same size."""
    from bench_blas import numpy_matmul, run_gemm

    import_strata_cuda()  # (puts src/ on the path)
    from strata import trace

    n = BF16_GEMM_N
    with executor("native"), trace.record() as rec:
        run = run_gemm("bf16", n, n, n, repeats=max(1, repeats - 1))
    left = [e.args.get("reason") for e in rec.events if e.name in ("native_fallback", "native_deferred")]
    t_ref = None
    if with_reference:
        with executor("reference"):
            t_ref = run_gemm("bf16", n, n, n, repeats=1)["wall_s"]
    peer = numpy_matmul(n)
    t = run["wall_s"]
    r = BenchResult("native_bf16_wmma_gemm_1024", f"bf16 WMMA GEMM {n}^3 (blas.gemm_ex, kernel {run['kernel']}): "
                    "native executor wall", f"<= {BF16_GEMM_TARGET_S:g} s", strata_value=t,
                    peer_name="numpy float32 a @ b", peer_value=peer["wall_s"], ratio=t / peer["wall_s"],
                    ratio_def="strata/peer", correct=run["correct"])
    r.details = {"strata": run, "peer": peer, "reference_s": t_ref, "left_to_reference": left}
    if t_ref is not None:
        r.add_note(f"reference executor {t_ref:.2f} s ({t_ref / t:.1f}x slower than native)")
    if left:
        r.add_note(f"launches the native executor left to the reference: {left}")
    return judge(r, t <= BF16_GEMM_TARGET_S and run["kernel"] == "gemm_wmma" and not left)


def _empty(cuda: Any, mod: Any, repeats: int) -> BenchResult:
    fn = mod.get_function("empty")
    per = {}
    for ex in ("native", "reference"):
        def run() -> None:
            for _ in range(200):
                fn(1, 32, ()).wait()
        with executor(ex):
            t, _ = best_of(run, repeats)
        per[ex] = t / 200
    r = BenchResult("native_empty_launch", "synchronous empty launch (launch + wait): native executor",
                    "none (reported)", strata_value=per["native"], peer_name="reference executor",
                    peer_value=per["reference"], ratio=per["native"] / per["reference"], ratio_def="strata/peer")
    r.status = "PASS"
    r.add_note("both executors share the launch path above L0; the native one adds its per-launch setup")
    return r


def _saxpy_vs_sim(cuda: Any, repeats: int, sim_repeats: int, quick: bool) -> BenchResult:
    """SAXPY n = 65,536 (the kernel of bench_saxpy.py and of the simulator's script: out = a * x + y), one
    launch + wait on the native executor against the same launch on the Numba CUDA simulator."""
    n = SIM_SAXPY_N
    r = BenchResult("native_saxpy_65k_vs_numba_sim", f"SAXPY n={n:,} launch + wait: native executor vs the Numba "
                    "CUDA simulator", f">= {SIM_SAXPY_TARGET:,.0f}x (speedup)", peer_name="numba sim",
                    ratio_def="peer/strata")
    rng = np.random.default_rng(0)
    a = np.float32(2.0)
    x, y = rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)
    fn = cuda.compile(SAXPY_SRC).get_function("saxpy")
    dx, dy, dout = cuda.to_device(x), cuda.to_device(y), cuda.zeros(n, np.float32)
    execs = []

    def run() -> None:
        execs.append(fn((n + 255) // 256, 256, (np.int32(n), a, dx, dy, dout)).wait().executor)

    # many rounds: one launch is a fraction of a millisecond, so the best of a few is at the mercy of the scheduler
    with executor("native"):  # (every kernel compiled at its first launch: the timed launches are native)
        t, times = best_of(run, max(20, 10 * repeats), warmups=3)
    ref = a.astype(np.float64) * x + y.astype(np.float64)
    r.strata_value = t
    r.correct = bool(np.allclose(dout.get(), ref, rtol=1e-6, atol=1e-6))
    r.details = {"strata_times_s": times, "executors": sorted(set(execs))}
    try:
        log(f"[native] numba simulator SAXPY n={n}{' (quick, scaled)' if quick else ''}, best of {sim_repeats}")
        peer = peers.numba_sim_saxpy(n, quick=quick, repeats=sim_repeats)
    except peers.PeerUnavailable as e:
        r.add_note(f"peer skipped: {e}")
        return r  # no peer figure: ERROR, the note says why
    r.peer_value = peer["wall_s"]
    r.details["peer"] = peer
    r.ratio = r.peer_value / t
    if peer["scaled"]:
        r.add_note(f"peer time scaled linearly from n={peer['measured_n']} (--quick)")
    r.add_note(f"native {t * 1e3:.3f} ms per launch + wait (best of {len(times)}); "
               f"ran as {', '.join(sorted(set(execs)))}")
    return judge(r, r.ratio >= SIM_SAXPY_TARGET and set(execs) == {"native"})


def _sync_vs_sim(cuda: Any, mod: Any, repeats: int, sim_repeats: int) -> BenchResult:
    """A synchronous empty launch (1 block of 1 thread, launch + wait) on the native executor against the
    Numba CUDA simulator's (`empty[1, 1](); cuda.synchronize()`, bench_launch.py's peer)."""
    r = BenchResult("native_sync_launch_vs_numba_sim", "synchronous empty launch <<<1, 1>>> (launch + wait): "
                    "native executor vs the Numba CUDA simulator", "faster than the simulator (> 1x)",
                    peer_name="numba sim", ratio_def="peer/strata")
    fn = mod.get_function("empty")
    rounds_n = max(SIM_SYNC_ROUNDS, repeats, sim_repeats)

    def rounds(execs: set[str]) -> list[float]:
        fn(1, 1, ()).wait()  # (compiles the kernel: STRATA_NATIVE_AFTER_MS=0)
        out = []
        for _ in range(rounds_n):
            t0 = time.perf_counter()
            for _ in range(SIM_SYNC_LAUNCHES):
                execs.add(fn(1, 1, ()).wait().executor)
            out.append((time.perf_counter() - t0) / SIM_SYNC_LAUNCHES)
        return out

    ref_execs: set[str] = set()
    with executor("reference"):
        reference = rounds(ref_execs)
    execs: set[str] = set()  # (measured right before the simulator: the closest load conditions)
    with executor("native"):
        per = rounds(execs)
    t = min(per)
    r.strata_value, r.correct = t, True  # (nothing to compute; the executor is checked below)
    r.details = {"strata_per_launch_s": per, "executors": sorted(execs), "reference_per_launch_s": reference}
    try:
        log(f"[native] numba simulator, {SIM_SYNC_LAUNCHES} synchronous empty launches, best of {rounds_n}")
        peer = numba_sim_launch(n=200, sync_n=SIM_SYNC_LAUNCHES, repeats=rounds_n)
    except peers.PeerUnavailable as e:
        r.add_note(f"peer skipped: {e}")
        return r
    r.peer_value = peer["sync_per_launch_s"]
    r.details["peer"] = peer
    r.ratio = r.peer_value / t
    r.add_note(f"native {t * 1e6:.0f} us, reference {min(reference) * 1e6:.0f} us, simulator "
               f"{r.peer_value * 1e6:.0f} us per launch + wait")
    return judge(r, t < r.peer_value and execs == {"native"})


def main() -> None:
    parser = argparse.ArgumentParser(description="native executor vs reference executor vs NumPy")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-sgemm-reference", action="store_true", help="skip the slow reference SGEMM")
    parser.add_argument("--sim-repeat", type=int, default=3, help="timed simulator runs (best reported)")
    parser.add_argument("--quick", action="store_true", help=f"simulator SAXPY on n={peers.QUICK_N}, scaled linearly")
    parser.add_argument("--skip-numba-sim", action="store_true", help="leave out the rows against the simulator")
    args = parser.parse_args()
    rows = bench_native(args.repeat, not args.skip_sgemm_reference, numba_sim=not args.skip_numba_sim,
                        sim_repeats=args.sim_repeat, quick=args.quick)
    print(format_table(rows))
    for row in rows:
        log(f"{row.name}: {row.note}")


if __name__ == "__main__":
    main()
