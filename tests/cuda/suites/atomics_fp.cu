// Floating-point atomics: atomicAdd on double, on __half2 and on __nv_bfloat16, plus a CAS-loop
// atomicMax on float (the pre-sm_90 idiom).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__device__ float atomic_max_float(float* addr, float v) {
    int* a = (int*)addr;
    int old = *a, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(a, assumed, __float_as_int(v));
    } while (assumed != old);
    return __int_as_float(old);
}

extern "C" __global__ void fp_atomics(const double* xd, const __half2* xh, const float* xf, double* sum_d,
                                      __half2* sum_h, __nv_bfloat16* sum_b, float* max_f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    atomicAdd(sum_d, xd[i]);
    atomicAdd(&sum_h[i & 3], xh[i]);
    atomicAdd(sum_b, __float2bfloat16(1.0f));
    atomic_max_float(max_f, xf[i]);
}
