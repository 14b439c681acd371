// hipGetDeviceProperties and hipDeviceGetAttribute on the virtual AMD GPU, and hipFuncGetAttributes of a
// kernel (its registers from the code object).
#include "check.h"

__global__ void touch(float* p) { p[threadIdx.x] += 1.0f; }

int main() {
  int count = 0, driver = 0, runtime = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  HIP_CHECK(hipDriverGetVersion(&driver));
  HIP_CHECK(hipRuntimeGetVersion(&runtime));
  printf("devices %d driver %d runtime %d\n", count, driver, runtime);
  for (int d = 0; d < count; ++d) {
    hipDeviceProp_t p;
    HIP_CHECK(hipGetDeviceProperties(&p, d));
    printf("Device %d: \"%s\" gcnArchName %s gcnArch %d\n", d, p.name, p.gcnArchName, p.gcnArch);
    printf("  warpSize %d multiProcessorCount %d maxThreadsPerBlock %d\n", p.warpSize, p.multiProcessorCount,
           p.maxThreadsPerBlock);
    printf("  sharedMemPerBlock %zu totalGlobalMem %zu major %d minor %d\n", p.sharedMemPerBlock,
           p.totalGlobalMem, p.major, p.minor);
    printf("  maxGridSize %d %d %d l2CacheSize %d\n", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2],
           p.l2CacheSize);
    int warp = 0, cus = 0;
    HIP_CHECK(hipDeviceGetAttribute(&warp, hipDeviceAttributeWarpSize, d));
    HIP_CHECK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, d));
    char name[64];
    HIP_CHECK(hipDeviceGetName(name, sizeof name, d));
    printf("  attr warpSize %d CUs %d name %s\n", warp, cus, name);
  }
  hipFuncAttributes fa;
  HIP_CHECK(hipFuncGetAttributes(&fa, reinterpret_cast<const void*>(touch)));
  printf("touch: numRegs>0 %d maxThreadsPerBlock %d binaryVersion %d\n", fa.numRegs > 0, fa.maxThreadsPerBlock,
         fa.binaryVersion);
  int blocks = 0;
  HIP_CHECK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, touch, 256, 0));
  printf("occupancy 256: blocks>0 %d\n", blocks > 0);
  hipError_t fits = hipFuncSetAttribute(touch, hipFuncAttributeMaxDynamicSharedMemorySize, 65536);
  hipError_t over = hipFuncSetAttribute(touch, hipFuncAttributeMaxDynamicSharedMemorySize, 65537);
  printf("dynamic LDS 65536: %s, 65537: %s\n", hipGetErrorName(fits), hipGetErrorName(over));
  hipGetLastError();
  hipDeviceProp_t bad;
  hipError_t e = hipGetDeviceProperties(&bad, count);
  printf("bad device: %s\n", hipGetErrorName(e));
  return 0;
}
