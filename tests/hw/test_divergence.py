"""Divergence and reconvergence: every lane takes its own path and gets its own answer."""

import numpy as np
import pytest

import strata.cuda as cuda

SRC = r"""
__device__ __noinline__ int collatz_steps(int v) {
    int s = 0;
    while (v != 1) { v = (v & 1) ? 3 * v + 1 : v / 2; ++s; }
    return s;
}
extern "C" __global__ void nested(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int v = x[i], r;
    if (v % 3 == 0) { if (v % 2 == 0) r = 6; else r = 3; }
    else if (v % 5 == 0) r = 5;
    else { r = v & 1 ? -1 : -2; }
    y[i] = r;
}
extern "C" __global__ void trips(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int acc = 0;
        for (int k = 0; k < x[i]; ++k) {
            if (k % 7 == 3) continue;
            if (acc > 1000) break;
            acc += k;
        }
        y[i] = acc;
    }
}
extern "C" __global__ void early_return_barrier(const int* x, int* y) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = x[blockIdx.x * blockDim.x + t];
    if (s[t] < 0) return;                             // these threads leave before the barrier
    __syncthreads();
    y[blockIdx.x * blockDim.x + t] = s[(t + 1) % blockDim.x];
}
extern "C" __global__ void calls(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0) y[i] = collatz_steps(x[i]);
    else if (i < n) y[i] = -1;
}
"""


@pytest.fixture(scope="module")
def mod():
    return cuda.compile(SRC, name="divergence.cu")


def _ints(n, lo, hi, seed):
    return np.random.default_rng(seed).integers(lo, hi, n, dtype=np.int32)


def test_nested_if_else(mod):
    x = _ints(1000, 0, 100, 1)
    y = cuda.zeros(1000, np.int32)
    mod.get_function("nested")(8, 128, (cuda.to_device(x), y, np.int32(1000)))
    want = np.where(x % 3 == 0, np.where(x % 2 == 0, 6, 3), np.where(x % 5 == 0, 5, np.where(x & 1, -1, -2)))
    np.testing.assert_array_equal(y.get(), want.astype(np.int32))


def test_per_thread_trip_counts_break_continue(mod):
    x = _ints(700, 0, 80, 2)
    y = cuda.zeros(700, np.int32)
    r = mod.get_function("trips")(6, 128, (cuda.to_device(x), y, np.int32(700)))
    want = []
    for v in x:
        acc = 0
        for k in range(v):
            if k % 7 == 3:
                continue
            if acc > 1000:
                break
            acc += k
        want.append(acc)
    np.testing.assert_array_equal(y.get(), np.array(want, np.int32))
    assert r.counters.divergent_branches > 0 and r.counters.simt_efficiency < 1.0


def test_early_return_before_barrier(mod):
    x = _ints(256, -3, 100, 3)
    y = cuda.to_device(np.full(256, -7, np.int32))
    mod.get_function("early_return_barrier")(2, 128, (cuda.to_device(x), y))
    got = y.get()
    want = np.full(256, -7, np.int32)
    for b in range(2):
        for t in range(128):
            i = b * 128 + t
            if x[i] >= 0:
                want[i] = x[b * 128 + (t + 1) % 128]
    np.testing.assert_array_equal(got, want)


def test_device_function_calls_in_divergent_code(mod):
    x = _ints(300, -5, 60, 4)
    y = cuda.zeros(300, np.int32)
    mod.get_function("calls")(3, 128, (cuda.to_device(x), y, np.int32(300)))

    def steps(v):
        s = 0
        while v != 1:
            v = 3 * v + 1 if v & 1 else v // 2
            s += 1
        return s

    want = np.array([steps(int(v)) if v > 0 else -1 for v in x], np.int32)
    np.testing.assert_array_equal(y.get(), want)
