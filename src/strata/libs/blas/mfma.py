"""The matrix-core GEMM of strata.libs.blas on AMD devices (rocBLAS's role on gfx942): HIP C++ over
clang's `__builtin_amdgcn_mfma_f32_16x16x16f16` / `..._16x16x16bf16_1k` for f16 and bf16 inputs and
`__builtin_amdgcn_mfma_f32_16x16x4f32` for f32, accumulating in f32 (rocBLAS runs SGEMM on the
matrix cores of an MI300X too). It exists only for AMD devices (the NVIDIA path uses WMMA, `tensor.py`).

One block of 256 work-items (four 64-lane wavefronts) computes a 64x64 tile of C; each wavefront owns
a 32x32 quarter as 2x2 16x16 MFMA accumulators. Each 16-deep slice of op(A) and op(B) is staged in LDS
(zero-filled at the edges), then every wavefront issues four `v_mfma_f32_16x16x16_{f16,bf16}` (sixteen
`v_mfma_f32_16x16x4_f32` for f32). Operand layouts (CDNA3 ISA): lane l holds A[l % 16][EL (l / 16) + e]
and B[EL (l / 16) + e][l % 16], e < EL (4 for f16/bf16, 1 for f32); the accumulator's register r of lane
l is D[4 (l / 16) + r][l % 16]. Products are exact and each MFMA rounds its sum into the accumulator
once; C = alpha * acc + beta * C is rounded once to C's type.

Example:
    >>> kernel_name(np.dtype(np.float16), np.dtype(np.float32), (0, 1))
    'gemm_mfma<__half, float, 0, 1>'
"""

from __future__ import annotations

import numpy as np

from strata.libs.blas.gemm_kernels import C_TYPE, COMMON, KernelFamily

SOURCE = COMMON + r"""
typedef float __strata_f4 __attribute__((ext_vector_type(4)));
typedef _Float16 __strata_h4 __attribute__((ext_vector_type(4)));
typedef short __strata_s4 __attribute__((ext_vector_type(4)));

// E: the element as the matrix core reads it; V: one lane's operand of one MFMA (EL elements)
template <typename T> struct Mfma;
template <> struct Mfma<float> {
    typedef float E;
    typedef float V;
    static const int EL = 1;
    static __device__ __forceinline__ E raw(float x) { return x; }
    static __device__ __forceinline__ __strata_f4 mma(V a, V b, __strata_f4 c) {
        return __builtin_amdgcn_mfma_f32_16x16x4f32(a, b, c, 0, 0, 0);
    }
};
template <> struct Mfma<__half> {
    typedef _Float16 E;
    typedef __strata_h4 V;
    static const int EL = 4;
    static __device__ __forceinline__ E raw(__half x) { return x.__x; }
    static __device__ __forceinline__ __strata_f4 mma(V a, V b, __strata_f4 c) {
        return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
    }
};
template <> struct Mfma<__nv_bfloat16> {
    typedef short E;
    typedef __strata_s4 V;
    static const int EL = 4;
    static __device__ __forceinline__ E raw(__nv_bfloat16 x) { return __builtin_bit_cast(short, x); }
    static __device__ __forceinline__ __strata_f4 mma(V a, V b, __strata_f4 c) {
        return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
    }
};

// lane l's operand: EL consecutive k values of its row (A) or column (B) of the 16x16 tile
template <typename M> __device__ __forceinline__ typename M::V frag(const typename M::E* p) {
    if constexpr (M::EL == 1) {
        return p[0];
    } else {
        typename M::V v;
        #pragma unroll
        for (int x = 0; x < M::EL; ++x) v[x] = p[x];
        return v;
    }
}

template <typename T, typename TC, int TA, int TB>
__global__ void __launch_bounds__(256) gemm_mfma(int m, int n, int k, float alpha,
        const T* __restrict__ A, int lda, long long stride_a, const T* __restrict__ B, int ldb, long long stride_b,
        float beta, TC* C, int ldc, long long stride_c, int batch, int fill, int vec) {
    typedef Mfma<T> M;
    typedef typename M::E E;
    // rows padded to 20 elements (40 bytes): each lane's 4 operands are one 8-byte LDS read, aligned
    __shared__ E As[64][20];  // op(A)(bm + i, k0 + p) at As[i][p]
    __shared__ E Bs[64][20];  // op(B)(k0 + p, bn + j) at Bs[j][p]
    (void)vec;
    const int tid = threadIdx.x, lane = tid % 64, wave = tid / 64;
    const int bm = blockIdx.x * 64, bn = blockIdx.y * 64;
    if ((fill == 1 && bm > bn + 63) || (fill == 2 && bn > bm + 63)) return;
    const int wm = (wave % 2) * 32, wn = (wave / 2) * 32;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const T* Ab = A + b * stride_a;
        const T* Bb = B + b * stride_b;
        __strata_f4 acc[2][2];
        #pragma unroll
        for (int i = 0; i < 2; ++i)
            #pragma unroll
            for (int j = 0; j < 2; ++j) acc[i][j] = __strata_f4{0.0f, 0.0f, 0.0f, 0.0f};
        for (int k0 = 0; k0 < k; k0 += 16) {
            #pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int e = tid + 256 * r;
                // 'N' A and 'T' B are contiguous along the 64-long index: neighbouring lanes walk it
                const int o = TA ? e / 16 : e % 64, p = TA ? e % 16 : e / 64;
                As[o][p] = (bm + o < m && k0 + p < k) ? M::raw(*at(Ab, TA, bm + o, k0 + p, lda)) : E(0);
                const int jo = TB ? e % 64 : e / 16, q = TB ? e / 64 : e % 16;
                Bs[jo][q] = (bn + jo < n && k0 + q < k) ? M::raw(*at(Bb, TB, k0 + q, bn + jo, ldb)) : E(0);
            }
            __syncthreads();
            // one MFMA takes 4 EL of the 16 k values: lane l's share starts at s + EL (l / 16)
            #pragma unroll
            for (int s = 0; s < 16; s += 4 * M::EL)
                #pragma unroll
                for (int ti = 0; ti < 2; ++ti) {
                    const typename M::V a = frag<M>(&As[wm + 16 * ti + lane % 16][s + M::EL * (lane / 16)]);
                    #pragma unroll
                    for (int tj = 0; tj < 2; ++tj)
                        acc[ti][tj] = M::mma(a, frag<M>(&Bs[wn + 16 * tj + lane % 16][s + M::EL * (lane / 16)]),
                                             acc[ti][tj]);
                }
            __syncthreads();
        }
        TC* Cb = C + b * stride_c;
        #pragma unroll
        for (int ti = 0; ti < 2; ++ti)
            #pragma unroll
            for (int tj = 0; tj < 2; ++tj)
                #pragma unroll
                for (int r = 0; r < 4; ++r) {
                    const int row = bm + wm + 16 * ti + 4 * (lane / 16) + r, col = bn + wn + 16 * tj + lane % 16;
                    if (row < m && col < n && in_fill(fill, row, col))
                        epilogue(Cb, ldc, row, col, acc[ti][tj][r], alpha, beta);
                }
    }
}
"""


def kernel_name(ab: np.dtype, c: np.dtype, trans: tuple[int, int] = (0, 0)) -> str:
    """The name expression of the MFMA kernel for A/B type `ab` (f32, f16 or bf16), C type `c` and transposes."""
    return f"gemm_mfma<{C_TYPE[ab]}, {C_TYPE[c]}, {trans[0]}, {trans[1]}>"


KERNELS = KernelFamily("blas_mfma", SOURCE)
