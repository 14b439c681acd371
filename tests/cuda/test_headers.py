"""Headers out of the box (issue 12): kernels that include cooperative groups, libcu++ (cuda::std, cuda::atomic_ref),
CUB, cuRAND, <cuda/pipeline> and <cuda/barrier> compile with strata's default options and run on the virtual GPU.

Oracles: NumPy (sums, scans, extrema, histograms, partitions), and for cuRAND NumPy/Python reimplementations of
XORWOW, Philox4x32-10 and MRG32k3a written from their definitions (init, recurrences, output maps) plus the
Random123 known-answer vector; where the device skips ahead with cuRAND's precomputed matrices, the oracle is the
unskipped stream. Also: where the headers come from, that their extraction is atomic, and what the PTX's `.file`
directives (hence fault reports) call a source that lives only in memory.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
from strata import hip
from strata.cuda import compiler
from strata.cuda.compiler import compile_to_ptx

RNG = np.random.default_rng(12)

# --- cooperative groups ---------------------------------------------------------------------------------

CG_SRC = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

template <int W>
__device__ float tile_sum(cg::thread_block_tile<W> t, float v) {
    for (int o = W / 2; o > 0; o /= 2) v += t.shfl_down(v, o);
    return v;
}

// Per block: 32-lane tile sums by shfl_down, combined through shared memory after a block-wide sync.
extern "C" __global__ void block_sum32(const float* x, float* out) {
    cg::thread_block b = cg::this_thread_block();
    __shared__ float partial[32];
    auto t = cg::tiled_partition<32>(b);
    float v = tile_sum<32>(t, x[blockIdx.x * blockDim.x + b.thread_rank()]);
    if (t.thread_rank() == 0) partial[t.meta_group_rank()] = v;
    b.sync();
    if (b.thread_rank() == 0) {
        float s = 0.0f;
        for (unsigned k = 0; k < t.meta_group_size(); ++k) s += partial[k];
        out[blockIdx.x] = s;
    }
}

extern "C" __global__ void tile16_sums(const float* x, float* out) {
    auto t = cg::tiled_partition<16>(cg::this_thread_block());
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = tile_sum<16>(t, x[i]);
    if (t.thread_rank() == 0) out[i / 16] = v;
}

extern "C" __global__ void cg_reduce(const int* x, int* sums, int* maxes) {
    auto t = cg::tiled_partition<32>(cg::this_thread_block());
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    int s = cg::reduce(t, x[i], cg::plus<int>());
    int m = cg::reduce(t, x[i], cg::greater<int>());
    if (t.thread_rank() == 0) { sums[i / 32] = s; maxes[i / 32] = m; }
}

// Each lane reports (size of its label's group) * 100 + (its rank in that group).
extern "C" __global__ void labeled(const int* label, int* out) {
    auto w = cg::tiled_partition<32>(cg::this_thread_block());
    auto g = cg::labeled_partition(w, label[blockIdx.x * blockDim.x + threadIdx.x]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = g.size() * 100 + g.thread_rank();
}
"""


@pytest.fixture(scope="module")
def cg_mod() -> cuda.Module:
    return cuda.compile(CG_SRC, name="cg.cu")


def test_thread_block_sync_and_tiled_partition_32(cg_mod: cuda.Module) -> None:
    x = RNG.standard_normal(4 * 128).astype(np.float32)
    out = cuda.zeros(4, np.float32)
    cg_mod.get_function("block_sum32")(4, 128, (cuda.to_device(x), out))
    np.testing.assert_allclose(out.get(), x.reshape(4, -1).sum(axis=1), rtol=1e-5, atol=1e-4)


def test_tiled_partition_16_shfl_down(cg_mod: cuda.Module) -> None:
    x = RNG.standard_normal(2 * 128).astype(np.float32)
    out = cuda.zeros(16, np.float32)
    cg_mod.get_function("tile16_sums")(2, 128, (cuda.to_device(x), out))
    np.testing.assert_allclose(out.get(), x.reshape(-1, 16).sum(axis=1), rtol=1e-5, atol=1e-4)


