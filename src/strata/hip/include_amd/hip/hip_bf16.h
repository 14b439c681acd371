// strata's AMD bfloat16 header: __hip_bfloat16 is clang's __bf16 (arithmetic goes through float).
#pragma once
#include <hip/hip_runtime.h>

typedef __bf16 __hip_bfloat16;

static __device__ __forceinline__ __hip_bfloat16 __float2bfloat16(float f) { return (__bf16)f; }
static __device__ __forceinline__ float __bfloat162float(__hip_bfloat16 h) { return (float)h; }
