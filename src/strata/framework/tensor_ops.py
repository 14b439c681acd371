"""The methods of `Tensor` that are not on the op table yet (reductions, indexing, shapes, sorting,
conversion, printing) and its operators, bound onto the class by `bind` when this module is imported.
This module sits above every op module (it imports them all); tensor.py imports none of them. The
elementwise ops' methods (`x.exp()`, `x.add(y)`,
`x.sin_()`) are not written here: `op_table.bind` generates them from the table.

Example:
    >>> import strata
    >>> x = strata.tensor([1.0, -2.0, 3.0])
    >>> (x.abs() + 1).tolist(), x.max().item(), (2 ** x.relu()).tolist()
    ([2.0, 3.0, 4.0], 3.0, [2.0, 1.0, 8.0])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from strata.framework import (
    backends,  # noqa: F401 - registers the op table's cpu and cuda kernels before any method runs
    creation,
    indexing,
    printing,
    random,
    shape_ops,
    sorting,
)
from strata.framework import linalg as _linalg
from strata.framework import ops as _ops
from strata.framework import reductions as _reductions
from strata.framework.tensor import Tensor

# (typed as Any: the methods below take `self` as TensorOps, which mypy cannot know is a Tensor)
ops: Any = _ops
reductions: Any = _reductions
linalg: Any = _linalg


class TensorOps:
    """Tensor's methods and operators that are not on the op table; `bind` copies them onto Tensor (which
    derives from this class only for the type checker)."""

    dtype: Any
    device: Any

    if TYPE_CHECKING:  # the methods op_table.bind adds at import (x.exp(), x.add_(y), ...)
        def __getattr__(self, name: str) -> Any: ...

    # -- conversion, indexing and printing (tensor.py holds the data model; these need the ops)
    def _to_copy(self, dev: Any, dtype: Any) -> Any:
        """A copy on `dev` as `dtype` (what `to` returns when something changes); differentiable."""
        me: Any = self
        return ops.to_copy(me, dev, dtype)

    def clone(self) -> Any:
        """A copy with its own (row-major) storage; gradients flow back to self."""
        me: Any = self
        return ops.clone(me)

    def __getitem__(self, index: Any) -> Any:
        me: Any = self
        if indexing.is_advanced(index):
            return indexing.getitem(me, index)
        return ops.getitem(me, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        me: Any = self
        if indexing.is_advanced(index) or ops._needs_grad(me, value):
            indexing.setitem(me, index, value)
        else:
            ops.setitem(me, index, value)

    def __repr__(self) -> str:
        me: Any = self
        return printing.tensor_repr(me)

    __str__ = __repr__

    # -- elementwise, PyTorch names
    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """min(max(self, min), max)."""
        return ops.clamp(self, min, max)

    clip = clamp

    def where(self, condition: Any, other: Any) -> Any:
        """strata.where(condition, self, other)."""
        return ops.where(condition, self, other)

    # -- reductions
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
        return sorting.softmax(cast(Any, self), dim, dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        """Log-softmax along dim (see softmax)."""
        return sorting.log_softmax(cast(Any, self), dim, dtype)

    def matmul(self, other: Any) -> Any:
        """self @ other."""
        return linalg.matmul(self, other)

    # -- in place
    def clamp_(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Clamp in place."""
        return ops.inplace(self, lambda s: ops.clamp(s, min, max))

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

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Any:
        """`fill_value` of `size`, with self's dtype and device unless given."""
        return creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                             requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
        """Ones of `size` (ints or one sequence), with self's dtype and device unless given."""
        return self.new_full(_size(size), 1, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
        """Zeros of `size` (ints or one sequence), with self's dtype and device unless given."""
        return self.new_full(_size(size), 0, dtype=dtype, device=device, requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
        """Uninitialized memory of `size`, with self's dtype and device unless given."""
        return creation.empty(_size(size), dtype=dtype or self.dtype, device=device or self.device,
                              requires_grad=requires_grad)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Any:
        """A copy of `data` as a tensor with self's dtype and device unless given (as torch's)."""
        return creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                               requires_grad=requires_grad)

    # -- operators (straight to the op table's binary front: `x + y` is ops.add without alpha, traced as
    # the same aten::add by binary_op, and skipping the public function's argument handling halves the
    # Python work of a small op)
    def __add__(self, other: Any) -> Any:
        return ops.binary_op("add", self, other)

    def __radd__(self, other: Any) -> Any:
        return ops.binary_op("add", other, self)

    def __sub__(self, other: Any) -> Any:
        return ops.binary_op("sub", self, other)

    def __rsub__(self, other: Any) -> Any:
        return ops.binary_op("sub", other, self)

    def __mul__(self, other: Any) -> Any:
        return ops.binary_op("mul", self, other)

    def __rmul__(self, other: Any) -> Any:
        return ops.binary_op("mul", other, self)

    def __truediv__(self, other: Any) -> Any:
        return ops.binary_op("div", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return ops.binary_op("div", other, self)

    def __pow__(self, other: Any) -> Any:
        return ops.binary_op("pow", self, other)

    def __rpow__(self, other: Any) -> Any:
        return ops.binary_op("pow", other, self)

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
    def index_put_(self, indices: Any, values: Any, accumulate: bool = False) -> Any:
        """self[indices] = values (+= with accumulate), in place."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return indexing.index_put_(me, indices, values, accumulate)

    def index_put(self, indices: Any, values: Any, accumulate: bool = False) -> Any:
        """A copy of self with self[indices] = values (+= with accumulate)."""
        me: Any = self
        return indexing.index_put(me, indices, values, accumulate)

    def gather(self, dim: int, index: Any, *, sparse_grad: bool = False) -> Any:
        """Values of self at `index` along dim (out has index's shape)."""
        me: Any = self
        return indexing.gather(me, dim, index)

    def scatter(self, dim: int, index: Any, src: Any = None, value: Any = None, *, reduce: Any = None) -> Any:
        """A copy of self with src (or value) written at `index` along dim."""
        me: Any = self
        return indexing.scatter(me, dim, index, src, value, reduce=reduce)

    def scatter_(self, dim: int, index: Any, src: Any = None, value: Any = None, *, reduce: Any = None) -> Any:
        """scatter in place."""
        return ops.inplace(self, lambda s: indexing.scatter(s, dim, index, src, value, reduce=reduce))

    def scatter_add(self, dim: int, index: Any, src: Any) -> Any:
        """A copy of self with src added at `index` along dim (repeats add up)."""
        me: Any = self
        return indexing.scatter_add(me, dim, index, src)

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Any:
        """scatter_add in place."""
        return ops.inplace(self, lambda s: indexing.scatter_add(s, dim, index, src))

    def index_select(self, dim: int, index: Any) -> Any:
        """The slices of self along dim at the 1-D `index`."""
        me: Any = self
        return indexing.index_select(me, dim, index)

    def index_add(self, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
        """A copy of self with alpha * source added at the rows `index` along dim."""
        me: Any = self
        return indexing.index_add(me, dim, index, source, alpha=alpha)

    def index_add_(self, dim: int, index: Any, source: Any, *, alpha: Any = 1) -> Any:
        """index_add in place."""
        return ops.inplace(self, lambda s: indexing.index_add(s, dim, index, source, alpha=alpha))

    def scatter_reduce(self, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True) -> Any:
        """scatter_reduce (see indexing.scatter_reduce)."""
        me: Any = self
        return indexing.scatter_reduce(me, dim, index, src, reduce, include_self=include_self)

    def scatter_reduce_(self, dim: int, index: Any, src: Any, reduce: str, *, include_self: bool = True) -> Any:
        """scatter_reduce in place."""
        return ops.inplace(self, lambda s: indexing.scatter_reduce(s, dim, index, src, reduce,
                                                                   include_self=include_self))

    def index_copy(self, dim: int, index: Any, source: Any) -> Any:
        """A copy of self with its slices `index` along dim replaced by source's."""
        me: Any = self
        return indexing.index_copy(me, dim, index, source)

    def index_copy_(self, dim: int, index: Any, source: Any) -> Any:
        """index_copy in place."""
        return ops.inplace(self, lambda s: indexing.index_copy(s, dim, index, source))

    def index_fill(self, dim: int, index: Any, value: Any) -> Any:
        """A copy of self with its slices `index` along dim set to value."""
        me: Any = self
        return indexing.index_fill(me, dim, index, value)

    def index_fill_(self, dim: int, index: Any, value: Any) -> Any:
        """index_fill in place."""
        return ops.inplace(self, lambda s: indexing.index_fill(s, dim, index, value))

    def masked_scatter(self, mask: Any, source: Any) -> Any:
        """A copy of self with source's elements, in order, where mask is True."""
        me: Any = self
        return indexing.masked_scatter(me, mask, source)

    def masked_scatter_(self, mask: Any, source: Any) -> Any:
        """masked_scatter in place (mask broadcasts to self)."""
        return ops.inplace(self, lambda s: indexing.masked_scatter(s, mask, source))

    def masked_fill(self, mask: Any, value: Any) -> Any:
        """self with value where mask is True."""
        me: Any = self
        return indexing.masked_fill(me, mask, value)

    def masked_fill_(self, mask: Any, value: Any) -> Any:
        """masked_fill in place (mask broadcasts to self)."""
        return ops.inplace(self, lambda s: indexing.masked_fill(s, mask, value))

    def masked_select(self, mask: Any) -> Any:
        """The elements of self where mask is True, as a 1-D tensor."""
        me: Any = self
        return indexing.masked_select(me, mask)

    def take(self, index: Any) -> Any:
        """self read as 1-D at `index` (out has index's shape)."""
        me: Any = self
        return indexing.take(me, index)

    def take_along_dim(self, indices: Any, dim: Any = None) -> Any:
        """Values of self at `indices` along dim (broadcast apart from dim)."""
        me: Any = self
        return indexing.take_along_dim(me, indices, dim)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """Indices of the nonzero elements ((n, ndim), or a tuple of 1-D tensors)."""
        me: Any = self
        return indexing.nonzero(me, as_tuple=as_tuple)

    def argwhere(self) -> Any:
        """nonzero(): the (n, ndim) indices of the nonzero elements."""
        me: Any = self
        return indexing.argwhere(me)

    def tril(self, diagonal: int = 0) -> Any:
        """Lower triangle of the last two dims."""
        me: Any = self
        return indexing.tril(me, diagonal)

    def triu(self, diagonal: int = 0) -> Any:
        """Upper triangle of the last two dims."""
        me: Any = self
        return indexing.triu(me, diagonal)

    def tril_(self, diagonal: int = 0) -> Any:
        """tril in place."""
        return ops.inplace(self, lambda s: indexing.tril(s, diagonal))

    def triu_(self, diagonal: int = 0) -> Any:
        """triu in place."""
        return ops.inplace(self, lambda s: indexing.triu(s, diagonal))
    # -- end block: indexing

    # -- block: sorting
    def sort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        """(values, indices) sorted along dim (stable; NaN largest)."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return sorting.sort(me, dim, descending, stable=stable)

    def argsort(self, dim: int = -1, descending: bool = False, *, stable: bool = False) -> Any:
        """Indices that sort self along dim."""
        me: Any = self
        return sorting.argsort(me, dim, descending, stable=stable)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        """(values, indices) of the k largest (or smallest) along dim."""
        me: Any = self
        return sorting.topk(me, k, dim, largest, sorted)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Any:
        """Cumulative sum along dim."""
        me: Any = self
        return sorting.cumsum(me, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> Any:
        """Cumulative product along dim."""
        me: Any = self
        return sorting.cumprod(me, dim, dtype=dtype)

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Any:
        """log(sum(exp(self))) over dim, max-shifted."""
        me: Any = self
        return sorting.logsumexp(me, dim, keepdim)
    # -- end block: sorting

    # -- block: math
    def round(self, *, decimals: int = 0) -> Any:
        """self rounded half to even (to `decimals` decimal places)."""
        return ops.round_half_even(self, decimals=decimals)

    def square(self) -> Any:
        """self * self."""
        return ops.square(self)

    def logical_and(self, other: Any) -> Any:
        """Elementwise self and other (bool)."""
        return ops.logical_and(self, other)

    def logical_or(self, other: Any) -> Any:
        """Elementwise self or other (bool)."""
        return ops.logical_or(self, other)

    def logical_xor(self, other: Any) -> Any:
        """Elementwise self xor other (bool)."""
        return ops.logical_xor(self, other)

    def lerp(self, end: Any, weight: Any) -> Any:
        """self + weight * (end - self)."""
        return ops.lerp(self, end, weight)

    def round_(self, *, decimals: int = 0) -> Any:
        """round in place."""
        return ops.inplace(self, lambda s: ops.round_half_even(s, decimals=decimals))

    def lerp_(self, end: Any, weight: Any) -> Any:
        """lerp in place."""
        return ops.inplace(self, lambda s: ops.lerp(s, end, weight))

    def all(self, dim: Any = None, keepdim: bool = False) -> Any:
        """True if every element (along dim) is nonzero."""
        return reductions.all_true(self, dim, keepdim)

    def any(self, dim: Any = None, keepdim: bool = False) -> Any:
        """True if some element (along dim) is nonzero."""
        return reductions.any_true(self, dim, keepdim)

    def count_nonzero(self, dim: Any = None) -> Any:
        """Number of nonzero elements (along dim)."""
        return reductions.count_nonzero(self, dim)

    def aminmax(self, *, dim: Any = None, keepdim: bool = False) -> Any:
        """(min, max) over dim (all if None)."""
        return reductions.aminmax(self, dim=dim, keepdim=keepdim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
        """The vector p-norm over dim (all if None)."""
        return reductions.norm(self, p, dim, keepdim, dtype)

    def isclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Any:
        """|self - other| <= atol + rtol * |other| elementwise."""
        return reductions.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        """True if every element is close (a Python bool)."""
        return reductions.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Any) -> bool:
        """True if same shape and values (a Python bool)."""
        return reductions.equal(self, other)

    def split(self, split_size: Any, dim: int = 0) -> Any:
        """Views of pieces along dim (a size, or a list of sizes)."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.split(me, split_size, dim)

    def chunk(self, chunks: int, dim: int = 0) -> Any:
        """At most `chunks` views along dim."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.chunk(me, chunks, dim)

    def unbind(self, dim: int = 0) -> Any:
        """The slices along dim."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.unbind(me, dim)

    def narrow(self, dim: int, start: Any, length: int) -> Any:
        """The view self[..., start:start+length, ...] along dim."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.narrow(me, dim, start, length)

    def repeat(self, *sizes: Any) -> Any:
        """self tiled sizes[i] times along dim i."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.repeat(me, *sizes)

    def tile(self, *dims: Any) -> Any:
        """repeat with dims padded by leading ones."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.tile(me, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def repeat_interleave(self, repeats: Any, dim: Any = None, *, output_size: Any = None) -> Any:
        """Each element repeated `repeats` times along dim."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.repeat_interleave(me, repeats, dim, output_size=output_size)

    def flip(self, *dims: Any) -> Any:
        """A copy reversed along dims."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.flip(me, dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims)

    def roll(self, shifts: Any, dims: Any = None) -> Any:
        """A copy with elements shifted along dims."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.roll(me, shifts, dims)

    def movedim(self, source: Any, destination: Any) -> Any:
        """Dims moved from source to destination (a view)."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.movedim(me, source, destination)

    moveaxis = movedim

    def swapaxes(self, axis0: int, axis1: int) -> Any:
        """transpose(axis0, axis1)."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.swapaxes(me, axis0, axis1)

    def swapdims(self, dim0: int, dim1: int) -> Any:
        """transpose(dim0, dim1)."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.swapdims(me, dim0, dim1)

    def broadcast_to(self, size: Any) -> Any:
        """expand(size)."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.broadcast_to(me, size)

    def unflatten(self, dim: int, sizes: Any) -> Any:
        """Dim `dim` split into `sizes`."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.unflatten(me, dim, sizes)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """A diagonal of the planes over dim1, dim2 (a view)."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.diagonal(me, offset, dim1, dim2)

    def diag(self, diagonal: int = 0) -> Any:
        """1-D: a diagonal matrix; 2-D: a copy of a diagonal."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.diag(me, diagonal)

    def outer(self, vec2: Any) -> Any:
        """The outer product of two 1-D tensors."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.outer(me, vec2)

    def bmm(self, mat2: Any) -> Any:
        """Batched matrix product of 3-D tensors."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return shape_ops.bmm(me, mat2)

    def __invert__(self) -> Any:  # type: ignore[no-redef]  # noqa: F811 - replaces the bool-only one above
        if self.dtype.is_floating_point:
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return ops.bitwise_not(self)

    def __and__(self, other: Any) -> Any:  # type: ignore[no-redef]  # noqa: F811
        return ops.math_binary_op("bitwise_and", self, other)

    def __or__(self, other: Any) -> Any:  # type: ignore[no-redef]  # noqa: F811
        return ops.math_binary_op("bitwise_or", self, other)

    def __xor__(self, other: Any) -> Any:
        return ops.math_binary_op("bitwise_xor", self, other)

    def __rand__(self, other: Any) -> Any:
        return ops.math_binary_op("bitwise_and", other, self)

    def __ror__(self, other: Any) -> Any:
        return ops.math_binary_op("bitwise_or", other, self)

    def __rxor__(self, other: Any) -> Any:
        return ops.math_binary_op("bitwise_xor", other, self)

    def __iand__(self, other: Any) -> Any:
        return ops.inplace(self, lambda s: ops.math_binary_op("bitwise_and", s, other))

    def __ior__(self, other: Any) -> Any:
        return ops.inplace(self, lambda s: ops.math_binary_op("bitwise_or", s, other))

    def __ixor__(self, other: Any) -> Any:
        return ops.inplace(self, lambda s: ops.math_binary_op("bitwise_xor", s, other))

    def __floordiv__(self, other: Any) -> Any:
        return ops.math_binary_op("floor_divide", self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return ops.math_binary_op("floor_divide", other, self)

    def __mod__(self, other: Any) -> Any:
        return ops.math_binary_op("remainder", self, other)

    def __rmod__(self, other: Any) -> Any:
        return ops.math_binary_op("remainder", other, self)

    def __ifloordiv__(self, other: Any) -> Any:
        return ops.inplace(self, lambda s: ops.math_binary_op("floor_divide", s, other))

    def __imod__(self, other: Any) -> Any:
        return ops.inplace(self, lambda s: ops.math_binary_op("remainder", s, other))
    # -- end block: math

    # -- block: random
    def uniform_(self, from_: float = 0, to: float = 1, *, generator: Any = None) -> Any:
        """Fill with draws from U[from, to), in place."""
        me: Any = self  # (a Tensor; TensorOps is its mixin)
        return random.uniform_(me, from_, to, generator=generator)

    def normal_(self, mean: float = 0, std: float = 1, *, generator: Any = None) -> Any:
        """Fill with draws from N(mean, std^2), in place."""
        me: Any = self
        return random.normal_(me, mean, std, generator=generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Any:
        """Set each element to 1 with probability p (float or tensor), else 0, in place."""
        me: Any = self
        return random.bernoulli_(me, p, generator=generator)

    def bernoulli(self, p: Any = None, *, generator: Any = None) -> Any:
        """strata.bernoulli(self, p): 1 with probability self (or p), else 0."""
        me: Any = self
        return random.bernoulli(me, p, generator=generator)

    def exponential_(self, lambd: float = 1, *, generator: Any = None) -> Any:
        """Fill with exponential draws of rate lambd, in place."""
        me: Any = self
        return random.exponential_(me, lambd, generator=generator)

    def random_(self, *args: Any, generator: Any = None, **kwargs: Any) -> Any:
        """random_(from=0, to=None): integers from [from, to - 1] (to alone: [0, to)), in place."""
        me: Any = self
        return random.random_(me, *args, generator=generator, **kwargs)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Any = None) -> Any:
        """strata.multinomial(self, num_samples, replacement)."""
        me: Any = self
        return random.multinomial(me, num_samples, replacement, generator=generator)
    # -- end block: random

    # -- block: nn
    # -- end block: nn

    # -- block: autograd
    # -- end block: autograd


def _bools(a: Any, b: Any) -> bool:
    return all(getattr(x, "dtype", None) is None or x.dtype.name == "bool" for x in (a, b))


def _no_bitwise(op: str) -> Any:
    raise NotImplementedError(f"bitwise {op} on non-bool tensors is not implemented yet")


def _size(args: tuple) -> tuple[int, ...]:
    """A size given as ints or as one sequence (`new_zeros(2, 3)` or `new_zeros((2, 3))`)."""
    if len(args) == 1 and not isinstance(args[0], int):
        args = tuple(args[0])
    return tuple(int(a) for a in args)


def bind(cls: type) -> None:
    """Give `cls` (Tensor) the methods and operators of TensorOps it does not define itself (the class
    keeps its own, and the op table's, which op_table.bind set first)."""
    skip = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__annotations__", "__hash__",
            "__getattr__", "__firstlineno__", "__static_attributes__"}
    for name, value in vars(TensorOps).items():
        if name not in skip and name not in vars(cls):
            setattr(cls, name, value)


bind(Tensor)
