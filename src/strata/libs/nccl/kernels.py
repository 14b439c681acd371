"""The collectives' device code: CUDA C++ kernels that combine or copy a chunk, instantiated for every
NCCL data type. A ring step is a launch or a few on each rank's device; operands on a neighbour device
are read through unified addresses over the link (peer access), as NCCL's P2P transport reads a
peer's buffer.

A chunk's whole tiles (TILE_LANES threads x REDUCE_K elements, 8 MiB of float32) run the tile kernels:
one per operation, each thread combining REDUCE_K elements TILE_LANES apart, so every load and store
of a tile row is one contiguous slice and a thread's address arithmetic is paid once for all of them
(what decides the emulator's cost per element); copies move 8-byte words whatever the type. What is
left runs the 16-byte vector kernel (`nccl_apply_v`) and the scalar one (`nccl_apply`).

NVLS's sums add up to 8 sources in one launch (`sum_many`: the same tiles with one load per source, then a
bounds-checked kernel for the rest), in the order a chain of two-input launches would.

Half and bfloat16 combine in float and round once, as NCCL's reductions do; integers wrap.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.libs.common import KernelSet
from strata.libs.nccl.types import DataType, NcclError

COPY = 5  # `op` value: dst = b (0..3: sum, prod, max, min; 4: sum then divide, ncclAvg's last step)
AVG_FINAL = 4
BLOCK = 256

SOURCE = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T> struct Acc {
    typedef T type;
    static __device__ __forceinline__ T in(T x) { return x; }
    static __device__ __forceinline__ T out(T x) { return x; }
};
template <> struct Acc<__half> {
    typedef float type;
    static __device__ __forceinline__ float in(__half x) { return __half2float(x); }
    static __device__ __forceinline__ __half out(float x) { return __float2half(x); }
};
template <> struct Acc<__nv_bfloat16> {
    typedef float type;
    static __device__ __forceinline__ float in(__nv_bfloat16 x) { return __bfloat162float(x); }
    static __device__ __forceinline__ __nv_bfloat16 out(float x) { return __float2bfloat16(x); }
};

// OP (a compile-time constant, so the element loop has no branches): 0 sum, 1 prod, 2 max, 3 min,
// 4 sum then divide by `divisor` (ncclAvg's last step).
template <int OP, typename T>
__device__ __forceinline__ T combine(T a, T b, int divisor) {
    typedef typename Acc<T>::type W;
    W x = Acc<T>::in(a), y = Acc<T>::in(b), r;
    if (OP == 1) r = x * y;
    else if (OP == 2) r = x > y ? x : y;
    else if (OP == 3) r = x < y ? x : y;
    else r = x + y;
    if (OP == 4) r = r / (W)divisor;
    return Acc<T>::out(r);
}

template <int OP, typename T>
__device__ __forceinline__ void scalar_step(T* dst, const T* a, const T* b, unsigned long long i, int divisor) {
    dst[i] = combine<OP>(a[i], b[i], divisor);
}

// dst[i] = a[i] (op) b[i] for op 0..4, dst[i] = b[i] for op 5 (COPY).
template <typename T>
__global__ void nccl_apply(T* dst, const T* a, const T* b, unsigned long long n, int op, int divisor) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    switch (op) {
        case 0: scalar_step<0>(dst, a, b, i, divisor); break;
        case 1: scalar_step<1>(dst, a, b, i, divisor); break;
        case 2: scalar_step<2>(dst, a, b, i, divisor); break;
        case 3: scalar_step<3>(dst, a, b, i, divisor); break;
        case 4: scalar_step<4>(dst, a, b, i, divisor); break;
        default: dst[i] = b[i];
    }
}

// One 16-byte vector of each operand: CUDA's vector types where one fits the element type (a single
// vector load of typed lanes), else the 16 bytes as a union of elements.
template <int OP, typename T> struct VecOps {
    static __device__ __forceinline__ void run(T* dst, const T* a, const T* b, unsigned long long i, int divisor) {
        union Lanes { uint4 v; T e[16 / sizeof(T)]; } ua, ub;
        ua.v = reinterpret_cast<const uint4*>(a)[i];
        ub.v = reinterpret_cast<const uint4*>(b)[i];
#pragma unroll
        for (int k = 0; k < (int)(16 / sizeof(T)); ++k) ua.e[k] = combine<OP>(ua.e[k], ub.e[k], divisor);
        reinterpret_cast<uint4*>(dst)[i] = ua.v;
    }
};
#define STRATA_VEC4(T, V) template <int OP> struct VecOps<OP, T> { \
    static __device__ __forceinline__ void run(T* dst, const T* a, const T* b, unsigned long long i, int divisor) { \
        V x = reinterpret_cast<const V*>(a)[i], y = reinterpret_cast<const V*>(b)[i]; \
        x.x = combine<OP>(x.x, y.x, divisor); x.y = combine<OP>(x.y, y.y, divisor); \
        x.z = combine<OP>(x.z, y.z, divisor); x.w = combine<OP>(x.w, y.w, divisor); \
        reinterpret_cast<V*>(dst)[i] = x; } };
#define STRATA_VEC2(T, V) template <int OP> struct VecOps<OP, T> { \
    static __device__ __forceinline__ void run(T* dst, const T* a, const T* b, unsigned long long i, int divisor) { \
        V x = reinterpret_cast<const V*>(a)[i], y = reinterpret_cast<const V*>(b)[i]; \
        x.x = combine<OP>(x.x, y.x, divisor); x.y = combine<OP>(x.y, y.y, divisor); \
        reinterpret_cast<V*>(dst)[i] = x; } };
STRATA_VEC4(float, float4)
STRATA_VEC4(int, int4)
STRATA_VEC4(unsigned int, uint4)
STRATA_VEC2(double, double2)
STRATA_VEC2(long long, longlong2)
STRATA_VEC2(unsigned long long, ulonglong2)

// The same on 16-byte vectors (all three pointers 16-byte aligned, `nvec` vectors): one thread moves
// 16 bytes with one vector load per operand, as NCCL's kernels do.
template <typename T>
__global__ void nccl_apply_v(T* dst, const T* a, const T* b, unsigned long long nvec, int op, int divisor) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nvec) return;
    switch (op) {
        case 0: VecOps<0, T>::run(dst, a, b, i, divisor); break;
        case 1: VecOps<1, T>::run(dst, a, b, i, divisor); break;
        case 2: VecOps<2, T>::run(dst, a, b, i, divisor); break;
        case 3: VecOps<3, T>::run(dst, a, b, i, divisor); break;
        case 4: VecOps<4, T>::run(dst, a, b, i, divisor); break;
        default: reinterpret_cast<uint4*>(dst)[i] = reinterpret_cast<const uint4*>(b)[i];
    }
}

// Whole tiles: the grid is (TILE_LANES / 256, tiles) blocks of 256 threads, and thread t of tile
// blockIdx.y combines elements t, t + TILE_LANES, t + 2 TILE_LANES, ... (K of them) of that tile.
// Consecutive threads touch consecutive elements (coalesced); every element after a thread's first is
// at a constant offset from it, so its address work is done once for K elements. OP is a template
// parameter (a kernel per operation, no switch); the grid is exact, so there is no bounds check.
template <typename T, int OP, int K>
__global__ void __launch_bounds__(256) nccl_apply_tiles(T* dst, const T* a, const T* b, int divisor) {
    const unsigned long long at = (unsigned long long)blockIdx.y * (TILE_LANES * K) + blockIdx.x * 256u + threadIdx.x;
    dst += at; a += at; b += at;
#pragma unroll
    for (int k = 0; k < K; ++k) dst[k * TILE_LANES] = combine<OP>(a[k * TILE_LANES], b[k * TILE_LANES], divisor);
}
"""

