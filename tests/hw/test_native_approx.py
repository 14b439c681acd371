"""ex2.approx.f32 and lg2.approx.f32 (CUDA's expf, __expf, exp2f, __log2f, __logf) run natively, bit for bit
the reference's: both executors compute strata's float64 sequence (hw/isa/approx.py) step for step. The
results are checked against NumPy's float64 exp2/log2 rounded to f32 (within 1 ulp; in practice equal)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

from native_harness import on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402

SRC = r"""
__device__ float ex2(float x) { float r; asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ float ex2ftz(float x) { float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ float lg2(float x) { float r; asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
__device__ float lg2ftz(float x) { float r; asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
extern "C" __global__ void approx(int n, const float* x, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    out[i] = ex2(v); out[n + i] = ex2ftz(v); out[2 * n + i] = lg2(v); out[3 * n + i] = lg2ftz(v);
    out[4 * n + i] = expf(v * 0.25f); out[5 * n + i] = __logf(v);   // the library's uses of ex2/lg2
  }
}
"""
N = 8192


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-160, 130, N // 2), np.abs(rng.standard_normal(N // 4)) * 10.0 ** rng.integers(
        -44, 38, N // 4), rng.uniform(-1, 1, N // 4)]).astype(np.float32)
    x[:16] = [0.0, -0.0, 1.0, -1.0, 1e-45, -1e-45, 1.1e-38, np.inf, -np.inf, np.nan, 128.0, -150.0, 127.99, -126.0,
              0.5, 2.0]
    return x


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| in units in the last place of f32 (NaN where both are NaN counts as 0; inf equal inf as 0)."""
    ia, ib = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    ia, ib = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia), np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    d = np.abs(ia - ib)
    return np.where(np.isnan(a) & np.isnan(b), 0, d)


def test_ex2_lg2_native_equal_reference_and_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    fn = cuda.compile(SRC).get_function("approx")
    x = _inputs()

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out = cuda.empty(6 * N)
        return (np.int32(N), cuda.to_device(x), out), [out]

    (out,), _, rec = on_both_executors(monkeypatch, lambda args: fn(N // 256, 256, args), make)
    assert not [e for e in rec.events if e.name == "native_partial"]  # ex2, lg2 and expf's fma.rm all native
    ex2, ex2ftz, lg2, lg2ftz = out.reshape(6, N)[:4]
    x64 = x.astype(np.float64)
    flushed = np.where(np.abs(x) < np.float32(2.0**-126), np.copysign(0.0, x64), x64)
    def flush(v: np.ndarray) -> np.ndarray:  # .ftz flushes subnormal results too
        return np.where(np.abs(v) < np.float32(2.0**-126), np.copysign(np.float32(0), v), v)

    with np.errstate(all="ignore"):
        assert _ulps(ex2, np.exp2(x64).astype(np.float32)).max() <= 1
        assert _ulps(ex2ftz, flush(np.exp2(flushed).astype(np.float32))).max() <= 1
        want_lg2, want_lg2ftz = np.log2(x64).astype(np.float32), flush(np.log2(flushed).astype(np.float32))
    assert _ulps(lg2, want_lg2).max() <= 1
    assert _ulps(lg2ftz, want_lg2ftz).max() <= 1
    # the edges: 2^+-0 = 1, 2^inf = inf, 2^-inf = 0, log2(+-0) = -inf, log2(-1) = NaN, log2(inf) = inf
    assert ex2[[0, 1, 7, 8]].tolist() == [1.0, 1.0, np.inf, 0.0] and np.isnan(ex2[9])
    assert lg2[[0, 1, 2, 7]].tolist() == [-np.inf, -np.inf, 0.0, np.inf] and np.isnan(lg2[3]) and np.isnan(lg2[9])
    assert lg2ftz[4] == -np.inf and lg2[4] == -149.0  # a subnormal: flushed to 0 under .ftz, exact otherwise
