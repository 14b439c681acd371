// Exits without freeing device or pinned memory, destroying its stream, or synchronizing its last kernel.
#include "common.h"

__global__ void fill(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i; }

int main() {
  int* d; int* h; cudaStream_t s;
  checkCudaErrors(cudaMalloc(&d, 1 << 20));
  checkCudaErrors(cudaMallocHost(&h, 1 << 10));
  checkCudaErrors(cudaStreamCreate(&s));
  fill<<<4, 64, 0, s>>>(d, 256);
  printf("leaving\n");
  return 3;
}
