// deviceQuery in the style of the CUDA samples: properties, attributes and versions of every device.
#include "common.h"

int main() {
  int count = 0;
  checkCudaErrors(cudaGetDeviceCount(&count));
  printf("devices %d\n", count);
  int driver = 0, runtime = 0;
  checkCudaErrors(cudaDriverGetVersion(&driver));
  checkCudaErrors(cudaRuntimeGetVersion(&runtime));
  printf("driver %d runtime %d\n", driver, runtime);
  for (int dev = 0; dev < count; ++dev) {
    checkCudaErrors(cudaSetDevice(dev));
    cudaDeviceProp p;
    checkCudaErrors(cudaGetDeviceProperties(&p, dev));
    printf("Device %d: \"%s\"\n", dev, p.name);
    printf("capability %d.%d\n", p.major, p.minor);
    printf("totalGlobalMem %zu\n", p.totalGlobalMem);
    printf("multiProcessorCount %d\n", p.multiProcessorCount);
    printf("warpSize %d\n", p.warpSize);
    printf("maxThreadsPerBlock %d\n", p.maxThreadsPerBlock);
    printf("maxThreadsDim %d %d %d\n", p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
    printf("maxGridSize %d %d %d\n", p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
    printf("sharedMemPerBlock %zu\n", p.sharedMemPerBlock);
    printf("sharedMemPerBlockOptin %zu\n", p.sharedMemPerBlockOptin);
    printf("l2CacheSize %d\n", p.l2CacheSize);
    int sms = 0, major = 0;
    checkCudaErrors(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    checkCudaErrors(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    printf("attr sms %d major %d\n", sms, major);
    size_t freeb = 0, total = 0;
    checkCudaErrors(cudaMemGetInfo(&freeb, &total));
    printf("memGetInfo total %zu free<=total %d\n", total, freeb <= total);
  }
  cudaDeviceProp bad;
  cudaError_t e = cudaGetDeviceProperties(&bad, count);
  printf("bad device: %s\n", cudaGetErrorName(e));
  cudaGetLastError();
  printf("Result = PASS\n");
  return 0;
}
