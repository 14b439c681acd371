"""`Tensor`: a strided view (shape, strides, storage offset, dtype) of a Storage on a device, with
PyTorch's view semantics (view/reshape/permute/transpose/expand/squeeze/unsqueeze/flatten/slicing share
storage), conversions (`to`, `cuda`, `cpu`, `numpy`, `item`, `tolist`) and PyTorch's printing.

This module imports no op: the graph is `autograd.py`'s, and the math methods (`x.exp()`, `x.sum()`,
`x @ y`, `x[i]`, `x.clone()`, printing) are bound onto the class by the modules that implement them
(`op_table.bind` for the table's ops, `tensor_ops.bind` for the rest), which import this one.

Example:
    >>> import strata
    >>> x = strata.arange(6).view(2, 3)
    >>> x.T.shape, x.T.stride(), x.T.is_contiguous()
    (strata.Size([3, 2]), (1, 3), False)
    >>> x[1]
    tensor([3, 4, 5])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from strata.framework import autograd
from strata.framework import dtypes as dt
from strata.framework.device import CPU, canonical, device
from strata.framework.storage import Storage

if TYPE_CHECKING:  # the methods bound at import by tensor_ops.bind, typed there
    from strata.framework.tensor_ops import TensorOps as _Methods
else:
    _Methods = object


class Size(tuple):
    """A tensor's shape (a tuple of ints), printed as PyTorch prints torch.Size."""

    def numel(self) -> int:
        """The product of the sizes."""
        return math.prod(self)

    def __repr__(self) -> str:
        return f"strata.Size({list(self)})"


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major element strides of `shape`."""
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(st))


# shape -> (Size, row-major strides): the layout of a new row-major tensor, shared by every tensor of that
# shape (both are immutable); bounded, as shapes are few in a program but need not be.
_LAYOUTS: dict[tuple[int, ...], tuple[Size, tuple[int, ...]]] = {}
_LAYOUTS_MAX = 4096


def _layout(shape: tuple[int, ...]) -> tuple[Size, tuple[int, ...]]:
    """(Size, row-major strides) of `shape`, a tuple of Python ints."""
    lay = _LAYOUTS.get(shape)
    if lay is None:
        if len(_LAYOUTS) >= _LAYOUTS_MAX:
            _LAYOUTS.clear()
        lay = _LAYOUTS[shape] = (Size(shape), contiguous_strides(shape))
    return lay


def _shape_arg(args: tuple) -> tuple[int, ...]:
    if len(args) == 1:
        a0 = args[0]
        k = a0.__class__
        if k is tuple or k is Size or k is list or isinstance(a0, Sequence):
            args = tuple(a0)
    for a in args:
        if a.__class__ is not int:  # (Python ints, the common case, need no conversion)
            break
    else:
        return args
    for a in args:
        if not isinstance(a, int | np.integer) or isinstance(a, bool):
            raise TypeError(f"expected a sequence of integers as the size, got {type(a).__name__}")
    return tuple(int(a) for a in args)


def _wrap_dim(d: int, ndim: int, op: str = "") -> int:
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return d % n


class Tensor(_Methods):
    """An n-dimensional array on "cpu" or "cuda", with autograd.

    Attributes:
        dtype, device, requires_grad, grad, grad_fn: as in PyTorch.
    """

    __array_priority__ = 1000  # NumPy scalars on the left defer to our reflected operators
    # a cpu tensor's NumPy view of its elements, made on first use by `_host` (None: not made yet); the
    # layout it reflects changes only through the `data` setter, which drops it
    _np: np.ndarray | None = None

    def __init__(self, storage: Storage, shape: Sequence[int], stride: Sequence[int], offset: int,
                 dtype: dt.dtype, requires_grad: bool = False) -> None:
        self._storage = storage
        self._shape = Size(map(int, shape))
        self._stride = tuple(map(int, stride))
        self._offset = int(offset)
        self.dtype = dtype
        self._requires_grad = bool(requires_grad)
        self._grad: Tensor | None = None
        self.grad_fn: autograd.Node | None = None

    # -- metadata
    @property
    def device(self) -> device:
        """Where the data lives."""
        return self._storage.device

    @property
    def shape(self) -> Size:
        """The sizes, as strata.Size."""
        return self._shape

    def size(self, dim: int | None = None) -> Any:
        """The shape, or the size of dimension `dim`."""
        return self._shape if dim is None else self._shape[_wrap_dim(dim, self.dim())]

    def stride(self, dim: int | None = None) -> Any:
        """Element strides (all dims, or `dim`)."""
        return self._stride if dim is None else self._stride[_wrap_dim(dim, self.dim())]

    def storage_offset(self) -> int:
        """The index of element [0, ..., 0] in the storage, in elements."""
        return self._offset

    def dim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    ndim = property(dim)

    def numel(self) -> int:
        """The number of elements."""
        return math.prod(self._shape)

    def element_size(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def is_cuda(self) -> bool:
        """True for tensors on a virtual GPU."""
        return self.device.type == "cuda"

    def is_floating_point(self) -> bool:
        """True for float16/bfloat16/float32/float64 tensors."""
        return self.dtype.is_floating_point

    def is_contiguous(self) -> bool:
        """True when the strides are row-major for the shape (size-1 dims ignored; empty tensors always)."""
        if 0 in self._shape:
            return True
        expected = 1
        for s, st in zip(reversed(self._shape), reversed(self._stride), strict=True):
            if s != 1 and st != expected:
                return False
            expected *= s
        return True

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    @property
    def is_cpu(self) -> bool:
        """True for tensors in host memory."""
        return self.device.type == "cpu"

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the elements this tensor views (numel * itemsize)."""
        return self.numel() * self.dtype.itemsize

    def data_ptr(self) -> int:
        """The address of the first element: a device address for "cuda", a host address for "cpu"."""
        if self._storage.host is not None:
            return int(self._storage.host.ctypes.data) + self._offset * self.dtype.itemsize
        return self._storage.ptr + self._offset * self.dtype.itemsize

    def get_device(self) -> int:
        """The CUDA device index, or -1 on "cpu"."""
        return -1 if self.device.type == "cpu" else int(self.device.index or 0)

    @property
    def data(self) -> Tensor:
        """The same data, detached from the graph. Assigning `t.data = other` makes t view other's data
        (shape, dtype and device included) while t stays the same object, as PyTorch's does."""
        return self.detach()

    @data.setter
    def data(self, other: Tensor) -> None:
        if not isinstance(other, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(other).__name__}")
        self._storage, self._shape, self._stride = other._storage, other._shape, other._stride
        self._offset, self.dtype = other._offset, other.dtype
        self._np = None

    def __format__(self, spec: str) -> str:
        if self.dim() == 0 and spec:
            return format(self.item(), spec)
        return format(repr(self), spec)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        with autograd.no_grad():
            out = self.clone()
        out.requires_grad_(self.requires_grad)
        if self.grad is not None:
            out.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    # -- autograd surface
    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor record a graph."""
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self.grad_fn is not None and not value:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If you want to use a "
                               "computed variable in a subgraph that doesn't require differentiation use "
                               "var_no_grad = var.detach().")
        if value and not (self.dtype.is_floating_point):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place; returns self.

        Raises:
            RuntimeError: turning it off on a non-leaf, or on for a non-floating dtype.
        """
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors not produced by a recorded op."""
        return self.grad_fn is None

    _retains_grad = False

    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient (leaves, and non-leaves after `retain_grad()`); reading it on any
        other non-leaf warns as PyTorch does."""
        if self._grad is None and self.grad_fn is not None and not self._retains_grad:
            autograd._warn_non_leaf_grad()
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError(f"attempting to assign a gradient with dtype '{value.dtype.name}' to a tensor "
                                   f"with grad_dtype '{self.dtype.name}'. The gradient must match the tensor's "
                                   "grad_dtype (defaults to the tensor's dtype).")
            if tuple(value.shape) != tuple(self._shape):
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                                   f"size '{list(self._shape)}'. Please ensure that the gradient and the tensor are "
                                   "the same size")
            if value.device != self.device:
                raise RuntimeError("assigned grad has data located on a different device")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf on which `retain_grad()` was called."""
        return self._retains_grad

    def retain_grad(self) -> None:
        """Make backward fill this non-leaf's `.grad` too (a no-op on leaves).

        Raises:
            RuntimeError: the tensor does not require grad.
        """
        autograd.retain_grad(self)

    def register_hook(self, hook: Any) -> Any:
        """Call `hook(grad)` whenever this tensor's gradient is computed; a non-None return value
        replaces the gradient. Returns a handle whose `remove()` unregisters the hook.

        Raises:
            RuntimeError: the tensor does not require grad.
        """
        return autograd.register_hook(self, hook)

    def backward(self, gradient: Tensor | None = None, retain_graph: bool | None = None, create_graph: bool = False,
                 inputs: Any = None) -> None:
        """Accumulate d(self)/d(leaf) into the `.grad` of every leaf requiring grad (or of `inputs`);
        `create_graph=True` records the pass for higher-order gradients (see autograd.py)."""
        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """The same data, cut from the graph (requires_grad=False)."""
        return Tensor._rebuild(self._storage, self._shape, self._stride, self._offset, self.dtype, self._np)

    def detach_(self) -> Tensor:
        """Cut self from the graph in place: it becomes a leaf that does not require grad.

        Raises:
            RuntimeError: self is a view recorded in a graph (use detach()).
        """
        if self.grad_fn is not None and self.grad_fn.name() in _VIEW_NODES:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
                               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
                               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
                               "function in torch/optim/optimizer.py as the solution.")
        self.grad_fn = None
        self._requires_grad = False
        return self

    @classmethod
    def _rebuild(cls, storage: Storage, shape: Size, stride: tuple[int, ...], offset: int, dtype: dt.dtype,
                 view: np.ndarray | None) -> Tensor:
        """A plain tensor over `storage` with a layout taken from another tensor (already normalized, so
        no work beyond the attributes), and that tensor's cached NumPy view, if any (autograd.SavedOutput)."""
        t = _new_tensor(Tensor)
        t._storage, t._shape, t._stride, t._offset, t.dtype = storage, shape, stride, offset, dtype
        t._requires_grad, t._grad, t.grad_fn, t._np = False, None, None, view
        return t

    def _view(self, shape: Sequence[int], stride: Sequence[int], offset: int) -> Tensor:
        return Tensor(self._storage, shape, stride, offset, self.dtype)

    # -- host access
    def _host(self) -> np.ndarray:
        """A NumPy view of a cpu tensor's elements (shares memory). Made once per tensor and kept: the
        kernels read and write through it but never change its shape or flags; code handing an array
        to users gives them a view of it (`numpy()`)."""
        a = self._np
        if a is not None:
            return a
        host = self._storage.host
        assert host is not None
        if 0 in self._shape:
            return np.empty(self._shape, self.dtype.np)
        isz = self.dtype.itemsize
        # (the ndarray constructor over the storage's buffer: a tenth of as_strided's cost, same view)
        a = self._np = np.ndarray(self._shape, self.dtype.np, host, self._offset * isz,
                                  [s * isz for s in self._stride])
        return a

    def numpy(self) -> np.ndarray:
        """The data as an ndarray sharing memory (cpu tensors that don't require grad only)."""
        if self.device.type != "cpu":
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._host().view()  # the user's own array object: reshaping it in place can't touch ours

    def _to_numpy(self) -> np.ndarray:
        """A host copy of the data (any device; doesn't care about requires_grad)."""
        if self.device.type == "cpu":
            return self._host().copy()
        c = self.contiguous()
        out = np.empty(c._shape, self.dtype.np)
        c._storage.read_to_host(out, c._offset * self.dtype.itemsize)
        return out

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        v = self._to_numpy().reshape(-1)[0]
        return bool(v) if self.dtype is dt.bool_ else int(v) if not self.dtype.is_floating_point else float(v)

    def tolist(self) -> Any:
        """Nested Python lists of the values (a number for 0-dim tensors)."""
        a = self._to_numpy()
        if self.dtype.is_floating_point and a.dtype != np.float64:
            a = a.astype(np.float64)
        return a.tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    # -- device and dtype conversion
    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """A tensor on another device and/or of another dtype (self if nothing changes):
        `to("cuda")`, `to(strata.float16)`, `to("cpu", strata.float64)`, `to(other)`, `to(device=, dtype=)`."""
        dev: Any = kwargs.pop("device", None)
        dtype: Any = kwargs.pop("dtype", None)
        copy = kwargs.pop("copy", False)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dev, dtype = a.device, a.dtype
            elif isinstance(a, dt.dtype):
                dtype = a
            elif isinstance(a, str | device | int):
                dev = a
            else:
                raise TypeError(f"to() received an invalid argument {a!r}")
        target_dev = canonical(dev) if dev is not None else self.device
        target_dt = dt.as_dtype(dtype) if dtype is not None else self.dtype
        if target_dev == self.device and target_dt is self.dtype and not copy:
            return self
        return self._to_copy(target_dev, target_dt)

    def cuda(self, device: Any = None) -> Tensor:
        """A copy on the current CUDA device, or on `device` (an index, "cuda:N" or a strata.device)."""
        return self.to("cuda" if device is None else device)

    def cpu(self) -> Tensor:
        """A copy in host memory (self if already there)."""
        return self.to(CPU)

    def type_as(self, other: Tensor) -> Tensor:
        """self.to(other.dtype)."""
        return self.to(other.dtype)

    # -- views
    def view(self, *shape: Any) -> Tensor:
        """The same storage seen with another shape (one dim may be -1). Needs compatible strides.

        Raises:
            RuntimeError: the shape has another number of elements, or the strides don't allow a view.
        """
        new, st = _view_layout(self._shape, self._stride, _shape_arg(shape))
        if st is None:
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return self._viewed(new, st)

    def _viewed(self, new: Size, st: tuple[int, ...]) -> Tensor:
        """`view`'s result for a layout already checked: shape `new` (a Size of ints), strides `st`."""
        out = Tensor._rebuild(self._storage, new, st, self._offset, self.dtype, None)
        if not self._requires_grad:  # (what `record` would find first)
            return out
        return autograd.record(out, [self], "ViewBackward0", lambda g: (g.reshape(self._shape),))

    def reshape(self, *shape: Any) -> Tensor:
        """A view when the strides allow it, else a contiguous copy with the new shape."""
        new, st = _view_layout(self._shape, self._stride, _shape_arg(shape))
        if st is not None:
            return self._viewed(new, st)
        return self.contiguous().view(new)

    def view_as(self, other: Tensor) -> Tensor:
        """self.view(other.shape)."""
        return self.view(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        """self.reshape(other.shape)."""
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Merge dims start_dim..end_dim into one."""
        if self.dim() == 0:
            return self.reshape(1)
        s, e = _wrap_dim(start_dim, self.dim()), _wrap_dim(end_dim, self.dim())
        if s > e:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        shape = self._shape[:s] + (math.prod(self._shape[s:e + 1]),) + self._shape[e + 1:]
        return self.reshape(shape)

    def permute(self, *dims: Any) -> Tensor:
        """Reorder the dims (a view)."""
        d = _shape_arg(dims)
        if len(d) != self.dim():
            raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                               f"length of the desired ordering of dimensions i.e. input.dim() = {self.dim()} is not "
                               f"equal to len(dims) = {len(d)}")
        d = tuple(_wrap_dim(x, self.dim()) for x in d)
        if len(set(d)) != len(d):
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        return self._permuted(d)

    def _permuted(self, d: Sequence[int]) -> Tensor:
        """`permute` by an order already checked (each dim once, none negative)."""
        shape, stride = self._shape, self._stride
        out = Tensor._rebuild(self._storage, Size([shape[x] for x in d]), tuple([stride[x] for x in d]),
                              self._offset, self.dtype, None)
        if not self._requires_grad:  # (what `record` would find first)
            return out
        inv = [0] * len(d)
        for i, x in enumerate(d):
            inv[x] = i
        return autograd.record(out, [self], "PermuteBackward0", lambda g: (g.permute(inv),))

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        """Swap two dims (a view)."""
        nd = len(self._shape)
        if nd == 0:
            return self
        a, b = _wrap_dim(dim0, nd), _wrap_dim(dim1, nd)
        order = list(range(nd))
        order[a], order[b] = order[b], order[a]
        return self._permuted(order)

    def t(self) -> Tensor:
        """Transpose of a tensor of at most 2 dims."""
        if self.dim() > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
        return self.transpose(0, 1) if self.dim() == 2 else self

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """All dims reversed."""
        return self.permute(list(range(self.dim()))[::-1])

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The last two dims swapped."""
        if self.dim() < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D "
                               "tensor.")
        return self.transpose(-2, -1)

    def expand(self, *sizes: Any) -> Tensor:
        """Repeat size-1 dims (stride 0, a view); -1 keeps a size; new leading dims may be added."""
        shape = _shape_arg(sizes)
        if len(shape) < self.dim():
            raise RuntimeError(f"expand(torch.FloatTensor{{{list(self._shape)}}}, size={list(shape)}): the number of "
                               f"sizes provided ({len(shape)}) must be greater or equal to the number of dimensions "
                               f"in the tensor ({self.dim()})")
        lead = len(shape) - self.dim()
        new_shape, new_st = [], []
        for i, s in enumerate(shape):
            if i < lead:
                if s < 0:
                    raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a leading, "
                                       "non-existing dimension 0")
                new_shape.append(s)
                new_st.append(0)
                continue
            cur, st = self._shape[i - lead], self._stride[i - lead]
            if s == -1 or s == cur:
                new_shape.append(cur)
                new_st.append(st)
            elif cur == 1:
                new_shape.append(s)
                new_st.append(0)
            else:
                raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                                   f"non-singleton dimension {i}.  Target sizes: {list(shape)}.  Tensor sizes: "
                                   f"{list(self._shape)}")
        orig = self._shape
        return autograd.record(self._view(new_shape, new_st, self._offset), [self], "ExpandBackward0",
                               lambda g: (g.sum_to_size(orig),))

    def expand_as(self, other: Tensor) -> Tensor:
        """self.expand(other.shape)."""
        return self.expand(other.shape)

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Tensor:
        """Drop size-1 dims (all, or those in `dim`)."""
        if dim is None:
            dims = {i for i, s in enumerate(self._shape) if s == 1}
        else:
            ds = (dim,) if isinstance(dim, int) else tuple(dim)
            dims = {_wrap_dim(d, self.dim()) for d in ds if self._shape[_wrap_dim(d, self.dim())] == 1} \
                if self.dim() else set()
        keep = [i for i in range(self.dim()) if i not in dims]
        return self.reshape([self._shape[i] for i in keep]) if dims else self._alias_view()

    def unsqueeze(self, dim: int) -> Tensor:
        """Insert a size-1 dim at `dim` (a view)."""
        d = _wrap_dim(dim, self.dim() + 1)
        shape = list(self._shape)
        shape.insert(d, 1)
        return self.view(shape)

    def _alias_view(self) -> Tensor:
        return autograd.record(self._view(self._shape, self._stride, self._offset), [self], "AliasBackward0",
                               lambda g: (g,))

    def contiguous(self) -> Tensor:
        """self if row-major, else a row-major copy."""
        return self if self.is_contiguous() else self.clone()

    def __iter__(self) -> Any:
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __getstate__(self) -> dict[str, Any]:
        # (pickle copies an array view apart from the storage it views: the cached view is remade instead)
        state = self.__dict__.copy()
        state.pop("_np", None)
        return state

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a


    # -- dtype shorthands (last: their names shadow builtins inside the class body)
    def float(self) -> Tensor:
        """self.to(strata.float32)."""
        return self.to(dt.float32)

    def double(self) -> Tensor:
        """self.to(strata.float64)."""
        return self.to(dt.float64)

    def half(self) -> Tensor:
        """self.to(strata.float16)."""
        return self.to(dt.float16)

    def bfloat16(self) -> Tensor:
        """self.to(strata.bfloat16)."""
        return self.to(dt.bfloat16)

    def long(self) -> Tensor:
        """self.to(strata.int64)."""
        return self.to(dt.int64)

    def int(self) -> Tensor:
        """self.to(strata.int32)."""
        return self.to(dt.int32)

    def bool(self) -> Tensor:
        """self.to(strata.bool)."""
        return self.to(dt.bool_)


