#include <hip/hip_runtime.h>
// Block sum through an LDS tree, then one atomicAdd per block.
extern "C" __global__ void reduce_sum(const float* x, float* out, int n) {
  __shared__ float s[256];
  unsigned t = threadIdx.x;
  unsigned i = blockIdx.x * blockDim.x + t;
  s[t] = i < (unsigned)n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
