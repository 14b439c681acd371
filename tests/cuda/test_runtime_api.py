"""The CUDA runtime surface of strata.cuda: devices, memory and copies, symbols, kernel attributes,
dynamic shared memory, occupancy and error queries. Kernels come from NVRTC; oracles are NumPy and the
CUDA occupancy rules computed by hand here."""

from __future__ import annotations

import numpy as np
import pytest

import strata.cuda as cuda
from strata.hw.catalog import get_spec

SOURCE = r"""
#include "scale.h"
__constant__ float coeffs[4];
__device__ int counter;
__device__ float table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

extern "C" __global__ void poly(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = SCALE * (coeffs[0] + x[i] * (coeffs[1] + x[i] * (coeffs[2] + x[i] * coeffs[3])));
}
extern "C" __global__ void count(int n) { if (blockIdx.x * blockDim.x + threadIdx.x < n) atomicAdd(&counter, 1); }
extern "C" __global__ void read_table(float* out) { out[threadIdx.x] = table[threadIdx.x]; }

extern "C" __global__ void tile_sum(const float* x, float* out) {
    __shared__ float tile[256];
    tile[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) { float s = 0; for (int k = 0; k < 256; ++k) s += tile[k]; out[blockIdx.x] = s; }
}
extern "C" __global__ void big_dynamic(float* out, int n) {
    extern __shared__ float buf[];
    for (int k = threadIdx.x; k < n; k += blockDim.x) buf[k] = (float)k;
    __syncthreads();
    if (threadIdx.x == 0) out[0] = buf[n - 1];
}
extern "C" __global__ void __launch_bounds__(128) bounded(float* x) { x[threadIdx.x] += 1.0f; }
extern "C" __global__ void uses_local(float* out, int k) {
    float scratch[64];
    for (int i = 0; i < 64; ++i) scratch[i] = i * 0.5f;
    out[threadIdx.x] = scratch[(threadIdx.x + k) & 63];
}
template <typename T> __global__ void axpy(T a, const T* x, T* y) { y[threadIdx.x] += a * x[threadIdx.x]; }
"""


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SOURCE, name="runtime_api.cu", headers={"scale.h": "#define SCALE 2.0f\n"},
                        name_expressions=("axpy<float>", "axpy<double>"))


# --- devices -----------------------------------------------------------------------------------------


def test_device_properties_match_the_catalogue() -> None:
    for model in ("h200", "h100", "a100"):
        d = cuda.Device(model=model)
        spec, p = get_spec(model), d.properties()
        assert (p.name, p.totalGlobalMem, p.multiProcessorCount, p.warpSize) == \
            (spec.product, spec.hbm_bytes, spec.sm_count, 32)
        assert (p.maxThreadsPerBlock, p.maxThreadsDim, p.maxGridSize) == \
            (spec.max_threads_per_block, spec.max_block_dim, spec.max_grid_dim)
        assert (p.sharedMemPerBlock, p.sharedMemPerBlockOptin, p.regsPerBlock) == \
            (spec.shared_mem_per_block, spec.shared_mem_per_block_optin, spec.regs_per_block)
        assert (p.major, p.minor) == spec.compute_capability and p.clockRate == spec.clock_mhz * 1000
        assert p.l2CacheSize == spec.l2_bytes and p.maxThreadsPerMultiProcessor == spec.max_threads_per_sm
        # memory clock x bus width x 2 (DDR) reproduces the catalogue's HBM bandwidth
        assert p.memoryClockRate * 1e3 * p.memoryBusWidth / 8 * 2 == pytest.approx(spec.hbm_bandwidth, rel=2e-3)
        assert d.warpSize == 32 and d.name == spec.product  # attributes too, cudaDeviceProp-named
    assert cuda.get_device_properties(0).name == cuda.Device(0).name


