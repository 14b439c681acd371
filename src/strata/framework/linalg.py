"""`strata.linalg` (torch.linalg's role) and matrix products: `matmul` (and `@`) with PyTorch's rules for
1-D operands and broadcast batch dims, and its gradient; `vector_norm` is reductions'; the decompositions,
solves and matrix norms (inv, solve, det, slogdet, cholesky, qr, eigh, svd, norm, ...) are linalg_decomp's,
named here as torch.linalg names them. On "cuda" matmul calls
strata.libs.blas (gemm_strided_batched for float32/float64, gemm_ex with float32 compute for
float16/bfloat16); on "cpu" NumPy (the op table's `mm`, whose kernels the backends register).

Example:
    >>> import strata
    >>> a = strata.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    >>> (a @ a).tolist(), (a @ strata.ones(2, device="cuda")).tolist()
    ([[7.0, 10.0], [15.0, 22.0]], [3.0, 7.0])
"""

from __future__ import annotations

import math

from strata.framework import amp, autograd, op_table, profiling
from strata.framework import dtypes as dt
from strata.framework.ops import _check_same_device, _fit, _needs_grad, broadcast_shapes, record
from strata.framework.reductions import vector_norm  # noqa: F401 - strata.linalg.vector_norm
from strata.framework.tensor import Tensor


def _matmul_nd(a: Tensor, b: Tensor) -> Tensor:
    """(..., m, k) @ (..., k, n) with broadcast batch dims; differentiable."""
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({math.prod(a.shape[:-1])}x{a.shape[-1]} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    batch = tuple(broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    out = op_table.kernel("mm", a.device.type)(a, b, batch, m, k, n)
    if not _needs_grad(a, b):
        return out
    d = op_table.OPS["mm"]
    deriv = d.derivative
    assert deriv is not None

    def bw(g: Tensor) -> tuple:
        ga, gb = deriv(g, a, b, saved.get())
        return _fit(ga, a), _fit(gb, b)
    record(out, [a, b], d.node if a.dim() == 2 and b.dim() == 2 else (d.node_batched or d.node), bw)
    assert out.grad_fn is not None
    saved = autograd.SavedOutput(out, out.grad_fn)  # (not `out` itself: no cycle through out.grad_fn)
    return out


op_table.register_front("mm", _matmul_nd)


@profiling.op("aten::matmul")
def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Matrix product with PyTorch's rules for 1-D operands and broadcast batch dims (input @ other)."""
    a, b = amp.lower_precision(input, other)
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a.dim()}D and {b.dim()}D")
    _check_same_device(a, b)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_ctype(a.dtype)} != "
                           f"{_ctype(b.dtype)}")
    if a.dim() == 1 and b.dim() == 1:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                               "have the same number of elements, but got {} and {} elements respectively"
                               .format(a.shape[0], b.shape[0]))
        return _matmul_nd(a.unsqueeze(0), b.unsqueeze(1)).reshape(())
    if a.dim() == 1:
        return _matmul_nd(a.unsqueeze(0), b).squeeze(-2)
    if b.dim() == 1:
        return _matmul_nd(a, b.unsqueeze(1)).squeeze(-1)
    if a.dim() > 2 and b.dim() == 2 and a.shape[-1] == b.shape[0] > 0:
        # (..., k) @ (k, n): the leading dims folded into one matrix product (PyTorch folds them too),
        # not one product per batch entry and a gradient for b summed over the batch afterwards
        lead = a.shape[:-1]
        return _matmul_nd(a.reshape(-1, a.shape[-1]), b).reshape(*lead, b.shape[-1])
    return _matmul_nd(a, b)


def _ctype(d: dt.dtype) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}[d.name]


from strata.framework.linalg_decomp import (  # noqa: E402 - torch.linalg's functions, after matmul they use
    LinAlgError,
    cholesky,
    cholesky_ex,
    cross,
    det,
    diagonal,
    eigh,
    eigvalsh,
    inv,
    inv_ex,
    matrix_norm,
    matrix_power,
    matrix_rank,
    multi_dot,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    vecdot,
)

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
           "matmul", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
           "solve", "svd", "svdvals", "vecdot", "vector_norm"]


def __getattr__(name: str) -> object:
    """A torch.linalg function strata lacks says so under PyTorch's name (a program run with --as-torch)."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"module 'torch.linalg' has no attribute {name!r}: strata does not provide "
                         f"torch.linalg.{name} (see docs/torch-surface.md for what it covers)")
