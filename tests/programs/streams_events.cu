// Streams and events: the data split over 4 streams (async copies in and out around a kernel on each),
// timed with events; a non-blocking stream waiting on an event of another.
#include "common.h"

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + 1.0f;
}

int main() {
  const int nstreams = 4, n = 1 << 14, chunk = n / nstreams;
  float* h;
  checkCudaErrors(cudaMallocHost(&h, n * sizeof(float)));
  for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
  float* d;
  checkCudaErrors(cudaMalloc(&d, n * sizeof(float)));
  cudaStream_t s[nstreams];
  for (int k = 0; k < nstreams; ++k) checkCudaErrors(cudaStreamCreate(&s[k]));
  cudaEvent_t start, stop;
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  checkCudaErrors(cudaEventRecord(start, 0));
  for (int k = 0; k < nstreams; ++k) {
    int off = k * chunk;
    checkCudaErrors(cudaMemcpyAsync(d + off, h + off, chunk * sizeof(float), cudaMemcpyHostToDevice, s[k]));
    scale<<<chunk / 256, 256, 0, s[k]>>>(d + off, 2.0f, chunk);
    checkCudaErrors(cudaMemcpyAsync(h + off, d + off, chunk * sizeof(float), cudaMemcpyDeviceToHost, s[k]));
  }
  checkCudaErrors(cudaEventRecord(stop, 0));
  checkCudaErrors(cudaEventSynchronize(stop));
  float ms = 0;
  checkCudaErrors(cudaEventElapsedTime(&ms, start, stop));
  printf("elapsed positive %d\n", ms > 0.0f);
  cudaStream_t nb;
  cudaEvent_t done;
  checkCudaErrors(cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking));
  checkCudaErrors(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  scale<<<n / 256, 256, 0, s[0]>>>(d, 0.5f, n);
  checkCudaErrors(cudaEventRecord(done, s[0]));
  checkCudaErrors(cudaStreamWaitEvent(nb, done, 0));
  scale<<<n / 256, 256, 0, nb>>>(d, 3.0f, n);
  checkCudaErrors(cudaStreamSynchronize(nb));
  checkCudaErrors(cudaStreamQuery(nb));
  checkCudaErrors(cudaEventQuery(done));
  float* back = (float*)malloc(n * sizeof(float));
  checkCudaErrors(cudaMemcpy(back, d, n * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    float first = (float)(i % 100) * 2.0f + 1.0f;
    if (h[i] != first) ++bad;
    if (back[i] != (first * 0.5f + 1.0f) * 3.0f + 1.0f) ++bad;
  }
  for (int k = 0; k < nstreams; ++k) checkCudaErrors(cudaStreamDestroy(s[k]));
  checkCudaErrors(cudaStreamDestroy(nb));
  checkCudaErrors(cudaEventDestroy(start));
  checkCudaErrors(cudaEventDestroy(stop));
  checkCudaErrors(cudaEventDestroy(done));
  checkCudaErrors(cudaFreeHost(h));
  checkCudaErrors(cudaFree(d));
  printf("mismatches %d\n", bad);
  return bad != 0;
}
