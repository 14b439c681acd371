// SIMD-within-a-word intrinsics (per-byte / per-halfword add, subtract, absolute difference, compare,
// max, average, sum of absolute differences) and the integer dot products __dp4a / __dp2a.
extern "C" __global__ void simd(const unsigned* a, const unsigned* b, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x = a[i], y = b[i];
    unsigned* o = out + 12 * i;
    o[0] = __vadd4(x, y);
    o[1] = __vsub2(x, y);
    o[2] = __vabsdiffu4(x, y);
    o[3] = __vcmpgeu4(x, y);
    o[4] = __vmaxs2(x, y);
    o[5] = __vavgu4(x, y);
    o[6] = __vsadu4(x, y);
    o[7] = __vaddss2(x, y);
    o[8] = __vminu4(x, y);
    o[9] = (unsigned)__dp4a((int)x, (int)y, 17);
    o[10] = __dp4a(x, y, 5u);
    o[11] = (unsigned)__dp2a_lo((int)x, (int)y, -3);
}
