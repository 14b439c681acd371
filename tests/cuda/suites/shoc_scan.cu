// SHOC scan: three phases: per-block reduction, an exclusive scan of the block sums in one block, and
// the bottom scan (warp-level inclusive scans with shuffles, seeded by the block's scanned sum).
extern "C" __global__ void scan_reduce(const int* in, int* block_sums, int n) {
    __shared__ int s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) block_sums[blockIdx.x] = s[0];
}

// Hillis-Steele double-buffered exclusive scan of up to blockDim.x values
extern "C" __global__ void scan_top(int* block_sums, int nblocks) {
    __shared__ int buf[2][256];
    int t = threadIdx.x, pout = 0, pin = 1;
    buf[pout][t] = (t > 0 && t < nblocks) ? block_sums[t - 1] : 0;
    __syncthreads();
    for (int off = 1; off < blockDim.x; off *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        buf[pout][t] = buf[pin][t] + (t >= off ? buf[pin][t - off] : 0);
        __syncthreads();
    }
    if (t < nblocks) block_sums[t] = buf[pout][t];
}

extern "C" __global__ void scan_bottom(const int* in, int* out, const int* block_sums, int n) {
    __shared__ int warp_sums[8];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int v = i < n ? in[i] : 0;
    for (int off = 1; off < 32; off <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += y;
    }
    if (lane == 31) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int w = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0;
        for (int off = 1; off < 32; off <<= 1) {
            int y = __shfl_up_sync(0xffffffffu, w, off);
            if (lane >= off) w += y;
        }
        if (lane < 8) warp_sums[lane] = w;
    }
    __syncthreads();
    int seed = block_sums[blockIdx.x] + (warp > 0 ? warp_sums[warp - 1] : 0);
    if (i < n) out[i] = v + seed - (i < n ? in[i] : 0);  // exclusive
}
