// strata's AMD bfloat16 header: __hip_bfloat16 is clang's __bf16, __hip_bfloat162 a 2-vector of it. gfx9 has no
// bfloat16 arithmetic: each operation computes in float and rounds to nearest even once (for +, -, *, / a float
// holds enough bits that rounding twice, to float and then to bfloat16, gives the single rounding).
#pragma once
#include <hip/hip_runtime.h>

typedef __bf16 __hip_bfloat16;
typedef __bf16 __hip_bfloat162 __attribute__((ext_vector_type(2)));

#define __STRATA_B static __device__ __forceinline__

// ---- conversions and constructors
__STRATA_B __hip_bfloat16 __float2bfloat16(float f) { return (__bf16)f; }
__STRATA_B __hip_bfloat16 __float2bfloat16_rn(float f) { return (__bf16)f; }
__STRATA_B float __bfloat162float(__hip_bfloat16 h) { return (float)h; }
__STRATA_B __hip_bfloat16 __strata_b_directed(float f, int dir) {
  __bf16 r = (__bf16)f;
  return __builtin_bit_cast(__bf16, __strata_directed16(__builtin_bit_cast(unsigned short, r), (double)(float)r, f, dir));
}
__STRATA_B __hip_bfloat16 __float2bfloat16_rz(float f) { return __strata_b_directed(f, 0); }
__STRATA_B __hip_bfloat16 __float2bfloat16_ru(float f) { return __strata_b_directed(f, 1); }
__STRATA_B __hip_bfloat16 __float2bfloat16_rd(float f) { return __strata_b_directed(f, -1); }
// one rounding from double: to float rounded to odd, then to nearest even
__STRATA_B __hip_bfloat16 __double2bfloat16(double d) { return (__bf16)__strata_double2float_odd(d); }
__STRATA_B __hip_bfloat162 __floats2bfloat162_rn(float a, float b) { return __hip_bfloat162{(__bf16)a, (__bf16)b}; }
__STRATA_B __hip_bfloat162 __float2bfloat162_rn(float a) { return __hip_bfloat162{(__bf16)a, (__bf16)a}; }
__STRATA_B float2 __bfloat1622float2(__hip_bfloat162 h) { return float2{(float)h.x, (float)h.y}; }
__STRATA_B float __low2float(__hip_bfloat162 h) { return (float)h.x; }
__STRATA_B float __high2float(__hip_bfloat162 h) { return (float)h.y; }
__STRATA_B __hip_bfloat162 __halves2bfloat162(__hip_bfloat16 lo, __hip_bfloat16 hi) { return __hip_bfloat162{lo, hi}; }
__STRATA_B __hip_bfloat162 __bfloat162bfloat162(__hip_bfloat16 a) { return __hip_bfloat162{a, a}; }
__STRATA_B __hip_bfloat16 __low2bfloat16(__hip_bfloat162 h) { return h.x; }
__STRATA_B __hip_bfloat16 __high2bfloat16(__hip_bfloat162 h) { return h.y; }
__STRATA_B __hip_bfloat162 __lowhigh2highlow(__hip_bfloat162 h) { return __hip_bfloat162{h.y, h.x}; }
__STRATA_B short __bfloat16_as_short(__hip_bfloat16 h) { return __builtin_bit_cast(short, h); }
__STRATA_B unsigned short __bfloat16_as_ushort(__hip_bfloat16 h) { return __builtin_bit_cast(unsigned short, h); }
__STRATA_B __hip_bfloat16 __short_as_bfloat16(short s) { return __builtin_bit_cast(__bf16, s); }
__STRATA_B __hip_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __builtin_bit_cast(__bf16, s); }

// ---- scalar arithmetic
__STRATA_B __hip_bfloat16 __hadd(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)((float)a + (float)b); }
__STRATA_B __hip_bfloat16 __hsub(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)((float)a - (float)b); }
__STRATA_B __hip_bfloat16 __hmul(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)((float)a * (float)b); }
__STRATA_B __hip_bfloat16 __hdiv(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)((float)a / (float)b); }
// One rounding, as fma.rn.bf16. Not through the float32 fma: a*b has up to 16 significant bits, and when c is
// far below it the float32 sum can land on a bfloat16 midpoint the exact value is beside. Instead a*b is exact in
// double, the sum is rounded to odd in double (a two-sum gives exactly what rounding cut off), then to odd in
// float, then to nearest even: rounding to odd first keeps the last rounding single.
__STRATA_B __hip_bfloat16 __hfma(__hip_bfloat16 a, __hip_bfloat16 b, __hip_bfloat16 c) {
  double p = (double)(float)a * (double)(float)b, q = (double)(float)c;
  double s = p + q;
  double bq = s - p;
  double err = (p - (s - bq)) + (q - bq);
  if (err != 0.0 && s == s && !__builtin_isinf(s)) {
    unsigned long long u = __builtin_bit_cast(unsigned long long, s);
    if ((err > 0.0) != (s > 0.0)) u -= 1;  // s was rounded away from zero: truncate
    s = __builtin_bit_cast(double, u | 1ull);
  }
  return (__bf16)__strata_double2float_odd(s);
}
__STRATA_B __hip_bfloat16 __hneg(__hip_bfloat16 a) { return __builtin_bit_cast(__bf16, (unsigned short)(__builtin_bit_cast(unsigned short, a) ^ 0x8000)); }
__STRATA_B __hip_bfloat16 __habs(__hip_bfloat16 a) { return __builtin_bit_cast(__bf16, (unsigned short)(__builtin_bit_cast(unsigned short, a) & 0x7fff)); }
__STRATA_B __hip_bfloat16 __strata_bsat(float r) { return (__bf16)(r > 0.0f ? (r < 1.0f ? r : 1.0f) : 0.0f); }
__STRATA_B __hip_bfloat16 __hadd_sat(__hip_bfloat16 a, __hip_bfloat16 b) { return __strata_bsat((float)__hadd(a, b)); }
__STRATA_B __hip_bfloat16 __hsub_sat(__hip_bfloat16 a, __hip_bfloat16 b) { return __strata_bsat((float)__hsub(a, b)); }
__STRATA_B __hip_bfloat16 __hmul_sat(__hip_bfloat16 a, __hip_bfloat16 b) { return __strata_bsat((float)__hmul(a, b)); }
__STRATA_B __hip_bfloat16 __hfma_sat(__hip_bfloat16 a, __hip_bfloat16 b, __hip_bfloat16 c) {
  return __strata_bsat((float)__hfma(a, b, c));
}
// __hmax/__hmin ignore a NaN operand; the _nan forms propagate it
__STRATA_B __hip_bfloat16 __hmax(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)__builtin_fmaxf((float)a, (float)b); }
__STRATA_B __hip_bfloat16 __hmin(__hip_bfloat16 a, __hip_bfloat16 b) { return (__bf16)__builtin_fminf((float)a, (float)b); }
__STRATA_B __hip_bfloat16 __hmax_nan(__hip_bfloat16 a, __hip_bfloat16 b) {
  float x = (float)a, y = (float)b;
  return (__bf16)((x != x || y != y) ? x + y : __builtin_fmaxf(x, y));
}
__STRATA_B __hip_bfloat16 __hmin_nan(__hip_bfloat16 a, __hip_bfloat16 b) {
  float x = (float)a, y = (float)b;
  return (__bf16)((x != x || y != y) ? x + y : __builtin_fminf(x, y));
}

