// PolyBench-GPU gesummv: y = alpha*A*x + beta*B*x (double).
extern "C" __global__ void gesummv(const double* A, const double* B, const double* x, double* y, double* tmp,
                                   int n, double alpha, double beta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int j = 0; j < n; j++) {
            tmp[i] += A[i * n + j] * x[j];
            y[i] += B[i * n + j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}
