// Integer multiply intrinsics (__umulhi, __mulhi, __mul24, __umul24, __sad, __usad) and 32-bit division
// and remainder by runtime divisors, signed and unsigned.
extern "C" __global__ void int_ops(const int* a, const int* b, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    unsigned ux = (unsigned)x, uy = (unsigned)y;
    int* o = out + 10 * i;
    o[0] = (int)__umulhi(ux, uy);
    o[1] = __mulhi(x, y);
    o[2] = __mul24(x, y);
    o[3] = (int)__umul24(ux, uy);
    o[4] = (int)__sad(x, y, 7u);
    o[5] = (int)__usad(ux, uy, 3u);
    o[6] = x / y;
    o[7] = x % y;
    o[8] = (int)(ux / uy);
    o[9] = (int)(ux % uy);
}
