// CUDA keeps the last error per host thread: a launch error of one thread is that thread's, and another
// thread's cudaGetLastError does not take it.
#include <atomic>
#include <thread>
#include "common.h"

__global__ void noop() {}

int main() {
  std::atomic<int> step{0};
  cudaError_t mine = cudaSuccess, other = cudaSuccess;
  std::thread a([&] {
    noop<<<1, 4096>>>();  // too many threads per block
    step = 1;
    while (step != 2) std::this_thread::yield();
    mine = cudaGetLastError();
  });
  std::thread b([&] {
    while (step != 1) std::this_thread::yield();
    noop<<<1, 32>>>();
    other = cudaGetLastError();
    step = 2;
  });
  a.join();
  b.join();
  printf("launching thread %s\nother thread %s\n", cudaGetErrorName(mine), cudaGetErrorName(other));
  return 0;
}
