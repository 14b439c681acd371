// The pre-Volta warp-synchronous reduction tail exactly as older Rodinia/SHOC/CUDA-samples code has it:
// volatile shared memory and no __syncwarp between the steps (it relies on the warp running converged,
// which holds in practice for this straight-line code), and a warp-synchronous scan likewise.
extern "C" __global__ void legacy_reduce(const int* in, int* out) {
    __shared__ int sdata[128];
    unsigned tid = threadIdx.x;
    sdata[tid] = in[blockIdx.x * 128 + tid];
    __syncthreads();
    if (tid < 64) sdata[tid] += sdata[tid + 64];
    __syncthreads();
    if (tid < 32) {
        volatile int* v = sdata;
        v[tid] += v[tid + 32];
        v[tid] += v[tid + 16];
        v[tid] += v[tid + 8];
        v[tid] += v[tid + 4];
        v[tid] += v[tid + 2];
        v[tid] += v[tid + 1];
    }
    if (tid == 0) out[blockIdx.x] = sdata[0];
}

extern "C" __global__ void legacy_warp_scan(const int* in, int* out) {
    __shared__ volatile int s[2 * 32 * 4];  // per warp: 32 zeros of padding, then the values
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    volatile int* w = s + warp * 64;
    w[lane] = 0;
    int idx = 32 + lane;
    w[idx] = in[blockIdx.x * blockDim.x + threadIdx.x];
    w[idx] += w[idx - 1];
    w[idx] += w[idx - 2];
    w[idx] += w[idx - 4];
    w[idx] += w[idx - 8];
    w[idx] += w[idx - 16];
    out[blockIdx.x * blockDim.x + threadIdx.x] = w[idx];
}
