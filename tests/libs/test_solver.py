"""strata.libs.solver (getrf/getrs, potrf/potrs, geqrf/orgqr) in float32 and float64 against NumPy: residuals,
LAPACK's pivots (an independent NumPy dgetf2), LAPACK's Householder vectors and tau (numpy.linalg.qr
mode='raw' calls dgeqrf), `info` for singular and non-positive-definite input, bad arguments.

Matrices live column-major on the device; where lda > rows the padding holds NaN and is checked to be
left alone, so a kernel touching outside its matrix fails the test.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.libs import solver
from strata.libs.common import LibraryError

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
RNG = np.random.default_rng(2024)
TOL = {F32: 1e-4, F64: 1e-11}


@pytest.fixture(scope="module")
def h() -> Any:
    handle = solver.create_handle()
    yield handle
    solver.destroy_handle(handle)


def put(a: np.ndarray, ld: int | None = None) -> cuda.DeviceArray:
    """Column-major device copy of a (rows, cols) matrix with leading dimension ld; padding is NaN."""
    rows, cols = a.shape
    ld = ld or max(rows, 1)
    flat = np.full(max(ld * cols, 1), np.nan, a.dtype)
    flat[: ld * cols].reshape(cols, ld)[:, :rows] = a.T
    return cuda.to_device(flat)


def get(d: cuda.DeviceArray, rows: int, cols: int, ld: int | None = None) -> np.ndarray:
    """The (rows, cols) matrix of a column-major device array; asserts the padding is still NaN."""
    ld = ld or max(rows, 1)
    full = d.get()[: ld * cols].reshape(cols, ld).T
    assert np.isnan(full[rows:]).all(), "the padding below the matrix was written"
    return full[:rows].copy()


def info_array(value: int = 12345) -> cuda.DeviceArray:
    """A device info with a value the call must overwrite."""
    return cuda.to_device(np.array([value], np.int32))


def lu_reference(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """dgetf2 in NumPy (float64): LU in one array, 1-based ipiv, info."""
    a = a.astype(np.float64).copy()
    m, n = a.shape
    ipiv, info = np.zeros(min(m, n), np.int32), 0
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))  # argmax returns the first maximum, as idamax
        ipiv[j] = p + 1
        if a[p, j] != 0:
            a[[j, p]] = a[[p, j]]
            a[j + 1:, j] /= a[j, j]
        elif info == 0:
            info = j + 1
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return a, ipiv, info


def permute(a: np.ndarray, ipiv: np.ndarray) -> np.ndarray:
    """P^T a: the rows of a interchanged as ipiv says, in order."""
    a = a.copy()
    for j, p in enumerate(ipiv - 1):
        a[[j, p]] = a[[p, j]]
    return a


def split_lu(lu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unit lower L (m x k) and upper U (k x n) of a packed m x n LU."""
    m, n = lu.shape
    k = min(m, n)
    return np.tril(lu, -1)[:, :k] + np.eye(m, k), np.triu(lu)[:k]


def spd(n: int, dtype: np.dtype) -> np.ndarray:
    """A well-conditioned symmetric positive definite matrix."""
    g = RNG.standard_normal((n, n))
    return (g @ g.T / n + np.eye(n)).astype(dtype)


# ---- getrf ----

@pytest.mark.parametrize(("n", "dtype"), [(1, F64), (2, F64), (7, F64), (33, F64), (100, F64), (2, F32), (7, F32),
                                          (33, F32)])
