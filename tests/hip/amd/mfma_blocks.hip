#include <hip/hip_runtime.h>
// Multi-block MFMA: one instruction does `blocks` independent M x N x K products. Layouts from AMD's matrix
// instruction calculator (no CBSZ/ABID/BLGP): with kpl = M * K * blocks / 64 values per lane, lane
// (g * blocks + b) * M + i holds A[b][i][g * kpl + e] and lane (g * blocks + b) * N + j holds B[b][g * kpl + e][j].
// Outputs: 32 x 32 and 16 x 16 blocks use registers [b * R, (b + 1) * R) laid out as the one-block shapes'
// (value r of lane l is D[b][8 * (r / 4) + 4 * (l / 32) + r % 4][l % 32] for 32 x 32 and
// D[b][4 * (l / 16) + r % 4][l % 16] for 16 x 16); 4 x 4 blocks: value i of lane 4 * b + j is D[b][i][j];
// f64 4 x 4 x 4 (4 blocks, one double per lane): lane 16 * i + 4 * b + j holds D[b][i][j].
// Operands are read from row-major block arrays A[blocks][M][K], B[blocks][K][N]; D[blocks][M][N] is written.
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef float float32_t __attribute__((ext_vector_type(32)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef int int4_t __attribute__((ext_vector_type(4)));
typedef int int32v_t __attribute__((ext_vector_type(32)));

#define A_AT(b, i, k) A[((b) * M + (i)) * K + (k)]
#define B_AT(b, k, j) B[((b) * K + (k)) * N + (j)]
#define D_AT(b, i, j) D[((b) * M + (i)) * N + (j)]

// f32 32x32x1, 2 blocks: lane l = 32 * b + i
extern "C" __global__ void f32_32x32x1_2b(const float* A, const float* B, float* D) {
  const int M = 32, N = 32, K = 1;
  int l = threadIdx.x, b = l / 32, x = l % 32;
  float32_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_32x32x1f32(A_AT(b, x, 0), B_AT(b, 0, x), acc, 0, 0, 0);
  for (int r = 0; r < 32; ++r) {
    int blk = r / 16, rr = r % 16;
    D_AT(blk, 8 * (rr / 4) + 4 * (l / 32) + rr % 4, l % 32) = acc[r];
  }
}

// f32 16x16x1, 4 blocks: lane l = 16 * b + i
extern "C" __global__ void f32_16x16x1_4b(const float* A, const float* B, float* D) {
  const int M = 16, N = 16, K = 1;
  int l = threadIdx.x, b = l / 16, x = l % 16;
  float16_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_16x16x1f32(A_AT(b, x, 0), B_AT(b, 0, x), acc, 0, 0, 0);
  for (int r = 0; r < 16; ++r) D_AT(r / 4, 4 * (l / 16) + r % 4, l % 16) = acc[r];
}

// f32 4x4x1, 16 blocks, accumulating onto D: lane l = 4 * b + i
extern "C" __global__ void f32_4x4x1_16b(const float* A, const float* B, float* D) {
  const int M = 4, N = 4, K = 1;
  int l = threadIdx.x, b = l / 4, x = l % 4;
  float4_t acc;
  for (int i = 0; i < 4; ++i) acc[i] = D_AT(b, i, x);
  acc = __builtin_amdgcn_mfma_f32_4x4x1f32(A_AT(b, x, 0), B_AT(b, 0, x), acc, 0, 0, 0);
  for (int i = 0; i < 4; ++i) D_AT(b, i, x) = acc[i];
}

// f16 4x4x4, 16 blocks: lane 4 * b + i holds A[b][i][0..3]
extern "C" __global__ void f16_4x4x4_16b(const _Float16* A, const _Float16* B, float* D) {
  const int M = 4, N = 4, K = 4;
  int l = threadIdx.x, b = l / 4, x = l % 4;
  half4_t a, bb;
  for (int e = 0; e < 4; ++e) { a[e] = A_AT(b, x, e); bb[e] = B_AT(b, e, x); }
  float4_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_4x4x4f16(a, bb, acc, 0, 0, 0);
  for (int i = 0; i < 4; ++i) D_AT(b, i, x) = acc[i];
}

// f16 32x32x4, 2 blocks: lane 32 * b + i holds A[b][i][0..3]
extern "C" __global__ void f16_32x32x4_2b(const _Float16* A, const _Float16* B, float* D) {
  const int M = 32, N = 32, K = 4;
  int l = threadIdx.x, b = l / 32, x = l % 32;
  half4_t a, bb;
  for (int e = 0; e < 4; ++e) { a[e] = A_AT(b, x, e); bb[e] = B_AT(b, e, x); }
  float32_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_32x32x4f16(a, bb, acc, 0, 0, 0);
  for (int r = 0; r < 32; ++r) {
    int blk = r / 16, rr = r % 16;
    D_AT(blk, 8 * (rr / 4) + 4 * (l / 32) + rr % 4, l % 32) = acc[r];
  }
}

// bf16 16x16x4, 4 blocks (16-bit patterns): lane 16 * b + i holds A[b][i][0..3]
extern "C" __global__ void bf16_16x16x4_4b(const short* A, const short* B, float* D) {
  const int M = 16, N = 16, K = 4;
  int l = threadIdx.x, b = l / 16, x = l % 16;
  short4_t a, bb;
  for (int e = 0; e < 4; ++e) { a[e] = A_AT(b, x, e); bb[e] = B_AT(b, e, x); }
  float16_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_16x16x4bf16_1k(a, bb, acc, 0, 0, 0);
  for (int r = 0; r < 16; ++r) D_AT(r / 4, 4 * (l / 16) + r % 4, l % 16) = acc[r];
}

// i8 32x32x4, 2 blocks: lane 32 * b + i holds A[b][i][0..3] in one dword
extern "C" __global__ void i8_32x32x4_2b(const signed char* A, const signed char* B, int* D) {
  const int M = 32, N = 32, K = 4;
  int l = threadIdx.x, b = l / 32, x = l % 32;
  int a = 0, bb = 0;
  for (int e = 0; e < 4; ++e) {
    a |= (int)(unsigned char)A_AT(b, x, e) << (8 * e);
    bb |= (int)(unsigned char)B_AT(b, e, x) << (8 * e);
  }
  int32v_t acc = {};
  acc = __builtin_amdgcn_mfma_i32_32x32x4i8(a, bb, acc, 0, 0, 0);
  for (int r = 0; r < 32; ++r) {
    int blk = r / 16, rr = r % 16;
    D_AT(blk, 8 * (rr / 4) + 4 * (l / 32) + rr % 4, l % 32) = acc[r];
  }
}

// f64 4x4x4, 4 blocks: lane (g * 4 + b) * 4 + i holds A[b][i][g]; lane 16 * i + 4 * b + j holds D[b][i][j]
extern "C" __global__ void f64_4x4x4_4b(const double* A, const double* B, double* D) {
  const int M = 4, N = 4, K = 4;
  int l = threadIdx.x, g = l / 16, b = (l / 4) % 4, x = l % 4;
  double acc = D[0] * 0.0 + 0.5;  // every entry starts at 0.5
  acc = __builtin_amdgcn_mfma_f64_4x4x4f64(A_AT(b, x, g), B_AT(b, g, x), acc, 0, 0, 0);
  D_AT((l / 4) % 4, l / 16, l % 4) = acc;
}
