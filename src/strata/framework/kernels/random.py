"""The framework's random-number kernels: they turn raw Philox4x32-10 words (drawn on the GPU by
strata.libs.rand, cuRAND's role) into PyTorch's distributions, written straight into a (possibly
strided) output tensor: uniform, normal (Box-Muller), exponential, randint / random_, bernoulli, and
multinomial sampling with replacement (inverse CDF).

Source of truth for how strata maps words to values (random.py mirrors it in NumPy for "cpu", so one
seed gives the same numbers on both devices): element i of the output, in row-major order, takes word
i (float, half, bfloat16) or words 2i, 2i+1 (double, and randint over more than 2^32 values);
U = top 24 bits * 2^-24 (float) or top 53 bits of the pair * 2^-53 (double), in [0, 1); a normal pair
(2j, 2j+1) takes U1, U2 of draws 2j, 2j+1: r = sqrt(-2 log(1 - U1)), value 2j = r cos(2 pi U2), value
2j+1 = r sin(2 pi U2). Compiled with --fmad=false so every product and sum rounds as NumPy's do. One
`KernelSet` per (family, dtype), compiled on first use.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> w = cuda.to_device(np.array([0, 1 << 31, 0xFFFFFFFF], np.uint32))
    >>> out = cuda.empty(3, np.float32)
    >>> uniform("float32", (3,), out.ptr, (1,), w.ptr, 0.0, 1.0)
    >>> out.get().tolist()
    [0.0, 0.5, 0.9999999403953552]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from strata.framework.kernels import C_TYPES, COMMON_CU, FLOATS, THREADS, _geometry, _grid
from strata.libs.common import KernelSet

OPTIONS = ("--fmad=false",)

RANDOM_CU = COMMON_CU + r"""
__device__ __forceinline__ float m_sin(float x) { return sinf(x); }
__device__ __forceinline__ double m_sin(double x) { return sin(x); }
__device__ __forceinline__ float m_cos(float x) { return cosf(x); }
__device__ __forceinline__ double m_cos(double x) { return cos(x); }

__device__ __forceinline__ float u24(unsigned w) { return (float)(w >> 8) * 5.9604644775390625e-08f; }
__device__ __forceinline__ double u53(unsigned a, unsigned b) {
    return (double)(((unsigned long long)a << 21) | (unsigned long long)(b >> 11)) * 1.1102230246251565e-16;
}
// draw k in [0, 1): one word for float, two for double
template <typename A> struct Draw;
template <> struct Draw<float> {
    static __device__ __forceinline__ float u(const unsigned* w, long long k) { return u24(w[k]); } };
template <> struct Draw<double> {
    static __device__ __forceinline__ double u(const unsigned* w, long long k) { return u53(w[2 * k], w[2 * k + 1]); }
};