# The tile kernels' shape: a tile is TILE_LANES threads each doing K elements (8-byte words for copies).
# TILE_LANES is the engine's default chunk (STRATA_CHUNK_LANES), so a tile runs as one chunk whose lanes
# address consecutive elements: each load and store is one slice of memory. Each kind of tile kernel
# comes in a few sizes K, biggest first: whole big tiles, then smaller ones for what is left of a chunk,
# then the vector and scalar kernels for the rest. A big K pays a thread's address work (about ten
# instructions) over more elements; a small one leaves less to the slower vector kernel.
TILE_LANES = 1 << 16
SUM_K = (128, 16, 4)  # inline-PTX sums (32, 4 and 1 MiB tiles of float32): two registers whatever K
COPY_K = (64, 8, 2)  # inline-PTX copies of 8-byte words (32, 4 and 1 MiB tiles)
CXX_K = (32, 4)  # C++ tiles: every element has registers of its own (host memory grows with K)
WORD = 8
_TILE_DEFINES = f"#define TILE_LANES {TILE_LANES}ull\n"

# Sums of the types PTX adds in one instruction, and copies, as inline PTX (as NCCL's primitives use
# inline PTX for their loads and stores): a tile's elements go through the same two registers, where
# compiled C++ gives each element registers of its own (every virtual register is an array of
# TILE_LANES lanes in the emulator: reused ones stay in the host's cache). On AMD devices (clang) the
# same kernels are the C++ loop.
_PTX_ADD = {DataType.ncclFloat32: "f32", DataType.ncclFloat64: "f64", DataType.ncclInt32: "s32",
            DataType.ncclUint32: "u32", DataType.ncclInt64: "s64", DataType.ncclUint64: "u64"}


