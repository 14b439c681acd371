// Rodinia lud: blocked LU decomposition without pivoting (L unit lower, U upper, in place). Per step:
// factor the diagonal block, solve the perimeter blocks of its row (U) and column (L), update the interior.
#define BS 16

extern "C" __global__ void lud_diagonal(float* m, int dim, int offset) {
    __shared__ float s[BS][BS];
    int tx = threadIdx.x;
    for (int i = 0; i < BS; i++) s[i][tx] = m[(offset + i) * dim + offset + tx];
    __syncthreads();
    for (int i = 0; i < BS - 1; i++) {
        if (tx > i) s[tx][i] /= s[i][i];
        __syncthreads();
        if (tx > i)
            for (int j = i + 1; j < BS; j++) s[tx][j] -= s[tx][i] * s[i][j];
        __syncthreads();
    }
    for (int i = 0; i < BS; i++) m[(offset + i) * dim + offset + tx] = s[i][tx];
}

// blockDim.x = 2 * BS: the first half solves the row block (U12), the second the column block (L21)
extern "C" __global__ void lud_perimeter(float* m, int dim, int offset) {
    __shared__ float dia[BS][BS];
    __shared__ float row[BS][BS];
    __shared__ float col[BS][BS];
    int tx = threadIdx.x;
    int blk = offset + (blockIdx.x + 1) * BS;
    if (tx < BS) {
        for (int i = 0; i < BS / 2; i++) dia[i][tx] = m[(offset + i) * dim + offset + tx];
        for (int i = 0; i < BS; i++) row[i][tx] = m[(offset + i) * dim + blk + tx];
    } else {
        int c = tx - BS;
        for (int i = BS / 2; i < BS; i++) dia[i][c] = m[(offset + i) * dim + offset + c];
        for (int i = 0; i < BS; i++) col[i][c] = m[(blk + i) * dim + offset + c];
    }
    __syncthreads();
    if (tx < BS) {  // forward substitution with unit L11, column tx of U12
        for (int i = 1; i < BS; i++)
            for (int k = 0; k < i; k++) row[i][tx] -= dia[i][k] * row[k][tx];
    } else {  // row r of L21: L21 * U11 = A21
        int r = tx - BS;
        for (int j = 0; j < BS; j++) {
            for (int k = 0; k < j; k++) col[r][j] -= col[r][k] * dia[k][j];
            col[r][j] /= dia[j][j];
        }
    }
    __syncthreads();
    if (tx < BS) {
        for (int i = 0; i < BS; i++) m[(offset + i) * dim + blk + tx] = row[i][tx];
    } else {
        int c = tx - BS;
        for (int i = 0; i < BS; i++) m[(blk + i) * dim + offset + c] = col[i][c];
    }
}

extern "C" __global__ void lud_internal(float* m, int dim, int offset) {
    __shared__ float l[BS][BS];
    __shared__ float u[BS][BS];
    int tx = threadIdx.x, ty = threadIdx.y;
    int gr = offset + (blockIdx.y + 1) * BS, gc = offset + (blockIdx.x + 1) * BS;
    l[ty][tx] = m[(gr + ty) * dim + offset + tx];
    u[ty][tx] = m[(offset + ty) * dim + gc + tx];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < BS; k++) sum += l[ty][k] * u[k][tx];
    m[(gr + ty) * dim + gc + tx] -= sum;
}
