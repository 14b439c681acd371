"""torch.linalg's decompositions, solves and norms (`strata.linalg.*`): the front functions of the op table's
`linalg_*` ops (PyTorch's argument checks and error messages, batching, the autograd node with PyTorch's
derivative formulas written in tensor ops, so they run on the input's device and differentiate again)
and the functions PyTorch composes from them.

Kernels: "cpu" NumPy's LAPACK (backends/linalg_cpu.py), "cuda" strata.libs.solver (backends/linalg_cuda.py;
no eigh or svd there yet). Inputs are float32 or float64 (PyTorch's CPU and CUDA linalg take no half types).
Ops with several differentiable outputs (qr, eigh, svd) record one node on a packed result and hand out
views of it, so one backward pass sees the gradients of all of them.

Example:
    >>> import strata
    >>> a = strata.tensor([[4.0, 2.0], [2.0, 3.0]])
    >>> strata.linalg.solve(a, strata.tensor([2.0, 1.0])).tolist()
    [0.5, 0.0]
    >>> [round(v, 4) for v in strata.linalg.cholesky(a).flatten().tolist()]
    [2.0, 0.0, 1.0, 1.4142]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

from strata.framework import autograd, joining, op_table, profiling, reductions
from strata.framework import dtypes as dt
from strata.framework.backends import linalg_cpu, linalg_cuda  # noqa: F401 - their kernels register here
from strata.framework.creation import eye, tensor, zeros
from strata.framework.ops import _check_same_device, _fit, broadcast_shapes, record
from strata.framework.tensor import Tensor


class LinAlgError(RuntimeError):
    """A linear-algebra failure PyTorch reports as torch.linalg.LinAlgError: a singular matrix, a matrix that
    is not positive definite."""


# ----------------------------------------------------------------------------------------- checks
def _torch_dtype(d: dt.dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float16": "Half", "bfloat16": "BFloat16"}.get(d.name, d.name)


def _check_float(fn: str, a: Tensor) -> None:
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got {_torch_dtype(a.dtype)}")
    if a.dtype in (dt.float16, dt.bfloat16):
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {_torch_dtype(a.dtype)}")


def _check_matrix(fn: str, a: Tensor, square: bool = True) -> None:
    if not isinstance(a, Tensor):
        raise TypeError(f"{fn}(): argument 'A' must be Tensor, not {type(a).__name__}")
    if a.dim() < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    _check_float(fn, a)


def _raise_info(fn: str, info: Any, what: str) -> None:
    """PyTorch's LinAlgError for the first matrix whose `info` is nonzero."""
    flat = [int(v) for v in info.reshape(-1)]
    bad = next((i for i, v in enumerate(flat) if v > 0), None)
    if bad is None:
        return
    where = f"(Batch element {bad}): " if info.ndim else ""
    k = flat[bad]
    if what == "inv":
        raise LinAlgError(f"{fn}: {where}The diagonal element {k} is zero, the inversion could not be completed "
                          "because the input matrix is singular.")
    if what == "solve":
        raise LinAlgError(f"torch.{fn}: The solver failed because the input matrix is singular.")
    raise LinAlgError(f"{fn}: {where}The factorization could not be completed because the input is not "
                      f"positive-definite (the leading minor of order {k} is not positive-definite).")


def _kernel(name: str, a: Tensor) -> Any:
    return op_table.kernel(name, a.device.type)


def _node(name: str) -> str:
    return op_table.OPS[name].node


# ----------------------------------------------------------------------------------------- packed outputs
def _pack(parts: Sequence[Tensor]) -> Tensor:
    return joining.cat([p.reshape(-1) for p in parts])


def _unpack(packed: Tensor, shapes: Sequence[tuple[int, ...]]) -> list[Tensor]:
    out, at = [], 0
    for s in shapes:
        n = math.prod(s)
        out.append(packed[at:at + n].reshape(s))
        at += n
    return out


def _record(out: Tensor, inputs: Sequence[Tensor], name: str, bw: Any) -> Tensor:
    """Record op `name` on `out`: `bw(g, out)` gets the gradient and the output as the derivative reads it (with
    its graph under create_graph, so the formula differentiates again; kept without a reference cycle)."""
    if not autograd.needs_grad(*inputs):
        return out

    def backward(g: Tensor) -> Sequence[Any]:
        return bw(g, saved.get())
    record(out, list(inputs), _node(name), backward)
    assert out.grad_fn is not None
    saved = autograd.SavedOutput(out, out.grad_fn)
    return out


