#include "hip/hip_runtime.h"
// __constant__ coefficients set with cudaMemcpyToSymbol; a __device__ counter read back with
// cudaMemcpyFromSymbol; cudaGetSymbolAddress/Size.
#include "common.h"

__constant__ float coeffs[4];
__device__ unsigned int evaluated;

__global__ void poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = ((coeffs[3] * v + coeffs[2]) * v + coeffs[1]) * v + coeffs[0];
    atomicAdd(&evaluated, 1u);
  }
}

int main() {
  const int n = 1000;
  float hx[n], hy[n];
  for (int i = 0; i < n; ++i) hx[i] = (i - 500) * 0.01f;
  const float c[4] = {1.0f, -2.0f, 0.5f, 0.25f};
  checkCudaErrors(hipMemcpyToSymbol(HIP_SYMBOL(coeffs), c, sizeof c));
  unsigned zero = 0;
  checkCudaErrors(hipMemcpyToSymbol(HIP_SYMBOL(evaluated), &zero, sizeof zero));
  size_t size = 0;
  checkCudaErrors(hipGetSymbolSize(&size, HIP_SYMBOL(coeffs)));
  printf("coeffs size %zu\n", size);
  float *dx, *dy;
  checkCudaErrors(hipMalloc(&dx, sizeof hx));
  checkCudaErrors(hipMalloc(&dy, sizeof hy));
  checkCudaErrors(hipMemcpy(dx, hx, sizeof hx, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(poly, (n + 127) / 128, 128, 0, 0, dx, dy, n);
  checkCudaErrors(hipMemcpy(hy, dy, sizeof hy, hipMemcpyDeviceToHost));
  unsigned count = 0;
  checkCudaErrors(hipMemcpyFromSymbol(&count, HIP_SYMBOL(evaluated), sizeof count));
  float back[4];
  checkCudaErrors(hipMemcpyFromSymbol(back, HIP_SYMBOL(coeffs), sizeof back));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float v = hx[i], ref = ((c[3] * v + c[2]) * v + c[1]) * v + c[0];
    if (fabsf(ref - hy[i]) > 1e-4f) ++bad;
  }
  printf("evaluated %u coeffs back %.2f %.2f %.2f %.2f\n", count, back[0], back[1], back[2], back[3]);
  printf("y[0] %.4f y[999] %.4f\n", hy[0], hy[n - 1]);
  printf("%s\n", bad == 0 ? "PASS" : "FAIL");
  return bad;
}
