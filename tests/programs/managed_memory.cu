// Unified memory: cudaMallocManaged memory written on the host, updated by kernels, read on the host
// after cudaDeviceSynchronize, through the same pointers; a prefetch hint; an attribute check.
#include "common.h"

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  int managed = 0;
  checkCudaErrors(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, 0));
  printf("managedMemory %d\n", managed);
  const int n = 1 << 12;
  float *x, *y;
  checkCudaErrors(cudaMallocManaged(&x, n * sizeof(float)));
  checkCudaErrors(cudaMallocManaged(&y, n * sizeof(float)));
  for (int i = 0; i < n; ++i) { x[i] = 1.0f + i % 10; y[i] = 2.0f; }
  cudaMemLocation loc = {cudaMemLocationTypeDevice, 0};
  checkCudaErrors(cudaMemPrefetchAsync(x, n * sizeof(float), loc, 0, 0));
  saxpy<<<(n + 255) / 256, 256>>>(n, 3.0f, x, y);
  checkCudaErrors(cudaDeviceSynchronize());
  printf("y[0] %.1f y[9] %.1f\n", y[0], y[9]);
  for (int i = 0; i < n; ++i) x[i] = -1.0f;  // host writes between kernels
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, x, y);
  checkCudaErrors(cudaDeviceSynchronize());
  double err = 0;
  for (int i = 0; i < n; ++i) err += fabsf(y[i] - (3.0f * (1.0f + i % 10) + 2.0f - 2.0f));
  printf("y[5] %.1f total error %.1f\n", y[5], err);
  float first = 0;
  checkCudaErrors(cudaMemcpy(&first, y + 9, sizeof first, cudaMemcpyDefault));
  printf("copied y[9] %.1f\n", first);
  checkCudaErrors(cudaFree(x));
  checkCudaErrors(cudaFree(y));
  return err != 0;
}
