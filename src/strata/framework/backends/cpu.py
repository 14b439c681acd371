"""The "cpu" backend: NumPy kernels for the op table's elementwise ops. Half and bfloat16 compute in
float32 (`_opmath`), as PyTorch's CPU kernels do; results wrap the fresh NumPy array without a copy.

Each kernel takes the operands the front function (ops.py) has checked, and the dtypes its promotion
rule chose: unary `(op, x, out_dtype)`, binary `(op, a, b, compute_dtype, out_dtype, device)` where
`a`/`b` may be Python numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from strata.framework import dtypes as dt
from strata.framework import kernels, op_table, random
from strata.framework.device import CPU, device
from strata.framework.ops import _opmath, broadcast_shapes, from_host
from strata.framework.quiet import quiet
from strata.framework.tensor import Tensor, from_array

_ndarray = np.ndarray


def wrap(r: Any, dtype: dt.dtype, *, fresh: bool = False) -> Tensor:
    """A cpu tensor of `dtype` over the result array `r` of a NumPy computation (no copy when `r` is a
    fresh array of that dtype; a copy when it might alias an input, unless the caller says it is `fresh`)."""
    a = r if r.__class__ is _ndarray else np.asarray(r)
    if a.dtype != dtype.np:
        a = quiet(a.astype, dtype.np)  # out-of-range casts wrap or saturate as in C, silently as in PyTorch
    elif not a.flags.c_contiguous or (a.base is not None and not fresh):
        return from_host(a, dtype, CPU)
    if not a.flags.c_contiguous:  # (astype keeps a strided input's layout)
        return from_host(a, dtype, CPU)
    return from_array(a, dtype)


def _operand(x: Any, dtype: dt.dtype) -> np.ndarray:
    """A host array of `x` (a cpu tensor or a Python number) as `dtype`, in its compute type."""
    if isinstance(x, Tensor):
        h = x._host()
        return _opmath(h if h.dtype == dtype.np else h.astype(dtype.np))
    return _opmath(quiet(np.asarray(x).astype, dtype.np))


# ----------------------------------------------------------------------------------------- unary
def _erf_np(x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)


def _erfinv_np(y: np.ndarray) -> np.ndarray:
    """erf^-1 by Giles' single-precision approximation, polished with Newton steps in float64."""
    y64 = y.astype(np.float64)
    w = -np.log((1.0 - y64) * (1.0 + y64))
    small = w < 5.0
    ws, wl = w - 2.5, np.sqrt(np.abs(w)) - 3.0
    ps = np.polyval([2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941], ws)
    pl = np.polyval([-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                     -0.0076224613, 0.00943887047, 1.00167406, 2.83297682], wl)
    x = np.where(small, ps, pl) * y64
    for _ in range(3):
        x = x - (_erf_np(x) - y64) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    x = np.where(np.abs(y64) == 1, np.copysign(np.inf, y64), x)
    return np.where(np.abs(y64) > 1, np.nan, x).astype(y.dtype)


def _gelu_np(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + _erf_np(x * np.asarray(0.7071067811865476, x.dtype)))


def _gelu_tanh_np(x: np.ndarray) -> np.ndarray:
    k = np.asarray(0.7978845608028654, x.dtype)
    return 0.5 * x * (1 + np.tanh(k * (x + np.asarray(0.044715, x.dtype) * x * x * x)))


UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "relu": lambda x: np.maximum(x, np.zeros((), x.dtype)),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "tanh": np.tanh, "sign": np.sign, "reciprocal": lambda x: 1 / x,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "log1p": np.log1p, "expm1": np.expm1, "log2": np.log2, "log10": np.log10, "exp2": np.exp2, "erf": _erf_np,
    "erfinv": _erfinv_np, "silu": lambda x: x / (1 + np.exp(-x)), "gelu": _gelu_np, "gelu_tanh": _gelu_tanh_np,
    "floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc, "frac": lambda x: x - np.trunc(x),
}


@op_table.register("cpu", *UNARY)
def unary(op: str, x: Tensor, out_dt: dt.dtype) -> Tensor:
    """out = op(x) in out_dt (the input converted to out_dt first)."""
    h = x._host()
    r = quiet(UNARY[op], _opmath(h if h.dtype == out_dt.np else h.astype(out_dt.np)))
    return wrap(r, out_dt)


