// PolyBench-GPU adi: alternating-direction implicit sweeps; row kernels (one thread per row, a forward
// then a backward recurrence) and column kernels (one thread per column).
extern "C" __global__ void adi_rows(const float* A, float* B, float* X, int n) {
    int i1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (i1 < n) {
        for (int i2 = 1; i2 < n; i2++) {
            X[i1 * n + i2] = X[i1 * n + i2] - X[i1 * n + (i2 - 1)] * A[i1 * n + i2] / B[i1 * n + (i2 - 1)];
            B[i1 * n + i2] = B[i1 * n + i2] - A[i1 * n + i2] * A[i1 * n + i2] / B[i1 * n + (i2 - 1)];
        }
        X[i1 * n + (n - 1)] = X[i1 * n + (n - 1)] / B[i1 * n + (n - 1)];
        for (int i2 = 0; i2 < n - 2; i2++)
            X[i1 * n + (n - i2 - 2)] = (X[i1 * n + (n - 2 - i2)] - X[i1 * n + (n - 2 - i2 - 1)] *
                                        A[i1 * n + (n - i2 - 3)]) / B[i1 * n + (n - 3 - i2)];
    }
}

extern "C" __global__ void adi_cols(const float* A, float* B, float* X, int n) {
    int i2 = blockIdx.x * blockDim.x + threadIdx.x;
    if (i2 < n) {
        for (int i1 = 1; i1 < n; i1++) {
            X[i1 * n + i2] = X[i1 * n + i2] - X[(i1 - 1) * n + i2] * A[i1 * n + i2] / B[(i1 - 1) * n + i2];
            B[i1 * n + i2] = B[i1 * n + i2] - A[i1 * n + i2] * A[i1 * n + i2] / B[(i1 - 1) * n + i2];
        }
        X[(n - 1) * n + i2] = X[(n - 1) * n + i2] / B[(n - 1) * n + i2];
    }
}
