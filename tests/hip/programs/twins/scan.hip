#include "hip/hip_runtime.h"
// Inclusive prefix sum over several blocks: a shared-memory Hillis-Steele scan per block, a scan of the
// block totals, then each block adds its carry.
#include "common.h"

template <int BLOCK>
__global__ void block_scan(const int* in, int* out, int* totals, int n) {
  __shared__ int buf[2][BLOCK];
  int t = threadIdx.x, i = blockIdx.x * BLOCK + t, src = 0;
  buf[0][t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int off = 1; off < BLOCK; off *= 2) {
    buf[1 - src][t] = buf[src][t] + (t >= off ? buf[src][t - off] : 0);
    src = 1 - src;
    __syncthreads();
  }
  if (i < n) out[i] = buf[src][t];
  if (t == BLOCK - 1) totals[blockIdx.x] = buf[src][t];
}

__global__ void add_carry(int* out, const int* scanned_totals, int n, int block) {
  int i = (blockIdx.x + 1) * block + threadIdx.x;
  if (i < n) out[i] += scanned_totals[blockIdx.x];
}

int main() {
  const int n = 1000, B = 128, blocks = (n + B - 1) / B;
  int h[n], out[n];
  for (int i = 0; i < n; ++i) h[i] = (i % 7) - 2;
  int *d, *dout, *totals, *tot_scan, *dummy;
  checkCudaErrors(hipMalloc(&d, sizeof h));
  checkCudaErrors(hipMalloc(&dout, sizeof out));
  checkCudaErrors(hipMalloc(&totals, B * sizeof(int)));
  checkCudaErrors(hipMalloc(&tot_scan, B * sizeof(int)));
  checkCudaErrors(hipMalloc(&dummy, sizeof(int)));
  checkCudaErrors(hipMemset(totals, 0, B * sizeof(int)));
  checkCudaErrors(hipMemcpy(d, h, sizeof h, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(HIP_KERNEL_NAME(block_scan<B>), blocks, B, 0, 0, d, dout, totals, n);
  hipLaunchKernelGGL(HIP_KERNEL_NAME(block_scan<B>), 1, B, 0, 0, totals, tot_scan, dummy, blocks);
  hipLaunchKernelGGL(add_carry, blocks - 1, B, 0, 0, dout, tot_scan, n, B);
  checkCudaErrors(hipMemcpy(out, dout, sizeof out, hipMemcpyDeviceToHost));
  int bad = 0, run = 0;
  for (int i = 0; i < n; ++i) { run += h[i]; bad += out[i] != run; }
  printf("out[127] %d out[128] %d out[999] %d mismatches %d\n", out[127], out[128], out[999], bad);
  return bad != 0;
}
