// Batched GEMMs through cuBLAS, as attention and convolution code calls them: SgemmStridedBatched (with a
// stride of 0 reusing one B for every batch), DgemmStridedBatched, GemmStridedBatchedEx with half inputs and
// float outputs, GemmEx, SGEMM under TF32 math mode, and a compute type strata does not serve.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cmath>
#include <cstring>
#include "common.h"

#define CUBLAS_CHECK(call)                                                                        \
  do {                                                                                            \
    cublasStatus_t s_ = (call);                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      fprintf(stderr, "%s: %s at line %d\n", #call, cublasGetStatusName(s_), __LINE__);           \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

template <typename TA, typename TC>
static int check_batched(const TA* A, long long sa, const TA* B, long long sb, const TC* C, long long sc, int m, int n,
                         int k, int batch, double alpha, double tol) {
  int bad = 0;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int p = 0; p < k; ++p) s += (double)A[b * sa + i + p * m] * (double)B[b * sb + p + j * k];
        double want = alpha * s, got = (double)C[b * sc + i + j * m];
        if (fabs(got - want) > tol * (1 + fabs(want))) ++bad;
      }
  return bad;
}

int main() {
  const int m = 16, n = 12, k = 20, batch = 6;
  const long long sa = m * k, sc = m * n;
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));

  // float, B shared by every batch (stride 0)
  float *A = (float*)malloc(sa * batch * 4), *B = (float*)malloc(k * n * 4), *C = (float*)malloc(sc * batch * 4);
  for (long long i = 0; i < sa * batch; ++i) A[i] = (float)((i * 3) % 7) - 3.0f;
  for (int i = 0; i < k * n; ++i) B[i] = (float)(i % 5) * 0.5f;
  float *dA, *dB, *dC;
  checkCudaErrors(cudaMalloc(&dA, sa * batch * 4));
  checkCudaErrors(cudaMalloc(&dB, k * n * 4));
  checkCudaErrors(cudaMalloc(&dC, sc * batch * 4));
  checkCudaErrors(cudaMemcpy(dA, A, sa * batch * 4, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(dB, B, k * n * 4, cudaMemcpyHostToDevice));
  const float two = 2.0f, zero = 0.0f;
  CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &two, dA, m, sa, dB, k, 0, &zero, dC,
                                         m, sc, batch));
  checkCudaErrors(cudaMemcpy(C, dC, sc * batch * 4, cudaMemcpyDeviceToHost));
  printf("sgemm strided batched %d: C[5][0] %.1f mismatches %d\n", batch, C[5 * sc],
         check_batched(A, sa, B, 0, C, sc, m, n, k, batch, 2.0, 1e-5));

  // double
  double *Ad = (double*)malloc(sa * batch * 8), *Bd = (double*)malloc(k * n * batch * 8);
  double* Cd = (double*)malloc(sc * batch * 8);
  for (long long i = 0; i < sa * batch; ++i) Ad[i] = (double)(i % 11) / 3.0;
  for (long long i = 0; i < (long long)k * n * batch; ++i) Bd[i] = (double)(i % 7) - 2.5;
  double *dAd, *dBd, *dCd;
  checkCudaErrors(cudaMalloc(&dAd, sa * batch * 8));
  checkCudaErrors(cudaMalloc(&dBd, (long long)k * n * batch * 8));
  checkCudaErrors(cudaMalloc(&dCd, sc * batch * 8));
  checkCudaErrors(cudaMemcpy(dAd, Ad, sa * batch * 8, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(dBd, Bd, (long long)k * n * batch * 8, cudaMemcpyHostToDevice));
  const double one_d = 1.0, zero_d = 0.0;
  CUBLAS_CHECK(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one_d, dAd, m, sa, dBd, k,
                                         (long long)k * n, &zero_d, dCd, m, sc, batch));
  checkCudaErrors(cudaMemcpy(Cd, dCd, sc * batch * 8, cudaMemcpyDeviceToHost));
  printf("dgemm strided batched: C[2][7] %.6f mismatches %d\n", Cd[2 * sc + 7],
         check_batched(Ad, sa, Bd, (long long)k * n, Cd, sc, m, n, k, batch, 1.0, 1e-12));

  // half inputs, float outputs, float compute
  __half *Ah = (__half*)malloc(sa * batch * 2), *Bh = (__half*)malloc(k * n * batch * 2);
  float *Af = (float*)malloc(sa * batch * 4), *Bf = (float*)malloc(k * n * batch * 4);
  for (long long i = 0; i < sa * batch; ++i) { Ah[i] = __float2half((float)(i % 9) * 0.25f); Af[i] = __half2float(Ah[i]); }
  for (long long i = 0; i < (long long)k * n * batch; ++i) {
    Bh[i] = __float2half((float)(i % 6) - 2.0f); Bf[i] = __half2float(Bh[i]);
  }
  __half *dAh, *dBh;
  checkCudaErrors(cudaMalloc(&dAh, sa * batch * 2));
  checkCudaErrors(cudaMalloc(&dBh, (long long)k * n * batch * 2));
  checkCudaErrors(cudaMemcpy(dAh, Ah, sa * batch * 2, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(dBh, Bh, (long long)k * n * batch * 2, cudaMemcpyHostToDevice));
  const float one = 1.0f;
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dAh, CUDA_R_16F, m, sa, dBh,
                                          CUDA_R_16F, k, (long long)k * n, &zero, dC, CUDA_R_32F, m, sc, batch,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  checkCudaErrors(cudaMemcpy(C, dC, sc * batch * 4, cudaMemcpyDeviceToHost));
  printf("half strided batched ex: mismatches %d\n",
         check_batched(Af, sa, Bf, (long long)k * n, C, sc, m, n, k, batch, 1.0, 1e-5));

  // one GEMM through GemmEx
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &two, dA, CUDA_R_32F, m, dB, CUDA_R_32F, k, &zero,
                            dC, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  checkCudaErrors(cudaMemcpy(C, dC, sc * 4, cudaMemcpyDeviceToHost));
  printf("gemm ex: mismatches %d\n", check_batched(A, sa, B, 0, C, sc, m, n, k, 1, 2.0, 1e-5));

  // TF32 math mode: inputs rounded to 10 mantissa bits (values here are exact in TF32, so results match)
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
  cublasMath_t mode;
  CUBLAS_CHECK(cublasGetMathMode(h, &mode));
  CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &two, dA, m, dB, k, &zero, dC, m));
  checkCudaErrors(cudaMemcpy(C, dC, sc * 4, cudaMemcpyDeviceToHost));
  printf("tf32 mode %d: mismatches %d\n", (int)mode, check_batched(A, sa, B, 0, C, sc, m, n, k, 1, 2.0, 1e-5));

  cublasStatus_t s = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dAh, CUDA_R_16F, m, dBh, CUDA_R_16F, k,
                                  &zero, dC, CUDA_R_16F, m, CUBLAS_COMPUTE_16F, CUBLAS_GEMM_DEFAULT);
  printf("half compute: %s\n", cublasGetStatusName(s));
  s = cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &two, dA, m, sa, dB, k, 0, &zero, dC, m, sc, -1);
  printf("negative batch: %s\n", cublasGetStatusName(s));

  // pointer-array batches: evenly spaced (one strided GEMM) and scattered (reversed order)
  const float* hAp[batch];
  const float* hBp[batch];
  float* hCp[batch];
  for (int b = 0; b < batch; ++b) { hAp[b] = dA + b * sa; hBp[b] = dB; hCp[b] = dC + b * sc; }
  const float** dAp;
  const float** dBp;
  float** dCp;
  checkCudaErrors(cudaMalloc(&dAp, sizeof hAp));
  checkCudaErrors(cudaMalloc(&dBp, sizeof hBp));
  checkCudaErrors(cudaMalloc(&dCp, sizeof hCp));
  checkCudaErrors(cudaMemcpy(dAp, hAp, sizeof hAp, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(dBp, hBp, sizeof hBp, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(dCp, hCp, sizeof hCp, cudaMemcpyHostToDevice));
  CUBLAS_CHECK(cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &two, dAp, m, dBp, k, &zero, dCp, m, batch));
  checkCudaErrors(cudaMemcpy(C, dC, sc * batch * 4, cudaMemcpyDeviceToHost));
  int pbad = check_batched(A, sa, B, 0, C, sc, m, n, k, batch, 2.0, 1e-5);
  for (int b = 0; b < batch; ++b) hCp[b] = dC + (batch - 1 - b) * sc;  // C_i lands in slot batch-1-i
  checkCudaErrors(cudaMemcpy(dCp, hCp, sizeof hCp, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemset(dC, 0, sc * batch * 4));
  CUBLAS_CHECK(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, (const void* const*)dAp, CUDA_R_32F,
                                   m, (const void* const*)dBp, CUDA_R_32F, k, &zero, (void* const*)dCp, CUDA_R_32F, m,
                                   batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  float* Crev = (float*)malloc(sc * batch * 4);
  checkCudaErrors(cudaMemcpy(Crev, dC, sc * batch * 4, cudaMemcpyDeviceToHost));
  for (int b = 0; b < batch; ++b) memcpy(C + b * sc, Crev + (batch - 1 - b) * sc, sc * 4);
  printf("pointer batches: even mismatches %d, scattered mismatches %d\n", pbad,
         check_batched(A, sa, B, 0, C, sc, m, n, k, batch, 1.0, 1e-5));

  // captured into a graph on the handle's stream: C += 2 A B, replayed three times
  cudaStream_t cs;
  checkCudaErrors(cudaStreamCreate(&cs));
  CUBLAS_CHECK(cublasSetStream(h, cs));
  CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  checkCudaErrors(cudaMemsetAsync(dC, 0, sc * batch * 4, cs));
  checkCudaErrors(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
  const float onef = 1.0f;
  CUBLAS_CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &two, dA, m, sa, dB, k, 0, &onef, dC,
                                         m, sc, batch));
  float dotv = 0;
  s = cublasSdot(h, m, dA, 1, dA, 1, &dotv);  // a result to the host cannot be captured
  cudaGraph_t graph;
  checkCudaErrors(cudaStreamEndCapture(cs, &graph));
  size_t nodes = 0;
  checkCudaErrors(cudaGraphGetNodes(graph, NULL, &nodes));
  cudaGraphExec_t exec;
  checkCudaErrors(cudaGraphInstantiate(&exec, graph, 0));
  for (int i = 0; i < 3; ++i) checkCudaErrors(cudaGraphLaunch(exec, cs));
  checkCudaErrors(cudaStreamSynchronize(cs));
  checkCudaErrors(cudaMemcpy(C, dC, sc * batch * 4, cudaMemcpyDeviceToHost));
  printf("captured: %zu node(s), dot in capture %s, after 3 launches mismatches %d\n", nodes, cublasGetStatusName(s),
         check_batched(A, sa, B, 0, C, sc, m, n, k, batch, 6.0, 1e-5));
  checkCudaErrors(cudaGraphExecDestroy(exec));
  checkCudaErrors(cudaGraphDestroy(graph));
  CUBLAS_CHECK(cublasDestroy(h));
  return 0;
}
