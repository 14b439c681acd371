"""strata.libs.blas levels 1 and 2 (axpy, scal, dot, nrm2, asum, iamax, gemv, ger) against float64 NumPy,
with positive and negative increments, odd lengths, alpha/beta rules and argument checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
from strata.libs import blas
from strata.libs.common import LibraryError

RNG = np.random.default_rng(99)
DTYPES = [np.float32, np.float64]


@pytest.fixture(scope="module")
def h() -> Any:
    handle = blas.create_handle()
    yield handle
    blas.destroy_handle(handle)


def strided(v: np.ndarray, inc: int, pad: float = np.nan) -> np.ndarray:
    """The storage of vector v with increment inc (BLAS: negative inc stores v backwards)."""
    n, step = v.size, abs(inc)
    buf = np.full(max((n - 1) * step + 1, 1), pad, v.dtype)
    buf[::step][:n] = v if inc > 0 else v[::-1]
    return buf


def unstride(buf: np.ndarray, n: int, inc: int) -> np.ndarray:
    v = buf[::abs(inc)][:n]
    return v if inc > 0 else v[::-1]


def eps(dtype: Any) -> float:
    return float(np.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("n", "incx", "incy"), [(1, 1, 1), (7, 2, -1), (1000, 1, 1), (65, -3, 2), (33, -1, -1)])
def test_axpy_dot(h: Any, dtype: Any, n: int, incx: int, incy: int) -> None:
    x, y = RNG.uniform(-1, 1, n).astype(dtype), RNG.uniform(-1, 1, n).astype(dtype)
    dx, dy = cuda.to_device(strided(x, incx)), cuda.to_device(strided(y, incy))
    d = blas.dot(h, n, dx, incx, dy, incy)
    want = float(x.astype(np.float64) @ y)
    assert isinstance(d, float) and abs(d - want) <= 2 * n * eps(dtype) * float(np.abs(x) @ np.abs(y)) + 1e-30
    blas.axpy(h, n, -2.5, dx, incx, dy, incy)
    got = cuda_get(dy)
    np.testing.assert_allclose(unstride(got, n, incy), -2.5 * x.astype(np.float64) + y, rtol=4 * eps(dtype),
                               atol=4 * eps(dtype))
    assert np.isnan(got[np.isnan(strided(y, incy))]).all()  # the gaps are untouched
    assert got.dtype == dtype


def cuda_get(d: Any) -> np.ndarray:
    return d.get()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("n", "inc"), [(1, 1), (7, 3), (300, 1), (1000, 2)])
def test_scal_asum_nrm2_iamax(h: Any, dtype: Any, n: int, inc: int) -> None:
    x = RNG.uniform(-1, 1, n).astype(dtype)
    dx = cuda.to_device(strided(x, inc))
    assert abs(blas.asum(h, n, dx, inc) - np.abs(x.astype(np.float64)).sum()) <= 2 * n * eps(dtype) * n
    want_norm = float(np.linalg.norm(x.astype(np.float64)))
    assert abs(blas.nrm2(h, n, dx, inc) - want_norm) <= 4 * n * eps(dtype) * want_norm
    assert blas.iamax(h, n, dx, inc) == int(np.argmax(np.abs(x))) + 1
    blas.scal(h, n, 0.5, dx, inc)
    np.testing.assert_array_equal(unstride(dx.get(), n, inc), x * dtype(0.5))


def test_iamax_first_of_ties_one_based_and_quick_returns(h: Any) -> None:
    x = np.array([1, -5, 3, 5, -5, 0], np.float32)
    dx = cuda.to_device(x)
    assert blas.iamax(h, 6, dx, 1) == 2
    assert blas.iamax(h, 3, dx, 2) == 3  # x[0], x[2], x[4] = 1, 3, -5
    assert blas.iamax(h, 0, dx, 1) == 0 and blas.iamax(h, 6, dx, 0) == 0 and blas.iamax(h, 6, dx, -1) == 0
    big = np.zeros(5000, np.float32)
    big[[4000, 1234, 4999]] = -7
    assert blas.iamax(h, 5000, cuda.to_device(big), 1) == 1235  # across blocks: still the first
    with_nan = np.array([np.nan, 2, -3, np.nan], np.float32)
    assert blas.iamax(h, 4, cuda.to_device(with_nan), 1) == 3


def test_nrm2_neither_overflows_nor_underflows(h: Any) -> None:
    for scale in (1e30, 1e-30):
        x = np.array([3, 4, 0, -12], np.float32) * np.float32(scale)
        got = blas.nrm2(h, 4, cuda.to_device(x), 1)
        assert abs(got - 13 * scale) <= 4 * eps(np.float32) * 13 * scale
    assert blas.nrm2(h, 3, cuda.zeros(3), 1) == 0.0
    assert blas.asum(h, 0, cuda.zeros(3), 1) == 0.0 and blas.dot(h, 0, cuda.zeros(3), 1, cuda.zeros(3), 1) == 0.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", ["N", "T", "C"])
@pytest.mark.parametrize(("m", "n", "incx", "incy"), [(33, 7, 1, 1), (1, 65, 2, -1), (130, 1, -2, 3)])
def test_gemv(h: Any, dtype: Any, trans: str, m: int, n: int, incx: int, incy: int) -> None:
    a = RNG.uniform(-1, 1, (m, n)).astype(dtype)
    lda = m + 3
    store = np.full((n, lda), np.nan, dtype)
    store[:, :m] = a.T
    lx, ly = (n, m) if trans == "N" else (m, n)
    x, y = RNG.uniform(-1, 1, lx).astype(dtype), RNG.uniform(-1, 1, ly).astype(dtype)
    opa = a if trans == "N" else a.T
    for alpha, beta in ((1.5, -0.5), (2.0, 0.0), (0.0, 3.0)):
        y_in = y if beta != 0 else np.full(ly, np.nan, dtype)  # beta == 0: y is not read
        dy = cuda.to_device(strided(y_in, incy))
        blas.gemv(h, trans, m, n, alpha, cuda.to_device(store), lda, cuda.to_device(strided(x, incx)), incx, beta, dy,
                  incy)
        want = alpha * (opa.astype(np.float64) @ x) + (beta * y.astype(np.float64) if beta != 0 else 0)
        bound = 2 * (lx + 2) * eps(dtype) * (abs(alpha) * np.abs(opa) @ np.abs(x) + abs(beta) * np.abs(y)) + 1e-30
        got = unstride(dy.get(), ly, incy)
        assert np.all(np.abs(got - want) <= bound)
    assert h.last_kernel == ("gemv_n" if trans == "N" else "gemv_t")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("m", "n", "incx", "incy"), [(33, 7, 1, 1), (1, 65, 2, -1), (65, 33, -1, 3)])
def test_ger(h: Any, dtype: Any, m: int, n: int, incx: int, incy: int) -> None:
    a = RNG.uniform(-1, 1, (m, n)).astype(dtype)
    x, y = RNG.uniform(-1, 1, m).astype(dtype), RNG.uniform(-1, 1, n).astype(dtype)
    lda = m + 1
    store = np.full((n, lda), np.nan, dtype)
    store[:, :m] = a.T
    da = cuda.to_device(store)
    blas.ger(h, m, n, -0.75, cuda.to_device(strided(x, incx)), incx, cuda.to_device(strided(y, incy)), incy, da, lda)
    got = da.get()
    np.testing.assert_allclose(got[:, :m].T, -0.75 * np.outer(x.astype(np.float64), y) + a, rtol=0,
                               atol=4 * eps(dtype))
    assert np.isnan(got[:, m:]).all()


def test_quick_returns_touch_nothing(h: Any) -> None:
    y = np.arange(4, dtype=np.float32)
    dy = cuda.to_device(y)
    blas.axpy(h, 4, 0.0, cuda.to_device(np.full(4, np.nan, np.float32)), 1, dy, 1)
    blas.gemv(h, "N", 0, 4, 1.0, cuda.zeros(4), 1, cuda.zeros(4), 1, 0.0, dy, 1)
    blas.gemv(h, "N", 2, 2, 0.0, cuda.zeros(4), 2, cuda.zeros(4), 1, 1.0, dy, 1)
    blas.ger(h, 2, 2, 0.0, cuda.zeros(4), 1, cuda.zeros(4), 1, dy, 2)
    blas.scal(h, 4, 0.0, dy, -1)
    np.testing.assert_array_equal(dy.get(), y)
    assert h.last_kernel is None


def expect(message: str, fn: Any, *args: Any, status: str = "CUBLAS_STATUS_INVALID_VALUE") -> None:
    with pytest.raises(LibraryError) as info:
        fn(*args)
    assert info.value.status == status and str(info.value) == message, str(info.value)


def test_bad_arguments(h: Any) -> None:
    x = cuda.zeros(10)
    expect("[axpy] incx must be != 0, got 0", blas.axpy, h, 4, 1.0, x, 0, x, 1)
    expect("[dot] n must be >= 0, got -3", blas.dot, h, -3, x, 1, x, 1)
    expect("[dot] y is too small for 6 elements with inc=2: needs 44 bytes, has 40", blas.dot, h, 6, x, 1, x, 2)
    expect("[nrm2] x must be float32, got float64", lambda: blas.nrm2(h, 2, cuda.zeros(2, np.float64), 1,
                                                                       dtype=np.float32))
    expect("[asum] data type int64 is not supported (float32, float64)", blas.asum, h, 2, cuda.zeros(2, np.int64),
           1, status="CUBLAS_STATUS_NOT_SUPPORTED")
    expect("[gemv] trans must be one of 'N', 'T', 'C', got 'Y'", blas.gemv, h, "Y", 2, 2, 1.0, x, 2, x, 1, 0.0, x, 1)
    expect("[gemv] lda must be >= max(1, m)=4, got 3", blas.gemv, h, "N", 4, 2, 1.0, x, 3, x, 1, 0.0, x, 1)
    expect("[gemv] incy must be != 0, got 0", blas.gemv, h, "N", 2, 2, 1.0, x, 2, x, 1, 0.0, x, 0)
    expect("[gemv] x is too small for 9 elements with inc=2: needs 68 bytes, has 40", blas.gemv, h, "T", 9, 1, 1.0,
           cuda.zeros(9), 9, x, 2, 0.0, x, 1)
    expect("[ger] lda must be >= max(1, m)=3, got 2", blas.ger, h, 3, 3, 1.0, x, 1, x, 1, x, 2)
    expect("[ger] m must be >= 0, got -1", blas.ger, h, -1, 3, 1.0, x, 1, x, 1, x, 2)
    expect("[scal] alpha must be a real number, got str", blas.scal, h, 2, "2", x, 1)