# the nodes of ops whose output is a view of their input (detach_ refuses those, as PyTorch does)
_VIEW_NODES = frozenset({"ViewBackward0", "SliceBackward0", "SelectBackward0", "PermuteBackward0",
                         "TransposeBackward0", "ExpandBackward0", "AliasBackward0", "UnsqueezeBackward0",
                         "SqueezeBackward0", "SqueezeBackward1", "TBackward0", "AsStridedBackward0",
                         "UnbindBackward0", "SplitBackward0", "DiagonalBackward0", "UnfoldBackward0"})


def _infer_shape(shape: tuple[int, ...], numel: int) -> tuple[int, ...]:
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in shape if s != -1)
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    if math.prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


# (shape, strides, requested shape) -> (new shape, its strides or None): views and reshapes repeat the same few
# layouts every step; bounded like _LAYOUTS. Requests that raise are not kept.
_VIEWS: dict[tuple, tuple[Size, tuple[int, ...] | None]] = {}


def _view_layout(old: tuple[int, ...], old_st: tuple[int, ...], shape: tuple[int, ...]
                 ) -> tuple[Size, tuple[int, ...] | None]:
    """(the requested shape with -1 inferred, as a Size; the strides viewing (old, old_st) with it, or None)."""
    key = (old, old_st, shape)
    hit = _VIEWS.get(key)
    if hit is None:
        new = _infer_shape(shape, math.prod(old))
        hit = (Size(new), _view_strides(old, old_st, new))
        if len(_VIEWS) >= _LAYOUTS_MAX:
            _VIEWS.clear()
        _VIEWS[key] = hit
    return hit


