// PolyBench-GPU bicg: s = A^T r and q = A p, one kernel each.
extern "C" __global__ void bicg_kernel1(const float* A, const float* r, float* s, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < ny) {
        s[j] = 0.0f;
        for (int i = 0; i < nx; i++) s[j] += r[i] * A[i * ny + j];
    }
}

extern "C" __global__ void bicg_kernel2(const float* A, const float* p, float* q, int nx, int ny) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nx) {
        q[i] = 0.0f;
        for (int j = 0; j < ny; j++) q[i] += A[i * ny + j] * p[j];
    }
}
