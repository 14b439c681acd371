// A 64-bin histogram: per-block bins in shared memory with atomicAdd, merged into global bins.
#include "common.h"

__global__ void histogram64(const unsigned char* data, int n, unsigned int* bins) {
  __shared__ unsigned int local[64];
  for (int i = threadIdx.x; i < 64; i += blockDim.x) local[i] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&local[data[i] >> 2], 1u);
  __syncthreads();
  for (int i = threadIdx.x; i < 64; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}

int main() {
  const int n = 100000;
  unsigned char* h = (unsigned char*)malloc(n);
  unsigned int seed = 12345;
  for (int i = 0; i < n; ++i) { seed = seed * 1103515245u + 12345u; h[i] = (unsigned char)(seed >> 16); }
  unsigned char* d;
  unsigned int* bins;
  checkCudaErrors(cudaMalloc(&d, n));
  checkCudaErrors(cudaMalloc(&bins, 64 * sizeof(unsigned int)));
  checkCudaErrors(cudaMemset(bins, 0, 64 * sizeof(unsigned int)));
  checkCudaErrors(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
  histogram64<<<16, 256>>>(d, n, bins);
  unsigned int hb[64];
  checkCudaErrors(cudaMemcpy(hb, bins, sizeof hb, cudaMemcpyDeviceToHost));
  unsigned long total = 0;
  for (int i = 0; i < 64; ++i) total += hb[i];
  printf("total %lu bins[0] %u bins[31] %u bins[63] %u\n", total, hb[0], hb[31], hb[63]);
  return 0;
}
