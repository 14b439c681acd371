// Rodinia kmeans: each point (features stored feature-major, as the swapped layout of the benchmark)
// finds its nearest cluster centre; membership changes are counted with a block reduction + atomicAdd.
extern "C" __global__ void kmeans_assign(const float* __restrict__ features, const float* __restrict__ clusters,
                                         int* membership, int* changed, int npoints, int nclusters, int nfeatures) {
    __shared__ int delta[128];
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int moved = 0;
    if (p < npoints) {
        int best = -1;
        float best_d = 3.402823466e+38f;
        for (int c = 0; c < nclusters; c++) {
            float d = 0.0f;
            for (int f = 0; f < nfeatures; f++) {
                float diff = features[f * npoints + p] - clusters[c * nfeatures + f];
                d += diff * diff;
            }
            if (d < best_d) { best_d = d; best = c; }
        }
        moved = membership[p] != best;
        membership[p] = best;
    }
    delta[threadIdx.x] = moved;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) delta[threadIdx.x] += delta[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(changed, delta[0]);
}
