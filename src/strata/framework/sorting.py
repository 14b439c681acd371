"""Sorting, scans and row reductions with PyTorch's semantics: `sort`, `argsort`, `topk`, `cumsum`,
`cumprod`, `logsumexp`, fused `softmax` / `log_softmax`, `var_mean`, `std_mean`; with gradients.

On "cuda": `sort` is a stable bitonic sort of each row in one block (kernels/sorting.py; NaN sorts as
the largest value, equal values keep their order), `topk` takes the first k of it; `cumsum` / `cumprod`
are one block per row scanning chunks in shared memory; `softmax` / `log_softmax` (float32, float16,
bfloat16) call strata.libs.dnn's fused row kernels, forward and backward; `logsumexp` composes the
reduction and elementwise kernels. On "cpu" NumPy computes them (half and bfloat16 in float32).

Example:
    >>> import strata
    >>> x = strata.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], device="cuda")
    >>> v, i = strata.sort(x, dim=1, descending=True)
    >>> v.tolist(), i.tolist()
    ([[3.0, 2.0, 1.0], [5.0, 4.0, 0.0]], [[0, 2, 1], [1, 2, 0]])
    >>> strata.topk(x, 1).indices.tolist(), strata.cumsum(x, 0).tolist()
    ([[0], [1]], [[3.0, 1.0, 2.0], [3.0, 6.0, 6.0]])
"""

from __future__ import annotations

import builtins
import math
from typing import Any

from strata.framework import amp, autograd, op_table
from strata.framework import dtypes as dt
from strata.framework.ops import (
    _cast,
    _fit,
    _torch_name,
    clone,
    empty,
    full,
    record,
    where,
)
from strata.framework.reductions import MaxMin, _dims, _restore, max, mean, sum, var
from strata.framework.tensor import Tensor, _wrap_dim


# ----------------------------------------------------------------------------------------- sort
def sort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> MaxMin:  # noqa: A002
    """Sort along `dim`: (values, indices) with values = input.gather(dim, indices).

    The sort is always stable (equal values keep their order, so `stable` changes nothing) and NaN
    sorts as the largest value, as in PyTorch.

    Args:
        input: the tensor.
        dim: the dim to sort along.
        descending: largest first.
        stable: accepted for PyTorch's signature.
    Returns:
        A named pair (values, indices); indices are int64.
    Raises:
        IndexError: `dim` out of range.

    Example:
        >>> import strata
        >>> strata.sort(strata.tensor([2, 1, 2, 0])).indices.tolist()
        [3, 1, 0, 2]
    """
    if not isinstance(stable, bool):
        raise TypeError(f"sort(): argument 'stable' must be bool, not {type(stable).__name__}")
    d = _wrap_dim(dim, input.dim())
    values, indices = _sort(input, d, descending)
    shape = input.shape
    record(values, [input], "SortBackward0", lambda g: (_fit(_scatter_rows(g, indices, d, shape), input),))
    return MaxMin(values, indices, "sort")


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Tensor:  # noqa: A002
    """The indices that sort `input` along `dim` (`sort(...).indices`)."""
    with autograd.no_grad():
        return sort(input, dim, descending, stable=stable).indices


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> MaxMin:  # noqa: A002
    """The k largest (or smallest) values along `dim` and their indices, largest first (smallest first
    for largest=False). Ties come out in index order (PyTorch leaves their order unspecified).

    Raises:
        RuntimeError: k outside [0, input.size(dim)]; a bool input.
        IndexError: `dim` out of range.

    Example:
        >>> import strata
        >>> strata.topk(strata.tensor([1.0, 4.0, 3.0]), 2).values.tolist()
        [4.0, 3.0]
    """
    d = _wrap_dim(dim, input.dim())
    if input.dtype is dt.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    size = input.shape[d] if input.dim() else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    with autograd.no_grad():
        values, indices = _sort(input, d, largest)
        if input.dim() and k != size:
            cut = (slice(None),) * d + (slice(0, k),)
            values, indices = values[cut].contiguous(), indices[cut].contiguous()
    shape = input.shape
    record(values, [input], "TopkBackward0", lambda g: (_fit(_scatter_rows(g, indices, d, shape), input),))
    return MaxMin(values, indices, "topk")


