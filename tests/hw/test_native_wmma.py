"""The warp matrix instructions (`wmma.mma`, `wmma.load`/`wmma.store` from shared memory) on the native executor:
NVRTC-compiled nvcuda::wmma kernels run on both executors from the same inputs; outputs bit for bit identical,
counters identical, the native run compiled the wmma ops (no per-block fallback for them), and the result
equals NumPy's float64 product of the decoded inputs, rounded to the accumulator type after each mma step (the
inputs have few significant bits, so every float64 sum is exact and only the rounding to the accumulator
remains)."""

from __future__ import annotations

import os
from typing import Any

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

from native_harness import on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402
from strata.hw.isa import tensor  # noqa: E402

SRC = r"""
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

template <bool ROW> struct L { typedef wmma::col_major t; };
template <> struct L<true> { typedef wmma::row_major t; };

// One warp per 16x16 tile of C (M x N, row-major) += A (M x K) B (K x N); A stored row-major (lda K) or
// column-major (lda M), B row-major (ldb N) or column-major (ldb K). Warps past the last tile leave whole.
template <typename T, typename FT, typename Acc, int KS, bool AROW, bool BROW, bool TF32>
__device__ void tiles(const T* a, const T* b, Acc* c, int M, int N, int K) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tm = warp % (M / 16), tn = warp / (M / 16);
  if (tn >= N / 16) return;
  wmma::fragment<wmma::matrix_a, 16, 16, KS, FT, typename L<AROW>::t> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, KS, FT, typename L<BROW>::t> fb;
  wmma::fragment<wmma::accumulator, 16, 16, KS, Acc> acc;
  wmma::load_matrix_sync(acc, c + tm * 16 * N + tn * 16, N, wmma::mem_row_major);
  for (int k = 0; k < K; k += KS) {
    wmma::load_matrix_sync(fa, AROW ? a + tm * 16 * K + k : a + k * M + tm * 16, AROW ? K : M);
    wmma::load_matrix_sync(fb, BROW ? b + k * N + tn * 16 : b + tn * 16 * K + k, BROW ? N : K);
    if (TF32) {
      for (int t = 0; t < fa.num_elements; ++t) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
      for (int t = 0; t < fb.num_elements; ++t) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
    }
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + tm * 16 * N + tn * 16, acc, N, wmma::mem_row_major);
}

#define TILES(name, T, FT, Acc, KS, AROW, BROW, TF32) \
  extern "C" __global__ void name(const T* a, const T* b, Acc* c, int M, int N, int K) { \
    tiles<T, FT, Acc, KS, AROW, BROW, TF32>(a, b, c, M, N, K); }
TILES(f16_f32_rc, half, half, float, 16, true, false, false)
TILES(f16_f32_cr, half, half, float, 16, false, true, false)
TILES(f16_f16_rr, half, half, half, 16, true, true, false)
TILES(bf16_f32_rc, __nv_bfloat16, __nv_bfloat16, float, 16, true, false, false)
TILES(bf16_f32_cc, __nv_bfloat16, __nv_bfloat16, float, 16, false, false, false)
TILES(tf32_f32_rc, float, wmma::precision::tf32, float, 8, true, false, true)
"""

BF16, F16, F32 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16), np.dtype(np.float32)
# kernel -> (A/B storage type, accumulator type, k per mma, A row-major, B row-major)
KERNELS: dict[str, tuple[np.dtype, np.dtype, int, bool, bool]] = {
    "f16_f32_rc": (F16, F32, 16, True, False), "f16_f32_cr": (F16, F32, 16, False, True),
    "f16_f16_rr": (F16, F16, 16, True, True), "bf16_f32_rc": (BF16, F32, 16, True, False),
    "bf16_f32_cc": (BF16, F32, 16, False, False), "tf32_f32_rc": (F32, F32, 8, True, False),
}
M, N, K = 32, 48, 64  # 2 x 3 tiles, 4 (or 8) mma steps


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC)


