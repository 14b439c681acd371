// Block reduction in the style of the classic samples: shared-memory tree, then a warp finished with
// cooperative-groups tiles.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

template <unsigned BLOCK>
__device__ float block_sum(cg::thread_block block, float v, float* scratch) {
    unsigned t = block.thread_rank();
    scratch[t] = v;
    block.sync();
    for (unsigned s = BLOCK / 2; s > 32; s >>= 1) {
        if (t < s) scratch[t] = v = v + scratch[t + s];
        block.sync();
    }
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    if (warp.meta_group_rank() == 0) {
        v = scratch[t] + scratch[t + 32];
        v = cg::reduce(warp, v, cg::plus<float>());
    }
    return v;
}

extern "C" __global__ void reduce_sum(const float* in, float* out, unsigned n) {
    __shared__ float scratch[256];
    cg::thread_block block = cg::this_thread_block();
    float v = 0.0f;
    for (unsigned i = blockIdx.x * 512 + threadIdx.x; i < n; i += 512 * gridDim.x) {
        v += in[i];
        if (i + 256 < n) v += in[i + 256];
    }
    v = block_sum<256>(block, v, scratch);
    if (block.thread_rank() == 0) out[blockIdx.x] = v;
}
