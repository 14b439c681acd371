// Atomics on shared memory of every width and type: 64-bit add/min/max, float add, double add, 32-bit
// inc with wrap and CAS; a large dynamic shared buffer opted in with cudaFuncAttributeMaxDynamicSharedMemorySize.
extern "C" __global__ void shared_atomics(const int* v, unsigned long long* out64, float* outf, double* outd,
                                          unsigned* out32) {
    extern __shared__ unsigned char big[];
    __shared__ unsigned long long s64[3];
    __shared__ float sf;
    __shared__ double sd;
    __shared__ unsigned sinc, scas;
    int t = threadIdx.x;
    if (t == 0) {
        s64[0] = 0; s64[1] = ~0ull; s64[2] = 0; sf = 0.0f; sd = 0.0; sinc = 0; scas = 0;
    }
    unsigned* words = (unsigned*)big;
    int nwords = 64 * 1024 / 4;
    for (int i = t; i < nwords; i += blockDim.x) words[i] = i;
    __syncthreads();
    unsigned long long x = (unsigned long long)v[t] << 33;
    atomicAdd(&s64[0], x);
    atomicMin(&s64[1], x + 5);
    atomicMax(&s64[2], x ^ 0xFFFFull);
    atomicAdd(&sf, (float)v[t] * 0.25f);
    atomicAdd(&sd, (double)v[t] * 0.1);
    atomicInc(&sinc, 50u);
    unsigned old = scas, assumed;
    do { assumed = old; old = atomicCAS(&scas, assumed, assumed + (unsigned)v[t]); } while (old != assumed);
    atomicAdd(&words[nwords - 1 - (t % 7)], 1u);
    __syncthreads();
    if (t == 0) {
        out64[0] = s64[0]; out64[1] = s64[1]; out64[2] = s64[2];
        outf[0] = sf; outd[0] = sd; out32[0] = sinc; out32[1] = scas;
        for (int k = 0; k < 7; k++) out32[2 + k] = words[nwords - 1 - k];
    }
}
