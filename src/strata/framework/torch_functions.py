"""`torch.*` functions programs use that strata's op set lacks, composed from its ops (so they run on "cpu"
and "cuda", differentiable where PyTorch's are): `meshgrid`, `cartesian_prod`, `cdist`, `tensordot`,
`cross`, `kron`, `trace`, `isin`, `unique`, `unique_consecutive`, `bincount`, `tril_indices`,
`triu_indices`, `block_diag`, `addcmul`, `addcdiv`, `clamp_min`, `clamp_max`, `logit`, `diff`, `nansum`,
`nanmean`, `median`, `kthvalue`, `quantile`, and the Tensor methods `addcmul_`, `addcdiv_`, `index_fill_`,
`index_copy_`, `square_`, `sgn`, `ndimension`.
The torch alias serves them as `torch.<name>` (strata.framework.torch_extras looks them up here).

Data-dependent results (`unique`, `bincount`) read one size back to the host, as PyTorch's do.

Example:
    >>> import strata
    >>> from strata.framework import torch_functions as tf
    >>> gx, gy = tf.meshgrid(strata.arange(2), strata.arange(3), indexing="ij")
    >>> gx.tolist(), tf.unique(strata.tensor([3, 1, 3, 2]), return_counts=True)[1].tolist()
    ([[0, 0, 0], [1, 1, 1]], [1, 1, 2])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from strata.framework import dtypes as dt
from strata.framework import joining, linalg, ops, sorting
from strata.framework.creation import ones, tensor, zeros
from strata.framework.reductions import MaxMin
from strata.framework.tensor import Tensor


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors ('ij': matrix indexing, the default; 'xy': Cartesian).

    Raises:
        RuntimeError: a tensor that is not 0-D or 1-D, or an unknown indexing.
    """
    ts = list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], list | tuple) else list(tensors)
    mode = indexing or "ij"
    if mode not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {mode}")
    if any(t.dim() > 1 for t in ts):
        raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
    ts = [t.reshape(-1) for t in ts]
    swap = mode == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shape = [t.shape[0] for t in ts]
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = shape[i]
        grids.append(t.reshape(view).expand(*shape))
    if swap:  # 'xy': the grid of (y, x, ...) in matrix order, handed back as (x, y, ...)
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of the 1-D tensors' elements, one per row."""
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return joining.stack([g.reshape(-1) for g in grids], 1)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """p-norm distances between the rows of x1 (..., P, M) and x2 (..., R, M): (..., P, R).

    Raises:
        RuntimeError: the feature sizes differ.
    """
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 2.0:
        sq = (d * d).sum(-1)
        # the gradient of sqrt at 0 is taken as 0 (PyTorch's cdist backward does the same)
        safe = ops.where(sq > 0, sq, sq * 0.0 + 1.0)
        return ops.where(sq > 0, safe.sqrt(), sq * 0.0)
    if p == 0:
        return (d != 0).to(x1.dtype).sum(-1)
    if math.isinf(p):
        return d.abs().amax(-1)
    s = (d.abs() ** p).sum(-1)
    safe = ops.where(s > 0, s, s * 0.0 + 1.0)
    return ops.where(s > 0, safe ** (1.0 / p), s * 0.0)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract the last `dims` dims of a with the first of b, or the listed dim pairs."""
    if isinstance(dims, int):
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0])), \
            ([dims[1]] if isinstance(dims[1], int) else list(dims[1]))
    da, db = [d % a.dim() for d in da], [d % b.dim() for d in db]
    free_a = [d for d in range(a.dim()) if d not in da]
    free_b = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    am = a.permute(*free_a, *da).reshape(math.prod(a.shape[d] for d in free_a), k)
    bm = b.permute(*db, *free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return linalg.matmul(am, bm).reshape(*[a.shape[d] for d in free_a], *[b.shape[d] for d in free_b])


def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:  # noqa: A002
    """The 3-vector cross product along `dim` (default: the first dim of size 3).

    Raises:
        RuntimeError: the dim does not have size 3.
    """
    if dim is None:
        dim = next((i for i, s in enumerate(input.shape) if s == 3), -1)
    if input.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[dim]} and "
                           f"{other.shape[dim]}")
    a = [input.narrow(dim, i, 1) for i in range(3)]
    b = [other.narrow(dim, i, 1) for i in range(3)]
    return joining.cat([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]], dim)


def kron(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """The Kronecker product."""
    n = max(input.dim(), other.dim())
    a = input.reshape(*([1] * (n - input.dim())), *input.shape)
    b = other.reshape(*([1] * (n - other.dim())), *other.shape)
    inter_a = [s for d in a.shape for s in (d, 1)]
    inter_b = [s for d in b.shape for s in (1, d)]
    out = a.reshape(inter_a) * b.reshape(inter_b)
    return out.reshape(*[x * y for x, y in zip(a.shape, b.shape, strict=True)])


def trace(input: Tensor) -> Tensor:  # noqa: A002
    """The sum of the main diagonal of a 2-D tensor.

    Raises:
        RuntimeError: not 2-D.
    """
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix")
    return input.diagonal().sum()


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element occurs in test_elements (bool, elements' shape)."""
    e = elements if isinstance(elements, Tensor) else tensor(elements)
    t = test_elements if isinstance(test_elements, Tensor) else tensor(test_elements, device=e.device)
    hit = (e.unsqueeze(-1) == t.reshape(-1)).any(-1)
    return hit.logical_not() if invert else hit


