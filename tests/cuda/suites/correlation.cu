// PolyBench-GPU correlation: column means, standard deviations (sqrtf, with the eps guard), centring
// and scaling, then the symmetric correlation matrix.
#define FLOAT_N 3214212.01f
#define EPS 0.005f

extern "C" __global__ void corr_mean(float* mean, const float* data, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) {
        mean[j] = 0.0f;
        for (int i = 0; i < n; i++) mean[j] += data[i * m + j];
        mean[j] /= (float)n;
    }
}

extern "C" __global__ void corr_std(const float* mean, float* stddev, const float* data, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m) {
        stddev[j] = 0.0f;
        for (int i = 0; i < n; i++) stddev[j] += (data[i * m + j] - mean[j]) * (data[i * m + j] - mean[j]);
        stddev[j] /= (float)n;
        stddev[j] = sqrtf(stddev[j]);
        if (stddev[j] <= EPS) stddev[j] = 1.0f;
    }
}

extern "C" __global__ void corr_reduce(const float* mean, const float* stddev, float* data, int m, int n) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < m) {
        data[i * m + j] -= mean[j];
        data[i * m + j] /= sqrtf((float)n) * stddev[j];
    }
}

extern "C" __global__ void corr_corr(float* symmat, const float* data, int m, int n) {
    int j1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (j1 < m - 1) {
        symmat[j1 * m + j1] = 1.0f;
        for (int j2 = j1 + 1; j2 < m; j2++) {
            symmat[j1 * m + j2] = 0.0f;
            for (int i = 0; i < n; i++) symmat[j1 * m + j2] += data[i * m + j1] * data[i * m + j2];
            symmat[j2 * m + j1] = symmat[j1 * m + j2];
        }
    }
    if (j1 == m - 1) symmat[j1 * m + j1] = 1.0f;
}
