# CDNA engine benchmarks (issue 15), side by side in one run:
#   - SAXPY on 4M elements and a tiled SGEMM 1024^3 (32x32 tiles through shared memory / LDS): the same HIP
#     source compiled by clang-19 for gfx942 and run by the wave64 CDNA engine on a virtual MI300X, against
#     NVRTC -> PTX on a virtual H200; target: emulation wall-time ratio mi300x / h200 <= 1.5;
#   - loading a code object of 20 kernels (ELF + metadata parse, decoding every kernel, placing the image in
#     device memory): <= 50 ms;
#   - a bf16 GEMM 1024^3 through the BLAS library's gemm_ex (rocblas_gemm_ex's role: its MFMA kernel,
#     v_mfma_f32_16x16x16_bf16, 64x64 tiles through LDS) on a virtual MI300X: <= 3 s wall; and the same GEMM
#     as a HIP kernel of its own (v_mfma_f32_32x32x8_bf16 through clang's builtin, each wavefront one 32x32
#     tile of C, B given transposed): <= 3 s wall.
# Timing: compile and one warm launch excluded, best of --repeat launch + synchronize (the SGEMM and bf16
# GEMM: best of --gemm-repeat). The two ratio rows run twice: on the reference executors (the NumPy PTX and
# CDNA engines, issue 15's comparison) and on the native executor, which compiles both at the warm-up.
# Every result is checked against NumPy. Without clang-19 every row is SKIP
# with the reason (`make amd` installs it), never ERROR.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_amd.py [--repeat 3] [--gemm-repeat 1]

from __future__ import annotations

import argparse
import shutil
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from harness import (
    SKIP,
    BenchResult,
    StrataUnavailable,
    best_of,
    executor,
    format_table,
    import_strata_cuda,
    judge,
    log,
    strata_step,
)

RATIO_TARGET = 1.5  # mi300x (CDNA engine) wall / h200 (PTX engine) wall
LOAD_TARGET_S = 0.050
BF16_TARGET_S = 3.0
SAXPY_N = 1 << 22
GEMM = 1024

SAXPY = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

# bench_sgemm.py's kernel (TILE 32: 1024-thread blocks), with the HIP header
SGEMM = r"""#include <hip/hip_runtime.h>
#define TILE 32
extern "C" __global__ void sgemm_tiled(int m, int n, int k, const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    a_tile[ty][tx] = (row < m && t + tx < k) ? a[row * k + t + tx] : 0.0f;
    b_tile[ty][tx] = (t + ty < k && col < n) ? b[(t + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}
"""

# Each wavefront computes one 32x32 tile of C with v_mfma_f32_32x32x8_bf16 (K = 8 per instruction). Lane l
# holds A[l % 32][k0 + (l / 32) * 4 + e] and B[k0 + (l / 32) * 4 + e][l % 32] for e = 0..3 (B is passed
# transposed, so both are 8-byte loads); D[i][j] is register i % 4 + 4 * (i / 8) of lane j + 32 * ((i / 4) % 2).
BF16_GEMM = r"""#include <hip/hip_runtime.h>
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef short short4_t __attribute__((ext_vector_type(4)));
extern "C" __global__ void __launch_bounds__(256) gemm_bf16_mfma(const short* A, const short* Bt, float* C, int M,
                                                                int N, int K) {
  int lane = threadIdx.x % 64, tile = blockIdx.x * 4 + threadIdx.x / 64;
  int tiles_n = N / 32;
  int row0 = (tile / tiles_n) * 32, col0 = (tile % tiles_n) * 32;
  if (row0 >= M) return;
  const short4_t* a = (const short4_t*)(A + (size_t)(row0 + lane % 32) * K + (lane / 32) * 4);
  const short4_t* b = (const short4_t*)(Bt + (size_t)(col0 + lane % 32) * K + (lane / 32) * 4);
  float16_t acc = {};
  for (int k0 = 0; k0 < K; k0 += 8) acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a[k0 / 4], b[k0 / 4], acc, 0, 0, 0);
  for (int r = 0; r < 16; ++r)
    C[(size_t)(row0 + r % 4 + 4 * (lane / 32) + 8 * (r / 4)) * N + col0 + lane % 32] = acc[r];
}
"""


