"""A kernel parameter's address taken (`mov.b64 %rd, k_param_0` then `ld.param [%rd+off]`): what NVRTC
emits for a large struct passed by value and read in unrolled loops. Kernel from NVRTC; NumPy oracle."""

from __future__ import annotations

import numpy as np

import strata.cuda as cuda

SOURCE = r"""
struct Geometry { int n, ndim; long long shape[8]; long long st[4][8]; };
template <typename T, int OP> __global__ void binary(Geometry g, T* out, const T* a, const T* b) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= g.n) return;
    long long rem = i, oa = 0, ob = 0;
    #pragma unroll
    for (int d = 7; d >= 0; --d) {
        if (d < g.ndim) {
            long long c = rem % g.shape[d]; rem /= g.shape[d]; oa += c * g.st[1][d]; ob += c * g.st[2][d];
        }
    }
    out[i] = OP == 0 ? a[oa] + b[ob] : a[oa] * b[ob];
}
"""

GEOMETRY = np.dtype([("n", "<i4"), ("ndim", "<i4"), ("shape", "<i8", 8), ("st", "<i8", (4, 8))], align=True)


def test_struct_fields_read_through_the_parameters_address() -> None:
    mod = cuda.compile(SOURCE, name="param_address.cu", name_expressions=("binary<float, 0>", "binary<float, 1>"))
    assert "_param_0;" in mod.ptx  # NVRTC really took the parameter's address
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    g = np.zeros((), GEOMETRY)
    g["n"], g["ndim"] = 15, 2
    g["shape"][:2] = (3, 5)
    g["st"][1][:2] = (5, 1)  # a: row-major strides in elements
    g["st"][2][:2] = (0, 1)  # b broadcast along rows
    da, db, out = cuda.to_device(a), cuda.to_device(b), cuda.empty((3, 5), np.float32)
    for op, want in ((0, a + b), (1, a * b)):
        mod.get_function(f"binary<float, {op}>")(1, 32, (g.tobytes(), out, da, db))
        np.testing.assert_array_equal(out.get(), want)
