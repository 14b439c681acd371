// Ampere-style asynchronous global->shared copies with the pipeline primitives (cp.async, commit and
// wait groups), double-buffered over tiles, as modern stencil/GEMM kernels stage their inputs.
#include <cuda_pipeline.h>
#define TILE 128

extern "C" __global__ void async_sum(const float* in, float* out, int ntiles) {
    __shared__ float buf[2][TILE];
    int t = threadIdx.x;
    float acc = 0.0f;
    __pipeline_memcpy_async(&buf[0][t], &in[t], sizeof(float));
    __pipeline_commit();
    for (int k = 0; k < ntiles; k++) {
        if (k + 1 < ntiles) __pipeline_memcpy_async(&buf[(k + 1) & 1][t], &in[(k + 1) * TILE + t], sizeof(float));
        __pipeline_commit();
        __pipeline_wait_prior(1);
        __syncthreads();
        acc += buf[k & 1][(t + k) % TILE];
        __syncthreads();
    }
    out[t] = acc;
}
