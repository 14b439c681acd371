"""The math methods and operators of `Tensor` (`x.add(y)`, `x + y`, `x.sum(dim)`, `x @ y`, `x.add_(y)`),
each forwarding to `ops.py`. Kept apart from tensor.py, which holds the data model and views.

Example:
    >>> import strata
    >>> x = strata.tensor([1.0, -2.0, 3.0])
    >>> (x.abs() + 1).tolist(), x.max().item(), (2 ** x.relu()).tolist()
    ([2.0, 3.0, 4.0], 3.0, [2.0, 1.0, 8.0])
"""

from __future__ import annotations

from typing import Any

# `ops` imports tensor.py, which imports this module: tensor.py sets these once they are loaded.
ops: Any = None
reductions: Any = None
linalg: Any = None


class TensorOps:
    """Mixin of Tensor: elementwise, reduction, matmul and in-place methods and the operators."""

    dtype: Any
    device: Any

    # -- elementwise, PyTorch names
    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        """self + alpha * other."""
        return ops.add(self, other, alpha=alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Any:
        """self - alpha * other."""
        return ops.sub(self, other, alpha=alpha)

    def mul(self, other: Any) -> Any:
        """self * other."""
        return ops.mul(self, other)

    def div(self, other: Any) -> Any:
        """self / other (true division)."""
        return ops.div(self, other)

    def pow(self, exponent: Any) -> Any:
        """self ** exponent."""
        return ops.pow(self, exponent)

    def neg(self) -> Any:
        """-self."""
        return ops.unary_op("neg", self)

    def abs(self) -> Any:
        """|self|."""
        return ops.unary_op("abs", self)

    def exp(self) -> Any:
        """e ** self."""
        return ops.unary_op("exp", self)

    def log(self) -> Any:
        """ln(self)."""
        return ops.unary_op("log", self)

    def sqrt(self) -> Any:
        """self ** 0.5."""
        return ops.unary_op("sqrt", self)

    def rsqrt(self) -> Any:
        """1 / sqrt(self)."""
        return ops.unary_op("rsqrt", self)

    def relu(self) -> Any:
        """max(self, 0)."""
        return ops.unary_op("relu", self)

    def sigmoid(self) -> Any:
        """1 / (1 + exp(-self))."""
        return ops.unary_op("sigmoid", self)

    def tanh(self) -> Any:
        """tanh(self)."""
        return ops.unary_op("tanh", self)

    def sign(self) -> Any:
        """-1, 0 or 1 by the sign of each element."""
        return ops.unary_op("sign", self)

    def reciprocal(self) -> Any:
        """1 / self."""
        return ops.unary_op("reciprocal", self)

    def logical_not(self) -> Any:
        """Elementwise not (bool result)."""
        return ops.unary_op("logical_not", self)

    def maximum(self, other: Any) -> Any:
        """Elementwise max."""
        return ops.maximum(self, other)

    def minimum(self, other: Any) -> Any:
        """Elementwise min."""
        return ops.minimum(self, other)

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """min(max(self, min), max)."""
        return ops.clamp(self, min, max)

    clip = clamp

    def eq(self, other: Any) -> Any:
        """self == other (bool)."""
        return ops.binary_op("eq", self, other)

    def ne(self, other: Any) -> Any:
        """self != other (bool)."""
        return ops.binary_op("ne", self, other)

    def lt(self, other: Any) -> Any:
        """self < other (bool)."""
        return ops.binary_op("lt", self, other)

    def le(self, other: Any) -> Any:
        """self <= other (bool)."""
        return ops.binary_op("le", self, other)

    def gt(self, other: Any) -> Any:
        """self > other (bool)."""
        return ops.binary_op("gt", self, other)

    def ge(self, other: Any) -> Any:
        """self >= other (bool)."""
        return ops.binary_op("ge", self, other)

    def where(self, condition: Any, other: Any) -> Any:
        """strata.where(condition, self, other)."""
        return ops.where(condition, self, other)

    # -- reductions
    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        """Sum over dim (all if None)."""
        return reductions.sum(self, dim, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        """Mean over dim (all if None)."""
        return reductions.mean(self, dim, keepdim, dtype=dtype)

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Max value, or (values, indices) along dim."""
        return reductions.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Min value, or (values, indices) along dim."""
        return reductions.min(self, dim, keepdim)

    def argmax(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Index of the max (flattened if dim is None)."""
        return reductions.argmax(self, dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: bool = False) -> Any:
        """Index of the min (flattened if dim is None)."""
        return reductions.argmin(self, dim, keepdim)

    def var(self, dim: Any = None, *, correction: float = 1, keepdim: bool = False) -> Any:
        """Variance over dim (Bessel-corrected by default)."""
        return reductions.var(self, dim, correction=correction, keepdim=keepdim)

    def std(self, dim: Any = None, *, correction: float = 1, keepdim: bool = False) -> Any:
        """Standard deviation over dim."""
        return reductions.std(self, dim, correction=correction, keepdim=keepdim)

    def softmax(self, dim: int, dtype: Any = None) -> Any:
        """Softmax along dim (sorting.softmax: the fused dnn row kernel on "cuda")."""
        from strata.framework import sorting
        return sorting.softmax(self, dim, dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        """Log-softmax along dim (see softmax)."""
        from strata.framework import sorting
        return sorting.log_softmax(self, dim, dtype)

    def matmul(self, other: Any) -> Any:
        """self @ other."""
        return linalg.matmul(self, other)

    # -- in place
    def add_(self, other: Any, *, alpha: Any = 1) -> Any:
        """self += alpha * other."""
        return ops.inplace(self, lambda s: ops.add(s, other, alpha=alpha))

    def sub_(self, other: Any, *, alpha: Any = 1) -> Any:
        """self -= alpha * other."""
        return ops.inplace(self, lambda s: ops.sub(s, other, alpha=alpha))

    def mul_(self, other: Any) -> Any:
        """self *= other."""
        return ops.inplace(self, lambda s: ops.mul(s, other))

    def div_(self, other: Any) -> Any:
        """self /= other."""
        return ops.inplace(self, lambda s: ops.div(s, other))

    def pow_(self, exponent: Any) -> Any:
        """self **= exponent."""
        return ops.inplace(self, lambda s: ops.pow(s, exponent))

    def clamp_(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Clamp in place."""
        return ops.inplace(self, lambda s: ops.clamp(s, min, max))

    def relu_(self) -> Any:
        """ReLU in place."""
        return ops.inplace(self, lambda s: ops.unary_op("relu", s))

    def neg_(self) -> Any:
        """Negate in place."""
        return ops.inplace(self, lambda s: ops.unary_op("neg", s))

    def exp_(self) -> Any:
        """exp in place."""
        return ops.inplace(self, lambda s: ops.unary_op("exp", s))

    def fill_(self, value: Any) -> Any:
        """Set every element to `value`."""
        return ops.inplace(self, lambda s: ops.full(s.shape, value.item() if hasattr(value, "item") else value,
                                                    s.dtype, s.device))

    def zero_(self) -> Any:
        """Set every element to 0."""
        return self.fill_(0)

    def copy_(self, src: Any) -> Any:
        """Copy `src` (broadcast, converted, from any device) into self."""
        return ops.inplace(self, lambda s: ops.to_copy(src, s.device, s.dtype))

    def new_ones(self, size: Any) -> Any:
        """Ones of `size` with self's dtype and device."""
        return ops.full(tuple(size), 1, self.dtype, self.device)

    def new_zeros(self, size: Any) -> Any:
        """Zeros of `size` with self's dtype and device."""
        return ops.full(tuple(size), 0, self.dtype, self.device)

    # -- operators
    def __add__(self, other: Any) -> Any:
        return ops.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return ops.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return ops.sub(self, other)

    def __rsub__(self, other: Any) -> Any:
        return ops.sub(other, self)

    def __mul__(self, other: Any) -> Any:
        return ops.mul(self, other)

    def __rmul__(self, other: Any) -> Any:
        return ops.mul(other, self)

    def __truediv__(self, other: Any) -> Any:
        return ops.div(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return ops.div(other, self)

    def __pow__(self, other: Any) -> Any:
        return ops.pow(self, other)

    def __rpow__(self, other: Any) -> Any:
        return ops.pow(other, self)

    def __matmul__(self, other: Any) -> Any:
        return linalg.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return linalg.matmul(other, self)

    def __neg__(self) -> Any:
        return self.neg()

    def __abs__(self) -> Any:
        return self.abs()

    def __invert__(self) -> Any:
        if self.dtype.name != "bool":
            raise NotImplementedError("bitwise not on integral tensors is not implemented yet")
        return self.logical_not()

    def __and__(self, other: Any) -> Any:
        return ops.binary("minimum", self, other) if _bools(self, other) else _no_bitwise("&")

    def __or__(self, other: Any) -> Any:
        return ops.binary("maximum", self, other) if _bools(self, other) else _no_bitwise("|")

    def __eq__(self, other: Any) -> Any:  # type: ignore[override,unused-ignore]
        return self.eq(other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override,unused-ignore]
        return self.ne(other)

    def __lt__(self, other: Any) -> Any:
        return self.lt(other)

    def __le__(self, other: Any) -> Any:
        return self.le(other)

    def __gt__(self, other: Any) -> Any:
        return self.gt(other)

    def __ge__(self, other: Any) -> Any:
        return self.ge(other)

    def __iadd__(self, other: Any) -> Any:
        return self.add_(other)

    def __isub__(self, other: Any) -> Any:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Any:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Any:
        return self.div_(other)

    # Feature modules add their methods below, one marked block each; a method imports its module
    # lazily (`from strata.framework import indexing`) because those modules import tensor.py.
    # -- block: indexing
    # -- end block: indexing

    # -- block: sorting
    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        """(values, indices) sorted along dim (stable; NaN largest)."""
        from strata.framework import sorting
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return sorting.sort(me, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        """Indices that sort self along dim."""
        from strata.framework import sorting
        me: Any = self
        return sorting.argsort(me, dim, descending, stable=stable)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        """(values, indices) of the k largest (or smallest) along dim."""
        from strata.framework import sorting
        me: Any = self
        return sorting.topk(me, k, dim, largest, sorted)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Any:
        """Cumulative sum along dim."""
        from strata.framework import sorting
        me: Any = self
        return sorting.cumsum(me, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> Any:
        """Cumulative product along dim."""
        from strata.framework import sorting
        me: Any = self
        return sorting.cumprod(me, dim, dtype=dtype)

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Any:
        """log(sum(exp(self))) over dim, max-shifted."""
        from strata.framework import sorting
        me: Any = self
        return sorting.logsumexp(me, dim, keepdim)
    # -- end block: sorting

    # -- block: math
    # -- end block: math

    # -- block: random
    # -- end block: random

    # -- block: nn
    # -- end block: nn

    # -- block: autograd
    # -- end block: autograd


def _bools(a: Any, b: Any) -> bool:
    return all(getattr(x, "dtype", None) is None or x.dtype.name == "bool" for x in (a, b))


def _no_bitwise(op: str) -> Any:
    raise NotImplementedError(f"bitwise {op} on non-bool tensors is not implemented yet")