def test_cg_reduce_plus_and_greater(cg_mod: cuda.Module) -> None:
    x = RNG.integers(-1000, 1000, 256).astype(np.int32)
    sums, maxes = cuda.zeros(8, np.int32), cuda.zeros(8, np.int32)
    cg_mod.get_function("cg_reduce")(2, 128, (cuda.to_device(x), sums, maxes))
    np.testing.assert_array_equal(sums.get(), x.reshape(-1, 32).sum(axis=1))
    np.testing.assert_array_equal(maxes.get(), x.reshape(-1, 32).max(axis=1))


def test_labeled_partition(cg_mod: cuda.Module) -> None:
    labels = RNG.integers(0, 5, 64).astype(np.int32)
    out = cuda.zeros(64, np.int32)
    cg_mod.get_function("labeled")(1, 64, (cuda.to_device(labels), out))
    want = []
    for warp in labels.reshape(-1, 32):
        for lane, lab in enumerate(warp):
            want.append(int((warp == lab).sum()) * 100 + int((warp[:lane] == lab).sum()))
    np.testing.assert_array_equal(out.get(), want)


# --- libcu++: cuda::std, cuda::atomic_ref -------------------------------------------------------------------

STD_SRC = r"""
#include <cuda/std/array>
#include <cuda/std/limits>
#include <cuda/std/algorithm>
#include <cuda/atomic>

// Each thread: min and max of the 4-element window at i, held in a cuda::std::array.
extern "C" __global__ void window_minmax(const int* x, int* mins, int* maxs, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuda::std::array<int, 4> w{};
    int lo = cuda::std::numeric_limits<int>::max(), hi = cuda::std::numeric_limits<int>::lowest();
    int m = cuda::std::min(4, n - i);
    for (int k = 0; k < m; ++k) w[k] = x[i + k];
    for (int k = 0; k < m; ++k) { lo = cuda::std::min(lo, w[k]); hi = cuda::std::max(hi, w[k]); }
    mins[i] = lo; maxs[i] = hi;
}

extern "C" __global__ void limits(float* f, double* d, long long* ints) {
    f[0] = cuda::std::numeric_limits<float>::epsilon();
    f[1] = cuda::std::numeric_limits<float>::max();
    f[2] = cuda::std::numeric_limits<float>::denorm_min();
    f[3] = cuda::std::numeric_limits<float>::infinity();
    d[0] = cuda::std::numeric_limits<double>::epsilon();
    d[1] = cuda::std::numeric_limits<double>::lowest();
    ints[0] = cuda::std::numeric_limits<short>::min();
    ints[1] = cuda::std::numeric_limits<unsigned char>::max();
    ints[2] = cuda::std::numeric_limits<float>::digits;
    ints[3] = cuda::std::numeric_limits<long long>::max();
}

extern "C" __global__ void histogram(const int* x, int* bins, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuda::atomic_ref<int, cuda::thread_scope_device> bin(bins[x[i]]);
    bin.fetch_add(1, cuda::std::memory_order_relaxed);
}

extern "C" __global__ void atomic_max_ref(const unsigned* x, unsigned* best, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> r(*best);
    r.fetch_max(x[i]);
}
"""


@pytest.fixture(scope="module")
def std_mod() -> cuda.Module:
    return cuda.compile(STD_SRC, name="libcudacxx.cu")


def test_cuda_std_array_min_max(std_mod: cuda.Module) -> None:
    n = 200
    x = RNG.integers(-10**6, 10**6, n).astype(np.int32)
    mins, maxs = cuda.zeros(n, np.int32), cuda.zeros(n, np.int32)
    std_mod.get_function("window_minmax")(2, 128, (cuda.to_device(x), mins, maxs, np.int32(n)))
    np.testing.assert_array_equal(mins.get(), [x[i:i + 4].min() for i in range(n)])
    np.testing.assert_array_equal(maxs.get(), [x[i:i + 4].max() for i in range(n)])