@op_table.register("cpu", "logical_not")
def logical_not(op: str, x: Tensor, out_dt: dt.dtype) -> Tensor:
    """not x (nonzero is true)."""
    return wrap(np.logical_not(x._host()), out_dt)


# ----------------------------------------------------------------------------------------- binary
BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum, "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "fmod": np.fmod, "remainder": np.remainder, "floor_divide": np.floor_divide, "atan2": np.arctan2,
    "hypot": np.hypot, "copysign": np.copysign, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
}


_HALVES = (dt.float16, dt.bfloat16)


def _scalar(x: Any, np_dtype: np.dtype) -> Any:
    """A Python float or int as a NumPy scalar of `np_dtype` (what `_operand` gives as a 0-dim array,
    at a fraction of the cost), or None where that could differ from `_operand`'s conversion."""
    kind, k = x.__class__, np_dtype.kind
    # (a float rounds once, as astype rounds it; so does an int that a double holds exactly; an int out of
    # an integral type's range raises here and goes the long way, which wraps it as C does)
    if kind is float and k == "f" or kind is int and (k in "iu" or k == "f" and -_EXACT <= x <= _EXACT):
        try:
            return quiet(np_dtype.type, x)
        except OverflowError:
            return None
    return None


_EXACT = 2 ** 53


@op_table.register("cpu", *BINARY)
def binary(op: str, a: Any, b: Any, compute: dt.dtype, out_dt: dt.dtype, dev: device, *,
           out: Tensor | None = None) -> Tensor:
    """out = a op b, broadcast, computed in `compute`, stored as out_dt (in a new tensor, or written into
    `out`, a tensor of the broadcast shape and of dtypes compute = out_dt: ops.binary_into)."""
    cnp = compute.np
    # the common operands first: tensors already of the compute dtype (their own arrays) and Python
    # numbers; anything else (another dtype, the half types computing in float32) through _operand
    if isinstance(a, Tensor):
        ha = a._host()
        if isinstance(b, Tensor):
            hb = b._host()
            if a._shape != b._shape:
                broadcast_shapes(a._shape, b._shape)  # PyTorch's error for shapes that don't broadcast
        else:
            hb = _scalar(b, cnp)
    else:
        ha, hb = _scalar(a, cnp), b._host()
    if compute in _HALVES or ha is None or ha.dtype != cnp:
        ha = _operand(a, compute)
    if compute in _HALVES or hb is None or hb.dtype != cnp:
        hb = _operand(b, compute)
    if op in kernels.DIVMOD and not compute.is_floating_point and (hb == 0).any():
        raise RuntimeError("ZeroDivisionError")
    if out is not None:  # (NumPy computes overlapping operands as if through a copy, as `inplace` does)
        quiet(BINARY[op], ha, hb, out._host())
        return out
    r = quiet(BINARY[op], ha, hb)
    if r.__class__ is _ndarray and r.dtype == out_dt.np and r.flags.c_contiguous:
        return from_array(r, out_dt)  # (a ufunc's result is fresh: wrap's checks, done)
    return wrap(r, out_dt)


# ----------------------------------------------------------------------------------------- selection
@op_table.register("cpu", "where")
def where(cond: Tensor, a: Tensor, b: Tensor, res: dt.dtype, shape: Any) -> Tensor:
    """out = a where cond else b (a, b already of dtype res), broadcast."""
    return wrap(np.where(cond._host(), a._host(), b._host()), res)


@op_table.register("cpu", "isnan", "isinf", "isfinite")
def predicate(op: str, x: Tensor) -> Tensor:
    """isnan / isinf / isfinite of a floating tensor."""
    return wrap(getattr(np, op)(_opmath(x._host())), dt.bool_)


@op_table.register("cpu", "nan_to_num")
def nan_to_num(x: Tensor, nan: float, posinf: float, neginf: float) -> Tensor:
    """x with NaN, +inf and -inf replaced (x floating)."""
    a = _opmath(x._host())
    return wrap(np.where(np.isnan(a), nan, np.where(np.isposinf(a), posinf, np.where(np.isneginf(a), neginf, a))),
                x.dtype)


@op_table.register("cpu", "bitwise_not")
def bitwise_not(x: Tensor) -> Tensor:
    """~x (integral), not x (bool)."""
    return wrap(np.invert(x._host()), x.dtype)