def _operands(seed: int, et: np.dtype, ct: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A, B as eighths in [-4, 4] (exact in every input type; every product and sum of K of them is exact in
    float64 and f32), C with full f32 (or f16) mantissas, so the rounding to the accumulator type matters."""
    rng = np.random.default_rng(seed)
    a = (rng.integers(-32, 33, (M, K)) / 8).astype(et)
    b = (rng.integers(-32, 33, (K, N)) / 8).astype(et)
    c = (rng.standard_normal((M, N)) * 3).astype(ct)
    return a, b, c


def _oracle(a: np.ndarray, b: np.ndarray, c: np.ndarray, ks: int) -> np.ndarray:
    """C after the kernel's K / ks mma steps: each the float64 product plus C, rounded once to C's type."""
    a64, b64, acc = a.astype(np.float64), b.astype(np.float64), c.copy()
    with np.errstate(invalid="ignore"):  # (the NaN test's inf * 0)
        for k in range(0, a.shape[1], ks):
            acc = (a64[:, k:k + ks] @ b64[k:k + ks] + acc.astype(np.float64)).astype(c.dtype)
    return acc


@pytest.fixture
def reference_calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The reference handlers' wmma work per executor setting: {"_product": [...]} gets STRATA_EXECUTOR's value
    at each call of tensor._product (the reference's wmma.mma). A native run that compiled its wmma.mma ops
    never calls it (the per-block fallback's reasons name only a block's first reference op)."""
    calls: dict[str, list[str]] = {"_product": []}
    real = tensor._product

    def spy(*args: Any) -> Any:
        calls["_product"].append(os.environ.get("STRATA_EXECUTOR", ""))
        return real(*args)

    monkeypatch.setattr(tensor, "_product", spy)
    return calls


@pytest.mark.parametrize("name", list(KERNELS))
def test_native_wmma_mma_equals_reference_and_numpy(monkeypatch: pytest.MonkeyPatch, mod: Any, name: str,
                                                    reference_calls: dict[str, list[str]]) -> None:
    et, ct, ks, arow, brow = KERNELS[name]
    a, b, c = _operands(len(name) * 7 + ks, et, ct)
    fn = mod.get_function(name)

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        da = cuda.to_device(np.ascontiguousarray(a if arow else a.T))
        db = cuda.to_device(np.ascontiguousarray(b if brow else b.T))
        dc = cuda.to_device(c)
        return (da, db, dc, np.int32(M), np.int32(N), np.int32(K)), [dc]

    # 6 tiles on 2 blocks of 4 warps: the second block's last two warps have nothing to do and leave whole
    (out,), counters, _ = on_both_executors(monkeypatch, lambda args: fn(2, 128, args), make)
    assert "reference" in reference_calls["_product"] and "native" not in reference_calls["_product"]
    assert counters["flops"].get("tensor", 0) == 6 * (K // ks) * 2 * 16 * 16 * ks
    want = _oracle(a, b, c, ks)
    assert out.view(ct).tobytes() == want.tobytes()


def test_native_wmma_nan_and_inf_canonical(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                           reference_calls: dict[str, list[str]]) -> None:
    """A NaN in A, or inf times zero, makes the canonical NaN 0x7fffffff on both executors; inf stays inf."""
    a, b, c = _operands(3, BF16, F32)
    a[1, 5] = np.nan
    a[2, 7] = np.inf
    b[7, :] = 1
    b[7, 4] = 0  # row 2, column 4: inf * 0
    fn = mod.get_function("bf16_f32_rc")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        dc = cuda.to_device(c)
        return (cuda.to_device(a), cuda.to_device(np.ascontiguousarray(b.T)), dc, np.int32(M), np.int32(N),
                np.int32(K)), [dc]

    (out,), _, _ = on_both_executors(monkeypatch, lambda args: fn(6, 32, args), make)
    assert "native" not in reference_calls["_product"]
    bits = out.view(np.uint32).reshape(M, N)
    assert (bits[1] == 0x7FFFFFFF).all() and bits[2, 4] == 0x7FFFFFFF
    got = out.view(np.float32).reshape(M, N)
    assert np.isposinf(got[2, :4]).all() and np.isposinf(got[2, 5:16]).all()
    want = _oracle(a, b, c, 16)
    assert got[3:].tobytes() == want[3:].tobytes()


def test_native_wmma_partial_warp_runs_on_the_reference(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                                        reference_calls: dict[str, list[str]]) -> None:
    """A block of 48 threads: its second warp has 16 lanes (tile (1, 0)). The reference computes a warp's
    product from all 32 lanes' registers; the native code hands such a chunk's wmma.mma to the reference at run
    time (no compile-time fallback), so both agree bit for bit; the full warp's tile still matches NumPy."""
    a, b, c = _operands(4, F16, F32)
    fn = mod.get_function("f16_f32_rc")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        dc = cuda.to_device(c)
        return (cuda.to_device(a), cuda.to_device(np.ascontiguousarray(b.T)), dc, np.int32(M), np.int32(N),
                np.int32(K)), [dc]

    (out,), _, _ = on_both_executors(monkeypatch, lambda args: fn(1, 48, args), make)
    assert "native" in reference_calls["_product"]  # (the bail at run time)
    got, want = out.view(np.float32).reshape(M, N), _oracle(a, b, c, 16)
    assert got[:16, :16].tobytes() == want[:16, :16].tobytes()
