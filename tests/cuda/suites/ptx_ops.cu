// Less common PTX instructions that hand-tuned public kernels reach through inline asm: saturating
// integer add/sub/mad.hi, bfind, bmsk, szext, prmt.f4e, copysign, max.NaN, min.xorsign.abs, the packed
// conversions (tf32, f16x2, relu bf16x2, e4m3x2), elect.sync, movmatrix and the lane-mask registers.
extern "C" __global__ void ptx_ops(const unsigned* a, const unsigned* b, unsigned* out) {
    unsigned x = a[threadIdx.x], y = b[threadIdx.x], s = threadIdx.x;
    float fx = __uint_as_float(x), fy = __uint_as_float(y);
    unsigned* o = out + 20 * threadIdx.x;
    asm("add.sat.s32 %0, %1, %2;" : "=r"(o[0]) : "r"(x), "r"(y));
    asm("sub.sat.s32 %0, %1, %2;" : "=r"(o[1]) : "r"(x), "r"(y));
    asm("mad.hi.sat.s32 %0, %1, %2, %3;" : "=r"(o[2]) : "r"(x), "r"(y), "r"(x));
    asm("bfind.u32 %0, %1;" : "=r"(o[3]) : "r"(x >> (s & 31)));
    asm("bfind.shiftamt.s32 %0, %1;" : "=r"(o[4]) : "r"((int)x >> (s & 31)));
    asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(o[5]) : "r"(x & 31), "r"(y & 63));
    asm("szext.clamp.s32 %0, %1, %2;" : "=r"(o[6]) : "r"(x), "r"(y & 63));
    asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(o[7]) : "r"(x), "r"(y), "r"(s));
    float f;
    asm("copysign.f32 %0, %1, %2;" : "=f"(f) : "f"(fx), "f"(fy));
    o[8] = __float_as_uint(f);
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(f) : "f"(fx), "f"(fy));
    o[9] = __float_as_uint(f);
    asm("min.xorsign.abs.f32 %0, %1, %2;" : "=f"(f) : "f"(fx), "f"(fy));
    o[10] = __float_as_uint(f);
    float m1 = __uint_as_float(x & 0x43ffffffu), m2 = __uint_as_float(y & 0xc3ffffffu);  // |v| < 512, finite
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(o[11]) : "f"(m1));
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(o[12]) : "f"(m1), "f"(m2));
    asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(o[13]) : "f"(m1), "f"(m2));
    unsigned short e;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(e) : "f"(m1), "f"(m2));
    o[14] = e;
    asm volatile("{.reg .pred p; .reg .b32 l; elect.sync l|p, 0xffffffff; selp.u32 %0, 1, 0, p;}" : "=r"(o[15]));
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(o[16]) : "r"(x));
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(o[17]));
    asm("mov.u32 %0, %%lanemask_ge;" : "=r"(o[18]));
    unsigned w;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
    o[19] = w < 64;  // %warpid is a volatile slot number, only bounded
}
