/* strata HIP headers: hip/device_functions.h. HIP's device functions (__popc, __clz, __brev, __mul24, ...)
 * are CUDA's, which NVRTC declares itself; the HIP-only ones come with hip_runtime.h.
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_DEVICE_FUNCTIONS_H
#define STRATA_HIP_DEVICE_FUNCTIONS_H
#include <hip/hip_runtime.h>
#endif /* STRATA_HIP_DEVICE_FUNCTIONS_H */
