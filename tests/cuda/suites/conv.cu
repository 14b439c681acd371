// PolyBench-GPU 2DConvolution and 3DConvolution: fixed 3x3 / 3x3x3 stencil coefficients in registers.
extern "C" __global__ void conv2d(int ni, int nj, const float* A, float* B) {
    const float c11 = +0.2f, c21 = +0.5f, c31 = -0.8f;
    const float c12 = -0.3f, c22 = +0.6f, c32 = -0.9f;
    const float c13 = +0.4f, c23 = +0.7f, c33 = +0.10f;
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > 0 && j > 0 && i < ni - 1 && j < nj - 1) {
        B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c21 * A[(i - 1) * nj + j] + c31 * A[(i - 1) * nj + (j + 1)] +
                        c12 * A[i * nj + (j - 1)] + c22 * A[i * nj + j] + c32 * A[i * nj + (j + 1)] +
                        c13 * A[(i + 1) * nj + (j - 1)] + c23 * A[(i + 1) * nj + j] + c33 * A[(i + 1) * nj + (j + 1)];
    }
}

extern "C" __global__ void conv3d(int ni, int nj, int nk, const float* A, float* B, int i) {
    const float c11 = +2, c21 = +5, c31 = -8, c12 = -3, c22 = +6, c32 = -9, c13 = +4, c23 = +7, c33 = +10;
    int k = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y * blockDim.y + threadIdx.y;
#define A3(a, b, c) A[(a) * nk * nj + (b) * nk + (c)]
    if (i > 0 && j > 0 && k > 0 && i < ni - 1 && j < nj - 1 && k < nk - 1) {
        B[i * nk * nj + j * nk + k] =
            c11 * A3(i - 1, j - 1, k - 1) + c13 * A3(i + 1, j - 1, k - 1) + c21 * A3(i - 1, j - 1, k - 1) +
            c23 * A3(i + 1, j - 1, k - 1) + c31 * A3(i - 1, j - 1, k - 1) + c33 * A3(i + 1, j - 1, k - 1) +
            c12 * A3(i, j - 1, k) + c22 * A3(i, j, k) + c32 * A3(i, j + 1, k) + c11 * A3(i - 1, j - 1, k + 1) +
            c13 * A3(i + 1, j - 1, k + 1) + c21 * A3(i - 1, j, k + 1) + c23 * A3(i + 1, j, k + 1) +
            c31 * A3(i - 1, j + 1, k + 1) + c33 * A3(i + 1, j + 1, k + 1);
    }
#undef A3
}
