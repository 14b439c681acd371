// Inline PTX as public kernels write it: lane id and warp id special registers, bfe/bfi, prmt, lop3,
// shf, a predicated select and a 64-bit mad.wide via asm volatile.
extern "C" __global__ void inline_asm(const unsigned* a, const unsigned* b, unsigned* out) {
    int t = threadIdx.x;
    unsigned x = a[t], y = b[t];
    unsigned lane, bfe, bfi, prmt, lop, shf, sel;
    unsigned long long wide;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm("bfe.u32 %0, %1, 4, 8;" : "=r"(bfe) : "r"(x));
    asm("bfi.b32 %0, %1, %2, 8, 12;" : "=r"(bfi) : "r"(x), "r"(y));
    asm("prmt.b32 %0, %1, %2, 0x5140;" : "=r"(prmt) : "r"(x), "r"(y));
    asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(lop) : "r"(x), "r"(y), "r"(x ^ y));  // majority
    asm("shf.r.wrap.b32 %0, %1, %2, %3;" : "=r"(shf) : "r"(x), "r"(y), "r"(t));
    asm("{\n\t.reg .pred p;\n\tsetp.gt.u32 p, %1, %2;\n\tselp.u32 %0, %1, %2, p;\n\t}" : "=r"(sel) : "r"(x), "r"(y));
    asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(wide) : "r"(x), "r"(y), "l"((unsigned long long)t));
    unsigned* o = out + 9 * t;
    o[0] = lane; o[1] = bfe; o[2] = bfi; o[3] = prmt; o[4] = lop; o[5] = shf; o[6] = sel;
    o[7] = (unsigned)wide; o[8] = (unsigned)(wide >> 32);
}
