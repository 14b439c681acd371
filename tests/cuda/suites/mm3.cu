// PolyBench-GPU 3mm: E = A*B, F = C*D, G = E*F with one generic kernel launched three times (double).
extern "C" __global__ void mm3_kernel(int ni, int nj, int nk, const double* A, const double* B, double* E) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && j < nj) {
        double acc = 0.0;
        for (int k = 0; k < nk; k++) acc += A[i * nk + k] * B[k * nj + j];
        E[i * nj + j] = acc;
    }
}
