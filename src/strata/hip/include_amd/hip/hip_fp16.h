// strata's AMD half-precision header: __half is clang's _Float16 (native on gfx9), __half2 a 2-vector.
#pragma once
#include <hip/hip_runtime.h>

typedef _Float16 __half;
typedef _Float16 __half2 __attribute__((ext_vector_type(2)));
typedef __half half;
typedef __half2 half2;

static __device__ __forceinline__ __half __float2half(float f) { return (__half)f; }
static __device__ __forceinline__ float __half2float(__half h) { return (float)h; }
static __device__ __forceinline__ __half2 __floats2half2_rn(float a, float b) { return __half2{(__half)a, (__half)b}; }
static __device__ __forceinline__ __half2 __float2half2_rn(float a) { return __half2{(__half)a, (__half)a}; }
static __device__ __forceinline__ float __low2float(__half2 h) { return (float)h.x; }
static __device__ __forceinline__ float __high2float(__half2 h) { return (float)h.y; }
static __device__ __forceinline__ __half __hadd(__half a, __half b) { return a + b; }
static __device__ __forceinline__ __half __hsub(__half a, __half b) { return a - b; }
static __device__ __forceinline__ __half __hmul(__half a, __half b) { return a * b; }
static __device__ __forceinline__ __half __hfma(__half a, __half b, __half c) { return __builtin_fmaf16(a, b, c); }
static __device__ __forceinline__ __half2 __hadd2(__half2 a, __half2 b) { return a + b; }
static __device__ __forceinline__ __half2 __hmul2(__half2 a, __half2 b) { return a * b; }
static __device__ __forceinline__ __half2 __hfma2(__half2 a, __half2 b, __half2 c) { return a * b + c; }
static __device__ __forceinline__ __half __hmax(__half a, __half b) { return __builtin_fmaxf16(a, b); }
static __device__ __forceinline__ __half __hmin(__half a, __half b) { return __builtin_fminf16(a, b); }
