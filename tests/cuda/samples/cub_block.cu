// Block-wide sum and exclusive prefix sum with CUB's block primitives.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
extern "C" __global__ void cub_block(const int* in, int* scan, int* total) {
    using Reduce = cub::BlockReduce<int, 128>;
    using Scan = cub::BlockScan<int, 128>;
    __shared__ typename Reduce::TempStorage rtmp;
    __shared__ typename Scan::TempStorage stmp;
    int i = blockIdx.x * 128 + threadIdx.x;
    int v = in[i];
    int s = Reduce(rtmp).Sum(v);
    if (threadIdx.x == 0) total[blockIdx.x] = s;
    int x;
    Scan(stmp).ExclusiveSum(v, x);
    scan[i] = x;
}
