// A naive GEMM kernel checked against cuBLAS: column-major C = alpha * A * B + beta * C.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#endif

extern "C" __global__ void gemm_naive(int m, int n, int k, float alpha, const float* A, const float* B,
                                      float beta, float* C) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;  // column-major, as BLAS
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float acc = 0.0f;
        for (int p = 0; p < k; ++p) acc += A[p * m + row] * B[col * k + p];
        C[col * m + row] = alpha * acc + beta * C[col * m + row];
    }
}

#ifndef __CUDACC_RTC__
int main() {
    const int m = 128, n = 96, k = 64;
    float *A, *B, *C, *C_ref;
    cudaMalloc(&A, m * k * sizeof(float));
    cudaMalloc(&B, k * n * sizeof(float));
    cudaMalloc(&C, m * n * sizeof(float));
    cudaMalloc(&C_ref, m * n * sizeof(float));
    float alpha = 1.0f, beta = 0.0f;
    dim3 block(16, 16), grid((n + 15) / 16, (m + 15) / 16);
    gemm_naive<<<grid, block>>>(m, n, k, alpha, A, B, beta, C);

    cublasHandle_t handle;
    if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) return 1;
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cublasSetStream(handle, stream);
    cublasStatus_t st = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, m, B, k, &beta, C_ref, m);
    if (st != CUBLAS_STATUS_SUCCESS) printf("cublasSgemm failed\n");
    st = cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, A, CUDA_R_32F, m, B, CUDA_R_32F, k, &beta,
                      C_ref, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    cudaStreamSynchronize(stream);
    cublasDestroy(handle);
    cudaStreamDestroy(stream);
    cudaFree(A); cudaFree(B); cudaFree(C); cudaFree(C_ref);
    return 0;
}
#endif
