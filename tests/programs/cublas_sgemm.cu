// cuBLAS in the style of the simpleCUBLAS sample: SGEMM (plain and transposed) against a host GEMM, level-1
// and level-2 routines against host loops, the handle's stream and pointer mode, argument errors and an
// unimplemented routine.
#include <cublas_v2.h>
#include <cmath>
#include "common.h"

#define CUBLAS_CHECK(call)                                                                        \
  do {                                                                                            \
    cublasStatus_t s_ = (call);                                                                   \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                            \
      fprintf(stderr, "%s: %s at line %d\n", #call, cublasGetStatusName(s_), __LINE__);           \
      exit(1);                                                                                    \
    }                                                                                             \
  } while (0)

// C = alpha op(A) op(B) + beta C, column-major, in double
static void host_gemm(bool ta, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
                      float beta, float* C, int ldc) {
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += (double)(ta ? A[p + i * lda] : A[i + p * lda]) * B[p + j * ldb];
      C[i + j * ldc] = (float)(alpha * s + beta * C[i + j * ldc]);
    }
}

static int mismatches(const float* got, const float* want, int n, float tol) {
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (fabsf(got[i] - want[i]) > tol * (1.0f + fabsf(want[i]))) ++bad;
  return bad;
}

int main() {
  const int m = 64, n = 48, k = 80;
  float *hA = (float*)malloc(m * k * sizeof(float)), *hB = (float*)malloc(k * n * sizeof(float));
  float *hC = (float*)malloc(m * n * sizeof(float)), *ref = (float*)malloc(m * n * sizeof(float));
  for (int i = 0; i < m * k; ++i) hA[i] = (float)((i * 7) % 13) * 0.25f - 1.0f;
  for (int i = 0; i < k * n; ++i) hB[i] = (float)((i * 5) % 11) * 0.5f - 2.0f;
  for (int i = 0; i < m * n; ++i) hC[i] = ref[i] = (float)(i % 9);

  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  int version = 0;
  CUBLAS_CHECK(cublasGetVersion(handle, &version));
  printf("cuBLAS version %d major %d\n", version >= 130000, version / 10000);
  cudaStream_t stream;
  checkCudaErrors(cudaStreamCreate(&stream));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  cudaStream_t back = 0;
  CUBLAS_CHECK(cublasGetStream(handle, &back));
  printf("stream set %d\n", back == stream);

  float *dA, *dB, *dC;
  checkCudaErrors(cudaMalloc(&dA, m * k * sizeof(float)));
  checkCudaErrors(cudaMalloc(&dB, k * n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&dC, m * n * sizeof(float)));
  CUBLAS_CHECK(cublasSetVector(m * k, sizeof(float), hA, 1, dA, 1));
  CUBLAS_CHECK(cublasSetMatrix(k, n, sizeof(float), hB, k, dB, k));
  CUBLAS_CHECK(cublasSetVector(m * n, sizeof(float), hC, 1, dC, 1));

  const float alpha = 1.5f, beta = 0.5f;
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m, dB, k, &beta, dC, m));
  CUBLAS_CHECK(cublasGetVector(m * n, sizeof(float), dC, 1, hC, 1));
  host_gemm(false, m, n, k, alpha, hA, m, hB, k, beta, ref, m);
  printf("sgemm C[0] %.4f C[%d] %.4f mismatches %d\n", hC[0], m * n - 1, hC[m * n - 1],
         mismatches(hC, ref, m * n, 1e-4f));

  // op(A) = A^T: A read as a k x m matrix with lda = k
  const float zero = 0.0f, one = 1.0f;
  CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, dA, k, dB, k, &zero, dC, m));
  CUBLAS_CHECK(cublasGetMatrix(m, n, sizeof(float), dC, m, hC, m));
  host_gemm(true, m, n, k, 1.0f, hA, k, hB, k, 0.0f, ref, m);
  printf("sgemm transposed mismatches %d\n", mismatches(hC, ref, m * n, 1e-4f));

  // level 1 and 2 on vectors of the matrices
  const int len = 1000;
  float *x, *y;
  checkCudaErrors(cudaMalloc(&x, len * sizeof(float)));
  checkCudaErrors(cudaMalloc(&y, len * sizeof(float)));
  float hx[len], hy[len];
  for (int i = 0; i < len; ++i) { hx[i] = (float)(i % 17) * 0.125f; hy[i] = (float)(i % 5) - 2.0f; }
  CUBLAS_CHECK(cublasSetVector(len, sizeof(float), hx, 1, x, 1));
  CUBLAS_CHECK(cublasSetVector(len, sizeof(float), hy, 1, y, 1));
  const float two = 2.0f, half = 0.5f;
  CUBLAS_CHECK(cublasSaxpy(handle, len, &two, x, 1, y, 1));  // y = 2x + y
  CUBLAS_CHECK(cublasSscal(handle, len, &half, x, 1));       // x = x / 2
  float dotv = 0, nrm = 0;
  CUBLAS_CHECK(cublasSdot(handle, len, x, 1, y, 1, &dotv));
  CUBLAS_CHECK(cublasSnrm2(handle, len, y, 1, &nrm));
  int imax = 0;
  CUBLAS_CHECK(cublasIsamax(handle, len, y, 1, &imax));
  double hdot = 0, hn = 0;
  int himax = 1;
  for (int i = 0; i < len; ++i) {
    double yi = 2.0 * hx[i] + hy[i], xi = hx[i] * 0.5;
    hdot += xi * yi; hn += yi * yi;
    if (fabs(yi) > fabs(2.0 * hx[himax - 1] + hy[himax - 1])) himax = i + 1;
  }
  printf("dot %.3f (host %.3f) nrm2 %.3f (host %.3f) isamax %d (host %d)\n", dotv, hdot, nrm, sqrt(hn), imax, himax);

  // y[0:m] = A x[0:k] (gemv) in device pointer mode: alpha, beta and the dot result in device memory
  float* dscal;
  checkCudaErrors(cudaMalloc(&dscal, 3 * sizeof(float)));
  float scal[2] = {1.0f, 0.0f};
  checkCudaErrors(cudaMemcpy(dscal, scal, sizeof scal, cudaMemcpyHostToDevice));
  CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  CUBLAS_CHECK(cublasSgemv(handle, CUBLAS_OP_N, m, k, dscal, dA, m, x, 1, dscal + 1, y, 1));
  CUBLAS_CHECK(cublasSdot(handle, m, y, 1, y, 1, dscal + 2));
  CUBLAS_CHECK(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  float gy[m], ddev = 0;
  checkCudaErrors(cudaMemcpy(gy, y, sizeof gy, cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpy(&ddev, dscal + 2, sizeof ddev, cudaMemcpyDeviceToHost));
  int bad = 0;
  double yy = 0;
  for (int i = 0; i < m; ++i) {
    double s = 0;
    for (int p = 0; p < k; ++p) s += (double)hA[i + p * m] * (hx[p] * 0.5);
    if (fabs(gy[i] - s) > 1e-4 * (1 + fabs(s))) ++bad;
    yy += s * s;
  }
  printf("sgemv mismatches %d device-mode dot ok %d\n", bad, fabs(ddev - yy) <= 1e-4 * yy);

  // errors come back as cuBLAS statuses
  cublasStatus_t s = cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dA, m - 1, dB, k, &beta, dC, m);
  printf("lda < m: %d %s\n", (int)s, cublasGetStatusName(s));
  s = cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &alpha, dA, m, &beta, dA, m, dC, m);
  printf("sgeam: %d %s\n", (int)s, cublasGetStatusName(s));
  s = cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, &alpha, dA, m, &beta, dA, m, dC, m);
  printf("sgeam again: %d\n", (int)s);

  CUBLAS_CHECK(cublasDestroy(handle));
  checkCudaErrors(cudaStreamDestroy(stream));
  cudaFree(dA); cudaFree(dB); cudaFree(dC); cudaFree(x); cudaFree(y); cudaFree(dscal);
  free(hA); free(hB); free(hC); free(ref);
  return 0;
}
