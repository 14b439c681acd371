"""strata.libs.blas in reduced precision: gemm in float16 (cublasHgemm), gemm_ex with f16/bf16 inputs and
f32 or tf32 compute, on the SIMT kernels and on the tensor-core (WMMA) kernel when the device runs it.

Oracle: float64 NumPy on the same (exactly representable) inputs; tf32 inputs are rounded to 10
mantissa bits first, as the hardware reads them. Bound: the output type's rounding plus the f32
accumulation error 2 (k + 2) eps32 (|alpha| |A| |B| + |beta C|).
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata.libs import blas
from strata.libs.blas import level3, tensor
from strata.libs.common import LibraryError

F16, BF16, F32, F64 = (np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64))
RNG = np.random.default_rng(7)
TENSOR_OK, TENSOR_WHY = tensor.available()
needs_tensor_cores = pytest.mark.skipif(not TENSOR_OK, reason=f"tensor-core kernel does not run: {TENSOR_WHY}")


@pytest.fixture(scope="module")
def h() -> Any:
    handle = blas.create_handle()
    yield handle
    blas.destroy_handle(handle)


def put(a: np.ndarray, ld: int | None = None) -> Any:
    rows, cols = a.shape
    ld = ld or rows
    flat = np.zeros((cols, ld), a.dtype)
    flat[:, :rows] = a.T
    return cuda.to_device(flat.reshape(-1))


def get(d: Any, rows: int, cols: int, ld: int | None = None) -> np.ndarray:
    return d.get().reshape(cols, ld or rows)[:, :rows].T


def tf32(x: np.ndarray) -> np.ndarray:
    """Round float32 to TF32 (10 mantissa bits), to nearest with ties away from zero (cvt.rna.tf32.f32)."""
    bits = x.astype(np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def check(got: np.ndarray, alpha: float, a: np.ndarray, b: np.ndarray, beta: float, c: np.ndarray,
          out: np.dtype) -> None:
    a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
    want = alpha * (a64 @ b64) + beta * c64
    k = a.shape[1]
    acc_err = 2 * (k + 2) * np.finfo(np.float32).eps * (abs(alpha) * np.abs(a64) @ np.abs(b64) + np.abs(beta * c64))
    bound = float(ml_dtypes.finfo(out).eps) * np.abs(want) + acc_err + 1e-30
    assert got.dtype == out and got.shape == want.shape
    err = np.abs(got.astype(np.float64) - want)
    assert np.all(err <= bound), f"max err/bound {np.max(err / bound):.3g}"


def operands(ta: str, tb: str, m: int, n: int, k: int, ab: np.dtype, ct: np.dtype) -> tuple[np.ndarray, ...]:
    a = RNG.uniform(-1, 1, (m, k) if ta == "N" else (k, m)).astype(ab)
    b = RNG.uniform(-1, 1, (k, n) if tb == "N" else (n, k)).astype(ab)
    c = RNG.uniform(-1, 1, (m, n)).astype(ct)
    return a, b, c


def opx(x: np.ndarray, t: str) -> np.ndarray:
    return x if t == "N" else x.T


@pytest.mark.parametrize("kernel", ["gemm_tiled", "gemm_small", "gemm_splitk"])
def test_hgemm_accumulates_in_f32_rounds_once(h: Any, kernel: str) -> None:
    m, n, k = 65, 33, 40
    a, b, c = operands("T", "N", m, n, k, F16, F16)
    dc = put(c, m + 1)
    level3.gemm_dispatch(h, "gemm", "T", "N", m, n, k, 0.5, put(a), k, put(b), k, -1.0, dc, m + 1, kernel=kernel)
    check(get(dc, m, n, m + 1), 0.5, a.T, b, -1.0, c, F16)


def test_hgemm_public_entry(h: Any) -> None:
    m, n, k = 7, 9, 130
    a, b, c = operands("N", "N", m, n, k, F16, F16)
    dc = put(c)
    blas.gemm(h, "N", "N", m, n, k, 1.0, put(a), m, put(b), k, 0.0, dc, m)
    check(get(dc, m, n), 1.0, a, b, 0.0, np.zeros_like(c), F16)
    assert h.last_kernel in (("gemm_mfma",) if h.device.spec.vendor == "amd" else ("gemm_small", "gemm_wmma"))


@pytest.mark.parametrize(("ab", "ct"), [(F16, F32), (BF16, F32), (BF16, BF16)])
@pytest.mark.parametrize(("ta", "tb"), [("N", "N"), ("T", "T")])
def test_gemm_ex_half_types_on_simt(h: Any, ab: np.dtype, ct: np.dtype, ta: str, tb: str) -> None:
    m, n, k = 33, 65, 50
    a, b, c = operands(ta, tb, m, n, k, ab, ct)
    dc = put(c)
    level3.gemm_dispatch(h, "gemm_ex", ta, tb, m, n, k, 1.25, put(a), a.shape[0], put(b), b.shape[0], 0.5, dc, m,
                         dtype=ab, c_type=ct, kernel="gemm_tiled")
    check(get(dc, m, n), 1.25, opx(a, ta), opx(b, tb), 0.5, c, ct)


def test_gemm_ex_public_entry_and_tf32(h: Any) -> None:
    m, n, k = 40, 24, 64
    a, b, c = operands("N", "N", m, n, k, F32, F32)
    a[0, 0], b[0, 0] = 1 + 2.0 ** -12, 1 + 2.0 ** -12  # below TF32's precision: rounded away
    dc = put(c)
    blas.gemm_ex(h, "N", "N", m, n, k, 1.0, put(a), np.float32, m, put(b), np.float32, k, 0.0, dc, np.float32, m,
                 "tf32")
    check(get(dc, m, n), 1.0, tf32(a), tf32(b), 0.0, np.zeros_like(c), F32)
    d_bf = put(c.astype(ml_dtypes.bfloat16))
    a16, b16 = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    blas.gemm_ex(h, "N", "N", m, n, k, 2.0, put(a16), ml_dtypes.bfloat16, m, put(b16), ml_dtypes.bfloat16, k, 1.0,
                 d_bf, ml_dtypes.bfloat16, m, "f32")
    check(get(d_bf, m, n), 2.0, a16, b16, 1.0, c.astype(ml_dtypes.bfloat16), BF16)


def test_gemm_ex_unsupported_combinations(h: Any) -> None:
    x16, x32 = cuda.zeros(16, np.float16), cuda.zeros(16)
    for a_t, c_t, comp in ((np.float16, np.float16, "f16"), (np.float16, np.float64, "f32"), (np.float32, np.float32,
                                                                                             "f64"),
                           (np.int8, np.int32, "f32")):
        with pytest.raises(LibraryError) as info:
            blas.gemm_ex(h, "N", "N", 4, 4, 4, 1.0, x16, a_t, 4, x16, a_t, 4, 0.0, x32, c_t, 4, comp)
        assert info.value.status == "CUBLAS_STATUS_NOT_SUPPORTED" and "is not supported" in str(info.value)
    with pytest.raises(LibraryError, match=r"\[gemm_ex\] A must be bfloat16, got float16") as info:
        blas.gemm_ex(h, "N", "N", 4, 4, 4, 1.0, x16, ml_dtypes.bfloat16, 4, x16, ml_dtypes.bfloat16, 4, 0.0, x32,
                     np.float32, 4, "f32")
    assert info.value.status == "CUBLAS_STATUS_INVALID_VALUE"


def test_tensor_cores_flag_routes_half_types(monkeypatch: pytest.MonkeyPatch) -> None:
    p = level3.GemmProblem("gemm_ex", 0, 0, 256, 256, 256, 1.0, 0, 256, 0, 0, 256, 0, 0.0, 0, 256, 0, 1, BF16, F32)
    monkeypatch.setattr(tensor, "ENABLED", False)
    assert level3.choose_kernel(p) == "gemm_tiled"
    assert level3.choose_kernel(p, tensor_ok=True) == "gemm_wmma"
    assert level3.choose_kernel(level3.GemmProblem(**{**p.__dict__, "ab": F32, "ct": F32}), tensor_ok=True) \
        == "gemm_tiled"  # plain f32 never goes to the tensor cores
    monkeypatch.setattr(tensor, "ENABLED", True)
    assert level3.choose_kernel(p) == ("gemm_wmma" if TENSOR_OK else "gemm_tiled")


# -- the tensor-core kernel itself
@needs_tensor_cores
@pytest.mark.parametrize(("ab", "ct"), [(F16, F16), (F16, F32), (BF16, BF16), (BF16, F32)])
@pytest.mark.parametrize(("ta", "tb"), [("N", "N"), ("T", "N"), ("N", "T"), ("T", "T")])
def test_wmma_kernel(h: Any, ab: np.dtype, ct: np.dtype, ta: str, tb: str) -> None:
    m, n, k = 70, 33, 40  # edges in every dimension
    a, b, c = operands(ta, tb, m, n, k, ab, ct)
    dc = put(c, m + 2)
    ran = level3.gemm_dispatch(h, "gemm_ex", ta, tb, m, n, k, 1.5, put(a), a.shape[0], put(b), b.shape[0], -0.5, dc,
                               m + 2, dtype=ab, c_type=ct, kernel="gemm_wmma")
    assert ran == "gemm_wmma" == h.last_kernel
    check(get(dc, m, n, m + 2), 1.5, opx(a, ta), opx(b, tb), -0.5, c, ct)


@needs_tensor_cores
@pytest.mark.parametrize("ab", [BF16, F32])
@pytest.mark.parametrize(("ta", "tb"), [("N", "N"), ("T", "N"), ("N", "T"), ("T", "T")])
@pytest.mark.parametrize("pad", [0, 1])
def test_wmma_vector_staging(h: Any, ab: np.dtype, ta: str, tb: str, pad: int) -> None:
    """Full 64x64 tiles with 16-byte aligned columns take the vector-load path (pad 0); a padded
    leading dimension (pad 1) misaligns them and takes the element path; both must agree with NumPy."""
    m, n, k = 128, 64, 48
    a, b, c = operands(ta, tb, m, n, k, ab, F32)
    assert level3.tensor.vector_flags(ab, 0, a.shape[0] + pad, 0, 0, b.shape[0] + pad, 0) == (0 if pad else 3)
    dc = put(c)
    level3.gemm_dispatch(h, "gemm_ex", ta, tb, m, n, k, 1.0, put(a, a.shape[0] + pad), a.shape[0] + pad,
                         put(b, b.shape[0] + pad), b.shape[0] + pad, 1.0, dc, m, dtype=ab, c_type=F32,
                         tf32=ab == F32, kernel="gemm_wmma")
    ra, rb = (tf32(a), tf32(b)) if ab == F32 else (a, b)
    check(get(dc, m, n), 1.0, opx(ra, ta), opx(rb, tb), 1.0, c, F32)


@needs_tensor_cores
def test_wmma_tf32_batched_and_beta_zero(h: Any) -> None:
    batch, m, n, k = 2, 64, 48, 72
    a = RNG.uniform(-1, 1, (batch, m, k)).astype(np.float32)
    b = RNG.uniform(-1, 1, (batch, k, n)).astype(np.float32)
    da = cuda.to_device(np.concatenate([x.T.reshape(-1) for x in a]))
    db = cuda.to_device(np.concatenate([x.T.reshape(-1) for x in b]))
    dc = cuda.to_device(np.full(batch * m * n, np.nan, np.float32))
    level3.gemm_dispatch(h, "gemm_strided_batched", "N", "N", m, n, k, 1.0, da, m, db, k, 0.0, dc, m, stride_a=m * k,
                         stride_b=k * n, stride_c=m * n, batch=batch, tf32=True, kernel="gemm_wmma")
    got = dc.get().reshape(batch, n, m)
    for i in range(batch):
        check(got[i].T, 1.0, tf32(a[i]), tf32(b[i]), 0.0, np.zeros((m, n), np.float32), F32)


def test_wmma_rejects_plain_f32(h: Any) -> None:
    x = cuda.zeros(16)
    why = "does not run on AMD" if h.device.spec.vendor == "amd" else "tensor-core kernel takes f16/bf16 or tf32"
    with pytest.raises(LibraryError, match=why):
        level3.gemm_dispatch(h, "gemm", "N", "N", 4, 4, 4, 1.0, x, 4, x, 4, 0.0, x, 4, kernel="gemm_wmma")
