// Multi-precision integer arithmetic with carry chains in inline PTX (add.cc / addc.cc / addc,
// sub.cc / subc, mad.lo.cc / madc.hi.cc), the building block of public big-number and crypto kernels:
// 256-bit add, 256-bit subtract and a 128x128 -> 256-bit schoolbook product.
#define LIMBS 8

__device__ void add256(unsigned* r, const unsigned* a, const unsigned* b) {
    asm("add.cc.u32 %0, %8, %16;\n\t"
        "addc.cc.u32 %1, %9, %17;\n\t"
        "addc.cc.u32 %2, %10, %18;\n\t"
        "addc.cc.u32 %3, %11, %19;\n\t"
        "addc.cc.u32 %4, %12, %20;\n\t"
        "addc.cc.u32 %5, %13, %21;\n\t"
        "addc.cc.u32 %6, %14, %22;\n\t"
        "addc.u32 %7, %15, %23;"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]),
          "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(b[4]), "r"(b[5]), "r"(b[6]), "r"(b[7]));
}

__device__ unsigned sub256(unsigned* r, const unsigned* a, const unsigned* b) {
    unsigned borrow;
    asm("sub.cc.u32 %0, %9, %17;\n\t"
        "subc.cc.u32 %1, %10, %18;\n\t"
        "subc.cc.u32 %2, %11, %19;\n\t"
        "subc.cc.u32 %3, %12, %20;\n\t"
        "subc.cc.u32 %4, %13, %21;\n\t"
        "subc.cc.u32 %5, %14, %22;\n\t"
        "subc.cc.u32 %6, %15, %23;\n\t"
        "subc.cc.u32 %7, %16, %24;\n\t"
        "subc.u32 %8, 0, 0;"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
          "=r"(borrow)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]),
          "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(b[4]), "r"(b[5]), "r"(b[6]), "r"(b[7]));
    return borrow;
}

// r[0..7] = a[0..3] * b[0..3]: row by row, low halves with mad.lo.cc, high halves with madc.hi
__device__ void mul128(unsigned* r, const unsigned* a, const unsigned* b) {
    for (int i = 0; i < 8; i++) r[i] = 0;
    for (int i = 0; i < 4; i++) {
        unsigned carry = 0;
        for (int j = 0; j < 4; j++) {
            unsigned lo, hi;
            asm("mad.lo.cc.u32 %0, %2, %3, %4;\n\t"
                "madc.hi.u32 %1, %2, %3, 0;"
                : "=r"(lo), "=r"(hi) : "r"(a[i]), "r"(b[j]), "r"(r[i + j]));
            asm("add.cc.u32 %0, %0, %2;\n\taddc.u32 %1, %1, 0;" : "+r"(lo), "+r"(hi) : "r"(carry));
            r[i + j] = lo;
            carry = hi;
        }
        r[i + 4] = carry;
    }
}

extern "C" __global__ void bigint(const unsigned* a, const unsigned* b, unsigned* sum, unsigned* diff,
                                  unsigned* borrow, unsigned* prod, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned x[LIMBS], y[LIMBS], r[LIMBS];
    for (int k = 0; k < LIMBS; k++) { x[k] = a[i * LIMBS + k]; y[k] = b[i * LIMBS + k]; }
    add256(r, x, y);
    for (int k = 0; k < LIMBS; k++) sum[i * LIMBS + k] = r[k];
    borrow[i] = sub256(r, x, y);
    for (int k = 0; k < LIMBS; k++) diff[i * LIMBS + k] = r[k];
    mul128(r, x, y);
    for (int k = 0; k < LIMBS; k++) prod[i * LIMBS + k] = r[k];
}
