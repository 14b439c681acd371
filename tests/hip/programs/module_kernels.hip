// Kernels for module_api.hip, built separately as a code object: strata hipcc --genco module_kernels.hip -o k.co
#include <hip/hip_runtime.h>

__device__ float offset;

extern "C" __global__ void scale_add(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + offset;
}