# ----------------------------------------------------------------------------------------- primitives
@op_table.register("cpu", "fill")
def fill(t: Tensor, value: Any) -> None:
    """Every element of the (possibly strided) view t = value, converted as C converts."""
    with np.errstate(all="ignore"):
        t._host()[...] = np.asarray(value).astype(t.dtype.np)


@op_table.register("cpu", "copy")
def copy(dst: Tensor, src: Tensor, shape: Any) -> None:
    """dst[...] = src, broadcast and converted (copyto converts while copying: no temporary of dst's size)."""
    d, h = dst._host(), src._host()
    if d.dtype == h.dtype:  # (no conversion, nothing to warn about)
        np.copyto(d, h)
    else:
        quiet(np.copyto, d, h, "unsafe")


# ----------------------------------------------------------------------------------------- reductions
@op_table.register("cpu", "sum", "mean", "prod", "max", "min")
def reduce(op: str, x: Tensor, dims: list[int], out_shape: list[int], kept_shape: list[int],
           out_dt: dt.dtype) -> tuple[Tensor, Tensor | None]:
    """op over `dims` with NumPy: (values, indices for max / min). Sums accumulate in float32 (float64
    for float64, int64 for integers); max / min return the first index of the extreme, NaN winning."""
    a = _opmath(x._host())
    axis = tuple(dims)
    idx = None
    if op == "sum" or op == "mean":  # (the common case, without an errstate block: quiet's is cheaper)
        acc = np.float64 if a.dtype == np.float64 else np.float32 if a.dtype.kind == "f" else np.int64
        # (into an array of the output's shape: a full reduction would otherwise give a NumPy scalar)
        r = np.empty(out_shape, acc)
        quiet(a.sum if op == "sum" else a.mean, axis, acc, r, len(out_shape) == a.ndim)
        return wrap(r, out_dt, fresh=True), None
    with np.errstate(all="ignore"):
        if op == "prod":
            r = np.prod(a, axis=axis, dtype=a.dtype if a.dtype.kind == "f" else np.int64)
        else:
            moved = np.moveaxis(a, dims, list(range(x.dim() - len(dims), x.dim()))).reshape(*kept_shape, -1)
            idx = (np.argmax if op == "max" else np.argmin)(moved, axis=-1)
            nan = np.isnan(moved) if moved.dtype.kind == "f" else np.zeros(moved.shape, bool)
            idx = np.where(nan.any(axis=-1), nan.argmax(axis=-1), idx)
            r = np.take_along_axis(moved, idx[..., None], -1)[..., 0]
    # (r and idx are new arrays: their reshaped views alias nothing of x's)
    values = wrap(np.asarray(r).reshape(out_shape), out_dt, fresh=True)
    return values, (wrap(np.asarray(idx).reshape(out_shape), dt.int64, fresh=True) if idx is not None else None)


# ----------------------------------------------------------------------------------------- matrix products
@op_table.register("cpu", "mm")
def mm(a: Tensor, b: Tensor, batch: tuple[int, ...], m: int, k: int, n: int) -> Tensor:
    """(..., m, k) @ (..., k, n) with broadcast batch dims, by NumPy's matmul (BLAS)."""
    return wrap(np.matmul(_opmath(a._host()), _opmath(b._host())), a.dtype, fresh=True)


# ----------------------------------------------------------------------------------------- sequences
@op_table.register("cpu", "arange")
def arange(d: dt.dtype, dev: device, n: int, start: Any, step: Any) -> Tensor:
    """start + i * step for i < n, in float64 (floating d) or int64, then converted to d."""
    if d.is_floating_point:
        return wrap(start + np.arange(n, dtype=np.float64) * step, d)
    return wrap(start + np.arange(n, dtype=np.int64) * int(step), d)


