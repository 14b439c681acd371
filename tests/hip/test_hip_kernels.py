"""HIP C++ kernels, written the way HIP code is written, compiled by strata.hip.compile (HIP headers +
NVRTC) and run on the virtual GPU. Each is checked against a NumPy oracle, and against the same
algorithm written CUDA-style and compiled by strata.cuda: the two outputs must be bit-identical, since
on the NVIDIA platform HIP's device API *is* CUDA's under other names."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip

RNG = np.random.default_rng(4)


def run(mod: cuda.Module, kernel: str, grid: Any, block: Any, inputs: Sequence[np.ndarray],
        outputs: Sequence[tuple[tuple[int, ...], Any]], scalars: Sequence[Any] = (), shared_mem: int = 0,
        ) -> list[np.ndarray]:
    """Launch `kernel` with device copies of `inputs`, zeroed `outputs` (shape, dtype), then `scalars`;
    return the outputs."""
    ins = [hip.to_device(a) for a in inputs]
    outs = [hip.zeros(shape, dtype) for shape, dtype in outputs]
    mod.get_function(kernel)(grid, block, (*ins, *outs, *scalars), shared_mem=shared_mem)
    return [o.get() for o in outs]


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.shape == b.shape and a.dtype == b.dtype
    assert a.tobytes() == b.tobytes(), "the HIP and CUDA builds of one algorithm disagree"


def exact(out: np.ndarray, want: np.ndarray) -> None:
    assert out.shape == want.shape and out.dtype == want.dtype, (out.shape, out.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(out, want)


def both(hip_src: str, cuda_src: str, launch: Callable[[cuda.Module], list[np.ndarray]],
         **compile_args: Any) -> list[np.ndarray]:
    """Run one algorithm from its HIP and its CUDA source; assert bit-identical outputs; return them."""
    hip_mod = hip.compile(hip_src, **compile_args)
    cuda_mod = cuda.compile(cuda_src, **compile_args)
    assert isinstance(hip_mod, hip.Module)
    got, twin = launch(hip_mod), launch(cuda_mod)
    for a, b in zip(got, twin):
        same_bits(a, b)
    return got


# --- 1. grid-stride SAXPY with HIP's coordinate names ----------------------------------------------------

SAXPY_HIP = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, int n) {
    for (int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x; i < n; i += hipBlockDim_x * hipGridDim_x)
        out[i] = a * x[i] + y[i];
}
"""
SAXPY_CUDA = r"""
extern "C" __global__ void saxpy(const float* x, const float* y, float* out, float a, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = a * x[i] + y[i];
}
"""


def test_saxpy_grid_stride() -> None:
    n = 3000
    x, y = RNG.standard_normal(n).astype(np.float32), RNG.standard_normal(n).astype(np.float32)
    a = np.float32(2.5)
    (out,) = both(SAXPY_HIP, SAXPY_CUDA, lambda m: run(m, "saxpy", 4, 128, (x, y), [((n,), np.float32)],
                                                           (a, np.int32(n))))
    # NVRTC contracts a * x + y into one FMA (a single rounding); float64 holds the product exactly, so
    # rounding its sum once more to float32 is the FMA's result (bar double-rounding ties, absent here).
    exact(out, (np.float64(a) * x.astype(np.float64) + y).astype(np.float32))


# --- 2. block reduction in dynamic shared memory (HIP_DYNAMIC_SHARED) -------------------------------------

