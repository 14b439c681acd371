"""The "cuda" backend: the op table's elementwise ops as launches of the framework's CUDA C++ kernels
(`kernels/`) on the tensors' virtual GPU. Nothing is computed on the host.

Kernel signatures are those of the cpu backend (see backends/cpu.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.framework import autograd, kernels, op_table
from strata.framework import dtypes as dt
from strata.framework.device import device, on
from strata.framework.handles import library, library_handle
from strata.framework.kernels import indexing as indexing_kernels
from strata.framework.kernels import nn as nn_kernels
from strata.framework.kernels import sorting as sorting_kernels
from strata.framework.ops import (
    _as_tensor,
    _bstrides,
    _cast,
    _ptr,
    _torch_name,
    broadcast_shapes,
    copy_into,
    device_array,
    empty,
    fill_,
    from_host,
    full,
)
from strata.framework.tensor import Size, Tensor, _layout, _view_strides, contiguous_strides


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
def binary(op: str, a: Any, b: Any, compute: dt.dtype, out_dt: dt.dtype, dev: device, *,
           out: Tensor | None = None) -> Tensor:
    """out = a op b over broadcast strides, by the `binary` / `compare` kernel sets (into a new tensor, or
    into `out`: a tensor of the broadcast shape and of dtypes compute = out_dt, see ops.binary_into). A
    tensor and a Python number (not a comparison): one kernel taking the number as an argument."""
    if out_dt is compute and op not in kernels.COMPARISONS:
        if b.__class__ in _NUMBERS and isinstance(a, Tensor):
            return _binary_scalar(op, a, b, False, compute, dev, out)
        if a.__class__ in _NUMBERS and isinstance(b, Tensor):
            return _binary_scalar(op, b, a, True, compute, dev, out)
    ta, tb = _as_tensor(a, compute, dev), _as_tensor(b, compute, dev)
    shape = ta._shape
    a_st: Sequence[int]
    b_st: Sequence[int]
    if tb._shape == shape:  # (no broadcast: the strides as they are; size-1 dims' strides never count)
        a_st, b_st = ta._stride, tb._stride
    else:
        shape = broadcast_shapes(shape, tb._shape)
        a_st, b_st = _bstrides(ta, shape), _bstrides(tb, shape)
    if out is None:
        out = empty(shape, out_dt, dev)
    with on(dev):
        kernels.binary(op, compute.name, out_dt.name, shape, _ptr(out), out._stride, _ptr(ta), a_st, _ptr(tb), b_st)
    return out


_NUMBERS = (int, float, bool)


def _binary_scalar(op: str, t: Tensor, value: int | float | bool, left: bool, compute: dt.dtype, dev: device,
                   out: Tensor | None) -> Tensor:
    """t op value (value op t when `left`) by the binary_scalar kernel: the number as an argument instead of a
    0-dim tensor filled by a launch of its own."""
    if t.dtype is not compute or t._storage.device is not dev:
        t = _as_tensor(t, compute, dev)
    if out is None:
        out = empty(t._shape, compute, dev)
    with on(dev):
        kernels.binary_scalar(op, compute.name, t._shape, _ptr(out), out._stride, _ptr(t), t._stride, value, left)
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


# ----------------------------------------------------------------------------------------- selection
@op_table.register("cuda", "where")
def where(cond: Tensor, a: Tensor, b: Tensor, res: dt.dtype, shape: Any) -> Tensor:
    """out = a where cond else b over broadcast strides, by the `where` kernel."""
    dev = a.device
    out = empty(shape, res, dev)
    with on(dev):
        kernels.where(res.name, shape, _ptr(out), out.stride(), _ptr(cond), _bstrides(cond, shape), _ptr(a),
                      _bstrides(a, shape), _ptr(b), _bstrides(b, shape))
    return out


@op_table.register("cuda", "isnan", "isinf", "isfinite")
def predicate(op: str, x: Tensor) -> Tensor:
    """isnan / isinf / isfinite of a floating tensor, by the predicate kernels."""
    out = empty(x.shape, dt.bool_, x.device)
    with on(x.device):
        kernels.math_unary(op, x.dtype.name, x.shape, _ptr(out), out.stride(), _ptr(x), x.stride())
    return out


@op_table.register("cuda", "nan_to_num")
def nan_to_num(x: Tensor, nan: float, posinf: float, neginf: float) -> Tensor:
    """x with NaN, +inf and -inf replaced, by the nan_to_num kernel."""
    out = empty(x.shape, x.dtype, x.device)
    with on(x.device):
        kernels.nan_to_num(x.dtype.name, x.shape, _ptr(out), out.stride(), _ptr(x), x.stride(), nan, posinf, neginf)
    return out


@op_table.register("cuda", "bitwise_not")
def bitwise_not(x: Tensor) -> Tensor:
    """~x (integral), not x (bool), by the bitwise kernel set."""
    out = empty(x.shape, x.dtype, x.device)
    with on(x.device):
        kernels.math_unary("bitwise_not", x.dtype.name, x.shape, _ptr(out), out.stride(), _ptr(x), x.stride())
    return out


# ----------------------------------------------------------------------------------------- primitives
@op_table.register("cuda", "fill")
def fill(t: Tensor, value: Any) -> None:
    """Every element of the (possibly strided) view t = value, by the fill kernel."""
    with on(t.device):
        kernels.fill(t.dtype.name, t.shape, _ptr(t), t.stride(), value)


@op_table.register("cuda", "copy")
def copy(dst: Tensor, src: Tensor, shape: Any) -> None:
    """dst[...] = src (same device), broadcast and converted, by the copy kernel."""
    with on(dst.device):
        kernels.copy(src.dtype.name, dst.dtype.name, shape, _ptr(dst), dst.stride(), _ptr(src),
                     _bstrides(src, shape))


# ----------------------------------------------------------------------------------------- reductions
@op_table.register("cuda", "sum", "mean", "prod", "max", "min")
def reduce(op: str, x: Tensor, dims: list[int], out_shape: list[int], kept_shape: list[int],
           out_dt: dt.dtype, out: Tensor | None = None) -> tuple[Tensor, Tensor | None]:
    """op over `dims` by the reduction kernel: one block per kept element (values, and the indices of
    max / min). `out` (cuda only): a row-major tensor of `out_shape` and `out_dt` to write the values into
    (clip_grad_norm_'s per-gradient sums, written into one vector)."""
    values = empty(out_shape, out_dt, x.device) if out is None else out
    indices = empty(out_shape, dt.int64, x.device) if op in ("max", "min") else None
    shape, stride = x._shape, x._stride
    kept = [i for i in range(len(shape)) if i not in dims]
    with on(x.device):
        kernels.reduce(op, x.dtype.name, kept_shape, _ptr(values), contiguous_strides(kept_shape),
                       _ptr(indices) if indices is not None else 0, [stride[i] for i in kept],
                       [shape[i] for i in dims], [stride[i] for i in dims], _ptr(x))
    return values, indices


# ----------------------------------------------------------------------------------------- matrix products
@op_table.register("cuda", "mm")
def mm(a: Tensor, b: Tensor, batch: tuple[int, ...], m: int, k: int, n: int) -> Tensor:
    """(..., m, k) @ (..., k, n) with broadcast batch dims, by strata.libs.blas."""
    ab, bb = _batched(a, batch, m, k), _batched(b, batch, k, n)
    if ab is None or bb is None:  # (a batch layout no view can flatten: the general path copies)
        with autograd.no_grad():
            ab = a.expand(*batch, m, k).reshape(-1, m, k)
            bb = b.expand(*batch, k, n).reshape(-1, k, n)
    out = _mm_cuda(ab, bb)
    size, strides = _layout((*batch, m, n))
    return Tensor._rebuild(out._storage, size, strides, 0, out.dtype, None)


def _batched(t: Tensor, batch: tuple[int, ...], r: int, c: int) -> Tensor | None:
    """t broadcast to (*batch, r, c) and seen as (B, r, c) without autograd, when a view can do it (else
    None): `expand(...).reshape(-1, r, c)` without their checks and graph bookkeeping, for every matmul."""
    key = (t._shape, t._stride, batch, r, c)
    lay = _BATCHED.get(key)
    if lay is None:
        full = (*batch, r, c)
        st = _view_strides(full, _bstrides(t, full), (math.prod(batch), r, c))
        lay = (Size((math.prod(batch), r, c)), st)
        if len(_BATCHED) >= 4096:  # (bounded: shapes are few in a program but need not be)
            _BATCHED.clear()
        _BATCHED[key] = lay
    if lay[1] is None:
        return None
    return Tensor._rebuild(t._storage, lay[0], lay[1], t._offset, t.dtype, None)


# (shape, strides, batch, rows, cols) -> the (B, r, c) layout of `_batched`, or None (no view)
_BATCHED: dict[tuple, tuple[Size, tuple[int, ...] | None]] = {}


def _mm_cuda(a: Tensor, b: Tensor) -> Tensor:
    """Batched row-major (B, m, k) @ (B, k, n) on the GPU with strata.libs.blas (column-major trick:
    C^T = B^T A^T). Each operand goes in where it lies when its matrices are row-major or column-major
    (a transposed view such as `w.t()` is the second), with any batch stride (0 for a broadcast weight);
    only other layouts are copied first."""
    blas = library("blas")
    batch, m, k = a.shape
    n = b.shape[2]
    out = empty((batch, m, n), a.dtype, a.device)
    if out.numel() == 0:
        return out
    if k == 0:
        return fill_(out, 0)
    a, op_a, ld_a, sb_a = _gemm_operand(a)
    b, op_b, ld_b, sb_b = _gemm_operand(b)
    h = library_handle("blas", a.device)
    with on(a.device):
        if a.dtype in (dt.float32, dt.float64):
            blas.gemm_strided_batched(h, op_b, op_a, n, m, k, 1.0, _ptr(b), ld_b, sb_b, _ptr(a), ld_a, sb_a, 0.0,
                                      _ptr(out), n, m * n, batch, dtype=a.dtype.np)
        elif a.dtype in (dt.float16, dt.bfloat16):
            isz = a.dtype.itemsize
            for i in range(batch):
                blas.gemm_ex(h, op_b, op_a, n, m, k, 1.0, _ptr(b) + i * sb_b * isz, a.dtype.np, ld_b,
                             _ptr(a) + i * sb_a * isz, a.dtype.np, ld_a, 0.0, _ptr(out) + i * m * n * isz, a.dtype.np,
                             n, "f32")
        else:
            raise RuntimeError(f"\"addmm_cuda\" not implemented for '{_torch_name(a.dtype.name)}'")
    return out


def _gemm_operand(x: Tensor) -> tuple[Tensor, str, int, int]:
    """(tensor, op, leading dimension, batch stride) of a (B, r, c) operand for the column-major call: rows
    contiguous -> 'N' on its transpose as stored; columns contiguous -> 'T'; else a contiguous copy."""
    _, r, c = x.shape
    sb, sr, sc = x.stride()
    sb = sb if x.shape[0] > 1 else r * c
    if (sc == 1 or c == 1) and sr >= max(1, c):
        return x, "N", max(1, sr if r > 1 else c), sb
    if (sr == 1 or r == 1) and sc >= max(1, r):
        return x, "T", max(1, sc if c > 1 else r), sb
    x = x.contiguous()
    return x, "N", max(1, c), r * c


# ----------------------------------------------------------------------------------------- sequences
@op_table.register("cuda", "arange")
def arange(d: dt.dtype, dev: device, n: int, start: Any, step: Any) -> Tensor:
    """start + i * step written by the sequence kernel (no host-to-device copy, no wait)."""
    out = empty((n,), d, dev)
    with on(dev):
        if d.is_floating_point:
            kernels.sequence(d.name, n, _ptr(out), start=float(start), step=float(step))
        else:
            kernels.sequence(d.name, n, _ptr(out), istart=int(start), istep=int(step), integral=True)
    return out


@op_table.register("cuda", "linspace")
def linspace(d: dt.dtype, dev: device, steps: int, start: float, step: float, end: float) -> Tensor:
    """The two-sided sequence kernel (the halves counted from each end, as ATen)."""
    out = empty((steps,), d, dev)
    with on(dev):
        kernels.sequence(d.name, steps, _ptr(out), start=float(start), step=step, end=float(end),
                         two_sided=steps > 1)
    return out


# ----------------------------------------------------------------------------------------- sorting and scans
def _rows(shape: Any, d: int) -> tuple[int, int, int]:
    """(outer, n, inner) of a contiguous tensor of `shape` seen as rows along dim d."""
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:d]), shape[d], math.prod(shape[d + 1:])


