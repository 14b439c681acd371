"""The "cuda" backend: the op table's elementwise ops as launches of the framework's CUDA C++ kernels
(`kernels/`) on the tensors' virtual GPU. Nothing is computed on the host.

Kernel signatures are those of the cpu backend (see backends/cpu.py).
"""

from __future__ import annotations

import math
from typing import Any

from strata.framework import autograd, kernels, op_table
from strata.framework import dtypes as dt
from strata.framework.device import device, on
from strata.framework.handles import library, library_handle
from strata.framework.kernels import sorting as sorting_kernels
from strata.framework.ops import _as_tensor, _bstrides, _cast, _ptr, _torch_name, broadcast_shapes, empty, fill_, full
from strata.framework.tensor import Tensor, contiguous_strides


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
           out_dt: dt.dtype) -> tuple[Tensor, Tensor | None]:
    """op over `dims` by the reduction kernel: one block per kept element (values, and the indices of
    max / min)."""
    values = empty(out_shape, out_dt, x.device)
    indices = empty(out_shape, dt.int64, x.device) if op in ("max", "min") else None
    kept = [i for i in range(x.dim()) if i not in dims]
    with on(x.device):
        kernels.reduce(op, x.dtype.name, kept_shape, _ptr(values), contiguous_strides(kept_shape),
                       _ptr(indices) if indices is not None else 0, [x.stride(i) for i in kept],
                       [x.shape[i] for i in dims], [x.stride(i) for i in dims], _ptr(x))
    return values, indices


# ----------------------------------------------------------------------------------------- matrix products
@op_table.register("cuda", "mm")
def mm(a: Tensor, b: Tensor, batch: tuple[int, ...], m: int, k: int, n: int) -> Tensor:
    """(..., m, k) @ (..., k, n) with broadcast batch dims, by strata.libs.blas."""
    with autograd.no_grad():
        ab = a.expand(*batch, m, k).reshape(-1, m, k)
        bb = b.expand(*batch, k, n).reshape(-1, k, n)
        out = _mm_cuda(ab, bb).reshape(*batch, m, n)
    out.grad_fn, out._requires_grad = None, False
    return out


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
