#include <hip/hip_runtime.h>
// Device printf (buffered: records in the hidden printf buffer, formatted by the host after the kernel)
extern "C" __global__ void show(int n, float x, double y, const char* name, long long big) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    printf("lane %d of %u: %f %.3e %g [%5d] [%-4s] %c %x %lld %s %*d %%\n", i, (unsigned)n, x * i, y / (i + 1),
           (double)i / 4, -i, "ab", 'A' + i % 26, 255 + i, big - i, name, 3, i);
  }
  if (i == 0) printf("done\n");
}