@op_table.register("cpu", "linspace")
def linspace(d: dt.dtype, dev: device, steps: int, start: float, step: float, end: float) -> Tensor:
    """`steps` values from start to end, the first half counted from start and the second from end (ATen)."""
    i = np.arange(steps, dtype=np.float64)
    host = np.where(i < steps // 2, start + i * step, end - (steps - 1 - i) * step) if steps > 1 \
        else np.full(steps, float(start))
    return wrap(host, d)


# ----------------------------------------------------------------------------------------- sorting and scans
def _rows(shape: Any, d: int) -> tuple[int, int, int]:
    """(outer, n, inner) of a contiguous tensor of `shape` seen as rows along dim d."""
    if not shape:
        return 1, 1, 1
    return math.prod(shape[:d]), shape[d], math.prod(shape[d + 1:])


@op_table.register("cpu", "sort")
def sort(x: Tensor, d: int, descending: bool) -> tuple[Tensor, Tensor]:
    """(values, indices) of a stable sort along d (x at least 1-D)."""
    a = x._host()
    key = _opmath(a)
    if descending:  # a stable ascending sort of the reversed row, reversed back, keeps ties in order
        rev = np.flip(key, d)
        idx = np.flip(np.argsort(rev, axis=d, kind="stable"), d)
        idx = x.shape[d] - 1 - idx
    else:
        idx = np.argsort(key, axis=d, kind="stable")
    return from_host(np.take_along_axis(a, idx, d), x.dtype, CPU), from_host(idx, dt.int64, CPU)


@op_table.register("cpu", "sort_backward")
def sort_backward(g: Tensor, indices: Tensor, d: int, shape: Any) -> Tensor:
    """zeros(shape) with g put at `indices` along d."""
    z = np.zeros(tuple(shape), g.dtype.np)
    np.put_along_axis(z, indices._host(), g._host(), d)
    return wrap(z, g.dtype, fresh=True)


@op_table.register("cpu", "cumsum", "cumprod")
def scan(op: str, x: Tensor, d: int, reverse: bool, out_dt: dt.dtype) -> Tensor:
    """Inclusive scan along d (from the end if `reverse`); PyTorch's CPU scans accumulate float32 in
    double, half and bfloat16 in float."""
    a = x._host()
    if a.ndim == 0:
        a = a.reshape(1)
    acc = {dt.float32: np.float64, dt.float64: np.float64, dt.float16: np.float32, dt.bfloat16: np.float32}
    a = a.astype(acc.get(x.dtype, np.int64))
    if reverse:
        a = np.flip(a, d)
    with np.errstate(all="ignore"):
        r = np.cumsum(a, axis=d) if op == "sum" else np.cumprod(a, axis=d)
    if reverse:
        r = np.flip(r, d)
    return from_host(r.reshape(x.shape), out_dt, CPU)


@op_table.register("cpu", "cumprod_backward")
def cumprod_backward(x: Tensor, g: Tensor, d: int) -> Tensor:
    """d cumprod(x) / dx applied to g, exact where x has zeros (in float64)."""
    a, gh = _opmath(x._host()).reshape(_rows(x.shape, d)), _opmath(g._host()).reshape(_rows(x.shape, d))
    a, gh = a.astype(np.float64), gh.astype(np.float64)
    r = np.empty_like(gh)
    n = a.shape[1]
    with np.errstate(all="ignore"):
        for i in range(n - 1, -1, -1):  # r_i = g_i + x_{i+1} r_{i+1}
            r[:, i] = gh[:, i] if i == n - 1 else gh[:, i] + a[:, i + 1] * r[:, i + 1]
        excl = np.cumprod(np.concatenate([np.ones_like(a[:, :1]), a[:, :-1]], axis=1), axis=1)
        res = excl * r
    return from_host(res.reshape(x.shape), x.dtype, CPU)


# ----------------------------------------------------------------------------------------- indexing
# (indexing.py parses the index into a plan: `geom` is the view indexed, its index dims `dims` and the
# result's shape `out_shape`; `plan.buf` the (K, nb) int64 host array of in-range indices, `plan.bshape`
# their broadcast shape)
@op_table.register("cpu", "index_buffer")
def index_buffer(t: Tensor, idxs: Any, host_rows: list[np.ndarray], bshape: tuple[int, ...]) -> np.ndarray:
    """The index rows as one (K, nb) host array (indices of a cpu tensor are all on the host)."""
    return np.stack(host_rows) if host_rows else np.zeros((0, math.prod(bshape)), np.int64)


def _selection(geom: Any, plan: Any) -> tuple[Any, ...]:
    """NumPy's advanced index for the plan: each index dim its (bshape) index array, the others `:`."""
    nb = math.prod(plan.bshape)
    sel: list[Any] = [slice(None)] * geom.view.dim()
    for k, d in enumerate(geom.dims):
        sel[d] = plan.buf[k].reshape(plan.bshape) if nb else np.zeros(plan.bshape, np.int64)
    return tuple(sel)


@op_table.register("cpu", "index", "index_select", "masked_select", "take")
def index(t: Tensor, geom: Any, plan: Any) -> Tensor:
    """t[plan] as a new contiguous tensor, by NumPy's advanced indexing."""
    a = geom.view._host()
    # (advanced indexing gives a fresh array: wrapped without another copy)
    return wrap(np.ascontiguousarray(a[_selection(geom, plan)]).reshape(geom.out_shape), t.dtype, fresh=True)


@op_table.register("cpu", "index_put", "index_add", "index_copy", "index_fill", "masked_scatter")
def index_put(t: Tensor, geom: Any, plan: Any, values: Tensor, accumulate: bool) -> None:
    """t[plan] = values (+= with accumulate: repeated indices add up, half types in float32, bool as or)."""
    a = geom.view._host()
    sel = _selection(geom, plan)
    v = np.broadcast_to(values._host(), geom.out_shape)
    if not accumulate:
        a[sel] = v
    elif a.dtype in _HALF_NP:
        acc = a.astype(np.float32)
        np.add.at(acc, sel, v.astype(np.float32))
        a[...] = acc.astype(a.dtype)
    elif a.dtype == np.bool_:
        np.logical_or.at(a, sel, v)
    else:
        np.add.at(a, sel, v)


_HALF_NP = (np.dtype(np.float16), dt.bfloat16.np)


@op_table.register("cpu", "gather")
def gather(src: Tensor, d: int, ix: Tensor) -> Tensor:
    """out[..i..] = src[..ix[..i..]..] along d (src, ix at least 1-D, ix in range), out of ix's shape."""
    a = src._host()[tuple(slice(None) if k == d else slice(0, n) for k, n in enumerate(ix.shape))]
    r = np.take_along_axis(a, ix._host(), d) if ix.numel() else np.zeros(ix.shape, src.dtype.np)
    return from_host(r, src.dtype, src.device)


@op_table.register("cpu", "scatter", "scatter_add")
def scatter(out: Tensor, d: int, ix: Tensor, s: Tensor, accumulate: bool) -> None:
    """out[..ix[..i..]..] = s[..i..] along d in place (+= with accumulate; s may be 0-dim: a value)."""
    a = out._host()
    coords: list[Any] = list(np.indices(ix.shape, sparse=True))
    coords[d] = ix._host()
    sv = np.broadcast_to(s._host(), ix.shape) if s.dim() == 0 else s._host()[tuple(slice(0, n) for n in ix.shape)]
    if accumulate:
        np.add.at(a, tuple(coords), sv)
    else:
        a[tuple(coords)] = sv


_REDUCE_UFUNC = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum}  # (maximum/minimum propagate NaN)


