// Rodinia srad (v2): speckle-reducing anisotropic diffusion. Kernel 1: directional derivatives and the
// diffusion coefficient clamped to [0, 1]; kernel 2: divergence and the image update.
extern "C" __global__ void srad1(const float* J, float* C, float* dN, float* dS, float* dW, float* dE, int cols,
                                 int rows, float q0sqr) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int i = y * cols + x;
    float jc = J[i];
    float n = J[max(y - 1, 0) * cols + x] - jc;
    float s = J[min(y + 1, rows - 1) * cols + x] - jc;
    float w = J[y * cols + max(x - 1, 0)] - jc;
    float e = J[y * cols + min(x + 1, cols - 1)] - jc;
    float g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
    float l = (n + s + w + e) / jc;
    float num = (0.5f * g2) - ((1.0f / 16.0f) * (l * l));
    float den = 1.0f + 0.25f * l;
    float qsqr = num / (den * den);
    den = (qsqr - q0sqr) / (q0sqr * (1.0f + q0sqr));
    float c = 1.0f / (1.0f + den);
    C[i] = c < 0.0f ? 0.0f : (c > 1.0f ? 1.0f : c);
    dN[i] = n; dS[i] = s; dW[i] = w; dE[i] = e;
}

extern "C" __global__ void srad2(float* J, const float* C, const float* dN, const float* dS, const float* dW,
                                 const float* dE, int cols, int rows, float lambda) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= cols || y >= rows) return;
    int i = y * cols + x;
    float cn = C[i], cw = C[i];
    float cs = C[min(y + 1, rows - 1) * cols + x];
    float ce = C[y * cols + min(x + 1, cols - 1)];
    float d = cn * dN[i] + cs * dS[i] + cw * dW[i] + ce * dE[i];
    J[i] = J[i] + 0.25f * lambda * d;
}
