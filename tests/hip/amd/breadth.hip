#include <hip/hip_runtime.h>
extern "C" __global__ void atomics(int* ci, unsigned* cu, float* cf, int* mx, int* mn, int* cas, int* ex, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(ci, t);
  atomicAdd(cu, 1u);
  atomicAdd(cf, 0.5f);
  atomicMax(mx, t * 7 % 1000);
  atomicMin(mn, 1000 - t);
  out[t] = atomicAdd(ci + 1, 1);
  atomicCAS(cas, t, t + 1);
  atomicExch(ex, 5);
  atomicOr((unsigned*)cu + 1, 1u << (t % 32));
}
extern "C" __global__ void lanes(const int* x, int* out, unsigned long long* ballots) {
  int t = threadIdx.x;
  int v = x[blockIdx.x * blockDim.x + t];
  int s = v;
  for (int m = 32; m > 0; m >>= 1) s += __shfl_xor(s, m);
  int up = __shfl_up(v, 1);
  int b0 = __shfl(v, 0);
  unsigned long long bal = __ballot(v & 1);
  int any = __any(v > 90), all = __all(v >= 0);
  int i = blockIdx.x * blockDim.x + t;
  out[4 * i] = s; out[4 * i + 1] = up; out[4 * i + 2] = b0; out[4 * i + 3] = any * 2 + all;
  if ((t & 63) == 0) ballots[i / 64] = bal;
}
extern "C" __global__ void mathk(const float* x, float* y, const double* xd, double* yd, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  y[8 * i] = sqrtf(v); y[8 * i + 1] = logf(v); y[8 * i + 2] = rsqrtf(v); y[8 * i + 3] = floorf(v * 3.3f);
  y[8 * i + 4] = fminf(v, 0.5f); y[8 * i + 5] = (float)(int)(v * 100) ; y[8 * i + 6] = fabsf(v - 1.0f);
  y[8 * i + 7] = v / (v + 1.0f);
  double d = xd[i];
  yd[2 * i] = d * d + 1.0; yd[2 * i + 1] = sqrt(d);
}
