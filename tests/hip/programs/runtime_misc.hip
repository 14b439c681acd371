// More of the runtime on two MI300X devices: peer access and hipMemcpyPeer, host functions and stream
// callbacks in stream order, stream-ordered allocation, pitched 2-D memory, limits, priorities, prop.arch.
#include "check.h"

__global__ void fill(int* p, int v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + i;
}

static int host_calls = 0;
static void on_host(void* data) { host_calls += *(int*)data; }
static void on_stream(hipStream_t, hipError_t status, void* data) {
  if (status == hipSuccess) host_calls += 100 * *(int*)data;
}

int main() {
  int count = 0, can = -1;
  HIP_CHECK(hipGetDeviceCount(&count));
  HIP_CHECK(hipDeviceCanAccessPeer(&can, 0, 1));
  printf("devices %d peer 0->1 %d\n", count, can);
  const int n = 1000;
  int *d0, *d1, h[n];
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipMalloc(&d0, n * sizeof(int)));
  fill<<<(n + 255) / 256, 256>>>(d0, 7, n);
  HIP_CHECK(hipSetDevice(1));
  HIP_CHECK(hipDeviceEnablePeerAccess(0, 0));
  HIP_CHECK(hipMalloc(&d1, n * sizeof(int)));
  HIP_CHECK(hipMemcpyPeer(d1, 1, d0, 0, n * sizeof(int)));
  HIP_CHECK(hipMemcpy(h, d1, sizeof h, hipMemcpyDeviceToHost));
  printf("peer copy h[0] %d h[999] %d\n", h[0], h[n - 1]);

  hipStream_t s;
  HIP_CHECK(hipStreamCreate(&s));
  int one = 1;
  int* tmp = nullptr;
  HIP_CHECK(hipMallocAsync((void**)&tmp, n * sizeof(int), s));
  fill<<<(n + 255) / 256, 256, 0, s>>>(tmp, 1, n);
  HIP_CHECK(hipLaunchHostFunc(s, on_host, &one));
  HIP_CHECK(hipStreamAddCallback(s, on_stream, &one, 0));
  HIP_CHECK(hipMemcpyDtoHAsync(h, tmp, sizeof h, s));
  HIP_CHECK(hipFreeAsync(tmp, s));
  HIP_CHECK(hipStreamSynchronize(s));
  printf("host calls %d stream-ordered h[999] %d\n", host_calls, h[n - 1]);

  int* img;
  size_t pitch = 0;
  HIP_CHECK(hipMallocPitch((void**)&img, &pitch, 10 * sizeof(int), 4));
  HIP_CHECK(hipMemset2D(img, pitch, 0x01, 10 * sizeof(int), 4));
  int rows[4][10];
  HIP_CHECK(hipMemcpy2D(rows, sizeof rows[0], img, pitch, 10 * sizeof(int), 4, hipMemcpyDeviceToHost));
  printf("pitch multiple of 10 ints %d rows[3][9] %#x\n", pitch >= 40 && pitch % 4 == 0, rows[3][9]);

  size_t heap = 0;
  HIP_CHECK(hipDeviceSetLimit(hipLimitMallocHeapSize, 1 << 24));
  HIP_CHECK(hipDeviceGetLimit(&heap, hipLimitMallocHeapSize));
  int least = 0, greatest = 0;
  HIP_CHECK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  hipDeviceProp_t p;
  HIP_CHECK(hipGetDeviceProperties(&p, 1));
  printf("heap %zu priorities %d..%d shuffle %d dynamic parallelism %d\n", heap, least, greatest,
         (int)p.arch.hasWarpShuffle, (int)p.arch.hasDynamicParallelism);
  HIP_CHECK(hipFree(img));
  HIP_CHECK(hipFree(d1));
  HIP_CHECK(hipStreamDestroy(s));
  HIP_CHECK(hipSetDevice(0));
  HIP_CHECK(hipFree(d0));
  return 0;
}
