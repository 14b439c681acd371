// A CUDA graph captured from two streams, forked and joined with events (as in the simpleCudaGraphs
// sample): the copy in, a kernel on each branch, a join kernel and the copy out; replayed with new host
// input each round. Then the errors CUDA gives for a capture with unjoined work and for ending a capture
// from a stream that did not begin it.
#include "common.h"

__global__ void scale(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i];
}
__global__ void shift(const float* x, float* z, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + b;
}
__global__ void twice(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= 2.0f;
}
__global__ void combine(const float* y, const float* z, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = y[i] * z[i];
}

static void CUDART_CB count_run(void* p) { ++*(int*)p; }

int main() {
  int runs = 0;
  const int n = 3000, threads = 256, blocks = (n + threads - 1) / threads;
  float *hx, *hout;
  checkCudaErrors(cudaMallocHost(&hx, n * sizeof(float)));
  checkCudaErrors(cudaMallocHost(&hout, n * sizeof(float)));
  float *x, *y, *z, *out;
  checkCudaErrors(cudaMalloc(&x, n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&y, n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&z, n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&out, n * sizeof(float)));
  cudaStream_t s1, s2;
  checkCudaErrors(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  checkCudaErrors(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t fork, join;
  checkCudaErrors(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  checkCudaErrors(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  checkCudaErrors(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  checkCudaErrors(cudaMemcpyAsync(x, hx, n * sizeof(float), cudaMemcpyHostToDevice, s1));
  checkCudaErrors(cudaEventRecord(fork, s1));
  checkCudaErrors(cudaStreamWaitEvent(s2, fork, 0));  // s2 joins the capture
  cudaStreamCaptureStatus st2;
  checkCudaErrors(cudaStreamIsCapturing(s2, &st2));
  cudaStreamCaptureStatus info;
  unsigned long long id1 = 0, id2 = 1;
  cudaGraph_t g1 = NULL;
  checkCudaErrors(cudaStreamGetCaptureInfo(s1, &info, &id1, &g1));
  checkCudaErrors(cudaStreamGetCaptureInfo(s2, &info, &id2));
  printf("capture info: active %d same capture %d graph %d\n", info == cudaStreamCaptureStatusActive, id1 == id2,
         g1 != NULL);
  scale<<<blocks, threads, 0, s1>>>(x, y, 3.0f, n);
  shift<<<blocks, threads, 0, s2>>>(x, z, 1.0f, n);
  twice<<<blocks, threads, 0, s1>>>(y, n);
  checkCudaErrors(cudaEventRecord(join, s2));
  checkCudaErrors(cudaStreamWaitEvent(s1, join, 0));  // and comes back
  combine<<<blocks, threads, 0, s1>>>(y, z, out, n);
  checkCudaErrors(cudaMemcpyAsync(hout, out, n * sizeof(float), cudaMemcpyDeviceToHost, s1));
  checkCudaErrors(cudaLaunchHostFunc(s1, count_run, &runs));  // a host node: runs at each replay
  cudaGraph_t graph;
  checkCudaErrors(cudaStreamEndCapture(s1, &graph));
  cudaStreamCaptureStatus after;
  checkCudaErrors(cudaStreamIsCapturing(s2, &after));
  size_t nodes = 0;
  checkCudaErrors(cudaGraphGetNodes(graph, NULL, &nodes));
  printf("s2 capturing %d, after end %d, %zu nodes\n", st2 == cudaStreamCaptureStatusActive,
         after == cudaStreamCaptureStatusActive, nodes);

  cudaGraphExec_t exec;
  checkCudaErrors(cudaGraphInstantiate(&exec, graph, 0));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < n; ++i) hx[i] = (float)((i + round) % 50) * 0.5f;
    checkCudaErrors(cudaGraphLaunch(exec, s2));
    checkCudaErrors(cudaStreamSynchronize(s2));
    int bad = 0;
    for (int i = 0; i < n; ++i)
      if (hout[i] != (6.0f * hx[i]) * (hx[i] + 1.0f)) ++bad;
    printf("round %d out[7] %.2f mismatches %d host function runs %d\n", round, hout[7], bad, runs);
  }

  // work forked to s2 and never joined back: the capture fails and ends
  checkCudaErrors(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  checkCudaErrors(cudaEventRecord(fork, s1));
  checkCudaErrors(cudaStreamWaitEvent(s2, fork, 0));
  shift<<<blocks, threads, 0, s2>>>(x, z, 1.0f, n);
  cudaGraph_t bad_graph = (cudaGraph_t)1;
  cudaError_t e = cudaStreamEndCapture(s1, &bad_graph);
  printf("unjoined: %s graph null %d\n", cudaGetErrorName(e), bad_graph == NULL);
  cudaStreamCaptureStatus now;
  checkCudaErrors(cudaStreamIsCapturing(s1, &now));
  printf("capture over %d last error %s\n", now == cudaStreamCaptureStatusNone, cudaGetErrorName(cudaGetLastError()));

  // a capture ends in the stream that began it
  checkCudaErrors(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  checkCudaErrors(cudaEventRecord(fork, s1));
  checkCudaErrors(cudaStreamWaitEvent(s2, fork, 0));
  printf("end from s2: %s\n", cudaGetErrorName(cudaStreamEndCapture(s2, &bad_graph)));
  cudaGetLastError();
  cudaStreamEndCapture(s1, &bad_graph);  // (ends it)
  cudaGetLastError();

  checkCudaErrors(cudaGraphExecDestroy(exec));
  checkCudaErrors(cudaGraphDestroy(graph));
  cudaFree(x); cudaFree(y); cudaFree(z); cudaFree(out);
  cudaFreeHost(hx); cudaFreeHost(hout);
  return 0;
}
