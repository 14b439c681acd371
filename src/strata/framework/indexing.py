"""PyTorch's advanced indexing for strata tensors: `x[idx]` and `x[idx] = v` with integer tensors, lists,
NumPy arrays and boolean masks mixed with ints, slices, None and Ellipsis; `index_put_`, `gather`,
`scatter` / `scatter_add`, `index_select`, `index_add_`, `masked_fill`, `masked_select`,
`take_along_dim`, `nonzero` / `argwhere` / one-argument `where`, `tril` / `triu`; with gradients.

An index is first brought to a canonical form: Ellipsis expanded, boolean masks replaced by the int64
indices of their nonzero elements (on "cuda" a scan kernel finds them; only the count is read back, as
PyTorch syncs there too). Ints, slices and None are then applied as a view (ints select, as ATen does),
and the index tensors broadcast together to a shape B. Adjacent index dims put B in their place, separated
ones put it first. The kernels (kernels/indexing.py) see "index dims first": a (K, nb) int64 buffer of
indices and the remaining dims by strides.

Each op is declared in the op table (op_table.py: its node name and its derivative, written with these
same ops so that it differentiates again), and each backend registers its kernels there (backends/cpu.py:
NumPy; backends/cuda.py: the CUDA kernels); the functions here parse and check the arguments, call the
kernel of the tensor's device and record the table's derivative.

Index bounds: indices given on the host (lists, NumPy arrays, "cpu" tensors) are checked on the host before
any launch, raising PyTorch's IndexError. Indices that live on the GPU are checked by the kernel, as
PyTorch's CUDA kernels do: a bad index is a device-side assertion (cudaErrorAssert, sticky on the context
until the device is reset), raised as a RuntimeError ("CUDA error: device-side assert triggered" and the
kernel's assertion text) at the next synchronizing call, or at the launch under STRATA_LAUNCH_BLOCKING=1
(PyTorch's CUDA_LAUNCH_BLOCKING).

Example:
    >>> import strata
    >>> x = strata.arange(12).view(3, 4)
    >>> x[[0, 2], 1:3]
    tensor([[ 1,  2],
            [ 9, 10]])
    >>> x[(x > 4) & (x < 7)].tolist(), x.gather(1, strata.tensor([[3], [0], [1]])).flatten().tolist()
    ([5, 6], [3, 4, 9])
    >>> x[:, [1, 3]] = 0
    >>> x[0].tolist(), strata.triu(x)[2].tolist()
    ([0, 0, 2, 0], [0, 0, 10, 0])
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata.framework import autograd, op_table, ops
from strata.framework import dtypes as dt
from strata.framework.device import device
from strata.framework.ops import _fit, _torch_name, record
from strata.framework.tensor import Tensor, _wrap_dim

_OPS = op_table.OPS
INDEX_DTYPES = "tensors used as indices must be long, int, byte or bool tensors"
# dtype names as ATen's C++ messages print them
_C_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int", "int16": "short int",
            "int8": "signed char", "uint8": "unsigned char", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


# ----------------------------------------------------------------------------------------- parsing
@dataclass
class _Idx:
    """An index tensor of the canonical form: host int64 values, or a GPU integer tensor."""

    host: np.ndarray | None
    dev: Tensor | None
    trusted: bool = False  # in range already (host-checked and wrapped, or from a mask)
    new_dim: bool = False  # a 0-dim mask: indexes a new size-1 dim (as None would insert)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.host.shape) if self.host is not None else tuple(self.dev.shape)  # type: ignore[union-attr]


@dataclass
class _Plan:
    """A parsed index: `canon` (ints, slices, None, _Idx) applies to any tensor of the indexed shape;
    `buf` is the (K, nb) int64 index buffer (host array on "cpu", tensor on "cuda")."""

    canon: list[Any]
    bshape: tuple[int, ...]
    buf: Any
    check: int
    owner: Any = None  # the tensor the plan was parsed against, and its geometry (not walked twice)
    geom: Any = None


def is_advanced(index: Any) -> bool:
    """True if `index` holds a tensor, list, NumPy array or bool (advanced indexing)."""
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(ix, Tensor | list | range | np.ndarray | bool | np.bool_) for ix in items)


def _selects(index: Any) -> Any:
    """The index with 0-dim integer tensors as ints: they select, as ints do (PyTorch reads them too)."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(isinstance(ix, Tensor) and ix.dim() == 0 and ix.dtype not in (dt.bool_, dt.uint8)
               and not ix.dtype.is_floating_point for ix in items):
        return index
    out = tuple(int(ix.item()) if isinstance(ix, Tensor) and ix.dim() == 0 and ix.dtype not in (dt.bool_, dt.uint8)
                and not ix.dtype.is_floating_point else ix for ix in items)
    return out if isinstance(index, tuple) else out[0]


