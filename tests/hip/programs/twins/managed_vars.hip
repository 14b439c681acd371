#include "hip/hip_runtime.h"
// __managed__ variables: an initializer, host updates before a kernel, kernel updates read on the host.
#include <cstdio>
__managed__ int counter = 5;
__managed__ float arr[4];
__global__ void k() { atomicAdd(&counter, 1); arr[threadIdx.x] = threadIdx.x * 2.0f; }
int main() {
  printf("before %d\n", counter);
  counter += 10;
  hipLaunchKernelGGL(k, 1, 4, 0, 0);
  hipDeviceSynchronize();
  printf("after %d arr[3] %.1f\n", counter, arr[3]);
  return 0;
}
