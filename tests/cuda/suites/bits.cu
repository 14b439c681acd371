// Bit-manipulation intrinsics on 32- and 64-bit values.
extern "C" __global__ void bit_ops(const unsigned int* a, const unsigned int* b, const unsigned long long* c,
                                   int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int x = a[i], y = b[i];
    unsigned long long z = c[i];
    int* o = out + 12 * i;
    o[0] = __popc(x);
    o[1] = __popcll(z);
    o[2] = __clz(x);
    o[3] = __clzll(z);
    o[4] = __ffs(x);
    o[5] = __ffsll(z);
    o[6] = (int)__brev(x);
    o[7] = (int)(__brevll(z) >> 32);
    o[8] = (int)__byte_perm(x, y, y & 0x7777);
    o[9] = (int)__funnelshift_l(x, y, y);
    o[10] = (int)__funnelshift_r(x, y, x);
    o[11] = (int)__funnelshift_lc(x, y, y);
}
