// Managed memory: one pointer for host code and kernels (hipMallocManaged), prefetch hints accepted,
// the host's writes visible to kernels and the kernels' results visible after hipDeviceSynchronize; a
// __managed__ variable with an initial value, counted up by kernels and read by the host.
#include "check.h"

__managed__ unsigned int launches = 100;

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i == 0) atomicAdd(&launches, 1u);
}

int main() {
  const int n = 5000;
  float *x, *y;
  HIP_CHECK(hipMallocManaged(&x, n * sizeof(float)));
  HIP_CHECK(hipMallocManaged(&y, n * sizeof(float), hipMemAttachGlobal));
  for (int i = 0; i < n; ++i) { x[i] = (float)i; y[i] = 1.0f; }
  HIP_CHECK(hipMemPrefetchAsync(x, n * sizeof(float), 0, 0));
  saxpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipDeviceSynchronize());
  printf("after 1 launch y[0] %.1f y[4999] %.1f\n", y[0], y[n - 1]);
  for (int i = 0; i < n; ++i) x[i] = 1.0f;  // the host writes again; the next kernel sees it
  saxpy<<<(n + 255) / 256, 256>>>(3.0f, x, y, n);
  HIP_CHECK(hipDeviceSynchronize());
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (y[i] != 2.0f * i + 1.0f + 3.0f) ++bad;
  printf("after 2 launches y[0] %.1f y[4999] %.1f\n", y[0], y[n - 1]);
  int managed = 0;
  HIP_CHECK(hipDeviceGetAttribute(&managed, hipDeviceAttributeManagedMemory, 0));
  printf("managedMemory %d\n", managed);
  printf("__managed__ launches %u\n", launches);
  printf("%s\n", bad == 0 ? "PASS" : "FAIL");
  HIP_CHECK(hipFree(x));
  HIP_CHECK(hipFree(y));
  return bad != 0;
}
