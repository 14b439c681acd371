// Dot products of half2 vectors with __hfma2, finished in float (fp16ScalarProduct's shape).
#include <cuda_fp16.h>
extern "C" __global__ void half_dot(const __half2* a, const __half2* b, float* out, int n2) {
    __shared__ float partial[128];
    __half2 acc = __float2half2_rn(0.0f);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += blockDim.x * gridDim.x)
        acc = __hfma2(a[i], b[i], acc);
    float2 f = __half22float2(acc);
    partial[threadIdx.x] = f.x + f.y;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}
