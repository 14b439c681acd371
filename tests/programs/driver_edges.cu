// Edges of the driver API the bridge library must get right, in a program with no kernels of its own (so
// nothing connects to the runtime process before main): eight threads whose first CUDA call is cuInit at
// the same moment all connect; outputs are left alone when a call fails; NULL outputs are refused; a fill
// whose byte count does not fit a size_t is refused; cuModuleLoad of a pipe (no size to seek to) fails.
#include <cuda.h>
#include <pthread.h>
#include <unistd.h>
#include <cstdint>
#include <cstdio>
#include <cstring>

static const char* PTX =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .global .align 4 .u32 g;\n"
    ".visible .entry k() { ret; }\n";

static pthread_barrier_t start;
static void* first_call(void* failed) {
  pthread_barrier_wait(&start);
  *(CUresult*)failed = cuInit(0);
  return nullptr;
}

static void show(const char* what, CUresult r) {
  const char* name = "?";
  cuGetErrorName(r, &name);
  printf("%s: %s\n", what, name);
}

int main() {
  enum { THREADS = 8 };
  pthread_t t[THREADS];
  CUresult got[THREADS];
  pthread_barrier_init(&start, nullptr, THREADS);
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], nullptr, first_call, &got[i]);
  int ok = 0;
  for (int i = 0; i < THREADS; i++) { pthread_join(t[i], nullptr); ok += got[i] == CUDA_SUCCESS; }
  printf("threads connected %d of %d\n", ok, THREADS);

  CUcontext ctx;
  show("primary context", cuDevicePrimaryCtxRetain(&ctx, 0));
  show("set current", cuCtxSetCurrent(ctx));
  CUmodule mod;
  show("load PTX", cuModuleLoadData(&mod, PTX));
  CUdeviceptr dptr = 77;
  size_t bytes = 88;
  show("global missing", cuModuleGetGlobal(&dptr, &bytes, mod, "missing"));
  printf("outputs kept %d\n", dptr == 77 && bytes == 88);
  CUfunction f = (CUfunction)(uintptr_t)99;
  show("function missing", cuModuleGetFunction(&f, mod, "missing"));
  printf("function kept %d\n", f == (CUfunction)(uintptr_t)99);
  CUdeviceptr big = 55;
  show("huge alloc", cuMemAlloc(&big, (size_t)1 << 50));
  printf("pointer kept %d\n", big == 55);

  CUdeviceptr p;
  show("alloc", cuMemAlloc(&p, 64));
  show("memset32 wrapping", cuMemsetD32(p, 0x12345678u, SIZE_MAX / 4 + 2));

  int fds[2];
  if (pipe(fds) != 0) return 1;
  if (write(fds[1], PTX, strlen(PTX)) < 0) return 1;
  close(fds[1]);
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fds[0]);
  CUmodule from_pipe;
  show("load from a pipe", cuModuleLoad(&from_pipe, path));

  show("context device NULL", cuCtxGetDevice(nullptr));
  return 0;
}
