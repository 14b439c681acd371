// A HIP program whose kernel prints: device printf reaches the program's stdout between its own lines
#include <hip/hip_runtime.h>
#include <stdio.h>
__global__ void k(int n) { if (threadIdx.x < 2) printf("dev %d %d\n", n, (int)threadIdx.x); }
int main() {
  printf("host before\n"); fflush(stdout);
  hipLaunchKernelGGL(k, dim3(1), dim3(64), 0, 0, 3);
  hipDeviceSynchronize();
  printf("host after\n");
  return 0;
}
