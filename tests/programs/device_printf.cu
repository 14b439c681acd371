// Device printf interleaved with host output: each kernel's lines appear at the next synchronization,
// between the host lines printed before and after it.
#include "common.h"

__global__ void hello(int round) {
  printf("round %d: block %d thread %d says %.1f\n", round, blockIdx.x, threadIdx.x, threadIdx.x * 1.5f);
}

int main() {
  printf("host: before\n");
  hello<<<1, 4>>>(1);
  checkCudaErrors(cudaDeviceSynchronize());
  printf("host: between\n");
  hello<<<2, 1>>>(2);
  checkCudaErrors(cudaDeviceSynchronize());
  printf("host: after\n");
  return 0;
}
