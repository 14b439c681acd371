// A sum reduction: shared memory (LDS) down to one wavefront, then cross-lane shuffles over warpSize lanes.
// A second kernel keeps the classic CUDA assumption of 32-lane warps (shuffle offsets from 16) while
// writing one partial per warpSize lanes: on a 64-lane wavefront it drops half of every wave's sum.
#include "check.h"

__device__ int wave_sum(int v, int first_offset) {
  for (int offset = first_offset; offset > 0; offset /= 2) v += __shfl_down(v, offset);
  return v;
}

template <bool Assume32>
__global__ void block_sum(const int* in, int n, int* out) {
  extern __shared__ int partial[];  // one slot per wavefront
  int sum = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) sum += in[i];
  sum = wave_sum(sum, Assume32 ? 16 : warpSize / 2);
  int lane = threadIdx.x % warpSize, wave = threadIdx.x / warpSize;
  if (lane == 0) partial[wave] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    int total = 0;
    for (int w = 0; w < (int)(blockDim.x / warpSize); ++w) total += partial[w];
    atomicAdd(out, total);
  }
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
  int* h = (int*)malloc(n * sizeof(int));
  long long expect = 0;
  for (int i = 0; i < n; ++i) { h[i] = (i * 37) % 101 - 50; expect += h[i]; }
  hipDeviceProp_t prop;
  HIP_CHECK(hipGetDeviceProperties(&prop, 0));
  printf("device %s warpSize %d\n", prop.name, prop.warpSize);
  int *din, *dout;
  HIP_CHECK(hipMalloc(&din, n * sizeof(int)));
  HIP_CHECK(hipMalloc(&dout, 2 * sizeof(int)));
  HIP_CHECK(hipMemcpy(din, h, n * sizeof(int), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(dout, 0, 2 * sizeof(int)));
  int threads = 256, blocks = 64;
  size_t lds = threads / prop.warpSize * sizeof(int);
  block_sum<false><<<blocks, threads, lds>>>(din, n, dout);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(block_sum<true>), dim3(blocks), dim3(threads), lds, 0, din, n, dout + 1);
  HIP_CHECK(hipGetLastError());
  int got[2];
  HIP_CHECK(hipMemcpy(got, dout, sizeof got, hipMemcpyDeviceToHost));
  printf("sum with warpSize %d\n", got[0]);
  printf("sum assuming 32 lanes %d\n", got[1]);
  printf("expected %lld\n", expect);
  printf("%s\n", got[0] == expect ? "PASS" : "FAIL");
  HIP_CHECK(hipFree(din));
  HIP_CHECK(hipFree(dout));
  free(h);
  return got[0] == expect ? 0 : 1;
}
