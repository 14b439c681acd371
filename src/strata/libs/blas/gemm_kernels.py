"""The SIMT GEMM kernels of strata.libs.blas (CUDA C++): templates instantiated per data type, each
instantiation compiled and loaded on first use (`KernelFamily`).

C = alpha * op(A) * op(B) + beta * C, column-major, op = 'N' (0) or 'T'/'C' (1), for a batch of
matrices `stride_*` elements apart (blockIdx.z walks the batch). `fill` restricts the update to a
triangle of C (0: all of C, 1: upper, row <= col, 2: lower, row >= col), which is how `syrk` reuses
these kernels. Inputs are converted to the accumulator type as they are loaded (f16/bf16 -> f32, and
f32 -> tf32 -> f32 when TF32 is 1); C is rounded once to its type at the store. When beta is 0, C is
written and never read, so NaNs or Infs it held do not propagate (as BLAS requires).

- gemm_tiled: 64x64 tile of C per block of 256 threads, each thread 2x8 outputs in registers;
  32-deep slices of op(A) and op(B) staged in shared memory, loaded along the contiguous direction
  of the stored matrix (one instantiation per pair of transposes: they change the load pattern and
  the shared layout, not the inner loop); edges zero-filled. For f32/f64 whose columns start 16-byte
  aligned (`vec` bits, set by the host), tiles wholly inside the matrix load 16 bytes per thread
  access (float4/double2) instead of one element.
- gemm_small: one thread per output, operands read straight from global memory (tiny problems).
- gemm_splitk + gemm_splitk_reduce: k cut into `splits` chunks, each block's partial 16x16 tile
  written to a workspace in the accumulator type; the reduction sums the chunks in a fixed order and
  applies alpha and beta (tall-skinny problems: small m*n, large k).
- scale_matrix: C = beta * C (k == 0 or alpha == 0; beta == 0 stores zeros).

Example:
    >>> kernel_name("gemm_tiled", np.dtype(np.float32), np.dtype(np.float32), tf32=False, trans=(0, 1))
    'gemm_tiled<float, float, float, 0, 0, 1>'
"""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np

from strata.libs.common import KernelSet, LibraryKernel

C_TYPE = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.float16): "__half",
          np.dtype(ml_dtypes.bfloat16): "__nv_bfloat16"}
TILE_M, TILE_N, TILE_K = 64, 64, 32  # gemm_tiled block tile
SMALL_TILE = 16  # gemm_small / gemm_splitk / elementwise blocks are 16x16 (or 256x1)
MAX_GRID_Z = 65535

