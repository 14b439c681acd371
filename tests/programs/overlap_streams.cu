// Copy/kernel overlap as in the simpleStreams sample: the same work (copy a chunk in, a kernel on it, copy
// it back) on one stream, then split over four streams so one chunk's copies overlap another's kernel.
// Events time both on the device's timeline; the program checks the results and that splitting helps.
#include <cmath>
#include "common.h"

__global__ void work(float* x, int n, int iters) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  for (int k = 0; k < iters; ++k) v = v * 0.999f + 0.5f;
  x[i] = v;
}

int main() {
  const int n = 1 << 20, nstreams = 4, chunk = n / nstreams, iters = 8;
  float *h, *d;
  checkCudaErrors(cudaMallocHost(&h, n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&d, n * sizeof(float)));
  cudaStream_t s[nstreams];
  for (int i = 0; i < nstreams; ++i) checkCudaErrors(cudaStreamCreate(&s[i]));
  cudaEvent_t start, stop, done[nstreams];
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  for (int i = 0; i < nstreams; ++i) checkCudaErrors(cudaEventCreate(&done[i]));

  // one stream: copy everything in, one kernel, copy everything out
  for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
  checkCudaErrors(cudaEventRecord(start, s[0]));
  checkCudaErrors(cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s[0]));
  work<<<n / 256, 256, 0, s[0]>>>(d, n, iters);
  checkCudaErrors(cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s[0]));
  checkCudaErrors(cudaEventRecord(stop, s[0]));
  checkCudaErrors(cudaEventSynchronize(stop));
  float serial_ms = 0;
  checkCudaErrors(cudaEventElapsedTime(&serial_ms, start, stop));
  float first = h[123];

  // four streams, a chunk each: stream i's copies overlap stream j's kernel
  for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
  checkCudaErrors(cudaEventRecord(start, s[0]));
  for (int i = 1; i < nstreams; ++i) checkCudaErrors(cudaStreamWaitEvent(s[i], start, 0));
  for (int i = 0; i < nstreams; ++i) {
    float* dc = d + i * chunk;
    float* hc = h + i * chunk;
    checkCudaErrors(cudaMemcpyAsync(dc, hc, chunk * sizeof(float), cudaMemcpyHostToDevice, s[i]));
    work<<<chunk / 256, 256, 0, s[i]>>>(dc, chunk, iters);
    checkCudaErrors(cudaMemcpyAsync(hc, dc, chunk * sizeof(float), cudaMemcpyDeviceToHost, s[i]));
    checkCudaErrors(cudaEventRecord(done[i], s[i]));
  }
  for (int i = 1; i < nstreams; ++i) checkCudaErrors(cudaStreamWaitEvent(s[0], done[i], 0));
  checkCudaErrors(cudaEventRecord(stop, s[0]));
  checkCudaErrors(cudaEventSynchronize(stop));
  float streams_ms = 0;
  checkCudaErrors(cudaEventElapsedTime(&streams_ms, start, stop));

  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float v = (float)(i % 100);
    for (int k = 0; k < iters; ++k) v = fmaf(v, 0.999f, 0.5f);  // nvcc contracts the kernel's to an FMA
    if (h[i] != v) ++bad;
  }
  printf("same result %d mismatches %d h[123] %.4f\n", first == h[123], bad, h[123]);
  printf("streams faster %d (serial %.3f ms, %d streams %.3f ms)\n", streams_ms < serial_ms, serial_ms, nstreams,
         streams_ms);
  for (int i = 0; i < nstreams; ++i) cudaStreamDestroy(s[i]);
  cudaFree(d);
  cudaFreeHost(h);
  return 0;
}
