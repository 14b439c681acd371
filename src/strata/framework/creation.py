"""Tensor creation with PyTorch's signatures: tensor, from_numpy, zeros, ones, empty, full, arange,
linspace, eye and the *_like variants. Dtypes are inferred as PyTorch infers them (Python floats give
the default dtype, ints int64, bools bool).

Example:
    >>> import strata
    >>> strata.arange(5).tolist(), strata.zeros(2, 3).shape, strata.full((2,), 7).dtype
    ([0, 1, 2, 3, 4], strata.Size([2, 3]), strata.int64)
    >>> strata.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.framework import dtypes as dt
from strata.framework import op_table, ops
from strata.framework.device import CPU, canonical
from strata.framework.storage import Storage
from strata.framework.tensor import Tensor, _shape_arg, contiguous_strides


def _dev(device: Any) -> Any:
    return CPU if device is None else canonical(device)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer(data: Any) -> dt.dtype:
    """The dtype PyTorch gives a tensor made from nested Python data."""
    kinds: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, Tensor):
            kinds.add("f" if x.dtype.is_floating_point else "b" if x.dtype is dt.bool_ else "i")
        elif isinstance(x, bool | np.bool_):
            kinds.add("b")
        elif isinstance(x, int | np.integer):
            kinds.add("i")
        elif isinstance(x, float | np.floating):
            kinds.add("f")
        elif isinstance(x, Sequence) and not isinstance(x, str):
            for y in x:
                walk(y)
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")
    walk(data)
    return dt.get_default_dtype() if "f" in kinds else dt.int64 if "i" in kinds else dt.bool_ if kinds \
        else dt.get_default_dtype()


def tensor(data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, scalars, NumPy arrays or tensors).

    Raises:
        TypeError: data of a type that can't be a tensor element.
        ValueError: ragged nested lists.
    """
    if isinstance(data, Tensor):
        src = data.detach()
        out = ops.to_copy(src, _dev(device) if device is not None else src.device,
                          dt.as_dtype(dtype) if dtype is not None else src.dtype)
        return _finish(out, requires_grad)
    if isinstance(data, np.ndarray):
        d = dt.as_dtype(dtype) if dtype is not None else dt.from_numpy_dtype(data.dtype)
        return _finish(ops.from_host(data, d, _dev(device)), requires_grad)
    d = dt.as_dtype(dtype) if dtype is not None else _infer(data)
    try:
        host = np.array(_plain(data), dtype=np.float64 if d.is_floating_point else None)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists: {e}") from e
    if host.dtype == object:
        raise ValueError("expected sequence of equal-length lists")
    if host.size == 0:
        host = host.astype(np.float64)
    return _finish(ops.from_host(host, d, _dev(device)), requires_grad)


def _plain(x: Any) -> Any:
    if isinstance(x, Tensor):
        return x.tolist()
    if isinstance(x, list | tuple):
        return [_plain(y) for y in x]
    return x


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` as a tensor, without a copy when it already is one of that dtype and device."""
    if isinstance(data, Tensor):
        return data.to(device=device if device is not None else data.device,
                       dtype=dtype if dtype is not None else data.dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(a: np.ndarray) -> Tensor:
    """A cpu tensor sharing memory with the NumPy array `a` (C-contiguous arrays share; others are copied)."""
    d = dt.from_numpy_dtype(a.dtype)
    if not a.flags.c_contiguous or a.dtype.byteorder not in "=|":
        a = np.ascontiguousarray(a)
    raw = a.reshape(-1).view(np.uint8)
    return Tensor(Storage(raw.size, CPU, host=raw), a.shape, contiguous_strides(a.shape), 0, d)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor."""
    d = dt.as_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    return _finish(ops.empty(_shape_arg(size), d, _dev(device)), requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of `size` filled with `fill_value` (dtype from the value when not given)."""
    d = dt.as_dtype(dtype) if dtype is not None else dt.result_type(fill_value)
    return _finish(ops.full(_shape_arg((size,)), fill_value, d, _dev(device)), requires_grad)


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros."""
    d = dt.as_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    return _finish(ops.full(_shape_arg(size), 0, d, _dev(device)), requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    d = dt.as_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    return _finish(ops.full(_shape_arg(size), 1, d, _dev(device)), requires_grad)


def _like(t: Tensor, dtype: Any, device: Any) -> tuple[dt.dtype, Any]:
    return (dt.as_dtype(dtype) if dtype is not None else t.dtype), (canonical(device) if device is not None
                                                                    else t.device)


def zeros_like(input: Tensor, *, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False) -> Tensor:
    """Zeros shaped like `input`."""
    d, dev = _like(input, dtype, device)
    return _finish(ops.full(input.shape, 0, d, dev), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False) -> Tensor:
    """Ones shaped like `input`."""
    d, dev = _like(input, dtype, device)
    return _finish(ops.full(input.shape, 1, d, dev), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,  # noqa: A002
               requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor shaped like `input`."""
    d, dev = _like(input, dtype, device)
    return _finish(ops.empty(input.shape, d, dev), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,  # noqa: A002
              requires_grad: bool = False) -> Tensor:
    """A tensor shaped like `input` filled with `fill_value`."""
    d, dev = _like(input, dtype, device)
    return _finish(ops.full(input.shape, fill_value, d, dev), requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values start, start + step, ... below `end` (`arange(n)` is 0..n-1); int64 unless a bound is a float.

    Raises:
        RuntimeError: step is 0, or its sign disagrees with end - start.
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    d = dt.as_dtype(dtype) if dtype is not None else dt.result_type(start, end, step)
    n = max(0, math.ceil((end - start) / step))
    dev = _dev(device)
    return _finish(op_table.kernel("arange", dev.type)(d, dev, n, start, step), requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from start to end inclusive (the halves computed from each end, as ATen)."""
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    d = dt.as_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    step = (end - start) / (steps - 1) if steps > 1 else 0.0
    dev = _dev(device)
    return _finish(op_table.kernel("linspace", dev.type)(d, dev, steps, start, step, end), requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The n x m identity (ones on the diagonal)."""
    d = dt.as_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    m = n if m is None else m
    out = ops.full((n, m), 0, d, _dev(device))  # zeros, then ones on the diagonal (a strided view, stride m + 1)
    ops.fill_(out._view((min(n, m),), (m + 1,), 0), 1)
    return _finish(out, requires_grad)