COMMON = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__device__ __forceinline__ float to_acc(float x) { return x; }
__device__ __forceinline__ double to_acc(double x) { return x; }
__device__ __forceinline__ float to_acc(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ void store_as(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_as(double* p, double v) { *p = v; }
__device__ __forceinline__ void store_as(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store_as(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// TF32: keep the top 10 mantissa bits, rounded to nearest with ties away (what the tensor cores read)
template <int TF32, typename Acc> __device__ __forceinline__ Acc prep(Acc x) { return x; }
template <> __device__ __forceinline__ float prep<1, float>(float x) {
    unsigned r;
#ifdef __HIP_PLATFORM_AMD__
    // no tf32 conversion instruction on gfx9: round the 13 dropped bits to nearest, ties away
    r = __float_as_uint(x);
    if ((r & 0x7f800000u) != 0x7f800000u) r = (r + 0x1000u) & 0xffffe000u;
#else
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
#endif
    return __uint_as_float(r);
}

// op(X)(r, c) of a column-major X: X[r + c*ld] for 'N', X[c + r*ld] for 'T'
template <typename T> __device__ __forceinline__ const T* at(const T* X, int trans, int r, int c, int ld) {
    return trans ? X + (c + (long long)r * ld) : X + (r + (long long)c * ld);
}

__device__ __forceinline__ bool in_fill(int fill, int row, int col) {
    return fill == 0 || (fill == 1 ? row <= col : row >= col);
}

// C(row, col) = alpha * v + beta * C(row, col); beta == 0: C is not read
template <typename TC, typename Acc>
__device__ __forceinline__ void epilogue(TC* C, int ldc, int row, int col, Acc v, Acc alpha, Acc beta) {
    TC* p = C + (row + (long long)col * ldc);
    Acc r = alpha * v;
    if (beta != (Acc)0) r += beta * to_acc(*p);
    store_as(p, r);
}
"""

SOURCE = COMMON + r"""
#define BM 64
#define BN 64
#define BK 32

// Threads: tx = tid % 32 walks rows (so a warp's C stores and op(A) loads are 32 consecutive rows),
// ty = tid / 32 columns; thread (tx, ty) owns rows tx + 32 i (i < 2) and columns ty + 8 j (j < 8).
// Shared layouts make every warp's stores and inner-loop loads conflict-free: the op(A) tile is
// p-major for 'N' (filled along i) and i-major padded to 33 for 'T' (filled along p); the op(B) tile
// is j-major padded to 33 for 'N' (filled along p) and p-major for 'T' (filled along j).
template <int TA> __device__ __forceinline__ int a_idx(int i, int p) { return TA ? i * (BK + 1) + p : p * BM + i; }
template <int TB> __device__ __forceinline__ int b_idx(int p, int j) { return TB ? p * BN + j : j * (BK + 1) + p; }

// 16 bytes of a float or double matrix (the vector path of gemm_tiled; f32/f64 only)
__device__ __forceinline__ void load16(const float* p, float* v) {
    float4 x = *reinterpret_cast<const float4*>(p);
    v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
}
__device__ __forceinline__ void load16(const double* p, double* v) {
    double2 x = *reinterpret_cast<const double2*>(p);
    v[0] = x.x; v[1] = x.y;
}

// Stage a whole tile with 16-byte loads along the stored matrix's contiguous direction: WHICH 0 is
// op(A)(outer0 + o, k0 + p), WHICH 1 is op(B)(k0 + p, outer0 + o); `S` in gemm_tiled's layouts.
template <int TF32, int TA, int TB, int WHICH, typename T>
__device__ __forceinline__ void stage16(T* S, const T* X, int ld, int outer0, int k0, int tid) {
    const int VEC = 16 / sizeof(T);
    const int ALONG_P = WHICH ? !TB : TA;  // the stored matrix is contiguous along p (else along o)
    const int run = ALONG_P ? BK / VEC : 64 / VEC;  // vectors per stored column
    #pragma unroll
    for (int v = tid; v < 64 * BK / VEC; v += 256) {
        const int line = v / run, pos = (v % run) * VEC;
        const int o = ALONG_P ? line : pos, p = ALONG_P ? pos : line;
        const T* src = ALONG_P ? X + ((k0 + p) + (long long)(outer0 + o) * ld)
                               : X + ((outer0 + o) + (long long)(k0 + p) * ld);
        T e[VEC];
        load16(src, e);
        #pragma unroll
        for (int q = 0; q < VEC; ++q) {
            const int oq = ALONG_P ? o : o + q, pq = ALONG_P ? p + q : p;
            S[WHICH ? b_idx<TB>(pq, oq) : a_idx<TA>(oq, pq)] = prep<TF32>(e[q]);
        }
    }
}

template <typename T, typename TC, typename Acc, int TF32, int TA, int TB>
__global__ void __launch_bounds__(256) gemm_tiled(int m, int n, int k, Acc alpha,
        const T* __restrict__ A, int lda, long long stride_a, const T* __restrict__ B, int ldb, long long stride_b,
        Acc beta, TC* C, int ldc, long long stride_c, int batch, int fill, int vec) {
    __shared__ Acc As[BM * (BK + 1)];  // op(A)(bm + i, k0 + p) at a_idx(i, p)
    __shared__ Acc Bs[BN * (BK + 1)];  // op(B)(k0 + p, bn + j) at b_idx(p, j)
    const int tid = threadIdx.x, tx = tid % 32, ty = tid / 32;
    const int bm = blockIdx.x * BM, bn = blockIdx.y * BN;
    if ((fill == 1 && bm > bn + BN - 1) || (fill == 2 && bn > bm + BM - 1)) return;  // tile outside the triangle
    const bool a_inside = (vec & 1) && bm + BM <= m, b_inside = (vec & 2) && bn + BN <= n;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const T* Ab = A + b * stride_a;
        const T* Bb = B + b * stride_b;
        Acc acc[2][8];
        #pragma unroll
        for (int i = 0; i < 2; ++i)
            #pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = (Acc)0;
        for (int k0 = 0; k0 < k; k0 += BK) {
            const bool k_inside = k0 + BK <= k;
            if constexpr (sizeof(T) >= 4) {  // f32/f64: 16-byte loads where the whole tile is inside
                if (a_inside && k_inside) stage16<TF32, TA, TB, 0>(As, Ab, lda, bm, k0, tid);
                if (b_inside && k_inside) stage16<TF32, TA, TB, 1>(Bs, Bb, ldb, bn, k0, tid);
            }
            // otherwise 64x32 of op(A) and 32x64 of op(B), 8 elements per thread each; a warp reads 32
            // consecutive elements of the stored matrix
            if (!(a_inside && k_inside) || sizeof(T) < 4) {
                #pragma unroll
                for (int r = 0; r < 8; ++r) {
                    int il = TA ? tid / 32 + 8 * r : tid % 64;
                    int pl = TA ? tid % 32 : tid / 64 + 4 * r;
                    int i = bm + il, p = k0 + pl;
                    As[a_idx<TA>(il, pl)] = (i < m && p < k) ? prep<TF32>(to_acc(*at(Ab, TA, i, p, lda))) : (Acc)0;
                }
            }
            if (!(b_inside && k_inside) || sizeof(T) < 4) {
                #pragma unroll
                for (int r = 0; r < 8; ++r) {
                    int jl = TB ? tid % 64 : tid / 32 + 8 * r;
                    int ql = TB ? tid / 64 + 4 * r : tid % 32;
                    int j = bn + jl, q = k0 + ql;
                    Bs[b_idx<TB>(ql, jl)] = (j < n && q < k) ? prep<TF32>(to_acc(*at(Bb, TB, q, j, ldb))) : (Acc)0;
                }
            }
            __syncthreads();
            #pragma unroll 8
            for (int kk = 0; kk < BK; ++kk) {
                Acc a[2], bv[8];
                #pragma unroll
                for (int i = 0; i < 2; ++i) a[i] = As[a_idx<TA>(tx + 32 * i, kk)];
                #pragma unroll
                for (int j = 0; j < 8; ++j) bv[j] = Bs[b_idx<TB>(kk, ty + 8 * j)];
                #pragma unroll
                for (int i = 0; i < 2; ++i)
                    #pragma unroll
                    for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * bv[j];
            }
            __syncthreads();
        }
        TC* Cb = C + b * stride_c;
        #pragma unroll
        for (int i = 0; i < 2; ++i) {
            int row = bm + tx + 32 * i;
            #pragma unroll
            for (int j = 0; j < 8; ++j) {
                int col = bn + ty + 8 * j;
                if (row < m && col < n && in_fill(fill, row, col)) epilogue(Cb, ldc, row, col, acc[i][j], alpha, beta);
            }
        }
    }
}

template <typename T, typename TC, typename Acc, int TF32>
__global__ void gemm_small(int transa, int transb, int m, int n, int k, Acc alpha,
        const T* __restrict__ A, int lda, long long stride_a, const T* __restrict__ B, int ldb, long long stride_b,
        Acc beta, TC* C, int ldc, long long stride_c, int batch, int fill) {
    const int row = blockIdx.x * 16 + threadIdx.x, col = blockIdx.y * 16 + threadIdx.y;
    if (row >= m || col >= n || !in_fill(fill, row, col)) return;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const T* Ab = A + b * stride_a;
        const T* Bb = B + b * stride_b;
        Acc acc = (Acc)0;
        #pragma unroll 1
        for (int p = 0; p < k; ++p)
            acc += prep<TF32>(to_acc(*at(Ab, transa, row, p, lda))) * prep<TF32>(to_acc(*at(Bb, transb, p, col, ldb)));
        epilogue(C + b * stride_c, ldc, row, col, acc, alpha, beta);
    }
}

// partial products of k-chunk s of batch entry b (blockIdx.z = b * splits + s) into W[(z * n + col) * m + row]
template <typename T, typename Acc, int TF32>
__global__ void __launch_bounds__(256) gemm_splitk(int transa, int transb, int m, int n, int k,
        const T* __restrict__ A, int lda, long long stride_a, const T* __restrict__ B, int ldb, long long stride_b,
        Acc* __restrict__ W, int splits, int chunk, int fill) {
    __shared__ Acc As[16][17];
    __shared__ Acc Bs[16][17];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int bm = blockIdx.x * 16, bn = blockIdx.y * 16;
    if ((fill == 1 && bm > bn + 15) || (fill == 2 && bn > bm + 15)) return;
    const int b = blockIdx.z / splits, s = blockIdx.z % splits;
    const int kb = s * chunk, ke = min(k, kb + chunk);
    const T* Ab = A + b * stride_a;
    const T* Bb = B + b * stride_b;
    Acc acc = (Acc)0;
    for (int k0 = kb; k0 < ke; k0 += 16) {
        int il = transa ? ty : tx, pl = transa ? tx : ty;
        int i = bm + il, p = k0 + pl;
        As[pl][il] = (i < m && p < ke) ? prep<TF32>(to_acc(*at(Ab, transa, i, p, lda))) : (Acc)0;
        int jl = transb ? tx : ty, ql = transb ? ty : tx;
        int j = bn + jl, q = k0 + ql;
        Bs[ql][jl] = (j < n && q < ke) ? prep<TF32>(to_acc(*at(Bb, transb, q, j, ldb))) : (Acc)0;
        __syncthreads();
        #pragma unroll
        for (int kk = 0; kk < 16; ++kk) acc += As[kk][tx] * Bs[kk][ty];
        __syncthreads();
    }
    const int row = bm + tx, col = bn + ty;
    if (row < m && col < n) W[((long long)blockIdx.z * n + col) * m + row] = acc;
}

template <typename TC, typename Acc>
__global__ void gemm_splitk_reduce(int m, int n, const Acc* __restrict__ W, int splits, Acc alpha, Acc beta,
                                   TC* C, int ldc, long long stride_c, int batch, int fill) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    for (int b = blockIdx.z; b < batch; b += gridDim.z)
        for (int col = blockIdx.y; col < n; col += gridDim.y) {
            if (!in_fill(fill, row, col)) continue;
            const Acc* w = W + ((long long)b * splits * n + col) * m + row;
            Acc acc = (Acc)0;
            #pragma unroll 1
            for (int s = 0; s < splits; ++s) acc += w[(long long)s * n * m];
            epilogue(C + b * stride_c, ldc, row, col, acc, alpha, beta);
        }
}

template <typename TC, typename Acc>
__global__ void scale_matrix(int m, int n, Acc beta, TC* C, int ldc, long long stride_c, int batch, int fill) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= m) return;
    for (int b = blockIdx.z; b < batch; b += gridDim.z)
        for (int col = blockIdx.y; col < n; col += gridDim.y)
            if (in_fill(fill, row, col)) {
                TC* p = C + b * stride_c + (row + (long long)col * ldc);
                store_as(p, beta == (Acc)0 ? (Acc)0 : beta * to_acc(*p));
            }
}
"""


def acc_type(dtype: np.dtype) -> np.dtype:
    """The accumulator (and alpha/beta) type of a storage type: f64 for f64, else f32."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def kernel_name(family: str, ab: np.dtype, c: np.dtype, *, tf32: bool, trans: tuple[int, int] = (0, 0)) -> str:
    """The name expression of a SIMT kernel: family is gemm_tiled (one instantiation per pair of
    transposes), gemm_small, gemm_splitk, gemm_splitk_reduce or scale_matrix."""
    acc = C_TYPE[acc_type(ab)]
    if family == "gemm_tiled":
        return f"{family}<{C_TYPE[ab]}, {C_TYPE[c]}, {acc}, {int(tf32)}, {trans[0]}, {trans[1]}>"
    if family == "gemm_small":
        return f"{family}<{C_TYPE[ab]}, {C_TYPE[c]}, {acc}, {int(tf32)}>"
    if family == "gemm_splitk":
        return f"{family}<{C_TYPE[ab]}, {acc}, {int(tf32)}>"
    return f"{family}<{C_TYPE[c]}, {acc}>"


class KernelFamily:
    """Kernels instantiated from one CUDA C++ source, each compiled (NVRTC, then the PTX cache) and
    loaded on its own the first time it is asked for: a program pays the parse and JIT of the
    instantiations it uses, not of every type and transpose combination the library offers."""

    def __init__(self, library: str, source: str) -> None:
        self.library = library
        self.source = source
        self._sets: dict[str, KernelSet] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> LibraryKernel:
        """The kernel named by the name expression `name` (e.g. 'scale_matrix<float, float>')."""
        with self._lock:
            ks = self._sets.get(name)
            if ks is None:
                ks = self._sets[name] = KernelSet(self.library, self.source, name_expressions=[name])
        return ks.get(name)


KERNELS = KernelFamily("blas_gemm", SOURCE)
