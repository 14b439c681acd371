// Cooperative groups (tiled_partition, shuffles via reduce) and templates over element types and
// functors: a dot product and a max reduction for float, double and int.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include "common.h"
namespace cg = cooperative_groups;

struct Plus { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };
struct Max { template <typename T> __device__ T operator()(T a, T b) const { return a > b ? a : b; } };

template <typename T, typename Op>
__global__ void warp_reduce(const T* x, const T* y, T* out, int n, Op op, T identity, bool product) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  T v = identity;
  for (int i = threadIdx.x; i < n; i += blockDim.x) v = op(v, product ? x[i] * y[i] : x[i]);
  T r = cg::reduce(warp, v, [&](T a, T b) { return op(a, b); });
  __shared__ T partial[32];
  if (warp.thread_rank() == 0) partial[warp.meta_group_rank()] = r;
  block.sync();
  if (threadIdx.x == 0) {
    T acc = identity;
    for (unsigned w = 0; w < warp.meta_group_size(); ++w) acc = op(acc, partial[w]);
    *out = acc;
  }
}

template <typename T>
static void run(const char* name, T scale) {
  const int n = 500;
  T hx[n], hy[n], res[2];
  for (int i = 0; i < n; ++i) { hx[i] = (T)((i % 13) * scale); hy[i] = (T)((i % 5) + 1); }
  T *x, *y, *out;
  checkCudaErrors(cudaMalloc(&x, sizeof hx));
  checkCudaErrors(cudaMalloc(&y, sizeof hy));
  checkCudaErrors(cudaMalloc(&out, 2 * sizeof(T)));
  checkCudaErrors(cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice));
  warp_reduce<<<1, 128>>>(x, y, out, n, Plus(), (T)0, true);
  warp_reduce<<<1, 128>>>(x, y, out + 1, n, Max(), (T)-1000, false);
  checkCudaErrors(cudaMemcpy(res, out, sizeof res, cudaMemcpyDeviceToHost));
  printf("%s dot %.2f max %.2f\n", name, (double)res[0], (double)res[1]);
  cudaFree(x); cudaFree(y); cudaFree(out);
}

int main() {
  run<float>("float", 0.5f);
  run<double>("double", 0.25);
  run<int>("int", 1);
  return 0;
}
