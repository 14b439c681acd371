// Stream compaction with warp-aggregated atomics over coalesced groups (cg::coalesced_threads).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int aggregated_inc(int* counter) {
    cg::coalesced_group g = cg::coalesced_threads();
    int prev = 0;
    if (g.thread_rank() == 0) prev = atomicAdd(counter, (int)g.size());
    return g.shfl(prev, 0) + g.thread_rank();
}
extern "C" __global__ void compact_positive(const int* in, int* out, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] > 0) out[aggregated_inc(count)] = in[i];
}