def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct values (sorted), and optionally the inverse indices and the counts.

    Raises:
        NotImplementedError: dim is not None.
    """
    if dim is not None:
        raise NotImplementedError("torch.unique(dim=...) is not implemented in strata")
    flat = input.reshape(-1)
    ordered = sorting.sort(flat, stable=True)
    values, perm = ordered.values, ordered.indices
    if flat.shape[0] == 0:
        first = values.to(dt.bool_)
    else:
        first = joining.cat([ones(1, dtype=dt.bool_, device=flat.device), values[1:] != values[:-1]])
    out = values[first]
    if not (return_inverse or return_counts):
        return out
    group = first.to(dt.int64).cumsum(0) - 1
    result: list[Tensor] = [out]
    if return_inverse:
        inverse = zeros(flat.shape[0], dtype=dt.int64, device=flat.device).scatter(0, perm, group)
        result.append(inverse.reshape(tuple(input.shape)))
    if return_counts:
        counts = zeros(out.shape[0], dtype=dt.int64, device=flat.device)
        result.append(counts.index_add(0, group, ones(flat.shape[0], dtype=dt.int64, device=flat.device)))
    return tuple(result)


def unique_consecutive(input: Tensor, return_inverse: bool = False, return_counts: bool = False,  # noqa: A002
                       dim: int | None = None) -> Any:
    """Collapse runs of equal consecutive values.

    Raises:
        NotImplementedError: dim is not None.
    """
    if dim is not None:
        raise NotImplementedError("torch.unique_consecutive(dim=...) is not implemented in strata")
    flat = input.reshape(-1)
    first = joining.cat([ones(1, dtype=dt.bool_, device=flat.device), flat[1:] != flat[:-1]]) \
        if flat.shape[0] else flat.to(dt.bool_)
    out = flat[first]
    if not (return_inverse or return_counts):
        return out
    group = first.to(dt.int64).cumsum(0) - 1
    result: list[Tensor] = [out]
    if return_inverse:
        result.append(group.reshape(tuple(input.shape)))
    if return_counts:
        counts = zeros(out.shape[0], dtype=dt.int64, device=flat.device)
        result.append(counts.index_add(0, group, ones(flat.shape[0], dtype=dt.int64, device=flat.device)))
    return tuple(result)


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """Counts (or summed weights) of each non-negative integer in a 1-D tensor.

    Raises:
        RuntimeError: not 1-D, negative values, or a floating input.
    """
    if input.dim() != 1 or input.dtype.is_floating_point:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if input.shape[0] and int(input.min().item()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = max(int(input.max().item()) + 1 if input.shape[0] else 0, minlength)
    if weights is None:
        src = ones(input.shape[0], dtype=dt.int64, device=input.device)
        return zeros(n, dtype=dt.int64, device=input.device).index_add(0, input, src)
    wd = weights.dtype if weights.dtype.is_floating_point else dt.float64
    return zeros(n, dtype=wd, device=input.device).index_add(0, input, weights.to(wd))


def _tri_indices(row: int, col: int, offset: int, lower: bool, dtype: Any, device: Any) -> Tensor:
    # the indices are a function of the sizes only (host metadata), as PyTorch's factory computes them
    r, c = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    return tensor(np.stack([r, c]).astype(np.int64), dtype=dtype or dt.int64, device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) coordinates of the lower triangle of a row x col matrix (diagonal shifted by offset)."""
    return _tri_indices(row, col, offset, True, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None, device: Any = None,
                 layout: Any = None) -> Tensor:
    """The (2, N) coordinates of the upper triangle."""
    return _tri_indices(row, col, offset, False, dtype, device)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-, 1- or 2-D) as blocks on the diagonal of one matrix."""
    mats = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    dtype = mats[0].dtype
    for m in mats[1:]:
        dtype = dt.promote_types(dtype, m.dtype)
    out, r, c = [], 0, 0
    for m in mats:
        row_parts = []
        if c:
            row_parts.append(zeros(m.shape[0], c, dtype=dtype, device=m.device))
        row_parts.append(m.to(dtype))
        if cols - c - m.shape[1]:
            row_parts.append(zeros(m.shape[0], cols - c - m.shape[1], dtype=dtype, device=m.device))
        out.append(joining.cat(row_parts, 1))
        r, c = r + m.shape[0], c + m.shape[1]
    return joining.cat(out, 0) if rows else zeros(0, 0, dtype=dtype)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 * tensor2."""
    return input + tensor1 * tensor2 * value


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:  # noqa: A002
    """input + value * tensor1 / tensor2."""
    return input + tensor1 / tensor2 * value


