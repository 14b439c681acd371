"""strata.libs.sparse (the cuSPARSE role): CSR and COO SpMV / SpMM, ops 'N' and 'T', float32/float64 values,
int32/int64 indices, alpha/beta rules, leading dimensions, against SciPy's sparse matrices computed in
float64; plus the L4 trace span and argument checks."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp  # type: ignore[import-untyped]

import strata.cuda as cuda
from strata import trace
from strata.libs import sparse
from strata.libs.common import LibraryError

RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def h() -> Any:
    handle = sparse.create_handle()
    yield handle
    sparse.destroy_handle(handle)


def random_coo(m: int, k: int, nnz: int, dtype: Any, duplicates: bool = False) -> sp.coo_matrix:
    """An unsorted COO matrix (with repeated coordinates if asked: they add, in SciPy and in cuSPARSE)."""
    rows, cols = RNG.integers(0, m, nnz), RNG.integers(0, k, nnz)
    if duplicates and nnz > 2:
        rows[1], cols[1] = rows[0], cols[0]
    return sp.coo_matrix((RNG.standard_normal(nnz).astype(dtype), (rows, cols)), shape=(m, k))


def descr(fmt: str, a: sp.coo_matrix, index: Any) -> sparse.SpMat:
    if fmt == "csr":
        c = a.tocsr()  # (sums duplicates, sorts)
        return sparse.create_csr(a.shape[0], a.shape[1], cuda.to_device(c.indptr.astype(index)),
                                 cuda.to_device(c.indices.astype(index)), cuda.to_device(c.data))
    return sparse.create_coo(a.shape[0], a.shape[1], cuda.to_device(a.row.astype(index)),
                             cuda.to_device(a.col.astype(index)), cuda.to_device(a.data))


def tol(dtype: Any) -> float:
    return 1e-5 if dtype == np.float32 else 1e-12


@pytest.mark.parametrize("fmt", ["csr", "coo"])
@pytest.mark.parametrize("op", ["N", "T"])
@pytest.mark.parametrize(("dtype", "index"), [(np.float32, np.int32), (np.float64, np.int64)])
def test_spmm_matches_scipy(h: Any, fmt: str, op: str, dtype: Any, index: Any) -> None:
    m, k, n = 13, 9, 5
    a = random_coo(m, k, 30, dtype, duplicates=True)
    rows_b = k if op == "N" else m
    rows_c = m if op == "N" else k
    b = RNG.standard_normal((rows_b, n)).astype(dtype)
    c = RNG.standard_normal((rows_c, n)).astype(dtype)
    d_c = cuda.to_device(c)
    sparse.spmm(h, op, 1.5, descr(fmt, a, index), cuda.to_device(b), -0.5, d_c, n)
    dense = a.astype(np.float64).tocsr()
    want = 1.5 * ((dense if op == "N" else dense.T) @ b.astype(np.float64)) - 0.5 * c
    np.testing.assert_allclose(d_c.get().reshape(rows_c, n), want, rtol=tol(dtype), atol=tol(dtype))
    assert h.last_kernel == ("csr_gather" if (fmt, op) == ("csr", "N") else
                             "scale_dense+" + ("csr_scatter_t" if fmt == "csr" else "coo_scatter"))


@pytest.mark.parametrize("fmt", ["csr", "coo"])
@pytest.mark.parametrize("op", ["N", "T"])
def test_spmv_matches_scipy(h: Any, fmt: str, op: str) -> None:
    m, k = 40, 25
    a = random_coo(m, k, 120, np.float32)
    x = RNG.standard_normal(k if op == "N" else m).astype(np.float32)
    y = cuda.to_device(np.full(m if op == "N" else k, np.nan, np.float32))  # beta == 0: NaNs must not leak
    sparse.spmv(h, op, 2.0, descr(fmt, a, np.int32), cuda.to_device(x), 0.0, y)
    dense = a.astype(np.float64).tocsr()
    np.testing.assert_allclose(y.get(), 2.0 * ((dense if op == "N" else dense.T) @ x), rtol=1e-5, atol=1e-5)


def test_spmm_leading_dimensions_and_empty_rows(h: Any) -> None:
    """Row-major B and C inside wider buffers; rows without nonzeros get beta * C only."""
    m, k, n, ldb, ldc = 6, 4, 3, 5, 7
    a = sp.coo_matrix((np.array([1.0, 2.0, 3.0]), (np.array([0, 0, 4]), np.array([3, 1, 0]))), shape=(m, k))
    b = RNG.standard_normal((k, ldb))
    c = RNG.standard_normal((m, ldc))
    d_c = cuda.to_device(c)
    sparse.spmm(h, "N", 1.0, descr("csr", a, np.int32), cuda.to_device(b), 2.0, d_c, n, ldb=ldb, ldc=ldc)
    got = d_c.get().reshape(m, ldc)
    np.testing.assert_allclose(got[:, :n], a.tocsr() @ b[:, :n] + 2.0 * c[:, :n], rtol=1e-12)
    np.testing.assert_array_equal(got[:, n:], c[:, n:])  # the padding is never written


def test_spmm_is_one_l4_span_with_both_vendor_names(h: Any) -> None:
    a = random_coo(4, 4, 6, np.float32)
    b, c = cuda.to_device(np.ones((4, 2), np.float32)), cuda.zeros(8, np.float32)
    with trace.record() as rec:
        sparse.spmm(h, "N", 1.0, descr("coo", a, np.int32), b, 0.0, c, 2)
    spans = [e for e in rec.events if e.layer == "L4" and e.name == "sparse.spmm"]
    assert len(spans) == 1
    args = spans[0].args
    assert args["cuda"] == "cusparseSpMM" and args["rocm"] == "rocsparse_spmm"
    assert args["library"] == ("rocSPARSE" if cuda.current_device().spec.vendor == "amd" else "cuSPARSE")
    assert args["kernel"] == "scale_dense+coo_scatter" and args["nnz"] == 6


def test_argument_checks(h: Any) -> None:
    vals = cuda.to_device(np.ones(3, np.float32))
    idx = cuda.to_device(np.array([0, 1, 2], np.int32))
    a = sparse.create_coo(3, 3, idx, idx, vals)
    with pytest.raises(LibraryError, match=r"\[spmm\] op must be 'N', 'T' or 'C'") as e:
        sparse.spmm(h, "X", 1.0, a, vals, 0.0, vals, 1)
    assert e.value.status == "CUSPARSE_STATUS_INVALID_VALUE"
    with pytest.raises(LibraryError, match=r"\[spmm\] B is too small for a 3x2 matrix"):
        sparse.spmm(h, "N", 1.0, a, vals, 0.0, cuda.zeros(6, np.float32), 2)
    with pytest.raises(LibraryError, match="has data type float64, the sparse matrix float32") as e:
        sparse.spmv(h, "N", 1.0, a, cuda.zeros(3, np.float64), 0.0, vals)
    assert e.value.status == "CUSPARSE_STATUS_NOT_SUPPORTED"
    with pytest.raises(LibraryError, match=r"\[create_csr\] row_ptr holds 3 elements, needs 4"):
        sparse.create_csr(3, 3, idx, idx, vals)
    with pytest.raises(LibraryError, match="col_ind has data type int64; supported: int32"):
        sparse.create_coo(3, 3, idx, cuda.to_device(np.array([0, 1, 2], np.int64)), vals)
    with pytest.raises(LibraryError, match=r"\[create_coo\] values has data type int32"):
        sparse.create_coo(3, 3, idx, idx, idx)
    dead = sparse.create_handle()
    sparse.destroy_handle(dead)
    with pytest.raises(LibraryError, match="the handle was destroyed") as e:
        sparse.spmv(dead, "N", 1.0, a, vals, 0.0, vals)
    assert e.value.status == "CUSPARSE_STATUS_NOT_INITIALIZED"


def test_framework_sparse_mm_on_cuda_calls_the_library_with_gradients() -> None:
    """torch.sparse.mm on "cuda" is a cusparseSpMM span (forward, and the transposed product in backward);
    values, gradients of both operands and a second product through autograd match SciPy / NumPy."""
    import strata
    from strata.framework import sparse as fsparse

    a = random_coo(6, 5, 12, np.float32, duplicates=True)
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    g = RNG.standard_normal((6, 3)).astype(np.float32)
    vals = strata.tensor(a.data, device="cuda", requires_grad=True)
    idx = strata.tensor(np.stack([a.row, a.col]).astype(np.int64), device="cuda")
    dense = strata.tensor(x, device="cuda", requires_grad=True)
    with trace.record() as rec:
        out = fsparse.mm(fsparse.sparse_coo_tensor(idx, vals, (6, 5)), dense)
        out.backward(strata.tensor(g, device="cuda"))
    spans = [e for e in rec.events if e.layer == "L4" and e.name == "sparse.spmm"]
    assert [e.args["cuda"] for e in spans] == ["cusparseSpMM"] * 2
    ref = a.astype(np.float64).tocsr()
    assert dense.grad is not None and vals.grad is not None
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dense.grad.cpu().numpy(), ref.T @ g, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(vals.grad.cpu().numpy(), np.einsum("jk,jk->j", g[a.row], x[a.col]), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 absent (`make amd` installs it)")
@pytest.mark.parametrize(("fmt", "op"), [("csr", "N"), ("csr", "T"), ("coo", "T")])
def test_spmm_on_an_amd_device_plays_rocsparse(fmt: str, op: str) -> None:
    """On an MI300X the same CUDA C++ kernels run as gfx942 code objects and the span names rocSPARSE."""
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        handle = sparse.create_handle()
        a = random_coo(10, 7, 20, np.float32)
        b = RNG.standard_normal((7 if op == "N" else 10, 3)).astype(np.float32)
        c = cuda.zeros((10 if op == "N" else 7) * 3, np.float32)
        with trace.record() as rec:
            sparse.spmm(handle, op, 1.0, descr(fmt, a, np.int64), cuda.to_device(b), 0.0, c, 3)
        dense = a.astype(np.float64).tocsr()
        want = (dense if op == "N" else dense.T) @ b
        np.testing.assert_allclose(c.get().reshape(want.shape), want, rtol=1e-5, atol=1e-5)
        span = next(e for e in rec.events if e.layer == "L4" and e.name == "sparse.spmm")
        assert span.args["library"] == "rocSPARSE" and span.args["platform"] == "rocm"
    finally:
        cuda.set_device(before)
