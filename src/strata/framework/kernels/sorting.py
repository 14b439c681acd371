"""The framework's row kernels for sorting and scans on "cuda" tensors: a bitonic sort of each row
(values and indices, in shared memory up to 2048 elements, in a global scratch buffer beyond), an
inclusive scan per row (cumsum, cumprod, forward or reversed), cumprod's gradient, and the scatter of
a gradient back to sorted positions.

Every kernel sees its tensor as a contiguous (outer, n, inner) block: a "row" is the n elements along
the sorted/scanned dim, `inner` apart; block (or thread) b takes row (b / inner, b % inner). One
`KernelSet` per (family, dtype), compiled on first use, as in kernels/__init__.py.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> a = cuda.to_device(np.array([3.0, 1.0, 2.0], np.float32))
    >>> v, i = cuda.empty(3, np.float32), cuda.empty(3, np.int64)
    >>> sort("float32", 1, 3, 1, v.ptr, i.ptr, a.ptr, descending=False)
    >>> v.get().tolist(), i.get().tolist()
    ([1.0, 2.0, 3.0], [1, 2, 0])
"""

from __future__ import annotations

import numpy as np

from strata.framework.kernels import C_TYPES, COMMON_CU, FLOATS, MAX_BLOCKS, THREADS
from strata.libs.common import KernelSet

SORT_SHARED_MAX = 2048  # longest row the shared-memory sort takes; longer rows use a global scratch buffer
SCAN = {"sum": 0, "prod": 1}

ROW_CU = r"""
// row b of a contiguous (outer, n, inner) tensor starts at base and steps by inner
#define ROW_BASE(b, n, inner) (((b) / (inner)) * (n) * (inner) + (b) % (inner))
"""

# One block per row. The comparison is a strict total order (ties broken by the original index), so
# the bitonic network gives a stable sort; NaN sorts as the largest value; padding (index >= n) goes last.
SORT_CU = COMMON_CU + ROW_CU + r"""
template <typename A> __device__ __forceinline__ bool before(A a, int ia, A b, int ib, int n, int desc) {
    if (ia >= n) return false;
    if (ib >= n) return true;
    bool an = is_nan(a), bn = is_nan(b);
    if (an != bn) return desc ? an : bn;
    if (!an && a != b) return desc ? (a > b) : (a < b);
    return ia < ib;
}

#define BITONIC(SV, SI, P, N, DESC)                                                           \
    for (long long k = 2; k <= (P); k <<= 1) {                                                \
        for (long long j = k >> 1; j > 0; j >>= 1) {                                          \
            for (long long t = threadIdx.x; t < (P) / 2; t += blockDim.x) {                   \
                long long i = 2 * j * (t / j) + t % j, l = i + j;                             \
                bool up_ = (i & k) == 0;                                                      \
                A vi = SV[i], vl = SV[l]; int ii = SI[i], il = SI[l];                         \
                bool swap = up_ ? before<A>(vl, il, vi, ii, (N), (DESC))                      \
                                : before<A>(vi, ii, vl, il, (N), (DESC));                     \
                if (swap) { SV[i] = vl; SV[l] = vi; SI[i] = il; SI[l] = ii; }                 \
            }                                                                                 \
            __syncthreads();                                                                  \
        }                                                                                     \
    }

template <typename T> __global__ void sort_shared(T* out, long long* idx, const T* a, long long n,
                                                  long long inner, long long P, int desc) {
    typedef typename Op<T>::type A;
    __shared__ A sv[SORT_SHARED_MAX];
    __shared__ int si[SORT_SHARED_MAX];
    long long base = ROW_BASE((long long)blockIdx.x, n, inner);
    for (long long i = threadIdx.x; i < P; i += blockDim.x) {
        sv[i] = i < n ? up(a[base + i * inner]) : A(0);
        si[i] = (int)i;
    }
    __syncthreads();
    BITONIC(sv, si, P, (int)n, desc)
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        out[base + i * inner] = Down<T>::f(sv[i]);
        idx[base + i * inner] = si[i];
    }
}

// rows longer than SORT_SHARED_MAX: the same network over a global scratch row of P keys and indices
template <typename T> __global__ void sort_global(T* out, long long* idx, const T* a, typename Op<T>::type* kv,
                                                  int* ki, long long n, long long inner, long long P, int desc) {
    typedef typename Op<T>::type A;
    long long base = ROW_BASE((long long)blockIdx.x, n, inner);
    A* sv = kv + blockIdx.x * P;
    int* si = ki + blockIdx.x * P;
    for (long long i = threadIdx.x; i < P; i += blockDim.x) {
        sv[i] = i < n ? up(a[base + i * inner]) : A(0);
        si[i] = (int)i;
    }
    __syncthreads();
    BITONIC(sv, si, P, (int)n, desc)
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        out[base + i * inner] = Down<T>::f(sv[i]);
        idx[base + i * inner] = si[i];
    }
}

// out (outer, n, inner), zeroed; src and idx (outer, k, inner): out[o, idx[o, j, q], q] = src[o, j, q]
template <typename T> __global__ void scatter_rows(T* out, const T* src, const long long* idx, long long total,
                                                   long long k, long long n, long long inner) {
    GRID_STRIDE(i, total) {
        long long o = i / (k * inner), q = i % inner;
        out[(o * n + idx[i]) * inner + q] = src[i];
    }
}
""".replace("SORT_SHARED_MAX", str(SORT_SHARED_MAX))

