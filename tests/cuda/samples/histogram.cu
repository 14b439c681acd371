// 256-bin byte histogram: per-block sub-histograms in shared memory merged with global atomics.
extern "C" __global__ void histogram256(const unsigned* data, unsigned n_words, unsigned* hist) {
    __shared__ unsigned sub[256];
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) sub[b] = 0;
    __syncthreads();
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n_words; i += blockDim.x * gridDim.x) {
        unsigned w = data[i];
        atomicAdd(&sub[(w >> 0) & 0xFF], 1u);
        atomicAdd(&sub[(w >> 8) & 0xFF], 1u);
        atomicAdd(&sub[(w >> 16) & 0xFF], 1u);
        atomicAdd(&sub[(w >> 24) & 0xFF], 1u);
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&hist[b], sub[b]);
}