def test_getrf_square_matches_lapack_pivots_and_reconstructs(h: Any, n: int, dtype: np.dtype) -> None:
    a = RNG.standard_normal((n, n)).astype(dtype)
    d_a, ipiv, info = put(a), cuda.zeros(n, np.int32), info_array()
    solver.getrf(h, n, n, d_a, n, ipiv, info)
    lu, piv = get(d_a, n, n), ipiv.get()
    assert lu.dtype == dtype and piv.dtype == np.int32 and piv.shape == (n,)
    assert int(info.get()[0]) == 0
    ref_lu, ref_piv, _ = lu_reference(a)
    np.testing.assert_array_equal(piv, ref_piv)
    np.testing.assert_allclose(lu, ref_lu, rtol=0, atol=TOL[dtype] * 10 * n)
    low, up = split_lu(lu.astype(np.float64))
    np.testing.assert_allclose(low @ up, permute(a.astype(np.float64), piv), atol=TOL[dtype] * n)
    assert h.last_kernel == f"{'d' if dtype == F64 else 's'}getrf_block"


@pytest.mark.parametrize(("m", "n", "lda"), [(7, 3, 9), (3, 7, 5), (40, 17, 41), (17, 40, 20), (1, 5, 3), (5, 1, 8),
                                        (150, 6, 151)])  # > 128 rows: the kernels' plain-loop path
def test_getrf_rectangular_with_padded_lda(h: Any, m: int, n: int, lda: int) -> None:
    a = RNG.standard_normal((m, n))
    d_a, ipiv, info = put(a, lda), cuda.zeros(min(m, n), np.int32), info_array()
    solver.getrf(h, m, n, d_a, lda, ipiv, info)
    lu, piv = get(d_a, m, n, lda), ipiv.get()
    ref_lu, ref_piv, _ = lu_reference(a)
    np.testing.assert_array_equal(piv, ref_piv)
    assert int(info.get()[0]) == 0
    low, up = split_lu(lu)
    assert low.shape == (m, min(m, n)) and up.shape == (min(m, n), n)
    np.testing.assert_allclose(low @ up, permute(a, piv), atol=1e-12)
    np.testing.assert_allclose(lu, ref_lu, atol=1e-12)


@pytest.mark.parametrize(("n", "zero_cols", "want"), [(5, [2], 3), (8, [6, 3], 4), (4, [0], 1), (6, [5], 6)])
def test_getrf_info_reports_first_zero_pivot_and_completes(h: Any, n: int, zero_cols: list[int], want: int) -> None:
    a = RNG.standard_normal((n, n))
    a[:, zero_cols] = 0.0
    d_a, ipiv, info = put(a), cuda.zeros(n, np.int32), info_array()
    solver.getrf(h, n, n, d_a, n, ipiv, info)
    lu, piv = get(d_a, n, n), ipiv.get()
    ref_lu, ref_piv, ref_info = lu_reference(a)
    assert int(info.get()[0]) == ref_info == want
    assert lu[want - 1, want - 1] == 0.0
    np.testing.assert_array_equal(piv, ref_piv)
    low, up = split_lu(lu)  # the factorization still completed: P L U == A
    np.testing.assert_allclose(low @ up, permute(a, piv), atol=1e-12)
    assert np.isfinite(lu).all()


# ---- getrs ----

@pytest.mark.parametrize(("trans", "n", "nrhs", "ldb", "dtype"), [
    ("N", 1, 1, 1, F64), ("N", 7, 3, 9, F64), ("T", 7, 3, 7, F64), ("C", 33, 2, 40, F64), ("T", 100, 1, 100, F64),
    ("N", 33, 4, 33, F32), ("t", 7, 2, 8, F32), ("N", 100, 2, 101, F64),
])
def test_getrs_solves_with_transposes(h: Any, trans: str, n: int, nrhs: int, ldb: int, dtype: np.dtype) -> None:
    a = (RNG.standard_normal((n, n)) + 2 * np.eye(n)).astype(dtype)
    b = RNG.standard_normal((n, nrhs)).astype(dtype)
    lda = n + 2
    d_a, ipiv, info = put(a, lda), cuda.zeros(n, np.int32), info_array()
    solver.getrf(h, n, n, d_a, lda, ipiv, info)
    d_b = put(b, ldb)
    info2 = info_array()
    solver.getrs(h, trans, n, nrhs, d_a, lda, ipiv, d_b, ldb, info2)
    x = get(d_b, n, nrhs, ldb)
    assert x.dtype == dtype and x.shape == (n, nrhs) and int(info2.get()[0]) == 0
    op = a.astype(np.float64) if trans == "N" else a.astype(np.float64).T
    want = np.linalg.solve(op, b.astype(np.float64))
    cond = np.linalg.cond(op)
    np.testing.assert_allclose(x, want, atol=TOL[dtype] * cond * 10)
    resid = np.abs(op @ x - b).max() / (np.abs(op).max() * max(np.abs(x).max(), 1) * n)
    assert resid < (1e-6 if dtype == F32 else 1e-14)