def _tile_asm(step: str, k: int, size: int) -> str:
    """The inline PTX of a tile: `step` (with {o}, the byte offset of element k) for each of k elements."""
    return "".join(step.format(o=i * TILE_LANES * size) + "\\n" for i in range(k))


def _asm_kernel(name: str, params: str, regs: str, body: str, loop: str, operands: str, k: int) -> str:
    return f"""
extern "C" __global__ void __launch_bounds__(256) {name}_{k}({params}) {{
    const unsigned long long at = (unsigned long long)blockIdx.y * (TILE_LANES * {k}) + blockIdx.x * 256u + threadIdx.x;
#ifdef __AMDGCN__
    for (int k = 0; k < {k}; ++k) {{ const unsigned long long i = at + k * TILE_LANES; {loop} }}
#else
    asm volatile("{{ .reg {regs};\\n{body}}}" :: {operands} : "memory");
#endif
}}
"""


def _sum_tiles_source(dt: DataType) -> str:
    t, c = _PTX_ADD[dt], dt.ctype
    return "".join(_asm_kernel(
        "nccl_sum_tiles", f"{c}* dst, const {c}* a, const {c}* b", f".{t} x, y",
        _tile_asm(f"ld.global.{t} x, [%1+{{o}}]; ld.global.{t} y, [%2+{{o}}]; add.{t} x, x, y; "
                  f"st.global.{t} [%0+{{o}}], x;", k, dt.size),
        "dst[i] = a[i] + b[i];", '"l"(dst + at), "l"(a + at), "l"(b + at)', k) for k in SUM_K)


# Copies move bits whatever the type: 8-byte words (one type-independent module).
COPY_SOURCE = _TILE_DEFINES + "".join(_asm_kernel(
    "nccl_copy_tiles", "unsigned long long* dst, const unsigned long long* src", ".u64 w",
    _tile_asm("ld.global.u64 w, [%1+{o}]; st.global.u64 [%0+{o}], w;", k, WORD), "dst[i] = src[i];",
    '"l"(dst + at), "l"(src + at)', k) for k in COPY_K)
SOURCE = _TILE_DEFINES + SOURCE

NAMES = {dt: f"nccl_apply<{dt.ctype}>" for dt in DataType}
VECTOR_NAMES = {dt: f"nccl_apply_v<{dt.ctype}>" for dt in DataType}
_CXX_TILES = {(dt, op, k): f"nccl_apply_tiles<{dt.ctype}, {op}, {k}>" for dt in DataType for op in range(COPY)
              for k in CXX_K if not (op == 0 and dt in _PTX_ADD)}
# One module per data type: compiled on first use of that type, and on an AMD device a type whose code
# the CDNA engine cannot run yet does not stop the others from loading.
KERNELS = {dt: KernelSet(f"nccl_{dt.name}", SOURCE + (_sum_tiles_source(dt) if dt in _PTX_ADD else ""),
                         name_expressions=(NAMES[dt], VECTOR_NAMES[dt],
                                           *(name for (d, _, _), name in _CXX_TILES.items() if d == dt)))
           for dt in DataType}
