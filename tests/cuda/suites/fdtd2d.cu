// PolyBench-GPU fdtd-2d: per time step, the ey, ex and hz field updates (three kernels; the first row of
// ey takes the step's source value).
extern "C" __global__ void fdtd_step1(const float* fict, float* ex, float* ey, const float* hz, int t, int nx,
                                      int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && j < ny) {
        if (i == 0) ey[i * ny + j] = fict[t];
        else ey[i * ny + j] = ey[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
    }
}

extern "C" __global__ void fdtd_step2(float* ex, const float* ey, const float* hz, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && j < ny && j > 0) ex[i * ny + j] = ex[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[i * ny + (j - 1)]);
}

extern "C" __global__ void fdtd_step3(const float* ex, const float* ey, float* hz, int nx, int ny) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx - 1 && j < ny - 1)
        hz[i * ny + j] = hz[i * ny + j] - 0.7f * (ex[i * ny + (j + 1)] - ex[i * ny + j] + ey[(i + 1) * ny + j] -
                                                  ey[i * ny + j]);
}
