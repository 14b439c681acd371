// A CUDA graph captured from a stream (memset, two kernels, a copy back) and launched several times;
// the captured host-to-device copy reads the host buffer when the graph runs, not when it was captured.
#include "common.h"

__global__ void scale_add(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + b;
}

int main() {
  const int n = 512;
  float h_in[n], h_out[n];
  float* d;
  checkCudaErrors(cudaMalloc(&d, n * sizeof(float)));
  cudaStream_t s;
  checkCudaErrors(cudaStreamCreate(&s));
  cudaGraph_t graph;
  checkCudaErrors(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus st;
  checkCudaErrors(cudaStreamIsCapturing(s, &st));
  checkCudaErrors(cudaMemsetAsync(d, 0, n * sizeof(float), s));
  checkCudaErrors(cudaMemcpyAsync(d, h_in, n * sizeof(float), cudaMemcpyHostToDevice, s));
  scale_add<<<n / 128, 128, 0, s>>>(d, 2.0f, 1.0f, n);
  scale_add<<<n / 128, 128, 0, s>>>(d, 0.5f, 0.0f, n);
  checkCudaErrors(cudaMemcpyAsync(h_out, d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
  checkCudaErrors(cudaStreamEndCapture(s, &graph));
  size_t nodes = 0;
  checkCudaErrors(cudaGraphGetNodes(graph, NULL, &nodes));
  printf("capturing %d, %zu nodes\n", st == cudaStreamCaptureStatusActive, nodes);
  cudaGraphExec_t exec;
  checkCudaErrors(cudaGraphInstantiate(&exec, graph, 0));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < n; ++i) h_in[i] = (float)(i + round);
    checkCudaErrors(cudaGraphLaunch(exec, s));
    checkCudaErrors(cudaStreamSynchronize(s));
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += h_out[i] != ((float)(i + round) * 2.0f + 1.0f) * 0.5f;
    printf("round %d out[3] %.1f mismatches %d\n", round, h_out[3], bad);
  }
  checkCudaErrors(cudaGraphExecDestroy(exec));
  checkCudaErrors(cudaGraphDestroy(graph));
  return 0;
}
