// Pitched allocations with 2-D copies and memsets, stream-ordered allocation, and a copy between two
// devices with peer access.
#include "common.h"

__global__ void add_rows(float* p, size_t pitch, int w, int h) {
  int x = threadIdx.x, y = blockIdx.x;
  if (x < w && y < h) ((float*)((char*)p + y * pitch))[x] += (float)(y * 10 + x);
}

int main() {
  const int w = 7, h = 3;
  float* d;
  size_t pitch = 0;
  checkCudaErrors(cudaMallocPitch((void**)&d, &pitch, w * sizeof(float), h));
  checkCudaErrors(cudaMemset2D(d, pitch, 0, w * sizeof(float), h));
  add_rows<<<h, w>>>(d, pitch, w, h);
  float out[h][w];
  checkCudaErrors(cudaMemcpy2D(out, sizeof out[0], d, pitch, w * sizeof(float), h, cudaMemcpyDeviceToHost));
  printf("pitch %zu out[2][6] %.0f out[1][3] %.0f\n", pitch, out[2][6], out[1][3]);

  cudaStream_t s;
  checkCudaErrors(cudaStreamCreate(&s));
  int* a;
  checkCudaErrors(cudaMallocAsync((void**)&a, 1024, s));
  checkCudaErrors(cudaMemsetAsync(a, 7, 1024, s));
  unsigned char back[4];
  checkCudaErrors(cudaMemcpyAsync(back, a, 4, cudaMemcpyDeviceToHost, s));
  checkCudaErrors(cudaFreeAsync(a, s));
  checkCudaErrors(cudaStreamSynchronize(s));
  printf("stream-ordered byte %d\n", back[0]);

  int can = 0;
  checkCudaErrors(cudaDeviceCanAccessPeer(&can, 0, 1));
  checkCudaErrors(cudaDeviceEnablePeerAccess(1, 0));
  int host[64], got[64];
  for (int i = 0; i < 64; ++i) host[i] = i * 3;
  int *d0, *d1;
  checkCudaErrors(cudaMalloc(&d0, sizeof host));
  checkCudaErrors(cudaSetDevice(1));
  checkCudaErrors(cudaMalloc(&d1, sizeof host));
  checkCudaErrors(cudaSetDevice(0));
  checkCudaErrors(cudaMemcpy(d0, host, sizeof host, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpyPeer(d1, 1, d0, 0, sizeof host));
  checkCudaErrors(cudaMemcpy(got, d1, sizeof got, cudaMemcpyDeviceToHost));
  printf("peer can %d got[63] %d\n", can, got[63]);
  return 0;
}
