// Inclusive prefix sum of one block's worth of data (Hillis-Steele, double-buffered dynamic shared memory).
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

extern "C" __global__ void inclusive_scan(const int* in, int* out, int n) {
    extern __shared__ int buf[];  // 2 * blockDim.x ints
    int tid = threadIdx.x;
    int pout = 0, pin = 1;
    buf[pout * n + tid] = (tid < n) ? in[tid] : 0;
    __syncthreads();
    for (int offset = 1; offset < n; offset <<= 1) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (tid >= offset) buf[pout * n + tid] = buf[pin * n + tid] + buf[pin * n + tid - offset];
        else buf[pout * n + tid] = buf[pin * n + tid];
        __syncthreads();
    }
    if (tid < n) out[tid] = buf[pout * n + tid];
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 1024;
    int h_in[n], h_out[n];
    for (int i = 0; i < n; ++i) h_in[i] = i % 7;
    int *d_in, *d_out;
    cudaMalloc(&d_in, sizeof(h_in));
    cudaMalloc(&d_out, sizeof(h_out));
    cudaMemcpy(d_in, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
    inclusive_scan<<<1, n, 2 * n * sizeof(int)>>>(d_in, d_out, n);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) { printf("launch failed: %s\n", cudaGetErrorString(err)); return 1; }
    cudaMemcpy(h_out, d_out, sizeof(h_out), cudaMemcpyDeviceToHost);
    printf("last = %d\n", h_out[n - 1]);
    cudaFree(d_in); cudaFree(d_out);
    return 0;
}
#endif
