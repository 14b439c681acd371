// Edges of the HIP runtime API the bridge library must get right: an output left alone when a call fails,
// NULL outputs refused, and a fill whose byte count does not fit a size_t refused (not wrapped into a small
// buffer that is then overrun).
#include <cstdint>
#include <cstring>
#include "check.h"

__global__ void touch(int* p) { p[threadIdx.x] = 1; }
__device__ int sym;

static void show(const char* what, hipError_t e) { printf("%s: %s\n", what, hipGetErrorName(e)); }

int main() {
  hipEvent_t a, b;
  HIP_CHECK(hipEventCreate(&a));
  HIP_CHECK(hipEventCreate(&b));
  float ms = -1.5f;
  show("elapsed unrecorded", hipEventElapsedTime(&ms, a, b));
  printf("ms kept %d\n", ms == -1.5f);
  hipGetLastError();

  show("symbol size NULL", hipGetSymbolSize(nullptr, HIP_SYMBOL(sym)));
  show("symbol address NULL", hipGetSymbolAddress(nullptr, HIP_SYMBOL(sym)));
  hipGetLastError();

  // bytes that start like an offload bundle but whose first entry's target id is 2^60 bytes long
  unsigned char bad[4096] = {0};
  memcpy(bad, "__CLANG_OFFLOAD_BUNDLE__", 24);
  const uint64_t fields[4] = {2, 4096, 16, (uint64_t)1 << 60};  // entries; offset, size, id length of the first
  memcpy(bad + 24, fields, sizeof fields);
  hipModule_t mod;
  show("load a bad bundle", hipModuleLoadData(&mod, bad));

  int* d = nullptr;
  HIP_CHECK(hipMalloc(&d, 64));
  show("memset32 wrapping", hipMemsetD32(d, 7, ((size_t)1 << 62) + 1));
  hipGetLastError();
  touch<<<1, 16>>>(d);
  HIP_CHECK(hipDeviceSynchronize());
  int back[16];
  HIP_CHECK(hipMemcpy(back, d, sizeof back, hipMemcpyDeviceToHost));
  int ones = 0;
  for (int i = 0; i < 16; i++) ones += back[i] == 1;
  printf("ones %d\n", ones);
  return 0;
}
