// A CUDA graph built node by node (no stream capture): a memset node, a 1-D copy in, a kernel node that
// depends on both, a 3-D (pitched) copy out and a host node reading the result; instantiated once and
// launched with new host input each time. Then a dependency on a node of no graph.
#include <cstdint>
#include "common.h"

__global__ void axpb(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i] + b;
}

struct Check { const float* out; const float* in; int n; int rounds; int bad; };
static void CUDART_CB check_result(void* p) {  // a host node: runs after the copy out
  Check* c = (Check*)p;
  for (int i = 0; i < c->n; ++i)
    if (c->out[i] != 2.0f * c->in[i] + 0.5f) ++c->bad;
  ++c->rounds;
}

int main() {
  const int n = 1000;
  float *hx = (float*)malloc(n * sizeof(float)), *hy = (float*)malloc(n * sizeof(float));
  float *dx, *dy;
  checkCudaErrors(cudaMalloc(&dx, n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&dy, n * sizeof(float)));
  cudaGraph_t g;
  checkCudaErrors(cudaGraphCreate(&g, 0));

  cudaGraphNode_t clear, copy_in, kernel, copy_out, host;
  cudaMemsetParams ms = {0};
  ms.dst = dy; ms.value = 0; ms.elementSize = 4; ms.width = n; ms.height = 1;
  checkCudaErrors(cudaGraphAddMemsetNode(&clear, g, NULL, 0, &ms));
  checkCudaErrors(cudaGraphAddMemcpyNode1D(&copy_in, g, NULL, 0, dx, hx, n * sizeof(float), cudaMemcpyHostToDevice));

  float a = 2.0f, b = 0.5f;
  int nn = n;
  void* args[] = {&dx, &dy, &a, &b, &nn};
  cudaKernelNodeParams kp = {0};
  kp.func = (void*)axpb; kp.gridDim = dim3((n + 127) / 128); kp.blockDim = dim3(128); kp.kernelParams = args;
  cudaGraphNode_t deps[2] = {clear, copy_in};
  checkCudaErrors(cudaGraphAddKernelNode(&kernel, g, deps, 2, &kp));
  a = 99.0f;  // the node keeps the values it was given

  cudaMemcpy3DParms cp = {0};
  cp.srcPtr = make_cudaPitchedPtr(dy, n * sizeof(float), n, 1);
  cp.dstPtr = make_cudaPitchedPtr(hy, n * sizeof(float), n, 1);
  cp.extent = make_cudaExtent(n * sizeof(float), 1, 1);
  cp.kind = cudaMemcpyDeviceToHost;
  checkCudaErrors(cudaGraphAddMemcpyNode(&copy_out, g, &kernel, 1, &cp));

  Check check = {hy, hx, n, 0, 0};
  cudaHostNodeParams hp = {check_result, &check};
  checkCudaErrors(cudaGraphAddHostNode(&host, g, &copy_out, 1, &hp));
  size_t count = 0;
  checkCudaErrors(cudaGraphGetNodes(g, NULL, &count));

  cudaGraphExec_t exec;
  checkCudaErrors(cudaGraphInstantiate(&exec, g, 0));
  cudaStream_t s;
  checkCudaErrors(cudaStreamCreate(&s));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < n; ++i) hx[i] = (float)((i * 3 + round) % 17);
    checkCudaErrors(cudaGraphLaunch(exec, s));
    checkCudaErrors(cudaStreamSynchronize(s));  // before the next round rewrites the input
  }
  printf("%zu nodes, host node ran %d times, mismatches %d, y[5] %.1f\n", count, check.rounds, check.bad, hy[5]);

  // new kernel arguments for the instantiated graph (the host node still expects a = 2, so it counts misses)
  float a3 = 3.0f;
  void* args3[] = {&dx, &dy, &a3, &b, &nn};
  kp.kernelParams = args3;
  checkCudaErrors(cudaGraphExecKernelNodeSetParams(exec, kernel, &kp));
  checkCudaErrors(cudaGraphLaunch(exec, s));
  checkCudaErrors(cudaStreamSynchronize(s));
  int nonzero = 0;
  for (int i = 0; i < n; ++i) nonzero += hx[i] != 0.0f;
  printf("updated a: y[5] %.1f host node misses %d (inputs not 0: %d)\n", hy[5], check.bad, nonzero);
  cudaGraph_t clone;
  checkCudaErrors(cudaGraphClone(&clone, g));
  size_t cloned = 0;
  checkCudaErrors(cudaGraphGetNodes(clone, NULL, &cloned));
  printf("clone has %zu nodes\n", cloned);
  checkCudaErrors(cudaGraphDestroy(clone));

  cudaGraphNode_t stray = (cudaGraphNode_t)(uintptr_t)1000, extra;
  cudaError_t e = cudaGraphAddEmptyNode(&extra, g, &stray, 1);
  printf("dependency on no node: %s\n", cudaGetErrorName(e));
  checkCudaErrors(cudaGraphExecDestroy(exec));
  checkCudaErrors(cudaGraphDestroy(g));
  cudaFree(dx); cudaFree(dy);
  return 0;
}
