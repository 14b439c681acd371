// More double-precision library functions: erfinv, erfcx, cyl_bessel_i0, atan2, hypot, fmod with a large
// quotient, remquo, lgamma, tgamma, cbrt, asinh, acosh, atanh, sinpi, norm.
extern "C" __global__ void mathd2(const double* a, const double* b, double* out, int* quo, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];  // x in (-1, 1), y in (0.5, 8)
    double* o = out + 15 * i;
    o[0] = erfinv(x);
    o[1] = erfcx(y);
    o[2] = cyl_bessel_i0(y);
    o[3] = atan2(x, y);
    o[4] = hypot(x, y);
    o[5] = fmod(y * 1e15, x + 2.0);
    o[6] = remquo(y * 7.0, x + 2.0, &quo[i]);
    o[7] = lgamma(y);
    o[8] = tgamma(y);
    o[9] = cbrt(x);
    o[10] = asinh(x * 10.0);
    o[11] = acosh(y + 1.0);
    o[12] = atanh(x * 0.9);
    o[13] = sinpi(y);
    double v[3] = {x, y, x * y};
    o[14] = norm(3, v);
}