template <typename T> __global__ void uniform(T* out, const unsigned* w, double lo, double range, double hi,
                                              GEO_PARAMS) {
    typedef typename Op<T>::type A;
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[1]; offsets<1>(g, i, off);
        A x = (A)lo + (A)range * Draw<A>::u(w, i);
        T v = Down<T>::f(x);
        if (range > 0 && (double)up(v) >= hi) v = Down<T>::f((A)lo);   // rounding reached `to`: keep [from, to)
        out[off[0]] = v;
    }
}
template <typename T> __global__ void normal(T* out, const unsigned* w, double mean, double std, GEO_PARAMS) {
    typedef typename Op<T>::type A;
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[1]; offsets<1>(g, i, off);
        long long j = i >> 1;
        A u1 = A(1) - Draw<A>::u(w, 2 * j), u2 = Draw<A>::u(w, 2 * j + 1);
        A r = m_sqrt(A(-2) * m_log(u1)), t = A(6.283185307179586) * u2;
        A z = r * ((i & 1) ? m_sin(t) : m_cos(t));
        out[off[0]] = Down<T>::f((A)mean + (A)std * z);
    }
}
template <typename T> __global__ void exponential(T* out, const unsigned* w, double lambd, GEO_PARAMS) {
    typedef typename Op<T>::type A;
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[1]; offsets<1>(g, i, off);
        out[off[0]] = Down<T>::f(-m_log(A(1) - Draw<A>::u(w, i)) / (A)lambd);
    }
}
// lo + x mod range, x one word (range <= 2^32) or two (wide); unsigned arithmetic wraps as int64 does
template <typename T> __global__ void randint(T* out, const unsigned* w, long long lo, unsigned long long range,
                                              int wide, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[1]; offsets<1>(g, i, off);
        unsigned long long x = wide ? (((unsigned long long)w[2 * i] << 32) | w[2 * i + 1]) : w[i];
        out[off[0]] = Down<T>::f((long long)((unsigned long long)lo + x % range));
    }
}
// 1 where U (24 bits) < p; p is a float32 tensor broadcast over out (strides in the geometry) or the scalar ps
template <typename T> __global__ void bernoulli(T* out, const unsigned* w, const float* p, float ps, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        float pp = p ? p[off[1]] : ps;
        out[off[0]] = Down<T>::f(u24(w[i]) < pp ? 1 : 0);
    }
}
"""

# The weights' check, one block per row: status[row] = 1 if the first bad element is negative or NaN,
# 2 if it is infinite, else 3 if the row sums to 0, else 0.
MULTINOMIAL_CHECK_CU = r"""
template <typename T> __global__ void multinomial_check(int* status, const T* p, long long n, long long rs,
                                                        long long cs) {
    __shared__ long long first[MT];
    __shared__ int code[MT];
    __shared__ int positive[MT];
    long long row = blockIdx.x, tid = threadIdx.x;
    const T* pr = p + row * rs;
    long long f = -1; int c = 0, pos = 0;
    for (long long k = tid; k < n; k += blockDim.x) {
        double v = (double)up(pr[k * cs]);
        if (v > 0) pos = 1;
        if (f < 0 && !(v >= 0 && v <= 1.7976931348623157e308)) { f = k; c = (v >= 0) ? 2 : 1; }
    }
    first[tid] = f; code[tid] = c; positive[tid] = pos;
    __syncthreads();
    if (tid == 0) {
        long long bf = -1; int bc = 0, any = 0;
        for (int t = 0; t < blockDim.x; ++t) {
            if (first[t] >= 0 && (bf < 0 || first[t] < bf)) { bf = first[t]; bc = code[t]; }
            any |= positive[t];
        }
        status[row] = bf >= 0 ? bc : (any ? 0 : 3);
    }
}
// Gumbel-max keys as PyTorch forms them: q = p / E, E ~ Exp(1) rounded to T first (one draw per element)
template <typename T> __global__ void multinomial_keys(T* q, const T* p, const unsigned* w, long long n,
                                                       long long rows, long long rs, long long cs) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(i, n * rows) {
        long long row = i / n, k = i % n;
        T e = Down<T>::f(-m_log(A(1) - Draw<A>::u(w, i)));
        q[i] = Down<T>::f((A)up(p[row * rs + k * cs]) / (A)up(e));
    }
}
"""

# One block per row of an (R, n) probability tensor: each thread sums a chunk, thread 0 scans the chunk
# sums, the threads write the row's cumulative sums (double) to `cdf`, then each sample s takes the first
# category whose cumulative sum exceeds U * total (never a zero-probability one), clamped to the last
# positive category against rounding at the top.
MULTINOMIAL_CU = RANDOM_CU + "#define MT 256\n" + MULTINOMIAL_CHECK_CU + r"""
template <typename T> __global__ void multinomial_replacement(long long* out, const T* p, long long n,
        long long rs, long long cs, long long ns, double* cdf, const unsigned* w) {
    __shared__ double part[MT];
    __shared__ long long lastpos[MT];
    __shared__ double total;
    __shared__ long long last;
    long long row = blockIdx.x, tid = threadIdx.x;
    const T* pr = p + row * rs;
    double* c = cdf + row * n;
    long long chunk = (n + blockDim.x - 1) / blockDim.x, b = tid * chunk, e = b + chunk < n ? b + chunk : n;
    double s = 0; long long lp = -1;
    for (long long k = b; k < e; ++k) { double v = (double)up(pr[k * cs]); s += v; if (v > 0) lp = k; }
    part[tid] = s; lastpos[tid] = lp;
    __syncthreads();
    if (tid == 0) {
        double acc = 0; long long L = -1;
        for (int t = 0; t < blockDim.x; ++t) {
            double x = part[t]; part[t] = acc; acc += x;
            if (lastpos[t] > L) L = lastpos[t];
        }
        total = acc; last = L;
    }
    __syncthreads();
    double acc = part[tid];
    for (long long k = b; k < e; ++k) { acc += (double)up(pr[k * cs]); c[k] = acc; }
    __syncthreads();
    for (long long q = tid; q < ns; q += blockDim.x) {
        long long wi = 2 * (row * ns + q);
        double t = u53(w[wi], w[wi + 1]) * total;
        long long lo = 0, hi = n;
        while (lo < hi) { long long mid = (lo + hi) >> 1; if (c[mid] > t) hi = mid; else lo = mid + 1; }
        out[row * ns + q] = lo > last ? last : lo;
    }
}
"""

_sets: dict[tuple[str, str], KernelSet] = {}
_FLOAT_ONLY = ("uniform", "normal", "exponential")


def kernel_set(kernel: str, dt: str) -> KernelSet:
    """The compile-once KernelSet of one kernel ('uniform', 'normal', 'exponential', 'randint', 'bernoulli',
    'multinomial_check', 'multinomial_keys', 'multinomial_replacement') for dtype `dt`: one kernel per set,
    so a process parses and JITs only the draws it makes."""
    ks = _sets.get((kernel, dt))
    if ks is not None:
        return ks
    if kernel in _FLOAT_ONLY and dt not in FLOATS:
        raise ValueError(f"[random kernels] {kernel} needs a floating dtype, got {dt}")
    source = MULTINOMIAL_CU if kernel.startswith("multinomial") else RANDOM_CU
    if source is RANDOM_CU and kernel not in _FLOAT_ONLY + ("randint", "bernoulli"):
        raise ValueError(f"unknown random kernel {kernel!r}")
    ks = _sets[(kernel, dt)] = KernelSet(f"framework_random_{kernel}_{dt}", source,
                                         name_expressions=[f"{kernel}<{C_TYPES[dt]}>"], options=OPTIONS)
    return ks


def _launch(dt: str, kernel: str, shape: Sequence[int], args: tuple, strides: Sequence[Sequence[int]]) -> None:
    n = int(np.prod(shape, dtype=np.int64))
    if n:
        kernel_set(kernel, dt).get(f"{kernel}<{C_TYPES[dt]}>")(_grid(n), THREADS, (*args, *_geometry(shape, strides)))


def uniform(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], words: int, lo: float,
            hi: float) -> None:
    """out = lo + (hi - lo) * U in opmath precision, kept in [lo, hi); `words` holds the raw words."""
    _launch(dt, "uniform", shape, (out, words, np.float64(lo), np.float64(hi - lo), np.float64(hi)), (out_st,))


def normal(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], words: int, mean: float,
           std: float) -> None:
    """out = mean + std * z, z standard normal by Box-Muller on pairs of draws."""
    _launch(dt, "normal", shape, (out, words, np.float64(mean), np.float64(std)), (out_st,))


def exponential(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], words: int, lambd: float) -> None:
    """out = -log(1 - U) / lambd."""
    _launch(dt, "exponential", shape, (out, words, np.float64(lambd)), (out_st,))


def randint(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], words: int, low: int, span: int,
            wide: bool) -> None:
    """out = low + x mod span (x one word, or two when `wide`), converted to dtype `dt`."""
    _launch(dt, "randint", shape, (out, words, np.int64(low), np.uint64(span), np.int32(wide)), (out_st,))


def bernoulli(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], words: int, p: int,
              p_st: Sequence[int], p_scalar: float) -> None:
    """out = U < p (1 or 0 in dtype `dt`); p a float32 tensor at address `p` (broadcast strides `p_st`)
    or, when `p` is 0, the scalar `p_scalar`."""
    _launch(dt, "bernoulli", shape, (out, words, p, np.float32(p_scalar)), (out_st, p_st))


def multinomial_replacement(dt: str, rows: int, n: int, out: int, p: int, row_stride: int, col_stride: int,
                            num_samples: int, cdf: int, words: int) -> None:
    """out (rows, num_samples) int64 = categories drawn with replacement from each row of p (dtype `dt`,
    element strides given); `cdf` is a (rows, n) float64 scratch buffer; two words per sample."""
    if rows == 0:
        return
    kernel_set("multinomial_replacement", dt).get(f"multinomial_replacement<{C_TYPES[dt]}>")(
        rows, _row_threads(n), (out, p, np.int64(n), np.int64(row_stride), np.int64(col_stride),
                                np.int64(num_samples), cdf, words))


def _row_threads(n: int) -> int:
    threads = 32
    while threads < THREADS and threads < n:
        threads *= 2
    return threads


def multinomial_check(dt: str, rows: int, n: int, status: int, p: int, row_stride: int, col_stride: int) -> None:
    """status (rows,) int32 = 0 for a valid row of weights p, 1 (negative or NaN), 2 (inf) or 3 (zero sum)."""
    if rows:
        kernel_set("multinomial_check", dt).get(f"multinomial_check<{C_TYPES[dt]}>")(
            rows, _row_threads(n), (status, p, np.int64(n), np.int64(row_stride), np.int64(col_stride)))


def multinomial_keys(dt: str, rows: int, n: int, q: int, p: int, row_stride: int, col_stride: int,
                     words: int) -> None:
    """q (rows, n) contiguous = p / E with E ~ Exp(1) in dtype `dt` (one draw per element from `words`)."""
    if rows * n:
        kernel_set("multinomial_keys", dt).get(f"multinomial_keys<{C_TYPES[dt]}>")(
            _grid(rows * n), THREADS, (q, p, words, np.int64(n), np.int64(rows), np.int64(row_stride),
                                       np.int64(col_stride)))
