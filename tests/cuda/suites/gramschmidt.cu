// PolyBench-GPU gramschmidt: QR by modified Gram-Schmidt, per column k: the norm (single thread,
// sqrtf), the normalised column Q(:,k), then R(k, j>k) and the projection out of A(:, j).
extern "C" __global__ void gs_kernel1(const float* a, float* r, int k, int m, int n) {
    if (blockIdx.x * blockDim.x + threadIdx.x == 0) {
        float nrm = 0.0f;
        for (int i = 0; i < m; i++) nrm += a[i * n + k] * a[i * n + k];
        r[k * n + k] = sqrtf(nrm);
    }
}

extern "C" __global__ void gs_kernel2(const float* a, const float* r, float* q, int k, int m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) q[i * n + k] = a[i * n + k] / r[k * n + k];
}

extern "C" __global__ void gs_kernel3(float* a, float* r, const float* q, int k, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j > k && j < n) {
        r[k * n + j] = 0.0f;
        for (int i = 0; i < m; i++) r[k * n + j] += q[i * n + k] * a[i * n + j];
        for (int i = 0; i < m; i++) a[i * n + j] -= q[i * n + k] * r[k * n + j];
    }
}
