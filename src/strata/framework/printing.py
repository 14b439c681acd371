"""How tensors print: PyTorch's `tensor([...])` format (precision 4, integer mode for whole floats,
scientific mode for wide ranges, aligned columns, 80-column lines) with its suffixes (device, dtype,
grad_fn / requires_grad). Tensors over 1000 elements print summarized, as PyTorch does: the first and
last 3 entries of every long dimension, with "..." between.

Example:
    >>> import strata
    >>> strata.tensor([[1.0, 2.5], [-3.0, 4.0]])
    tensor([[ 1.0000,  2.5000],
            [-3.0000,  4.0000]])
    >>> strata.tensor([1, 2], dtype=strata.int32)
    tensor([1, 2], dtype=strata.int32)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from strata.framework import dtypes as dt

if TYPE_CHECKING:
    from strata.framework.tensor import Tensor

PRECISION = 4
LINEWIDTH = 80
THRESHOLD = 1000  # more elements than this print summarized
EDGEITEMS = 3  # entries kept at each end of a summarized dimension


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat.astype(np.float64)
        nz = vals[np.isfinite(vals) & (vals != 0)]
        if nz.size == 0:
            return
        a = np.abs(nz)
        lo, hi = float(a.min()), float(a.max())
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        if self.int_mode:
            if hi / lo > 1000.0 or hi > 1.0e8:
                self.sci_mode = True
                widths = [len(f"{v:.{PRECISION}e}") for v in nz.tolist()]
            else:
                widths = [len(f"{v:.0f}") + 1 for v in nz.tolist()]
        elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
            self.sci_mode = True
            widths = [len(f"{v:.{PRECISION}e}") for v in nz.tolist()]
        else:
            widths = [len(f"{v:.{PRECISION}f}") for v in nz.tolist()]
        self.max_width = max([self.max_width, *widths])

    def format(self, value: Any) -> str:
        if self.floating:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{PRECISION}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{PRECISION}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray) -> np.ndarray:
    """The entries a summarized print shows: the first and last EDGEITEMS of every longer dimension."""
    for axis, n in enumerate(a.shape):
        if n > 2 * EDGEITEMS:
            a = np.concatenate([a.take(range(EDGEITEMS), axis), a.take(range(n - EDGEITEMS, n), axis)], axis)
    return a


def _body(values: np.ndarray, indent: int, fmt: _Formatter, summarize: bool) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    n = values.shape[0]
    cut = summarize and n > 2 * EDGEITEMS
    if values.ndim == 1:
        per_line = max(1, int(math.floor((LINEWIDTH - indent) / (fmt.max_width + 2))))
        if cut:
            data = ([fmt.format(v) for v in values[:EDGEITEMS].tolist()] + [" ..."]
                    + [fmt.format(v) for v in values[n - EDGEITEMS:].tolist()])
        else:
            data = [fmt.format(v) for v in values.tolist()]
        lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
        return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [*range(EDGEITEMS), -1, *range(n - EDGEITEMS, n)] if cut else range(n)
    parts = ["..." if i < 0 else _body(values[i], indent + 1, fmt, summarize) for i in rows]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def tensor_repr(t: Tensor) -> str:
    """The PyTorch-style text of `t`."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    host = t._to_numpy()
    if t.numel() == 0:
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        body = "[]"
    else:
        vals = host.astype(np.float64) if t.dtype.is_floating_point else host
        summarize = t.numel() > THRESHOLD
        fmt = _Formatter(_summarized(vals) if summarize else vals, t.dtype.is_floating_point)
        body = _body(vals, indent, fmt, summarize)
    if t.dtype not in (dt.get_default_dtype(), dt.int64, dt.bool_):
        suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    out = [prefix + body]
    text = prefix + body
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > LINEWIDTH:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    out.append(")")
    return "".join(out)
