"""Float edge cases on the CDNA engine that the conformance corpus on both paths
(tests/hip/amd/test_conformance_both_paths.py) found wrong:

- division across the whole exponent range: clang's correctly rounded sequence (v_div_scale, v_rcp, Newton
  steps with fma, v_div_fmas, v_div_fixup) must give IEEE quotients for denormal operands, denormal
  quotients, huge exponent gaps, overflow and underflow, as NumPy's float32/float64 division does (denormal
  operands came back scaled by 2^64, V_DIV_FMAS undid V_DIV_SCALE's scaling the wrong way, and the float64
  fma lost bits next to the denormal range);
- packed float32 arithmetic (`v_pk_mul_f32`, which clang emits for `x * 0.5f` beside other work) flushing
  denormals when the kernel is compiled with -fgpu-flush-denormals-to-zero, as the scalar ops do."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.hw.amdgpu.decoder import decode

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")

SRC = '''#include <hip/hip_runtime.h>
extern "C" __global__ void dv(int n, const float* a, const float* b, float* o, const double* c, const double* d,
                              double* od) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { o[i] = a[i] / b[i]; od[i] = c[i] / d[i]; }
}'''


def _edge_operands(r: np.random.Generator, n: int, dt: type) -> tuple[np.ndarray, np.ndarray]:
    """Random bit patterns (every exponent, denormals included) plus hand-picked hard pairs."""
    ui: Any = np.uint32 if dt == np.float32 else np.uint64
    bits = np.iinfo(ui).bits
    a: np.ndarray = r.integers(0, 2 ** bits - 1, n, dtype=ui, endpoint=True).view(dt)
    b: np.ndarray = r.integers(0, 2 ** bits - 1, n, dtype=ui, endpoint=True).view(dt)
    fi = np.finfo(dt)
    t = fi.tiny
    hard = [(t / 4, t / 4), (-t / 3, t / 3), (1, t / 4), (2.0 ** 100, 16), (fi.max / 2, 0.5), (t / 7, 3),
            (t * 3, 7), (1e-30, 1e10), (fi.smallest_subnormal, 0.75), (fi.max, fi.smallest_subnormal), (0, 0)]
    for k, (x, y) in enumerate(hard):
        a[k], b[k] = x, y
    # Quotients near the denormal threshold and the overflow threshold, from both sides.
    m = n // 4
    e_lo = fi.minexp
    a[m:2 * m] = np.ldexp(r.uniform(1, 2, m), r.integers(e_lo - 30, e_lo + 30, m)).astype(dt)
    b[m:2 * m] = r.uniform(0.5, 4, m).astype(dt)
    a[2 * m:3 * m] = np.ldexp(r.uniform(1, 2, m), r.integers(fi.maxexp - 40, fi.maxexp, m)).astype(dt)
    b[2 * m:3 * m] = np.ldexp(r.uniform(1, 2, m), r.integers(-40, 3, m)).astype(dt)
    return a, b


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    u = f"u{got.dtype.itemsize}"
    return (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))


@needs_clang
def test_division_is_correctly_rounded_over_every_exponent(mi300x: cuda.Device) -> None:
    r = np.random.default_rng(15)
    n = 4096
    a, b = _edge_operands(r, n, np.float32)
    c, d = _edge_operands(r, n, np.float64)
    o, od = hip.zeros(n, np.float32), hip.zeros(n, np.float64)
    hip.compile(SRC).get_function("dv")(n // 256, 256, (np.int32(n), hip.to_device(a), hip.to_device(b), o,
                                                         hip.to_device(c), hip.to_device(d), od))
    with np.errstate(all="ignore"):
        want32, want64 = a / b, c / d
    got32, got64 = o.get(), od.get()
    bad32, bad64 = np.flatnonzero(~_same(got32, want32)), np.flatnonzero(~_same(got64, want64))
    assert bad32.size == 0, [(a[i], b[i], got32[i], want32[i]) for i in bad32[:5]]
    assert bad64.size == 0, "\n".join(f"{c[i]!r} / {d[i]!r}: {got64[i]!r} want {want64[i]!r}" for i in bad64[:15])


FTZ_SRC = """#include <hip/hip_runtime.h>
extern "C" __global__ void ftz_ops(int n, const float* a, const float* b, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    o[3 * i + 0] = x * y;
    o[3 * i + 1] = x + y;
    o[3 * i + 2] = x * 0.5f;
}"""


@needs_clang
@pytest.mark.parametrize("flush", [True, False])
def test_packed_f32_ops_follow_the_denormal_mode(mi300x: cuda.Device, flush: bool) -> None:
    opts = ["-ffp-contract=off"] + (["-fgpu-flush-denormals-to-zero"] if flush else [])
    mod = hip.compile(FTZ_SRC, options=opts)
    k = mod.code_object.kernels["ftz_ops"]
    assert any(i.name == "v_pk_mul_f32" for i in decode(k.code, k.name, mod.code_object.processor))
    t = np.finfo(np.float32).tiny
    a = np.array([t / 4, -t / 3, t * 1.5, 3.0, t, -t / 1024, 1e-3, 2.5], np.float32)
    b = np.array([1.0, 1.0, 0.25, 0.5, 0.5, 2.0, 1e-36, t / 2], np.float32)
    o = hip.zeros(3 * a.size, np.float32)
    mod.get_function("ftz_ops")(1, 64, (np.int32(a.size), hip.to_device(a), hip.to_device(b), o))
    got = o.get().reshape(-1, 3)

    def flushed(x: np.ndarray) -> np.ndarray:
        return np.where(np.abs(x) < t, np.copysign(np.float32(0), x), x).astype(np.float32) if flush else x

    fa, fb = flushed(a), flushed(b)
    want = np.stack([flushed(fa * fb), flushed(fa + fb), flushed(fa * np.float32(0.5))], axis=1)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


SQRT_SRC = """#include <hip/hip_runtime.h>
extern "C" __global__ void sq(int n, const float* a, float* o, const double* c, double* od) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { o[i] = sqrtf(a[i]); od[i] = sqrt(c[i]); }
}"""


@needs_clang
def test_sqrt_is_correctly_rounded_over_every_exponent(mi300x: cuda.Device) -> None:
    """clang's float64 sqrt is v_rsq_f64 and fma Newton steps: the fma must stay exact next to 2^1024 (it
    came back 1 ulp high for sqrt(DBL_MAX), where the two-product's partial products overflowed)."""
    r = np.random.default_rng(16)
    n = 2048
    a = np.abs(r.integers(0, 2 ** 32 - 1, n, dtype=np.uint32, endpoint=True).view(np.float32))
    c = np.abs(r.integers(0, 2 ** 64 - 1, n, dtype=np.uint64, endpoint=True).view(np.float64))
    a[:4] = [np.finfo(np.float32).max, np.finfo(np.float32).smallest_subnormal, 0.0, np.inf]
    c[:4] = [np.finfo(np.float64).max, np.finfo(np.float64).smallest_subnormal, 0.0, np.inf]
    c[4:260] = np.finfo(np.float64).max * r.uniform(0.5, 1.0, 256)
    o, od = hip.zeros(n, np.float32), hip.zeros(n, np.float64)
    hip.compile(SQRT_SRC).get_function("sq")(n // 256, 256, (np.int32(n), hip.to_device(a), o, hip.to_device(c), od))
    got32, got64 = o.get(), od.get()
    with np.errstate(invalid="ignore"):  # NaN inputs among the random bit patterns
        want32, want64 = np.sqrt(a), np.sqrt(c)
    bad32, bad64 = np.flatnonzero(~_same(got32, want32)), np.flatnonzero(~_same(got64, want64))
    assert bad32.size == 0, [(a[i], got32[i]) for i in bad32[:5]]
    assert bad64.size == 0, [(c[i], got64[i]) for i in bad64[:5]]


F64_OPS = """#include <hip/hip_runtime.h>
extern "C" __global__ void f64_ops(int n, const double* a, const double* b, double* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    out[0 * n + i] = x + y;
    out[1 * n + i] = x - y;
    out[2 * n + i] = x * y;
    out[3 * n + i] = x / y;
    out[4 * n + i] = sqrt(fabs(x));
    out[5 * n + i] = fma(x, y, 1.0);
}"""


@needs_clang
def test_div_scale_destination_is_not_an_abs_modifier(mi300x: cuda.Device) -> None:
    """V_DIV_SCALE is VOP3B: the bits where VOP3A keeps abs hold its scalar destination. Here clang writes the
    denominator's flag to s[2:3], whose bit 1 read as abs(S1) made S0 == S1 fail for a negative denominator:
    it went unscaled while VCC still asked to undo the scaling, so huge quotients came back 2^128 too big."""
    mod = hip.compile(F64_OPS, options=["-ffp-contract=off"])
    k = mod.code_object.kernels["f64_ops"]
    scales = [i for i in decode(k.code, k.name, mod.code_object.processor) if i.name == "v_div_scale_f64"]
    assert any(i.f["sdst"] & 2 for i in scales)  # the case this test is about is in the code
    r = np.random.default_rng(17)
    n = 512
    a, b = _edge_operands(r, n, np.float64)
    out = hip.zeros(6 * n, np.float64)
    mod.get_function("f64_ops")(n // 256, 256, (np.int32(n), hip.to_device(a), hip.to_device(b), out))
    with np.errstate(all="ignore"):
        want = np.stack([a + b, a - b, a * b, a / b, np.sqrt(np.abs(a))])
    got = out.get().reshape(6, n)[:5]
    bad = np.argwhere(~_same(got, want))
    assert bad.size == 0, [(int(r_), a[i], b[i], got[r_, i], want[r_, i]) for r_, i in bad[:5]]


FDIV = """#include <hip/hip_runtime.h>
extern "C" __global__ void quot(int n, const float* a, const float* b, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) o[i] = a[i] / b[i];
}"""


@needs_clang
def test_division_in_a_kernel_that_flushes_denormals(mi300x: cuda.Device) -> None:
    """With -fgpu-flush-denormals-to-zero clang brackets the division's fma steps with s_setreg_imm32_b32 on
    HW_REG_MODE (denormals on, then off again): the engine decodes it, keeps MODE per wave, and the quotient
    is the correctly rounded one of the flushed operands, flushed."""
    mod = hip.compile(FDIV, options=["-fgpu-flush-denormals-to-zero"])
    k = mod.code_object.kernels["quot"]
    texts = [i.text for i in decode(k.code, k.name, mod.code_object.processor)]
    assert "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3" in texts
    r = np.random.default_rng(18)
    n = 2048
    a, b = _edge_operands(r, n, np.float32)
    o = hip.zeros(n, np.float32)
    mod.get_function("quot")(n // 256, 256, (np.int32(n), hip.to_device(a), hip.to_device(b), o))
    t = np.finfo(np.float32).tiny

    def flush(x: np.ndarray) -> np.ndarray:
        return np.where(np.abs(x) < t, np.copysign(np.float32(0), x), x).astype(np.float32)

    with np.errstate(all="ignore"):
        want = flush(flush(a) / flush(b))
    got = o.get()
    bad = np.flatnonzero(~_same(got, want))
    assert bad.size == 0, [(a[i], b[i], got[i], want[i]) for i in bad[:5]]
