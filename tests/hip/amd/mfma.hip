#include <hip/hip_runtime.h>
// Matrix cores: one wavefront multiplies 16x16 (or 32x32) tiles with v_mfma. Operand layouts (CDNA3 ISA,
// matrix fused multiply-add): lane l holds A[l % M][(l / M) * kpl + e] and B[(l / N) * kpl + e][l % N] for
// its kpl consecutive k values e; D[i][j] is in register i % 4 + 4 * (i / (4 * (64 / N))) of lane
// j + N * ((i / 4) % (64 / N)).
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef int int4_t __attribute__((ext_vector_type(4)));

__device__ void store16(float* C, float4_t acc, int l) {
  for (int r = 0; r < 4; ++r) C[(4 * (l / 16) + r) * 16 + l % 16] = acc[r];
}

// C (16x16) = A (16xK) @ B (Kx16), K a multiple of 4
extern "C" __global__ void mfma_f32_16(const float* A, const float* B, float* C, int K) {
  int l = threadIdx.x;
  float4_t acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k0 = 0; k0 < K; k0 += 4)
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(A[(l % 16) * K + k0 + l / 16], B[(k0 + l / 16) * 16 + l % 16], acc,
                                               0, 0, 0);
  store16(C, acc, l);
}

// C (32x32) = A (32x2) @ B (2x32)
extern "C" __global__ void mfma_f32_32(const float* A, const float* B, float* C) {
  int l = threadIdx.x;
  float16_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_32x32x2f32(A[(l % 32) * 2 + l / 32], B[(l / 32) * 32 + l % 32], acc, 0, 0, 0);
  for (int r = 0; r < 16; ++r) C[(r % 4 + 4 * (l / 32) + 8 * (r / 4)) * 32 + l % 32] = acc[r];
}

// C (16x16) = A (16x16, half) @ B (16x16, half), float accumulation
extern "C" __global__ void mfma_f16(const _Float16* A, const _Float16* B, float* C) {
  int l = threadIdx.x;
  half4_t a, b;
  for (int e = 0; e < 4; ++e) {
    a[e] = A[(l % 16) * 16 + (l / 16) * 4 + e];
    b[e] = B[((l / 16) * 4 + e) * 16 + l % 16];
  }
  float4_t acc = {1.0f, 1.0f, 1.0f, 1.0f};  // C = 1 everywhere: checks the accumulator input
  acc = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, acc, 0, 0, 0);
  store16(C, acc, l);
}

// bf16 inputs given as their 16-bit patterns
extern "C" __global__ void mfma_bf16(const short* A, const short* B, float* C) {
  int l = threadIdx.x;
  short4_t a, b;
  for (int e = 0; e < 4; ++e) {
    a[e] = A[(l % 16) * 16 + (l / 16) * 4 + e];
    b[e] = B[((l / 16) * 4 + e) * 16 + l % 16];
  }
  float4_t acc = {0.0f, 0.0f, 0.0f, 0.0f};
  acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, acc, 0, 0, 0);
  store16(C, acc, l);
}

// int8: C (16x16, int) = A (16x32) @ B (32x16)
extern "C" __global__ void mfma_i8(const signed char* A, const signed char* B, int* C) {
  int l = threadIdx.x;
  long a = 0, b = 0;
  for (int e = 0; e < 8; ++e) {
    a |= (long)(unsigned char)A[(l % 16) * 32 + (l / 16) * 8 + e] << (8 * e);
    b |= (long)(unsigned char)B[((l / 16) * 8 + e) * 16 + l % 16] << (8 * e);
  }
  int4_t acc = {0, 0, 0, 0};
  acc = __builtin_amdgcn_mfma_i32_16x16x32_i8(a, b, acc, 0, 0, 0);
  for (int r = 0; r < 4; ++r) C[(4 * (l / 16) + r) * 16 + l % 16] = acc[r];
}
