// A pitched 2-D image (cudaMallocPitch rows, addressed through a char* plus row * pitch as the CUDA
// Programming Guide shows) filtered with a 3x3 box blur, clamped at the borders, into a second pitched image.
extern "C" __global__ void box_blur(const float* src, size_t spitch, float* dst, size_t dpitch, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        const float* row = (const float*)((const char*)src + min(max(y + dy, 0), h - 1) * spitch);
        for (int dx = -1; dx <= 1; dx++) acc += row[min(max(x + dx, 0), w - 1)];
    }
    float* out = (float*)((char*)dst + y * dpitch);
    out[x] = acc * (1.0f / 9.0f);
}
