"""The dense routines of strata.libs.solver: getrf/getrs (LU), potrf/potrs (Cholesky), geqrf/orgqr (QR).

Arguments come in cuSOLVER's Dn order without the workspace (strata's kernels need none; the
`*_buffer_size` queries return 0), matrices are column-major with leading dimensions, and results
follow LAPACK: getrf's `ipiv` is 1-based int32 (row i was interchanged with row ipiv[i]), geqrf leaves
R on and above the diagonal and the Householder vectors below it with their scalars in `tau`.
`info` is a one-element int32 device array written by the call's kernels: 0 on success; i > 0 when
getrf's U(i,i) is exactly zero (the factorization still completes) or when potrf finds the leading
minor of order i not positive definite (the factorization stops there); -i when argument i is bad,
which also raises LibraryError. Every call is an L4 trace span naming the vendor functions.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.solver.handle import create_handle
    >>> h = create_handle()
    >>> a = cuda.to_device(np.array([[4.0, 2.0], [2.0, 3.0]]).T.copy())  # column-major, SPD
    >>> info = cuda.zeros(1, np.int32)
    >>> potrf(h, 'L', 2, a, 2, info)
    >>> np.round(a.get().reshape(2, 2).T, 4).tolist(), int(info.get()[0])  # L in the lower triangle
    ([[2.0, 2.0], [1.0, 1.4142]], 0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import library_call
from strata.libs.solver.handle import Call, Handle
from strata.libs.solver.kernels import KERNELS, block_threads, prefix, solve_threads

Array = DeviceArray | int


def getrf(handle: Handle, m: int, n: int, A: Array, lda: int, ipiv: Array, info: Array, *,
          dtype: Any = None) -> None:
    """LU factorization with partial pivoting, A = P L U (cusolverDnSgetrf / Dgetrf, rocsolver_sgetrf).

    A (m x n) is overwritten by L (unit lower, below the diagonal) and U (upper).

    Args:
        handle: the solver handle.
        m, n: rows and columns of A.
        A: float32 or float64, column-major, leading dimension lda >= max(1, m).
        ipiv: int32, min(m, n) elements: row i was interchanged with row ipiv[i] (1-based).
        info: int32, one element: 0, or i > 0 when U(i, i) is exactly zero.
        dtype: the data type when A is a bare address (default float32).
    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE for a bad argument (info = -its position).
    """
    c = Call(handle, "getrf")
    info_ptr = c.info(info)
    m = c.size(1, "m", m)
    n = c.size(2, "n", n)
    lda = c.ld(4, "lda", lda, m, "m")
    dt = c.dtype((A,), dtype)
    a = c.matrix(3, "A", A, m, n, lda, dt)
    ip = c.vector(5, "ipiv", ipiv, min(m, n), np.dtype(np.int32))
    name = f"{prefix(dt)}getrf_block"
    with _span(handle, "getrf", dt, name, m=m, n=n, lda=lda):
        if m == 0 or n == 0:
            return _set_info(handle, info_ptr)
        handle.launch(name, KERNELS.get(name), 1, block_threads(n),
                      (np.int32(m), np.int32(n), a, np.int32(lda), ip, info_ptr))


def getrs(handle: Handle, trans: str, n: int, nrhs: int, A: Array, lda: int, ipiv: Array, B: Array, ldb: int,
          info: Array, *, dtype: Any = None) -> None:
    """Solve op(A) X = B with getrf's factors (cusolverDnSgetrs / Dgetrs, rocsolver_sgetrs).

    Args:
        trans: 'N' (A X = B), 'T' or 'C' (A^T X = B; the same for real data).
        n: order of A; nrhs: columns of B.
        A, lda: getrf's output (n x n); ipiv: getrf's pivots (n elements).
        B, ldb: n x nrhs right-hand sides, overwritten by X; ldb >= max(1, n).
        info: int32, one element: 0.
    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE for a bad argument (info = -its position).
    """
    c = Call(handle, "getrs")
    info_ptr = c.info(info)
    op = c.option(1, "trans", trans, "NTC")
    n = c.size(2, "n", n)
    nrhs = c.size(3, "nrhs", nrhs)
    lda = c.ld(5, "lda", lda, n, "n")
    ldb = c.ld(8, "ldb", ldb, n, "n")
    dt = c.dtype((A, B), dtype)
    a = c.matrix(4, "A", A, n, n, lda, dt)
    ip = c.vector(6, "ipiv", ipiv, n, np.dtype(np.int32))
    b = c.matrix(7, "B", B, n, nrhs, ldb, dt)
    name = f"{prefix(dt)}getrs_column"
    with _span(handle, "getrs", dt, name, trans=op, n=n, nrhs=nrhs, lda=lda, ldb=ldb):
        if n == 0 or nrhs == 0:
            return _set_info(handle, info_ptr)
        handle.launch(name, KERNELS.get(name), nrhs, solve_threads(n),
                      (np.int32(op != "N"), np.int32(n), a, np.int32(lda), ip, b, np.int32(ldb), info_ptr))


def potrf(handle: Handle, uplo: str, n: int, A: Array, lda: int, info: Array, *, dtype: Any = None) -> None:
    """Cholesky factorization A = L L^T ('L') or A = U^T U ('U') (cusolverDnSpotrf / Dpotrf, rocsolver_spotrf).

    Only the `uplo` triangle of A is read and overwritten; the other triangle is left alone.

    Args:
        uplo: 'L' or 'U'.
        n: order of A; A, lda: symmetric positive definite n x n, lda >= max(1, n).
        info: int32, one element: 0, or i > 0 when the leading minor of order i is not positive
            definite (the factorization stops there, as LAPACK's does).
    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE for a bad argument (info = -its position).
    """
    c = Call(handle, "potrf")
    info_ptr = c.info(info)
    up = c.option(1, "uplo", uplo, "UL")
    n = c.size(2, "n", n)
    lda = c.ld(4, "lda", lda, n, "n")
    dt = c.dtype((A,), dtype)
    a = c.matrix(3, "A", A, n, n, lda, dt)
    name = f"{prefix(dt)}potrf_block"
    with _span(handle, "potrf", dt, name, uplo=up, n=n, lda=lda):
        if n == 0:
            return _set_info(handle, info_ptr)
        handle.launch(name, KERNELS.get(name), 1, block_threads(n),
                      (np.int32(up == "U"), np.int32(n), a, np.int32(lda), info_ptr))


def potrs(handle: Handle, uplo: str, n: int, nrhs: int, A: Array, lda: int, B: Array, ldb: int, info: Array, *,
          dtype: Any = None) -> None:
    """Solve A X = B with potrf's factor (cusolverDnSpotrs / Dpotrs, rocsolver_spotrs).

    Args:
        uplo: the triangle potrf wrote ('L' or 'U').
        n: order of A; nrhs: columns of B.
        A, lda: potrf's output; B, ldb: n x nrhs, overwritten by X.
        info: int32, one element: 0.
    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE for a bad argument (info = -its position).
    """
    c = Call(handle, "potrs")
    info_ptr = c.info(info)
    up = c.option(1, "uplo", uplo, "UL")
    n = c.size(2, "n", n)
    nrhs = c.size(3, "nrhs", nrhs)
    lda = c.ld(5, "lda", lda, n, "n")
    ldb = c.ld(7, "ldb", ldb, n, "n")
    dt = c.dtype((A, B), dtype)
    a = c.matrix(4, "A", A, n, n, lda, dt)
    b = c.matrix(6, "B", B, n, nrhs, ldb, dt)
    name = f"{prefix(dt)}potrs_column"
    with _span(handle, "potrs", dt, name, uplo=up, n=n, nrhs=nrhs, lda=lda, ldb=ldb):
        if n == 0 or nrhs == 0:
            return _set_info(handle, info_ptr)
        handle.launch(name, KERNELS.get(name), nrhs, solve_threads(n),
                      (np.int32(up == "U"), np.int32(n), a, np.int32(lda), b, np.int32(ldb), info_ptr))


def geqrf(handle: Handle, m: int, n: int, A: Array, lda: int, tau: Array, info: Array, *, dtype: Any = None) -> None:
    """Householder QR, A = Q R (cusolverDnSgeqrf / Dgeqrf, rocsolver_sgeqrf), in LAPACK's compact form.

    R is left on and above the diagonal; below it, column j holds v_j(j+1:m) of the reflector
    H_j = I - tau[j] v_j v_j^T (v_j(j) = 1 implied), and Q = H_0 H_1 ... H_{k-1}, k = min(m, n).

    Args:
        m, n: rows and columns of A; A, lda: column-major, lda >= max(1, m).
        tau: A's data type, min(m, n) elements: the reflectors' scalars (dlarfg's).
        info: int32, one element: 0.
    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE for a bad argument (info = -its position).
    """
    c = Call(handle, "geqrf")
    info_ptr = c.info(info)
    m = c.size(1, "m", m)
    n = c.size(2, "n", n)
    lda = c.ld(4, "lda", lda, m, "m")
    dt = c.dtype((A, tau), dtype)
    a = c.matrix(3, "A", A, m, n, lda, dt)
    t = c.vector(5, "tau", tau, min(m, n), dt)
    name = f"{prefix(dt)}geqrf_block"
    with _span(handle, "geqrf", dt, name, m=m, n=n, lda=lda):
        if m == 0 or n == 0:
            return _set_info(handle, info_ptr)
        handle.launch(name, KERNELS.get(name), 1, block_threads(n),
                      (np.int32(m), np.int32(n), a, np.int32(lda), t, info_ptr))


def orgqr(handle: Handle, m: int, n: int, k: int, A: Array, lda: int, tau: Array, info: Array, *,
          dtype: Any = None) -> None:
    """The first n columns of Q = H_0 ... H_{k-1} from geqrf's output (cusolverDnSorgqr / Dorgqr,
    rocsolver_sorgqr), written over A.

    Args:
        m, n, k: m >= n >= k >= 0; A (m x n) holds the k reflectors in its first k columns.
        A, lda: column-major, lda >= max(1, m); tau: k scalars from geqrf.
        info: int32, one element: 0.
    Raises:
        LibraryError: CUSOLVER_STATUS_INVALID_VALUE for a bad argument (info = -its position).
    """
    c = Call(handle, "orgqr")
    info_ptr = c.info(info)
    m = c.size(1, "m", m)
    n = c.size(2, "n", n, high=m, high_name="m")
    k = c.size(3, "k", k, high=n, high_name="n")
    lda = c.ld(5, "lda", lda, m, "m")
    dt = c.dtype((A, tau), dtype)
    a = c.matrix(4, "A", A, m, n, lda, dt)
    t = c.vector(6, "tau", tau, k, dt)
    name = f"{prefix(dt)}orgqr_block"
    with _span(handle, "orgqr", dt, name, m=m, n=n, k=k, lda=lda):
        if n == 0:
            return _set_info(handle, info_ptr)
        handle.launch(name, KERNELS.get(name), 1, block_threads(n),
                      (np.int32(m), np.int32(n), np.int32(k), a, np.int32(lda), t, info_ptr))


def getrf_buffer_size(handle: Handle, m: int, n: int, A: Array, lda: int, *, dtype: Any = None) -> int:
    """cusolverDnSgetrf_bufferSize: the workspace getrf needs, in elements (0: strata's kernels need none)."""
    c = Call(handle, "getrf_buffer_size")
    m, n = c.size(1, "m", m), c.size(2, "n", n)
    c.matrix(3, "A", A, m, n, c.ld(4, "lda", lda, m, "m"), c.dtype((A,), dtype))
    return 0


def potrf_buffer_size(handle: Handle, uplo: str, n: int, A: Array, lda: int, *, dtype: Any = None) -> int:
    """cusolverDnSpotrf_bufferSize: the workspace potrf needs, in elements (0)."""
    c = Call(handle, "potrf_buffer_size")
    c.option(1, "uplo", uplo, "UL")
    n = c.size(2, "n", n)
    c.matrix(3, "A", A, n, n, c.ld(4, "lda", lda, n, "n"), c.dtype((A,), dtype))
    return 0


def geqrf_buffer_size(handle: Handle, m: int, n: int, A: Array, lda: int, *, dtype: Any = None) -> int:
    """cusolverDnSgeqrf_bufferSize: the workspace geqrf needs, in elements (0)."""
    c = Call(handle, "geqrf_buffer_size")
    m, n = c.size(1, "m", m), c.size(2, "n", n)
    c.matrix(3, "A", A, m, n, c.ld(4, "lda", lda, m, "m"), c.dtype((A,), dtype))
    return 0


def orgqr_buffer_size(handle: Handle, m: int, n: int, k: int, A: Array, lda: int, tau: Array, *,
                      dtype: Any = None) -> int:
    """cusolverDnSorgqr_bufferSize: the workspace orgqr needs, in elements (0)."""
    c = Call(handle, "orgqr_buffer_size")
    m = c.size(1, "m", m)
    n = c.size(2, "n", n, high=m, high_name="m")
    k = c.size(3, "k", k, high=n, high_name="n")
    dt = c.dtype((A, tau), dtype)
    c.matrix(4, "A", A, m, n, c.ld(5, "lda", lda, m, "m"), dt)
    c.vector(6, "tau", tau, k, dt)
    return 0


def _span(handle: Handle, routine: str, dt: np.dtype, kernel: str, **args: Any) -> Any:
    handle.begin()
    p = prefix(dt)
    return library_call(f"solver.{routine}", cuda_name=f"cusolverDn{p.upper()}{routine}",
                        rocm_name=f"rocsolver_{p}{routine}", kernel=kernel, **args)


def _set_info(handle: Handle, info_ptr: int) -> None:
    handle.launch("set_info", KERNELS.get("set_info"), 1, 1, (info_ptr, np.int32(0)))
