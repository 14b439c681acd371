// Two streams: pinned host buffers (hipHostMalloc), hipMemcpyAsync in and out, a kernel on each stream,
// an event recorded on one stream that the other waits for, hipEventQuery/hipStreamQuery and timing.
#include "check.h"

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + 1.0f;
}

__global__ void add_into(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

int main() {
  const int n = 1 << 16;
  size_t bytes = n * sizeof(float);
  float *h0, *h1, *d0, *d1;
  HIP_CHECK(hipHostMalloc(&h0, bytes));
  HIP_CHECK(hipHostMalloc(&h1, bytes, hipHostMallocDefault));
  for (int i = 0; i < n; ++i) { h0[i] = (float)(i % 100); h1[i] = (float)(i % 7); }
  HIP_CHECK(hipMalloc(&d0, bytes));
  HIP_CHECK(hipMalloc(&d1, bytes));
  hipStream_t s0, s1;
  HIP_CHECK(hipStreamCreate(&s0));
  HIP_CHECK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  hipEvent_t start, scaled, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreateWithFlags(&scaled, hipEventDisableTiming));
  HIP_CHECK(hipEventCreate(&stop));
  HIP_CHECK(hipMemcpyAsync(d0, h0, bytes, hipMemcpyHostToDevice, s0));
  HIP_CHECK(hipEventRecord(start, s1));
  HIP_CHECK(hipMemcpyAsync(d1, h1, bytes, hipMemcpyHostToDevice, s1));
  scale<<<n / 256, 256, 0, s0>>>(d0, 2.0f, n);
  HIP_CHECK(hipEventRecord(scaled, s0));
  HIP_CHECK(hipStreamWaitEvent(s1, scaled, 0));  // s1's kernel reads what s0's kernel wrote
  add_into<<<n / 256, 256, 0, s1>>>(d1, d0, n);
  HIP_CHECK(hipMemcpyAsync(h1, d1, bytes, hipMemcpyDeviceToHost, s1));
  HIP_CHECK(hipEventRecord(stop, s1));
  HIP_CHECK(hipStreamSynchronize(s1));
  HIP_CHECK(hipEventSynchronize(stop));
  printf("query stop %s\n", hipEventQuery(stop) == hipSuccess ? "hipSuccess" : "not ready");
  printf("query s0 %s\n", hipStreamQuery(s0) == hipSuccess ? "hipSuccess" : "not ready");
  float ms = -1;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  float ignored = 0;
  hipError_t untimed = hipEventElapsedTime(&ignored, start, scaled);
  printf("elapsed positive %d, untimed event gives %s\n", ms > 0.0f, hipGetErrorName(untimed));
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (h1[i] != (float)(i % 7) + (float)(i % 100) * 2.0f + 1.0f) ++bad;
  printf("h1[0] %.1f h1[12345] %.1f\n", h1[0], h1[12345]);
  printf("%s\n", bad == 0 ? "PASS" : "FAIL");
  HIP_CHECK(hipStreamDestroy(s0));
  HIP_CHECK(hipStreamDestroy(s1));
  HIP_CHECK(hipEventDestroy(start)); HIP_CHECK(hipEventDestroy(scaled)); HIP_CHECK(hipEventDestroy(stop));
  HIP_CHECK(hipFree(d0)); HIP_CHECK(hipFree(d1));
  HIP_CHECK(hipHostFree(h0)); HIP_CHECK(hipHostFree(h1));
  return bad != 0;
}
