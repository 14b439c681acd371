// Rodinia gaussian: forward elimination, one column at a time: Fan1 computes the multipliers of
// column t, Fan2 (2-D grid) subtracts them from the trailing matrix and the right-hand side.
extern "C" __global__ void fan1(float* m, const float* a, int size, int t) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= size - 1 - t) return;
    m[size * (i + t + 1) + t] = a[size * (i + t + 1) + t] / a[size * t + t];
}

extern "C" __global__ void fan2(const float* m, float* a, float* b, int size, int t) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= size - 1 - t || y >= size - t) return;
    a[size * (x + 1 + t) + (y + t)] -= m[size * (x + 1 + t) + t] * a[size * t + (y + t)];
    if (y == 0) b[x + 1 + t] -= m[size * (x + 1 + t) + (y + t)] * b[t];
}
