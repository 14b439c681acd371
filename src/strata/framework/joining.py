"""Joining tensors: `cat` and `stack`, with PyTorch's type promotion and checks. Both are ops of the op
table: their kernel writes the inputs into the output (one NumPy concatenate on "cpu", the copy kernel per
input on "cuda"; stack joins the inputs unsqueezed at the new dim), and their derivatives (slices of the
output's gradient) and nodes (CatBackward0, StackBackward0) are the table's.

Example:
    >>> import strata
    >>> a, b = strata.tensor([[1, 2]]), strata.tensor([[3.5, 4.0]])
    >>> strata.cat([a, b]).tolist(), strata.stack([a, a], dim=2).shape
    ([[1.0, 2.0], [3.5, 4.0]], strata.Size([1, 2, 2]))
"""

from __future__ import annotations

from collections.abc import Sequence

from strata.framework import autograd, op_table
from strata.framework import dtypes as dt
from strata.framework.device import device
from strata.framework.ops import _check_same_device, empty, record
from strata.framework.tensor import Tensor, _wrap_dim

_OPS = op_table.OPS


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenate along `dim` (sizes must match elsewhere); the result dtype is the promoted one. As in
    PyTorch, 1-D empty tensors (shape (0,)) beside tensors of more dims are skipped (they still take part
    in the type promotion): the legacy way of starting from `torch.tensor([])`.

    Raises:
        ValueError: an empty list (as PyTorch).
        RuntimeError: a 0-dim tensor; ranks or sizes differ outside `dim`, or devices differ.
    """
    ts = list(tensors)
    if not ts:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    dev = _check_same_device(*ts)
    for i, t in enumerate(ts):
        if t.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    first = next((t for t in ts if not _legacy_empty(t)), ts[0])
    d = _wrap_dim(dim, first.dim())
    skip = first.dim() != 1
    for i, t in enumerate(ts):
        if skip and _legacy_empty(t):
            continue
        if t.dim() != first.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.dim()} and {t.dim()}")
        for k in range(first.dim()):
            if k != d and t.shape[k] != first.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{first.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list.")
    parts = [t for t in ts if not (skip and _legacy_empty(t))] if skip else ts
    return _join("cat", ts, parts, d, dev)


def _legacy_empty(t: Tensor) -> bool:
    return t.dim() == 1 and t.shape[0] == 0


def _join(op: str, ts: list[Tensor], parts: list[Tensor], d: int, dev: device) -> Tensor:
    """`parts` (checked: one rank, sizes equal apart from d) joined along d in the dtype promoted over the
    inputs `ts` by op's kernel, recording op's node with the table's derivative for `ts`."""
    out_dt = ts[0].dtype
    for t in ts[1:]:
        out_dt = dt.promote_types(out_dt, t.dtype)
    shape = list(parts[0].shape)
    shape[d] = sum(t.shape[d] for t in parts)
    out = empty(shape, out_dt, dev)
    op_table.kernel(op, out._storage.device.type)(out, parts, d)
    deriv = _OPS[op].derivative
    assert deriv is not None

    def bw(g: Tensor) -> tuple:
        return deriv(g, *ts, dim=d)
    return record(out, ts, _OPS[op].node, bw)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dim `dim` (the result dtype is the promoted one).

    Raises:
        RuntimeError: shapes differ.
    """
    ts = list(tensors)
    if not ts:
        raise ValueError("stack expects a non-empty TensorList")
    for i, t in enumerate(ts):
        if t.shape != ts[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(ts[0].shape)} at entry 0 "
                               f"and {list(t.shape)} at entry {i}")
    dev = _check_same_device(*ts)
    d = _wrap_dim(dim, ts[0].dim() + 1)
    with autograd.no_grad():  # (the unsqueezed views only place the inputs: StackBackward0 is the one node)
        parts = [t.unsqueeze(d) for t in ts]
    return _join("stack", ts, parts, d, dev)
