// SHOC spmv ELLPACK-R: column-major padded value/column arrays plus a per-row length, one thread per row
// (coalesced across rows), double precision.
extern "C" __global__ void spmv_ellpackr(const double* __restrict__ val, const int* __restrict__ cols,
                                         const int* __restrict__ rowLengths, const double* __restrict__ vec,
                                         int dim, double* __restrict__ out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < dim) {
        double result = 0.0;
        int max = rowLengths[t];
        for (int i = 0; i < max; i++) {
            int ind = i * dim + t;
            result += val[ind] * __ldg(&vec[cols[ind]]);
        }
        out[t] = result;
    }
}
