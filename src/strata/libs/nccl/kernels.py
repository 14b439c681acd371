"""The collectives' device code: one CUDA C++ kernel that combines or copies a chunk, instantiated for
every NCCL data type. A ring step is one launch of it on each rank's device; operands on a neighbour
device are read through unified addresses over the link (peer access), as NCCL's P2P transport reads
a peer's buffer.

Half and bfloat16 combine in float and round once, as NCCL's reductions do; integers wrap.
"""

from __future__ import annotations

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

// dst[i] = a[i] (op) b[i] for op 0..4 (sum, prod, max, min, avg-as-sum), dst[i] = b[i] for op 5;
// a nonzero `divisor` divides the result (ncclAvg's last step).
template <typename T>
__global__ void nccl_apply(T* dst, const T* a, const T* b, unsigned long long n, int op, int divisor) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    typedef typename Acc<T>::type W;
    W y = Acc<T>::in(b[i]);
    W r;
    if (op == 5) {
        dst[i] = b[i];
        return;
    }
    W x = Acc<T>::in(a[i]);
    if (op == 1) r = x * y;
    else if (op == 2) r = x > y ? x : y;
    else if (op == 3) r = x < y ? x : y;
    else r = x + y;
    if (divisor > 1) r = r / (W)divisor;
    dst[i] = Acc<T>::out(r);
}
"""

NAMES = {dt: f"nccl_apply<{dt.ctype}>" for dt in DataType}
KERNELS = KernelSet("nccl", SOURCE, name_expressions=tuple(NAMES.values()))
