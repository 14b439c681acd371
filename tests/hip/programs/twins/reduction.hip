#include "hip/hip_runtime.h"
// Reduction: a shared-memory tree per block, then one atomicAdd per block.
#include "common.h"

__global__ void reduce(const int* in, unsigned long long* out, int n) {
  extern __shared__ int sdata[];
  unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  int v = 0;
  if (i < n) v += in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  sdata[tid] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] += sdata[tid + s];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(out, (unsigned long long)sdata[0]);
}

int main() {
  const int n = 1 << 16, threads = 128;
  int* h = (int*)malloc(n * sizeof(int));
  long long ref = 0;
  for (int i = 0; i < n; ++i) { h[i] = (i * 2654435761u) % 1000; ref += h[i]; }
  int* d; unsigned long long* dsum; unsigned long long sum = 0;
  checkCudaErrors(hipMalloc(&d, n * sizeof(int)));
  checkCudaErrors(hipMalloc(&dsum, sizeof sum));
  checkCudaErrors(hipMemset(dsum, 0, sizeof sum));
  checkCudaErrors(hipMemcpy(d, h, n * sizeof(int), hipMemcpyHostToDevice));
  int blocks = (n + threads * 2 - 1) / (threads * 2);
  hipLaunchKernelGGL(reduce, blocks, threads, threads * sizeof(int), 0, d, dsum, n);
  checkCudaErrors(hipGetLastError());
  checkCudaErrors(hipMemcpy(&sum, dsum, sizeof sum, hipMemcpyDeviceToHost));
  printf("GPU sum %llu\n", sum);
  printf("%s\n", (long long)sum == ref ? "Test passed" : "Test failed");
  return (long long)sum == ref ? 0 : 1;
}
