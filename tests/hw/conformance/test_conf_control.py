# Conformance: control flow: nested divergent if/else, per-thread loop trip counts with break/
# continue, dense switch (jump tables), device calls inside divergent code, early return before a
# barrier, __noinline__ calls with many parameters and structs by value, recursion (direct and
# mutual), indirect calls through a __device__ function-pointer table, and reconvergence before
# warp collectives.
"""Control-flow kernels against pure-Python oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import assert_exact, both_compilers, kernel, rng, run

DIVERGE = kernel(
    "control.divergence_loops_switch",
    r"""
__device__ __noinline__ int collatz_steps(unsigned v) {
    int s = 0;
    while (v != 1u && s < 500) { v = (v & 1u) ? 3u * v + 1u : v / 2u; ++s; }
    return s;
}
extern "C" __global__ void diverge(int n, const int* in, int* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int v = in[t];
    int r = 0;
    if (v % 2 == 0) {
        if (v % 4 == 0) r = v / 4;
        else r = -v;
    } else if (v % 3 == 0) {
        r = collatz_steps((unsigned)v);        // call inside a divergent branch
    } else {
        for (int k = 0; k < (v & 15); ++k) {   // trip count differs per thread
            if (k == 7) break;
            if (k & 1) continue;
            r += k * v;
        }
    }
    switch (v & 7) {                           // dense switch
        case 0: r += 1; break;
        case 1: r += 10; break;
        case 2: r += 100;                      // falls through
        case 3: r += 1000; break;
        case 4: r ^= 5; break;
        case 5: r -= 3; break;
        case 6: r *= 2; break;
        default: break;
    }
    int w = 0;
    do { w += v & 3; v >>= 2; } while (v != 0);   // data-dependent do/while
    out[t] = r * 64 + w;
}
""",
)


def _collatz(v: int) -> int:
    s = 0
    while v != 1 and s < 500:
        v = 3 * v + 1 if v & 1 else v // 2
        v &= 0xFFFFFFFF
        s += 1
    return s


def _diverge(v: int) -> int:
    r = 0
    if v % 2 == 0:
        r = v // 4 if v % 4 == 0 else -v
    elif v % 3 == 0:
        r = _collatz(v)
    else:
        for k in range(v & 15):
            if k == 7:
                break
            if k & 1:
                continue
            r += k * v
    c = v & 7
    if c == 0:
        r += 1
    elif c == 1:
        r += 10
    elif c == 2:
        r += 1100
    elif c == 3:
        r += 1000
    elif c == 4:
        r ^= 5
    elif c == 5:
        r -= 3
    elif c == 6:
        r *= 2
    w = 0
    while True:
        w += v & 3
        v >>= 2
        if v == 0:
            break
    return ((r * 64 + w) + 2**31) % 2**32 - 2**31


@both_compilers
def test_divergence_loops_switch(compiler: str) -> None:
    n = 600
    v = rng(110).integers(1, 100000, n).astype(np.int32)
    (_, out) = run(DIVERGE, compiler, "diverge", 3, 256, np.int32(n), v, np.zeros(n, np.int32))
    assert_exact(out, np.array([_diverge(int(x)) for x in v], np.int32))


EARLY_EXIT = kernel(
    "control.early_return_before_barrier",
    r"""
extern "C" __global__ void early(int n, const int* in, int* out) {
    __shared__ int s[128];
    int t = threadIdx.x;
    if (t >= n) return;            // the tail of the block (mid-warp) leaves before the barrier
    s[t] = in[t] * 2;
    // sm_70+: bar.sync completes once every NON-EXITED thread of the block arrives (CUDA Programming
    // Guide, Independent Thread Scheduling), so the early exits above must not hold it up.
    __syncthreads();
    int acc = s[n - 1 - t];
    for (int k = 0; k < 3; ++k) {
        __syncthreads();
        s[t] = acc + k;
        __syncthreads();
        acc += s[(t + 1) % n];
    }
    out[t] = acc;
}
""",
)


@both_compilers
def test_early_return_before_barrier(compiler: str) -> None:
    n = 100
    x = rng(111).integers(-1000, 1000, 128).astype(np.int32)
    (_, out) = run(EARLY_EXIT, compiler, "early", 1, 128, np.int32(n), x, np.full(128, -7, np.int32))
    acc = (x[:n] * 2)[::-1].astype(np.int64)
    for k in range(3):
        s = acc + k
        acc = acc + np.roll(s, -1)
    exp = np.full(128, -7, np.int32)
    exp[:n] = acc.astype(np.int32)
    assert_exact(out, exp)


CALLS = kernel(
    "control.calls_params_structs_recursion",
    r"""
struct Vec3 { float x, y, z; int tag; };
struct Big { double d[3]; long long k; char c; };

__device__ __noinline__ Vec3 combine(Vec3 a, Vec3 b, float s) {      // struct params and return
    Vec3 r; r.x = a.x + s * b.x; r.y = a.y - b.y; r.z = a.z * b.z; r.tag = a.tag ^ b.tag; return r;
}
__device__ __noinline__ Big make_big(int i) {
    Big b;  b.d[0] = i;  b.d[1] = i * 0.5;
    b.d[2] = -i;  b.k = (long long)i << 35;  b.c = (char)(i & 0x7f);  return b;
}
__device__ __noinline__ long long many(int a, long long b, float c, double d, char e, short f, unsigned g,
                                       int h, double i, float j, int k, long long l, Big big) {
    return a + b + (long long)c + (long long)d + e + f + g + h + (long long)i + (long long)j + k + l
         + (long long)big.d[1] * 2 + big.k + big.c;
}
__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ bool is_odd(unsigned n);
__device__ __noinline__ bool is_even(unsigned n) { return n == 0 ? true : is_odd(n - 1); }
__device__ __noinline__ bool is_odd(unsigned n) { return n == 0 ? false : is_even(n - 1); }
__device__ __noinline__ int sum_down(int* buf, int n) {    // recursion touching a local array
    if (n == 0) return buf[0];
    buf[n] += buf[n - 1];
    return buf[n] + sum_down(buf, n - 1);
}

