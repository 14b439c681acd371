// Bitonic sort of one block's 1024 keys in shared memory (ascending), 512 threads.
extern "C" __global__ void bitonic_sort(unsigned* keys) {
    __shared__ unsigned s[1024];
    unsigned t = threadIdx.x, base = blockIdx.x * 1024;
    s[t] = keys[base + t];
    s[t + 512] = keys[base + t + 512];
    for (unsigned size = 2; size <= 1024; size <<= 1) {
        for (unsigned stride = size / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            unsigned pos = 2 * t - (t & (stride - 1));
            bool up = ((pos & size) == 0) || size == 1024;
            unsigned a = s[pos], b = s[pos + stride];
            if ((a > b) == up) { s[pos] = b; s[pos + stride] = a; }
        }
    }
    __syncthreads();
    keys[base + t] = s[t];
    keys[base + t + 512] = s[t + 512];
}