REDUCE_HIP = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void block_sum(const int* x, int* partial, int n) {
    HIP_DYNAMIC_SHARED(int, sdata)
    unsigned t = hipThreadIdx_x, i = hipBlockIdx_x * hipBlockDim_x * 2 + t;
    int v = 0;
    if (i < n) v += x[i];
    if (i + hipBlockDim_x < n) v += x[i + hipBlockDim_x];
    sdata[t] = v;
    __syncthreads();
    for (unsigned s = hipBlockDim_x / 2; s > 0; s >>= 1) {
        if (t < s) sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t == 0) partial[hipBlockIdx_x] = sdata[0];
}
"""
REDUCE_CUDA = r"""
extern "C" __global__ void block_sum(const int* x, int* partial, int n) {
    extern __shared__ int sdata[];
    unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + t;
    int v = 0;
    if (i < n) v += x[i];
    if (i + blockDim.x < n) v += x[i + blockDim.x];
    sdata[t] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) sdata[t] += sdata[t + s];
        __syncthreads();
    }
    if (t == 0) partial[blockIdx.x] = sdata[0];
}
"""


def test_shared_memory_block_reduction() -> None:
    n, block = 5000, 256
    blocks = -(-n // (2 * block))
    x = RNG.integers(-1000, 1000, n, dtype=np.int32)
    (partial,) = both(REDUCE_HIP, REDUCE_CUDA, lambda m: run(
        m, "block_sum", blocks, block, (x,), [((blocks,), np.int32)], (np.int32(n),), shared_mem=block * 4))
    padded = np.zeros(blocks * 2 * block, np.int32)
    padded[:n] = x
    exact(partial, padded.reshape(blocks, 2 * block).sum(axis=1, dtype=np.int32))


# --- 3. warp reduction with HIP's unsynchronized shuffles --------------------------------------------------

WARP_HIP = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void warp_sums(const float* x, float* sums, float* maxima, float* broadcast) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    float s = x[i], m = x[i];
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        s += __shfl_down(s, offset);
        m = fmaxf(m, __shfl_xor(m, offset));
    }
    float lane3 = __shfl(x[i], 3);               // every lane reads lane 3
    float prev = __shfl_up(x[i], 1);             // lane k reads lane k-1 (lane 0 keeps its own)
    broadcast[i] = lane3 - prev;
    if (__lane_id() == 0) sums[i / warpSize] = s;
    maxima[i] = m;
}
"""
WARP_CUDA = r"""
extern "C" __global__ void warp_sums(const float* x, float* sums, float* maxima, float* broadcast) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = x[i], m = x[i];
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        s += __shfl_down_sync(0xffffffffu, s, offset);
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
    }
    float lane3 = __shfl_sync(0xffffffffu, x[i], 3);
    float prev = __shfl_up_sync(0xffffffffu, x[i], 1);
    broadcast[i] = lane3 - prev;
    if ((threadIdx.x & 31) == 0) sums[i / warpSize] = s;
    maxima[i] = m;
}
"""