def _view_strides(old: Sequence[int], old_st: Sequence[int], new: Sequence[int]) -> tuple[int, ...] | None:
    """Strides that show the storage of (old, old_st) with shape `new`, or None (ATen's computeStride)."""
    if math.prod(old) == 0:
        return contiguous_strides(new)
    dims = [(s, st) for s, st in zip(old, old_st, strict=True) if s != 1]
    # group old dims into runs that are contiguous among themselves
    chunks: list[tuple[int, int]] = []  # (size of run, stride of its innermost dim)
    for s, st in dims:
        if chunks and chunks[-1][1] == s * st:
            chunks[-1] = (chunks[-1][0] * s, st)
        else:
            chunks.append((s, st))
    out: list[int] = [0] * len(new)
    # walk new dims from the innermost, consuming runs from the innermost
    chunks = chunks[::-1]
    ci, used = 0, 1
    for i in range(len(new) - 1, -1, -1):
        s = new[i]
        if s == 1:
            out[i] = (out[i + 1] * new[i + 1]) if i + 1 < len(new) else 1
            continue
        if ci >= len(chunks):
            return None
        size, st = chunks[ci]
        if size % (used * s):
            return None
        out[i] = st * used
        used *= s
        if used == size:
            ci, used = ci + 1, 1
    return tuple(out) if ci == len(chunks) else None


def from_array(a: np.ndarray, dtype: dt.dtype, dev: device = CPU) -> Tensor:
    """A cpu tensor of `dtype` over `a`, a C-contiguous array of `dtype.np` that nothing else writes (a
    kernel's fresh result): no copy, and no work beyond the attributes (this is every cpu op's output)."""
    t = _new_tensor(Tensor)
    t._storage = _of_array(a, dev)
    t._shape, t._stride = _layout(a.shape)
    t._offset = 0
    t.dtype = dtype
    t._requires_grad = False
    t._grad = None
    t.grad_fn = None
    t._np = a
    return t


_new_tensor = object.__new__
_of_array = Storage.of_array


autograd.register_tensor_type(Tensor)
