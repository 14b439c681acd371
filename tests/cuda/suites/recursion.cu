// Recursive device functions (not inlinable, so they need a real call stack): Ackermann-free classics,
// a recursive Fibonacci and a recursive Euclid gcd, plus a recursive quicksort on a per-thread array.
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ unsigned gcd(unsigned a, unsigned b) { return b == 0 ? a : gcd(b, a % b); }

__device__ __noinline__ void qsort_rec(int* v, int lo, int hi) {
    if (lo >= hi) return;
    int pivot = v[(lo + hi) / 2], i = lo, j = hi;
    while (i <= j) {
        while (v[i] < pivot) i++;
        while (v[j] > pivot) j--;
        if (i <= j) { int t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
    }
    qsort_rec(v, lo, j);
    qsort_rec(v, i, hi);
}

extern "C" __global__ void recursion(const unsigned* a, const unsigned* b, int* fibs, unsigned* gcds, int* arrays,
                                     int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    fibs[i] = fib(i % 16);
    gcds[i] = gcd(a[i], b[i]);
    int local[16];
    for (int k = 0; k < 16; k++) local[k] = arrays[16 * i + k];
    qsort_rec(local, 0, 15);
    for (int k = 0; k < 16; k++) arrays[16 * i + k] = local[k];
}
