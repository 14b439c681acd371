// More CUB block and warp primitives as public kernels use them: BlockLoad/BlockStore with warp
// transposes, BlockRadixSort of key-value pairs (blocked -> striped), BlockHistogram (shared atomics),
// BlockDiscontinuity head flags, WarpReduce (max) and WarpScan (inclusive sum), BlockReduce over float
// with the RAKING algorithm.
#include <cub/block/block_load.cuh>
#include <cub/block/block_store.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

struct NotEqual {
    __device__ bool operator()(int a, int b) const { return a != b; }
};

#define THREADS 128
#define ITEMS 4

extern "C" __global__ void cub_sort(const unsigned* keys_in, const int* vals_in, unsigned* keys_out, int* vals_out) {
    using Load = cub::BlockLoad<unsigned, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using LoadV = cub::BlockLoad<int, THREADS, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Sort = cub::BlockRadixSort<unsigned, THREADS, ITEMS, int>;
    using Store = cub::BlockStore<unsigned, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    using StoreV = cub::BlockStore<int, THREADS, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename Load::TempStorage load;
        typename LoadV::TempStorage loadv;
        typename Sort::TempStorage sort;
        typename Store::TempStorage store;
        typename StoreV::TempStorage storev;
    } tmp;
    int off = blockIdx.x * THREADS * ITEMS;
    unsigned k[ITEMS];
    int v[ITEMS];
    Load(tmp.load).Load(keys_in + off, k);
    __syncthreads();
    LoadV(tmp.loadv).Load(vals_in + off, v);
    __syncthreads();
    Sort(tmp.sort).Sort(k, v);
    __syncthreads();
    Store(tmp.store).Store(keys_out + off, k);
    __syncthreads();
    StoreV(tmp.storev).Store(vals_out + off, v);
}

extern "C" __global__ void cub_misc(const unsigned char* bytes, const int* vals, const float* fx, unsigned* hist,
                                    int* heads, int* warp_max, int* warp_scan, float* block_sum) {
    using Hist = cub::BlockHistogram<unsigned char, THREADS, ITEMS, 256>;
    using Disc = cub::BlockDiscontinuity<int, THREADS>;
    using WReduce = cub::WarpReduce<int>;
    using WScan = cub::WarpScan<int>;
    using BReduce = cub::BlockReduce<float, THREADS, cub::BLOCK_REDUCE_RAKING>;
    __shared__ typename Hist::TempStorage htmp;
    __shared__ unsigned smem_hist[256];
    __shared__ typename Disc::TempStorage dtmp;
    __shared__ typename WReduce::TempStorage wrtmp[THREADS / 32];
    __shared__ typename WScan::TempStorage wstmp[THREADS / 32];
    __shared__ typename BReduce::TempStorage brtmp;
    int t = threadIdx.x, warp = t / 32;
    unsigned char b[ITEMS];
    for (int i = 0; i < ITEMS; i++) b[i] = bytes[t * ITEMS + i];
    Hist(htmp).Histogram(b, smem_hist);
    __syncthreads();
    for (int i = t; i < 256; i += THREADS) hist[i] = smem_hist[i];
    int items[ITEMS], flags[ITEMS];
    for (int i = 0; i < ITEMS; i++) items[i] = vals[t * ITEMS + i];
    Disc(dtmp).FlagHeads(flags, items, NotEqual());
    for (int i = 0; i < ITEMS; i++) heads[t * ITEMS + i] = flags[i];
    int m = WReduce(wrtmp[warp]).Reduce(items[0], cuda::maximum<>());
    if (t % 32 == 0) warp_max[warp] = m;
    int s;
    WScan(wstmp[warp]).InclusiveSum(items[1], s);
    warp_scan[t] = s;
    float total = BReduce(brtmp).Sum(fx[t]);
    if (t == 0) *block_sum = total;
}
