// Two devices, one per host thread: each thread's calls go to its own current device (cudaSetDevice is
// per thread), and a kernel on each device works on memory allocated there.
#include <thread>
#include "common.h"

__global__ void fill(int* p, int v) { p[threadIdx.x] = v + threadIdx.x; }

static void work(int dev, int* result, size_t* total) {
  checkCudaErrors(cudaSetDevice(dev));
  int* d;
  checkCudaErrors(cudaMalloc(&d, 32 * sizeof(int)));
  fill<<<1, 32>>>(d, dev * 1000);
  int h[32];
  checkCudaErrors(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  *result = h[31];
  size_t freeb;
  checkCudaErrors(cudaMemGetInfo(&freeb, total));
  checkCudaErrors(cudaFree(d));
}

int main() {
  int count = 0;
  checkCudaErrors(cudaGetDeviceCount(&count));
  int r1 = 0, r0 = 0;
  size_t t1 = 0, t0 = 0;
  std::thread other(work, 1, &r1, &t1);
  other.join();
  work(0, &r0, &t0);  // this thread never called cudaSetDevice(1): still device 0
  int cur = -1;
  checkCudaErrors(cudaGetDevice(&cur));
  cudaDeviceProp p0, p1;
  checkCudaErrors(cudaGetDeviceProperties(&p0, 0));
  checkCudaErrors(cudaGetDeviceProperties(&p1, 1));
  printf("devices %d current %d results %d %d totals match %d %d\n", count, cur, r0, r1,
         t0 == p0.totalGlobalMem, t1 == p1.totalGlobalMem);
  return 0;
}
