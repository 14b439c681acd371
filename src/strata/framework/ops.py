"""Elementwise ops, indexing and in-place ops on tensors, with PyTorch's names, type promotion,
broadcasting and gradients, and the plumbing every op shares (allocation, casts, copies, recording the
autograd Node). Reductions are in reductions.py, matmul in linalg.py.

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
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from strata.cuda import Device
from strata.cuda.memory import DeviceArray
from strata.framework import autograd, kernels
from strata.framework import dtypes as dt
from strata.framework.device import CPU, device, on
from strata.framework.storage import Storage
from strata.framework.tensor import Size, Tensor, contiguous_strides

Scalar = int | float | bool


# ----------------------------------------------------------------------------------------- plumbing
def empty(shape: Sequence[int], dtype: dt.dtype, dev: device) -> Tensor:
    """A new row-major tensor with uninitialised data."""
    shape = tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {builtins.min(shape)}: {list(shape)}")
    n = math.prod(shape)
    return Tensor(Storage(n * dtype.itemsize, dev), shape, contiguous_strides(shape), 0, dtype)


def from_host(a: np.ndarray, dtype: dt.dtype, dev: device) -> Tensor:
    """A tensor on `dev` holding host array `a` converted to `dtype`."""
    with np.errstate(all="ignore"):  # out-of-range casts wrap or saturate as in C, silently as in PyTorch
        a = np.asarray(a).astype(dtype.np, copy=False)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")  # (np.ascontiguousarray would make a 0-dim array 1-dim)
    t = empty(a.shape, dtype, dev)
    t._storage.copy_from_host(a)
    return t


def _needs_grad(*ts: Any) -> bool:
    return autograd.is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in ts)


def record(out: Tensor, inputs: Sequence[Any], name: str, backward: Callable[[Tensor], Sequence[Any]]) -> Tensor:
    """Attach a Node to `out` when grad mode is on and a tensor input requires grad."""
    if _needs_grad(*inputs):
        tensors = [t if isinstance(t, Tensor) else None for t in inputs]
        out._requires_grad = True
        out.grad_fn = autograd.Node(name, tensors, backward)
    return out


def record_view(base: Tensor, out: Tensor, name: str, backward: Callable[[Tensor], Sequence[Any]]) -> Tensor:
    """`record` for a view of `base`."""
    return record(out, [base], name, backward)


def _fit(g: Tensor | None, like: Any) -> Tensor | None:
    """A gradient reduced to the shape and dtype of the input it belongs to (None for non-tensors)."""
    if g is None or not isinstance(like, Tensor) or not like.requires_grad:
        return None
    if g.shape != like.shape:
        g = sum_to_size(g, like.shape)
    return g.to(like.dtype) if g.dtype is not like.dtype else g


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
    if t.device.type == "cpu":
        with np.errstate(all="ignore"):
            t._host()[...] = np.asarray(value).astype(t.dtype.np)
    else:
        with on(t.device):
            kernels.fill(t.dtype.name, t.shape, t._storage.ptr + t._offset * t.dtype.itemsize, t.stride(), value)
    return t


def copy_into(dst: Tensor, src: Tensor) -> Tensor:
    """dst[...] = src (broadcast, converted to dst's dtype, moved to dst's device), without autograd."""
    if src.device != dst.device:
        src = to_copy(src.detach(), dst.device, src.dtype)
    shape = broadcast_shapes(dst.shape, src.shape)
    if tuple(shape) != tuple(dst.shape):
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast shape {list(shape)}")
    if dst.device.type == "cpu":
        with np.errstate(all="ignore"):
            dst._host()[...] = src._host().astype(dst.dtype.np)
    else:
        with on(dst.device):
            kernels.copy(src.dtype.name, dst.dtype.name, shape, _ptr(dst), dst.stride(), _ptr(src),
                         _bstrides(src, shape))
    return dst


def _ptr(t: Tensor) -> int:
    return t._storage.ptr + t._offset * t.dtype.itemsize


def device_array(t: Tensor) -> Any:
    """A DeviceArray view of a contiguous "cuda" tensor, for library calls (strata.libs.dnn, rand)
    that take arrays; it keeps t's storage alive and never frees it."""
    if not t.is_contiguous():
        raise RuntimeError("device_array: the tensor must be contiguous (call .contiguous() first)")
    return DeviceArray.view(_ptr(t), tuple(t.shape), t.dtype.np, Device(t.device.index or 0), owner=t._storage)


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
        g = reductions.sum(g, dims, keepdim=True)
    if lead:
        g = g.reshape(shape)
    return g