COPY_KERNELS = KernelSet("nccl_copy", COPY_SOURCE)
VECTOR_BYTES = 16

# Many-input sums (NVLS's reduction, where the switch adds every rank's value of an element in one
# multimem.ld_reduce): one launch adds 3..MAX_INPUTS sources left to right, so each element is loaded once
# per source and stored once, where a chain of two-input launches stores and reloads every partial sum.
# The order is the chain's: ((a0 + a1) + a2) + ..., so results are bit for bit the same. A module per
# type, compiled only when a collective first needs it. MAX_INPUTS: the destination and 8 sources fit a
# kernel's parameters and the inline PTX's operands comfortably; more sources chain launches.
MAX_INPUTS = 8
MANY_K = (32, 4)  # 8 and 1 MiB tiles of float32: a 32 MiB shard is 4 chunks, which the native executor's
# two threads share

MANY_SOURCE = r"""
// The rest of a many-input sum (less than a tile): one element per thread, the M sources added left to
// right. M is a compile-time constant, so the unused pointers are never read.
template <typename T, int M>
__global__ void nccl_sum_many(T* dst, const T* a0, const T* a1, const T* a2, const T* a3, const T* a4,
                              const T* a5, const T* a6, const T* a7, unsigned long long n) {
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T x = a0[i] + a1[i];
    if (M > 2) x = x + a2[i];
    if (M > 3) x = x + a3[i];
    if (M > 4) x = x + a4[i];
    if (M > 5) x = x + a5[i];
    if (M > 6) x = x + a6[i];
    if (M > 7) x = x + a7[i];
    dst[i] = x;
}
"""


def _sum_many_source(dt: DataType) -> str:
    """The many-input tile kernels of `dt`: nccl_sum<M>_tiles_<K>(dst, a0, ..., a<M-1>), inline PTX whose
    elements go through two registers (as `_sum_tiles_source`'s)."""
    t, c = _PTX_ADD[dt], dt.ctype
    out = []
    for m in range(3, MAX_INPUTS + 1):
        step = (f"ld.global.{t} x, [%1+{{o}}]; "
                + "".join(f"ld.global.{t} y, [%{j + 1}+{{o}}]; add.{t} x, x, y; " for j in range(1, m))
                + f"st.global.{t} [%0+{{o}}], x;")
        params = f"{c}* dst, " + ", ".join(f"const {c}* a{j}" for j in range(m))
        loop = "dst[i] = " + " + ".join(f"a{j}[i]" for j in range(m)) + ";"
        operands = '"l"(dst + at), ' + ", ".join(f'"l"(a{j} + at)' for j in range(m))
        out += [_asm_kernel(f"nccl_sum{m}_tiles", params, f".{t} x, y", _tile_asm(step, k, dt.size), loop,
                            operands, k) for k in MANY_K]
    return "".join(out)


MANY_NAMES = {(dt, m): f"nccl_sum_many<{dt.ctype}, {m}>" for dt in _PTX_ADD for m in range(3, MAX_INPUTS + 1)}
MANY_KERNELS = {dt: KernelSet(f"nccl_sum_many_{dt.name}", _TILE_DEFINES + MANY_SOURCE + _sum_many_source(dt),
                              name_expressions=tuple(name for (d, _), name in MANY_NAMES.items() if d == dt))
                for dt in _PTX_ADD}


def sums_many(dt: DataType) -> bool:
    """Whether `sum_many` adds more than two sources of `dt` in one launch (the types PTX adds in one
    instruction; other types and operations chain two-input launches)."""
    return dt in MANY_KERNELS


