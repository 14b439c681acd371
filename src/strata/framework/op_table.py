"""The op table and the dispatcher: each op is declared here once (the role of PyTorch's
`native_functions.yaml` and `derivatives.yaml`), and each backend registers its kernels for it (the
role of PyTorch's dispatcher).

An `OpDef` says what an op is: its name and arity, its type-promotion rule, its output-shape rule, its
derivative (a function of the output's gradient, the inputs and the output, written with tensor ops so
that it runs on the inputs' device and can itself be differentiated), the autograd node it records and
its L5 trace name (`aten::...`). A backend ("cpu": NumPy; "cuda": the framework's kernels and
`strata.libs`) registers one kernel per op with `register`; `kernel(op, backend)` finds it.

`bind` turns the table into the public surface: a `Tensor` method (and an in-place `_` form where
PyTorch has one) and a `strata.<name>` function per op, each calling the op family's front function
(`ops.unary_op`, `ops.binary_op`, ...), which checks the arguments, applies the promotion rule, calls the
kernel for the inputs' device and records the derivative. Adding an elementwise op is one `OpDef` here
and one kernel per backend.

This module imports no tensor code: the derivative formulas reach the math through the tensors they
are given (`g * out`, `x.cos()`), so the table sits below everything that computes.

Example:
    >>> from strata.framework import op_table
    >>> d = op_table.OPS["exp"]
    >>> d.arity, d.promotion, d.shape, d.node, d.aten
    (1, 'float', 'same', 'ExpBackward0', 'aten::exp')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from strata.framework import autograd

Grad = Any  # a Tensor, or None where an input gets no gradient

# type-promotion rules (the output dtype from the inputs' dtypes)
SAME = "same"              # the input's dtype
FLOAT = "float"            # the input's dtype if floating, else the default float dtype
BOOL = "bool"              # always bool
ROUNDING = "rounding"      # floating: the input's dtype; integral: unchanged (a copy)
PROMOTE = "promote"        # PyTorch's result_type of the operands
PROMOTE_FLOAT = "promote_float"  # result_type, integral results becoming the default float dtype
COMPARE = "compare"        # result_type for the computation, bool output
INTEGRAL = "integral"      # result_type; floating results are an error

# output-shape rules
SAME_SHAPE = "same"
BROADCAST = "broadcast"

BACKENDS = ("cpu", "cuda")


@dataclass(frozen=True)
class OpDef:
    """One op, declared once.

    Attributes:
        name: the op's name (`strata.<name>`, `Tensor.<name>`).
        family: which front function runs it ("unary", "math_unary", "binary", "math_binary", ...; "indexing",
            "joining", "nn": kernels the fronts of indexing.py, joining.py and nn.functional call; "composite": an
            op defined with tensor ops, a backend's kernel for it being a fast path).
        arity: the number of tensor operands.
        promotion: the type-promotion rule (SAME, FLOAT, BOOL, ROUNDING, PROMOTE, PROMOTE_FLOAT, COMPARE,
            INTEGRAL).
        shape: the output-shape rule (SAME_SHAPE or BROADCAST).
        derivative: unary ops `(g, x, out) -> grad of x`; binary ops `(g, a, b, out) -> (grad a, grad b)`;
            reductions `(g, x, out, dims, keepdim) -> grad of x`; indexing and joining ops `(g, *inputs,
            **the op's arguments) -> a grad per input`; None for ops without a gradient (integral, boolean or
            piecewise-constant results) or whose front records its own.
        node: the autograd node's name, as PyTorch names it ("ExpBackward0").
        node_scalar: the node's name when the second operand is a Python number (PyTorch's other
            overload), if it differs.
        node_dim: for reductions, the node's name when a `dim` is given (PyTorch's other overload).
        node_batched: for matrix products, the node's name when the operands have batch dims.
        aten: the L5 trace span, as PyTorch's profiler names the op.
        method, function, inplace: bind `Tensor.<name>`, `strata.<name>`, `Tensor.<name>_`.
        front: the name of the front function in ops.py the method and function call, when the op has
            arguments of its own (`add`'s alpha); None: the family's front.
        aliases: other names bound to the same method and function.
    """

    name: str
    family: str
    arity: int
    promotion: str
    shape: str
    derivative: Callable[..., Any] | None
    node: str
    aten: str
    node_scalar: str | None = None
    node_dim: str | None = None
    node_batched: str | None = None
    method: bool = True
    function: bool = True
    inplace: bool = False
    front: str | None = None
    aliases: tuple[str, ...] = field(default=())


OPS: dict[str, OpDef] = {}
# families whose ops take one tensor (the others broadcast two or three)
_UNARY_FAMILIES = ("unary", "math_unary", "predicate", "special")


def _node_name(name: str, suffix: str = "0") -> str:
    return "".join(p.capitalize() for p in name.split("_")) + "Backward" + suffix


def op(name: str, family: str, promotion: str, derivative: Callable[..., Any] | None, **kw: Any) -> OpDef:
    """Declare an op (once: a second declaration of a name is a bug)."""
    if name in OPS:
        raise ValueError(f"op {name!r} is declared twice")
    arity = kw.pop("arity", 1 if family in _UNARY_FAMILIES else 2)
    d = OpDef(name=name, family=family, arity=arity, promotion=promotion,
              shape=SAME_SHAPE if arity == 1 else BROADCAST, derivative=derivative,
              node=kw.pop("node", None) or _node_name(name), aten=kw.pop("aten", None) or "aten::" + name, **kw)
    OPS[name] = d
    return d


# ----------------------------------------------------------------------------------------- derivatives
# derivatives.yaml's role. Unary: (g, x, out) -> dx; binary: (g, a, b, out) -> (da, db). `out` is the
# op's result; `a` or `b` may be a Python number (its gradient is then dropped by the caller).
_SQRT_PI = math.sqrt(math.pi)


def _zero(g: Any) -> Any:
    return g.new_zeros(g.shape)  # exact zeros of g's shape, dtype and device (g * 0 would keep NaN)


def _d_relu(g: Any, x: Any, out: Any) -> Any:
    return g.where(out > 0, 0.0)


def _d_silu(g: Any, x: Any, out: Any) -> Any:
    s = x.sigmoid()
    return g * s * (1 + x * (1 - s))


def _d_gelu(g: Any, x: Any, out: Any) -> Any:
    cdf = ((x * 0.7071067811865476).erf() + 1) * 0.5
    pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return g * (cdf + x * pdf)


def _d_gelu_tanh(g: Any, x: Any, out: Any) -> Any:
    k, c = 0.7978845608028654, 0.044715
    t = ((x + x * x * x * c) * k).tanh()
    return g * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * k * (x * x * (3 * c) + 1))


def _d_pow(g: Any, a: Any, b: Any, out: Any) -> tuple[Grad, Grad]:
    ga = gb = None
    if getattr(a, "requires_grad", False):
        ga = g * b * a ** (b - 1)
        if _is_tensor(b):
            ga = ga.where(b != 0, 0.0)
    if getattr(b, "requires_grad", False):
        if _is_tensor(a):
            gb = g * out * a.log()
            gb = gb.where(((a == 0).logical_and(b >= 0)).logical_not(), 0.0)  # 0 ** b: d/db is 0 there
        else:
            gb = g * out * (math.log(a) if a != 0 else 0.0)
    return ga, gb


def _d_maxmin(pick: Callable[[Any, Any], Any]) -> Callable[..., tuple[Grad, Grad]]:
    def d(g: Any, a: Any, b: Any, out: Any) -> tuple[Grad, Grad]:
        p, tie, half = pick(a, b), a == b, g * 0.5
        z = _zero(g)
        return g.where(p, half.where(tie, z)), z.where(p, half.where(tie, g))
    return d


def _d_divmod(rounding: str) -> Callable[..., tuple[Grad, Grad]]:
    def d(g: Any, a: Any, b: Any, out: Any) -> tuple[Grad, Grad]:
        gb = None
        if getattr(b, "requires_grad", False):
            gb = -g * getattr((a / b).detach(), rounding)()
        return g, gb
    return d


def _d_copysign(g: Any, a: Any, b: Any, out: Any) -> tuple[Grad, Grad]:
    ratio = (out / a).detach()
    return g * ratio.where(a != 0, 0.0), (_zero(g) if _is_tensor(b) else None)


def _d_where(g: Any, cond: Any, a: Any, b: Any, out: Any) -> tuple[Grad, Grad, Grad]:
    z = _zero(g)
    return None, g.where(cond, z), z.where(cond, g)


def _unreduce(t: Any, dims: list[int], keepdim: bool) -> Any:
    """A reduction's result (or gradient) with the reduced dims put back as size 1."""
    if not keepdim:
        for d in dims:
            t = t.unsqueeze(d)
    return t


def _d_sum(g: Any, x: Any, out: Any, dims: list[int], keepdim: bool) -> Any:
    return _unreduce(g, dims, keepdim).expand(x.shape)


def _d_mean(g: Any, x: Any, out: Any, dims: list[int], keepdim: bool) -> Any:
    return _unreduce(g, dims, keepdim).expand(x.shape) / math.prod(x.shape[d] for d in dims)


def _d_amaxmin(g: Any, x: Any, out: Any, dims: list[int], keepdim: bool) -> Any:
    """The gradient shared evenly by the elements equal to the extreme (ties split it)."""
    mask = x == _unreduce(out, dims, keepdim)
    count = mask.sum(dims, keepdim=True)
    gg = _unreduce(g, dims, keepdim).expand(x.shape)
    return (gg / count).where(mask, _zero(gg))


def _d_max_reduce(g: Any, x: Any, out: Any, dims: list[int], keepdim: bool) -> Any:
    """max / min: over all elements as amax (ties split it); along a dim (`out` is (values, indices)) all
    of it to the index the forward picked."""
    if not isinstance(out, tuple):
        return _d_amaxmin(g, x, out, dims, keepdim)
    gu = _unreduce(g, dims, keepdim)
    return x.new_zeros(x.shape, dtype=g.dtype).scatter(dims[0], _unreduce(out[1], dims, keepdim), gu)


def _d_prod(g: Any, x: Any, out: Any, dims: list[int], keepdim: bool) -> Any:
    """The product of the other elements: out / x where x has no zero, the product of the nonzero
    elements at the only zero of a slice, 0 where a slice has two zeros."""
    with autograd.no_grad():
        zero = x == 0
        nonzero_x = x.where(zero.logical_not(), 1)
        p_nz = nonzero_x.prod(dims[0], keepdim=True) if len(dims) == 1 else nonzero_x.prod().reshape(
            [1] * x.dim())
        zeros = zero.sum(dims, keepdim=True)
    gg = _unreduce(g, dims, keepdim).expand(x.shape)
    none_zero = (p_nz / nonzero_x).where(zeros == 0, _zero(nonzero_x))
    one_zero = p_nz.expand(x.shape).where(zero.logical_and(zeros == 1), _zero(nonzero_x))
    return gg * (none_zero + one_zero)


def _d_mm(g: Any, a: Any, b: Any, out: Any) -> tuple[Grad, Grad]:
    ga = _mm_as(g, b.mT, a) if a.requires_grad else None
    gb = _mm_as(a.mT, g, b) if b.requires_grad else None
    return ga, gb


def _mm_as(x: Any, y: Any, like: Any) -> Any:
    """x @ y, laid out as `like` is: for a transposed row-major matrix (a linear layer's `weight.t()`), the
    product computed transposed, (y^T x^T)^T, so that the gradient reaching the weight through the
    transpose is row-major as the weight is (PyTorch's mm backward does the same), not a strided view
    that the leaf's `.grad` would have to copy."""
    if like.dim() == 2 and not like.is_contiguous() and like.mT.is_contiguous():
        return call("mm", y.mT, x.mT).mT
    return call("mm", x, y)


# indexing: (g, *the recorded inputs, **the op's arguments) -> one gradient per recorded input (None where
# an input needs none). They are written with the indexing ops themselves (`call` for the ones that take
# a parsed index plan), so they differentiate again (create_graph).
def _d_index(g: Any, x: Any, *, plan: Any) -> tuple[Grad]:
    """index / masked_select: g added at the plan's positions of zeros like x (repeats add up)."""
    return (call("index_put", g.new_zeros(x.shape), plan, g, True, fresh=True),)


def _d_index_put(g: Any, x: Any, values: Any, *, plan: Any, accumulate: bool) -> tuple[Grad, Grad]:
    """index_put: g with the overwritten positions zeroed (all of g with accumulate); values: g there."""
    gx = gv = None
    if getattr(x, "requires_grad", False):
        gx = g if accumulate else call("index_put", g, plan, g.new_zeros(()), False)
    if getattr(values, "requires_grad", False):
        gv = call("index", g, plan)
    return gx, gv


def _d_index_select(g: Any, x: Any, *, dim: int, index: Any) -> tuple[Grad]:
    return (g.new_zeros(x.shape).index_add(dim, index, g),)


def _d_index_add(g: Any, x: Any, source: Any, *, dim: int, index: Any, alpha: Any) -> tuple[Grad, Grad]:
    gs = None
    if getattr(source, "requires_grad", False):
        gs = g.index_select(dim, index).reshape(source.shape)
        gs = gs if alpha == 1 else gs * alpha
    return g, gs


def _d_index_copy(g: Any, x: Any, source: Any, *, dim: int, index: Any) -> tuple[Grad, Grad]:
    gx = g.index_fill(dim, index, 0) if getattr(x, "requires_grad", False) else None
    gs = g.index_select(dim, index).reshape(source.shape) if getattr(source, "requires_grad", False) else None
    return gx, gs


def _d_index_fill(g: Any, x: Any, value: Any, *, dim: int, index: Any) -> tuple[Grad, Grad]:
    gx = g.index_fill(dim, index, 0) if getattr(x, "requires_grad", False) else None
    gv = g.index_select(dim, index).sum() if getattr(value, "requires_grad", False) else None
    return gx, gv


def _d_masked_scatter(g: Any, x: Any, mask: Any, source: Any) -> tuple[Grad, Grad, Grad]:
    """input: g where mask is False; source: g where mask is True, in order, then zeros (its unread rest)."""
    gx = g.masked_fill(mask, 0) if getattr(x, "requires_grad", False) else None
    gs = None
    if getattr(source, "requires_grad", False):
        picked = g.masked_select(mask)
        gs = g.new_zeros((source.numel(),))
        gs[:picked.numel()] = picked
        gs = gs.reshape(source.shape)
    return gx, None, gs


def _d_gather(g: Any, x: Any, *, dim: int, index: Any) -> tuple[Grad]:
    return (g.new_zeros(x.shape).scatter_add(dim, index, g),)


def _src_grad(g: Any, src: Any, dim: int, index: Any) -> Grad:
    """g gathered at index, in zeros of src's shape (src may be larger than index)."""
    if not getattr(src, "requires_grad", False):
        return None
    gg = g.gather(dim, index)
    if tuple(gg.shape) == tuple(src.shape):
        return gg
    z = g.new_zeros(src.shape)
    z[tuple(slice(0, n) for n in gg.shape)] = gg
    return z


def _d_scatter(g: Any, x: Any, src: Any, *, dim: int, index: Any) -> tuple[Grad, Grad]:
    gx = g.scatter(dim, index, 0) if getattr(x, "requires_grad", False) else None
    return gx, _src_grad(g, src, dim, index)


def _d_scatter_add(g: Any, x: Any, src: Any, *, dim: int, index: Any) -> tuple[Grad, Grad]:
    return g, _src_grad(g, src, dim, index)


def _d_masked_fill(g: Any, x: Any, mask: Any, value: Any) -> tuple[Grad, Grad, Grad]:
    gx = g.masked_fill(mask, 0) if getattr(x, "requires_grad", False) else None
    gv = g.masked_fill(mask.logical_not(), 0).sum() if getattr(value, "requires_grad", False) else None
    return gx, None, gv


def _d_tri(upper: bool) -> Callable[..., tuple[Grad]]:
    def d(g: Any, x: Any, *, diagonal: int) -> tuple[Grad]:
        return (g.triu(diagonal) if upper else g.tril(diagonal),)
    return d


# joining: (g, *tensors, dim) -> the gradient of each tensor (its part of g, in its dtype)
def _d_cat(g: Any, *ts: Any, dim: int) -> tuple[Grad, ...]:
    out, start = [], 0
    for t in ts:
        if t.dim() == 1 and t.shape[0] == 0 and g.dim() != 1:  # (a skipped legacy empty tensor)
            out.append(t.new_zeros((0,)) if t.requires_grad else None)
            continue
        n = t.shape[dim]
        part = g[(slice(None),) * dim + (slice(start, start + n),)] if t.requires_grad else None
        out.append(part.to(t.dtype) if part is not None and part.dtype is not t.dtype else part)
        start += n
    return tuple(out)


def _d_stack(g: Any, *ts: Any, dim: int) -> tuple[Grad, ...]:
    return tuple((g[(slice(None),) * dim + (i,)].to(t.dtype) if t.requires_grad else None) for i, t in enumerate(ts))


def _no_derivative(name: str) -> Callable[..., Any]:
    def d(*_: Any) -> Any:
        raise RuntimeError(f"the derivative for '{name}' is not implemented.")
    return d


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "grad_fn")


