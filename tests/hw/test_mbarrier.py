# Tests of the mbarrier family (src/strata/hw/isa/mbarrier.py) and the asynchronous copies that signal
# mbarriers (src/strata/hw/isa/async_copy.py): cuda::barrier (phase flips in a loop), cuda::pipeline with
# thread and block scope (warp-specialized producers and consumers, which needs waiting lanes to yield),
# cuda::memcpy_async with a barrier (cp.async.bulk + complete_tx), raw inline-PTX mbarrier operations
# (expect_tx/complete_tx, arrive_drop, pending_count, inval, test_wait, the state word read as data), and
# the error paths: a wait that can never complete (deadlock detection, and the watchdog inside a device
# function), an uninitialized barrier. Oracles: NumPy, and the PTX ISA's rules for the counts.
"""mbarrier, cuda::barrier, cuda::pipeline and cuda::memcpy_async from NVRTC kernels against NumPy oracles."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import pytest

import strata.cuda as cuda

SRC = r'''
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#pragma nv_diag_suppress static_var_with_dynamic_init

// Each of `rounds` iterations: write, arrive_and_wait, read the right neighbour, arrive_and_wait.
// Two barrier phases per round, so the phase parity flips 2 * rounds times.
extern "C" __global__ void barrier_rounds(const int* x, int* y, int rounds) {
    __shared__ int buf[128];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    int t = threadIdx.x, n = blockDim.x;
    if (t == 0) init(&bar, n);
    __syncthreads();
    int v = x[blockIdx.x * n + t];
    for (int r = 0; r < rounds; r++) {
        buf[t] = v;
        bar.arrive_and_wait();
        v = buf[(t + 1) % n] + r;
        bar.arrive_and_wait();
    }
    y[blockIdx.x * n + t] = v;
}

// A per-thread pipeline of depth 2: each thread streams its own column of `k` tiles through shared
// memory with cuda::memcpy_async and sums them.
extern "C" __global__ void thread_pipeline(const float* x, float* y, int k) {
    __shared__ float stage[2][128];
    int t = threadIdx.x, n = blockDim.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    float acc = 0.0f;
    for (int s = 0; s < 2 && s < k; s++) {
        pipe.producer_acquire();
        cuda::memcpy_async(&stage[s][t], &x[s * n + t], sizeof(float), pipe);
        pipe.producer_commit();
    }
    for (int i = 0; i < k; i++) {
        pipe.consumer_wait();
        acc += stage[i % 2][t] * (float)(i + 1);
        pipe.consumer_release();
        if (i + 2 < k) {
            pipe.producer_acquire();
            cuda::memcpy_async(&stage[i % 2][t], &x[(i + 2) * n + t], sizeof(float), pipe);
            pipe.producer_commit();
        }
    }
    y[t] = acc;
}

// Warp specialization with a block-scoped pipeline: warp 0 produces tiles of 32 floats into a 2-stage
// ring, warps 1..3 consume them (each adds its share). Consumers wait while the producer is on the other
// side of the branch, so the engine must let the waiting lanes yield.
extern "C" __global__ void specialized(const float* x, float* y, int k) {
    constexpr int stages = 2;
    __shared__ float ring[stages][32];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
    auto block = cg::this_thread_block();
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    auto role = warp == 0 ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
    auto pipe = cuda::make_pipeline(block, &state, role);
    float acc = 0.0f;
    if (role == cuda::pipeline_role::producer) {
        for (int i = 0; i < k; i++) {
            pipe.producer_acquire();
            cuda::memcpy_async(&ring[i % stages][lane], &x[i * 32 + lane], sizeof(float), pipe);
            pipe.producer_commit();
        }
    } else {
        for (int i = 0; i < k; i++) {
            pipe.consumer_wait();
            acc += ring[i % stages][lane] * (float)warp;
            pipe.consumer_release();
        }
        y[(warp - 1) * 32 + lane] = acc;
    }
}

// cuda::memcpy_async by a whole block with a barrier, a size of 4-byte elements the block does not divide:
// cp.async per element, then cp.async.mbarrier.arrive, then each thread's own arrival; three rounds.
extern "C" __global__ void group_copy(const float* x, float* y, int n) {
    __shared__ float tile[200];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    for (int r = 0; r < 3; r++) {
        cuda::memcpy_async(block, tile, x + r * n, sizeof(float) * n, bar);
        bar.arrive_and_wait();
        for (int i = threadIdx.x; i < n; i += blockDim.x) y[r * n + i] = tile[n - 1 - i];
        bar.arrive_and_wait();
    }
}

// cuda::memcpy_async of a 16-byte aligned size with a barrier: on sm_90 a cp.async.bulk that signals the
// barrier's transaction count (expect_tx by the issuing thread, complete_tx by the copy).
extern "C" __global__ void bulk_tile(const float* x, float* y) {
    __shared__ alignas(16) float tile[256];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    if (threadIdx.x == 0) init(&bar, blockDim.x);
    __syncthreads();
    if (threadIdx.x == 0)
        cuda::memcpy_async(tile, x + blockIdx.x * 256, cuda::aligned_size_t<16>(sizeof(tile)), bar);
    bar.arrive_and_wait();
    y[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x] * 3.0f;
}
'''

PTX_SRC = r'''
__device__ __forceinline__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void init(unsigned long long* b, unsigned n) {
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(smem(b)), "r"(n) : "memory");
}
__device__ __forceinline__ unsigned long long arrive(unsigned long long* b, unsigned c) {
    unsigned long long s;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(smem(b)), "r"(c) : "memory");
    return s;
}
__device__ __forceinline__ unsigned long long arrive_drop(unsigned long long* b) {
    unsigned long long s;
    asm volatile("mbarrier.arrive_drop.shared.b64 %0, [%1];" : "=l"(s) : "r"(smem(b)) : "memory");
    return s;
}
__device__ __forceinline__ unsigned pending(unsigned long long s) {
    unsigned c;
    asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(c) : "l"(s));
    return c;
}
__device__ __forceinline__ int test_parity(unsigned long long* b, unsigned parity) {
    unsigned r;
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(r) : "r"(smem(b)), "r"(parity) : "memory");
    return (int)r;
}
__device__ __forceinline__ int test_state(unsigned long long* b, unsigned long long s) {
    unsigned r;
    asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(r) : "r"(smem(b)), "l"(s) : "memory");
    return (int)r;
}
__device__ __forceinline__ void wait_parity(unsigned long long* b, unsigned parity) {
    unsigned r;
    do {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(r) : "r"(smem(b)), "r"(parity) : "memory");
    } while (!r);
}

// One thread walks a barrier through its rules and records what it sees (out[0..15]).
extern "C" __global__ void rules(int* out, unsigned long long* words) {
    __shared__ unsigned long long bar;
    init(&bar, 3);
    words[0] = bar;                                   // the state word, read as data
    unsigned long long s = arrive(&bar, 1);
    out[0] = pending(s);                              // 2 arrivals still pending
    out[1] = test_parity(&bar, 0);                    // phase 0 not complete
    out[2] = test_state(&bar, s);
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 64;" :: "r"(smem(&bar)) : "memory");
    s = arrive(&bar, 2);                              // arrivals done, 64 transaction bytes outstanding
    out[3] = pending(s);
    out[4] = test_parity(&bar, 0);                    // still incomplete: tx-count 64
    words[1] = bar;
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 48;" :: "r"(smem(&bar)) : "memory");
    out[5] = test_parity(&bar, 0);
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(smem(&bar)) : "memory");
    out[6] = test_parity(&bar, 0);                    // phase 0 complete now
    out[7] = test_state(&bar, s);
    out[8] = test_parity(&bar, 1);                    // phase 1 not yet
    words[2] = bar;
    s = arrive_drop(&bar);                            // expected count 3 -> 2 from the next phase on
    out[9] = pending(s);
    s = arrive(&bar, 2);                              // completes phase 1 (3 arrivals)
    out[10] = test_parity(&bar, 1);
    s = arrive(&bar, 1);
    out[11] = pending(s);                             // phase 2 expects 2 arrivals now
    s = arrive(&bar, 1);
    out[12] = test_parity(&bar, 0);                   // phase 2 (parity 0) complete
    // complete_tx before expect_tx: tx-count goes negative, the phase waits for the matching expect_tx
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 32;" :: "r"(smem(&bar)) : "memory");
    s = arrive(&bar, 2);
    out[13] = test_parity(&bar, 1);
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 32;" :: "r"(smem(&bar)) : "memory");
    out[14] = test_parity(&bar, 1);
    words[3] = bar;
    asm volatile("mbarrier.inval.shared.b64 [%0];" :: "r"(smem(&bar)) : "memory");
    words[4] = bar;                                   // after inval the bytes are plain shared memory again
}

// Lanes of one instruction arrive in lane order: each thread's state says how many arrivals were still
// pending after its own (`count` per thread, barrier expecting 2 * blockDim.x, so two phases complete).
extern "C" __global__ void lane_order(int* pend, int* phase_done) {
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0) init(&bar, 96);
    __syncthreads();
    unsigned long long s = arrive(&bar, 1 + threadIdx.x % 2);
    pend[threadIdx.x] = pending(s);
    __syncthreads();
    phase_done[threadIdx.x] = test_parity(&bar, 0) + 2 * test_parity(&bar, 1);
}

// Warp-specialized ring with raw mbarriers: warp 0 produces `k` values into a 2-slot ring (waiting on
// `empty`), warps 1..2 consume (waiting on `full`), each lane keeping a running sum.
extern "C" __global__ void ring(const int* x, int* y, int k) {
    __shared__ int slot[2][32];
    __shared__ unsigned long long full[2], empty[2];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; s++) { init(&full[s], 32); init(&empty[s], 64); }
    }
    __syncthreads();
    if (warp == 0) {
        for (int i = 0; i < k; i++) {
            int s = i % 2;
            if (i >= 2) wait_parity(&empty[s], ((i / 2) - 1) & 1);
            slot[s][lane] = x[i * 32 + lane];
            arrive(&full[s], 1);
        }
    } else {
        int acc = 0;
        for (int i = 0; i < k; i++) {
            int s = i % 2;
            wait_parity(&full[s], (i / 2) & 1);
            acc += slot[s][lane] * warp;
            arrive(&empty[s], 1);
        }
        y[(warp - 1) * 32 + lane] = acc;
    }
}

// Warps on one code path wait on different barriers: warp 1's barrier is complete, warp 0's needs warp 1
// to arrive after its own wait. Warp 1 must run ahead of the reconvergence point of the wait loop (where it
// would otherwise sit until warp 0's loop ends) to release warp 0.
extern "C" __global__ void run_ahead(int* out) {
    __shared__ unsigned long long bar[2];
    int warp = threadIdx.x / 32;
    if (threadIdx.x == 0) { init(&bar[0], 32); init(&bar[1], 32); }
    __syncthreads();
    if (warp == 1) arrive(&bar[1], 1);
    wait_parity(&bar[warp], 0);
    if (warp == 1) arrive(&bar[0], 1);
    wait_parity(&bar[0], 0);
    out[blockIdx.x * blockDim.x + threadIdx.x] = test_parity(&bar[0], 0) + 2 * test_parity(&bar[1], 0);
}

// cp.async.mbarrier.arrive: with .noinc its (asynchronous) arrival is one of the expected ones; without,
// it only delays the phase until the thread's copies land, and every thread still arrives itself. Nothing
// but the barrier completes the copies here (no cp.async.wait_group).
extern "C" __global__ void async_arrive(const int* x, int* out) {
    __shared__ int tile[64];
    __shared__ unsigned long long a, b;
    int t = threadIdx.x;
    if (t == 0) { init(&a, 64); init(&b, 64); }
    __syncthreads();
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(smem(&tile[t])), "l"(x + t) : "memory");
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(smem(&a)) : "memory");
    wait_parity(&a, 0);
    int v = tile[63 - t];
    __syncthreads();
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(smem(&tile[t])), "l"(x + 64 + t) : "memory");
    asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" :: "r"(smem(&b)) : "memory");
    int before = test_parity(&b, 0);
    __syncthreads();
    arrive(&b, 1);
    wait_parity(&b, 0);
    out[t] = v + tile[(t + 1) % 64] + 1000000 * before;
}

// mbarrier operations through generic addresses (no state space), which must point into shared memory.
extern "C" __global__ void generic_ops(int* out) {
    __shared__ unsigned long long g;
    unsigned long long* p = &g;
    if (threadIdx.x == 0) asm volatile("mbarrier.init.b64 [%0], %1;" :: "l"(p), "r"(blockDim.x) : "memory");
    __syncthreads();
    unsigned long long s;
    unsigned r;
    asm volatile("mbarrier.arrive.b64 %0, [%1];" : "=l"(s) : "l"(p) : "memory");
    asm volatile("{ .reg .pred q; mbarrier.test_wait.b64 q, [%1], %2; selp.u32 %0, 1, 0, q; }"
                 : "=r"(r) : "l"(p), "l"(s) : "memory");
    out[threadIdx.x] = (int)r + 10 * (int)pending(s);
}

extern "C" __global__ void global_barrier(unsigned long long* b) {
    asm volatile("mbarrier.init.b64 [%0], 1;" :: "l"(b) : "memory");
}

// 64 lanes arrive on a barrier of 16 in one instruction: four phases complete, in lane order.
extern "C" __global__ void many_phases(int* pend, int* same_phase) {
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0) init(&bar, 16);
    __syncthreads();
    unsigned long long s = arrive(&bar, 1);
    pend[threadIdx.x] = pending(s);
    same_phase[threadIdx.x] = test_state(&bar, s);  // the state's phase parity differs from the barrier's
}

// arrive.expect_tx: the arrival and the transaction bytes it announces, in one instruction.
extern "C" __global__ void expect_arrive(int* out) {
    __shared__ unsigned long long bar;
    init(&bar, 1);
    unsigned long long s;
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], 16;"
                 : "=l"(s) : "r"(smem(&bar)) : "memory");
    out[0] = pending(s);
    out[1] = test_parity(&bar, 0);
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(smem(&bar)) : "memory");
    out[2] = test_parity(&bar, 0);
}

// Four lanes complete 16 bytes each of a phase waiting for 32: the second lane completes the phase, the
// other two count against the next one (tx-count -32).
extern "C" __global__ void tx_lanes(unsigned long long* word) {
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0) {
        init(&bar, 1);
        asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], 32;" :: "r"(smem(&bar)) : "memory");
        arrive(&bar, 1);
    }
    __syncthreads();
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], 16;" :: "r"(smem(&bar)) : "memory");
    __syncthreads();
    if (threadIdx.x == 0) *word = bar;
}

extern "C" __global__ void no_complete(int* out) {
    __shared__ unsigned long long bar;
    init(&bar, 2);
    unsigned long long s;
    asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], 2;" : "=l"(s) : "r"(smem(&bar)) : "memory");
    out[0] = (int)pending(s);
}

// Too few arrivals: the barrier expects one more thread than the block has.
extern "C" __global__ void short_of_one(int* out) {
    __shared__ unsigned long long gate;
    if (threadIdx.x == 0) init(&gate, blockDim.x + 1);
    __syncthreads();
    arrive(&gate, 1);
    wait_parity(&gate, 0);
    out[threadIdx.x] = 1;
}

// The same hang, waited on inside a device function that is not inlined: the arriving threads could be in
// the caller, so only the watchdog can tell.
__device__ __noinline__ void wait_in_callee(unsigned long long* b) { wait_parity(b, 0); }
extern "C" __global__ void short_in_callee(int* out) {
    __shared__ unsigned long long gate;
    if (threadIdx.x == 0) init(&gate, blockDim.x + 1);
    __syncthreads();
    arrive(&gate, 1);
    wait_in_callee(&gate);
    out[threadIdx.x] = 1;
}

extern "C" __global__ void no_init(int* out) {
    __shared__ unsigned long long gate;
    out[threadIdx.x] = (int)pending(arrive(&gate, 1));
}
'''


@functools.cache
def _mod() -> cuda.Module:
    return cuda.compile(SRC, name="mbarrier_lib.cu")


@functools.cache
def _ptx_mod() -> cuda.Module:
    return cuda.compile(PTX_SRC, name="mbarrier_ptx.cu")


RNG = np.random.default_rng(13)


def test_barrier_phases_in_a_loop() -> None:
    x = RNG.integers(-1000, 1000, (3, 128)).astype(np.int32)
    y = cuda.zeros((3, 128), np.int32)
    rounds = 5
    _mod().get_function("barrier_rounds")(3, 128, (cuda.to_device(x), y, np.int32(rounds)))
    want = x.copy()
    for r in range(rounds):
        want = np.roll(want, -1, axis=1) + r
    np.testing.assert_array_equal(y.get(), want)


def test_thread_scope_pipeline() -> None:
    k = 5
    x = RNG.standard_normal((k, 64)).astype(np.float32)
    y = cuda.zeros(64, np.float32)
    _mod().get_function("thread_pipeline")(1, 64, (cuda.to_device(x), y, np.int32(k)))
    want = (x * np.arange(1, k + 1, dtype=np.float32)[:, None]).sum(axis=0)
    np.testing.assert_allclose(y.get(), want, rtol=1e-5, atol=1e-6)  # float32 sums, fma-contracted


def test_block_scope_pipeline_warp_specialized() -> None:
    k = 6
    x = RNG.standard_normal((k, 32)).astype(np.float32)
    y = cuda.zeros((3, 32), np.float32)
    _mod().get_function("specialized")(1, 128, (cuda.to_device(x), y, np.int32(k)))
    want = x.sum(axis=0)[None, :] * np.arange(1, 4, dtype=np.float32)[:, None]
    np.testing.assert_allclose(y.get(), want, rtol=1e-5)


def test_memcpy_async_bulk_with_barrier() -> None:
    assert "cp.async.bulk" in _mod().ptx and "mbarrier::complete_tx::bytes" in _mod().ptx
    x = RNG.standard_normal((2, 256)).astype(np.float32)
    y = cuda.zeros((2, 256), np.float32)
    _mod().get_function("bulk_tile")(2, 256, (cuda.to_device(x), y))
    np.testing.assert_array_equal(y.get(), x[:, ::-1] * np.float32(3))


def test_block_memcpy_async_with_barrier() -> None:
    n = 200
    x = RNG.standard_normal((3, n)).astype(np.float32)
    y = cuda.zeros((3, n), np.float32)
    _mod().get_function("group_copy")(1, 64, (cuda.to_device(x), y, np.int32(n)))
    np.testing.assert_array_equal(y.get(), x[:, ::-1])


def _word(pend: int, exp: int, tx: int, phase: int, valid: bool = True) -> int:
    """The documented layout of the state word (docs/mbarrier.md)."""
    return pend | exp << 20 | (tx & ((1 << 21) - 1)) << 40 | int(valid) << 62 | phase << 63


def test_raw_mbarrier_rules() -> None:
    out = cuda.zeros(16, np.int32)
    words = cuda.zeros(5, np.uint64)
    _ptx_mod().get_function("rules")(1, 1, (out, words))
    got = out.get()
    #                 pend  t0 ts  pend t0 t0 t0 ts t1 pend t1 pend t0 t1 t1
    want = np.array([2, 0, 0, 0, 0, 0, 1, 1, 0, 2, 1, 1, 1, 0, 1, 0], np.int32)
    np.testing.assert_array_equal(got, want)
    w = [int(v) for v in words.get()]
    assert w[0] == _word(3, 3, 0, 0)
    assert w[1] == _word(0, 3, 64, 0)
    assert w[2] == _word(3, 3, 0, 1)
    assert w[3] == _word(2, 2, 0, 0)  # phase 3 (parity 1) completed -> parity 0, 2 expected
    assert w[4] == 0


def test_lanes_arrive_in_lane_order() -> None:
    pend, done = cuda.zeros(64, np.int32), cuda.zeros(64, np.int32)
    _ptx_mod().get_function("lane_order")(1, 64, (pend, done))
    counts = 1 + np.arange(64) % 2
    cum = np.cumsum(counts)  # 96 arrivals in all: exactly one phase of 96
    np.testing.assert_array_equal(pend.get(), 96 - cum)
    np.testing.assert_array_equal(done.get(), np.full(64, 1))  # parity 0 done, parity 1 not


def test_warp_specialized_ring() -> None:
    k = 7
    x = RNG.integers(-50, 50, (k, 32)).astype(np.int32)
    y = cuda.zeros((2, 32), np.int32)
    _ptx_mod().get_function("ring")(2, 96, (cuda.to_device(x), y, np.int32(k)))
    want = x.sum(axis=0)[None, :] * np.arange(1, 3)[:, None]
    np.testing.assert_array_equal(y.get(), want)


def test_cp_async_mbarrier_arrive() -> None:
    x = RNG.integers(0, 1000, 128).astype(np.int32)
    out = cuda.zeros(64, np.int32)
    _ptx_mod().get_function("async_arrive")(1, 64, (cuda.to_device(x), out))
    t = np.arange(64)
    np.testing.assert_array_equal(out.get(), x[63 - t] + x[64 + (t + 1) % 64])


def test_generic_addresses() -> None:
    out = cuda.zeros(32, np.int32)
    _ptx_mod().get_function("generic_ops")(1, 32, (out,))
    np.testing.assert_array_equal(out.get(), 1 + 10 * (31 - np.arange(32)))


def test_arrivals_over_several_phases_in_one_instruction() -> None:
    pend, same = cuda.zeros(64, np.int32), cuda.zeros(64, np.int32)
    _ptx_mod().get_function("many_phases")(1, 64, (pend, same))
    t = np.arange(64)
    np.testing.assert_array_equal(pend.get(), 15 - t % 16)
    np.testing.assert_array_equal(same.get(), (t // 16) % 2)  # 4 phases done: parity is back to 0


def test_arrive_expect_tx() -> None:
    out = cuda.zeros(3, np.int32)
    _ptx_mod().get_function("expect_arrive")(1, 1, (out,))
    np.testing.assert_array_equal(out.get(), [0, 0, 1])


def test_transaction_bytes_complete_a_phase_mid_instruction() -> None:
    word = cuda.zeros(1, np.uint64)
    _ptx_mod().get_function("tx_lanes")(1, 4, (word,))
    assert int(word.get()[0]) == _word(1, 1, -32, 1)


def test_parked_lanes_run_ahead_to_release_waiters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "10")  # a regression shows as a hang: fail fast
    out = cuda.zeros(2 * 64, np.int32)
    _ptx_mod().get_function("run_ahead")(2, 64, (out,))
    np.testing.assert_array_equal(out.get(), np.full(128, 3))


@pytest.fixture
def faulting() -> Iterator[None]:
    yield
    cuda.current_device().reset()  # the fault left a sticky error; later tests get a clean device


def test_too_few_arrivals_is_a_deadlock(faulting: None) -> None:
    out = cuda.zeros(64, np.int32)
    with pytest.raises(cuda.DeviceFault) as ei:
        _ptx_mod().get_function("short_of_one")(2, 64, (out,)).wait()
    msg = str(ei.value)
    assert "mbarrier deadlock" in msg and "_ZZ12short_of_oneE4gate" in msg, msg
    assert "1 of 65 arrivals pending" in msg and "parity 0" in msg, msg


def test_hang_in_device_function_hits_the_watchdog(monkeypatch: pytest.MonkeyPatch, faulting: None) -> None:
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "0.5")
    out = cuda.zeros(32, np.int32)
    with pytest.raises(cuda.LaunchTimeout) as ei:
        _ptx_mod().get_function("short_in_callee")(1, 32, (out,)).wait()
    msg = str(ei.value)
    assert "STRATA_KERNEL_TIMEOUT" in msg and "mbarrier `_ZZ15short_in_calleeE4gate`" in msg, msg
    assert "1 of 33 arrivals pending" in msg, msg


def test_barrier_in_global_memory_faults(faulting: None) -> None:
    with pytest.raises(cuda.DeviceFault, match="lives in shared memory"):
        _ptx_mod().get_function("global_barrier")(1, 1, (cuda.zeros(1, np.uint64),)).wait()


def test_no_complete_that_completes_faults(faulting: None) -> None:
    with pytest.raises(cuda.DeviceFault, match="noComplete"):
        _ptx_mod().get_function("no_complete")(1, 1, (cuda.zeros(1, np.int32),)).wait()


def test_uninitialized_barrier_faults(faulting: None) -> None:
    with pytest.raises(cuda.DeviceFault, match="no initialized mbarrier"):
        _ptx_mod().get_function("no_init")(1, 32, (cuda.zeros(32, np.int32),)).wait()


UNIFORM_SRC = r'''
// The same barrier traffic with the barrier's address and the counts held once for every thread
// (a shared symbol, immediates) or per thread (loaded from global memory, all equal by construction).
extern "C" __global__ void traffic(const unsigned* zero, unsigned long long* out, int per_lane) {
    __shared__ __align__(8) unsigned long long bar;
    unsigned base = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned a = per_lane ? base + zero[threadIdx.x] : base;
    unsigned expected = per_lane ? 64u + zero[threadIdx.x] : 64u;
    unsigned tx = per_lane ? 32u + zero[threadIdx.x] : 32u;
    if (threadIdx.x == 0) {
        if (per_lane) asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(a), "r"(expected));
        else asm volatile("mbarrier.init.shared.b64 [%0], 64;" :: "r"(a));
    }
    __syncthreads();
    unsigned long long st;
    if (threadIdx.x == 1) {
        if (per_lane) asm volatile("mbarrier.expect_tx.shared.b64 [%0], %1;" :: "r"(a), "r"(tx));
        else asm volatile("mbarrier.expect_tx.shared.b64 [%0], 32;" :: "r"(a));
    }
    __syncthreads();
    if (per_lane) asm volatile("mbarrier.arrive.shared.b64 %0, [%1], %2;" : "=l"(st) : "r"(a), "r"(1u + zero[0]));
    else asm volatile("mbarrier.arrive.shared.b64 %0, [%1], 1;" : "=l"(st) : "r"(a));
    unsigned pending;
    asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(pending) : "l"(st));
    __syncthreads();
    if (threadIdx.x == 2) {
        if (per_lane) asm volatile("mbarrier.complete_tx.shared.b64 [%0], %1;" :: "r"(a), "r"(tx));
        else asm volatile("mbarrier.complete_tx.shared.b64 [%0], 32;" :: "r"(a));
    }
    __syncthreads();
    unsigned done;
    asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(a), "r"(0u));
    out[threadIdx.x] = ((unsigned long long)pending << 32) | (done << 16) | (unsigned)(bar >> 63);
}
'''


def test_uniform_barrier_operands_act_as_per_lane_ones() -> None:
    # tests/hw/test_uniform_families.py points mbarrier here: addresses and counts held once for every thread
    # (a shared symbol, immediates) behave exactly as per-thread registers holding the same values.
    mod = cuda.compile(UNIFORM_SRC, name="mbarrier_uniform.cu")
    zero = cuda.zeros(64, np.uint32)
    uni, lane = cuda.zeros(64, np.uint64), cuda.zeros(64, np.uint64)
    mod.get_function("traffic")(1, 64, (zero, uni, np.int32(0)))
    mod.get_function("traffic")(1, 64, (zero, lane, np.int32(1)))
    got = uni.get()
    np.testing.assert_array_equal(got, lane.get())
    # threads arrive in lane order: thread t leaves 63 - t arrivals pending; the phase completes once the
    # 32 transaction bytes also complete, so every thread sees phase 0 done and the parity bit flipped
    np.testing.assert_array_equal(got >> np.uint64(32), 63 - np.arange(64))
    assert ((got >> np.uint64(16)) & np.uint64(1) == 1).all() and (got & np.uint64(1) == 1).all()