def _record_packed(name: str, inputs: Sequence[Tensor], parts: Sequence[Tensor], bw: Any) -> list[Tensor]:
    """The outputs `parts` as views of one recorded result: `bw(grads, outputs)` gets one gradient per part
    (zeros for the parts no one differentiated) and the outputs (as `_record` hands them), and returns one
    gradient per input."""
    shapes = [tuple(p.shape) for p in parts]
    if not autograd.needs_grad(*inputs):
        return list(parts)
    packed = _record(_pack(parts), inputs, name, lambda g, out: bw(_unpack(g, shapes), _unpack(out, shapes)))
    return _unpack(packed, shapes)


def _sym(x: Tensor) -> Tensor:
    return (x + x.mT) * 0.5


# ----------------------------------------------------------------------------------------- inverse, solve
@profiling.op("aten::linalg_inv")
def inv(A: Tensor, *, out: Any = None) -> Tensor:  # noqa: N803 - PyTorch's argument name
    """A^-1 of a (batch of) square matrix; LinAlgError when singular.

    Raises:
        RuntimeError: not a batch of square floating matrices. LinAlgError: a singular matrix.
    """
    res, info = inv_ex(A)
    _raise_info("linalg.inv", info, "inv")
    return _out(res, out)


class InvEx(NamedTuple):
    inverse: Tensor
    info: Any


def inv_ex(A: Tensor, *, check_errors: bool = False) -> InvEx:  # noqa: N803
    """(A^-1, info) without raising for a singular matrix unless `check_errors` (info as a host array of LAPACK's
    codes; PyTorch returns a tensor)."""
    _check_matrix("linalg.inv", A)
    with autograd.no_grad():
        x, info = _kernel("linalg_inv", A)(A.contiguous())
    if check_errors:
        _raise_info("linalg.inv", info, "inv")

    def bw(g: Tensor, x: Tensor) -> tuple:
        xt = x.mT
        return (-(xt @ g @ xt),)
    return InvEx(_record(x, [A], "linalg_inv", bw), _info_tensor(info, A))


def _info_tensor(info: Any, like: Tensor) -> Tensor:
    """LAPACK's info codes (a host array) as the int32 tensor PyTorch's *_ex functions return, on like's device."""
    return tensor(info.astype("int32"), dtype=dt.int32, device=like.device)


