// C = A * B with square tiles in LDS, a 2-D grid launched with hipLaunchKernelGGL, the sizes passed as a
// struct by value, events timing the kernel.
#include "check.h"
#include <vector>

#define TILE 16

struct Dims {
  int M;
  long long K;  // 8-byte aligned: 24 bytes with padding, passed in the kernel arguments as the host lays it out
  int N;
};

__global__ void matmul(const float* A, const float* B, float* C, Dims d) {
  const int M = d.M, N = d.N, K = (int)d.K;
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    int ak = t * TILE + threadIdx.x, bk = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ak < K ? A[row * K + ak] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = bk < K && col < N ? B[bk * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}

int main() {
  const int M = 100, N = 72, K = 90;
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (int i = 0; i < M * K; ++i) a[i] = (float)((i * 7) % 13) * 0.5f - 3.0f;
  for (int i = 0; i < K * N; ++i) b[i] = (float)((i * 3) % 11) * 0.25f - 1.0f;
  float *dA, *dB, *dC;
  HIP_CHECK(hipMalloc(&dA, a.size() * sizeof(float)));
  HIP_CHECK(hipMalloc(&dB, b.size() * sizeof(float)));
  HIP_CHECK(hipMalloc(&dC, c.size() * sizeof(float)));
  HIP_CHECK(hipMemcpy(dA, a.data(), a.size() * sizeof(float), hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(dB, b.data(), b.size() * sizeof(float), hipMemcpyHostToDevice));
  hipEvent_t start, stop;
  HIP_CHECK(hipEventCreate(&start));
  HIP_CHECK(hipEventCreate(&stop));
  dim3 block(TILE, TILE), grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  HIP_CHECK(hipEventRecord(start));
  Dims dims = {M, K, N};
  hipLaunchKernelGGL(matmul, grid, block, 0, 0, dA, dB, dC, dims);
  HIP_CHECK(hipGetLastError());
  HIP_CHECK(hipEventRecord(stop));
  HIP_CHECK(hipEventSynchronize(stop));
  float ms = 0;
  HIP_CHECK(hipEventElapsedTime(&ms, start, stop));
  HIP_CHECK(hipMemcpy(c.data(), dC, c.size() * sizeof(float), hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += (double)a[i * K + k] * b[k * N + j];
      if (fabs(ref - c[i * N + j]) > 1e-3) ++bad;
    }
  printf("C[0][0] %.4f C[99][71] %.4f\n", c[0], c[M * N - 1]);
  printf("kernel time positive %d\n", ms > 0.0f);
  printf("%s\n", bad == 0 ? "PASS" : "FAIL");
  HIP_CHECK(hipEventDestroy(start));
  HIP_CHECK(hipEventDestroy(stop));
  HIP_CHECK(hipFree(dA)); HIP_CHECK(hipFree(dB)); HIP_CHECK(hipFree(dC));
  return bad != 0;
}
