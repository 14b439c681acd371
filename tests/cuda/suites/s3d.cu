// SHOC s3d (ratt-like): Arrhenius rate constants and equilibrium terms in double with exp/log/pow, per
// grid point temperature.
#define NR 8
__constant__ double cA[NR];
__constant__ double cBeta[NR];
__constant__ double cEa[NR];

extern "C" __global__ void ratt(const double* __restrict__ T, double* __restrict__ rf, double* __restrict__ eqk,
                                int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double t = T[i];
    double alogt = log(t);
    double tinv = 1.0 / t;
    const double R = 8.31446261815324;
    for (int r = 0; r < NR; r++) {
        rf[r * n + i] = exp(log(cA[r]) + cBeta[r] * alogt - cEa[r] * tinv / R);
        eqk[r * n + i] = pow(t, cBeta[r]) * exp(-cEa[r] / (R * t)) / sqrt(t) + rsqrt(t);
    }
}
