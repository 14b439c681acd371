// The threadFenceReduction pattern: each block writes its partial sum, fences, takes a ticket with
// atomicInc, and the last block to finish sums the partials.
__device__ unsigned int retirement_count = 0;

extern "C" __global__ void sum_last_block(const float* in, volatile float* partial, float* result, int n) {
    __shared__ float s[128];
    __shared__ bool am_last;
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) acc += in[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = s[0];
        __threadfence();
        unsigned int ticket = atomicInc(&retirement_count, gridDim.x);
        am_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (am_last && threadIdx.x == 0) {
        float total = 0.0f;
        for (int b = 0; b < gridDim.x; b++) total += partial[b];
        *result = total;
        retirement_count = 0;
    }
}
