"""The framework's own CUDA kernels ("ATen" for strata): elementwise unary/binary/ternary ops, fill,
strided copy with dtype conversion, and reductions over dims, for "cuda" tensors.

Every kernel is a CUDA C++ template instantiated per dtype (and per op code) through NVRTC name
expressions. One `KernelSet` per (kind of kernel, dtype) is compiled the first time a tensor of that dtype
needs the family, then reused (and cached on disk as PTX). Operands are strided: each launch passes a
`Geometry` struct by value with the shape and the element strides of every operand, so broadcasts
(stride 0), transposes and slices run without copies. half and bfloat16 compute in float, as ATen's
"opmath" types do.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> a = cuda.to_device(np.arange(6, dtype=np.float32))
    >>> out = cuda.empty(6, np.float32)
    >>> binary("add", "float32", "float32", (6,), out.ptr, (1,), a.ptr, (1,), a.ptr, (0,))
    >>> out.get().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from strata.libs.common import KernelSet, LibraryKernel

MAXD = 6
THREADS = 256
MAX_BLOCKS = 1024

C_TYPES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
    "int64": "long long", "float16": "__half", "bfloat16": "__nv_bfloat16", "float32": "float", "float64": "double",
}
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")

UNARY = {"neg": 0, "abs": 1, "exp": 2, "log": 3, "sqrt": 4, "rsqrt": 5, "relu": 6, "sigmoid": 7, "tanh": 8,
         "sign": 9, "reciprocal": 10, "logical_not": 11}
UNARY_FLOAT_ONLY = {"exp", "log", "sqrt", "rsqrt", "sigmoid", "tanh", "reciprocal"}
BINARY = {"add": 0, "sub": 1, "mul": 2, "div": 3, "pow": 4, "maximum": 5, "minimum": 6,
          "eq": 7, "ne": 8, "lt": 9, "le": 10, "gt": 11, "ge": 12}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}
REDUCE = {"sum": 0, "max": 1, "min": 2, "mean": 3}


def _fields(prefix: str, n: int) -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def _macros() -> str:
    # NOTE: the geometry travels as scalar kernel parameters, not as a struct by value: NVRTC reads a
    # large by-value struct through the parameter's address (mov.b64 %rd, param), which the emulator's
    # JIT does not resolve yet (hw/jit.py symbol_slot); scalars load with plain ld.param.
    geo = ["n", "ndim"] + _fields("h", MAXD) + [f for k in "abcd" for f in _fields(k, MAXD)]
    rgeo = (["nout", "ndim"] + _fields("h", MAXD) + _fields("o", MAXD) + _fields("i", MAXD) + ["nred", "rdim"]
            + _fields("rh", MAXD) + _fields("rs", MAXD))
    build = ["Geometry g; g.n = n; g.ndim = ndim;"] + [f"g.shape[{i}] = h{i};" for i in range(MAXD)]
    build += [f"g.st[{k}][{i}] = {c}{i};" for k, c in enumerate("abcd") for i in range(MAXD)]
    rbuild = ["RGeometry g; g.nout = nout; g.ndim = ndim; g.nred = nred; g.rdim = rdim;"]
    rbuild += [f"g.{f}[{i}] = {c}{i};" for f, c in (("shape", "h"), ("ost", "o"), ("ist", "i"), ("rshape", "rh"),
                                                     ("rst", "rs")) for i in range(MAXD)]
    return "\n".join([
        "#define GEO_PARAMS " + ", ".join(f"long long {f}" for f in geo),
        "#define GEO_BUILD " + " ".join(build),
        "#define RGEO_PARAMS " + ", ".join(f"long long {f}" for f in rgeo),
        "#define RGEO_BUILD " + " ".join(rbuild),
    ]) + "\n"


_GEO_MACROS = _macros()

COMMON_CU = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define MAXD 6
struct Geometry { long long n; long long ndim; long long shape[MAXD]; long long st[4][MAXD]; };
""" + _GEO_MACROS + r"""

// widen to the type the math runs in ("opmath"): float for half/bfloat16, the type itself otherwise
__device__ __forceinline__ float up(__half x) { return __half2float(x); }
__device__ __forceinline__ float up(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> __device__ __forceinline__ T up(T x) { return x; }

// narrow from any arithmetic value to storage type D
template <typename D> struct Down { template <typename S> static __device__ D f(S x) { return static_cast<D>(x); } };
template <> struct Down<bool> { template <typename S> static __device__ bool f(S x) { return x != S(0); } };
template <> struct Down<__half> {
    template <typename S> static __device__ __half f(S x) { return __float2half_rn(static_cast<float>(x)); } };
template <> struct Down<__nv_bfloat16> {
    template <typename S> static __device__ __nv_bfloat16 f(S x) {
        return __float2bfloat16_rn(static_cast<float>(x)); } };

template <typename T> struct Op { typedef T type; };
template <> struct Op<__half> { typedef float type; };
template <> struct Op<__nv_bfloat16> { typedef float type; };

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ float m_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double m_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float m_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double m_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float m_pow(float x, float y) { return powf(x, y); }
__device__ __forceinline__ double m_pow(double x, double y) { return pow(x, y); }
template <typename T> __device__ __forceinline__ T m_exp(T x) { return x; }
template <typename T> __device__ __forceinline__ T m_log(T x) { return x; }
template <typename T> __device__ __forceinline__ T m_sqrt(T x) { return x; }
template <typename T> __device__ __forceinline__ T m_tanh(T x) { return x; }
template <typename T> __device__ __forceinline__ T m_pow(T b, T e) {   // integral power, as ATen's powi
    if (e < T(0)) return (b == T(1)) ? T(1) : (b == T(-1)) ? ((e % T(2)) ? T(-1) : T(1)) : T(0);
    T r = T(1);
    while (e) { if (e & T(1)) r *= b; b *= b; e >>= 1; }
    return r;
}
__device__ __forceinline__ bool m_pow(bool b, bool e) { return b || !e; }
template <typename T> __device__ __forceinline__ bool is_nan(T x) { return x != x; }

#define GRID_STRIDE(i, n) \
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (n); \
         i += (long long)gridDim.x * blockDim.x)

// offsets of element i in every operand of a strided geometry
template <int K> __device__ __forceinline__ void offsets(const Geometry& g, long long i, long long* off) {
    #pragma unroll
    for (int k = 0; k < K; ++k) off[k] = 0;
    #pragma unroll
    for (int d = MAXD - 1; d >= 0; --d) {
        if (d < g.ndim) {
            long long c = i % g.shape[d];
            i /= g.shape[d];
            #pragma unroll
            for (int k = 0; k < K; ++k) off[k] += c * g.st[k][d];
        }
    }
}
"""

