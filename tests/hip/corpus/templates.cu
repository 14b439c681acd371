// Kernel templates instantiated for several types, launched with explicit template arguments.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

template <typename T>
__global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a;
}

template <typename T, int UNROLL>
__global__ void axpy(const T* x, T* y, T a, int n) {
    int base = (blockIdx.x * blockDim.x + threadIdx.x) * UNROLL;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
        if (base + u < n) y[base + u] = a * x[base + u] + y[base + u];
}

#ifndef __CUDACC_RTC__
template <typename T>
void run_scale(T* d, T a, int n, cudaStream_t stream) {
    scale<T><<<(n + 127) / 128, 128, 0, stream>>>(d, a, n);
}

int main() {
    const int n = 1000;
    float* df; double* dd; int* di;
    cudaMalloc(&df, n * sizeof(float));
    cudaMalloc(&dd, n * sizeof(double));
    cudaMalloc(&di, n * sizeof(int));
    run_scale<float>(df, 2.0f, n, 0);
    scale<double><<<8, 128>>>(dd, 0.5, n);
    scale<int><<<dim3(8), dim3(128)>>>(di, 3, n);
    axpy<float, 4><<<(n / 4 + 127) / 128, 128>>>(df, df, 1.0f, n);
    cudaDeviceSynchronize();
    cudaFree(df); cudaFree(dd); cudaFree(di);
    return 0;
}
#endif