def test_cuda_std_numeric_limits(std_mod: cuda.Module) -> None:
    f, d, ints = cuda.zeros(4, np.float32), cuda.zeros(2, np.float64), cuda.zeros(4, np.int64)
    std_mod.get_function("limits")(1, 1, (f, d, ints))
    f32, f64 = np.finfo(np.float32), np.finfo(np.float64)
    np.testing.assert_array_equal(f.get(), [f32.eps, f32.max, f32.smallest_subnormal, np.inf])
    np.testing.assert_array_equal(d.get(), [f64.eps, f64.min])
    np.testing.assert_array_equal(ints.get(), [np.iinfo(np.int16).min, 255, f32.nmant + 1, np.iinfo(np.int64).max])


def test_cuda_atomic_ref_fetch_add_and_fetch_max(std_mod: cuda.Module) -> None:
    n = 1000
    x = RNG.integers(0, 16, n).astype(np.int32)
    bins = cuda.zeros(16, np.int32)
    std_mod.get_function("histogram")(8, 128, (cuda.to_device(x), bins, np.int32(n)))
    np.testing.assert_array_equal(bins.get(), np.bincount(x, minlength=16))
    u = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    best = cuda.zeros(1, np.uint32)
    std_mod.get_function("atomic_max_ref")(8, 128, (cuda.to_device(u), best, np.int32(n)))
    assert best.get()[0] == u.max()


# --- CUB ------------------------------------------------------------------------------------------------

CUB_SRC = r"""
#include <cub/warp/warp_reduce.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

extern "C" __global__ void warp_reduce(const int* x, int* out) {
    using WR = cub::WarpReduce<int>;
    __shared__ typename WR::TempStorage tmp[4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = WR(tmp[threadIdx.x / 32]).Sum(x[i]);
    if (threadIdx.x % 32 == 0) out[i / 32] = v;
}

extern "C" __global__ void block_reduce(const float* x, float* sums, float* maxes) {
    using BR = cub::BlockReduce<float, 128>;
    __shared__ typename BR::TempStorage tmp;
    float v = x[blockIdx.x * 128 + threadIdx.x];
    float s = BR(tmp).Sum(v);
    __syncthreads();  // the temp storage is reused
    float m = BR(tmp).Reduce(v, cuda::maximum<>{});
    if (threadIdx.x == 0) { sums[blockIdx.x] = s; maxes[blockIdx.x] = m; }
}

extern "C" __global__ void block_scan(const int* x, int* incl, int* excl) {
    using BS = cub::BlockScan<int, 128>;
    __shared__ typename BS::TempStorage tmp;
    int i = blockIdx.x * 128 + threadIdx.x, a, b;
    BS(tmp).InclusiveSum(x[i], a);
    __syncthreads();
    BS(tmp).ExclusiveSum(x[i], b);
    incl[i] = a; excl[i] = b;
}
"""


@pytest.fixture(scope="module")
def cub_mod() -> cuda.Module:
    return cuda.compile(CUB_SRC, name="cub.cu")


def test_cub_warp_reduce(cub_mod: cuda.Module) -> None:
    x = RNG.integers(-1000, 1000, 256).astype(np.int32)
    out = cuda.zeros(8, np.int32)
    cub_mod.get_function("warp_reduce")(2, 128, (cuda.to_device(x), out))
    np.testing.assert_array_equal(out.get(), x.reshape(-1, 32).sum(axis=1))