@op_table.register("cuda", "sort")
def sort(x: Tensor, d: int, descending: bool) -> tuple[Tensor, Tensor]:
    """(values, indices) of a stable sort along d, by the per-row bitonic sort kernels."""
    src = x.detach().contiguous()
    outer, n, inner = _rows(x.shape, d)
    values = empty(x.shape, x.dtype, x.device)
    indices = empty(x.shape, dt.int64, x.device)
    p = sorting_kernels.scratch_len(n)
    kv = ki = None
    if p:
        key_dt = dt.float32 if x.dtype in (dt.float16, dt.bfloat16) else x.dtype
        kv, ki = empty((outer * inner * p,), key_dt, x.device), empty((outer * inner * p,), dt.int32, x.device)
    with on(x.device):
        sorting_kernels.sort(x.dtype.name, outer, n, inner, _ptr(values), _ptr(indices), _ptr(src),
                             descending=descending, key_scratch=_ptr(kv) if kv is not None else 0,
                             idx_scratch=_ptr(ki) if ki is not None else 0)
    return values, indices


@op_table.register("cuda", "sort_backward")
def sort_backward(g: Tensor, indices: Tensor, d: int, shape: Any) -> Tensor:
    """zeros(shape) with g put at `indices` along d, by the scatter_rows kernel."""
    with autograd.no_grad():
        gc, ic = g.contiguous(), indices.contiguous()
    out = full(shape, 0, g.dtype, g.device)
    outer, n, inner = _rows(shape, d)
    with on(g.device):
        sorting_kernels.scatter_rows(g.dtype.name, outer, g.shape[d], n, inner, _ptr(out), _ptr(gc), _ptr(ic))
    return out


