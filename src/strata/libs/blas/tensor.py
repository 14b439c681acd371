"""The tensor-core GEMM of strata.libs.blas: CUDA C++ over the WMMA API (nvcuda::wmma, 16x16x16 for
f16/bf16, 16x16x8 for tf32), and whether the virtual GPU can run it.

The kernel (one instantiation per type pair and pair of transposes): 64x64 tile of C per block of 4
warps, each warp a 32x32 quarter held in 2x2 f32 accumulator fragments. Each 16-deep slice of op(A)
and op(B) is staged in shared memory in its stored orientation, so fragments load column- or
row-major to match; where a tile lies inside the matrix and columns start 16-byte aligned (`vec`
bits), a thread moves 16 bytes per access, else one element with edges zero-filled. The accumulators
go through shared memory
to a guarded epilogue applying alpha, beta (beta == 0: C not read) and the `fill` triangle, rounding
once to C's type. tf32 rounds f32 inputs with wmma::__float_to_tf32 (what CUBLAS_COMPUTE_32F_FAST_TF32
does); accumulation is f32 in every case.

It runs only where the device executes the `wmma.*` PTX NVRTC emits for it, and where NVRTC finds
`<mma.h>` (its `crt/mma.h` ships in the `nvidia-cuda-crt` wheel). `ENABLED` is the switch the
heuristic reads; `available()` compiles, loads and checks the kernel against NumPy once per process
and says why not when it cannot.

Example:
    >>> ok, why = available()
    >>> isinstance(ok, bool) and isinstance(why, str)
    True
"""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np

from strata.libs.blas.gemm_kernels import C_TYPE, COMMON, KernelFamily

# The heuristic routes f16/bf16/tf32 GEMMs here only when this is True and available() says so;
# otherwise (False, or no wmma on the device, or no crt/mma.h) they run on the SIMT kernels with f32
# accumulation.
ENABLED = True

