// 16-bit atomics on shared memory: atomicAdd on __half, __half2, __nv_bfloat16 and __nv_bfloat162, and a
// 16-bit atomicCAS loop (atom.shared.cas.b16).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void shared_atomics16(float* out) {
    __shared__ __half h;
    __shared__ __half2 h2;
    __shared__ __nv_bfloat16 b;
    __shared__ __nv_bfloat162 b2;
    __shared__ unsigned short u16;
    if (threadIdx.x == 0) {
        h = __float2half(0.f); h2 = __float2half2_rn(0.f); b = __float2bfloat16(0.f); b2 = __float2bfloat162_rn(0.f);
        u16 = 0;
    }
    __syncthreads();
    atomicAdd(&h, __float2half(1.f));
    atomicAdd(&h2, __floats2half2_rn(1.f, 2.f));
    atomicAdd(&b, __float2bfloat16(1.f));
    atomicAdd(&b2, __floats2bfloat162_rn(2.f, 1.f));
    unsigned short o = u16, a;
    do { a = o; o = atomicCAS(&u16, a, (unsigned short)(a + 3)); } while (o != a);
    __syncthreads();
    if (threadIdx.x == 0) {
        out[0] = __half2float(h); out[1] = __low2float(h2); out[2] = __high2float(h2); out[3] = __bfloat162float(b);
        out[4] = __low2float(b2); out[5] = __high2float(b2); out[6] = u16;
    }
}