def test_cub_block_reduce_sum_and_max(cub_mod: cuda.Module) -> None:
    x = RNG.standard_normal(512).astype(np.float32)
    sums, maxes = cuda.zeros(4, np.float32), cuda.zeros(4, np.float32)
    cub_mod.get_function("block_reduce")(4, 128, (cuda.to_device(x), sums, maxes))
    np.testing.assert_allclose(sums.get(), x.reshape(4, -1).sum(axis=1), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(maxes.get(), x.reshape(4, -1).max(axis=1))


def test_cub_block_scan_inclusive_and_exclusive(cub_mod: cuda.Module) -> None:
    x = RNG.integers(-100, 100, 256).astype(np.int32)
    incl, excl = cuda.zeros(256, np.int32), cuda.zeros(256, np.int32)
    cub_mod.get_function("block_scan")(2, 128, (cuda.to_device(x), incl, excl))
    want = np.cumsum(x.reshape(2, -1), axis=1)
    np.testing.assert_array_equal(incl.get(), want.ravel())
    np.testing.assert_array_equal(excl.get(), (want - x.reshape(2, -1)).ravel())


# --- cuRAND device API ----------------------------------------------------------------------------------

RAND_SRC = r"""
#include <curand_kernel.h>

// Thread i: curand_init(seed0 + i * seed_step, sub0 + i * sub_step, offset), then `per` raw draws
// followed by `per` curand_uniform draws.
template <typename State>
__device__ void draw(unsigned long long seed0, unsigned long long seed_step, unsigned long long sub0,
                     unsigned long long sub_step, unsigned long long offset, int per, unsigned* raw, float* uni) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    State s;
    curand_init(seed0 + i * seed_step, sub0 + i * sub_step, offset, &s);
    for (int k = 0; k < per; ++k) raw[i * per + k] = curand(&s);
    for (int k = 0; k < per; ++k) uni[i * per + k] = curand_uniform(&s);
}

#define GENERATOR(name, State)                                                                              \
    extern "C" __global__ void name(unsigned long long seed0, unsigned long long seed_step,                 \
                                    unsigned long long sub0, unsigned long long sub_step,                   \
                                    unsigned long long offset, int per, unsigned* raw, float* uni) {        \
        draw<State>(seed0, seed_step, sub0, sub_step, offset, per, raw, uni);                               \
    }
GENERATOR(xorwow, curandStateXORWOW_t)
GENERATOR(philox, curandStatePhilox4_32_10_t)
GENERATOR(mrg32k3a, curandStateMRG32k3a_t)
"""

M32 = 0xFFFFFFFF
MRG_M1, MRG_M2 = 4294967087, 4294944443


def philox4x32_10(ctr: tuple[int, int, int, int], key: tuple[int, int]) -> tuple[int, int, int, int]:
    """Philox4x32-10 (Salmon et al. SC'11): 10 rounds, multipliers D2511F53/CD9E8D57, Weyl key bumps."""
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c3 ^ k1) & M32, p0 & M32
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c0, c1, c2, c3