@op_table.register("cuda", "cumsum", "cumprod")
def scan(op: str, x: Tensor, d: int, reverse: bool, out_dt: dt.dtype) -> Tensor:
    """Inclusive scan along d (from the end if `reverse`), by the scan kernel."""
    with autograd.no_grad():
        src = x.contiguous()
    out = empty(x.shape, out_dt, x.device)
    outer, n, inner = _rows(x.shape, d)
    with on(x.device):
        sorting_kernels.scan(op, x.dtype.name, outer, n, inner, _ptr(out), _ptr(src), reverse=reverse)
    return out


@op_table.register("cuda", "cumprod_backward")
def cumprod_backward(x: Tensor, g: Tensor, d: int) -> Tensor:
    """d cumprod(x) / dx applied to g, by the cumprod_backward kernel."""
    with autograd.no_grad():
        xc, gc = x.contiguous(), g.contiguous()
    out = empty(x.shape, x.dtype, x.device)
    outer, n, inner = _rows(x.shape, d)
    with on(x.device):
        sorting_kernels.cumprod_backward(x.dtype.name, outer, n, inner, _ptr(out), _ptr(xc), _ptr(gc))
    return out


# ----------------------------------------------------------------------------------------- indexing
# (see backends/cpu.py for `geom` and `plan`; here `plan.buf` is a (K, nb) int64 tensor on the device and
# `plan.check` says which bounds rule the kernel applies to indices it has not seen checked: 0 none)
@op_table.register("cuda", "index_buffer")
def index_buffer(t: Tensor, idxs: Any, host_rows: list[np.ndarray], bshape: tuple[int, ...]) -> Tensor:
    """The (K, nb) int64 index buffer on t's device: a lone contiguous int64 index tensor as it is, host
    indices in one copy, a mix converted and broadcast by the copy kernel."""
    nb = math.prod(bshape)
    only = idxs[0].dev if len(idxs) == 1 else None
    if only is not None and only.dtype is dt.int64 and only.is_contiguous():
        return only.reshape(1, nb)  # (a mask's nonzero row, or an index tensor: used as it is)
    if all(ix.host is not None for ix in idxs):
        return from_host(np.stack(host_rows), dt.int64, t.device)
    buf = empty((len(idxs), nb), dt.int64, t.device)
    for k, ix in enumerate(idxs):
        src = ix.dev if ix.dev is not None else from_host(ix.host, dt.int64, t.device)
        copy_into(buf[k].view(bshape), src.detach())
    return buf


