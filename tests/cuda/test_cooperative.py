"""Cooperative launch: `Kernel.launch_cooperative` / cudaLaunchCooperativeKernel and cooperative groups'
`this_grid().sync()` in NVRTC-compiled kernels, against NumPy oracles; co-residency and the error paths."""

from __future__ import annotations

import numpy as np
import pytest

import strata.cuda as cuda
from strata.hip import capi

HEADER = """
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
"""

REDUCE = HEADER + r"""
// Sum of x: per-block partial sums, a grid sync, then every block adds up the partials.
extern "C" __global__ void reduce(const float* x, int n, float* partial, float* out, int* valid) {
  cg::grid_group g = cg::this_grid();
  __shared__ float s[128];
  float acc = 0.f;
  for (unsigned long long i = g.thread_rank(); i < (unsigned long long)n; i += g.size()) acc += x[i];
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
  g.sync();
  if (threadIdx.x == 0) {
    float t = 0.f;
    for (int b = 0; b < gridDim.x; ++b) t += partial[b];
    out[blockIdx.x] = t;
  }
  valid[g.thread_rank()] = g.is_valid();
}
"""

JACOBI = HEADER + r"""
// Jacobi sweeps for -u'' = f on a 1-D grid with fixed ends; one grid sync per sweep (ping-pong buffers).
extern "C" __global__ void jacobi(float* u, float* v, const float* f, int n, int sweeps, float h2) {
  cg::grid_group g = cg::this_grid();
  for (int it = 0; it < sweeps; ++it) {
    const float* src = (it & 1) ? v : u;
    float* dst = (it & 1) ? u : v;
    for (int i = g.thread_rank(); i < n; i += g.size())
      dst[i] = (i == 0 || i == n - 1) ? src[i] : 0.5f * (src[i - 1] + src[i + 1] + h2 * f[i]);
    g.sync();
  }
}
"""

DIVERGENT = HEADER + r"""
// Odd blocks do extra work and reach a different grid-sync call site than even blocks, every round.
extern "C" __global__ void rounds(int* counter, int* seen, int* busy, int nrounds) {
  cg::grid_group g = cg::this_grid();
  for (int r = 0; r < nrounds; ++r) {
    if (threadIdx.x == 0) atomicAdd(counter, 1);
    if (blockIdx.x & 1) {
      for (int i = 0; i < 40 + (int)blockIdx.x; ++i) atomicAdd(busy, 1);
      g.sync();
    } else {
      g.sync();
    }
    seen[r * g.size() + g.thread_rank()] = atomicAdd(counter, 0);
    g.sync();  // nobody starts the next round's increment before everyone has looked
  }
}
"""

LATE_WARPS = HEADER + r"""
// Each warp spins a data-dependent number of times before writing; after the grid sync every thread
// reads the value written by a thread of another block.
extern "C" __global__ void late(const int* spins, float* a, float* out, int n) {
  cg::grid_group g = cg::this_grid();
  unsigned int t = g.thread_rank();
  float v = (float)t;
  for (int i = 0; i < spins[t / 32]; ++i) v = v * 0.5f + 1.0f;
  a[t] = v;
  g.sync();
  out[t] = a[(t + 3 * blockDim.x + 7) % n];
}
"""

VALID = HEADER + r"""
extern "C" __global__ void valid(int* out) { out[cg::this_grid().thread_rank()] = cg::this_grid().is_valid(); }
"""


def _kernel(src: str, name: str) -> cuda.Kernel:
    return cuda.compile(src).get_function(name)


def test_grid_sync_reduction_matches_numpy() -> None:
    k = _kernel(REDUCE, "reduce")
    rng = np.random.default_rng(1)
    x = rng.standard_normal(50_000).astype(np.float32)
    blocks, threads = 12, 128
    d_x, partial = cuda.to_device(x), cuda.zeros(blocks, np.float32)
    out, valid = cuda.zeros(blocks, np.float32), cuda.zeros(blocks * threads, np.int32)
    k.launch_cooperative(blocks, threads, (d_x, np.int32(x.size), partial, out, valid)).wait()
    np.testing.assert_allclose(out.get(), np.full(blocks, x.astype(np.float64).sum()), rtol=1e-4, atol=1e-3)
    assert (valid.get() == 1).all()


