"""Independent thread scheduling (sm_70+): lanes of one warp or block on different divergent paths that
wait for each other (spin on a flag, __syncwarp across the two sides of a branch) still finish, with the
values the exchange promises. The engine runs one reconvergence-stack entry at a time, so these kernels
finish only if a spinning path lets every other runnable path progress and bar.warp.sync really waits."""

import numpy as np
import pytest

import strata.cuda as cuda

SRC = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

// Warp 0 produces; the other warps consume, split by an inner branch into two spinning paths. A yield that
// only swaps the two nearest sibling paths would bounce between the two consumer paths forever.
extern "C" __global__ void nested_consumers(const int* x, int* out) {
    __shared__ int data[32];
    __shared__ volatile int flag;
    int t = threadIdx.x;
    if (t == 0) flag = 0;
    __syncthreads();
    if (t >= 32) {
        if (t & 1) { while (flag == 0) { } out[t] = data[t % 32] * 2; }
        else       { while (flag == 0) { } out[t] = data[t % 32] * 3; }
    } else {
        data[t] = x[t] + 1;
        __threadfence_block();
        __syncwarp();
        if (t == 0) flag = 1;
        out[t] = -data[t];
    }
}

// Ping-pong between the two halves of one warp through a shared counter: each half waits for the other's
// turn n times, so the two paths must alternate many times.
extern "C" __global__ void ping_pong(int* out, int n) {
    __shared__ volatile int turn;
    __shared__ int log[64];
    int lane = threadIdx.x;
    if (lane == 0) turn = 0;
    __syncwarp();
    int side = lane < 16 ? 0 : 1;
    for (int k = 0; k < n; ++k) {
        while (true) { if (turn % 2 == side) break; }
        __syncwarp(side ? 0xFFFF0000u : 0x0000FFFFu);
        if (lane == 0 || lane == 16) { log[turn] = side; turn = turn + 1; }
        __syncwarp(side ? 0xFFFF0000u : 0x0000FFFFu);
    }
    __syncwarp();
    if (lane < 2 * n) out[lane] = log[lane];
}

// __syncwarp() on both sides of a branch: each half writes its slot, waits for the other half at its own
// __syncwarp, then reads the other half's slot. Without a real barrier the first half reads stale data.
extern "C" __global__ void syncwarp_exchange(const int* x, int* out) {
    __shared__ int s[256];
    int t = threadIdx.x, lane = t % 32;
    int v = x[blockIdx.x * blockDim.x + t];
    int r;
    if (lane < 16) {
        int a = v;
        for (int k = 0; k < (v & 7); ++k) a = a * 3 + 1;
        s[t] = a; __syncwarp(); r = s[t + 16];
    }
    else           { s[t] = v + 7; __syncwarp(); r = s[t - 16] - 1; }
    out[blockIdx.x * blockDim.x + t] = r;
}

// A three-way split where only two paths name each other in their masks; the third runs on alone.
extern "C" __global__ void syncwarp_partial_mask(const int* x, int* out) {
    __shared__ int s[32];
    int lane = threadIdx.x;
    int v = x[lane];
    int r;
    if (lane < 8)       { s[lane] = v; __syncwarp(0x0000FFFFu); r = s[lane + 8]; }
    else if (lane < 16) { s[lane] = -v; __syncwarp(0x0000FFFFu); r = s[lane - 8]; }
    else                { r = v * 10; __syncwarp(0xFFFF0000u); }
    out[lane] = r;
}

// Lanes 24..31 exit before a full-mask __syncwarp the others reach on two paths: exited lanes count as
// arrived (CUDA leaves it undefined; strata must not hang).
extern "C" __global__ void syncwarp_exited(const int* x, int* out) {
    __shared__ int s[32];
    int lane = threadIdx.x;
    if (lane >= 24) return;
    int v = x[lane];
    int r;
    if (lane < 12) { s[lane] = v; __syncwarp(); r = s[lane + 12]; }
    else           { s[lane] = v + 1; __syncwarp(); r = s[lane - 12]; }
    out[lane] = r;
}

// __syncthreads() on both sides of a branch (PTX: bar.sync counts threads, whichever instruction they reach).
extern "C" __global__ void syncthreads_two_sides(const int* x, int* out) {
    __shared__ int s[128];
    int t = threadIdx.x, v = x[t], r;
    if (t < 64) {
        int a = v;
        for (int k = 0; k < (v & 7); ++k) a = a * 3 + 1;
        s[t] = a; __syncthreads(); r = s[127 - t];
    }
    else        { s[t] = v + 7; __syncthreads(); r = s[127 - t] - 1; }
    out[t] = r;
}