@op_table.register("cpu", "scatter_reduce")
def scatter_reduce(out: Tensor, d: int, ix: Tensor, s: Tensor, reduce: str) -> None:
    """out[..ix[..i..]..] = reduce(that, s[..i..]) along d in place, in index order (NumPy's ufunc.at)."""
    coords: list[Any] = list(np.indices(ix.shape, sparse=True))
    coords[d] = ix._host()
    sv = s._host()[tuple(slice(0, n) for n in ix.shape)]
    with np.errstate(all="ignore"):
        _REDUCE_UFUNC[reduce].at(out._host(), tuple(coords), sv)


@op_table.register("cpu", "masked_fill")
def masked_fill(cond: Tensor, a: Tensor, b: Tensor, res: dt.dtype, shape: Any) -> Tensor:
    """value (a, 0-dim) where mask else input (b): the where kernel."""
    return where(cond, a, b, res, shape)


@op_table.register("cpu", "tril", "triu")
def tri(x: Tensor, diagonal: int, upper: bool) -> Tensor:
    """The lower (upper) triangle of the last two dims, zeros elsewhere."""
    return from_host((np.triu if upper else np.tril)(x._host(), diagonal), x.dtype, x.device)


@op_table.register("cpu", "nonzero")
def nonzero(x: Tensor, transpose: bool) -> Tensor:
    """The coordinates of x's nonzero elements in row-major order: (ndim, n) if transpose else (n, ndim)."""
    nd = x.dim()
    a = np.argwhere(x._host()) if nd else np.zeros((int(bool(x._host())), 0), np.int64)
    a = a.astype(np.int64)
    return from_host(a.T if transpose else a, dt.int64, x.device)


