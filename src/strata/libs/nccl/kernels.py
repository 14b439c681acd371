"""The collectives' device code: one CUDA C++ kernel that combines or copies a chunk, instantiated for
every NCCL data type. A ring step is one launch of it on each rank's device; operands on a neighbour
device are read through unified addresses over the link (peer access), as NCCL's P2P transport reads
a peer's buffer.

Half and bfloat16 combine in float and round once, as NCCL's reductions do; integers wrap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.libs.common import KernelSet
from strata.libs.nccl.types import DataType

COPY = 5  # `op` value: dst = b (RedOp values 0..4 combine)
BLOCK = 256

SOURCE = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T> struct Acc {
    typedef T type;
    static __device__ __forceinline__ T in(T x) { return x; }
    static __device__ __forceinline__ T out(T x) { return x; }
};
template <> struct Acc<__half> {
    typedef float type;
    static __device__ __forceinline__ float in(__half x) { return __half2float(x); }
    static __device__ __forceinline__ __half out(float x) { return __float2half(x); }
};
template <> struct Acc<__nv_bfloat16> {
    typedef float type;
    static __device__ __forceinline__ float in(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ __nv_bfloat16 out(float x) { return __float2bfloat16(x); }
};

template <typename T>
__device__ __forceinline__ T combine(T a, T b, int op, int divisor) {
    typedef typename Acc<T>::type W;
    W x = Acc<T>::in(a), y = Acc<T>::in(b), r;
    if (op == 1) r = x * y;
    else if (op == 2) r = x > y ? x : y;
    else if (op == 3) r = x < y ? x : y;
    else r = x + y;
    if (divisor > 1) r = r / (W)divisor;
    return Acc<T>::out(r);
}

// dst[i] = a[i] (op) b[i] for op 0..4 (sum, prod, max, min, avg-as-sum), dst[i] = b[i] for op 5;
// a nonzero `divisor` divides the result (ncclAvg's last step).
template <typename T>
__global__ void nccl_apply(T* dst, const T* a, const T* b, unsigned long long n, int op, int divisor) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (op == 5) {
        dst[i] = b[i];
        return;
    }
    dst[i] = combine(a[i], b[i], op, divisor);
}

// The same on 16-byte vectors (all three pointers 16-byte aligned, `nvec` vectors): one thread moves
// 16 bytes with one vector load per operand, as NCCL's kernels do.
template <typename T>
__global__ void nccl_apply_v(T* dst, const T* a, const T* b, unsigned long long nvec, int op, int divisor) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nvec) return;
    uint4 vb = reinterpret_cast<const uint4*>(b)[i];
    if (op == 5) {
        reinterpret_cast<uint4*>(dst)[i] = vb;
        return;
    }
    union Lanes { uint4 v; T e[16 / sizeof(T)]; } ua, ub;
    ua.v = reinterpret_cast<const uint4*>(a)[i];
    ub.v = vb;
#pragma unroll
    for (int k = 0; k < (int)(16 / sizeof(T)); ++k) ua.e[k] = combine(ua.e[k], ub.e[k], op, divisor);
    reinterpret_cast<uint4*>(dst)[i] = ua.v;
}
"""

NAMES = {dt: f"nccl_apply<{dt.ctype}>" for dt in DataType}
VECTOR_NAMES = {dt: f"nccl_apply_v<{dt.ctype}>" for dt in DataType}
KERNELS = KernelSet("nccl", SOURCE, name_expressions=(*NAMES.values(), *VECTOR_NAMES.values()))
VECTOR_BYTES = 16


def apply(dt: DataType, dst: int, a: int, b: int, n: int, op: int, divisor: int, stream: Any) -> int:
    """Queue dst = a (op) b (or the copy dst = b) over `n` elements on `stream`: the 16-byte vector kernel
    for the aligned bulk, the scalar one for the rest. Returns the number of launches."""
    launches = 0
    nvec = 0
    if all(p % VECTOR_BYTES == 0 for p in (dst, a, b) if p) and n * dt.size >= VECTOR_BYTES:
        nvec = n * dt.size // VECTOR_BYTES
        KERNELS.get(VECTOR_NAMES[dt])((nvec + BLOCK - 1) // BLOCK, BLOCK, (dst, a or b, b, np.uint64(nvec),
                                                                           np.int32(op), np.int32(divisor)),
                                      stream=stream)
        launches += 1
    done = nvec * VECTOR_BYTES // dt.size
    rest = n - done
    if rest:
        off = done * dt.size
        KERNELS.get(NAMES[dt])((rest + BLOCK - 1) // BLOCK, BLOCK, (dst + off, (a + off) if a else b + off, b + off,
                                                                    np.uint64(rest), np.int32(op), np.int32(divisor)),
                               stream=stream)
        launches += 1
    return launches
