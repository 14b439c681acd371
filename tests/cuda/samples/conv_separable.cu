// Row pass of a separable convolution with the filter in constant memory.
#define RADIUS 8
__constant__ float c_kernel[2 * RADIUS + 1];
extern "C" __global__ void conv_rows(float* dst, const float* src, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) {
        int xx = min(max(x + k, 0), w - 1);
        s += src[y * w + xx] * c_kernel[RADIUS - k];
    }
    dst[y * w + x] = s;
}
