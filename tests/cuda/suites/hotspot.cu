// Rodinia hotspot: one step of the thermal stencil over a 2-D grid, with a shared tile that loads a
// one-cell halo (clamped at the chip border) so interior threads read neighbours from shared memory.
#define BS 16

extern "C" __global__ void hotspot_step(const float* __restrict__ power, const float* __restrict__ temp_src,
                                        float* __restrict__ temp_dst, int cols, int rows, float cap_inv,
                                        float rx_inv, float ry_inv, float rz_inv, float amb) {
    __shared__ float t[BS + 2][BS + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * BS + tx, y = blockIdx.y * BS + ty;
    int cx = min(x, cols - 1), cy = min(y, rows - 1);
    t[ty + 1][tx + 1] = temp_src[cy * cols + cx];
    if (tx == 0) t[ty + 1][0] = temp_src[cy * cols + max(cx - 1, 0)];
    if (tx == BS - 1) t[ty + 1][BS + 1] = temp_src[cy * cols + min(cx + 1, cols - 1)];
    if (ty == 0) t[0][tx + 1] = temp_src[max(cy - 1, 0) * cols + cx];
    if (ty == BS - 1) t[BS + 1][tx + 1] = temp_src[min(cy + 1, rows - 1) * cols + cx];
    __syncthreads();
    if (x >= cols || y >= rows) return;
    // at the border the clamped halo repeats the cell itself, so that neighbour's term is zero
    float c = t[ty + 1][tx + 1];
    float w = (x == 0) ? c : t[ty + 1][tx];
    float e = (x == cols - 1) ? c : t[ty + 1][tx + 2];
    float n = (y == 0) ? c : t[ty][tx + 1];
    float s = (y == rows - 1) ? c : t[ty + 2][tx + 1];
    float delta = cap_inv * (power[y * cols + x] + (s + n - 2.0f * c) * ry_inv + (e + w - 2.0f * c) * rx_inv +
                             (amb - c) * rz_inv);
    temp_dst[y * cols + x] = c + delta;
}
