// A program that forks: the child may not use the parent's CUDA context (cudaErrorInitializationError, as
// after fork() on a GPU); the parent carries on using the device once the child is gone.
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

__global__ void answer(int* p) { *p = 42; }

int main() {
  int* d;
  checkCudaErrors(cudaMalloc(&d, sizeof(int)));
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    void* q;
    cudaError_t e = cudaMalloc(&q, 4);
    printf("child %s\n", cudaGetErrorName(e));
    return 0;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  answer<<<1, 1>>>(d);
  int h = 0;
  checkCudaErrors(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  printf("parent %d child exit %d\n", h, WEXITSTATUS(status));
  return 0;
}