# ----------------------------------------------------------------------------------------- elementwise
_NP_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "sign": np.sign, "reciprocal": lambda x: 1 / x,
    "logical_not": np.logical_not,
}
_NP_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}


def _opmath(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype in (np.float16, dt.bfloat16.np) else a


def unary(op: str, x: Tensor) -> Tensor:
    """out = op(x) elementwise, without autograd; float-only ops give integral inputs the default dtype."""
    if op == "neg" and x.dtype is dt.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    out_dt = x.dtype
    if op in kernels.UNARY_FLOAT_ONLY and not x.dtype.is_floating_point:
        out_dt = dt.get_default_dtype()
    if op == "logical_not":
        out_dt = dt.bool_
    if op in ("abs", "relu", "sign") and x.dtype is dt.bool_:
        raise RuntimeError(f"\"{op}\" not implemented for 'Bool'")
    if x.device.type == "cpu":
        with np.errstate(all="ignore"):
            r = _NP_UNARY[op](_opmath(x._host().astype(out_dt.np) if op != "logical_not" else x._host()))
        return from_host(np.asarray(r), out_dt, CPU)
    src = x if (x.dtype is out_dt or op == "logical_not") else _cast(x, out_dt)
    if op == "logical_not" and src.dtype is not dt.bool_:
        src = _cast(src, dt.bool_)
    out = empty(x.shape, out_dt, x.device)
    with on(x.device):
        kernels.unary(op, src.dtype.name, x.shape, _ptr(out), out.stride(), _ptr(src), src.stride())
    return out


def binary(op: str, a: Any, b: Any) -> Tensor:
    """out = a op b with type promotion and broadcasting, without autograd."""
    dev = _check_same_device(a, b)
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected at least one tensor")
    res = dt.result_type(a, b)
    compute = res
    if op == "div" and not res.is_floating_point:
        compute = res = dt.get_default_dtype()
    if op == "sub" and res is dt.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    out_dt = dt.bool_ if op in kernels.COMPARISONS else res
    if compute is dt.bool_ and op in ("add", "mul"):
        op = {"add": "maximum", "mul": "minimum"}[op]  # logical or / and on bool
    ta, tb = _as_tensor(a, compute, dev), _as_tensor(b, compute, dev)
    shape = broadcast_shapes(ta.shape, tb.shape)
    if dev.type == "cpu":
        with np.errstate(all="ignore"):
            r = _NP_BINARY[op](_opmath(ta._host()), _opmath(tb._host()))
        return from_host(np.broadcast_to(np.asarray(r), shape), out_dt, CPU)
    out = empty(shape, out_dt, dev)
    with on(dev):
        kernels.binary(op, compute.name, out_dt.name, shape, _ptr(out), out.stride(), _ptr(ta),
                       _bstrides(ta, shape), _ptr(tb), _bstrides(tb, shape))
    return out


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
    if dev.type == "cpu":
        out = from_host(np.where(tc._host(), ta._host(), tb._host()), res, CPU)
    else:
        out = empty(shape, res, dev)
        with on(dev):
            kernels.where(res.name, shape, _ptr(out), out.stride(), _ptr(tc), _bstrides(tc, shape), _ptr(ta),
                          _bstrides(ta, shape), _ptr(tb), _bstrides(tb, shape))

    def bw(g: Tensor) -> tuple:
        z = zeros_like(g)
        return None, _fit(where(tc, g, z), input), _fit(where(tc, z, g), other)
    return record(out, [condition, input, other], "WhereBackward0", bw)


def _torch_name(name: str) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}.get(name, name)


def zeros_like(t: Tensor) -> Tensor:
    """Zeros with t's shape, dtype and device (no autograd)."""
    return full(t.shape, 0, t.dtype, t.device)


