// The library's capture tables are finite: past them a call fails with cudaErrorStreamCaptureUnsupported
// (saying so once on stderr) instead of leaving a stream or an event out of a graph, and captures within
// the limits still work afterwards.
#include "common.h"

__global__ void bump(int* p) { atomicAdd(p, 1); }

int main() {
  const int n = 130;
  cudaStream_t s[n];
  int began = 0, refused = 0;
  for (int i = 0; i < n; ++i) {
    checkCudaErrors(cudaStreamCreate(&s[i]));
    cudaError_t e = cudaStreamBeginCapture(s[i], cudaStreamCaptureModeGlobal);
    if (e == cudaSuccess) ++began; else if (e == cudaErrorStreamCaptureUnsupported) ++refused;
  }
  printf("captures begun %d, refused %d\n", began, refused);
  for (int i = 0; i < began; ++i) {
    cudaGraph_t g;
    checkCudaErrors(cudaStreamEndCapture(s[i], &g));
    checkCudaErrors(cudaGraphDestroy(g));
  }
  (void)cudaGetLastError();

  int* d;
  checkCudaErrors(cudaMalloc(&d, 4));
  checkCudaErrors(cudaMemset(d, 0, 4));
  checkCudaErrors(cudaStreamBeginCapture(s[0], cudaStreamCaptureModeGlobal));
  bump<<<1, 1, 0, s[0]>>>(d);
  const int m = 1100;
  cudaEvent_t* ev = (cudaEvent_t*)malloc(m * sizeof *ev);
  int recorded = 0;
  cudaError_t last = cudaSuccess;
  for (int i = 0; i < m; ++i) {
    checkCudaErrors(cudaEventCreate(&ev[i]));
    last = cudaEventRecord(ev[i], s[0]);
    if (last == cudaSuccess) ++recorded;
  }
  printf("events recorded in the capture %d, then %s\n", recorded, cudaGetErrorName(last));
  cudaGraph_t g;
  checkCudaErrors(cudaStreamEndCapture(s[0], &g));
  cudaGraphExec_t x;
  checkCudaErrors(cudaGraphInstantiate(&x, g, 0));
  checkCudaErrors(cudaGraphLaunch(x, s[0]));
  checkCudaErrors(cudaGraphLaunch(x, s[0]));
  int h = 0;
  checkCudaErrors(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
  printf("graph ran its kernel %d times\n", h);
  return 0;
}