# ----------------------------------------------------------------------------------------- the table
# elementwise unary (kernels.UNARY on cuda)
op("neg", "unary", SAME, lambda g, x, out: -g, inplace=True, aliases=("negative",))
op("abs", "unary", SAME, lambda g, x, out: g * x.sign(), inplace=True)
op("exp", "unary", FLOAT, lambda g, x, out: g * out, inplace=True)
op("log", "unary", FLOAT, lambda g, x, out: g / x, inplace=True)
op("sqrt", "unary", FLOAT, lambda g, x, out: g / (out * 2), inplace=True)
op("rsqrt", "unary", FLOAT, lambda g, x, out: g * out * out * out * -0.5, inplace=True)
op("relu", "unary", SAME, _d_relu, inplace=True)
op("sigmoid", "unary", FLOAT, lambda g, x, out: g * out * (1 - out), inplace=True)
op("tanh", "unary", FLOAT, lambda g, x, out: g * (1 - out * out), inplace=True)
op("sign", "unary", SAME, lambda g, x, out: _zero(g), inplace=True)
op("reciprocal", "unary", FLOAT, lambda g, x, out: -g * out * out, inplace=True)
op("logical_not", "unary", BOOL, None)

# float math (kernels.FLOAT_UNARY on cuda): integral inputs give the default float dtype
op("sin", "math_unary", FLOAT, lambda g, x, out: g * x.cos(), inplace=True)
op("cos", "math_unary", FLOAT, lambda g, x, out: -g * x.sin(), inplace=True)
op("tan", "math_unary", FLOAT, lambda g, x, out: g * (out * out + 1), inplace=True)
op("asin", "math_unary", FLOAT, lambda g, x, out: g / (1 - x * x).sqrt(), inplace=True, aliases=("arcsin",))
op("acos", "math_unary", FLOAT, lambda g, x, out: -(g / (1 - x * x).sqrt()), inplace=True, aliases=("arccos",))
op("atan", "math_unary", FLOAT, lambda g, x, out: g / (x * x + 1), inplace=True, aliases=("arctan",))
op("sinh", "math_unary", FLOAT, lambda g, x, out: g * x.cosh(), inplace=True)
op("cosh", "math_unary", FLOAT, lambda g, x, out: g * x.sinh(), inplace=True)
op("asinh", "math_unary", FLOAT, lambda g, x, out: g / (x * x + 1).sqrt(), inplace=True, aliases=("arcsinh",))
op("acosh", "math_unary", FLOAT, lambda g, x, out: g / (x * x - 1).sqrt(), inplace=True, aliases=("arccosh",))
op("atanh", "math_unary", FLOAT, lambda g, x, out: g / (1 - x * x), inplace=True, aliases=("arctanh",))
op("log1p", "math_unary", FLOAT, lambda g, x, out: g / (x + 1), inplace=True, node="Log1PBackward0")
op("expm1", "math_unary", FLOAT, lambda g, x, out: g * (out + 1), inplace=True)
op("log2", "math_unary", FLOAT, lambda g, x, out: g / (x * math.log(2.0)), inplace=True)
op("log10", "math_unary", FLOAT, lambda g, x, out: g / (x * math.log(10.0)), inplace=True)
op("exp2", "math_unary", FLOAT, lambda g, x, out: g * out * math.log(2.0), inplace=True)
op("erf", "math_unary", FLOAT, lambda g, x, out: g * (2.0 / _SQRT_PI) * (-(x * x)).exp(), inplace=True)
op("erfinv", "math_unary", FLOAT, lambda g, x, out: g * (_SQRT_PI / 2.0) * (out * out).exp(), inplace=True)
# activations: reached through strata.nn.functional (their own fronts take `approximate`)
op("silu", "math_unary", FLOAT, _d_silu, method=False, function=False)
op("gelu", "math_unary", FLOAT, _d_gelu, method=False, function=False)
op("gelu_tanh", "math_unary", FLOAT, _d_gelu_tanh, method=False, function=False, node="GeluBackward0",
   aten="aten::gelu")