// The two blocks of a cluster reach cluster.sync() on different code paths, then read each other's shared
// memory.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_two_paths(const int* x, int* out) {
    __shared__ int buf[64];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    int t = threadIdx.x, v = x[blockIdx.x * 64 + t];
    if (rank == 0) { int a = v; for (int k = 0; k < (v & 3); ++k) a += k; buf[t] = a; cluster.sync(); }
    else           { buf[t] = -v; cluster.sync(); }
    int* peer = cluster.map_shared_rank(buf, rank ^ 1);
    out[blockIdx.x * 64 + t] = peer[63 - t];
    cluster.sync();
}

// Half the warp waits at __syncwarp() for the other half, which waits at __syncthreads() for the first:
// a deadlock on a GPU too.
extern "C" __global__ void crossed_barriers(int* out) {
    int lane = threadIdx.x;
    if (lane < 16) { __syncwarp(); out[lane] = 1; }
    else           { __syncthreads(); out[lane] = 2; }
}

// The repro of a multi-warp tile's shfl with a per-thread source rank: cooperative groups' multi-warp shfl
// is a broadcast through one shared slot per warp, so every thread of the tile must name the same source
// (CUDA: undefined otherwise). Here each warp's lanes take both of its paths; the lanes that wait at its
// __syncwarp wait for lanes spinning on a flag the other warp sets after its own __syncwarp: it hangs.
extern "C" __global__ void tile64_per_thread_source(const int* x, int* out) {
    auto t = cg::tiled_partition<64>(cg::this_thread_block());
    int v = x[threadIdx.x];
    out[threadIdx.x] = t.shfl(v, (t.thread_rank() + 5) % 64);
}

// Warp specialization with named barriers (bar.sync/bar.arrive id, count): warps 2-3 produce into a shared
// buffer, warps 0-1 consume it; barrier 1 says "full", barrier 2 says "empty", 128 threads each.
extern "C" __global__ void named_producer_consumer(const int* x, int* out, int rounds) {
    __shared__ int buf[64];
    int t = threadIdx.x;
    if (t < 64) asm volatile("bar.arrive 2, 128;" ::: "memory");  // the buffer starts empty
    for (int r = 0; r < rounds; ++r) {
        if (t < 64) {
            asm volatile("bar.sync 1, 128;" ::: "memory");
            out[r * 64 + t] = buf[63 - t] + 1;
            asm volatile("bar.arrive 2, 128;" ::: "memory");
        } else {
            asm volatile("bar.sync 2, 128;" ::: "memory");
            buf[t - 64] = x[r * 64 + t - 64] * 2 + r;
            asm volatile("bar.arrive 1, 128;" ::: "memory");
        }
    }
}

