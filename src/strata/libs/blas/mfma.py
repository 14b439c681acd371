"""The matrix-core GEMM of strata.libs.blas on AMD devices (rocBLAS's role on gfx942): HIP C++ over
clang's `__builtin_amdgcn_mfma_f32_16x16x16f16` / `..._16x16x16bf16_1k` for f16 and bf16 inputs and
`__builtin_amdgcn_mfma_f32_16x16x4f32` for f32, accumulating in f32 (rocBLAS runs SGEMM on the
matrix cores of an MI300X too). It exists only for AMD devices (the NVIDIA path uses WMMA, `tensor.py`).

One block of 256 work-items (four 64-lane wavefronts) computes a 64x64 tile of C; each wavefront owns
a 32x32 quarter as 2x2 16x16 MFMA accumulators. Each 32-deep slice of op(A) and op(B) is staged in LDS
(zero-filled at the edges; tiles wholly inside skip the checks and, when the host's `vec` bits say the
operand's columns start 16-byte aligned, load 16 bytes at a time), then every wavefront issues eight
`v_mfma_f32_16x16x16_{f16,bf16}` (thirty-two `v_mfma_f32_16x16x4_f32` for f32). Operand layouts
(CDNA3 ISA): lane l holds A[l % 16][EL (l / 16) + e] and B[EL (l / 16) + e][l % 16], e < EL (4 for
f16/bf16, 1 for f32); the accumulator's register r of lane l is D[4 (l / 16) + r][l % 16]. Products are
exact and each MFMA rounds its sum into the accumulator once; C = alpha * acc + beta * C is rounded
once to C's type.

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

template <typename E> __device__ __forceinline__ E bits_as(unsigned b) {
    if constexpr (sizeof(E) == 2) return __builtin_bit_cast(E, (unsigned short)b);
    else return __builtin_bit_cast(E, b);
}

#define BK 32    // k values staged per step
#define BKP 36   // LDS row length: 4 elements of padding keep each lane's EL operands 8-byte aligned

// Stage op(X)(outer0 + o, k0 + p), o < 64, p < BK, into S[o][p]; ALONG_O: X is contiguous along o (so
// neighbouring work-items read neighbouring addresses). Tiles wholly inside skip the bounds checks.
template <typename M, int ALONG_O, typename T>
__device__ __forceinline__ void stage(typename M::E (*S)[BKP], const T* X, int ld, int outer0, int nouter, int k0,
                                      int k, int tid, bool vec) {
    typedef typename M::E E;
    const bool inside = outer0 + 64 <= nouter && k0 + BK <= k;
    if (inside && vec) {  // the stored matrix's columns start 16-byte aligned: 16 bytes per load
        const int NV = 16 / sizeof(T), RUN = ALONG_O ? 64 : BK;
        #pragma unroll
        for (int r = 0; r < 64 * BK / (256 * NV); ++r) {
            const int v = tid + 256 * r, line = v / (RUN / NV), pos = (v % (RUN / NV)) * NV;
            const int o = ALONG_O ? pos : line, p = ALONG_O ? line : pos;
            const uint4 raw = *reinterpret_cast<const uint4*>(ALONG_O ? X + ((outer0 + o) + (long long)(k0 + p) * ld)
                                                                      : X + ((k0 + p) + (long long)(outer0 + o) * ld));
            if (!ALONG_O) {  // the 16 bytes are one run of an LDS row too: two 8-byte stores
                *reinterpret_cast<uint2*>(&S[o][p]) = uint2{raw.x, raw.y};
                *reinterpret_cast<uint2*>(&S[o][p + NV / 2]) = uint2{raw.z, raw.w};
            } else {         // one element to each of NV rows
                #pragma unroll
                for (int q = 0; q < NV; ++q) {
                    unsigned bits = raw[q * sizeof(T) / 4];
                    if (sizeof(T) == 2) {
                        bits = (q & 1) ? bits >> 16 : bits & 0xffffu;
                        // the asm keeps the shift: a high-half LDS store (ds_write_b16_d16_hi) is not modeled
                        __asm__("" : "+v"(bits));
                    }
                    S[o + q][p] = bits_as<E>(bits);
                }
            }
        }
    } else if (inside) {
        #pragma unroll
        for (int r = 0; r < 64 * BK / 256; ++r) {
            const int e = tid + 256 * r, o = ALONG_O ? e % 64 : e / BK, p = ALONG_O ? e / 64 : e % BK;
            S[o][p] = M::raw(ALONG_O ? X[(outer0 + o) + (long long)(k0 + p) * ld]
                                     : X[(k0 + p) + (long long)(outer0 + o) * ld]);
        }
    } else {
        #pragma unroll
        for (int r = 0; r < 64 * BK / 256; ++r) {
            const int e = tid + 256 * r, o = ALONG_O ? e % 64 : e / BK, p = ALONG_O ? e / 64 : e % BK;
            const bool in = outer0 + o < nouter && k0 + p < k;
            S[o][p] = in ? M::raw(ALONG_O ? X[(outer0 + o) + (long long)(k0 + p) * ld]
                                          : X[(k0 + p) + (long long)(outer0 + o) * ld]) : E(0);
        }
    }
}

template <typename T, typename TC, int TA, int TB>
__global__ void __launch_bounds__(256) gemm_mfma(int m, int n, int k, float alpha,
        const T* __restrict__ A, int lda, long long stride_a, const T* __restrict__ B, int ldb, long long stride_b,
        float beta, TC* C, int ldc, long long stride_c, int batch, int fill, int vec) {
    typedef Mfma<T> M;
    typedef typename M::E E;
    __shared__ E As[64][BKP];  // op(A)(bm + i, k0 + p) at As[i][p]
    __shared__ E Bs[64][BKP];  // op(B)(k0 + p, bn + j) at Bs[j][p]
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
        for (int k0 = 0; k0 < k; k0 += BK) {
            // op(A)(i, p) is A[i + p lda] for 'N', A[p + i lda] for 'T'; op(B)(q, j) B[q + j ldb] / B[j + q ldb]
            stage<M, !TA>(As, Ab, lda, bm, m, k0, k, tid, vec & 1);
            stage<M, TB>(Bs, Bb, ldb, bn, n, k0, k, tid, vec & 2);
            __syncthreads();
            // one MFMA takes 4 EL of the BK k values: lane l's share starts at s + EL (l / 16)
            #pragma unroll
            for (int s = 0; s < BK; s += 4 * M::EL)
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