def test_jacobi_with_grid_sync_in_a_loop_matches_numpy() -> None:
    k = _kernel(JACOBI, "jacobi")
    n, sweeps = 700, 25
    h2 = np.float32((1.0 / (n - 1)) ** 2)
    rng = np.random.default_rng(2)
    u0 = rng.standard_normal(n).astype(np.float32)
    f = rng.standard_normal(n).astype(np.float32) * np.float32(1e3)
    u, v = cuda.to_device(u0), cuda.to_device(u0)
    k.launch_cooperative(3, 64, (u, v, cuda.to_device(f), np.int32(n), np.int32(sweeps), h2)).wait()
    ref = u0.copy()
    for _ in range(sweeps):
        nxt = ref.copy()
        nxt[1:-1] = np.float32(0.5) * (ref[:-2] + ref[2:] + h2 * f[1:-1])
        ref = nxt
    got = (v if sweeps % 2 else u).get()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_grid_sync_from_divergent_call_sites_in_a_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "20")  # were the spinning blocks to starve the others: fail, not hang
    k = _kernel(DIVERGENT, "rounds")
    blocks, threads, nrounds = 6, 64, 3
    counter, busy = cuda.zeros(1, np.int32), cuda.zeros(1, np.int32)
    seen = cuda.zeros(nrounds * blocks * threads, np.int32)
    k.launch_cooperative(blocks, threads, (counter, seen, busy, np.int32(nrounds))).wait()
    # after round r's first sync, every block has made its increment for rounds 0..r
    expect = np.repeat((np.arange(nrounds) + 1) * blocks, blocks * threads)
    np.testing.assert_array_equal(seen.get(), expect)
    assert int(busy.get()[0]) == nrounds * threads * sum(40 + b for b in range(1, blocks, 2))


