#include <hip/hip_runtime.h>
// Matrix cores on gfx90a (CDNA2), where clang keeps MFMA accumulators in AGPRs (a[...]), and the shapes
// gfx942 spells differently or lacks: f64 16x16x4 and i8 16x16x16. Layouts as in mfma.hip: lane l holds
// A[l % M][(l / M) * kpl + e] and B[(l / N) * kpl + e][l % N]; D[i][j] is value i % 4 + 4 * (i / (4 * (64 / N)))
// of lane j + N * ((i / 4) % (64 / N)) (f64: see mfma_f64).
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef double double4_t __attribute__((ext_vector_type(4)));
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef int int4_t __attribute__((ext_vector_type(4)));

// C (16x16) = A (16xK) @ B (Kx16), K a multiple of 4, accumulated over K / 4 instructions
extern "C" __global__ void mfma_f32_16(const float* A, const float* B, float* C, int K) {
  int l = threadIdx.x;
  float4_t acc = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int k0 = 0; k0 < K; k0 += 4)
    acc = __builtin_amdgcn_mfma_f32_16x16x4f32(A[(l % 16) * K + k0 + l / 16], B[(k0 + l / 16) * 16 + l % 16], acc,
                                               0, 0, 0);
  for (int r = 0; r < 4; ++r) C[(4 * (l / 16) + r) * 16 + l % 16] = acc[r];
}

// C (32x32) = A (32xK) @ B (Kx32) in bf16 (16-bit patterns), K a multiple of 8
extern "C" __global__ void mfma_bf16_32(const short* A, const short* B, float* C, int K) {
  int l = threadIdx.x;
  float16_t acc = {};
  for (int k0 = 0; k0 < K; k0 += 8) {
    short4_t a, b;
    for (int e = 0; e < 4; ++e) {
      a[e] = A[(l % 32) * K + k0 + (l / 32) * 4 + e];
      b[e] = B[(k0 + (l / 32) * 4 + e) * 32 + l % 32];
    }
    acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, acc, 0, 0, 0);
  }
  for (int r = 0; r < 16; ++r) C[(r % 4 + 4 * (l / 32) + 8 * (r / 4)) * 32 + l % 32] = acc[r];
}

// f64: C (16x16) = A (16x4) @ B (4x16) + 1. Its D layout differs from the 32-bit ones: value r of lane l is
// D[4 * r + l / 16][l % 16] (as AMD's dgemm example for this instruction stores it).
extern "C" __global__ void mfma_f64(const double* A, const double* B, double* C) {
  int l = threadIdx.x;
  double4_t acc = {1.0, 1.0, 1.0, 1.0};
  acc = __builtin_amdgcn_mfma_f64_16x16x4f64(A[(l % 16) * 4 + l / 16], B[(l / 16) * 16 + l % 16], acc, 0, 0, 0);
  for (int r = 0; r < 4; ++r) C[(4 * r + l / 16) * 16 + l % 16] = acc[r];
}

// i8: C (16x16, int) = A (16x16) @ B (16x16), four bytes per lane
extern "C" __global__ void mfma_i8(const signed char* A, const signed char* B, int* C) {
  int l = threadIdx.x;
  int a = 0, b = 0;
  for (int e = 0; e < 4; ++e) {
    a |= (int)(unsigned char)A[(l % 16) * 16 + (l / 16) * 4 + e] << (8 * e);
    b |= (int)(unsigned char)B[((l / 16) * 4 + e) * 16 + l % 16] << (8 * e);
  }
  int4_t acc = {0, 0, 0, 0};
  acc = __builtin_amdgcn_mfma_i32_16x16x16i8(a, b, acc, 0, 0, 0);
  for (int r = 0; r < 4; ++r) C[(4 * (l / 16) + r) * 16 + l % 16] = acc[r];
}

// The accumulator in AGPRs (the "a" constraint): v_accvgpr_write moves C in, the MFMA reads and writes
// a[0:3], v_accvgpr_read moves D out. C = A (16x4) @ B (4x16) + C0.
extern "C" __global__ void mfma_f32_16_agpr(const float* A, const float* B, float* C) {
  int l = threadIdx.x;
  float4_t acc;
  for (int r = 0; r < 4; ++r) acc[r] = C[(4 * (l / 16) + r) * 16 + l % 16];
  float a = A[(l % 16) * 4 + l / 16], b = B[(l / 16) * 16 + l % 16];
  asm volatile("v_mfma_f32_16x16x4f32 %0, %1, %2, %0" : "+a"(acc) : "v"(a), "v"(b));
  for (int r = 0; r < 4; ++r) C[(4 * (l / 16) + r) * 16 + l % 16] = acc[r];
}