def _to_items(t: Tensor, index: Any) -> list[Any]:
    """Index items with lists/arrays as host arrays, checked for dtype (masks stay bool)."""
    items = list(index) if isinstance(index, tuple) else [index]
    out: list[Any] = []
    for ix in items:
        if isinstance(ix, bool | np.bool_):
            out.append(np.asarray(bool(ix)))
        elif isinstance(ix, list | range | np.ndarray):  # a range indexes as the list it spells (PyTorch)
            a = np.asarray(ix)
            if a.size == 0 and a.dtype.kind == "f":
                a = a.astype(np.int64)
            if a.dtype.kind not in "biu":
                raise IndexError(INDEX_DTYPES)
            out.append(a)
        elif isinstance(ix, Tensor):
            if ix.dtype.is_floating_point:
                raise IndexError(INDEX_DTYPES)
            if ix.device != t.device and ix.device.type != "cpu":
                raise RuntimeError(f"indices should be either on cpu or on the same device as the indexed tensor "
                                   f"({t.device})")
            if ix.device.type == "cpu":
                out.append(ix._host().copy())
            else:
                out.append(ix)
        else:
            out.append(ix)
    return out


def _is_mask(ix: Any) -> bool:
    return (isinstance(ix, np.ndarray) and ix.dtype in (np.bool_, np.uint8)) or \
        (isinstance(ix, Tensor) and ix.dtype in (dt.bool_, dt.uint8))


def _consumed(ix: Any) -> int:
    if ix is None or ix is Ellipsis:
        return 0
    return ix.ndim if _is_mask(ix) else 1


def _canonical(t: Tensor, index: Any) -> list[Any]:
    """Ellipsis expanded, masks replaced by index tensors (a 0-dim mask by None plus an index)."""
    items = _to_items(t, index)
    n_real = builtins.sum(_consumed(ix) for ix in items)
    if n_real > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    if Ellipsis in [ix for ix in items if not isinstance(ix, np.ndarray | Tensor)]:
        i = next(k for k, ix in enumerate(items) if ix is Ellipsis)
        items = items[:i] + [slice(None)] * (t.dim() - n_real) + items[i + 1:]
    canon: list[Any] = []
    shape = list(t.shape)
    p = 0  # the dim of t the next item applies to
    for ix in items:
        if ix is None:
            canon.append(None)
        elif _is_mask(ix) and ix.ndim == 0:
            keep = bool(ix.item() if isinstance(ix, Tensor) else ix)
            canon.append(_Idx(np.zeros(int(keep), np.int64), None, True, new_dim=True))
        elif _is_mask(ix):
            m = ix.ndim
            for j in range(m):
                if ix.shape[j] != shape[p + j]:
                    raise IndexError(f"The shape of the mask {list(ix.shape)} at index {j} does not match the shape "
                                     f"of the indexed tensor {shape} at index {p + j}")
            if isinstance(ix, Tensor):
                rows = _nonzero_rows(ix if ix.dtype is dt.bool_ else ops._cast(ix, dt.bool_))  # (m, n)
                canon += [_Idx(None, rows[j], True) for j in range(m)]
            else:
                canon += [_Idx(np.ascontiguousarray(a, np.int64), None, True) for a in np.nonzero(ix)]
            p += m
        elif isinstance(ix, np.ndarray):
            canon.append(_Idx(ix.astype(np.int64), None))
            p += 1
        elif isinstance(ix, Tensor):
            canon.append(_Idx(None, ix))
            p += 1
        elif isinstance(ix, int | np.integer | slice):
            canon.append(ix)
            p += 1
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(ix).__name__})")
    return canon


def _walk(t: Tensor, canon: list[Any]) -> tuple[Tensor, list[int], list[_Idx]]:
    """Apply ints, slices and None as a view of t; the view dims the index tensors address."""
    basic: list[Any] = []
    marks: list[tuple[int, _Idx]] = []  # (position in `basic`, index)
    for ix in canon:
        if isinstance(ix, _Idx):
            marks.append((len(basic), ix))
            basic.append(None if ix.new_dim else slice(None))
        else:
            basic.append(ix)
    shape, strides, offset, _ = ops._normalize_index(t, tuple(basic))
    view = t._view(shape, strides, offset)
    # the view dim of each marked slice: count the items before it that keep or add a dim
    dims = []
    for pos, _ix in marks:
        dims.append(builtins.sum(1 for b in basic[:pos] if b is None or isinstance(b, slice)))
    return view, dims, [ix for _, ix in marks]


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    try:
        return tuple(ops.broadcast_shapes(*shapes))
    except RuntimeError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(str(list(s)) for s in shapes)) from None


def _plan(t: Tensor, index: Any, kind: int = 1) -> _Plan:
    """Parse `index` against t (kind: which op's bounds rule applies, see kernels/indexing.py's `check`)."""
    canon = _canonical(t, index)
    view, dims, idxs = _walk(t, canon)
    sizes = [view.shape[d] for d in dims]
    bshape = _broadcast([ix.shape for ix in idxs])
    nb = math.prod(bshape)
    check = 0
    host_rows: list[np.ndarray] = []
    for k, (ix, size) in enumerate(zip(idxs, sizes, strict=True)):
        if ix.host is None:
            check = kind
            continue
        a = ix.host
        if not ix.trusted and a.size:
            lo = -size if kind == 1 else 0
            bad = (a < lo) | (a >= size)
            if bad.any():
                v = int(a[bad].flat[0])
                if kind == 2:
                    raise IndexError("index out of range in self")
                msg = f"index {v} is out of bounds for dimension {k} with size {size}"
                raise (RuntimeError if kind == 3 else IndexError)(msg)
            a = np.where(a < 0, a + size, a)
        host_rows.append(np.broadcast_to(a, bshape).reshape(nb))
    buf = op_table.kernel("index_buffer", t.device.type)(t, idxs, host_rows, bshape)
    return _Plan(canon, bshape, buf, check, t, _geom_of(view, dims, bshape))