ELEMENTWISE_CU = COMMON_CU + r"""
template <int OP, typename T> __device__ __forceinline__ T unop(T x) {
    if (OP == 0) return -x;
    if (OP == 1) return x < T(0) ? -x : x;
    if (OP == 2) return m_exp(x);
    if (OP == 3) return m_log(x);
    if (OP == 4) return m_sqrt(x);
    if (OP == 5) return T(1) / m_sqrt(x);
    if (OP == 6) return is_nan(x) ? x : (x > T(0) ? x : T(0));
    if (OP == 7) return T(1) / (T(1) + m_exp(-x));
    if (OP == 8) return m_tanh(x);
    if (OP == 9) return is_nan(x) ? x : T((x > T(0)) - (x < T(0)));
    if (OP == 10) return T(1) / x;
    if (OP == 11) return T(x == T(0));
    return x;
}
template <int OP, typename T> __device__ __forceinline__ T binop(T a, T b) {
    if (OP == 0) return a + b;
    if (OP == 1) return a - b;
    if (OP == 2) return a * b;
    if (OP == 3) return a / b;
    if (OP == 4) return m_pow(a, b);
    if (OP == 5) return is_nan(a) ? a : is_nan(b) ? b : (a > b ? a : b);
    if (OP == 6) return is_nan(a) ? a : is_nan(b) ? b : (a < b ? a : b);
    return a;
}
template <int OP, typename T> __device__ __forceinline__ bool cmpop(T a, T b) {
    if (OP == 7) return a == b;
    if (OP == 8) return a != b;
    if (OP == 9) return a < b;
    if (OP == 10) return a <= b;
    if (OP == 11) return a > b;
    return a >= b;
}

template <typename T, int OP> __global__ void unary(T* out, const T* a, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        out[off[0]] = Down<T>::f(unop<OP>(up(a[off[1]])));
    }
}
template <typename T, int OP> __global__ void binary(T* out, const T* a, const T* b, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        out[off[0]] = Down<T>::f(binop<OP>(up(a[off[1]]), up(b[off[2]])));
    }
}
template <typename T, int OP> __global__ void compare(bool* out, const T* a, const T* b, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        out[off[0]] = cmpop<OP>(up(a[off[1]]), up(b[off[2]]));
    }
}
template <typename T> __global__ void where(T* out, const bool* c, const T* a, const T* b, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[4]; offsets<4>(g, i, off);
        out[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
    }
}
// fill a strided tensor; integral values travel exactly as long long, floating ones as double
template <typename T> __global__ void fill(T* out, double v, long long iv, int integral, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[1]; offsets<1>(g, i, off);
        out[off[0]] = integral ? Down<T>::f(iv) : Down<T>::f(v);
    }
}
// arange and linspace into a contiguous out: integral values exactly in long long; floating ones in double
// as the host computes them (__dmul_rn/__dadd_rn: never contracted into an fma), linspace from both ends
template <typename T> __global__ void sequence(T* out, long long n, double start, double step, double end,
                                               long long istart, long long istep, int integral, int two_sided) {
    GRID_STRIDE(i, n) {
        if (integral) { out[i] = Down<T>::f(istart + i * istep); continue; }
        double v = (two_sided && i >= n / 2) ? __dadd_rn(end, -__dmul_rn((double)(n - 1 - i), step))
                                             : __dadd_rn(start, __dmul_rn((double)i, step));
        out[i] = Down<T>::f(v);
    }
}
"""

