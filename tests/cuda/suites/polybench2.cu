// More PolyBench-GPU kernels: gemver (four phases), syr2k, doitgen (3-D tensor times matrix), and lu
// (the per-k scale and rank-1 update kernels).
extern "C" __global__ void gemver_k1(float* a, const float* u1, const float* v1, const float* u2, const float* v2,
                                     int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) a[i * n + j] += u1[i] * v1[j] + u2[i] * v2[j];
}
extern "C" __global__ void gemver_k2(const float* a, float* x, const float* y, float beta, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        for (int j = 0; j < n; j++) x[i] += beta * a[j * n + i] * y[j];
}
extern "C" __global__ void gemver_k3(float* x, const float* z, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += z[i];
}
extern "C" __global__ void gemver_k4(const float* a, const float* x, float* w, float alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        for (int j = 0; j < n; j++) w[i] += alpha * a[i * n + j] * x[j];
}

extern "C" __global__ void syr2k(const double* a, const double* b, double* c, double alpha, double beta, int n,
                                 int m) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < n) {
        c[i * n + j] *= beta;
        for (int k = 0; k < m; k++) c[i * n + j] += alpha * a[i * m + k] * b[j * m + k] + alpha * b[i * m + k] * a[j * m + k];
    }
}

extern "C" __global__ void doitgen(const float* A, const float* C4, float* sum, int nr, int nq, int np_, int r) {
    int p = blockIdx.x * blockDim.x + threadIdx.x, q = blockIdx.y * blockDim.y + threadIdx.y;
    if (p < np_ && q < nq) {
        float acc = 0.0f;
        for (int s = 0; s < np_; s++) acc += A[r * nq * np_ + q * np_ + s] * C4[s * np_ + p];
        sum[r * nq * np_ + q * np_ + p] = acc;
    }
}

extern "C" __global__ void lu_scale(double* a, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j > k && j < n) a[k * n + j] /= a[k * n + k];
}
extern "C" __global__ void lu_update(double* a, int n, int k) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i > k && j > k && i < n && j < n) a[i * n + j] -= a[i * n + k] * a[k * n + j];
}