def _front_strides(geom: Any, st: Any, bshape: tuple[int, ...]) -> list[int]:
    """Strides over (nb, *rest) of a tensor laid out as geom.out_shape with strides `st` (B's dims one run)."""
    nbd = len(bshape)
    b_st = st[geom.b_at + nbd - 1] if nbd else 0
    rest_st = list(st[:geom.b_at]) + list(st[geom.b_at + nbd:])
    return [b_st, *rest_st]


@op_table.register("cuda", "index", "index_select", "masked_select", "take")
def index(t: Tensor, geom: Any, plan: Any) -> Tensor:
    """t[plan] as a new contiguous tensor, by the index_get kernel."""
    out = empty(geom.out_shape, t.dtype, t.device)
    v = geom.view
    with on(t.device):
        indexing_kernels.index_get(t.dtype.name, math.prod(plan.bshape), [v.shape[d] for d in geom.rest], _ptr(out),
                                   _front_strides(geom, out.stride(), plan.bshape), _ptr(v),
                                   [v.stride(d) for d in geom.rest], _ptr(plan.buf), [v.shape[d] for d in geom.dims],
                                   [v.stride(d) for d in geom.dims], plan.check)
    return out


@op_table.register("cuda", "index_put", "index_add", "index_copy", "index_fill", "masked_scatter")
def index_put(t: Tensor, geom: Any, plan: Any, values: Tensor, accumulate: bool) -> None:
    """t[plan] = values (+= with accumulate, atomically) by the index_put kernel; dtypes without an atomic
    add accumulate in a widened copy."""
    if accumulate and t.dtype.name not in indexing_kernels.ATOMIC:
        wide = dt.float32 if t.dtype.is_floating_point else dt.int64
        vw = _cast(geom.view, wide)  # (the indexed view, row-major: the same dims, the same plan)
        index_put(vw, dataclasses.replace(geom, view=vw), plan, _cast(values, wide), True)
        copy_into(geom.view, vw)
        return
    vst = _bstrides(values, geom.out_shape)
    nbd = len(plan.bshape)
    if any(vst[geom.b_at + i] != vst[geom.b_at + i + 1] * plan.bshape[i + 1] for i in range(nbd - 1)):
        values = _cast(values.expand(geom.out_shape), values.dtype)  # B's dims must form one run
        vst = list(values.stride())
    v = geom.view
    with on(t.device):
        indexing_kernels.index_put(t.dtype.name, accumulate, math.prod(plan.bshape), [v.shape[d] for d in geom.rest],
                                   _ptr(v), [v.stride(d) for d in geom.rest], _ptr(values),
                                   _front_strides(geom, vst, plan.bshape), _ptr(plan.buf),
                                   [v.shape[d] for d in geom.dims], [v.stride(d) for d in geom.dims], plan.check)



