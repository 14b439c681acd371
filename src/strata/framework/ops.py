"""Elementwise ops, indexing and in-place ops on tensors, with PyTorch's names, type promotion,
broadcasting and gradients, and the plumbing every op shares (allocation, casts, copies, recording the
autograd Node). Reductions are in reductions.py, matmul in linalg.py; the elementwise ops are
declared in op_table.py.

Each op picks its path by device: "cpu" tensors compute with NumPy (half and bfloat16 in float32, as
PyTorch's CPU kernels do), "cuda" tensors launch the framework's kernels (`kernels/`); nothing on
"cuda" is computed on the host. When grad mode is on and an
input requires grad, the op records an autograd Node whose closure computes the inputs' gradients
with these same ops.

Example:
    >>> import strata
    >>> a = strata.tensor([[1, 2], [3, 4]])
    >>> (a * 1.5).dtype, (a / 2).tolist(), (a > 2).dtype
    (strata.float32, [[0.5, 1.0], [1.5, 2.0]], strata.bool)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from strata import trace
from strata.cuda.memory import DeviceArray
from strata.framework import autograd, kernels, op_table, profiling
from strata.framework import dtypes as dt
from strata.framework.device import CPU, cuda_device, device
from strata.framework.storage import Storage
from strata.framework.tensor import _LAYOUTS, Size, Tensor, _layout

Scalar = int | float | bool


# ----------------------------------------------------------------------------------------- plumbing
def empty(shape: Sequence[int], dtype: dt.dtype, dev: device) -> Tensor:
    """A new row-major tensor with uninitialised data."""
    # (every op's output comes here: a shape seen before takes its shared layout without conversions)
    lay = _known_layout(shape) if shape.__class__ is Size or shape.__class__ is tuple else None
    if lay is None:
        shape = tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(shape)}: {list(shape)}")
        lay = _layout(shape)
    size, strides = lay
    return _rebuild(Storage(math.prod(size) * dtype.itemsize, dev), size, strides, 0, dtype, None)


_known_layout = _LAYOUTS.get
_rebuild = Tensor._rebuild


def from_host(a: np.ndarray, dtype: dt.dtype, dev: device) -> Tensor:
    """A tensor on `dev` holding host array `a` converted to `dtype`."""
    with np.errstate(all="ignore"):  # out-of-range casts wrap or saturate as in C, silently as in PyTorch
        a = np.asarray(a).astype(dtype.np, copy=False)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")  # (np.ascontiguousarray would make a 0-dim array 1-dim)
    t = empty(a.shape, dtype, dev)
    t._storage.copy_from_host(a)
    return t


# the autograd plumbing every op uses (autograd.py); re-exported under the names the op modules import
_needs_grad = autograd.needs_grad
record = autograd.record
_fit = autograd.fit


def record_view(base: Tensor, out: Tensor, name: str, backward: Callable[[Tensor], Sequence[Any]]) -> Tensor:
    """`record` for a view of `base`."""
    return autograd.record(out, [base], name, backward)


def _check_same_device(*xs: Any) -> device:
    devs = [x.device for x in xs if isinstance(x, Tensor) and not (x.dim() == 0 and x.device.type == "cpu")]
    if not devs:
        return CPU
    for d in devs[1:]:
        if d != devs[0]:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{devs[0]} and {d}!")
    return devs[0]


def broadcast_shapes(*shapes: Sequence[int]) -> Size:
    """The shape all `shapes` broadcast to (NumPy/PyTorch rules).

    Raises:
        RuntimeError: two sizes differ and neither is 1.
    """
    if len(shapes) == 2 and shapes[0] == shapes[1]:  # (the common case: no broadcast at all)
        s = shapes[0]
        return s if s.__class__ is Size else Size(s)
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        for i, v in enumerate(s):
            j = nd - len(s) + i
            if out[j] == 1:
                out[j] = v
            elif v != 1 and v != out[j]:
                raise RuntimeError(f"The size of tensor a ({out[j]}) must match the size of tensor b ({v}) at "
                                   f"non-singleton dimension {i}")
    return Size(out)


def _bstrides(t: Tensor, shape: Sequence[int]) -> list[int]:
    """t's element strides when broadcast to `shape` (0 on broadcast dims)."""
    lead = len(shape) - t.dim()
    st = [0] * lead
    for s, x in zip(t.shape, t.stride(), strict=True):
        st.append(0 if s == 1 else x)
    return st