# ---- potrf / potrs ----

@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize(("n", "dtype"), [(1, F64), (2, F64), (7, F64), (33, F64), (100, F64), (7, F32), (33, F32)])
def test_potrf_matches_cholesky_and_keeps_other_triangle(h: Any, uplo: str, n: int, dtype: np.dtype) -> None:
    a = spd(n, dtype)
    lda = n + 1
    marker = np.full((n, n), 777.0, dtype)
    stored = np.where(np.tril(np.ones((n, n), bool)) if uplo == "L" else np.triu(np.ones((n, n), bool)), a, marker)
    d_a, info = put(stored, lda), info_array()
    solver.potrf(h, uplo, n, d_a, lda, info)
    out = get(d_a, n, n, lda)
    assert out.dtype == dtype and int(info.get()[0]) == 0
    want = np.linalg.cholesky(a.astype(np.float64))
    if uplo == "L":
        got, other = np.tril(out), out[np.triu_indices(n, 1)]
    else:
        got, other = np.triu(out).T, out[np.tril_indices(n, -1)]
    assert (other == 777.0).all(), "the other triangle was written"
    np.testing.assert_allclose(got, want, atol=TOL[dtype] * 10)


@pytest.mark.parametrize(("uplo", "diag", "want"), [("L", [1.0, 2.0, -1.0, 4.0], 3), ("U", [0.0, 1.0], 1),
                                                     ("L", [3.0, 2.0, 1.0, 5.0, np.nan], 5)])
def test_potrf_info_on_diagonal_matrices(h: Any, uplo: str, diag: list[float], want: int) -> None:
    n = len(diag)
    d_a, info = put(np.diag(diag)), info_array()
    solver.potrf(h, uplo, n, d_a, n, info)
    assert int(info.get()[0]) == want


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_potrf_info_names_the_first_leading_minor_not_positive_definite(h: Any, uplo: str) -> None:
    n = 9
    a = spd(n, F64)
    a[5, 5] -= 20.0  # minors of order 1..5 stay positive definite, order 6 does not
    minors_pd = [np.linalg.eigvalsh(a[:i, :i]).min() > 0 for i in range(1, n + 1)]
    want = minors_pd.index(False) + 1
    assert want == 6
    d_a, info = put(a), info_array()
    solver.potrf(h, uplo, n, d_a, n, info)
    assert int(info.get()[0]) == want
    # the columns before the failure hold the factor of the leading minor of order 5
    out = get(d_a, n, n)
    got = np.tril(out)[:5, :5] if uplo == "L" else np.triu(out)[:5, :5].T
    np.testing.assert_allclose(got, np.linalg.cholesky(a[:5, :5]), atol=1e-12)


@pytest.mark.parametrize(("uplo", "n", "nrhs", "dtype"), [("L", 7, 2, F64), ("U", 33, 3, F64), ("L", 100, 1, F64),
                                                          ("U", 7, 1, F32), ("L", 1, 2, F32)])