@op_table.register("cuda", "gather")
def gather(src: Tensor, d: int, ix: Tensor) -> Tensor:
    """out[..i..] = src[..ix[..i..]..] along d, by the gather kernel (which asserts on a bad index)."""
    out = empty(ix.shape, src.dtype, src.device)
    sst = list(_bstrides(src, src.shape))
    sst[d] = 0
    with on(src.device):
        indexing_kernels.gather(src.dtype.name, ix.shape, _ptr(out), out.stride(), _ptr(src), sst, _ptr(ix),
                                ix.stride(), src.shape[d], src.stride(d))
    return out


@op_table.register("cuda", "scatter", "scatter_add")
def scatter(out: Tensor, d: int, ix: Tensor, s: Tensor, accumulate: bool) -> None:
    """out[..ix[..i..]..] = s[..i..] along d in place (+= atomically with accumulate), by the scatter kernel."""
    _scatter_mode(out, d, ix, s, int(accumulate))


_REDUCE_MODE = {"prod": 2, "amax": 3, "amin": 4}


@op_table.register("cuda", "scatter_reduce")
def scatter_reduce(out: Tensor, d: int, ix: Tensor, s: Tensor, reduce: str) -> None:
    """out[..ix[..i..]..] = reduce(that, s[..i..]) along d in place, atomically (compare-and-swap loops)."""
    _scatter_mode(out, d, ix, s, _REDUCE_MODE[reduce])