# ----------------------------------------------------------------------------------------- joining
@op_table.register("cpu", "cat", "stack")
def cat(out: Tensor, tensors: list[Tensor], d: int) -> None:
    """Each tensor written into its slice of `out` along d (converted to out's dtype), by one concatenate."""
    o = out._host()
    quiet(lambda: np.concatenate([t._host() for t in tensors], axis=d, out=o, casting="unsafe"))


# ----------------------------------------------------------------------------------------- nn: activations
def _erf_fast(a: np.ndarray) -> np.ndarray:
    try:
        from scipy.special import erf  # type: ignore[import-untyped]  # NOTE: optional fast path; scipy is not a core dependency
        return np.asarray(erf(a), a.dtype)
    except ImportError:  # pragma: no cover - scipy ships with the test extras
        return np.vectorize(math.erf, otypes=[a.dtype])(a)


def _sigm(a: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-a))


_K = math.sqrt(2 / math.pi)


def _act(mode: str, a: np.ndarray) -> np.ndarray:
    if mode == "relu":
        return np.maximum(a, 0)
    if mode == "sigmoid":
        return _sigm(a)
    if mode == "tanh":
        return np.tanh(a)
    if mode == "gelu":
        return 0.5 * a * (1 + _erf_fast(a / math.sqrt(2)))
    if mode == "gelu_tanh":
        return 0.5 * a * (1 + np.tanh(_K * (a + 0.044715 * a ** 3)))
    return a * _sigm(a)  # silu


def _dact(mode: str, a: np.ndarray) -> np.ndarray:
    if mode == "sigmoid":
        s = _sigm(a)
        return s * (1 - s)
    if mode == "tanh":
        t = np.tanh(a)
        return 1 - t * t
    if mode == "gelu":
        return 0.5 * (1 + _erf_fast(a / math.sqrt(2))) + a * np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
    if mode == "gelu_tanh":
        t = np.tanh(_K * (a + 0.044715 * a ** 3))
        return 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * _K * (1 + 3 * 0.044715 * a * a)
    s = _sigm(a)  # silu
    return s * (1 + a * (1 - s))


@op_table.register("cpu", "activation")
def activation(mode: str, x: Tensor, save: bool) -> tuple[Tensor, Any]:
    """(act(x), what the backward needs when `save`): for relu the mask x > 0 (a quarter of x's bytes,
    and a later in-place change to x can't change the gradient), for the others a copy of x."""
    xa = _opmath(x.detach()._host())
    out = wrap(quiet(_act, mode, xa), x.dtype, fresh=True)
    if not save:
        return out, None
    return out, (np.greater(xa, 0) if mode == "relu" else xa.copy())


@op_table.register("cpu", "activation_backward")
def activation_backward(mode: str, saved: Any, g: Tensor, dtype: dt.dtype) -> Tensor:
    """g * act'(x) from what `activation` saved (g * mask for relu: NaN * 0 as floats give it), in dtype."""
    ga = _opmath(g._host())
    r = quiet(np.multiply, ga, saved) if mode == "relu" else quiet(lambda: ga * _dact(mode, saved))
    return wrap(r, dtype, fresh=True)


# ----------------------------------------------------------------------------------------- nn: losses
def _target_check(t: np.ndarray, c: int, ignore_index: int) -> None:
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds.")


@op_table.register("cpu", "class_index_check")
def class_index_check(t: Tensor, c: int, ignore_index: int) -> None:
    """Every class index of t that is not ignore_index in [0, c), else PyTorch's IndexError."""
    _target_check(t._host(), c, ignore_index)


@op_table.register("cpu", "cross_entropy")
def cross_entropy(x: Tensor, t: Tensor, ignore_index: int, ls: float, reduction: str) -> tuple[Tensor, Any]:
    """Cross-entropy of (M, C) logits and (M,) class indices in one pass of NumPy (half types in float32):
    (loss, backward g -> d loss / dx)."""
    m, c = x.shape
    a = _opmath(x.detach()._host())
    tv = t._host().astype(np.int64)
    _target_check(tv, c, ignore_index)
    valid = tv != ignore_index
    ts = np.where(valid, tv, 0)
    sh = a - a.max(1, keepdims=True) if c else a
    lse = np.log(np.exp(sh).sum(1))
    rows = np.arange(m)
    per = (1 - ls) * (lse - sh[rows, ts]) + ls * (lse - sh.mean(1) if c else 0)
    per = np.where(valid, per, 0).astype(a.dtype)
    count = valid.sum()
    if reduction == "none":
        out = from_host(per, x.dtype, CPU)
    else:
        val = quiet(lambda: per.sum(dtype=a.dtype) / (a.dtype.type(count) if reduction == "mean" else 1))
        out = from_host(np.asarray(val, a.dtype), x.dtype, CPU)

    def backward(g: Tensor) -> Tensor:
        gv = _opmath(g._host())

        def grad() -> np.ndarray:
            scale = gv.reshape(-1, 1) if reduction == "none" else gv / (count if reduction == "mean" else 1)
            p = np.exp(sh - lse[:, None])
            p[rows, ts] -= 1 - ls
            return (p - ls / c) * scale
        d = quiet(grad)
        d[~valid] = 0
        return from_host(d.astype(a.dtype), x.dtype, CPU)
    return out, backward


