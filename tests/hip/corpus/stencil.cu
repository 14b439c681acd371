// 1-D seven-point stencil: each block stages its slice plus a halo of RADIUS on each side in shared memory.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

#define RADIUS 3
#define BLOCK 128

extern "C" __global__ void stencil_1d(const float* in, float* out, int n) {
    __shared__ float temp[BLOCK + 2 * RADIUS];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + RADIUS;
    temp[l] = (g < n) ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        int left = g - RADIUS, right = g + BLOCK;
        temp[l - RADIUS] = (left >= 0 && left < n) ? in[left] : 0.0f;
        temp[l + BLOCK] = (right < n) ? in[right] : 0.0f;
    }
    __syncthreads();
    if (g < n) {
        float sum = 0.0f;
        for (int off = -RADIUS; off <= RADIUS; ++off) sum += temp[l + off];
        out[g] = sum;
    }
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 1 << 20;
    float *d_in, *d_out;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, n * sizeof(float));
    cudaMemset(d_in, 0, n * sizeof(float));
    stencil_1d<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(d_in, d_out, n);
    cudaDeviceSynchronize();
    printf("stencil: %s\n", cudaGetErrorString(cudaGetLastError()));
    cudaFree(d_in); cudaFree(d_out);
    return 0;
}
#endif
