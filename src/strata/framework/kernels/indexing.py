"""The framework's indexing kernels for "cuda" tensors: advanced-index reads and writes (`x[idx]`,
`index_put_` with or without accumulation), `gather` / `scatter` / `scatter_add` along a dim, `tril` /
`triu`, and the two passes of `nonzero` (a block scan that counts, then a pass that writes coordinates).

Advanced indexing sees the indexed tensor as "index dims first": K index dims (sizes `isz`, strides
`ist`) addressed by a (K, nb) int64 buffer of broadcast indices, then the remaining dims. The launch
geometry (kernels/__init__.py's GEO_PARAMS) runs over (nb, rest...) with three operands: the output or
values, the source's rest dims (stride 0 on the nb dim) and b itself (stride 1 on nb, 0 elsewhere).
Kernels that read user indices check each one before using it: a bad index is a device-side assertion
(CUDA's `assert`, cudaErrorAssert, sticky on the context), as in PyTorch's kernels, whose assertion texts
they carry ("index out of bounds", `srcIndex < srcSelectDimSize`, `dstIndex < dstAddDimSize`); the error
surfaces at the next synchronizing call. `check_targets` is nll_loss's check of class indices.
accumulate uses atomicAdd for float32/float64/int32/int64; other dtypes accumulate in a widened copy.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> a = cuda.to_device(np.array([10.0, 20.0, 30.0], np.float32))
    >>> idx = cuda.to_device(np.array([2, -3], np.int64))
    >>> out = cuda.empty(2, np.float32)
    >>> _ = index_get("float32", 2, (), out.ptr, (1,), a.ptr, (), idx.ptr, [3], [1], 1)
    >>> out.get().tolist()
    [30.0, 10.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from strata.cuda import LaunchReport
from strata.framework.kernels import C_TYPES, COMMON_CU, MAXD, _geometry, _grid
from strata.libs.common import KernelSet

ATOMIC = ("float32", "float64", "int32", "int64")  # dtypes with a native atomicAdd
SCAN_THREADS = 256

INDEX_CU = COMMON_CU + r"""
#define IDX_PARAMS long long K, long long nb, long long z0, long long z1, long long z2, long long z3, \
    long long z4, long long z5, long long s0, long long s1, long long s2, long long s3, long long s4, long long s5
#define IDX_BUILD long long isz[MAXD] = {z0, z1, z2, z3, z4, z5}; long long ist[MAXD] = {s0, s1, s2, s3, s4, s5};

template <typename T> __device__ __forceinline__ void acc_add(T* p, T v) { *p = Down<T>::f(up(*p) + up(v)); }
__device__ __forceinline__ void acc_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void acc_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void acc_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void acc_add(long long* p, long long v) {
    atomicAdd((unsigned long long*)p, (unsigned long long)v); }

