"""The "cuda" backend's fast paths for the optimizer steps (the op table's `sgd_step`, `adam_step`): one fused
kernel per parameter (kernels/optim.py), as PyTorch's fused=True optimizers run, for every floating dtype
those kernels are built for; a non-contiguous tensor goes through a contiguous copy written back after.
"""

from __future__ import annotations

from strata.framework import dtypes as dt
from strata.framework import op_table, ops
from strata.framework.kernels import C_TYPES
from strata.framework.kernels import optim as kernels
from strata.framework.tensor import Tensor


def _contiguous(t: Tensor, dtype: dt.dtype | None = None) -> Tensor:
    """t itself when it is contiguous (and of `dtype`), else a row-major copy (written back by the caller)."""
    if t.is_contiguous() and (dtype is None or t.dtype is dtype):
        return t
    return ops._cast(t, dtype or t.dtype)


def _write_back(dsts: tuple[Tensor | None, ...], srcs: tuple[Tensor | None, ...]) -> None:
    for dst, src in zip(dsts, srcs, strict=True):
        if dst is not None and src is not None and src is not dst:
            ops.copy_into(dst, src)


@op_table.register("cuda", "sgd_step")
def sgd_step(p: Tensor, grad: Tensor, buf: Tensor | None, first: bool, lr: float, wd: float, momentum: float,
             dampening: float, nesterov: bool, maximize: bool) -> bool:
    """The fused SGD kernel (False for a dtype it is not built for)."""
    if p.dtype.name not in C_TYPES:
        return False
    target, g = _contiguous(p), _contiguous(grad, p.dtype)
    b = _contiguous(buf) if buf is not None else None
    kernels.sgd(p.dtype.name, p.numel(), ops._ptr(target), ops._ptr(g), ops._ptr(b) if b is not None else 0, lr=lr,
                weight_decay=wd, momentum=momentum, dampening=dampening, nesterov=nesterov, maximize=maximize,
                first=first)
    _write_back((p, buf), (target, b))
    return True


@op_table.register("cuda", "adam_step")
def adam_step(p: Tensor, grad: Tensor, m: Tensor, v: Tensor, vmax: Tensor | None, lr: float, beta1: float,
              beta2: float, eps: float, wd: float, step: float, maximize: bool, decoupled: bool) -> bool:
    """The fused Adam/AdamW kernel (False for a dtype it is not built for)."""
    if p.dtype.name not in C_TYPES:
        return False
    target, g = _contiguous(p), _contiguous(grad, p.dtype)
    bufs = tuple(_contiguous(b) if b is not None else None for b in (m, v, vmax))
    kernels.adam(p.dtype.name, p.numel(), ops._ptr(target), ops._ptr(g),
                 *(ops._ptr(b) if b is not None else 0 for b in bufs), lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                 weight_decay=wd, step=step, amsgrad=vmax is not None, maximize=maximize, decoupled=decoupled)
    _write_back((p, m, v, vmax), (target, *bufs))
    return True