def philox_stream(seed: int, subsequence: int, offset: int, n: int) -> list[int]:
    # cuRAND: key = seed; value v of subsequence s is word v % 4 of the counter (v // 4) + s * 2^64.
    key = (seed & M32, seed >> 32)
    return [philox4x32_10(((v // 4) & M32, (v // 4) >> 32, subsequence & M32, subsequence >> 32), key)[v % 4]
            for v in range(offset, offset + n)]


def xorwow_stream(seed: int, offset: int, n: int) -> list[int]:
    # Marsaglia's xorwow with cuRAND's seeding (salted, multiplied seed halves); subsequence 0.
    t0 = (1099087573 * ((seed & M32) ^ 0xAAD26B49)) & M32
    t1 = (2591861531 * ((seed >> 32) ^ 0xF7DCEFDD)) & M32
    d = (6615241 + t1 + t0) & M32
    v = [(123456789 + t0) & M32, 362436069 ^ t0, (521288629 + t1) & M32, 88675123 ^ t1, (5783321 + t0) & M32]
    out = []
    for i in range(offset + n):
        t = v[0] ^ (v[0] >> 2)
        v = [*v[1:], ((v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1))) & M32]
        d = (d + 362437) & M32
        if i >= offset:
            out.append((v[4] + d) & M32)
    return out


def mrg32k3a_stream(seed: int, offset: int, n: int) -> list[int]:
    # L'Ecuyer's MRG32k3a; cuRAND seeds both components from 12345 times the salted seed halves. Subsequence 0.
    s1, s2 = [12345] * 3, [12345] * 3
    if seed:
        x1, x2 = (seed & M32) ^ 0x55555555, ((seed >> 32) ^ 0xAAAAAAAA) & M32
        s1 = [x1 * 12345 % MRG_M1, x2 * 12345 % MRG_M1, x1 * 12345 % MRG_M1]
        s2 = [x2 * 12345 % MRG_M2, x1 * 12345 % MRG_M2, x2 * 12345 % MRG_M2]
    out = []
    for i in range(offset + n):
        p1 = (1403580 * s1[1] - 810728 * s1[0]) % MRG_M1
        p2 = (527612 * s2[2] - 1370589 * s2[0]) % MRG_M2
        s1, s2 = [s1[1], s1[2], p1], [s2[1], s2[2], p2]
        if i >= offset:
            out.append(p1 - p2 + (MRG_M1 if p1 <= p2 else 0))
    return out


def expected(gen: str, seed: int, subsequence: int, offset: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    """(raw, uniform) a thread draws: `per` curand() values, then `per` curand_uniform() values."""
    if gen == "mrg32k3a":
        r = np.array(mrg32k3a_stream(seed, offset, 2 * per), dtype=np.float64)
        # curand(): (unsigned)(r * MRG32K3A_BITS_NORM); curand_uniform(): (float)(r * MRG32K3A_NORM)
        return ((r[:per] * 1.000000048662).astype(np.uint32),
                (r[per:] * 2.3283065498378288e-10).astype(np.float32))
    stream = philox_stream(seed, subsequence, offset, 2 * per) if gen == "philox" else xorwow_stream(seed, offset,
                                                                                                    2 * per)
    w = np.array(stream, dtype=np.uint32)
    # _curand_uniform: x * 2^-32 + 2^-32 / 2, in (0, 1]
    return w[:per], w[per:].astype(np.float32) * np.float32(2.0**-32) + np.float32(2.0**-33)


@pytest.fixture(scope="module")
def rand_mod() -> cuda.Module:
    return cuda.compile(RAND_SRC, name="curand.cu")


def launch(mod: cuda.Module, gen: str, n: int, per: int, *, seed0: int, seed_step: int = 0, sub0: int = 0,
           sub_step: int = 0, offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    raw, uni = cuda.zeros(n * per, np.uint32), cuda.zeros(n * per, np.float32)
    args = [np.uint64(a) for a in (seed0, seed_step, sub0, sub_step, offset)]
    mod.get_function(gen)(1, n, (*args, np.int32(per), raw, uni))
    return raw.get().reshape(n, per), uni.get().reshape(n, per)


def test_philox_known_answer() -> None:
    # Random123 kat_vectors, philox4x32 10: all-ones counter and key.
    assert philox4x32_10((M32,) * 4, (M32, M32)) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)


@pytest.mark.parametrize("gen", ["xorwow", "philox", "mrg32k3a"])
@pytest.mark.parametrize("offset", [0, 37])
def test_curand_matches_the_reference_streams(rand_mod: cuda.Module, gen: str, offset: int) -> None:
    # One subsequence (0), a seed per thread; offset 37 is a skipahead (cuRAND's precomputed matrices for
    # XORWOW and MRG32k3a, counter arithmetic for Philox) checked against the unskipped stream.
    n, per, seed0 = 16, 6, 0x1234_5678_9ABC
    raw, uni = launch(rand_mod, gen, n, per, seed0=seed0, seed_step=7919, offset=offset)
    for i in range(n):
        want_raw, want_uni = expected(gen, seed0 + 7919 * i, 0, offset, per)
        np.testing.assert_array_equal(raw[i], want_raw, err_msg=f"{gen} thread {i} raw")
        np.testing.assert_array_equal(uni[i], want_uni, err_msg=f"{gen} thread {i} uniform")


def test_curand_philox_subsequences_match_the_reference(rand_mod: cuda.Module) -> None:
    n, per = 16, 6
    raw, uni = launch(rand_mod, "philox", n, per, seed0=42, sub0=5, sub_step=3, offset=3)
    for i in range(n):
        want_raw, want_uni = expected("philox", 42, 5 + 3 * i, 3, per)
        np.testing.assert_array_equal(raw[i], want_raw)
        np.testing.assert_array_equal(uni[i], want_uni)


def test_philox_matches_strata_libs_rand(rand_mod: cuda.Module) -> None:
    # strata.libs.rand's Philox generator follows cuRAND's counter layout: seed s at offset k is cuRAND's
    # subsequence 0 of seed s skipped ahead by k.
    from strata.libs import rand

    raw, _ = launch(rand_mod, "philox", 1, 12, seed0=2024, offset=10)
    out = cuda.zeros(12, np.uint32)
    rand.generate(rand.create_generator(seed=2024, offset=10), out)
    np.testing.assert_array_equal(raw[0], out.get())


@pytest.mark.parametrize("gen", ["xorwow", "mrg32k3a"])
def test_curand_subsequences_are_deterministic_consistent_and_uniform(rand_mod: cuda.Module, gen: str) -> None:
    # Subsequence skipping (2^67 / 2^127 values, by precomputed matrices) has no cheap reference; the oracle:
    # two launches agree, (subsequence s, offset 5) is (subsequence s, offset 0) shifted by 5, streams differ,
    # and 1024 uniforms pass a chi-square test against U(0, 1] and have the right mean.
    n, per = 64, 16
    a_raw, a_uni = launch(rand_mod, gen, n, per, seed0=99, sub0=1, sub_step=1)
    b_raw, b_uni = launch(rand_mod, gen, n, per, seed0=99, sub0=1, sub_step=1)
    np.testing.assert_array_equal(a_raw, b_raw)
    np.testing.assert_array_equal(a_uni, b_uni)
    s_raw, _ = launch(rand_mod, gen, n, per, seed0=99, sub0=1, sub_step=1, offset=5)
    np.testing.assert_array_equal(s_raw[:, :per - 5], a_raw[:, 5:])
    assert len({tuple(r) for r in a_raw}) == n
    u = a_uni.ravel().astype(np.float64)
    assert u.min() > 0.0 and u.max() <= 1.0
    assert abs(u.mean() - 0.5) < 4 * np.sqrt(1 / 12 / u.size)
    counts = np.histogram(u, bins=16, range=(0.0, 1.0))[0]
    chi2 = ((counts - u.size / 16) ** 2 / (u.size / 16)).sum()
    assert chi2 < 37.7  # chi-square, 15 degrees of freedom, p = 0.001


# --- <cuda/pipeline>, <cuda/barrier>: compile; running needs mbarrier -------------------------------------

PIPE_SRC = r"""
#include <cuda/pipeline>
#include <cuda/barrier>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;

// Stage a 128-float tile into shared memory through a block-scoped pipeline, then double it.
extern "C" __global__ void staged_double(const float* x, float* y) {
    __shared__ float tile[128];
    __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 1> state;
    auto block = cg::this_thread_block();
    auto pipe = cuda::make_pipeline(block, &state);
    pipe.producer_acquire();
    cuda::memcpy_async(block, tile, x + blockIdx.x * 128, sizeof(float) * 128, pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    y[blockIdx.x * 128 + threadIdx.x] = 2.0f * tile[threadIdx.x];
    pipe.consumer_release();
}

// Every thread arrives at a block-scoped barrier before reading its neighbour's value.
extern "C" __global__ void barrier_rotate(const int* x, int* y) {
    __shared__ int buf[128];
    #pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    buf[threadIdx.x] = x[threadIdx.x];
    bar.arrive_and_wait();
    y[threadIdx.x] = buf[(threadIdx.x + 1) % 128];
}
"""


def test_pipeline_and_barrier_compile() -> None:
    out = compile_to_ptx(PIPE_SRC, name="pipeline.cu")
    for kernel in ("staged_double", "barrier_rotate"):
        assert f".visible .entry {kernel}(" in out.ptx
    assert "mbarrier.init.shared.b64" in out.ptx and "mbarrier.try_wait" in out.ptx


def test_pipeline_and_barrier_run() -> None:
    mod = cuda.compile(PIPE_SRC, name="pipeline.cu")
    x = np.arange(256, dtype=np.float32)
    y = cuda.zeros(256, np.float32)
    mod.get_function("staged_double")(2, 128, (cuda.to_device(x), y))
    np.testing.assert_array_equal(y.get(), 2 * x)
    xi = np.arange(128, dtype=np.int32)
    yi = cuda.zeros(128, np.int32)
    mod.get_function("barrier_rotate")(1, 128, (cuda.to_device(xi), yi))
    np.testing.assert_array_equal(yi.get(), np.roll(xi, -1))


# --- the HIP face uses the same include path ------------------------------------------------------------


def test_hip_kernel_with_cuda_std_and_nv_target() -> None:
    mod = hip.compile(r"""
#include <hip/hip_runtime.h>
#include <nv/target>
#include <cuda/std/limits>
extern "C" __global__ void clamp_max(const long long* x, int* out) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    long long hi = cuda::std::numeric_limits<int>::max();
    NV_IF_ELSE_TARGET(NV_PROVIDES_SM_90, (out[i] = (int)min(x[i], hi);), (out[i] = -1;))
}""", name="clamp_max.hip")
    x = RNG.integers(-2**40, 2**40, 64)
    out = hip.zeros(64, np.int32)
    mod.get_function("clamp_max")(1, 64, (hip.to_device(x), out))
    np.testing.assert_array_equal(out.get(), np.minimum(x, np.iinfo(np.int32).max).astype(np.int32))


@pytest.mark.parametrize("header", ["cooperative_groups.h", "hip/hip_cooperative_groups.h"])
def test_hip_kernel_with_cooperative_groups(header: str) -> None:
    # hipcc on the NVIDIA platform resolves <cooperative_groups.h> from the CUDA headers; HIP's own
    # header name maps onto it.
    mod = hip.compile(r"""
#include <hip/hip_runtime.h>
#include <""" + header + r""">
namespace cg = cooperative_groups;
extern "C" __global__ void warp_max(const int* x, int* out) {
    auto t = cg::tiled_partition<32>(cg::this_thread_block());
    int v = x[hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x];
    for (int o = 16; o > 0; o /= 2) v = max(v, t.shfl_down(v, o));
    if (t.thread_rank() == 0) out[(hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x) / 32] = v;
}""", name="warp_max.hip")
    x = RNG.integers(-10**6, 10**6, 128).astype(np.int32)
    out = hip.zeros(4, np.int32)
    mod.get_function("warp_max")(1, 128, (hip.to_device(x), out))
    np.testing.assert_array_equal(out.get(), x.reshape(-1, 32).max(axis=1))


# --- where the headers come from ------------------------------------------------------------------------


def test_include_path_has_bundled_cccl_and_curand() -> None:
    dirs = compiler.include_dirs()
    bundled = compiler.bundled_headers_dir()
    assert bundled is not None and dirs[:2] == [bundled, bundled / "cccl"]
    assert bundled.name == "{}.{}".format(*compiler.nvrtc_version())
    for header in ("cooperative_groups.h", "cuda_pipeline.h", "cccl/nv/target", "cccl/cub/cub.cuh",
                   "cccl/cuda/std/array"):
        assert (bundled / header).is_file(), header
    assert any((d / "curand_kernel.h").is_file() for d in dirs)
    opts = compiler._full_options((), lineinfo=True)
    assert f"-I{bundled}" in opts and f"-I{bundled / 'cccl'}" in opts


def test_cccl_unroll_limit_default_changes_no_code() -> None:
    # strata passes NVCC's _CCCL_META_UNROLL_LIMIT (10) for compile speed; CCCL's NVRTC default is 16.
    assert compiler.CCCL_META_UNROLL_LIMIT in compiler._full_options((), lineinfo=True)
    mine = compiler._full_options(["-D_CCCL_META_UNROLL_LIMIT=16"], lineinfo=True)
    assert compiler.CCCL_META_UNROLL_LIMIT not in mine and "-D_CCCL_META_UNROLL_LIMIT=16" in mine
    src = CG_SRC + CUB_SRC
    assert compile_to_ptx(src, name="unroll.cu").ptx == compile_to_ptx(
        src, name="unroll.cu", options=["-D_CCCL_META_UNROLL_LIMIT=16"]).ptx


def test_bundled_header_install_is_atomic_under_races(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Four threads install into the same fresh target at once; the extraction itself is stubbed (slow and
    # NVRTC's own business) by one that writes the tree slowly, file by file, so the installs overlap.
    # Wanted: everyone sees a complete tree, no temporary directory is left behind.
    def slow_install(path: bytes, flags: int) -> tuple[object]:
        root = Path(path.decode())
        (root / "cccl" / "nv").mkdir(parents=True)
        time.sleep(0.05)
        (root / "cccl" / "nv" / "target").write_text("// stub\n")
        (root / ".nvrtc_headers_version").write_text("stub\n")
        return (compiler.nvrtc.nvrtcResult.NVRTC_SUCCESS,)

    monkeypatch.setattr(compiler.nvrtc, "nvrtcInstallBundledHeaders", slow_install)
    target = tmp_path / "nvrtc-headers" / "13.x"
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(compiler._install_bundled(target))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert results == [True] * 4
    assert compiler._headers_complete(target)
    assert sorted(p.name for p in target.parent.iterdir()) == ["13.x"]


def test_failed_bundled_header_install_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiler.nvrtc, "nvrtcInstallBundledHeaders",
                        lambda path, flags: (compiler.nvrtc.nvrtcResult.NVRTC_ERROR_BUILTIN_OPERATION_FAILURE,))
    target = tmp_path / "nvrtc-headers" / "13.x"
    assert not compiler._install_bundled(target)
    assert list(target.parent.iterdir()) == []


# --- what the PTX calls a source that lives in memory -----------------------------------------------------


def test_file_directives_label_memory_sources_not_cwd_files() -> None:
    src = '#include "scale.h"\nextern "C" __global__ void k(float* x) { x[threadIdx.x] = SCALE; }\n'
    out = compile_to_ptx(src, name="scaled.cu", headers={"scale.h": "#define SCALE 3.0f\n"}, cache=False)
    files = [ln.split('"')[1] for ln in out.ptx.splitlines() if ln.strip().startswith(".file")]
    assert compiler.memory_file_label(src, "scaled.cu") in files
    assert all(os.getcwd() not in f for f in files)
    absolute = compile_to_ptx(src, name="/srv/kernels/scaled.cu", headers={"scale.h": "#define SCALE 3.0f\n"},
                              cache=False)
    assert '"/srv/kernels/scaled.cu"' in absolute.ptx  # a real path is the caller's to give


def test_fault_report_names_the_labelled_source() -> None:
    mod = cuda.compile('extern "C" __global__ void oob(float* x) {\n'
                       '    x[threadIdx.x + 1000000] = 1.0f;\n'
                       '}\n', name="oob.cu")
    x = cuda.zeros(4, np.float32)
    with pytest.raises(cuda.DeviceFault) as ei:
        mod.get_function("oob")(1, 32, (x,)).wait()
    source = ei.value.report["source"]
    assert source.startswith("<nvrtc:") and source.endswith("/oob.cu:2"), source
    assert os.getcwd() not in source