def _as_tensor(x: Any, dtype: dt.dtype, dev: device) -> Tensor:
    """A Python scalar or 0-dim cpu tensor as a 0-dim tensor of `dtype` on `dev`; tensors cast."""
    if isinstance(x, Tensor):
        if x.device != dev:
            x = x.to(dev)
        return x if x.dtype is dtype else _cast(x, dtype)
    return full((), x, dtype, dev)


def full(shape: Sequence[int], value: Scalar, dtype: dt.dtype, dev: device) -> Tensor:
    """A new tensor filled with `value`."""
    t = empty(shape, dtype, dev)
    fill_(t, value)
    return t


def fill_(t: Tensor, value: Any) -> Tensor:
    """Set every element of t (a possibly strided view) to `value`, in place, without autograd."""
    if isinstance(value, Tensor):
        value = value.item()
    _kernel("fill", t.device)(t, value)
    return t


def copy_into(dst: Tensor, src: Tensor) -> Tensor:
    """dst[...] = src (broadcast, converted to dst's dtype, moved to dst's device), without autograd."""
    dev = dst._storage.device
    if src._storage.device is not dev and src.device != dev:
        src = to_copy(src.detach(), dev, src.dtype)
    shape = dst._shape
    if src._shape != shape:
        shape = broadcast_shapes(dst._shape, src._shape)
        if tuple(shape) != tuple(dst._shape):
            raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(shape)}")
    _kernel("copy", dev)(dst, src, shape)
    return dst


def _ptr(t: Tensor) -> int:
    return t._storage.ptr + t._offset * t.dtype.itemsize


def device_array(t: Tensor) -> Any:
    """A DeviceArray view of a contiguous "cuda" tensor, for library calls (strata.libs.dnn, rand)
    that take arrays; it keeps t's storage alive and never frees it."""
    if not t.is_contiguous():
        raise RuntimeError("device_array: the tensor must be contiguous (call .contiguous() first)")
    return DeviceArray.view(_ptr(t), t._shape, t.dtype.np, cuda_device(t._storage.device.index or 0),
                            owner=t._storage)


def _cast(t: Tensor, dtype: dt.dtype) -> Tensor:
    """A row-major copy of t converted to `dtype` (same device), without autograd."""
    out = empty(t.shape, dtype, t.device)
    return copy_into(out, t)


def to_copy(t: Tensor, dev: device, dtype: dt.dtype) -> Tensor:
    """t on `dev` as `dtype` (a new tensor); differentiable."""
    if dev == t.device:
        out = _cast(t, dtype)
    elif t.device.type == "cpu":
        out = from_host(t._host(), dtype, dev)
    else:  # device to host, or between GPUs through the host
        out = from_host(t._to_numpy(), dtype, dev)
    src_dev, src_dt = t.device, t.dtype
    return record(out, [t], "ToCopyBackward0", lambda g: (g.to(src_dev, src_dt),))


def clone(t: Tensor) -> Tensor:
    """A row-major copy of t; differentiable."""
    out = _cast(t, t.dtype)
    return record(out, [t], "CloneBackward0", lambda g: (g,))


def sum_to_size(g: Tensor, shape: Sequence[int]) -> Tensor:
    """Sum g over the dims that broadcasting added or expanded, back to `shape`."""
    shape = tuple(shape)
    lead = g.dim() - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


# ----------------------------------------------------------------------------------------- elementwise
# The elementwise families are declared in op_table.py (promotion, derivative, node, trace name) and
# their kernels registered per backend (backends/cpu.py, backends/cuda.py). The front functions below
# check the arguments, apply the promotion rule, call the kernel of the inputs' device and record the
# table's derivative.
_OPS = op_table.OPS
_KERNELS = op_table._KERNELS
_recording = trace.recording


_HALF_NP = (np.dtype(np.float16), dt.bfloat16.np)


def _opmath(a: np.ndarray) -> np.ndarray:
    """`a` in its compute type: half and bfloat16 as float32, as PyTorch's CPU kernels compute them."""
    # (the itemsize test first: it is cheap, and only int16 besides the two halves has 2 bytes)
    return a.astype(np.float32) if a.itemsize == 2 and a.dtype in _HALF_NP else a


