# Conformance: state spaces and addressing: local arrays with dynamic indexing (ld/st.local),
# __constant__ data with static initialisers (ld.const), __device__ globals with initialisers that
# persist across launches of one module, generic pointers into shared and global memory (cvta,
# isspacep via __isShared/__isGlobal/__isLocal), cache-hinted loads/stores (__ldg, __ldcg, __ldcs,
# __ldlu, __ldcv, __stcg, __stcs, __stwt, __stwb) and 64-bit pointer arithmetic.
"""Memory-space kernels against NumPy oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import assert_exact, both_compilers, kernel, rng, run

LOCAL = kernel(
    "memory.local_array_dynamic_index",
    r"""
extern "C" __global__ void local_perm(int n, const int* in, const int* idx, int* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int buf[32];                         // indexed by data: must live in local memory
    for (int k = 0; k < 32; ++k) buf[k] = in[t] * 31 + k * k;
    int acc = 0;
    for (int k = 0; k < 32; ++k) {
        int j = idx[(t + k) % n] & 31;
        buf[j] += k;
        acc ^= buf[(j * 7 + t) & 31];
    }
    double dbuf[8];
    for (int k = 0; k < 8; ++k) dbuf[(k * 3 + t) & 7] = (double)k * 0.5;
    out[2 * t] = acc;
    out[2 * t + 1] = (int)(dbuf[idx[t] & 7] * 4.0);
}
""",
)


@both_compilers
def test_local_array_dynamic_index(compiler: str) -> None:
    n = 200
    r = rng(100)
    inp = r.integers(-1000, 1000, n).astype(np.int32)
    idx = r.integers(0, 1 << 20, n).astype(np.int32)
    (_, _, out) = run(LOCAL, compiler, "local_perm", 1, 256, np.int32(n), inp, idx, np.zeros(2 * n, np.int32))
    exp = []
    for t in range(n):
        buf = [int(inp[t]) * 31 + k * k for k in range(32)]
        acc = 0
        for k in range(32):
            j = int(idx[(t + k) % n]) & 31
            buf[j] += k
            acc ^= buf[(j * 7 + t) & 31]
        dbuf = [0.0] * 8
        for k in range(8):
            dbuf[(k * 3 + t) & 7] = k * 0.5
        exp += [acc, int(dbuf[int(idx[t]) & 7] * 4.0)]
    assert_exact(out, np.array(exp, np.int32))


CONST_GLOBALS = kernel(
    "memory.constant_and_device_globals",
    r"""
