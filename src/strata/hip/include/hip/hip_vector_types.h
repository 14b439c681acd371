/* strata HIP headers: hip_vector_types.h. HIP's short vectors (float4, int2, make_float4, ...) are
 * CUDA's, which NVRTC provides built in. Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_VECTOR_TYPES_H
#define STRATA_HIP_VECTOR_TYPES_H
#include <hip/hip_common.h>
#endif /* STRATA_HIP_VECTOR_TYPES_H */
