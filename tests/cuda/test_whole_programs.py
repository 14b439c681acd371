"""Whole CUDA programs (tests/programs/*.cu) built with `strata nvcc` and run under `strata run`: stdout,
stderr and the exit code as the program and CUDA would produce them, with NumPy or the device catalogue as
the oracle where the program prints numbers. Each program is compiled once (strata.cuda.nvcc's cache).

Needs NVIDIA's nvcc (the `programs` extra, which `make test` installs, or STRATA_NVCC) and g++; without
them these tests skip with the reason.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strata.cuda.nvcc import NvccNotFound, find_nvcc, host_compiler

PROGRAMS = Path(__file__).parent.parent / "programs"
RUN = [sys.executable, "-c", "import sys; from strata.cli import main; sys.exit(main(sys.argv[1:]))"]

try:
    find_nvcc()
    host_compiler()
    _MISSING = ""
except NvccNotFound as e:
    _MISSING = str(e)

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(bool(_MISSING), reason=_MISSING)]


def build(name: str, *extra: str) -> Path:
    from strata.cuda.nvcc import compile_program

    return compile_program(PROGRAMS / name, [f"-I{PROGRAMS}", *extra])


def run(exe: Path | str, *args: str, env: dict[str, str] | None = None, timeout: float = 120,
        ) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("STRATA_CUDART_FDS", None)
    return subprocess.run([*RUN, "run", str(exe), *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env)


def test_vector_add_output_and_exit_code() -> None:
    r = run(build("vector_add.cu"), "5000")
    assert r.returncode == 0, r.stderr
    n = 5000
    i = np.arange(n)
    a = (i % 97).astype(np.float32) * np.float32(0.5)
    b = ((i * 7) % 13).astype(np.float32) - np.float32(6)
    assert r.stdout.splitlines() == ["[Vector addition of 5000 elements]",
                                     "CUDA kernel launch with 20 blocks of 256 threads",
                                     f"sum {float((a + b).astype(np.float64).sum()):.1f}", "Test PASSED"]
    assert r.stderr == ""


def test_device_query_matches_the_catalogue() -> None:
    import strata.cuda as cuda

    p = cuda.get_device_properties(0)
    r = run(build("device_query.cu"), env={"STRATA_DEVICES": "h200,a100"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "devices 2\n" in out and re.search(r"^driver 13\d{3} runtime 13\d{3}$", out, re.M)
    assert f'Device 0: "{p.name}"' in out
    assert f"totalGlobalMem {p.totalGlobalMem}\n" in out
    assert f"multiProcessorCount {p.multiProcessorCount}\n" in out
    assert f"maxGridSize {p.maxGridSize[0]} {p.maxGridSize[1]} {p.maxGridSize[2]}" in out
    assert f"sharedMemPerBlockOptin {p.sharedMemPerBlockOptin}\n" in out
    assert f"attr sms {p.multiProcessorCount} major {p.major}" in out
    assert 'Device 1: "NVIDIA A100' in out and "capability 8.0" in out
    assert "bad device: cudaErrorInvalidDevice" in out
    assert out.rstrip().endswith("Result = PASS")


def test_matrix_multiply_with_shared_memory() -> None:
    r = run(build("matrix_mul.cu"))
    assert r.returncode == 0, r.stderr + r.stdout
    ha, wa, wb = 64, 96, 80
    a = (((np.arange(ha * wa) * 3) % 11) - 5).astype(np.float64).reshape(ha, wa)
    b = (((np.arange(wa * wb) * 5) % 7) * 0.25).reshape(wa, wb)
    c = a @ b
    assert r.stdout.splitlines() == [f"C[0][0] {c[0, 0]:.2f} C[63][79] {c[-1, -1]:.2f}", "Result = PASS"]


def test_reduction() -> None:
    r = run(build("reduction.cu"))
    assert r.returncode == 0, r.stderr
    h = (np.arange(1 << 16, dtype=np.uint64) * 2654435761 % (1 << 32)) % 1000
    assert r.stdout.splitlines() == [f"GPU sum {int(h.sum())}", "Test passed"]


def test_constant_memory_through_symbols() -> None:
    r = run(build("constant_memory.cu"))
    assert r.returncode == 0, r.stderr
    x = (np.arange(1000, dtype=np.float32) - 500) * np.float32(0.01)
    y = ((np.float32(0.25) * x + np.float32(0.5)) * x - np.float32(2)) * x + np.float32(1)
    assert r.stdout.splitlines() == ["coeffs size 16", "evaluated 1000 coeffs back 1.00 -2.00 0.50 0.25",
                                     f"y[0] {y[0]:.4f} y[999] {y[-1]:.4f}", "PASS"]


def test_device_printf_lands_in_order_with_host_output() -> None:
    r = run(build("device_printf.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "host: before",
        *[f"round 1: block 0 thread {t} says {t * 1.5:.1f}" for t in range(4)],
        "host: between",
        "round 2: block 0 thread 0 says 0.0", "round 2: block 1 thread 0 says 0.0",
        "host: after"]


def test_streams_and_events() -> None:
    r = run(build("streams_events.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["elapsed positive 1", "mismatches 0"]


def test_error_codes_as_cuda_gives_them() -> None:
    r = run(build("error_handling.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        'too many threads: 9 cudaErrorInvalidConfiguration "invalid configuration argument"',
        'after reading it: 0 cudaSuccess "no error"',
        'huge malloc: 2 cudaErrorMemoryAllocation "out of memory"',
        'good launch: 0 cudaSuccess "no error"',
        'launch: 0 cudaSuccess "no error"',
        'synchronize: 700 cudaErrorIllegalAddress "an illegal memory access was encountered"',
        'sticky malloc: 700 cudaErrorIllegalAddress "an illegal memory access was encountered"']
    # the memcheck report, once, naming the kernel and the source line (strata nvcc adds -lineinfo)
    assert r.stderr.count("Invalid global write of size 4") == 1
    assert "_Z5touchPii" in r.stderr and "error_handling.cu:5" in r.stderr


def test_copies_small_pageable_and_pinned() -> None:
    r = run(build("large_copies.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["small 1000 bytes: same", f"pageable {(70 << 20) + 12345} bytes: same",
                                     f"pinned {3 << 20} bytes: same", "freed pinned memory reused: 1"]


_DMA_SIZES = """
import sys
from strata import trace
from strata.cli import main
with trace.record() as rec:
    status = main(["run", *sys.argv[1:]])
