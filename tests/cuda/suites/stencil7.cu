// Parboil stencil: 7-point Jacobi step on a 3-D grid; each thread owns an (x, y) column and walks z.
#define IDX(i, j, k) ((i) + nx * ((j) + ny * (k)))

extern "C" __global__ void stencil7(float c0, float c1, const float* __restrict__ A0, float* __restrict__ Anext,
                                    int nx, int ny, int nz) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i >= nx - 1 || j >= ny - 1) return;
    for (int k = 1; k < nz - 1; k++) {
        Anext[IDX(i, j, k)] = (A0[IDX(i, j, k + 1)] + A0[IDX(i, j, k - 1)] + A0[IDX(i, j + 1, k)] +
                               A0[IDX(i, j - 1, k)] + A0[IDX(i + 1, j, k)] + A0[IDX(i - 1, j, k)]) * c1 -
                              A0[IDX(i, j, k)] * c0;
    }
}