// scatter_reduce's prod, amax and amin: compare-and-swap loops on the word's bits (amax/amin propagate NaN, as
// PyTorch's kernels do); the integer max and min are the native atomics
__device__ __forceinline__ float rmax(float a, float b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ float rmin(float a, float b) { return (a != a || a < b) ? a : b; }
__device__ __forceinline__ double rmax(double a, double b) { return (a != a || a > b) ? a : b; }
__device__ __forceinline__ double rmin(double a, double b) { return (a != a || a < b) ? a : b; }
template <int MODE> __device__ __forceinline__ float rop(float a, float b) {
    return MODE == 2 ? a * b : MODE == 3 ? rmax(a, b) : rmin(a, b); }
template <int MODE> __device__ __forceinline__ double rop(double a, double b) {
    return MODE == 2 ? a * b : MODE == 3 ? rmax(a, b) : rmin(a, b); }
template <int MODE> __device__ __forceinline__ void acc_reduce(float* p, float v) {
    unsigned int* w = (unsigned int*)p;
    unsigned int old = *w, seen;
    do {
        seen = old;
        old = atomicCAS(w, seen, __float_as_uint(rop<MODE>(__uint_as_float(seen), v)));
    } while (seen != old);
}
template <int MODE> __device__ __forceinline__ void acc_reduce(double* p, double v) {
    unsigned long long* w = (unsigned long long*)p;
    unsigned long long old = *w, seen;
    do {
        seen = old;
        double next = rop<MODE>(__longlong_as_double((long long)seen), v);
        old = atomicCAS(w, seen, (unsigned long long)__double_as_longlong(next));
    } while (seen != old);
}
template <int MODE> __device__ __forceinline__ void acc_reduce(int* p, int v) {
    if (MODE == 3) { atomicMax(p, v); return; }
    if (MODE == 4) { atomicMin(p, v); return; }
    int old = *p, seen;
    do { seen = old; old = atomicCAS(p, seen, seen * v); } while (seen != old);
}
template <int MODE> __device__ __forceinline__ void acc_reduce(long long* p, long long v) {
    unsigned long long* w = (unsigned long long*)p;
    unsigned long long old = *w, seen;
    do {
        seen = old;
        long long cur = (long long)seen;
        long long next = MODE == 2 ? cur * v : MODE == 3 ? (cur > v ? cur : v) : (cur < v ? cur : v);
        old = atomicCAS(w, seen, (unsigned long long)next);
    } while (seen != old);
}
template <int MODE, typename T> __device__ __forceinline__ void acc_reduce(T* p, T v) {  // (not used: widened)
    *p = v; }

// The source offset of index row b (plus the rest-dims offset `so`). check says which ops' rule applies:
// 0 trusted indices (host-checked and wrapped, or a mask's), 1 advanced indexing ([-size, size), negatives
// wrap), 2 index_select and 3 index_add ([0, size)). A bad index fails the assertion of PyTorch's kernel
// for that op (the text is what the user sees); one compare per index, as there.
__device__ __forceinline__ long long index_offset(const long long* idx, long long K, long long nb, long long b,
                                                  const long long* isz, const long long* ist, int check,
                                                  long long so) {
    for (int k = 0; k < MAXD; ++k) {
        if (k < K) {
            long long index = idx[k * nb + b], size = isz[k];
            if (check == 1) {
                assert(-size <= index && index < size && "index out of bounds");
            } else if (check == 2) {
                long long srcIndex = index, srcSelectDimSize = size;
                assert(0 <= srcIndex && srcIndex < srcSelectDimSize);
            } else if (check == 3) {
                long long dstIndex = index, dstAddDimSize = size;
                assert(0 <= dstIndex && dstIndex < dstAddDimSize);
            }
            so += (index < 0 ? index + size : index) * ist[k];
        }
    }
    return so;
}

// out[b, rest] = src[idx[:, b], rest]
template <typename T> __global__ void index_get(T* out, const T* src, const long long* idx, int check, IDX_PARAMS,
                                                GEO_PARAMS) {
    GEO_BUILD IDX_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        out[off[0]] = src[index_offset(idx, K, nb, off[2], isz, ist, check, off[1])];
    }
}

// dst[idx[:, b], rest] = vals[b, rest] (ACC: +=)
template <typename T, int ACC> __global__ void index_put(T* dst, const T* vals, const long long* idx, int check,
                                                         IDX_PARAMS, GEO_PARAMS) {
    GEO_BUILD IDX_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        long long so = index_offset(idx, K, nb, off[2], isz, ist, check, off[1]);
        if (ACC) acc_add(dst + so, vals[off[0]]); else dst[so] = vals[off[0]];
    }
}

// over index's shape: out[o0] = src[o1 + index[o2] * dstride] (src has stride 0 on dim)
// (gather and scatter take no negative index, as PyTorch's; dim_size is the size of dim)
template <typename T> __global__ void gather(T* out, const T* src, const long long* index, long long dim_size,
                                             long long dstride, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        long long idx = index[off[2]];
        assert(idx >= 0 && idx < dim_size && "index out of bounds");
        out[off[0]] = src[off[1] + idx * dstride];
    }
}

// over index's shape: dst[o1 + index[o2] * dstride] = src[o0] (ACC 1: +=, 2: *=, 3: max, 4: min; atomically)
template <typename T, int ACC> __global__ void scatter(T* dst, const T* src, const long long* index, long long dim_size,
                                                       long long dstride, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        long long idx = index[off[2]];
        assert(idx >= 0 && idx < dim_size && "index out of bounds");
        T* at = dst + off[1] + idx * dstride;
        if (ACC == 1) acc_add(at, src[off[0]]);
        else if (ACC >= 2) acc_reduce<ACC>(at, src[off[0]]);
        else *at = src[off[0]];
    }
}

// nll_loss's check of its class indices: every target but ignore_index in [0, n_classes)
__global__ void check_targets(const long long* target, long long n, long long n_classes, long long ignore_index) {
    GRID_STRIDE(i, n) {
        long long t = target[i];
        if (t != ignore_index) assert(t >= 0 && t < n_classes);
    }
}

// tril (upper = 0) / triu (upper = 1) over the last two dims (R, C); i is the row-major linear index
template <typename T> __global__ void tri(T* out, const T* src, long long R, long long C, long long diag, int upper,
                                          GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        long long c = i % C, r = (i / C) % R;
        bool keep = upper ? (c - r >= diag) : (c - r <= diag);
        out[off[0]] = keep ? src[off[1]] : Down<T>::f(0);
    }
}

