// Grid-stride loop with __restrict__ and __ldg: y = a * x + y over more elements than threads.
extern "C" __global__ void saxpy_gs(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * __ldg(x + i) + y[i];
}
