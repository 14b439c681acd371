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

from native_harness import fault_report, on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402
from strata.hw.isa import tensor  # noqa: E402

SRC = r"""
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

template <bool ROW> struct L { typedef wmma::col_major t; };
template <> struct L<true> { typedef wmma::row_major t; };

// One warp per WM x WN tile of C (M x N, row-major) += A (M x K) B (K x N); A stored row-major (lda K) or
// column-major (lda M), B row-major (ldb N) or column-major (ldb K). Warps past the last tile leave whole.
template <typename T, typename FT, typename Acc, int WM, int WN, int KS, bool AROW, bool BROW, bool TF32>
__device__ void tiles(const T* a, const T* b, Acc* c, int M, int N, int K) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tm = warp % (M / WM), tn = warp / (M / WM);
  if (tn >= N / WN) return;
  wmma::fragment<wmma::matrix_a, WM, WN, KS, FT, typename L<AROW>::t> fa;
  wmma::fragment<wmma::matrix_b, WM, WN, KS, FT, typename L<BROW>::t> fb;
  wmma::fragment<wmma::accumulator, WM, WN, KS, Acc> acc;
  wmma::load_matrix_sync(acc, c + tm * WM * N + tn * WN, N, wmma::mem_row_major);
  for (int k = 0; k < K; k += KS) {
    wmma::load_matrix_sync(fa, AROW ? a + tm * WM * K + k : a + k * M + tm * WM, AROW ? K : M);
    wmma::load_matrix_sync(fb, BROW ? b + k * N + tn * WN : b + tn * WN * K + k, BROW ? N : K);
    if (TF32) {
      for (int t = 0; t < fa.num_elements; ++t) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
      for (int t = 0; t < fb.num_elements; ++t) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
    }
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + tm * WM * N + tn * WN, acc, N, wmma::mem_row_major);
}

#define TILES(name, T, FT, Acc, KS, AROW, BROW, TF32) \
  extern "C" __global__ void name(const T* a, const T* b, Acc* c, int M, int N, int K) { \
    tiles<T, FT, Acc, 16, 16, KS, AROW, BROW, TF32>(a, b, c, M, N, K); }
#define SHAPED(name, T, Acc, WM, WN) \
  extern "C" __global__ void name(const T* a, const T* b, Acc* c, int M, int N, int K) { \
    tiles<T, T, Acc, WM, WN, 16, true, false, false>(a, b, c, M, N, K); }
SHAPED(m8n32_bf16_f32, __nv_bfloat16, float, 8, 32)
SHAPED(m32n8_bf16_f32, __nv_bfloat16, float, 32, 8)
SHAPED(m8n32_f16_f16, half, half, 8, 32)
SHAPED(m32n8_f16_f32, half, float, 32, 8)
TILES(f16_f32_rc, half, half, float, 16, true, false, false)
TILES(f16_f32_cr, half, half, float, 16, false, true, false)
TILES(f16_f16_rr, half, half, half, 16, true, true, false)
TILES(bf16_f32_rc, __nv_bfloat16, __nv_bfloat16, float, 16, true, false, false)
TILES(bf16_f32_cc, __nv_bfloat16, __nv_bfloat16, float, 16, false, false, false)
TILES(tf32_f32_rc, float, wmma::precision::tf32, float, 8, true, false, true)

// The same through shared memory: each warp of a 2-warp block stages its tiles of A, B and C in shared
// memory (rows LDS elements apart, a multiple of 16 bytes), loads its fragments from there, and stores the
// accumulator back there (row-major, or column-major when A is) before writing C out.
#define LDS 24
template <typename T, typename FT, typename Acc, int KS, bool AROW, bool BROW, bool TF32>
__device__ void staged(const T* a, const T* b, Acc* c, int M, int N, int K) {
  __shared__ __align__(128) T As[2][16 * LDS];
  __shared__ __align__(128) T Bs[2][16 * LDS];
  __shared__ __align__(128) Acc Cs[2][16 * LDS];
  int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  int warp = blockIdx.x * 2 + w;
  int tm = warp % (M / 16), tn = warp / (M / 16);
  if (tn >= N / 16) return;
  wmma::fragment<wmma::matrix_a, 16, 16, KS, FT, typename L<AROW>::t> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, KS, FT, typename L<BROW>::t> fb;
  wmma::fragment<wmma::accumulator, 16, 16, KS, Acc> acc;
  for (int e = lane; e < 256; e += 32) Cs[w][(e / 16) * LDS + e % 16] = c[(tm * 16 + e / 16) * N + tn * 16 + e % 16];
  __syncwarp();
  wmma::load_matrix_sync(acc, Cs[w], LDS, wmma::mem_row_major);
  for (int k = 0; k < K; k += KS) {
    for (int e = lane; e < 16 * KS; e += 32) {
      int r = e / KS, q = e % KS;    // A's tile: row r, column q
      if (AROW) As[w][r * LDS + q] = a[(tm * 16 + r) * K + k + q];
      else As[w][q * LDS + r] = a[(k + q) * M + tm * 16 + r];
      int br = e / 16, bc = e % 16;  // B's tile: row br, column bc
      if (BROW) Bs[w][br * LDS + bc] = b[(k + br) * N + tn * 16 + bc];
      else Bs[w][bc * LDS + br] = b[(tn * 16 + bc) * K + k + br];
    }
    __syncwarp();
    wmma::load_matrix_sync(fa, As[w], LDS);
    wmma::load_matrix_sync(fb, Bs[w], LDS);
    if (TF32) {
      for (int t = 0; t < fa.num_elements; ++t) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
      for (int t = 0; t < fb.num_elements; ++t) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
    }
    wmma::mma_sync(acc, fa, fb, acc);
    __syncwarp();
  }
  wmma::store_matrix_sync(Cs[w], acc, LDS, AROW ? wmma::mem_row_major : wmma::mem_col_major);
  __syncwarp();
  for (int e = lane; e < 256; e += 32) {
    int r = e / 16, q = e % 16;
    c[(tm * 16 + r) * N + tn * 16 + q] = AROW ? Cs[w][r * LDS + q] : Cs[w][q * LDS + r];
  }
}

#define STAGED(name, T, FT, Acc, KS, AROW, BROW, TF32) \
  extern "C" __global__ void name(const T* a, const T* b, Acc* c, int M, int N, int K) { \
    staged<T, FT, Acc, KS, AROW, BROW, TF32>(a, b, c, M, N, K); }
STAGED(s_f16_f32_rr, half, half, float, 16, true, true, false)
STAGED(s_f16_f16_cc, half, half, half, 16, false, false, false)
STAGED(s_bf16_f32_rc, __nv_bfloat16, __nv_bfloat16, float, 16, true, false, false)
STAGED(s_bf16_f32_cr, __nv_bfloat16, __nv_bfloat16, float, 16, false, true, false)
STAGED(s_tf32_f32_rc, float, wmma::precision::tf32, float, 8, true, false, true)

// Columns that overlap in shared memory: an accumulator stored column-major 4 floats apart (16 bytes: legal),
// so later elements overwrite earlier ones; which win is the reference's element order.
extern "C" __global__ void overlapping(const float* c, float* out) {
  __shared__ __align__(128) float s[16 * 16 + 64];
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  for (int e = threadIdx.x; e < 16 * 16 + 64; e += 32) s[e] = -1.0f;
  __syncwarp();
  wmma::store_matrix_sync(s, acc, 4, wmma::mem_col_major);
  __syncwarp();
  for (int e = threadIdx.x; e < 16 * 16 + 64; e += 32) out[e] = s[e];
}

// C's fragment from a kernel parameter: its registers may be the launch's invariants (one ld.param each)
extern "C" __global__ void param_acc(const half* a, const half* b, float* c, float c0) {
  __shared__ __align__(128) half s[2][16 * 16];
  for (int e = threadIdx.x; e < 256; e += 32) { s[0][e] = a[e]; s[1][e] = b[e]; }
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  for (int t = 0; t < acc.num_elements; ++t) acc.x[t] = c0;
  wmma::load_matrix_sync(fa, s[0], 16);
  wmma::load_matrix_sync(fb, s[1], 16);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

// A misaligned fragment in shared memory: rows must start 16-byte aligned; `skip` halves in, they do not.
extern "C" __global__ void misaligned(const half* a, float* out, int skip) {
  __shared__ __align__(128) half s[16 * 32];
  for (int e = threadIdx.x; e < 16 * 32; e += 32) s[e] = a[e];
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::load_matrix_sync(fa, s + skip, 32);
  out[threadIdx.x] = __half2float(fa.x[0]);
}
"""

