// PolyBench-GPU syrk: C = alpha*A*A^T + beta*C over the full matrix.
extern "C" __global__ void syrk(const float* a, float* c, float alpha, float beta, int n, int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        c[i * n + j] *= beta;
        for (int k = 0; k < m; k++) c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
    }
}
