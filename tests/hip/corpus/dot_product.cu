// Dot product: each block reduces its products with warp shuffles (xor butterfly) and writes one partial
// sum; the host adds the partials.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

#define BLOCK 256

extern "C" __global__ void dot_partial(const float* a, const float* b, float* partial, int n) {
    __shared__ float warp_sums[BLOCK / 32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += a[i] * b[i];
    for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < BLOCK / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int mask = 16; mask > 0; mask >>= 1) v += __shfl_xor_sync(0xffffffffu, v, mask);
        if (threadIdx.x == 0) partial[blockIdx.x] = v;
    }
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 1 << 20, blocks = 64;
    float *a, *b, *partial, h_partial[blocks];
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&partial, blocks * sizeof(float));
    dot_partial<<<blocks, BLOCK>>>(a, b, partial, n);
    cudaMemcpy(h_partial, partial, sizeof(h_partial), cudaMemcpyDeviceToHost);
    double dot = 0;
    for (int i = 0; i < blocks; ++i) dot += h_partial[i];
    printf("dot = %f\n", dot);
    cudaFree(a); cudaFree(b); cudaFree(partial);
    return 0;
}
#endif
