#include "hip/hip_runtime.h"
// matrixMul in the style of the CUDA samples: C = A * B with shared-memory tiles (a template kernel).
#include <cmath>
#include "common.h"

template <int BLOCK_SIZE>
__global__ void matrixMulCUDA(float* C, const float* A, const float* B, int wA, int wB) {
  int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
  int aBegin = wA * BLOCK_SIZE * by, aEnd = aBegin + wA - 1, aStep = BLOCK_SIZE;
  int bBegin = BLOCK_SIZE * bx, bStep = BLOCK_SIZE * wB;
  float Csub = 0;
  for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
    __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
    As[ty][tx] = A[a + wA * ty + tx];
    Bs[ty][tx] = B[b + wB * ty + tx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BLOCK_SIZE; ++k) Csub += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
  C[c + wB * ty + tx] = Csub;
}

int main() {
  const int block = 16, hA = 64, wA = 96, wB = 80;
  size_t sA = hA * wA * sizeof(float), sB = wA * wB * sizeof(float), sC = hA * wB * sizeof(float);
  float *hAm = (float*)malloc(sA), *hBm = (float*)malloc(sB), *hCm = (float*)malloc(sC);
  for (int i = 0; i < hA * wA; ++i) hAm[i] = (float)((i * 3) % 11) - 5.0f;
  for (int i = 0; i < wA * wB; ++i) hBm[i] = (float)((i * 5) % 7) * 0.25f;
  float *dA, *dB, *dC;
  checkCudaErrors(hipMalloc(&dA, sA));
  checkCudaErrors(hipMalloc(&dB, sB));
  checkCudaErrors(hipMalloc(&dC, sC));
  checkCudaErrors(hipMemcpy(dA, hAm, sA, hipMemcpyHostToDevice));
  checkCudaErrors(hipMemcpy(dB, hBm, sB, hipMemcpyHostToDevice));
  dim3 threads(block, block), grid(wB / block, hA / block);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(matrixMulCUDA<block>), grid, threads, 0, 0, dC, dA, dB, wA, wB);
  checkCudaErrors(hipGetLastError());
  checkCudaErrors(hipDeviceSynchronize());
  checkCudaErrors(hipMemcpy(hCm, dC, sC, hipMemcpyDeviceToHost));
  int errors = 0;
  for (int i = 0; i < hA; ++i)
    for (int j = 0; j < wB; ++j) {
      double ref = 0;
      for (int k = 0; k < wA; ++k) ref += (double)hAm[i * wA + k] * hBm[k * wB + j];
      if (fabs(ref - hCm[i * wB + j]) > 1e-3) ++errors;
    }
  printf("C[0][0] %.2f C[63][79] %.2f\n", hCm[0], hCm[hA * wB - 1]);
  printf("%s\n", errors == 0 ? "Result = PASS" : "Result = FAIL");
  hipFree(dA); hipFree(dB); hipFree(dC);
  return errors == 0 ? 0 : 1;
}
