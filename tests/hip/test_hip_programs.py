"""Whole HIP programs (tests/hip/programs/*.hip) built with `strata hipcc` (clang-19, host and device code) and
run under `strata run` on a virtual MI300X: stdout, stderr and the exit code as the program and HIP would
produce them, with NumPy or the device catalogue as the oracle where the program prints numbers. Each
program is compiled once (strata.hip.hipcc's cache).

Needs clang-19 and lld-19 (`make amd`) and a C compiler; without them the program tests skip with the
reason. The twin test also needs NVIDIA's nvcc (the `programs` extra) for the CUDA side.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strata.errors import CudaError
from strata.hip.bridge import bundle

HERE = Path(__file__).parent
PROGRAMS = HERE / "programs"
CUDA_PROGRAMS = HERE.parent / "programs"
RUN = [sys.executable, "-c", "import sys; from strata.cli import main; sys.exit(main(sys.argv[1:]))"]

_MISSING = "" if shutil.which("clang-19") else "clang-19 is not installed (make amd: apt-get install clang-19 lld-19)"
if not _MISSING and not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    _MISSING = "no C compiler to build strata's libamdhip64 (apt-get install gcc)"
needs_clang = pytest.mark.skipif(bool(_MISSING), reason=_MISSING)


def build(name: str) -> Path:
    from strata.hip.hipcc import compile_program

    return compile_program(PROGRAMS / name)


def run(program: Path | str, *args: str, env: dict[str, str] | None = None, gpu: str | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if k not in ("STRATA_GPU", "STRATA_DEVICES", "STRATA_CUDART_FDS")}
    full_env.update(env or {})
    opts = ["--gpu", gpu] if gpu else []
    return subprocess.run([*RUN, "run", *opts, str(program), *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env)


# -- the offload bundle (no compiler needed)

def test_bundle_round_trip_and_target_pick() -> None:
    data = bundle.build({"gfx942": b"\x7fELF942", "gfx90a:xnack-": b"\x7fELF90a"})
    assert data.startswith(bundle.MAGIC)
    (first,) = struct.unpack_from("<Q", data, len(bundle.MAGIC) + 8)
    assert first == 4096 and data[4096:4096 + 7] == b"\x7fELF942"  # entries start on a page, as clang's tool
    entries = bundle.parse(data)
    assert list(entries) == [bundle.HOST_ID, "hipv4-amdgcn-amd-amdhsa--gfx942",
                             "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"]
    assert bundle.pick(entries, "gfx942") == b"\x7fELF942"
    assert bundle.pick(entries, "gfx90a") == b"\x7fELF90a"  # target features do not matter for the match
    with pytest.raises(CudaError) as e:
        bundle.pick({bundle.HOST_ID: b""}, "gfx942")
    assert e.value.hip_name == "hipErrorNoBinaryForGpu" and "none for gfx942" in str(e.value)


@pytest.mark.parametrize("data, message", [
    (b"CCOB\x01\x00", "compressed offload bundle"),
    (b"\x7fELF" + bytes(40), "expected the magic"),
    (bundle.MAGIC + struct.pack("<Q", 1) + struct.pack("<QQQ", 4096, 10, 3) + b"abc", "outside the"),
    (bundle.MAGIC + struct.pack("<Q", 2), "truncated or malformed"),
])
def test_bundle_errors_are_typed(data: bytes, message: str) -> None:
    with pytest.raises(CudaError) as e:
        bundle.parse(data)
    assert e.value.hip_name == "hipErrorInvalidImage" and message in str(e.value)


# -- programs

@needs_clang
def test_vector_add_output_and_exit_code() -> None:
    r = run(build("vector_add.hip"), "5000")
    assert r.returncode == 0, r.stderr
    i = np.arange(5000)
    a = (i % 97).astype(np.float32) * np.float32(0.5)
    b = ((i * 7) % 13).astype(np.float32) - np.float32(6)
    assert r.stdout.splitlines() == ["[Vector addition of 5000 elements]",
                                     "HIP kernel launch with 20 blocks of 256 threads",
                                     f"sum {float((a + b).astype(np.float64).sum()):.1f}", "Test PASSED"]
    assert r.stderr == ""


@needs_clang
def test_run_builds_a_hip_source_file_and_passes_arguments() -> None:
    r = run(PROGRAMS / "vector_add.hip", "300")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:2] == ["[Vector addition of 300 elements]",
                                         "HIP kernel launch with 2 blocks of 256 threads"]


@needs_clang
def test_reduction_with_warp_size_and_the_32_lane_porting_bug() -> None:
    n = 1 << 16
    r = run(build("reduction.hip"), str(n))
    assert r.returncode == 0, r.stdout + r.stderr
    x = (np.arange(n, dtype=np.int64) * 37) % 101 - 50
    threads = 64 * 256  # blocks * threads: each work-item sums a grid-stride slice
    per_item = np.array([x[t::threads].sum() for t in range(threads)])
    # the 32-lane version keeps, of each 64-lane wavefront, only the sum of its first 32 lanes
    first_halves = per_item.reshape(-1, 64)[:, :32].sum()
    assert r.stdout.splitlines() == ["device AMD Instinct MI300X warpSize 64", f"sum with warpSize {x.sum()}",
                                     f"sum assuming 32 lanes {first_halves}", f"expected {x.sum()}", "PASS"]
    assert first_halves != x.sum()


@needs_clang
def test_tiled_matmul_with_events() -> None:
    r = run(build("matmul.hip"))
    assert r.returncode == 0, r.stdout + r.stderr
    a = ((np.arange(100 * 90) * 7) % 13 * 0.5 - 3.0).reshape(100, 90)
    b = ((np.arange(90 * 72) * 3) % 11 * 0.25 - 1.0).reshape(90, 72)
    c = a @ b  # exact in float64 and in float32: the operands are multiples of 1/4 with small sums
    assert r.stdout.splitlines() == [f"C[0][0] {c[0, 0]:.4f} C[99][71] {c[99, 71]:.4f}", "kernel time positive 1",
                                     "PASS"]


@needs_clang
def test_atomics_histogram() -> None:
    r = run(build("histogram.hip"))
    assert r.returncode == 0, r.stderr
    seed, data = 12345, np.empty(100000, np.uint8)
    for i in range(data.size):
        seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
        data[i] = (seed >> 16) & 0xFF
    bins = np.bincount(data >> 2, minlength=64)
    assert r.stdout.splitlines() == [f"total {data.size} max {data.max()} workgroups 16",
                                     " ".join(str(v) for v in bins)]


@needs_clang
def test_streams_events_and_pinned_memory() -> None:
    r = run(build("streams_events.hip"))
    assert r.returncode == 0, r.stdout + r.stderr
    i = np.array([0, 12345])
    h1 = (i % 7) + (i % 100) * 2.0 + 1.0
    assert r.stdout.splitlines() == ["query stop hipSuccess", "query s0 hipSuccess",
                                     "elapsed positive 1, untimed event gives hipErrorInvalidHandle",
                                     f"h1[0] {h1[0]:.1f} h1[12345] {h1[1]:.1f}", "PASS"]


@needs_clang
def test_graphs_captured_and_built_node_by_node() -> None:
    r = run(build("graphs.hip"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["capturing: 1", "captured graph: 3 nodes, 3 launches, 0 mismatches",
                                     "built graph: 0 mismatches"]
    assert "not implemented" not in r.stderr


@needs_clang
def test_error_codes_as_a_hip_program_sees_them() -> None:
    r = run(build("error_handling.hip"))
    assert r.returncode == 3, r.stderr
    assert r.stdout.splitlines() == [
        "launch 2048 threads: 9 hipErrorInvalidConfiguration (invalid configuration argument)",
        "then: 0 hipSuccess (no error)",
        "good launch: 0 hipSuccess (no error)",
        "sync: 0 hipSuccess (no error)",
        "hipMalloc 1 PiB: 2 hipErrorOutOfMemory (out of memory)",
        "hipSetDevice 99: 101 hipErrorInvalidDevice (invalid device ordinal)",
        "devices 1",
        "hipDeviceGetPCIBusId: 801 hipErrorNotSupported (operation not supported)",
        "unknown code: 12345 hipErrorUnknown (unknown error)",
        "last error: 101 hipErrorInvalidDevice (invalid device ordinal)",
        "then: 0 hipSuccess (no error)",
        "faulting launch: 0 hipSuccess (no error)",
        "sync after fault: 700 hipErrorIllegalAddress (an illegal memory access was encountered)",
        "copy after fault: 700 hipErrorIllegalAddress (an illegal memory access was encountered)",
    ]
    assert r.stderr.count("hipDeviceGetPCIBusId is not implemented by strata's HIP runtime") == 1
    # the memcheck report, once, naming the kernel (its mangled name) and the access
    assert r.stderr.count("DeviceFault") == 1 and "_Z4fillPiii" in r.stderr


@needs_clang
def test_managed_memory() -> None:
    r = run(build("managed_memory.hip"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["after 1 launch y[0] 1.0 y[4999] 9999.0",
                                     "after 2 launches y[0] 4.0 y[4999] 10002.0", "managedMemory 1",
                                     "__managed__ launches 102", "PASS"]


@needs_clang
def test_device_query_matches_the_catalogue() -> None:
    import strata.cuda as cuda

    before = cuda.current_device()
    amd, nv = cuda.Device(model="mi300x"), cuda.Device(model="h200")
    try:
        p, q = cuda.get_device_properties(amd.index), cuda.get_device_properties(nv.index)
    finally:
        cuda.set_device(before)
    r = run(build("device_query.hip"), env={"STRATA_DEVICES": "mi300x,h200"})
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("devices 2 driver 60200000 runtime 60200000\n")
    assert f'Device 0: "{p.name}" gcnArchName gfx942:sramecc+:xnack- gcnArch 942\n' in out
    assert (f"  warpSize 64 multiProcessorCount {p.multiProcessorCount} maxThreadsPerBlock "
            f"{p.maxThreadsPerBlock}\n") in out
    assert f"  sharedMemPerBlock {p.sharedMemPerBlock} totalGlobalMem {p.totalGlobalMem} major 9 minor 4\n" in out
    assert f"  attr warpSize 64 CUs {p.multiProcessorCount} name {p.name}\n" in out
    assert f'Device 1: "{q.name}" gcnArchName {q.gcnArchName}' in out and "  warpSize 32 " in out
    assert "touch: numRegs>0 1 maxThreadsPerBlock 1024 binaryVersion 94\n" in out
    assert "occupancy 256: blocks>0 1\n" in out
    assert "dynamic LDS 65536: hipSuccess, 65537: hipErrorInvalidValue\n" in out  # 64 KiB of LDS per workgroup
    assert out.endswith("bad device: hipErrorInvalidDevice\n")


@needs_clang
def test_program_started_without_strata_run_says_how(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATA_CUDART")}
    r = subprocess.run([str(build("vector_add.hip")), "10"], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == 1
    assert "start it with `strata run PROGRAM`" in r.stderr and "hipErrorNoDevice" in r.stderr


@needs_clang
def test_hip_program_on_an_nvidia_device_has_no_binary() -> None:
    r = run(build("vector_add.hip"), "10", gpu="h100", env={"STRATA_DEBUG": "1"})
    assert r.returncode == 1
    assert "hipErrorNoBinaryForGpu" in r.stderr and "cannot run on NVIDIA H100" in r.stderr


@needs_clang
def test_hipcc_compiles_objects_and_links_them(tmp_path: Path) -> None:
    from strata import cli

    (tmp_path / "kernels.hip").write_text('''#include <hip/hip_runtime.h>
__global__ void twice(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] *= 2; }
void run_twice(int* p, int n) { twice<<<(n + 63) / 64, 64>>>(p, n); }
''')
    (tmp_path / "main.hip").write_text('''#include <hip/hip_runtime.h>
#include <cstdio>
void run_twice(int* p, int n);
__global__ void iota(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i; }
int main() {
  int* d; int h[100];
  hipMalloc(&d, sizeof h);
  iota<<<2, 64>>>(d, 100);
  run_twice(d, 100);
  hipMemcpy(h, d, sizeof h, hipMemcpyDeviceToHost);
  printf("%d %d %s\\n", h[1], h[99], hipGetErrorName(hipGetLastError()));
  return 0;
}
''')
    obj = tmp_path / "kernels.o"
    assert cli.main(["hipcc", "-O2", "-c", str(tmp_path / "kernels.hip"), "-o", str(obj)]) == 0
    exe = tmp_path / "two_units"
    assert cli.main(["hipcc", "-O2", str(tmp_path / "main.hip"), str(obj), "-o", str(exe)]) == 0
    r = run(exe)
    assert (r.returncode, r.stdout, r.stderr) == (0, "2 198 hipSuccess\n", "")


@needs_clang
def test_hipcc_reports_errors_of_host_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from strata import cli

    (tmp_path / "bad.hip").write_text("#include <hip/hip_runtime.h>\nint main() { return undeclared_name; }\n")
    assert cli.main(["hipcc", str(tmp_path / "bad.hip"), "-o", str(tmp_path / "bad")]) == 1
    assert "undeclared_name" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


# -- a CUDA program on an H100 and its hipified twin on an MI300X

TWINS = ["matrix_mul", "constant_memory", "reduction", "scan", "managed_vars"]


@pytest.mark.parametrize("name", TWINS)
def test_twins_are_what_strata_hipify_writes(name: str, tmp_path: Path) -> None:
    from strata.hip.hipify import main as hipify_main

    for src, twin in ((f"{name}.cu", f"{name}.hip"), ("common.h", "common.h")):
        out = tmp_path / twin
        assert hipify_main([str(CUDA_PROGRAMS / src)], output=str(out), quiet_warnings=True) == 0
        assert out.read_text() == (PROGRAMS / "twins" / twin).read_text(), f"re-run strata hipify on {src}"


@needs_clang
@pytest.mark.parametrize("name", TWINS)
def test_cuda_program_on_h100_and_its_hip_twin_on_mi300x_agree(name: str) -> None:
    from strata.cuda.nvcc import NvccNotFound, compile_program, find_nvcc, host_compiler

    try:
        find_nvcc()
        host_compiler()
    except NvccNotFound as e:
        pytest.skip(str(e))
    hip = run(build(f"twins/{name}.hip"))
    assert hip.returncode == 0, hip.stderr
    cuda = run(compile_program(CUDA_PROGRAMS / f"{name}.cu", [f"-I{CUDA_PROGRAMS}"]), gpu="h100")
    assert cuda.returncode == 0, cuda.stderr
    # tests/cuda/test_whole_programs.py checks the CUDA programs' output against NumPy; the twins must agree
    assert hip.stdout == cuda.stdout and hip.stdout.strip()
    assert hip.stderr == cuda.stderr == ""


@needs_clang
def test_module_api_loads_a_code_object_from_a_file_and_from_memory(tmp_path: Path) -> None:
    from strata import cli

    co = tmp_path / "kernels.co"
    assert cli.main(["hipcc", "--genco", str(PROGRAMS / "module_kernels.hip"), "-o", str(co)]) == 0
    r = run(build("module_api.hip"), str(co))
    assert r.returncode == 0, r.stdout + r.stderr
    x = np.arange(1000, dtype=np.float32)
    once = x * np.float32(3) + np.float32(0.5)  # exact: small integers and halves
    assert r.stdout.splitlines() == [
        f"offset size 4 x[1] {once[1]:.1f} x[999] {once[999]:.1f}",
        f"from memory (read): x[1] {once[1] * 2:.1f}",  # a second module: its own offset, 0
        "launch 2048 work-items: hipErrorInvalidConfiguration",
        "missing file: hipErrorFileNotFound",
        "missing kernel: hipErrorNotFound",
        "bad image: hipErrorInvalidImage",
        "last error: hipSuccess",
    ]


@needs_clang
def test_peers_host_callbacks_stream_ordered_and_pitched_memory_on_two_mi300x() -> None:
    r = run(build("runtime_misc.hip"), env={"STRATA_DEVICES": "mi300x,mi300x"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        "devices 2 peer 0->1 1",
        "peer copy h[0] 7 h[999] 1006",
        "host calls 101 stream-ordered h[999] 1000",  # the host function and the callback ran, once each
        "pitch multiple of 10 ints 1 rows[3][9] 0x1010101",
        f"heap {1 << 24} priorities 0..-5 shuffle 1 dynamic parallelism 0",
    ]


@pytest.mark.parametrize("argv, message", [
    (["-fgpu-rdc", "a.hip", "-o", "a"], "-fgpu-rdc is not supported"),
    (["a.hip", "notes.txt", "-o", "a"], "do not know what to do with 'notes.txt'"),
    (["-c", "a.hip", "b.hip", "-o", "x.o"], "-c with -o takes one source file"),
])
def test_hipcc_program_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from strata import cli

    assert cli.main(["hipcc", *argv]) == 2
    assert message in capsys.readouterr().err


@needs_clang
def test_api_edges_output_kept_on_error_null_outputs_and_a_wrapping_fill() -> None:
    r = run(build("api_edges.hip"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "elapsed unrecorded: hipErrorInvalidHandle", "ms kept 1",
        "symbol size NULL: hipErrorInvalidValue", "symbol address NULL: hipErrorInvalidValue",
        "load a bad bundle: hipErrorInvalidImage", "memset32 wrapping: hipErrorInvalidValue", "ones 16"]
