// Parboil spmv: JDS format (rows sorted by length, jagged diagonals with their start offsets in constant
// memory, one thread per row, __ldg for x), and CSR with one warp per row and a shuffle reduction.
#define MAX_DIAGS 64
__constant__ int jds_ptr[MAX_DIAGS];

extern "C" __global__ void spmv_jds(float* __restrict__ y, const float* __restrict__ data,
                                    const int* __restrict__ indices, const int* __restrict__ perm,
                                    const float* __restrict__ x, const int* __restrict__ row_len, int dim) {
    int ix = blockIdx.x * blockDim.x + threadIdx.x;
    if (ix < dim) {
        float sum = 0.0f;
        int bound = row_len[ix];
        for (int k = 0; k < bound; k++) {
            int j = jds_ptr[k] + ix;
            sum += data[j] * __ldg(&x[indices[j]]);
        }
        y[perm[ix]] = sum;
    }
}

extern "C" __global__ void spmv_csr_warp(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                         const float* __restrict__ vals, const float* __restrict__ x,
                                         float* __restrict__ y, int nrows) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / warpSize;
    int lane = threadIdx.x & (warpSize - 1);
    if (warp >= nrows) return;  // whole warps leave together
    float sum = 0.0f;
    for (int j = row_ptr[warp] + lane; j < row_ptr[warp + 1]; j += warpSize) sum += vals[j] * __ldg(x + cols[j]);
    for (int off = warpSize / 2; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off);
    if (lane == 0) y[warp] = sum;
}
