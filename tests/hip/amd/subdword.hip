#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
extern "C" __global__ void cmp_bytes(const signed char* a, const signed char* b, const unsigned char* c,
                                     const unsigned char* d, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = (a[i] > b[i]) | ((c[i] < d[i]) << 1) | ((c[i] != d[i]) << 2) | ((a[i] <= b[i]) << 3);
  }
}
extern "C" __global__ void cmp_shorts(const short* a, const short* b, const unsigned short* c,
                                      const unsigned short* d, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = (a[i] > b[i]) | ((c[i] < d[i]) << 1) | ((c[i] != d[i]) << 2) | ((a[i] >= b[i]) << 3);
  }
}
extern "C" __global__ void mul_u8(const unsigned char* a, const signed char* b, short* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (short)(a[i] * b[i]);
}
extern "C" __global__ void pk_u16(const unsigned short* a, const unsigned short* b, unsigned short* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) {
    typedef unsigned short u2 __attribute__((ext_vector_type(2)));
    u2 x = *(const u2*)(a + 2 * i), y = *(const u2*)(b + 2 * i);
    u2 r = x * y + (x >> (u2)(1)) - y;
    r = r < x ? r : x ^ y;
    *(u2*)(out + 2 * i) = r;
  }
}
extern "C" __global__ void half_to_float(const __half* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (2 * i + 1 < n) {
    out[2 * i] = __half2float(a[2 * i]) * 2.0f;
    out[2 * i + 1] = __half2float(a[2 * i + 1]) + 1.0f;
  }
}
extern "C" __global__ void lds_halves(const unsigned* in, unsigned short* out, int n) {
  __shared__ unsigned short s[512];
  int t = threadIdx.x;
  unsigned v = in[blockIdx.x * 256 + t];
  s[t] = (unsigned short)v;
  s[t + 256] = (unsigned short)(v >> 16);
  __syncthreads();
  out[blockIdx.x * 512 + t] = s[511 - t];
  out[blockIdx.x * 512 + 256 + t] = s[255 - t];
}
extern "C" __global__ void frexps(const float* x, const double* y, float* m, int* e, double* md, int* ed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int ex;
    m[i] = __builtin_frexpf(x[i], &ex);
    e[i] = ex;
    md[i] = __builtin_frexp(y[i], &ex);
    ed[i] = ex;
  }
}
extern "C" __global__ void pack_halves(const __half* a, const __half* b, __half2* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    __half2 h = {a[i], b[n - 1 - i]};
    out[i] = h;
  }
}
extern "C" __global__ void lds_read_halves(const unsigned short* in, unsigned* out) {
  __shared__ unsigned short s[512];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 512 + t];
  s[t + 256] = in[blockIdx.x * 512 + 256 + t];
  __syncthreads();
  typedef unsigned short u2 __attribute__((ext_vector_type(2)));
  u2 v = {s[2 * t + 1], s[511 - 2 * t]};
  out[blockIdx.x * 256 + t] = *(unsigned*)&v;
}
extern "C" __global__ void lds_unaligned(const unsigned char* in, unsigned* out, unsigned long long* out2, int shift) {
  __shared__ unsigned char s[2048 + 16];
  int t = threadIdx.x;
  for (int k = t; k < 2048 + 16; k += 256) s[k] = in[blockIdx.x * 2064 + k];
  __syncthreads();
  out[blockIdx.x * 256 + t] = *(const unsigned*)(s + 4 * t + shift);  // misaligned when shift % 4 != 0
  out2[blockIdx.x * 256 + t] = *(const unsigned long long*)(s + 8 * t + shift);
  __syncthreads();
  *(unsigned*)(s + 4 * t + shift) = out[blockIdx.x * 256 + t] * 3u;
  __syncthreads();
  out[blockIdx.x * 256 + t] = *(const unsigned*)(s + 4 * t + shift);
}
typedef unsigned char uc4 __attribute__((ext_vector_type(4)));
typedef signed char sc4 __attribute__((ext_vector_type(4)));
// 4-wide byte vectors: clang selects bytes of a dword with SDWA compares and multiplies halves with v_pk_mul_lo_u16
extern "C" __global__ void bytes4(const uc4* a, const uc4* b, const sc4* c, const sc4* d, uc4* mx, uc4* prod,
                                  sc4* smin, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    uc4 x = a[i], y = b[i];
    sc4 p = c[i], q = d[i];
    mx[i] = x > y ? x : y;
    prod[i] = x * y;
    smin[i] = p < q ? p : q;
    smin[i] += (p != q) ? (sc4)(1) : (sc4)(0);
  }
}
