// SHOC stencil2d: 9-point weighted stencil (centre, cardinal, diagonal weights) in double, from a shared
// tile with a one-cell halo loaded by the edge threads.
#define TX 16
#define TY 8

extern "C" __global__ void stencil2d(const double* __restrict__ data, double* __restrict__ out, int rows,
                                     int cols, double wc, double wn, double wd) {
    __shared__ double t[TY + 2][TX + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TX + tx + 1, y = blockIdx.y * TY + ty + 1;  // interior coordinates
    bool in = x < cols - 1 && y < rows - 1;
    if (in) {
        t[ty + 1][tx + 1] = data[y * cols + x];
        if (tx == 0) t[ty + 1][0] = data[y * cols + x - 1];
        if (tx == TX - 1 || x == cols - 2) t[ty + 1][tx + 2] = data[y * cols + x + 1];
        if (ty == 0) {
            t[0][tx + 1] = data[(y - 1) * cols + x];
            if (tx == 0) t[0][0] = data[(y - 1) * cols + x - 1];
            if (tx == TX - 1 || x == cols - 2) t[0][tx + 2] = data[(y - 1) * cols + x + 1];
        }
        if (ty == TY - 1 || y == rows - 2) {
            t[ty + 2][tx + 1] = data[(y + 1) * cols + x];
            if (tx == 0) t[ty + 2][0] = data[(y + 1) * cols + x - 1];
            if (tx == TX - 1 || x == cols - 2) t[ty + 2][tx + 2] = data[(y + 1) * cols + x + 1];
        }
    }
    __syncthreads();
    if (!in) return;
    double c = t[ty + 1][tx + 1];
    double card = t[ty][tx + 1] + t[ty + 2][tx + 1] + t[ty + 1][tx] + t[ty + 1][tx + 2];
    double diag = t[ty][tx] + t[ty][tx + 2] + t[ty + 2][tx] + t[ty + 2][tx + 2];
    out[y * cols + x] = wc * c + wn * card + wd * diag;
}