@dataclass
class _Geom:
    """A plan applied to one tensor: the view, the indexed dims, the result shape and the front layout."""

    view: Tensor
    dims: list[int]
    rest: list[int]
    out_shape: tuple[int, ...]
    b_at: int  # where B's dims start in out_shape


def _geom(t: Tensor, plan: _Plan) -> _Geom:
    if plan.owner is t:
        return plan.geom
    view, dims, _ = _walk(t, plan.canon)
    return _geom_of(view, dims, plan.bshape)


def _geom_of(view: Tensor, dims: list[int], bshape: tuple[int, ...]) -> _Geom:
    rest = [d for d in range(view.dim()) if d not in dims]
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    b_at = dims[0] if adjacent else 0
    rshape = [view.shape[d] for d in rest]
    out_shape = tuple(rshape[:b_at]) + bshape + tuple(rshape[b_at:])
    return _Geom(view, dims, rest, out_shape, b_at)


# ----------------------------------------------------------------------------------------- core: get / put
def _get(t: Tensor, plan: _Plan, op: str = "index") -> Tensor:
    """t[plan] as a new contiguous tensor (no autograd), by the kernel of `op` (index, index_select,
    masked_select) for t's device."""
    return op_table.kernel(op, t._storage.device.type)(t, _geom(t, plan), plan)


def _put(t: Tensor, plan: _Plan, values: Tensor, accumulate: bool, op: str = "index_put") -> None:
    """t[plan] = values (or += with accumulate), in place, without autograd; values has t's dtype and
    broadcasts to the indexing result. By the kernel of `op` (index_put, index_add) for t's device."""
    g = _geom(t, plan)
    try:
        shape = ops.broadcast_shapes(values.shape, g.out_shape)
        if tuple(shape) != g.out_shape:
            raise RuntimeError
    except RuntimeError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                           f"indexing result of shape {list(g.out_shape)}") from None
    if values.device != t.device:
        values = ops.to_copy(values.detach(), t.device, values.dtype)
    op_table.kernel(op, t._storage.device.type)(t, g, plan, values, accumulate)


def _value_tensor(value: Any, dtype: dt.dtype, dev: device) -> Tensor:
    """A Python number, or a tensor, as a tensor of `dtype` on `dev` (differentiable for tensors)."""
    if isinstance(value, Tensor):
        if value.device != dev and value.dim() == 0 and value.device.type == "cpu":
            return ops.full((), value.item(), dtype, dev)
        return value.to(dev, dtype) if (value.device != dev or value.dtype is not dtype) else value
    return ops.full((), value, dtype, dev)


def _record(out: Tensor, inputs: list[Any], op: str, node: str | None = None, **args: Any) -> Tensor:
    """Record op's node on `out` with the table's derivative of op, given op's arguments `args`."""
    deriv = _OPS[op].derivative
    assert deriv is not None

    def bw(g: Tensor) -> tuple:
        return tuple(_fit(gi, x) for gi, x in zip(deriv(g, *inputs, **args), inputs, strict=True))
    return record(out, inputs, node or _OPS[op].node, bw)


def _index(t: Tensor, plan: _Plan) -> Tensor:
    """t[plan] (a copy); records IndexBackward0."""
    return _record(_get(t, plan), [t], "index", plan=plan)


def _index_put(t: Tensor, plan: _Plan, values: Tensor, accumulate: bool, *, fresh: bool = False) -> Tensor:
    """Out of place: a copy of t with t[plan] = values; records IndexPutBackward0. `fresh`: t is a new
    tensor the caller gives away (a derivative's zeros), written into instead of copied."""
    out = t if fresh and not t.requires_grad else ops._cast(t, t.dtype)
    _put(out, plan, values, accumulate)
    return _record(out, [t, values], "index_put", plan=plan, accumulate=accumulate)


op_table.register_front("index", _index)
op_table.register_front("index_put", _index_put)


# ----------------------------------------------------------------------------------------- public: []
def getitem(t: Tensor, index: Any) -> Tensor:
    """t[index] with advanced indexing (a copy); differentiable (IndexBackward0).

    Raises:
        IndexError: an index out of range, a mask of the wrong shape, index tensors that don't
            broadcast, a float index tensor, too many indices.
    """
    index = _selects(index)
    if not is_advanced(index):
        return ops.getitem(t, index)
    return _index(t, _plan(t, index))


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """t[index] = value (a number or a tensor broadcast to the selection, converted to t's dtype).

    In a graph, t's grad_fn becomes IndexPutBackward0 (advanced indices) or CopySlices (basic ones).

    Raises:
        RuntimeError: t is a leaf that requires grad; value doesn't broadcast to the selection.
    """
    index = _selects(index)
    if not is_advanced(index):  # basic indices with autograd: PyTorch's CopySlices
        if autograd.is_grad_enabled() and t.requires_grad and t.is_leaf:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        ops.inplace(t, lambda s: _copy_slices(s, index, value))
        return
    plan = _plan(t, index)
    if ops._needs_grad(t, value):
        ops.inplace(t, lambda s: _index_put(s, plan, _value_tensor(value, s.dtype, s.device), False))
        return
    _put(t, plan, _value_tensor(value, t.dtype, t.device), False)


