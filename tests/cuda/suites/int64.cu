// 64-bit integer math: products, signed/unsigned division and remainder by runtime values, shifts by
// runtime amounts, __mul64hi/__umul64hi, and min/max on long long.
extern "C" __global__ void int64_ops(const long long* a, const long long* b, long long* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long x = a[i], y = b[i];
    unsigned long long ux = (unsigned long long)x, uy = (unsigned long long)y;
    long long* o = out + 10 * i;
    o[0] = x * y;
    o[1] = x / y;
    o[2] = x % y;
    o[3] = (long long)(ux / uy);
    o[4] = (long long)(ux % uy);
    o[5] = (long long)(ux >> (y & 63));
    o[6] = x >> (y & 63);
    o[7] = __mul64hi(x, y);
    o[8] = (long long)__umul64hi(ux, uy);
    o[9] = max(x, y) - min(x, y);
}
