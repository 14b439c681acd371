// Default options keep float subnormals (no -ftz): products that underflow, sqrt/reciprocal/division of
// subnormals, float<->double conversions at the bottom of the range, and signbit/isinf/isnan/isfinite.
extern "C" __global__ void subnormal(const float* a, const float* b, float* out, int* cls, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float* o = out + 8 * i;
    o[0] = x * y;
    o[1] = sqrtf(x * y);
    o[2] = x * y / y;
    o[3] = (float)((double)x * (double)y * 0.5);
    o[4] = fmaf(x, y, -x * y);
    o[5] = x * y + 1e-45f;
    o[6] = ldexpf(x * y, 20);
    o[7] = copysignf(x * y * 0.0f, -1.0f);
    int* c = cls + 4 * i;
    float p = x * y;
    c[0] = p != 0.0f && fabsf(p) < 1.17549435e-38f;  // FLT_MIN: a subnormal survived
    c[1] = (int)(__float_as_uint(p) & 0x7fffffu);
    c[2] = signbit(out[8 * i + 7]);
    c[3] = isinf(x / (y * 0.0f)) + 2 * isnan((x - x) / (y * 0.0f)) + 4 * isfinite(p);
}