# a op s (or s op a): the scalar s travels as a kernel argument, converted to T first exactly as the fill
# kernel would store it in a 0-dim tensor of T, so the result has the bits of the two-launch way
SCALAR_CU = ELEMENTWISE_CU + r"""
template <typename T, int OP> __global__ void binary_scalar(T* out, const T* a, double v, long long iv,
                                                            int integral, int left, GEO_PARAMS) {
    GEO_BUILD
    const typename Op<T>::type s = up(integral ? Down<T>::f(iv) : Down<T>::f(v));
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        const typename Op<T>::type x = up(a[off[1]]);
        out[off[0]] = Down<T>::f(left ? binop<OP>(s, x) : binop<OP>(x, s));
    }
}
"""

COPY_CU = COMMON_CU + r"""
template <typename S, typename D> __global__ void copy(D* out, const S* a, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        out[off[0]] = Down<D>::f(up(a[off[1]]));
    }
}
"""

# One block per output element: threads stride over the reduced elements, then a tree in shared memory.
# max/min keep the first index of the extreme value and propagate NaN (its first index), as ATen does.
REDUCE_CU = r"""
#define RT 256
struct RGeometry {
    long long nout; long long ndim; long long shape[MAXD]; long long ost[MAXD]; long long ist[MAXD];
    long long nred; long long rdim; long long rshape[MAXD]; long long rst[MAXD];
};
template <typename A> __device__ __forceinline__ bool better(int OP, A v, long long vi, A cur, long long ci) {
    if (ci < 0) return vi >= 0;
    if (vi < 0) return false;
    bool vn = is_nan(v), cn = is_nan(cur);
    if (vn || cn) return vn && (!cn || vi < ci);
    if (v == cur) return vi < ci;
    return OP == 1 ? v > cur : v < cur;
}
template <typename T, typename A, typename O, int OP>
__global__ void reduce(O* out, long long* idx, const T* a, RGEO_PARAMS) {
    RGEO_BUILD
    __shared__ A sv[RT];
    __shared__ long long si[RT];
    long long o = blockIdx.x, base = 0, obase = 0, r = o;
    #pragma unroll
    for (int d = MAXD - 1; d >= 0; --d) {
        if (d < g.ndim) { long long c = r % g.shape[d]; r /= g.shape[d]; base += c * g.ist[d]; obase += c * g.ost[d]; }
    }
    A acc = A(0); long long ai = -1;
    for (long long j = threadIdx.x; j < g.nred; j += blockDim.x) {
        long long q = j, off = base;
        #pragma unroll
        for (int d = MAXD - 1; d >= 0; --d) {
            if (d < g.rdim) { long long c = q % g.rshape[d]; q /= g.rshape[d]; off += c * g.rst[d]; }
        }
        A v = static_cast<A>(up(a[off]));
        if (OP == 0 || OP == 3) acc += v;
        else if (better<A>(OP, v, j, acc, ai)) { acc = v; ai = j; }
    }
    sv[threadIdx.x] = acc; si[threadIdx.x] = ai;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            if (OP == 0 || OP == 3) sv[threadIdx.x] += sv[threadIdx.x + s];
            else if (better<A>(OP, sv[threadIdx.x + s], si[threadIdx.x + s], sv[threadIdx.x], si[threadIdx.x])) {
                sv[threadIdx.x] = sv[threadIdx.x + s]; si[threadIdx.x] = si[threadIdx.x + s];
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        A res = sv[0];
        if (OP == 3) res = res / static_cast<A>(g.nred);
        out[obase] = Down<O>::f(res);
        if (OP == 1 || OP == 2) idx[obase] = si[0];
    }
}
"""

# More elementwise math, in families of their own (so the sets above keep their cached PTX and each
# set stays small): float-only unary ops, predicates, nan_to_num, division-like and float binary ops,
# bitwise ops, and the product reduction. Each family maps op name -> template code.
TRIG = {"sin": 0, "cos": 1, "tan": 2, "asin": 3, "acos": 4, "atan": 5, "sinh": 6, "cosh": 7, "asinh": 8,
        "acosh": 9, "atanh": 10}
SPECIAL = {"log1p": 11, "expm1": 12, "log2": 13, "log10": 14, "exp2": 15, "erf": 16, "erfinv": 17, "silu": 18,
           "gelu": 19, "gelu_tanh": 20}
ROUNDING = {"floor": 21, "ceil": 22, "round": 23, "trunc": 24, "frac": 25}
FLOAT_UNARY_FAMILY = {**{op: "trig" for op in TRIG}, **{op: "special" for op in SPECIAL},
                      **{op: "rounding" for op in ROUNDING}}
