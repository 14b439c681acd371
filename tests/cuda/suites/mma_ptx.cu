// Hand-tuned GEMM inner loop as public kernels write it in inline PTX: ldmatrix.x4 / .x2.trans fragments
// from shared memory, then mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32.
#include <cuda_fp16.h>

extern "C" __global__ void mma_m16n8k16(const half* A, const half* B, float* C) {
    __shared__ __align__(16) half sa[16 * 16];  // A: 16x16 row-major
    __shared__ __align__(16) half sb[16 * 8];   // B: 16x8 row-major (k x n)
    int lane = threadIdx.x;
    for (int i = lane; i < 256; i += 32) sa[i] = A[i];
    for (int i = lane; i < 128; i += 32) sb[i] = B[i];
    __syncthreads();
    unsigned a0, a1, a2, a3, b0, b1;
    // x4: lanes 0-15 address rows 0-15 of the left 8 columns, lanes 16-31 rows 0-15 of the right 8
    unsigned aaddr = (unsigned)__cvta_generic_to_shared(&sa[(lane % 16) * 16 + (lane / 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(aaddr));
    // B is k-major in shared memory: .trans turns 8x8 (k x n) tiles into the col-major fragment
    unsigned baddr = (unsigned)__cvta_generic_to_shared(&sb[(lane % 16) * 8]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(b0), "=r"(b1) : "r"(baddr));
    float c0 = 0.f, c1 = 0.f, c2 = 0.f, c3 = 0.f;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                 "{%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    int g = lane >> 2, tq = lane & 3;  // the accumulator layout: rows g and g + 8, columns 2*tq, 2*tq + 1
    C[g * 8 + 2 * tq] = c0;
    C[g * 8 + 2 * tq + 1] = c1;
    C[(g + 8) * 8 + 2 * tq] = c2;
    C[(g + 8) * 8 + 2 * tq + 1] = c3;
}
