"""memcheck: every bad access stops the kernel with compute-sanitizer's facts, and nothing else is hurt."""

import numpy as np
import pytest

import strata.cuda as cuda

SRC = r"""
extern "C" __global__ void read_past(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) y[i < n ? i : 0] = x[i];          // i == n reads one past the end
}
extern "C" __global__ void write_past(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n + 3) y[i] = 1.0f;                      // three lanes write past the end
}
extern "C" __global__ void shared_oob(float* y, int k) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    y[threadIdx.x] = s[threadIdx.x + k];             // k > 0 runs off the 256-byte array
}
extern "C" __global__ void shared_oob_write(float* y, int k) {
    __shared__ float s[64];
    s[threadIdx.x * k] = 1.0f;                       // k = 2: threads 32.. write past the end
    __syncthreads();
    y[threadIdx.x] = s[threadIdx.x];
}
extern "C" __global__ void misaligned(char* p) {
    *(float*)(p + 1 + 4 * threadIdx.x) = 2.0f;
}
extern "C" __global__ void fill(float* y, float v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = v;
}
"""


@pytest.fixture(scope="module")
def mod():
    return cuda.compile(SRC, name="memcheck.cu")


def test_global_read_out_of_bounds_report(mod):
    x = cuda.to_device(np.arange(100, dtype=np.float32))
    y = cuda.zeros(100, np.float32)
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("read_past")(1, 128, (x, y, np.int32(100))).wait()
    e = ei.value
    assert e.name == "cudaErrorIllegalAddress" and e.hip_name == "hipErrorIllegalAddress"
    r = e.report
    assert r["kernel"] == "read_past" and r["access"] == "read" and r["space"] == "global"
    assert r["size"] == 4 and r["address"] == x.ptr + 400
    assert r["block"] == (0, 0, 0) and r["thread"] == (100, 0, 0)
    assert r["source"].endswith("memcheck.cu:4")
    assert isinstance(r["ptx_line"], int) and r["ptx_line"] > 0
    assert "0 bytes after the end of allocation" in r["nearest"] and f"{x.ptr:#x}" in r["nearest"]
    assert "thread (100, 0, 0) in block (0, 0, 0)" in str(e)


def test_global_write_out_of_bounds_and_memory_intact(mod):
    y = cuda.zeros(64, np.float32)
    keep = cuda.to_device(np.arange(1000, dtype=np.float32))
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("write_past")(1, 96, (y, np.int32(64)))
        cuda.synchronize()  # the fault is reported at the next synchronizing call
    assert ei.value.report["access"] == "write"
    assert ei.value.report["thread"] == (64, 0, 0)
    # memory the kernel did not write is intact (read below the runtime: the context is faulted)
    hbm = cuda.current_device().file.gpu.memory
    np.testing.assert_array_equal(np.frombuffer(hbm.read(keep.ptr, 4000), np.float32),
                                  np.arange(1000, dtype=np.float32))
    with pytest.raises(cuda.DeviceFault):  # the error is sticky until the device is reset
        keep.get()
    cuda.current_device().reset()
    # the device is usable again
    out = cuda.zeros(10, np.float32)
    mod.get_function("fill")(1, 32, (out, np.float32(3), np.int32(10)))
    np.testing.assert_array_equal(out.get(), np.full(10, 3, np.float32))


def test_shared_out_of_bounds_read(mod):
    y = cuda.zeros(64, np.float32)
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("shared_oob")(2, 64, (y, np.int32(8))).wait()
    r = ei.value.report
    assert r["space"] == "shared" and r["access"] == "read" and r["size"] == 4
    assert r["thread"] == (56, 0, 0) and r["address"] == 256
    assert "shared memory is 256 bytes" in str(ei.value)


def test_shared_out_of_bounds_write(mod):
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("shared_oob_write")(1, 64, (cuda.zeros(64, np.float32), np.int32(2))).wait()
    assert ei.value.report["access"] == "write" and ei.value.report["thread"] == (32, 0, 0)


def test_misaligned_access(mod):
    buf = cuda.zeros(1024, np.uint8)
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("misaligned")(1, 32, (buf,)).wait()
    assert ei.value.name == "cudaErrorMisalignedAddress"
    assert ei.value.report["reason"] == "misaligned" and ei.value.report["address"] == buf.ptr + 1


def test_use_after_free(mod):
    y = cuda.zeros(256, np.float32)
    ptr = y.ptr
    y.free()
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("fill")(1, 32, (ptr, np.float32(1), np.int32(32))).wait()
    assert "freed allocation" in ei.value.report["nearest"]
    cuda.current_device().reset()
    with pytest.raises(cuda.CudaError):
        mod.get_function("fill")(1, 32, (y, np.float32(1), np.int32(32)))
