// Directed-rounding arithmetic and conversion intrinsics (the _rn/_rz/_ru/_rd families), plus
// __fdividef and __saturatef, as numerical codes use for interval bounds and exact conversions.
extern "C" __global__ void rounding_f(const float* a, const float* b, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float* o = out + 12 * i;
    o[0] = __fadd_rz(x, y);
    o[1] = __fadd_ru(x, y);
    o[2] = __fmul_rd(x, y);
    o[3] = __fmul_ru(x, y);
    o[4] = __fdiv_rz(x, y);
    o[5] = __fdiv_ru(x, y);
    o[6] = __frcp_rd(y);
    o[7] = __fsqrt_ru(fabsf(x));
    o[8] = __fsqrt_rd(fabsf(x));
    o[9] = __fmaf_rz(x, y, 1.0f);
    o[10] = __fsub_rd(x, y);
    o[11] = __saturatef(x);
}

extern "C" __global__ void rounding_d(const double* a, const double* b, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    double* o = out + 6 * i;
    o[0] = __dadd_ru(x, y);
    o[1] = __dmul_rz(x, y);
    o[2] = __ddiv_rd(x, y);
    o[3] = __dsqrt_ru(fabs(x));
    o[4] = __fma_rd(x, y, 1.0);
    o[5] = __drcp_rz(y);
}

extern "C" __global__ void conversions(const float* a, const double* d, const long long* l, int* oi, long long* ol,
                                       float* of, double* od, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    double y = d[i];
    long long z = l[i];
    oi[6 * i + 0] = __float2int_rd(x);
    oi[6 * i + 1] = __float2int_ru(x);
    oi[6 * i + 2] = __float2int_rn(x);
    oi[6 * i + 3] = __float2int_rz(x);
    oi[6 * i + 4] = (int)__float2uint_ru(fabsf(x));
    oi[6 * i + 5] = __double2int_rd(y);
    ol[2 * i + 0] = __float2ll_ru(x * 1e6f);
    ol[2 * i + 1] = __double2ll_rd(y * 1e12);
    of[4 * i + 0] = __ll2float_rd(z);
    of[4 * i + 1] = __ll2float_ru(z);
    of[4 * i + 2] = __double2float_rz(y);
    of[4 * i + 3] = __int2float_ru((int)(z >> 20));
    od[2 * i + 0] = __ll2double_rz(z * 1001);
    od[2 * i + 1] = __ull2double_ru((unsigned long long)z * 3ull);
}
