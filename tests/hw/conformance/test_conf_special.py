# Conformance: special registers and synchronisation: %tid/%ntid/%ctaid/%nctaid in 3-D launches,
# lane/warp ids, clock/clock64 monotonicity (+ nanosleep), bar.red (__syncthreads_count/and/or),
# memory fences in the "last block finishes the reduction" pattern, and device-side failures:
# __trap() and a failing assert() must surface as strata.cuda.DeviceFault.
"""Special-register, barrier, fence and device-fault kernels."""

from __future__ import annotations

import numpy as np
import pytest
from conformance_lib import assert_exact, both_compilers, kernel, rng, run

GRID3D = kernel(
    "special.grid_block_3d_registers",
    r"""
extern "C" __global__ void ids(unsigned* out) {
    unsigned bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z;
    unsigned tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    unsigned block = (bz * gridDim.y + by) * gridDim.x + bx;
    unsigned local = (tz * blockDim.y + ty) * blockDim.x + tx;
    unsigned nthreads = blockDim.x * blockDim.y * blockDim.z;
    unsigned g = block * nthreads + local;
    unsigned* o = out + 8 * g;
    o[0] = tx | (ty << 8) | (tz << 16);
    o[1] = bx | (by << 8) | (bz << 16);
    o[2] = blockDim.x | (blockDim.y << 8) | (blockDim.z << 16);
    o[3] = gridDim.x | (gridDim.y << 8) | (gridDim.z << 16);
    o[4] = local % 32;                 // lane id (linear thread index within the block)
    o[5] = local / 32;                 // warp id within the block
    o[6] = g;
    o[7] = warpSize;
}
""",
)


@both_compilers
def test_grid_block_3d_registers(compiler: str) -> None:
    grid, block = (3, 2, 2), (5, 4, 3)
    nblocks, nthreads = 12, 60
    (out,) = run(GRID3D, compiler, "ids", grid, block, np.zeros(8 * nblocks * nthreads, np.uint32))
    exp = np.zeros((nblocks * nthreads, 8), np.uint32)
    for bz in range(2):
        for by in range(2):
            for bx in range(3):
                blk = (bz * 2 + by) * 3 + bx
                for tz in range(3):
                    for ty in range(4):
                        for tx in range(5):
                            loc = (tz * 4 + ty) * 5 + tx
                            g = blk * nthreads + loc
                            exp[g] = [
                                tx | ty << 8 | tz << 16,
                                bx | by << 8 | bz << 16,
                                5 | 4 << 8 | 3 << 16,
                                3 | 2 << 8 | 2 << 16,
                                loc % 32,
                                loc // 32,
                                g,
                                32,
                            ]
    assert_exact(out, exp.ravel())


CLOCK = kernel(
    "special.clock_monotonic",
    r"""
extern "C" __global__ void clocks(int iters, long long* c64, unsigned* c32, float* sink) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    long long a = clock64();
    unsigned a32 = (unsigned)clock();
    float acc = 0.0f;
    for (int k = 0; k < iters; ++k) acc = acc * 0.5f + (float)k;
    __nanosleep(100);
    long long b = clock64();
    unsigned b32 = (unsigned)clock();
    c64[2 * t] = a; c64[2 * t + 1] = b;
    c32[t] = b32 - a32;                 // wrap-safe elapsed 32-bit cycles
    sink[t] = acc;
}
""",
)


@both_compilers
def test_clock_monotonic(compiler: str) -> None:
    (c64, c32, _) = run(
        CLOCK,
        compiler,
        "clocks",
        2,
        64,
        np.int32(50),
        np.zeros(256, np.int64),
        np.zeros(128, np.uint32),
        np.zeros(128, np.float32),
    )
    a, b = c64[0::2], c64[1::2]
    assert np.all(a >= 0)
    assert np.all(b > a), "clock64 must advance across a 50-iteration loop"
    assert np.all(c32 > 0) and np.all(c32 < 2**31)