def test_potrs_solves(h: Any, uplo: str, n: int, nrhs: int, dtype: np.dtype) -> None:
    a = spd(n, dtype)
    b = RNG.standard_normal((n, nrhs)).astype(dtype)
    d_a, info = put(a), info_array()
    solver.potrf(h, uplo, n, d_a, n, info)
    d_b = put(b, n + 3)
    solver.potrs(h, uplo, n, nrhs, d_a, n, d_b, n + 3, info)
    x = get(d_b, n, nrhs, n + 3)
    assert x.dtype == dtype and int(info.get()[0]) == 0
    np.testing.assert_allclose(x, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)),
                               atol=TOL[dtype] * 100)


# ---- geqrf / orgqr ----

@pytest.mark.parametrize(("m", "n", "dtype"), [(1, 1, F64), (2, 2, F64), (7, 7, F64), (33, 20, F64), (20, 33, F64),
                                               (100, 100, F64), (7, 5, F32), (33, 33, F32), (5, 1, F64), (1, 4, F64),
                                               (150, 4, F64)])
def test_geqrf_matches_lapack_reflectors_and_tau(h: Any, m: int, n: int, dtype: np.dtype) -> None:
    a = RNG.standard_normal((m, n)).astype(dtype)
    lda, k = m + 1, min(m, n)
    d_a, tau, info = put(a, lda), cuda.zeros(k, dtype), info_array()
    solver.geqrf(h, m, n, d_a, lda, tau, info)
    out, t = get(d_a, m, n, lda), tau.get()
    assert out.dtype == dtype and t.dtype == dtype and t.shape == (k,) and int(info.get()[0]) == 0
    raw, ref_tau = np.linalg.qr(a.astype(np.float64), mode="raw")
    np.testing.assert_allclose(out, raw.T, atol=TOL[dtype] * 10)
    np.testing.assert_allclose(t, ref_tau, atol=TOL[dtype] * 10)


def householder_q(packed: np.ndarray, tau: np.ndarray, k: int, n: int) -> np.ndarray:
    """The first n columns of H_0 ... H_{k-1} built from explicit reflectors (float64)."""
    m = packed.shape[0]
    q = np.eye(m)
    for j in range(k):
        v = np.zeros(m)
        v[j] = 1.0
        v[j + 1:] = packed[j + 1:, j]
        q = q @ (np.eye(m) - tau[j] * np.outer(v, v))
    return q[:, :n]


@pytest.mark.parametrize(("m", "n", "dtype"), [(1, 1, F64), (2, 2, F64), (7, 7, F64), (33, 20, F64), (100, 100, F64),
                                               (7, 5, F32), (33, 33, F32), (150, 4, F64)])
def test_orgqr_gives_orthonormal_q_with_qr_equal_a(h: Any, m: int, n: int, dtype: np.dtype) -> None:
    a = RNG.standard_normal((m, n)).astype(dtype)
    lda = m + 2
    d_a, tau, info = put(a, lda), cuda.zeros(n, dtype), info_array()
    solver.geqrf(h, m, n, d_a, lda, tau, info)
    r = np.triu(get(d_a, m, n, lda))[:n]
    solver.orgqr(h, m, n, n, d_a, lda, tau, info)
    q = get(d_a, m, n, lda)
    assert q.dtype == dtype and int(info.get()[0]) == 0
    q64 = q.astype(np.float64)
    np.testing.assert_allclose(q64.T @ q64, np.eye(n), atol=TOL[dtype] * 10)
    np.testing.assert_allclose(q64 @ r, a, atol=TOL[dtype] * 10 * max(1, np.abs(a).max()))


def test_orgqr_with_fewer_reflectors_than_columns(h: Any) -> None:
    m, n, k = 12, 6, 3
    a = RNG.standard_normal((m, n))
    d_a, tau, info = put(a), cuda.zeros(n, np.float64), info_array()
    solver.geqrf(h, m, n, d_a, m, tau, info)
    packed, t = get(d_a, m, n), tau.get()
    solver.orgqr(h, m, n, k, d_a, m, tau, info)
    q = get(d_a, m, n)
    np.testing.assert_allclose(q, householder_q(packed, t, k, n), atol=1e-13)
    np.testing.assert_allclose(q.T @ q, np.eye(n), atol=1e-13)


