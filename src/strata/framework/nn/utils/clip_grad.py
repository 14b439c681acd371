"""Gradient clipping, as torch.nn.utils.clip_grad: scale all gradients together so that their joint
norm is at most `max_norm`, or clamp each gradient element to [-clip_value, clip_value].

The total norm stays a tensor on the gradients' device and the scale factor
min(1, max_norm / (total + 1e-6)) multiplies the gradients there: clipping never reads a value back
to the host (unless `error_if_nonfinite=True`, which must look at the norm, as in PyTorch).

Example:
    >>> import strata
    >>> from strata.framework.nn.utils import clip_grad_value_
    >>> p = strata.zeros(3, requires_grad=True)
    >>> p.grad = strata.tensor([-2.0, 0.5, 3.0])
    >>> clip_grad_value_(p, 1.0); p.grad.tolist()
    [-1.0, 0.5, 1.0]
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from strata.framework import autograd, op_table, ops
from strata.framework import dtypes as dt
from strata.framework.creation import tensor as _tensor
from strata.framework.joining import stack
from strata.framework.reductions import max as _max
from strata.framework.reductions import sum as _sum
from strata.framework.tensor import Tensor

_Tensors = Tensor | Iterable[Tensor]


def _as_list(tensors: _Tensors) -> list[Tensor]:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _vector_norm(x: Tensor, norm_type: float) -> Tensor:
    """The p-norm of all elements of x, as a 0-dim tensor of x's dtype (computed in float32 for
    half/bfloat16, as ATen's opmath)."""
    work = x.float() if x.dtype in (dt.float16, dt.bfloat16) else x
    if math.isinf(norm_type):
        a = work.abs()
        r = _max(a) if norm_type > 0 else a.min()
    elif norm_type == 2:
        r = _sum(work * work).sqrt()
    elif norm_type == 1:
        r = _sum(work.abs())
    elif norm_type == 0:
        r = _sum((work != 0).to(work.dtype))
    else:
        r = _sum(work.abs() ** norm_type) ** (1.0 / norm_type)
    return r.to(x.dtype)


def _cuda_norms2(ts: list[Tensor]) -> Tensor | None:
    """The 2-norms of `ts` as one vector, for float32 or float64 tensors of one dtype on one "cuda" device
    (else None): each tensor's sum of squares written into its element by the reduction kernel, then one
    sqrt for them all. The same kernels on the same values as `_vector_norm` per tensor and `stack`, so
    the same bits, with a third of the launches (a training step clips every parameter's gradient)."""
    d, dev = ts[0].dtype, ts[0]._storage.device
    if dev.type != "cuda" or d not in (dt.float32, dt.float64):
        return None
    for t in ts:
        if t.dtype is not d or t._storage.device != dev or t.dim() == 0 or t.numel() == 0:
            return None
    sums = ops.empty((len(ts),), d, dev)
    reduce = op_table.kernel("sum", "cuda")
    for i, t in enumerate(ts):
        sq = t * t
        dims = list(range(sq.dim()))
        reduce("sum", sq, dims, [], [], d, out=sums[i])
    return sums.sqrt()


@autograd.no_grad()
def get_total_norm(tensors: _Tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The norm of the norms of `tensors` (= the norm of all their elements concatenated).

    Returns:
        A 0-dim tensor on the first tensor's device (0.0 on "cpu" when there are no tensors).

    Raises:
        RuntimeError: error_if_nonfinite and the norm is nan or inf.
    """
    ts = _as_list(tensors)
    norm_type = float(norm_type)
    if not ts:
        return _tensor(0.0)
    first = ts[0].device
    norms = _cuda_norms2(ts) if norm_type == 2 else None
    if norms is None:
        norms = stack([_vector_norm(t, norm_type).to(first) for t in ts])
    total = _vector_norm(norms, norm_type)
    if error_if_nonfinite:
        bad = (total != total) | (total.abs() == math.inf)
        if bad.item():
            raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                               "so it cannot be clipped. To disable this error and scale the gradients by the "
                               "non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


@autograd.no_grad()
def clip_grads_with_norm_(parameters: _Tensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Multiply every gradient by min(1, max_norm / (total_norm + 1e-6)), on the gradients' devices."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    coef = (total_norm.to(dt.float32 if total_norm.dtype is not dt.float64 else dt.float64) + 1e-6)
    clamped = (float(max_norm) / coef).clamp(max=1.0)
    for g in grads:
        g.mul_(clamped.to(g.device, g.dtype))


def clip_grad_norm_(parameters: _Tensors, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: bool | None = None) -> Tensor:
    """Scale the gradients of `parameters` in place so that their total `norm_type`-norm is at most
    `max_norm` (a tiny epsilon keeps it just below).

    Args:
        parameters: a tensor or an iterable of tensors whose `.grad` to clip.
        max_norm: the largest allowed total norm.
        norm_type: p of the p-norm (float('inf') for the max norm).
        error_if_nonfinite: raise if the total norm is nan or inf (reads it on the host).
        foreach: accepted for PyTorch compatibility; ignored.

    Returns:
        The total norm of the gradients before clipping (a 0-dim tensor, left on the device).
    """
    params = _as_list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


@autograd.no_grad()
def clip_grad_value_(parameters: _Tensors, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient element of `parameters` to [-clip_value, clip_value], in place."""
    c = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-c, max=c)