def twenty_kernels() -> str:
    """A HIP source with 20 kernels of the usual kinds (elementwise, LDS reductions, a tiled SGEMM)."""
    parts = ["#include <hip/hip_runtime.h>"]
    for i in range(8):
        parts.append(f'extern "C" __global__ void axpb{i}(int n, float a, const float* x, float* y) {{\n'
                     f"  int j = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     f"  if (j < n) y[j] = a * x[j] + y[j] * {i + 1}.0f;\n}}")
    for i in range(8):
        parts.append(f'extern "C" __global__ void rsum{i}(const float* x, float* out, int n) {{\n'
                     f"  __shared__ float s[256];\n  int t = threadIdx.x, j = blockIdx.x * 256 + t;\n"
                     f"  s[t] = j < n ? x[j] * {i + 1}.0f : 0.0f;\n  __syncthreads();\n"
                     f"  for (int k = 128; k > 0; k >>= 1) {{ if (t < k) s[t] += s[t + k]; __syncthreads(); }}\n"
                     f"  if (t == 0) out[blockIdx.x] = s[0];\n}}")
    for i in range(4):
        parts.append(SGEMM.split("\n", 1)[1].replace("sgemm_tiled", f"sgemm{i}").replace("#define TILE 32", "")
                     .replace("TILE", str(8 * (i + 1))))
    return "\n".join(parts)


def _clang_missing() -> str | None:
    if shutil.which("clang-19") is None:
        return "clang-19 not installed (make amd, or apt-get install clang-19 lld-19 llvm-19)"
    return None


def _with_device(cuda: Any, model: str, fn: Callable[[], Any]) -> Any:
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model=model))
    try:
        return fn()
    finally:
        cuda.set_device(before)