template <int N> __device__ void tile_ops(const int* x, int* out, int src) {
    auto t = cg::tiled_partition<N>(cg::this_thread_block());
    int v = x[threadIdx.x];
    int n = blockDim.x;
    out[threadIdx.x] = t.shfl(v, src);
    t.sync();
    out[n + threadIdx.x] = t.any(v > 1000) + 2 * t.all(v >= 0);
    out[2 * n + threadIdx.x] = cg::reduce(t, v, cg::plus<int>());
    out[3 * n + threadIdx.x] = cg::reduce(t, v, cg::greater<int>());
}
extern "C" __global__ void tile64(const int* x, int* out, int src) { tile_ops<64>(x, out, src); }
extern "C" __global__ void tile128(const int* x, int* out, int src) { tile_ops<128>(x, out, src); }
"""


@pytest.fixture(scope="module")
def mod():
    return cuda.compile(SRC, name="independent_scheduling.cu")


@pytest.fixture(autouse=True)
def _watchdog(monkeypatch):
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "20")  # a scheduling bug fails the test instead of hanging it


def _collatzish(v):
    a = int(v)
    for _ in range(int(v) & 7):
        a = a * 3 + 1
    return a


def _ints(n, lo, hi, seed):
    return np.random.default_rng(seed).integers(lo, hi, n, dtype=np.int32)


def test_spin_lets_a_producer_below_two_spinning_paths_run(mod):
    x = _ints(32, -50, 50, 1)
    out = cuda.zeros(128, np.int32)
    mod.get_function("nested_consumers")(1, 128, (cuda.to_device(x), out)).wait()
    data = x + 1
    t = np.arange(128)
    want = np.where(t < 32, -data[t % 32], np.where(t & 1, data[t % 32] * 2, data[t % 32] * 3))
    np.testing.assert_array_equal(out.get(), want.astype(np.int32))


def test_two_halves_of_a_warp_take_turns(mod):
    n = 12
    out = cuda.to_device(np.full(32, -1, np.int32))
    mod.get_function("ping_pong")(1, 32, (out, np.int32(n))).wait()
    want = np.full(32, -1, np.int32)
    want[:2 * n] = np.arange(2 * n) % 2  # turns alternate, starting with the lower half
    np.testing.assert_array_equal(out.get(), want)


def test_syncwarp_is_a_barrier_across_divergent_paths(mod):
    x = _ints(512, -1000, 1000, 2)
    out = cuda.zeros(512, np.int32)
    mod.get_function("syncwarp_exchange")(2, 256, (cuda.to_device(x), out)).wait()
    lane = np.arange(512) % 32
    partner = np.where(lane < 16, np.arange(512) + 16, np.arange(512) - 16)
    lower = np.array([_collatzish(v) for v in x], np.int64).astype(np.int32)
    want = np.where(lane < 16, x[partner] + 7, lower[partner] - 1)
    np.testing.assert_array_equal(out.get(), want.astype(np.int32))


def test_syncwarp_waits_only_for_the_lanes_its_mask_names(mod):
    x = _ints(32, -1000, 1000, 3)
    out = cuda.zeros(32, np.int32)
    mod.get_function("syncwarp_partial_mask")(1, 32, (cuda.to_device(x), out)).wait()
    lane = np.arange(32)
    want = np.where(lane < 8, -x[(lane + 8) % 32], np.where(lane < 16, x[(lane - 8) % 32], x * 10))
    np.testing.assert_array_equal(out.get(), want.astype(np.int32))


def test_syncwarp_counts_exited_lanes_as_arrived(mod):
    x = _ints(32, -1000, 1000, 4)
    out = cuda.to_device(np.full(32, 99, np.int32))
    mod.get_function("syncwarp_exited")(1, 32, (cuda.to_device(x), out)).wait()
    lane = np.arange(32)
    want = np.where(lane < 12, x[(lane + 12) % 32] + 1, x[(lane - 12) % 32])
    want[24:] = 99
    np.testing.assert_array_equal(out.get(), want.astype(np.int32))


@pytest.mark.parametrize(("kernel", "size", "src"), [("tile64", 64, 5), ("tile64", 64, 37), ("tile128", 128, 100)])
def test_multi_warp_tiles(mod, kernel, size, src):
    x = _ints(256, 0, 2000, 5)
    out = cuda.zeros(4 * 256, np.int32)
    mod.get_function(kernel)(1, 256, (cuda.to_device(x), out, np.int32(src))).wait()
    got = out.get().reshape(4, 256)
    tiles = x.reshape(-1, size)
    np.testing.assert_array_equal(got[0], np.repeat(tiles[:, src], size))
    np.testing.assert_array_equal(got[1], np.repeat((tiles > 1000).any(1) + 2 * (tiles >= 0).all(1), size))
    np.testing.assert_array_equal(got[2], np.repeat(tiles.sum(1), size))
    np.testing.assert_array_equal(got[3], np.repeat(tiles.max(1), size))


def test_syncthreads_on_both_sides_of_a_branch(mod):
    x = _ints(128, -1000, 1000, 6)
    out = cuda.zeros(128, np.int32)
    mod.get_function("syncthreads_two_sides")(1, 128, (cuda.to_device(x), out)).wait()
    t = np.arange(128)
    lower = np.array([_collatzish(v) for v in x], np.int64).astype(np.int32)
    src = 127 - t
    want = np.where(t < 64, x[src] + 7, lower[src] - 1)
    np.testing.assert_array_equal(out.get(), want.astype(np.int32))


def test_cluster_barrier_on_two_paths(mod):
    x = _ints(256, -1000, 1000, 7)
    out = cuda.zeros(256, np.int32)
    mod.get_function("cluster_two_paths")(4, 64, (cuda.to_device(x), out)).wait()
    xb = x.reshape(4, 64)
    buf = np.empty_like(xb)
    for b in range(4):
        for t in range(64):
            v = int(xb[b, t])
            buf[b, t] = v + sum(range(v & 3)) if b % 2 == 0 else -v
    want = buf[np.arange(4) ^ 1][:, ::-1]
    np.testing.assert_array_equal(out.get(), want.reshape(-1))


def test_crossed_barriers_are_a_deadlock(mod):
    with pytest.raises(cuda.DeviceFault, match="Barrier error") as ei:
        mod.get_function("crossed_barriers")(1, 32, (cuda.zeros(32, np.int32),)).wait()
    assert "can never reach" in str(ei.value)


def test_multi_warp_shfl_with_per_thread_sources_hangs_until_the_watchdog(mod, monkeypatch):
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "0.5")
    x = _ints(128, 0, 100, 8)
    with pytest.raises(cuda.LaunchTimeout, match="wait at bar.warp.sync"):
        mod.get_function("tile64_per_thread_source")(1, 128, (cuda.to_device(x), cuda.zeros(128, np.int32))).wait()


def test_named_barriers_pace_producer_and_consumer_warps(mod):
    rounds = 6
    x = _ints(64 * rounds, -1000, 1000, 9)
    out = cuda.zeros(64 * rounds, np.int32)
    mod.get_function("named_producer_consumer")(1, 128, (cuda.to_device(x), out, np.int32(rounds))).wait()
    xr = x.reshape(rounds, 64)
    want = xr[:, ::-1] * 2 + np.arange(rounds)[:, None] + 1
    np.testing.assert_array_equal(out.get(), want.reshape(-1).astype(np.int32))
