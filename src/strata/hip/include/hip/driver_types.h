/* strata HIP headers: hip/driver_types.h. The types device-visible code takes from it (hipMemcpyKind,
 * hipError_t, the opaque handles) are declared in hip_runtime_api.h.
 * Written for strata; this is not AMD's header. */
#ifndef STRATA_HIP_DRIVER_TYPES_H
#define STRATA_HIP_DRIVER_TYPES_H
#include <hip/hip_runtime_api.h>
#endif /* STRATA_HIP_DRIVER_TYPES_H */