def _kernel(op: str, dev: device) -> Callable[..., Tensor]:
    k = _KERNELS[dev.type].get(op)
    return k if k is not None else op_table.kernel(op, dev.type)


def unary(op: str, x: Tensor) -> Tensor:
    """out = op(x) elementwise, without autograd; float-only ops give integral inputs the default dtype."""
    d = _OPS[op]
    if x.dtype is dt.bool_ and op in ("neg", "abs", "relu", "sign"):
        if op == "neg":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                               "invert a mask, use the `~` or `logical_not()` operator instead.")
        raise RuntimeError(f"\"{op}\" not implemented for 'Bool'")
    if d.promotion == op_table.BOOL:
        out_dt = dt.bool_
    elif d.promotion == op_table.FLOAT and not x.dtype._float:
        out_dt = dt.get_default_dtype()
    else:
        out_dt = x.dtype
    return _kernel(op, x._storage.device)(op, x, out_dt)


def _operands(a: Any, b: Any) -> tuple[device, dt.dtype] | None:
    """(device, result dtype) of two operands in the common cases, without the general rules: two tensors
    of one dtype on one device, or a tensor and a Python int or float. None: use the general rules."""
    if isinstance(a, Tensor):
        t, other = a, b
    elif isinstance(b, Tensor):
        t, other = b, a
    else:
        return None
    d = t.dtype
    if isinstance(other, Tensor):
        if other.dtype is not d or other._storage.device is not t._storage.device:
            return None
        return t._storage.device, d
    kind = other.__class__
    if kind is float:  # a Python float: the tensor's floating dtype, else the default one
        return t._storage.device, d if d._float else dt.get_default_dtype()
    if kind is int:  # a Python int (not a bool): the tensor's dtype, bool becoming int64
        return t._storage.device, d if d is not dt.bool_ else dt.int64
    return None


def binary(op: str, a: Any, b: Any) -> Tensor:
    """out = a op b with type promotion and broadcasting, without autograd."""
    fast = _operands(a, b)
    if fast is not None:
        dev, res = fast
    else:
        dev = _check_same_device(a, b)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            raise TypeError(f"{op}: expected at least one tensor")
        res = dt.result_type(a, b)
    promotion = _OPS[op].promotion
    compute = res
    if promotion == op_table.PROMOTE_FLOAT and not res.is_floating_point:
        compute = res = dt.get_default_dtype()
    if op == "sub":
        _check_sub(a, b)
    out_dt = dt.bool_ if promotion == op_table.COMPARE else res
    if compute is dt.bool_ and op in ("add", "mul"):
        op = "maximum" if op == "add" else "minimum"  # logical or / and on bool
    return _kernel(op, dev)(op, a, b, compute, out_dt, dev)


def _check_sub(a: Any, b: Any) -> None:
    """PyTorch refuses `-` with a bool operand (a bool tensor or a Python bool), naming what to use instead."""
    bools = [x.dtype is dt.bool_ if isinstance(x, Tensor) else type(x) is bool for x in (a, b)]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying "
                           "to invert a mask, use the `~` or `logical_not()` operator instead.")


def where(condition: Tensor, input: Any, other: Any) -> Tensor:  # noqa: A002 - PyTorch's argument name
    """out = input where condition else other (condition bool), broadcast; differentiable."""
    if not isinstance(condition, Tensor) or condition.dtype is not dt.bool_:
        got = condition.dtype.name if isinstance(condition, Tensor) else type(condition).__name__
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_torch_name(got)}")
    dev = _check_same_device(condition, input, other)
    res = dt.result_type(input, other)
    ta, tb = _as_tensor(input, res, dev), _as_tensor(other, res, dev)
    tc = condition if condition.device == dev else condition.to(dev)
    shape = broadcast_shapes(tc.shape, ta.shape, tb.shape)
    out = _kernel("where", dev)(tc, ta, tb, res, shape)
    if not _needs_grad(input, other):
        return out
    deriv = _OPS["where"].derivative
    assert deriv is not None

    def bw(g: Tensor) -> tuple:
        _, ga, gb = deriv(g, tc, input, other, out)
        return None, _fit(ga, input), _fit(gb, other)
    return record(out, [condition, input, other], _OPS["where"].node, bw)


