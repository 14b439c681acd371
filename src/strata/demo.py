"""The main job, `strata demo`: real CUDA C++ compiled by NVRTC, run on the virtual GPU, checked
against NumPy, with what each launch did and where it went through the stack."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import strata.cuda as cuda
from strata import trace

SAXPY = r"""
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
"""

REDUCE = r"""
// Block sum: grid-stride accumulation, warp shuffles, shared memory across warps, one atomic per block.
extern "C" __global__ void reduce_sum(const float* x, float* out, int n) {
    __shared__ float warp_sums[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
        if (lane == 0) atomicAdd(out, v);
    }
}
"""

SGEMM = r"""
// C = A * B, row-major, square tiles staged through shared memory.
#define TILE 32
extern "C" __global__ void sgemm_tiled(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];  // +1 keeps column reads free of bank conflicts
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (col < N && t + ty < K) ? B[(t + ty) * N + col] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
"""


@dataclass
class DemoResult:
    name: str
    ok: bool
    check: str
    report: cuda.LaunchReport
    walk: list[str]


def _walk(rec: trace.Recording) -> list[str]:
    """The distinct layer steps the kernel launch took, top to bottom (the host's calls, then what
    the device's engine thread did for it)."""
    launch = next((e.correlation for e in rec.events if e.name == "cudaLaunchKernel"), None)
    events = [e for e in rec.events if launch is None or e.correlation == launch]
    seen: list[str] = []
    for e in sorted(events, key=lambda e: (e.start, e.depth)):
        step = f"{e.layer} {e.name}"
        if step not in seen:
            seen.append(step)
    return seen


def _run(name: str, fn: Callable[[], tuple[bool, str, cuda.LaunchReport]]) -> DemoResult:
    with trace.record() as rec:
        ok, check, report = fn()
    return DemoResult(name, ok, check, report, _walk(rec))


def run_saxpy(n: int = 1 << 20) -> DemoResult:
    def go() -> tuple[bool, str, cuda.LaunchReport]:
        rng = np.random.default_rng(1)
        x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
        a = np.float32(2.5)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        k = cuda.compile(SAXPY, name="saxpy.cu").get_function("saxpy")
        report = k(min(1024, -(-n // 256)), 256, (np.int32(n), a, dx, dy))
        got = dy.get()
        # NumPy: a*x is exact in float64, so this rounds like fma.rn.f32 except at rare double-rounding ties
        want = (np.float64(a) * x + y).astype(np.float32)
        ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
        exact = int(np.count_nonzero(ulps == 0))
        ok = bool(ulps.max() <= 1)
        return ok, f"{exact:,} of {n:,} elements bit-exact vs NumPy, max {int(ulps.max())} ulp", report

    return _run("saxpy", go)


def run_reduce(n: int = 1 << 20) -> DemoResult:
    def go() -> tuple[bool, str, cuda.LaunchReport]:
        x = np.random.default_rng(2).random(n, dtype=np.float32)
        dx, out = cuda.to_device(x), cuda.zeros(1, np.float32)
        k = cuda.compile(REDUCE, name="reduce.cu").get_function("reduce_sum")
        report = k(256, 256, (dx, out, np.int32(n)))
        got, want = float(out.get()[0]), float(x.astype(np.float64).sum())
        rel = abs(got - want) / abs(want)
        ok = rel < 1e-5
        return ok, f"sum {got:.6g} vs NumPy {want:.6g} (relative error {rel:.1e}, float32 order differs)", report

    return _run("reduce_sum", go)


def run_sgemm(n: int = 1024) -> DemoResult:
    def go() -> tuple[bool, str, cuda.LaunchReport]:
        rng = np.random.default_rng(3)
        A, B = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
        dA, dB, dC = cuda.to_device(A), cuda.to_device(B), cuda.zeros((n, n), np.float32)
        k = cuda.compile(SGEMM, name="sgemm.cu").get_function("sgemm_tiled")
        report = k((-(-n // 32), -(-n // 32)), (32, 32), (np.int32(n), np.int32(n), np.int32(n), dA, dB, dC))
        C = dC.get()
        ref = A.astype(np.float64) @ B.astype(np.float64)
        err = float(np.abs(C - ref).max() / np.abs(ref).max())
        ok = err < 1e-5
        return ok, f"{n}x{n}x{n}: max error {err:.1e} relative to max|C| vs float64 NumPy", report

    return _run("sgemm_tiled", go)


def main(gpu: str | None = None, sgemm_size: int = 1024) -> int:
    """Run the demo; returns a process exit code (0 when every check passed)."""
    if gpu:
        cuda.set_device(gpu)
    dev = cuda.current_device()
    print(f"strata demo on a virtual {dev.name} ({dev.multiProcessorCount} SMs, "
          f"{dev.totalGlobalMem / 2**30:.0f} GiB HBM). Times marked 'modeled' come from strata's timing "
          "model, not a GPU.\n")
    t0 = time.perf_counter()
    results = []
    for step in (run_saxpy, run_reduce, lambda: run_sgemm(sgemm_size)):
        r = step()
        results.append(r)
        _print(r)
    ok = all(r.ok for r in results)
    print(f"{'all checks passed' if ok else 'SOME CHECKS FAILED'} in {time.perf_counter() - t0:.1f} s wall")
    return 0 if ok else 1


def _print(r: DemoResult) -> None:
    rep, c, mt = r.report, r.report.counters, r.report.modeled
    print(f"== {r.name}<<<{rep.grid}, {rep.block}>>>  [{'PASS' if r.ok else 'FAIL'}] {r.check}")
    print(f"   counters: {c.total_thread_instructions:,} thread-instructions "
          f"(fp32 {c.thread_instructions['fp32']:,}, int {c.thread_instructions['integer']:,}, "
          f"mem {c.thread_instructions['memory']:,}), SIMT efficiency {c.simt_efficiency:.1%}")
    print(f"             global {c.global_load_bytes:,} B read / {c.global_store_bytes:,} B written, "
          f"coalescing {c.coalescing_efficiency:.0%}; shared {c.shared_load_bytes + c.shared_store_bytes:,} B, "
          f"{c.shared_bank_conflicts:,} bank conflicts; {c.barriers:,} barriers; "
          f"{c.atomic_ops:,} atomics; {c.divergent_branches:,} divergent branches")
    print(f"   modeled time on {rep.device}: {mt.seconds * 1e6:.2f} us ({mt.bound}-bound, occupancy "
          f"{mt.occupancy.occupancy:.0%}, {mt.waves} wave(s), {mt.achieved_flops / 1e12:.2f} TFLOP/s, "
          f"{mt.achieved_bytes_per_s / 1e9:.0f} GB/s)  [modeled]")
    print(f"   emulation wall time: {rep.wall_time_s * 1e3:.1f} ms "
          f"({c.total_thread_instructions / max(rep.wall_time_s, 1e-9):.3g} thread-instructions/s)")
    print("   path: " + " -> ".join(s for s in r.walk if not s.startswith(("L3 nvrtc", "L3 cudaMalloc",
                                                                        "L1 vram", "L3 cudaFree"))))
    print()
