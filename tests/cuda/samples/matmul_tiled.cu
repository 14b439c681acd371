// C = A * B with BLOCK x BLOCK shared tiles (templated tile size, as the matrixMul sample).
template <int BLOCK> __device__ void matmul_tile(float* C, const float* A, const float* B, int wA, int wB) {
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.0f;
    for (int a = wA * BLOCK * by, b = BLOCK * bx; a < wA * BLOCK * by + wA; a += BLOCK, b += BLOCK * wB) {
        __shared__ float As[BLOCK][BLOCK];
        __shared__ float Bs[BLOCK][BLOCK];
        As[ty][tx] = A[a + wA * ty + tx];
        Bs[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    C[wB * BLOCK * by + BLOCK * bx + wB * ty + tx] = acc;
}
extern "C" __global__ void matmul16(float* C, const float* A, const float* B, int wA, int wB) {
    matmul_tile<16>(C, A, B, wA, wB);
}