def _scatter_mode(out: Tensor, d: int, ix: Tensor, s: Tensor, mode: int) -> None:
    """The scatter kernel in `mode` (0 store, 1 add, 2 multiply, 3 max, 4 min); an accumulating mode on a dtype
    without 32/64-bit atomics works in a widened copy (float32 or int64) written back."""
    if mode and out.dtype.name not in indexing_kernels.ATOMIC:
        wide = dt.float32 if out.dtype.is_floating_point else dt.int64
        ow = _cast(out, wide)
        _scatter_mode(ow, d, ix, _cast(s, wide), mode)
        copy_into(out, ow)
        return
    ost = list(out.stride())
    ost[d] = 0
    sst = [0] * ix.dim() if s.dim() == 0 else list(s.stride())
    with on(out.device):
        indexing_kernels.scatter(out.dtype.name, mode, ix.shape, _ptr(out), ost, _ptr(s), sst, _ptr(ix),
                                 ix.stride(), out.shape[d], out.stride(d))


@op_table.register("cuda", "masked_fill")
def masked_fill(cond: Tensor, a: Tensor, b: Tensor, res: dt.dtype, shape: Any) -> Tensor:
    """value (a, 0-dim) where mask else input (b): the where kernel."""
    return where(cond, a, b, res, shape)


@op_table.register("cuda", "tril", "triu")
def tri(x: Tensor, diagonal: int, upper: bool) -> Tensor:
    """The lower (upper) triangle of the last two dims, zeros elsewhere, by the tri kernel."""
    out = empty(x.shape, x.dtype, x.device)
    with on(x.device):
        indexing_kernels.tri(x.dtype.name, upper, int(diagonal), x.shape, _ptr(out), out.stride(), _ptr(x),
                             x.stride())
    return out


@op_table.register("cuda", "nonzero")
def nonzero(x: Tensor, transpose: bool) -> Tensor:
    """The coordinates of x's nonzero elements in row-major order ((ndim, n) if transpose else (n, ndim)):
    a scan kernel numbers them, the count is read back (the one host sync, as PyTorch's), a second kernel
    writes them."""
    nd, n = x.dim(), x.numel()
    pos = empty((n + 1,), dt.int64, x.device)
    with on(x.device):
        indexing_kernels.nonzero_scan(x.dtype.name, x.shape, _ptr(pos), _ptr(x), x.stride())
    count = int(pos[n].item())
    out = empty((nd, count) if transpose else (count, nd), dt.int64, x.device)
    if count and nd:
        with on(x.device):
            indexing_kernels.nonzero_write(x.dtype.name, x.shape, _ptr(out), _ptr(pos), 1 if transpose else nd,
                                           count if transpose else 1)
    return out


# ----------------------------------------------------------------------------------------- joining
@op_table.register("cuda", "cat", "stack")
def cat(out: Tensor, tensors: list[Tensor], d: int) -> None:
    """Each tensor written into its slice of `out` along d (converted to out's dtype) by the copy kernel."""
    start = 0
    with autograd.no_grad():
        for t in tensors:
            n = t.shape[d]
            copy_into(out[(slice(None),) * d + (slice(start, start + n),)], t)
            start += n


