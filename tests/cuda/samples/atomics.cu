// Every integer atomic of the simpleAtomicIntrinsics sample on one array of counters.
extern "C" __global__ void atomic_ops(int* g, unsigned* u) {
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    atomicAdd(&g[0], 10);
    atomicSub(&g[1], 10);
    atomicExch(&g[2], tid);
    atomicMax(&g[3], tid);
    atomicMin(&g[4], tid);
    atomicInc(&u[0], 17);
    atomicDec(&u[1], 137);
    atomicCAS(&g[5], tid - 1, tid);
    atomicAnd(&g[6], 2 * tid + 7);
    atomicOr(&g[7], 1 << (tid & 31));
    atomicXor(&g[8], tid);
}