# ----------------------------------------------------------------------------------------- nn: linear
_ADDMM_DTYPES = (dt.float32, dt.float64)


@op_table.register("cpu", "linear")
def linear(x: Tensor, w: Tensor, b: Tensor) -> Tensor | None:
    """x @ w^T + b for 2-D x, w and 1-D b, all on the host, of one dtype (float32 / float64): the bias added
    into the product's fresh array (no second array); None for any other operands (the composite runs)."""
    if x.dim() == 2 and w.dim() == 2 and b.dim() == 1 and x.dtype in _ADDMM_DTYPES and w.dtype is x.dtype and \
            b.dtype is x.dtype and w.device.type == "cpu" and b.device.type == "cpu" and x.shape[1] == w.shape[1] \
            and b.shape[0] == w.shape[0]:
        r = x._host() @ w._host().T
        r += b._host()
        return from_array(r, x.dtype)
    return None


# ----------------------------------------------------------------------------------------- nn: dropout
@op_table.register("cpu", "dropout")
def dropout(x: Tensor, p: float, seed: int, offset: int) -> tuple[Tensor, Any]:
    """(x * keep / (1 - p), backward g -> g * the same): the keep mask from the Philox4x32-10 words at
    (seed, offset), as uniforms in (0, 1] the way strata.libs.rand and dnn's dropout kernel make them, so
    one seed gives the same mask as on "cuda"."""
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    w = random.philox_words(seed, offset, x.numel()).reshape(tuple(x.shape))
    u = w.astype(np.float32) * np.float32(2.3283064365386963e-10) + np.float32(1.1641532182693481e-10)
    keep = (u <= np.float32(1.0 - p)).astype(np.float32) * np.float32(scale)
    out = from_host(_opmath(x.detach()._host()) * keep, x.dtype, CPU)
    return out, lambda g: from_host(_opmath(g._host()) * keep, x.dtype, CPU)


# ----------------------------------------------------------------------------------------- nn: embedding
@op_table.register("cpu", "embedding")
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None) -> tuple[Tensor, Any]:  # noqa: A002
    """(weight's rows at input, backward g -> d weight: g's rows added at their indices in float32 (float64
    for float64), the padding row zero). Raises PyTorch's IndexError for an index outside [0, V)."""
    v, dd = weight.shape
    idx = input._host().astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= v):
        raise IndexError("index out of range in self")
    out = from_host(weight.detach()._host()[idx], weight.dtype, CPU)

    def backward(g: Tensor) -> Tensor:
        dw = np.zeros((v, dd), np.float64 if weight.dtype is dt.float64 else np.float32)
        np.add.at(dw, idx.reshape(-1), _opmath(g.detach()._host()).reshape(-1, dd))
        if padding_idx is not None:
            dw[padding_idx] = 0
        return from_host(dw, weight.dtype, CPU)
    return out, backward


# ----------------------------------------------------------------------------------------- nn: softmax
@op_table.register("cpu", "softmax", "log_softmax")
def softmax(op: str, x: Tensor, d: int) -> tuple[Tensor, None]:
    """softmax / log_softmax of x along d in NumPy (shifted by the max; half types in float32); the
    backward is the front's tensor formula."""
    a = _opmath(x._host())
    if a.ndim == 0:
        a = a.reshape(1)
        d = 0

    def run() -> np.ndarray:
        shifted = a - a.max(axis=d, keepdims=True) if a.size else a
        e = np.exp(shifted)
        s = e.sum(axis=d, keepdims=True)
        return shifted - np.log(s) if op == "log_softmax" else e / s
    return from_host(quiet(run).reshape(x.shape), x.dtype, CPU), None
