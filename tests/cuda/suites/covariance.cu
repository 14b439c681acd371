// PolyBench-GPU covariance (double): means, centring, then the symmetric covariance matrix.
extern "C" __global__ void cov_mean(double* mean, const double* data, double float_n, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) {
        mean[j] = 0.0;
        for (int i = 0; i < n; i++) mean[j] += data[i * m + j];
        mean[j] /= float_n;
    }
}

extern "C" __global__ void cov_reduce(const double* mean, double* data, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < m) data[i * m + j] -= mean[j];
}

extern "C" __global__ void cov_covar(double* symmat, const double* data, int m, int n) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 < m) {
        for (int j2 = j1; j2 < m; j2++) {
            double s = 0.0;
            for (int i = 0; i < n; i++) s += data[i * m + j1] * data[i * m + j2];
            symmat[j1 * m + j2] = s / (n - 1);
            symmat[j2 * m + j1] = symmat[j1 * m + j2];
        }
    }
}