SOURCE = COMMON + r"""
#include <mma.h>
using namespace nvcuda;

#define WBM 64
#define WBN 64
#define WBK 16

template <typename T> struct Frag;  // what a fragment holds for storage type T, and its k depth
template <> struct Frag<__half> { typedef __half type; static const int K = 16; };
template <> struct Frag<__nv_bfloat16> { typedef __nv_bfloat16 type; static const int K = 16; };
template <> struct Frag<float> { typedef wmma::precision::tf32 type; static const int K = 8; };

template <int ROW> struct Layout { typedef wmma::col_major type; };
template <> struct Layout<1> { typedef wmma::row_major type; };

__device__ __forceinline__ __half zero_of(__half) { return __float2half_rn(0.0f); }
__device__ __forceinline__ __nv_bfloat16 zero_of(__nv_bfloat16) { return __float2bfloat16_rn(0.0f); }
__device__ __forceinline__ float zero_of(float) { return 0.0f; }

// Shared tiles keep each operand in its stored orientation, so a 16-byte vector of global memory
// lands as one 16-byte shared store, and the fragments load with the matching layout:
//   op(A) 'N': As[p][i] (column-major 64 x 16)   op(A) 'T': As[i][p] (row-major)
//   op(B) 'N': Bs[j][p] (column-major 16 x 64)   op(B) 'T': Bs[p][j] (row-major)
// Rows are padded by 32 bytes, keeping fragment pointers 256-bit aligned.
template <typename T, int TRANS, int OUTER>  // OUTER: the i (or j) extent of the tile
struct Tile {
    static const int PAD = 32 / sizeof(T);
    static const int LD = TRANS ? WBK + PAD : OUTER + PAD;   // elements per stored row
    static const int ROWS = TRANS ? OUTER : WBK;
    __device__ static int at(int outer, int p) { return TRANS ? outer * LD + p : p * LD + outer; }
};

// Fill one tile: op(X)(outer0 + o, k0 + p) for o < 64, p < 16 from column-major X (the element
// is X[o + p*ld] for TRANS 0, X[p + o*ld] for TRANS 1 with the roles of o and p in global memory).
// `vec`: 16-byte vector loads (the block's tile lies inside the matrix and rows are aligned).
template <typename T, int TRANS>
__device__ __forceinline__ void fill_tile(T* S, const T* X, int ld, int outer0, int k0, int outer_n, int k, bool vec,
                                          int tid) {
    typedef Tile<T, TRANS, 64> L;
    const int VEC = 16 / sizeof(T);
    if (vec) {
        // vectors run along the stored matrix's contiguous direction: o for 'N', p for 'T'
        const int run = TRANS ? WBK / VEC : 64 / VEC;  // vectors per stored column
        #pragma unroll
        for (int v = tid; v < 64 * WBK / VEC; v += 128) {
            int line = v / run, pos = (v % run) * VEC;
            int o = TRANS ? line : pos, p = TRANS ? pos : line;
            const T* src = TRANS ? X + ((k0 + p) + (long long)(outer0 + o) * ld)
                                 : X + ((outer0 + o) + (long long)(k0 + p) * ld);
            *reinterpret_cast<uint4*>(&S[L::at(o, p)]) = *reinterpret_cast<const uint4*>(src);
        }
    } else {
        #pragma unroll
        for (int r = 0; r < 8; ++r) {
            int e = tid + 128 * r;
            int o = TRANS ? e / WBK : e % 64, p = TRANS ? e % WBK : e / 64;
            int og = outer0 + o, pg = k0 + p;
            S[L::at(o, p)] = (og < outer_n && pg < k) ? *at(X, TRANS, og, pg, ld) : zero_of(T());
        }
    }
}

template <typename T, typename TC, int TA, int TB>
__global__ void __launch_bounds__(128) gemm_wmma(int m, int n, int k, float alpha,
        const T* __restrict__ A, int lda, long long stride_a, const T* __restrict__ B, int ldb, long long stride_b,
        float beta, TC* C, int ldc, long long stride_c, int batch, int fill, int vec) {
    typedef Tile<T, TA, WBM> LA;
    typedef Tile<T, TB ? 0 : 1, WBN> LB;  // op(B)'s outer index j is B's column for 'N', its row for 'T'
    typedef typename Frag<T>::type FT;
    typedef typename Layout<TA>::type LayoutA;
    typedef typename Layout<TB>::type LayoutB;
    const int FK = Frag<T>::K;
    __shared__ __align__(32) T As[LA::ROWS * LA::LD];
    __shared__ __align__(32) T Bs[LB::ROWS * LB::LD];
    __shared__ __align__(32) float Cs[WBN][WBM + 4];
    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = (warp % 2) * 32, wn = (warp / 2) * 32;
    const int bm = blockIdx.x * WBM, bn = blockIdx.y * WBN;
    if ((fill == 1 && bm > bn + WBN - 1) || (fill == 2 && bn > bm + WBM - 1)) return;
    const bool a_inside = (vec & 1) && bm + WBM <= m, b_inside = (vec & 2) && bn + WBN <= n;
    for (int b = blockIdx.z; b < batch; b += gridDim.z) {
        const T* Ab = A + b * stride_a;
        const T* Bb = B + b * stride_b;
        wmma::fragment<wmma::accumulator, 16, 16, Frag<T>::K, float> acc[2][2];
        #pragma unroll
        for (int i = 0; i < 2; ++i)
            #pragma unroll
            for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
        for (int k0 = 0; k0 < k; k0 += WBK) {
            const bool k_inside = k0 + WBK <= k;
            fill_tile<T, TA>(As, Ab, lda, bm, k0, m, k, a_inside && k_inside, tid);
            fill_tile<T, TB ? 0 : 1>(Bs, Bb, ldb, bn, k0, n, k, b_inside && k_inside, tid);
            __syncthreads();
            #pragma unroll
            for (int kk = 0; kk < WBK; kk += FK) {
                wmma::fragment<wmma::matrix_a, 16, 16, Frag<T>::K, FT, LayoutA> fa[2];
                wmma::fragment<wmma::matrix_b, 16, 16, Frag<T>::K, FT, LayoutB> fb[2];
                #pragma unroll
                for (int i = 0; i < 2; ++i) {
                    wmma::load_matrix_sync(fa[i], &As[LA::at(wm + 16 * i, kk)], LA::LD);
                    wmma::load_matrix_sync(fb[i], &Bs[LB::at(wn + 16 * i, kk)], LB::LD);
                    if constexpr (sizeof(T) == 4) {
                        #pragma unroll
                        for (int t = 0; t < fa[i].num_elements; ++t) fa[i].x[t] = wmma::__float_to_tf32(fa[i].x[t]);
                        #pragma unroll
                        for (int t = 0; t < fb[i].num_elements; ++t) fb[i].x[t] = wmma::__float_to_tf32(fb[i].x[t]);
                    }
                }
                #pragma unroll
                for (int i = 0; i < 2; ++i)
                    #pragma unroll
                    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
            }
            __syncthreads();
        }
        #pragma unroll
        for (int i = 0; i < 2; ++i)
            #pragma unroll
            for (int j = 0; j < 2; ++j)
                wmma::store_matrix_sync(&Cs[wn + 16 * j][wm + 16 * i], acc[i][j], WBM + 4, wmma::mem_col_major);
        __syncthreads();
        TC* Cb = C + b * stride_c;
        for (int e = tid; e < WBM * WBN; e += 128) {
            int row = bm + e % WBM, col = bn + e / WBM;
            if (row < m && col < n && in_fill(fill, row, col))
                epilogue(Cb, ldc, row, col, Cs[e / WBM][e % WBM], alpha, beta);
        }
        __syncthreads();
    }
}
"""

