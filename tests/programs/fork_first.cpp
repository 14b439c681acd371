// A host-only program (a .cpp: no fat binary is registered, so nothing connects to the runtime process
// before main) that forks before its first CUDA call: the child may not use the device (its parent's
// connection is not its own: cudaErrorInitializationError) and the parent goes on using it.
#include <sys/wait.h>
#include <unistd.h>
#include "common.h"

int main() {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    void* p = nullptr;
    printf("child %s\n", cudaGetErrorName(cudaMalloc(&p, 64)));
    return 0;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  int v = 42, back = 0, *d = nullptr;
  checkCudaErrors(cudaMalloc(&d, sizeof v));
  checkCudaErrors(cudaMemcpy(d, &v, sizeof v, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(&back, d, sizeof v, cudaMemcpyDeviceToHost));
  printf("parent %d child exit %d\n", back, WEXITSTATUS(status));
  return 0;
}
