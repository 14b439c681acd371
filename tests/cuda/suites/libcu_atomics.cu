// libcu++ atomics (cuda::atomic_ref with thread scopes, cuda::std::atomic in shared memory) and the
// classic atomic variants: 16/64-bit CAS, float exchange, 64-bit min/max/and/or, block-scoped add.
#include <cuda/atomic>

extern "C" __global__ void atomics2(int* counters, unsigned long long* u64, unsigned short* u16, float* fx,
                                    long long* s64, const int* v) {
    __shared__ cuda::atomic<int, cuda::thread_scope_block> block_sum;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) block_sum.store(0, cuda::std::memory_order_relaxed);
    __syncthreads();
    block_sum.fetch_add(v[t], cuda::std::memory_order_relaxed);
    cuda::atomic_ref<int, cuda::thread_scope_device> total(counters[0]);
    total.fetch_add(v[t]);
    cuda::atomic_ref<int, cuda::thread_scope_device> mx(counters[1]);
    mx.fetch_max(v[t]);
    atomicAdd_block(&counters[2 + blockIdx.x], 1);
    atomicMin(&u64[0], (unsigned long long)(1000 + v[t] * 7919ull));
    atomicMax(&s64[0], (long long)v[t] * -3);
    atomicOr(&u64[1], 1ull << (t & 63));
    atomicAnd(&u64[2], ~(1ull << (t % 50)));
    unsigned long long old = u64[3], assumed;
    do {  // 64-bit CAS loop: a product accumulator
        assumed = old;
        old = atomicCAS(&u64[3], assumed, assumed * 3ull + 1ull);
    } while (old != assumed);
    unsigned short o16 = u16[0], a16;
    do {
        a16 = o16;
        o16 = atomicCAS(&u16[0], a16, (unsigned short)(a16 + 1));
    } while (o16 != a16);
    atomicExch(&fx[t], (float)v[t] * 0.5f);
    __syncthreads();
    if (threadIdx.x == 0) counters[10 + blockIdx.x] = block_sum.load();
}