F16, BF16, F32 = np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32)
COMBOS = [(F16, F16), (F16, F32), (BF16, BF16), (BF16, F32), (F32, F32)]  # (A/B type, C type); f32 means tf32


def kernel_name(ab: np.dtype, c: np.dtype, trans: tuple[int, int] = (0, 0)) -> str:
    """The name expression of the tensor-core kernel for A/B type `ab`, C type `c` and transposes."""
    return f"gemm_wmma<{C_TYPE[ab]}, {C_TYPE[c]}, {trans[0]}, {trans[1]}>"


def vector_flags(ab: np.dtype, a: int, lda: int, stride_a: int, b: int, ldb: int, stride_b: int) -> int:
    """The kernel's `vec` argument: bit 0 (A) and bit 1 (B) when every column of the operand starts
    16-byte aligned, so full tiles can be staged with 16-byte loads."""
    per = 16 // ab.itemsize
    ok_a = a % 16 == 0 and lda % per == 0 and stride_a % per == 0
    ok_b = b % 16 == 0 and ldb % per == 0 and stride_b % per == 0
    return int(ok_a) | int(ok_b) << 1


KERNELS = KernelFamily("blas_wmma", SOURCE)

_probe: tuple[bool, str] | None = None
_probe_lock = threading.Lock()


def available() -> tuple[bool, str]:
    """(True, '') if the tensor-core kernel compiles, loads and multiplies a 32x32x32 bf16 product
    correctly on the current device; else (False, why). Checked once per process (for NVIDIA devices:
    WMMA is theirs; an AMD device's matrix cores run `mfma.py`'s kernel instead)."""
    global _probe
    # NOTE: imported here, not at the top: strata.cuda is needed only when the probe runs.
    from strata.cuda import current_device

    if current_device().spec.vendor == "amd":
        return False, "WMMA is NVIDIA's tensor-core API; on AMD devices f16/bf16 GEMMs run gemm_mfma"
    with _probe_lock:
        if _probe is None:
            _probe = _check()
        return _probe


def _check() -> tuple[bool, str]:
    # NOTE: imported here, not at the top: strata.cuda is needed only when the probe runs.
    import strata.cuda as cuda

    try:
        kernel = KERNELS.get(kernel_name(BF16, F32))
    except Exception as e:  # CompileError (no crt/mma.h), UnsupportedInstruction (no wmma on the device)
        return False, f"{type(e).__name__}: {str(e).splitlines()[0]}"
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 32)).astype(ml_dtypes.bfloat16)
    b = rng.standard_normal((32, 32)).astype(ml_dtypes.bfloat16)
    da, db = cuda.to_device(np.ascontiguousarray(a.T)), cuda.to_device(np.ascontiguousarray(b.T))  # column-major
    dc = cuda.zeros((32, 32), np.float32)
    i32, i64, f32 = np.int32, np.int64, np.float32
    try:
        kernel((1, 1, 1), 128, (i32(32), i32(32), i32(32), f32(1), da, i32(32), i64(0), db, i32(32), i64(0), f32(0),
                                dc, i32(32), i64(0), i32(1), i32(0), i32(3))).wait()
    except Exception as e:
        return False, f"{type(e).__name__}: {str(e).splitlines()[0]}"
    want = a.astype(np.float64) @ b.astype(np.float64)
    got = dc.get().T
    if not np.allclose(got, want, rtol=1e-5, atol=1e-4):
        return False, f"the wmma kernel's 32x32x32 bf16 product is off by {np.abs(got - want).max():.3g}"
    return True, ""
