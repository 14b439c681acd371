# Whole-program benchmarks (issue 14): a native CUDA program built with `strata nvcc` and run under
# `strata run`, side by side with the Python API and NumPy in the same run:
#   - empty-kernel launch, pipelined: host wall per `<<<>>>` in the program (target <= 50 us), with
#     strata.cuda's Kernel.launch host cost beside it;
#   - start-up: a program whose fat binary holds 20 kernels reaches main()'s first line (target <= 1 s),
#     from the moment `strata run` is called (Python start, strata import, runtime library, exec);
#   - cudaMemcpy of 256 MiB host-to-device from pinned (cudaMallocHost) and pageable (malloc) memory: wall
#     time (target <= 2x np.copyto of the same bytes, for each).
# Rows report ratios against the targets (value / target for the absolute ones, strata / NumPy for the
# copies) with PASS/FAIL. Without nvcc or g++ every row is SKIP with the reason, never ERROR.
#
#   PYTHONPATH=src .venv/bin/python benchmarks/bench_programs.py [--n 2000]
# Needs the programs extra (make programs).

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from harness import SKIP, BenchResult, format_table, judge, log

LAUNCH_TARGET_S = 50e-6
STARTUP_TARGET_S = 1.0
COPY_TARGET = 2.0  # cudaMemcpy wall / np.copyto wall
COPY_BYTES = 256 << 20

PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
static double now() { timespec t; clock_gettime(CLOCK_REALTIME, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
#define K(i) __global__ void k##i(float* p) { p[threadIdx.x] += i; }
K(0) K(1) K(2) K(3) K(4) K(5) K(6) K(7) K(8) K(9) K(10) K(11) K(12) K(13) K(14) K(15) K(16) K(17) K(18)
__global__ void empty() {}
int main(int argc, char** argv) {
  double entered = now();
  printf("main_entered %.6f\n", entered);
  int n = atoi(argv[1]);
  empty<<<1, 1>>>(); cudaDeviceSynchronize();
  double best = 1e9, t_first = 0, t_sync = 0;
  for (int r = 0; r < 3; ++r) {
    double t0 = now();
    for (int i = 0; i < n; ++i) empty<<<1, 1>>>();
    double t1 = now();
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    double t2 = now();
    if (t1 - t0 < best) { best = t1 - t0; t_first = t0; t_sync = t2; }
  }
  printf("launch_host_us %.3f\nlaunch_throughput_per_s %.1f\n", best / n * 1e6, n / (t_sync - t_first));
  size_t bytes = 256u << 20;
  char* pinned; cudaMallocHost((void**)&pinned, bytes);
  char* pageable = (char*)malloc(bytes);
  for (size_t i = 0; i < bytes; ++i) pinned[i] = pageable[i] = (char)(i * 131 >> 7);
  void* d; if (cudaMalloc(&d, bytes) != cudaSuccess) return 1;
  cudaMemcpy(d, pinned, bytes, cudaMemcpyHostToDevice);
  double best_pinned = 1e9, best_pageable = 1e9;
  for (int r = 0; r < 3; ++r) {
    double a = now(); cudaMemcpy(d, pinned, bytes, cudaMemcpyHostToDevice); double b = now();
    cudaMemcpy(d, pageable, bytes, cudaMemcpyHostToDevice); double c = now();
    if (b - a < best_pinned) best_pinned = b - a;
    if (c - b < best_pageable) best_pageable = c - b;
  }
  char* back = (char*)malloc(1 << 20);  // the last copy's bytes, checked at the start and the end
  cudaMemcpy(back, d, 1 << 20, cudaMemcpyDeviceToHost);
  int ok = memcmp(back, pageable, 1 << 20) == 0;
  cudaMemcpy(back, (char*)d + bytes - (1 << 20), 1 << 20, cudaMemcpyDeviceToHost);
  ok = ok && memcmp(back, pageable + bytes - (1 << 20), 1 << 20) == 0;
  printf("memcpy_pinned_ms %.2f\nmemcpy_pageable_ms %.2f\ncopy_ok %d\n", best_pinned * 1e3, best_pageable * 1e3, ok);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
"""


def python_launch_host_s(n: int) -> float:
    """strata.cuda's Kernel.launch host cost per pipelined empty launch (best of 3), seconds."""
    import strata.cuda as cuda

    k = cuda.compile('extern "C" __global__ void empty() {}').get_function("empty")
    k(1, 1, ()).wait()
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(n):
            k(1, 1, ())
        best = min(best, time.perf_counter() - t)
        cuda.synchronize()
    return best / n


def copyto_s() -> float:
    """np.copyto of 256 MiB, one warm-up, best of 3, seconds."""
    a, b = np.full(COPY_BYTES, 7, np.uint8), np.zeros(COPY_BYTES, np.uint8)
    np.copyto(b, a)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return best


def _rows() -> list[BenchResult]:
    return [
        BenchResult(name="program_launch_pipelined (empty, native)", description="host wall per <<<>>> of an empty "
                    "kernel in a native program under strata run, no sync between launches",
                    target=f"<= {LAUNCH_TARGET_S * 1e6:g} us (ratio <= 1)", peer_name="Python API Kernel.launch",
                    ratio_def="strata/target"),
        BenchResult(name="program_startup_to_main (20 kernels)", description="strata run called -> main()'s first "
                    "line of a program whose fat binary holds 20 kernels", target=f"<= {STARTUP_TARGET_S:g} s "
                    "(ratio <= 1)", ratio_def="strata/target"),
        BenchResult(name="program_cudaMemcpy_256MiB_h2d (pinned)", description="cudaMemcpy H2D of 256 MiB from "
                    "cudaMallocHost memory", target=f"<= {COPY_TARGET:g}x np.copyto", peer_name="np.copyto",
                    ratio_def="strata/peer"),
        BenchResult(name="program_cudaMemcpy_256MiB_h2d (pageable)", description="cudaMemcpy H2D of 256 MiB from "
                    "malloc memory", target=f"<= {COPY_TARGET:g}x np.copyto", peer_name="np.copyto",
                    ratio_def="strata/peer"),
    ]


def import_s() -> float:
    """Wall time of `python -c "import strata.cli"` (what `strata run` pays before the program starts), best of 2."""
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import strata.cli"], check=True, timeout=300)
        best = min(best, time.perf_counter() - t)
    return best


def run_program(n: int) -> tuple[dict[str, float], float]:
    """Build and run the benchmark program; its printed figures and the wall time `strata run` was called at.

    Raises:
        RuntimeError: nvcc failed, or the program exited non-zero (its stderr in the message).
    """
    from strata.cuda.nvcc import compile_program

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "bench_program.cu"
        src.write_text(PROGRAM)
        exe = compile_program(src)
    run = [sys.executable, "-c", "import sys; from strata.cli import main; sys.exit(main(sys.argv[1:]))", "run",
           str(exe), str(n)]
    started = time.time()
    res = subprocess.run(run, capture_output=True, text=True, timeout=900)
    if res.returncode != 0:
        raise RuntimeError(f"the benchmark program exited {res.returncode}: {res.stderr.strip()[-2000:]}")
    got = {k: float(v) for k, v in (line.split() for line in res.stdout.splitlines())}
    return got, started


def bench_programs(n: int = 2000) -> list[BenchResult]:
    """The whole-program rows (never ERROR: SKIP without nvcc/g++, FAIL with the reason if the program fails)."""
    rows = _rows()
    launch, startup, pinned, pageable = rows
    try:
        from strata.cuda.nvcc import NvccNotFound, find_nvcc, host_compiler

        find_nvcc()
        host_compiler()
    except (ImportError, NvccNotFound, ValueError) as e:
        for r in rows:
            r.status = SKIP
            r.add_note(f"skipped: {e}")
        return rows
    try:
        log(f"[programs] building and running the native program ({n} pipelined launches x 3, 256 MiB copies)")
        got, started = run_program(n)
        log("[programs] the Python API's launch cost and np.copyto beside it")
        py_launch, ref_copy, imports = python_launch_host_s(n), copyto_s(), import_s()
    except Exception as e:  # a failing program or toolchain is a FAIL with its reason, not a harness ERROR
        for r in rows:
            r.status = "FAIL"
            r.add_note(f"{type(e).__name__}: {e}")
        return rows
    correct = bool(got.get("copy_ok"))
    for r in rows:
        r.correct = correct
        r.details["program"] = got
    launch.strata_value = got["launch_host_us"] * 1e-6
    launch.peer_value = py_launch
    launch.ratio = launch.strata_value / LAUNCH_TARGET_S
    launch.add_note(f"native {launch.strata_value * 1e6:.2f} us vs Python API {py_launch * 1e6:.1f} us per launch "
                    f"({py_launch / launch.strata_value:.1f}x); native throughput "
                    f"{got['launch_throughput_per_s']:.3g} launch/s to the sync")
    judge(launch, launch.ratio <= 1)
    startup.strata_value = got["main_entered"] - started
    startup.ratio = startup.strata_value / STARTUP_TARGET_S
    startup.details["python_import_strata_cli_s"] = imports
    startup.add_note(f"of which Python start + `import strata.cli` alone takes {imports:.2f} s (measured apart)")
    judge(startup, startup.ratio <= 1)
    for row, key in ((pinned, "memcpy_pinned_ms"), (pageable, "memcpy_pageable_ms")):
        row.strata_value = got[key] * 1e-3
        row.peer_value = ref_copy
        row.ratio = row.strata_value / ref_copy
        judge(row, row.ratio <= COPY_TARGET)
    if not correct:
        for r in rows:
            r.add_note("the copied bytes did not come back equal")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description="Whole CUDA programs under strata run: launch, start-up, copies.")
    ap.add_argument("--n", type=int, default=2000, help="pipelined launches per round (default 2000)")
    ap.add_argument("--json", action="store_true", help="also print the rows as one JSON object")
    args = ap.parse_args()
    rows = bench_programs(args.n)
    print(format_table(rows))
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], default=str))
    return 0 if all(r.status in ("PASS", SKIP) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

