// PolyBench-GPU atax: y = A^T (A x) as two kernels (row sweep, then column sweep).
extern "C" __global__ void atax_kernel1(const float* A, const float* x, float* tmp, int nx, int ny) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nx) {
        for (int j = 0; j < ny; j++) tmp[i] += A[i * ny + j] * x[j];
    }
}

extern "C" __global__ void atax_kernel2(const float* A, float* y, const float* tmp, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < ny) {
        for (int i = 0; i < nx; i++) y[j] += A[i * ny + j] * tmp[i];
    }
}