def _copy_slices(t: Tensor, index: Any, value: Any) -> Tensor:
    out = ops._cast(t, t.dtype)
    v = _value_tensor(value, t.dtype, t.device)
    sub = ops.getitem(out.detach(), index)
    ops.copy_into(sub, v.detach())

    def bw(g: Tensor) -> tuple:
        gs = ops._cast(g, g.dtype)
        ops.fill_(ops.getitem(gs, index), 0)
        gv = ops.getitem(g, index) if isinstance(v, Tensor) and v.requires_grad else None
        return _fit(gs, t), _fit(gv, v)
    return record(out, [t, v], "torch::autograd::CopySlices", bw)


def index_put(input: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """A copy of input with input[indices] = values (+= with accumulate); differentiable.

    Args:
        input: the tensor.
        indices: a tuple of index tensors (None for a full dim), one per leading dim.
        values: a tensor of input's dtype, broadcast to the indexing result.
        accumulate: add instead of assign (repeated indices add up).

    Raises:
        RuntimeError: values of another dtype, or of a shape that doesn't broadcast.
    """
    _check_put_values(input, values)
    plan = _plan(input, tuple(slice(None) if ix is None else ix for ix in indices))
    return _index_put(input, plan, values, accumulate)


def index_put_(input: Tensor, indices: Sequence[Any], values: Tensor, accumulate: bool = False) -> Tensor:  # noqa: A002
    """In-place index_put; returns input."""
    _check_put_values(input, values)
    plan = _plan(input, tuple(slice(None) if ix is None else ix for ix in indices))
    if ops._needs_grad(input, values):
        return ops.inplace(input, lambda s: _index_put(s, plan, values, accumulate))
    _put(input, plan, values, accumulate)
    return input


def _check_put_values(t: Tensor, values: Any) -> None:
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put_(): argument 'values' (position 2) must be Tensor, not {type(values).__name__}")
    if values.dtype is not t.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_torch_name(t.dtype.name)} for the destination and {_torch_name(values.dtype.name)} "
                           f"for the source.")


# ----------------------------------------------------------------------------------------- nonzero
def _nonzero_rows(x: Tensor, transpose: bool = True) -> Tensor:
    """The coordinates of x's nonzero elements, row-major order: (ndim, n) if transpose else (n, ndim),
    int64 on x's device. On "cuda" only the count is read back."""
    return op_table.kernel("nonzero", x._storage.device.type)(x, transpose)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Any:  # noqa: A002
    """The indices of the nonzero elements: a (n, ndim) int64 tensor, or with `as_tuple` one 1-D tensor
    per dim. Reads the count back to the host (a sync, as in PyTorch)."""
    if as_tuple:
        if input.dim() == 0:
            return (_nonzero_rows(input.reshape(1))[0],)
        rows = _nonzero_rows(input)
        return tuple(rows[d] for d in range(input.dim()))
    return _nonzero_rows(input, transpose=False)


def argwhere(input: Tensor) -> Tensor:  # noqa: A002
    """nonzero(input): the (n, ndim) indices of the nonzero elements."""
    return nonzero(input)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """where(condition, input, other): elementwise choice (see ops.where); where(condition): the
    tuple of indices of condition's nonzero elements (= nonzero(condition, as_tuple=True))."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if input is None or other is None:
        raise TypeError("where() expected either 1 or 3 arguments (condition, input, other)")
    return ops.where(condition, input, other)


# ----------------------------------------------------------------------------------------- select / add
def _index_vector(index: Any, op: str) -> Tensor:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    if index.dim() > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"{op}(): Expected dtype int32 or int64 for index")
    return index.reshape(-1)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:  # noqa: A002
    """input's slices along `dim` at the 1-D `index`: out.shape[dim] = index.numel(); differentiable.

    Raises:
        IndexError: an index outside [0, size) ("index out of range in self"), a 2-D index.
        RuntimeError: an index that is not int32/int64.
    """
    idx = _index_vector(index, "index_select")
    ops._check_same_device(input, idx)
    d = _wrap_dim(dim, input.dim())
    src = input if input.dim() else input.reshape(1)
    plan = _plan(src, (slice(None),) * d + (idx,), kind=2)
    out = _get(src, plan, "index_select")
    if input.dim() == 0:
        out = out.reshape(())
    return _record(out, [input], "index_select", dim=d, index=idx)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Any = 1) -> Tensor:  # noqa: A002
    """A copy of input with source (times alpha) added at the rows `index` along `dim`; repeated indices
    add up; differentiable."""
    idx = _index_vector(index, "index_add")
    d = _wrap_dim(dim, input.dim())
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({_torch_name(input.dtype.name)}) and source "
                           f"({_torch_name(source.dtype.name)}) must have the same scalar type")
    src = input if input.dim() else input.reshape(1)
    plan = _plan(src, (slice(None),) * d + (idx,), kind=3)
    vals = source if alpha == 1 else ops.mul(source, alpha).to(input.dtype)
    g0 = _geom(src, plan)
    if math.prod(vals.shape) != math.prod(g0.out_shape):
        raise RuntimeError(f"index_add_(): Number of indices ({idx.numel()}) should be equal to source.size(dim) "
                           f"({source.shape[d] if source.dim() else 1})")
    with autograd.no_grad():
        out = ops._cast(input, input.dtype)
        _put(out if input.dim() else out.reshape(1), plan, vals.detach().reshape(g0.out_shape), True, "index_add")
    return _record(out, [input, source], "index_add", dim=d, index=idx, alpha=alpha)


def _long_vector(index: Any, op: str, message: str) -> Tensor:
    """index_copy / index_fill's index: an int64 tensor of at most one dim, flattened."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' (position 2) must be Tensor, not {type(index).__name__}")
    if index.dtype is not dt.int64:
        raise RuntimeError(f"{op}(): Expected a long tensor for index, but got {_torch_name(index.dtype.name)}")
    if index.dim() > 1:
        raise RuntimeError(message)
    return index.reshape(-1)