def test_device_count_and_set_device(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cuda.device_count() == 1
    monkeypatch.setenv("STRATA_DEVICES", "h200,h100,a100")
    assert cuda.device_count() == 3
    with pytest.raises(cuda.CudaError) as info:
        cuda.set_device(99)
    assert info.value.name == "cudaErrorInvalidDevice"
    assert cuda.get_device() == cuda.current_device().index


# --- memory --------------------------------------------------------------------------------------------


def test_memcpy_every_kind() -> None:
    rng = np.random.default_rng(0)
    host = rng.standard_normal(1000).astype(np.float32)
    a, b = cuda.malloc(host.nbytes), cuda.malloc(host.nbytes)
    cuda.memcpy(a, host, host.nbytes, cuda.MemcpyKind.HostToDevice)
    cuda.memcpy(b, a, host.nbytes, "DeviceToDevice")
    out = np.zeros_like(host)
    cuda.memcpy(out, b, host.nbytes, cuda.MemcpyKind.DeviceToHost)
    np.testing.assert_array_equal(out, host)
    h2 = np.zeros_like(host)
    cuda.memcpy(h2, host, 400, "cudaMemcpyHostToHost")
    np.testing.assert_array_equal(h2[:100], host[:100])
    assert not h2[100:].any()
    # Default infers the direction from the pointers (unified addressing)
    arr = cuda.empty(1000, np.float32)
    cuda.memcpy(arr, host, host.nbytes)
    np.testing.assert_array_equal(arr.get(), host)
    with pytest.raises(cuda.CudaError) as info:
        cuda.memcpy(out, host, 16, cuda.MemcpyKind.DeviceToHost)
    assert info.value.name == "cudaErrorInvalidMemcpyDirection"
    with pytest.raises(cuda.CudaError, match="exceeds"):
        cuda.memcpy(a, host, host.nbytes + 4, "HostToDevice")
    cuda.free(a)
    cuda.free(b)
    cuda.free(0)  # a no-op, as in CUDA


def test_memcpy_async_with_pinned_memory_and_memset() -> None:
    s = cuda.Stream()
    n = 1 << 16
    pinned = cuda.pinned_empty(n, np.int32)
    pinned[:] = np.arange(n, dtype=np.int32)
    d = cuda.malloc(4 * n)
    cuda.memcpy_async(d, pinned, 4 * n, "HostToDevice", stream=s)
    cuda.memset_async(d, 0, 400, stream=s)  # first 100 ints
    back = cuda.pinned_empty(n, np.int32)
    cuda.memcpy_async(back, d, 4 * n, "DeviceToHost", stream=s)
    s.synchronize()
    want = np.arange(n, dtype=np.int32)
    want[:100] = 0
    np.testing.assert_array_equal(back, want)
    cuda.memset(d, 0xFF, 8)
    out = np.zeros(2, np.int32)
    cuda.memcpy(out, d, 8, "DeviceToHost")
    assert out.tolist() == [-1, -1]
    cuda.free(d)


def test_mem_get_info_tracks_allocations() -> None:
    import gc

    gc.collect()
    free0, total = cuda.mem_get_info()
    assert total == cuda.current_device().totalGlobalMem
    p = cuda.malloc(10_000)  # 3 pages of 4 KiB
    assert cuda.mem_get_info()[0] == free0 - 3 * 4096
    cuda.free(p)
    assert cuda.mem_get_info()[0] == free0


# --- modules: headers, symbols, templates -------------------------------------------------------------


def test_constant_and_device_symbols(mod: cuda.Module) -> None:
    coeffs = np.array([1.0, -2.0, 0.5, 0.25], np.float32)
    cuda.memcpy_to_symbol(mod, "coeffs", coeffs)
    x = np.linspace(-2, 2, 300, dtype=np.float32)
    dx, dy = cuda.to_device(x), cuda.empty(300, np.float32)
    mod.get_function("poly")(2, 256, (dx, dy, np.int32(300)))
    xs = x.astype(np.float64)
    want = 2.0 * (1.0 + xs * (-2.0 + xs * (0.5 + xs * 0.25)))
    np.testing.assert_allclose(dy.get(), want, rtol=1e-6, atol=1e-6)
    back = np.zeros(4, np.float32)
    cuda.memcpy_from_symbol(back, mod, "coeffs")
    np.testing.assert_array_equal(back, coeffs)
    # __device__ int, written by a kernel and read back through the symbol
    cuda.memcpy_to_symbol(mod, "counter", np.zeros(1, np.int32))
    mod.get_function("count")(4, 256, (np.int32(1000),))
    got = np.zeros(1, np.int32)
    cuda.memcpy_from_symbol(got, mod, "counter")
    assert int(got[0]) == 1000
    addr, size = mod.get_global("table")
    assert size == 32
    out = cuda.empty(8, np.float32)
    mod.get_function("read_table")(1, 8, (out,))
    assert out.get().tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    with pytest.raises(cuda.CudaError) as info:
        mod.get_global("nope")
    assert info.value.name == "cudaErrorInvalidSymbol"
    with pytest.raises(cuda.CudaError, match="do not fit"):
        cuda.memcpy_to_symbol(mod, "coeffs", np.zeros(5, np.float32))


def test_templates_through_name_expressions(mod: cuda.Module) -> None:
    for dtype, name in ((np.float32, "axpy<float>"), (np.float64, "axpy<double>")):
        x, y = np.arange(32, dtype=dtype), np.ones(32, dtype=dtype)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        mod.get_function(name)(1, 32, (dtype(3), dx, dy))
        np.testing.assert_array_equal(dy.get(), y + 3 * x)


# --- kernel attributes and dynamic shared memory --------------------------------------------------------


def test_kernel_attributes(mod: cuda.Module) -> None:
    tile = mod.get_function("tile_sum").attributes
    assert tile.shared_size_bytes == 1024 and tile.num_regs > 0
    assert tile.const_size_bytes == 16  # the module's __constant__ float coeffs[4]
    assert tile.binary_version == 90 and tile.ptx_version >= 80
    assert tile.max_dynamic_shared_size_bytes == 48 * 1024 - 1024
    assert mod.get_function("bounded").attributes.max_threads_per_block == 128
    assert mod.get_function("uses_local").attributes.local_size_bytes >= 64 * 4
    assert mod.get_function("poly").attributes.local_size_bytes == 0
    assert mod.get_function("tile_sum") is mod.get_function("tile_sum")


def test_dynamic_shared_memory_opt_in(mod: cuda.Module) -> None:
    k = mod.get_function("big_dynamic")
    n = 24 * 1024  # floats: 96 KiB of dynamic shared memory, above the 48 KiB default
    out = cuda.zeros(1, np.float32)
    with pytest.raises(cuda.InvalidLaunchConfig) as info:
        k(1, 256, (out, np.int32(n)), shared_mem=4 * n)
    assert info.value.name == "cudaErrorInvalidValue" and "max_dynamic_shared_size_bytes" in str(info.value)
    optin = cuda.current_device().sharedMemPerBlockOptin
    with pytest.raises(cuda.CudaError, match="sharedMemPerBlockOptin"):
        k.set_attribute("max_dynamic_shared_size_bytes", optin + 1)
    k.set_attribute("max_dynamic_shared_size_bytes", 4 * n)
    k(1, 256, (out, np.int32(n)), shared_mem=4 * n)
    assert float(out.get()[0]) == n - 1
    with pytest.raises(cuda.InvalidLaunchConfig):
        k(1, 256, (out, np.int32(n)), shared_mem=4 * n + 4)
    k.max_dynamic_shared_size_bytes = None


# --- occupancy -----------------------------------------------------------------------------------------


def blocks_per_sm_by_hand(regs: int, threads: int, smem: int) -> int:
    """The CUDA occupancy calculator for compute capability 9.0, written out independently."""
    warps = -(-threads // 32)
    regs_per_warp = -(-regs * 32 // 256) * 256
    by_regs = (65536 // 4 // regs_per_warp) * 4 // warps if regs else 32
    by_smem = 233472 // (-(-(smem + 1024) // 128) * 128)
    by_warps = 64 // warps
    return min(by_regs, by_smem, by_warps, 32)


@pytest.mark.parametrize(("kernel", "block", "dynamic"), [
    ("poly", 256, 0), ("poly", 1024, 0), ("poly", 96, 0), ("tile_sum", 256, 0),
    ("tile_sum", 256, 40 * 1024), ("big_dynamic", 512, 100 * 1024), ("bounded", 128, 0),
])
def test_occupancy_matches_the_hand_computed_rules(mod: cuda.Module, kernel: str, block: int, dynamic: int) -> None:
    k = mod.get_function(kernel)
    regs = k.registers()[0]
    smem = k.attributes.shared_size_bytes + dynamic
    assert cuda.occupancy_max_active_blocks_per_multiprocessor(k, block, dynamic) == \
        blocks_per_sm_by_hand(regs, block, smem)


def test_occupancy_max_potential_block_size(mod: cuda.Module) -> None:
    for name, dynamic in (("poly", 0), ("tile_sum", 30 * 1024), ("bounded", 0)):
        k = mod.get_function(name)
        regs, static = k.registers()[0], k.attributes.shared_size_bytes
        limit = k.attributes.max_threads_per_block
        # oracle: search every warp multiple from the top, keep the first maximum of resident threads
        best = max(range(limit, 0, -32), key=lambda b: (blocks_per_sm_by_hand(regs, b, static + dynamic) * b, b))
        min_grid, block = cuda.occupancy_max_potential_block_size(k, dynamic)
        assert block == best
        assert min_grid == blocks_per_sm_by_hand(regs, best, static + dynamic) * 132


# --- errors --------------------------------------------------------------------------------------------


def test_error_queries(mod: cuda.Module) -> None:
    assert cuda.get_error_name(700) == "cudaErrorIllegalAddress"
    assert cuda.get_error_string(1) == "invalid argument"
    assert cuda.get_last_error() == 0
    bad = cuda.Module.from_ptx(
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p) { .reg .b64 %rd<2>; ld.param.u64 %rd1, [p];"
        " st.global.u32 [%rd1+4096], 1; ret; }")
    bad.get_function("k")(1, 1, (cuda.zeros(1, np.int32),))
    with pytest.raises(cuda.DeviceFault):
        cuda.synchronize()
    assert cuda.get_last_error() == 700 and cuda.peek_at_last_error() == 700  # sticky
    cuda.current_device().reset()
    assert cuda.get_last_error() == 0


# The CUresult/cudaError_t values and HIP twins of ../shared/reference/apis.md §2.5 (from HIPIFY's maps).
REFERENCE_ERRORS = {
    "cudaErrorInvalidValue": (1, "hipErrorInvalidValue"), "cudaErrorMemoryAllocation": (2, "hipErrorOutOfMemory"),
    "cudaErrorInitializationError": (3, "hipErrorNotInitialized"),
    "cudaErrorCudartUnloading": (4, "hipErrorDeinitialized"),
    "cudaErrorInvalidConfiguration": (9, "hipErrorInvalidConfiguration"),
    "cudaErrorInvalidDeviceFunction": (98, "hipErrorInvalidDeviceFunction"),
    "cudaErrorNoDevice": (100, "hipErrorNoDevice"), "cudaErrorInvalidDevice": (101, "hipErrorInvalidDevice"),
    "cudaErrorInvalidKernelImage": (200, "hipErrorInvalidImage"),
    "cudaErrorDeviceUninitialized": (201, "hipErrorInvalidContext"),
    "cudaErrorAlreadyMapped": (208, "hipErrorAlreadyMapped"),
    "cudaErrorNoKernelImageForDevice": (209, "hipErrorNoBinaryForGpu"),
    "cudaErrorDeviceAlreadyInUse": (216, "hipErrorContextAlreadyInUse"),
    "cudaErrorInvalidPtx": (218, "hipErrorInvalidKernelFile"),
    "cudaErrorInvalidSource": (300, "hipErrorInvalidSource"),
    "cudaErrorFileNotFound": (301, "hipErrorFileNotFound"),
    "cudaErrorOperatingSystem": (304, "hipErrorOperatingSystem"),
    "cudaErrorInvalidResourceHandle": (400, "hipErrorInvalidHandle"),
    "cudaErrorSymbolNotFound": (500, "hipErrorNotFound"), "cudaErrorNotReady": (600, "hipErrorNotReady"),
    "cudaErrorIllegalAddress": (700, "hipErrorIllegalAddress"),
    "cudaErrorLaunchOutOfResources": (701, "hipErrorLaunchOutOfResources"),
    "cudaErrorLaunchTimeout": (702, "hipErrorLaunchTimeOut"),
    "cudaErrorPeerAccessAlreadyEnabled": (704, "hipErrorPeerAccessAlreadyEnabled"),
    "cudaErrorAssert": (710, "hipErrorAssert"), "cudaErrorLaunchFailure": (719, "hipErrorLaunchFailure"),
    "cudaErrorNotSupported": (801, "hipErrorNotSupported"), "cudaErrorUnknown": (999, "hipErrorUnknown"),
}


@pytest.mark.parametrize("name", sorted(REFERENCE_ERRORS))
def test_error_values_and_hip_twins_match_the_real_enums(name: str) -> None:
    e = cuda.CudaError(name, "x")
    assert (e.code, e.hip_name) == REFERENCE_ERRORS[name]
    assert cuda.get_error_name(e.code) == name
