// A long, fully unrolled straight-line kernel in the style of SHOC S3D's generated chemistry code:
// macros expand to 4^5 = 1024 dependent double-precision updates over a handful of registers.
#define STEP(k) a = fma(a, 0.999, b * 1e-3); b = b - a * 1e-4 + c * 1e-5; c = c * 0.9995 + (double)(k & 7) * 1e-6;
#define S4(k) STEP(k) STEP(k + 1) STEP(k + 2) STEP(k + 3)
#define S16(k) S4(k) S4(k + 4) S4(k + 8) S4(k + 12)
#define S64(k) S16(k) S16(k + 16) S16(k + 32) S16(k + 48)
#define S256(k) S64(k) S64(k + 64) S64(k + 128) S64(k + 192)
#define S1024 S256(0) S256(256) S256(512) S256(768)

extern "C" __global__ void big_kernel(const double* in, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
    S1024
    out[3 * i] = a;
    out[3 * i + 1] = b;
    out[3 * i + 2] = c;
}
