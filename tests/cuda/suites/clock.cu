// The clock sample's timing idiom: each block reads clock() before and after its work (a shared-memory
// reduction, then a __nanosleep) and stores both, so the host can compute elapsed cycles per block.
extern "C" __global__ void timed_reduction(const float* in, float* out, long long* timer) {
    extern __shared__ float s[];
    int t = threadIdx.x, b = blockIdx.x;
    if (t == 0) timer[b] = clock64();
    s[t] = in[b * blockDim.x + t];
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (t < st) s[t] += s[t + st];
        __syncthreads();
    }
    __nanosleep(1000);
    if (t == 0) {
        out[b] = s[0];
        timer[b + gridDim.x] = clock64();
    }
}

// A latency micro-benchmark's shape: clock64() around one dependent load and a __nanosleep, no branch
// in between.
extern "C" __global__ void load_latency(const int* chain, int* sink, long long* cycles) {
    long long c0 = clock64();
    int j = chain[threadIdx.x];
    __nanosleep(500);
    long long c1 = clock64();
    sink[threadIdx.x] = j;
    cycles[threadIdx.x] = c1 - c0;
}
