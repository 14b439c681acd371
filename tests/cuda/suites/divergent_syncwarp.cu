// Independent thread scheduling, Volta+: the two halves of a warp take different branches and meet at
// different __syncwarp() call sites (bar.warp.sync may be executed from different instructions on
// sm_70+), exchanging data through shared memory across the divergent paths.
extern "C" __global__ void divergent_syncwarp(const int* in, int* out) {
    __shared__ int s[64];
    int t = threadIdx.x, lane = t & 31, base = t & ~31;
    int x = in[t], y;
    if (lane < 16) {
        s[t] = x * 2;
        __syncwarp();
        y = s[base + lane + 16] + 1000;
    } else {
        s[t] = x * 3;
        __syncwarp();
        y = s[base + lane - 16] - 1000;
    }
    out[t] = y;
}
