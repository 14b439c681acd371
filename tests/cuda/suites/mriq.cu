// Parboil mri-q: |phi|^2 per k-space sample, then Q at every voxel as a sum over k-space samples held in
// constant memory (struct array), with sincosf.
#define KS_CHUNK 256
#define PI2 6.2831853071795864769f
struct KValues { float Kx; float Ky; float Kz; float PhiMag; };
__constant__ KValues ck[KS_CHUNK];

extern "C" __global__ void compute_phi_mag(const float* phiR, const float* phiI, float* phiMag, int numK) {
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < numK) phiMag[k] = phiR[k] * phiR[k] + phiI[k] * phiI[k];
}

extern "C" __global__ void compute_q(int numK, int kGlobalIndex, const float* x, const float* y, const float* z,
                                     float* Qr, float* Qi, int numX) {
    int xi = blockIdx.x * blockDim.x + threadIdx.x;
    if (xi >= numX) return;
    float sX = x[xi], sY = y[xi], sZ = z[xi];
    float sQr = Qr[xi], sQi = Qi[xi];
    for (int k = 0; k < KS_CHUNK && kGlobalIndex + k < numK; k++) {
        float arg = PI2 * (ck[k].Kx * sX + ck[k].Ky * sY + ck[k].Kz * sZ);
        float s, c;
        sincosf(arg, &s, &c);
        sQr += ck[k].PhiMag * c;
        sQi += ck[k].PhiMag * s;
    }
    Qr[xi] = sQr;
    Qi[xi] = sQi;
}
