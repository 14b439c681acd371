// FP8 (cuda_fp8.h): float -> e4m3 / e5m2 with saturation, back to float, and the packed x2 forms, as
// quantisation kernels do.
#include <cuda_fp8.h>

extern "C" __global__ void fp8(const float* x, float* out, unsigned char* raw, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_fp8_e4m3 a(x[i]);
    __nv_fp8_e5m2 b(x[i]);
    __nv_fp8x2_e4m3 p(make_float2(x[i], -x[i] * 0.5f));
    float2 back = static_cast<float2>(p);
    out[4 * i + 0] = static_cast<float>(a);
    out[4 * i + 1] = static_cast<float>(b);
    out[4 * i + 2] = back.x;
    out[4 * i + 3] = back.y;
    raw[2 * i] = a.__x;
    raw[2 * i + 1] = b.__x;
}
