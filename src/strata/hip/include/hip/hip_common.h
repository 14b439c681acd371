/* strata HIP headers: platform macros. HIP code runs here the way HIP runs on NVIDIA hardware, so the
 * platform is NVIDIA (__HIP_PLATFORM_NVIDIA__, and the older __HIP_PLATFORM_NVCC__) and __HIP__, which only
 * the AMD (HIP-Clang) compiler defines, stays undefined. The compiler underneath is NVRTC.
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_COMMON_H
#define STRATA_HIP_COMMON_H

#if !defined(__CUDACC__)
#error "strata's HIP headers target the NVIDIA platform: compile with NVRTC through strata.hip.compile"
#endif
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#error "strata's HIP headers implement the NVIDIA platform; __HIP_PLATFORM_AMD__ must not be defined"
#endif

#ifndef __HIP_PLATFORM_NVIDIA__
#define __HIP_PLATFORM_NVIDIA__ 1
#endif
#ifndef __HIP_PLATFORM_NVCC__
#define __HIP_PLATFORM_NVCC__ 1
#endif

/* NVRTC compiles device code only, so every translation unit it sees is a device compilation. */
#if defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
#define __HIP_DEVICE_COMPILE__ 1
#endif

/* What the device supports, spelled the way portable HIP code tests for it. */
#if defined(__CUDA_ARCH__)
#define __HIP_ARCH_HAS_GLOBAL_INT32_ATOMICS__ 1
#define __HIP_ARCH_HAS_GLOBAL_FLOAT_ATOMIC_EXCH__ 1
#define __HIP_ARCH_HAS_SHARED_INT32_ATOMICS__ 1
#define __HIP_ARCH_HAS_SHARED_FLOAT_ATOMIC_EXCH__ 1
#define __HIP_ARCH_HAS_FLOAT_ATOMIC_ADD__ 1
#define __HIP_ARCH_HAS_GLOBAL_INT64_ATOMICS__ 1
#define __HIP_ARCH_HAS_SHARED_INT64_ATOMICS__ 1
#define __HIP_ARCH_HAS_DOUBLES__ 1
#define __HIP_ARCH_HAS_WARP_VOTE__ 1
#define __HIP_ARCH_HAS_WARP_BALLOT__ 1
#define __HIP_ARCH_HAS_WARP_SHUFFLE__ 1
#define __HIP_ARCH_HAS_WARP_FUNNEL_SHIFT__ 1
#define __HIP_ARCH_HAS_THREAD_FENCE_SYSTEM__ 1
#define __HIP_ARCH_HAS_SYNC_THREAD_EXT__ 1
#define __HIP_ARCH_HAS_SURFACE_FUNCS__ 0
#define __HIP_ARCH_HAS_3DGRID__ 1
/* Kernels launching kernels needs relocatable device code, which the virtual GPU does not link. */
#define __HIP_ARCH_HAS_DYNAMIC_PARALLEL__ 0
#endif

#endif /* STRATA_HIP_COMMON_H */