# rounding: integral inputs come back unchanged; the gradient is zero (frac: one)
op("floor", "math_unary", ROUNDING, lambda g, x, out: _zero(g), inplace=True)
op("ceil", "math_unary", ROUNDING, lambda g, x, out: _zero(g), inplace=True)
op("trunc", "math_unary", ROUNDING, lambda g, x, out: _zero(g), inplace=True, aliases=("fix",))
op("frac", "math_unary", ROUNDING, lambda g, x, out: g, inplace=True)
op("round", "math_unary", ROUNDING, lambda g, x, out: _zero(g), method=False, function=False)  # ops.round_half_even

# elementwise binary (kernels.BINARY on cuda), with broadcasting
op("add", "binary", PROMOTE, lambda g, a, b, out: (g, g), front="add", inplace=True)
op("sub", "binary", PROMOTE, lambda g, a, b, out: (g, -g), front="sub", inplace=True, aliases=("subtract",))
op("mul", "binary", PROMOTE, lambda g, a, b, out: (g * b, g * a), front="mul", inplace=True, aliases=("multiply",))
op("div", "binary", PROMOTE_FLOAT, lambda g, a, b, out: (g / b, -g * a / (b * b)), front="div", inplace=True,
   aliases=("divide", "true_divide"))
op("pow", "binary", PROMOTE, _d_pow, front="pow", inplace=True)
op("maximum", "binary", PROMOTE, _d_maxmin(lambda a, b: a > b), front="maximum")
op("minimum", "binary", PROMOTE, _d_maxmin(lambda a, b: a < b), front="minimum")
for _cmp, _alias in (("eq", ()), ("ne", ("not_equal",)), ("lt", ("less",)), ("le", ("less_equal",)),
                     ("gt", ("greater",)), ("ge", ("greater_equal",))):
    op(_cmp, "binary", COMPARE, None, aliases=_alias)

