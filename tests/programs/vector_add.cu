// vectorAdd in the style of the CUDA samples: C = A + B with error checks and a host-side verification.
#include <cmath>
#include "common.h"

__global__ void vectorAdd(const float* A, const float* B, float* C, int numElements) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < numElements) C[i] = A[i] + B[i] + 0.0f;
}

int main(int argc, char** argv) {
  int numElements = argc > 1 ? atoi(argv[1]) : 50000;
  size_t size = numElements * sizeof(float);
  printf("[Vector addition of %d elements]\n", numElements);
  float* h_A = (float*)malloc(size);
  float* h_B = (float*)malloc(size);
  float* h_C = (float*)malloc(size);
  for (int i = 0; i < numElements; ++i) {
    h_A[i] = (float)(i % 97) * 0.5f;
    h_B[i] = (float)((i * 7) % 13) - 6.0f;
  }
  float *d_A = NULL, *d_B = NULL, *d_C = NULL;
  checkCudaErrors(cudaMalloc((void**)&d_A, size));
  checkCudaErrors(cudaMalloc((void**)&d_B, size));
  checkCudaErrors(cudaMalloc((void**)&d_C, size));
  checkCudaErrors(cudaMemcpy(d_A, h_A, size, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(d_B, h_B, size, cudaMemcpyHostToDevice));
  int threadsPerBlock = 256;
  int blocksPerGrid = (numElements + threadsPerBlock - 1) / threadsPerBlock;
  printf("CUDA kernel launch with %d blocks of %d threads\n", blocksPerGrid, threadsPerBlock);
  vectorAdd<<<blocksPerGrid, threadsPerBlock>>>(d_A, d_B, d_C, numElements);
  checkCudaErrors(cudaGetLastError());
  checkCudaErrors(cudaMemcpy(h_C, d_C, size, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < numElements; ++i) {
    if (fabs(h_A[i] + h_B[i] - h_C[i]) > 1e-5) {
      fprintf(stderr, "Result verification failed at element %d!\n", i);
      exit(EXIT_FAILURE);
    }
    sum += h_C[i];
  }
  printf("sum %.1f\n", sum);
  checkCudaErrors(cudaFree(d_A));
  checkCudaErrors(cudaFree(d_B));
  checkCudaErrors(cudaFree(d_C));
  free(h_A); free(h_B); free(h_C);
  printf("Test PASSED\n");
  return 0;
}
