"""The "cpu" backend's fast paths for the optimizer steps (the op table's `sgd_step`, `adam_step`): the
update in place on the host arrays with NumPy, op by op in the parameter's dtype as PyTorch's CPU kernels
round, for float32 and float64 parameters; other dtypes take the composite (optim/sgd.py, optim/adam.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.framework import dtypes as dt
from strata.framework import op_table
from strata.framework.tensor import Tensor

_HOST_DTYPES = (dt.float32, dt.float64)


def _takes(*ts: Tensor | None) -> bool:
    return all(t is None or (t.dtype in _HOST_DTYPES and t.dtype is ts[0].dtype and t.is_contiguous())  # type: ignore[union-attr]
               for t in ts)


@op_table.register("cpu", "sgd_step")
def sgd_step(p: Tensor, grad: Tensor, buf: Tensor | None, first: bool, lr: float, wd: float, momentum: float,
             dampening: float, nesterov: bool, maximize: bool) -> bool:
    """SGD on float32/float64 host arrays in place (False for anything else)."""
    if not _takes(p, grad, buf):
        return False
    x, d, b = p._host(), grad._host(), buf._host() if buf is not None else None
    s = x.dtype.type
    if maximize:
        d = -d
    if wd != 0:
        d = d + s(wd) * x
    if momentum != 0:
        assert b is not None
        if first:
            b[...] = d
        else:
            b *= s(momentum)
            b += s(1 - dampening) * d if dampening else d  # (1 * d is d exactly: no temporary)
        d = d + s(momentum) * b if nesterov else b
    x += s(-lr) * d
    return True


@op_table.register("cpu", "adam_step")
def adam_step(p: Tensor, grad: Tensor, m: Tensor, v: Tensor, vmax: Tensor | None, lr: float, beta1: float,
              beta2: float, eps: float, wd: float, step: float, maximize: bool, decoupled: bool) -> bool:
    """Adam/AdamW on float32/float64 host arrays in place, in PyTorch's order (False for anything else)."""
    if not _takes(p, grad, m, v, vmax):
        return False
    x, d = p._host(), grad._host()
    acc: Any = x.dtype.type
    if maximize:
        d = -d
    if wd != 0:
        if decoupled:
            x *= acc(1 - lr * wd)
        else:
            d = d + acc(wd) * x
    mh, vh = m._host(), v._host()
    w = acc(1 - beta1)
    mh[...] = mh + w * (d - mh) if w < 0.5 else d - (d - mh) * acc(1 - w)  # lerp, as PyTorch evaluates it
    vh *= acc(beta2)
    vh += acc(1 - beta2) * d * d
    s = vh
    if vmax is not None:
        mx = vmax._host()
        np.maximum(mx, vh, out=mx)
        s = mx
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    denom = np.sqrt(s) / acc(bc2 ** 0.5) + acc(eps)
    x += acc(-(lr / bc1)) * (mh / denom)
    return True
