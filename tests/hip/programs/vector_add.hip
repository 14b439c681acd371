// Vector addition: hipMalloc, hipMemcpy, a kernel launched with <<<>>>, hipGetLastError, a host check.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    hipError_t err_ = (call);                                                                    \
    if (err_ != hipSuccess) {                                                                    \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, hipGetErrorString(err_), hipGetErrorName(err_)); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

__global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 50000;
  printf("[Vector addition of %d elements]\n", n);
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = (float)(i % 97) * 0.5f;
    b[i] = (float)((i * 7) % 13) - 6.0f;
  }
  float *da, *db, *dc;
  size_t bytes = n * sizeof(float);
  CHECK(hipMalloc(&da, bytes));
  CHECK(hipMalloc(&db, bytes));
  CHECK(hipMalloc(&dc, bytes));
  CHECK(hipMemcpy(da, a.data(), bytes, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(db, b.data(), bytes, hipMemcpyHostToDevice));
  int threads = 256, blocks = (n + threads - 1) / threads;
  printf("HIP kernel launch with %d blocks of %d threads\n", blocks, threads);
  vector_add<<<blocks, threads>>>(da, db, dc, n);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(c.data(), dc, bytes, hipMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    if (c[i] != a[i] + b[i]) {
      fprintf(stderr, "Result verification failed at element %d\n", i);
      return 1;
    }
    sum += c[i];
  }
  printf("sum %.1f\n", sum);
  CHECK(hipFree(da));
  CHECK(hipFree(db));
  CHECK(hipFree(dc));
  printf("Test PASSED\n");
  return 0;
}