def _cpu_best(fn: Callable[[], Any], repeats: int) -> float:
    """Best process CPU time of `repeats` runs (the engine thread included): less sensitive than wall time
    to other processes on a busy machine; reported beside the judged wall times."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def run_saxpy(model: str, n: int, repeats: int) -> dict[str, Any]:
    cuda = import_strata_cuda()
    import strata.hip as hip

    def go() -> dict[str, Any]:
        with strata_step(f"saxpy on {model}", "compile"):
            k = hip.compile(SAXPY).get_function("saxpy")
        rng = np.random.default_rng(0)
        x, y = rng.random(n, np.float32), rng.random(n, np.float32)
        dx, dy = hip.to_device(x), hip.to_device(y)
        args = (np.int32(n), np.float32(2.0), dx, dy)
        def once() -> None:
            k((n + 255) // 256, 256, args)
            hip.synchronize()

        with strata_step(f"saxpy on {model}", "launch"):
            best, times = best_of(once, repeats, warmups=1)
            cpu = _cpu_best(once, repeats)
        want = y.astype(np.float64)
        for _ in range(2 * repeats + 1):  # y <- 2x + y, once per launch
            want = (2.0 * x.astype(np.float64) + want).astype(np.float32).astype(np.float64)
        got = dy.get()
        return {"wall_s": best, "times_s": times, "cpu_s": cpu, "correct": bool(np.allclose(got, want, rtol=1e-5))}
    return _with_device(cuda, model, go)


def run_sgemm(model: str, size: int, repeats: int) -> dict[str, Any]:
    cuda = import_strata_cuda()
    import strata.hip as hip

    def go() -> dict[str, Any]:
        with strata_step(f"sgemm on {model}", "compile"):
            k = hip.compile(SGEMM).get_function("sgemm_tiled")
        rng = np.random.default_rng(1)
        a, b = rng.standard_normal((size, size), np.float32), rng.standard_normal((size, size), np.float32)
        da, db, dc = hip.to_device(a), hip.to_device(b), hip.zeros((size, size), np.float32)
        grid = (-(-size // 32), -(-size // 32))
        args = (np.int32(size), np.int32(size), np.int32(size), da, db, dc)
        def once() -> None:
            k(grid, (32, 32), args)
            hip.synchronize()

        with strata_step(f"sgemm on {model}", "launch"):
            k((1, 1), (32, 32), args)  # warm: module load and decode, one block
            hip.synchronize()
            t0 = time.process_time()
            best, times = best_of(once, repeats, warmups=0)
            cpu = (time.process_time() - t0) / repeats
        err = float(np.abs(dc.get() - a.astype(np.float64) @ b).max())
        return {"wall_s": best, "times_s": times, "cpu_s": cpu, "max_abs_err": err,
                "correct": err < 1e-3 * size ** 0.5}
    return _with_device(cuda, model, go)


def ratio_row(name: str, what: str, amd: Callable[[], dict[str, Any]], nv: Callable[[], dict[str, Any]]) -> BenchResult:
    r = BenchResult(name=name, description=what, target=f"<= {RATIO_TARGET:g}x", peer_name="h200 PTX engine",
                    ratio_def="strata/peer", strata_unit="s")
    if (why := _clang_missing()) is not None:
        r.status = SKIP
        r.add_note(f"skipped: {why}")
        return r
    try:
        a, p = amd(), nv()
    except StrataUnavailable as e:
        r.add_note(str(e))
        return r
    r.strata_value, r.peer_value, r.correct = a["wall_s"], p["wall_s"], a["correct"] and p["correct"]
    r.details.update(mi300x=a, h200=p)
    r.ratio = r.strata_value / r.peer_value
    r.add_note("strata = the mi300x CDNA engine (clang-19 gfx942 code object), peer = the h200 PTX engine "
               f"(NVRTC), same HIP source; process CPU time {a['cpu_s'] * 1e3:.1f} ms vs {p['cpu_s'] * 1e3:.1f} ms = "
               f"{a['cpu_s'] / p['cpu_s']:.2f}x")
    return judge(r, r.ratio <= RATIO_TARGET)


def bench_load(repeats: int) -> BenchResult:
    r = BenchResult(name="amd_code_object_load (20 kernels)", description="parse, decode and load a code object",
                    target=f"<= {LOAD_TARGET_S * 1e3:g} ms", ratio_def="strata/target")
    if (why := _clang_missing()) is not None:
        r.status = SKIP
        r.add_note(f"skipped: {why}")
        return r
    try:
        cuda = import_strata_cuda()
        import strata.hip as hip
        from strata.hip.amd import CodeObjectModule, compile_to_code_object

        with strata_step("code object load", "compile"):
            image = compile_to_code_object(twenty_kernels(), arch="gfx942")

        def load() -> int:
            mod = CodeObjectModule(image)
            lc = mod.loaded(cuda.current_device())
            n = len(lc.programs)
            lc.unload()
            return n

        def go() -> tuple[float, list[float], int]:
            with strata_step("code object load", "load"):
                best, times = best_of(load, max(repeats, 5), warmups=1)
                return best, times, load()
        best, times, kernels = _with_device(cuda, "mi300x", go)
        del hip
    except StrataUnavailable as e:
        r.add_note(str(e))
        return r
    r.strata_value, r.correct = best, kernels == 20
    r.ratio = best / LOAD_TARGET_S
    r.details.update(times_s=times, kernels=kernels, image_bytes=len(image))
    r.add_note(f"{len(image):,}-byte gfx942 code object, {kernels} kernels: CodeObjectModule(image) (ELF, metadata, "
               "decoding) + loading it on the device")
    return judge(r, best <= LOAD_TARGET_S)


def _bf16_row(name: str, description: str, go: Callable[[Any], dict[str, Any]], note: Callable[[dict[str, Any]], str]
              ) -> BenchResult:
    """A bf16 GEMM row on a virtual MI300X, target BF16_TARGET_S: `go(cuda)` runs it and returns wall_s, times_s,
    correct; SKIP without clang-19."""
    r = BenchResult(name=name, description=description, target=f"<= {BF16_TARGET_S:g} s", ratio_def="strata/target")
    if (why := _clang_missing()) is not None:
        r.status = SKIP
        r.add_note(f"skipped: {why}")
        return r
    try:
        cuda = import_strata_cuda()
        s = _with_device(cuda, "mi300x", lambda: go(cuda))
    except StrataUnavailable as e:
        r.add_note(str(e))
        return r
    r.strata_value, r.correct = s["wall_s"], s["correct"]
    r.ratio = r.strata_value / BF16_TARGET_S
    r.details["strata"] = s
    r.add_note(note(s))
    return judge(r, r.strata_value <= BF16_TARGET_S)


def bench_bf16_mfma(size: int, repeats: int) -> BenchResult:
    def go(cuda: Any) -> dict[str, Any]:
        import strata.hip as hip

        with strata_step("bf16 mfma gemm", "compile"):
            k = hip.compile(BF16_GEMM).get_function("gemm_bf16_mfma")
        rng = np.random.default_rng(2)
        a = rng.standard_normal((size, size), np.float32)
        b = rng.standard_normal((size, size), np.float32)
        a16 = (a.view(np.uint32) >> 16).astype(np.uint16)  # bf16 by truncation: exact in float32 below
        bt16 = (np.ascontiguousarray(b.T).view(np.uint32) >> 16).astype(np.uint16)
        da, db, dc = hip.to_device(a16), hip.to_device(bt16), hip.zeros((size, size), np.float32)
        args = (da, db, dc, np.int32(size), np.int32(size), np.int32(size))
        blocks = (size // 32) * (size // 32) // 4

        def once() -> None:
            k(blocks, 256, args)
            hip.synchronize()

        with strata_step("bf16 mfma gemm", "launch"):
            k(1, 256, args)  # warm: module load and decode, four tiles
            hip.synchronize()
            best, times = best_of(once, repeats, warmups=0)
        af = (a16.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        bf = (bt16.astype(np.uint32) << 16).view(np.float32).astype(np.float64).T
        err = float(np.abs(dc.get() - af @ bf).max())
        return {"wall_s": best, "times_s": times, "max_abs_err": err, "correct": err < 1e-3 * size ** 0.5}
    return _bf16_row(f"amd_bf16_mfma_gemm ({size}^3)", "bf16 GEMM on the matrix cores of a virtual MI300X", go,
                     lambda s: "HIP kernel on __builtin_amdgcn_mfma_f32_32x32x8bf16_1k, one 32x32 tile per wavefront, "
                               "4 per block")


def bench_bf16_gemm_ex(size: int, repeats: int) -> BenchResult:
    """The issue's row: bf16 GEMM through the BLAS library's gemm_ex (rocblas_gemm_ex's role), which runs its
    MFMA kernel on gfx942; C in float32, checked against float64 NumPy on the same bf16 inputs."""
    def go(cuda: Any) -> dict[str, Any]:
        import ml_dtypes

        from strata.libs import blas

        bf16 = np.dtype(ml_dtypes.bfloat16)
        rng = np.random.default_rng(3)
        a = rng.standard_normal((size, size)).astype(bf16)
        b = rng.standard_normal((size, size)).astype(bf16)
        h = blas.create_handle()
        da, db = cuda.to_device(a.ravel(order="F")), cuda.to_device(b.ravel(order="F"))
        dc = cuda.to_device(np.zeros(size * size, np.float32))

        def once() -> None:
            blas.gemm_ex(h, "N", "N", size, size, size, 1.0, da, bf16, size, db, bf16, size, 0.0, dc,
                         np.dtype(np.float32), size, "f32")
            cuda.synchronize()

        with strata_step("bf16 gemm_ex", "launch"):
            best, times = best_of(once, repeats, warmups=1)
        kernel = h.last_kernel
        blas.destroy_handle(h)
        want = a.astype(np.float64) @ b.astype(np.float64)
        err = float(np.abs(dc.get().reshape(size, size).T - want).max())
        return {"wall_s": best, "times_s": times, "kernel": kernel, "max_abs_err": err,
                "correct": kernel == "gemm_mfma" and err < 1e-3 * size ** 0.5}
    return _bf16_row(f"amd_bf16_gemm_ex ({size}^3)", "bf16 blas.gemm_ex (MFMA kernel) on a virtual MI300X", go,
                     lambda s: f"strata.libs.blas.gemm_ex, bf16 in, float32 out, 'f32' compute: ran {s['kernel']} "
                               "(v_mfma_f32_16x16x16_bf16, 64x64 tiles through LDS)")


def bench_amd(repeats: int = 3, gemm_repeats: int = 1, size: int = GEMM, n: int = SAXPY_N) -> list[BenchResult]:
    """Every CDNA-engine row (SKIP without clang-19, never ERROR for a missing toolchain)."""
    rows = []
    for ex in ("reference", "native"):  # the NumPy engines (issue 15's comparison), then both compiled
        log(f"[amd] SAXPY {n:,} on mi300x and h200, {ex} executor")
        with executor(ex):
            rows.append(ratio_row(f"amd_saxpy_mi300x_vs_h200 (n={n}, {ex})", f"SAXPY, CDNA engine vs PTX engine, {ex} "
                                  "executor", lambda: run_saxpy("mi300x", n, repeats), lambda: run_saxpy("h200", n,
                                                                                                        repeats)))
        log(f"[amd] SGEMM {size}^3 on mi300x and h200, {ex} executor")
        with executor(ex):
            rows.append(ratio_row(f"amd_sgemm_mi300x_vs_h200 ({size}^3, tile 32, {ex})",
                                  f"tiled SGEMM, CDNA engine vs PTX engine, {ex} executor",
                                  lambda: run_sgemm("mi300x", size, gemm_repeats),
                                  lambda: run_sgemm("h200", size, gemm_repeats)))
    log("[amd] loading a code object of 20 kernels")
    rows.append(bench_load(repeats))
    log(f"[amd] bf16 GEMM {size}^3 through blas.gemm_ex on mi300x")
    rows.append(bench_bf16_gemm_ex(size, gemm_repeats))
    log(f"[amd] bf16 MFMA GEMM {size}^3 on mi300x (a HIP kernel of its own)")
    rows.append(bench_bf16_mfma(size, gemm_repeats))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description="CDNA engine benchmarks (mi300x vs h200, load, MFMA).")
    parser.add_argument("--repeat", type=int, default=3, help="timed SAXPY launches / code object loads (best)")
    parser.add_argument("--gemm-repeat", type=int, default=1, help="timed SGEMM and bf16 GEMM launches (best)")
    parser.add_argument("--size", type=int, default=GEMM, help="GEMM size (a multiple of 32)")
    parser.add_argument("--n", type=int, default=SAXPY_N, help="SAXPY elements")
    args = parser.parse_args()
    t0 = time.perf_counter()
    results = bench_amd(args.repeat, args.gemm_repeat, args.size, args.n)
    print(format_table(results))
    log(f"[amd] done in {time.perf_counter() - t0:.1f} s")
    return 0 if all(r.status in ("PASS", SKIP) for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
