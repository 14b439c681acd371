#include <hip/hip_runtime.h>
// Row softmax: one workgroup of 256 per row; max and sum reduced through LDS.
extern "C" __global__ void softmax(const float* x, float* y, int cols) {
  __shared__ float red[256];
  const float* row = x + (size_t)blockIdx.x * cols;
  float* out = y + (size_t)blockIdx.x * cols;
  unsigned t = threadIdx.x;
  float m = -INFINITY;
  for (int c = t; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  red[t] = m;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmaxf(red[t], red[t + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int c = t; c < cols; c += blockDim.x) sum += expf(row[c] - m);
  red[t] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  sum = red[0];
  for (int c = t; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) / sum;
}