def _torch_name(name: str) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(name, name)


def zeros_like(t: Tensor) -> Tensor:
    """Zeros with t's shape, dtype and device (no autograd)."""
    return full(t.shape, 0, t.dtype, t.device)


def ones_like(t: Tensor) -> Tensor:
    """Ones with t's shape, dtype and device (no autograd)."""
    return full(t.shape, 1, t.dtype, t.device)


def unary_op(op: str, x: Tensor) -> Tensor:
    """Differentiable unary op (see `unary`): the table's derivative is recorded; traced as the table's
    aten name."""
    if _recording():
        return profiling.traced_call(_OPS[op].aten, _unary_op, op, x)
    out = unary(op, x)
    return _record_table(op, out, x) if x._requires_grad else out


def _unary_op(op: str, x: Tensor) -> Tensor:
    out = unary(op, x)
    return _record_table(op, out, x) if x._requires_grad else out


def _record_table(op: str, out: Tensor, x: Tensor) -> Tensor:
    d = _OPS[op]
    deriv = d.derivative
    if deriv is None or not out.dtype._float or not autograd.is_grad_enabled():
        return out
    node = autograd.Node(d.node, [x], lambda g: (_fit(deriv(g, x, saved.get()), x),))
    saved = autograd.SavedOutput(out, node)  # (not `out` itself: no cycle through out.grad_fn)
    out._requires_grad = True
    out.grad_fn = node
    return out


def binary_op(op: str, a: Any, b: Any) -> Tensor:
    """Differentiable binary op (see `binary`), recording the table's derivative."""
    if _recording():
        return profiling.traced_call(_OPS[op].aten, _binary_op, op, a, b)
    out = binary(op, a, b)  # (_binary_op, inlined: this is every `x + y`)
    if (isinstance(a, Tensor) and a._requires_grad) or (isinstance(b, Tensor) and b._requires_grad):
        return _record_table2(op, out, a, b)
    return out


def _binary_op(op: str, a: Any, b: Any) -> Tensor:
    out = binary(op, a, b)
    if (isinstance(a, Tensor) and a._requires_grad) or (isinstance(b, Tensor) and b._requires_grad):
        return _record_table2(op, out, a, b)
    return out


def _record_table2(op: str, out: Tensor, a: Any, b: Any) -> Tensor:
    d = _OPS[op]
    deriv = d.derivative
    if deriv is None or not out.dtype._float or not _needs_grad(a, b):
        return out
    name = d.node if d.node_scalar is None or isinstance(b, Tensor) else d.node_scalar

    def bw(g: Tensor) -> tuple:
        ga, gb = deriv(g, a, b, saved.get())
        return _fit(ga, a), _fit(gb, b)
    # (`record` without its needs_grad test, passed above)
    node = autograd.Node(name, [a if isinstance(a, Tensor) else None, b if isinstance(b, Tensor) else None], bw)
    saved = autograd.SavedOutput(out, node)  # (not `out` itself: no cycle through out.grad_fn)
    out._requires_grad = True
    out.grad_fn = node
    return out


def add(input: Any, other: Any, *, alpha: Scalar = 1) -> Tensor:  # noqa: A002
    """input + alpha * other, broadcast, with type promotion."""
    return binary_op("add", input, other if alpha == 1 else binary_op("mul", other, alpha))


def sub(input: Any, other: Any, *, alpha: Scalar = 1) -> Tensor:  # noqa: A002
    """input - alpha * other."""
    return binary_op("sub", input, other if alpha == 1 else binary_op("mul", other, alpha))