# ----------------------------------------------------------------------------------------- nn: activations
def _act(mode: str, x: Tensor, g: Tensor | None = None) -> Tensor:
    """act(x), or g * act'(x) when g is given (x, g row-major), by strata.libs.dnn's activation routines;
    float64, which the library does not take, by the framework's nn kernels."""
    out = empty(x.shape, x.dtype, x.device)
    with on(x.device):
        if x.dtype is dt.float64:
            if g is None:
                nn_kernels.activation_f64(mode, _ptr(x), _ptr(out), x.numel())
            else:
                nn_kernels.activation_backward_f64(mode, _ptr(x), _ptr(g), _ptr(out), x.numel())
        elif g is None:
            library("dnn").activation_forward(library_handle("dnn", x.device), mode, device_array(x), device_array(out))
        else:
            library("dnn").activation_backward(library_handle("dnn", x.device), mode, device_array(x), device_array(g),
                                               device_array(out))
    return out


@op_table.register("cuda", "activation")
def activation(mode: str, x: Tensor, save: bool) -> tuple[Tensor, Any]:
    """(act(x), x row-major for the backward)."""
    xc = x.detach().contiguous()
    return _act(mode, xc), xc


@op_table.register("cuda", "activation_backward")
def activation_backward(mode: str, saved: Tensor, g: Tensor, dtype: dt.dtype) -> Tensor:
    """g * act'(x) (g converted to dtype) from the x `activation` saved."""
    return _act(mode, saved, (g if g.dtype is dtype else _cast(g, dtype)).contiguous())


# ----------------------------------------------------------------------------------------- nn: losses
@op_table.register("cuda", "class_index_check")
def class_index_check(t: Tensor, c: int, ignore_index: int) -> None:
    """Every class index of t that is not ignore_index in [0, c), checked by a kernel: a bad one is a
    device-side assertion (`t >= 0 && t < n_classes`, PyTorch's text) that surfaces at the next
    synchronizing call. No host sync, as in PyTorch."""
    t = t.detach()
    t = t.contiguous() if t.dtype is dt.int64 else _cast(t, dt.int64)
    with on(t.device):
        indexing_kernels.check_targets(_ptr(t), t.numel(), c, ignore_index)


_DNN_FLOATS = (dt.float32, dt.float16, dt.bfloat16)


@op_table.register("cuda", "cross_entropy")
def cross_entropy(x: Tensor, t: Tensor, ignore_index: int, ls: float, reduction: str) -> tuple[Tensor, Any] | None:
    """Cross-entropy of (M, C) logits and (M,) class indices by strata.libs.dnn's fused routine (in
    float32): (loss, backward g -> d loss / dx); None for float64, which the library does not take."""
    if x.dtype not in _DNN_FLOATS:
        return None
    dev, h, lib = x.device, library_handle("dnn", x.device), library("dnn")

    def f32(u: Tensor) -> Tensor:
        u = u.detach()
        return _cast(u, dt.float32) if u.dtype is not dt.float32 else u.contiguous()
    xc, tc = f32(x), (t if t.dtype is dt.int64 else _cast(t, dt.int64)).detach().contiguous()
    kw = {"ignore_index": ignore_index, "label_smoothing": float(ls), "reduction": reduction}
    loss = empty((x.shape[0],) if reduction == "none" else (), dt.float32, dev)
    with on(dev):
        lib.cross_entropy_forward(h, device_array(xc), device_array(tc), device_array(loss), **kw)

    def backward(g: Tensor) -> Tensor:
        dx = empty(xc.shape, dt.float32, dev)
        with on(dev):
            lib.cross_entropy_backward(h, device_array(xc), device_array(tc), device_array(f32(g)), device_array(dx),
                                       **kw)
        return dx if x.dtype is dt.float32 else _cast(dx, x.dtype)
    return (loss if x.dtype is dt.float32 else _cast(loss, x.dtype)), backward