def _host_rows_check(index: Tensor, size: int, d: int, prefix: str, negatives: bool) -> None:
    """PyTorch's IndexError for a host index outside [0, size) ([-size, size) with `negatives`)."""
    if index.device.type == "cpu" and index.numel():  # (device-resident indices: the kernel's assertion)
        a = index._host()
        bad = (a < (-size if negatives else 0)) | (a >= size)
        if bad.any():
            raise IndexError(f"{prefix}index {int(a[bad].flat[0])} is out of bounds for dimension {d} with size {size}")


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """A copy of input with its slices `index` along `dim` replaced by source's (source.size(dim) ==
    index.numel()); differentiable (IndexCopyBackward0). Repeated indices: one of the writes wins.

    Raises:
        RuntimeError: an index that is not int64, source of another dtype.
        IndexError: a host index outside [0, size), a count that differs from source.size(dim).
    """
    idx = _long_vector(index, "index_copy_", "index_copy_(): Index should have dimension 1 or 0 (got 2)")
    ops._check_same_device(input, idx, source)
    d = _wrap_dim(dim, input.dim())
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_torch_name(input.dtype.name)} and (source) {_torch_name(source.dtype.name)}")
    src = input if input.dim() else input.reshape(1)
    count = source.shape[d] if source.dim() else 1
    if idx.numel() != count:
        raise IndexError(f"index_copy_(): Number of indices ({idx.numel()}) should be equal to source.size(dim) "
                         f"({count})")
    _host_rows_check(idx, src.shape[d], d, "index_copy_(): ", negatives=False)
    plan = _plan(src, (slice(None),) * d + (idx,), kind=3)
    out = ops._cast(input, input.dtype)
    g0 = _geom(src, plan)
    _put(out if input.dim() else out.reshape(1), plan, source.detach().reshape(g0.out_shape), False, "index_copy")
    return _record(out, [input, source], "index_copy", dim=d, index=idx)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A copy of input with its slices `index` along `dim` set to `value` (a number or a 0-dim tensor);
    negative indices count from the end; differentiable (IndexFillBackward0, IndexFillBackward1 for a
    tensor value).

    Raises:
        RuntimeError: an index that is not int64 or has two dims; a value tensor with dims.
        IndexError: a host index outside [-size, size).
    """
    idx = _long_vector(index, "index_fill_", "Index has to be a vector/scalar")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    dev = ops._check_same_device(input, idx)
    d = _wrap_dim(dim, input.dim())
    src = input if input.dim() else input.reshape(1)
    _host_rows_check(idx, src.shape[d], d, "", negatives=True)
    plan = _plan(src, (slice(None),) * d + (idx,), kind=1)
    out = ops._cast(input, input.dtype)
    _put(out if input.dim() else out.reshape(1), plan, _value_tensor(value, input.dtype, dev).detach(), False,
         "index_fill")
    return _record(out, [input, value], "index_fill",
                   None if isinstance(value, Tensor) else _OPS["index_fill"].node_scalar, dim=d, index=idx)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """A copy of input (broadcast with mask) with the positions where mask is True taken from source's
    elements in order (row-major); differentiable (MaskedScatterBackward0). Reads the count of True back to
    the host (a sync, as in PyTorch).

    Raises:
        RuntimeError: a mask that is not bool, source of another dtype, fewer source elements than True.
    """
    if not isinstance(mask, Tensor) or mask.dtype is not dt.bool_:
        got = _torch_name(mask.dtype.name) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {got}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_torch_name(input.dtype.name)} and {_torch_name(source.dtype.name)}")
    ops._check_same_device(input, mask, source)
    shape = tuple(ops.broadcast_shapes(input.shape, mask.shape))
    out = ops._cast(input.detach().expand(shape) if tuple(input.shape) != shape else input, input.dtype)
    m = mask.expand(shape) if tuple(mask.shape) != shape else mask
    o = out if shape else out.reshape(1)
    plan = _plan(o, (m if shape else m.reshape(1),))
    n = math.prod(plan.bshape)
    if n > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    _put(o, plan, source.detach().reshape(-1)[:n], False, "masked_scatter")
    return _record(out, [input, mask, source], "masked_scatter")


# ----------------------------------------------------------------------------------------- gather / scatter
def _gather_index(input: Tensor, dim: int, index: Any, op: str) -> tuple[int, Tensor]:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' (position 3) must be Tensor, not {type(index).__name__}")
    d = _wrap_dim(dim, input.dim())
    if index.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index")
    if index.dim() != input.dim() and not (index.dim() <= 1 and input.dim() <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    ops._check_same_device(input, index)
    if index.dtype is not dt.int64:
        index = ops._cast(index, dt.int64)
    return d, index


def _host_bounds(index: Tensor, size: int, d: int) -> None:
    if index.device.type == "cpu" and index.numel():
        a = index._host()
        bad = (a < 0) | (a >= size)
        if bad.any():
            raise RuntimeError(f"index {int(a[bad].flat[0])} is out of bounds for dimension {d} with size {size}")


def _gather(input: Tensor, d: int, index: Tensor) -> Tensor:
    """input's values at `index` along d (no autograd), by the gather kernel of input's device."""
    src = input if input.dim() else input.reshape(1)
    ix = index if index.dim() else index.reshape(1)
    _host_bounds(ix, src.shape[d], d)
    return op_table.kernel("gather", src._storage.device.type)(src, d, ix).reshape(index.shape)


def _scatter_into(out: Tensor, d: int, index: Tensor, src: Tensor, accumulate: bool) -> None:
    """out (contiguous, modified in place) scattered into from src along d at index, no autograd."""
    o = out if out.dim() else out.reshape(1)
    ix = index if index.dim() else index.reshape(1)
    _host_bounds(ix, o.shape[d], d)
    if ix.numel():
        op_table.kernel("scatter_add" if accumulate else "scatter", o._storage.device.type)(o, d, ix, src, accumulate)


def _check_scatter_sizes(input: Tensor, d: int, index: Tensor, src: Tensor | None) -> None:
    for k in range(index.dim()):
        if k != d and index.shape[k] > input.shape[k] or (src is not None and src.dim() and
                                                          index.shape[k] > src.shape[k]):
            what = f"Expected index {list(index.shape)} to be no larger than self {list(input.shape)} apart from " \
                   f"dimension {d}"
            if src is not None and src.dim():
                what += f" and to be no larger size than src {list(src.shape)}"
            raise RuntimeError(what)


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:  # noqa: A002
    """out[i][j][k] = input[index[i][j][k]][j][k] (for dim 0; likewise for other dims); out has
    index's shape; differentiable (GatherBackward0).

    Raises:
        RuntimeError: index not int32/int64, of another number of dims, larger than input apart from
            dim, or out of [0, size) ("index 5 is out of bounds for dimension 0 with size 3").
    """
    d, index = _gather_index(input, dim, index, "gather")
    for k in range(index.dim()):
        if k != d and index.shape[k] > input.shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(index.shape)} to be no "
                               f"larger than self {list(input.shape)} apart from dimension {d}")
    return _record(_gather(input, d, index), [input], "gather", dim=d, index=index)


def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, value: Any = None, *,  # noqa: A002
            reduce: str | None = None) -> Tensor:
    """A copy of input with out[index[i][j]][j] = src[i][j] (for dim 0), or = value; differentiable
    (ScatterBackward0 / ScatterBackward1). reduce="add" is scatter_add.

    Raises:
        RuntimeError: src of another dtype, index larger than input (apart from dim) or src, index out
            of range.
    """
    if src is not None and not isinstance(src, Tensor):
        src, value = None, src
    if reduce is not None:
        if reduce != "add":
            raise NotImplementedError(f"scatter: reduce='{reduce}' is not implemented (only 'add')")
        if src is None:
            src = ops.full(index.shape, value, input.dtype, input.device)
        return scatter_add(input, dim, index, src)
    d, index = _gather_index(input, dim, index, "scatter")
    if src is not None and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _check_scatter_sizes(input, d, index, src)
    s = src if src is not None else ops.full((), value, input.dtype, input.device)
    out = ops._cast(input, input.dtype)
    _scatter_into(out, d, index, s.detach().contiguous() if s.dim() else s.detach(), False)
    return _record(out, [input, src], "scatter", None if src is not None else _OPS["scatter"].node_scalar,
                   dim=d, index=index)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """A copy of input with out[index[i][j]][j] += src[i][j] (for dim 0); repeated indices add up
    (atomically on "cuda"; float16/bfloat16 accumulate in float32); differentiable."""
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_add(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
    d, index = _gather_index(input, dim, index, "scatter_add")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")  # (PyTorch's words)
    _check_scatter_sizes(input, d, index, src)
    out = ops._cast(input, input.dtype)
    _scatter_into(out, d, index, src.detach().contiguous(), True)
    return _record(out, [input, src], "scatter_add", dim=d, index=index)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,  # noqa: A002
                   include_self: bool = True) -> Tensor:
    """A copy of input where each src element is reduced into out[index[i][j]][j] (for dim 0) with `reduce`:
    "sum", "prod", "mean", "amax" or "amin" (NaN propagates); include_self=False leaves input's values out of
    the reduction at the positions src reaches. Differentiable with PyTorch's formulas (ScatterReduceBackward0:
    amax/amin share the gradient among equal maxima, prod handles zeros).

    Raises:
        RuntimeError: an unknown reduce, src of another dtype, index larger than input (apart from dim) or src,
            index out of range.
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)  # (PyTorch takes these spellings too)
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' (position 3) must be Tensor, not {type(src).__name__}")
    d, index = _gather_index(input, dim, index, "scatter_reduce")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter_reduce(): Expected self.dtype to be equal to src.dtype")
    _check_scatter_sizes(input, d, index, src)
    with autograd.no_grad():
        out = _scatter_reduce_values(input.detach(), d, index, src.detach().contiguous(), reduce, include_self)

    def bw(g: Tensor) -> tuple:
        gs, gsrc = _scatter_reduce_grads(g, input, d, index, src, reduce, include_self, out)
        return _fit(gs, input), _fit(gsrc, src)
    return record(out, [input, src], _OPS["scatter_reduce"].node, bw)


