/* strata HIP headers: hip_fp16.h. HIP's half-precision API (__half, __half2, __float2half, __hadd, ...)
 * uses CUDA's names, so on the NVIDIA platform it is cuda_fp16.h.
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_FP16_H
#define STRATA_HIP_FP16_H
#include <hip/hip_common.h>
#include <cuda_fp16.h>
#endif /* STRATA_HIP_FP16_H */
