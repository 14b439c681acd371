// Provoke errors and check the codes CUDA gives: a bad launch configuration (not sticky), an impossible
// allocation, then an out-of-bounds kernel whose fault is sticky.
#include "common.h"

__global__ void touch(int* p, int offset) { p[threadIdx.x + offset] = 1; }

static void show(const char* what, cudaError_t e) {
  printf("%s: %d %s \"%s\"\n", what, (int)e, cudaGetErrorName(e), cudaGetErrorString(e));
}

int main() {
  int* d;
  checkCudaErrors(cudaMalloc(&d, 64 * sizeof(int)));
  touch<<<1, 4096>>>(d, 0);
  show("too many threads", cudaGetLastError());
  show("after reading it", cudaGetLastError());
  void* huge;
  show("huge malloc", cudaMalloc(&huge, (size_t)1 << 50));
  cudaGetLastError();
  touch<<<1, 64>>>(d, 0);
  show("good launch", cudaDeviceSynchronize());
  touch<<<1, 32>>>(d, 1 << 20);
  show("launch", cudaGetLastError());
  show("synchronize", cudaDeviceSynchronize());
  show("sticky malloc", cudaMalloc(&huge, 16));
  return 0;
}
