"""L5: the PyTorch-style framework: tensors on "cpu" and "cuda", dtypes and promotion, the caching
device allocator, elementwise/reduction/matmul ops and autograd. See docs/framework.md.

Example:
    >>> import strata
    >>> x = strata.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda", requires_grad=True)
    >>> y = (x @ x).relu().sum()
    >>> y.backward()
    >>> y.item(), x.grad.cpu().tolist()
    (54.0, [[7.0, 11.0], [9.0, 13.0]])
"""

from strata.cuda.caching_allocator import (
    empty_cache,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
)
from strata.framework import op_table as _op_table
from strata.framework import ops as _ops
from strata.framework import tensor_ops as _tensor_ops  # noqa: F401 - binds Tensor's methods; registers the kernels
from strata.framework.amp import autocast
from strata.framework.autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from strata.framework.creation import (
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from strata.framework.device import device
from strata.framework.dtypes import (
    bfloat16,
    bool_,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    result_type,
    set_default_dtype,
    uint8,
)
from strata.framework.joining import cat, stack
from strata.framework.linalg import matmul
from strata.framework.ops import add, broadcast_shapes, clamp, div, maximum, minimum, mul, pow, sub, where
from strata.framework.reductions import argmax, argmin, max, mean, min, std, sum, var
from strata.framework.sorting import log_softmax, softmax
from strata.framework.tensor import Size, Tensor

float = float32  # noqa: A001 - PyTorch's aliases
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
bool = bool_  # noqa: A001


# The elementwise ops declared in the op table (exp, sin, eq, fmod, ...): strata.<name> for each.
globals().update(_op_table.FUNCTIONS)
clip = clamp

__all__ = [
    "autocast", "abs", "add", "arange", "argmax", "argmin", "as_tensor", "bfloat16", "bool", "bool_",
    "broadcast_shapes", "cat",
    "clamp", "clip", "device", "div", "double", "dtype", "empty", "empty_cache", "empty_like", "enable_grad", "eq",
    "exp", "eye", "float", "float16", "float32", "float64", "from_numpy", "full", "full_like", "ge",
    "get_default_dtype", "gt", "half", "inference_mode", "int", "int16", "int32", "int64", "int8", "is_grad_enabled",
    "le",
    "linspace", "log", "log_softmax", "logical_not", "long", "lt", "matmul", "max", "max_memory_allocated",
    "maximum", "mean", "memory_allocated", "memory_reserved", "min", "minimum", "mul", "ne", "neg", "no_grad",
    "ones", "ones_like", "pow", "promote_types", "reciprocal", "relu", "reset_peak_memory_stats", "result_type",
    "rsqrt", "set_default_dtype", "set_grad_enabled", "short", "sigmoid", "sign", "Size", "softmax", "sqrt",
    "stack", "std", "sub", "sum", "tanh", "Tensor", "tensor", "uint8", "var", "where", "zeros", "zeros_like",
]

# Feature modules append their exports below, one marked block each (kept apart so they merge cleanly).
# -- block: indexing
from strata.framework.indexing import (  # noqa: E402
    argwhere,
    gather,
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_put_,
    index_select,
    masked_fill,
    masked_scatter,
    masked_select,
    nonzero,
    scatter,
    scatter_add,
    scatter_reduce,
    take,
    take_along_dim,
    tril,
    triu,
    where,  # noqa: F811 - adds where(condition), the one-argument form, to ops.where
)

__all__ += ["argwhere", "gather", "index_add", "index_copy", "index_fill", "index_put", "index_put_", "index_select",
            "masked_fill", "masked_scatter", "masked_select", "nonzero", "scatter", "scatter_add", "scatter_reduce",
            "take", "take_along_dim", "tril", "triu", "where"]
# -- end block: indexing
# -- block: sorting
from strata.framework.sorting import argsort, cumprod, cumsum, logsumexp, sort, std_mean, topk, var_mean  # noqa: E402

__all__ += ["argsort", "cumprod", "cumsum", "logsumexp", "sort", "std_mean", "topk", "var_mean"]
# -- end block: sorting
# -- block: math
from strata.framework.ops import (  # noqa: E402
    atan2,
    bitwise_not,
    hypot,
    isfinite,
    isinf,
    isnan,
    lerp,
    logical_and,
    logical_or,
    logical_xor,
    nan_to_num,
    square,
)
from strata.framework.ops import round_half_even as round  # noqa: E402,A004
from strata.framework.reductions import all_true as all  # noqa: E402,A004
from strata.framework.reductions import (  # noqa: E402
    allclose,
    amax,
    amin,
    aminmax,
    count_nonzero,
    equal,
    isclose,
    norm,
    prod,
)
from strata.framework.reductions import any_true as any  # noqa: E402,A004
from strata.framework.shape_ops import (  # noqa: E402
    bmm,
    broadcast_to,
    chunk,
    diag,
    diagonal,
    einsum,
    flip,
    moveaxis,
    movedim,
    narrow,
    outer,
    repeat_interleave,
    roll,
    split,
    swapaxes,
    swapdims,
    tile,
    unbind,
    unflatten,
)

__all__ += [
    "acos", "acosh", "all", "allclose", "amax", "amin", "aminmax", "any", "arccos", "arcsin", "arctan", "arctan2",
    "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "bmm",
    "broadcast_to", "ceil", "chunk", "copysign", "cos", "cosh", "count_nonzero", "diag", "diagonal", "einsum",
    "equal", "erf", "erfinv", "exp2", "expm1", "fix", "flip", "floor", "floor_divide", "fmod", "frac", "hypot",
    "isclose", "isfinite", "isinf", "isnan", "lerp", "log10", "log1p", "log2", "logical_and", "logical_or",
    "logical_xor", "moveaxis", "movedim", "nan_to_num", "narrow", "norm", "outer", "prod", "remainder",
    "repeat_interleave", "roll", "round", "sin", "sinh", "split", "square", "swapaxes", "swapdims", "tan", "tile",
    "trunc", "unbind", "unflatten",
]
__all__ += sorted(set(_op_table.FUNCTIONS) - set(__all__))  # the table's aliases (subtract, arcsin, ...)
# -- end block: math
# -- block: random
from strata.framework.random import (  # noqa: E402
    Generator,
    bernoulli,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    multinomial,
    normal,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
)

__all__ += ["Generator", "bernoulli", "default_generator", "get_rng_state", "initial_seed", "manual_seed",
            "multinomial", "normal", "rand", "rand_like", "randint", "randint_like", "randn", "randn_like",
            "randperm", "seed", "set_rng_state"]
# -- end block: random
# -- block: packages
import sys as _sys  # noqa: E402

from strata.framework import autograd, linalg, nn, optim  # noqa: E402
from strata.framework.serialization import load, save  # noqa: E402
from strata.framework.torch_alias import install_torch_alias  # noqa: E402


def _answer_as_strata(package: str) -> None:
    """`import strata.nn.functional as F`, `import strata.optim`: strata.framework.X and its submodules
    also answer as strata.X, the way torch.nn lives at the top of torch."""
    full = f"strata.framework.{package}"
    for name, mod in list(_sys.modules.items()):
        if name == full or name.startswith(full + "."):
            _sys.modules.setdefault("strata" + name[len("strata.framework"):], mod)


# strata.autograd, strata.nn and strata.optim are packages of their own (src/strata/<name>/) that answer
# with these modules when imported (strata/_subpackage.py); aliasing them here first would bypass them.
_answer_as_strata("linalg")
# torch.autograd's members that live beside autograd.py (it cannot import them: they import it)
from strata.framework import autograd_functional as _autograd_functional  # noqa: E402
from strata.framework import gradcheck as _gradcheck  # noqa: E402

for _name, _member in (("functional", _autograd_functional), ("gradcheck", _gradcheck.gradcheck),
                       ("gradgradcheck", _gradcheck.gradgradcheck), ("GradcheckError", _gradcheck.GradcheckError)):
    setattr(autograd, _name, _member)
__all__ += ["autograd", "install_torch_alias", "linalg", "load", "nn", "optim", "save"]
# -- end block: packages
# -- block: L5 trace spans
from strata.framework import (  # noqa: E402
    creation,
    indexing,
    joining,
    profiling,
    random,
    reductions,
    shape_ops,
    sorting,
)
from strata.framework.nn import functional as _functional  # noqa: E402

# Public functions that are not ops (no aten:: event in PyTorch's profiler either).
_NOT_OPS = frozenset({"broadcast_shapes", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"})
# strata name -> PyTorch profiler name, where they differ.
_PROFILER_NAMES = {"cross_entropy": "cross_entropy_loss", "nll_loss": "nll_loss_nd", "log_softmax": "log_softmax",
                   "scaled_dot_product_attention": "scaled_dot_product_attention"}


def _trace_public_ops() -> None:
    """Make every public op report an L5 span named as PyTorch's profiler names it (aten::add, aten::sum,
    aten::linear ...): the op's module attribute and this namespace both get the traced function, so
    `ops.add` looked up by Tensor.__add__ and `strata.add` are traced alike."""
    namespace = globals()
    modules = {m.__name__: m for m in (_ops, reductions, sorting, joining, shape_ops, indexing, linalg, creation,
                                       random)}
    for public in __all__:
        fn = namespace.get(public)
        module = modules.get(getattr(fn, "__module__", ""))
        if module is None or public in _NOT_OPS or not callable(fn) or isinstance(fn, type):
            continue
        attr = fn.__name__
        if getattr(module, attr, None) is fn:
            profiling.instrument(module, {attr: "aten::" + public})
            namespace[public] = getattr(module, attr)
    profiling.instrument(_functional, {n: "aten::" + _PROFILER_NAMES.get(n, n) for n in _functional.__all__
                                       if callable(getattr(_functional, n))})
    profiling.instrument(Tensor, {"clone": "aten::clone", "to": "aten::to",
                                  "copy_": "aten::copy_", "__getitem__": "aten::index",
                                  "__setitem__": "aten::index_put_", "item": "aten::item"})


_trace_public_ops()
# -- end block: L5 trace spans
