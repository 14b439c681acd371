// Hopper DPX intrinsics used by dynamic-programming codes (Smith-Waterman, Needleman-Wunsch):
// three-way max/min, fused add-then-max, ReLU-clamped variants and the "which one won" form.
extern "C" __global__ void dpx(const int* a, const int* b, const int* c, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i], z = c[i];
    int* o = out + 7 * i;
    o[0] = __vimax3_s32(x, y, z);
    o[1] = __vimin3_s32(x, y, z);
    o[2] = __viaddmax_s32(x, y, z);
    o[3] = __vimax_s32_relu(x, y);
    o[4] = (int)__vimax3_u32((unsigned)x, (unsigned)y, (unsigned)z);
    bool pred;
    o[5] = __vibmax_s32(x, y, &pred);
    o[6] = pred;
}
