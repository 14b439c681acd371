// HIP's error codes as a program sees them: a bad launch configuration from hipGetLastError (then cleared),
// allocation and device errors as return values, a function strata does not implement, and a kernel's
// out-of-bounds access reported at the next synchronizing call and sticky afterwards.
#include "check.h"

extern "C" hipError_t hipDeviceGetPCIBusId(char* pciBusId, int len, int device);  // not in strata's header

__global__ void fill(int* p, int n, int stride) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i * stride] = i;
}

static void show(const char* what, hipError_t e) {
  printf("%s: %d %s (%s)\n", what, (int)e, hipGetErrorName(e), hipGetErrorString(e));
}

int main() {
  int* d;
  HIP_CHECK(hipMalloc(&d, 256 * sizeof(int)));
  fill<<<1, 2048>>>(d, 256, 1);  // 2048 work-items in a workgroup: over the limit of 1024
  show("launch 2048 threads", hipGetLastError());
  show("then", hipGetLastError());
  fill<<<1, 256>>>(d, 256, 1);
  show("good launch", hipGetLastError());
  show("sync", hipDeviceSynchronize());
  void* huge = nullptr;
  show("hipMalloc 1 PiB", hipMalloc(&huge, (size_t)1 << 50));
  show("hipSetDevice 99", hipSetDevice(99));
  int count = -1;
  HIP_CHECK(hipGetDeviceCount(&count));
  printf("devices %d\n", count);
  char bus[32];
  show("hipDeviceGetPCIBusId", hipDeviceGetPCIBusId(bus, sizeof bus, 0));
  show("unknown code", (hipError_t)12345);
  show("last error", hipGetLastError());  // the runtime's own errors count too: the latest, then cleared
  show("then", hipGetLastError());
  fill<<<4, 256>>>(d, 1024, 1 << 20);  // far past the allocation
  show("faulting launch", hipGetLastError());
  show("sync after fault", hipDeviceSynchronize());
  show("copy after fault", hipMemcpy(&count, d, sizeof count, hipMemcpyDeviceToHost));
  return 3;
}
