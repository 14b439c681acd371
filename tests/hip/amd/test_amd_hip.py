"""HIP on a virtual MI300X end to end: strata.hip.compile (clang-19 + strata's AMD header) -> code object
-> module load -> kernarg segment from the metadata -> dispatch packet -> command processor -> the wave64
engine. Skips with the reason where clang-19 is absent (`make amd` installs it)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.hip.amd import CodeObjectModule

HERE = Path(__file__).parent
needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")


def source(name: str) -> str:
    return (HERE / f"{name}.hip").read_text()


@needs_clang
def test_compile_defaults_to_clang_on_an_amd_device_and_caches(mi300x: cuda.Device) -> None:
    mod = hip.compile(source("saxpy"))
    assert isinstance(mod, CodeObjectModule) and mod.arch == "gfx942" and mod.kernels == ["saxpy"]
    again = hip.compile(source("saxpy"), arch="gfx942")
    assert again.image == mod.image


def test_nvidia_devices_keep_nvrtc() -> None:
    assert cuda.current_device().spec.vendor == "nvidia"
    assert isinstance(hip.compile('extern "C" __global__ void k(int* p) { *p = warpSize; }'), cuda.Module)


@needs_clang
def test_saxpy_on_mi300x(mi300x: cuda.Device) -> None:
    k = hip.compile(source("saxpy")).get_function("saxpy")
    rng = np.random.default_rng(1)
    n = 70_000
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    dx, dy = hip.to_device(x), hip.to_device(y)
    report = k((n + 255) // 256, 256, (np.int32(n), np.float32(3.0), dx, dy))
    np.testing.assert_allclose(dy.get(), (3.0 * x.astype(np.float64) + y).astype(np.float32), rtol=1e-6)
    assert report.device == "AMD Instinct MI300X" or "MI300X" in report.device
    assert report.counters.global_store_bytes == 4 * n and report.modeled_time_s > 0


@needs_clang
def test_reduction_sgemm_softmax_on_mi300x(mi300x: cuda.Device) -> None:
    rng = np.random.default_rng(2)
    red = hip.compile(source("reduce")).get_function("reduce_sum")
    x = rng.random(3000, np.float32)
    out = hip.zeros(12, np.float32)
    red(12, 256, (hip.to_device(x), out, np.int32(3000)))
    np.testing.assert_allclose(out.get(), np.pad(x, (0, 72)).reshape(12, 256).sum(1, dtype=np.float64), rtol=1e-5)

    gemm = hip.compile(source("sgemm")).get_function("sgemm")
    m, n, kk = 33, 47, 29
    a, b = rng.random((m, kk), np.float32), rng.random((kk, n), np.float32)
    c = hip.zeros((m, n), np.float32)
    gemm(((n + 15) // 16, (m + 15) // 16), (16, 16), (hip.to_device(a), hip.to_device(b), c, np.int32(m),
                                                     np.int32(n), np.int32(kk)))
    np.testing.assert_allclose(c.get(), a.astype(np.float64) @ b, rtol=1e-5)

    sm = hip.compile(source("softmax")).get_function("softmax")
    xs = (rng.standard_normal((3, 500)) * 3).astype(np.float32)
    ys = hip.zeros((3, 500), np.float32)
    sm(3, 256, (hip.to_device(xs), ys, np.int32(500)))
    e = np.exp(xs.astype(np.float64) - xs.max(1, keepdims=True))
    np.testing.assert_allclose(ys.get(), e / e.sum(1, keepdims=True), rtol=2e-6, atol=1e-12)


@needs_clang
def test_porting_32_lane_warp_reduction(mi300x: cuda.Device) -> None:
    mod = hip.compile(source("warp_reduce"))
    x = np.random.default_rng(3).random(512, np.float32)
    got = {}
    for name in ("warp_sum32", "warp_sum"):
        out = hip.zeros(1, np.float32)
        mod.get_function(name)(2, 256, (hip.to_device(x), out))
        got[name] = float(out.get()[0])
    assert got["warp_sum"] == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-5)
    assert got["warp_sum32"] != pytest.approx(got["warp_sum"], rel=1e-2)  # lanes 32..63 never summed


@needs_clang
def test_block_and_grid_dims_come_from_hidden_arguments(mi300x: cuda.Device) -> None:
    mod = hip.compile('''#include <hip/hip_runtime.h>
extern "C" __global__ void dims(unsigned* out) {
  unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  unsigned b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  unsigned i = b * (blockDim.x * blockDim.y * blockDim.z) + t;
  out[4 * i + 0] = blockDim.x * 100 + blockDim.y * 10 + blockDim.z;
  out[4 * i + 1] = gridDim.x * 100 + gridDim.y * 10 + gridDim.z;
  out[4 * i + 2] = t;
  out[4 * i + 3] = warpSize;
}''')
    grid, block = (3, 2, 2), (5, 4, 3)
    total = 12 * 60
    out = hip.zeros(4 * total, np.uint32)
    mod.get_function("dims")(grid, block, (out,))
    got = out.get().reshape(total, 4)
    assert (got[:, 0] == 543).all() and (got[:, 1] == 322).all() and (got[:, 3] == 64).all()
    assert (got[:, 2].reshape(12, 60) == np.arange(60)).all()


@needs_clang
def test_out_of_bounds_is_a_device_fault_on_the_context(mi300x: cuda.Device) -> None:
    k = hip.compile(source("saxpy")).get_function("saxpy")
    x, y = hip.zeros(64, np.float32), hip.zeros(32, np.float32)
    k(1, 64, (np.int32(64), np.float32(1.0), x, y))
    with pytest.raises(cuda.DeviceFault) as e:
        hip.synchronize()
    assert e.value.report["kernel"] == "saxpy" and e.value.report["work_item"] == (32, 0, 0)


@needs_clang
def test_failed_assert_reports_the_assertion_as_rocm_prints_it(mi300x: cuda.Device,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A device assert prints ROCm's line and traps; the fault carries the expression, file and line."""
    src = """extern "C" __global__ void checked(const int* idx, int n, int* out) {
      int i = threadIdx.x;
      assert(idx[i] < n && "index out of bounds");
      out[i] = idx[i];
    }"""
    k = hip.compile(src).get_function("checked")
    idx = hip.to_device(np.array([0, 1, 7, 2], np.int32))
    k(1, 4, (idx, np.int32(4), hip.zeros(4, np.int32)))
    with pytest.raises(cuda.DeviceFault) as e:
        hip.synchronize()
    r = e.value.report
    assert e.value.name == "cudaErrorAssert" and r["assertion"] == 'idx[i] < n && "index out of bounds"'
    assert r["line"] == 3 and r["function"] == "checked" and r["work_item"] == (2, 0, 0)
    assert 'Assertion `idx[i] < n && "index out of bounds"` failed' in str(e.value)
    assert "Device-side assertion `idx[i] < n && \"index out of bounds\"' failed." in capsys.readouterr().out


