// Function attributes, opting in to more than 48 KiB of dynamic shared memory, a struct passed by value,
// cudaLaunchKernel called directly, and cudaPeekAtLastError leaving the error in place.
#include "common.h"

struct Params { int n; double scale; char tag; };

__global__ void big_smem(const Params p, float* out) {
  extern __shared__ float buf[];
  int t = threadIdx.x;
  buf[t * 128] = (float)(t * p.scale) + p.tag;  // spread over 64 KiB
  __syncthreads();
  if (t < p.n) out[t] = buf[(p.n - 1 - t) * 128];
}

int main() {
  cudaFuncAttributes a;
  checkCudaErrors(cudaFuncGetAttributes(&a, big_smem));
  printf("maxThreadsPerBlock %d ptxVersion>0 %d binaryVersion %d\n", a.maxThreadsPerBlock, a.ptxVersion > 0,
         a.binaryVersion);
  const int threads = 128, smem = threads * 128 * sizeof(float);  // 64 KiB
  float* d;
  checkCudaErrors(cudaMalloc(&d, threads * sizeof(float)));
  Params p = {threads, 0.5, 3};
  big_smem<<<1, threads, smem>>>(p, d);
  cudaError_t e = cudaPeekAtLastError();
  printf("without opting in: %s, peeked again: %s\n", cudaGetErrorName(e), cudaGetErrorName(cudaGetLastError()));
  checkCudaErrors(cudaFuncSetAttribute(big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  void* args[] = {&p, &d};
  checkCudaErrors(cudaLaunchKernel((const void*)big_smem, dim3(1), dim3(threads), args, smem, 0));
  checkCudaErrors(cudaGetLastError());
  float h[threads];
  checkCudaErrors(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  printf("out[0] %.1f out[127] %.1f\n", h[0], h[127]);
  return 0;
}