def mul(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input * other."""
    return binary_op("mul", input, other)


def div(input: Any, other: Any) -> Tensor:  # noqa: A002
    """input / other (true division: integers give the default float dtype)."""
    return binary_op("div", input, other)


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001,A002
    """input ** exponent."""
    return binary_op("pow", input, exponent)


def maximum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise max (NaN propagates).

    Raises:
        TypeError: `other` is not a tensor (as in PyTorch; use clamp for scalars).
    """
    _need_tensor("maximum", other)
    return binary_op("maximum", input, other)


def _need_tensor(op: str, other: Any) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")


def minimum(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise min (NaN propagates); `other` must be a tensor."""
    _need_tensor("minimum", other)
    return binary_op("minimum", input, other)


def log(input: Any) -> Tensor:  # noqa: A002
    """Natural log, elementwise."""
    return unary_op("log", input)


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A001,A002
    """min(max(input, min), max) elementwise; the gradient passes where min <= input <= max."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    with autograd.no_grad():
        out = input
        if min is not None:
            out = binary("maximum", out, min)
        if max is not None:
            out = binary("minimum", out, max)

    def bw(g: Tensor) -> tuple:
        keep = full(input.shape, True, dt.bool_, input.device)
        if min is not None:
            keep = binary("mul", keep, binary("ge", input, min))
        if max is not None:
            keep = binary("mul", keep, binary("le", input, max))
        return (_fit(where(keep, g, zeros_like(g)), input),)
    return record(out, [input], "ClampBackward1", bw)


# ----------------------------------------------------------------------------------------- indexing
def _normalize_index(t: Tensor, index: Any) -> tuple[list[int], list[int], int, list[int]]:
    """Basic indexing (ints, slices, None, Ellipsis) -> (shape, strides, offset, dims selected by ints)."""
    if not isinstance(index, tuple):
        index = (index,)
    for ix in index:
        if isinstance(ix, Tensor | list | np.ndarray):
            raise NotImplementedError("advanced indexing (tensors, lists, boolean masks) is not implemented yet")
    n_real = len([ix for ix in index if ix is not None and ix is not Ellipsis])
    if n_real > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    if Ellipsis in index:
        i = index.index(Ellipsis)
        index = index[:i] + (slice(None),) * (t.dim() - n_real) + index[i + 1:]
    # applied left to right on the remaining dims, as ATen does (None = unsqueeze at that point)
    shape, strides, offset, p = list(t.shape), list(t.stride()), t.storage_offset(), 0
    for d_in, ix in enumerate(index):
        if ix is None:
            strides.insert(p, shape[p] * strides[p] if p < len(shape) else 1)
            shape.insert(p, 1)
            p += 1
            continue
        size, st = shape[p], strides[p]
        dim = len([x for x in index[:d_in] if x is not None])
        if isinstance(ix, bool):
            raise NotImplementedError("indexing with a bool is not implemented yet")
        if isinstance(ix, int | np.integer):
            i = int(ix)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            offset += (i % size) * st
            del shape[p], strides[p]
        elif isinstance(ix, slice):
            if ix.step is not None and ix.step <= 0:
                raise ValueError("step must be greater than zero")
            start, stop, step = ix.indices(size)
            length = builtins.max(0, (stop - start + step - 1) // step)
            shape[p], strides[p] = length, st * step
            offset += start * st if length else 0
            p += 1
        else:
            raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(ix).__name__})")
    return shape, strides, offset, []


def getitem(t: Tensor, index: Any) -> Tensor:
    """t[index] for basic indexing: a view; differentiable."""
    shape, strides, offset, _ = _normalize_index(t, index)
    out = t._view(shape, strides, offset)
    orig = t.shape

    def bw(g: Tensor) -> tuple:
        z = full(orig, 0, g.dtype, g.device)
        copy_into(getitem(z, index), g)
        # under create_graph the scatter is itself differentiable: its gradient is the slice again
        return (record(z, [g], "SliceBackwardBackward0", lambda gg: (getitem(gg, index),)),)
    return record_view(t, out, "SliceBackward0", bw)


def setitem(t: Tensor, index: Any, value: Any) -> None:
    """t[index] = value (a tensor broadcast to the selection, or a scalar)."""
    if _needs_grad(t, value):
        raise NotImplementedError("assignment into tensors that require grad is not implemented yet (CopySlices)")
    view = t._view(*_normalize_index(t, index)[:3])
    if isinstance(value, Tensor):
        copy_into(view, value)
    else:
        fill_(view, value)


# ----------------------------------------------------------------------------------------- in place
def inplace(self: Tensor, result: Callable[[Tensor], Tensor]) -> Tensor:
    """Run an out-of-place op and write its result into self (PyTorch's `x.op_()`), keeping the graph."""
    src = self
    if self._requires_grad and autograd.is_grad_enabled():
        if self.is_leaf:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        src = clone(self)  # the op may save its input; self's values are about to change
    res = result(src)
    if res.dtype is not self.dtype and dt.promote_types(res.dtype, self.dtype) is not self.dtype:
        raise RuntimeError(f"result type {_torch_name(res.dtype.name)} can't be cast to the desired output type "
                           f"{_torch_name(self.dtype.name)}")
    if res._shape != self._shape and tuple(broadcast_shapes(res.shape, self.shape)) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(res.shape, self.shape))}")
    copy_into(self, res)
    if res._requires_grad:
        self._requires_grad = True
        self.grad_fn = res.grad_fn
    return self