def _addcmul_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    return self.add_(tensor1 * tensor2 * value)


def _addcdiv_(self: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: float = 1) -> Tensor:
    return self.add_(tensor1 / tensor2 * value)


def clamp_min(input: Tensor, min: float) -> Tensor:  # noqa: A002
    """max(input, min)."""
    return input.clamp(min=min)


def clamp_max(input: Tensor, max: float) -> Tensor:  # noqa: A002
    """min(input, max)."""
    return input.clamp(max=max)


def logit(input: Tensor, eps: float | None = None) -> Tensor:  # noqa: A002
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when eps is given."""
    p = input.clamp(eps, 1 - eps) if eps is not None else input
    return p.log() - (1 - p).log()


def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,  # noqa: A002
         append: Tensor | None = None) -> Tensor:
    """The n-th forward difference along dim (with prepend / append joined first)."""
    x = input
    if prepend is not None or append is not None:
        x = joining.cat([t for t in (prepend, x, append) if t is not None], dim)
    for _ in range(n):
        size = x.shape[dim]
        x = x.narrow(dim, 1, size - 1) - x.narrow(dim, 0, size - 1) if x.dtype is not dt.bool_ else \
            x.narrow(dim, 1, size - 1) != x.narrow(dim, 0, size - 1)
    return x


def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The sum with NaNs taken as zero."""
    x = ops.where(input.isnan(), 0.0, input) if input.dtype.is_floating_point else input
    return x.sum() if dim is None else x.sum(dim, keepdim=keepdim)


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """The mean over the elements that are not NaN."""
    valid = input.isnan().logical_not().to(input.dtype)
    count = valid.sum() if dim is None else valid.sum(dim, keepdim=keepdim)
    return nansum(input, dim, keepdim) / count