# ---- arguments, quick returns, addresses, trace ----

def test_bad_lda_raises_and_sets_info(h: Any) -> None:
    d_a, ipiv, info = cuda.zeros(64 * 8, np.float32), cuda.zeros(8, np.int32), info_array(0)
    with pytest.raises(LibraryError) as e:
        solver.getrf(h, 64, 8, d_a, 32, ipiv, info)
    assert e.value.status == "CUSOLVER_STATUS_INVALID_VALUE"
    assert str(e.value) == "[getrf] lda must be >= max(1, m)=64, got 32"
    assert int(info.get()[0]) == -4


@pytest.mark.parametrize(("call", "want_info", "fragment"), [
    (lambda h, a, i, f: solver.getrf(h, -1, 4, a, 4, i, f), -1, "m must be >= 0, got -1"),
    (lambda h, a, i, f: solver.getrf(h, 4, -2, a, 4, i, f), -2, "n must be >= 0"),
    (lambda h, a, i, f: solver.getrf(h, 4, 4, a, 4, cuda.zeros(4, np.int64), f), -5, "ipiv must be int32"),
    (lambda h, a, i, f: solver.getrf(h, 5, 4, a, 5, i, f), -3, "A is too small"),
    (lambda h, a, i, f: solver.getrs(h, "X", 4, 1, a, 4, i, a, 4, f), -1, "trans must be one of 'N', 'T', 'C'"),
    (lambda h, a, i, f: solver.getrs(h, "N", 4, -1, a, 4, i, a, 4, f), -3, "nrhs must be >= 0"),
    (lambda h, a, i, f: solver.getrs(h, "N", 4, 1, a, 4, i, a, 3, f), -8, "ldb must be >= max(1, n)=4, got 3"),
    (lambda h, a, i, f: solver.potrf(h, "X", 4, a, 4, f), -1, "uplo must be one of 'U', 'L'"),
    (lambda h, a, i, f: solver.potrf(h, "L", 4, a, 2, f), -4, "lda must be >= max(1, n)=4, got 2"),
    (lambda h, a, i, f: solver.potrs(h, "L", 4, 1, a, 4, a, 0, f), -7, "ldb must be >= max(1, n)=4, got 0"),
    (lambda h, a, i, f: solver.geqrf(h, 4, 4, a, 4, cuda.zeros(4, np.float64), f), -5, "tau must be float32"),
    (lambda h, a, i, f: solver.orgqr(h, 2, 3, 1, a, 4, a, f), -2, "n must be <= m=2, got 3"),
    (lambda h, a, i, f: solver.orgqr(h, 4, 2, 3, a, 4, a, f), -3, "k must be <= n=2, got 3"),
    (lambda h, a, i, f: solver.orgqr(h, 4, 4, 4, a, 3, a, f), -5, "lda must be >= max(1, m)=4, got 3"),
])
def test_bad_arguments(h: Any, call: Any, want_info: int, fragment: str) -> None:
    a, ipiv, info = cuda.zeros(16, np.float32), cuda.zeros(4, np.int32), info_array(0)
    with pytest.raises(LibraryError) as e:
        call(h, a, ipiv, info)
    assert e.value.status == "CUSOLVER_STATUS_INVALID_VALUE"
    assert fragment in str(e.value)
    assert int(info.get()[0]) == want_info