extern "C" __global__ void calls(int n, const float* f, long long* out, float* vout) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    Vec3 a = {f[t], 2.0f, 3.0f, t}, b = {1.0f, f[t], -1.0f, 0x55};
    Vec3 c = combine(a, b, 0.5f);
    vout[4 * t + 0] = c.x; vout[4 * t + 1] = c.y; vout[4 * t + 2] = c.z; vout[4 * t + 3] = (float)c.tag;
    Big big = make_big(t);
    out[4 * t + 0] = many(t, -3LL * t, 1.5f * t, -2.25 * t, (char)(t & 0x3f), (short)(-t), (unsigned)t * 7u,
                          t / 3, 1e3, -4.0f, t % 5, 1LL << 40, big);
    out[4 * t + 1] = fib(t % 12);
    out[4 * t + 2] = is_even((unsigned)t) ? 1 : 0;
    int buf[12];
    for (int k = 0; k < 12; ++k) buf[k] = t + k;
    out[4 * t + 3] = sum_down(buf, t % 12);
}
""",
)


def _fib(k: int) -> int:
    a, b = 0, 1
    for _ in range(k):
        a, b = b, a + b
    return a


def _sum_down(buf: list[int], n: int) -> int:
    if n == 0:
        return buf[0]
    buf[n] += buf[n - 1]
    return buf[n] + _sum_down(buf, n - 1)


@both_compilers
def test_calls_params_structs_recursion(compiler: str) -> None:
    n = 96
    f = (np.arange(n, dtype=np.float32) - 40) * np.float32(0.25)
    (_, out, vout) = run(
        CALLS,
        compiler,
        "calls",
        1,
        128,
        np.int32(n),
        f,
        np.zeros(4 * n, np.int64),
        np.zeros(4 * n, np.float32),
    )
    exp, vexp = [], []
    for t in range(n):
        x = float(f[t])
        vexp += [x + 0.5 * 1.0, 2.0 - x, 3.0 * -1.0, float(t ^ 0x55)]
        c = t & 0x3F
        big_d1, big_k, big_c = t * 0.5, t << 35, t & 0x7F
        m = (
            t
            + -3 * t
            + int(1.5 * t)
            + int(-2.25 * t)
            + c
            + (-t)
            + t * 7
            + t // 3
            + 1000
            + (-4)
            + t % 5
            + (1 << 40)
            + int(big_d1) * 2
            + big_k
            + big_c
        )
        buf = [t + k for k in range(12)]
        exp += [m, _fib(t % 12), int(t % 2 == 0), _sum_down(buf, t % 12)]
    assert_exact(out, np.array(exp, np.int64))
    assert_exact(vout, np.array(vexp, np.float32))


INDIRECT = kernel(
    "control.function_pointer_table",
    r"""
typedef int (*binop_t)(int, int);
__device__ int op_add(int a, int b) { return a + b; }
__device__ int op_mul(int a, int b) { return a * b; }
__device__ int op_max(int a, int b) { return a > b ? a : b; }
__device__ int op_sub(int a, int b) { return a - b; }
__device__ binop_t table[4] = {op_add, op_mul, op_max, op_sub};

extern "C" __global__ void indirect(int n, const int* sel, const int* a, const int* b, int* out) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    binop_t f = table[sel[t] & 3];       // per-thread target: divergent indirect call
    out[t] = f(a[t], b[t]);
}
""",
)


@both_compilers
def test_function_pointer_table(compiler: str) -> None:
    n = 200
    r = rng(112)
    sel = r.integers(0, 4, n).astype(np.int32)
    a = r.integers(-1000, 1000, n).astype(np.int32)
    b = r.integers(-1000, 1000, n).astype(np.int32)
    (_, _, _, out) = run(
        INDIRECT, compiler, "indirect", 1, 256, np.int32(n), sel, a, b, np.zeros(n, np.int32)
    )
    exp = np.select([sel == 0, sel == 1, sel == 2, sel == 3], [a + b, a * b, np.maximum(a, b), a - b])
    assert_exact(out, exp.astype(np.int32))


RECONVERGE = kernel(
    "control.reconvergence_then_collective",
    r"""
extern "C" __global__ void reconverge(const int* in, int* out) {
    int t = threadIdx.x;
    int v = in[t];
    // Lanes spin different numbers of iterations, then the whole warp must meet again.
    int k = 0;
    while (v > 1) { v = (v & 1) ? v - 1 : v / 2; ++k; }
    __syncwarp();                                    // bar.warp.sync
    int total = k;
    for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(0xffffffffu, total, off);
    out[t] = total * 1000 + k;
}
""",
)


def _steps(v: int) -> int:
    k = 0
    while v > 1:
        v = v - 1 if v & 1 else v // 2
        k += 1
    return k


@both_compilers
def test_reconvergence_then_collective(compiler: str) -> None:
    x = rng(113).integers(0, 5000, 64).astype(np.int32)
    (_, out) = run(RECONVERGE, compiler, "reconverge", 1, 64, x, np.zeros(64, np.int32))
    k = np.array([_steps(int(v)) for v in x])
    tot = np.repeat(k.reshape(2, 32).sum(axis=1), 32)
    assert_exact(out, (tot * 1000 + k).astype(np.int32))
