// Parboil tpacf: angular correlation histogram. Each pair's dot product of unit vectors is binned by a
// binary search over descending bin boundaries (constant memory) into per-block shared histograms.
#define NBINS 20
__constant__ float binb[NBINS + 1];

extern "C" __global__ void tpacf_hist(const float3* pts, int n, unsigned long long* hist) {
    __shared__ unsigned int sh[NBINS + 2];
    for (int b = threadIdx.x; b < NBINS + 2; b += blockDim.x) sh[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x; i < n; i += gridDim.x) {
        float3 p = pts[i];
        for (int j = i + 1 + threadIdx.x; j < n; j += blockDim.x) {
            float3 q = pts[j];
            float dot = p.x * q.x + p.y * q.y + p.z * q.z;
            // the number of boundaries >= dot (a prefix, since they descend) is the bin
            int lo = 0, hi = NBINS + 1;
            while (lo < hi) {
                int mid = (lo + hi) >> 1;
                if (binb[mid] >= dot) lo = mid + 1; else hi = mid;
            }
            atomicAdd(&sh[lo], 1u);
        }
    }
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS + 2; b += blockDim.x) atomicAdd(&hist[b], (unsigned long long)sh[b]);
}
