// Grid-stride SAXPY sized by the occupancy API and the device's properties.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

#ifndef __CUDACC_RTC__
int main() {
    int count = 0, dev = 0;
    cudaGetDeviceCount(&count);
    if (count == 0) { printf("no CUDA device\n"); return 1; }
    cudaSetDevice(dev);
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, dev);
    printf("%s: %d SMs, warp %d, %zu bytes shared per block\n", prop.name, prop.multiProcessorCount,
           prop.warpSize, prop.sharedMemPerBlock);
    int min_grid = 0, block = 0, per_sm = 0;
    cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, saxpy, 0, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, saxpy, block, 0);
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const int n = 1 << 24;
    float *x, *y;
    cudaMallocManaged(&x, n * sizeof(float));
    cudaMallocManaged(&y, n * sizeof(float));
    saxpy<<<sms * per_sm, block>>>(n, 2.0f, x, y);
    cudaDeviceSynchronize();
    size_t free_b, total_b;
    cudaMemGetInfo(&free_b, &total_b);
    printf("block %d, %d blocks/SM, %zu of %zu bytes free\n", block, per_sm, free_b, total_b);
    cudaFree(x); cudaFree(y);
    cudaDeviceReset();
    return 0;
}
#endif