def binary_into(op: str, self: Tensor, other: Any) -> Tensor | None:
    """`self.op_(other)` computed straight into self's memory (no result tensor, no copy), in the common
    case: a cpu tensor and a tensor of its shape and dtype or a Python number that keeps its dtype, nothing
    requiring grad, no trace recording. None otherwise: `inplace` then runs the general path (and raises
    its errors). On "cuda" (`_binary_into_cuda`) the other operand may also broadcast to self."""
    if self._requires_grad or _recording():
        return None
    if self._storage.device.type != "cpu":
        return _binary_into_cuda(op, self, other) if self._storage.device.type == "cuda" else None
    fast = _operands(self, other)
    if fast is None or fast[1] is not self.dtype or self.dtype is dt.bool_:
        return None
    promotion = _OPS[op].promotion
    if not (promotion == op_table.PROMOTE or promotion == op_table.PROMOTE_FLOAT and self.dtype._float):
        return None
    if isinstance(other, Tensor) and (other._requires_grad or other._shape != self._shape):
        return None
    return _KERNELS["cpu"][op](op, self, other, self.dtype, self.dtype, fast[0], out=self)


def _binary_into_cuda(op: str, self: Tensor, other: Any) -> Tensor | None:
    """`binary_into` on "cuda": the kernel writes into self, each element read and written by one thread,
    which is safe when self is row-major (no element twice) and `other` is a number, a tensor in other
    memory, or self itself (a tensor overlapping self any other way reads what the kernel already wrote:
    the general path then computes into a new tensor first). `other` may broadcast to self's shape
    (gradient clipping multiplies every gradient by one 0-dim factor). The bits are those of the general
    path, whose result the copy kernel only moves."""
    if op not in kernels.BINARY or op in kernels.COMPARISONS or self.dtype is dt.bool_:
        return None
    fast = _operands(self, other)
    if fast is None or fast[1] is not self.dtype:
        return None
    promotion = _OPS[op].promotion
    if not (promotion == op_table.PROMOTE or promotion == op_table.PROMOTE_FLOAT and self.dtype._float):
        return None
    if not self.is_contiguous():
        return None
    if isinstance(other, Tensor):
        if other._requires_grad:
            return None
        if other._shape != self._shape and (len(other._shape) > len(self._shape) or any(
                o != 1 and o != s for o, s in zip(reversed(other._shape), reversed(self._shape)))):
            return None  # (a shape that does not broadcast to self's: the general path raises)
        if other._storage is self._storage and not (
                other._offset == self._offset and other._stride == self._stride and other._shape == self._shape):
            return None
    return _KERNELS["cuda"][op](op, self, other, self.dtype, self.dtype, fast[0], out=self)


# ----------------------------------------------------------------------------------------- more math
# the ATen kernel names PyTorch's errors quote for dtypes an op does not take
_KERNEL_NAMES = {"floor": "floor_vml_cpu", "ceil": "ceil_vml_cpu", "round": "round_vml_cpu", "trunc": "trunc_vml_cpu",
                 "frac": "frac_cpu", "silu": "silu_cpu", "gelu": "GeluKernelImpl", "gelu_tanh": "GeluKernelImpl",
                 "fmod": "fmod_cpu", "remainder": "remainder_cpu", "floor_divide": "div_floor_cpu",
                 "hypot": "hypot_cpu", "bitwise_and": "bitwise_and_cpu", "bitwise_or": "bitwise_or_cpu",
                 "bitwise_xor": "bitwise_xor_cpu", "bitwise_not": "bitwise_not_cpu"}


def _not_implemented(op: str, d: dt.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{_KERNEL_NAMES[op]}\" not implemented for '{_torch_name(d.name)}'")


