"""strata.hip as a face of strata.cuda: every public CUDA name has a HIP twin documented with its HIP C
name, the twins behave identically (memcpy kinds, streams, events, properties, kernels), the C-named
calls follow HIP's semantics, errors carry HIP names, and the headers agree with the Python side."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
import strata.cuda.device as cuda_device
import strata.hip as hip
from strata.errors import CUDA_ERRORS, CudaError
from strata.hip import api, capi
from strata.hip.compiler import header_version, include_dir

DOCS = Path(__file__).resolve().parents[2] / "docs" / "hip.md"
HIP_IDENT = re.compile(r"\b(hip\w+|HIPRTC_\w+)")

SOURCE = r"""
#include <hip/hip_runtime.h>
__constant__ float coeffs[2];
__device__ int hits;
extern "C" __global__ void affine(const float* x, float* y, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n) { y[i] = coeffs[0] * x[i] + coeffs[1]; atomicAdd(&hits, 1); }
}
extern "C" __global__ void dyn(float* out) {
    HIP_DYNAMIC_SHARED(float, buf)
    buf[hipThreadIdx_x] = hipThreadIdx_x;
    __syncthreads();
    out[hipThreadIdx_x] = buf[hipBlockDim_x - 1 - hipThreadIdx_x];
}
"""


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return hip.compile(SOURCE, name="face.hip")


# --- the mirror ------------------------------------------------------------------------------------------


def test_every_cuda_name_has_a_hip_twin_documented_with_its_hip_c_name() -> None:
    missing = [n for n in cuda.__all__ if not hasattr(hip, n) or n not in api.MAPPING]
    assert not missing, f"strata.cuda names without a HIP twin: {missing}"
    for name in cuda.__all__:
        twin, original = getattr(hip, name), getattr(cuda, name)
        hip_names = HIP_IDENT.findall(api.MAPPING[name][0])
        assert hip_names, f"{name}: MAPPING gives no HIP C name"
        if name in api.SHARED:  # the exceptions and MemcpyKind are strata.cuda's own objects
            assert twin is original
            continue
        assert twin is not original, f"hip.{name} is strata.cuda's object; it needs its own HIP docstring"
        doc = inspect.getdoc(twin) or ""
        for h in hip_names:
            assert h in doc, f"hip.{name}'s docstring does not name {h}"


def test_shared_errors_carry_the_hip_name_the_mapping_gives() -> None:
    for name in api.SHARED - {"MemcpyKind", "CompileError", "PTXSyntaxError", "UnsupportedInstruction"}:
        err = getattr(hip, name)()
        assert err.hip_name == api.MAPPING[name][0] or name == "CudaError"
    assert hip.HipError is cuda.CudaError
    assert {k.name for k in hip.MemcpyKind} == {"HostToHost", "HostToDevice", "DeviceToHost", "DeviceToDevice",
                                                "Default"}


def _params(fn: Any) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_twin_functions_have_the_cuda_signature() -> None:
    for name in cuda.__all__:
        original = getattr(cuda, name)
        if not inspect.isfunction(original):
            continue
        got, want = _params(getattr(hip, name)), _params(original)
        if name == "compile":  # the differences: HIP sources default to kernel.hip; `arch` picks an AMD target
            got = [p if p[0] != "name" else (p[0], p[1], "kernel.cu") for p in got if p[0] != "arch"]
        assert got == want, f"hip.{name}: {inspect.signature(getattr(hip, name))} != {inspect.signature(original)}"


def test_faces_are_one_type_with_their_cuda_twins(mod: cuda.Module) -> None:
    assert hip.Device(0) is cuda.Device(0) and isinstance(cuda.Device(0), hip.Device)
    assert hip.current_device() is cuda.current_device()
    s_hip, s_cuda = hip.Stream(), cuda.Stream()
    assert isinstance(s_cuda, hip.Stream) and isinstance(s_hip, cuda.Stream) and issubclass(hip.Stream, cuda.Stream)
    assert isinstance(hip.to_device(np.zeros(2)), hip.DeviceArray) and isinstance(hip.DeviceArray((1,), np.int8),
                                                                                   cuda.DeviceArray)
    assert isinstance(mod, hip.Module) and isinstance(hip.Module.from_ptx(mod.ptx), cuda.Module)
    k = mod.get_function("affine")
    assert isinstance(k, hip.Kernel) and isinstance(k.attributes, hip.FuncAttributes)
    assert isinstance(hip.get_device_properties(), hip.DeviceProperties)
    assert isinstance(hip.Event(timing=False), cuda.Event)
    assert not isinstance(s_cuda, hip.Event) and not issubclass(cuda.Stream, hip.Module)

    class MyStream(hip.Stream):  # a user's subclass of a face is an ordinary class
        pass

    assert isinstance(MyStream(), cuda.Stream) and not isinstance(s_cuda, MyStream)
    assert not issubclass(cuda.Stream, MyStream)


def test_docs_table_matches_the_mapping() -> None:
    rows = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(\w+)` \| `cuda\.(\w+)` \| (.+?) \| (.+?) \|$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    assert set(rows) == set(cuda.__all__), "docs/hip.md's table must list exactly strata.cuda's public names"
    for name, (twin, hip_c, cuda_c) in rows.items():
        assert twin == name and (hip_c, cuda_c) == api.MAPPING[name], name


# --- identical behaviour ---------------------------------------------------------------------------------


@pytest.mark.parametrize("f", [cuda, hip], ids=["cuda", "hip"])
def test_memcpy_every_kind(f: Any) -> None:
    """One program through strata.cuda or strata.hip."""
    host = np.random.default_rng(1).standard_normal(512).astype(np.float32)
    n = host.nbytes
    a, b = f.malloc(n), f.malloc(n)
    f.memcpy(a, host, n, f.MemcpyKind.HostToDevice)
    f.memcpy(b, a, n, "DeviceToDevice")
    out, h2 = np.zeros_like(host), np.zeros_like(host)
    f.memcpy(out, b, n, f.MemcpyKind.DeviceToHost)
    f.memcpy(h2, host, 400, "HostToHost")
    np.testing.assert_array_equal(out, host)
    np.testing.assert_array_equal(h2[:100], host[:100])
    f.memset(a, 0, 64)
    arr = f.empty(512, np.float32)
    f.memcpy(arr, a, n)  # Default: the direction from the pointers
    want = host.copy()
    want[:16] = 0
    np.testing.assert_array_equal(arr.get(), want)
    with pytest.raises(cuda.CudaError) as info:
        f.memcpy(out, host, 16, "DeviceToHost")
    assert info.value.name == "cudaErrorInvalidMemcpyDirection"
    assert info.value.hip_name == "hipErrorInvalidMemcpyDirection"
    f.free(a)
    f.free(b)


def test_hip_memcpy_kinds_by_hip_name() -> None:
    host = np.arange(64, dtype=np.int32)
    d = capi.hipMalloc(host.nbytes)
    capi.hipMemcpy(d, host, host.nbytes, "hipMemcpyHostToDevice")
    back = np.zeros_like(host)
    capi.hipMemcpy(back, d, host.nbytes, capi.hipMemcpyDeviceToHost)
    assert back.tolist() == host.tolist()
    e = capi.hipMalloc(host.nbytes)
    capi.hipMemcpyDtoD(e, d, host.nbytes)
    capi.hipMemsetAsync(e, 0xFF, 8, 0)
    capi.hipMemcpyDtoH(back, e, host.nbytes)
    assert back[:2].tolist() == [-1, -1] and back[2:].tolist() == host[2:].tolist()
    capi.hipMemcpyHtoD(e, np.zeros(64, np.int32), 256)
    capi.hipMemcpyDtoH(back, e, 256)
    assert not back.any()
    capi.hipFree(d)
    capi.hipFree(e)
    capi.hipFree(0)


def _timed_copy_and_kernel(f: Any, mod: cuda.Module) -> tuple[float, np.ndarray]:
    n = 1 << 14
    host = f.pinned_empty(n, np.float32)
    host[:] = np.linspace(0, 1, n, dtype=np.float32)
    f.memcpy_to_symbol(mod, "coeffs", np.array([2, 1], np.float32))
    x, y = f.empty(n, np.float32), f.empty(n, np.float32)
    s = f.Stream(non_blocking=True)
    start, end = f.Event(), f.Event()
    f.synchronize()
    start.record(s)
    f.memcpy_async(x, host, host.nbytes, "HostToDevice", stream=s)
    mod.get_function("affine")(n // 256, 256, (x, y, np.int32(n)), stream=s)
    out = f.pinned_empty(n, np.float32)
    f.memcpy_async(out, y, y.nbytes, "DeviceToHost", stream=s)
    end.record(s)
    end.synchronize()
    assert end.query() and s.query()
    return start.elapsed_time(end), np.array(out)


def test_streams_and_events_give_identical_results_and_elapsed_times(mod: cuda.Module) -> None:
    ms_cuda, out_cuda = _timed_copy_and_kernel(cuda, mod)
    ms_hip, out_hip = _timed_copy_and_kernel(hip, mod)
    # the modeled timeline does not care which face queued the work (up to the rounding of differences of
    # absolute timeline values, which earlier launches in the process move)
    assert ms_cuda > 0 and ms_hip == pytest.approx(ms_cuda, rel=1e-9)
    np.testing.assert_array_equal(out_hip, out_cuda)
    np.testing.assert_array_equal(out_hip, 2 * np.linspace(0, 1, 1 << 14, dtype=np.float32) + 1)


def test_properties_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_device, "_explicit", cuda_device._explicit)  # undo hipSetDevice afterwards
    assert hip.device_count() == cuda.device_count() and hip.get_device() == cuda.get_device() == 0
    assert hip.get_device_properties(0) == cuda.get_device_properties(0) == capi.hipGetDeviceProperties(0)
    p = capi.hipGetDeviceProperties()
    assert (p.warpSize, p.multiProcessorCount, p.gcnArchName) == (32, hip.Device(0).multiProcessorCount, "sm_90")
    assert hip.mem_get_info()[1] == capi.hipMemGetInfo()[1] == p.totalGlobalMem
    assert capi.hipGetDeviceCount() == hip.device_count()
    capi.hipSetDevice(0)
    assert capi.hipGetDevice() == 0


def test_kernel_attributes_and_occupancy_match(mod: cuda.Module) -> None:
    k = capi.hipModuleGetFunction(mod, "affine")
    assert capi.hipFuncGetAttributes(k) == k.attributes
    for block in (64, 256, 1024):
        assert capi.hipOccupancyMaxActiveBlocksPerMultiprocessor(k, block) == \
            cuda.occupancy_max_active_blocks_per_multiprocessor(k, block) == \
            capi.hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(k, block)
    assert capi.hipOccupancyMaxPotentialBlockSize(k) == cuda.occupancy_max_potential_block_size(k)
    assert capi.hipOccupancyMaxPotentialBlockSize(k, 0, 128)[1] == 128


# --- the C-named calls -----------------------------------------------------------------------------------


def test_module_load_launch_and_symbols_by_c_names(mod: cuda.Module) -> None:
    m = capi.hipModuleLoadData(mod.ptx.encode())  # a code object: PTX on this platform
    f = capi.hipModuleGetFunction(m, "affine")
    ptr, size = capi.hipModuleGetGlobal(m, "coeffs")
    assert size == 8 and ptr == m.get_global("coeffs")[0]
    capi.hipMemcpyToSymbol(m, "coeffs", np.array([3, -1], np.float32))
    n = 300
    x = hip.to_device(np.arange(n, dtype=np.float32))
    y = hip.zeros(n, np.float32)
    s = capi.hipStreamCreate()
    report = capi.hipModuleLaunchKernel(f, 2, 1, 1, 256, 1, 1, 0, s, (x, y, np.int32(n)))
    capi.hipStreamSynchronize(s)
    assert report.done and report.grid == (2, 1, 1) and report.block == (256, 1, 1)
    np.testing.assert_array_equal(y.get(), 3 * np.arange(n, dtype=np.float32) - 1)
    capi.hipLaunchKernelGGL(f, capi.dim3(3), capi.dim3(128), 0, 0, x, y, np.int32(n))
    capi.hipDeviceSynchronize()
    hits = np.zeros(1, np.int32)
    capi.hipMemcpyFromSymbol(hits, m, "hits")
    assert hits[0] == 2 * n
    capi.hipStreamDestroy(s)
    with pytest.raises(cuda.CudaError) as info:
        capi.hipModuleGetFunction(m, "nope")
    assert info.value.hip_name == "hipErrorInvalidDeviceFunction"


def test_dynamic_shared_memory_opt_in_by_c_name(mod: cuda.Module) -> None:
    k = capi.hipModuleGetFunction(mod, "dyn")
    out = hip.zeros(256, np.float32)
    capi.hipModuleLaunchKernel(k, 1, 1, 1, 256, 1, 1, 1024, None, (out,))
    capi.hipDeviceSynchronize()
    np.testing.assert_array_equal(out.get(), np.arange(255, -1, -1, dtype=np.float32))
    big = 64 * 1024
    with pytest.raises(hip.InvalidLaunchConfig):
        capi.hipModuleLaunchKernel(k, 1, 1, 1, 256, 1, 1, big, None, (out,))
    capi.hipFuncSetAttribute(k, capi.hipFuncAttributeMaxDynamicSharedMemorySize, big)
    assert capi.hipFuncGetAttributes(k).max_dynamic_shared_size_bytes == big
    capi.hipModuleLaunchKernel(k, 1, 1, 1, 256, 1, 1, big, None, (out,))
    capi.hipDeviceSynchronize()
    with pytest.raises(cuda.CudaError, match="unsupported attribute"):
        capi.hipFuncSetAttribute(k, 9, 50)


def test_events_and_streams_by_c_names() -> None:
    s = capi.hipStreamCreateWithFlags(capi.hipStreamNonBlocking)
    assert s.non_blocking and not capi.hipStreamCreateWithFlags(capi.hipStreamDefault).non_blocking
    start, stop = capi.hipEventCreate(), capi.hipEventCreateWithFlags(capi.hipEventBlockingSync)
    untimed = capi.hipEventCreateWithFlags(capi.hipEventDisableTiming)
    host = capi.hipHostMalloc(1 << 20)
    assert host.dtype == np.uint8 and host.nbytes == 1 << 20
    d = capi.hipMalloc(1 << 20)
    capi.hipEventRecord(start, s)
    capi.hipMemcpyAsync(d, host, 1 << 20, capi.hipMemcpyHostToDevice, s)
    capi.hipEventRecord(stop, s)
    capi.hipEventRecord(untimed, s)
    other = capi.hipStreamCreate()
    capi.hipStreamWaitEvent(other, stop)
    capi.hipStreamSynchronize(other)
    capi.hipEventSynchronize(stop)
    capi.hipEventSynchronize(untimed)  # the last work on s: only then must the stream query as done
    assert capi.hipEventQuery(stop) and capi.hipStreamQuery(s)
    ms = capi.hipEventElapsedTime(start, stop)
    assert ms == start.elapsed_time(stop) > 0
    with pytest.raises(cuda.CudaError) as info:
        capi.hipEventElapsedTime(start, untimed)
    assert info.value.hip_name == "hipErrorInvalidHandle"
    with pytest.raises(cuda.CudaError) as info:
        capi.hipEventElapsedTime(capi.hipEventCreate(), stop)  # never recorded
    assert info.value.hip_name == "hipErrorInvalidHandle"
    capi.hipStreamSynchronize(0)  # the null stream
    capi.hipEventDestroy(start)
    capi.hipFree(d)
    for bad in (lambda: capi.hipStreamCreateWithFlags(4),
                lambda: capi.hipEventCreateWithFlags(capi.hipEventInterprocess),
                lambda: capi.hipHostMalloc(16, 2), lambda: capi.hipStreamWaitEvent(s, stop, 1),
                lambda: capi.hipEventRecord(stop, 7)):
        with pytest.raises(cuda.CudaError):
            bad()


def test_driver_api_spellings(mod: cuda.Module, tmp_path: Path) -> None:
    capi.hipInit(0)
    assert capi.hipDeviceGet(0) == 0
    props = cuda.get_device_properties(0)
    assert capi.hipDeviceGetName(0) == props.name and capi.hipDeviceTotalMem(0) == props.totalGlobalMem
    assert capi.hipDeviceComputeCapability(0) == (props.major, props.minor)
    assert capi.hipDriverGetVersion() == capi.hipRuntimeGetVersion() == hip.HIP_VERSION
    with pytest.raises(cuda.CudaError) as info:
        capi.hipDeviceGet(cuda.device_count())
    assert info.value.hip_name == "hipErrorInvalidDevice"
    # a code object from a file, its kernel's attributes one by one
    (tmp_path / "face.ptx").write_text(mod.ptx, encoding="utf-8")
    m = capi.hipModuleLoad(tmp_path / "face.ptx")
    k = capi.hipModuleGetFunction(m, "affine")
    attrs = k.attributes
    assert capi.hipFuncGetAttribute(capi.HIP_FUNC_ATTRIBUTE_NUM_REGS, k) == attrs.num_regs
    assert capi.hipFuncGetAttribute(capi.HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, k) == attrs.max_threads_per_block
    assert capi.hipFuncGetAttribute(capi.HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, k) == attrs.const_size_bytes == 8
    assert capi.hipFuncGetAttribute(capi.HIP_FUNC_ATTRIBUTE_BINARY_VERSION, k) == 10 * props.major + props.minor
    with pytest.raises(cuda.CudaError):
        capi.hipFuncGetAttribute(7, k)  # CACHE_MODE_CA: not modeled
    capi.hipModuleUnload(m)
    with pytest.raises(cuda.CudaError) as info:
        capi.hipModuleLoad(tmp_path / "missing.ptx")
    assert info.value.hip_name == "hipErrorFileNotFound"
    # asynchronous driver-style copies on a stream
    s = capi.hipStreamCreate()
    host = capi.hipHostMalloc(4096).view(np.int32)
    host[:] = np.arange(1024, dtype=np.int32)
    a, b = capi.hipMalloc(4096), capi.hipMalloc(4096)
    back = capi.hipHostMalloc(4096).view(np.int32)
    capi.hipMemcpyHtoDAsync(a, host, 4096, s)
    capi.hipMemcpyDtoDAsync(b, a, 4096, s)
    capi.hipMemcpyDtoHAsync(back, b, 4096, s)
    capi.hipStreamSynchronize(s)
    assert back.tolist() == list(range(1024))
    capi.hipHostFree(host)
    capi.hipFree(a)
    capi.hipFree(b)
    assert capi.hipDrvGetErrorName(701) == capi.hipGetErrorName(701) == "hipErrorLaunchOutOfResources"
    assert capi.hipDrvGetErrorString(701) == cuda.get_error_string(701)


# --- errors ----------------------------------------------------------------------------------------------


def test_errors_carry_hip_names(mod: cuda.Module, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda_device, "_explicit", cuda_device._explicit)
    with pytest.raises(hip.OutOfMemoryError) as oom:
        capi.hipMalloc(1 << 50)
    assert (oom.value.hip_name, oom.value.code) == ("hipErrorOutOfMemory", capi.hipErrorOutOfMemory)
    with pytest.raises(hip.InvalidLaunchConfig) as cfg:
        mod.get_function("affine")(1, 2048, (hip.zeros(1), hip.zeros(1), np.int32(1)))
    assert cfg.value.hip_name == "hipErrorInvalidConfiguration"
    with pytest.raises(hip.HipError) as dev:
        capi.hipSetDevice(99)
    assert dev.value.hip_name == "hipErrorInvalidDevice"
    with pytest.raises(hip.PTXSyntaxError):
        capi.hipModuleLoadData("this is not a code object")


def test_sticky_fault_through_the_hip_error_queries() -> None:
    bad = capi.hipModuleLoadData(
        ".version 8.0\n.target sm_90\n.address_size 64\n"
        ".visible .entry k(.param .u64 p) { .reg .b64 %rd<2>; ld.param.u64 %rd1, [p];"
        " st.global.u32 [%rd1+4096], 1; ret; }")
    capi.hipModuleLaunchKernel(capi.hipModuleGetFunction(bad, "k"), 1, 1, 1, 1, 1, 1, 0, 0, (hip.zeros(1, np.int32),))
    with pytest.raises(hip.DeviceFault) as info:
        capi.hipDeviceSynchronize()
    assert info.value.hip_name == "hipErrorIllegalAddress"
    assert capi.hipGetLastError() == capi.hipPeekAtLastError() == capi.hipErrorIllegalAddress
    assert capi.hipGetErrorName(capi.hipGetLastError()) == "hipErrorIllegalAddress"
    assert capi.hipGetErrorString(700) == cuda.get_error_string(700)
    capi.hipDeviceReset()
    assert capi.hipGetLastError() == capi.hipSuccess == 0


def test_get_error_name_is_the_hip_twin_of_cudas() -> None:
    for cuda_name, (code, hip_name) in CUDA_ERRORS.items():
        assert cuda.get_error_name(code) == cuda_name
        if hip_name is None:  # HIP has no such code
            assert hip.get_error_name(code) == "hipErrorUnknown"
            continue
        assert hip.get_error_name(code) == capi.hipGetErrorName(code) == hip_name
        assert capi.hipError_t[hip_name] == code
    assert hip.get_error_name(12345) == "hipErrorUnknown"


# --- headers and Python agree ----------------------------------------------------------------------------


def _header(name: str) -> str:
    return (include_dir() / "hip" / name).read_text(encoding="utf-8")


def _enum(text: str, enum: str) -> dict[str, int]:
    body = re.search(r"typedef enum " + enum + r" \{(.*?)\}", text, re.S)
    assert body is not None
    return {k: int(v) for k, v in re.findall(r"(\w+) = (\d+)", body.group(1))}


def test_header_enums_and_flags_match_python() -> None:
    api_h = _header("hip_runtime_api.h")
    errors = _enum(api_h, "hipError_t")
    assert errors["hipSuccess"] == 0 and len(errors) > 25
    for name, value in errors.items():
        assert capi.hipError_t[name] == value, name
    kinds = _enum(api_h, "hipMemcpyKind")
    assert kinds == {f"hipMemcpy{k.name}": int(k) for k in hip.MemcpyKind}
    for name, value in re.findall(r"#define (hip(?:Stream|Event)\w+) (0x[0-9a-f]+)", api_h):
        assert getattr(capi, name) == int(value, 16), name
    assert header_version() == (hip.compiler.HIP_VERSION_MAJOR, hip.compiler.HIP_VERSION_MINOR,
                                hip.compiler.HIP_VERSION_PATCH)
    assert capi.hipRuntimeGetVersion() == hip.HIP_VERSION


def test_every_hip_name_strata_raises_is_a_real_hip_error() -> None:
    declared = _enum(_header("hip_runtime_api.h"), "hipError_t")
    raised = {CudaError(name).hip_name for name in CUDA_ERRORS}  # twins, and fallbacks where HIP has none
    invented = sorted(hip_name for hip_name in raised if hip_name not in declared)
    assert not invented, invented


def test_headers_ship_in_the_package() -> None:
    import importlib.resources

    root = importlib.resources.files("strata.hip") / "include" / "hip"
    for name in ("hip_runtime.h", "hip_runtime_api.h", "hip_common.h", "hip_version.h", "hip_fp16.h", "hip_bf16.h",
                 "hip_bfloat16.h", "hip_math_constants.h", "hip_vector_types.h", "hip_complex.h",
                 "device_functions.h", "driver_types.h"):
        assert root.joinpath(name).is_file(), name
    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"hip/include/hip/*.h"' in pyproject
