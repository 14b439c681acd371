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
  checkCudaErrors(cudaMalloc(&d, sizeof h));
  checkCudaErrors(cudaMalloc(&dout, sizeof out));
  checkCudaErrors(cudaMalloc(&totals, B * sizeof(int)));
  checkCudaErrors(cudaMalloc(&tot_scan, B * sizeof(int)));
  checkCudaErrors(cudaMalloc(&dummy, sizeof(int)));
  checkCudaErrors(cudaMemset(totals, 0, B * sizeof(int)));
  checkCudaErrors(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  block_scan<B><<<blocks, B>>>(d, dout, totals, n);
  block_scan<B><<<1, B>>>(totals, tot_scan, dummy, blocks);
  add_carry<<<blocks - 1, B>>>(dout, tot_scan, n, B);
  checkCudaErrors(cudaMemcpy(out, dout, sizeof out, cudaMemcpyDeviceToHost));
  int bad = 0, run = 0;
  for (int i = 0; i < n; ++i) { run += h[i]; bad += out[i] != run; }
  printf("out[127] %d out[128] %d out[999] %d mismatches %d\n", out[127], out[128], out[999], bad);
  return bad != 0;
}
