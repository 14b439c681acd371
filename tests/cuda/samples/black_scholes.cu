// European call and put prices by Black-Scholes, with the polynomial normal CDF of the classic sample.
__device__ inline float cnd(float d) {
    const float A1 = 0.31938153f, A2 = -0.356563782f, A3 = 1.781477937f, A4 = -1.821255978f,
                A5 = 1.330274429f, RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = __fdividef(1.0f, (1.0f + 0.2316419f * fabsf(d)));
    float c = RSQRT2PI * __expf(-0.5f * d * d) * (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0 ? 1.0f - c : c;
}
extern "C" __global__ void black_scholes(float* call, float* put, const float* S, const float* X,
                                         const float* T, float R, float V, int n) {
    for (int i = blockDim.x * blockIdx.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        float s = S[i], x = X[i], t = T[i];
        float sqrtT = sqrtf(t);
        float d1 = __fdividef(__logf(s / x) + (R + 0.5f * V * V) * t, V * sqrtT);
        float d2 = d1 - V * sqrtT;
        float expRT = __expf(-R * t);
        call[i] = s * cnd(d1) - x * expRT * cnd(d2);
        put[i] = x * expRT * (1.0f - cnd(d2)) - s * (1.0f - cnd(d1));
    }
}
