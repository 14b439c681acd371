// A 64-bin histogram of bytes: per-workgroup bins in LDS with atomicAdd, merged with global atomicAdd;
// atomicMax keeps the largest byte, atomicCAS counts the workgroups that finished.
#include "check.h"

__global__ void histogram64(const unsigned char* data, int n, unsigned int* bins, int* max_byte, int* done) {
  __shared__ unsigned int local[64];
  for (int i = threadIdx.x; i < 64; i += blockDim.x) local[i] = 0;
  __syncthreads();
  int biggest = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local[data[i] >> 2], 1u);
    biggest = max(biggest, (int)data[i]);
  }
  atomicMax(max_byte, biggest);
  __syncthreads();
  for (int i = threadIdx.x; i < 64; i += blockDim.x) atomicAdd(&bins[i], local[i]);
  if (threadIdx.x == 0) {
    int old = *done, seen;
    do { seen = old; old = atomicCAS(done, seen, seen + 1); } while (old != seen);
  }
}

int main() {
  const int n = 100000;
  unsigned char* h = (unsigned char*)malloc(n);
  unsigned int seed = 12345;
  for (int i = 0; i < n; ++i) { seed = seed * 1103515245u + 12345u; h[i] = (unsigned char)(seed >> 16); }
  unsigned char* d;
  unsigned int* bins;
  int *max_byte, *done;
  HIP_CHECK(hipMalloc(&d, n));
  HIP_CHECK(hipMalloc(&bins, 64 * sizeof(unsigned int)));
  HIP_CHECK(hipMalloc(&max_byte, sizeof(int)));
  HIP_CHECK(hipMalloc(&done, sizeof(int)));
  HIP_CHECK(hipMemset(bins, 0, 64 * sizeof(unsigned int)));
  HIP_CHECK(hipMemset(max_byte, 0, sizeof(int)));
  HIP_CHECK(hipMemset(done, 0, sizeof(int)));
  HIP_CHECK(hipMemcpy(d, h, n, hipMemcpyHostToDevice));
  histogram64<<<16, 256>>>(d, n, bins, max_byte, done);
  HIP_CHECK(hipGetLastError());
  unsigned int hb[64];
  int hmax = 0, hdone = 0;
  HIP_CHECK(hipMemcpy(hb, bins, sizeof hb, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&hmax, max_byte, sizeof hmax, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(&hdone, done, sizeof hdone, hipMemcpyDeviceToHost));
  unsigned long total = 0;
  for (int i = 0; i < 64; ++i) total += hb[i];
  printf("total %lu max %d workgroups %d\n", total, hmax, hdone);
  for (int i = 0; i < 64; ++i) printf("%u%c", hb[i], i == 63 ? '\n' : ' ');
  HIP_CHECK(hipFree(d)); HIP_CHECK(hipFree(bins)); HIP_CHECK(hipFree(max_byte)); HIP_CHECK(hipFree(done));
  free(h);
  return 0;
}
