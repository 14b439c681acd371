"""Calls and recursion on gfx90a (MI250X), where scratch is reached with MUBUF through the swizzled private
segment buffer and clang keeps the stack and frame pointers (s32, s33) in wave-level units, 64 x the bytes
of each lane. Found by the conformance corpus on both paths: the engine added soffset as a lane's bytes, so
the first call's frame landed 64x too deep and faulted past the work-item's segment."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")

SRC = """#include <hip/hip_runtime.h>
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ bool is_odd(unsigned n);
__device__ __noinline__ bool is_even(unsigned n) { return n == 0 ? true : is_odd(n - 1); }
__device__ __noinline__ bool is_odd(unsigned n) { return n == 0 ? false : is_even(n - 1); }
__device__ __noinline__ int sum_down(int* buf, int n) {   // recursion through a pointer to the caller's frame
    if (n == 0) return buf[0];
    buf[n] += buf[n - 1];
    return buf[n] + sum_down(buf, n - 1);
}
extern "C" __global__ void calls(int n, int* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int buf[12];
    for (int k = 0; k < 12; ++k) buf[k] = t + k;
    out[3 * t + 0] = fib(t % 12);
    out[3 * t + 1] = is_even((unsigned)t) ? 1 : 0;
    out[3 * t + 2] = sum_down(buf, t % 12);
}"""


def _sum_down(buf: list[int], n: int) -> int:
    if n == 0:
        return buf[0]
    buf[n] += buf[n - 1]
    return buf[n] + _sum_down(buf, n - 1)


def _fib(n: int) -> int:
    return n if n < 2 else _fib(n - 1) + _fib(n - 2)


@needs_clang
def test_recursive_calls_keep_their_frames(mi250x: cuda.Device) -> None:
    mod = hip.compile(SRC)
    assert mod.arch == "gfx90a"
    n = 100
    out = hip.zeros(3 * n, np.int32)
    mod.get_function("calls")(1, 128, (np.int32(n), out))
    want = [[_fib(t % 12), int(t % 2 == 0), _sum_down([t + k for k in range(12)], t % 12)] for t in range(n)]
    np.testing.assert_array_equal(out.get().reshape(n, 3), np.array(want, np.int32))
