// strata's AMD device header: HIP's device API on clang's AMDGPU builtins, for
// `clang -x hip --offload-arch=gfx942 -nogpuinc -nogpulib` (no ROCm install needed).
// It plays the role of ROCm's hip_runtime.h + device libraries for the subset strata supports
// (docs/amd.md lists it). Wavefronts are 64 lanes wide: warpSize is 64 and ballots are 64-bit.
#pragma once

#define __HIP_PLATFORM_AMD__ 1
#define __HIPCC__ 1
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...) __attribute__((amdgpu_flat_work_group_size(1, 1024)))
#define __restrict__ __restrict

// the C library's own types (stddef/stdint come from clang's resource directory), so host code that
// includes <cstdint> agrees on int64_t; then the host-side runtime API (hipMalloc, dim3, <<<>>>)
#include <stddef.h>
#include <stdint.h>
typedef unsigned int uint;
#include <hip/hip_runtime_api.h>
// host code of HIP programs expects what ROCm's (and CUDA's) runtime headers bring along: math, printf, malloc
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The hidden kernel arguments of code object v5 follow the explicit ones; the implicit-argument
// pointer points at the first: block_count_x/y/z (u32) at 0/4/8, group_size_x/y/z (u16) at 12/14/16.
static __device__ __forceinline__ unsigned __strata_group_size(int d) {
  return ((const unsigned short*)__builtin_amdgcn_implicitarg_ptr())[6 + d];
}
static __device__ __forceinline__ unsigned __strata_block_count(int d) {
  return ((const unsigned*)__builtin_amdgcn_implicitarg_ptr())[d];
}

