// strata: the CUDA device API that strata's library and framework kernels use, mapped onto strata's AMD
// device header (src/strata/hip/include_amd), so the same CUDA C++ source compiles with clang-19 for
// gfx942. It is force-included (-include) in front of every library source compiled for an AMD device,
// the role ROCm's libraries play by being written in HIP. Wavefronts are 64 lanes: warpSize is 64 and
// a shuffle's default width is the whole wavefront; kernels that reduce over 32-lane groups pass
// width 32 explicitly (CUDA accepts it too).
//
// Math comes with the HIP header (hip/amd_math.h: no device library is linked, so the functions LLVM
// does not lower natively for AMDGPU are written there).
#pragma once
#include <hip/hip_runtime.h>
#include <hip/hip_bf16.h>

#define __CUDACC__ 1
#define __align__(n) __attribute__((aligned(n)))
#define CUDART_INF_F __builtin_inff()
#define CUDART_NAN_F __builtin_nanf("")

typedef __hip_bfloat16 __nv_bfloat16;
typedef __hip_bfloat16 nv_bfloat16;

// __half is a class, as in CUDA: stored as binary16, computed in float (exact for + - * / compares
// after one rounding back), so kernels need no f16 ALU instructions beyond the conversions
struct __half {
  _Float16 __x;
  __half() = default;
  __device__ __half(float f) : __x((_Float16)f) {}
  __device__ __half(double d) : __x((_Float16)(float)d) {}
  __device__ __half(int i) : __x((_Float16)(float)i) {}
  __device__ __half(unsigned i) : __x((_Float16)(float)i) {}
  __device__ __half(long long i) : __x((_Float16)(float)i) {}
  __device__ __half(unsigned long long i) : __x((_Float16)(float)i) {}
  __device__ __half(short i) : __x((_Float16)(float)i) {}
  __device__ __half(unsigned short i) : __x((_Float16)(float)i) {}
  __device__ __half(signed char i) : __x((_Float16)(float)i) {}
  __device__ __half(unsigned char i) : __x((_Float16)(float)i) {}
  __device__ __half(bool b) : __x((_Float16)(b ? 1.0f : 0.0f)) {}
  // the empty asm keeps LLVM from narrowing float math on widened halves back to f16 instructions
  __device__ operator float() const {
    float f = (float)__x;
    __asm__("" : "+v"(f));
    return f;
  }
  __device__ __half& operator+=(float v) { __x = (_Float16)((float)__x + v); return *this; }
  __device__ __half& operator-=(float v) { __x = (_Float16)((float)__x - v); return *this; }
  __device__ __half& operator*=(float v) { __x = (_Float16)((float)__x * v); return *this; }
  __device__ __half& operator/=(float v) { __x = (_Float16)((float)__x / v); return *this; }
};
typedef __half half;
static __device__ __forceinline__ __half __float2half(float f) { return __half(f); }
static __device__ __forceinline__ __half __float2half_rn(float f) { return __half(f); }
static __device__ __forceinline__ float __half2float(__half h) { return (float)h; }
static __device__ __forceinline__ __half __hadd(__half a, __half b) { return __half((float)a + (float)b); }
static __device__ __forceinline__ __half __hsub(__half a, __half b) { return __half((float)a - (float)b); }
static __device__ __forceinline__ __half __hmul(__half a, __half b) { return __half((float)a * (float)b); }
static __device__ __forceinline__ __half __hdiv(__half a, __half b) { return __half((float)a / (float)b); }
static __device__ __forceinline__ __half __habs(__half a) { return __half(fabsf((float)a)); }
static __device__ __forceinline__ __half __hneg(__half a) { return __half(-(float)a); }
static __device__ __forceinline__ bool __hisnan(__half a) { return __builtin_isnan((float)a); }
static __device__ __forceinline__ bool __hisinf(__half a) { return __builtin_isinf((float)a); }
static __device__ __forceinline__ __half __hmax(__half a, __half b) { return __half(fmaxf((float)a, (float)b)); }
static __device__ __forceinline__ __half __hmin(__half a, __half b) { return __half(fminf((float)a, (float)b)); }
static __device__ __forceinline__ unsigned short __half_as_ushort(__half h) {
  return __builtin_bit_cast(unsigned short, h.__x);
}
static __device__ __forceinline__ __half __ushort_as_half(unsigned short u) {
  __half h;
  h.__x = __builtin_bit_cast(_Float16, u);
  return h;
}
// (__float2bfloat16_rn comes from hip/hip_bf16.h)
static __device__ __forceinline__ __half __double2half(double d) { return (__half)(float)d; }
static __device__ __forceinline__ float __bfloat162float(unsigned short raw) {
  return __builtin_bit_cast(float, (unsigned)raw << 16);
}
template <typename T> static __device__ __forceinline__ T __ldg(const T* p) { return *p; }

// ---- shuffles of 64-bit values (two 32-bit permutes); non-templates, so they win over the header's
// templates for double and long long
#define __STRATA_SHFL64(NAME, BASE, ARG)                                                               \
  static __device__ __forceinline__ double NAME(unsigned long long m, double v, ARG a, int w = warpSize) { \
    long long x = __builtin_bit_cast(long long, v);                                                    \
    int lo = BASE((int)x, a, w), hi = BASE((int)(x >> 32), a, w);                                      \
    (void)m;                                                                                           \
    return __builtin_bit_cast(double, ((long long)hi << 32) | (unsigned)lo);                           \
  }                                                                                                    \
  static __device__ __forceinline__ long long NAME(unsigned long long m, long long v, ARG a, int w = warpSize) { \
    int lo = BASE((int)v, a, w), hi = BASE((int)(v >> 32), a, w);                                      \
    (void)m;                                                                                           \
    return ((long long)hi << 32) | (unsigned)lo;                                                       \
  }                                                                                                    \
  static __device__ __forceinline__ unsigned NAME(unsigned long long m, unsigned v, ARG a, int w = warpSize) { \
    (void)m;                                                                                           \
    return (unsigned)BASE((int)v, a, w);                                                               \
  }
__STRATA_SHFL64(__shfl_sync, __shfl, int)
__STRATA_SHFL64(__shfl_xor_sync, __shfl_xor, int)
__STRATA_SHFL64(__shfl_down_sync, __shfl_down, unsigned)
__STRATA_SHFL64(__shfl_up_sync, __shfl_up, unsigned)
#undef __STRATA_SHFL64