BF16, F16, F32 = np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16), np.dtype(np.float32)
# kernel -> (A/B storage type, accumulator type, k per mma, A row-major, B row-major)
KERNELS: dict[str, tuple[np.dtype, np.dtype, int, bool, bool]] = {
    "f16_f32_rc": (F16, F32, 16, True, False), "f16_f32_cr": (F16, F32, 16, False, True),
    "f16_f16_rr": (F16, F16, 16, True, True), "bf16_f32_rc": (BF16, F32, 16, True, False),
    "bf16_f32_cc": (BF16, F32, 16, False, False), "tf32_f32_rc": (F32, F32, 8, True, False),
    "s_f16_f32_rr": (F16, F32, 16, True, True), "s_f16_f16_cc": (F16, F16, 16, False, False),
    "s_bf16_f32_rc": (BF16, F32, 16, True, False), "s_bf16_f32_cr": (BF16, F32, 16, False, True),
    "s_tf32_f32_rc": (F32, F32, 8, True, False),
    "m8n32_bf16_f32": (BF16, F32, 16, True, False), "m32n8_bf16_f32": (BF16, F32, 16, True, False),
    "m8n32_f16_f16": (F16, F16, 16, True, False), "m32n8_f16_f32": (F16, F32, 16, True, False),
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
    """The reference handlers' wmma work per executor setting: STRATA_EXECUTOR's value at each call of
    tensor._product (the reference's wmma.mma), tensor._shared_fast (its wmma.load/store of whole warps from
    shared memory) and ElementAddresser.resolve_elements (any other wmma.load/store). A native run that
    compiled those ops never calls them (the per-block fallback's reasons name only a block's first reference
    op, so they cannot tell)."""
    calls: dict[str, list[str]] = {}
    for owner, name in ((tensor, "_product"), (tensor, "_shared_fast"), (tensor.ElementAddresser, "resolve_elements")):
        calls[name] = []

        def spy(*args: Any, _real: Any = getattr(owner, name), _name: str = name) -> Any:
            calls[_name].append(os.environ.get("STRATA_EXECUTOR", ""))
            return _real(*args)

        monkeypatch.setattr(owner, name, spy)
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

    staged = name.startswith("s_")
    # 16x16 tiles: 6; tiles() on 2 blocks of 4 warps, whose last two have nothing to do and leave whole; staged()
    # on 3 blocks of 2 warps, all busy (so the reference takes its whole-warp path, _shared_fast). 8x32 and 32x8
    # tiles: 4 and 6, on 2 blocks of 4 warps
    (out,), counters, _ = on_both_executors(monkeypatch, lambda args: fn(3, 64, args) if staged else
                                            fn(2, 128, args), make)
    assert "reference" in reference_calls["_product"] and "native" not in reference_calls["_product"]
    if staged:  # every wmma op native
        assert "reference" in reference_calls["_shared_fast"]
        assert "native" not in reference_calls["_shared_fast"] + reference_calls["resolve_elements"]
        assert counters["shared_bank_conflicts"] > 0  # (the fragments' 48-byte rows share banks)
    wm, wn = {"m8n32": (8, 32), "m32n8": (32, 8)}.get(name[:5], (16, 16))
    rows, cols = M // wm * wm, N // wn * wn  # (8x32 tiles leave C's last 16 columns alone)
    assert counters["flops"].get("tensor", 0) == rows * cols * K * 2
    want = c.copy()
    want[:rows, :cols] = _oracle(a[:rows], b[:, :cols], c[:rows, :cols], ks)
    assert out.view(ct).reshape(M, N).tobytes() == want.tobytes()


def test_native_wmma_shared_with_idle_warps(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                            reference_calls: dict[str, list[str]]) -> None:
    """Staged tiles on 4 blocks of 2 warps for 6 tiles: the last block leaves at once, so the chunk's mask is
    partial and the reference takes its per-element path for wmma.load/store (resolve_elements); the native
    code skips the idle warps and counts as that path does."""
    a, b, c = _operands(11, BF16, F32)
    fn = mod.get_function("s_bf16_f32_rc")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        dc = cuda.to_device(c)
        return (cuda.to_device(a), cuda.to_device(np.ascontiguousarray(b.T)), dc, np.int32(M), np.int32(N),
                np.int32(K)), [dc]

    (out,), _, _ = on_both_executors(monkeypatch, lambda args: fn(4, 64, args), make)
    assert "reference" in reference_calls["resolve_elements"]
    assert "native" not in reference_calls["_product"] + reference_calls["_shared_fast"] + \
        reference_calls["resolve_elements"]
    assert out.view(np.float32).tobytes() == _oracle(a, b, c, 16).tobytes()


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


def test_native_wmma_misaligned_shared_fault_report(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    """A wmma.load from shared memory at a row start off the 16-byte grid: the native code hands the op to the
    reference, which reports the same fault on both executors; an aligned one runs natively."""
    host = np.arange(16 * 32, dtype=np.float16)
    fn = mod.get_function("misaligned")
    reports = [fault_report(monkeypatch, ex, lambda: fn(1, 32, (cuda.to_device(host), cuda.empty(32), np.int32(4))))
               for ex in ("reference", "native")]
    assert reports[0] == reports[1]
    assert "misaligned" in str(reports[0])

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out = cuda.empty(32)
        return (cuda.to_device(host), out, np.int32(8)), [out]

    (out,), _, _ = on_both_executors(monkeypatch, lambda args: fn(1, 32, args), make)
    # lane j's first element is row j % 16, column 0 of the fragment (strata's layout: 16 halves per lane)
    assert out.tolist() == [float(8 + 32 * (j % 16)) for j in range(32)]


# (each compiles the library's whole GEMM kernel natively, 3-10 s on 2 busy cores: f16 and tf32 in the slow run)
@pytest.mark.parametrize("ab", [BF16, pytest.param(F16, marks=pytest.mark.slow),
                                pytest.param(F32, marks=pytest.mark.slow)], ids=["bf16", "f16", "tf32"])
def test_native_wmma_library_gemm_kernel(monkeypatch: pytest.MonkeyPatch, reference_calls: dict[str, list[str]],
                                         ab: np.dtype) -> None:
    """strata.libs.blas's tensor-core GEMM kernel (gemm_wmma: tiles staged in shared memory, fragments loaded
    from there through generic addresses, the accumulators stored to shared with .shared addresses) on a
    96 x 80 x 48 product: bit for bit the reference's, every wmma op native, and the float64 product of the
    inputs rounded to f32 after each 16-deep (tf32: 8-deep) mma step."""
    from strata.libs.blas import tensor as blas_tensor

    fn = blas_tensor.KERNELS.get(blas_tensor.kernel_name(ab, F32))
    m, n, k = 96, 80, 48
    rng = np.random.default_rng(21)
    a = (rng.integers(-32, 33, (m, k)) / 8).astype(ab)
    b = (rng.integers(-32, 33, (k, n)) / 8).astype(ab)
    i32, i64, f32 = np.int32, np.int64, np.float32

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        dc = cuda.zeros((n, m), np.float32)  # column-major C, as cuBLAS's
        args = (i32(m), i32(n), i32(k), f32(1), cuda.to_device(np.ascontiguousarray(a.T)), i32(m), i64(0),
                cuda.to_device(np.ascontiguousarray(b.T)), i32(k), i64(0), f32(0), dc, i32(m), i64(0), i32(1),
                i32(0), i32(3))
        return args, [dc]

    (out,), _, _ = on_both_executors(monkeypatch, lambda args: fn((2, 2, 1), 128, args), make)
    calls = reference_calls["_product"] + reference_calls["_shared_fast"] + reference_calls["resolve_elements"]
    assert "reference" in calls and "native" not in calls
    ks = 8 if ab == F32 else 16
    want = _oracle(a, b, np.zeros((m, n), np.float32), ks)
    assert out.view(np.float32).T.tobytes() == np.ascontiguousarray(want).tobytes()


def test_native_wmma_overlapping_column_store(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                              reference_calls: dict[str, list[str]]) -> None:
    """A column-major store whose columns overlap (stride 4 < 16 rows): the native code keeps the reference's
    element order (lane by lane), so the same elements win; memory equals NumPy's replay of that order."""
    c = np.arange(256, dtype=np.float32).reshape(16, 16) + 0.5
    fn = mod.get_function("overlapping")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out = cuda.empty(16 * 16 + 64)
        return (cuda.to_device(c), out), [out]

    (out,), _, _ = on_both_executors(monkeypatch, lambda args: fn(1, 32, args), make)
    assert reference_calls["_shared_fast"] == ["reference"]  # the store: native there
    # C's load from global: on the reference in every run (the reference's, the native -O0 and -O3 runs)
    assert reference_calls["resolve_elements"] == ["reference", "native", "native"]
    want = np.full(16 * 16 + 64, -1.0, np.float32)
    for idx in range(256):  # lane l holds elements 8 l .. 8 l + 7 of the row-major matrix, stored in that order
        r, col = divmod(idx, 16)
        want[col * 4 + r] = c[r, col]
    assert out.tobytes() == want.tobytes()


def test_native_wmma_accumulator_from_a_parameter(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                                 reference_calls: dict[str, list[str]]) -> None:
    """C's elements all one kernel parameter's register (a launch invariant, which native code does not keep per
    lane): that wmma.mma runs on the reference, right on both executors launch after launch with other values."""
    a, b, _ = _operands(5, F16, F32)
    a, b = a[:16, :16], np.ascontiguousarray(b[:16, :16])
    fn = mod.get_function("param_acc")
    for c0 in (0.25, -3.5, 1e3):
        def make(c0: float = c0) -> tuple[tuple[Any, ...], list[Any]]:
            out = cuda.empty((16, 16))
            return (cuda.to_device(a), cuda.to_device(np.ascontiguousarray(b.T)), out, np.float32(c0)), [out]

        (out,), _, _ = on_both_executors(monkeypatch, lambda args: fn(1, 32, args), make)
        want = (a.astype(np.float64) @ b.astype(np.float64) + c0).astype(np.float32)
        assert out.tobytes() == want.tobytes()
    assert "native" in reference_calls["_product"]
