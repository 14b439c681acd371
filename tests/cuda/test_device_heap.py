"""Device-side malloc/free and new/delete (the device heap, hw/heap.py), from NVRTC-compiled kernels.

Each numeric check has a NumPy oracle; memcheck must see heap blocks as allocations (overflow past a
block and use after free fault), the heap size follows cudaLimitMallocHeapSize with CUDA's rule that it
is fixed once a kernel that uses malloc has run, and a device reset clears it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import strata.cuda as cuda

SRC = r"""
extern "C" __global__ void per_thread(const int* counts, long long* sums, unsigned long long* ptrs, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int k = counts[t];
    long long* p = (long long*)malloc(k * sizeof(long long));
    ptrs[t] = (unsigned long long)p;
    if (p == nullptr) { sums[t] = -1; return; }
    for (int i = 0; i < k; ++i) p[i] = (long long)(i + 1) * (t + 3);
    long long s = 0;
    for (int i = 0; i < k; ++i) s += p[i];
    sums[t] = s;
    free(p);
}

struct Shape {
    __device__ virtual ~Shape() { atomicAdd(&log[0], 1); }
    __device__ virtual float area() const = 0;
    int* log;
};
struct Rect : Shape {
    float w, h;
    __device__ Rect(float w_, float h_, int* l) : w(w_), h(h_) { log = l; }
    __device__ ~Rect() override { atomicAdd(&log[1], 1); }
    __device__ float area() const override { return w * h; }
};
struct Circle : Shape {
    float r;
    __device__ Circle(float r_, int* l) : r(r_) { log = l; }
    __device__ ~Circle() override { atomicAdd(&log[2], 1); }
    __device__ float area() const override { return 3.0f * r * r; }
};

extern "C" __global__ void shapes(const float* x, float* area, int* log, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    Shape* s = (t % 3 == 0) ? (Shape*)new Circle(x[t], log) : (Shape*)new Rect(x[t], 2.0f, log);
    area[t] = s->area();
    delete s;  // virtual destructor: the derived one, then the base
}

extern "C" __global__ void grab(int bytes, unsigned long long* ptrs, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) ptrs[t] = (unsigned long long)malloc(bytes);
}

extern "C" __global__ void release(unsigned long long* ptrs, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) free((void*)ptrs[t]);
}

extern "C" __global__ void overflow(int index) {
    int* p = (int*)malloc(5 * sizeof(int));
    p[index] = 1;
    free(p);
}

extern "C" __global__ void use_after_free(int* out) {
    int* p = (int*)malloc(16);
    p[0] = 7;
    free(p);
    out[0] = p[0];
}

extern "C" __global__ void double_free() {
    void* p = malloc(16);
    free(p);
    free(p);
}

