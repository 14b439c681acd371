// SHOC sort: the radix-digit histogram phase; each block counts the 4-bit digits of its keys at `shift`
// in shared memory and writes its counts digit-major (counts[digit * nblocks + block]) for the scan.
#define RADIX 16

extern "C" __global__ void radix_histogram(const unsigned int* __restrict__ keys, unsigned int* counts, int n,
                                           int shift) {
    __shared__ unsigned int h[RADIX];
    if (threadIdx.x < RADIX) h[threadIdx.x] = 0;
    __syncthreads();
    int per_block = (n + gridDim.x - 1) / gridDim.x;
    int lo = blockIdx.x * per_block, hi = min(lo + per_block, n);
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) atomicAdd(&h[(keys[i] >> shift) & (RADIX - 1)], 1u);
    __syncthreads();
    if (threadIdx.x < RADIX) counts[threadIdx.x * gridDim.x + blockIdx.x] = h[threadIdx.x];
}
