"""SpMV and SpMM of strata.libs.sparse (cusparseSpMV / cusparseSpMM, rocsparse_spmv / rocsparse_spmm):
y = alpha * op(A) x + beta * y and C = alpha * op(A) B + beta * C for a CSR or COO matrix A, op 'N' or 'T'
(real types: 'C' is 'T'), dense B and C row-major with leading dimensions.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.sparse.handle import create_csr, create_handle
    >>> h = create_handle()
    >>> ptr, col = cuda.to_device(np.array([0, 1, 3], np.int32)), cuda.to_device(np.array([2, 0, 2], np.int32))
    >>> a = create_csr(2, 3, ptr, col, cuda.to_device(np.array([3.0, 4.0, 5.0], np.float32)))
    >>> y = cuda.zeros(2, np.float32)
    >>> spmv(h, "N", 1.0, a, cuda.to_device(np.ones(3, np.float32)), 0.0, y); y.get().tolist()
    [3.0, 9.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import library_call, require
from strata.libs.sparse.handle import INVALID, NOT_SUPPORTED, Handle, SpMat, check_handle
from strata.libs.sparse.kernels import KERNELS, kernel_name


def spmv(handle: Handle, op: str, alpha: float, A: SpMat, x: DeviceArray, beta: float, y: DeviceArray) -> None:
    """y = alpha * op(A) @ x + beta * y (cusparseSpMV); x and y are contiguous vectors of A's value type.

    Raises:
        LibraryError: INVALID_VALUE for a bad op, a short vector or another device; NOT_SUPPORTED for mixed types.
    """
    check_handle(handle, "spmv")
    op = _op("spmv", op)
    m, k = (A.rows, A.cols) if op == "N" else (A.cols, A.rows)
    _dense("spmv", "x", x, k, 1, 1, A, handle)
    _dense("spmv", "y", y, m, 1, 1, A, handle)
    with _call(handle, "spmv", "SpMV", A, op, m=m, k=k) as ev:
        _product(handle, op, alpha, A, x, 1, beta, y, 1, 1)
        ev["kernel"] = handle.last_kernel


def spmm(handle: Handle, op: str, alpha: float, A: SpMat, B: DeviceArray, beta: float, C: DeviceArray, n: int,
         *, ldb: int | None = None, ldc: int | None = None) -> None:
    """C = alpha * op(A) @ B + beta * C (cusparseSpMM with row-major B and C): op(A) is m x k, B is k x n
    (`ldb` elements between rows, default n), C is m x n (`ldc`, default n).

    Raises:
        LibraryError: INVALID_VALUE for a bad op, size, leading dimension or device; NOT_SUPPORTED for mixed types.
    """
    check_handle(handle, "spmm")
    op = _op("spmm", op)
    require(isinstance(n, int | np.integer) and not isinstance(n, bool) and 0 <= n < 1 << 31, INVALID,
            f"[spmm] n must be an int in [0, 2^31), got {n!r}")
    ldb, ldc = n if ldb is None else ldb, n if ldc is None else ldc
    require(ldb >= max(1, n), INVALID, f"[spmm] ldb must be >= max(1, n)={max(1, n)}, got {ldb}")
    require(ldc >= max(1, n), INVALID, f"[spmm] ldc must be >= max(1, n)={max(1, n)}, got {ldc}")
    m, k = (A.rows, A.cols) if op == "N" else (A.cols, A.rows)
    _dense("spmm", "B", B, k, int(n), ldb, A, handle)
    _dense("spmm", "C", C, m, int(n), ldc, A, handle)
    with _call(handle, "spmm", "SpMM", A, op, m=m, n=int(n), k=k) as ev:
        _product(handle, op, alpha, A, B, ldb, beta, C, ldc, int(n))
        ev["kernel"] = handle.last_kernel


def _product(handle: Handle, op: str, alpha: float, A: SpMat, B: DeviceArray, ldb: int, beta: float, C: DeviceArray,
             ldc: int, n: int) -> None:
    vt, it = A.value_dtype, A.index_dtype
    al, be = vt.type(alpha), vt.type(beta)
    m = A.rows if op == "N" else A.cols
    if m == 0 or n == 0:
        return
    common = (A.values, al, B, np.int64(ldb))
    if A.format == "csr" and op == "N":
        handle.launch(KERNELS.get(kernel_name("csr_gather", vt, it)), m * n,
                      (np.int32(m), np.int32(n), A.rows_or_ptr, A.col_ind, *common, be, C, np.int64(ldc)))
        return
    handle.launch(KERNELS.get(kernel_name("scale_dense", vt)), m * n, (np.int32(m), np.int32(n), be, C, np.int64(ldc)))
    if A.nnz == 0:
        return
    if A.format == "csr":
        handle.launch(KERNELS.get(kernel_name("csr_scatter_t", vt, it)), A.nnz * n,
                      (np.int32(A.rows), np.int64(A.nnz), np.int32(n), A.rows_or_ptr, A.col_ind, *common, C,
                       np.int64(ldc)))
        return
    out_ind, in_ind = (A.rows_or_ptr, A.col_ind) if op == "N" else (A.col_ind, A.rows_or_ptr)
    handle.launch(KERNELS.get(kernel_name("coo_scatter", vt, it)), A.nnz * n,
                  (np.int64(A.nnz), np.int32(n), out_ind, in_ind, *common, C, np.int64(ldc)))


def _op(routine: str, op: Any) -> str:
    require(isinstance(op, str) and op.upper() in ("N", "T", "C"), INVALID,
            f"[{routine}] op must be 'N', 'T' or 'C' (CUSPARSE_OPERATION_*), got {op!r}")
    return "T" if op.upper() == "C" else op.upper()  # real types: the conjugate transpose is the transpose


def _dense(routine: str, name: str, a: Any, rows: int, cols: int, ld: int, A: SpMat, handle: Handle) -> None:
    require(isinstance(a, DeviceArray) and not a.freed, INVALID,
            f"[{routine}] {name} must be a live DeviceArray, got {type(a).__name__}")
    require(a.dtype == A.value_dtype, NOT_SUPPORTED,
            f"[{routine}] {name} has data type {a.dtype.name}, the sparse matrix {A.value_dtype.name}")
    require(a.device is handle.device and A.device is handle.device, INVALID,
            f"[{routine}] {name} and the sparse matrix must be on the handle's device {handle.device.index}")
    need = (rows - 1) * ld + cols if rows and cols else 0
    require(a.size >= need, INVALID,
            f"[{routine}] {name} is too small for a {rows}x{cols} matrix with ld={ld}: needs {need} elements, "
            f"has {a.size}")


def _call(handle: Handle, routine: str, generic: str, A: SpMat, op: str, **dims: int) -> Any:
    handle.begin()
    return library_call(f"sparse.{routine}", cuda_name=f"cusparse{generic}", rocm_name=f"rocsparse_{routine}",
                        format=A.format, op=op, nnz=A.nnz, dtype=A.value_dtype.name, kernel=None, **dims)