def test_warp_shuffles() -> None:
    n = 256
    x = RNG.integers(-50, 50, n).astype(np.float32)  # small integers: every float sum is exact
    sums, maxima, broadcast = both(WARP_HIP, WARP_CUDA, lambda m: run(
        m, "warp_sums", 2, 128, (x,), [((n // 32,), np.float32), ((n,), np.float32), ((n,), np.float32)]))
    warps = x.reshape(-1, 32)
    exact(sums, warps.sum(axis=1))
    exact(maxima, np.repeat(warps.max(axis=1), 32))
    prev = np.concatenate([warps[:, :1], warps[:, :-1]], axis=1)
    exact(broadcast, (warps[:, 3:4] - prev).reshape(-1))


# --- 4. warp votes: __ballot (64-bit), __popcll, __lanemask_lt, __any, __all ---------------------------------

VOTE_HIP = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void compact(const int* x, int* out, int* count, unsigned long long* masks, int* votes,
                                   int* where) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    int keep = x[i] > 0;
    unsigned long long mask = __ballot(keep);
    int rank = __popcll(mask & __lanemask_lt());  // keepers in lower lanes of this warp
    __shared__ int base[32];
    int warp = hipThreadIdx_x / warpSize;
    if (__lane_id() == 0) base[warp] = atomicAdd(count, __popcll(mask));
    __syncthreads();
    if (keep) out[base[warp] + rank] = x[i];
    where[i] = keep ? base[warp] + rank : -1;
    if (__lane_id() == 0) masks[i / warpSize] = mask;
    votes[i] = __any(x[i] > 90) * 2 + __all(x[i] > -100);
}
"""
VOTE_CUDA = r"""
extern "C" __global__ void compact(const int* x, int* out, int* count, unsigned long long* masks, int* votes,
                                   int* where) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int keep = x[i] > 0;
    unsigned long long mask = __ballot_sync(0xffffffffu, keep);
    unsigned lane = threadIdx.x & 31;
    int rank = __popcll(mask & ((1ull << lane) - 1));
    __shared__ int base[32];
    int warp = threadIdx.x / warpSize;
    if (lane == 0) base[warp] = atomicAdd(count, __popcll(mask));
    __syncthreads();
    if (keep) out[base[warp] + rank] = x[i];
    where[i] = keep ? base[warp] + rank : -1;
    if (lane == 0) masks[i / warpSize] = mask;
    votes[i] = __any_sync(0xffffffffu, x[i] > 90) * 2 + __all_sync(0xffffffffu, x[i] > -100);
}
"""


def test_ballot_compaction_and_votes() -> None:
    n = 128  # one block, so warps append in an order the oracle does not need to know
    x = RNG.integers(-100, 100, n, dtype=np.int32)
    x[:32] = np.abs(x[:32]) % 90 + 1  # warp 0: all keep, no lane above 90
    out, count, masks, votes, where = both(VOTE_HIP, VOTE_CUDA, lambda m: run(
        m, "compact", 1, n, (x,), [((n,), np.int32), ((1,), np.int32), ((n // 32,), np.uint64), ((n,), np.int32),
                                   ((n,), np.int32)]))
    keep = x > 0
    assert count[0] == keep.sum()
    exact(np.sort(where[keep]), np.arange(keep.sum(), dtype=np.int32))  # the warps' slices tile the output
    exact(out[where[keep]], x[keep])
    for w in range(n // 32):  # within a warp, survivors keep their lane order: consecutive slots
        slots = where[32 * w: 32 * w + 32][keep[32 * w: 32 * w + 32]]
        exact(slots, slots[0] + np.arange(len(slots), dtype=np.int32)) if len(slots) else None
    bits = (x.reshape(-1, 32) > 0).astype(np.uint64) << np.arange(32, dtype=np.uint64)
    exact(masks, bits.sum(axis=1, dtype=np.uint64))
    warps = x.reshape(-1, 32)
    want = (np.any(warps > 90, axis=1)[:, None] * 2 + np.all(warps > -100, axis=1)[:, None]).repeat(32, axis=1)
    exact(votes, want.reshape(-1).astype(np.int32))


DIVERGENT_HIP = r"""
#include <hip/hip_runtime.h>
extern "C" __global__ void tail_ballot(const int* x, unsigned long long* masks, int* all_positive, int n) {
    int i = hipThreadIdx_x;
    if (i < n) {  // the last warp is partly inactive here: HIP votes over the active lanes only
        unsigned long long m = __ballot(x[i] > 0);
        int a = __all(x[i] > 0);
        if (__lane_id() == 0) { masks[i / warpSize] = m; all_positive[i / warpSize] = a; }
    }
}
"""
DIVERGENT_CUDA = r"""
extern "C" __global__ void tail_ballot(const int* x, unsigned long long* masks, int* all_positive, int n) {
    int i = threadIdx.x;
    if (i < n) {
        unsigned long long m = __ballot_sync(__activemask(), x[i] > 0);
        int a = __all_sync(__activemask(), x[i] > 0);
        if ((threadIdx.x & 31) == 0) { masks[i / warpSize] = m; all_positive[i / warpSize] = a; }
    }
}
"""


def test_votes_in_divergent_code_count_only_active_lanes() -> None:
    n = 40
    x = np.ones(64, np.int32)
    x[3] = -1  # warp 0 has a non-positive lane; warp 1's active lanes (32..39) are all positive
    masks, all_positive = both(DIVERGENT_HIP, DIVERGENT_CUDA, lambda m: run(
        m, "tail_ballot", 1, 64, (x,), [((2,), np.uint64), ((2,), np.int32)], (np.int32(n),)))
    exact(masks, np.array([0xFFFFFFFF & ~(1 << 3), 0xFF], dtype=np.uint64))
    exact(all_positive, np.array([0, 1], dtype=np.int32))


# --- 5. histogram with shared-memory and global atomics ----------------------------------------------------

HIST_HIP = r"""
#include <hip/hip_runtime.h>
#define BINS 64
extern "C" __global__ void histogram(const unsigned char* data, unsigned int* bins, int n) {
    __shared__ unsigned int local[BINS];
    for (int b = hipThreadIdx_x; b < BINS; b += hipBlockDim_x) local[b] = 0;
    __syncthreads();
    for (int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x; i < n; i += hipBlockDim_x * hipGridDim_x)
        atomicAdd(&local[data[i] % BINS], 1u);
    __syncthreads();
    for (int b = hipThreadIdx_x; b < BINS; b += hipBlockDim_x) atomicAdd(&bins[b], local[b]);
}
"""
HIST_CUDA = HIST_HIP.replace("#include <hip/hip_runtime.h>\n", "").replace("hipThreadIdx_x", "threadIdx.x") \
    .replace("hipBlockIdx_x", "blockIdx.x").replace("hipBlockDim_x", "blockDim.x").replace("hipGridDim_x", "gridDim.x")


def test_histogram_atomics() -> None:
    n = 6000
    data = RNG.integers(0, 256, n, dtype=np.uint8)
    (bins,) = both(HIST_HIP, HIST_CUDA, lambda m: run(m, "histogram", 3, 256, (data,), [((64,), np.uint32)],
                                                          (np.int32(n),)))
    exact(bins, np.bincount(data % 64, minlength=64).astype(np.uint32))


# --- 6. a template kernel through name expressions ---------------------------------------------------------

TEMPLATE_HIP = r"""
#include <hip/hip_runtime.h>
template <typename T>
__global__ void axpby(const T* x, T* y, T a, T b, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i < n) y[i] = a * x[i] + b * y[i];
}
"""
TEMPLATE_CUDA = r"""
template <typename T>
__global__ void axpby(const T* x, T* y, T a, T b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b * y[i];
}
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_template_kernel_via_name_expressions(dtype: type) -> None:
    names = ("axpby<float>", "axpby<double>", "axpby<int>")
    ctype = {np.float32: "float", np.float64: "double", np.int32: "int"}[dtype]
    n = 1000
    x = (RNG.integers(-9, 9, n)).astype(dtype)
    y0 = (RNG.integers(-9, 9, n)).astype(dtype)
    a, b = dtype(3), dtype(-2)

    def launch(m: cuda.Module) -> list[np.ndarray]:
        y = hip.to_device(y0)
        m.get_function(f"axpby<{ctype}>")(-(-n // 256), 256, (hip.to_device(x), y, a, b, np.int32(n)))
        return [y.get()]

    (y,) = both(TEMPLATE_HIP, TEMPLATE_CUDA, launch, name_expressions=names)
    exact(y, (a * x + b * y0).astype(dtype))  # small integers: exact in every type


# --- 7. a 2-D tiled transpose (hipBlockIdx_y, hipBlockDim_y, padded shared tile) -----------------------------

TRANSPOSE_HIP = r"""
#include <hip/hip_runtime.h>
#define TILE 16
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];
    int x = hipBlockIdx_x * TILE + hipThreadIdx_x, y = hipBlockIdx_y * TILE + hipThreadIdx_y;
    if (x < cols && y < rows) tile[hipThreadIdx_y][hipThreadIdx_x] = in[y * cols + x];
    __syncthreads();
    x = hipBlockIdx_y * TILE + hipThreadIdx_x;
    y = hipBlockIdx_x * TILE + hipThreadIdx_y;
    if (x < rows && y < cols) out[y * rows + x] = tile[hipThreadIdx_x][hipThreadIdx_y];
}
"""
TRANSPOSE_CUDA = TRANSPOSE_HIP.replace("#include <hip/hip_runtime.h>\n", "")
for _hip_name, _cuda_name in (("hipBlockIdx_", "blockIdx."), ("hipThreadIdx_", "threadIdx.")):
    TRANSPOSE_CUDA = TRANSPOSE_CUDA.replace(_hip_name, _cuda_name)


def test_tiled_transpose_2d() -> None:
    rows, cols = 40, 72
    a = RNG.standard_normal((rows, cols)).astype(np.float32)
    (out,) = both(TRANSPOSE_HIP, TRANSPOSE_CUDA, lambda m: run(
        m, "transpose", (-(-cols // 16), -(-rows // 16)), (16, 16), (a,), [((cols, rows), np.float32)],
        (np.int32(rows), np.int32(cols))))
    exact(out, np.ascontiguousarray(a.T))


# --- 8. half, bfloat16 and hip_bfloat16 from the HIP headers -----------------------------------------------

TYPES_HIP = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
#include <hip/hip_bfloat16.h>
extern "C" __global__ void convert(const float* x, __half* h, __hip_bfloat16* bf, unsigned short* rocbf,
                                   unsigned short* rocbf_trunc, float* back, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i >= n) return;
    h[i] = __hadd(__float2half(x[i]), __float2half(1.0f));
    bf[i] = __float2bfloat16(x[i]);
    hip_bfloat16 r(x[i]);
    rocbf[i] = r.data;
    rocbf_trunc[i] = hip_bfloat16(x[i], hip_bfloat16::truncate).data;
    back[i] = float(r * hip_bfloat16(2.0f));
}
"""
TYPES_CUDA = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void convert(const float* x, __half* h, __nv_bfloat16* bf, unsigned short* rocbf,
                                   unsigned short* rocbf_trunc, float* back, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    h[i] = __hadd(__float2half(x[i]), __float2half(1.0f));
    bf[i] = __float2bfloat16(x[i]);
    __nv_bfloat16 r = __float2bfloat16_rn(x[i]);
    rocbf[i] = __bfloat16_as_ushort(r);
    rocbf_trunc[i] = (unsigned short)(__float_as_uint(x[i]) >> 16);
    back[i] = __bfloat162float(__float2bfloat16_rn(__bfloat162float(r) * 2.0f));
}
"""


def test_half_and_bfloat16_headers() -> None:
    n = 500
    x = (RNG.standard_normal(n) * 100).astype(np.float32)
    x[:4] = [np.inf, -0.0, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8]  # a ties-to-even case each way
    h, bf, rocbf, trunc, back = both(TYPES_HIP, TYPES_CUDA, lambda m: run(
        m, "convert", 2, 256, (x,), [((n,), np.float16), ((n,), np.uint16), ((n,), np.uint16), ((n,), np.uint16),
                                     ((n,), np.float32)], (np.int32(n),)))
    exact(h, (x.astype(np.float16) + np.float16(1)).astype(np.float16))
    bf_oracle = x.astype(ml_dtypes.bfloat16)  # round to nearest even
    exact(bf, bf_oracle.view(np.uint16))
    exact(rocbf, bf_oracle.view(np.uint16))
    exact(trunc, (x.view(np.uint32) >> 16).astype(np.uint16))
    exact(back, (bf_oracle.astype(np.float32) * 2).astype(ml_dtypes.bfloat16).astype(np.float32))


# --- 9. complex arithmetic through hip/hip_complex.h ------------------------------------------------------

COMPLEX_HIP = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_complex.h>
extern "C" __global__ void cmath(const hipFloatComplex* a, const hipFloatComplex* b, hipFloatComplex* prod,
                                 hipFloatComplex* quot, float* mag, hipDoubleComplex* wide, int n) {
    int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
    if (i >= n) return;
    prod[i] = hipCaddf(hipCmulf(a[i], hipConjf(b[i])), make_hipFloatComplex(1.0f, -1.0f));
    quot[i] = hipCdivf(a[i], b[i]);
    mag[i] = hipCabsf(a[i]) + hipCsqabsf(b[i]);
    wide[i] = hipCfma(hipComplexFloatToDouble(a[i]), hipComplexFloatToDouble(b[i]), make_hipDoubleComplex(0.5, 0));
}
"""
COMPLEX_CUDA = r"""
#include <cuComplex.h>
extern "C" __global__ void cmath(const cuFloatComplex* a, const cuFloatComplex* b, cuFloatComplex* prod,
                                 cuFloatComplex* quot, float* mag, cuDoubleComplex* wide, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    prod[i] = cuCaddf(cuCmulf(a[i], cuConjf(b[i])), make_cuFloatComplex(1.0f, -1.0f));
    quot[i] = cuCdivf(a[i], b[i]);
    mag[i] = cuCabsf(a[i]) + (cuCrealf(b[i]) * cuCrealf(b[i]) + cuCimagf(b[i]) * cuCimagf(b[i]));
    wide[i] = cuCfma(cuComplexFloatToDouble(a[i]), cuComplexFloatToDouble(b[i]), make_cuDoubleComplex(0.5, 0));
}
"""


def test_complex_header() -> None:
    n = 300
    a = (RNG.integers(-8, 8, n) + 1j * RNG.integers(-8, 8, n)).astype(np.complex64)
    b = (RNG.integers(1, 8, n) + 1j * RNG.integers(-8, 8, n)).astype(np.complex64)
    prod, quot, mag, wide = both(COMPLEX_HIP, COMPLEX_CUDA, lambda m: run(
        m, "cmath", 2, 256, (a, b), [((n,), np.complex64), ((n,), np.complex64), ((n,), np.float32),
                                     ((n,), np.complex128)], (np.int32(n),)))
    exact(prod, (a * np.conj(b) + (1 - 1j)).astype(np.complex64))  # small integers: exact
    np.testing.assert_allclose(quot, a / b, rtol=1e-6, atol=1e-6)  # cuCdivf scales by |b| first
    np.testing.assert_allclose(mag, np.abs(a) + np.abs(b) ** 2, rtol=1e-6)
    exact(wide, a.astype(np.complex128) * b + 0.5)


# --- 10. what the headers define: platform, version, enums, math constants ------------------------------------

MACROS_HIP = r"""
#include <hip/hip_runtime.h>
#include <hip/hip_math_constants.h>
extern "C" __global__ void macros(int* out, float* f) {
    out[0] = HIP_VERSION;
    out[1] = HIP_VERSION_MAJOR * 100 + HIP_VERSION_MINOR;
#if defined(__HIP_PLATFORM_NVIDIA__) && defined(__HIP_PLATFORM_NVCC__)
    out[2] = 1;
#endif
#if defined(__HIP__) || defined(__HIP_PLATFORM_AMD__)
    out[3] = 1;
#endif
#if defined(__HIPCC__) && defined(__HIPCC_RTC__) && __HIP_DEVICE_COMPILE__ && __HIP_ARCH_HAS_WARP_SHUFFLE__
    out[4] = 1;
#endif
    out[5] = hipErrorIllegalAddress;
    out[6] = hipMemcpyDeviceToHost;
    out[7] = hipStreamNonBlocking * 10 + hipEventDisableTiming;
    out[8] = warpSize;
    f[0] = HIP_PI_F;
    f[1] = HIP_INF_F;
    f[2] = HIP_SQRT_TWO_F;
}
"""


def test_header_macros_and_enums() -> None:
    mod = hip.compile(MACROS_HIP)
    out, f = run(mod, "macros", 1, 1, (), [((9,), np.int32), ((3,), np.float32)])
    assert out[0] == hip.HIP_VERSION and out[1] == hip.compiler.HIP_VERSION_MAJOR * 100 + hip.compiler.HIP_VERSION_MINOR
    assert out[2:5].tolist() == [1, 0, 1], "NVIDIA platform, not AMD, and a hipRTC device compile"
    assert out[5] == hip.hipErrorIllegalAddress == 700
    assert out[6] == hip.hipMemcpyDeviceToHost and out[7] == hip.hipStreamNonBlocking * 10 + hip.hipEventDisableTiming
    assert out[8] == 32
    exact(f, np.array([np.pi, np.inf, np.sqrt(2)], dtype=np.float32))


@pytest.mark.parametrize("header", sorted(p.name for p in (hip.include_dir() / "hip").glob("*.h")))
def test_every_header_compiles_on_its_own(header: str) -> None:
    mod = hip.compile(f'#include <hip/{header}>\nextern "C" __global__ void k(int* x) {{ *x = 1; }}\n',
                      name=f"only_{header}.hip")
    assert mod.kernels == ["k"]


def test_device_api_without_the_include_as_under_hiprtc() -> None:
    mod = hip.compile('extern "C" __global__ void lanes(int* x) { x[hipThreadIdx_x] = __lane_id() + __any(1); }')
    (out,) = run(mod, "lanes", 1, 64, (), [((64,), np.int32)])
    exact(out, np.arange(64, dtype=np.int32) % 32 + 1)


def test_hip_source_errors_name_the_hip_file() -> None:
    with pytest.raises(hip.CompileError) as info:
        hip.compile("#include <hip/hip_runtime.h>\n__global__ void k() { int x = hipThreadIdx_w; }", name="bad.hip")
    assert "bad.hip" in str(info.value) and "hipThreadIdx_w" in info.value.log


def test_amd_platform_macro_is_rejected() -> None:
    with pytest.raises(hip.CompileError, match="NVIDIA platform"):
        hip.compile("#include <hip/hip_runtime.h>\n", options=("-D__HIP_PLATFORM_AMD__",))
