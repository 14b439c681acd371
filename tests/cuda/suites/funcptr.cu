// Device function pointers: a __device__ table of operations picked per element at run time, and a
// pointer passed down as an argument (indirect calls).
typedef float (*op_t)(float, float);
__device__ float op_add(float a, float b) { return a + b; }
__device__ float op_mul(float a, float b) { return a * b; }
__device__ float op_max(float a, float b) { return fmaxf(a, b); }
__device__ float op_sub(float a, float b) { return a - b; }
__device__ op_t ops[4] = {op_add, op_mul, op_max, op_sub};

__device__ __noinline__ float apply_twice(op_t f, float a, float b) { return f(f(a, b), b); }

extern "C" __global__ void funcptr(const float* a, const float* b, const int* sel, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    op_t f = ops[sel[i] & 3];
    out[i] = apply_twice(f, a[i], b[i]);
}
