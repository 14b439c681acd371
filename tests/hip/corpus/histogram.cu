// 256-bin byte histogram: per-block histogram in shared memory with atomics, then merged into global.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#endif

#define NUM_BINS 256

extern "C" __global__ void histogram256(const unsigned char* data, unsigned int* bins, int n) {
    __shared__ unsigned int local[NUM_BINS];
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NUM_BINS; b += blockDim.x)
        if (local[b]) atomicAdd(&bins[b], local[b]);
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 1 << 24;
    unsigned char* h_data;
    unsigned int h_bins[NUM_BINS];
    cudaMallocHost((void**)&h_data, n);  // pinned, for fast copies
    for (int i = 0; i < n; ++i) h_data[i] = (unsigned char)(i * 7);
    unsigned char* d_data;
    unsigned int* d_bins;
    cudaMalloc(&d_data, n);
    cudaMalloc(&d_bins, NUM_BINS * sizeof(unsigned int));
    cudaMemset(d_bins, 0, NUM_BINS * sizeof(unsigned int));
    cudaMemcpy(d_data, h_data, n, cudaMemcpyHostToDevice);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    histogram256<<<prop.multiProcessorCount * 4, 256>>>(d_data, d_bins, n);
    cudaMemcpy(h_bins, d_bins, sizeof(h_bins), cudaMemcpyDeviceToHost);
    printf("bin[0] = %u\n", h_bins[0]);
    cudaFreeHost(h_data);
    cudaFree(d_data); cudaFree(d_bins);
    return 0;
}
#endif