def median(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:  # noqa: A002
    """The lower median: of all elements (dim None), or (values, indices) along dim."""
    if dim is None:
        flat = sorting.sort(input.reshape(-1)).values
        return flat[(flat.shape[0] - 1) // 2]
    ordered = sorting.sort(input, dim, stable=True)
    k = (input.shape[dim] - 1) // 2
    values, indices = ordered.values.narrow(dim, k, 1), ordered.indices.narrow(dim, k, 1)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return MaxMin(values, indices, "median")


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:  # noqa: A002
    """The k-th smallest value along dim (1-based k) and its index.

    Raises:
        RuntimeError: k outside [1, size].
    """
    size = input.shape[dim] if input.dim() else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    ordered = sorting.sort(input, dim, stable=True)
    values, indices = ordered.values.narrow(dim, k - 1, 1), ordered.indices.narrow(dim, k - 1, 1)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return MaxMin(values, indices, "kthvalue")


def quantile(input: Tensor, q: Any, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear") -> Tensor:
    """The q-th quantiles (q a float or 1-D tensor in [0, 1]) of all elements or along dim; 'linear',
    'lower', 'higher', 'midpoint' or 'nearest' interpolation between the sorted neighbours.

    Raises:
        ValueError: q outside [0, 1], or an unknown interpolation.
    """
    if interpolation not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                         f"Got {interpolation}")
    qs = [float(v) for v in (q.reshape(-1).tolist() if isinstance(q, Tensor) else [q] if isinstance(q, float | int)
                             else q)]
    if any(not 0 <= v <= 1 for v in qs):
        raise ValueError("quantile() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else dim % input.dim()
    srt = sorting.sort(x, d).values
    n = x.shape[d]
    outs = []
    for v in qs:
        pos = v * (n - 1)
        lo, hi = int(math.floor(pos)), int(math.ceil(pos))
        frac = pos - lo
        if interpolation == "lower":
            hi, frac = lo, 0.0
        elif interpolation == "higher":
            lo, frac = hi, 0.0
        elif interpolation == "nearest":
            lo = hi = int(round(pos))  # round half to even, as PyTorch
            frac = 0.0
        elif interpolation == "midpoint":
            frac = 0.5 if hi != lo else 0.0
        a, b = srt.narrow(d, lo, 1), srt.narrow(d, hi, 1)
        val = a + (b - a) * frac if frac else a
        outs.append(val if keepdim or dim is None else val.squeeze(d))
    if dim is None:
        outs = [o.reshape(()) if not keepdim else o.reshape([1] * input.dim()) for o in outs]
    single = not isinstance(q, Tensor | list | tuple) or (isinstance(q, Tensor) and q.dim() == 0)
    return outs[0] if single else joining.stack(outs, 0)


def _index_fill_(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """Fill the slices at `index` along dim with value (in place, through a view moving dim first)."""
    self.transpose(0, dim)[index] = value
    return self


def _index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Copy source's slices to the positions `index` along dim (in place)."""
    self.transpose(0, dim)[index] = source.transpose(0, dim)
    return self


def _square_(self: Tensor) -> Tensor:
    return self.mul_(self.detach().clone())


FUNCTIONS: dict[str, Any] = {
    "clamp_min": clamp_min, "clamp_max": clamp_max, "logit": logit, "diff": diff, "nansum": nansum,
    "nanmean": nanmean, "median": median, "kthvalue": kthvalue, "quantile": quantile,
    "meshgrid": meshgrid, "cartesian_prod": cartesian_prod, "cdist": cdist, "tensordot": tensordot, "cross": cross,
    "kron": kron, "trace": trace, "isin": isin, "unique": unique, "unique_consecutive": unique_consecutive,
    "bincount": bincount, "tril_indices": tril_indices, "triu_indices": triu_indices, "block_diag": block_diag,
    "addcmul": addcmul, "addcdiv": addcdiv,
}
METHODS: dict[str, Any] = {"clamp_min": clamp_min, "clamp_max": clamp_max, "logit": logit, "diff": diff,
                           "nansum": nansum, "nanmean": nanmean, "median": median, "kthvalue": kthvalue,
                           "quantile": quantile, "index_fill_": _index_fill_,
                           "index_copy_": _index_copy_, "square_": _square_, "sgn": lambda self: self.sign(),
                           "ndimension": lambda self: self.dim(),
                           "addcmul_": _addcmul_, "addcdiv_": _addcdiv_, "addcmul": addcmul, "addcdiv": addcdiv,
                           "cross": cross, "kron": kron, "trace": trace, "unique": unique, "bincount": bincount,
                           "isin": isin}

__all__ = ["addcdiv", "addcmul", "bincount", "block_diag", "cartesian_prod", "cdist", "clamp_max", "clamp_min",
           "cross", "diff", "isin", "kron", "kthvalue", "logit", "median", "meshgrid", "nanmean", "nansum", "quantile",
           "tensordot", "trace", "tril_indices", "triu_indices", "unique", "unique_consecutive"]
