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

from strata.framework import autograd, op_table
from strata.framework import dtypes as dt
from strata.framework.ops import (
    _cast,
    _check_same_device,
    _fit,
    _predicate,
    _torch_name,
    binary,
    clone,
    div,
    empty,
    full,
    inplace,
    maximum,
    minimum,
    record,
    unary,
    where,
    zeros_like,
)
from strata.framework.tensor import Tensor


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
    """The backend's reduction kernel for table op `op` (sum, mean, prod, max, min) over `dims`:
    (values, indices for max / min)."""
    shape = x._shape
    kept = [i for i in range(len(shape)) if i not in dims]
    kept_shape = [shape[i] for i in kept]
    out_shape = [1 if i in dims else s for i, s in enumerate(shape)] if keepdim else kept_shape
    return op_table.kernel(op, x._storage.device.type)(op, x, dims, out_shape, kept_shape, out_dt)


def _record(op: str, out: Any, x: Tensor, dims: list[int], keepdim: bool, has_dim: bool) -> None:
    """Record the table's derivative of reduction `op` on out (a tensor, or (values, indices) of max /
    min along a dim, whose values get the node)."""
    if not x._requires_grad:  # (nothing to record: most reductions)
        return
    d = op_table.OPS[op]
    deriv = d.derivative
    assert deriv is not None
    values = out[0] if isinstance(out, tuple) else out
    record(values, [x], d.node_dim if has_dim and d.node_dim else d.node,
           lambda g: (_fit(deriv(g, x, out, dims, keepdim), x),))


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
    out_dt = x.dtype if x.dtype._float else dt.int64
    if x.numel() == 0 or not dims:
        with autograd.no_grad():
            src = x if x.dtype is out_dt else x.to(out_dt)
        out = full([1 if (i in dims and keepdim) else s for i, s in enumerate(x.shape) if keepdim or i not in dims],
                   0, out_dt, x.device) if x.numel() == 0 else _cast(src, out_dt)
    else:
        out, _ = _reduce("sum", x, dims, keepdim, out_dt)
    _record("sum", out, x, dims, keepdim, dim is not None)
    return out


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
    _record("mean", out, x, dims, keepdim, dim is not None)
    return out


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
        _record(op, out, input, dims, False, False)
        return out
    d = _dims(input, dim)
    if input.dim() and input.shape[d[0]] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d[0]} to have non-zero size.")
    if not d:  # 0-dim input
        return MaxMin(clone(input), full((), 0, dt.int64, input.device), op)
    values, indices = _reduce(op, input, d, keepdim, input.dtype)
    assert indices is not None
    _record(op, (values, indices), input, d, keepdim, True)
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


# ----------------------------------------------------------------------------------------- more reductions
class AminmaxResult(NamedTuple):
    """(min, max), printed as torch.return_types.aminmax."""

    min: Tensor
    max: Tensor

    def __repr__(self) -> str:
        return f"strata.return_types.aminmax(\nmin={self.min!r},\nmax={self.max!r})"


def _red_dims(x: Tensor, dim: Any) -> list[int]:
    return _dims(x, dim)


def _reduce_to(op: str, x: Tensor, dims: list[int], keepdim: bool, out_dt: dt.dtype) -> Tensor:
    """The values of `_reduce`; an empty `dims` (a 0-dim input) is a copy."""
    if not dims:
        return _cast(x, out_dt)
    return _reduce(op, x, dims, keepdim, out_dt)[0]


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
         dtype: Any = None) -> Tensor:
    """Product over `dim` (all if None); integral and bool inputs give int64. The gradient handles zeros
    (the product of the other elements)."""
    x = input if dtype is None else input.to(dt.as_dtype(dtype))
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    dims = _red_dims(x, dim)
    out_dt = x.dtype if x.dtype.is_floating_point else dt.int64
    if x.numel() == 0:
        out = full([1 if i in dims else s for i, s in enumerate(x.shape)] if keepdim else
                   [s for i, s in enumerate(x.shape) if i not in dims], 1, out_dt, x.device)
    else:
        out = _reduce_to("prod", x, dims, keepdim, out_dt)
    _record("prod", out, x, dims, keepdim, dim is not None)
    return out


