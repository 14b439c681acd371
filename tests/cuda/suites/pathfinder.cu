// Rodinia pathfinder: minimum-cost path down a grid, row by row; each launch advances `iteration` rows
// in shared memory over a pyramid whose valid region shrinks by one column per side per row.
#define BS 64
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))

extern "C" __global__ void dynproc(int iteration, const int* wall, const int* src, int* dst, int cols,
                                   int start_step, int border) {
    __shared__ int prev[BS];
    __shared__ int result[BS];
    int bx = blockIdx.x, tx = threadIdx.x;
    int small_cols = BS - iteration * 2;
    int blk_x = small_cols * bx - border;
    int blk_x_max = blk_x + BS - 1;
    int xidx = blk_x + tx;
    int valid_l = (blk_x < 0) ? -blk_x : 0;
    int valid_r = (blk_x_max > cols - 1) ? BS - 1 - (blk_x_max - cols + 1) : BS - 1;
    int w = tx - 1, e = tx + 1;
    w = (w < valid_l) ? valid_l : w;
    e = (e > valid_r) ? valid_r : e;
    bool valid = IN_RANGE(tx, valid_l, valid_r);
    if (IN_RANGE(xidx, 0, cols - 1)) prev[tx] = src[xidx];
    __syncthreads();
    bool computed = false;
    for (int i = 0; i < iteration; i++) {
        computed = false;
        if (IN_RANGE(tx, i + 1, BS - i - 2) && valid) {
            computed = true;
            int shortest = min(min(prev[w], prev[tx]), prev[e]);
            result[tx] = shortest + wall[cols * (start_step + i) + xidx];
        }
        __syncthreads();
        if (i == iteration - 1) break;
        if (computed) prev[tx] = result[tx];
        __syncthreads();
    }
    if (computed) dst[xidx] = result[tx];
}
