// __half and __nv_bfloat16 arithmetic and math: operators, fma, hsqrt/hexp/hlog, comparisons, max,
// conversions with explicit rounding, and the bf16 vector type.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void half_ops(const __half* a, const __half* b, __half* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half x = a[i], y = b[i];
    __half* o = out + 8 * i;
    o[0] = x + y;
    o[1] = x * y;
    o[2] = __hfma(x, y, __float2half(0.5f));
    o[3] = hsqrt(__habs(x));
    o[4] = hexp(y);
    o[5] = hlog(__habs(x) + __float2half(1.0f));
    o[6] = __hmax(x, y);
    o[7] = (x < y) ? __hneg(x) : x / y;
}

extern "C" __global__ void bf16_ops(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat16 x = __float2bfloat16_rn(a[i]), y = __float2bfloat16_rn(b[i]);
    __nv_bfloat162 v = __halves2bfloat162(x, y);
    __nv_bfloat162 w = __hmul2(v, v);
    float* o = out + 5 * i;
    o[0] = __bfloat162float(x + y);
    o[1] = __bfloat162float(__hfma(x, y, x));
    o[2] = __low2float(w) + __high2float(w);
    o[3] = __bfloat162float(__float2bfloat16_rz(a[i]));
    o[4] = __bfloat162float(__hmax(x, y));
}
