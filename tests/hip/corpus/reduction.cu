// Sum reduction: shared-memory tree within a block, warp shuffles for the last 32, one atomicAdd per block.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

__inline__ __device__ float warp_sum(float v) {
    for (int offset = warpSize / 2; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

extern "C" __global__ void reduce_sum(const float* in, float* out, int n) {
    __shared__ float partial[32];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += in[i];
    v = warp_sum(v);
    int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    v = (threadIdx.x < blockDim.x / warpSize) ? partial[lane] : 0.0f;
    if (warp == 0) {
        v = warp_sum(v);
        if (lane == 0) atomicAdd(out, v);
    }
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 1 << 22;
    float* h = new float[n];
    for (int i = 0; i < n; ++i) h[i] = 1.0f;
    float *d_in, *d_out, result = 0.0f;
    cudaMalloc(&d_in, n * sizeof(float));
    cudaMalloc(&d_out, sizeof(float));
    cudaMemcpy(d_in, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(d_out, 0, sizeof(float));
    reduce_sum<<<256, 256>>>(d_in, d_out, n);
    cudaMemcpy(&result, d_out, sizeof(float), cudaMemcpyDeviceToHost);
    printf("sum = %f\n", result);
    cudaFree(d_in); cudaFree(d_out);
    delete[] h;
    return 0;
}
#endif
