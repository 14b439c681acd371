"""The level-1, level-2 and trsm kernels of strata.libs.blas (CUDA C++), for float and double.

Vectors are (n, inc) pairs as in BLAS: element i lives at x[i*inc] for inc > 0 and at
x[(n-1-i)*|inc|] for inc < 0. Reductions (dot, asum, the scaled sum of squares behind nrm2, amax,
iamax) run in two passes with a fixed tree order, so results are reproducible run to run: up to 128
blocks of 256 threads each reduce a grid-strided share into one partial, then one block reduces the
partials. gemv 'N' gives each thread one row of A (coalesced down the columns); gemv 'T' gives each
warp one column, summed with warp shuffles. trsm solves each right-hand side in one block: for each
pivot in order, one thread divides by the diagonal, then the block updates the remaining rows.

Example:
    >>> vec_name("reduce_kernel", np.dtype(np.float64), 3)
    'reduce_kernel<double, 3>'
"""

from __future__ import annotations

import numpy as np

from strata.libs.blas.gemm_kernels import KernelFamily

# reduce_kernel operations
DOT, ASUM, SUMSQ, AMAX, SUM = 0, 1, 2, 3, 4
REDUCE_BLOCK, REDUCE_MAX_BLOCKS = 256, 128

SOURCE = r"""
__device__ __forceinline__ long long vidx(int i, int n, int inc) {
    return inc > 0 ? (long long)i * inc : (long long)(n - 1 - i) * (-inc);
}

template <typename T>
__global__ void axpy_kernel(int n, T alpha, const T* __restrict__ x, int incx, T* y, int incy) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { T* py = y + vidx(i, n, incy); *py = alpha * x[vidx(i, n, incx)] + *py; }
}

template <typename T>
__global__ void scal_kernel(int n, T alpha, T* x, int incx) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[(long long)i * incx] *= alpha;
}

// OP: 0 dot x.y, 1 sum |x|, 2 sum (x/scale)^2, 3 max |x|, 4 sum x (second pass over partials)
template <typename T, int OP>
__global__ void __launch_bounds__(256) reduce_kernel(int n, const T* __restrict__ x, int incx,
                                                     const T* __restrict__ y, int incy, T scale, T* out) {
    __shared__ T s[256];
    const int tid = threadIdx.x;
    T acc = (T)0;
    for (int i = blockIdx.x * 256 + tid; i < n; i += gridDim.x * 256) {
        T v = x[vidx(i, n, incx)];
        if (OP == 0) acc += v * y[vidx(i, n, incy)];
        else if (OP == 1) acc += fabs(v);
        else if (OP == 2) { T t = v / scale; acc += t * t; }
        else if (OP == 3) acc = fmax(acc, fabs(v));
        else acc += v;
    }
    s[tid] = acc;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (tid < w) s[tid] = OP == 3 ? fmax(s[tid], s[tid + w]) : s[tid] + s[tid + w];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// first max |x| (NaNs never win); `xi` null: x is the vector, else x holds |values| found at indices xi
template <typename T>
__global__ void __launch_bounds__(256) iamax_kernel(int n, const T* __restrict__ x, int incx,
                                                    const int* __restrict__ xi, T* out, int* out_i) {
    __shared__ T sv[256];
    __shared__ int si[256];
    const int tid = threadIdx.x;
    T best = (T)-1;
    int at = 0x7fffffff;
    for (int i = blockIdx.x * 256 + tid; i < n; i += gridDim.x * 256) {
        T v = xi ? x[i] : fabs(x[vidx(i, n, incx)]);
        int j = xi ? xi[i] : i;
        if (v > best || (v == best && j < at)) { best = v; at = j; }
    }
    sv[tid] = best; si[tid] = at;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (tid < w) {
            T v = sv[tid + w];
            int j = si[tid + w];
            if (v > sv[tid] || (v == sv[tid] && j < si[tid])) { sv[tid] = v; si[tid] = j; }
        }
        __syncthreads();
    }
    if (tid == 0) { out[blockIdx.x] = sv[0]; out_i[blockIdx.x] = si[0]; }
}

template <typename T>
__global__ void gemv_n(int m, int n, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ x, int incx,
                       T beta, T* y, int incy) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    T acc = (T)0;
    if (alpha != (T)0)
        for (int j = 0; j < n; ++j) acc += A[i + (long long)j * lda] * x[vidx(j, n, incx)];
    T* py = y + vidx(i, m, incy);
    T r = alpha * acc;
    if (beta != (T)0) r += beta * *py;  // beta == 0: y is not read
    *py = r;
}

template <typename T>
__global__ void gemv_t(int m, int n, T alpha, const T* __restrict__ A, int lda, const T* __restrict__ x, int incx,
                       T beta, T* y, int incy) {
    const int j = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (j >= n) return;  // whole warps leave together
    T acc = (T)0;
    if (alpha != (T)0)
        for (int i = lane; i < m; i += 32) acc += A[i + (long long)j * lda] * x[vidx(i, m, incx)];
    // width 32: a column's 32 lanes are a group of their own in a 64-lane AMD wavefront too
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o, 32);
    if (lane == 0) {
        T* py = y + vidx(j, n, incy);
        T r = alpha * acc;
        if (beta != (T)0) r += beta * *py;
        *py = r;
    }
}

template <typename T>
__global__ void ger_kernel(int m, int n, T alpha, const T* __restrict__ x, int incx, const T* __restrict__ y, int incy,
                           T* A, int lda) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const T xi = x[vidx(i, m, incx)];
    for (int j = blockIdx.y; j < n; j += gridDim.y) {
        T* p = A + i + (long long)j * lda;
        *p += xi * (alpha * y[vidx(j, n, incy)]);
    }
}

// Solve T x = alpha b for right-hand side r (one block each): x_p at B[p*s_row + r*s_rhs],
// T(i, p) at A[i*s1 + p*s2], lower triangular when `forward` (pivots ascending), upper otherwise.
template <typename T>
__global__ void trsm_kernel(int size, int rhs, T alpha, const T* __restrict__ A, long long s1, long long s2, T* B,
                            long long s_row, long long s_rhs, int forward, int unit) {
    for (int r = blockIdx.x; r < rhs; r += gridDim.x) {
        T* x = B + r * s_rhs;
        for (int i = threadIdx.x; i < size; i += blockDim.x) x[i * s_row] *= alpha;
        __syncthreads();
        for (int step = 0; step < size; ++step) {
            const int p = forward ? step : size - 1 - step;
            if (threadIdx.x == 0 && !unit) x[p * s_row] /= A[p * s1 + p * s2];
            __syncthreads();
            const T xp = x[p * s_row];
            const int lo = forward ? p + 1 : 0, hi = forward ? size : p;
            for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) x[i * s_row] -= A[i * s1 + p * s2] * xp;
            __syncthreads();
        }
    }
}
"""

C_NAME = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}


def vec_name(kernel: str, dtype: np.dtype, op: int | None = None) -> str:
    """The name expression of a kernel of this file for float32 or float64 (`op` for reduce_kernel)."""
    return f"{kernel}<{C_NAME[dtype]}, {op}>" if op is not None else f"{kernel}<{C_NAME[dtype]}>"


KERNELS = KernelFamily("blas_vec", SOURCE)