# ----------------------------------------------------------------------------------------- nn: dropout
@op_table.register("cuda", "dropout")
def dropout(x: Tensor, p: float, seed: int, offset: int) -> tuple[Tensor, Any]:
    """(x * keep / (1 - p), backward g -> g * the same) by strata.libs.dnn's dropout kernels, the mask drawn
    from a strata.libs.rand Philox generator at (seed, offset); float64, which dnn does not take, as x
    times the scaled keep mask dnn writes for a tensor of ones."""
    dev, h, lib = x.device, library_handle("dnn", x.device), library("dnn")
    gen = library("rand").create_generator(seed, offset)
    src = x.detach().contiguous() if x.dtype in _DNN_FLOATS else full(x.shape, 1.0, dt.float32, dev)
    y = empty(src.shape, src.dtype, dev)
    mask = empty(src.shape, dt.uint8, dev)
    with on(dev):
        lib.dropout_forward(h, device_array(src), device_array(y), device_array(mask), p, gen)
    if x.dtype not in _DNN_FLOATS:
        scaled = y if y.dtype is x.dtype else _cast(y, x.dtype)
        return (binary("mul", x.detach(), scaled, x.dtype, x.dtype, dev),
                lambda g: binary("mul", g, scaled, x.dtype, x.dtype, dev))

    def backward(g: Tensor) -> Tensor:
        gc = (g if g.dtype is x.dtype else _cast(g, x.dtype)).detach().contiguous()
        dx = empty(gc.shape, x.dtype, dev)
        with on(dev):
            lib.dropout_backward(h, device_array(gc), device_array(mask), device_array(dx), p)
        return dx
    return y, backward


# ----------------------------------------------------------------------------------------- nn: embedding
@op_table.register("cuda", "embedding")
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None) -> tuple[Tensor, Any] | None:  # noqa: A002
    """(weight's rows at input, backward g -> d weight) by strata.libs.dnn's embedding kernels (in float32);
    None for float64, which the library does not take."""
    if weight.dtype is dt.float64:
        return None
    v, dd = weight.shape
    dev, h, lib = weight.device, library_handle("dnn", weight.device), library("dnn")

    def f32(u: Tensor) -> Tensor:
        u = u.detach()
        return _cast(u, dt.float32) if u.dtype is not dt.float32 else u.contiguous()
    idx = input.detach().contiguous()
    out = empty((*input.shape, dd), dt.float32, dev)
    with on(dev):
        lib.embedding_forward(h, device_array(f32(weight)), device_array(idx), device_array(out))

    def backward(g: Tensor) -> Tensor:
        dw = empty((v, dd), dt.float32, dev)
        with on(dev):
            lib.embedding_backward(h, device_array(f32(g)), device_array(idx), device_array(dw),
                                   padding_idx=padding_idx)
        return dw if weight.dtype is dt.float32 else _cast(dw, weight.dtype)
    return (out if weight.dtype is dt.float32 else _cast(out, weight.dtype)), backward


# ----------------------------------------------------------------------------------------- nn: softmax
def _to_rows(t: Tensor, d: int) -> Tensor:
    """t as C-contiguous rows along d (d moved last; a 0-dim t as one row of one), without autograd."""
    with autograd.no_grad():
        if t.dim() == 0:
            return t.reshape(1)
        if d != t.dim() - 1:
            t = t.transpose(d, -1)
        return t.contiguous()


def _from_rows(r: Tensor, like: Tensor, d: int) -> Tensor:
    """Undo `_to_rows`: a contiguous tensor of like's shape."""
    with autograd.no_grad():
        if like.dim() == 0:
            return r.reshape(())
        if d != like.dim() - 1:
            r = r.transpose(d, -1).contiguous()
        return r.detach()


@op_table.register("cuda", "softmax", "log_softmax")
def softmax(op: str, x: Tensor, d: int) -> tuple[Tensor, Any] | None:
    """softmax / log_softmax of x along d by strata.libs.dnn's fused row kernels, with their fused backward
    (which reads the output's rows); None for float64, which the library does not take."""
    if x.dtype not in _DNN_FLOATS:
        return None
    log = op == "log_softmax"
    rows = _to_rows(x, d)
    saved = empty(rows.shape, x.dtype, x.device)
    with on(x.device):
        library("dnn").softmax_forward(library_handle("dnn", x.device), device_array(rows), device_array(saved),
                                       log=log)

    def backward(g: Tensor) -> Tensor:
        gm = _to_rows(g, d)
        dx = empty(gm.shape, g.dtype, g.device)
        with on(g.device):
            library("dnn").softmax_backward(library_handle("dnn", g.device), device_array(saved), device_array(gm),
                                            device_array(dx), log=log)
        return _from_rows(dx, x, d)
    return _from_rows(saved, x, d), backward