# more binary math (kernels.DIVMOD / FLOAT_BINARY / BITWISE on cuda)
op("fmod", "math_binary", PROMOTE, _d_divmod("trunc"), node_scalar="FmodBackward0", node="FmodBackward1",
   inplace=True)
op("remainder", "math_binary", PROMOTE, _d_divmod("floor"), node_scalar="RemainderBackward0",
   node="RemainderBackward1", inplace=True)
op("floor_divide", "math_binary", PROMOTE, _no_derivative("floor_divide"), node="NotImplemented", inplace=True)
op("atan2", "math_binary", PROMOTE_FLOAT, lambda g, a, b, out: (g * b / (a * a + b * b), -g * a / (a * a + b * b)),
   front="atan2", aliases=("arctan2",), inplace=True)
op("hypot", "math_binary", PROMOTE_FLOAT, lambda g, a, b, out: (g * a / out, g * b / out), front="hypot",
   inplace=True)
op("copysign", "math_binary", PROMOTE_FLOAT, _d_copysign, node_scalar="CopysignBackward1", inplace=True)
for _bit in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    op(_bit, "math_binary", INTEGRAL, None, inplace=True)

# selection, predicates and NaN handling
op("where", "where", PROMOTE, _d_where, arity=3, front="where", method=False, function=False)
for _pred in ("isnan", "isinf", "isfinite"):
    op(_pred, "predicate", BOOL, None)
