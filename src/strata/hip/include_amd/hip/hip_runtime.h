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
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((amdgpu_flat_work_group_size(1, 1024)))
#define __restrict__ __restrict

typedef unsigned long size_t;
typedef unsigned int uint;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;

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

#define warpSize 64

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
#define INFINITY __builtin_inff()
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
