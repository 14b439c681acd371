# Conformance: atom/red on global and shared memory for every CUDA atomic: add (s32/u32/u64/f32/
# f64/f16x2), sub, min/max (s32/u32/s64/u64), exch, cas (32/64), and/or/xor, inc/dec with wrap,
# scoped variants (_block/_system). Oracles are order-independent (counts, sums of integers,
# permutations of returned tickets), so any legal interleaving passes.
"""Atomic operations against order-independent NumPy oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import assert_close, assert_exact, both_compilers, kernel, rng, run

HIST = kernel(
    "atomics.histogram_global_and_shared",
    r"""
extern "C" __global__ void hist_global(int n, const int* keys, int* bins) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[keys[i]], 1);                     // red.global.add.u32 (result unused)
}
extern "C" __global__ void hist_shared(int n, const int* keys, unsigned* bins) {
    __shared__ unsigned local[64];
    for (int b = threadIdx.x; b < 64; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[keys[i]], 1u);                   // atom.shared.add.u32
    __syncthreads();
    for (int b = threadIdx.x; b < 64; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
""",
)


@both_compilers
def test_histogram_global_and_shared(compiler: str) -> None:
    n = 4000
    keys = rng(30).integers(0, 64, n).astype(np.int32)
    keys[:500] = 7  # a hot bin: heavy contention on one address
    exp = np.bincount(keys, minlength=64)
    (_, bins) = run(HIST, compiler, "hist_global", 4, 256, np.int32(n), keys, np.zeros(64, np.int32))
    assert_exact(bins, exp.astype(np.int32))
    (_, ubins) = run(HIST, compiler, "hist_shared", 3, 128, np.int32(n), keys, np.zeros(64, np.uint32))
    assert_exact(ubins, exp.astype(np.uint32))


ADD_TYPES = kernel(
    "atomics.add_all_types",
    r"""
#include <cuda_fp16.h>
extern "C" __global__ void add_types(int n, const int* v, int* si, unsigned* ui, unsigned long long* ull,
                                     float* f, double* d, __half2* h2, int* tickets) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = v[i];
    atomicAdd(si, x);
    atomicAdd(ui, (unsigned)x * 3u);
    atomicAdd(ull, (unsigned long long)(x + 100) << 33);   // exercises the high word
    atomicAdd(f, (float)x);                                // integer-valued floats: exact sums
    atomicAdd(d, (double)x * 0.5);
    atomicAdd(h2, __halves2half2(__float2half(1.0f), __float2half((float)(x & 1))));
    tickets[i] = atomicAdd(&si[1], 1);                     // returned old values: a permutation
}
""",
)


@both_compilers
def test_atomic_add_all_types(compiler: str) -> None:
    n = 1000
    v = rng(31).integers(-100, 100, n).astype(np.int32)
    args = (
        np.int32(n),
        v,
        np.zeros(2, np.int32),
        np.zeros(1, np.uint32),
        np.zeros(1, np.uint64),
        np.zeros(1, np.float32),
        np.zeros(1, np.float64),
        np.zeros(2, np.float16),
        np.full(n, -1, np.int32),
    )
    (_, si, ui, ull, f, d, h2, tickets) = run(ADD_TYPES, compiler, "add_types", 4, 256, *args)
    s = int(v.astype(np.int64).sum())
    assert_exact(si, np.array([s, n], np.int32))
    assert_exact(ui, np.array([(3 * (v.astype(np.int64) % 2**32)).sum() % 2**32], np.uint32))
    assert_exact(ull, np.array([sum((int(x) + 100) << 33 for x in v) % 2**64], np.uint64))
    assert_exact(f, np.array([s], np.float32))
    assert_exact(d, np.array([s * 0.5]))
    # Both half lanes stay below 2048, where every integer is exact in fp16.
    assert_exact(h2, np.array([n, (v & 1).sum()], np.float16))
    assert_exact(np.sort(tickets), np.arange(n, dtype=np.int32))


FLOAT_ATOMICS = kernel(
    "atomics.float_fractional_tolerance",
    r"""
extern "C" __global__ void fsum(int n, const float* x, float* out, double* dout) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { atomicAdd(out, x[i]); atomicAdd(dout, (double)x[i]); }
}
""",
)


@both_compilers
def test_float_atomics_tolerance(compiler: str) -> None:
    n = 2000
    x = rng(32).uniform(0, 1, n).astype(np.float32)
    (_, out, dout) = run(
        FLOAT_ATOMICS, compiler, "fsum", 8, 256, np.int32(n), x, np.zeros(1, np.float32), np.zeros(1)
    )
    total = x.astype(np.float64).sum()
    # Any order of n float32 additions of values in [0,1): error <= n * eps * total.
    assert_close(out, np.array([total], np.float32), rtol=n * 2**-24)
    assert_close(dout, np.array([total]), rtol=1e-12)


MINMAX = kernel(
    "atomics.min_max_sub_exch",
    r"""
