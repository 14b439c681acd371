# Conformance: elementwise and grid-stride kernels (saxpy, int/uint64/float/double vector ops,
# vectorised float4 loads, 2-D indexing). Exercises ld/st.global, mad/fma, mul.wide, setp/bra loops.
"""Elementwise kernels against NumPy oracles."""

from __future__ import annotations

import numpy as np
from conformance_lib import (
    assert_exact,
    assert_ulp,
    binop_exact,
    both_compilers,
    fma_exact,
    kernel,
    rng,
    run,
    sqrt_exact,
)

SAXPY = kernel(
    "elementwise.saxpy_grid_stride",
    r"""
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* y) {
    // Grid-stride loop: fewer threads than elements, every thread does several.
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
""",
)


@both_compilers
def test_saxpy_grid_stride(compiler: str) -> None:
    n = 3001  # not a multiple of the 3*128 threads launched
    r = rng(1)
    x = r.uniform(0, 10, n).astype(np.float32)
    y = r.uniform(0, 10, n).astype(np.float32)
    a = np.float32(1.75)
    xo, yo = run(SAXPY, compiler, "saxpy", 3, 128, np.int32(n), a, x, y)
    assert_exact(xo, x)
    # NVRTC contracts a*x+y into fma.rn.f32; positive operands keep mul+add within 1 ulp of it.
    assert_ulp(yo, fma_exact(np.full(n, a), x, y), 1)


VEC_INT = kernel(
    "elementwise.int32_ops",
    r"""
extern "C" __global__ void int_ops(int n, const int* a, const int* b, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int x = a[i], y = b[i];
    out[0 * n + i] = x + y;              // wraps
    out[1 * n + i] = x - y;
    out[2 * n + i] = x * y;              // low 32 bits
    out[3 * n + i] = min(x, y);
    out[4 * n + i] = max(x, y);
    out[5 * n + i] = abs(x);
    out[6 * n + i] = -x;
    out[7 * n + i] = x * 7 + y;          // mad.lo
    out[8 * n + i] = (x & y) | (x ^ 0x0f0f0f0f);
    out[9 * n + i] = ~x;
}
""",
)


@both_compilers
def test_int32_ops(compiler: str) -> None:
    n = 1000
    r = rng(2)
    a = r.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    b = r.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    a[:4] = [np.iinfo(np.int32).min, np.iinfo(np.int32).max, 0, -1]
    b[:4] = [-1, 1, np.iinfo(np.int32).min, np.iinfo(np.int32).max]
    a[5] = np.iinfo(np.int32).min + 1  # abs(INT_MIN) is UB in C; keep it out of abs()
    a[0] = np.iinfo(np.int32).min + 1
    (_, _, out) = run(
        VEC_INT, compiler, "int_ops", (n + 255) // 256, 256, np.int32(n), a, b, np.zeros(10 * n, np.int32)
    )
    with np.errstate(over="ignore"):
        exp = (
            np.stack(
                [
                    a + b,
                    a - b,
                    a * b,
                    np.minimum(a, b),
                    np.maximum(a, b),
                    np.abs(a),
                    -a,
                    a * np.int32(7) + b,
                    (a & b) | (a ^ np.int32(0x0F0F0F0F)),
                    ~a,
                ]
            )
            .astype(np.int32)
            .ravel()
        )
    assert_exact(out, exp)


VEC_U64 = kernel(
    "elementwise.uint64_ops",
    r"""
extern "C" __global__ void u64_ops(int n, const unsigned long long* a, const unsigned long long* b,
                                   unsigned long long* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = a[i], y = b[i];
    out[0 * n + i] = x + y;                 // add.s64 carries across the 32-bit halves
    out[1 * n + i] = x - y;
    out[2 * n + i] = x * y;                 // mul.lo.s64
    out[3 * n + i] = x ^ (y >> 7);
    out[4 * n + i] = x < y ? x : y;         // setp.lt.u64 / min.u64
    out[5 * n + i] = (long long)x < (long long)y ? 1ull : 0ull;
    out[6 * n + i] = x / (y | 1ull);        // div.u64
    out[7 * n + i] = x % (y | 1ull);
}
""",
)


@both_compilers
def test_uint64_ops(compiler: str) -> None:
    n = 700
    r = rng(3)
    a = r.integers(0, 2**64, n, dtype=np.uint64)
    b = r.integers(0, 2**64, n, dtype=np.uint64)
    a[:3] = [2**64 - 1, 2**32 - 1, 0]
    b[:3] = [1, 1, 2**64 - 1]
    b[10:20] >>= np.uint64(40)  # small divisors too
    (_, _, out) = run(VEC_U64, compiler, "u64_ops", 3, 256, np.int32(n), a, b, np.zeros(8 * n, np.uint64))
    one = np.uint64(1)
    exp = np.stack(
        [
            a + b,
            a - b,
            a * b,
            a ^ (b >> np.uint64(7)),
            np.minimum(a, b),
            (a.view(np.int64) < b.view(np.int64)).astype(np.uint64),
            a // (b | one),
            a % (b | one),
        ]
    ).ravel()
    assert_exact(out, exp)


VEC_F64 = kernel(
    "elementwise.double_ops",
    r"""
extern "C" __global__ void f64_ops(int n, const double* a, const double* b, double* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    // Each result stored separately so nothing contracts into fma.
    out[0 * n + i] = x + y;
    out[1 * n + i] = x - y;
    out[2 * n + i] = x * y;
    out[3 * n + i] = x / y;                 // div.rn.f64
    out[4 * n + i] = sqrt(fabs(x));         // sqrt.rn.f64
    out[5 * n + i] = fma(x, y, 1.0);        // fma.rn.f64
    out[6 * n + i] = fmin(x, y);
    out[7 * n + i] = -fabs(y);
}
""",
)


