// strata's AMD half-precision header: __half is clang's _Float16 (native on gfx9), __half2 a 2-vector.
// Arithmetic rounds once to nearest even (the f16 instructions); the comparison, conversion and packed
// intrinsics follow HIP's (and CUDA's) definitions. The directed-rounding conversions step the
// round-to-nearest result by one ulp when it lies on the wrong side of the exact value.
#pragma once
#include <hip/hip_runtime.h>

typedef _Float16 __half;
typedef _Float16 __half2 __attribute__((ext_vector_type(2)));
typedef __half half;
typedef __half2 half2;

#define __STRATA_H static __device__ __forceinline__

// ---- conversions and constructors
__STRATA_H __half __float2half(float f) { return (__half)f; }
__STRATA_H __half __float2half_rn(float f) { return (__half)f; }
__STRATA_H float __half2float(__half h) { return (float)h; }
__STRATA_H __half2 __floats2half2_rn(float a, float b) { return __half2{(__half)a, (__half)b}; }
__STRATA_H __half2 __float2half2_rn(float a) { return __half2{(__half)a, (__half)a}; }
__STRATA_H __half2 __float22half2_rn(float2 a) { return __half2{(__half)a.x, (__half)a.y}; }
__STRATA_H float2 __half22float2(__half2 h) { return float2{(float)h.x, (float)h.y}; }
__STRATA_H float __low2float(__half2 h) { return (float)h.x; }
__STRATA_H float __high2float(__half2 h) { return (float)h.y; }
__STRATA_H __half2 __halves2half2(__half lo, __half hi) { return __half2{lo, hi}; }
__STRATA_H __half2 make_half2(__half lo, __half hi) { return __half2{lo, hi}; }
__STRATA_H __half2 __half2half2(__half a) { return __half2{a, a}; }
__STRATA_H __half __low2half(__half2 h) { return h.x; }
__STRATA_H __half __high2half(__half2 h) { return h.y; }
__STRATA_H __half2 __low2half2(__half2 h) { return __half2{h.x, h.x}; }
__STRATA_H __half2 __high2half2(__half2 h) { return __half2{h.y, h.y}; }
__STRATA_H __half2 __lows2half2(__half2 a, __half2 b) { return __half2{a.x, b.x}; }
__STRATA_H __half2 __highs2half2(__half2 a, __half2 b) { return __half2{a.y, b.y}; }
__STRATA_H __half2 __lowhigh2highlow(__half2 h) { return __half2{h.y, h.x}; }
__STRATA_H short __half_as_short(__half h) { return __builtin_bit_cast(short, h); }
__STRATA_H unsigned short __half_as_ushort(__half h) { return __builtin_bit_cast(unsigned short, h); }
__STRATA_H __half __short_as_half(short s) { return __builtin_bit_cast(__half, s); }
__STRATA_H __half __ushort_as_half(unsigned short s) { return __builtin_bit_cast(__half, s); }

// directed rounding: the round-to-nearest result moved one ulp towards the exact value when on its wrong side
__STRATA_H __half __strata_h_directed(__half h, double x, int dir) {
  return __builtin_bit_cast(__half, __strata_directed16(__builtin_bit_cast(unsigned short, h), (double)h, x, dir));
}
__STRATA_H __half __float2half_rz(float f) { return __strata_h_directed((__half)f, f, 0); }
__STRATA_H __half __float2half_ru(float f) { return __strata_h_directed((__half)f, f, 1); }
__STRATA_H __half __float2half_rd(float f) { return __strata_h_directed((__half)f, f, -1); }
__STRATA_H __half __double2half(double d) { return (__half)d; }
// |k| < 2^24 converts to float exactly; a larger |k| is past the half range either way
__STRATA_H __half __int2half_rn(int k) { return (__half)(float)k; }
__STRATA_H __half __int2half_rz(int k) { return __strata_h_directed((__half)(float)k, (double)k, 0); }
__STRATA_H __half __int2half_ru(int k) { return __strata_h_directed((__half)(float)k, (double)k, 1); }
__STRATA_H __half __int2half_rd(int k) { return __strata_h_directed((__half)(float)k, (double)k, -1); }
__STRATA_H __half __uint2half_rn(unsigned k) { return (__half)(float)k; }
__STRATA_H __half __short2half_rn(short k) { return (__half)(float)k; }
__STRATA_H __half __ushort2half_rn(unsigned short k) { return (__half)(float)k; }
// half -> integer: saturating, NaN -> 0 (as cvt on both ISAs; an int holds every finite half)
__STRATA_H int __strata_h2i(float r) { return r != r ? 0 : r >= 2147483648.0f ? 2147483647 : r < -2147483648.0f ? (-2147483647 - 1) : (int)r; }
__STRATA_H int __half2int_rn(__half h) { return __strata_h2i(__builtin_rintf((float)h)); }
__STRATA_H int __half2int_rz(__half h) { return __strata_h2i(__builtin_truncf((float)h)); }
__STRATA_H int __half2int_ru(__half h) { return __strata_h2i(__builtin_ceilf((float)h)); }
__STRATA_H int __half2int_rd(__half h) { return __strata_h2i(__builtin_floorf((float)h)); }
__STRATA_H short __strata_h2s(float r) { return r != r ? 0 : r >= 32767.0f ? 32767 : r <= -32768.0f ? -32768 : (short)r; }
__STRATA_H short __half2short_rn(__half h) { return __strata_h2s(__builtin_rintf((float)h)); }
__STRATA_H short __half2short_rz(__half h) { return __strata_h2s(__builtin_truncf((float)h)); }
__STRATA_H unsigned __strata_h2u(float r) { return r != r || r <= 0.0f ? 0u : r >= 4294967296.0f ? 4294967295u : (unsigned)r; }
__STRATA_H unsigned __half2uint_rn(__half h) { return __strata_h2u(__builtin_rintf((float)h)); }
__STRATA_H unsigned __half2uint_rz(__half h) { return __strata_h2u(__builtin_truncf((float)h)); }

