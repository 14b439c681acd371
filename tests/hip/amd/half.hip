#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <hip/hip_bf16.h>
// half and bfloat16 elementwise ops: loads/stores of 16-bit values, conversions, f16 arithmetic.
extern "C" __global__ void half_ops(const __half* a, const __half* b, __half* out, float* outf, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = a[i], y = b[i];
  out[4 * i] = __hadd(x, y);
  out[4 * i + 1] = __hmul(x, y);
  out[4 * i + 2] = __hfma(x, y, __float2half(0.5f));
  out[4 * i + 3] = __hmax(x, y);
  outf[i] = __half2float(x) * 2.0f;
}
extern "C" __global__ void half2_ops(const __half2* a, const __half2* b, __half2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = __hfma2(a[i], b[i], __float2half2_rn(1.0f));
}
extern "C" __global__ void bf16_ops(const __hip_bfloat16* a, const float* b, __hip_bfloat16* out, float* outf, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  outf[i] = __bfloat162float(a[i]) + b[i];
  out[i] = __float2bfloat16(b[i] * 3.0f);
}
