#include <hip/hip_runtime.h>
// Porting test: a warp-shuffle sum. `warp_sum32` was written for 32-lane CUDA warps (offsets from 16
// down, lane 0 of every 32 adds its partial); on a 64-lane wavefront lanes 32..63 are never folded in.
extern "C" __global__ void warp_sum32(const float* x, float* out) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down(v, off);
  if ((threadIdx.x & 31) == 0 && threadIdx.x < 32) atomicAdd(out, v);
}
// The portable version: offsets from warpSize/2, one partial per wavefront.
extern "C" __global__ void warp_sum(const float* x, float* out) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_down(v, off);
  if ((threadIdx.x % warpSize) == 0) atomicAdd(out, v);
}
