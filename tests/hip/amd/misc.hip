#include <hip/hip_runtime.h>
// LDS atomics of every kind, sub-dword LDS, float4 vector loads, integer/float intrinsics, assert.
extern "C" __global__ void lds_atomics(const unsigned* x, unsigned* out) {
  __shared__ unsigned acc[8];
  __shared__ unsigned char bytes[256];
  unsigned t = threadIdx.x;
  if (t < 8) acc[t] = (t == 3 || t == 7) ? 0xffffffffu : (t == 5 ? 7u : 0u);
  __syncthreads();
  unsigned v = x[t];
  atomicAdd(&acc[0], v);
  atomicOr(&acc[1], 1u << (v % 32));
  atomicXor(&acc[2], v);
  atomicAnd(&acc[3], ~(1u << (t % 32)) | (v & 1u));
  atomicMax(&acc[4], v);
  atomicCAS(&acc[5], 7u, t + 100);
  atomicInc(&acc[6], 9u);
  atomicMin(&acc[7], v + 1000);
  bytes[t] = (unsigned char)(v * 3);
  __syncthreads();
  if (t < 8) out[t] = acc[t];
  out[8 + t] = bytes[255 - t];
}
extern "C" __global__ void vec4(const float4* a, float4* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float4 v = a[i]; b[i] = make_float4(v.w, v.z * 2.0f, v.y + 1.0f, v.x); }
}
extern "C" __global__ void intrinsics(const unsigned* u, const float* f, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = u[i], b = u[n + i];
  out[8 * i] = __brev(a);
  out[8 * i + 1] = __funnelshift_l(a, b, i);
  out[8 * i + 2] = __umulhi(a, b);
  out[8 * i + 3] = (unsigned)__float2int_rn(f[i]);
  out[8 * i + 4] = (unsigned)__float_as_int(f[i]);
  out[8 * i + 5] = isnan(f[i]) * 2 + isinf(f[i]);
  out[8 * i + 6] = __popc(a) + 100 * __ffs(b);
  out[8 * i + 7] = (unsigned)__float2int_rd(f[i]);
}
extern "C" __global__ void checked(const int* x, int* out) {
  int t = threadIdx.x;
  assert(x[t] >= 0);
  out[t] = x[t] * 2;
}
extern "C" __global__ void lds_atomics64(const unsigned long long* x, unsigned long long* out) {
  __shared__ unsigned long long acc[3];
  unsigned t = threadIdx.x;
  if (t < 3) acc[t] = t == 2 ? ~0ull : 0ull;
  __syncthreads();
  unsigned long long v = x[t];
  atomicAdd(&acc[0], v);
  atomicMax(&acc[1], v);
  atomicAnd(&acc[2], v | (1ull << (t % 64)));
  __syncthreads();
  if (t < 3) out[t] = acc[t];
}
