"""Reductions with PyTorch's semantics: sum, mean (dims, keepdim, dtype), max/min (a value, or values
and indices along a dim), argmax, argmin; with their gradients. var, std, softmax and log_softmax are
built from them (so their gradients come for free).

On "cuda" one block per output element reduces with the framework's `reduce` kernel (first index on
ties, NaN wins, as ATen); on "cpu" NumPy does it.

Example:
    >>> import strata
    >>> x = strata.tensor([[1.0, 7.0], [5.0, 3.0]], device="cuda")
    >>> x.sum(0).tolist(), x.max(1).indices.tolist(), x.argmin().item()
    ([6.0, 10.0], [1, 0], 0)
"""

from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

import numpy as np

from strata.framework import autograd, creation, kernels
from strata.framework import dtypes as dt
from strata.framework.device import CPU, on
from strata.framework.ops import (
    _cast,
    _fit,
    _opmath,
    _ptr,
    _torch_name,
    binary,
    clone,
    div,
    empty,
    from_host,
    full,
    maximum,
    minimum,
    record,
    where,
    zeros_like,
)
from strata.framework.tensor import Tensor, contiguous_strides


class MaxMin(NamedTuple):
    """(values, indices) of max/min along a dim, printed as torch.return_types.max / .min."""

    values: Tensor
    indices: Tensor
    op: str = "max"

    def __iter__(self) -> Any:  # unpacks as a pair, like PyTorch's
        return iter((self.values, self.indices))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: Any) -> Any:
        return (self.values, self.indices)[i]

    def __repr__(self) -> str:
        return f"strata.return_types.{self.op}(\nvalues={self.values!r},\nindices={self.indices!r})"


def _dims(x: Tensor, dim: Any) -> list[int]:
    if dim is None:
        return list(range(x.dim()))
    ds = [dim] if isinstance(dim, int) else list(dim)
    if not ds:  # sum(dim=()) reduces everything, as in PyTorch
        return list(range(x.dim()))
    n = builtins.max(x.dim(), 1)
    out = sorted({d % n if -n <= d < n else _bad_dim(d, x.dim())
                  for d in ds})
    return [d for d in out if d < x.dim()]


def _bad_dim(d: int, nd: int) -> int:
    n = builtins.max(nd, 1)
    raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")


def _reduce(op: str, x: Tensor, dims: list[int], keepdim: bool, out_dt: dt.dtype) -> tuple[Tensor, Tensor | None]:
    kept = [i for i in range(x.dim()) if i not in dims]
    out_shape = [1 if i in dims else s for i, s in enumerate(x.shape)] if keepdim else [x.shape[i] for i in kept]
    kept_shape = [x.shape[i] for i in kept]
    red_shape = [x.shape[i] for i in dims]
    if x.device.type == "cpu":
        a = _opmath(x._host())
        axis = tuple(dims)
        idx = None
        with np.errstate(all="ignore"):
            if op in ("sum", "mean"):
                acc = np.float64 if a.dtype == np.float64 else np.float32 if a.dtype.kind == "f" else np.int64
                r = a.sum(axis=axis, dtype=acc) if op == "sum" else a.mean(axis=axis, dtype=acc)
            else:
                moved = np.moveaxis(a, dims, list(range(x.dim() - len(dims), x.dim()))).reshape(
                    *kept_shape, -1)
                idx = (np.nanargmax if False else np.argmax if op == "max" else np.argmin)(moved, axis=-1)
                nan = np.isnan(moved) if moved.dtype.kind == "f" else np.zeros(moved.shape, bool)
                has_nan = nan.any(axis=-1)
                idx = np.where(has_nan, nan.argmax(axis=-1), idx)
                r = np.take_along_axis(moved, idx[..., None], -1)[..., 0]
        values = from_host(np.asarray(r).reshape(out_shape), out_dt, CPU)
        return values, (from_host(np.asarray(idx).reshape(out_shape), dt.int64, CPU) if idx is not None else None)
    values = empty(out_shape, out_dt, x.device)
    indices = empty(out_shape, dt.int64, x.device) if op in ("max", "min") else None
    kst = contiguous_strides(kept_shape)
    with on(x.device):
        kernels.reduce(op, x.dtype.name, kept_shape, _ptr(values), kst, _ptr(indices) if indices is not None else 0,
                       [x.stride(i) for i in kept], red_shape, [x.stride(i) for i in dims], _ptr(x))
    return values, indices


def _restore(g: Tensor, x: Tensor, dims: list[int], keepdim: bool) -> Tensor:
    """g of a reduction, broadcastable against x again (reduced dims put back as size 1)."""
    if not keepdim:
        for d in dims:
            g = g.unsqueeze(d)
    return g