# One block per row: chunks of blockDim elements, each a Hillis-Steele scan in shared memory plus the
# carry of the chunks before it. `reverse` scans from the row's end (cumsum's gradient).
SCAN_CU = COMMON_CU + ROW_CU + r"""
#define SCAN_T 512
template <int OP, typename A> __device__ __forceinline__ A scan_op(A x, A y) { return OP == 0 ? x + y : x * y; }

template <typename T, typename A, typename O, int OP>
__global__ void scan(O* out, const T* a, long long n, long long inner, int reverse) {
    __shared__ A buf[SCAN_T];
    long long base = ROW_BASE((long long)blockIdx.x, n, inner);
    A carry = OP == 0 ? A(0) : A(1);
    for (long long c = 0; c < n; c += blockDim.x) {
        long long j = c + threadIdx.x;
        long long p = reverse ? n - 1 - j : j;
        A v = j < n ? static_cast<A>(up(a[base + p * inner])) : (OP == 0 ? A(0) : A(1));
        buf[threadIdx.x] = v;
        __syncthreads();
        for (int s = 1; s < blockDim.x; s <<= 1) {
            A w = buf[threadIdx.x];
            if (threadIdx.x >= s) w = scan_op<OP>(buf[threadIdx.x - s], w);
            __syncthreads();
            buf[threadIdx.x] = w;
            __syncthreads();
        }
        A r = scan_op<OP>(carry, buf[threadIdx.x]);
        if (j < n) out[base + p * inner] = Down<O>::f(r);
        carry = scan_op<OP>(carry, buf[blockDim.x - 1]);
        __syncthreads();
    }
}

// d cumprod / d x, one thread per row, exact with zeros and without division:
// grad_i = (prod_{j<i} x_j) * r_i with r_i = g_i + x_{i+1} r_{i+1} (r_{n-1} = g_{n-1})
template <typename T> __global__ void cumprod_backward(T* out, const T* x, const T* g, long long rows, long long n,
                                                       long long inner) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(b, rows) {
        long long base = ROW_BASE(b, n, inner);
        A r = A(0);
        for (long long i = n - 1; i >= 0; --i) {
            long long p = base + i * inner;
            A gi = static_cast<A>(up(g[p]));
            r = (i == n - 1) ? gi : gi + static_cast<A>(up(x[p + inner])) * r;
            out[p] = Down<T>::f(r);
        }
        A excl = A(1);
        for (long long i = 0; i < n; ++i) {
            long long p = base + i * inner;
            A xi = static_cast<A>(up(x[p]));
            out[p] = Down<T>::f(static_cast<A>(up(out[p])) * excl);
            excl = excl * xi;
        }
    }
}
"""

_sets: dict[tuple[str, str], KernelSet] = {}


def _acc(dt: str) -> str:
    if dt in ("float16", "bfloat16", "float32"):
        return "float"
    return "double" if dt == "float64" else "long long"


def _scan_out(dt: str) -> str:
    return C_TYPES[dt] if dt in FLOATS else "long long"


