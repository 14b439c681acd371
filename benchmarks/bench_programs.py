# Whole-program benchmarks (issue 14): a native CUDA program built with `strata nvcc` and run under
# `strata run`, side by side with the Python API in the same run:
#   - empty-kernel launch, pipelined: host wall per `<<<>>>` in the program (target <= 50 us), beside
#     strata.cuda's Kernel.launch host cost;
#   - cudaMemcpy of 256 MiB host-to-device from pinned (cudaMallocHost) and pageable (malloc) memory:
#     wall time (target <= 2x np.copyto of the same bytes, for pinned memory);
#   - start-up: a program whose fat binary holds 20 kernels reaches main()'s first line (target <= 1 s)
#     from the moment `strata run` is called.
#
#   .venv/bin/python benchmarks/bench_programs.py [--n 2000]
# Needs the programs extra (make programs). Prints a table and one JSON object.

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

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
  double t0 = now();
  for (int i = 0; i < n; ++i) empty<<<1, 1>>>();
  double t1 = now();
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  double t2 = now();
  printf("launch_host_us %.3f\nlaunch_throughput_per_s %.1f\n", (t1 - t0) / n * 1e6, n / (t2 - t0));
  size_t bytes = 256u << 20;
  char* pinned; cudaMallocHost((void**)&pinned, bytes); memset(pinned, 7, bytes);
  char* pageable = (char*)malloc(bytes); memset(pageable, 7, bytes);
  void* d; cudaMalloc(&d, bytes);
  cudaMemcpy(d, pinned, bytes, cudaMemcpyHostToDevice);
  double best_pinned = 1e9, best_pageable = 1e9;
  for (int r = 0; r < 3; ++r) {
    double a = now(); cudaMemcpy(d, pinned, bytes, cudaMemcpyHostToDevice); double b = now();
    cudaMemcpy(d, pageable, bytes, cudaMemcpyHostToDevice); double c = now();
    if (b - a < best_pinned) best_pinned = b - a;
    if (c - b < best_pageable) best_pageable = c - b;
  }
  printf("memcpy_pinned_ms %.2f\nmemcpy_pageable_ms %.2f\n", best_pinned * 1e3, best_pageable * 1e3);
  return 0;
}
"""


def python_launch_host_us(n: int) -> float:
    """strata.cuda's Kernel.launch host cost per pipelined empty launch (best of 3)."""
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
    return best / n * 1e6


def copyto_ms() -> float:
    a, b = np.full(256 << 20, 7, np.uint8), np.zeros(256 << 20, np.uint8)
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return best * 1e3


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="pipelined launches (default 2000)")
    args = ap.parse_args()
    from strata.cuda.nvcc import compile_program

    with tempfile.TemporaryDirectory() as d:
        src = Path(d) / "bench_program.cu"
        src.write_text(PROGRAM)
        exe = compile_program(src)
    run = [sys.executable, "-c", "import sys; from strata.cli import main; sys.exit(main(sys.argv[1:]))", "run",
           str(exe), str(args.n)]
    started = time.time()
    res = subprocess.run(run, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        print(res.stderr, file=sys.stderr)
        return 1
    got = {k: float(v) for k, v in (line.split() for line in res.stdout.splitlines())}
    figures = {
        "native_launch_host_us": got["launch_host_us"],
        "native_launch_throughput_per_s": got["launch_throughput_per_s"],
        "python_launch_host_us": python_launch_host_us(args.n),
        "memcpy_256MiB_pinned_ms": got["memcpy_pinned_ms"],
        "memcpy_256MiB_pageable_ms": got["memcpy_pageable_ms"],
        "np_copyto_256MiB_ms": copyto_ms(),
        "startup_to_main_s": got["main_entered"] - started,
    }
    checks = [
        ("empty launch, pipelined (native)", f"{figures['native_launch_host_us']:.2f} us host",
         f"python API {figures['python_launch_host_us']:.1f} us", figures["native_launch_host_us"] <= 50),
        ("cudaMemcpy 256 MiB H2D, pinned", f"{figures['memcpy_256MiB_pinned_ms']:.1f} ms",
         f"np.copyto {figures['np_copyto_256MiB_ms']:.1f} ms",
         figures["memcpy_256MiB_pinned_ms"] <= 2 * figures["np_copyto_256MiB_ms"]),
        ("cudaMemcpy 256 MiB H2D, pageable", f"{figures['memcpy_256MiB_pageable_ms']:.1f} ms",
         f"np.copyto {figures['np_copyto_256MiB_ms']:.1f} ms", None),
        ("start-up to main() (20 kernels)", f"{figures['startup_to_main_s']:.2f} s", "target 1 s",
         figures["startup_to_main_s"] <= 1.0),
    ]
    for name, ours, peer, ok in checks:
        verdict = "reported" if ok is None else ("PASS" if ok else "FAIL")
        print(f"{name:<36} {ours:>16}   {peer:<26} {verdict}")
    print(json.dumps(figures))
    return 0 if all(ok is not False for *_, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