// ---- scalar arithmetic (one rounding each)
__STRATA_H __half __hadd(__half a, __half b) { return a + b; }
__STRATA_H __half __hsub(__half a, __half b) { return a - b; }
__STRATA_H __half __hmul(__half a, __half b) { return a * b; }
__STRATA_H __half __hdiv(__half a, __half b) { return a / b; }
__STRATA_H __half __hfma(__half a, __half b, __half c) { return __builtin_fmaf16(a, b, c); }
__STRATA_H __half __hneg(__half a) { return -a; }
__STRATA_H __half __habs(__half a) { return __builtin_fabsf16(a); }
// the _sat forms clamp to [0, 1]; a NaN result becomes +0
__STRATA_H __half __strata_hsat(__half r) { return r > (__half)0.0f ? (r < (__half)1.0f ? r : (__half)1.0f) : (__half)0.0f; }
__STRATA_H __half __hadd_sat(__half a, __half b) { return __strata_hsat(a + b); }
__STRATA_H __half __hsub_sat(__half a, __half b) { return __strata_hsat(a - b); }
__STRATA_H __half __hmul_sat(__half a, __half b) { return __strata_hsat(a * b); }
__STRATA_H __half __hfma_sat(__half a, __half b, __half c) { return __strata_hsat(__builtin_fmaf16(a, b, c)); }
// __hmax/__hmin ignore a NaN operand; the _nan forms propagate it
__STRATA_H __half __hmax(__half a, __half b) { return __builtin_fmaxf16(a, b); }
__STRATA_H __half __hmin(__half a, __half b) { return __builtin_fminf16(a, b); }
__STRATA_H __half __hmax_nan(__half a, __half b) { return (a != a || b != b) ? a + b : __builtin_fmaxf16(a, b); }
__STRATA_H __half __hmin_nan(__half a, __half b) { return (a != a || b != b) ? a + b : __builtin_fminf16(a, b); }

// ---- scalar comparisons: ordered (false on NaN) and the unordered `u` forms (true on NaN)
__STRATA_H bool __heq(__half a, __half b) { return a == b; }
__STRATA_H bool __hne(__half a, __half b) { return a < b || a > b; }
__STRATA_H bool __hlt(__half a, __half b) { return a < b; }
__STRATA_H bool __hle(__half a, __half b) { return a <= b; }
__STRATA_H bool __hgt(__half a, __half b) { return a > b; }
__STRATA_H bool __hge(__half a, __half b) { return a >= b; }
__STRATA_H bool __hequ(__half a, __half b) { return !(a < b || a > b); }
__STRATA_H bool __hneu(__half a, __half b) { return a != b; }
__STRATA_H bool __hltu(__half a, __half b) { return !(a >= b); }
__STRATA_H bool __hleu(__half a, __half b) { return !(a > b); }
__STRATA_H bool __hgtu(__half a, __half b) { return !(a <= b); }
__STRATA_H bool __hgeu(__half a, __half b) { return !(a < b); }
__STRATA_H bool __hisnan(__half a) { return a != a; }
// -1 for -inf, 1 for +inf, 0 otherwise
__STRATA_H int __hisinf(__half a) { return __builtin_isinf(a) ? (a < (__half)0.0f ? -1 : 1) : 0; }