op("nan_to_num", "special", SAME, lambda g, x, out: g.where(x.isfinite(), _zero(g)), front="nan_to_num",
   inplace=True)
op("bitwise_not", "special", INTEGRAL, None, front="bitwise_not", inplace=True)

# reductions over `dims` (the fronts in reductions.py parse dim / keepdim / dtype); their kernels take
# (op, x, dims, out_shape, kept_shape, out_dtype) and return (values, indices or None)
op("sum", "reduction", SAME, _d_sum, arity=1, front="sum", node="SumBackward0", node_dim="SumBackward1")
op("mean", "reduction", SAME, _d_mean, arity=1, front="mean", node="MeanBackward0", node_dim="MeanBackward1")
op("prod", "reduction", SAME, _d_prod, arity=1, front="prod", node="ProdBackward0", node_dim="ProdBackward1")
op("max", "reduction", SAME, _d_max_reduce, arity=1, front="max", node="MaxBackward1", node_dim="MaxBackward0")
op("min", "reduction", SAME, _d_max_reduce, arity=1, front="min", node="MinBackward1", node_dim="MinBackward0")
op("amax", "reduction", SAME, _d_amaxmin, arity=1, front="amax", node="AmaxBackward0")
op("amin", "reduction", SAME, _d_amaxmin, arity=1, front="amin", node="AminBackward0")

# matrix product (..., m, k) @ (..., k, n) with broadcast batch dims (linalg.matmul's 1-D rules and checks
# are around it); kernels take (a, b, batch, m, k, n)
op("mm", "linalg", SAME, _d_mm, arity=2, method=False, function=False, node="MmBackward0",
   node_batched="BmmBackward0", aten="aten::mm")

