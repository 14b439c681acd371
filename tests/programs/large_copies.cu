// Copies of every size class: small (through the pipe), large pageable (staged through shared memory, in
// several chunks past 64 MiB) and pinned (cudaMallocHost memory the runtime process shares), checked
// byte for byte after a device-to-device round trip; a kernel reads the copied bytes too.
#include <cstring>
#include "common.h"

__global__ void checksum(const unsigned char* p, int n, unsigned long long* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, (unsigned long long)p[i]);
}

static int roundtrip(const char* what, unsigned char* src, unsigned char* dst, size_t n) {
  unsigned char *a, *b;
  checkCudaErrors(cudaMalloc(&a, n));
  checkCudaErrors(cudaMalloc(&b, n));
  for (size_t i = 0; i < n; ++i) src[i] = (unsigned char)((i * 131u) >> 3);
  memset(dst, 0, n);
  checkCudaErrors(cudaMemcpy(a, src, n, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice));
  checkCudaErrors(cudaMemcpy(dst, b, n, cudaMemcpyDefault));
  unsigned long long* sum;
  checkCudaErrors(cudaMalloc(&sum, 8));
  checkCudaErrors(cudaMemset(sum, 0, 8));
  int m = n < 4096 ? (int)n : 4096;
  checksum<<<(m + 255) / 256, 256>>>(b + n - m, m, sum);
  unsigned long long got = 0, want = 0;
  checkCudaErrors(cudaMemcpy(&got, sum, 8, cudaMemcpyDeviceToHost));
  for (size_t i = n - m; i < n; ++i) want += src[i];
  int same = memcmp(src, dst, n) == 0 && got == want;
  printf("%s %zu bytes: %s\n", what, n, same ? "same" : "DIFFERENT");
  cudaFree(a); cudaFree(b); cudaFree(sum);
  return same;
}

int main() {
  int ok = 1;
  unsigned char* s = (unsigned char*)malloc(1000);
  unsigned char* d = (unsigned char*)malloc(1000);
  ok &= roundtrip("small", s, d, 1000);
  size_t big = (70u << 20) + 12345;
  unsigned char* bs = (unsigned char*)malloc(big);
  unsigned char* bd = (unsigned char*)malloc(big);
  ok &= roundtrip("pageable", bs, bd, big);
  unsigned char *ps, *pd;
  checkCudaErrors(cudaMallocHost(&ps, 3 << 20));
  checkCudaErrors(cudaHostAlloc(&pd, 3 << 20, cudaHostAllocDefault));
  ok &= roundtrip("pinned", ps, pd, 3 << 20);
  checkCudaErrors(cudaFreeHost(ps));
  unsigned char* again;
  checkCudaErrors(cudaMallocHost(&again, 1 << 20));
  printf("freed pinned memory reused: %d\n", again == ps);
  checkCudaErrors(cudaFreeHost(again));
  checkCudaErrors(cudaFreeHost(pd));
  return ok ? 0 : 1;
}
