// Four host threads share the device: each allocates, launches on its own stream and copies back.
#include <thread>
#include <vector>
#include "common.h"

__global__ void fill(int* p, int v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = v + i; }

int main() {
  const int nthreads = 4, n = 1000, rounds = 10;
  std::vector<int> bad(nthreads, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < nthreads; ++t)
    ts.emplace_back([t, &bad] {
      cudaStream_t s;
      checkCudaErrors(cudaStreamCreate(&s));
      int* d;
      checkCudaErrors(cudaMalloc(&d, n * sizeof(int)));
      std::vector<int> h(n);
      for (int r = 0; r < rounds; ++r) {
        fill<<<(n + 127) / 128, 128, 0, s>>>(d, t * 100000 + r, n);
        checkCudaErrors(cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s));
        checkCudaErrors(cudaStreamSynchronize(s));
        for (int i = 0; i < n; ++i) bad[t] += h[i] != t * 100000 + r + i;
      }
      checkCudaErrors(cudaFree(d));
      checkCudaErrors(cudaStreamDestroy(s));
    });
  for (auto& th : ts) th.join();
  int total = 0;
  for (int b : bad) total += b;
  printf("threads %d mismatches %d\n", nthreads, total);
  return total != 0;
}
