/* strata HIP headers: hip_bf16.h. HIP's bfloat16 type is __hip_bfloat16 (CUDA: __nv_bfloat16); the
 * functions on it (__float2bfloat16, __bfloat162float, __hadd, ...) keep CUDA's names.
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_BF16_H
#define STRATA_HIP_BF16_H
#include <hip/hip_common.h>
#include <cuda_bf16.h>
typedef __nv_bfloat16 __hip_bfloat16;
typedef __nv_bfloat162 __hip_bfloat162;
typedef __nv_bfloat16_raw __hip_bfloat16_raw;
typedef __nv_bfloat162_raw __hip_bfloat162_raw;
#endif /* STRATA_HIP_BF16_H */