__constant__ float coeff[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__constant__ int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__constant__ double dconst = 0.125;
__device__ int counter = 100;                 // initialised global, persists between launches
__device__ float gscale[2] = {0.5f, -1.5f};
__device__ unsigned long long big = 0x123456789abcdefULL;

extern "C" __global__ void poly(int n, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    // Horner with coefficients from constant memory, index from a constant table (dynamic index).
    float acc = coeff[3];
    for (int k = 2; k >= 0; --k) acc = acc * v + coeff[k];
    y[i] = acc * gscale[i & 1] + (float)table[i & 7] + (float)dconst;
}
extern "C" __global__ void bump() {
    atomicAdd(&counter, 1);
    if (blockIdx.x == 0 && threadIdx.x == 0) big += 1;
}
extern "C" __global__ void read_globals(int* out, unsigned long long* out64) {
    out[0] = counter;
    out64[0] = big;
}
""",
)


@both_compilers
def test_constant_and_device_globals(compiler: str) -> None:
    n = 300
    x = ((np.arange(n) % 41 - 20) / 4).astype(np.float32)  # quarters: every Horner step is exact
    (_, y) = run(CONST_GLOBALS, compiler, "poly", 2, 256, np.int32(n), x, np.zeros(n, np.float32))
    xd = x.astype(np.float64)
    horner = ((4 * xd + 3) * xd + 2) * xd + 1
    table = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    scale = np.array([0.5, -1.5])
    exp = horner * scale[np.arange(n) & 1] + table[np.arange(n) & 7] + 0.125
    assert_exact(y, exp.astype(np.float32))  # all intermediate values are exact in float32
    # Global state lives in the module: two launches of bump() are both visible to read_globals().
    o, o64 = run(CONST_GLOBALS, compiler, "read_globals", 1, 1, np.zeros(1, np.int32), np.zeros(1, np.uint64))
    start, start64 = int(o[0]), int(o64[0])
    run(CONST_GLOBALS, compiler, "bump", 3, 64)
    run(CONST_GLOBALS, compiler, "bump", 1, 32)
    o, o64 = run(CONST_GLOBALS, compiler, "read_globals", 1, 1, np.zeros(1, np.int32), np.zeros(1, np.uint64))
    assert int(o[0]) == start + 224
    assert int(o64[0]) == start64 + 2
    assert (start - 100) % 224 == 0 and start64 >= 0x123456789ABCDEF  # initialisers were applied


GENERIC = kernel(
    "memory.generic_pointers_isspacep",
    r"""
__device__ __noinline__ int sum3(const int* p) { return p[0] + p[1] + p[2]; }   // generic ld
__device__ __noinline__ void scale(int* p, int k) { p[0] *= k; }                // generic st
__device__ __noinline__ unsigned where(const void* p) {
    return (__isShared(p) ? 1u : 0u) | (__isGlobal(p) ? 2u : 0u) | (__isLocal(p) ? 4u : 0u)
         | (__isConstant(p) ? 8u : 0u);
}
__constant__ int cdata[4] = {7, 8, 9, 10};
extern "C" __global__ void generic(const int* g, int* out, unsigned* kinds) {
    __shared__ int s[64 + 2];
    int t = threadIdx.x;
    s[t] = g[t] * 10;
    if (t < 2) s[64 + t] = 0;
    __syncthreads();
    int loc[4] = {t, t + 1, t + 2, (int)g[t]};
    volatile int k = t % 4;                   // keep loc[] addressable in local memory
    int fromShared = sum3(&s[t]);
    int fromGlobal = sum3(&g[t]);
    int fromLocal = sum3(&loc[k % 2]);
    int buf = g[t];
    scale(&buf, 3);
    out[4 * t + 0] = fromShared;
    out[4 * t + 1] = fromGlobal;
    out[4 * t + 2] = fromLocal;
    out[4 * t + 3] = buf;
    if (t == 0) {
        kinds[0] = where(&s[1]);
        kinds[1] = where(g);
        kinds[2] = where(loc);
        kinds[3] = where(cdata);
    }
}
""",
)


@both_compilers
def test_generic_pointers_isspacep(compiler: str) -> None:
    g = np.arange(66, dtype=np.int32) * 3 - 50
    (_, out, kinds) = run(
        GENERIC, compiler, "generic", 1, 64, g, np.zeros(4 * 64, np.int32), np.zeros(4, np.uint32)
    )
    s = np.concatenate([g[:64] * 10, [0, 0]])
    exp = []
    for t in range(64):
        loc = [t, t + 1, t + 2, int(g[t])]
        k = (t % 4) % 2
        exp += [
            int(s[t] + s[t + 1] + s[t + 2]),
            int(g[t] + g[t + 1] + g[t + 2]),
            sum(loc[k : k + 3]),
            int(g[t]) * 3,
        ]
    assert_exact(out, np.array(exp, np.int32))
    # bits: 1 shared, 2 global, 4 local, 8 const. Shared and local windows are exact; whether a
    # __constant__ address also counts as global (constant banks live in device memory) and whether
    # isspacep.const can be true for cudaMalloc memory is not pinned down here.
    assert int(kinds[0]) == 1
    assert int(kinds[2]) == 4
    assert int(kinds[1]) & 7 == 2
    assert int(kinds[3]) & 5 == 0 and int(kinds[3]) & 10 != 0


CACHE_HINTS = kernel(
    "memory.cache_hint_loads_stores",
    r"""
extern "C" __global__ void hints(int n, const float* a, const int* b, const double* c, float* o1, int* o2,
                                 double* o3, float4* o4, const float4* a4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = __ldg(&a[i]) + __ldcg(&a[(i + 1) % n]) + __ldca(&a[(i + 2) % n]);   // ld.global.nc / .cg / .ca
    int y = __ldcs(&b[i]) + __ldlu(&b[(i + 3) % n]) + __ldcv(&b[(i + 5) % n]);   // .cs / .lu / .cv
    double z = __ldg(&c[i]);
    __stcg(&o1[i], x);                  // st.global.cg
    __stcs(&o2[i], y);                  // st.global.cs
    __stwt(&o3[i], z * 2.0);            // st.global.wt
    if (i < n / 4) __stwb(&o4[i], __ldg(&a4[i]));   // vector ld.global.nc.v4.f32 / st.global.wb.v4
}
""",
)


@both_compilers
def test_cache_hint_loads_stores(compiler: str) -> None:
    n = 256
    r = rng(101)
    a = r.integers(-100, 100, n).astype(np.float32)
    b = r.integers(-1000, 1000, n).astype(np.int32)
    c = r.standard_normal(n)
    outs = run(
        CACHE_HINTS,
        compiler,
        "hints",
        1,
        256,
        np.int32(n),
        a,
        b,
        c,
        np.zeros(n, np.float32),
        np.zeros(n, np.int32),
        np.zeros(n),
        np.zeros(n, np.float32),
        a,
    )
    i = np.arange(n)
    assert_exact(outs[3], a + a[(i + 1) % n] + a[(i + 2) % n])
    assert_exact(outs[4], b + b[(i + 3) % n] + b[(i + 5) % n])
    assert_exact(outs[5], c * 2)
    assert_exact(outs[6], a)


POINTERS = kernel(
    "memory.pointer_arithmetic_64bit",
    r"""
struct Node { int value; int next; double weight; };   // 16-byte stride, mixed-width fields
extern "C" __global__ void walk(int n, const Node* nodes, const long long* offsets, double* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    // Follow a linked list stored as indices, 5 hops, accumulating weights.
    int cur = t;
    double acc = 0.0;
    for (int h = 0; h < 5; ++h) { acc += nodes[cur].weight * nodes[cur].value; cur = nodes[cur].next; }
    // Byte offsets applied to a char pointer, then reinterpreted: exercises 64-bit address adds.
    const char* base = (const char*)nodes;
    const Node* m = (const Node*)(base + offsets[t]);
    out[t] = acc + m->weight;
}
""",
)


@both_compilers
def test_pointer_arithmetic_64bit(compiler: str) -> None:
    n = 100
    r = rng(102)
    dt = np.dtype([("value", np.int32), ("next", np.int32), ("weight", np.float64)])
    nodes = np.zeros(n, dt)
    nodes["value"] = r.integers(-5, 5, n)
    nodes["next"] = r.permutation(n)
    nodes["weight"] = r.integers(-8, 8, n) * 0.25
    offsets = (r.integers(0, n, n) * 16).astype(np.int64)
    raw = nodes.view(np.uint8)
    outs = run(POINTERS, compiler, "walk", 1, 128, np.int32(n), raw, offsets, np.zeros(n))
    exp = np.zeros(n)
    for t in range(n):
        cur, acc = t, 0.0
        for _ in range(5):
            acc += nodes["weight"][cur] * nodes["value"][cur]
            cur = nodes["next"][cur]
        exp[t] = acc + nodes["weight"][offsets[t] // 16]
    assert_exact(outs[2], exp)


ZERO_INIT = kernel(
    "memory.zero_initialised_globals",
    r"""
__device__ unsigned int zeroed;          // no initialiser: C++ static storage starts as zero
__device__ int zarr[8];
__device__ double zd;
extern "C" __global__ void read_zero(unsigned* out, double* dout) {
    out[0] = zeroed;
    for (int k = 0; k < 8; ++k) out[1 + k] = (unsigned)zarr[k];
    dout[0] = zd;
}
""",
)


@both_compilers
def test_zero_initialised_globals(compiler: str) -> None:
    import strata.cuda as cuda

    # Dirty device memory first, so a module that reuses freed memory without zeroing it shows.
    junk = [cuda.to_device(np.full(4096, 0x7F7F7F7F, np.int32)) for _ in range(16)]
    for j in junk:
        j.free()
    (out, dout) = run(ZERO_INIT, compiler, "read_zero", 1, 1, np.full(9, 5, np.uint32), np.ones(1))
    assert_exact(out, np.zeros(9, np.uint32))
    assert_exact(dout, np.zeros(1))
