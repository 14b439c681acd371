// A program killed by a signal while it holds device memory and has a kernel queued: `strata run` exits
// with 128 + the signal number, as a shell reports it, and the output written before the signal is kept.
#include <csignal>
#include "common.h"

__global__ void spin(int* p) { p[threadIdx.x] = threadIdx.x; }

int main(int argc, char** argv) {
  int* d;
  checkCudaErrors(cudaMalloc(&d, 64 * sizeof(int)));
  spin<<<1, 64>>>(d);
  printf("before\n");
  fflush(stdout);
  raise(argc > 1 ? atoi(argv[1]) : SIGTERM);
  printf("not reached\n");
  return 0;
}