def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001,A002
    """Sum over `dim` (all dims if None); integral and bool inputs give int64."""
    x = input if dtype is None else input.to(dt.as_dtype(dtype))
    dims = _dims(x, dim)
    out_dt = x.dtype if x.dtype.is_floating_point else dt.int64
    if x.numel() == 0 or not dims:
        with autograd.no_grad():
            src = x if x.dtype is out_dt else x.to(out_dt)
        out = full([1 if (i in dims and keepdim) else s for i, s in enumerate(x.shape) if keepdim or i not in dims],
                   0, out_dt, x.device) if x.numel() == 0 else _cast(src, out_dt)
    else:
        out, _ = _reduce("sum", x, dims, keepdim, out_dt)
    shape = x.shape
    return record(out, [x], "SumBackward1" if dim is not None else "SumBackward0",
                  lambda g: (_fit(_restore(g, x, dims, keepdim).expand(shape), x),))


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """Mean over `dim` (all dims if None); needs a floating dtype."""
    x = input if dtype is None else input.to(dt.as_dtype(dtype))
    if not x.dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_torch_name(x.dtype.name)}")
    dims = _dims(x, dim)
    n = math.prod(x.shape[d] for d in dims)
    if n == 0 or not dims:
        with autograd.no_grad():
            out = div(sum(x, dims if dims else None, keepdim), n) if dims else clone(x).detach()
    else:
        out, _ = _reduce("mean", x, dims, keepdim, x.dtype)
    shape = x.shape
    return record(out, [x], "MeanBackward1" if dim is not None else "MeanBackward0",
                  lambda g: (_fit(_restore(g, x, dims, keepdim).expand(shape) / n, x),))


def _maxmin(op: str, input: Tensor, dim: Any, keepdim: bool) -> Any:  # noqa: A002
    if input.dtype is dt.bool_ and input.device.type == "cuda":
        vals = _maxmin(op, input.to(dt.uint8), dim, keepdim)
        return MaxMin(vals.values.bool(), vals.indices, op) if dim is not None else vals.bool()
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{op}(): Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
        dims = list(range(input.dim()))
        out, _ = _reduce(op, input, dims, False, input.dtype) if dims else (clone(input).detach(), None)

        def bw_all(g: Tensor) -> tuple:
            mask = binary("eq", input, out)
            count = sum(mask)
            return (_fit(where(mask, g / count, zeros_like(input).to(g.dtype)), input),)
        return record(out, [input], f"{op.capitalize()}Backward1", bw_all)
    d = _dims(input, dim)
    if input.dim() and input.shape[d[0]] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d[0]} to have non-zero size.")
    if not d:  # 0-dim input
        return MaxMin(clone(input), full((), 0, dt.int64, input.device), op)
    values, indices = _reduce(op, input, d, keepdim, input.dtype)
    assert indices is not None
    size = input.shape[d[0]]

    def bw(g: Tensor) -> tuple:
        idx = _restore(indices, input, d, keepdim)
        pos_shape = [1] * input.dim()
        pos_shape[d[0]] = size
        pos = creation.arange(size, device=input.device).reshape(pos_shape)  # a kernel on "cuda": no copy
        mask = binary("eq", pos, idx)
        g = _restore(g, input, d, keepdim)
        return (_fit(where(mask, g, zeros_like(g)), input),)
    record(values, [input], f"{op.capitalize()}Backward0", bw)
    return MaxMin(values, indices, op)


def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001,A002
    """Largest value (no dim), or (values, indices) along `dim`; NaN wins; the first index on ties.
    `max(a, b)` with a tensor b is `maximum`."""
    if isinstance(dim, Tensor):
        return maximum(input, dim)
    return _maxmin("max", input, dim, keepdim)


def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001,A002
    """Smallest value (no dim), or (values, indices) along `dim`."""
    if isinstance(dim, Tensor):
        return minimum(input, dim)
    return _maxmin("min", input, dim, keepdim)


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the largest value along `dim` (of the flattened tensor when None)."""
    _no_bool("argmax", input)
    with autograd.no_grad():
        if dim is None:
            return _maxmin("max", input.reshape(-1), 0, False).indices.reshape([1] * input.dim() if keepdim else [])
        return _maxmin("max", input, dim, keepdim).indices


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """Index of the smallest value along `dim` (of the flattened tensor when None)."""
    _no_bool("argmin", input)
    with autograd.no_grad():
        if dim is None:
            return _maxmin("min", input.reshape(-1), 0, False).indices.reshape([1] * input.dim() if keepdim else [])
        return _maxmin("min", input, dim, keepdim).indices


def _no_bool(op: str, x: Tensor) -> None:
    if x.dtype is dt.bool_:
        raise RuntimeError(f"{op}(): does not support bool input")


def var(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False) -> Tensor:  # noqa: A002
    """sum((x - mean)^2) / (N - correction) over `dim` (all dims if None); Bessel's correction by default."""
    dims = _dims(input, dim)
    n = math.prod(input.shape[d] for d in dims)
    mu = mean(input, dims, keepdim=True)
    centered = input - mu
    return div(sum(centered * centered, dims, keepdim), builtins.max(0, n - correction))


def std(input: Tensor, dim: Any = None, *, correction: float = 1, keepdim: bool = False) -> Tensor:  # noqa: A002
    """sqrt(var(input, dim, correction=correction, keepdim=keepdim))."""
    return var(input, dim, correction=correction, keepdim=keepdim).sqrt()