def _identity(reduce: str, d: dt.dtype) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = math.inf if d.is_floating_point else np.iinfo(d.np).max
    return -big if reduce == "amax" else big


def _scatter_reduce_values(x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool
                           ) -> Tensor:
    """The forward values (no autograd)."""
    out = ops._cast(x, x.dtype)
    if not include_self:  # the positions src reaches start from the reduction's identity
        reached = _reached(x, d, index)
        out = ops.where(reached, ops.full((), _identity(reduce, x.dtype), x.dtype, x.device), out).contiguous()
    if reduce in ("sum", "mean"):
        _scatter_into(out, d, index, src, True)
    else:
        o = out if out.dim() else out.reshape(1)
        ix = index if index.dim() else index.reshape(1)
        _host_bounds(ix, o.shape[d], d)
        if ix.numel():
            op_table.kernel("scatter_reduce", o._storage.device.type)(o, d, ix, src, reduce)
    if reduce == "mean":
        count = _count(x, d, index, include_self)
        out = out // count if not x.dtype.is_floating_point else out / count
    return out


def _reached(x: Tensor, d: int, index: Tensor) -> Tensor:
    """Bool: the positions of x that some src element is scattered to."""
    mask = ops.full(x.shape, False, dt.bool_, x.device)
    _scatter_into(mask, d, index, ops.full((), True, dt.bool_, x.device), False)
    return mask