BAR_RED = kernel(
    "special.syncthreads_count_and_or",
    r"""
extern "C" __global__ void barred(const int* in, int* out) {
    int t = threadIdx.x;
    int v = in[blockIdx.x * blockDim.x + t];
    int cnt = __syncthreads_count(v > 0);       // bar.red.popc.u32
    int all = __syncthreads_and(v > -50);       // bar.red.and.pred
    int any = __syncthreads_or(v > 90);         // bar.red.or.pred
    if (t == 0) {
        out[3 * blockIdx.x] = cnt;
        out[3 * blockIdx.x + 1] = all != 0;
        out[3 * blockIdx.x + 2] = any != 0;
    }
}
""",
)


@both_compilers
def test_syncthreads_count_and_or(compiler: str) -> None:
    r = rng(120)
    v = r.integers(-100, 100, 4 * 96).astype(np.int32).reshape(4, 96)
    v[1] = np.abs(v[1]) % 80  # block 1: all > -50, none > 90
    v[2, 5] = 95
    (_, out) = run(BAR_RED, compiler, "barred", 4, 96, v.ravel(), np.zeros(12, np.int32))
    exp = np.stack([(v > 0).sum(axis=1), np.all(v > -50, axis=1), np.any(v > 90, axis=1)], axis=1)
    assert_exact(out, exp.astype(np.int32).ravel())


FENCE = kernel(
    "special.threadfence_last_block",
    r"""
__device__ unsigned int blocks_done = 0;
extern "C" __global__ void fence_sum(int n, const int* in, volatile long long* partial, long long* total) {
    __shared__ long long s[128];
    __shared__ bool is_last;
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();                              // publish before taking a ticket
        unsigned ticket = atomicInc(&blocks_done, gridDim.x);
        is_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (is_last && t == 0) {
        long long sum = 0;
        for (int b = 0; b < gridDim.x; ++b) sum += partial[b];
        total[0] = sum;
        blocks_done = 0;                              // ready for the next launch
        __threadfence_block();
        __threadfence_system();
    }
}
""",
)


@both_compilers
def test_threadfence_last_block(compiler: str) -> None:
    n = 1000
    x = rng(121).integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    for _ in range(2):  # twice: the kernel must reset its own counter
        (_, partial, total) = run(
            FENCE, compiler, "fence_sum", 8, 128, np.int32(n), x, np.zeros(8, np.int64), np.zeros(1, np.int64)
        )
        padded = np.zeros(1024, np.int64)
        padded[:n] = x
        assert_exact(partial, padded.reshape(8, 128).sum(axis=1))
        assert_exact(total, np.array([x.astype(np.int64).sum()]))


TRAP = kernel(
    "special.trap",
    r"""
extern "C" __global__ void trap_if(const int* flag, int* out) {
    out[threadIdx.x] = 1;
    if (flag[0] == 1 && threadIdx.x == 3) __trap();
}
""",
)


@both_compilers
def test_trap_raises_device_fault(compiler: str) -> None:
    import strata.cuda as cuda

    (_, out) = run(TRAP, compiler, "trap_if", 1, 32, np.zeros(1, np.int32), np.zeros(32, np.int32))
    assert_exact(out, np.ones(32, np.int32))  # not taken: no fault
    with pytest.raises(cuda.DeviceFault) as info:
        run(TRAP, compiler, "trap_if", 1, 32, np.ones(1, np.int32), np.zeros(32, np.int32))
    assert info.value.name in ("cudaErrorLaunchFailure", "cudaErrorIllegalInstruction")


ASSERT = kernel(
    "special.device_assert",
    r"""
extern "C" __global__ void check(int n, const int* v, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    assert(v[i] >= 0);            // __assertfail when violated
    out[i] = v[i] * 2;
}
""",
)


@both_compilers
def test_device_assert(compiler: str) -> None:
    import strata.cuda as cuda

    v = np.arange(64, dtype=np.int32)
    (_, out) = run(ASSERT, compiler, "check", 1, 64, np.int32(64), v, np.zeros(64, np.int32))
    assert_exact(out, v * 2)
    v[37] = -1
    with pytest.raises(cuda.DeviceFault) as info:
        run(ASSERT, compiler, "check", 1, 64, np.int32(64), v, np.zeros(64, np.int32))
    assert info.value.name == "cudaErrorAssert"