@profiling.op("aten::linalg_solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Any = None) -> Tensor:  # noqa: N803
    """X with A X = B (`left=False`: X A = B); B a (batch of) vector(s) or matrix(ces), batch dims broadcast.

    Raises:
        RuntimeError: bad shapes or dtypes. LinAlgError: a singular A.
    """
    _check_matrix("linalg.solve", A)
    _check_same_device(A, B)
    if not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'B' must be Tensor, not {type(B).__name__}")
    if B.dtype is not A.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{_torch_dtype(A.dtype)} and B of type {_torch_dtype(B.dtype)} instead")
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return _out(solve(A.mT, B.mT).mT, out)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if b.shape[-2] != n:
        rows, cols = (B.shape[-1], 1) if vector else (B.shape[-2], B.shape[-1])
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B ({n}x{n} and "
                           f"{rows}x{cols})")
    batch = tuple(broadcast_shapes(A.shape[:-2], b.shape[:-2]))
    a_b = A.expand(*batch, n, n).contiguous()
    b_b = b.expand(*batch, n, b.shape[-1]).contiguous()
    with autograd.no_grad():
        x, info = _kernel("linalg_solve", A)(a_b, b_b)
        res = x.squeeze(-1) if vector else x
    _raise_info("linalg.solve", info, "solve")

    def bw(g: Tensor, res: Tensor) -> tuple:
        gb = solve(A.mT.expand(*batch, n, n), g.unsqueeze(-1) if vector else g)
        ga = -(gb @ (res.unsqueeze(-1) if vector else res).mT)
        return _fit(ga, A), _fit(gb.squeeze(-1) if vector else gb, B)
    return _out(_record(res, [A, B], "linalg_solve", bw), out)


# ----------------------------------------------------------------------------------------- determinants
@profiling.op("aten::linalg_det")
def det(A: Tensor, *, out: Any = None) -> Tensor:  # noqa: N803
    """det(A) of a (batch of) square matrix, from its LU factorization."""
    _check_matrix("linalg.det", A)
    with autograd.no_grad():
        d = _kernel("linalg_det", A)(A.contiguous())

    def bw(g: Tensor, d: Tensor) -> tuple:  # d det / dA = det * A^-T (A invertible)
        return ((g * d).unsqueeze(-1).unsqueeze(-1) * inv(A).mT,)
    return _out(_record(d, [A], "linalg_det", bw), out)


class SlogDet(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


@profiling.op("aten::linalg_slogdet")
def slogdet(A: Tensor) -> SlogDet:  # noqa: N803
    """(sign, log |det A|): the determinant without overflow."""
    _check_matrix("linalg.slogdet", A)
    with autograd.no_grad():
        sign, logabs = _kernel("linalg_slogdet", A)(A.contiguous())

    def bw(g: Tensor, _: Tensor) -> tuple:
        return (g.unsqueeze(-1).unsqueeze(-1) * inv(A).mT,)
    return SlogDet(sign, _record(logabs, [A], "linalg_slogdet", bw))


# ----------------------------------------------------------------------------------------- Cholesky
class CholeskyEx(NamedTuple):
    L: Tensor  # noqa: N815 - PyTorch's field name
    info: Tensor


@profiling.op("aten::linalg_cholesky")
def cholesky(A: Tensor, *, upper: bool = False, out: Any = None) -> Tensor:  # noqa: N803
    """L with A = L L^T (`upper`: U = L^T) of a (batch of) symmetric positive-definite matrix (its lower
    triangle is read).

    Raises:
        LinAlgError: A is not positive definite (naming the first failing leading minor).
    """
    res = cholesky_ex(A, upper=upper, check_errors=True)
    return _out(res.L, out)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> CholeskyEx:  # noqa: N803
    """(L, info) without raising unless `check_errors`."""
    _check_matrix("linalg.cholesky", A)
    with autograd.no_grad():
        L, info = _kernel("linalg_cholesky", A)(A.contiguous())
    if check_errors:
        _raise_info("linalg.cholesky", info, "cholesky")

    def bw(g: Tensor, L: Tensor) -> tuple:  # noqa: N803 - gA = L^-T Phi(L^T gL) L^-1, symmetrized (Phi: lower
        p = (L.mT @ g.tril()).tril()  # triangle, diagonal halved)
        p = p - 0.5 * _diag(p.diagonal(0, -2, -1))
        linv = inv(L)
        return (_sym(linv.mT @ p @ linv),)
    L = _record(L, [A], "linalg_cholesky", bw)  # noqa: N806
    return CholeskyEx(L.mT if upper else L, _info_tensor(info, A))


def _diag(v: Tensor) -> Tensor:
    """(..., n) -> (..., n, n) with v on the diagonal."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * eye(n, dtype=v.dtype, device=v.device)


# ----------------------------------------------------------------------------------------- QR
class QR(NamedTuple):
    Q: Tensor  # noqa: N815
    R: Tensor  # noqa: N815


@profiling.op("aten::linalg_qr")
def qr(A: Tensor, mode: str = "reduced") -> QR:  # noqa: N803
    """A = Q R: Q with orthonormal columns, R upper triangular; mode 'reduced' (default), 'complete' or 'r'."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    _check_matrix("linalg.qr", A, square=False)
    with autograd.no_grad():
        q, r = _kernel("linalg_qr", A)(A.contiguous(), mode)
    m, n = A.shape[-2], A.shape[-1]

    def bw(grads: list[Tensor], outs: list[Tensor]) -> tuple:
        q, r = outs
        if mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                               "linalg.qr.")
        if mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
        gq, gr = grads
        if m >= n:  # gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q
            mm = r @ gr.mT - gq.mT @ q
            low = mm.tril(-1)
            b = gq + q @ (low + low.mT + _diag(mm.diagonal(0, -2, -1)))
            return (solve(r, b.mT).mT,)
        raise NotImplementedError("linalg.qr: the derivative for wide matrices (m < n) is not implemented in strata")
    if mode == "r":
        return QR(q, r)
    outs = _record_packed("linalg_qr", [A], [q, r], bw)
    return QR(outs[0], outs[1])


# ----------------------------------------------------------------------------------------- eigh, svd
class Eigh(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


def _check_uplo(uplo: str) -> None:
    if uplo not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {uplo}")


@profiling.op("aten::linalg_eigh")
def eigh(A: Tensor, UPLO: str = "L") -> Eigh:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors (columns) of a (batch of) symmetric matrix (its UPLO triangle)."""
    _check_matrix("linalg.eigh", A)
    _check_uplo(UPLO)
    with autograd.no_grad():
        w, v = _kernel("linalg_eigh", A)(A.contiguous(), UPLO)

    def bw(grads: list[Tensor], outs: list[Tensor]) -> tuple:  # gA = V (diag(gw) + skew(V^T gV) / (w_j - w_i)) V^T
        gw, gv = grads
        w, v = outs
        vtgv = v.mT @ gv
        e = w.unsqueeze(-2) - w.unsqueeze(-1)  # e[i, j] = w_j - w_i
        n = w.shape[-1]
        off = 1 - eye(n, dtype=w.dtype, device=w.device)
        core = (vtgv - vtgv.mT) * 0.5 / (e + eye(n, dtype=w.dtype, device=w.device)) * off
        return (v @ (core + _diag(gw)) @ v.mT,)
    outs = _record_packed("linalg_eigh", [A], [w, v], bw)
    return Eigh(outs[0], outs[1])


@profiling.op("aten::linalg_eigvalsh")
def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues (ascending) of a (batch of) symmetric matrix."""
    return eigh(A, UPLO).eigenvalues


class SVD(NamedTuple):
    U: Tensor  # noqa: N815
    S: Tensor  # noqa: N815
    Vh: Tensor  # noqa: N815


@profiling.op("aten::linalg_svd")
def svd(A: Tensor, full_matrices: bool = True) -> SVD:  # noqa: N803
    """A = U diag(S) Vh with S descending. Gradients flow through S (and U, Vh when full_matrices=False)."""
    _check_matrix("linalg.svd", A, square=False)
    with autograd.no_grad():
        u, s, vh = _kernel("linalg_svd", A)(A.contiguous(), full_matrices)
    m, n = A.shape[-2], A.shape[-1]

    def bw(grads: list[Tensor], outs: list[Tensor]) -> tuple:
        gu, gs, gvh = grads
        u, s, vh = outs
        if full_matrices and m != n:
            raise RuntimeError("linalg.svd: The derivative is not implemented when full_matrices=True and the "
                               "matrix is not square; use full_matrices=False")
        return (_svd_backward(u, s, vh, gu, gs, gvh),)
    outs = _record_packed("linalg_svd", [A], [u, s, vh], bw)
    return SVD(outs[0], outs[1], outs[2])


def _svd_backward(u: Tensor, s: Tensor, vh: Tensor, gu: Tensor, gs: Tensor, gvh: Tensor) -> Tensor:
    """The real SVD's derivative (reduced factors, distinct singular values), as PyTorch's svd_backward."""
    v, gv = vh.mT, gvh.mT
    k = s.shape[-1]
    ident = eye(k, dtype=s.dtype, device=s.device)
    s2 = s * s
    f = s2.unsqueeze(-2) - s2.unsqueeze(-1)  # f[i, j] = s_j^2 - s_i^2
    f = (1 - ident) / (f + ident)
    utgu, vtgv = u.mT @ gu, v.mT @ gv
    su = (utgu - utgu.mT) * f
    sv = (vtgv - vtgv.mT) * f
    sd = s.unsqueeze(-1)
    inner = _diag(gs) + su * s.unsqueeze(-2) + sd * sv
    ga = u @ inner @ vh
    m, n = u.shape[-2], v.shape[-2]
    if m > k:  # the part of gU outside U's span
        sinv = (1 / s).unsqueeze(-2)
        ga = ga + (gu - u @ utgu) * sinv @ vh
    if n > k:
        sinv = (1 / s).unsqueeze(-1)
        ga = ga + u @ (sinv * (gv - v @ vtgv).mT)
    return ga


@profiling.op("aten::linalg_svdvals")
def svdvals(A: Tensor) -> Tensor:  # noqa: N803
    """The singular values, descending (differentiable: U diag(gS) Vh)."""
    return svd(A, full_matrices=False).S


# ----------------------------------------------------------------------------------------- norms and products
@profiling.op("aten::linalg_matrix_norm")
def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1), keepdim: bool = False, *,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """'fro' (default), 'nuc', inf, -inf, 1, -1, 2, -2 over the two dims `dim`."""
    if dtype is not None:
        A = A.to(dt.as_dtype(dtype))  # noqa: N806
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _check_float("linalg.matrix_norm", A)
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        return reductions.vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        return _keep(r, (d0, d1), keepdim)
    if ord in (math.inf, -math.inf, 1, -1):
        row_dim, col_dim = (d1, d0) if ord in (1, -1) else (d0, d1)  # 1: max column sum; inf: max row sum
        sums = A.abs().sum(col_dim, keepdim=True)
        r = sums.amax(row_dim, keepdim=True) if ord > 0 else sums.amin(row_dim, keepdim=True)
        return r if keepdim else r.squeeze((d0, d1) if d0 < d1 else (d1, d0))
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def _keep(r: Tensor, dims: tuple[int, int], keepdim: bool) -> Tensor:
    if not keepdim:
        return r
    for d in sorted(dims):
        r = r.unsqueeze(d)
    return r


@profiling.op("aten::linalg_norm")
def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """A vector norm (1-D input or one dim) or a matrix norm (2-D input or two dims), as torch.linalg.norm."""
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if A.dim() not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.dim()}D.")
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: Order {ord} not supported.")
    return reductions.vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along `dim` (real inputs), batch dims broadcast."""
    return (x * y).sum(dim)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:  # noqa: A002
    """The 3-vector cross product along `dim` (batch dims broadcast)."""
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    a, b = input.unbind(dim), other.unbind(dim)
    parts = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    return joining.stack(parts, dim)


def matrix_power(A: Tensor, n: int) -> Tensor:  # noqa: N803
    """A^n by repeated squaring (n < 0: the inverse's power; n = 0: the identity)."""
    if A.dim() < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.dim() >= 2 else A.shape[-1]} by {A.shape[-1]} matrices")
    if n == 0:
        return eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(*A.shape).clone()
    base = inv(A) if n < 0 else A
    result: Tensor | None = None
    k = abs(n)
    while k:
        if k & 1:
            result = base if result is None else result @ base
        k >>= 1
        if k:
            base = base @ base
    assert result is not None
    return result


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The chain product A @ B @ ... (the first may be 1-D, the last too), left to right."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None,  # noqa: N803
                hermitian: bool = False) -> Tensor:
    """The number of singular values above max(atol, rtol * the largest) (rtol default: eps * max(m, n))."""
    s = eigvalsh(A).abs() if hermitian else svdvals(A)
    return _above_cutoff(A, s, atol, rtol).sum(-1)