FLOAT_UNARY = {**TRIG, **SPECIAL, **ROUNDING}
PREDICATES = {"isnan": 0, "isinf": 1, "isfinite": 2}
DIVMOD = {"fmod": 0, "remainder": 1, "floor_divide": 2}
FLOAT_BINARY = {"atan2": 3, "hypot": 4, "copysign": 5}
BITWISE = {"bitwise_and": 6, "bitwise_or": 7, "bitwise_xor": 8}

MATH_CU = COMMON_CU + r"""
#define F1(name, f, d) \
    __device__ __forceinline__ float name(float x) { return f(x); } \
    __device__ __forceinline__ double name(double x) { return d(x); }
#define F2(name, f, d) \
    __device__ __forceinline__ float name(float x, float y) { return f(x, y); } \
    __device__ __forceinline__ double name(double x, double y) { return d(x, y); }
F1(m_sin, sinf, sin) F1(m_cos, cosf, cos) F1(m_tan, tanf, tan) F1(m_asin, asinf, asin) F1(m_acos, acosf, acos)
F1(m_atan, atanf, atan) F1(m_sinh, sinhf, sinh) F1(m_cosh, coshf, cosh) F1(m_asinh, asinhf, asinh)
F1(m_acosh, acoshf, acosh) F1(m_atanh, atanhf, atanh) F1(m_log1p, log1pf, log1p) F1(m_expm1, expm1f, expm1)
F1(m_log2, log2f, log2) F1(m_log10, log10f, log10) F1(m_exp2, exp2f, exp2) F1(m_erf, erff, erf)
F1(m_erfinv, erfinvf, erfinv) F1(m_floor, floorf, floor) F1(m_ceil, ceilf, ceil) F1(m_rint, rintf, rint)
F1(m_trunc, truncf, trunc)
F2(m_atan2, atan2f, atan2) F2(m_hypot, hypotf, hypot) F2(m_copysign, copysignf, copysign) F2(m_fmod, fmodf, fmod)

// integral fmod and floor division (C's % truncates; a zero divisor gives 0 rather than a trap)
template <typename T> __device__ __forceinline__ T m_fmod(T a, T b) { return b == T(0) ? T(0) : T(a % b); }
template <typename T> __device__ __forceinline__ T m_floordiv(T a, T b) {
    if (b == T(0)) return T(0);
    T q = a / b;
    return (a % b != T(0) && ((a < T(0)) != (b < T(0)))) ? T(q - T(1)) : q;
}
// floating floor division as Python's float //: from fmod, so (a - mod) / b is exact before rounding
template <typename A> __device__ __forceinline__ A f_floordiv(A a, A b) {
    if (b == A(0)) return a / b;
    A mod = m_fmod(a, b);
    A div = (a - mod) / b;
    if (mod != A(0) && ((b < A(0)) != (mod < A(0)))) div -= A(1);
    if (div == A(0)) return m_copysign(A(0), a / b);
    A fl = m_floor(div);
    return (div - fl > A(0.5)) ? fl + A(1) : fl;
}
__device__ __forceinline__ float m_floordiv(float a, float b) { return f_floordiv(a, b); }
__device__ __forceinline__ double m_floordiv(double a, double b) { return f_floordiv(a, b); }

template <int OP, typename A> __device__ __forceinline__ A funop(A x) {
    if (OP == 0) return m_sin(x);
    if (OP == 1) return m_cos(x);
    if (OP == 2) return m_tan(x);
    if (OP == 3) return m_asin(x);
    if (OP == 4) return m_acos(x);
    if (OP == 5) return m_atan(x);
    if (OP == 6) return m_sinh(x);
    if (OP == 7) return m_cosh(x);
    if (OP == 8) return m_asinh(x);
    if (OP == 9) return m_acosh(x);
    if (OP == 10) return m_atanh(x);
    if (OP == 11) return m_log1p(x);
    if (OP == 12) return m_expm1(x);
    if (OP == 13) return m_log2(x);
    if (OP == 14) return m_log10(x);
    if (OP == 15) return m_exp2(x);
    if (OP == 16) return m_erf(x);
    if (OP == 17) return m_erfinv(x);
    if (OP == 18) return x / (A(1) + m_exp(-x));                                    // silu
    if (OP == 19) return A(0.5) * x * (A(1) + m_erf(x * A(0.70710678118654752)));  // gelu, erf form
    if (OP == 20) {                                                                 // gelu, tanh form
        A inner = A(0.79788456080286536) * (x + A(0.044715) * x * x * x);
        return A(0.5) * x * (A(1) + m_tanh(inner));
    }
    if (OP == 21) return m_floor(x);
    if (OP == 22) return m_ceil(x);
    if (OP == 23) return m_rint(x);                                                 // half to even
    if (OP == 24) return m_trunc(x);
    if (OP == 25) return x - m_trunc(x);                                            // frac
    return x;
}
template <int OP, typename A> __device__ __forceinline__ A binop2(A a, A b) {
    if (OP == 0) return m_fmod(a, b);
    if (OP == 1) { A r = m_fmod(a, b); return (r != A(0) && ((r < A(0)) != (b < A(0)))) ? A(r + b) : r; }
    if (OP == 2) return m_floordiv(a, b);
    return a;
}
template <int OP, typename A> __device__ __forceinline__ A fbinop(A a, A b) {
    if (OP == 3) return m_atan2(a, b);
    if (OP == 4) return m_hypot(a, b);
    if (OP == 5) return m_copysign(a, b);
    return a;
}
template <int OP, typename T> __device__ __forceinline__ T bitop(T a, T b) {
    if (OP == 6) return T(a & b);
    if (OP == 7) return T(a | b);
    return T(a ^ b);
}
template <typename T> __device__ __forceinline__ T bnot(T x) { return T(~x); }
__device__ __forceinline__ bool bnot(bool x) { return !x; }

template <typename T, int OP> __global__ void funary(T* out, const T* a, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        out[off[0]] = Down<T>::f(funop<OP>(up(a[off[1]])));
    }
}
// isnan / isinf / isfinite: x - x is 0 for finite x and NaN for inf and NaN
template <typename T, int OP> __global__ void predicate(bool* out, const T* a, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        typename Op<T>::type x = up(a[off[1]]);
        bool nan = x != x, finite = (x - x) == (x - x);
        out[off[0]] = OP == 0 ? nan : OP == 1 ? (!nan && !finite) : finite;
    }
}
template <typename T> __global__ void nan_to_num(T* out, const T* a, double nan, double posinf, double neginf,
                                                 GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        T v = a[off[1]];
        typename Op<T>::type x = up(v);
        if (x != x) out[off[0]] = Down<T>::f(nan);
        else if ((x - x) != (x - x)) out[off[0]] = Down<T>::f(x > 0 ? posinf : neginf);
        else out[off[0]] = v;
    }
}
template <typename T, int OP> __global__ void binary2(T* out, const T* a, const T* b, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        out[off[0]] = Down<T>::f(binop2<OP>(up(a[off[1]]), up(b[off[2]])));
    }
}
template <typename T, int OP> __global__ void fbinary(T* out, const T* a, const T* b, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        out[off[0]] = Down<T>::f(fbinop<OP>(up(a[off[1]]), up(b[off[2]])));
    }
}
template <typename T, int OP> __global__ void bitwise(T* out, const T* a, const T* b, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[3]; offsets<3>(g, i, off);
        out[off[0]] = bitop<OP>(a[off[1]], b[off[2]]);
    }
}
template <typename T> __global__ void bitwise_not(T* out, const T* a, GEO_PARAMS) {
    GEO_BUILD
    GRID_STRIDE(i, g.n) {
        long long off[2]; offsets<2>(g, i, off);
        out[off[0]] = bnot(a[off[1]]);
    }
}
"""