def _count(x: Tensor, d: int, index: Tensor, include_self: bool) -> Tensor:
    """How many values each position's mean takes (1 where none, so those keep their value), in x's dtype."""
    count = ops.full(x.shape, 1 if include_self else 0, x.dtype, x.device)
    _scatter_into(count, d, index, ops.full(index.shape, 1, x.dtype, x.device), True)
    return ops.where(count == 0, ops.full((), 1, x.dtype, x.device), count)


def _scatter_reduce_grads(g: Tensor, x: Tensor, d: int, index: Tensor, src: Tensor, reduce: str, include_self: bool,
                          result: Tensor) -> tuple[Tensor, Tensor]:
    """(grad of input, grad of src), PyTorch's scatter_reduce_backward."""
    if reduce == "sum":
        gx, gsrc = g, g.gather(d, index)
    elif reduce == "mean":
        n = _count(x.detach(), d, index, include_self)
        gx, gsrc = g / n, (g / n).gather(d, index)
    elif reduce in ("amax", "amin"):
        value = result.gather(d, index)
        x_is = (x == result).to(x.dtype)
        src_is = (src == value).to(x.dtype)
        share = g / scatter_add(x_is, d, index, src_is)
        gx, gsrc = x_is * share, src_is * share.gather(d, index)
    else:  # prod: the exclusive product where an element is zero
        masked_x = x.masked_fill(x == 0, 1)
        gx = g * scatter_reduce(masked_x, d, index, src, "prod", include_self=include_self) / masked_x
        src_zero = src == 0
        zeros_at = scatter_add(ops.full(x.shape, 0, x.dtype, x.device), d, index, src_zero.to(x.dtype))
        single = src_zero & (zeros_at.gather(d, index) == 1)
        masked_src_result = scatter_reduce(x, d, index, src.masked_fill(single, 1), "prod", include_self=include_self)
        gsrc = ops.where(single, (g * masked_src_result).gather(d, index),
                         (g * result).gather(d, index) / src.masked_fill(src_zero, 1))
    if not include_self:
        gx = gx.masked_fill(_reached(x, d, index), 0)
    return gx, gsrc


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """Values of input at `indices` along `dim` (input and indices broadcast apart from dim); with
    dim=None both are flattened. Differentiable (through gather)."""
    if indices.dtype is not dt.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_torch_name(indices.dtype.name)}")
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.dim()} dimensions for input, and {indices.dim()} dimensions for indices")
    d = _wrap_dim(dim, input.dim())
    ishape = list(input.shape)
    ishape[d] = indices.shape[d]
    b = list(ops.broadcast_shapes(ishape, indices.shape))
    idx = indices.expand(b) if list(indices.shape) != b else indices
    b[d] = input.shape[d]
    x = input.expand(b) if list(input.shape) != b else input
    return gather(x, d, idx)