// nonzero, pass 1 (one block): pos[i] = number of nonzero elements in x[0..i]; pos[n] = the total
template <typename T> __global__ void nonzero_scan(long long* pos, const T* x, GEO_PARAMS) {
    GEO_BUILD
    __shared__ long long buf[SCAN_T];
    long long carry = 0;
    for (long long c = 0; c < g.n; c += blockDim.x) {
        long long j = c + threadIdx.x;
        long long f = 0;
        if (j < g.n) { long long off[1]; offsets<1>(g, j, off); f = up(x[off[0]]) != 0; }
        buf[threadIdx.x] = f;
        __syncthreads();
        for (int s = 1; s < blockDim.x; s <<= 1) {
            long long w = buf[threadIdx.x];
            if (threadIdx.x >= s) w += buf[threadIdx.x - s];
            __syncthreads();
            buf[threadIdx.x] = w;
            __syncthreads();
        }
        if (j < g.n) pos[j] = carry + buf[threadIdx.x];
        carry += buf[blockDim.x - 1];
        __syncthreads();
    }
    if (threadIdx.x == 0) pos[g.n] = carry;
}

// nonzero, pass 2: element i (row-major in shape h) that is nonzero writes its coordinates to row pos[i] - 1
// of out; coordinate d of row r at out[r * rs + d * cs]
__global__ void nonzero_write(long long* out, const long long* pos, long long n, long long ndim, long long rs,
                              long long cs, long long h0, long long h1, long long h2, long long h3, long long h4,
                              long long h5) {
    long long h[MAXD] = {h0, h1, h2, h3, h4, h5};
    GRID_STRIDE(i, n) {
        long long prev = i ? pos[i - 1] : 0;
        if (pos[i] == prev) continue;
        long long q = i;
        for (int d = MAXD - 1; d >= 0; --d) {
            if (d < ndim) { out[prev * rs + d * cs] = q % h[d]; q /= h[d]; }
        }
    }
}
""".replace("SCAN_T", str(SCAN_THREADS))

_sets: dict[str, KernelSet] = {}


def kernel_set(dt: str) -> KernelSet:
    """The compile-once KernelSet of every indexing kernel for dtype `dt` (one module per dtype)."""
    ks = _sets.get(dt)
    if ks is None:
        c = C_TYPES[dt]
        names = [f"index_get<{c}>", f"index_put<{c}, 0>", f"gather<{c}>", f"scatter<{c}, 0>", f"tri<{c}>",
                 f"nonzero_scan<{c}>", "nonzero_write", "check_targets"]
        if dt in ATOMIC:
            names += [f"index_put<{c}, 1>", *(f"scatter<{c}, {mode}>" for mode in (1, 2, 3, 4))]
        ks = _sets[dt] = KernelSet(f"framework_indexing_{dt}", INDEX_CU, name_expressions=names)
    return ks


def _idx_params(k: int, nb: int, sizes: Sequence[int], strides: Sequence[int]) -> tuple[np.int64, ...]:
    z = np.zeros(2 + 2 * MAXD, np.int64)
    z[0], z[1] = k, nb
    z[2:2 + k] = sizes
    z[2 + MAXD:2 + MAXD + k] = strides
    return tuple(z)


def _front_geometry(nb: int, rest: Sequence[int], a_st: Sequence[int], b_st: Sequence[int]) -> tuple:
    """GEO_PARAMS over (nb, *rest): operand a (strides for all dims), b (rest-dim strides, 0 on nb), the
    index row (1 on nb, 0 elsewhere)."""
    shape = (nb, *rest)
    return _geometry(shape, (tuple(a_st), (0, *b_st), (1,) + (0,) * len(rest)))


def index_get(dt: str, nb: int, rest: Sequence[int], out: int, out_st: Sequence[int], src: int,
              src_rest_st: Sequence[int], idx: int, sizes: Sequence[int], strides: Sequence[int],
              check: int) -> LaunchReport | None:
    """out[b, r...] = src[idx[:, b], r...] with `out_st` the strides of out over (nb, *rest); `idx` a
    contiguous (K, nb) int64 buffer for the K index dims of `sizes`/`strides` (negative indices wrap);
    `check` the bounds rule (0 none, 1 advanced indexing, 2 index_select, 3 index_add), a device-side
    assertion when broken."""
    n = nb * int(np.prod(rest, dtype=np.int64))
    if n == 0:
        return None
    args = (out, src, idx, np.int32(check), *_idx_params(len(sizes), nb, sizes, strides),
            *_front_geometry(nb, rest, out_st, src_rest_st))
    return kernel_set(dt).get(f"index_get<{C_TYPES[dt]}>")(_grid(n), 256, args)


def index_put(dt: str, accumulate: bool, nb: int, rest: Sequence[int], dst: int, dst_rest_st: Sequence[int],
              vals: int, vals_st: Sequence[int], idx: int, sizes: Sequence[int], strides: Sequence[int],
              check: int) -> LaunchReport | None:
    """dst[idx[:, b], r...] = vals[b, r...] (`accumulate`: +=, atomically; dt must be in ATOMIC);
    `vals_st` are the (broadcast) strides of the values over (nb, *rest)."""
    n = nb * int(np.prod(rest, dtype=np.int64))
    if n == 0:
        return None
    args = (dst, vals, idx, np.int32(check), *_idx_params(len(sizes), nb, sizes, strides),
            *_front_geometry(nb, rest, vals_st, dst_rest_st))
    return kernel_set(dt).get(f"index_put<{C_TYPES[dt]}, {int(accumulate)}>")(_grid(n), 256, args)


def gather(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], src: int, src_st: Sequence[int],
           index: int, index_st: Sequence[int], dsize: int, dstride: int) -> LaunchReport | None:
    """out = src gathered along a dim of size `dsize` (stride `dstride`) by the int64 `index` (all strided
    over `shape`, src with stride 0 on that dim); an index outside [0, dsize) is a device-side assertion."""
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return None
    args = (out, src, index, np.int64(dsize), np.int64(dstride), *_geometry(shape, (out_st, src_st, index_st)))
    return kernel_set(dt).get(f"gather<{C_TYPES[dt]}>")(_grid(n), 256, args)


def scatter(dt: str, accumulate: bool | int, shape: Sequence[int], dst: int, dst_st: Sequence[int], src: int,
            src_st: Sequence[int], index: int, index_st: Sequence[int], dsize: int,
            dstride: int) -> LaunchReport | None:
    """dst scattered into along a dim of size `dsize` (stride `dstride`) from src by `index` over `shape`
    (dst with stride 0 on that dim); `accumulate` True (or 1) adds atomically, 2/3/4 multiply / take the max /
    the min atomically (dt in ATOMIC); an index outside [0, dsize) is a device-side assertion."""
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return None
    args = (dst, src, index, np.int64(dsize), np.int64(dstride), *_geometry(shape, (src_st, dst_st, index_st)))
    return kernel_set(dt).get(f"scatter<{C_TYPES[dt]}, {int(accumulate)}>")(_grid(n), 256, args)


def check_targets(target: int, n: int, n_classes: int, ignore_index: int) -> LaunchReport | None:
    """Assert on the device that each of the `n` contiguous int64 class indices at `target` is in
    [0, n_classes) or is `ignore_index` (nll_loss's rule, with the text of PyTorch's assertion)."""
    if not n:
        return None
    args = (target, np.int64(n), np.int64(n_classes), np.int64(ignore_index))
    return kernel_set("int64").get("check_targets")(_grid(n), 256, args)


def tri(dt: str, upper: bool, diagonal: int, shape: Sequence[int], out: int, out_st: Sequence[int], src: int,
        src_st: Sequence[int]) -> None:
    """out = tril(src, diagonal) (or triu with `upper`) over the last two dims of `shape`."""
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return
    args = (out, src, np.int64(shape[-2]), np.int64(shape[-1]), np.int64(diagonal), np.int32(upper),
            *_geometry(shape, (out_st, src_st)))
    kernel_set(dt).get(f"tri<{C_TYPES[dt]}>")(_grid(n), 256, args)


def nonzero_scan(dt: str, shape: Sequence[int], pos: int, x: int, x_st: Sequence[int]) -> None:
    """pos[i] = count of nonzero elements of x (row-major order) up to i; pos[n] = total (one block)."""
    kernel_set(dt).get(f"nonzero_scan<{C_TYPES[dt]}>")(1, SCAN_THREADS, (pos, x, *_geometry(shape, (x_st,))))


def nonzero_write(dt: str, shape: Sequence[int], out: int, pos: int, rs: int, cs: int) -> None:
    """Write the coordinates of each nonzero element (found by `nonzero_scan` into `pos`) to its row of
    `out` (coordinate d of row r at out[r * rs + d * cs])."""
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return
    if len(shape) > MAXD:
        raise RuntimeError(f"[strata kernels] tensors of more than {MAXD} dims are not supported, got {len(shape)}")
    h = np.ones(MAXD, np.int64)
    h[:len(shape)] = shape
    kernel_set(dt).get("nonzero_write")(_grid(n), 256, (out, pos, np.int64(n), np.int64(len(shape)), np.int64(rs),
                                                         np.int64(cs), *h))
