// Rodinia needleman-wunsch: the score matrix is filled tile by tile along block anti-diagonals; inside a
// tile the threads sweep the cell anti-diagonals in shared memory (growing, then shrinking wavefront).
#define BS 16

__device__ __forceinline__ int max3(int a, int b, int c) { return max(max(a, b), c); }

extern "C" __global__ void nw_diagonal(const int* ref, int* item, int cols, int penalty, int diag, int first_bx) {
    __shared__ int temp[BS + 1][BS + 1];
    __shared__ int ref_s[BS][BS];
    int tx = threadIdx.x;
    int bx = first_bx + blockIdx.x, by = diag - bx;  // tile column, tile row
    int base = cols * BS * by + BS * bx;              // the tile's top-left halo cell
    for (int ty = 0; ty < BS; ty++) ref_s[ty][tx] = ref[base + cols * (ty + 1) + tx + 1];
    if (tx == 0) temp[0][0] = item[base];
    temp[tx + 1][0] = item[base + cols * (tx + 1)];
    temp[0][tx + 1] = item[base + tx + 1];
    __syncthreads();
    for (int m = 0; m < BS; m++) {
        if (tx <= m) {
            int x = tx + 1, y = m - tx + 1;
            temp[y][x] = max3(temp[y - 1][x - 1] + ref_s[y - 1][x - 1], temp[y][x - 1] - penalty,
                              temp[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    for (int m = BS - 2; m >= 0; m--) {
        if (tx <= m) {
            int x = tx + BS - m, y = BS - tx;
            temp[y][x] = max3(temp[y - 1][x - 1] + ref_s[y - 1][x - 1], temp[y][x - 1] - penalty,
                              temp[y - 1][x] - penalty);
        }
        __syncthreads();
    }
    for (int ty = 0; ty < BS; ty++) item[base + cols * (ty + 1) + tx + 1] = temp[ty + 1][tx + 1];
}