def _rows(shape: Any, d: int) -> tuple[int, int, int]:
    """(outer, n, inner) of a contiguous tensor of `shape` seen as rows along dim d."""
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:d]), shape[d], math.prod(shape[d + 1:])


def _sort(x: Tensor, d: int, descending: bool) -> tuple[Tensor, Tensor]:
    """(values, indices) of a stable sort along d, without autograd."""
    if x.dim() == 0:
        with autograd.no_grad():
            return clone(x), full((), 0, dt.int64, x.device)
    result: tuple[Tensor, Tensor] = op_table.kernel("sort", x.device.type)(x, d, descending)
    return result


def _scatter_rows(g: Tensor, indices: Tensor, d: int, shape: Any) -> Tensor:
    """zeros(shape) with g put at `indices` along d (the gradient of sort/topk), without autograd."""
    if g.dim() == 0:
        return g.reshape(shape)
    out: Tensor = op_table.kernel("sort_backward", g.device.type)(g, indices, d, shape)
    return out


# ----------------------------------------------------------------------------------------- scans
def cumsum(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """y_i = x_0 + ... + x_i along `dim`; integral and bool inputs give int64 (unless `dtype`).

    Args:
        input: the tensor.
        dim: the dim to scan.
        dtype: cast the input to this dtype first.
    Raises:
        IndexError: `dim` out of range.

    Example:
        >>> import strata
        >>> strata.cumsum(strata.tensor([1, 2, 3]), 0)
        tensor([1, 3, 6])
    """
    return _cum("sum", input, dim, dtype)


def cumprod(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """y_i = x_0 * ... * x_i along `dim`; integral and bool inputs give int64 (unless `dtype`).

    Example:
        >>> import strata
        >>> strata.cumprod(strata.tensor([1.0, 2.0, 3.0]), 0).tolist()
        [1.0, 2.0, 6.0]
    """
    return _cum("prod", input, dim, dtype)


def _cum(op: str, input: Tensor, dim: int, dtype: Any) -> Tensor:  # noqa: A002
    d = _wrap_dim(dim, input.dim())
    if dtype is None:  # autocast runs cumsum/cumprod in float32 unless a dtype is given, as PyTorch's
        (input,) = amp.full_precision(input)
    x = input
    if dtype is not None:
        target = dt.as_dtype(dtype)
        if target is dt.bool_:
            raise NotImplementedError(f"\"cum{op}_out_cpu\" not implemented for 'Bool'")
        with autograd.no_grad():
            x = input if input.dtype is target else _cast(input, target)
    out = _scan(op, x, d, reverse=False)
    if op == "sum":
        return record(out, [input], "CumsumBackward0",
                      lambda g: (_fit(_scan("sum", g, d, reverse=True), input),))
    return record(out, [input], "CumprodBackward0", lambda g: (_fit(_cumprod_backward(x, g, d), input),))


def _scan(op: str, x: Tensor, d: int, *, reverse: bool) -> Tensor:
    """Inclusive scan along d (from the end if `reverse`), without autograd."""
    out_dt = x.dtype if x.dtype.is_floating_point else dt.int64
    out: Tensor = op_table.kernel("cum" + op, x.device.type)(op, x, d, reverse, out_dt)
    return out


def _cumprod_backward(x: Tensor, g: Tensor, d: int) -> Tensor:
    """d cumprod(x) / dx applied to g (exact where x has zeros), without autograd."""
    if g.dtype is not x.dtype:
        g = _cast(g, x.dtype)
    out: Tensor = op_table.kernel("cumprod_backward", x.device.type)(x, g, d)
    return out


# ----------------------------------------------------------------------------------------- row reductions
def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """log(sum(exp(x))) over `dim` (an int or a tuple), computed as m + log(sum(exp(x - m))) with m the
    max (0 where the max is infinite), so large inputs do not overflow; integral inputs give the default
    float dtype.

    Example:
        >>> import strata
        >>> round(strata.logsumexp(strata.tensor([1000.0, 1000.0]), 0).item(), 2)
        1000.69
    """
    x = input
    if not x.dtype.is_floating_point:
        with autograd.no_grad():
            x = _cast(input, dt.get_default_dtype())
    dims = _dims(x, dim)
    with autograd.no_grad():
        if any(x.shape[i] == 0 for i in dims):
            out_k = full([1 if i in dims else s for i, s in enumerate(x.shape)], -math.inf, x.dtype, x.device)
        else:
            m = x
            for i in dims:
                m = max(m, i, keepdim=True).values
            m = where(m.abs() == math.inf, full((), 0, m.dtype, m.device), m)
            out_k = sum((x - m).exp(), dims, keepdim=True).log() + m
        out = out_k
        if not keepdim:
            for i in reversed(dims):
                out = out.squeeze(i)
        out = out.detach()

    def bw(g: Tensor) -> tuple:
        return (_fit(_restore(g, x, dims, keepdim) * (x - out_k).exp(), input),)
    return record(out, [input], "LogsumexpBackward0", bw)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """exp(x - max) / sum(exp(x - max)) along `dim`, after casting to `dtype` if given.

    On "cuda" float32/float16/bfloat16 run strata.libs.dnn's fused row kernel (softmax_forward; its
    backward is softmax_backward); float64 composes the reduction and elementwise kernels.

    Raises:
        NotImplementedError: an integral input (without a floating `dtype`).
        IndexError: `dim` out of range.

    Example:
        >>> import strata
        >>> strata.framework.sorting.softmax(strata.tensor([0.0, 0.0], device="cuda"), 0).tolist()
        [0.5, 0.5]
    """
    return _softmax(False, input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """x - max - log(sum(exp(x - max))) along `dim` (see `softmax`)."""
    return _softmax(True, input, dim, dtype)


def _softmax(log: bool, input: Tensor, dim: int, dtype: Any) -> Tensor:  # noqa: A002
    name = "log_softmax" if log else "softmax"
    if dtype is None:  # autocast runs softmax in float32 unless a dtype is given, as PyTorch's
        (input,) = amp.full_precision(input)
    x = input
    if dtype is not None:
        with autograd.no_grad():
            target = dt.as_dtype(dtype)
            x = input if input.dtype is target else _cast(input, target)
    d = _wrap_dim(dim, x.dim())
    if not x.dtype.is_floating_point:  # PyTorch names the kernel it would have run
        kernel = name + ("_lastdim" if d == builtins.max(x.dim() - 1, 0) else "")
        raise NotImplementedError(f"\"{kernel}_kernel_impl\" not implemented for '{_torch_name(x.dtype.name)}'")
    # the op table's kernel of x's device (cpu: NumPy; cuda: dnn's fused pass, None for float64), else the
    # composite; a kernel may give its fused backward
    done = op_table.kernel(name, x._storage.device.type)(name, x, d) if x.numel() else (empty(x.shape, x.dtype,
                                                                                              x.device), None)
    fused_bw = None
    if done is not None:
        out, fused_bw = done
    else:
        with autograd.no_grad():
            shifted = x - max(x, d, keepdim=True).values if x.dim() else x - x
            lse = sum(shifted.exp(), d, keepdim=True).log()
            out = shifted - lse if log else (shifted - lse).exp()

    def bw(g: Tensor) -> tuple:
        if g.dtype is not out.dtype:
            g = _cast(g, out.dtype)
        if fused_bw is not None and not autograd.is_grad_enabled():  # the fused backward (records no graph)
            return (_fit(fused_bw(g), input),)
        if log:
            r = g - out.exp() * sum(g, d, keepdim=True)
        else:
            r = out * (g - sum(g * out, d, keepdim=True))
        return (_fit(r, input),)
    return record(out, [input], op_table.OPS[name].node, bw)


# ----------------------------------------------------------------------------------------- moments
def var_mean(input: Tensor, dim: Any = None, *, correction: float = 1,  # noqa: A002
             keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """(var(input, dim, correction=correction, keepdim=keepdim), mean(input, dim, keepdim=keepdim)).

    Example:
        >>> import strata
        >>> [t.item() for t in strata.var_mean(strata.tensor([1.0, 2.0, 6.0]))]
        [7.0, 3.0]
    """
    return var(input, dim, correction=correction, keepdim=keepdim), mean(input, dim, keepdim=keepdim)


def std_mean(input: Tensor, dim: Any = None, *, correction: float = 1,  # noqa: A002
             keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """(std(input, dim, ...), mean(input, dim, ...)) (see `var_mean`)."""
    v, m = var_mean(input, dim, correction=correction, keepdim=keepdim)
    return v.sqrt(), m
