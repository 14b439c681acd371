// The common (formally undefined, universally relied upon) pattern of returning early before a
// __syncthreads(): on Volta+ exited threads count as arrived at the barrier, so the remaining threads
// of the last, partial block still synchronise and reduce. Also divergent loop exits followed by
// warp-level work on the lanes still active (__activemask + shuffles).
extern "C" __global__ void early_exit_sum(const float* in, float* out, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    s[threadIdx.x] = in[i];
    __syncthreads();
    int valid = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));
    if (threadIdx.x == 0) {
        float acc = 0.0f;
        for (int k = 0; k < valid; k++) acc += s[k];
        out[blockIdx.x] = acc;
    }
}

extern "C" __global__ void divergent_loops(const int* trips, int* out) {
    int t = threadIdx.x;
    int k = 0, acc = 0;
    while (true) {
        if (k >= trips[t]) break;
        acc += k * (t + 1);
        k++;
    }
    // lanes leave the loop at different times; after reconvergence they all take part again
    unsigned m = __activemask();
    int total = acc;
    for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(m, total, off);
    out[2 * t] = acc;
    out[2 * t + 1] = total;
    if (trips[t] & 1) {
        unsigned odd = __activemask();
        out[128 + t] = __popc(odd) * 100 + __shfl_sync(odd, t, __ffs(odd) - 1);
    } else {
        out[128 + t] = -1;
    }
}
