"""The "cpu" backend's kernels for torch.linalg's decompositions and solves (the op table's `linalg_*` ops):
NumPy's LAPACK routines on float32 and float64 matrices, batched over the leading dims as PyTorch's
are. A singular matrix or a matrix that is not positive definite is reported as LAPACK's `info` per
matrix (the front function raises PyTorch's error); NumPy raises without saying where, so those rare
cases are found again by a small LU or Cholesky sweep of the failing matrices.

Every kernel takes contiguous tensors of one floating dtype and returns new tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.framework import op_table
from strata.framework.quiet import quiet
from strata.framework.tensor import Tensor, from_array


def _arr(t: Tensor) -> np.ndarray:
    return t._host()


def _out(a: np.ndarray, like: Tensor) -> Tensor:
    return from_array(np.array(a, dtype=like.dtype.np, order="C"), like.dtype)  # (a 0-d result stays 0-d)


def _zeros_info(shape: tuple[int, ...]) -> np.ndarray:
    return np.zeros(shape, np.int64)


@op_table.register("cpu", "linalg_solve")
def solve(a: Tensor, b: Tensor) -> tuple[Tensor, np.ndarray]:
    """X with A X = B for (..., n, n) A and (..., n, k) B (batch dims already broadcast)."""
    A, B = _arr(a), _arr(b)
    try:
        x = quiet(np.linalg.solve, A, B)
        return _out(x, a), _zeros_info(A.shape[:-2])
    except np.linalg.LinAlgError:
        return _out(np.full(B.shape, np.nan), a), _lu_info(A)


@op_table.register("cpu", "linalg_inv")
def inv(a: Tensor) -> tuple[Tensor, np.ndarray]:
    """A^-1 of (..., n, n) A."""
    A = _arr(a)
    try:
        return _out(quiet(np.linalg.inv, A), a), _zeros_info(A.shape[:-2])
    except np.linalg.LinAlgError:
        return _out(np.full(A.shape, np.nan), a), _lu_info(A)


@op_table.register("cpu", "linalg_det")
def det(a: Tensor) -> Tensor:
    """det(A) from the LU factorization (exact for matrices whose LU is)."""
    return _out(quiet(np.linalg.det, _arr(a)), a)


@op_table.register("cpu", "linalg_slogdet")
def slogdet(a: Tensor) -> tuple[Tensor, Tensor]:
    """(sign, log |det A|)."""
    sign, logabs = quiet(np.linalg.slogdet, _arr(a))
    return _out(sign, a), _out(logabs, a)


@op_table.register("cpu", "linalg_cholesky")
def cholesky(a: Tensor) -> tuple[Tensor, np.ndarray]:
    """L (lower) with A = L L^T, reading A's lower triangle as LAPACK's potrf('L') does."""
    A = _arr(a)
    low = np.tril(A) + np.swapaxes(np.tril(A, -1), -1, -2)  # (the upper triangle is not read)
    try:
        return _out(quiet(np.linalg.cholesky, low), a), _zeros_info(A.shape[:-2])
    except np.linalg.LinAlgError:
        return _out(np.full(A.shape, np.nan), a), _cholesky_info(low)


@op_table.register("cpu", "linalg_qr")
def qr(a: Tensor, mode: str) -> tuple[Tensor, Tensor]:
    """(Q, R) of (..., m, n) A: mode 'reduced' (Q m x k, R k x n, k = min(m, n)), 'complete' (Q m x m) or
    'r' (Q empty)."""
    A = _arr(a)
    if mode == "r":
        r: Any = np.linalg.qr(A, mode="r")
        return _out(np.zeros((0,), A.dtype), a), _out(r, a)
    q, r = np.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    return _out(q, a), _out(r, a)


@op_table.register("cpu", "linalg_eigh")
def eigh(a: Tensor, uplo: str) -> tuple[Tensor, Tensor]:
    """(eigenvalues ascending, eigenvectors as columns) of the symmetric matrix A's `uplo` triangle."""
    w, v = np.linalg.eigh(_arr(a), UPLO="U" if uplo == "U" else "L")
    return _out(w, a), _out(v, a)


@op_table.register("cpu", "linalg_svd")
def svd(a: Tensor, full_matrices: bool) -> tuple[Tensor, Tensor, Tensor]:
    """(U, S descending, Vh) of (..., m, n) A."""
    u, s, vh = np.linalg.svd(_arr(a), full_matrices=full_matrices)
    return _out(u, a), _out(s, a), _out(vh, a)


# ----------------------------------------------------------------------------------------- info
def _lu_info(A: np.ndarray) -> np.ndarray:
    """getrf's info per matrix: the 1-based index of the first exactly zero pivot of partial-pivoting LU, or 0."""
    mats = A.reshape(-1, *A.shape[-2:]).astype(np.float64)
    info = np.zeros(len(mats), np.int64)
    for b, m in enumerate(mats):
        m = m.copy()
        n = m.shape[0]
        for j in range(n):
            p = j + int(np.argmax(np.abs(m[j:, j])))
            if m[p, j] == 0:
                info[b] = j + 1
                break
            m[[j, p]] = m[[p, j]]
            m[j + 1:, j:] -= np.outer(m[j + 1:, j] / m[j, j], m[j, j:])
    return info.reshape(A.shape[:-2])


def _cholesky_info(A: np.ndarray) -> np.ndarray:
    """potrf's info per matrix: the order of the first leading minor that is not positive definite, or 0."""
    mats = A.reshape(-1, *A.shape[-2:])
    info = np.zeros(len(mats), np.int64)
    for b, m in enumerate(mats):
        for k in range(1, m.shape[0] + 1):
            try:
                np.linalg.cholesky(m[:k, :k])
            except np.linalg.LinAlgError:
                info[b] = k
                break
    return info.reshape(A.shape[:-2])
