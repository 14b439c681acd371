// Monte Carlo estimate of pi: each thread draws points with its own XORWOW state.
#include <curand_kernel.h>
extern "C" __global__ void pi_hits(unsigned long long seed, int per_thread, unsigned* hits) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curandState st;
    curand_init(seed, id, 0, &st);
    unsigned h = 0;
    for (int i = 0; i < per_thread; ++i) {
        float x = curand_uniform(&st), y = curand_uniform(&st);
        h += x * x + y * y <= 1.0f;
    }
    hits[id] = h;
}