struct __strata_tid {
  __device__ unsigned get_x() const { return __builtin_amdgcn_workitem_id_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_workitem_id_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_workitem_id_z(); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __strata_bid {
  __device__ unsigned get_x() const { return __builtin_amdgcn_workgroup_id_x(); }
  __device__ unsigned get_y() const { return __builtin_amdgcn_workgroup_id_y(); }
  __device__ unsigned get_z() const { return __builtin_amdgcn_workgroup_id_z(); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __strata_bdim {
  __device__ unsigned get_x() const { return __strata_group_size(0); }
  __device__ unsigned get_y() const { return __strata_group_size(1); }
  __device__ unsigned get_z() const { return __strata_group_size(2); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
struct __strata_gdim {
  __device__ unsigned get_x() const { return __strata_block_count(0); }
  __device__ unsigned get_y() const { return __strata_block_count(1); }
  __device__ unsigned get_z() const { return __strata_block_count(2); }
  __declspec(property(get = get_x)) unsigned x;
  __declspec(property(get = get_y)) unsigned y;
  __declspec(property(get = get_z)) unsigned z;
};
extern const __device__ __attribute__((weak)) __strata_tid threadIdx;
extern const __device__ __attribute__((weak)) __strata_bid blockIdx;
extern const __device__ __attribute__((weak)) __strata_bdim blockDim;
extern const __device__ __attribute__((weak)) __strata_gdim gridDim;

#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

// a constant, not a macro, so host code can still name hipDeviceProp_t::warpSize
static constexpr int warpSize = 64;

// Barriers and fences: a workgroup-scope release/acquire fence around s_barrier, as ROCm does.
static __device__ __forceinline__ void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
static __device__ __forceinline__ void __threadfence_block() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup"); }
static __device__ __forceinline__ void __threadfence() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
static __device__ __forceinline__ void __threadfence_system() { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }

// Lane id and cross-lane operations (64 lanes).
static __device__ __forceinline__ unsigned __lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}
static __device__ __forceinline__ int __shfl(int v, int src, int width = warpSize) {
  int lane = __lane_id();
  int idx = ((lane & ~(width - 1)) + (src & (width - 1)));
  return __builtin_amdgcn_ds_bpermute(idx << 2, v);
}
static __device__ __forceinline__ int __shfl_xor(int v, int mask, int width = warpSize) {
  int lane = __lane_id();
  int idx = lane ^ mask;
  idx = idx >= ((lane + width) & ~(width - 1)) ? lane : idx;
  return __builtin_amdgcn_ds_bpermute(idx << 2, v);
}
static __device__ __forceinline__ int __shfl_down(int v, unsigned delta, int width = warpSize) {
  int lane = __lane_id();
  int idx = ((int)((lane & (width - 1)) + delta) >= width) ? lane : lane + delta;
  return __builtin_amdgcn_ds_bpermute(idx << 2, v);
}
static __device__ __forceinline__ int __shfl_up(int v, unsigned delta, int width = warpSize) {
  int lane = __lane_id();
  int idx = ((int)(lane & (width - 1)) - (int)delta < 0) ? lane : lane - delta;
  return __builtin_amdgcn_ds_bpermute(idx << 2, v);
}
static __device__ __forceinline__ float __shfl(float v, int src, int width = warpSize) {
  return __builtin_bit_cast(float, __shfl(__builtin_bit_cast(int, v), src, width));
}
static __device__ __forceinline__ float __shfl_xor(float v, int mask, int width = warpSize) {
  return __builtin_bit_cast(float, __shfl_xor(__builtin_bit_cast(int, v), mask, width));
}
static __device__ __forceinline__ float __shfl_down(float v, unsigned delta, int width = warpSize) {
  return __builtin_bit_cast(float, __shfl_down(__builtin_bit_cast(int, v), delta, width));
}
static __device__ __forceinline__ float __shfl_up(float v, unsigned delta, int width = warpSize) {
  return __builtin_bit_cast(float, __shfl_up(__builtin_bit_cast(int, v), delta, width));
}
// 32-bit unsigned and 64-bit values: each 32-bit half through the int shuffle
#define __STRATA_SHFL_WIDE(NAME, ARG)                                                                          \
  static __device__ __forceinline__ unsigned NAME(unsigned v, ARG a, int width = warpSize) {                     \
    return (unsigned)NAME((int)v, a, width);                                                                     \
  }                                                                                                              \
  static __device__ __forceinline__ long long NAME(long long v, ARG a, int width = warpSize) {                   \
    int lo = NAME((int)v, a, width), hi = NAME((int)(v >> 32), a, width);                                       \
    return (long long)(((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);                                 \
  }                                                                                                              \
  static __device__ __forceinline__ unsigned long long NAME(unsigned long long v, ARG a, int width = warpSize) { \
    return (unsigned long long)NAME((long long)v, a, width);                                                     \
  }                                                                                                              \
  static __device__ __forceinline__ long NAME(long v, ARG a, int width = warpSize) {                             \
    return (long)NAME((long long)v, a, width);                                                                   \
  }                                                                                                              \
  static __device__ __forceinline__ unsigned long NAME(unsigned long v, ARG a, int width = warpSize) {           \
    return (unsigned long)NAME((long long)v, a, width);                                                          \
  }                                                                                                              \
  static __device__ __forceinline__ double NAME(double v, ARG a, int width = warpSize) {                         \
    return __builtin_bit_cast(double, NAME(__builtin_bit_cast(long long, v), a, width));                         \
  }
__STRATA_SHFL_WIDE(__shfl, int)
__STRATA_SHFL_WIDE(__shfl_xor, int)
__STRATA_SHFL_WIDE(__shfl_down, unsigned)
__STRATA_SHFL_WIDE(__shfl_up, unsigned)
#undef __STRATA_SHFL_WIDE
static __device__ __forceinline__ unsigned long long __ballot(int pred) {
  return __builtin_amdgcn_uicmp(pred != 0, 0, 33);  // 33 = ICMP_NE: a 64-bit lane mask
}
static __device__ __forceinline__ int __any(int pred) { return __ballot(pred) != 0; }
static __device__ __forceinline__ int __all(int pred) {
  return __ballot(pred) == __builtin_amdgcn_read_exec();
}
static __device__ __forceinline__ int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static __device__ __forceinline__ int __popc(unsigned x) { return __builtin_popcount(x); }
static __device__ __forceinline__ int __ffsll(unsigned long long x) { return __builtin_ffsll(x); }
static __device__ __forceinline__ int __clz(int x) { return x == 0 ? 32 : __builtin_clz(x); }

// Atomics (device scope, relaxed), as HIP's atomicAdd & co.
template <typename T> static __device__ __forceinline__ T atomicAdd(T* p, T v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicSub(T* p, T v) {
  return __hip_atomic_fetch_add(p, -v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicMax(T* p, T v) {
  return __hip_atomic_fetch_max(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicMin(T* p, T v) {
  return __hip_atomic_fetch_min(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicAnd(T* p, T v) {
  return __hip_atomic_fetch_and(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicOr(T* p, T v) {
  return __hip_atomic_fetch_or(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicXor(T* p, T v) {
  return __hip_atomic_fetch_xor(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicExch(T* p, T v) {
  return __hip_atomic_exchange(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T> static __device__ __forceinline__ T atomicCAS(T* p, T cmp, T v) {
  __hip_atomic_compare_exchange_strong(p, &cmp, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  return cmp;
}

// Math: clang lowers these builtins natively for AMDGPU (no device library needed).
static __device__ __forceinline__ float expf(float x) { return __builtin_expf(x); }
static __device__ __forceinline__ float exp2f(float x) { return __builtin_exp2f(x); }
static __device__ __forceinline__ float logf(float x) { return __builtin_logf(x); }
static __device__ __forceinline__ float log2f(float x) { return __builtin_log2f(x); }
static __device__ __forceinline__ float sqrtf(float x) { return __builtin_sqrtf(x); }
static __device__ __forceinline__ float rsqrtf(float x) { return __builtin_amdgcn_rsqf(x); }
static __device__ __forceinline__ float fabsf(float x) { return __builtin_fabsf(x); }
static __device__ __forceinline__ float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
static __device__ __forceinline__ float fminf(float a, float b) { return __builtin_fminf(a, b); }
static __device__ __forceinline__ float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
static __device__ __forceinline__ float floorf(float x) { return __builtin_floorf(x); }
static __device__ __forceinline__ float ceilf(float x) { return __builtin_ceilf(x); }
static __device__ __forceinline__ float truncf(float x) { return __builtin_truncf(x); }
static __device__ __forceinline__ float copysignf(float a, float b) { return __builtin_copysignf(a, b); }
static __device__ __forceinline__ double sqrt(double x) { return __builtin_sqrt(x); }
static __device__ __forceinline__ double fabs(double x) { return __builtin_fabs(x); }
static __device__ __forceinline__ double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
static __device__ __forceinline__ float __expf(float x) { return __builtin_amdgcn_exp2f(x * 1.4426950408889634f); }
static __device__ __forceinline__ float __fdividef(float a, float b) { return a * __builtin_amdgcn_rcpf(b); }
static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
#ifndef INFINITY
#define INFINITY __builtin_inff()
#endif
#ifndef NAN
#define NAN __builtin_nanf("")
#endif
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];

// ---- more math (only what LLVM lowers natively for AMDGPU: no device library is linked)
static __device__ __forceinline__ int abs(int x) { return x < 0 ? -x : x; }
static __device__ __forceinline__ long long llabs(long long x) { return x < 0 ? -x : x; }
static __device__ __forceinline__ long labs(long x) { return x < 0 ? -x : x; }
static __device__ __forceinline__ long long min(long long a, long long b) { return a < b ? a : b; }
static __device__ __forceinline__ long long max(long long a, long long b) { return a > b ? a : b; }
static __device__ __forceinline__ unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
static __device__ __forceinline__ float min(float a, float b) { return __builtin_fminf(a, b); }
static __device__ __forceinline__ float max(float a, float b) { return __builtin_fmaxf(a, b); }
static __device__ __forceinline__ double min(double a, double b) { return __builtin_fmin(a, b); }
static __device__ __forceinline__ double max(double a, double b) { return __builtin_fmax(a, b); }
static __device__ __forceinline__ double fmin(double a, double b) { return __builtin_fmin(a, b); }
static __device__ __forceinline__ double fmax(double a, double b) { return __builtin_fmax(a, b); }
static __device__ __forceinline__ double floor(double x) { return __builtin_floor(x); }
static __device__ __forceinline__ double ceil(double x) { return __builtin_ceil(x); }
static __device__ __forceinline__ double trunc(double x) { return __builtin_trunc(x); }
static __device__ __forceinline__ double rint(double x) { return __builtin_rint(x); }
static __device__ __forceinline__ double round(double x) { return __builtin_round(x); }
static __device__ __forceinline__ double copysign(double a, double b) { return __builtin_copysign(a, b); }
static __device__ __forceinline__ float rintf(float x) { return __builtin_rintf(x); }
static __device__ __forceinline__ float nearbyintf(float x) { return __builtin_nearbyintf(x); }
static __device__ __forceinline__ float roundf(float x) { return __builtin_roundf(x); }
// (sinf and cosf are amd_math.h's: LLVM's native lowering loses accuracy for large arguments)
static __device__ __forceinline__ float log10f(float x) { return __builtin_log10f(x); }
static __device__ __forceinline__ float ldexpf(float x, int e) { return __builtin_ldexpf(x, e); }
static __device__ __forceinline__ double ldexp(double x, int e) { return __builtin_ldexp(x, e); }
static __device__ __forceinline__ float __logf(float x) { return __builtin_amdgcn_logf(x) * 0.69314718056f; }
static __device__ __forceinline__ float __log2f(float x) { return __builtin_amdgcn_logf(x); }
static __device__ __forceinline__ float __sinf(float x) { return __builtin_amdgcn_sinf(x * 0.15915494309189535f); }
static __device__ __forceinline__ float __cosf(float x) { return __builtin_amdgcn_cosf(x * 0.15915494309189535f); }
static __device__ __forceinline__ float __frsqrt_rn(float x) { return 1.0f / __builtin_sqrtf(x); }
static __device__ __forceinline__ bool isnan(float x) { return __builtin_isnan(x); }
static __device__ __forceinline__ bool isnan(double x) { return __builtin_isnan(x); }
static __device__ __forceinline__ bool isinf(float x) { return __builtin_isinf(x); }
static __device__ __forceinline__ bool isinf(double x) { return __builtin_isinf(x); }
static __device__ __forceinline__ bool isfinite(float x) { return __builtin_isfinite(x); }
static __device__ __forceinline__ bool isfinite(double x) { return __builtin_isfinite(x); }
static __device__ __forceinline__ bool signbit(float x) { return __builtin_signbit(x); }
static __device__ __forceinline__ bool signbit(double x) { return __builtin_signbit(x); }

// ---- IEEE round-to-nearest intrinsics (the default mode; never contracted) and conversions
static __device__ __forceinline__ float __fadd_rn(float a, float b) {
#pragma clang fp contract(off)
  return a + b; }
static __device__ __forceinline__ float __fsub_rn(float a, float b) {
#pragma clang fp contract(off)
  return a - b; }
static __device__ __forceinline__ float __fmul_rn(float a, float b) {
#pragma clang fp contract(off)
  return a * b; }
static __device__ __forceinline__ float __fdiv_rn(float a, float b) {
#pragma clang fp contract(off)
  return a / b; }
static __device__ __forceinline__ float __fsqrt_rn(float a) {
#pragma clang fp contract(off)
  return __builtin_sqrtf(a); }
static __device__ __forceinline__ float __fmaf_rn(float a, float b, float c) {
#pragma clang fp contract(off)
  return __builtin_fmaf(a, b, c); }
static __device__ __forceinline__ double __dadd_rn(double a, double b) {
#pragma clang fp contract(off)
  return a + b; }
static __device__ __forceinline__ double __dsub_rn(double a, double b) {
#pragma clang fp contract(off)
  return a - b; }
static __device__ __forceinline__ double __dmul_rn(double a, double b) {
#pragma clang fp contract(off)
  return a * b; }
static __device__ __forceinline__ double __ddiv_rn(double a, double b) {
#pragma clang fp contract(off)
  return a / b; }
static __device__ __forceinline__ double __dsqrt_rn(double a) {
#pragma clang fp contract(off)
  return __builtin_sqrt(a); }
static __device__ __forceinline__ double __fma_rn(double a, double b, double c) {
#pragma clang fp contract(off)
  return __builtin_fma(a, b, c); }
static __device__ __forceinline__ int __float2int_rn(float x) { return (int)__builtin_rintf(x); }
static __device__ __forceinline__ int __float2int_rz(float x) { return (int)x; }
static __device__ __forceinline__ int __float2int_rd(float x) { return (int)__builtin_floorf(x); }
static __device__ __forceinline__ int __float2int_ru(float x) { return (int)__builtin_ceilf(x); }
static __device__ __forceinline__ unsigned __float2uint_rn(float x) { return (unsigned)__builtin_rintf(x); }
static __device__ __forceinline__ unsigned __float2uint_rz(float x) { return (unsigned)x; }
static __device__ __forceinline__ int __double2int_rn(double x) { return (int)__builtin_rint(x); }
static __device__ __forceinline__ int __double2int_rz(double x) { return (int)x; }
static __device__ __forceinline__ int __double2int_rd(double x) { return (int)__builtin_floor(x); }
static __device__ __forceinline__ int __double2int_ru(double x) { return (int)__builtin_ceil(x); }
static __device__ __forceinline__ float __int2float_rn(int x) { return (float)x; }
static __device__ __forceinline__ float __uint2float_rn(unsigned x) { return (float)x; }
static __device__ __forceinline__ double __int2double_rn(int x) { return (double)x; }
static __device__ __forceinline__ float __double2float_rn(double x) { return (float)x; }
static __device__ __forceinline__ int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
static __device__ __forceinline__ unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
static __device__ __forceinline__ float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
static __device__ __forceinline__ long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
static __device__ __forceinline__ double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }

static __device__ __forceinline__ int __double2hiint(double x) { return (int)(__builtin_bit_cast(unsigned long long, x) >> 32); }
static __device__ __forceinline__ int __double2loint(double x) { return (int)__builtin_bit_cast(unsigned long long, x); }
static __device__ __forceinline__ double __hiloint2double(int hi, int lo) {
  return __builtin_bit_cast(double, ((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);
}
// clamp to [0, 1]; NaN gives +0 (the comparisons are false for it)
static __device__ __forceinline__ float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }

// ---- integer intrinsics
// __byte_perm(x, y, s): byte k of the result is byte (s >> 4k) & 7 of the eight bytes y:x (x the low four)
static __device__ __forceinline__ unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long v = ((unsigned long long)y << 32) | x;
  unsigned r = 0;
  for (int k = 0; k < 4; ++k) r |= (unsigned)((v >> (((s >> (4 * k)) & 7) * 8)) & 0xff) << (8 * k);
  return r;
}
static __device__ __forceinline__ unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
static __device__ __forceinline__ unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
static __device__ __forceinline__ int __ffs(int x) { return __builtin_ffs(x); }
static __device__ __forceinline__ int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(x); }
static __device__ __forceinline__ int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
static __device__ __forceinline__ unsigned __umulhi(unsigned a, unsigned b) {
  return (unsigned)(((unsigned long long)a * b) >> 32);
}
static __device__ __forceinline__ long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
static __device__ __forceinline__ unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static __device__ __forceinline__ int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
static __device__ __forceinline__ unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffff) * (b & 0xffffff); }
static __device__ __forceinline__ unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) << (s & 31) >> 32);
}
static __device__ __forceinline__ unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s & 31));
}
static __device__ __forceinline__ unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
  return __funnelshift_l(lo, hi, s > 32 ? 32 : s) ;
}
static __device__ __forceinline__ unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
  return s >= 32 ? hi : __funnelshift_r(lo, hi, s);
}
static __device__ __forceinline__ unsigned __sad(int a, int b, unsigned c) { return (a > b ? a - b : b - a) + c; }
static __device__ __forceinline__ unsigned __usad(unsigned a, unsigned b, unsigned c) { return (a > b ? a - b : b - a) + c; }
static __device__ __forceinline__ int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static __device__ __forceinline__ int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }

// ---- more atomics, scopes, warp-level sync and cross-lane operations with masks (masks are ignored:
// a wavefront executes its active lanes together)
static __device__ __forceinline__ unsigned atomicInc(unsigned* p, unsigned v) {
  return __builtin_amdgcn_atomic_inc32(p, v, __ATOMIC_RELAXED, "agent");
}
static __device__ __forceinline__ unsigned atomicDec(unsigned* p, unsigned v) {
  return __builtin_amdgcn_atomic_dec32(p, v, __ATOMIC_RELAXED, "agent");
}
// atomicCAS for the integer widths HIP defines, so the compare and new values convert to the pointer's type
// (CUDA code passes a long long to an unsigned long long CAS)
#define __STRATA_CAS(suffix, scope) \
  static __device__ __forceinline__ int atomicCAS##suffix(int* p, int cmp, int v) { \
    __hip_atomic_compare_exchange_strong(p, &cmp, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED, scope); return cmp; } \
  static __device__ __forceinline__ unsigned atomicCAS##suffix(unsigned* p, unsigned cmp, unsigned v) { \
    __hip_atomic_compare_exchange_strong(p, &cmp, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED, scope); return cmp; } \
  static __device__ __forceinline__ unsigned long long atomicCAS##suffix(unsigned long long* p, unsigned long long cmp, \
                                                                         unsigned long long v) { \
    __hip_atomic_compare_exchange_strong(p, &cmp, v, __ATOMIC_RELAXED, __ATOMIC_RELAXED, scope); return cmp; }
__STRATA_CAS(, __HIP_MEMORY_SCOPE_AGENT)
__STRATA_CAS(_block, __HIP_MEMORY_SCOPE_WORKGROUP)
__STRATA_CAS(_system, __HIP_MEMORY_SCOPE_SYSTEM)
#undef __STRATA_CAS
// the _block (workgroup scope) and _system (all agents and the host) forms of the read-modify-write atomics
#define __STRATA_SCOPED(name, builtin, sign) \
  template <typename T> static __device__ __forceinline__ T name##_block(T* p, T v) { \
    return builtin(p, sign v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP); } \
  template <typename T> static __device__ __forceinline__ T name##_system(T* p, T v) { \
    return builtin(p, sign v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM); }
__STRATA_SCOPED(atomicAdd, __hip_atomic_fetch_add, +)
__STRATA_SCOPED(atomicSub, __hip_atomic_fetch_add, -)
__STRATA_SCOPED(atomicMax, __hip_atomic_fetch_max, +)
__STRATA_SCOPED(atomicMin, __hip_atomic_fetch_min, +)
__STRATA_SCOPED(atomicAnd, __hip_atomic_fetch_and, +)
__STRATA_SCOPED(atomicOr, __hip_atomic_fetch_or, +)
__STRATA_SCOPED(atomicXor, __hip_atomic_fetch_xor, +)
__STRATA_SCOPED(atomicExch, __hip_atomic_exchange, +)
#undef __STRATA_SCOPED
static __device__ __forceinline__ void __syncwarp(unsigned long long mask = ~0ull) {
  (void)mask;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}
// __syncthreads_count/_and/_or: a barrier that also reduces a predicate over the block. Each wavefront adds the
// popcount of its ballot to a workgroup counter between barriers; the first barrier keeps a previous call's
// readers ahead of the reset, the last makes the total visible to all.
static __device__ __forceinline__ int __strata_syncthreads_count(int pred) {
  __shared__ unsigned __strata_block_count_lds;
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) __strata_block_count_lds = 0;
  __syncthreads();
  unsigned long long votes = __ballot(pred);
  if (__lane_id() == (unsigned)__builtin_ctzll(__builtin_amdgcn_read_exec()))
    __hip_atomic_fetch_add(&__strata_block_count_lds, (unsigned)__builtin_popcountll(votes), __ATOMIC_RELAXED,
                           __HIP_MEMORY_SCOPE_WORKGROUP);
  __syncthreads();
  return (int)__strata_block_count_lds;
}
static __device__ __forceinline__ int __syncthreads_count(int pred) { return __strata_syncthreads_count(pred); }
static __device__ __forceinline__ int __syncthreads_and(int pred) {
  return __strata_syncthreads_count(pred) == (int)(blockDim.x * blockDim.y * blockDim.z);
}
static __device__ __forceinline__ int __syncthreads_or(int pred) { return __strata_syncthreads_count(pred) != 0; }
static __device__ __forceinline__ unsigned long long __activemask() { return __builtin_amdgcn_read_exec(); }
template <typename T> static __device__ __forceinline__ T __shfl_sync(unsigned long long m, T v, int s, int w = warpSize) {
  (void)m; return __shfl(v, s, w);
}
template <typename T> static __device__ __forceinline__ T __shfl_xor_sync(unsigned long long m, T v, int s, int w = warpSize) {
  (void)m; return __shfl_xor(v, s, w);
}
template <typename T> static __device__ __forceinline__ T __shfl_down_sync(unsigned long long m, T v, unsigned d, int w = warpSize) {
  (void)m; return __shfl_down(v, d, w);
}
template <typename T> static __device__ __forceinline__ T __shfl_up_sync(unsigned long long m, T v, unsigned d, int w = warpSize) {
  (void)m; return __shfl_up(v, d, w);
}
static __device__ __forceinline__ unsigned long long __ballot_sync(unsigned long long m, int p) { return __ballot(p) & m; }
static __device__ __forceinline__ int __any_sync(unsigned long long m, int p) { return (__ballot(p) & m) != 0; }
static __device__ __forceinline__ int __all_sync(unsigned long long m, int p) {
  return (__ballot(p) & m) == (m & __builtin_amdgcn_read_exec());
}
static __device__ __forceinline__ long long clock64() { return (long long)__builtin_readcyclecounter(); }
static __device__ __forceinline__ long long clock() { return clock64(); }
static __device__ __forceinline__ long long wall_clock64() { return (long long)__builtin_amdgcn_s_memrealtime(); }
static __device__ __forceinline__ void __trap() { __builtin_trap(); }
// ---- printf: compiled with -mprintf-kind=buffered, LLVM rewrites each call into __printf_alloc(bytes) and stores
// the format's id (its text is in the code object's `amdhsa.printf` metadata) and the arguments at the pointer
// it returns. The buffer is the hidden argument hidden_printf_buffer (offset 72 of the code object v5 hidden
// arguments): a header {uint offset; uint size} then the records. A record that does not fit is dropped (NULL:
// that printf returns -1); the host formats the records after the kernel.
extern "C" __device__ int printf(const char*, ...);
extern "C" __device__ __attribute__((weak)) __attribute__((address_space(1))) char* __printf_alloc(unsigned int n) {
  char* buf = *(char* const*)((const char*)__builtin_amdgcn_implicitarg_ptr() + 72);
  if (!buf) return 0;
  unsigned* head = (unsigned*)buf;
  unsigned size = head[1];
  unsigned at = __hip_atomic_fetch_add(head, n, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  if (at + n + 8 > size) return 0;
  return (__attribute__((address_space(1))) char*)(buf + 8 + at);
}

// A failed assert prints ROCm's line ("file:line: function: Device-side assertion `expr' failed.") and then
// executes a debug trap (s_trap 3), which the virtual GPU reports as cudaErrorAssert/hipErrorAssert with the
// assertion from that line. The macro passes the strings as literals, which clang's buffered printf stores
// as immediates (no reads of the code object's data); <assert.h>'s assert, included by host code, calls
// __assert_fail, whose strings the device copies at run time.
#define __STRATA_ASSERT_LINE "%s:%u: %s: Device-side assertion `%s' failed.\n"
extern "C" __device__ __attribute__((weak, noinline)) void __assert_fail(const char* expr, const char* file,
                                                                          unsigned int line, const char* func) {
  printf(__STRATA_ASSERT_LINE, file, line, func, expr);
  __builtin_debugtrap();
}
#if defined(__HIP_DEVICE_COMPILE__)
#define assert(x) ((x) ? (void)0 : (printf(__STRATA_ASSERT_LINE, __FILE__, __LINE__, __func__, #x), \
                                    __builtin_debugtrap()))
#else
#include <assert.h>
#endif

// ---- vector types (HIP's names; 1-, 2- and 4-wide are clang vectors with .x .y .z .w, 3-wide a struct)
#define __STRATA_VEC(T, N) \
  typedef T N##1 __attribute__((ext_vector_type(1))); \
  typedef T N##2 __attribute__((ext_vector_type(2))); \
  typedef T N##4 __attribute__((ext_vector_type(4))); \
  struct N##3 { T x, y, z; }; \
  static __device__ __forceinline__ N##2 make_##N##2(T a, T b) { return N##2{a, b}; } \
  static __device__ __forceinline__ N##3 make_##N##3(T a, T b, T c) { return N##3{a, b, c}; } \
  static __device__ __forceinline__ N##4 make_##N##4(T a, T b, T c, T d) { return N##4{a, b, c, d}; }
__STRATA_VEC(float, float)
__STRATA_VEC(double, double)
__STRATA_VEC(int, int)
__STRATA_VEC(unsigned int, uint)
__STRATA_VEC(long long, longlong)
__STRATA_VEC(unsigned long long, ulonglong)
__STRATA_VEC(short, short)
__STRATA_VEC(unsigned short, ushort)
__STRATA_VEC(signed char, char)
__STRATA_VEC(unsigned char, uchar)
#undef __STRATA_VEC

// ---- helpers for the 16-bit float headers (hip_fp16.h, hip_bf16.h)
// Directed rounding from a round-to-nearest result: when it lies on the wrong side of the exact value x, its
// neighbour towards x is the directed result (its bit pattern one up or down). `b` is the result's bits, `c` the
// sign of (result - x) (0 when exact, or for NaN), `xneg` whether x < 0, `rzero` whether the result is a zero
// (a tiny x steps from the zero of its own sign), `sign` the format's sign bit; dir: 0 towards zero, 1 up, -1
// down. A finite x past the largest finite value rounds to it towards zero and to infinity away from zero.
template <typename U>
static __device__ __forceinline__ U __strata_directed(U b, int c, bool xneg, bool rzero, int dir, U sign) {
  if (c == 0) return b;
  bool away = xneg ? c > 0 : c < 0;  // |result| < |x|
  bool want_away = (dir == 1 && !xneg) || (dir == -1 && xneg);
  if (rzero) b = xneg ? sign : 0;
  if (away && want_away) return b + 1;    // one ulp further from zero
  if (!away && !want_away) return b - 1;  // one ulp towards zero
  return b;
}
static __device__ __forceinline__ int __strata_cmp(double r, double x) { return r > x ? 1 : r < x ? -1 : 0; }
// the 16-bit form: `back` the result's value, x exact as a double (every float and int is)
static __device__ __forceinline__ unsigned short __strata_directed16(unsigned short b, double back, double x, int dir) {
  return __strata_directed<unsigned short>(b, __strata_cmp(back, x), x < 0, back == 0.0, dir, 0x8000);
}
static __device__ __forceinline__ float __strata_directed32(float r, int c, bool xneg, int dir) {
  return __builtin_bit_cast(float, __strata_directed<unsigned>(__builtin_bit_cast(unsigned, r), c, xneg, r == 0.0f,
                                                               dir, 0x80000000u));
}
static __device__ __forceinline__ double __strata_directed64(double r, int c, bool xneg, int dir) {
  return __builtin_bit_cast(double, __strata_directed<unsigned long long>(__builtin_bit_cast(unsigned long long, r), c,
                                                                          xneg, r == 0.0, dir, 1ull << 63));
}
// double -> float rounded to odd (truncate, then set the last bit if anything was cut off): rounding that to a
// format with at least two fewer significand bits (half, bfloat16) to nearest rounds the double only once
static __device__ __forceinline__ float __strata_double2float_odd(double d) {
  float f = (float)d;
  if (d != d || (double)f == d) return f;
  unsigned u = __builtin_bit_cast(unsigned, f);
  if (__builtin_fabs((double)f) > __builtin_fabs(d)) u -= 1;  // rounded away from zero: truncate
  return __builtin_bit_cast(float, u | 1u);
}

// ---- conversions with every rounding. To an integer: rounded to an integer value first (exact in double), then
// saturated to the destination's range, NaN giving 0 (as cvt.r*i on both ISAs). To a float: the round-to-nearest
// conversion, moved one ulp when it lies on the wrong side of the exact value (compared exactly).
static __device__ __forceinline__ double __strata_round_int(double x, int dir) {  // dir 2: to nearest even
  return dir == 2 ? __builtin_rint(x) : dir == 0 ? __builtin_trunc(x) : dir == 1 ? __builtin_ceil(x) : __builtin_floor(x);
}
static __device__ __forceinline__ unsigned __strata_sat_u32(double r) {
  return r != r || r <= 0.0 ? 0u : r >= 4294967295.0 ? 4294967295u : (unsigned)r;
}
static __device__ __forceinline__ long long __strata_sat_i64(double r) {
  return r != r ? 0 : r >= 9223372036854775808.0 ? 9223372036854775807ll
         : r <= -9223372036854775808.0 ? (-9223372036854775807ll - 1) : (long long)r;
}
static __device__ __forceinline__ unsigned long long __strata_sat_u64(double r) {
  return r != r || r <= 0.0 ? 0ull : r >= 18446744073709551616.0 ? ~0ull : (unsigned long long)r;
}
#define __STRATA_F2I(from, F, T, to, sat)                                                                 \
  static __device__ __forceinline__ T __##from##2##to##_rn(F x) { return sat(__strata_round_int(x, 2)); }  \
  static __device__ __forceinline__ T __##from##2##to##_rz(F x) { return sat(__strata_round_int(x, 0)); }  \
  static __device__ __forceinline__ T __##from##2##to##_ru(F x) { return sat(__strata_round_int(x, 1)); }  \
  static __device__ __forceinline__ T __##from##2##to##_rd(F x) { return sat(__strata_round_int(x, -1)); }
__STRATA_F2I(double, double, unsigned, uint, __strata_sat_u32)
__STRATA_F2I(float, float, long long, ll, __strata_sat_i64)
__STRATA_F2I(float, float, unsigned long long, ull, __strata_sat_u64)
__STRATA_F2I(double, double, long long, ll, __strata_sat_i64)
__STRATA_F2I(double, double, unsigned long long, ull, __strata_sat_u64)
#undef __STRATA_F2I
static __device__ __forceinline__ unsigned __float2uint_ru(float x) { return __strata_sat_u32(__builtin_ceil((double)x)); }
static __device__ __forceinline__ unsigned __float2uint_rd(float x) { return __strata_sat_u32(__builtin_floor((double)x)); }

// integer -> float/double: the comparison with the exact integer is done in integers past 2^53
static __device__ __forceinline__ int __strata_cmp_ll(double r, long long v) {  // sign of r - v, r integral
  if (r >= 9223372036854775808.0) return 1;
  long long b = (long long)r;
  return (b > v) - (b < v);
}
static __device__ __forceinline__ int __strata_cmp_ull(double r, unsigned long long v) {
  if (r >= 18446744073709551616.0) return 1;
  unsigned long long b = (unsigned long long)r;
  return (b > v) - (b < v);
}
#define __STRATA_I2F(name, T, R, rn, cmp, dirfn)                                                              \
  static __device__ __forceinline__ R name##_rz(T v) { R r = rn; return dirfn(r, cmp, v < 0, 0); }              \
  static __device__ __forceinline__ R name##_ru(T v) { R r = rn; return dirfn(r, cmp, v < 0, 1); }              \
  static __device__ __forceinline__ R name##_rd(T v) { R r = rn; return dirfn(r, cmp, v < 0, -1); }
__STRATA_I2F(__int2float, int, float, (float)v, __strata_cmp((double)r, (double)v), __strata_directed32)
__STRATA_I2F(__uint2float, unsigned, float, (float)v, __strata_cmp((double)r, (double)v), __strata_directed32)
__STRATA_I2F(__ll2float, long long, float, (float)v, __strata_cmp_ll((double)r, v), __strata_directed32)
__STRATA_I2F(__ull2float, unsigned long long, float, (float)v, __strata_cmp_ull((double)r, v), __strata_directed32)
__STRATA_I2F(__ll2double, long long, double, (double)v, __strata_cmp_ll(r, v), __strata_directed64)
__STRATA_I2F(__ull2double, unsigned long long, double, (double)v, __strata_cmp_ull(r, v), __strata_directed64)
#undef __STRATA_I2F
static __device__ __forceinline__ float __ll2float_rn(long long v) { return (float)v; }
static __device__ __forceinline__ float __ull2float_rn(unsigned long long v) { return (float)v; }
static __device__ __forceinline__ double __ll2double_rn(long long v) { return (double)v; }
static __device__ __forceinline__ double __ull2double_rn(unsigned long long v) { return (double)v; }
static __device__ __forceinline__ double __uint2double_rn(unsigned x) { return (double)x; }
static __device__ __forceinline__ float __double2float_rz(double x) {
  float r = (float)x; return __strata_directed32(r, __strata_cmp((double)r, x), x < 0, 0); }
static __device__ __forceinline__ float __double2float_ru(double x) {
  float r = (float)x; return __strata_directed32(r, __strata_cmp((double)r, x), x < 0, 1); }
static __device__ __forceinline__ float __double2float_rd(double x) {
  float r = (float)x; return __strata_directed32(r, __strata_cmp((double)r, x), x < 0, -1); }

// ---- float32 arithmetic with directed rounding: the round-to-nearest result r of the float operation, and the
// exact value as an unevaluated double sum hi + lo (error-free in double: float operands leave room), whose sign of
// r - (hi + lo) says whether r must move one ulp. NaN stays; an exact zero sum rounded down is -0 unless both
// addends are +0 (IEEE's rule; the other modes keep round-to-nearest's zero).
static __device__ __forceinline__ float __strata_f32_dir(float r, double hi, double lo, int dir) {
  if (r != r) return r;
  int c = (double)r != hi ? __strata_cmp((double)r, hi) : (lo > 0.0 ? -1 : lo < 0.0 ? 1 : 0);
  return __strata_directed32(r, c, hi < 0.0, dir);
}
static __device__ __forceinline__ float __strata_fadd_dir(int dir, float a, float b) {
  float r;
  {
#pragma clang fp contract(off)
    r = a + b;
  }
  double x = a, y = b, hi = x + y, bb = hi - x, lo = (x - (hi - bb)) + (y - bb);  // two-sum
  if (dir == -1 && r == 0.0f && hi == 0.0 && !(a == 0.0f && b == 0.0f && !__builtin_signbit(a) && !__builtin_signbit(b)))
    return -0.0f;
  return __strata_f32_dir(r, hi, lo, dir);
}
static __device__ __forceinline__ float __strata_fmul_dir(int dir, float a, float b) {
  float r;
  {
#pragma clang fp contract(off)
    r = a * b;
  }
  return __strata_f32_dir(r, (double)a * (double)b, 0.0, dir);  // exact: 24 x 24 bits
}
// a / b: the double quotient's remainder (exact by fma) tells on which side the exact quotient is
static __device__ __forceinline__ float __strata_fdiv_dir(int dir, float a, float b) {
  float r;
  {
#pragma clang fp contract(off)
    r = a / b;
  }
  double q = (double)a / (double)b, rem = __builtin_fma(-q, (double)b, (double)a);
  return __strata_f32_dir(r, q, (b < 0.0f ? -rem : rem), dir);
}
static __device__ __forceinline__ float __strata_fsqrt_dir(int dir, float a) {
  float r = __builtin_sqrtf(a);
  double s = __builtin_sqrt((double)a);
  return __strata_f32_dir(r, s, __builtin_fma(-s, s, (double)a), dir);
}
static __device__ __forceinline__ float __strata_fmaf_dir(int dir, float a, float b, float c) {
  float r = __builtin_fmaf(a, b, c);
  double p = (double)a * (double)b, z = c, hi = p + z, bb = hi - p, lo = (p - (hi - bb)) + (z - bb);
  bool pneg = __builtin_signbit(a) != __builtin_signbit(b);
  if (dir == -1 && r == 0.0f && hi == 0.0 && !(p == 0.0 && c == 0.0f && !pneg && !__builtin_signbit(c)))
    return -0.0f;
  return __strata_f32_dir(r, hi, lo, dir);
}
#define __STRATA_FDIR(name, impl, params, ...)                                                                \
  static __device__ __forceinline__ float name##_rz params { return impl(0, __VA_ARGS__); }                    \
  static __device__ __forceinline__ float name##_ru params { return impl(1, __VA_ARGS__); }                    \
  static __device__ __forceinline__ float name##_rd params { return impl(-1, __VA_ARGS__); }
__STRATA_FDIR(__fadd, __strata_fadd_dir, (float a, float b), a, b)
__STRATA_FDIR(__fsub, __strata_fadd_dir, (float a, float b), a, -b)
__STRATA_FDIR(__fmul, __strata_fmul_dir, (float a, float b), a, b)
__STRATA_FDIR(__fdiv, __strata_fdiv_dir, (float a, float b), a, b)
__STRATA_FDIR(__fmaf, __strata_fmaf_dir, (float a, float b, float c), a, b, c)
__STRATA_FDIR(__fsqrt, __strata_fsqrt_dir, (float a), a)
__STRATA_FDIR(__frcp, __strata_fdiv_dir, (float a), 1.0f, a)
#undef __STRATA_FDIR
static __device__ __forceinline__ float __frcp_rn(float a) {
#pragma clang fp contract(off)
  return 1.0f / a;
}

// ---- float64 arithmetic with directed rounding: the round-to-nearest result r, moved one ulp when it lies on the
// wrong side of the exact value. The exact value is held as 2^k (hi + lo) with the operands' significands (frexp),
// where the error-free residuals (two-sum, fma) cannot underflow or overflow; r is scaled by 2^-k to compare.
static __device__ __forceinline__ int __strata_cmp_scaled(double r, int k, double hi, double lo) {  // sign(r - exact)
  if (__builtin_isinf(r)) return r > 0 ? 1 : -1;  // finite operands: an overflow, past the exact value
  double rs = __builtin_ldexp(r, -k);             // exact: rs is within a factor of two of hi (or r underflowed)
  return rs != hi ? __strata_cmp(rs, hi) : (lo > 0.0 ? -1 : lo < 0.0 ? 1 : 0);
}
// the sign of t0 + t1 + t2 + t3, exactly: a nonoverlapping expansion by two-sums (Shewchuk), whose largest nonzero
// component has the sum's sign (every term here is in [2^-1010, 4] or zero: no rounding error is lost)
static __device__ __forceinline__ int __strata_sign_sum4(double t0, double t1, double t2, double t3) {
  double e[4] = {t0, 0.0, 0.0, 0.0};
  int m = 1;
  double t[3] = {t1, t2, t3};
  for (int j = 0; j < 3; ++j) {
    double q = t[j];
    int w = 0;
    for (int i = 0; i < m; ++i) {
      double s = q + e[i], bb = s - q, err = (q - (s - bb)) + (e[i] - bb);
      if (err != 0.0) e[w++] = err;
      q = s;
    }
    e[w++] = q;
    m = w;
  }
  for (int i = m - 1; i >= 0; --i)
    if (e[i] != 0.0) return e[i] > 0.0 ? 1 : -1;
  return 0;
}
static __device__ __forceinline__ double __strata_dadd_dir(int dir, double a, double b) {
  double r;
  {
#pragma clang fp contract(off)
    r = a + b;
  }
  if (r != r || !__builtin_isfinite(a) || !__builtin_isfinite(b)) return r;
  int c;
  if (__builtin_isinf(r)) {
    c = r > 0 ? 1 : -1;
  } else {
    double bb = r - a, lo = (a - (r - bb)) + (b - bb);  // a + b = r + lo exactly
    c = lo > 0.0 ? -1 : lo < 0.0 ? 1 : 0;
  }
  if (dir == -1 && r == 0.0 && c == 0 && !(a == 0.0 && b == 0.0 && !__builtin_signbit(a) && !__builtin_signbit(b)))
    return -0.0;
  return __strata_directed64(r, c, __builtin_signbit(r), dir);
}
static __device__ __forceinline__ double __strata_dmul_dir(int dir, double a, double b) {
  double r;
  {
#pragma clang fp contract(off)
    r = a * b;
  }
  if (r != r || !__builtin_isfinite(a) || !__builtin_isfinite(b) || a == 0.0 || b == 0.0) return r;
  int ea, eb;
  double ma = __builtin_frexp(a, &ea), mb = __builtin_frexp(b, &eb), hi = ma * mb;
  return __strata_directed64(r, __strata_cmp_scaled(r, ea + eb, hi, __builtin_fma(ma, mb, -hi)),
                             __builtin_signbit(r), dir);
}
static __device__ __forceinline__ double __strata_ddiv_dir(int dir, double a, double b) {
  double r;
  {
#pragma clang fp contract(off)
    r = a / b;
  }
  if (r != r || !__builtin_isfinite(a) || !__builtin_isfinite(b) || a == 0.0 || b == 0.0) return r;
  int ea, eb;
  double ma = __builtin_frexp(a, &ea), mb = __builtin_frexp(b, &eb), hi = ma / mb;
  double rem = __builtin_fma(-hi, mb, ma);  // ma - hi * mb exactly: the quotient's side of hi is rem / mb's
  return __strata_directed64(r, __strata_cmp_scaled(r, ea - eb, hi, mb < 0.0 ? -rem : rem), __builtin_signbit(r), dir);
}
static __device__ __forceinline__ double __strata_dsqrt_dir(int dir, double a) {
  double r = __builtin_sqrt(a);
  if (r != r || !__builtin_isfinite(a) || a == 0.0) return r;
  int e;
  double m = __builtin_frexp(a, &e);
  if (e & 1) { m *= 2.0; e -= 1; }
  double hi = __builtin_sqrt(m);
  return __strata_directed64(r, __strata_cmp_scaled(r, e / 2, hi, __builtin_fma(-hi, hi, m)), false, dir);
}
static __device__ __forceinline__ double __strata_dfma_dir(int dir, double a, double b, double c) {
  double r = __builtin_fma(a, b, c);
  if (r != r || !__builtin_isfinite(a) || !__builtin_isfinite(b) || !__builtin_isfinite(c)) return r;
  int cmp = 0;  // sign(r - (a * b + c)); a zero product leaves c, which r is
  if (a != 0.0 && b != 0.0) {
    int ea, eb, ec;
    double ma = __builtin_frexp(a, &ea), mb = __builtin_frexp(b, &eb), mc = __builtin_frexp(c, &ec);
    double ph = ma * mb, pl = __builtin_fma(ma, mb, -ph);  // the product is 2^(ea+eb) (ph + pl) exactly
    int kp = ea + eb;
    if (__builtin_isinf(r)) {
      cmp = r > 0 ? 1 : -1;  // finite operands: an overflow
    } else if (c == 0.0) {
      cmp = __strata_cmp_scaled(r, kp, ph, pl);
    } else {
      int k = (kp > ec ? kp : ec) + 1, dp = kp - k, dc = ec - k;  // scaled by 2^-k, both terms are below 1
      double rs = __builtin_ldexp(r, -k);                          // exact (r is within a factor 2 of the sum)
      if (dp < -900 || dc < -900) {
        // one term is under 2^-900 of the other: when r differs from the larger term it differs by more than
        // that, else the smaller term's sign decides
        bool small_p = dp < dc;
        cmp = small_p ? __strata_sign_sum4(rs, -__builtin_ldexp(mc, dc), 0.0, 0.0)
                      : __strata_sign_sum4(rs, -__builtin_ldexp(ph, dp), -__builtin_ldexp(pl, dp), 0.0);
        if (cmp == 0) cmp = (small_p ? ph : mc) > 0.0 ? -1 : 1;
      } else {
        cmp = __strata_sign_sum4(rs, -__builtin_ldexp(ph, dp), -__builtin_ldexp(pl, dp), -__builtin_ldexp(mc, dc));
      }
    }
  }
  if (dir == -1 && r == 0.0 && cmp == 0) {  // an exact zero rounded down: -0 unless both addends are +0
    bool pos_product = (a == 0.0 || b == 0.0) && __builtin_signbit(a) == __builtin_signbit(b);
    return pos_product && !__builtin_signbit(c) && c == 0.0 ? 0.0 : -0.0;
  }
  return __strata_directed64(r, cmp, __builtin_signbit(r), dir);
}
#define __STRATA_DDIR(name, impl, params, ...)                                                                 \
  static __device__ __forceinline__ double name##_rz params { return impl(0, __VA_ARGS__); }                   \
  static __device__ __forceinline__ double name##_ru params { return impl(1, __VA_ARGS__); }                   \
  static __device__ __forceinline__ double name##_rd params { return impl(-1, __VA_ARGS__); }
__STRATA_DDIR(__dadd, __strata_dadd_dir, (double a, double b), a, b)
__STRATA_DDIR(__dsub, __strata_dadd_dir, (double a, double b), a, -b)
__STRATA_DDIR(__dmul, __strata_dmul_dir, (double a, double b), a, b)
__STRATA_DDIR(__ddiv, __strata_ddiv_dir, (double a, double b), a, b)
__STRATA_DDIR(__fma, __strata_dfma_dir, (double a, double b, double c), a, b, c)
__STRATA_DDIR(__dsqrt, __strata_dsqrt_dir, (double a), a)
__STRATA_DDIR(__drcp, __strata_ddiv_dir, (double a), 1.0, a)
#undef __STRATA_DDIR
static __device__ __forceinline__ double __drcp_rn(double a) {
#pragma clang fp contract(off)
  return 1.0 / a;
}

// the math functions a device library would provide
#include <hip/amd_math.h>
