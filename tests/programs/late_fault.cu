// A kernel that faults, and the program exits without synchronizing: `strata run` reports it at exit.
#include "common.h"

__global__ void oob(float* p) { p[threadIdx.x + (1 << 22)] = 1.0f; }

int main() {
  float* d;
  checkCudaErrors(cudaMalloc(&d, 256));
  oob<<<1, 32>>>(d);
  printf("exiting without a sync\n");
  return 0;
}
