// Structs passed by value as kernel parameters (mixed member types and alignments, a nested array), and
// a struct returned by value from a device function.
struct Params {
    int n;
    float scale;
    double offset;
    char flag;
    short coeffs[3];
    float2 shift;
};
struct Acc { double sum; int count; };

__device__ Acc accumulate(Acc a, double v) { a.sum += v; a.count += v > 0; return a; }

extern "C" __global__ void struct_params(Params p, const float* x, double* out, int* counts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n) return;
    Acc acc = {0.0, 0};
    for (int k = 0; k < 3; k++) acc = accumulate(acc, (double)(x[i] * p.scale * p.coeffs[k]) + p.offset);
    if (p.flag) acc.sum += p.shift.x - p.shift.y;
    out[i] = acc.sum;
    counts[i] = acc.count;
}
