// The explicit fast-math intrinsics (usable without -use_fast_math): __expf, __logf, __sinf, __cosf,
// __tanf, __powf, __fdividef, __exp10f, __log2f, __sincosf; and the __half rounding/transcendental set
// (hceil, hfloor, hrint, htrunc, hsin, hcos, h2log2).
#include <cuda_fp16.h>

extern "C" __global__ void fast_intrinsics(const float* a, const float* b, float* out, const __half2* h, __half2* ho,
                                           int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];  // x in (-pi, pi), y in (0.5, 4)
    float* o = out + 11 * i;
    o[0] = __expf(x);
    o[1] = __logf(y);
    o[2] = __sinf(x);
    o[3] = __cosf(x);
    o[4] = __tanf(x * 0.4f);
    o[5] = __powf(y, x);
    o[6] = __fdividef(x, y);
    o[7] = __exp10f(x * 0.5f);
    o[8] = __log2f(y);
    __sincosf(x, &o[9], &o[10]);
    __half2 v = h[i];
    ho[7 * i + 0] = h2ceil(v);
    ho[7 * i + 1] = h2floor(v);
    ho[7 * i + 2] = h2rint(v);
    ho[7 * i + 3] = h2trunc(v);
    ho[7 * i + 4] = h2sin(v);
    ho[7 * i + 5] = h2cos(v);
    ho[7 * i + 6] = h2log2(__habs2(v) + __float2half2_rn(1.0f));
}