def _above_cutoff(A: Tensor, s: Tensor, atol: float | None, rtol: float | None) -> Tensor:  # noqa: N803
    """Which singular values count, PyTorch's rule: above max(atol, rtol * the largest), rtol defaulting to
    eps * max(m, n) (to 0 when only atol is given)."""
    eps = 2.220446049250313e-16 if A.dtype is dt.float64 else 1.1920928955078125e-07
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else eps * max(A.shape[-2], A.shape[-1])
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
    return s > (smax * rtol).clamp(min=atol or 0.0)


def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False) -> Tensor:  # noqa: N803
    """The Moore-Penrose pseudo-inverse, V diag(1/s) U^T over the singular values above the tolerance."""
    u, s, vh = svd(A, full_matrices=False)
    sinv = (1 / s).where(_above_cutoff(A, s, atol, rtol), zeros(1, dtype=s.dtype, device=s.device))
    return (vh.mT * sinv.unsqueeze(-2)) @ u.mT


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """The diagonal of each matrix, as torch.linalg.diagonal (the last two dims by default)."""
    return A.diagonal(offset, dim1, dim2)


def _out(res: Tensor, out: Any) -> Tensor:
    """`out=`: the result copied into the given tensor (of the result's shape)."""
    if out is None:
        return res
    if tuple(out.shape) != tuple(res.shape):
        raise RuntimeError(f"out= expects a tensor of shape {list(res.shape)}, got {list(out.shape)}")
    out.copy_(res)
    return out


__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
           "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "svd",
           "svdvals", "vecdot"]