extern "C" __global__ void minmax(int n, const long long* v, int* s32, unsigned* u32, long long* s64,
                                  unsigned long long* u64, int* sub, unsigned* exch_old, unsigned* exch) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long x = v[i];
    atomicMin(&s32[0], (int)x);
    atomicMax(&s32[1], (int)x);
    atomicMin(&u32[0], (unsigned)x);
    atomicMax(&u32[1], (unsigned)x);
    atomicMin(&s64[0], x);
    atomicMax(&s64[1], x);
    atomicMin(&u64[0], (unsigned long long)x);
    atomicMax(&u64[1], (unsigned long long)x);
    atomicSub(sub, (int)(x & 0xff));
    exch_old[i] = atomicExch(exch, (unsigned)i + 1u);
}
""",
)


@both_compilers
def test_atomic_min_max_sub_exch(compiler: str) -> None:
    n = 900
    v = rng(33).integers(-(2**62), 2**62, n, dtype=np.int64)
    v[::7] = rng(34).integers(-(2**31), 2**31, len(v[::7]))  # values that survive the (int) cast
    s32 = v.astype(np.int32)  # (int)x keeps the low 32 bits, like NumPy's wrapping astype
    init = dict(
        s32=np.array([2**31 - 1, -(2**31)], np.int32),
        u32=np.array([2**32 - 1, 0], np.uint32),
        s64=np.array([2**63 - 1, -(2**63)], np.int64),
        u64=np.array([2**64 - 1, 0], np.uint64),
    )
    outs = run(
        MINMAX,
        compiler,
        "minmax",
        4,
        256,
        np.int32(n),
        v,
        init["s32"],
        init["u32"],
        init["s64"],
        init["u64"],
        np.array([1000], np.int32),
        np.zeros(n, np.uint32),
        np.array([0], np.uint32),
    )
    (_, o32, ou32, o64, ou64, sub, exch_old, exch) = outs
    assert_exact(o32, np.array([s32.min(), s32.max()], np.int32))
    assert_exact(ou32, np.array([s32.view(np.uint32).min(), s32.view(np.uint32).max()], np.uint32))
    assert_exact(o64, np.array([v.min(), v.max()], np.int64))
    assert_exact(ou64, np.array([v.view(np.uint64).min(), v.view(np.uint64).max()], np.uint64))
    assert_exact(sub, np.array([1000 - int((v & 0xFF).sum())], np.int32))
    # The exchanged values form one chain: {returned olds} + {final} == {initial 0} + {1..n}.
    chain = np.sort(np.concatenate([exch_old, exch]))
    assert_exact(chain, np.arange(n + 1, dtype=np.uint32))


CAS = kernel(
    "atomics.cas_loops",
    r"""
__device__ double cas_add_double(double* addr, double v) {
    unsigned long long* p = (unsigned long long*)addr;
    unsigned long long old = *p, assumed;
    do {
        assumed = old;
        old = atomicCAS(p, assumed, __double_as_longlong(__longlong_as_double(assumed) + v));
    } while (assumed != old);
    return __longlong_as_double(old);
}
extern "C" __global__ void cas(int n, int* counter, double* dsum, int* winner, int* won) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int old = *counter, assumed;                 // 32-bit CAS increment loop
    do { assumed = old; old = atomicCAS(counter, assumed, assumed + 2); } while (old != assumed);
    cas_add_double(dsum, (double)(i % 10));
    won[i] = atomicCAS(winner, 0, i + 1) == 0;   // exactly one thread wins
}
""",
)


@both_compilers
def test_atomic_cas_loops(compiler: str) -> None:
    n = 600
    (counter, dsum, winner, won) = run(
        CAS,
        compiler,
        "cas",
        3,
        256,
        np.int32(n),
        np.array([5], np.int32),
        np.zeros(1),
        np.zeros(1, np.int32),
        np.zeros(n, np.int32),
    )
    assert_exact(counter, np.array([5 + 2 * n], np.int32))
    assert_exact(dsum, np.array([float(sum(i % 10 for i in range(n)))]))
    assert won.sum() == 1
    assert winner[0] == int(np.flatnonzero(won)[0]) + 1


BITS_INCDEC = kernel(
    "atomics.bitwise_inc_dec",
    r"""
