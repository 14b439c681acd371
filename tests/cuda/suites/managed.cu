// __managed__ variables (unified memory globals): the kernel updates them and the host reads them back
// through the symbol, as quick-start codes do.
__managed__ int hits;
__managed__ float total[4];

extern "C" __global__ void managed_count(const float* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (v[i] > 0.0f) atomicAdd(&hits, 1);
    atomicAdd(&total[i & 3], 1.0f);
}