# torch.linalg's decompositions and solves (linalg_decomp.py holds the fronts: checks, errors, derivatives);
# kernels take contiguous float32/float64 matrices, batched over the leading dims, and return new tensors:
#   linalg_solve (A, B) -> (X, info) with A X = B, B (..., n, k);  linalg_inv (A) -> (A^-1, info)
#   linalg_det (A) -> det;  linalg_slogdet (A) -> (sign, log|det|);  linalg_cholesky (A) -> (L, info)
#   linalg_qr (A, mode) -> (Q, R);  linalg_eigh (A, uplo) -> (w, V);  linalg_svd (A, full_matrices) -> (U, S, Vh)
# info: LAPACK's per matrix (host int64): i > 0 a zero pivot U(i, i) / a leading minor of order i not positive
# definite. Node names as PyTorch's (the _ex variants' where PyTorch records those)
for _k, _node in (("linalg_solve", "LinalgSolveExBackward0"), ("linalg_inv", "LinalgInvExBackward0"),
                  ("linalg_det", "LinalgDetBackward0"), ("linalg_slogdet", "LinalgSlogdetBackward0"),
                  ("linalg_cholesky", "LinalgCholeskyExBackward0"), ("linalg_qr", "LinalgQrBackward0"),
                  ("linalg_eigh", "LinalgEighBackward0"), ("linalg_svd", "LinalgSvdBackward0")):
    op(_k, "linalg", SAME, None, arity=1, method=False, function=False, node=_node)

# sorting and scans along one dim (sorting.py holds the fronts and their gradients); kernels:
# sort (x, d, descending) -> (values, indices); sort_backward (g, indices, d, shape) -> g put back at indices;
# cumsum / cumprod (op, x, d, reverse, out_dtype); cumprod_backward (x, g, d)
for _k in ("sort", "sort_backward", "cumsum", "cumprod", "cumprod_backward"):
    op(_k, "sorting", SAME, None, arity=1, method=False, function=False)

# indexing (indexing.py holds the fronts: index parsing, bounds checks on host indices, autograd). The
# index tensors are first one (K, nb) int64 buffer ("index_buffer": host array on cpu, device tensor on
# cuda); kernels:
#   index_buffer (t, idxs, host_rows, bshape) -> buf
#   index / index_select / masked_select / take (t, geom, plan) -> t[plan] as a new tensor
#   index_put / index_add / index_copy / index_fill / masked_scatter (t, geom, plan, values, accumulate) -> None:
#     t[plan] = (or +=) values in place
#   gather (src, d, index) -> out of index's shape; scatter / scatter_add (out, d, index, src, accumulate) -> None
#   masked_fill: the where kernel (mask, value, input, dtype, shape); tril / triu (x, diagonal, upper);
#   nonzero (x, transpose) -> the coordinates of the nonzero elements
# Cuda kernels check device-resident indices themselves: a bad one is a device-side assertion.
_INDEXING_KW: dict[str, dict[str, Any]] = {
    "index_buffer": {"aten": "aten::index"}, "index_put": {"aten": "aten::index_put_"},
    # with a Python number (PyTorch's other overload): scatter's node is ScatterBackward1, masked_fill's
    # MaskedFillBackward0 (with a tensor value it is MaskedFillBackward1)
    "scatter": {"node_scalar": "ScatterBackward1"},
    "masked_fill": {"node": "MaskedFillBackward1", "node_scalar": "MaskedFillBackward0"},
    "index_fill": {"node": "IndexFillBackward1", "node_scalar": "IndexFillBackward0"},
    "nonzero": {"node": "NotImplemented"}}
for _k, _d in (("index_buffer", None), ("index", _d_index), ("index_select", _d_index_select),
               ("masked_select", _d_index), ("take", _d_index), ("index_put", _d_index_put),
               ("index_add", _d_index_add), ("index_copy", _d_index_copy), ("index_fill", _d_index_fill),
               ("masked_scatter", _d_masked_scatter),
               ("gather", _d_gather), ("scatter", _d_scatter), ("scatter_add", _d_scatter_add),
               ("masked_fill", _d_masked_fill), ("tril", _d_tri(False)), ("triu", _d_tri(True)), ("nonzero", None)):
    op(_k, "indexing", SAME, _d, arity=1, method=False, function=False, **_INDEXING_KW.get(_k, {}))

# scatter_reduce (indexing.py holds the front: include_self, mean, the derivative); kernel:
#   scatter_reduce (out, d, index, src, reduce) -> None: out[..index..] = reduce(out[..index..], src) in place,
#   reduce "prod", "amax" or "amin" (NaN propagates); "sum" and "mean" use scatter_add
op("scatter_reduce", "indexing", SAME, None, arity=1, method=False, function=False, node="ScatterReduceBackward0")

# joining (joining.py checks the operands); kernel: cat (out, tensors, d) writes each tensor into its slice
# of `out` along d (stack: the same kernel, on the tensors unsqueezed at d)
op("cat", "joining", PROMOTE, _d_cat, arity=1, method=False, function=False)
op("stack", "joining", PROMOTE, _d_stack, arity=1, method=False, function=False)

