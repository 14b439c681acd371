// The CUDA driver API in the style of the vectorAddDrv sample: cuInit, devices, a context, a module loaded
// from a PTX file, a __device__ variable by cuModuleGetGlobal, cuLaunchKernel with kernelParams.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                   \
  do {                                                                                                \
    CUresult r_ = (call);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                         \
      const char *name, *text;                                                                        \
      cuGetErrorName(r_, &name); cuGetErrorString(r_, &text);                                         \
      fprintf(stderr, "%s failed: %d %s (%s)\n", #call, (int)r_, name, text);                         \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  CHECK(cuInit(0));
  int count = 0, version = 0;
  CHECK(cuDeviceGetCount(&count));
  CHECK(cuDriverGetVersion(&version));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  char name[128];
  CHECK(cuDeviceGetName(name, sizeof name, dev));
  int major = 0, sms = 0;
  CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CHECK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  printf("%d device(s); %s, sm_%d0, %d SMs, driver >= 13: %d\n", count, name, major, sms, version >= 13000);
  CUcontext ctx;
  CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
  CUmodule mod;
  CHECK(cuModuleLoad(&mod, argv[1]));
  CUfunction f;
  CHECK(cuModuleGetFunction(&f, mod, "axpb"));
  CUfunction missing;
  CUresult r = cuModuleGetFunction(&missing, mod, "nope");
  const char* rname;
  cuGetErrorName(r, &rname);
  printf("missing kernel: %d %s\n", (int)r, rname);
  CUdeviceptr bias_ptr; size_t bias_size;
  CHECK(cuModuleGetGlobal(&bias_ptr, &bias_size, mod, "bias"));
  float bias = 10.0f;
  CHECK(cuMemcpyHtoD(bias_ptr, &bias, sizeof bias));
  const int n = 1000;
  float hx[n], hy[n];
  for (int i = 0; i < n; ++i) hx[i] = (float)i;
  CUdeviceptr dx, dy;
  CHECK(cuMemAlloc(&dx, sizeof hx));
  CHECK(cuMemAlloc(&dy, sizeof hy));
  CHECK(cuMemcpyHtoD(dx, hx, sizeof hx));
  float a = 2.0f;
  int nn = n;
  void* params[] = {&a, &dx, &dy, &nn};
  CHECK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
  r = cuLaunchKernel(f, 1, 1, 1, 4096, 1, 1, 0, NULL, params, NULL);
  cuGetErrorName(r, &rname);
  printf("oversized block: %s\n", rname);
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(hy, dy, sizeof hy));
  printf("bias size %zu y[0] %.1f y[999] %.1f\n", bias_size, hy[0], hy[999]);
  CHECK(cuMemFree(dx));
  CHECK(cuMemFree(dy));
  CHECK(cuModuleUnload(mod));
  CHECK(cuCtxDestroy(ctx));
  return 0;
}
