// Hopper thread-block clusters: a compile-time cluster of 2 blocks; each block writes its shared
// buffer, the cluster synchronises, and each block reads its partner's buffer through distributed
// shared memory (map_shared_rank).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_swap(const int* in, int* out, int* ranks) {
    __shared__ int buf[64];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    buf[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x] * 10 + (int)rank;
    cluster.sync();
    int* peer = cluster.map_shared_rank(buf, rank ^ 1);
    out[blockIdx.x * 64 + threadIdx.x] = peer[63 - threadIdx.x];
    if (threadIdx.x == 0) ranks[blockIdx.x] = (int)(rank + 10 * cluster.num_blocks());
    cluster.sync();  // keep our shared memory alive until the partner has read it
}
