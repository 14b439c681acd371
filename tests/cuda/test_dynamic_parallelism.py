"""Dynamic parallelism (CDP2): kernels launching kernels, compiled by NVRTC (`-rdc=true` is added for
sources with `<<<`), run by the device runtime (hw/isa/device_runtime.py).

Checks use NumPy oracles and CUDA's ordering guarantees only: a child sees its parent's writes made
before the launch, tail launches run after the parent and its other work, in launch order; errors
come back through cudaGetLastError with CUDA's codes.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace

SRC = r"""
__global__ void scale_slice(float* y, const float* x, int lo, int hi, float a) {
    int i = lo + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < hi) y[i] = a * x[i];
}

extern "C" __global__ void parent_scale(float* y, const float* x, int n, int per_block) {
    if (threadIdx.x == 0) {
        int lo = blockIdx.x * per_block;
        int hi = min(n, lo + per_block);
        if (lo < hi) scale_slice<<<(hi - lo + 63) / 64, 64>>>(y, x, lo, hi, (float)(blockIdx.x + 1));
    }
}

extern "C" __global__ void rsum(const int* x, unsigned long long* out, int lo, int hi) {
    if (hi - lo <= 5) {
        unsigned long long s = 0;
        for (int i = lo; i < hi; ++i) s += x[i];
        atomicAdd(out, s);
        return;
    }
    int mid = (lo + hi) / 2;
    rsum<<<1, 1>>>(x, out, lo, mid);
    rsum<<<1, 1>>>(x, out, mid, hi);
}

// quicksort: partition in one thread, sort the halves in child grids (the left one in a stream it creates)
extern "C" __global__ void qsort_k(int* a, int lo, int hi) {
    if (hi - lo <= 8) {
        for (int i = lo + 1; i < hi; ++i) {
            int v = a[i], j = i - 1;
            while (j >= lo && a[j] > v) { a[j + 1] = a[j]; --j; }
            a[j + 1] = v;
        }
        return;
    }
    int pivot = a[hi - 1], store = lo;
    for (int i = lo; i < hi - 1; ++i)
        if (a[i] < pivot) { int t = a[i]; a[i] = a[store]; a[store] = t; ++store; }
    int t = a[store]; a[store] = a[hi - 1]; a[hi - 1] = t;
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    qsort_k<<<1, 1, 0, s>>>(a, lo, store);
    cudaStreamDestroy(s);
    qsort_k<<<1, 1>>>(a, store + 1, hi);
}

__global__ void stamp(int* order, int* counter, int slot, const int* flag, int* saw) {
    order[slot] = atomicAdd(counter, 1);
    saw[slot] = *flag;
}

extern "C" __global__ void ordering(int* order, int* counter, int* flag, int* saw) {
    stamp<<<1, 1, 0, cudaStreamTailLaunch>>>(order, counter, 0, flag, saw);  // launched first, runs last
    stamp<<<1, 1>>>(order, counter, 1, flag, saw);
    stamp<<<1, 1, 0, cudaStreamFireAndForget>>>(order, counter, 2, flag, saw);
    stamp<<<1, 1, 0, cudaStreamTailLaunch>>>(order, counter, 3, flag, saw);
    order[4] = atomicAdd(counter, 1);
    *flag = 42;  // after the launches: only the tail launches are sure to see it
}

__global__ void add_one(int* x, int k) { x[k] += 1; }

extern "C" __global__ void many(int* x, int* codes, int count) {
    for (int k = 0; k < count; ++k) {
        add_one<<<1, 1>>>(x, k);
        codes[k] = (int)cudaGetLastError();
    }
}

extern "C" __global__ void deep(int* reached, int* codes, int level, int stop) {
    reached[level] = 1;
    if (level < stop) {
        deep<<<1, 1>>>(reached, codes, level + 1, stop);
        codes[level] = (int)cudaGetLastError();
    }
}

extern "C" __global__ void bad_config(int* x, int* codes) {
    add_one<<<1, 2048>>>(x, 0);  // more threads per block than the device allows
    codes[0] = (int)cudaGetLastError();
    codes[1] = (int)cudaGetLastError();  // reading it cleared it
}

struct Affine { float scale; double shift; int stride; };

