// Single-precision libm (CUDA's libdevice implementations, default options: IEEE division and sqrt,
// no flush-to-zero): fmodf, remainderf, frexpf, ldexpf, modff, erfcf, lgammaf, tgammaf, cbrtf, hypotf,
// atan2f, sincospif, plus expf/logf/powf.
extern "C" __global__ void mathf(const float* a, const float* b, float* out, int* exps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float* o = out + 16 * i;
    o[0] = fmodf(x, y);
    o[1] = remainderf(x, y);
    o[2] = frexpf(x, &exps[i]);
    o[3] = ldexpf(x, (int)y);
    float ip;
    o[4] = modff(x, &ip);
    o[5] = ip;
    o[6] = erfcf(y);
    o[7] = lgammaf(fabsf(x) + 0.1f);
    o[8] = tgammaf(y);
    o[9] = cbrtf(x);
    o[10] = hypotf(x, y);
    o[11] = atan2f(x, y);
    sincospif(y, &o[12], &o[13]);
    o[14] = expf(y) * logf(fabsf(x) + 1.0f);
    o[15] = powf(fabsf(x), y);
}