def _all_any(op: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:  # noqa: A002
    x = input
    dims = _red_dims(x, dim)
    out_dt = dt.uint8 if x.dtype is dt.uint8 else dt.bool_
    nz = binary("ne", x, 0) if x.dtype is not dt.bool_ else x
    if x.numel() == 0:
        shape = [1 if i in dims else s for i, s in enumerate(x.shape)] if keepdim else \
            [s for i, s in enumerate(x.shape) if i not in dims]
        return full(shape, op == "all", out_dt, x.device)
    r = _reduce_to("min" if op == "all" else "max", _cast(nz, dt.uint8), dims, keepdim, dt.uint8)
    return r if out_dt is dt.uint8 else _cast(r, dt.bool_)


def all_true(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """True if every element (along `dim`, an int or a tuple) is nonzero; uint8 inputs give uint8."""
    return _all_any("all", input, dim, keepdim)


def any_true(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    """True if some element (along `dim`) is nonzero; uint8 inputs give uint8."""
    return _all_any("any", input, dim, keepdim)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """Number of nonzero elements (along `dim`, an int or a tuple), int64."""
    return sum(binary("ne", input, 0), dim)


def _amaxmin(op: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:  # noqa: A002
    x = input
    dims = _red_dims(x, dim if dim != () else None)
    name = "amax" if op == "max" else "amin"
    if x.numel() == 0 and (dim is None or dim == () or builtins.any(x.shape[d] == 0 for d in dims)):
        if dim is None or dim == ():
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        bad = next(d for d in dims if x.shape[d] == 0)
        raise IndexError(f"{name}(): Expected reduction dim {bad} to have non-zero size.")
    src = _cast(x, dt.uint8) if x.dtype is dt.bool_ and x.device.type == "cuda" else x
    if x.numel() == 0:  # nothing reduced into an empty output
        out = empty([1 if i in dims else s for i, s in enumerate(x.shape)] if keepdim else
                    [s for i, s in enumerate(x.shape) if i not in dims], src.dtype, x.device)
    else:
        out = _reduce_to(op, src, dims, keepdim, src.dtype)
    if out.dtype is not x.dtype:
        out = _cast(out, x.dtype)
    _record("amax" if op == "max" else "amin", out, x, dims, keepdim, True)
    return out


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Largest value over `dim` (an int or a tuple; all dims if empty); the gradient is shared by ties."""
    return _amaxmin("max", input, dim, keepdim)


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Smallest value over `dim` (an int or a tuple; all dims if empty)."""
    return _amaxmin("min", input, dim, keepdim)


def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False) -> AminmaxResult:  # noqa: A002
    """(min, max) over `dim` (all if None)."""
    with autograd.no_grad():
        if dim is None and input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        d = () if dim is None else dim
        return AminmaxResult(_amaxmin("min", input, d, keepdim), _amaxmin("max", input, d, keepdim))


def vector_norm(x: Tensor, ord: float = 2, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """(sum |x|^ord)^(1/ord) over `dim` (all if None); ord inf / -inf: max / min |x|; ord 0: the number
    of nonzeros. Needs a floating input."""
    if not x.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_torch_name(x.dtype.name)}")
    if dtype is not None:
        x = x.to(dt.as_dtype(dtype))
    dims = _red_dims(x, dim)
    p = float(ord)
    with autograd.no_grad():
        ax = unary("abs", x)
        if p == math.inf or p == -math.inf:
            out = _amaxmin("max" if p > 0 else "min", ax, dims, keepdim) if x.numel() else \
                full([], 0, x.dtype, x.device)
        elif p == 0:
            out = sum(binary("ne", x, 0), dims, keepdim).to(x.dtype)
        elif p == 1:
            out = sum(ax, dims, keepdim)
        elif p == 2:
            out = unary("sqrt", sum(binary("mul", x, x), dims, keepdim))
        else:
            out = binary("pow", sum(binary("pow", ax, p), dims, keepdim), 1.0 / p)
    shape = x.shape

    def bw(g: Tensor) -> tuple:
        norm = _restore(out, x, dims, keepdim)
        gg = _restore(g, x, dims, keepdim).expand(shape)
        if p == 0:  # no gradient (PyTorch leaves it undefined)
            return (None,)
        sgn = unary("sign", x)
        if p == 1:
            r = gg * sgn
        elif builtins.abs(p) == math.inf:
            mask = binary("eq", unary("abs", x), norm)
            count = _restore(sum(mask, dims, keepdim), x, dims, keepdim)
            r = where(mask, gg * sgn / count, zeros_like(gg))
        elif p == 2:
            r = where(binary("eq", norm, 0), zeros_like(gg), gg * x / norm)
        else:
            r = gg * sgn * unary("abs", x) ** (p - 1) / norm ** (p - 1)
            r = where(binary("eq", norm, 0), zeros_like(gg), r)
        return (_fit(r, x),)
    return record(out, [x], "LinalgVectorNormBackward0", bw)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,  # noqa: A002
         dtype: Any = None) -> Tensor:
    """torch.norm: the vector p-norm over `dim` (all dims if None); 'fro' is the 2-norm."""
    if p == "fro":
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(f"norm(p={p!r}) (matrix norms) is not implemented")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


def _same_dtype(a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{_torch_name(a.dtype.name)} did not match {_torch_name(b.dtype.name)}")


def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
            equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise (equal infinities are close; NaN only with
    equal_nan), bool result."""
    _same_dtype(input, other)
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    with autograd.no_grad():
        close = binary("eq", input, other)
        if equal_nan and input.dtype.is_floating_point:
            close = binary("maximum", close, binary("minimum", _predicate("isnan", input), _predicate("isnan", other)))
        if input.dtype is dt.bool_ or (rtol == 0 and atol == 0):
            return close
        a, b = input, other
        if not a.dtype.is_floating_point:
            a, b = _cast(a, dt.get_default_dtype()), _cast(b, dt.get_default_dtype())
        err = unary("abs", binary("sub", a, b))
        allowed = binary("add", unary("abs", binary("mul", b, rtol)), atol)
        ok = binary("minimum", _predicate("isfinite", err), binary("le", err, allowed))
        return binary("maximum", close, ok)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,  # noqa: A002
             equal_nan: bool = False) -> bool:
    """isclose(...).all() as a Python bool (reads the device, as PyTorch does)."""
    return builtins.bool(all_true(isclose(input, other, rtol, atol, equal_nan)).item())


def equal(input: Tensor, other: Tensor) -> bool:  # noqa: A002
    """True if both have the same shape and the same values (a Python bool; reads the device)."""
    _check_same_device(input, other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    with autograd.no_grad():
        return builtins.bool(all_true(binary("eq", input, other)).item())


# Tensor's methods and strata.<name> functions for the table's reductions (op_table.bind)
op_table.bind(Tensor, {}, {"sum": sum, "mean": mean, "prod": prod, "max": max, "min": min, "amax": amax,
                           "amin": amin}, inplace, families=("reduction",))
