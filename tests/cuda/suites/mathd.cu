// Double-precision math: pow, exp, log, sqrt, rsqrt, plus exp2/log2/log1p/expm1, sin/cos, tanh, fma.
extern "C" __global__ void mathd(const double* a, const double* b, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    double* o = out + 12 * i;
    o[0] = pow(x, y);
    o[1] = exp(y);
    o[2] = log(x);
    o[3] = sqrt(x);
    o[4] = rsqrt(x);
    o[5] = exp2(y) + log2(x);
    o[6] = log1p(x);
    o[7] = expm1(y);
    o[8] = sin(y) * cos(x);
    o[9] = tanh(y);
    o[10] = fma(x, y, -x);
    o[11] = x / y;
}
