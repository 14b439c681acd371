// cuRAND's host API: a generator writing uniform, normal and raw 32-bit numbers into device memory.
#include <curand.h>
#include <cmath>
#include "common.h"

#define CURAND_CHECK(call)                                                                   \
  do {                                                                                       \
    curandStatus_t s_ = (call);                                                              \
    if (s_ != CURAND_STATUS_SUCCESS) { fprintf(stderr, "%s: status %d\n", #call, (int)s_); exit(1); } \
  } while (0)

int main() {
  const int n = 10000;
  curandGenerator_t gen;
  CURAND_CHECK(curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10));
  CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(gen, 1234ULL));
  float *du, *dn;
  unsigned int* dr;
  checkCudaErrors(cudaMalloc(&du, n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&dn, n * sizeof(float)));
  checkCudaErrors(cudaMalloc(&dr, 8 * sizeof(unsigned int)));
  CURAND_CHECK(curandGenerateUniform(gen, du, n));
  CURAND_CHECK(curandGenerateNormal(gen, dn, n, 5.0f, 2.0f));
  CURAND_CHECK(curandGenerate(gen, dr, 8));
  float* hu = (float*)malloc(n * sizeof(float));
  float* hn = (float*)malloc(n * sizeof(float));
  unsigned int hr[8];
  checkCudaErrors(cudaMemcpy(hu, du, n * sizeof(float), cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpy(hn, dn, n * sizeof(float), cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpy(hr, dr, sizeof hr, cudaMemcpyDeviceToHost));
  double su = 0, sn = 0, sn2 = 0, lo = 1, hi = 0;
  for (int i = 0; i < n; ++i) {
    su += hu[i]; sn += hn[i]; sn2 += (double)hn[i] * hn[i];
    lo = fmin(lo, hu[i]); hi = fmax(hi, hu[i]);
  }
  double mean = sn / n, sd = sqrt(sn2 / n - mean * mean);
  printf("uniform in (0,1]: %d mean~0.5: %d\n", lo > 0 && hi <= 1, fabs(su / n - 0.5) < 0.02);
  printf("normal mean~5: %d stddev~2: %d\n", fabs(mean - 5) < 0.1, fabs(sd - 2) < 0.1);
  printf("u[0] %.6f n[0] %.6f r[0] %u\n", hu[0], hn[0], hr[0]);
  curandStatus_t odd = curandGenerateNormal(gen, dn, 3, 0.0f, 1.0f);
  printf("odd normal count: %d\n", (int)odd);
  CURAND_CHECK(curandDestroyGenerator(gen));
  return 0;
}
