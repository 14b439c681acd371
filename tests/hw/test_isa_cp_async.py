# Tests of the asynchronous-copy family (src/strata/hw/isa/async_copy.py): cp.async of 4/8/16 bytes
# (.ca/.cg), src-size zero fill and ignore-src, commit/wait group semantics (what a wait guarantees, and
# that nothing else completes a copy), double-buffered tile kernels written with inline PTX and with
# CUDA's __pipeline_* primitives, memcheck on both addresses, and the memory counters. Oracles: NumPy.
"""cp.async and its group waits from real NVRTC kernels against NumPy oracles."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import strata.cuda as cuda

SRC = r'''
#include <cuda_pipeline_primitives.h>

#define COPY(NAME, KIND, SIZE)                                                                        \
extern "C" __global__ void NAME(const unsigned char* src, unsigned char* out, int n) {               \
    __shared__ __align__(16) unsigned char s[64 * 16];                                                \
    int i = threadIdx.x;                                                                              \
    for (int b = 0; b < SIZE; b++) s[i * SIZE + b] = 0xAB;                                            \
    __syncthreads();                                                                                  \
    unsigned d = (unsigned)__cvta_generic_to_shared(s + i * SIZE);                                    \
    if (i < n) asm volatile("cp.async." KIND ".shared.global [%0], [%1], " #SIZE ";"                  \
                            :: "r"(d), "l"(src + i * SIZE));                                          \
    asm volatile("cp.async.commit_group;");                                                           \
    asm volatile("cp.async.wait_group 0;" ::: "memory");                                              \
    __syncthreads();                                                                                  \
    for (int b = 0; b < SIZE; b++) out[i * SIZE + b] = s[(blockDim.x - 1 - i) * SIZE + b];           \
}
COPY(ca4, "ca", 4) COPY(ca8, "ca", 8) COPY(ca16, "ca", 16) COPY(cg16, "cg", 16)

// src-size: lane i copies min(i % 17, 16) bytes and zero-fills the rest of its 16
extern "C" __global__ void zfill(const unsigned char* src, unsigned char* out, const unsigned char* edge) {
    __shared__ __align__(16) unsigned char s[64 * 16];
    int i = threadIdx.x;
    for (int b = 0; b < 16; b++) s[i * 16 + b] = 0xAB;
    __syncthreads();
    unsigned d = (unsigned)__cvta_generic_to_shared(s + i * 16);
    int ss = i % 17;
    // lanes with nothing to copy point past every allocation: src-size 0 reads no byte
    const unsigned char* p = ss == 0 ? src + (1 << 24) : src + i * 16;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;" :: "r"(d), "l"(p), "r"(ss));
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();
    for (int b = 0; b < 16; b++) out[i * 16 + b] = s[i * 16 + b];
    if (i == 0) {  // the last 4 bytes of a 4-byte allocation, as a 16-byte copy with src-size 4
        asm volatile("cp.async.ca.shared.global [%0], [%1], 16, 4;" :: "r"(d), "l"(edge));
        asm volatile("cp.async.wait_all;" ::: "memory");
        for (int b = 0; b < 16; b++) out[64 * 16 + b] = s[b];
    }
}

extern "C" __global__ void ignore_src(const unsigned* src, unsigned* out) {
    __shared__ unsigned s[64];
    int i = threadIdx.x;
    s[i] = 0xDEADBEEF;
    __syncthreads();
    unsigned d = (unsigned)__cvta_generic_to_shared(s + i);
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %2, 0;\n"
                 "  cp.async.ca.shared.global [%0], [%1], 4, p; }" :: "r"(d), "l"(src + i), "r"(i & 1));
    asm volatile("cp.async.wait_all;" ::: "memory");
    out[i] = s[i];
}

// What each wait guarantees: out[0..3] are read after wait_group 1, wait_group 0, bar.sync alone and
// wait_all, for copies into four different words
extern "C" __global__ void groups(const unsigned* src, unsigned* out) {
    __shared__ unsigned s[4 * 32];
    int i = threadIdx.x;
    for (int k = 0; k < 4; k++) s[k * 32 + i] = 0xFFFFFFFFu;
    __syncwarp();
    unsigned d = (unsigned)__cvta_generic_to_shared(s + i);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d), "l"(src + i));           // group 0
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d + 128), "l"(src + 32 + i)); // group 1
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 1;" ::: "memory");
    out[0 * 32 + i] = s[i];            // group 0: complete
    out[1 * 32 + i] = s[32 + i];       // group 1: not waited for
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    out[2 * 32 + i] = s[32 + i];       // now complete
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d + 256), "l"(src + 64 + i)); // uncommitted
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    out[3 * 32 + i] = s[64 + i];       // wait_group and bar.sync don't complete an uncommitted copy
    asm volatile("cp.async.wait_all;" ::: "memory");
    out[4 * 32 + i] = s[64 + i];       // wait_all commits and waits
}

// Row sums of a (rows x 256) float matrix, 4 rows per tile: tile k+1 streams in while tile k is summed.
extern "C" __global__ void rowsum_asm(const float* x, float* out, int tiles) {
    __shared__ __align__(16) float buf[2][4 * 256];
    int tid = threadIdx.x;  // 256 threads: each copies 16 bytes (4 floats) of a tile
    const float* base = x + blockIdx.x * tiles * 4 * 256;
    unsigned d0 = (unsigned)__cvta_generic_to_shared(&buf[0][tid * 4]);
    unsigned d1 = (unsigned)__cvta_generic_to_shared(&buf[1][tid * 4]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d0), "l"(base + tid * 4));
    asm volatile("cp.async.commit_group;");
    for (int k = 0; k < tiles; k++) {
        if (k + 1 < tiles) {
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                         :: "r"((k + 1) % 2 ? d1 : d0), "l"(base + (k + 1) * 1024 + tid * 4));
            asm volatile("cp.async.commit_group;");
            asm volatile("cp.async.wait_group 1;" ::: "memory");
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
        __syncthreads();
        if (tid < 4) {
            float acc = 0.0f;
            for (int j = 0; j < 256; j++) acc += buf[k % 2][tid * 256 + j];
            out[(blockIdx.x * tiles + k) * 4 + tid] = acc;
        }
        __syncthreads();
    }
}

// The same with CUDA's pipeline primitives (which NVRTC lowers to cp.async)
extern "C" __global__ void rowsum_pipeline(const float* x, float* out, int tiles) {
    __shared__ __align__(16) float buf[2][4 * 256];
    int tid = threadIdx.x;
    const float* base = x + blockIdx.x * tiles * 4 * 256;
    __pipeline_memcpy_async(&buf[0][tid * 4], base + tid * 4, 16);
    __pipeline_commit();
    for (int k = 0; k < tiles; k++) {
        if (k + 1 < tiles) {
            __pipeline_memcpy_async(&buf[(k + 1) % 2][tid * 4], base + (k + 1) * 1024 + tid * 4, 16);
            __pipeline_commit();
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        if (tid < 4) {
            float acc = 0.0f;
            for (int j = 0; j < 256; j++) acc += buf[k % 2][tid * 256 + j];
            out[(blockIdx.x * tiles + k) * 4 + tid] = acc;
        }
        __syncthreads();
    }
}

extern "C" __global__ void bad_copy(const float* src, int src_off, int dst_off) {
    __shared__ __align__(16) float s[256];
    unsigned d = (unsigned)__cvta_generic_to_shared(s) + (threadIdx.x * 16 + dst_off);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
                 :: "r"(d), "l"((const char*)src + threadIdx.x * 16 + src_off));
    asm volatile("cp.async.wait_all;" ::: "memory");
}
'''


@functools.cache
def module() -> cuda.Module:
    return cuda.compile(SRC, name="cp_async.cu")


def run(name: str, *args: np.ndarray | np.generic, grid: int = 1, block: int = 64) -> tuple[list[np.ndarray],
                                                                                           cuda.LaunchReport]:
    """Launch with arrays copied in (scalars by value); returns the arrays copied back and the report."""
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    report = module().get_function(name).launch((grid,), (block,), tuple(dev))
    return [d.get() for d in dev if isinstance(d, cuda.DeviceArray)], report


@pytest.mark.parametrize("name,size", [("ca4", 4), ("ca8", 8), ("ca16", 16), ("cg16", 16)])
def test_copy_sizes(name: str, size: int) -> None:
    n = 50  # lanes 50..63 issue no copy: their bytes keep the value stored before
    src = np.random.default_rng(size).integers(0, 256, 64 * size).astype(np.uint8)
    (_, out), report = run(name, src, np.zeros(64 * size, np.uint8), np.int32(n))
    s = np.full((64, size), 0xAB, np.uint8)
    s[:n] = src.reshape(64, size)[:n]
    np.testing.assert_array_equal(out.reshape(64, size), s[::-1])
    c = report.counters
    assert c.global_load_bytes == n * size and c.global_store_bytes == 64 * size
    assert c.shared_store_bytes == 64 * size + n * size  # the 0xAB fill, then the copies
    assert c.thread_instructions["memory"] > 0 and c.warp_instructions["sync"] >= 2 * 2


def test_src_size_zero_fills_and_reads_only_src_size_bytes() -> None:
    src = np.random.default_rng(1).integers(1, 256, 64 * 16).astype(np.uint8)
    edge = np.array([1, 2, 3, 4], np.uint8)  # a 4-byte allocation: 12 bytes past it are never read
    (_, out, _), _ = run("zfill", src, np.zeros(65 * 16, np.uint8), edge)
    out = out.reshape(65, 16)
    for i in range(64):
        k = i % 17
        want = np.concatenate([src[i * 16: i * 16 + k], np.zeros(16 - k, np.uint8)])
        np.testing.assert_array_equal(out[i], want, err_msg=f"lane {i}, src-size {k}")
    np.testing.assert_array_equal(out[64], [1, 2, 3, 4] + [0] * 12)


def test_ignore_src_copies_zeros() -> None:
    src = np.arange(1, 65, dtype=np.uint32)
    (_, out), _ = run("ignore_src", src, np.zeros(64, np.uint32))
    np.testing.assert_array_equal(out, np.where(np.arange(64) % 2 == 1, 0, src))


def test_wait_group_completes_exactly_the_older_groups() -> None:
    """After wait_group N the older groups' data is in shared memory; strata completes nothing else
    (a legal outcome the ISA allows, so a missing wait shows up as stale data)."""
    src = np.arange(1000, 1096, dtype=np.uint32)
    (_, out), _ = run("groups", src, np.zeros(5 * 32, np.uint32), block=32)
    out = out.reshape(5, 32)
    stale = np.full(32, 0xFFFFFFFF, np.uint32)
    np.testing.assert_array_equal(out[0], src[:32])  # guaranteed by the ISA
    np.testing.assert_array_equal(out[1], stale)  # group 1 was still pending
    np.testing.assert_array_equal(out[2], src[32:64])  # guaranteed
    np.testing.assert_array_equal(out[3], stale)  # uncommitted: wait_group and bar.sync don't wait for it
    np.testing.assert_array_equal(out[4], src[64:96])  # wait_all does


@pytest.mark.parametrize("kernel", ["rowsum_asm", "rowsum_pipeline"])
def test_double_buffered_tiles(kernel: str) -> None:
    blocks, tiles = 3, 5
    x = np.random.default_rng(2).standard_normal((blocks * tiles * 4, 256)).astype(np.float32)
    (_, out), report = run(kernel, x, np.zeros(blocks * tiles * 4, np.float32), np.int32(tiles), grid=blocks,
                           block=256)
    want = np.add.accumulate(x, axis=1, dtype=np.float32)[:, -1]  # the kernel's sequential f32 sum
    np.testing.assert_array_equal(out, want)
    assert report.counters.global_load_bytes == x.nbytes


def test_out_of_bounds_source_is_reported() -> None:
    src = cuda.to_device(np.zeros(256, np.float32))  # 1 KiB: 64 lanes x 16 bytes exactly
    with pytest.raises(cuda.DeviceFault) as ei:
        module().get_function("bad_copy")((1,), (64,), (src, np.int32(16), np.int32(0))).wait()
    r = ei.value.report
    assert r["space"] == "global" and r["access"] == "read" and r["size"] == 16
    assert r["thread"] == (63, 0, 0) and r["address"] == src.ptr + 1024
    assert r["instruction"].startswith("cp.async") and "after the end of allocation" in r["nearest"]


def test_out_of_bounds_destination_is_reported() -> None:
    src = cuda.to_device(np.zeros(512, np.float32))
    with pytest.raises(cuda.DeviceFault) as ei:  # shared s is 1 KiB; lane 63's 16 bytes start at 1024
        module().get_function("bad_copy")((1,), (64,), (src, np.int32(0), np.int32(16))).wait()
    r = ei.value.report
    assert r["space"] == "shared" and r["access"] == "write" and r["thread"] == (63, 0, 0)


def test_misaligned_copy_is_reported() -> None:
    src = cuda.to_device(np.zeros(512, np.float32))
    with pytest.raises(cuda.DeviceFault) as ei:
        module().get_function("bad_copy")((1,), (64,), (src, np.int32(4), np.int32(0))).wait()
    assert ei.value.name == "cudaErrorMisalignedAddress" and ei.value.report["thread"] == (0, 0, 0)
