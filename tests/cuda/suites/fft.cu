// Radix-2 decimation-in-time FFT of one 256-point cuFloatComplex signal per block in shared memory:
// bit-reversed load with __brev, twiddles from sincospif, cuCmulf/cuCaddf/cuCsubf butterflies.
#include <cuComplex.h>
#define N 256
#define LOG2N 8

extern "C" __global__ void fft256(const cuFloatComplex* in, cuFloatComplex* out) {
    __shared__ cuFloatComplex s[N];
    const cuFloatComplex* x = in + blockIdx.x * N;
    for (int i = threadIdx.x; i < N; i += blockDim.x) s[__brev(i) >> (32 - LOG2N)] = x[i];
    __syncthreads();
    for (int len = 2; len <= N; len <<= 1) {
        int half = len >> 1;
        for (int j = threadIdx.x; j < N / 2; j += blockDim.x) {
            int grp = j / half, k = j % half;
            int i0 = grp * len + k, i1 = i0 + half;
            float sn, cs;
            sincospif(-2.0f * k / len, &sn, &cs);
            cuFloatComplex w = make_cuFloatComplex(cs, sn);
            cuFloatComplex t = cuCmulf(w, s[i1]);
            cuFloatComplex u = s[i0];
            s[i0] = cuCaddf(u, t);
            s[i1] = cuCsubf(u, t);
        }
        __syncthreads();
    }
    for (int i = threadIdx.x; i < N; i += blockDim.x) out[blockIdx.x * N + i] = s[i];
}
