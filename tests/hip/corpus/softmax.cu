// Row-wise softmax: one block per row; block-wide max and sum by shared-memory tree reductions.
#include <math_constants.h>
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>
#endif

#define THREADS 128

__device__ float block_reduce(float v, float* smem, bool is_max) {
    smem[threadIdx.x] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            smem[threadIdx.x] = is_max ? fmaxf(smem[threadIdx.x], smem[threadIdx.x + s])
                                       : smem[threadIdx.x] + smem[threadIdx.x + s];
        __syncthreads();
    }
    float r = smem[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void softmax_rows(const float* x, float* y, int cols) {
    __shared__ float smem[THREADS];
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    float m = -CUDART_INF_F;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
    m = block_reduce(m, smem, true);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
    s = block_reduce(s, smem, false);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) / s;
}

#ifndef __CUDACC_RTC__
int main() {
    const int rows = 64, cols = 1000;
    float *d_x, *d_y;
    cudaMalloc(&d_x, rows * cols * sizeof(float));
    cudaMalloc(&d_y, rows * cols * sizeof(float));
    softmax_rows<<<rows, THREADS>>>(d_x, d_y, cols);
    if (cudaPeekAtLastError() != cudaSuccess) return 1;
    cudaDeviceSynchronize();
    cudaFree(d_x); cudaFree(d_y);
    return 0;
}
#endif