# F.linear with a bias: the composite matmul + add; a backend's fast path (input, weight, bias) -> x @ w^T + b
# in one op (PyTorch's addmm), or None where it does not take these operands
op("linear", "composite", PROMOTE, None, arity=3, method=False, function=False, node="AddmmBackward0",
   aten="aten::linear")

# nn.functional's activations with a fused kernel per device (relu, sigmoid, tanh, gelu, gelu_tanh, silu:
# the table's elementwise ops above give their derivative under create_graph); kernels:
#   activation (mode, x, save) -> (act(x), what the backward needs or None)
#   activation_backward (mode, saved, g, dtype) -> g * act'(x) in dtype
op("activation", "nn", SAME, None, arity=1, method=False, function=False)
op("activation_backward", "nn", SAME, None, arity=1, method=False, function=False)

# embedding: the composite one_hot(input) @ weight; each backend's fused kernel its fast path,
# (input, weight, padding_idx) -> (weight's rows at input, backward g -> d weight), or None where the
# device has none for weight's dtype
op("embedding", "composite", SAME, None, arity=2, method=False, function=False, node="EmbeddingBackward0")

# dropout: (x, p, seed, offset) -> (x * keep / (1 - p), backward g -> g * the same), the keep mask from the
# Philox4x32-10 stream at (seed, offset) (the front moves the device's generator on): one seed, one mask on
# both devices
op("dropout", "nn", SAME, None, arity=1, method=False, function=False, node="NativeDropoutBackward0",
   aten="aten::dropout")

# softmax / log_softmax along one dim (sorting.py holds the front: dtype, autocast, the composite and the
# derivative): (op, x, d) -> (out, fused backward g -> dx or None), or None where the device has no kernel
# for x's dtype (cuda float64: the composite runs)
op("softmax", "nn", SAME, None, arity=1, method=False, function=False)
op("log_softmax", "nn", SAME, None, arity=1, method=False, function=False)

# nn.functional's losses: the class-index check of nll_loss / cross_entropy, (t, n_classes, ignore_index)
# -> None (cpu: PyTorch's IndexError; cuda: a device-side assertion, no host sync); cross_entropy of
# (M, C) logits and class indices is the composite log_softmax + nll_loss, each backend's fused kernel
# its fast path: (x, t, ignore_index, label_smoothing, reduction) -> (loss, backward g -> dx), or None
# where the device has no fused kernel for x's dtype
op("class_index_check", "nn", SAME, None, arity=1, method=False, function=False)
op("cross_entropy", "composite", SAME, None, arity=1, method=False, function=False, node="NllLossBackward0")

# sequences written by the device (creation.arange / linspace parse the arguments); kernels take
# (dtype, device, n, start, step[, end]) and return the new tensor
op("arange", "creation", SAME, None, arity=0, method=False, function=False)
op("linspace", "creation", SAME, None, arity=0, method=False, function=False)

# composite ops: defined with tensor ops (autograd differentiates them); a backend may register a fused
# kernel as its fast path (`fast_path`)
op("layer_norm", "composite", SAME, None, arity=1, method=False, function=False, node="NativeLayerNormBackward0")
op("rms_norm", "composite", SAME, None, arity=1, method=False, function=False, node="RmsNormBackward0")

# more of nn.functional's composites (written with tensor ops in functional.py); the cuda backend's fast
# paths are strata.libs.dnn's fused kernels, which return None for what they do not take (float64, ...)
op("batch_norm", "composite", SAME, None, arity=1, method=False, function=False, node="CudnnBatchNormBackward0")
op("conv2d", "composite", SAME, None, arity=2, method=False, function=False, node="ConvolutionBackward0")
op("max_pool2d", "composite", SAME, None, arity=1, method=False, function=False, node="MaxPool2DWithIndicesBackward0")
op("avg_pool2d", "composite", SAME, None, arity=1, method=False, function=False, node="AvgPool2DBackward0")
op("scaled_dot_product_attention", "composite", SAME, None, arity=3, method=False, function=False,
   node="ScaledDotProductEfficientAttentionBackward0")

# optimizer steps: each update is written once with tensor ops (optim/sgd.py, optim/adam.py: PyTorch's
# single-tensor algorithms); a backend's fused kernel is its fast path, (p, grad, state tensors..., options)
# -> True when it updated them in place, False where it does not take these tensors (the composite runs)
op("sgd_step", "composite", SAME, None, arity=1, method=False, function=False, aten="aten::_fused_sgd_")
op("adam_step", "composite", SAME, None, arity=1, method=False, function=False, aten="aten::_fused_adam_")

# random numbers (random.py holds the fronts: generators, argument checks, the offsets each draw takes);
# kernels: random_fill (t, kind, seed, offset, nwords, a, b, p, wide) writes `kind` values from the Philox
# words offset.. into t; random_check_p (p) checks bernoulli's probabilities where that needs no device read;
# multinomial_keys (p, seed, offset, nwords) -> (p / E, per-row status codes); multinomial_replacement
# (p, k, seed, offset, out_shape) -> the samples
for _k in ("random_fill", "random_check_p", "multinomial_keys", "multinomial_replacement"):
    op(_k, "random", SAME, None, arity=1, method=False, function=False)

# the primitives every op uses: fill a (strided) tensor with a value, copy one tensor into another
op("fill", "primitive", SAME, None, method=False, function=False, aten="aten::fill_")
op("copy", "primitive", SAME, None, arity=2, method=False, function=False, aten="aten::copy_")


