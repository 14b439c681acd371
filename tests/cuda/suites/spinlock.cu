// Independent thread scheduling (Volta+): a per-bucket spin lock taken with atomicCAS and released with
// atomicExch, contended by threads of the same warp. Pre-Volta lockstep execution livelocks here; with
// per-thread program counters the lock holder makes progress.
extern "C" __global__ void locked_accumulate(int* locks, float* buckets, int* counts, const float* v, int nb) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int b = t % nb;
    bool done = false;
    while (!done) {
        if (atomicCAS(&locks[b], 0, 1) == 0) {
            __threadfence();
            buckets[b] += v[t];  // plain read-modify-write, protected by the lock
            counts[b] += 1;
            __threadfence();
            atomicExch(&locks[b], 0);
            done = true;
        }
    }
}
