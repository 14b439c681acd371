// HIP graphs: a forward pass of three kernels captured from a stream (with a second stream forked in and
// joined back through events), instantiated once and launched three times, and the same work built node
// by node with hipGraphAddKernelNode and explicit dependencies. Both must give what running the kernels
// directly gives.
#include "check.h"

__global__ void axpb(float* y, const float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}

__global__ void add(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

int main() {
  const int n = 4096;
  const size_t bytes = n * sizeof(float);
  float h[n];
  for (int i = 0; i < n; ++i) h[i] = (float)(i % 31) - 15.0f;
  float *x, *u, *v;
  HIP_CHECK(hipMalloc(&x, bytes));
  HIP_CHECK(hipMalloc(&u, bytes));
  HIP_CHECK(hipMalloc(&v, bytes));
  HIP_CHECK(hipMemcpy(x, h, bytes, hipMemcpyHostToDevice));

  hipStream_t s, side;
  HIP_CHECK(hipStreamCreate(&s));
  HIP_CHECK(hipStreamCreate(&side));
  hipEvent_t fork, join;
  HIP_CHECK(hipEventCreate(&fork));
  HIP_CHECK(hipEventCreate(&join));
  HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipStreamCaptureStatus status;
  HIP_CHECK(hipStreamIsCapturing(s, &status));
  printf("capturing: %d\n", status == hipStreamCaptureStatusActive);
  HIP_CHECK(hipEventRecord(fork, s));
  HIP_CHECK(hipStreamWaitEvent(side, fork, 0));
  axpb<<<n / 256, 256, 0, s>>>(u, x, 2.0f, 1.0f, n);     // u = 2x + 1
  axpb<<<n / 256, 256, 0, side>>>(v, x, -1.0f, 3.0f, n);  // v = 3 - x, beside it
  HIP_CHECK(hipEventRecord(join, side));
  HIP_CHECK(hipStreamWaitEvent(s, join, 0));
  add<<<n / 256, 256, 0, s>>>(u, v, n);                   // u += v: x + 4
  hipGraph_t g;
  HIP_CHECK(hipStreamEndCapture(s, &g));
  size_t nodes = 0;
  HIP_CHECK(hipGraphGetNodes(g, nullptr, &nodes));
  hipGraphExec_t exec;
  HIP_CHECK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  for (int r = 0; r < 3; ++r) HIP_CHECK(hipGraphLaunch(exec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  float out[n];
  HIP_CHECK(hipMemcpy(out, u, bytes, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != h[i] + 4.0f;
  printf("captured graph: %zu nodes, 3 launches, %d mismatches\n", nodes, bad);

  // The same work built by hand: two independent kernel nodes, then the add after both.
  hipGraph_t built;
  HIP_CHECK(hipGraphCreate(&built, 0));
  float a = 2.0f, b = 1.0f, c = -1.0f, d = 3.0f;
  int count = n;
  void* args0[] = {&u, &x, &a, &b, &count};
  void* args1[] = {&v, &x, &c, &d, &count};
  void* args2[] = {&u, &v, &count};
  hipKernelNodeParams p = {};
  p.blockDim = dim3(256);
  p.gridDim = dim3(n / 256);
  p.func = (void*)axpb;
  p.kernelParams = args0;
  hipGraphNode_t k0, k1, k2;
  HIP_CHECK(hipGraphAddKernelNode(&k0, built, nullptr, 0, &p));
  p.kernelParams = args1;
  HIP_CHECK(hipGraphAddKernelNode(&k1, built, nullptr, 0, &p));
  p.func = (void*)add;
  p.kernelParams = args2;
  hipGraphNode_t deps[] = {k0, k1};
  HIP_CHECK(hipGraphAddKernelNode(&k2, built, deps, 2, &p));
  hipGraphExec_t built_exec;
  HIP_CHECK(hipGraphInstantiateWithFlags(&built_exec, built, 0));
  HIP_CHECK(hipMemset(u, 0, bytes));
  HIP_CHECK(hipGraphLaunch(built_exec, s));
  HIP_CHECK(hipStreamSynchronize(s));
  HIP_CHECK(hipMemcpy(out, u, bytes, hipMemcpyDeviceToHost));
  bad = 0;
  for (int i = 0; i < n; ++i) bad += out[i] != h[i] + 4.0f;
  printf("built graph: %d mismatches\n", bad);

  HIP_CHECK(hipGraphExecDestroy(exec));
  HIP_CHECK(hipGraphExecDestroy(built_exec));
  HIP_CHECK(hipGraphDestroy(g));
  HIP_CHECK(hipGraphDestroy(built));
  HIP_CHECK(hipFree(x));
  HIP_CHECK(hipFree(u));
  HIP_CHECK(hipFree(v));
  return 0;
}
