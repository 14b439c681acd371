/* strata's hip/hip_cooperative_groups.h: HIP's cooperative groups are CUDA's API under the same
 * namespace (`cooperative_groups`), so on this NVIDIA-style path the header is CUDA's, which NVRTC's
 * bundled headers provide. Tiles and `thread_block_tile<N>::size()` follow the 32-lane warp here. */
#ifndef STRATA_HIP_COOPERATIVE_GROUPS_H
#define STRATA_HIP_COOPERATIVE_GROUPS_H
#include <hip/hip_runtime.h>
#include <cooperative_groups.h>
#endif
