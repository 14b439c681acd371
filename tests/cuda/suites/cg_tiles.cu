// Cooperative groups within a block: static tiles of 16 with cg::reduce and cg::inclusive_scan,
// labeled_partition by key, and coalesced_threads() inside a branch (no grid sync).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_tiles(const int* v, int* sums, int* scans, int* labeled, int* coalesced) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
    int t = block.thread_rank();
    int x = v[t];
    sums[t] = cg::reduce(tile, x, cg::plus<int>());
    scans[t] = cg::inclusive_scan(tile, x, cg::plus<int>());
    cg::coalesced_group warp = cg::coalesced_threads();
    cg::coalesced_group same = cg::labeled_partition(warp, x & 3);
    labeled[t] = cg::reduce(same, x, cg::greater<int>()) * 100 + (int)same.size();
    if (x % 2 == 0) {
        cg::coalesced_group evens = cg::coalesced_threads();
        coalesced[t] = evens.thread_rank() * 1000 + evens.num_threads();
    } else {
        coalesced[t] = -1;
    }
}