# ----------------------------------------------------------------------------------------- the dispatcher
_KERNELS: dict[str, dict[str, Callable[..., Any]]] = {b: {} for b in BACKENDS}


def register(backend: str, *names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: `fn` is `backend`'s kernel for each op in `names` (declared ops only).

    Raises:
        KeyError: an unknown backend or an op the table does not declare.
    """
    if backend not in _KERNELS:
        raise KeyError(f"unknown backend {backend!r} (expected one of {BACKENDS})")
    for n in names:
        if n not in OPS:
            raise KeyError(f"register({backend!r}): op {n!r} is not declared in the op table")

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for n in names:
            _KERNELS[backend][n] = fn
        return fn
    return deco


def kernel(name: str, backend: str) -> Callable[..., Any]:
    """`backend`'s kernel for op `name`.

    Raises:
        NotImplementedError: no kernel registered for that op on that backend.
    """
    try:
        return _KERNELS[backend][name]
    except KeyError:
        raise NotImplementedError(f"strata: op '{name}' has no kernel for the '{backend}' backend") from None


def fast_path(name: str, backend: str) -> Callable[..., Any] | None:
    """`backend`'s fused kernel for a composite op, or None (then the composite definition runs)."""
    return _KERNELS[backend].get(name)


def kernels_of(backend: str) -> dict[str, Callable[..., Any]]:
    """Op name -> kernel for one backend (a copy), for checks that every op has a kernel everywhere."""
    return dict(_KERNELS[backend])


# ----------------------------------------------------------------------------------------- binding
FUNCTIONS: dict[str, Callable[..., Any]] = {}
# op name -> the front function that runs it (argument checks, promotion, kernel, derivative), set by the
# module implementing it; derivatives reach other ops through `call` (as ATen's formulas call at::mm)
_FRONTS: dict[str, Callable[..., Any]] = {}


def register_front(name: str, fn: Callable[..., Any]) -> None:
    """`fn` runs op `name` (for `call`).

    Raises:
        KeyError: the op is not declared.
    """
    if name not in OPS:
        raise KeyError(f"register_front: op {name!r} is not declared in the op table")
    _FRONTS[name] = fn


def call(name: str, *args: Any, **kwargs: Any) -> Any:
    """Run op `name` through its front function (differentiable; dispatched on the inputs' device)."""
    return _FRONTS[name](*args, **kwargs)


def _method(fn: Callable[..., Any], name: str, doc: str) -> Callable[..., Any]:
    def m(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = doc
    return m


def _inplace(fn: Callable[..., Any], name: str, inplace: Callable[..., Any],
             into: Callable[..., Any] | None = None) -> Callable[..., Any]:
    def m(self: Any, *args: Any, **kwargs: Any) -> Any:
        if into is not None and len(args) == 1 and not kwargs:  # the result written straight into self, when
            done = into(name, self, args[0])                      # the backend can and nothing is recorded
            if done is not None:
                return done
        return inplace(self, lambda s: fn(s, *args, **kwargs))
    m.__name__ = m.__qualname__ = name + "_"
    m.__doc__ = f"In-place {name}: self = {name}(self, ...); returns self."
    return m


def bind(cls: type, fronts: dict[str, Callable[..., Any]], named: dict[str, Callable[..., Any]],
         inplace: Callable[..., Any], families: Collection[str],
         into: dict[str, Callable[..., Any]] | None = None) -> None:
    """Give `cls` (Tensor) a method per table op and fill FUNCTIONS (the `strata.<name>` functions).

    Args:
        fronts: family -> front function `(op_name, *operands)` (ops.unary_op, ...).
        named: front functions with their own signatures, by OpDef.front (ops.add, ...).
        inplace: ops.inplace, which runs an op and writes its result into self.
        families: bind the ops of these families (each module binds the families it implements).
        into: family -> `(op_name, self, other) -> self or None`, which computes `self op other` straight
            into self's memory where it can (None: it can't, and `inplace` runs).
    """
    for d in OPS.values():
        if not (d.method or d.function) or d.family not in families:
            continue
        if d.front is not None:
            fn = named[d.front]
        else:
            front, name = fronts[d.family], d.name
            fn = _specialize(front, name, d.arity)
        fn.__doc__ = fn.__doc__ or f"Elementwise {d.name} ({d.aten}); see strata.framework.op_table."
        for public in (d.name, *d.aliases):
            if d.function:
                FUNCTIONS[public] = fn
            if d.method:
                setattr(cls, public, _method(fn, public, fn.__doc__ or ""))
                if d.inplace:
                    fast = (into or {}).get(d.family)
                    setattr(cls, public + "_", _inplace(fn, public, inplace,
                                                        (lambda _n, s, o, f=fast, op=d.name: f(op, s, o))
                                                        if fast is not None else None))


def _specialize(front: Callable[..., Any], name: str, arity: int) -> Callable[..., Any]:
    fn: Callable[..., Any]
    if arity == 1:
        def f1(input: Any) -> Any:  # noqa: A002 - PyTorch's argument name
            return front(name, input)
        fn = f1
    else:
        def f2(input: Any, other: Any) -> Any:  # noqa: A002
            return front(name, input, other)
        fn = f2
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} ({OPS[name].aten}); see strata.framework.op_table."
    return fn