extern "C" __global__ void bits(int n, unsigned* ors, unsigned* ands, unsigned* xors,
                                unsigned long long* or64,
                                unsigned* inc, unsigned* dec, unsigned* inc_old) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicOr(&ors[i % 4], 1u << (i % 32));
    atomicAnd(&ands[i % 4], ~(1u << ((i * 3) % 32)));
    atomicXor(xors, (unsigned)i * 2654435761u);
    atomicOr(or64, 1ull << (i % 64));
    inc_old[i] = atomicInc(inc, 9u);       // counts 0..9 then wraps to 0
    atomicDec(dec, 6u);                    // 0 or > 6 -> 6, else -1
}
""",
)


@both_compilers
def test_atomic_bitwise_inc_dec(compiler: str) -> None:
    n = 203
    i = np.arange(n)
    outs = run(
        BITS_INCDEC,
        compiler,
        "bits",
        1,
        256,
        np.int32(n),
        np.zeros(4, np.uint32),
        np.full(4, 0xFFFFFFFF, np.uint32),
        np.array([0x12345678], np.uint32),
        np.zeros(1, np.uint64),
        np.zeros(1, np.uint32),
        np.array([3], np.uint32),
        np.zeros(n, np.uint32),
    )
    (ors, ands, xors, or64, inc, dec, inc_old) = outs
    exp_or = np.zeros(4, np.uint32)
    exp_and = np.full(4, 0xFFFFFFFF, np.uint32)
    x = 0x12345678
    for k in range(n):
        exp_or[k % 4] |= np.uint32(1 << (k % 32))
        exp_and[k % 4] &= np.uint32(~(1 << ((k * 3) % 32)) & 0xFFFFFFFF)
        x ^= (k * 2654435761) % 2**32
    assert_exact(ors, exp_or)
    assert_exact(ands, exp_and)
    assert_exact(xors, np.array([x], np.uint32))
    assert_exact(or64, np.array([sum(1 << b for b in set(i % 64))], np.uint64))
    assert_exact(inc, np.array([n % 10], np.uint32))
    # n increments hand out each value of 0..9 in turn, so the sorted olds are i % 10.
    assert_exact(np.sort(inc_old), np.sort((i % 10).astype(np.uint32)))
    # dec from 3 with wrap 6 cycles 3,2,1,0,6,5,4,3,...: period 7.
    assert_exact(dec, np.array([(3 - n) % 7], np.uint32))


SHARED_ATOMICS = kernel(
    "atomics.shared_memory_all_ops",
    r"""
extern "C" __global__ void shared_ops(const int* v, int* out, float* fout, unsigned long long* uout) {
    __shared__ int s[8];
    __shared__ float sf;
    __shared__ unsigned long long su;
    int t = threadIdx.x;
    if (t < 8) s[t] = (t == 2) ? 0x7fffffff : ((t == 5) ? -1 : 0);
    if (t == 0) { sf = 0.0f; su = 0; }
    __syncthreads();
    int x = v[t];
    atomicAdd(&s[0], x);
    atomicSub(&s[1], 1);
    atomicMin(&s[2], x);
    atomicMax(&s[3], x);
    atomicOr(&s[4], 1 << (t % 31));
    atomicAnd(&s[5], ~(1 << (t % 16)));
    atomicInc((unsigned*)&s[6], 4u);
    atomicCAS(&s[7], t, t + 1);          // atom.shared.cas.b32
    atomicAdd(&sf, 0.5f);
    atomicAdd(&su, 1ull << 40);
    __syncthreads();
    if (t < 8) out[t] = s[t];
    if (t == 0) { fout[0] = sf; uout[0] = su; }
}
""",
)


@both_compilers
def test_shared_memory_atomics(compiler: str) -> None:
    nt = 160
    v = rng(35).integers(-5000, 5000, nt).astype(np.int32)
    (_, out, fout, uout) = run(
        SHARED_ATOMICS,
        compiler,
        "shared_ops",
        1,
        nt,
        v,
        np.zeros(8, np.int32),
        np.zeros(1, np.float32),
        np.zeros(1, np.uint64),
    )
    exp_or = 0
    exp_and = -1
    for t in range(nt):
        exp_or |= 1 << (t % 31)
        exp_and &= ~(1 << (t % 16))
    assert_exact(
        out[:7],
        np.array([v.sum(), -nt, min(v.min(), 2**31 - 1), max(v.max(), 0), exp_or, exp_and, nt % 5], np.int32),
    )
    # atomicCAS(&s[7], t, t+1) succeeds for thread t only when s[7] == t at that moment, so the
    # final value depends on the interleaving; only its range is order-independent.
    assert 0 <= out[7] <= nt
    assert_exact(fout, np.array([0.5 * nt], np.float32))
    assert_exact(uout, np.array([nt << 40], np.uint64))


SCOPED = kernel(
    "atomics.scoped_block_system",
    r"""
extern "C" __global__ void scoped(int* g, unsigned long long* g64, float* gf) {
    __shared__ int s;
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    atomicAdd_block(&s, 1);                      // atom.cta / red.shared
    atomicAdd_system(&g[0], 1);                  // atom.sys
    atomicMax_block(&g[1], (int)threadIdx.x);
    atomicExch_system(&g[2], 42);
    atomicAdd_block(g64, 3ull);
    atomicAdd_system(gf, 1.0f);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(&g[3], s);
}
""",
)


@both_compilers
def test_scoped_atomics(compiler: str) -> None:
    (g, g64, gf) = run(
        SCOPED,
        compiler,
        "scoped",
        3,
        64,
        np.zeros(4, np.int32),
        np.zeros(1, np.uint64),
        np.zeros(1, np.float32),
    )
    assert_exact(g, np.array([192, 63, 42, 192], np.int32))
    assert_exact(g64, np.array([3 * 192], np.uint64))
    assert_exact(gf, np.array([192.0], np.float32))
