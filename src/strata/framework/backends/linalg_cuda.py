"""The "cuda" backend's kernels for torch.linalg's decompositions and solves, through strata.libs.solver
(cuSOLVER's role: getrf/getrs, potrf, geqrf/orgqr), one call per matrix of a batch as PyTorch does for
small batches. The solver takes column-major matrices, so each operand goes in as its transpose made
contiguous on the device (a row-major (n, n) buffer read column-major is the matrix's transpose), and
results come back the same way. Determinants come from the LU factors on the device (the product of
U's diagonal, negated per row interchange). The solver has no symmetric eigensolver or SVD yet, so
`linalg_eigh` and `linalg_svd` raise, naming what to do instead.

`info` (LAPACK's, per matrix) is read back to the host, so the front can raise PyTorch's error: the call
synchronizes, as torch.linalg's error-checking functions do on CUDA.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.framework import autograd, op_table
from strata.framework import dtypes as dt
from strata.framework.creation import arange, eye, zeros
from strata.framework.device import on
from strata.framework.handles import library, library_handle
from strata.framework.ops import _ptr, empty
from strata.framework.tensor import Tensor


def _colmajor(a: Tensor) -> Tensor:
    """(..., r, c) as a contiguous (..., c, r) tensor: each matrix's buffer is the matrix column-major."""
    return a.mT.contiguous()


def _batch(a: Tensor) -> int:
    return int(np.prod(a.shape[:-2], dtype=np.int64))


def _solver(a: Tensor) -> tuple[Any, Any, np.dtype]:
    return library("solver"), library_handle("solver", a.device), a.dtype.np


def _lu(at: Tensor, n: int) -> tuple[Tensor, Tensor]:
    """getrf on each column-major (n, n) matrix of `at` in place: (ipiv (batch, n) int32, info (batch,) int32)."""
    solver, h, npdt = _solver(at)
    b = _batch(at)
    ipiv, info = empty((b, n), dt.int32, at.device), zeros(b, dtype=dt.int32, device=at.device)
    size, isz = n * n, at.dtype.itemsize
    with on(at.device):
        for i in range(b):
            solver.getrf(h, n, n, _ptr(at) + i * size * isz, n, _ptr(ipiv) + i * n * 4, _ptr(info) + i * 4,
                         dtype=npdt)
    return ipiv, info


def _info(info: Tensor, shape: tuple[int, ...]) -> np.ndarray:
    return info.cpu()._host().astype(np.int64).reshape(shape)


@op_table.register("cuda", "linalg_solve")
def solve(a: Tensor, b: Tensor) -> tuple[Tensor, np.ndarray]:
    """X with A X = B: getrf, then getrs on B's columns."""
    with autograd.no_grad():
        n, k = a.shape[-1], b.shape[-1]
        at, bt = _colmajor(a), _colmajor(b)
        ipiv, info = _lu(at, n)
        solver, h, npdt = _solver(a)
        isz, rhs_info = a.dtype.itemsize, zeros(1, dtype=dt.int32, device=a.device)
        with on(a.device):
            for i in range(_batch(a)):
                solver.getrs(h, "N", n, k, _ptr(at) + i * n * n * isz, n, _ptr(ipiv) + i * n * 4,
                             _ptr(bt) + i * n * k * isz, n, _ptr(rhs_info), dtype=npdt)
        return bt.mT.contiguous(), _info(info, tuple(a.shape[:-2]))


@op_table.register("cuda", "linalg_inv")
def inv(a: Tensor) -> tuple[Tensor, np.ndarray]:
    """A^-1: the solve of A X = I."""
    n = a.shape[-1]
    ident = eye(n, dtype=a.dtype, device=a.device).expand(*a.shape).contiguous()
    return solve(a, ident)


def _lu_diagonal(a: Tensor) -> tuple[Tensor, Tensor]:
    """(U's diagonal (..., n), the permutation's sign (...,)) of A's LU factorization, on the device."""
    n = a.shape[-1]
    with autograd.no_grad():
        at = _colmajor(a)
        ipiv, _ = _lu(at, n)
        diag = at.diagonal(0, -2, -1)
        swaps = (ipiv.to(dt.int64) != arange(1, n + 1, device=a.device)).sum(-1).reshape(a.shape[:-2])
        sign = 1.0 - 2.0 * (swaps % 2).to(a.dtype)
    return diag, sign