// ---- scalar comparisons: ordered (false on NaN) and the unordered `u` forms (true on NaN)
__STRATA_B bool __heq(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a == (float)b; }
__STRATA_B bool __hne(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a < (float)b || (float)a > (float)b; }
__STRATA_B bool __hlt(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a < (float)b; }
__STRATA_B bool __hle(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a <= (float)b; }
__STRATA_B bool __hgt(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a > (float)b; }
__STRATA_B bool __hge(__hip_bfloat16 a, __hip_bfloat16 b) { return (float)a >= (float)b; }
__STRATA_B bool __hequ(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hne(a, b); }
__STRATA_B bool __hneu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__heq(a, b); }
__STRATA_B bool __hltu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hge(a, b); }
__STRATA_B bool __hleu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hgt(a, b); }
__STRATA_B bool __hgtu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hle(a, b); }
__STRATA_B bool __hgeu(__hip_bfloat16 a, __hip_bfloat16 b) { return !__hlt(a, b); }
__STRATA_B bool __hisnan(__hip_bfloat16 a) { return (float)a != (float)a; }
// -1 for -inf, 1 for +inf, 0 otherwise
__STRATA_B int __hisinf(__hip_bfloat16 a) { float x = (float)a; return __builtin_isinf(x) ? (x < 0.0f ? -1 : 1) : 0; }

// ---- packed (bfloat162) arithmetic and comparisons, lane by lane
#define __STRATA_B2(name, scalar) \
  __STRATA_B __hip_bfloat162 name(__hip_bfloat162 a, __hip_bfloat162 b) { return __hip_bfloat162{scalar(a.x, b.x), scalar(a.y, b.y)}; }
__STRATA_B2(__hadd2, __hadd)
__STRATA_B2(__hsub2, __hsub)
__STRATA_B2(__hmul2, __hmul)
__STRATA_B2(__h2div, __hdiv)
__STRATA_B2(__hmax2, __hmax)
__STRATA_B2(__hmin2, __hmin)
__STRATA_B2(__hmax2_nan, __hmax_nan)
__STRATA_B2(__hmin2_nan, __hmin_nan)
__STRATA_B2(__hadd2_sat, __hadd_sat)
__STRATA_B2(__hsub2_sat, __hsub_sat)
__STRATA_B2(__hmul2_sat, __hmul_sat)
#undef __STRATA_B2
__STRATA_B __hip_bfloat162 __hfma2(__hip_bfloat162 a, __hip_bfloat162 b, __hip_bfloat162 c) {
  return __hip_bfloat162{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
__STRATA_B __hip_bfloat162 __hneg2(__hip_bfloat162 a) { return __hip_bfloat162{__hneg(a.x), __hneg(a.y)}; }
__STRATA_B __hip_bfloat162 __habs2(__hip_bfloat162 a) { return __hip_bfloat162{__habs(a.x), __habs(a.y)}; }
#define __STRATA_B2CMP(op) \
  __STRATA_B __hip_bfloat162 __h##op##2(__hip_bfloat162 a, __hip_bfloat162 b) { \
    return __hip_bfloat162{__h##op(a.x, b.x) ? (__bf16)1.0f : (__bf16)0.0f, __h##op(a.y, b.y) ? (__bf16)1.0f : (__bf16)0.0f}; } \
  __STRATA_B bool __hb##op##2(__hip_bfloat162 a, __hip_bfloat162 b) { return __h##op(a.x, b.x) && __h##op(a.y, b.y); }
__STRATA_B2CMP(eq)
__STRATA_B2CMP(ne)
__STRATA_B2CMP(lt)
__STRATA_B2CMP(le)
__STRATA_B2CMP(gt)
__STRATA_B2CMP(ge)
__STRATA_B2CMP(equ)
__STRATA_B2CMP(neu)
__STRATA_B2CMP(ltu)
__STRATA_B2CMP(leu)
__STRATA_B2CMP(gtu)
__STRATA_B2CMP(geu)
#undef __STRATA_B2CMP
#undef __STRATA_B
