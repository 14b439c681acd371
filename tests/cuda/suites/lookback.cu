// Single-pass prefix sum with decoupled look-back (the CUB / "Merrill-Garland" scheme): blocks take a
// dynamic tile index from an atomic ticket, publish their aggregate with a status flag, and spin on
// their predecessors' flags (volatile loads + __threadfence) to get the exclusive prefix.
#define TILE 256
#define FLAG_EMPTY 0
#define FLAG_AGG 1
#define FLAG_PREFIX 2

extern "C" __global__ void lookback_scan(const int* in, int* out, unsigned* ticket, volatile int* flags,
                                         volatile int* aggs, volatile int* prefixes, int n) {
    __shared__ int s[TILE];
    __shared__ unsigned tile_s;
    __shared__ int exclusive_s;
    if (threadIdx.x == 0) tile_s = atomicAdd(ticket, 1u);
    __syncthreads();
    unsigned tile = tile_s;
    int i = tile * TILE + threadIdx.x;
    int x = i < n ? in[i] : 0;
    s[threadIdx.x] = x;
    __syncthreads();
    for (int off = 1; off < TILE; off <<= 1) {  // Hillis-Steele inclusive scan in place
        int y = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
        __syncthreads();
        s[threadIdx.x] += y;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        int agg = s[TILE - 1];
        if (tile == 0) {
            prefixes[0] = agg;
            __threadfence();
            flags[0] = FLAG_PREFIX;
            exclusive_s = 0;
        } else {
            aggs[tile] = agg;
            __threadfence();
            flags[tile] = FLAG_AGG;
            int excl = 0;
            int p = tile - 1;
            while (true) {
                int f;
                while ((f = flags[p]) == FLAG_EMPTY) {}
                __threadfence();
                if (f == FLAG_PREFIX) { excl += prefixes[p]; break; }
                excl += aggs[p];
                p--;
            }
            prefixes[tile] = excl + agg;
            __threadfence();
            flags[tile] = FLAG_PREFIX;
            exclusive_s = excl;
        }
    }
    __syncthreads();
    if (i < n) out[i] = exclusive_s + s[threadIdx.x] - x;
}
