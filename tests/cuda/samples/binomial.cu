// Binomial-tree American-free European call price in double precision, one option per block.
#define STEPS 128
extern "C" __global__ void binomial(const double* S, const double* X, double* price, double T, double R,
                                    double V) {
    __shared__ double v[STEPS + 1];
    int opt = blockIdx.x;
    double dt = T / STEPS, vdt = V * sqrt(dt), rdt = R * dt;
    double If = exp(rdt), Df = exp(-rdt);
    double u = exp(vdt), d = exp(-vdt), pu = (If - d) / (u - d), pd = 1.0 - pu;
    double puByDf = pu * Df, pdByDf = pd * Df;
    for (int i = threadIdx.x; i <= STEPS; i += blockDim.x) {
        double s = S[opt] * exp(vdt * (2.0 * i - STEPS));
        v[i] = fmax(s - X[opt], 0.0);
    }
    __syncthreads();
    for (int k = STEPS; k > 0; --k) {
        double nv[2];
        int c = 0;
        for (int i = threadIdx.x; i < k; i += blockDim.x) nv[c++] = puByDf * v[i + 1] + pdByDf * v[i];
        __syncthreads();
        c = 0;
        for (int i = threadIdx.x; i < k; i += blockDim.x) v[i] = nv[c++];
        __syncthreads();
    }
    if (threadIdx.x == 0) price[opt] = v[0];
}
