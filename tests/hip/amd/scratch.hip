#include <hip/hip_runtime.h>
// A per-thread array indexed by a runtime value lives in private (scratch) memory.
extern "C" __global__ void local_array(const int* idx, int* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int a[37];
  for (int i = 0; i < 37; ++i) a[i] = i * i + t;
  out[t] = a[idx[t] % 37] + a[(idx[t] * 7) % 37];
}