# The product over reduced dims: `reduce`'s geometry and tree, with 1 as the identity.
PROD_CU = r"""
template <typename T, typename A, typename O>
__global__ void reduce_prod(O* out, long long* idx, const T* a, RGEO_PARAMS) {
    RGEO_BUILD
    __shared__ A sv[RT];
    long long o = blockIdx.x, base = 0, obase = 0, r = o;
    #pragma unroll
    for (int d = MAXD - 1; d >= 0; --d) {
        if (d < g.ndim) { long long c = r % g.shape[d]; r /= g.shape[d]; base += c * g.ist[d]; obase += c * g.ost[d]; }
    }
    A acc = A(1);
    for (long long j = threadIdx.x; j < g.nred; j += blockDim.x) {
        long long q = j, off = base;
        #pragma unroll
        for (int d = MAXD - 1; d >= 0; --d) {
            if (d < g.rdim) { long long c = q % g.rshape[d]; q /= g.rshape[d]; off += c * g.rst[d]; }
        }
        acc *= static_cast<A>(up(a[off]));
    }
    sv[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sv[threadIdx.x] *= sv[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[obase] = Down<O>::f(sv[0]);
}
"""

_sets: dict[tuple[str, str, str], KernelSet] = {}


def _acc(dt: str) -> str:
    if dt in ("float16", "bfloat16", "float32"):
        return "float"
    if dt == "float64":
        return "double"
    return "long long"


