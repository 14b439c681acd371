// Tiled matrix multiply C = A * B (row-major, n x n) with shared-memory tiles.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>
#endif

#define TILE 16

extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
        int a_col = t * TILE + threadIdx.x, b_row = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < n && a_col < n) ? A[row * n + a_col] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (b_row < n && col < n) ? B[b_row * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}

#ifndef __CUDACC_RTC__
int main() {
    const int n = 512;
    std::vector<float> A(n * n, 1.0f), B(n * n, 2.0f), C(n * n);
    float *dA, *dB, *dC;
    size_t bytes = n * n * sizeof(float);
    cudaMalloc((void**)&dA, bytes);
    cudaMalloc((void**)&dB, bytes);
    cudaMalloc((void**)&dC, bytes);
    cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B.data(), bytes, cudaMemcpyHostToDevice);

    dim3 block(TILE, TILE);
    dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(dA, dB, dC, n);
    cudaDeviceSynchronize();
    cudaMemcpy(C.data(), dC, bytes, cudaMemcpyDeviceToHost);
    printf("C[0] = %f (expected %f)\n", C[0], 2.0f * n);
    cudaFree(dA); cudaFree(dB); cudaFree(dC);
    return 0;
}
#endif
