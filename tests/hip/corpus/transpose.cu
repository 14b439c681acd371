// Matrix transpose through a padded shared-memory tile (coalesced reads and writes, no bank conflicts),
// timed with CUDA events.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

#define TILE_DIM 32
#define BLOCK_ROWS 8

extern "C" __global__ void transpose_tiled(float* odata, const float* idata, int width, int height) {
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];  // +1: no bank conflicts on the column read
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
        if (x < height && y + j < width) odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

#ifndef __CUDACC_RTC__
int main() {
    const int w = 2048, h = 1024;
    size_t bytes = (size_t)w * h * sizeof(float);
    float *d_in, *d_out;
    cudaMalloc(&d_in, bytes);
    cudaMalloc(&d_out, bytes);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    dim3 grid(w / TILE_DIM, h / TILE_DIM), block(TILE_DIM, BLOCK_ROWS);
    cudaEventRecord(start, 0);
    transpose_tiled<<<grid, block>>>(d_out, d_in, w, h);
    cudaEventRecord(stop, 0);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    printf("transpose: %.3f ms, %.1f GB/s\n", ms, 2.0 * bytes / ms / 1e6);
    cudaEventDestroy(start); cudaEventDestroy(stop);
    cudaFree(d_in); cudaFree(d_out);
    return 0;
}
#endif
