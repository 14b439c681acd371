// An indirect branch through a jump table (brx.idx over .branchtargets), the form ptxas-level code and
// large switch lowering use, with a divergent index per lane.
extern "C" __global__ void brx(const unsigned* sel, unsigned* out) {
    unsigned r;
    asm volatile(
        "{\n\t"
        "ts: .branchtargets L0, L1, L2, L3;\n\t"
        "brx.idx %1, ts;\n\t"
        "L0: mov.u32 %0, 100; bra.uni LEND;\n\t"
        "L1: mov.u32 %0, 211; bra.uni LEND;\n\t"
        "L2: mov.u32 %0, 322; bra.uni LEND;\n\t"
        "L3: mov.u32 %0, 433;\n\t"
        "LEND:\n\t"
        "}"
        : "=r"(r) : "r"(sel[threadIdx.x] & 3));
    out[threadIdx.x] = r + threadIdx.x;
}
