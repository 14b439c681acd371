// 16-bit float conversions with explicit rounding and from/to other widths: double -> half/bf16,
// float -> half with _ru/_rd/_rz, float -> bf16 _ru/_rd, integer <-> half with rounding modes.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void half_conv(const double* d, const float* f, const long long* l, unsigned short* h,
                                     long long* ints, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned short* o = h + 9 * i;
    o[0] = __half_as_ushort(__double2half(d[i]));
    o[1] = __bfloat16_as_ushort(__double2bfloat16(d[i]));
    o[2] = __half_as_ushort(__float2half_ru(f[i]));
    o[3] = __half_as_ushort(__float2half_rd(f[i]));
    o[4] = __half_as_ushort(__float2half_rz(f[i]));
    o[5] = __bfloat16_as_ushort(__float2bfloat16_ru(f[i]));
    o[6] = __bfloat16_as_ushort(__float2bfloat16_rd(f[i]));
    o[7] = __half_as_ushort(__ll2half_rn(l[i]));
    o[8] = __half_as_ushort(__uint2half_rd((unsigned)(l[i] & 0xffff)));
    __half hv = __float2half(f[i]);
    ints[3 * i + 0] = __half2int_rn(hv);
    ints[3 * i + 1] = __half2ll_rz(hv);
    ints[3 * i + 2] = __half2uint_ru(__habs(hv));
}