__global__ void block_sums(const float* x, float* out, Affine f, int n) {
    extern __shared__ float part[];  // dynamic shared memory sized by the launch
    int i = (blockIdx.x * blockDim.x + threadIdx.x) * f.stride;
    part[threadIdx.x] = i < n ? x[i] * f.scale + (float)f.shift : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

extern "C" __global__ void launch_sums(const float* x, float* out, int n) {
    Affine f{2.0f, 0.5, 2};
    int blocks = (n / 2 + 63) / 64;
    block_sums<<<blocks, 64, 64 * sizeof(float)>>>(x, out, f, n);
}

__global__ void write_at(int* x, int i) { x[i] = 1; }

extern "C" __global__ void every_thread(int* x, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) add_one<<<1, 1>>>(x, t);  // every thread launches its own child
}

extern "C" __global__ void faulty_child(int* x, int n) { write_at<<<1, 1>>>(x, n + 64); }
"""

ERR_INVALID_CONFIGURATION = 9
ERR_LAUNCH_MAX_DEPTH_EXCEEDED = 65
ERR_LAUNCH_PENDING_COUNT_EXCEEDED = 69


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SRC, name="dynamic_parallelism.cu")


@pytest.fixture(autouse=True)
def fresh_device() -> Iterator[None]:
    cuda.current_device().reset()
    yield
    cuda.current_device().reset()


def test_each_block_launches_a_child_grid(mod: cuda.Module) -> None:
    n, per_block = 1000, 300
    x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    y = cuda.zeros(n, np.float32)
    blocks = -(-n // per_block)
    report = mod.get_function("parent_scale")(blocks, 32, (y, cuda.to_device(x), np.int32(n), np.int32(per_block)))
    factor = (np.arange(n) // per_block + 1).astype(np.float32)
    np.testing.assert_array_equal(y.get(), factor * x)
    kids = report.children
    assert [c.kernel for c in kids] == ["_Z11scale_slicePfPKfiif"] * blocks
    assert all(c.stream == "per-block" and c.depth == 1 and c.block == (64, 1, 1) for c in kids)
    # the parent's counters include its children's (the dispatch covers the whole launch tree)
    assert report.counters.threads_launched == blocks * 32 + sum(c.result.counters.threads_launched for c in kids)


def test_recursive_sum_through_device_launches(mod: cuda.Module) -> None:
    x = np.random.default_rng(2).integers(0, 1000, 77).astype(np.int32)
    out = cuda.zeros(1, np.uint64)
    report = mod.get_function("rsum")(1, 1, (cuda.to_device(x), out, np.int32(0), np.int32(x.size)))
    assert int(out.get()[0]) == int(x.astype(np.int64).sum())
    depth = 0
    level = report.children
    while level:
        depth += 1
        level = [g for c in level for g in c.children]
    assert depth == 4  # 77 -> 38/39 -> 19/20 -> 9/10 -> 4/5: four levels of children


def test_quicksort_recursing_through_created_streams(mod: cuda.Module) -> None:
    a = np.random.default_rng(3).integers(-500, 500, 100).astype(np.int32)
    d = cuda.to_device(a)
    mod.get_function("qsort_k")(1, 1, (d, np.int32(0), np.int32(a.size)))
    np.testing.assert_array_equal(d.get(), np.sort(a))


def test_tail_launches_run_after_the_parent_and_its_other_children(mod: cuda.Module) -> None:
    order = cuda.zeros(5, np.int32)
    counter = cuda.zeros(1, np.int32)
    flag = cuda.zeros(1, np.int32)
    saw = cuda.zeros(4, np.int32)
    report = mod.get_function("ordering")(1, 1, (order, counter, flag, saw))
    o = order.get()
    assert sorted(o.tolist()) == [0, 1, 2, 3, 4]  # five distinct stamps
    assert o[0] > max(o[1], o[2], o[4]) and o[3] > o[0]  # tail launches last, in their launch order
    assert saw.get()[0] == saw.get()[3] == 42  # and they see everything the parent wrote
    assert [c.stream for c in report.children] == ["per-block", "fire-and-forget", "tail", "tail"]


def test_pending_launch_count_exceeded(mod: cuda.Module) -> None:
    dev = cuda.current_device()
    assert dev.get_limit("cudaLimitDevRuntimePendingLaunchCount") == 2048  # CUDA's default
    dev.set_limit("dev_runtime_pending_launch_count", 4)
    x = cuda.zeros(6, np.int32)
    codes = cuda.zeros(6, np.int32)
    mod.get_function("many")(1, 1, (x, codes, np.int32(6)))
    np.testing.assert_array_equal(codes.get(), [0, 0, 0, 0, ERR_LAUNCH_PENDING_COUNT_EXCEEDED,
                                                ERR_LAUNCH_PENDING_COUNT_EXCEEDED])
    np.testing.assert_array_equal(x.get(), [1, 1, 1, 1, 0, 0])  # the refused launches never ran


def test_nesting_depth_is_limited_to_24(mod: cuda.Module) -> None:
    stop = 30
    reached = cuda.zeros(stop + 1, np.int32)
    codes = cuda.zeros(stop + 1, np.int32)
    mod.get_function("deep")(1, 1, (reached, codes, np.int32(0), np.int32(stop)))
    r, c = reached.get(), codes.get()
    assert r[:25].all() and not r[25:].any()  # the host's grid is depth 0; its descendants reach depth 24
    assert not c[:24].any() and c[24] == ERR_LAUNCH_MAX_DEPTH_EXCEEDED


def test_an_invalid_child_configuration_is_an_error_code(mod: cuda.Module) -> None:
    x = cuda.zeros(1, np.int32)
    codes = cuda.to_device(np.full(2, -1, np.int32))
    report = mod.get_function("bad_config")(1, 1, (x, codes))
    np.testing.assert_array_equal(codes.get(), [ERR_INVALID_CONFIGURATION, 0])
    assert x.get()[0] == 0 and report.children == []


def test_child_with_a_struct_argument_and_dynamic_shared_memory(mod: cuda.Module) -> None:
    n = 500
    x = np.random.default_rng(4).standard_normal(n).astype(np.float32)
    blocks = (n // 2 + 63) // 64
    out = cuda.zeros(blocks, np.float32)
    report = mod.get_function("launch_sums")(1, 1, (cuda.to_device(x), out, np.int32(n)))
    idx = np.arange(blocks * 64) * 2
    vals = np.where(idx < n, x[np.minimum(idx, n - 1)] * np.float32(2) + np.float32(0.5), 0).astype(np.float32)
    np.testing.assert_allclose(out.get(), vals.reshape(blocks, 64).sum(axis=1), rtol=1e-5, atol=1e-5)
    assert report.children[0].shared_mem == 256


def test_every_thread_launches_a_child(mod: cuda.Module) -> None:
    n = 150
    x = cuda.to_device(np.arange(n, dtype=np.int32))
    report = mod.get_function("every_thread")(3, 64, (x, np.int32(n)))
    np.testing.assert_array_equal(x.get(), np.arange(n) + 1)
    assert len(report.children) == n


def test_a_fault_in_a_child_is_reported_with_the_child_kernel(mod: cuda.Module) -> None:
    x = cuda.zeros(16, np.int32)
    with pytest.raises(cuda.DeviceFault) as err:
        mod.get_function("faulty_child")(1, 1, (x, np.int32(16))).wait()
    assert "write_at" in str(err.value)
    assert cuda.current_device().file.gpu.runtime.pending == 0  # nothing of the faulted tree is left waiting


def test_children_appear_in_the_trace_under_their_parent(mod: cuda.Module) -> None:
    x = np.arange(12, dtype=np.int32)
    out = cuda.zeros(1, np.uint64)
    with trace.record() as rec:
        mod.get_function("rsum")(1, 1, (cuda.to_device(x), out, np.int32(0), np.int32(x.size))).wait()
    runs = [e for e in rec.events if e.layer == "L0" and e.name == "execute"]
    top = [e for e in runs if "parent" not in e.args]
    kids = [e for e in runs if "parent" in e.args]
    assert len(top) == 1 and len(kids) == 6  # 12 -> 6/6 -> 3/3/3/3
    assert all(e.args["device_launch"] and e.args["parent"] == "rsum" for e in kids)
    assert sorted(e.args["depth"] for e in kids) == [1, 1, 2, 2, 2, 2]
    assert all(top[0].start <= e.start and e.end <= top[0].end for e in kids)  # nested in the parent's span
