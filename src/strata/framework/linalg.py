"""`strata.linalg` (torch.linalg's role) and matrix products: `matmul` (and `@`) with PyTorch's rules for
1-D operands and broadcast batch dims, and its gradient; `vector_norm` is reductions'. On "cuda" matmul calls
strata.libs.blas (gemm_strided_batched for float32/float64, gemm_ex with float32 compute for
float16/bfloat16); on "cpu" NumPy.

Example:
    >>> import strata
    >>> a = strata.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    >>> (a @ a).tolist(), (a @ strata.ones(2, device="cuda")).tolist()
    ([[7.0, 10.0], [15.0, 22.0]], [3.0, 7.0])
"""

from __future__ import annotations

import math

import numpy as np

from strata.framework import amp, autograd, profiling
from strata.framework import dtypes as dt
from strata.framework.device import CPU, on
from strata.framework.handles import library, library_handle
from strata.framework.ops import (
    _check_same_device,
    _fit,
    _opmath,
    _ptr,
    _torch_name,
    broadcast_shapes,
    empty,
    fill_,
    from_host,
    record,
)
from strata.framework.reductions import vector_norm  # noqa: F401 - strata.linalg.vector_norm
from strata.framework.tensor import Tensor


def _mm_cuda(a: Tensor, b: Tensor) -> Tensor:
    """Batched row-major (B, m, k) @ (B, k, n) on the GPU with strata.libs.blas (column-major trick:
    C^T = B^T A^T, so row-major B and A go in as column-major B^T and A^T, no transposes needed)."""
    blas = library("blas")
    batch, m, k = a.shape
    n = b.shape[2]
    out = empty((batch, m, n), a.dtype, a.device)
    if out.numel() == 0:
        return out
    if k == 0:
        return fill_(out, 0)
    a, b = a.contiguous(), b.contiguous()
    h = library_handle("blas", a.device)
    with on(a.device):
        if a.dtype in (dt.float32, dt.float64):
            blas.gemm_strided_batched(h, "N", "N", n, m, k, 1.0, _ptr(b), n, k * n, _ptr(a), k, m * k, 0.0,
                                      _ptr(out), n, m * n, batch, dtype=a.dtype.np)
        elif a.dtype in (dt.float16, dt.bfloat16):
            isz = a.dtype.itemsize
            for i in range(batch):
                blas.gemm_ex(h, "N", "N", n, m, k, 1.0, _ptr(b) + i * k * n * isz, a.dtype.np, n,
                             _ptr(a) + i * m * k * isz, a.dtype.np, k, 0.0, _ptr(out) + i * m * n * isz, a.dtype.np, n,
                             "f32")
        else:
            raise RuntimeError(f"\"addmm_cuda\" not implemented for '{_torch_name(a.dtype.name)}'")
    return out


def _matmul_nd(a: Tensor, b: Tensor) -> Tensor:
    """(..., m, k) @ (..., k, n) with broadcast batch dims; differentiable."""
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({math.prod(a.shape[:-1])}x{a.shape[-1]} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    batch = tuple(broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if a.device.type == "cpu":
        r = np.matmul(_opmath(a._host()), _opmath(b._host()))
        out = from_host(r, a.dtype, CPU)
    else:
        with autograd.no_grad():
            ab = a.expand(*batch, m, k).reshape(-1, m, k)
            bb = b.expand(*batch, k, n).reshape(-1, k, n)
            out = _mm_cuda(ab, bb).reshape(*batch, m, n)
            out.grad_fn, out._requires_grad = None, False

    def bw(g: Tensor) -> tuple:
        ga = _matmul_nd(g, b.mT) if a.requires_grad else None
        gb = _matmul_nd(a.mT, g) if b.requires_grad else None
        return _fit(ga, a), _fit(gb, b)
    return record(out, [a, b], "MmBackward0" if a.dim() == 2 and b.dim() == 2 else "BmmBackward0", bw)


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
    return _matmul_nd(a, b)


def _ctype(d: dt.dtype) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}[d.name]
