// __half2 extras: saturating add, division, comparisons returning masks, NaN tests, vector exp,
// NaN-propagating min, and half conversions with overflow / explicit rounding / raw bits.
#include <cuda_fp16.h>

extern "C" __global__ void half2_extra(const __half2* a, const __half2* b, const float* f, __half2* out,
                                       __half* hs, int* ints, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = a[i], y = b[i];
    out[6 * i + 0] = __hadd2_sat(x, y);
    out[6 * i + 1] = __h2div(x, y);
    out[6 * i + 2] = __hle2(x, y);
    out[6 * i + 3] = h2exp(__hmul2(x, __float2half2_rn(0.5f)));
    out[6 * i + 4] = __hmin2_nan(x, y);
    out[6 * i + 5] = __hfma2_relu(x, y, x);
    hs[3 * i + 0] = __float2half(f[i] * 1000.0f);  // overflows to inf above 65504
    hs[3 * i + 1] = __float2half_rz(f[i]);
    hs[3 * i + 2] = __ushort_as_half((unsigned short)(0x3c00 + i));
    ints[3 * i + 0] = __half2int_rd(__low2half(x) * __float2half(10.0f));
    ints[3 * i + 1] = __hisnan(__high2half(__h2div(__hsub2(x, x), __hsub2(y, y))));
    ints[3 * i + 2] = __hbeq2(x, x);
}
