"""Atomics through generic pointers on the CDNA engine: a FLAT atomic's lanes are routed by aperture, as FLAT
loads and stores are (LDS, the lane's scratch, or global memory). clang emits them for `&shared_var` passed to a
non-inlined function, and everywhere at -O0; found by the conformance corpus compiled at -O0 (they went to
global memory and faulted)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.hw.amdgpu.decoder import decode

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")

SRC = """#include <hip/hip_runtime.h>
__device__ __noinline__ unsigned bump(unsigned* p, unsigned long long* q, unsigned v) {
    atomicAdd(q, (unsigned long long)v << 33);      // flat_atomic_add_x2
    atomicMax(p + 1, v);                             // flat_atomic_umax
    atomicCAS(p + 2, v, v + 1000u);                  // flat_atomic_cmpswap (returning)
    return atomicAdd(p, 1u);                         // flat_atomic_add, returning: a ticket
}
extern "C" __global__ void generic(unsigned* gout, unsigned long long* gout64, unsigned* tickets) {
    __shared__ unsigned s[3];
    __shared__ unsigned long long s64;
    int t = threadIdx.x;
    if (t == 0) { s[0] = 0; s[1] = 0; s[2] = 5; s64 = 0; }
    __syncthreads();
    unsigned mine[3] = {0, 0, (unsigned)t};          // private: the lane's own counters
    unsigned long long mine64 = 1;
    tickets[blockIdx.x * blockDim.x + t] = bump(s, &s64, (unsigned)t);
    bump(mine, &mine64, (unsigned)t);
    bump(gout + 4 * blockIdx.x, gout64 + blockIdx.x, (unsigned)t);
    __syncthreads();
    if (t == 0) { gout[4 * blockIdx.x + 3] = s[0] * 1000000u + s[1] * 1000u + s[2]; gout64[2 + blockIdx.x] = s64; }
    bool ok = mine[0] == 1u && mine[1] == (unsigned)t && mine[2] == (unsigned)t + 1000u &&
              mine64 == 1 + ((unsigned long long)t << 33);
    if (!ok) atomicAdd(&gout[2], 1u << 30);          // a lane whose private atomics went wrong marks the result
}"""


@needs_clang
def test_flat_atomics_reach_lds_scratch_and_global(amd: cuda.Device) -> None:
    mod = hip.compile(SRC)
    k = mod.code_object.kernels["generic"]
    names = {i.name for fn, _, code in k.functions for i in decode(code, fn, mod.code_object.processor)}
    assert {"flat_atomic_add", "flat_atomic_add_x2", "flat_atomic_umax", "flat_atomic_cmpswap"} <= names
    blocks, threads = 2, 96
    gout = np.zeros(4 * blocks, np.uint32)
    gout[2::4] = 5
    gout64 = np.zeros(2 + blocks, np.uint64)
    dg, dg64, dt = hip.to_device(gout), hip.to_device(gout64), hip.zeros(blocks * threads, np.uint32)
    mod.get_function("generic")(blocks, threads, (dg, dg64, dt))
    g, g64, tickets = dg.get().reshape(blocks, 4), dg64.get(), dt.get().reshape(blocks, threads)
    t = np.arange(threads, dtype=np.uint64)
    # global: one counter per block, the max of the lanes' values, CAS 5 -> 1005 by lane 5 only
    np.testing.assert_array_equal(g[:, :3], [[threads, threads - 1, 1005]] * blocks)
    np.testing.assert_array_equal(g64[:blocks], [int((t << np.uint64(33)).sum())] * blocks)
    # LDS: the same, and the returned tickets are a permutation of 0..threads-1 in each block
    np.testing.assert_array_equal(g[:, 3], [threads * 1000000 + (threads - 1) * 1000 + 1005] * blocks)
    np.testing.assert_array_equal(g64[2:], [int((t << np.uint64(33)).sum())] * blocks)
    np.testing.assert_array_equal(np.sort(tickets, axis=1), np.tile(np.arange(threads, dtype=np.uint32), (blocks, 1)))