@op_table.register("cuda", "linalg_det")
def det(a: Tensor) -> Tensor:
    """det(A) = sign(P) * prod(diag(U))."""
    diag, sign = _lu_diagonal(a)
    with autograd.no_grad():
        return (diag.prod(-1) * sign).contiguous()


@op_table.register("cuda", "linalg_slogdet")
def slogdet(a: Tensor) -> tuple[Tensor, Tensor]:
    """(sign, log |det A|) from the same factors (sign 0 and -inf for a singular matrix)."""
    diag, sign = _lu_diagonal(a)
    with autograd.no_grad():
        return (sign * diag.sign().prod(-1)).contiguous(), diag.abs().log().sum(-1).contiguous()


@op_table.register("cuda", "linalg_cholesky")
def cholesky(a: Tensor) -> tuple[Tensor, np.ndarray]:
    """L with A = L L^T: potrf('L') on each matrix (its lower triangle read), the rest of L zeroed."""
    with autograd.no_grad():
        n = a.shape[-1]
        at = _colmajor(a)
        solver, h, npdt = _solver(a)
        b, isz = _batch(a), a.dtype.itemsize
        info = zeros(b, dtype=dt.int32, device=a.device)
        with on(a.device):
            for i in range(b):
                solver.potrf(h, "L", n, _ptr(at) + i * n * n * isz, n, _ptr(info) + i * 4, dtype=npdt)
        return at.mT.tril().contiguous(), _info(info, tuple(a.shape[:-2]))


@op_table.register("cuda", "linalg_qr")
def qr(a: Tensor, mode: str) -> tuple[Tensor, Tensor]:
    """(Q, R): geqrf leaves R on and above the diagonal and the reflectors below it; orgqr forms Q's first
    `cols` columns from them (cols = m for mode 'complete', else min(m, n))."""
    with autograd.no_grad():
        m, n = a.shape[-2], a.shape[-1]
        k = min(m, n)
        cols = m if mode == "complete" else k
        solver, h, npdt = _solver(a)
        b, isz = _batch(a), a.dtype.itemsize
        at = _colmajor(a)  # (..., n, m): each matrix column-major, leading dimension m
        tau, info = empty((b, max(k, 1)), a.dtype, a.device), zeros(1, dtype=dt.int32, device=a.device)
        with on(a.device):
            for i in range(b):
                solver.geqrf(h, m, n, _ptr(at) + i * m * n * isz, m, _ptr(tau) + i * max(k, 1) * isz, _ptr(info),
                             dtype=npdt)
        rows = m if mode == "complete" else k
        r = at.mT[..., :rows, :].triu().contiguous()
        if mode == "r":
            return empty((0,), a.dtype, a.device), r
        q = zeros(*a.shape[:-2], cols, m, dtype=a.dtype, device=a.device)  # column-major (m, cols) buffers
        q[..., :k, :] = at[..., :k, :]
        with on(a.device):
            for i in range(b):
                solver.orgqr(h, m, cols, k, _ptr(q) + i * m * cols * isz, m, _ptr(tau) + i * max(k, 1) * isz,
                             _ptr(info), dtype=npdt)
        return q.mT.contiguous(), r


def _unavailable(what: str, routine: str) -> Any:
    def kernel(a: Tensor, *_: Any) -> Any:
        raise NotImplementedError(f"torch.linalg.{what}: strata's solver library (cuSOLVER's role) has no {routine} "
                                  f"yet, so {what} is not provided for cuda tensors; compute it on the cpu "
                                  f"(A.cpu()) and move the result back")
    return kernel


op_table.register("cuda", "linalg_eigh")(_unavailable("eigh", "syevd"))
op_table.register("cuda", "linalg_svd")(_unavailable("svd", "gesvd"))
