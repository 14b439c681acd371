// More of the runtime API: occupancy, device limits, host functions and callbacks in streams, 2-D copies,
// pointer attributes, and a cooperative launch whose grid synchronizes.
#include <cooperative_groups.h>
#include "common.h"
namespace cg = cooperative_groups;

__global__ void add_one(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] += 1; }

__global__ void grid_sum(int* data, int* out, int n) {
  cg::grid_group g = cg::this_grid();
  int i = g.thread_rank();
  if (i < n) atomicAdd(out, data[i]);
  g.sync();
  if (i < n) data[i] = *out;  // every thread sees the whole grid's sum
}

static void CUDART_CB host_fn(void* p) { printf("host function sees %d\n", *(int*)p); }
static void CUDART_CB callback(cudaStream_t, cudaError_t status, void* p) {
  printf("callback status %s sees %d\n", cudaGetErrorName(status), *(int*)p);
}

int main() {
  int blocks = 0;
  checkCudaErrors(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 256, 0));
  printf("occupancy blocks per SM %d\n", blocks);
  size_t heap = 0;
  checkCudaErrors(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16 << 20));
  checkCudaErrors(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  printf("malloc heap %zu\n", heap);

  cudaStream_t s;
  checkCudaErrors(cudaStreamCreate(&s));
  int *d, h = 0;
  checkCudaErrors(cudaMalloc(&d, sizeof(int)));
  checkCudaErrors(cudaMemsetAsync(d, 0, sizeof(int), s));
  add_one<<<1, 1, 0, s>>>(d, 1);
  checkCudaErrors(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s));
  checkCudaErrors(cudaLaunchHostFunc(s, host_fn, &h));
  add_one<<<1, 1, 0, s>>>(d, 1);
  checkCudaErrors(cudaMemcpyAsync(&h, d, sizeof h, cudaMemcpyDeviceToHost, s));
  checkCudaErrors(cudaStreamAddCallback(s, callback, &h, 0));

  const int w = 5, rows = 3;  // a 5x3 block out of a 8-wide host matrix into a pitched device buffer
  int host[rows][8], back[rows][w];
  for (int r = 0; r < rows; ++r) for (int c = 0; c < 8; ++c) host[r][c] = r * 10 + c;
  int* pitched;
  checkCudaErrors(cudaMalloc(&pitched, rows * 64));
  checkCudaErrors(cudaMemcpy2D(pitched, 64, host, sizeof host[0], w * sizeof(int), rows, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy2D(back, sizeof back[0], pitched, 64, w * sizeof(int), rows, cudaMemcpyDeviceToHost));
  printf("2-D copy back[2][4] %d back[1][0] %d\n", back[2][4], back[1][0]);

  cudaPointerAttributes a;
  int* pinned;
  checkCudaErrors(cudaMallocHost(&pinned, 64));
  checkCudaErrors(cudaPointerGetAttributes(&a, d));
  int tdev = a.type;
  checkCudaErrors(cudaPointerGetAttributes(&a, pinned));
  int thost = a.type;
  checkCudaErrors(cudaPointerGetAttributes(&a, &h));
  printf("pointer types device %d host %d unregistered %d\n", tdev == cudaMemoryTypeDevice,
         thost == cudaMemoryTypeHost, a.type == cudaMemoryTypeUnregistered);

  const int n = 4 * 64;
  int *data, *sum;
  checkCudaErrors(cudaMalloc(&data, n * sizeof(int)));
  checkCudaErrors(cudaMalloc(&sum, sizeof(int)));
  checkCudaErrors(cudaMemset(sum, 0, sizeof(int)));
  int hd[n];
  for (int i = 0; i < n; ++i) hd[i] = i;
  checkCudaErrors(cudaMemcpy(data, hd, sizeof hd, cudaMemcpyHostToDevice));
  int nn = n;
  void* args[] = {&data, &sum, &nn};
  checkCudaErrors(cudaLaunchCooperativeKernel((void*)grid_sum, 4, 64, args, 0, 0));
  checkCudaErrors(cudaMemcpy(hd, data, sizeof hd, cudaMemcpyDeviceToHost));
  printf("cooperative grid sum %d %d\n", hd[0], hd[n - 1]);
  return 0;
}