def kernel_set(family: str, dt: str) -> KernelSet:
    """The compile-once KernelSet of `family` ('sort': both sorts, plus the gradient scatter for floating
    dtypes; 'scan': cumsum and cumprod, plus cumprod's gradient for floating dtypes) for dtype `dt`."""
    key = (family, dt)
    ks = _sets.get(key)
    if ks is not None:
        return ks
    c = C_TYPES[dt]
    if family == "sort":
        names = [f"sort_shared<{c}>", f"sort_global<{c}>"]
        if dt in FLOATS:
            names.append(f"scatter_rows<{c}>")
        source = SORT_CU
    elif family == "scan":
        names = [f"scan<{c}, {_acc(dt)}, {_scan_out(dt)}, {code}>" for code in SCAN.values()]
        if dt in FLOATS:
            names.append(f"cumprod_backward<{c}>")
        source = SCAN_CU
    else:
        raise ValueError(f"unknown kernel family {family!r}")
    ks = _sets[key] = KernelSet(f"framework_{family}_{dt}", source, name_expressions=names)
    return ks


def _pow2(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def scratch_len(n: int) -> int:
    """Elements per row of the global scratch rows a sort of rows of length n needs (0: none)."""
    p = _pow2(n)
    return 0 if p <= SORT_SHARED_MAX else p


def sort(dt: str, outer: int, n: int, inner: int, out: int, idx: int, a: int, *, descending: bool,
         key_scratch: int = 0, idx_scratch: int = 0) -> None:
    """Sort each row of the contiguous (outer, n, inner) tensor at `a` (stable; NaN largest) into `out`
    (same layout and dtype) and the int64 source positions into `idx`; pointers are device addresses.
    Rows longer than SORT_SHARED_MAX need scratch of outer * inner * scratch_len(n) elements: keys of the
    opmath type (float for half/bfloat16, else the dtype) at `key_scratch`, int32 at `idx_scratch`."""
    rows = outer * inner
    if rows == 0 or n == 0:
        return
    c = C_TYPES[dt]
    p = _pow2(n)
    threads = min(1024, max(32, p // 2))
    ks = kernel_set("sort", dt)
    if p <= SORT_SHARED_MAX:
        ks.get(f"sort_shared<{c}>")(rows, threads, (out, idx, a, np.int64(n), np.int64(inner), np.int64(p),
                                                      np.int32(descending)))
        return
    assert key_scratch and idx_scratch, "rows longer than SORT_SHARED_MAX need scratch"
    ks.get(f"sort_global<{c}>")(rows, threads, (out, idx, a, key_scratch, idx_scratch, np.int64(n),
                                                  np.int64(inner), np.int64(p), np.int32(descending)))


def scatter_rows(dt: str, outer: int, k: int, n: int, inner: int, out: int, src: int, idx: int) -> None:
    """out[o, idx[o, j, q], q] = src[o, j, q] for contiguous (outer, k, inner) src/idx and (outer, n, inner)
    out (a floating dtype; the gradient of sort and topk)."""
    total = outer * k * inner
    if total == 0:
        return
    grid = max(1, min(MAX_BLOCKS, (total + THREADS - 1) // THREADS))
    kernel_set("sort", dt).get(f"scatter_rows<{C_TYPES[dt]}>")(
        grid, THREADS, (out, src, idx, np.int64(total), np.int64(k), np.int64(n), np.int64(inner)))


def scan(op: str, dt: str, outer: int, n: int, inner: int, out: int, a: int, *, reverse: bool = False) -> None:
    """Inclusive scan ('sum' or 'prod') of each row of the contiguous (outer, n, inner) tensor at `a` into
    `out` (dtype `dt` for floats, int64 otherwise), from the row's end if `reverse`."""
    rows = outer * inner
    if rows == 0 or n == 0:
        return
    threads = min(512, max(32, _pow2(n)))
    c = C_TYPES[dt]
    kernel_set("scan", dt).get(f"scan<{c}, {_acc(dt)}, {_scan_out(dt)}, {SCAN[op]}>")(
        rows, threads, (out, a, np.int64(n), np.int64(inner), np.int32(reverse)))


def cumprod_backward(dt: str, outer: int, n: int, inner: int, out: int, x: int, g: int) -> None:
    """The gradient of cumprod along rows of contiguous (outer, n, inner) x given the output's gradient g."""
    rows = outer * inner
    if rows == 0 or n == 0:
        return
    grid = max(1, min(MAX_BLOCKS, (rows + 63) // 64))
    kernel_set("scan", dt).get(f"cumprod_backward<{C_TYPES[dt]}>")(
        grid, 64, (out, x, g, np.int64(rows), np.int64(n), np.int64(inner)))