def math_unary(op: str, x: Tensor) -> Tensor:
    """out = op(x) for the table's float math ops, without autograd. Transcendental ops give integral
    and bool inputs the default float dtype; rounding ops return integral inputs unchanged (a copy)."""
    rounding = _OPS[op].promotion == op_table.ROUNDING
    if not x.dtype.is_floating_point:
        if x.dtype is dt.bool_ and rounding or op in ("frac", "silu", "gelu", "gelu_tanh"):
            raise _not_implemented(op, x.dtype)
        if rounding:
            return _cast(x, x.dtype)
    out_dt = x.dtype if x.dtype.is_floating_point else dt.get_default_dtype()
    return _kernel(op, x.device)(op, x, out_dt)


def math_unary_op(op: str, x: Tensor) -> Tensor:
    """Differentiable `math_unary`, recording the table's derivative."""
    if _recording():
        return profiling.traced_call(_OPS[op].aten, _math_unary_op, op, x)
    out = math_unary(op, x)
    return _record_table(op, out, x) if x._requires_grad else out


def _math_unary_op(op: str, x: Tensor) -> Tensor:
    out = math_unary(op, x)
    return _record_table(op, out, x) if x._requires_grad else out


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """GELU: x * Phi(x) (approximate='none', with erf) or 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return math_unary_op("gelu" if approximate == "none" else "gelu_tanh", input)


def silu(input: Tensor) -> Tensor:  # noqa: A002
    """SiLU (swish): x * sigmoid(x)."""
    return math_unary_op("silu", input)


def round_half_even(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A002
    """Round half to even; with `decimals`, round(x * 10^decimals) / 10^decimals (negative: / then *)."""
    if decimals == 0:
        return math_unary_op("round", input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("round", input.dtype)
    p = 10.0 ** builtins.abs(decimals)
    with autograd.no_grad():
        out = binary("div" if decimals > 0 else "mul", math_unary("round", binary("mul" if decimals > 0 else "div",
                                                                                input, p)), p)
    return record(out, [input], "RoundBackward1", lambda g: (_fit(zeros_like(g), input),))


def square(input: Tensor) -> Tensor:  # noqa: A002
    """input * input (input ** 2: integral stays integral, bool becomes int64)."""
    return pow(input, 2)


def _predicate(op: str, x: Tensor) -> Tensor:
    """The table's predicates (isnan, isinf, isfinite): a bool tensor of x's shape."""
    if not x.dtype.is_floating_point:  # integers are never NaN or infinite: only the shape matters
        return full(x.shape, op == "isfinite", dt.bool_, x.device)
    return _kernel(op, x.device)(op, x)


def predicate(op: str, x: Tensor) -> Tensor:
    """`_predicate`, traced as the table's aten name."""
    if trace.recording():
        return profiling.traced_call(_OPS[op].aten, _predicate, op, x)
    return _predicate(op, x)


def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,  # noqa: A002
               neginf: float | None = None) -> Tensor:
    """input with NaN -> nan, +inf -> posinf, -inf -> neginf (default: the dtype's largest / lowest value)."""
    x = input
    if not x.dtype.is_floating_point:
        return clone(x)
    info = np.finfo(x.dtype.np)
    pinf = float(info.max) if posinf is None else float(posinf)
    ninf = float(info.min) if neginf is None else float(neginf)
    out = _kernel("nan_to_num", x.device)(x, nan, pinf, ninf)
    return _record_table("nan_to_num", out, x) if x.requires_grad else out


# logical ops: any dtypes, bool result (nonzero is true)
def _logical(op: str, a: Tensor, b: Tensor) -> Tensor:
    _need_tensor(f"logical_{op}", b)
    dev = _check_same_device(a, b)
    ta, tb = _as_tensor(a, dt.bool_, dev), _as_tensor(b, dt.bool_, dev)
    kernel = {"and": "minimum", "or": "maximum", "xor": "ne"}[op]
    return binary(kernel, ta, tb)


