// PolyBench-GPU jacobi-1d and jacobi-2d: the averaging sweep and the copy-back, as separate kernels.
extern "C" __global__ void jacobi1d_k1(int n, const float* A, float* B) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) B[i] = 0.33333f * (A[i - 1] + A[i] + A[i + 1]);
}

extern "C" __global__ void jacobi1d_k2(int n, float* A, const float* B) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j > 0 && j < n - 1) A[j] = B[j];
}

extern "C" __global__ void jacobi2d_k1(int n, const double* A, double* B) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
        B[i * n + j] = 0.2 * (A[i * n + j] + A[i * n + (j - 1)] + A[i * n + (1 + j)] + A[(1 + i) * n + j] +
                              A[(i - 1) * n + j]);
}

extern "C" __global__ void jacobi2d_k2(int n, double* A, const double* B) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1) A[i * n + j] = B[i * n + j];
}