def kernel_set(family: str, dt: str, dst: str = "") -> KernelSet:
    """The compile-once KernelSet of `family` ('unary', 'binary', 'compare', 'where', 'fill', 'copy',
    'reduce', 'binary_scalar'; the math families 'trig', 'special', 'rounding', 'divmod', 'float_binary',
    'bitwise', 'prod') for dtype `dt` (copy: from `dt` to `dst`): small modules, so a process loads (JITs)
    only the kernels it uses."""
    key = (family, dt, dst)
    ks = _sets.get(key)
    if ks is not None:
        return ks
    c = C_TYPES[dt]
    names: list[str] = []
    if family == "unary":
        for op, code in UNARY.items():
            if dt == "bool" and op != "logical_not" or op in UNARY_FLOAT_ONLY and dt not in FLOATS:
                continue
            names.append(f"unary<{c}, {code}>")
        source = ELEMENTWISE_CU
    elif family == "binary":
        names = [f"binary<{c}, {code}>" for op, code in BINARY.items() if op not in COMPARISONS
                 and (dt != "bool" or op in ("maximum", "minimum", "mul", "add", "pow"))]
        source = ELEMENTWISE_CU
    elif family == "binary_scalar":
        names = [f"binary_scalar<{c}, {code}>" for op, code in BINARY.items() if op not in COMPARISONS
                 and (dt != "bool" or op in ("maximum", "minimum", "mul", "add", "pow"))]
        source = SCALAR_CU
    elif family == "compare":
        names = [f"compare<{c}, {BINARY[op]}>" for op in COMPARISONS]
        source = ELEMENTWISE_CU
    elif family == "where":
        names = [f"where<{c}>"]
        source = ELEMENTWISE_CU
    elif family == "fill":
        names = [f"fill<{c}>", f"sequence<{c}>"]
        source = ELEMENTWISE_CU
    elif family == "copy":  # dt is the source type, dst the destination's
        names = [f"copy<{c}, {C_TYPES[dst]}>"]
        source = COPY_CU
    elif family == "reduce":
        acc = _acc(dt)
        sum_out = c if dt in FLOATS else "long long"
        names = [f"reduce<{c}, {acc}, {sum_out}, 0>", f"reduce<{c}, {acc}, {c}, 1>", f"reduce<{c}, {acc}, {c}, 2>"]
        if dt in FLOATS:
            names.append(f"reduce<{c}, {acc}, {c}, 3>")
        source = COMMON_CU + REDUCE_CU
    elif family in ("trig", "special", "rounding"):  # float dtypes only
        names = [f"funary<{c}, {code}>" for op, code in FLOAT_UNARY.items() if FLOAT_UNARY_FAMILY[op] == family]
        if family == "rounding":
            names += [f"predicate<{c}, {code}>" for code in PREDICATES.values()] + [f"nan_to_num<{c}>"]
        source = MATH_CU
    elif family == "divmod":  # integral and float dtypes
        names = [f"binary2<{c}, {code}>" for code in DIVMOD.values()]
        source = MATH_CU
    elif family == "float_binary":
        names = [f"fbinary<{c}, {code}>" for code in FLOAT_BINARY.values()]
        source = MATH_CU
    elif family == "bitwise":  # integral dtypes and bool
        names = [f"bitwise<{c}, {code}>" for code in BITWISE.values()] + [f"bitwise_not<{c}>"]
        source = MATH_CU
    elif family == "prod":
        names = [f"reduce_prod<{c}, {_acc(dt)}, {c if dt in FLOATS else 'long long'}>"]
        source = COMMON_CU + REDUCE_CU + PROD_CU
    else:
        raise ValueError(f"unknown kernel family {family!r}")
    ks = _sets[key] = KernelSet(f"framework_{family}_{dt}{'_' + dst if dst else ''}", source,
                                name_expressions=names)
    return ks