@both_compilers
def test_double_ops(compiler: str) -> None:
    n = 500
    r = rng(4)
    a = r.standard_normal(n) * 10.0 ** r.integers(-5, 6, n)
    b = r.standard_normal(n) * 10.0 ** r.integers(-5, 6, n)
    (_, _, out) = run(VEC_F64, compiler, "f64_ops", 2, 256, np.int32(n), a, b, np.zeros(8 * n))
    out = out.reshape(8, n)
    assert_exact(out[0], a + b)
    assert_exact(out[1], a - b)
    assert_exact(out[2], a * b)
    assert_exact(out[3], a / b)
    assert_exact(out[4], np.sqrt(np.abs(a)))
    assert_exact(out[5], fma_exact(a, b, np.ones(n)))
    assert_exact(out[6], np.fmin(a, b))
    assert_exact(out[7], -np.abs(b))


VEC_F32 = kernel(
    "elementwise.float_ops",
    r"""
extern "C" __global__ void f32_ops(int n, const float* a, const float* b, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    out[0 * n + i] = x + y;
    out[1 * n + i] = x - y;
    out[2 * n + i] = x * y;
    out[3 * n + i] = x / y;                 // div.rn.f32 (IEEE division is the NVRTC default)
    out[4 * n + i] = sqrtf(fabsf(x));       // sqrt.rn.f32
    out[5 * n + i] = fmaxf(x, y);
    out[6 * n + i] = fabsf(x) * -2.0f;
    out[7 * n + i] = 1.0f / y;              // rcp.rn.f32
}
""",
)


@both_compilers
def test_float_ops(compiler: str) -> None:
    n = 777
    r = rng(5)
    a = (r.standard_normal(n) * 10.0 ** r.integers(-3, 4, n)).astype(np.float32)
    b = (r.standard_normal(n) * 10.0 ** r.integers(-3, 4, n)).astype(np.float32)
    (_, _, out) = run(VEC_F32, compiler, "f32_ops", 4, 256, np.int32(n), a, b, np.zeros(8 * n, np.float32))
    out = out.reshape(8, n)
    assert_exact(out[0], binop_exact("add", a, b))
    assert_exact(out[1], binop_exact("sub", a, b))
    assert_exact(out[2], binop_exact("mul", a, b))
    assert_exact(out[3], binop_exact("div", a, b))
    assert_exact(out[4], sqrt_exact(np.abs(a)))
    assert_exact(out[5], np.fmax(a, b))
    assert_exact(out[6], np.abs(a) * np.float32(-2.0))
    assert_exact(out[7], binop_exact("div", np.ones(n, np.float32), b))


VEC4 = kernel(
    "elementwise.float4_vector_loads",
    r"""
extern "C" __global__ void scale4(int n4, const float4* __restrict__ in, float4* out, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = in[i];                   // ld.global.nc.v4.f32
        out[i] = make_float4(v.x * s, v.y * s, v.z * s, v.w * s);   // st.global.v4.f32
    }
}
extern "C" __global__ void swap2(int n2, const int2* in, int2* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) { int2 v = in[i]; out[i] = make_int2(v.y, v.x); }
}
extern "C" __global__ void add_d2(int n2, const double2* a, double2* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n2) { double2 v = a[i]; out[i] = make_double2(v.x + v.y, v.x - v.y); }
}
""",
)


@both_compilers
def test_vector_loads(compiler: str) -> None:
    r = rng(6)
    x = r.standard_normal(4 * 300).astype(np.float32)
    (_, out) = run(VEC4, compiler, "scale4", 2, 256, np.int32(300), x, np.zeros_like(x), np.float32(0.5))
    assert_exact(out, x * np.float32(0.5))
    xi = r.integers(-1000, 1000, 2 * 200).astype(np.int32)
    (_, outi) = run(VEC4, compiler, "swap2", 1, 256, np.int32(200), xi, np.zeros_like(xi))
    assert_exact(outi, xi.reshape(-1, 2)[:, ::-1].ravel())
    xd = r.standard_normal(2 * 100)
    (_, outd) = run(VEC4, compiler, "add_d2", 1, 128, np.int32(100), xd, np.zeros_like(xd))
    p = xd.reshape(-1, 2)
    assert_exact(outd, np.stack([p[:, 0] + p[:, 1], p[:, 0] - p[:, 1]], axis=1).ravel())


MAT2D = kernel(
    "elementwise.matrix_2d_grid",
    r"""
extern "C" __global__ void mat_add(int rows, int cols, const float* a, const float* b, float* c) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        int k = row * cols + col;
        c[k] = a[k] + 2.0f * b[k];
    }
}
""",
)


@both_compilers
def test_matrix_2d_grid(compiler: str) -> None:
    rows, cols = 37, 53
    r = rng(7)
    a = r.integers(-100, 100, (rows, cols)).astype(np.float32)
    b = r.integers(-100, 100, (rows, cols)).astype(np.float32)
    grid = ((cols + 15) // 16, (rows + 7) // 8)
    (_, _, c) = run(
        MAT2D, compiler, "mat_add", grid, (16, 8), np.int32(rows), np.int32(cols), a, b, np.zeros_like(a)
    )
    assert_exact(c, a + 2 * b)  # small integers: exact whether or not fma is used