print(status, sorted((e.name, e.args["bytes"]) for e in rec.events if e.name.startswith("dma_")))
"""


@pytest.mark.parametrize("staged", [False, True], ids=["mapped", "staged"])
def test_pageable_copies_move_once_through_mapped_device_memory_or_are_staged(staged: bool) -> None:
    """A large pageable copy is one copy-engine transfer (the program moves the bytes itself through its
    mapping of device memory); with STRATA_STAGE_PAGEABLE=1 it goes through the staging area in 32 MiB
    chunks. Same results either way; a copy past an allocation's end is cudaErrorInvalidValue."""
    exe = build("pageable_copies.cu")
    env = {**os.environ, "STRATA_STAGE_PAGEABLE": "1" if staged else "0"}
    r = subprocess.run([sys.executable, "-c", _DMA_SIZES, str(exe)], capture_output=True, text=True, timeout=120,
                       env=env)
    nbytes = (9 << 20) * 4 + 12
    *lines, last = r.stdout.splitlines()
    assert lines == [f"round trip {nbytes} bytes through a kernel: 0 mismatches",
                     "copy past the allocation's end: cudaErrorInvalidValue",
                     "last error then: cudaErrorInvalidValue", "context still usable: yes"], r.stderr
    status, sizes = last.split(" ", 1)
    copies = ast.literal_eval(sizes)  # [(event, bytes), ...] printed by _DMA_SIZES
    chunks = [(32 << 20), nbytes - (32 << 20)] if staged else [nbytes]
    assert status == "0"
    assert sorted(n for name, n in copies if name == "dma_HtoD") == sorted(chunks)
    assert sorted(n for name, n in copies if name == "dma_DtoH") == sorted([1 << 20, *chunks])


