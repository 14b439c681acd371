/* strata HIP headers: hip_runtime.h, HIP's device API spelled in terms of CUDA's, for NVRTC.
 *
 * This is how HIP runs on NVIDIA platforms: HIP kernel source is compiled by NVIDIA's compiler after a
 * header maps HIP's names onto CUDA's. Most of HIP's device API already *is* CUDA's (threadIdx,
 * __syncthreads, atomicAdd, __shfl_down_sync, __popc, math functions); this header adds the HIP-only
 * spellings. strata.hip.compile passes -I<this directory's parent>, pre-includes this header and defines
 * __HIPCC__ and __HIPCC_RTC__, as hipRTC does.
 * Written for strata; this is not AMD's header.
 */
#ifndef STRATA_HIP_RUNTIME_H
#define STRATA_HIP_RUNTIME_H

#include <hip/hip_runtime_api.h>

/* --- Coordinates: HIP's older names for CUDA's built-in variables ---------------------------------- */
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

/* --- Kernel-definition helpers ---------------------------------------------------------------------- */
/* HIP_DYNAMIC_SHARED(float, s) declares the block's dynamic shared memory as `float s[]`. */
#define HIP_DYNAMIC_SHARED(type, var) extern __shared__ type var[];
#define HIP_DYNAMIC_SHARED_ATTRIBUTE
/* Protects template arguments' commas inside hipLaunchKernelGGL's macro arguments. */
#define HIP_KERNEL_NAME(...) __VA_ARGS__
#define HIP_SYMBOL(symbol) symbol
/* A host-side launch; in device code it would be a device-side launch, which the virtual GPU lacks.
 * Defined so shared headers that mention it still compile; strata launches from Python. */
#define hipLaunchKernelGGL(kernel, grid, block, shared_mem, stream, ...) \
    kernel<<<(grid), (block), (shared_mem), (stream)>>>(__VA_ARGS__)

/* --- Warp shuffles: HIP's unsynchronized forms are CUDA's _sync forms over the whole warp ------------ */
#define __STRATA_HIP_FULL_WARP 0xffffffffu

template <typename T>
__device__ __forceinline__ T __shfl(T var, int src_lane, int width = warpSize) {
    return __shfl_sync(__STRATA_HIP_FULL_WARP, var, src_lane, width);
}
template <typename T>
__device__ __forceinline__ T __shfl_up(T var, unsigned int delta, int width = warpSize) {
    return __shfl_up_sync(__STRATA_HIP_FULL_WARP, var, delta, width);
}
template <typename T>
__device__ __forceinline__ T __shfl_down(T var, unsigned int delta, int width = warpSize) {
    return __shfl_down_sync(__STRATA_HIP_FULL_WARP, var, delta, width);
}
template <typename T>
__device__ __forceinline__ T __shfl_xor(T var, int lane_mask, int width = warpSize) {
    return __shfl_xor_sync(__STRATA_HIP_FULL_WARP, var, lane_mask, width);
}

/* --- Warp votes --------------------------------------------------------------------------------------
 * HIP votes over the lanes that are active, and __ballot returns a 64-bit mask (a wavefront may have 64
 * lanes on AMD GPUs; a warp here has 32, so the upper half is zero). CUDA's headers still declare the
 * old unsynchronized __ballot/__any/__all with 32-bit results, so HIP's names are macros for these. */
__device__ __forceinline__ unsigned long long __strata_hip_ballot(int predicate) {
    return __ballot_sync(__activemask(), predicate);
}
__device__ __forceinline__ int __strata_hip_any(int predicate) { return __any_sync(__activemask(), predicate); }
__device__ __forceinline__ int __strata_hip_all(int predicate) { return __all_sync(__activemask(), predicate); }
/* Object-like, not function-like: libcu++ (under cooperative groups and curand) declares
 * `struct __any { __any(...); }`, which a function-like macro would rewrite into a call. */
#define __ballot __strata_hip_ballot
#define __any __strata_hip_any
#define __all __strata_hip_all

/* --- Lane queries (HIP device functions without a CUDA function of the same name) ------------------ */
__device__ __forceinline__ unsigned int __lane_id() {
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
__device__ __forceinline__ unsigned long long __lanemask_lt() {
    unsigned int mask;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
    return mask;
}
__device__ __forceinline__ unsigned long long __lanemask_gt() {
    unsigned int mask;
    asm volatile("mov.u32 %0, %%lanemask_gt;" : "=r"(mask));
    return mask;
}
__device__ __forceinline__ unsigned long long __lanemask_eq() {
    unsigned int mask;
    asm volatile("mov.u32 %0, %%lanemask_eq;" : "=r"(mask));
    return mask;
}

/* --- Atomics: HIP's safe/unsafe floating-point adds are plain atomicAdd on NVIDIA ------------------- */
template <typename T>
__device__ __forceinline__ T unsafeAtomicAdd(T* address, T value) { return atomicAdd(address, value); }
template <typename T>
__device__ __forceinline__ T safeAtomicAdd(T* address, T value) { return atomicAdd(address, value); }

#endif /* STRATA_HIP_RUNTIME_H */