def ones_like(t: Tensor) -> Tensor:
    """Ones with t's shape, dtype and device (no autograd)."""
    return full(t.shape, 1, t.dtype, t.device)


# differentiable elementwise ops: the forward is `unary`/`binary`, the closures are the derivatives
def _unary_grad(op: str, x: Tensor, out: Tensor) -> Callable[[Tensor], tuple]:
    def bw(g: Tensor) -> tuple:
        if op == "neg":
            r = -g
        elif op == "abs":
            r = g * x.sign()
        elif op == "exp":
            r = g * out
        elif op == "log":
            r = g / x
        elif op == "sqrt":
            r = g / (out * 2)
        elif op == "rsqrt":
            r = g * out * out * out * -0.5
        elif op == "relu":
            r = where(out > 0, g, zeros_like(g))
        elif op == "sigmoid":
            r = g * out * (1 - out)
        elif op == "tanh":
            r = g * (1 - out * out)
        elif op == "reciprocal":
            r = -g * out * out
        else:  # sign
            r = zeros_like(g)
        return (_fit(r, x),)
    return bw


def unary_op(op: str, x: Tensor) -> Tensor:
    """Differentiable unary op (see `unary`)."""
    out = unary(op, x)
    if op in ("logical_not",) or not out.dtype.is_floating_point:
        return out
    return record(out, [x], f"{op.capitalize()}Backward0", _unary_grad(op, x, out))


def _binary_grad(op: str, a: Any, b: Any, out: Tensor) -> Callable[[Tensor], tuple]:
    def bw(g: Tensor) -> tuple:
        ga: Any = None
        gb: Any = None
        if op == "add":
            ga, gb = g, g
        elif op == "sub":
            ga, gb = g, -g
        elif op == "mul":
            ga, gb = g * b, g * a
        elif op == "div":
            ga, gb = g / b, -g * a / (b * b)
        elif op == "pow":
            if isinstance(a, Tensor) and a.requires_grad:
                ga = g * b * a ** (b - 1)
                if isinstance(b, Tensor):
                    ga = where(b == 0, zeros_like(ga), ga)
            if isinstance(b, Tensor) and b.requires_grad:
                if isinstance(a, Tensor):
                    gb = g * out * log(a)
                    gb = where(binary("mul", a == 0, b >= 0), zeros_like(gb), gb)  # 0 ** b: d/db is 0 there
                else:
                    gb = g * out * (math.log(a) if a != 0 else 0.0)
        elif op in ("maximum", "minimum"):
            pick = (a > b) if op == "maximum" else (a < b)
            tie = a == b
            half = g * 0.5
            z = zeros_like(g)
            ga = where(pick, g, where(tie, half, z))
            gb = where(pick, z, where(tie, half, g))
        return _fit(ga, a), _fit(gb, b)
    return bw


def binary_op(op: str, a: Any, b: Any) -> Tensor:
    """Differentiable binary op (see `binary`)."""
    out = binary(op, a, b)
    if op in kernels.COMPARISONS or not out.dtype.is_floating_point:
        return out
    return record(out, [a, b], f"{op.capitalize()}Backward0", _binary_grad(op, a, b, out))


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
        return (z,)
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
    if autograd.is_grad_enabled() and self.requires_grad and self.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    src = self
    if autograd.is_grad_enabled() and self.requires_grad:
        src = clone(self)  # the op may save its input; self's values are about to change
    res = result(src)
    if res.dtype is not self.dtype and dt.promote_types(res.dtype, self.dtype) is not self.dtype:
        raise RuntimeError(f"result type {_torch_name(res.dtype.name)} can't be cast to the desired output type "
                           f"{_torch_name(self.dtype.name)}")
    if tuple(broadcast_shapes(res.shape, self.shape)) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(broadcast_shapes(res.shape, self.shape))}")
    copy_into(self, res)
    if res.requires_grad:
        self._requires_grad = True
        self.grad_fn = res.grad_fn
    return self


# reductions and linalg build on this module; Tensor's methods reach all three through tensor_ops
from strata.framework import linalg, reductions, tensor_ops  # noqa: E402

tensor_ops.ops, tensor_ops.reductions, tensor_ops.linalg = sys.modules[__name__], reductions, linalg