def test_capture_tables_refuse_what_they_cannot_hold() -> None:
    r = run(build("capture_limits.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["captures begun 128, refused 2",
                                     "events recorded in the capture 1024, then cudaErrorStreamCaptureUnsupported",
                                     "graph ran its kernel 2 times"]
    assert r.stderr.splitlines() == ["strata: libcudart captures at most 128 streams at once",
                                     "strata: libcudart captures at most 1024 recorded events at once"]


def test_function_attributes_opt_in_struct_argument_and_cuda_launch_kernel() -> None:
    r = run(build("func_attributes.cu"))
    assert r.returncode == 0, r.stderr
    t = np.arange(128)
    out = (t[::-1] * 0.5 + 3).astype(np.float32)  # out[t] = buf[(n-1-t)*128] = (n-1-t)*scale + tag
    assert r.stdout.splitlines() == [
        "maxThreadsPerBlock 1024 ptxVersion>0 1 binaryVersion 90",
        "without opting in: cudaErrorInvalidValue, peeked again: cudaErrorInvalidValue",
        f"out[0] {out[0]:.1f} out[127] {out[127]:.1f}"]


def test_host_threads_share_the_device() -> None:
    r = run(build("host_threads.cu"))
    assert (r.returncode, r.stdout) == (0, "threads 4 mismatches 0\n"), r.stderr


def test_managed_memory_same_pointer_on_host_and_device() -> None:
    r = run(build("managed_memory.cu"))
    assert r.returncode == 0, r.stderr
    i = np.arange(1 << 12)
    x = 1.0 + i % 10
    y1 = 3.0 * x + 2.0
    y2 = 2.0 * -1.0 + y1
    assert r.stdout.splitlines() == ["managedMemory 1", f"y[0] {y1[0]:.1f} y[9] {y1[9]:.1f}",
                                     f"y[5] {y2[5]:.1f} total error 0.0", f"copied y[9] {y2[9]:.1f}"]


def test_runtime_misc_occupancy_limits_host_functions_2d_pointers_cooperative() -> None:
    import strata.cuda as cuda

    r = run(build("runtime_misc.cu"))
    assert r.returncode == 0, r.stderr
    p = cuda.get_device_properties(0)
    n = 4 * 64
    assert r.stdout.splitlines() == [
        f"occupancy blocks per SM {min(p.maxThreadsPerMultiProcessor // 256, p.maxBlocksPerMultiProcessor)}",
        f"malloc heap {16 << 20}",
        "host function sees 1", "callback status cudaSuccess sees 2",
        "2-D copy back[2][4] 24 back[1][0] 10",
        "pointer types device 1 host 1 unregistered 1",
        f"cooperative grid sum {n * (n - 1) // 2} {n * (n - 1) // 2}"]


def test_trace_a_native_program(tmp_path: Path) -> None:
    r = subprocess.run([*RUN, "trace", "--out", str(tmp_path), str(build("vector_add.cu")), "300"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "Test PASSED" in r.stdout
    assert "L3 cudaMalloc(bytes=1200)" in r.stdout and "L3 __cudaRegisterFatBinary(units=1)" in r.stdout
    assert "L3 cudaLaunchKernel(kernel=_Z9vectorAddPKfS0_Pfi, grid=(2, 1, 1), block=(256, 1, 1)" in r.stdout
    assert (tmp_path / "trace.json").is_file() and (tmp_path / "report.html").is_file()


def test_graph_captured_from_a_stream_replays() -> None:
    r = run(build("graph_capture.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["capturing 1, 5 nodes"] + [
        f"round {k} out[3] {((3 + k) * 2.0 + 1.0) * 0.5:.1f} mismatches 0" for k in range(3)]


def test_managed_variables() -> None:
    r = run(build("managed_vars.cu"))
    assert (r.returncode, r.stdout) == (0, f"before 5\nafter {5 + 10 + 4} arr[3] {3 * 2.0:.1f}\n"), r.stderr


def test_driver_api_program(tmp_path: Path) -> None:
    ptx = tmp_path / "kernels.ptx"
    subprocess.run([*RUN, "nvcc", "-ptx", str(PROGRAMS / "driver_kernels.cu"), "-o", str(ptx)], check=True,
                   capture_output=True)
    r = run(build("driver_api.cu", "-lcuda"), str(ptx))
    assert r.returncode == 0, r.stderr
    import strata.cuda as cuda

    p = cuda.get_device_properties(0)
    x = np.arange(1000, dtype=np.float32)
    y = np.float32(2) * x + np.float32(10)
    assert r.stdout.splitlines() == [
        f"1 device(s); {p.name}, sm_{p.major}0, {p.multiProcessorCount} SMs, driver >= 13: 1",
        "missing kernel: 500 CUDA_ERROR_NOT_FOUND", "oversized block: CUDA_ERROR_INVALID_VALUE",
        f"bias size 4 y[0] {y[0]:.1f} y[999] {y[999]:.1f}"]


def test_texture_objects_over_an_array_and_linear_memory() -> None:
    r = run(build("textures.cu"))
    assert r.returncode == 0, r.stderr
    img = np.add.outer(np.arange(4) * 100.0, np.arange(8) * 10.0)
    padded = np.concatenate([img, img[:, -1:]], axis=1)  # clamp at the right edge
    lerp = padded[:, :-1] * 0.75 + padded[:, 1:] * 0.25  # x + 0.75 is a quarter of the way to texel x + 1
    assert r.stdout.splitlines() == [f"2-D linear: out[1][2] {lerp[1, 2]:.2f} out[3][7] {lerp[3, 7]:.2f}",
                                     f"1-D fetch: back[0] {15 * 15} back[15] 0",
                                     f"surface: neg[2][5] {-img[2, 5]:.1f} neg[0][0] {-img[0, 0]:.1f}"]


def test_each_host_thread_has_its_own_device() -> None:
    r = run(build("multi_device.cu"), env={"STRATA_DEVICES": "h200,a100"})
    assert (r.returncode, r.stdout) == (0, "devices 2 current 0 results 31 1031 totals match 1 1\n"), r.stderr


def test_pitched_memory_stream_ordered_allocation_and_peer_copies() -> None:
    r = run(build("pitch_peer.cu"), env={"STRATA_DEVICES": "2xh200"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["pitch 512 out[2][6] 26 out[1][3] 13", "stream-ordered byte 7",
                                     f"peer can 1 got[63] {63 * 3}"]


def test_histogram_with_shared_atomics() -> None:
    r = run(build("histogram.cu"))
    assert r.returncode == 0, r.stderr
    seed, data = 12345, np.empty(100000, np.uint8)
    for i in range(data.size):  # the program's LCG, in Python's exact integers
        seed = (seed * 1103515245 + 12345) % (1 << 32)
        data[i] = (seed >> 16) & 0xFF
    bins = np.bincount(data >> 2, minlength=64)
    assert r.stdout == f"total 100000 bins[0] {bins[0]} bins[31] {bins[31]} bins[63] {bins[63]}\n"


def test_multi_block_scan() -> None:
    r = run(build("scan.cu"))
    assert r.returncode == 0, r.stderr
    c = np.cumsum(np.arange(1000) % 7 - 2)
    assert r.stdout == f"out[127] {c[127]} out[128] {c[128]} out[999] {c[999]} mismatches 0\n"


def test_cooperative_groups_and_templates() -> None:
    r = run(build("cg_templates.cu"))
    assert r.returncode == 0, r.stderr
    i = np.arange(500)
    lines = []
    for name, scale in (("float", 0.5), ("double", 0.25), ("int", 1)):
        x, y = (i % 13) * scale, i % 5 + 1
        lines.append(f"{name} dot {float((x * y).sum()):.2f} max {float(x.max()):.2f}")
    assert r.stdout.splitlines() == lines


def test_curand_host_api() -> None:
    import strata.cuda as cuda
    from strata.libs import rand

    r = run(build("curand_host.cu", "-lcurand"))
    assert r.returncode == 0, r.stderr
    # the same draws through strata.libs.rand in this process: seed, offsets, kinds and parameters carried
    gen = rand.create_generator(seed=1234)
    u, nrm, raw = cuda.empty(10000, np.float32), cuda.empty(10000, np.float32), cuda.empty(8, np.uint32)
    rand.uniform(gen, u)
    rand.normal(gen, nrm, 5.0, 2.0)
    rand.generate(gen, raw)
    assert r.stdout.splitlines() == [
        "uniform in (0,1]: 1 mean~0.5: 1", "normal mean~5: 1 stddev~2: 1",
        f"u[0] {u.get()[0]:.6f} n[0] {nrm.get()[0]:.6f} r[0] {raw.get()[0]}",
        "odd normal count: 105"]  # CURAND_STATUS_LENGTH_NOT_MULTIPLE


def test_cublas_sgemm_level1_level2_pointer_mode_and_errors() -> None:
    r = run(build("cublas_sgemm.cu", "-lcublas"))
    assert r.returncode == 0, r.stderr
    m, n, k = 64, 48, 80  # the program's matrices, column-major
    a = ((np.arange(m * k) * 7) % 13 * 0.25 - 1.0).reshape(k, m).T
    b = ((np.arange(k * n) * 5) % 11 * 0.5 - 2.0).reshape(n, k).T
    c0 = (np.arange(m * n) % 9).astype(np.float64).reshape(n, m).T
    c = 1.5 * (a @ b) + 0.5 * c0
    i = np.arange(1000)
    x, y = (i % 17) * 0.125, (i % 5) - 2.0
    y = 2 * x + y
    x = x * 0.5
    assert r.stdout.splitlines() == [
        "cuBLAS version 1 major 13", "stream set 1",
        f"sgemm C[0] {c[0, 0]:.4f} C[{m * n - 1}] {c[-1, -1]:.4f} mismatches 0",
        "sgemm transposed mismatches 0",
        f"dot {x @ y:.3f} (host {x @ y:.3f}) nrm2 {np.linalg.norm(y):.3f} (host {np.linalg.norm(y):.3f}) "
        f"isamax {np.argmax(np.abs(y)) + 1} (host {np.argmax(np.abs(y)) + 1})",
        "sgemv mismatches 0 device-mode dot ok 1",
        "lda < m: 7 CUBLAS_STATUS_INVALID_VALUE",
        "sgeam: 15 CUBLAS_STATUS_NOT_SUPPORTED", "sgeam again: 15"]
    assert r.stderr.count("cublasSgeam is not implemented by strata's cuBLAS") == 1


def test_cublas_strided_batched_gemm_ex_and_math_mode() -> None:
    r = run(build("cublas_batched.cu", "-lcublas"))
    assert r.returncode == 0, r.stderr
    m, n, k, batch = 16, 12, 20, 6
    a = ((np.arange(m * k * batch) * 3) % 7 - 3.0).reshape(batch, k, m).transpose(0, 2, 1)
    b = (np.arange(k * n) % 5 * 0.5).reshape(n, k).T
    ad = (np.arange(m * k * batch) % 11 / 3.0).reshape(batch, k, m).transpose(0, 2, 1)
    bd = (np.arange(k * n * batch) % 7 - 2.5).reshape(batch, n, k).transpose(0, 2, 1)
    assert r.stdout.splitlines() == [
        f"sgemm strided batched {batch}: C[5][0] {2 * (a[5] @ b)[0, 0]:.1f} mismatches 0",
        f"dgemm strided batched: C[2][7] {(ad[2] @ bd[2])[7, 0]:.6f} mismatches 0",
        "half strided batched ex: mismatches 0", "gemm ex: mismatches 0", "tf32 mode 3: mismatches 0",
        "half compute: CUBLAS_STATUS_NOT_SUPPORTED", "negative batch: CUBLAS_STATUS_INVALID_VALUE",
        "pointer batches: even mismatches 0, scattered mismatches 0",
        "captured: 1 node(s), dot in capture CUBLAS_STATUS_NOT_SUPPORTED, after 3 launches mismatches 0"]


def test_trace_names_the_cublas_calls_the_program_made(tmp_path: Path) -> None:
    r = subprocess.run([*RUN, "trace", "--out", str(tmp_path), str(build("cublas_batched.cu", "-lcublas"))],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    for name in ("cublasSgemmStridedBatched", "cublasDgemmStridedBatched", "cublasGemmEx"):
        assert f"[CUDA: {name}" in r.stdout, name


def test_run_a_cu_file_links_the_libraries_its_includes_name(tmp_path: Path) -> None:
    src = tmp_path / "axpy.cu"
    src.write_text('#include <cstdio>\n#include <cublas_v2.h>\nint main() { cublasHandle_t h; cublasCreate(&h);\n'
                   '  float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40}, a = 0.5f; float *dx, *dy;\n'
                   '  cudaMalloc(&dx, 16); cudaMalloc(&dy, 16); cublasSetVector(4, 4, x, 1, dx, 1);\n'
                   '  cublasSetVector(4, 4, y, 1, dy, 1); cublasStatus_t s = cublasSaxpy(h, 4, &a, dx, 1, dy, 1);\n'
                   '  cublasGetVector(4, 4, dy, 1, y, 1); printf("%d %.1f %.1f\\n", (int)s, y[0], y[3]);\n'
                   '  return cublasDestroy(h); }\n')
    r = run(src)
    assert (r.returncode, r.stdout) == (0, f"0 {0.5 * 1 + 10:.1f} {0.5 * 4 + 40:.1f}\n"), r.stderr


def test_cublas_header_declares_the_real_status_codes_and_v2_names() -> None:
    from strata.cuda.bridge.build import INCLUDE, cublas_names

    api = (INCLUDE / "cublas_api.h").read_text()
    codes = dict(re.findall(r"(CUBLAS_STATUS_\w+) = (\d+)", api))
    assert codes == {"CUBLAS_STATUS_SUCCESS": "0", "CUBLAS_STATUS_NOT_INITIALIZED": "1",
                     "CUBLAS_STATUS_ALLOC_FAILED": "3", "CUBLAS_STATUS_INVALID_VALUE": "7",
                     "CUBLAS_STATUS_ARCH_MISMATCH": "8", "CUBLAS_STATUS_MAPPING_ERROR": "11",
                     "CUBLAS_STATUS_EXECUTION_FAILED": "13", "CUBLAS_STATUS_INTERNAL_ERROR": "14",
                     "CUBLAS_STATUS_NOT_SUPPORTED": "15", "CUBLAS_STATUS_LICENSE_ERROR": "16"}
    v2 = (INCLUDE / "cublas_v2.h").read_text()
    assert "#define cublasSgemm cublasSgemm_v2" in v2 and "#define cublasCreate cublasCreate_v2" in v2
    names = cublas_names()
    for macro, target in re.findall(r"#define (cublas\w+) (cublas\w+_v2)", v2):
        assert target in names, macro


def test_exit_without_freeing_keeps_the_exit_code() -> None:
    r = run(build("no_free.cu"))
    assert (r.returncode, r.stdout, r.stderr) == (3, "leaving\n", "")


def test_unsynchronized_fault_is_reported_at_exit() -> None:
    r = run(build("late_fault.cu"))
    assert r.returncode == 1
    assert r.stdout == "exiting without a sync\n"
    assert "failed after its last synchronization" in r.stderr and "Invalid global write" in r.stderr


def test_run_a_cu_file_directly(tmp_path: Path) -> None:
    src = tmp_path / "tiny.cu"
    src.write_text('#include <cstdio>\n__global__ void k(int* p) { p[threadIdx.x] = threadIdx.x * 3; }\n'
                   'int main(int argc, char** argv) { int* d; int h[8]; cudaMalloc(&d, sizeof h); k<<<1, 8>>>(d);\n'
                   '  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost); printf("%d %s\\n", h[7], argv[1]);\n'
                   '  return 0; }\n')
    r = run(src, "arg1")
    assert (r.returncode, r.stdout) == (0, "21 arg1\n"), r.stderr


def test_rdc_program_links_ptx_across_units(tmp_path: Path) -> None:
    (tmp_path / "a.cu").write_text(
        '#include <cstdio>\nextern __device__ float twice(float x);\nextern __device__ int counter;\n'
        '__global__ void k(float* y) { y[threadIdx.x] = twice((float)threadIdx.x); atomicAdd(&counter, 1); }\n'
        'int main() { float* d; cudaMalloc(&d, 32 * 4); k<<<1, 32>>>(d); float h[32];\n'
        '  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost); int c = 0;\n'
        '  cudaMemcpyFromSymbol(&c, counter, sizeof c);\n'
        '  printf("%.1f %.1f %d %s\\n", h[5], h[31], c, cudaGetErrorName(cudaGetLastError())); return 0; }\n')
    (tmp_path / "b.cu").write_text('__device__ int counter;\n__device__ float twice(float x) { return 2.0f * x; }\n')
    exe = tmp_path / "ab"
    subprocess.run([*RUN, "nvcc", "-rdc=true", str(tmp_path / "a.cu"), str(tmp_path / "b.cu"), "-o", str(exe)],
                   check=True, capture_output=True)
    r = run(exe)
    assert (r.returncode, r.stdout) == (0, "10.0 62.0 32 cudaSuccess\n"), r.stderr


def test_sass_only_program_says_to_rebuild(tmp_path: Path) -> None:
    from strata.cuda.bridge.build import library_dir

    exe = tmp_path / "sass"
    src = tmp_path / "s.cu"
    src.write_text('#include <cstdio>\n__global__ void k() {}\nint main() { k<<<1, 1>>>();\n'
                   '  printf("%s\\n", cudaGetErrorName(cudaGetLastError())); return 0; }\n')
    subprocess.run([str(find_nvcc()), "-ccbin", host_compiler(), "-gencode", "arch=compute_80,code=sm_80",
                    "-cudart", "shared", f"-L{library_dir()}", str(src), "-o", str(exe)], check=True,
                   capture_output=True)
    r = run(exe)
    assert r.returncode == 0
    assert "carries no PTX, only SASS for sm_80" in r.stderr and "strata nvcc" in r.stderr
    assert r.stdout == "cudaErrorNoKernelImageForDevice\n"


def test_static_cudart_program_is_refused_with_the_reason(tmp_path: Path) -> None:
    src = tmp_path / "static.cu"
    src.write_text('__global__ void k() {}\nint main() { k<<<1, 1>>>(); return cudaDeviceSynchronize(); }\n')
    exe = tmp_path / "static"
    subprocess.run([str(find_nvcc()), "-ccbin", host_compiler(), "-gencode", "arch=compute_90,code=compute_90",
                    str(src), "-o", str(exe)], check=True, capture_output=True)
    r = run(exe)
    assert r.returncode == 2
    assert "static CUDA runtime" in r.stderr and "strata nvcc" in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_program_killed_by_a_signal(sig: int) -> None:
    r = run(build("killed.cu"), str(int(sig)))
    assert (r.returncode, r.stdout) == (128 + sig, "before\n"), r.stderr


def test_program_that_forks() -> None:
    r = run(build("forks.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["child cudaErrorInitializationError", "parent 42 child exit 0"]
    assert r.stderr.count("forked child") == 1


def test_three_d_pitched_copies() -> None:
    r = run(build("memcpy3d.cu"))
    assert r.returncode == 0, r.stderr
    nx, ny, nz = 37, 9, 5
    h = (np.arange(nx * ny * nz) % 101).astype(np.float32).reshape(nz, ny, nx)
    back = h * 2 + np.arange(nz, dtype=np.float32)[:, None, None]
    assert r.stdout.splitlines() == [
        f"pitch >= row 1, aligned 1, xsize {nx * 4} ysize {ny}",
        f"volume mismatches 0 back[last] {back[-1, -1, -1]:.1f}",
        f"box[1][2][3] {back[2, 4, 8]:.1f} mismatches 0",
        f"memset slab 0.0 kept {back[2, 0, 0]:.1f} copy {back[1, 0, 4]:.1f}",
        "2-D copy rows ok 1 padding kept 1", "to a bogus array: cudaErrorInvalidResourceHandle"]


def test_volume_and_layered_textures_over_3d_arrays() -> None:
    r = run(build("textures3d.cu"))
    assert r.returncode == 0, r.stderr
    z, y, x = np.meshgrid(np.arange(4), np.arange(6), np.arange(8), indexing="ij")
    vol = (z * 100 + y * 10 + x).astype(np.float32)
    back = np.zeros((3, 4, 5), np.float32)
    back[1:3, 1:3, 1:4] = vol[2:4, 1:3, 4:7]
    layers = (np.arange(3)[:, None] * 1000 + np.arange(16)[None, :]).astype(np.float32)
    assert r.stdout.splitlines() == [
        "array 8 x 6 x 4 flags 0",
        f"tex3D mismatches 0 out[3][5][7] {2 * vol[3, 5, 7]:.1f} midpoint {(vol[0, 0, 0] + vol[0, 0, 1]) / 2:.2f}",
        f"box back[1][1][1] {back[1, 1, 1]:.1f} back[2][2][3] {back[2, 2, 3]:.1f} back[0][0][0] {back[0, 0, 0]:.1f}",
        f"layered 3 layers flags 1 mismatches 0 last {layers[-1, -1]:.1f}",  # cudaArrayLayered is 1
        "freed array info: cudaErrorInvalidResourceHandle"]


def test_graph_captured_from_two_streams_with_fork_and_join() -> None:
    r = run(build("graph_two_streams.cu"))
    assert r.returncode == 0, r.stderr
    lines = ["capture info: active 1 same capture 1 graph 1", "s2 capturing 1, after end 0, 7 nodes"]
    for k in range(3):
        x = ((np.arange(3000) + k) % 50).astype(np.float32) * np.float32(0.5)
        lines.append(f"round {k} out[7] {(6 * x[7]) * (x[7] + 1):.2f} mismatches 0 host function runs {k + 1}")
    assert r.stdout.splitlines() == lines + [
        "unjoined: cudaErrorStreamCaptureUnjoined graph null 1",
        "capture over 1 last error cudaErrorStreamCaptureUnjoined",
        "end from s2: cudaErrorStreamCaptureUnmatched"]


def test_copies_overlap_kernels_on_separate_streams() -> None:
    r = run(build("overlap_streams.cu"))
    assert r.returncode == 0, r.stderr
    v = np.float32(123 % 100)
    for _ in range(8):  # fmaf in float32: the float64 product and sum are exact here, rounded once
        v = np.float32(np.float64(v) * np.float64(np.float32(0.999)) + 0.5)
    lines = r.stdout.splitlines()
    assert lines[0] == f"same result 1 mismatches 0 h[123] {v:.4f}"
    # on the modeled timeline, chunk i's copies overlap chunk j's kernel, so four streams finish sooner
    m = re.fullmatch(r"streams faster 1 \(serial ([\d.]+) ms, 4 streams ([\d.]+) ms\)", lines[1])
    assert m and float(m.group(2)) < float(m.group(1)), lines[1]


def test_graph_built_node_by_node() -> None:
    r = run(build("graph_nodes.cu"))
    assert r.returncode == 0, r.stderr
    x = (np.arange(1000) * 3 + 1) % 17  # the second round's input
    assert r.stdout.splitlines() == [f"5 nodes, host node ran 2 times, mismatches 0, y[5] {2 * x[5] + 0.5:.1f}",
                                     f"updated a: y[5] {3 * x[5] + 0.5:.1f} host node misses {np.count_nonzero(x)} "
                                     f"(inputs not 0: {np.count_nonzero(x)})",
                                     "clone has 5 nodes", "dependency on no node: cudaErrorInvalidValue"]


def test_program_running_another_cuda_program(tmp_path: Path) -> None:
    src = tmp_path / "nested.cu"
    src.write_text(
        '#include <cstdio>\n#include <cstdlib>\n#include <string>\n__global__ void k(int* p) { *p = 7; }\n'
        'int main(int argc, char** argv) { int* d; cudaError_t e = cudaMalloc(&d, 4);\n'
        '  if (argc > 1) { printf("inner %s\\n", cudaGetErrorName(e)); return 0; }\n'
        '  fflush(stdout); int st = system((std::string(argv[0]) + " inner").c_str());\n'
        '  k<<<1, 1>>>(d); int h = 0; cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost);\n'
        '  printf("outer %d %d\\n", st, h); return 0; }\n')
    r = run(src)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["inner cudaErrorNoDevice", "outer 0 7"]
    assert "start it with `strata run PROGRAM`" in r.stderr


def test_unimplemented_call_returns_not_supported_once(tmp_path: Path) -> None:
    src = tmp_path / "ipc.cu"
    src.write_text('#include <cstdio>\nint main() { cudaEvent_t e; cudaEventCreate(&e); cudaIpcEventHandle_t h;\n'
                   '  cudaError_t a = cudaIpcGetEventHandle(&h, e), b = cudaIpcGetEventHandle(&h, e);\n'
                   '  printf("%d %d %s\\n", (int)a, (int)b, cudaGetErrorName(a)); return 0; }\n')
    r = run(src)
    assert (r.returncode, r.stdout) == (0, "801 801 cudaErrorNotSupported\n")
    assert r.stderr.count("cudaIpcGetEventHandle is not implemented") == 1


def test_without_strata_run_the_program_is_told_how_to_start(tmp_path: Path) -> None:
    from strata.cuda.bridge.build import library_dir

    exe = build("vector_add.cu")
    env = {k: v for k, v in os.environ.items() if k != "STRATA_CUDART_FDS"}
    env["LD_LIBRARY_PATH"] = str(library_dir())
    r = subprocess.run([str(exe), "10"], capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 1
    assert "start it with `strata run PROGRAM`" in r.stderr and "cudaErrorNoDevice" in r.stderr


def test_error_table_covers_strata_errors_with_cuda_messages() -> None:
    from strata.cuda.bridge.build import errors_source
    from strata.errors import CUDA_ERRORS

    rows = {name: (int(code), text) for code, name, text in re.findall(r'\{(\d+), "(\w+)", "([^"]*)"\}',
                                                                        errors_source())}
    for name, (code, _) in CUDA_ERRORS.items():
        assert rows[name][0] == code, name
    assert rows["cudaErrorIllegalAddress"] == (700, "an illegal memory access was encountered")


def test_missing_host_compiler_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CXX", "")
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(NvccNotFound, match="apt-get install g\\+\\+"):
        host_compiler()


def test_api_edges_outputs_kept_on_error_null_outputs_wrapping_sizes_many_parameters() -> None:
    r = run(build("api_edges.cu"))
    assert r.returncode == 0, r.stderr
    vals = 3 * np.arange(600, dtype=np.int64) + 1
    assert r.stdout.splitlines() == [
        "elapsed unrecorded: cudaErrorInvalidResourceHandle", "ms kept 1",
        "huge pitched malloc: cudaErrorMemoryAllocation", "pitch kept 1",
        "huge pinned malloc: cudaErrorMemoryAllocation",
        "device count NULL: cudaErrorInvalidValue", "symbol address NULL: cudaErrorInvalidValue",
        "symbol size NULL: cudaErrorInvalidValue", "choose device NULL: cudaErrorInvalidValue",
        "func attributes NULL: cudaErrorInvalidValue",
        "2-D copy wrapping: cudaErrorInvalidValue", "2-D memset wrapping: cudaErrorInvalidValue",
        "2-D copy to array wrapping: cudaErrorInvalidValue", "2-D copy from array wrapping: cudaErrorInvalidValue",
        f"sum of 600 parameters {int(vals.sum())}",
        "long-named kernel: cudaSuccess", "long-named kernel wrote 6"]  # six empty structs of 1 byte


def test_runtime_process_dying_mid_program_ends_it_with_a_message() -> None:
    r = run(build("server_dies.cu"), timeout=60)  # the program must not hang on the pipe
    assert r.returncode == -signal.SIGKILL  # the `strata run` process the program killed
    assert "lost the connection to the strata runtime process" in r.stderr
    assert "not reached" not in r.stdout


def test_driver_api_edges_first_call_from_threads_outputs_kept_null_outputs() -> None:
    r = run(build("driver_edges.cu", "-lcuda"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "threads connected 8 of 8", "primary context: CUDA_SUCCESS", "set current: CUDA_SUCCESS",
        "load PTX: CUDA_SUCCESS", "global missing: CUDA_ERROR_NOT_FOUND", "outputs kept 1",
        "function missing: CUDA_ERROR_NOT_FOUND", "function kept 1",
        "huge alloc: CUDA_ERROR_OUT_OF_MEMORY", "pointer kept 1", "alloc: CUDA_SUCCESS",
        "memset32 wrapping: CUDA_ERROR_INVALID_VALUE", "load from a pipe: CUDA_ERROR_INVALID_IMAGE",
        "context device NULL: CUDA_ERROR_INVALID_VALUE"]


def test_child_forked_before_the_first_cuda_call_may_not_use_the_parents_connection() -> None:
    r = run(build("fork_first.cpp"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["child cudaErrorInitializationError", "parent 42 child exit 0"]


def test_a_launch_error_is_the_launching_threads() -> None:
    r = run(build("thread_errors.cu"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["launching thread cudaErrorInvalidConfiguration", "other thread cudaSuccess"]
