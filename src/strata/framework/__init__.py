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

from collections.abc import Callable

from strata.cuda.caching_allocator import (
    empty_cache,
    max_memory_allocated,
    memory_allocated,
    memory_reserved,
    reset_peak_memory_stats,
)
from strata.framework import ops as _ops
from strata.framework.amp import autocast
from strata.framework.autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
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


def _unary(name: str) -> Callable[[Tensor], Tensor]:
    def fn(input: Tensor) -> Tensor:  # noqa: A002
        return _ops.unary_op(name, input)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} (see Tensor.{name})."
    return fn


neg = _unary("neg")
abs = _unary("abs")  # noqa: A001
exp = _unary("exp")
log = _unary("log")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
relu = _unary("relu")
sigmoid = _unary("sigmoid")
tanh = _unary("tanh")
sign = _unary("sign")
reciprocal = _unary("reciprocal")
logical_not = _unary("logical_not")


def _compare(name: str) -> Callable[[Tensor, object], Tensor]:
    def fn(input: Tensor, other: object) -> Tensor:  # noqa: A002
        return _ops.binary_op(name, input, other)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise comparison {name} (bool result)."
    return fn


eq = _compare("eq")
ne = _compare("ne")
lt = _compare("lt")
le = _compare("le")
gt = _compare("gt")
ge = _compare("ge")
clip = clamp

__all__ = [
    "autocast", "abs", "add", "arange", "argmax", "argmin", "as_tensor", "bfloat16", "bool", "bool_",
    "broadcast_shapes", "cat",
    "clamp", "clip", "device", "div", "double", "dtype", "empty", "empty_cache", "empty_like", "enable_grad", "eq",
    "exp", "eye", "float", "float16", "float32", "float64", "from_numpy", "full", "full_like", "ge",
    "get_default_dtype", "gt", "half", "int", "int16", "int32", "int64", "int8", "is_grad_enabled", "le",
    "linspace", "log", "log_softmax", "logical_not", "long", "lt", "matmul", "max", "max_memory_allocated",
    "maximum", "mean", "memory_allocated", "memory_reserved", "min", "minimum", "mul", "ne", "neg", "no_grad",
    "ones", "ones_like", "pow", "promote_types", "reciprocal", "relu", "reset_peak_memory_stats", "result_type",
    "rsqrt", "set_default_dtype", "set_grad_enabled", "short", "sigmoid", "sign", "Size", "softmax", "sqrt",
    "stack", "std", "sub", "sum", "tanh", "Tensor", "tensor", "uint8", "var", "where", "zeros", "zeros_like",
]

# Feature modules append their exports below, one marked block each (kept apart so they merge cleanly).
# -- block: indexing
# -- end block: indexing
# -- block: sorting
from strata.framework.sorting import argsort, cumprod, cumsum, logsumexp, sort, std_mean, topk, var_mean  # noqa: E402

__all__ += ["argsort", "cumprod", "cumsum", "logsumexp", "sort", "std_mean", "topk", "var_mean"]
# -- end block: sorting
# -- block: math
# -- end block: math
# -- block: random
# -- end block: random
# -- block: nn
# -- end block: nn
# -- block: optim
# -- end block: optim
# -- block: serialization
# -- end block: serialization
# -- block: autograd
# -- end block: autograd
