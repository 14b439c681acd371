// 3x3 box blur of a 2-D image on a 2-D grid, clamping at the borders; pitched device memory on the host side.
#ifndef __CUDACC_RTC__
#include <cstdio>
#include <cuda_runtime.h>
#endif

extern "C" __global__ void box_blur(const float* in, float* out, int width, int height, int pitch) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            int xx = min(max(x + dx, 0), width - 1);
            int yy = min(max(y + dy, 0), height - 1);
            sum += __ldg(&in[yy * pitch + xx]);
        }
    out[y * pitch + x] = sum * (1.0f / 9.0f);
}

#ifndef __CUDACC_RTC__
int main() {
    const int w = 640, h = 480;
    float* host = new float[w * h]();
    float *d_in, *d_out;
    size_t pitch_bytes;
    cudaMallocPitch((void**)&d_in, &pitch_bytes, w * sizeof(float), h);
    cudaMallocPitch((void**)&d_out, &pitch_bytes, w * sizeof(float), h);
    cudaMemcpy2D(d_in, pitch_bytes, host, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice);
    dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    box_blur<<<grid, block>>>(d_in, d_out, w, h, (int)(pitch_bytes / sizeof(float)));
    cudaMemcpy2D(host, w * sizeof(float), d_out, pitch_bytes, w * sizeof(float), h, cudaMemcpyDeviceToHost);
    cudaFree(d_in); cudaFree(d_out);
    delete[] host;
    return 0;
}
#endif
