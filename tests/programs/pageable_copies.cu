// Pageable copies as programs make them: large host-to-device and device-to-host copies of malloc'd
// memory at odd offsets and sizes, a copy on a stream ordered after a kernel there, and a copy that runs
// past the end of its device allocation, which fails with cudaErrorInvalidValue before a byte moves while
// the context stays usable.
#include <cstdint>
#include <cstring>
#include "common.h"

__global__ void add_index(unsigned int* p, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) p[i] += (unsigned int)i;
}

int main() {
  const size_t n = (9u << 20) + 3;  // 36 MiB + 12 bytes of words
  unsigned char* raw = (unsigned char*)malloc(n * 4 + 8);
  unsigned int* host = (unsigned int*)(raw + 4);  // not page aligned
  for (size_t i = 0; i < n; ++i) host[i] = (unsigned int)(i * 2654435761u);
  unsigned int* dev;
  checkCudaErrors(cudaMalloc(&dev, n * 4));
  checkCudaErrors(cudaMemcpy(dev, host, n * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  checkCudaErrors(cudaStreamCreate(&s));
  add_index<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(dev, n);
  unsigned int* back = (unsigned int*)malloc(n * 4);
  memset(back, 0, n * 4);
  checkCudaErrors(cudaMemcpyAsync(back, dev, n * 4, cudaMemcpyDeviceToHost, s));  // after the kernel
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += back[i] != (unsigned int)(i * 2654435761u) + (unsigned int)i;
  printf("round trip %zu bytes through a kernel: %zu mismatches\n", n * 4, bad);

  cudaError_t e = cudaMemcpy(dev + n - 1000, host, 1 << 20, cudaMemcpyHostToDevice);
  printf("copy past the allocation's end: %s\n", cudaGetErrorName(e));
  printf("last error then: %s\n", cudaGetErrorName(cudaGetLastError()));
  checkCudaErrors(cudaMemcpy(back, dev, 1 << 20, cudaMemcpyDeviceToHost));
  printf("context still usable: %s\n", back[5] == (unsigned int)(5 * 2654435761u) + 5 ? "yes" : "no");
  checkCudaErrors(cudaStreamDestroy(s));
  checkCudaErrors(cudaFree(dev));
  free(raw);
  free(back);
  return 0;
}
