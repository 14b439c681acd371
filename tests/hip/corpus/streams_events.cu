// Overlapping copies and kernels on several streams; events order a final kernel after all chunks and
// time the whole pipeline.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

extern "C" __global__ void scale_offset(float* x, float a, float b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}

extern "C" __global__ void square_all(float* x, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) x[i] = x[i] * x[i];
}

#ifndef __CUDACC_RTC__
#define NSTREAMS 4
int main() {
    const int n = 1 << 20, chunk = n / NSTREAMS;
    float *h, *d;
    cudaHostAlloc((void**)&h, n * sizeof(float), cudaHostAllocDefault);
    cudaMalloc(&d, n * sizeof(float));
    cudaStream_t streams[NSTREAMS];
    cudaEvent_t done[NSTREAMS], start, stop;
    for (int s = 0; s < NSTREAMS; ++s) {
        cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming);
    }
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start, streams[0]);
    for (int s = 0; s < NSTREAMS; ++s) {
        float* hp = h + s * chunk;
        float* dp = d + s * chunk;
        cudaMemcpyAsync(dp, hp, chunk * sizeof(float), cudaMemcpyHostToDevice, streams[s]);
        scale_offset<<<(chunk + 255) / 256, 256, 0, streams[s]>>>(dp, 2.0f, 1.0f, chunk);
        cudaEventRecord(done[s], streams[s]);
    }
    for (int s = 1; s < NSTREAMS; ++s) cudaStreamWaitEvent(streams[0], done[s], 0);
    square_all<<<64, 256, 0, streams[0]>>>(d, n);
    cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, streams[0]);
    cudaEventRecord(stop, streams[0]);
    cudaStreamSynchronize(streams[0]);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);
    printf("pipeline: %.3f ms\n", ms);
    for (int s = 0; s < NSTREAMS; ++s) { cudaStreamDestroy(streams[s]); cudaEventDestroy(done[s]); }
    cudaEventDestroy(start); cudaEventDestroy(stop);
    cudaFreeHost(h); cudaFree(d);
    return 0;
}
#endif
