// The runtime process (`strata run`, this program's parent) dies while the program still uses CUDA: the next
// call must end the program with a message (exit status 70), not hang on the pipe or die silently of SIGPIPE.
#include <csignal>
#include <unistd.h>
#include "common.h"

int main() {
  void* p;
  checkCudaErrors(cudaMalloc(&p, 64));
  pid_t server = getppid();
  kill(server, SIGKILL);
  for (int i = 0; i < 500 && getppid() == server; i++) usleep(10000);  // until it is gone (reparented)
  cudaError_t e = cudaMalloc(&p, 64);
  printf("not reached: %d\n", (int)e);
  return 0;
}
