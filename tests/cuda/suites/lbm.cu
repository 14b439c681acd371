// Parboil lbm-style stream-and-collide on a D2Q9 lattice (structure-of-arrays: one plane per
// direction), BGK collision with the equilibrium distribution, periodic boundaries, obstacle cells
// bounce back.
#define Q 9
__constant__ int cx[Q] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
__constant__ int cy[Q] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
__constant__ float wq[Q] = {4.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 9, 1.0f / 36, 1.0f / 36, 1.0f / 36,
                            1.0f / 36};
__constant__ int opposite[Q] = {0, 3, 4, 1, 2, 7, 8, 5, 6};

extern "C" __global__ void lbm_step(const float* __restrict__ src, float* __restrict__ dst,
                                    const unsigned char* __restrict__ obstacle, int nx, int ny, float omega) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    int cells = nx * ny, idx = y * nx + x;
    float f[Q];
#pragma unroll
    for (int q = 0; q < Q; q++) {  // pull streaming from the upwind neighbour
        int sx = (x - cx[q] + nx) % nx, sy = (y - cy[q] + ny) % ny;
        f[q] = src[q * cells + sy * nx + sx];
    }
    if (obstacle[idx]) {
#pragma unroll
        for (int q = 0; q < Q; q++) dst[q * cells + idx] = f[opposite[q]];
        return;
    }
    float rho = 0.0f, ux = 0.0f, uy = 0.0f;
#pragma unroll
    for (int q = 0; q < Q; q++) { rho += f[q]; ux += cx[q] * f[q]; uy += cy[q] * f[q]; }
    ux /= rho;
    uy /= rho;
    float usq = 1.5f * (ux * ux + uy * uy);
#pragma unroll
    for (int q = 0; q < Q; q++) {
        float cu = 3.0f * (cx[q] * ux + cy[q] * uy);
        float feq = wq[q] * rho * (1.0f + cu + 0.5f * cu * cu - usq);
        dst[q * cells + idx] = f[q] + omega * (feq - f[q]);
    }
}