def sum_many(dt: DataType, dst: int, srcs: tuple[int, ...], n: int, stream: Any) -> int:
    """Queue dst = srcs[0] + srcs[1] + ... + srcs[-1], added left to right, over `n` elements on `stream`
    (2..MAX_INPUTS sources of a type `sums_many` takes; dst may be one of them: each element is read before
    it is written): the tile kernels for whole tiles, the bounds-checked one for the rest. Returns the
    number of launches."""
    m = len(srcs)
    if m == 2:
        return apply(dt, dst, srcs[0], srcs[1], n, 0, 0, stream)
    if not 2 <= m <= MAX_INPUTS or not sums_many(dt):
        raise NcclError("ncclInternalError", f"sum_many takes 2..{MAX_INPUTS} sources of "
                        f"{sorted(d.name for d in MANY_KERNELS)}, got {m} of {dt.name}")
    ks = MANY_KERNELS[dt]
    launches = 0
    for k in MANY_K:
        tile = TILE_LANES * k * dt.size
        tiles = n * dt.size // tile
        if tiles:
            ks.get(f"nccl_sum{m}_tiles_{k}")((TILE_LANES // BLOCK, tiles), BLOCK, (dst, *srcs), stream=stream)
            launches += 1
            done = tiles * tile
            dst, srcs, n = dst + done, tuple(p + done for p in srcs), n - done // dt.size
    if n:
        unused = (srcs[0],) * (MAX_INPUTS - m)  # never read (M is the kernel's constant)
        ks.get(MANY_NAMES[dt, m])((n + BLOCK - 1) // BLOCK, BLOCK, (dst, *srcs, *unused, np.uint64(n)), stream=stream)
        launches += 1
    return launches


def _tile_kernels(dt: DataType, op: int) -> list[tuple[Any, int, bool]]:
    """(kernel, bytes per tile, takes a divisor) of each tile size for `op` on `dt`, the biggest first."""
    if op == COPY:
        return [(COPY_KERNELS.get(f"nccl_copy_tiles_{k}"), TILE_LANES * k * WORD, False) for k in COPY_K]
    if op == 0 and dt in _PTX_ADD:
        return [(KERNELS[dt].get(f"nccl_sum_tiles_{k}"), TILE_LANES * k * dt.size, False) for k in SUM_K]
    return [(KERNELS[dt].get(_CXX_TILES[dt, op, k]), TILE_LANES * k * dt.size, True) for k in CXX_K]


def apply(dt: DataType, dst: int, a: int, b: int, n: int, op: int, divisor: int, stream: Any) -> int:
    """Queue dst = a (op) b (or the copy dst = b) over `n` elements on `stream`: the tile kernels for whole
    tiles (copies as 8-byte words), the 16-byte vector kernel for the aligned rest, the scalar one for
    what remains. Returns the number of launches."""
    if divisor > 1:  # the last step of an average: sum, then divide
        op = AVG_FINAL
    elif op == AVG_FINAL:  # nothing to divide by
        op = 0
    launches = 0
    a = a or b if op != COPY else a
    if op != COPY or (dst % WORD == 0 and b % WORD == 0):
        for kernel, tile, divides in _tile_kernels(dt, op):
            tiles = n * dt.size // tile
            if not tiles:
                continue
            args = (dst, b) if op == COPY else (dst, a, b, np.int32(divisor)) if divides else (dst, a, b)
            kernel((TILE_LANES // BLOCK, tiles), BLOCK, args, stream=stream)
            launches += 1
            done = tiles * tile
            dst, a, b, n = dst + done, (a + done) if a else 0, b + done, n - done // dt.size
    nvec = 0
    if all(p % VECTOR_BYTES == 0 for p in (dst, a, b) if p) and n * dt.size >= VECTOR_BYTES:
        nvec = n * dt.size // VECTOR_BYTES
        KERNELS[dt].get(VECTOR_NAMES[dt])((nvec + BLOCK - 1) // BLOCK, BLOCK, (dst, a or b, b, np.uint64(nvec),
                                                                           np.int32(op), np.int32(divisor)),
                                      stream=stream)
        launches += 1
    done = nvec * VECTOR_BYTES // dt.size
    rest = n - done
    if rest:
        off = done * dt.size
        KERNELS[dt].get(NAMES[dt])((rest + BLOCK - 1) // BLOCK, BLOCK, (dst + off, (a + off) if a else b + off, b + off,
                                                                    np.uint64(rest), np.int32(op), np.int32(divisor)),
                               stream=stream)
        launches += 1
    return launches
