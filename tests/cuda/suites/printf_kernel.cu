// Device printf with mixed argument types from a few threads, as debugging code in public kernels does.
extern "C" __global__ void report(const float* x, const double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && i % 3 == 0)
        printf("blk %d thr %u: x=%.3f y=%.5e i64=%lld u=%u c=%c s=%s\n", blockIdx.x, threadIdx.x, x[i], y[i],
               (long long)i * -1000000007LL, (unsigned)(i * 2654435761u), 'A' + i % 26, i % 2 ? "odd" : "even");
}
