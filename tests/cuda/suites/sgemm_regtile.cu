// Parboil sgemm: register tiling. Each thread keeps a column of TILE_N accumulators in registers; a
// block stages a TILE_N x TILE_TB slice of B in shared memory and streams A through registers
// (C = alpha * A * B^T + beta * C, column-major as in the benchmark).
#define TILE_N 16
#define TILE_TB_HEIGHT 8
#define TILE_M (TILE_N * TILE_TB_HEIGHT)

extern "C" __global__ void sgemm_nt(const float* A, int lda, const float* B, int ldb, float* C, int ldc, int k,
                                    float alpha, float beta) {
    float c[TILE_N];
#pragma unroll
    for (int i = 0; i < TILE_N; i++) c[i] = 0.0f;
    int mid = threadIdx.y * blockDim.x + threadIdx.x;  // 0..TILE_M-1
    int m = blockIdx.x * TILE_M + mid;
    int n = blockIdx.y * TILE_N + threadIdx.x;
    __shared__ float b_s[TILE_TB_HEIGHT][TILE_N];
    for (int i = 0; i < k; i += TILE_TB_HEIGHT) {
        b_s[threadIdx.y][threadIdx.x] = B[n + (i + threadIdx.y) * ldb];
        __syncthreads();
        for (int j = 0; j < TILE_TB_HEIGHT; j++) {
            float a = A[m + (i + j) * lda];
#pragma unroll
            for (int kk = 0; kk < TILE_N; kk++) c[kk] += a * b_s[j][kk];
        }
        __syncthreads();
    }
    int t = ldc * blockIdx.y * TILE_N + m;
#pragma unroll
    for (int i = 0; i < TILE_N; i++) C[t + i * ldc] = C[t + i * ldc] * beta + alpha * c[i];
}