def logical_and(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise `input and other` (nonzero is true), bool result."""
    return _logical("and", input, other)


def logical_or(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise `input or other`, bool result."""
    return _logical("or", input, other)


def logical_xor(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Elementwise `bool(input) != bool(other)`, bool result."""
    return _logical("xor", input, other)


def math_binary(op: str, a: Any, b: Any) -> Tensor:
    """out = op(a, b) for the table's binary math ops (divmod, float and bitwise), with type promotion and
    broadcasting, without autograd."""
    dev = _check_same_device(a, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected at least one tensor")
    promotion = _OPS[op].promotion
    res = dt.result_type(a, b)
    if promotion == op_table.INTEGRAL:
        if res.is_floating_point:
            raise _not_implemented(op, res)
    elif res is dt.bool_ and op in kernels.DIVMOD or op == "hypot" and not res.is_floating_point:
        raise _not_implemented(op, res)
    elif promotion == op_table.PROMOTE_FLOAT and not res.is_floating_point:
        res = dt.get_default_dtype()
    if op in kernels.DIVMOD and not res.is_floating_point and not isinstance(b, Tensor) and b == 0:
        raise RuntimeError("ZeroDivisionError")
    return _kernel(op, dev)(op, a, b, res, res, dev)


def math_binary_op(op: str, a: Any, b: Any) -> Tensor:
    """Differentiable `math_binary`, recording the table's derivative."""
    if op in ("atan2", "hypot") and not isinstance(b, Tensor):
        raise TypeError(f"{op}(): argument 'other' (position 2) must be Tensor, not {type(b).__name__}")
    if trace.recording():
        return profiling.traced_call(_OPS[op].aten, _math_binary_op, op, a, b)
    return _math_binary_op(op, a, b)


def _math_binary_op(op: str, a: Any, b: Any) -> Tensor:
    return _record_table2(op, math_binary(op, a, b), a, b)


def atan2(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The angle of the point (other, input): atan(input / other) in the right quadrant."""
    return math_binary_op("atan2", input, other)


def hypot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """sqrt(input^2 + other^2) without overflow."""
    return math_binary_op("hypot", input, other)


def bitwise_not(input: Tensor) -> Tensor:  # noqa: A002
    """~input on integral tensors (logical not on bool)."""
    if input.dtype.is_floating_point:
        raise _not_implemented("bitwise_not", input.dtype)
    return _kernel("bitwise_not", input.device)(input)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:  # noqa: A002
    """input + weight * (end - input) (weight a scalar or a tensor), with lerp's gradients."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"lerp_kernel_{'tensor' if isinstance(weight, Tensor) else 'scalar'}\" not "
                                  f"implemented for '{_torch_name(input.dtype.name)}'")
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype and (name == "end" or t.dim() > 0):
            raise RuntimeError(f"expected dtype {_ctype_name(input.dtype)} for `{name}` but got dtype "
                               f"{_ctype_name(t.dtype)}")
    with autograd.no_grad():
        w = weight.to(input.dtype) if isinstance(weight, Tensor) else weight
        diff = binary("sub", end, input)
        out = binary("add", input, binary("mul", w, diff))

    def bw(g: Tensor) -> tuple:
        gi = g * (1 - w) if input.requires_grad else None
        ge = g * w if isinstance(end, Tensor) and end.requires_grad else None
        gw = g * (end - input) if isinstance(weight, Tensor) and weight.requires_grad else None
        return _fit(gi, input), _fit(ge, end), _fit(gw, weight)
    return record(out, [input, end, weight], "LerpBackward1" if isinstance(weight, Tensor) else "LerpBackward0", bw)


def _ctype_name(d: dt.dtype) -> str:
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(
        d.name, d.name)


def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """Tensor.sum_to_size: self summed over broadcast dims down to `size`."""
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)
    return sum_to_size(self, shape)


# Tensor's methods, in-place forms and strata.<name> functions for the table's ops (op_table.bind)
op_table.bind(Tensor, {"unary": unary_op, "math_unary": math_unary_op, "binary": binary_op,
                       "math_binary": math_binary_op, "predicate": predicate},
              {"add": add, "sub": sub, "mul": mul, "div": div, "pow": pow, "maximum": maximum, "minimum": minimum,
               "atan2": atan2, "hypot": hypot, "where": where, "nan_to_num": nan_to_num, "bitwise_not": bitwise_not},
              inplace, families=("unary", "math_unary", "binary", "math_binary", "predicate", "special"),
              into={"binary": binary_into})
Tensor.sum_to_size = _sum_to_size  # type: ignore[attr-defined]
# (kept as module functions: other modules call ops.isfinite(...) by name)
isnan, isinf, isfinite = (op_table.FUNCTIONS[n] for n in ("isnan", "isinf", "isfinite"))