def test_late_warps_are_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    # one block per chunk if the launch were chunked: a cooperative grid must run as one chunk anyway
    monkeypatch.setenv("STRATA_CHUNK_LANES", "64")
    k = _kernel(LATE_WARPS, "late")
    blocks, threads = 5, 96
    n = blocks * threads
    spins = (np.arange(n // 32) * 7 % 23).astype(np.int32)
    a, out = cuda.zeros(n, np.float32), cuda.zeros(n, np.float32)
    k.launch_cooperative(blocks, threads, (cuda.to_device(spins), a, out, np.int32(n))).wait()
    ref = np.arange(n, dtype=np.float32)
    for t in range(n):
        for _ in range(spins[t // 32]):
            ref[t] = ref[t] * np.float32(0.5) + np.float32(1.0)
    np.testing.assert_array_equal(out.get(), ref[(np.arange(n) + 3 * threads + 7) % n])


def test_grid_is_valid_only_in_a_cooperative_launch() -> None:
    k = _kernel(VALID, "valid")
    out = cuda.zeros(2 * 32, np.int32)
    k.launch(2, 32, (out,)).wait()
    assert (out.get() == 0).all()
    cuda.launch_cooperative_kernel(k, 2, 32, (out,)).wait()
    assert (out.get() == 1).all()


def test_grid_larger_than_the_device_holds_at_once_is_refused() -> None:
    k = _kernel(REDUCE, "reduce")
    dev = cuda.current_device()
    per_sm = cuda.occupancy_max_active_blocks_per_multiprocessor(k, 128)
    limit = k.max_cooperative_blocks(128)
    assert limit == per_sm * dev.multiProcessorCount > 0
    assert dev.cooperativeLaunch == 1
    x = cuda.zeros(4, np.float32)
    args = (x, np.int32(4), cuda.zeros(limit + 1, np.float32), cuda.zeros(limit + 1, np.float32),
            cuda.zeros((limit + 1) * 128, np.int32))
    with pytest.raises(cuda.CudaError) as ei:
        k.launch_cooperative(limit + 1, 128, args)
    assert ei.value.name == "cudaErrorCooperativeLaunchTooLarge" and ei.value.hip_name == \
        "hipErrorCooperativeLaunchTooLarge"
    assert f"{limit + 1} blocks" in str(ei.value) and str(limit) in str(ei.value)
    # dynamic shared memory lowers the limit, as the occupancy calculator says
    smem = 100 * 1024
    k.set_attribute("max_dynamic_shared_size_bytes", smem)
    small = k.max_cooperative_blocks(128, smem)
    assert small == cuda.occupancy_max_active_blocks_per_multiprocessor(k, 128, smem) * dev.multiProcessorCount
    assert small < limit
    with pytest.raises(cuda.CudaError, match="cudaErrorCooperativeLaunchTooLarge"):
        k.launch_cooperative(small + 1, 128, args, shared_mem=smem)


def test_grid_sync_in_a_plain_launch_fails_clearly() -> None:
    k = _kernel(REDUCE, "reduce")
    x = cuda.zeros(64, np.float32)
    args = (x, np.int32(64), cuda.zeros(2, np.float32), cuda.zeros(2, np.float32), cuda.zeros(256, np.int32))
    with pytest.raises(cuda.DeviceFault) as ei:
        k.launch(2, 128, args).wait()
    assert ei.value.name == "cudaErrorLaunchFailure"
    assert "grid sync outside a cooperative launch" in str(ei.value)
    assert ei.value.report["cause"] == "grid sync outside a cooperative launch"


def test_a_plain_trap_is_not_blamed_on_grid_sync() -> None:
    k = _kernel('extern "C" __global__ void t(int* x) { if (x[0] == 0) __trap(); }', "t")
    with pytest.raises(cuda.DeviceFault) as ei:
        k.launch(1, 32, (cuda.zeros(1, np.int32),)).wait()
    assert "grid sync" not in str(ei.value)


def test_hip_launch_cooperative_kernel() -> None:
    k = _kernel(VALID, "valid")
    out = cuda.zeros(3 * 64, np.int32)
    capi.hipLaunchCooperativeKernel(k, 3, 64, (out,), 0, None).wait()
    assert (out.get() == 1).all()


def test_cooperative_launch_works_after_a_device_reset() -> None:
    k = _kernel(VALID, "valid")
    cuda.launch_cooperative_kernel(k, 2, 32, (cuda.zeros(64, np.int32),)).wait()
    cuda.current_device().reset()  # frees every allocation, the grid workspace with them
    out = cuda.zeros(64, np.int32)
    cuda.launch_cooperative_kernel(k, 2, 32, (out,)).wait()
    assert (out.get() == 1).all()


def test_a_block_that_skips_the_grid_sync_hangs_until_the_watchdog(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "0.3")
    k = _kernel(HEADER + r"""
extern "C" __global__ void skip(int* x) {
  if (blockIdx.x == 1) return;     // never arrives: the others wait forever, as on a GPU
  cg::this_grid().sync();
  x[blockIdx.x] = 1;
}""", "skip")
    with pytest.raises(cuda.LaunchTimeout, match="STRATA_KERNEL_TIMEOUT") as ei:
        k.launch_cooperative(3, 32, (cuda.zeros(3, np.int32),)).wait()
    assert "grid sync with 2 of 3 blocks arrived" in str(ei.value)


def test_split_arrive_wait_and_cg_sync() -> None:
    k = _kernel(HEADER + r"""
extern "C" __global__ void split(int* x, int* out) {
  cg::grid_group g = cg::this_grid();
  atomicAdd(x, 1);
  auto token = g.barrier_arrive();   // CUDA 12.2's split grid barrier
  g.barrier_wait(std::move(token));
  out[g.thread_rank()] = x[0];
  cg::sync(g);
  atomicAdd(x, 1);
  g.sync();
  out[g.size() + g.thread_rank()] = x[0];
}""", "split")
    x, out = cuda.zeros(1, np.int32), cuda.zeros(2 * 4 * 64, np.int32)
    k.launch_cooperative(4, 64, (x, out)).wait()
    np.testing.assert_array_equal(out.get(), np.repeat([256, 512], 256))
