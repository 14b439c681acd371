// More 16-bit float atomics and math: atomicAdd on __half and __nv_bfloat162, __hmax_nan, h2rcp,
// hrsqrt, __habs2, __floats2bfloat162_rn, __hfma2_relu on bf16, and the correctly rounded __frsqrt_rn.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void half_extra2(__half* hsum, __nv_bfloat162* bsum, const float* f, __half* ho,
                                       __nv_bfloat162* bo, float* fo, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = f[i];
    atomicAdd(hsum, __float2half(1.0f));
    atomicAdd(bsum, __floats2bfloat162_rn(1.0f, 2.0f));
    __half h = __float2half(x);
    ho[4 * i + 0] = __hmax_nan(h, __float2half(0.25f));
    ho[4 * i + 1] = hrsqrt(__habs(h));
    ho[4 * i + 2] = __low2half(h2rcp(__halves2half2(h, h)));
    ho[4 * i + 3] = __high2half(__habs2(__halves2half2(h, __hneg(h))));
    __nv_bfloat162 b = __floats2bfloat162_rn(x, -x);
    bo[i] = __hfma2_relu(b, b, b);
    fo[i] = __frsqrt_rn(fabsf(x));
}