def test_unsupported_dtype_destroyed_handle_and_bad_info(h: Any) -> None:
    info = info_array(0)
    with pytest.raises(LibraryError) as e:
        solver.potrf(h, "L", 2, cuda.zeros(4, np.float16), 2, info)
    assert e.value.status == "CUSOLVER_STATUS_NOT_SUPPORTED"
    with pytest.raises(LibraryError, match="info must be int32"):
        solver.potrf(h, "L", 2, cuda.zeros(4, np.float32), 2, cuda.zeros(1, np.int64))
    dead = solver.create_handle()
    solver.destroy_handle(dead)
    with pytest.raises(LibraryError) as e:
        solver.potrf(dead, "L", 2, cuda.zeros(4, np.float32), 2, info)
    assert e.value.status == "CUSOLVER_STATUS_NOT_INITIALIZED"
    with pytest.raises(LibraryError) as e:
        solver.getrf(object(), 2, 2, cuda.zeros(4, np.float32), 2, cuda.zeros(2, np.int32), info)
    assert e.value.status == "CUSOLVER_STATUS_NOT_INITIALIZED"


def test_quick_returns_write_info_zero(h: Any) -> None:
    a = cuda.zeros(4, np.float64)
    for call in (lambda f: solver.getrf(h, 0, 3, a, 1, cuda.zeros(1, np.int32), f),
                 lambda f: solver.getrs(h, "N", 2, 0, a, 2, cuda.zeros(2, np.int32), a, 2, f),
                 lambda f: solver.potrf(h, "U", 0, a, 1, f),
                 lambda f: solver.geqrf(h, 3, 0, a, 3, cuda.zeros(1, np.float64), f),
                 lambda f: solver.orgqr(h, 2, 0, 0, a, 2, a, f)):
        info = info_array(99)
        call(info)
        assert int(info.get()[0]) == 0
    assert h.last_kernel == "set_info"


def test_device_addresses_with_dtype_and_buffer_sizes(h: Any) -> None:
    n = 6
    a = RNG.standard_normal((n, n))
    d_a, ipiv, info = put(a), cuda.zeros(n, np.int32), info_array()
    assert solver.getrf_buffer_size(h, n, n, d_a.ptr, n, dtype=np.float64) == 0
    solver.getrf(h, n, n, d_a.ptr, n, ipiv.ptr, info.ptr, dtype=np.float64)
    assert int(info.get()[0]) == 0
    np.testing.assert_array_equal(ipiv.get(), lu_reference(a)[1])
    assert solver.potrf_buffer_size(h, "L", n, d_a, n) == 0
    assert solver.geqrf_buffer_size(h, n, n, d_a, n) == 0
    assert solver.orgqr_buffer_size(h, n, n, n, d_a, n, cuda.zeros(n, np.float64)) == 0
    with pytest.raises(LibraryError, match="lda must be >= max"):
        solver.geqrf_buffer_size(h, n, n, d_a, n - 1)


def test_handle_stream_orders_the_calls_and_trace_names_vendor_functions() -> None:
    s = cuda.Stream()
    hs = solver.create_handle(s)
    n = 5
    a = spd(n, F32)
    b = RNG.standard_normal((n, 1)).astype(np.float32)
    d_a, d_b, info = put(a), put(b), info_array()
    with trace.record() as rec:
        solver.potrf(hs, "U", n, d_a, n, info)
        solver.potrs(hs, "U", n, 1, d_a, n, d_b, n, info)
    s.synchronize()
    np.testing.assert_allclose(d_b.get().reshape(n, 1), np.linalg.solve(a.astype(np.float64), b), atol=1e-4)
    ev = [e for e in rec.events if e.layer == "L4"]
    assert [e.name for e in ev] == ["solver.potrf", "solver.potrs"]
    assert ev[0].args["cuda"] == "cusolverDnSpotrf" and ev[0].args["rocm"] == "rocsolver_spotrf"
    assert ev[1].args["kernel"] == "spotrs_column" == hs.last_kernel
    launches = [e for e in rec.events if e.name in ("cudaLaunchKernel", "hipModuleLaunchKernel")]
    assert len(launches) == 2 and {e.correlation for e in launches} == {e.correlation for e in ev}
    with pytest.raises(LibraryError, match="stream must be"):
        solver.set_stream(hs, "not a stream")
    solver.destroy_handle(hs)