// ---- packed (half2) arithmetic, lane by lane
__STRATA_H __half2 __hadd2(__half2 a, __half2 b) { return a + b; }
__STRATA_H __half2 __hsub2(__half2 a, __half2 b) { return a - b; }
__STRATA_H __half2 __hmul2(__half2 a, __half2 b) { return a * b; }
__STRATA_H __half2 __h2div(__half2 a, __half2 b) { return a / b; }
__STRATA_H __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return __builtin_elementwise_fma(a, b, c); }
__STRATA_H __half2 __hneg2(__half2 a) { return -a; }
__STRATA_H __half2 __habs2(__half2 a) { return __half2{__habs(a.x), __habs(a.y)}; }
__STRATA_H __half2 __hmax2(__half2 a, __half2 b) { return __half2{__hmax(a.x, b.x), __hmax(a.y, b.y)}; }
__STRATA_H __half2 __hmin2(__half2 a, __half2 b) { return __half2{__hmin(a.x, b.x), __hmin(a.y, b.y)}; }
__STRATA_H __half2 __hmax2_nan(__half2 a, __half2 b) { return __half2{__hmax_nan(a.x, b.x), __hmax_nan(a.y, b.y)}; }
__STRATA_H __half2 __hmin2_nan(__half2 a, __half2 b) { return __half2{__hmin_nan(a.x, b.x), __hmin_nan(a.y, b.y)}; }
__STRATA_H __half2 __hadd2_sat(__half2 a, __half2 b) { return __half2{__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)}; }
__STRATA_H __half2 __hsub2_sat(__half2 a, __half2 b) { return __half2{__hsub_sat(a.x, b.x), __hsub_sat(a.y, b.y)}; }
__STRATA_H __half2 __hmul2_sat(__half2 a, __half2 b) { return __half2{__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)}; }
__STRATA_H __half2 __hfma2_sat(__half2 a, __half2 b, __half2 c) {
  return __half2{__hfma_sat(a.x, b.x, c.x), __hfma_sat(a.y, b.y, c.y)};
}
// packed comparisons give 1.0 or 0.0 per lane; the __hb forms are true when both lanes compare true
#define __STRATA_H2CMP(op) \
  __STRATA_H __half2 __h##op##2(__half2 a, __half2 b) { \
    return __half2{__h##op(a.x, b.x) ? (__half)1.0f : (__half)0.0f, __h##op(a.y, b.y) ? (__half)1.0f : (__half)0.0f}; } \
  __STRATA_H bool __hb##op##2(__half2 a, __half2 b) { return __h##op(a.x, b.x) && __h##op(a.y, b.y); }
__STRATA_H2CMP(eq)
__STRATA_H2CMP(ne)
__STRATA_H2CMP(lt)
__STRATA_H2CMP(le)
__STRATA_H2CMP(gt)
__STRATA_H2CMP(ge)
__STRATA_H2CMP(equ)
__STRATA_H2CMP(neu)
__STRATA_H2CMP(ltu)
__STRATA_H2CMP(leu)
__STRATA_H2CMP(gtu)
__STRATA_H2CMP(geu)
#undef __STRATA_H2CMP
__STRATA_H __half2 __hisnan2(__half2 a) {
  return __half2{a.x != a.x ? (__half)1.0f : (__half)0.0f, a.y != a.y ? (__half)1.0f : (__half)0.0f};
}

// ---- atomics on half2: a 32-bit compare-and-swap loop, each lane added with one rounding
static __device__ __forceinline__ __half2 atomicAdd(__half2* p, __half2 v) {
  unsigned* w = (unsigned*)p;
  unsigned old = __hip_atomic_load(w, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT), assumed;
  do {
    assumed = old;
    unsigned next = __builtin_bit_cast(unsigned, __builtin_bit_cast(__half2, assumed) + v);
    __hip_atomic_compare_exchange_strong(w, &old, next, __ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  } while (old != assumed);
  return __builtin_bit_cast(__half2, old);
}
static __device__ __forceinline__ __half atomicAdd(__half* p, __half v) {
  // the 32-bit word holding *p, and which half of it
  unsigned* w = (unsigned*)((uintptr_t)p & ~(uintptr_t)3);
  unsigned shift = ((uintptr_t)p & 2) * 8;
  unsigned old = __hip_atomic_load(w, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT), assumed;
  do {
    assumed = old;
    __half h = __builtin_bit_cast(__half, (unsigned short)(assumed >> shift)) + v;
    unsigned next = (assumed & ~(0xffffu << shift)) | ((unsigned)__builtin_bit_cast(unsigned short, h) << shift);
    __hip_atomic_compare_exchange_strong(w, &old, next, __ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  } while (old != assumed);
  return __builtin_bit_cast(__half, (unsigned short)(old >> shift));
}
#undef __STRATA_H
