// A large struct passed by value (4 KiB of coefficients: CUDA 12.1+ allows 32764 bytes of kernel
// parameters on Volta+), read with a dynamic index.
struct Coeffs { float c[1024]; int n; };

extern "C" __global__ void big_params(Coeffs k, const int* idx, float* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < k.n) out[t] = k.c[idx[t]] * 2.0f + k.c[1023 - idx[t]];
}
