/* strata HIP headers: hip_bfloat16.h, the `hip_bfloat16` storage type of HIP's math libraries (rocBLAS
 * and friends): 16 bits in `.data` (the upper half of an IEEE float), converted from float with
 * round-to-nearest-even (NaN stays NaN) or, with `hip_bfloat16::truncate`, by dropping the low bits.
 * Arithmetic converts to float and back. For the intrinsic bf16 API (__hip_bfloat16) see hip_bf16.h.
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_BFLOAT16_H
#define STRATA_HIP_BFLOAT16_H
#include <hip/hip_common.h>

struct hip_bfloat16 {
    unsigned short data;

    enum truncate_t { truncate };

    hip_bfloat16() = default;
    __device__ explicit hip_bfloat16(float f) : data(round_to_bfloat16(f)) {}
    __device__ hip_bfloat16(float f, truncate_t) : data(truncate_to_bfloat16(f)) {}

    __device__ operator float() const { return __uint_as_float(static_cast<unsigned int>(data) << 16); }

    __device__ static unsigned short round_to_bfloat16(float f) {
        unsigned int u = __float_as_uint(f);
        if ((u & 0x7fffffffu) > 0x7f800000u) {
            return static_cast<unsigned short>((u >> 16) | 0x0040u);  /* NaN: keep sign, force quiet */
        }
        u += 0x7fffu + ((u >> 16) & 1u);  /* round half to even on the 16 dropped bits */
        return static_cast<unsigned short>(u >> 16);
    }
    __device__ static unsigned short truncate_to_bfloat16(float f) {
        return static_cast<unsigned short>(__float_as_uint(f) >> 16);
    }
};

__device__ inline hip_bfloat16 operator+(hip_bfloat16 a, hip_bfloat16 b) { return hip_bfloat16(float(a) + float(b)); }
__device__ inline hip_bfloat16 operator-(hip_bfloat16 a, hip_bfloat16 b) { return hip_bfloat16(float(a) - float(b)); }
__device__ inline hip_bfloat16 operator*(hip_bfloat16 a, hip_bfloat16 b) { return hip_bfloat16(float(a) * float(b)); }
__device__ inline hip_bfloat16 operator/(hip_bfloat16 a, hip_bfloat16 b) { return hip_bfloat16(float(a) / float(b)); }
__device__ inline hip_bfloat16 operator-(hip_bfloat16 a) {
    hip_bfloat16 r;
    r.data = static_cast<unsigned short>(a.data ^ 0x8000u);
    return r;
}
__device__ inline bool operator==(hip_bfloat16 a, hip_bfloat16 b) { return float(a) == float(b); }
__device__ inline bool operator!=(hip_bfloat16 a, hip_bfloat16 b) { return float(a) != float(b); }
__device__ inline bool operator<(hip_bfloat16 a, hip_bfloat16 b) { return float(a) < float(b); }
__device__ inline bool operator<=(hip_bfloat16 a, hip_bfloat16 b) { return float(a) <= float(b); }
__device__ inline bool operator>(hip_bfloat16 a, hip_bfloat16 b) { return float(a) > float(b); }
__device__ inline bool operator>=(hip_bfloat16 a, hip_bfloat16 b) { return float(a) >= float(b); }
__device__ inline hip_bfloat16& operator+=(hip_bfloat16& a, hip_bfloat16 b) { return a = a + b; }
__device__ inline hip_bfloat16& operator-=(hip_bfloat16& a, hip_bfloat16 b) { return a = a - b; }
__device__ inline hip_bfloat16& operator*=(hip_bfloat16& a, hip_bfloat16 b) { return a = a * b; }
__device__ inline hip_bfloat16& operator/=(hip_bfloat16& a, hip_bfloat16 b) { return a = a / b; }

#endif /* STRATA_HIP_BFLOAT16_H */
