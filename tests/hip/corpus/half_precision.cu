// Half-precision AXPY: store in __half, compute in half2 pairs, convert back to float for the result.
#include <cuda_fp16.h>
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

extern "C" __global__ void to_half(const float* x, __half* h, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) h[i] = __float2half(x[i]);
}

extern "C" __global__ void haxpy2(int n2, float a, const __half2* x, __half2* y) {
    __half2 a2 = __float2half2_rn(a);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) y[i] = __hfma2(a2, x[i], y[i]);
}

extern "C" __global__ void to_float(const __half* h, float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = __half2float(h[i]);
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 1 << 16;
    float* d_f;
    __half *d_x, *d_y;
    cudaMalloc(&d_f, n * sizeof(float));
    cudaMalloc(&d_x, n * sizeof(__half));
    cudaMalloc(&d_y, n * sizeof(__half));
    to_half<<<n / 256, 256>>>(d_f, d_x, n);
    to_half<<<n / 256, 256>>>(d_f, d_y, n);
    haxpy2<<<n / 2 / 256, 256>>>(n / 2, 3.0f, (const __half2*)d_x, (__half2*)d_y);
    to_float<<<n / 256, 256>>>(d_y, d_f, n);
    cudaDeviceSynchronize();
    cudaFree(d_f); cudaFree(d_x); cudaFree(d_y);
    return 0;
}
#endif