def take(input: Tensor, index: Tensor) -> Tensor:  # noqa: A002
    """input read as 1-D (row-major) at `index`: out has index's shape, negative indices count from the
    end; differentiable (TakeBackward0; repeated indices add up in the gradient).

    Raises:
        RuntimeError: an index that is not int64.
        IndexError: an index given on the host outside [-n, n) ("out of range: tried to access index 6 on a
            tensor of 6 elements."), an empty input. On "cuda" a bad device-resident index is a
            device-side assertion.
    """
    if not isinstance(index, Tensor):
        raise TypeError(f"take(): argument 'index' (position 2) must be Tensor, not {type(index).__name__}")
    if index.dtype is not dt.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_torch_name(index.dtype.name)}")
    ops._check_same_device(input, index)
    n = input.numel()
    if n == 0 and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    if index.device.type == "cpu" and index.numel():  # (indices on the host are checked there, as PyTorch)
        a = index._host()
        bad = (a < -n) | (a >= n)
        if bad.any():
            raise IndexError(f"out of range: tried to access index {int(a[bad].flat[0])} on a tensor of {n} "
                             f"elements.")
    flat = input.detach().reshape(-1)
    plan = _plan(flat, (index,))
    out = _get(flat, plan, "take")
    deriv = _OPS["take"].derivative
    assert deriv is not None

    def bw(g: Tensor) -> tuple:
        (gx,) = deriv(g, flat, plan=plan)
        return (_fit(gx.reshape(input.shape), input),)
    return record(out, [input], _OPS["take"].node, bw)


# ----------------------------------------------------------------------------------------- masks
def _check_mask(mask: Any, op: str) -> None:
    if not isinstance(mask, Tensor) or mask.dtype is not dt.bool_:
        got = _C_NAMES.get(mask.dtype.name, mask.dtype.name) if isinstance(mask, Tensor) else type(mask).__name__
        raise RuntimeError(f"{op} only supports boolean masks, but got mask with dtype {got}")


def masked_fill(input: Tensor, mask: Tensor, value: Any) -> Tensor:  # noqa: A002
    """input with `value` where mask is True (mask and input broadcast); keeps input's dtype;
    differentiable in input and in a 0-dim tensor value (MaskedFillBackward0)."""
    _check_mask(mask, "masked_fill_")
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    dev = ops._check_same_device(input, mask)
    v = _value_tensor(value, input.dtype, dev)
    m = mask if mask.device == dev else mask.to(dev)
    x = ops._as_tensor(input.detach(), input.dtype, dev)  # (a 0-dim cpu input goes with a cuda mask)
    out = op_table.kernel("masked_fill", dev.type)(m, v.detach(), x, input.dtype,
                                                   ops.broadcast_shapes(m.shape, v.shape, x.shape))
    return _record(out, [input, mask, value], "masked_fill",
                   None if isinstance(value, Tensor) else _OPS["masked_fill"].node_scalar)


def masked_select(input: Tensor, mask: Tensor) -> Tensor:  # noqa: A002
    """The elements of input where mask is True (both broadcast), as a 1-D tensor; differentiable.
    Reads the count of True back to the host (a sync, as in PyTorch)."""
    if not isinstance(mask, Tensor) or mask.dtype is not dt.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    ops._check_same_device(input, mask)
    shape = tuple(ops.broadcast_shapes(input.shape, mask.shape))
    x = input.detach().expand(shape) if tuple(input.shape) != shape else input.detach()
    m = mask.expand(shape) if tuple(mask.shape) != shape else mask
    xs = x if shape else x.reshape(1)
    plan = _plan(xs, (m if shape else m.reshape(1),))
    out = _get(xs, plan, "masked_select")
    deriv = _OPS["masked_select"].derivative
    assert deriv is not None

    def bw(g: Tensor) -> tuple:
        (gx,) = deriv(g, xs, plan=plan)
        return (_fit(gx.reshape(shape), input),)
    return record(out, [input], _OPS["masked_select"].node, bw)


# ----------------------------------------------------------------------------------------- tril / triu
def _tri(input: Tensor, diagonal: int, upper: bool) -> Tensor:
    name = "triu" if upper else "tril"
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    out = op_table.kernel(name, input._storage.device.type)(input, diagonal, upper)
    return _record(out, [input], name, diagonal=diagonal)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The lower triangle of the last two dims (elements with col - row <= diagonal), zeros elsewhere."""
    return _tri(input, diagonal, False)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:  # noqa: A002
    """The upper triangle of the last two dims (elements with col - row >= diagonal), zeros elsewhere."""
    return _tri(input, diagonal, True)


__all__ = ["argwhere", "gather", "index_add", "index_copy", "index_fill", "index_put", "index_put_", "index_select",
           "masked_fill", "masked_scatter", "masked_select", "nonzero", "scatter", "scatter_add", "take",
           "take_along_dim", "tril", "triu", "where"]