extern "C" __global__ void no_heap(float* y, float a, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) y[t] = a * t;
}
"""


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SRC, name="device_heap.cu")


@pytest.fixture(autouse=True)
def fresh_device() -> Iterator[None]:
    cuda.current_device().reset()  # the heap (and its size limit) is reserved at the first malloc launch
    yield
    cuda.current_device().reset()


def test_a_module_that_uses_malloc_loads_and_its_other_kernels_run(mod: cuda.Module) -> None:
    n = 100
    y = cuda.zeros(n, np.float32)
    mod.get_function("no_heap")(1, 128, (y, np.float32(0.5), np.int32(n)))
    np.testing.assert_array_equal(y.get(), 0.5 * np.arange(n, dtype=np.float32))


def test_per_thread_malloc_write_read_free(mod: cuda.Module) -> None:
    n = 300
    counts = (np.arange(n) * 7 % 23 + 1).astype(np.int32)
    sums = cuda.zeros(n, np.int64)
    ptrs = cuda.zeros(n, np.uint64)
    mod.get_function("per_thread")(3, 128, (cuda.to_device(counts), sums, ptrs, np.int32(n)))
    t = np.arange(n, dtype=np.int64)
    expect = (t + 3) * counts.astype(np.int64) * (counts.astype(np.int64) + 1) // 2
    np.testing.assert_array_equal(sums.get(), expect)
    p = ptrs.get()
    assert np.all(p != 0) and np.all(p % 16 == 0)  # each lane its own 16-byte-aligned block
    order = np.argsort(p)
    ends = p[order] + counts[order].astype(np.uint64) * 8
    assert np.all(ends[:-1] <= p[order][1:])  # blocks of one launch never overlap
    assert cuda.current_device().file.gpu.runtime.heap.live_blocks == 0  # every block was freed


def test_new_and_delete_through_a_virtual_destructor(mod: cuda.Module) -> None:
    n = 90
    x = np.linspace(0.5, 3.0, n).astype(np.float32)
    area = cuda.zeros(n, np.float32)
    log = cuda.zeros(3, np.int32)
    mod.get_function("shapes")(1, 96, (cuda.to_device(x), area, log, np.int32(n)))
    circle = np.arange(n) % 3 == 0
    expect = np.where(circle, np.float32(3.0) * x * x, x * np.float32(2.0)).astype(np.float32)
    np.testing.assert_allclose(area.get(), expect, rtol=1e-6)
    np.testing.assert_array_equal(log.get(), [n, n - circle.sum(), circle.sum()])


def test_heap_exhaustion_returns_null_and_free_makes_room(mod: cuda.Module) -> None:
    dev = cuda.current_device()
    limit = 64 * 1024
    dev.set_limit("cudaLimitMallocHeapSize", limit)
    assert dev.get_limit("malloc_heap_size") == limit
    n, size = 128, 1024
    ptrs = cuda.zeros(n, np.uint64)
    mod.get_function("grab")(1, n, (np.int32(size), ptrs, np.int32(n)))
    p = ptrs.get()
    got = int(np.count_nonzero(p))
    assert 0 < got < n and got * size <= limit  # the first fit, the rest NULL
    assert np.all(p[:got] != 0) and np.all(p[got:] == 0)  # lanes are served in order
    big = cuda.zeros(1, np.uint64)
    mod.get_function("grab")(1, 1, (np.int32(limit + 16), big, np.int32(1)))
    assert big.get()[0] == 0  # more than the whole heap
    mod.get_function("release")(1, n, (ptrs, np.int32(n)))  # free(NULL) is a no-op for the others
    again = cuda.zeros(n, np.uint64)
    mod.get_function("grab")(1, n, (np.int32(size), again, np.int32(n)))
    assert int(np.count_nonzero(again.get())) == got  # the space came back
    with pytest.raises(cuda.CudaError) as err:  # CUDA: fixed once a kernel that uses malloc was launched
        dev.set_limit("cudaLimitMallocHeapSize", 1 << 20)
    assert err.value.name == "cudaErrorInvalidValue"


def test_reset_clears_the_heap_and_restores_the_default_limit(mod: cuda.Module) -> None:
    dev = cuda.current_device()
    assert dev.get_limit("cudaLimitMallocHeapSize") == 8 << 20  # CUDA's default
    assert dev.get_limit("hipLimitMallocHeapSize") == 8 << 20  # HIP's name for the same limit
    dev.set_limit("malloc_heap_size", 32 * 1024)
    ptrs = cuda.zeros(64, np.uint64)
    mod.get_function("grab")(1, 64, (np.int32(256), ptrs, np.int32(64)))
    assert np.count_nonzero(ptrs.get()) == 64
    assert dev.file.gpu.runtime.heap.live_blocks == 64
    dev.reset()
    assert dev.file.gpu.runtime.heap.live_blocks == 0
    assert dev.get_limit("malloc_heap_size") == 8 << 20
    dev.set_limit("malloc_heap_size", 1 << 20)  # settable again until the next malloc launch
    assert dev.get_limit("malloc_heap_size") == 1 << 20


@pytest.mark.parametrize("index", [5, 8])
def test_writing_past_a_heap_block_faults(mod: cuda.Module, index: int) -> None:
    with pytest.raises(cuda.DeviceFault) as err:
        mod.get_function("overflow")(1, 1, (np.int32(index),)).wait()
    msg = str(err.value)
    assert "device malloc" in msg and "after the end of" in msg, msg


def test_use_after_free_faults(mod: cuda.Module) -> None:
    out = cuda.zeros(1, np.int32)
    with pytest.raises(cuda.DeviceFault) as err:
        mod.get_function("use_after_free")(1, 1, (out,)).wait()
    assert "freed allocation" in str(err.value) and "device malloc" in str(err.value), str(err.value)


def test_double_free_faults(mod: cuda.Module) -> None:
    with pytest.raises(cuda.DeviceFault) as err:
        mod.get_function("double_free")(1, 1, ()).wait()
    assert "already freed" in str(err.value)


RUNTIME_API_SRC = r"""
extern "C" __global__ void runtime_api(int* out, int bytes) {
    int* p = nullptr;
    out[0] = (int)cudaMalloc((void**)&p, bytes);  // the device runtime's cudaMalloc: a device heap block
    if (p != nullptr) { p[0] = 11; p[bytes / 4 - 1] = 22; out[1] = p[0] + p[bytes / 4 - 1]; }
    out[2] = (int)cudaFree(p);
    int dev = -1, sms = 0;
    cudaGetDevice(&dev);
    out[3] = dev;
    out[4] = (int)cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    out[5] = sms;
}
"""


def test_device_side_cuda_malloc_and_runtime_queries() -> None:
    mod = cuda.compile(RUNTIME_API_SRC, name="device_runtime_api.cu")  # -rdc=true is added for the runtime API
    out = cuda.to_device(np.full(6, -1, np.int32))
    mod.get_function("runtime_api")(1, 1, (out, np.int32(64)))
    sms = cuda.current_device().properties().multiProcessorCount
    np.testing.assert_array_equal(out.get(), [0, 33, 0, 0, 0, sms])
    huge = cuda.to_device(np.full(6, -1, np.int32))
    mod.get_function("runtime_api")(1, 1, (huge, np.int32(64 << 20)))  # more than the 8 MiB heap
    assert huge.get()[0] == 2 and huge.get()[1] == -1  # cudaErrorMemoryAllocation, p stays NULL


def test_freed_neighbours_coalesce_and_are_reused_first_fit() -> None:
    from strata.hw.heap import DeviceHeap
    from strata.hw.memory import GLOBAL_BASE, DeviceMemory

    mem = DeviceMemory(1 << 20)
    heap = DeviceHeap(mem, reserve=lambda n: GLOBAL_BASE)
    heap.set_limit(1024)
    a, b, c = heap.malloc(np.array([100, 100, 100], dtype=np.uint64)).tolist()
    assert a < b < c and mem.allocation_at(a + 99) is not None and mem.allocation_at(a + 100) is None
    assert heap.malloc(np.array([1024], dtype=np.uint64))[0] == 0  # no room for it next to three blocks
    assert heap.free(np.array([a, b], dtype=np.uint64)).size == 0
    d = int(heap.malloc(np.array([200], dtype=np.uint64))[0])
    assert d == a  # the two freed neighbours merged into one span that fits 200 bytes, at the lowest address
    assert heap.free(np.array([b], dtype=np.uint64)).tolist() == [0]  # b is gone (inside d's span): refused
