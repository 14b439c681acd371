// Rodinia backprop: the layer-forward kernel (a 16x16 tile of input*weight products summed down a
// shared-memory tree) and the weight-adjust kernel with momentum.
#define WIDTH 16
#define HEIGHT 16
#define ETA 0.3f
#define MOMENTUM 0.3f

extern "C" __global__ void layer_forward(const float* input, const float* weights, float* partial, int hid) {
    int by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int row = by * HEIGHT + ty;  // input unit (1-based in the weight matrix: row 0 is the bias)
    __shared__ float in_node[HEIGHT];
    __shared__ float w[HEIGHT][WIDTH];
    if (tx == 0) in_node[ty] = input[row + 1];
    __syncthreads();
    w[ty][tx] = weights[(row + 1) * (hid + 1) + tx + 1] * in_node[ty];
    __syncthreads();
    for (int i = 1; i <= 4; i++) {  // log2(HEIGHT) steps
        int step = 1 << i;
        if (ty % step == 0) w[ty][tx] += w[ty + step / 2][tx];
        __syncthreads();
    }
    if (ty == 0) partial[by * hid + tx] = w[0][tx];
}

extern "C" __global__ void adjust_weights(const float* delta, int hid, const float* ly, float* w, float* oldw) {
    int by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int row = HEIGHT * by + ty + 1, col = tx + 1;
    int idx = row * (hid + 1) + col;
    float d = ETA * delta[col] * ly[row] + MOMENTUM * oldw[idx];
    w[idx] += d;
    oldw[idx] = d;
    __syncthreads();
    if (ty == 0 && by == 0) {  // the bias row
        float b = ETA * delta[col] + MOMENTUM * oldw[col];
        w[col] += b;
        oldw[col] = b;
    }
}
