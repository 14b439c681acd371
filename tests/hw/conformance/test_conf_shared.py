# Conformance: shared memory (ld/st.shared, bar.sync): tree reductions, padded tiled transpose,
# tiled matmul, dynamic `extern __shared__` buffers and a warp-shuffle + shared hybrid reduction.
"""Shared-memory reduction and tiling kernels against NumPy oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import assert_close, assert_exact, both_compilers, kernel, rng, run

BLOCK_REDUCE = kernel(
    "shared.block_reduce_int",
    r"""
extern "C" __global__ void block_sum(int n, const int* in, long long* partial) {
    __shared__ long long s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x * 2 + t;
    long long v = 0;
    if (i < n) v += in[i];
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[t] = v;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = s[0];
}
""",
)


@both_compilers
def test_block_reduce_int(compiler: str) -> None:
    n = 5000
    x = rng(10).integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    blocks = (n + 511) // 512
    (_, partial) = run(
        BLOCK_REDUCE, compiler, "block_sum", blocks, 256, np.int32(n), x, np.zeros(blocks, np.int64)
    )
    padded = np.zeros(blocks * 512, np.int64)
    padded[:n] = x
    assert_exact(partial, padded.reshape(blocks, 512).sum(axis=1))


WARP_SHARED_REDUCE = kernel(
    "shared.warp_shuffle_block_reduce_float",
    r"""
__device__ float warp_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
    return v;
}
extern "C" __global__ void block_sum_f(int n, const float* in, float* out) {
    __shared__ float warp_partial[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    v = warp_sum(v);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (blockDim.x + 31) / 32 ? warp_partial[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0) out[blockIdx.x] = v;
    }
}
""",
)


@both_compilers
def test_warp_shuffle_block_reduce_float(compiler: str) -> None:
    n = 4000
    x = rng(11).uniform(-1, 1, n).astype(np.float32)
    blocks = (n + 383) // 384
    (_, out) = run(
        WARP_SHARED_REDUCE, compiler, "block_sum_f", blocks, 384, np.int32(n), x, np.zeros(blocks, np.float32)
    )
    padded = np.zeros(blocks * 384, np.float64)
    padded[:n] = x
    # Summation order differs from NumPy's; 384 terms of size <= 1 in float32.
    assert_close(out, padded.reshape(blocks, 384).sum(axis=1).astype(np.float32), atol=1e-4)


TRANSPOSE = kernel(
    "shared.tiled_transpose_padded",
    r"""
#define TILE 32
#define ROWS 8
extern "C" __global__ void transpose(int rows, int cols, const float* in, float* out) {
    __shared__ float tile[TILE][TILE + 1];   // +1 column avoids bank conflicts
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}
""",
)


@both_compilers
def test_tiled_transpose_padded(compiler: str) -> None:
    rows, cols = 45, 70
    a = rng(12).standard_normal((rows, cols)).astype(np.float32)
    grid = ((cols + 31) // 32, (rows + 31) // 32)
    (_, out) = run(
        TRANSPOSE,
        compiler,
        "transpose",
        grid,
        (32, 8),
        np.int32(rows),
        np.int32(cols),
        a,
        np.zeros(rows * cols, np.float32),
    )
    assert_exact(out, a.T.copy().ravel())


MATMUL = kernel(
    "shared.tiled_matmul",
    r"""
#define T 16
extern "C" __global__ void matmul(int M, int N, int K, const float* A, const float* B, float* C) {
    __shared__ float As[T][T];
    __shared__ float Bs[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
""",
)


@both_compilers
def test_tiled_matmul(compiler: str) -> None:
    M, N, K = 33, 20, 40
    r = rng(13)
    # Small integers: every partial sum is an exact float32 integer, so the result is exact
    # whatever the summation order or fma contraction.
    A = r.integers(-8, 8, (M, K)).astype(np.float32)
    B = r.integers(-8, 8, (K, N)).astype(np.float32)
    grid = ((N + 15) // 16, (M + 15) // 16)
    (_, _, C) = run(
        MATMUL,
        compiler,
        "matmul",
        grid,
        (16, 16),
        np.int32(M),
        np.int32(N),
        np.int32(K),
        A,
        B,
        np.zeros(M * N, np.float32),
    )
    assert_exact(C, (A.astype(np.int64) @ B.astype(np.int64)).astype(np.float32).ravel())


DYN_SHARED = kernel(
    "shared.dynamic_extern_shared",
    r"""
extern "C" __global__ void reverse_block(int* data) {
    extern __shared__ int buf[];            // size given at launch
    int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    buf[t] = data[base + t];
    __syncthreads();
    data[base + t] = buf[blockDim.x - 1 - t];
}
extern "C" __global__ void two_arrays(const float* in, float* out) {
    extern __shared__ float dyn[];          // carve two arrays out of one dynamic allocation
    float* a = dyn;
    double* b = (double*)&dyn[blockDim.x + (blockDim.x & 1)];
    int t = threadIdx.x;
    a[t] = in[t];
    b[t] = (double)in[t] * 2.0;
    __syncthreads();
    out[t] = a[(t + 1) % blockDim.x] + (float)b[blockDim.x - 1 - t];
}
""",
)


@both_compilers
def test_dynamic_extern_shared(compiler: str) -> None:
    x = np.arange(4 * 96, dtype=np.int32) * 3 - 100
    (out,) = run(DYN_SHARED, compiler, "reverse_block", 4, 96, x, shared_mem=96 * 4)
    assert_exact(out, x.reshape(4, 96)[:, ::-1].ravel())
    nt = 100
    f = np.arange(nt, dtype=np.float32) - 17
    (_, o2) = run(
        DYN_SHARED, compiler, "two_arrays", 1, nt, f, np.zeros(nt, np.float32), shared_mem=nt * 4 + nt * 8
    )
    assert_exact(o2, np.roll(f, -1) + (f[::-1] * 2))
