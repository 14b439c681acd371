"""strata.libs.blas level 3 in float32 and float64 (gemm, gemm_strided_batched, syrk, trsm), the handle,
argument checks and the kernel heuristic, against float64 NumPy.

Matrices live column-major on the device with leading dimensions larger than their rows where a
test says so; the padding holds NaN, so a kernel reading outside its matrix poisons the result.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.libs import blas
from strata.libs.blas import level3
from strata.libs.common import LibraryError

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
RNG = np.random.default_rng(1234)


@pytest.fixture(scope="module")
def h() -> Any:
    handle = blas.create_handle()
    yield handle
    blas.destroy_handle(handle)


def put(a: np.ndarray, ld: int | None = None, *, batch_stride: int | None = None, pad: float = np.nan) -> Any:
    """Column-major device copy of a (rows, cols) matrix, or a (batch, rows, cols) stack, with leading
    dimension `ld` and batch stride (elements); everything else holds `pad`."""
    stack = a[None] if a.ndim == 2 else a
    nb, rows, cols = stack.shape
    ld = ld or max(rows, 1)
    stride = batch_stride if batch_stride is not None else ld * cols
    flat = np.full(max((nb - 1) * stride + ld * cols, 1), pad, a.dtype)
    for i, x in enumerate(stack):
        view = flat[i * stride: i * stride + ld * cols].reshape(cols, ld)
        view[:, :rows] = x.T
    return cuda.to_device(flat)


def get(d: Any, rows: int, cols: int, ld: int | None = None, *, batch: int | None = None,
        batch_stride: int | None = None) -> np.ndarray:
    """The (rows, cols) matrix (or (batch, rows, cols) stack) a column-major device array holds."""
    flat = d.get()
    ld = ld or max(rows, 1)
    stride = batch_stride if batch_stride is not None else ld * cols
    out = [flat[i * stride: i * stride + ld * cols].reshape(cols, ld)[:, :rows].T for i in range(batch or 1)]
    return np.stack(out) if batch is not None else out[0]


def op(x: np.ndarray, t: str) -> np.ndarray:
    return x if t == "N" else np.swapaxes(x, -1, -2)


def check_gemm(got: np.ndarray, alpha: float, a: np.ndarray, b: np.ndarray, beta: float, c: np.ndarray,
               dtype: np.dtype) -> None:
    """|got - exact| <= 2 (k + 2) eps (|alpha| |A| |B| + |beta C|): the rounding-error bound of a dot
    product in any order, with alpha, beta and the final rounding; exact shape and dtype."""
    a64, b64, c64 = (x.astype(np.float64) for x in (a, b, c))
    want = alpha * (a64 @ b64) + (beta * c64 if beta != 0 else 0)
    k = a.shape[-1]
    eps = np.finfo(dtype).eps
    bound = 2 * (k + 2) * eps * (abs(alpha) * (np.abs(a64) @ np.abs(b64)) + np.abs(beta * c64)) + 1e-300
    assert got.shape == want.shape and got.dtype == dtype
    assert np.all(np.abs(got - want) <= bound), f"max err/bound {np.max(np.abs(got - want) / bound):.3g}"


def rand(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(dtype)


# -- gemm: every kernel, every transpose pair, padded leading dimensions
@pytest.mark.parametrize("kernel", ["gemm_tiled", "gemm_small", "gemm_splitk"])
@pytest.mark.parametrize(("ta", "tb"), [("N", "N"), ("N", "T"), ("T", "N"), ("T", "T"), ("C", "N"), ("N", "C")])
def test_gemm_each_kernel_and_transpose(h: Any, kernel: str, ta: str, tb: str) -> None:
    m, n, k = 65, 33, 130
    a, b, c = rand(*((m, k) if ta == "N" else (k, m))), rand(*((k, n) if tb == "N" else (n, k))), rand(m, n)
    lda, ldb, ldc = a.shape[0] + 3, b.shape[0] + 1, m + 2
    da, db, dc = put(a, lda), put(b, ldb), put(c, ldc)
    ran = level3.gemm_dispatch(h, "gemm", ta, tb, m, n, k, 1.5, da, lda, db, ldb, -0.5, dc, ldc, kernel=kernel)
    assert ran.split("+")[0] == kernel and h.last_kernel == ran
    check_gemm(get(dc, m, n, ldc), 1.5, op(a, ta), op(b, tb), -0.5, c, F32)
    assert np.isnan(dc.get().reshape(n, ldc)[:, m:]).all()  # the padding of C is not written


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("ta", "tb"), [("N", "N"), ("N", "T"), ("T", "N"), ("T", "T")])
def test_gemm_tiled_vector_staging(h: Any, dtype: Any, ta: str, tb: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Leading dimensions that keep columns 16-byte aligned let interior tiles load 16 bytes at a
    time; the last row and column of tiles still take the element path."""
    monkeypatch.setattr(level3, "TILED_VECTOR_LOADS", True)
    m, n, k = 130, 70, 96
    a, b, c = rand(*((m, k) if ta == "N" else (k, m)), dtype=dtype), rand(*((k, n) if tb == "N" else (n, k)),
                                                                          dtype=dtype), rand(m, n, dtype=dtype)
    lda, ldb = -(-a.shape[0] // 4) * 4, -(-b.shape[0] // 4) * 4
    assert level3.tensor.vector_flags(np.dtype(dtype), 0, lda, 0, 0, ldb, 0) == 3
    dc = put(c)
    level3.gemm_dispatch(h, "gemm", ta, tb, m, n, k, 1.0, put(a, lda), lda, put(b, ldb), ldb, 1.0, dc, m,
                         kernel="gemm_tiled")
    check_gemm(get(dc, m, n), 1.0, op(a, ta), op(b, tb), 1.0, c, np.dtype(dtype))


@pytest.mark.parametrize(("m", "n", "k"), [(1, 1, 1), (7, 1, 33), (1, 65, 7), (33, 7, 1), (130, 65, 33)])
def test_gemm_odd_shapes_heuristic(h: Any, m: int, n: int, k: int) -> None:
    a, b, c = rand(m, k), rand(k, n), rand(m, n)
    dc = put(c)
    blas.gemm(h, "N", "N", m, n, k, 0.75, put(a), m, put(b), k, 2.0, dc, m)
    check_gemm(get(dc, m, n), 0.75, a, b, 2.0, c, F32)


def test_gemm_256_cubed_tiled(h: Any) -> None:
    a, b = rand(256, 256), rand(256, 256)
    dc = cuda.to_device(np.full(256 * 256, np.nan, np.float32))
    blas.gemm(h, "N", "T", 256, 256, 256, 1.0, put(a), 256, put(b.T.copy()), 256, 0.0, dc, 256)
    assert h.last_kernel == ("gemm_mfma" if h.device.spec.vendor == "amd" else "gemm_tiled")  # rocBLAS: matrix cores
    check_gemm(get(dc, 256, 256), 1.0, a, b, 0.0, np.zeros((256, 256), np.float32), F32)


@pytest.mark.parametrize("kernel", ["gemm_tiled", "gemm_small", "gemm_splitk"])
def test_dgemm(h: Any, kernel: str) -> None:
    m, n, k = 33, 65, 70
    a, b, c = rand(k, m, dtype=np.float64), rand(k, n, dtype=np.float64), rand(m, n, dtype=np.float64)
    dc = put(c)
    level3.gemm_dispatch(h, "gemm", "T", "N", m, n, k, -1.25, put(a), k, put(b), k, 0.5, dc, m, kernel=kernel)
    check_gemm(get(dc, m, n), -1.25, a.T, b, 0.5, c, F64)


# -- alpha/beta rules and quick returns
@pytest.mark.parametrize("kernel", ["gemm_tiled", "gemm_small", "gemm_splitk"])
def test_beta_zero_ignores_nan_in_c(h: Any, kernel: str) -> None:
    m, n, k = 40, 20, 24
    a, b = rand(m, k), rand(k, n)
    c = np.full((m, n), np.nan, np.float32)
    c[0, 0] = np.inf
    dc = put(c)
    level3.gemm_dispatch(h, "gemm", "N", "N", m, n, k, 1.0, put(a), m, put(b), k, 0.0, dc, m, kernel=kernel)
    check_gemm(get(dc, m, n), 1.0, a, b, 0.0, np.zeros_like(c), F32)


@pytest.mark.parametrize(("alpha", "beta", "k"), [(0.0, 0.0, 5), (0.0, 2.0, 5), (1.0, -3.0, 0), (0.0, 1.0, 5)])
def test_alpha_zero_or_k_zero_scales_c(h: Any, alpha: float, beta: float, k: int) -> None:
    m, n = 9, 5
    a = np.full((m, max(k, 1)), np.nan, np.float32)  # not referenced
    c = rand(m, n)
    dc = put(c, m + 1)
    blas.gemm(h, "N", "N", m, n, k, alpha, put(a), m, put(a.T.copy()), max(k, 1), beta, dc, m + 1)
    got = get(dc, m, n, m + 1)
    np.testing.assert_array_equal(got, (np.float32(beta) * c) if beta != 0 else np.zeros_like(c))
    assert h.last_kernel == (None if beta == 1 else "scale_matrix")


@pytest.mark.parametrize(("m", "n"), [(0, 4), (4, 0)])
def test_zero_size_touches_nothing(h: Any, m: int, n: int) -> None:
    c = np.full(16, 7.0, np.float32)
    dc = cuda.to_device(c)
    blas.gemm(h, "N", "N", m, n, 3, 1.0, cuda.zeros(16), 4, cuda.zeros(16), 3, 0.0, dc, 4)
    np.testing.assert_array_equal(dc.get(), c)
    assert h.last_kernel is None


# -- strided batched
@pytest.mark.parametrize("kernel", ["gemm_tiled", "gemm_small", "gemm_splitk"])
def test_gemm_strided_batched(h: Any, kernel: str) -> None:
    batch, m, n, k = 3, 33, 17, 40
    a, b, c = rand(batch, m, k), rand(batch, n, k), rand(batch, m, n)
    sa, sb, sc = m * k + 5, n * k + 3, m * n + 7  # gaps between matrices hold NaN
    da, db, dc = put(a, batch_stride=sa), put(b, batch_stride=sb), put(c, batch_stride=sc)
    level3.gemm_dispatch(h, "gemm_strided_batched", "N", "T", m, n, k, 2.0, da, m, db, n, 0.5, dc, m, stride_a=sa,
                         stride_b=sb, stride_c=sc, batch=batch, kernel=kernel)
    got = get(dc, m, n, batch=batch, batch_stride=sc)
    for i in range(batch):
        check_gemm(got[i], 2.0, a[i], b[i].T, 0.5, c[i], F32)
    flat = dc.get()
    assert np.isnan(flat[m * n: sc]).all() and np.isnan(flat[sc + m * n: 2 * sc]).all()


def test_gemm_strided_batched_broadcast_a(h: Any) -> None:
    batch, m, n, k = 4, 20, 9, 11
    a, b = rand(m, k), rand(batch, k, n)
    dc = cuda.zeros(batch * m * n)
    blas.gemm_strided_batched(h, "N", "N", m, n, k, 1.0, put(a), m, 0, put(b), k, k * n, 0.0, dc, m, m * n, batch)
    got = get(dc, m, n, batch=batch)
    for i in range(batch):
        check_gemm(got[i], 1.0, a, b[i], 0.0, np.zeros((m, n), np.float32), F32)


# -- syrk: the triangle and nothing else
@pytest.mark.parametrize("uplo", ["U", "L"])
@pytest.mark.parametrize("trans", ["N", "T"])
def test_syrk(h: Any, uplo: str, trans: str) -> None:
    n, k = 70, 33
    a = rand(n, k) if trans == "N" else rand(k, n)
    c = rand(n, n)
    ldc = n + 2
    dc = put(c, ldc)
    blas.syrk(h, uplo, trans, n, k, 0.5, put(a, a.shape[0] + 1), a.shape[0] + 1, 2.0, dc, ldc)
    got = get(dc, n, n, ldc)
    opa = op(a, trans)
    tri = np.triu(np.ones((n, n), bool)) if uplo == "U" else np.tril(np.ones((n, n), bool))
    want = 0.5 * opa.astype(np.float64) @ opa.T + 2.0 * c
    bound = 2 * (k + 2) * np.finfo(np.float32).eps * (0.5 * np.abs(opa) @ np.abs(opa.T) + 2 * np.abs(c))
    assert np.all(np.abs(got - want)[tri] <= bound[tri])
    np.testing.assert_array_equal(got[~tri], c[~tri])  # the other triangle is untouched


@pytest.mark.parametrize("kernel", ["gemm_small", "gemm_splitk", "gemm_tiled"])
def test_triangle_fill_on_every_kernel(h: Any, kernel: str) -> None:
    n, k = 40, 600
    a, c = rand(n, k), rand(n, n)
    da, dc = put(a), put(c)
    p = level3.GemmProblem("syrk", 0, 1, n, n, k, 1.0, da.ptr, n, 0, da.ptr, n, 0, 1.0, dc.ptr, n, 0, 1, F32, F32,
                           fill=2)
    level3.run_gemm(h, p, kernel)
    got = get(dc, n, n)
    low = np.tril(np.ones((n, n), bool))
    want = a.astype(np.float64) @ a.T + c
    assert np.allclose(got[low], want[low], rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(got[~low], c[~low])


# -- trsm: every side/uplo/trans/diag on well-conditioned triangles
def triangular(n: int, upper: bool, dtype: Any) -> np.ndarray:
    a = RNG.uniform(-1, 1, (n, n)) / n + np.diag(RNG.uniform(1.5, 2.5, n))
    a = np.triu(a) if upper else np.tril(a)
    # the unused triangle holds NaN: trsm must not read it
    return np.where(np.triu(np.ones((n, n), bool)) if upper else np.tril(np.ones((n, n), bool)), a, np.nan).astype(
        dtype)


@pytest.mark.parametrize("side", ["L", "R"])
@pytest.mark.parametrize("uplo", ["U", "L"])
@pytest.mark.parametrize("trans", ["N", "T"])
@pytest.mark.parametrize("diag", ["N", "U"])
def test_trsm(h: Any, side: str, uplo: str, trans: str, diag: str) -> None:
    m, n, alpha = 33, 7, 1.5
    na = m if side == "L" else n
    a = triangular(na, uplo == "U", np.float64)
    if diag == "U":
        np.fill_diagonal(a, np.nan)  # not read either
    b = rand(m, n, dtype=np.float64)
    db = put(b, m + 1)
    blas.trsm(h, side, uplo, trans, diag, m, n, alpha, put(a, na + 2), na + 2, db, m + 1)
    x = get(db, m, n, m + 1)
    t = np.nan_to_num(a, nan=0.0)
    if diag == "U":
        np.fill_diagonal(t, 1.0)
    t = op(t, trans)
    residual = t @ x - alpha * b if side == "L" else x @ t - alpha * b
    assert np.abs(residual).max() < 1e-12
    assert h.last_kernel == "trsm_kernel"


def test_trsm_float32_conjugate_and_alpha_zero(h: Any) -> None:
    m, n = 20, 5
    a = triangular(m, False, np.float32)
    b = rand(m, n)
    db = put(b)
    blas.trsm(h, "L", "L", "C", "N", m, n, 1.0, put(a), m, db, m)
    x = get(db, m, n)
    assert np.abs(np.nan_to_num(a, nan=0.0).T.astype(np.float64) @ x - b).max() < 1e-5
    db = put(b)
    blas.trsm(h, "L", "L", "N", "N", m, n, 0.0, put(a), m, db, m)
    np.testing.assert_array_equal(get(db, m, n), np.zeros((m, n), np.float32))


# -- argument checks (messages as BLAS words them)
def expect(status: str, message: str, fn: Any, *args: Any, **kwargs: Any) -> None:
    with pytest.raises(LibraryError) as info:
        fn(*args, **kwargs)
    assert info.value.status == status
    assert str(info.value) == message, str(info.value)


def test_gemm_bad_arguments(h: Any) -> None:
    x = cuda.zeros(64 * 64)
    inv, ns = "CUBLAS_STATUS_INVALID_VALUE", "CUBLAS_STATUS_NOT_SUPPORTED"
    expect(inv, "[gemm] lda must be >= max(1, m)=64, got 32", blas.gemm, h, "N", "N", 64, 4, 4, 1.0, x, 32, x, 4, 0.0,
           x, 64)
    expect(inv, "[gemm] lda must be >= max(1, k)=8, got 4", blas.gemm, h, "T", "N", 64, 4, 8, 1.0, x, 4, x, 8, 0.0,
           x, 64)
    expect(inv, "[gemm] ldb must be >= max(1, k)=8, got 7", blas.gemm, h, "N", "N", 4, 4, 8, 1.0, x, 4, x, 7, 0.0,
           x, 4)
    expect(inv, "[gemm] ldb must be >= max(1, n)=5, got 4", blas.gemm, h, "N", "T", 4, 5, 8, 1.0, x, 4, x, 4, 0.0,
           x, 4)
    expect(inv, "[gemm] ldc must be >= max(1, m)=4, got 3", blas.gemm, h, "N", "N", 4, 4, 4, 1.0, x, 4, x, 4, 0.0,
           x, 3)
    expect(inv, "[gemm] lda must be >= max(1, m)=1, got 0", blas.gemm, h, "N", "N", 0, 4, 4, 1.0, x, 0, x, 4, 0.0,
           x, 1)
    expect(inv, "[gemm] transa must be one of 'N', 'T', 'C', got 'X'", blas.gemm, h, "X", "N", 4, 4, 4, 1.0, x, 4,
           x, 4, 0.0, x, 4)
    expect(inv, "[gemm] transb must be one of 'N', 'T', 'C', got 'NT'", blas.gemm, h, "N", "NT", 4, 4, 4, 1.0, x, 4,
           x, 4, 0.0, x, 4)
    expect(inv, "[gemm] m must be >= 0, got -1", blas.gemm, h, "N", "N", -1, 4, 4, 1.0, x, 4, x, 4, 0.0, x, 4)
    expect(inv, "[gemm] k must be >= 0, got -2", blas.gemm, h, "N", "N", 4, 4, -2, 1.0, x, 4, x, 4, 0.0, x, 4)
    small = cuda.zeros(100)
    expect(inv, "[gemm] C is too small for a 64x2 matrix with ld=64: needs 512 bytes, has 400", blas.gemm, h, "N",
           "N", 64, 2, 1, 1.0, x, 64, x, 1, 0.0, small, 64)
    expect(inv, "[gemm] A is too small for a 20x10 matrix with ld=20: needs 800 bytes, has 400", blas.gemm, h, "N",
           "N", 20, 1, 10, 1.0, small, 20, x, 10, 0.0, x, 20)
    expect(inv, "[gemm] B must be float32, got float64", blas.gemm, h, "N", "N", 4, 4, 4, 1.0, x, 4,
           cuda.zeros(16, np.float64), 4, 0.0, x, 4)
    expect(ns, "[gemm] data type int32 is not supported (float32, float64, float16; bfloat16 through gemm_ex)",
           blas.gemm, h, "N", "N", 4, 4, 4, 1.0, cuda.zeros(16, np.int32), 4, x, 4, 0.0, x, 4)
    expect(inv, "[gemm] pass dtype= when A, B and C are all device addresses", blas.gemm, h, "N", "N", 4, 4, 4, 1.0,
           x.ptr, 4, x.ptr, 4, 0.0, x.ptr, 4)
    expect(inv, "[gemm_strided_batched] stride_b must be >= 0, got -16", blas.gemm_strided_batched, h, "N", "N", 4,
           4, 4, 1.0, x, 4, 16, x, 4, -16, 0.0, x, 4, 16, 2)
    expect(inv, "[gemm_strided_batched] C is too small for a 64x64 matrix with ld=64, 2 of them 4096 apart: needs "
           "32768 bytes, has 16384", blas.gemm_strided_batched, h, "N", "N", 64, 64, 1, 1.0, x, 64, 0, x, 1, 0, 0.0,
           x, 64, 4096, 2)


def test_level3_bad_arguments(h: Any) -> None:
    x = cuda.zeros(64)
    inv = "CUBLAS_STATUS_INVALID_VALUE"
    expect(inv, "[syrk] uplo must be one of 'U', 'L', got 'A'", blas.syrk, h, "A", "N", 4, 4, 1.0, x, 4, 0.0, x, 4)
    expect(inv, "[syrk] lda must be >= max(1, k)=6, got 5", blas.syrk, h, "U", "T", 4, 6, 1.0, x, 5, 0.0, x, 4)
    expect(inv, "[syrk] ldc must be >= max(1, n)=4, got 2", blas.syrk, h, "U", "N", 4, 2, 1.0, x, 4, 0.0, x, 2)
    expect(inv, "[trsm] side must be one of 'L', 'R', got 'X'", blas.trsm, h, "X", "U", "N", "N", 2, 2, 1.0, x, 2,
           x, 2)
    expect(inv, "[trsm] diag must be one of 'N', 'U', got 'Q'", blas.trsm, h, "L", "U", "N", "Q", 2, 2, 1.0, x, 2,
           x, 2)
    expect(inv, "[trsm] lda must be >= max(1, n)=5, got 3", blas.trsm, h, "R", "U", "N", "N", 3, 5, 1.0, x, 3, x, 3)
    expect(inv, "[trsm] ldb must be >= max(1, m)=3, got 2", blas.trsm, h, "L", "U", "N", "N", 3, 5, 1.0, x, 3, x, 2)
    expect("CUBLAS_STATUS_NOT_SUPPORTED", "[syrk] data type float16 is not supported (float32, float64)", blas.syrk,
           h, "U", "N", 2, 2, 1.0, cuda.zeros(4, np.float16), 2, 0.0, cuda.zeros(4, np.float16), 2)
    with pytest.raises(LibraryError, match="kernel must be one of"):
        level3.gemm_dispatch(h, "gemm", "N", "N", 2, 2, 2, 1.0, x, 2, x, 2, 0.0, x, 2, kernel="fastest")


# -- handle, stream, trace, heuristic
def test_handle_stream_and_destroy() -> None:
    s = cuda.Stream(non_blocking=True)
    h = blas.create_handle(s)
    a = rand(20, 20)
    dc = cuda.zeros(400)
    before = s.last
    blas.gemm(h, "N", "N", 20, 20, 20, 1.0, put(a), 20, put(a), 20, 0.0, dc, 20)
    assert s.last is not before  # queued on the handle's stream
    s.synchronize()
    check_gemm(get(dc, 20, 20), 1.0, a, a, 0.0, np.zeros((20, 20), np.float32), F32)
    blas.set_stream(h, None)
    assert h.stream is None
    with pytest.raises(LibraryError, match="must be a strata.cuda.Stream"):
        blas.set_stream(h, "stream 1")
    blas.destroy_handle(h)
    expect("CUBLAS_STATUS_NOT_INITIALIZED", "[gemm] the handle was destroyed", blas.gemm, h, "N", "N", 1, 1, 1, 1.0,
           dc, 1, dc, 1, 0.0, dc, 1)
    expect("CUBLAS_STATUS_NOT_INITIALIZED", "[syrk] handle must be a blas Handle from create_handle, got NoneType",
           blas.syrk, None, "U", "N", 1, 1, 1.0, dc, 1, 0.0, dc, 1)


def test_trace_names_api_vendor_functions_and_kernel(h: Any) -> None:
    a = rand(8, 8, dtype=np.float64)
    dc = cuda.zeros(64, np.float64)
    with trace.record() as rec:
        blas.gemm(h, "N", "N", 8, 8, 8, 1.0, put(a), 8, put(a), 8, 0.0, dc, 8)
    ev = [e for e in rec.events if e.layer == "L4"]
    assert len(ev) == 1 and ev[0].name == "blas.gemm"
    assert ev[0].args["cuda"] == "cublasDgemm" and ev[0].args["rocm"] == "rocblas_dgemm"
    assert ev[0].args["kernel"] == "gemm_small" == h.last_kernel
    launches = [e for e in rec.events if e.name in ("cudaLaunchKernel", "hipModuleLaunchKernel")]
    assert launches and all(e.correlation == ev[0].correlation for e in launches)


@pytest.mark.parametrize(("m", "n", "k", "want"), [
    (8, 8, 8, "gemm_small"), (2, 1000, 16, "gemm_small"), (64, 64, 4096, "gemm_splitk"), (16, 8, 512, "gemm_splitk"),
    (128, 128, 511, "gemm_tiled"), (256, 256, 4096, "gemm_tiled"), (33, 33, 1000, "gemm_splitk"),
    (100, 100, 300, "gemm_tiled"), (32, 32, 4096, "gemm_splitk"), (200, 100, 4096, "gemm_tiled"),
])
def test_heuristic(m: int, n: int, k: int, want: str) -> None:
    p = level3.GemmProblem("gemm", 0, 0, m, n, k, 1.0, 0, m, 0, 0, k, 0, 0.0, 0, m, 0, 1, F32, F32)
    assert level3.choose_kernel(p) == want


def test_heuristic_picks_split_k_for_tall_skinny(h: Any) -> None:
    m, n, k = 16, 12, 1100
    a, b = rand(m, k), rand(k, n)
    dc = cuda.to_device(np.full(m * n, np.nan, np.float32))
    blas.gemm(h, "N", "N", m, n, k, 1.0, put(a), m, put(b), k, 0.0, dc, m)
    assert h.last_kernel == "gemm_splitk+gemm_splitk_reduce"
    check_gemm(get(dc, m, n), 1.0, a, b, 0.0, np.zeros((m, n), np.float32), F32)
