"""The "cuda" backend: the op table's elementwise ops as launches of the framework's CUDA C++ kernels
(`kernels/`) on the tensors' virtual GPU. Nothing is computed on the host.

Kernel signatures are those of the cpu backend (see backends/cpu.py).
"""

from __future__ import annotations

from typing import Any

from strata.framework import dtypes as dt
from strata.framework import kernels, op_table
from strata.framework.device import device, on
from strata.framework.ops import _as_tensor, _bstrides, _cast, _ptr, broadcast_shapes, empty
from strata.framework.tensor import Tensor


@op_table.register("cuda", *kernels.UNARY)
def unary(op: str, x: Tensor, out_dt: dt.dtype) -> Tensor:
    """out = op(x) in out_dt, by the `unary` kernel set (logical_not reads its input as bool)."""
    src = x if x.dtype is out_dt else _cast(x, out_dt if op != "logical_not" else dt.bool_)
    out = empty(x.shape, out_dt, x.device)
    with on(x.device):
        kernels.unary(op, src.dtype.name, x.shape, _ptr(out), out.stride(), _ptr(src), src.stride())
    return out


@op_table.register("cuda", *kernels.FLOAT_UNARY)
def math_unary(op: str, x: Tensor, out_dt: dt.dtype) -> Tensor:
    """out = op(x) in out_dt, by the float math kernel sets (trig, special, rounding)."""
    src = x if x.dtype is out_dt else _cast(x, out_dt)
    out = empty(x.shape, out_dt, x.device)
    with on(x.device):
        kernels.math_unary(op, out_dt.name, x.shape, _ptr(out), out.stride(), _ptr(src), src.stride())
    return out


@op_table.register("cuda", *kernels.BINARY)
def binary(op: str, a: Any, b: Any, compute: dt.dtype, out_dt: dt.dtype, dev: device) -> Tensor:
    """out = a op b over broadcast strides, by the `binary` / `compare` kernel sets."""
    ta, tb = _as_tensor(a, compute, dev), _as_tensor(b, compute, dev)
    shape = broadcast_shapes(ta.shape, tb.shape)
    out = empty(shape, out_dt, dev)
    with on(dev):
        kernels.binary(op, compute.name, out_dt.name, shape, _ptr(out), out.stride(), _ptr(ta),
                       _bstrides(ta, shape), _ptr(tb), _bstrides(tb, shape))
    return out


@op_table.register("cuda", *kernels.DIVMOD, *kernels.FLOAT_BINARY, *kernels.BITWISE)
def math_binary(op: str, a: Any, b: Any, compute: dt.dtype, out_dt: dt.dtype, dev: device) -> Tensor:
    """out = op(a, b) over broadcast strides, by the divmod / float_binary / bitwise kernel sets."""
    ta, tb = _as_tensor(a, compute, dev), _as_tensor(b, compute, dev)
    shape = broadcast_shapes(ta.shape, tb.shape)
    out = empty(shape, out_dt, dev)
    with on(dev):
        kernels.math_binary(op, compute.name, shape, _ptr(out), out.stride(), _ptr(ta), _bstrides(ta, shape),
                            _ptr(tb), _bstrides(tb, shape))
    return out
