"""The CUDA C++ kernels of strata.libs.solver (column-major, LAPACK's unblocked algorithms).

Each factorization runs as one thread block per matrix, looping over the columns (dgetf2, dpotf2,
dgeqr2, dorg2r): warps own columns of the trailing matrix, the 32 lanes of a warp walk its rows, so
a column's reduction (a dot product, a pivot search) is a warp shuffle and the loop needs two or three
`__syncthreads` per column. The triangular solves of getrs/potrs run one block per right-hand side.
The kernels exist for float (prefix `s`) and double (prefix `d`), like LAPACK's names.

Example:
    >>> sorted(n for n in KERNEL_NAMES if n.startswith("s"))
    ['sgeqrf_block', 'sgetrf_block', 'sgetrs_column', 'sorgqr_block', 'spotrf_block', 'spotrs_column']
"""

from __future__ import annotations

import numpy as np

from strata.libs.common import KernelSet

SOURCE = r"""
#define FULL 0xffffffffu

template <typename T> __device__ __forceinline__ T absval(T x) { return x < T(0) ? -x : x; }
__device__ __forceinline__ float sqrt_t(float x) { return sqrtf(x); }
__device__ __forceinline__ double sqrt_t(double x) { return sqrt(x); }
__device__ __forceinline__ float hypot_t(float x, float y) { return hypotf(x, y); }
__device__ __forceinline__ double hypot_t(double x, double y) { return hypot(x, y); }

// "warps" are 32-lane groups on every device (shuffle width 32): a 64-lane AMD wavefront holds two
template <typename T> __device__ __forceinline__ T warp_sum(T v) {
    for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(FULL, v, s, 32);
    return v;  // every lane holds the sum
}

// Column updates of the trailing matrix, one warp per column (columns c0, c0 + warps, ...), the warp's
// lanes over rows j+1..m-1. R > 0: each lane keeps its R rows of the pivot column in registers (the
// rows fit in 32 R); R == 0: plain loops for any height. Fewer memory instructions is what makes
// the emulator fast, and a real GPU too.

// rank-1 update (getrf): C(i, c) -= L(i) U(c), L = colj(j+1:m), U(c) = C(j, c)
template <typename T, int R>
__device__ void rank1_update(int m, int n, T* A, int lda, int j, const T* colj) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (R > 0) {
        T l[R > 0 ? R : 1];
        #pragma unroll
        for (int r = 0; r < R; ++r) { int i = j + 1 + lane + 32 * r; l[r] = i < m ? colj[i] : T(0); }
        for (int c = j + 1 + warp; c < n; c += nw) {
            T* col = A + (long long)c * lda;
            T u = col[j];
            if (u == T(0)) continue;
            #pragma unroll
            for (int r = 0; r < R; ++r) { int i = j + 1 + lane + 32 * r; if (i < m) col[i] -= l[r] * u; }
        }
    } else {
        for (int c = j + 1 + warp; c < n; c += nw) {
            T* col = A + (long long)c * lda;
            T u = col[j];
            if (u != T(0)) for (int i = j + 1 + lane; i < m; i += 32) col[i] -= colj[i] * u;
        }
    }
}

// reflector (geqrf, orgqr): C(:, c) -= t v (v^T C(:, c)), v = (1, colj(j+1:m)), rows j..m-1
template <typename T, int R>
__device__ void apply_reflector(int m, int n, T* A, int lda, int j, const T* colj, T t) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if (R > 0) {
        T v[R > 0 ? R : 1];
        #pragma unroll
        for (int r = 0; r < R; ++r) { int i = j + 1 + lane + 32 * r; v[r] = i < m ? colj[i] : T(0); }
        for (int c = j + 1 + warp; c < n; c += nw) {
            T* col = A + (long long)c * lda;
            T x[R > 0 ? R : 1];
            T cj = col[j], w = T(0);
            #pragma unroll
            for (int r = 0; r < R; ++r) {
                int i = j + 1 + lane + 32 * r;
                x[r] = i < m ? col[i] : T(0);
                w += v[r] * x[r];
            }
            w = (warp_sum(w) + cj) * t;
            if (lane == 0) col[j] = cj - w;
            #pragma unroll
            for (int r = 0; r < R; ++r) { int i = j + 1 + lane + 32 * r; if (i < m) col[i] = x[r] - v[r] * w; }
        }
    } else {
        for (int c = j + 1 + warp; c < n; c += nw) {
            T* col = A + (long long)c * lda;
            T cj = col[j], w = T(0);
            for (int i = j + 1 + lane; i < m; i += 32) w += colj[i] * col[i];
            w = (warp_sum(w) + cj) * t;
            if (lane == 0) col[j] = cj - w;
            for (int i = j + 1 + lane; i < m; i += 32) col[i] -= colj[i] * w;
        }
    }
}

template <typename T>
__device__ void rank1(int m, int n, T* A, int lda, int j, const T* colj) {
    int rows = m - j - 1;
    if (rows <= 32) rank1_update<T, 1>(m, n, A, lda, j, colj);
    else if (rows <= 128) rank1_update<T, 4>(m, n, A, lda, j, colj);
    else rank1_update<T, 0>(m, n, A, lda, j, colj);
}

template <typename T>
__device__ void reflect(int m, int n, T* A, int lda, int j, const T* colj, T t) {
    int rows = m - j - 1;
    if (rows <= 32) apply_reflector<T, 1>(m, n, A, lda, j, colj, t);
    else if (rows <= 128) apply_reflector<T, 4>(m, n, A, lda, j, colj, t);
    else apply_reflector<T, 0>(m, n, A, lda, j, colj, t);
}

// ---- getrf: LU with partial pivoting (dgetf2), one block; info = first j+1 with U(j,j) == 0 ----
template <typename T>
__device__ void getrf_block(int m, int n, T* A, int lda, int* ipiv, int* info) {
    __shared__ int piv;
    __shared__ T pivot;
    int tid = threadIdx.x, nt = blockDim.x, lane = tid & 31, warp = tid >> 5;
    int kmax = m < n ? m : n, first_zero = 0;
    for (int j = 0; j < kmax; ++j) {
        T* colj = A + (long long)j * lda;
        if (warp == 0) {
            // pivot: the first row of largest |A(i,j)|, i >= j (idamax); NaNs are never chosen
            T best = T(-1); int bi = m;
            for (int i = j + lane; i < m; i += 32) {
                T v = absval(colj[i]);
                if (v > best) { best = v; bi = i; }
            }
            for (int s = 16; s > 0; s >>= 1) {
                T o = __shfl_down_sync(FULL, best, s, 32); int oi = __shfl_down_sync(FULL, bi, s, 32);
                if (o > best || (o == best && oi < bi)) { best = o; bi = oi; }
            }
            if (lane == 0) { if (bi >= m) bi = j; piv = bi; pivot = colj[bi]; ipiv[j] = bi + 1; }
        }
        __syncthreads();
        int p = piv;
        T d = pivot;
        if (d == T(0)) {
            // LAPACK: no interchange, no scaling, remember the first zero pivot and go on
            if (first_zero == 0) first_zero = j + 1;
        } else {
            if (p != j) {
                for (int c = tid; c < n; c += nt) {
                    T* col = A + (long long)c * lda;
                    T t = col[j]; col[j] = col[p]; col[p] = t;
                }
                __syncthreads();
            }
            for (int i = j + 1 + tid; i < m; i += nt) colj[i] /= d;
        }
        __syncthreads();
        rank1(m, n, A, lda, j, colj);
        __syncthreads();
    }
    if (tid == 0) *info = first_zero;
}

// ---- potrf: Cholesky (dpotf2), one block; the upper case works on the transpose ----
// el(i, c) is L(i, c) for i >= c: A(i, c) when lower, A(c, i) when upper
template <typename T>
__device__ __forceinline__ T& el(T* A, int lda, bool upper, int i, int c) {
    return upper ? A[c + (long long)i * lda] : A[i + (long long)c * lda];
}

template <typename T>
__device__ void potrf_block(int upper, int n, T* A, int lda, int* info) {
    int tid = threadIdx.x, nt = blockDim.x, lane = tid & 31, warp = tid >> 5, nw = nt >> 5;
    bool up = upper != 0;
    for (int j = 0; j < n; ++j) {
        T d = el(A, lda, up, j, j);
        // the leading minor of order j+1 is not positive definite: stop there (LAPACK leaves A as is)
        if (!(d > T(0))) {
            if (tid == 0) *info = j + 1;
            return;
        }
        d = sqrt_t(d);
        __syncthreads();
        if (tid == 0) el(A, lda, up, j, j) = d;
        for (int i = j + 1 + tid; i < n; i += nt) el(A, lda, up, i, j) /= d;
        __syncthreads();
        // trailing update of the lower triangle: L(i,c) -= L(i,j) L(c,j), c > j, i >= c
        for (int c = j + 1 + warp; c < n; c += nw) {
            T lc = el(A, lda, up, c, j);
            for (int i = c + lane; i < n; i += 32) el(A, lda, up, i, c) -= el(A, lda, up, i, j) * lc;
        }
        __syncthreads();
    }
    if (tid == 0) *info = 0;
}

// ---- geqrf: Householder QR (dgeqr2 + dlarfg + dlarf), one block ----
template <typename T>
__device__ void geqrf_block(int m, int n, T* A, int lda, T* tau, int* info) {
    __shared__ T s_tau, s_scal;
    int tid = threadIdx.x, nt = blockDim.x, lane = tid & 31, warp = tid >> 5;
    int kmax = m < n ? m : n;
    for (int j = 0; j < kmax; ++j) {
        T* colj = A + (long long)j * lda;
        if (warp == 0) {
            // dlarfg: H = I - tau v v^T with v(0) = 1 maps (alpha, x) to (beta, 0)
            T ss = T(0);
            for (int i = j + 1 + lane; i < m; i += 32) { T x = colj[i]; ss += x * x; }
            ss = warp_sum(ss);
            if (lane == 0) {
                T alpha = colj[j], t = T(0), scal = T(1);
                if (ss != T(0)) {
                    T xnorm = sqrt_t(ss);
                    T beta = hypot_t(alpha, xnorm);
                    if (alpha >= T(0)) beta = -beta;
                    t = (beta - alpha) / beta;
                    scal = T(1) / (alpha - beta);
                    colj[j] = beta;
                }
                tau[j] = t; s_tau = t; s_scal = scal;
            }
        }
        __syncthreads();
        T t = s_tau, scal = s_scal;
        if (t != T(0)) {
            for (int i = j + 1 + tid; i < m; i += nt) colj[i] *= scal;
            __syncthreads();
            // apply H from the left to the trailing columns: w = v^T C(:,c); C(:,c) -= tau v w
            reflect(m, n, A, lda, j, colj, t);
        }
        __syncthreads();
    }
    if (tid == 0) *info = 0;
}

// ---- orgqr: the first n columns of Q = H(0) ... H(k-1) (dorg2r), one block ----
template <typename T>
__device__ void orgqr_block(int m, int n, int k, T* A, int lda, const T* tau, int* info) {
    int tid = threadIdx.x, nt = blockDim.x, lane = tid & 31, warp = tid >> 5, nw = nt >> 5;
    // columns k..n-1 start as columns of the identity
    for (int c = k + warp; c < n; c += nw) {
        T* col = A + (long long)c * lda;
        for (int i = lane; i < m; i += 32) col[i] = i == c ? T(1) : T(0);
    }
    __syncthreads();
    for (int j = k - 1; j >= 0; --j) {
        T* colj = A + (long long)j * lda;
        T t = tau[j];
        if (t != T(0)) {
            reflect(m, n, A, lda, j, colj, t);
        }
        __syncthreads();
        for (int i = tid; i < m; i += nt) {
            T v = colj[i];
            colj[i] = i < j ? T(0) : (i == j ? T(1) - t : -t * v);
        }
        __syncthreads();
    }
    if (tid == 0) *info = 0;
}

// ---- triangular solves for one right-hand side column b (column-oriented substitution) ----
// solves op(M) x = b in place; M is the lower (lower != 0) or upper triangle of A, op = transpose
// when trans != 0, unit diagonal when unit != 0
template <typename T>
__device__ void trsv_col(int n, const T* A, int lda, T* b, bool lower, bool trans, bool unit) {
    __shared__ T s_x;
    int tid = threadIdx.x, nt = blockDim.x;
    bool forward = lower != trans;
    for (int s = 0; s < n; ++s) {
        int j = forward ? s : n - 1 - s;
        if (tid == 0) {
            T x = b[j];
            if (!unit) x /= A[j + (long long)j * lda];
            b[j] = x; s_x = x;
        }
        __syncthreads();
        T x = s_x;
        int lo = forward ? j + 1 : 0, hi = forward ? n : j;
        if (x != T(0)) {
            for (int i = lo + tid; i < hi; i += nt) {
                T a = trans ? A[j + (long long)i * lda] : A[i + (long long)j * lda];
                b[i] -= a * x;
            }
        }
        __syncthreads();
    }
}

// getrs for right-hand side blockIdx.x: P L U x = b (trans == 0) or U^T L^T P^T x = b (trans != 0)
template <typename T>
__device__ void getrs_column(int trans, int n, const T* A, int lda, const int* ipiv, T* B, int ldb, int* info) {
    T* b = B + (long long)blockIdx.x * ldb;
    if (!trans) {
        if (threadIdx.x == 0)
            for (int i = 0; i < n; ++i) { int p = ipiv[i] - 1; if (p != i) { T t = b[i]; b[i] = b[p]; b[p] = t; } }
        __syncthreads();
        trsv_col(n, A, lda, b, true, false, true);
        trsv_col(n, A, lda, b, false, false, false);
    } else {
        trsv_col(n, A, lda, b, false, true, false);
        trsv_col(n, A, lda, b, true, true, true);
        if (threadIdx.x == 0)
            for (int i = n - 1; i >= 0; --i) { int p = ipiv[i] - 1; if (p != i) { T t = b[i]; b[i] = b[p]; b[p] = t; } }
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) *info = 0;
}

// potrs for right-hand side blockIdx.x: L L^T x = b (lower) or U^T U x = b (upper)
template <typename T>
__device__ void potrs_column(int upper, int n, const T* A, int lda, T* B, int ldb, int* info) {
    T* b = B + (long long)blockIdx.x * ldb;
    bool lower = upper == 0;
    trsv_col(n, A, lda, b, lower, !lower, false);
    trsv_col(n, A, lda, b, lower, lower, false);
    if (blockIdx.x == 0 && threadIdx.x == 0) *info = 0;
}

#define SOLVER_KERNELS(T, P) \
extern "C" __global__ void P##getrf_block(int m, int n, T* A, int lda, int* ipiv, int* info) \
    { getrf_block<T>(m, n, A, lda, ipiv, info); } \
extern "C" __global__ void P##potrf_block(int upper, int n, T* A, int lda, int* info) \
    { potrf_block<T>(upper, n, A, lda, info); } \
extern "C" __global__ void P##geqrf_block(int m, int n, T* A, int lda, T* tau, int* info) \
    { geqrf_block<T>(m, n, A, lda, tau, info); } \
extern "C" __global__ void P##orgqr_block(int m, int n, int k, T* A, int lda, const T* tau, int* info) \
    { orgqr_block<T>(m, n, k, A, lda, tau, info); } \
extern "C" __global__ void P##getrs_column(int trans, int n, const T* A, int lda, const int* ipiv, T* B, int ldb, \
                                           int* info) \
    { getrs_column<T>(trans, n, A, lda, ipiv, B, ldb, info); } \
extern "C" __global__ void P##potrs_column(int upper, int n, const T* A, int lda, T* B, int ldb, int* info) \
    { potrs_column<T>(upper, n, A, lda, B, ldb, info); }

SOLVER_KERNELS(float, s)
SOLVER_KERNELS(double, d)

extern "C" __global__ void set_info(int* info, int value) { *info = value; }
"""

KERNELS = KernelSet("solver", SOURCE)
KERNEL_NAMES = tuple(f"{p}{name}" for p in "sd" for name in
                     ("getrf_block", "potrf_block", "geqrf_block", "orgqr_block", "getrs_column", "potrs_column"))
MAX_THREADS = 1024


def prefix(dtype: np.dtype) -> str:
    """LAPACK's type letter: 's' for float32, 'd' for float64."""
    return "d" if dtype == np.float64 else "s"


def block_threads(columns: int) -> int:
    """Threads of a one-block factorization: one warp per column of the trailing matrix, at most 32 warps."""
    return 32 * min(MAX_THREADS // 32, max(1, columns))


def solve_threads(n: int) -> int:
    """Threads of a triangular-solve block: one per row, rounded up to whole warps, at most 1024."""
    return min(MAX_THREADS, 32 * max(1, -(-n // 32)))