@needs_clang
def test_compile_takes_target_features_as_hipcc_does() -> None:
    from strata.hip.amd import compile_to_code_object
    from strata.hw.amdgpu.codeobject import parse

    co = parse(compile_to_code_object('extern "C" __global__ void k(int* p) { p[threadIdx.x] = 1; }',
                                      arch="gfx942:sramecc-"))
    assert co.target == "amdgcn-amd-amdhsa--gfx942:sramecc-" and list(co.kernels) == ["k"]
    with pytest.raises(cuda.CompileError, match=r"arch 'gfx1100' is not supported; expected one of"):
        compile_to_code_object("", arch="gfx1100")


@needs_clang
def test_compile_error_has_clang_log(mi300x: cuda.Device) -> None:
    with pytest.raises(cuda.CompileError) as e:
        hip.compile('extern "C" __global__ void k(int* p) { *p = ; }')
    assert "error" in e.value.log


@needs_clang
def test_sgemm_bit_identical_to_the_nvrtc_path_without_contraction() -> None:
    """The same HIP source on both paths: NVRTC -> PTX on an H200 and clang -> gfx942 on an MI300X give
    the same bits once neither compiler fuses multiply-adds (--fmad=false, -ffp-contract=off)."""
    before = cuda.current_device()
    rng = np.random.default_rng(4)
    m, n, k = 48, 40, 56
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    out = {}
    try:
        for model, opts in (("h200", ["--fmad=false"]), ("mi300x", ["-ffp-contract=off"])):
            cuda.set_device(cuda.Device(model=model))
            g = hip.compile(source("sgemm"), options=opts).get_function("sgemm")
            c = hip.zeros((m, n), np.float32)
            g(((n + 15) // 16, (m + 15) // 16), (16, 16), (hip.to_device(a), hip.to_device(b), c, np.int32(m),
                                                         np.int32(n), np.int32(k)))
            out[model] = c.get()
    finally:
        cuda.set_device(before)
    np.testing.assert_allclose(out["mi300x"], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(out["mi300x"], out["h200"])


@needs_clang
def test_func_attributes_from_the_code_object(mi300x: cuda.Device) -> None:
    k = hip.compile(source("sgemm")).get_function("sgemm")
    a = k.attributes
    assert a.shared_size_bytes == 2 * 16 * 16 * 4 and a.num_regs == k.info.vgpr_count > 0
    assert a.sgprs == k.info.sgpr_count > 0 and a.binary_version == 94
    assert a.max_dynamic_shared_size_bytes == mi300x.spec.shared_mem_per_block_optin - 2048


@needs_clang
def test_fault_names_the_source_line(mi300x: cuda.Device) -> None:
    mod = hip.compile('''#include <hip/hip_runtime.h>
extern "C" __global__ void poke(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    p[i] = i;
}''', name="poke.hip")
    p = hip.zeros(16, np.int32)
    mod.get_function("poke")(1, 64, (p, np.int32(64)))
    with pytest.raises(cuda.DeviceFault) as e:
        hip.synchronize()
    assert e.value.report["source"] == "poke.hip:5" and "source poke.hip:5" in str(e.value)


@needs_clang
def test_device_and_constant_globals(mi300x: cuda.Device) -> None:
    mod = hip.compile('''#include <hip/hip_runtime.h>
__constant__ float table[4] = {1.0f, 10.0f, 100.0f, 1000.0f};
__device__ unsigned counter;
__device__ float scale = 0.5f;
extern "C" __global__ void use_globals(const int* idx, float* out) {
  int t = threadIdx.x;
  out[t] = table[idx[t] & 3] * scale;
  atomicAdd(&counter, 1u);
}''')
    addr, size = mod.get_global("counter")
    assert size == 4
    idx = np.arange(64, dtype=np.int32)
    out = hip.zeros(64, np.float32)
    k = mod.get_function("use_globals")
    k(1, 64, (hip.to_device(idx), out))
    np.testing.assert_array_equal(out.get(), np.array([1, 10, 100, 1000], np.float32)[idx & 3] * 0.5)
    got = np.zeros(1, np.uint32)
    hip.memcpy(got, addr, 4, "DeviceToHost")
    assert got[0] == 64
    t_addr, t_size = mod.get_global("table")
    assert t_size == 16
    hip.memcpy(t_addr, np.array([2, 3, 4, 5], np.float32), 16, "HostToDevice")  # hipMemcpyToSymbol
    k(1, 64, (hip.to_device(idx), out))
    np.testing.assert_array_equal(out.get(), np.array([2, 3, 4, 5], np.float32)[idx & 3] * 0.5)
    with pytest.raises(cuda.CudaError, match="cudaErrorInvalidSymbol"):
        mod.get_global("nope")


@needs_clang
def test_device_function_calls_recursion_and_function_pointers(mi300x: cuda.Device) -> None:
    mod = hip.compile('''#include <hip/hip_runtime.h>
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ int twice(int x) { return 2 * x; }
__device__ __noinline__ int square(int x) { return x * x; }
__device__ __noinline__ int negate(int x) { return -x; }
typedef int (*op_t)(int);
__device__ op_t ops[3] = {twice, square, negate};
extern "C" __global__ void calls(const int* x, int* out) {
  int t = threadIdx.x;
  out[2 * t] = fib(x[t] % 12);
  out[2 * t + 1] = ops[t % 3](x[t]);
}''')
    x = np.random.default_rng(6).integers(0, 100, 64).astype(np.int32)
    out = hip.zeros(128, np.int32)
    mod.get_function("calls")(1, 64, (hip.to_device(x), out))
    got = out.get().reshape(64, 2)
    fib = [0, 1]
    for _ in range(10):
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_array_equal(got[:, 0], np.array(fib)[x % 12])
    t = np.arange(64)
    np.testing.assert_array_equal(got[:, 1], np.select([t % 3 == 0, t % 3 == 1], [2 * x, x * x], -x))


@needs_clang
def test_flush_denormals_to_zero_follows_the_kernel_descriptor(mi300x: cuda.Device) -> None:
    src = '''#include <hip/hip_runtime.h>
extern "C" __global__ void half_it(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x] * 0.5f; }'''
    x = np.array([1e-38, -3e-39, 2.0, 1e-45], np.float32)  # a normal that halves to a denormal, denormals
    results = {}
    for flag in ("", "-fgpu-flush-denormals-to-zero"):
        k = hip.compile(src, options=[flag] if flag else []).get_function("half_it")
        y = hip.zeros(4, np.float32)
        k(1, 4, (hip.to_device(x), y))
        results[flag] = y.get()
    np.testing.assert_array_equal(results[""], x * np.float32(0.5))
    np.testing.assert_array_equal(results["-fgpu-flush-denormals-to-zero"], np.array([0.0, -0.0, 1.0, 0.0], np.float32))
    assert np.signbit(results["-fgpu-flush-denormals-to-zero"][1])


@needs_clang
def test_generic_pointers_to_shared_and_private_memory(mi300x: cuda.Device) -> None:
    mod = hip.compile('''#include <hip/hip_runtime.h>
__device__ __noinline__ void bump(int* p, int n, int by) { for (int i = 0; i < n; ++i) p[i] += by; }
extern "C" __global__ void generic(const int* x, int* out) {
  __shared__ int s[64];
  int local[4];
  int t = threadIdx.x;
  s[t] = x[t];
  for (int i = 0; i < 4; ++i) local[i] = i * t;
  __syncthreads();
  bump(&s[t], 1, 100);      // a generic pointer into LDS
  bump(local, 4, x[t]);     // a generic pointer into private memory
  bump(out + 2 * t, 2, 7);  // and into global memory
  __syncthreads();
  out[2 * t] += s[t] + local[3];
}''')
    x = np.arange(64, dtype=np.int32) * 3
    out = hip.to_device(np.ones(128, np.int32))
    mod.get_function("generic")(1, 64, (hip.to_device(x), out))
    got = out.get().reshape(64, 2)
    t = np.arange(64)
    np.testing.assert_array_equal(got[:, 0], 8 + (x + 100) + (3 * t + x))
    np.testing.assert_array_equal(got[:, 1], 8)


@needs_clang
def test_trace_shows_wave64_and_the_issue_classes(mi300x: cuda.Device) -> None:
    """Why the 32-lane reduction is wrong: the execute span says the wavefronts are 64 wide; its issue
    counts show the SALU/VALU/LDS split and the EXEC efficiency."""
    from strata import trace

    mod = hip.compile(source("warp_reduce"))
    x = np.ones(512, np.float32)
    out = hip.zeros(1, np.float32)
    with trace.record() as rec:
        mod.get_function("warp_sum32")(2, 256, (hip.to_device(x), out)).wait()
    ev = next(e for e in rec.events if e.layer == "L0" and e.name == "execute" and e.args.get("isa") == "gfx9")
    assert ev.args["wavefront_size"] == 64 and ev.args["waves"] == 8
    assert ev.args["valu"] > 0 and ev.args["salu"] > 0 and ev.args["lds"] > 0  # ds_bpermute for __shfl_down
    assert 0 < ev.args["exec_efficiency"] <= 1
    assert float(out.get()[0]) == 64.0  # 2 blocks x 32 lanes summed: the other 32 of each wave are lost


def test_code_object_on_an_nvidia_device_is_no_kernel_image() -> None:
    mod = CodeObjectModule.from_file(HERE / "saxpy.co")  # no compiler needed: the checked-in code object
    assert mod.arch == "gfx942" and mod.kernels == ["saxpy"]
    assert cuda.current_device().spec.vendor == "nvidia"
    x = hip.zeros(4, np.float32)
    with pytest.raises(cuda.CudaError, match="cudaErrorNoKernelImageForDevice"):
        mod.get_function("saxpy")(1, 4, (np.int32(4), np.float32(1), x, x))
    with pytest.raises(cuda.CudaError, match="cudaErrorInvalidDeviceFunction"):
        mod.get_function("nope")


def test_checked_in_code_object_runs_on_mi300x_without_clang(mi300x: cuda.Device) -> None:
    k = CodeObjectModule.from_file(HERE / "saxpy.co").get_function("saxpy")
    x, y = np.arange(300, dtype=np.float32), np.ones(300, np.float32)
    dy = hip.to_device(y)
    with pytest.raises(TypeError, match="expects 4 arguments"):
        k(2, 256, (np.int32(300), dy))
    with pytest.raises(TypeError, match="expects 4 bytes"):
        k(2, 256, (np.int64(300), np.float32(2), hip.to_device(x), dy))
    k(2, 256, (np.int32(300), np.float32(2), hip.to_device(x), dy))
    np.testing.assert_array_equal(dy.get(), 2 * x + 1)


@needs_clang
def test_a_wave_spinning_on_a_flag_another_wave_sets_finishes(mi300x: cuda.Device) -> None:
    """The scheduler runs the furthest-behind waves first but lets the others run now and then, so a
    wave spinning on an LDS flag that a later wave sets does not starve it (this timed out before)."""
    mod = hip.compile('''#include <hip/hip_runtime.h>
extern "C" __global__ void spin(int* out) {
  __shared__ volatile int flag;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  if (threadIdx.x == 0) { while (flag != 42) {} out[0] = flag + 1; }
  if (threadIdx.x == 64) { for (int i = 0; i < 3; ++i) out[1 + i] = i; flag = 42; }
}''')
    out = hip.zeros(4, np.int32)
    mod.get_function("spin")(1, 128, (out,))
    assert out.get().tolist() == [43, 0, 1, 2]


@needs_clang
def test_mi250x_runs_gfx90a_code() -> None:
    """On an MI250X (gfx90a) hip.compile targets gfx90a: 32-bit address pairs, MUBUF scratch through the
    private segment buffer; results against NumPy."""
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi250x"))
    try:
        props = hip.get_device_properties()
        assert props.gcnArchName.startswith("gfx90a") and props.warpSize == 64
        rng = np.random.default_rng(7)
        gemm = hip.compile(source("sgemm"))
        assert gemm.arch == "gfx90a"
        m, n, k = 33, 47, 29
        a, b = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
        c = hip.zeros((m, n), np.float32)
        gemm.get_function("sgemm")(((n + 15) // 16, (m + 15) // 16), (16, 16),
                                   (hip.to_device(a), hip.to_device(b), c, np.int32(m), np.int32(n), np.int32(k)))
        np.testing.assert_allclose(c.get(), a.astype(np.float64) @ b, rtol=1e-5)
        idx = rng.integers(0, 1000, 500).astype(np.int32)
        out = hip.zeros(500, np.int32)
        hip.compile(source("scratch")).get_function("local_array")(2, 256, (hip.to_device(idx), out, np.int32(500)))
        t = np.arange(500)
        np.testing.assert_array_equal(out.get(), (idx % 37) ** 2 + t + ((idx * 7) % 37) ** 2 + t)
    finally:
        cuda.set_device(before)


def test_the_code_object_cache_follows_every_header_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A change to any of strata's AMD headers (not only hip_runtime.h) changes the cache key, so an edited
    hip/amd_math.h or hip_fp16.h recompiles instead of reusing a stale code object."""
    import strata.hip.amd as amd

    copy = tmp_path / "include_amd"
    shutil.copytree(amd.include_dir(), copy)
    monkeypatch.setattr(amd, "include_dir", lambda: copy)
    amd.header_digest.cache_clear()
    try:
        before = amd.header_digest()
        math_h = copy / "hip" / "amd_math.h"
        math_h.write_text(math_h.read_text() + "\n// an edit\n")
        amd.header_digest.cache_clear()
        assert amd.header_digest() != before
    finally:
        amd.header_digest.cache_clear()
