// Polynomial evaluation with the coefficients in __constant__ memory (broadcast to every thread of a warp).
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

#define DEGREE 7

__constant__ float c_coeffs[DEGREE + 1];
__device__ int d_calls;

extern "C" __global__ void poly_eval(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) d_calls += 1;
    if (i < n) {
        float xi = x[i], acc = c_coeffs[DEGREE];
        for (int k = DEGREE - 1; k >= 0; --k) acc = acc * xi + c_coeffs[k];  // Horner
        y[i] = acc;
    }
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 4096;
    float h_coeffs[DEGREE + 1] = {1, -1, 0.5f, -0.25f, 0.125f, 0, 0, 0.01f};
    cudaMemcpyToSymbol(c_coeffs, h_coeffs, sizeof(h_coeffs));
    int zero = 0;
    cudaMemcpyToSymbol(d_calls, &zero, sizeof(int), 0, cudaMemcpyHostToDevice);
    float *d_x, *d_y;
    cudaMalloc(&d_x, n * sizeof(float));
    cudaMalloc(&d_y, n * sizeof(float));
    poly_eval<<<n / 256, 256>>>(d_x, d_y, n);
    int calls;
    cudaMemcpyFromSymbol(&calls, d_calls, sizeof(int));
    void* addr;
    cudaGetSymbolAddress(&addr, c_coeffs);
    printf("calls = %d, coefficients at %p\n", calls, addr);
    cudaFree(d_x); cudaFree(d_y);
    return 0;
}
#endif
