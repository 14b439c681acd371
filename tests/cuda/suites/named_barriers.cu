// Warp specialisation with named barriers: warp 0 produces tiles into shared memory, warps 1-2 consume
// them; the two sides meet on barrier 1 (bar.arrive by the producer, bar.sync by the consumers, 96
// threads) and barrier 2 for the buffer's reuse, as CUTLASS-style pipelines do.
#define TILE 32
extern "C" __global__ void producer_consumer(const float* in, float* out, int ntiles) {
    __shared__ float buf[TILE];
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int k = 0; k < ntiles; k++) {
        if (warp == 0) {
            buf[lane] = in[k * TILE + lane] * 2.0f;
            asm volatile("bar.arrive 1, 96;" ::: "memory");   // tile ready
            asm volatile("bar.sync 2, 96;" ::: "memory");     // wait until consumed
        } else {
            asm volatile("bar.sync 1, 96;" ::: "memory");
            int c = (warp - 1) * 32 + lane;                   // 64 consumers, two per element
            if (c < TILE) out[k * TILE + c] = buf[c] + 1.0f;
            else out[ntiles * TILE + k * TILE + c - TILE] = buf[c - TILE] * buf[c - TILE];
            asm volatile("bar.arrive 2, 96;" ::: "memory");
        }
    }
}
