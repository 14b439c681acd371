// A device-side assert() that fails in one thread: the launch must report cudaErrorAssert (710), as
// CUDA does, instead of returning garbage.
extern "C" __global__ void checked(const int* v, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    assert(v[i] >= 0);
    out[i] = v[i] * 2;
}