def coalesce(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge neighbours that are one run in every operand (ATen's TensorIterator
    does the same): a contiguous tensor becomes 1-D, so kernels do less index arithmetic per element."""
    dims = [i for i, s in enumerate(shape) if s != 1]
    out_shape: list[int] = []
    out_st: list[list[int]] = [[] for _ in strides]
    for i in dims:
        if out_shape and all(st[-1] == s[i] * shape[i] for st, s in zip(out_st, strides, strict=True)):
            out_shape[-1] *= shape[i]
            for st, s in zip(out_st, strides, strict=True):
                st[-1] = s[i]
        else:
            out_shape.append(shape[i])
            for st, s in zip(out_st, strides, strict=True):
                st.append(s[i])
    return out_shape, out_st


# (shape, operand strides) -> GEO_PARAMS: a training step launches the same few shapes again and again, and
# coalescing them costs more than the dict lookup; bounded, as shapes are few in a program but need not be
_GEOMETRIES: dict[tuple, tuple[int, ...]] = {}
_GEOMETRIES_MAX = 4096


def _geometry(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """The GEO_PARAMS scalars as Python ints: n, ndim, shape[MAXD], st[4][MAXD] (after `coalesce`)."""
    key = (tuple(shape), *map(tuple, strides))
    g = _GEOMETRIES.get(key)
    if g is None:
        g = _make_geometry(key[0], key[1:])
        if len(_GEOMETRIES) >= _GEOMETRIES_MAX:
            _GEOMETRIES.clear()
        _GEOMETRIES[key] = g
    return g


def _make_geometry(shape: Sequence[int], strides: Sequence[Sequence[int]]) -> tuple[int, ...]:
    cshape, cstrides = coalesce(shape, strides)
    if len(cshape) > MAXD:
        raise RuntimeError(f"[strata kernels] tensors of more than {MAXD} dims are not supported, got {len(cshape)}")
    g = [0] * (2 + MAXD + 4 * MAXD)
    g[0] = math.prod(cshape)
    g[1] = len(cshape)
    g[2:2 + len(cshape)] = cshape
    for k, st in enumerate(cstrides):
        g[2 + MAXD + k * MAXD: 2 + MAXD + k * MAXD + len(st)] = st
    return tuple(int(v) for v in g)


def _grid(n: int) -> int:
    return max(1, min(MAX_BLOCKS, (n + THREADS - 1) // THREADS))


# (family, dtype, destination dtype, kernel name) -> its LibraryKernel: one dict lookup per launch
_KERNELS: dict[tuple[str, str, str, str], LibraryKernel] = {}


def _launch(family: str, dt: str, name: str, n: int, args: tuple, dst: str = "") -> None:
    if n == 0:
        return
    key = (family, dt, dst, name)
    k = _KERNELS.get(key)
    if k is None:
        k = _KERNELS[key] = kernel_set(family, dt, dst).get(name)
    k(_grid(n), THREADS, args)


def unary(op: str, dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], a: int,
          a_st: Sequence[int]) -> None:
    """out = op(a) elementwise, in dtype `dt`; pointers are device addresses, strides in elements."""
    n = math.prod(shape)
    _launch("unary", dt, f"unary<{C_TYPES[dt]}, {UNARY[op]}>", n,
            (out, a, *_geometry(shape, (out_st, a_st))))


def binary(op: str, dt: str, out_dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], a: int,
           a_st: Sequence[int], b: int, b_st: Sequence[int]) -> None:
    """out = a op b elementwise over broadcast strides; comparisons write bool (`out_dt`)."""
    n = math.prod(shape)
    kind = "compare" if op in COMPARISONS else "binary"
    _launch(kind, dt, f"{kind}<{C_TYPES[dt]}, {BINARY[op]}>", n,
            (out, a, b, *_geometry(shape, (out_st, a_st, b_st))))


def binary_scalar(op: str, dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], a: int,
                  a_st: Sequence[int], value: float | int | bool, left: bool) -> None:
    """out = a op value (value op a when `left`) elementwise in dtype `dt`, for the non-comparison BINARY
    ops: `value` converted to `dt` as `fill` converts it (integral values exactly, as long long)."""
    integral = isinstance(value, int | bool | np.integer | np.bool_)
    iv = int(value) if integral else 0
    _launch("binary_scalar", dt, f"binary_scalar<{C_TYPES[dt]}, {BINARY[op]}>", math.prod(shape),
            (out, a, np.float64(0.0 if integral else float(value)), np.int64(iv), int(integral), int(left),
             *_geometry(shape, (out_st, a_st))))


def math_unary(op: str, dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], a: int,
               a_st: Sequence[int]) -> None:
    """out = op(a) for the float-only ops of FLOAT_UNARY (dt a float type), `bitwise_not` (integral or
    bool), or a PREDICATES op (out is bool)."""
    n = math.prod(shape)
    c = C_TYPES[dt]
    if op in PREDICATES:
        family, name = "rounding", f"predicate<{c}, {PREDICATES[op]}>"
    elif op == "bitwise_not":
        family, name = "bitwise", f"bitwise_not<{c}>"
    else:
        family, name = FLOAT_UNARY_FAMILY[op], f"funary<{c}, {FLOAT_UNARY[op]}>"
    _launch(family, dt, name, n, (out, a, *_geometry(shape, (out_st, a_st))))


def nan_to_num(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], a: int, a_st: Sequence[int],
               nan: float, posinf: float, neginf: float) -> None:
    """out = a with NaN, +inf and -inf replaced by the given values (dt a float type)."""
    n = math.prod(shape)
    _launch("rounding", dt, f"nan_to_num<{C_TYPES[dt]}>", n,
            (out, a, np.float64(nan), np.float64(posinf), np.float64(neginf), *_geometry(shape, (out_st, a_st))))


def math_binary(op: str, dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], a: int,
                a_st: Sequence[int], b: int, b_st: Sequence[int]) -> None:
    """out = op(a, b) for the DIVMOD, FLOAT_BINARY and BITWISE ops, over broadcast strides."""
    n = math.prod(shape)
    c = C_TYPES[dt]
    if op in DIVMOD:
        family, name = "divmod", f"binary2<{c}, {DIVMOD[op]}>"
    elif op in FLOAT_BINARY:
        family, name = "float_binary", f"fbinary<{c}, {FLOAT_BINARY[op]}>"
    else:
        family, name = "bitwise", f"bitwise<{c}, {BITWISE[op]}>"
    _launch(family, dt, name, n, (out, a, b, *_geometry(shape, (out_st, a_st, b_st))))


def where(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], c: int, c_st: Sequence[int], a: int,
          a_st: Sequence[int], b: int, b_st: Sequence[int]) -> None:
    """out = c ? a : b elementwise (c bool)."""
    n = math.prod(shape)
    _launch("where", dt, f"where<{C_TYPES[dt]}>", n, (out, c, a, b, *_geometry(shape, (out_st, c_st, a_st, b_st))))


def fill(dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], value: float | int | bool) -> None:
    """Every element of the strided `out` = value (converted to `dt`)."""
    n = math.prod(shape)
    integral = isinstance(value, int | bool | np.integer | np.bool_)
    iv = int(value) if integral else 0
    _launch("fill", dt, f"fill<{C_TYPES[dt]}>", n,
            (out, np.float64(0.0 if integral else float(value)), np.int64(iv), np.int32(integral),
             *_geometry(shape, (out_st,))))


def sequence(dt: str, n: int, out: int, *, start: float = 0.0, step: float = 0.0, end: float = 0.0,
             istart: int = 0, istep: int = 0, integral: bool = False, two_sided: bool = False) -> None:
    """out[i] (contiguous, `n` elements) = istart + i * istep (integral), start + i * step (arange), or
    for linspace (two_sided) that from start for the first half and end - (n - 1 - i) * step after."""
    _launch("fill", dt, f"sequence<{C_TYPES[dt]}>", n,
            (out, np.int64(n), np.float64(start), np.float64(step), np.float64(end), np.int64(istart),
             np.int64(istep), np.int32(integral), np.int32(two_sided)))


def copy(src_dt: str, dst_dt: str, shape: Sequence[int], out: int, out_st: Sequence[int], a: int,
         a_st: Sequence[int]) -> None:
    """out = a converted from `src_dt` to `dst_dt`, both strided (contiguous(), to(), casts)."""
    n = math.prod(shape)
    _launch("copy", src_dt, f"copy<{C_TYPES[src_dt]}, {C_TYPES[dst_dt]}>", n,
            (out, a, *_geometry(shape, (out_st, a_st))), dst=dst_dt)


def reduce(op: str, dt: str, out_shape: Sequence[int], out: int, out_st: Sequence[int], idx: int,
           in_st: Sequence[int], red_shape: Sequence[int], red_st: Sequence[int], a: int) -> None:
    """Reduce `a` over the dims `red_shape`/`red_st` into each element of `out` (kept dims `out_shape`,
    input strides `in_st`); max/min also write int64 indices (within the flattened reduced dims) at `idx`;
    "prod" multiplies (its own kernel set)."""
    key = (tuple(out_shape), tuple(out_st), tuple(in_st), tuple(red_shape), tuple(red_st))
    g = _RGEOMETRIES.get(key)
    if g is None:
        g = _reduce_geometry(*key)
        if len(_RGEOMETRIES) >= _GEOMETRIES_MAX:
            _RGEOMETRIES.clear()
        _RGEOMETRIES[key] = g
    c = C_TYPES[dt]
    acc = _acc(dt)
    o = c if op in ("max", "min", "mean") or dt in FLOATS else "long long"
    nout, nred = g[0], g[2 + 3 * MAXD]
    if nout == 0:
        return
    threads = 32  # a power of two (the tree halves it), no wider than the reduced extent needs
    while threads < THREADS and threads < nred:
        threads *= 2
    if op == "prod":
        kernel_set("prod", dt).get(f"reduce_prod<{c}, {acc}, {o}>")(nout, threads, (out, idx, a, *g))
        return
    kernel_set("reduce", dt).get(f"reduce<{c}, {acc}, {o}, {REDUCE[op]}>")(nout, threads, (out, idx, a, *g))


# (out shape, out strides, in strides, reduced shape, reduced strides) -> RGEO_PARAMS (as _GEOMETRIES)
_RGEOMETRIES: dict[tuple, tuple[int, ...]] = {}


def _reduce_geometry(out_shape: Sequence[int], out_st: Sequence[int], in_st: Sequence[int],
                     red_shape: Sequence[int], red_st: Sequence[int]) -> tuple[int, ...]:
    """The RGEO_PARAMS scalars as Python ints: nout, ndim, shape, ost, ist, nred, rdim, rshape, rst."""
    out_shape, (out_st, in_st) = coalesce(out_shape, (out_st, in_st))
    red_shape, (red_st,) = coalesce(red_shape, (red_st,))
    if len(out_shape) > MAXD or len(red_shape) > MAXD:
        raise RuntimeError(f"[strata kernels] tensors of more than {MAXD} dims are not supported")
    g = [0] * (4 + 5 * MAXD)
    g[0], g[1] = math.prod(out_shape), len(out_shape)
    g[2:2 + len(out_shape)] = out_shape
    g[2 + MAXD:2 + MAXD + len(out_st)] = out_st
    g[2 + 2 * MAXD:2 + 2 * MAXD + len(in_st)] = in_st
    b = 2 + 3 * MAXD
    g[b] = math.prod(red_shape)
    g[b + 1] = len(red_shape)
    g[b + 2:b + 2 + len(red_shape)] = red_shape
    g[b + 2 + MAXD:b + 2 + MAXD + len(red_st)] = red_st
    return tuple(int(v) for v in g)
