// PolyBench-GPU 2mm: tmp = alpha*A*B, then D = tmp*C + beta*D, one thread per output element.
extern "C" __global__ void mm2_kernel1(int ni, int nj, int nk, float alpha, const float* A, const float* B,
                                       float* tmp) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && j < nj) {
        tmp[i * nj + j] = 0.0f;
        for (int k = 0; k < nk; k++) tmp[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
    }
}

extern "C" __global__ void mm2_kernel2(int ni, int nl, int nj, float beta, const float* tmp, const float* C,
                                       float* D) {
    int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < ni && j < nl) {
        D[i * nl + j] *= beta;
        for (int k = 0; k < nj; k++) D[i * nl + j] += tmp[i * nj + k] * C[k * nl + j];
    }
}
