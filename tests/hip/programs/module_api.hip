// The module API: a code object loaded at run time from a file (hipModuleLoad) and from memory
// (hipModuleLoadData), a kernel by name, a __device__ variable by name, hipModuleLaunchKernel with
// kernelParams, and the errors for a missing file, a missing kernel and a bad image.
#include "check.h"
#include <vector>

static void show(const char* what, hipError_t e) { printf("%s: %s\n", what, hipGetErrorName(e)); }

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: module_api KERNELS.co\n"); return 2; }
  hipModule_t mod;
  HIP_CHECK(hipModuleLoad(&mod, argv[1]));
  hipFunction_t f;
  HIP_CHECK(hipModuleGetFunction(&f, mod, "scale_add"));
  hipDeviceptr_t off;
  size_t off_size = 0;
  HIP_CHECK(hipModuleGetGlobal(&off, &off_size, mod, "offset"));
  float half = 0.5f;
  HIP_CHECK(hipMemcpyHtoD(off, &half, sizeof half));
  const int n = 1000;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = (float)i;
  float* d;
  HIP_CHECK(hipMalloc(&d, n * sizeof(float)));
  HIP_CHECK(hipMemcpy(d, h.data(), n * sizeof(float), hipMemcpyHostToDevice));
  float a = 3.0f;
  int count = n;
  void* params[] = {&d, &a, &count};
  HIP_CHECK(hipModuleLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, params, nullptr));
  HIP_CHECK(hipMemcpy(h.data(), d, n * sizeof(float), hipMemcpyDeviceToHost));
  printf("offset size %zu x[1] %.1f x[999] %.1f\n", off_size, h[1], h[n - 1]);

  FILE* file = fopen(argv[1], "rb");
  std::vector<char> image(1 << 20);
  size_t got = fread(image.data(), 1, image.size(), file);
  fclose(file);
  hipModule_t mod2;
  HIP_CHECK(hipModuleLoadData(&mod2, image.data()));
  hipFunction_t f2;
  HIP_CHECK(hipModuleGetFunction(&f2, mod2, "scale_add"));
  a = 2.0f;
  HIP_CHECK(hipModuleLaunchKernel(f2, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, params, nullptr));
  HIP_CHECK(hipMemcpy(h.data(), d, n * sizeof(float), hipMemcpyDeviceToHost));
  printf("from memory (%s): x[1] %.1f\n", got > 0 ? "read" : "empty", h[1]);
  show("launch 2048 work-items", hipModuleLaunchKernel(f2, 1, 1, 1, 2048, 1, 1, 0, 0, params, nullptr));

  hipModule_t none;
  show("missing file", hipModuleLoad(&none, "/nonexistent/kernels.co"));
  show("missing kernel", hipModuleGetFunction(&f2, mod2, "no_such_kernel"));
  static const char junk[64] = "not a code object";
  show("bad image", hipModuleLoadData(&none, junk));
  show("last error", hipGetLastError());
  HIP_CHECK(hipModuleUnload(mod));
  HIP_CHECK(hipModuleUnload(mod2));
  HIP_CHECK(hipFree(d));
  return 0;
}
