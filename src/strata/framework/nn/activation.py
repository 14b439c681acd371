"""The rest of torch.nn's activations: the functional forms strata.nn.functional lacks (`selu`, `celu`,
`mish`, `hardswish`, `hardsigmoid`, `softsign`, `tanhshrink`, `softshrink`, `hardshrink`, `threshold`,
`glu`, `prelu`, `softmin`, `rrelu` in eval mode) and the Module of every activation not in modules.py
(LeakyReLU, ELU, SELU, CELU, Mish, Softplus, Softsign, Hardtanh, ReLU6, PReLU, Hardswish, Hardsigmoid,
LogSigmoid, Tanhshrink, Softshrink, Hardshrink, Threshold, GLU, Softmin, Softmax2d).

Each is a composition of differentiable framework ops (where, clamp, exp, sigmoid, ...), so it runs on
"cpu" and "cuda" with gradients, and matches PyTorch's formulas (including which side of a kink the
gradient takes).

Example:
    >>> import strata
    >>> from strata.framework.nn.activation import SELU, hardswish
    >>> [round(v, 4) for v in SELU()(strata.tensor([-1.0, 2.0])).tolist()]
    [-1.1113, 2.1014]
    >>> hardswish(strata.tensor([-4.0, 1.0, 4.0])).tolist()
    [-0.0, 0.6666666865348816, 4.0]
"""

from __future__ import annotations

from typing import Any

from strata.framework import ops
from strata.framework.creation import empty
from strata.framework.nn import functional as F
from strata.framework.nn.init import constant_
from strata.framework.nn.module import Module
from strata.framework.nn.parameter import Parameter
from strata.framework.tensor import Tensor

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _maybe_inplace(input: Tensor, inplace: bool, fn: Any) -> Tensor:  # noqa: A002
    return ops.inplace(input, fn) if inplace else fn(input)


# ---------------------------------------------------------------------------------------- functional
def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _maybe_inplace(input, inplace, lambda x: F.elu(x, _SELU_ALPHA) * _SELU_SCALE)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _maybe_inplace(input, inplace, lambda x: ops.where(x > 0, x, ((x / alpha).clamp(max=0.0).exp() - 1) * alpha))


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * tanh(softplus(x))."""
    return _maybe_inplace(input, inplace, lambda x: x * F.softplus(x).tanh())


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """relu6(x + 3) / 6."""
    return _maybe_inplace(input, inplace, lambda x: (x + 3.0).clamp(0.0, 6.0) / 6.0)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * relu6(x + 3) / 6."""
    # PyTorch's gradient is (2x + 3) / 6 inside (-3, 3), 0 below and 1 above; the product rule gives the same
    return _maybe_inplace(input, inplace, lambda x: x * hardsigmoid(x))


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """x / (1 + |x|)."""
    return input / (input.abs() + 1.0)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """x - tanh(x)."""
    return input - input.tanh()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    return ops.where(input > lambd, input - lambd, ops.where(input < -lambd, input + lambd, input * 0.0))


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """x where |x| > lambd, else 0."""
    return ops.where((input > lambd).logical_or(input < -lambd), input, input * 0.0)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:  # noqa: A002
    """x where x > threshold, else value."""
    return _maybe_inplace(input, inplace, lambda x: ops.where(x > threshold, x, x * 0.0 + value))


def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """a * sigmoid(b) where a, b are the halves of input along dim.

    Raises:
        RuntimeError: the dim's size is odd.
    """
    if input.shape[dim] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size "
                           f"{input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """x if x > 0 else weight * x, weight per channel (dim 1) or one shared value."""
    w = weight
    if weight.numel() > 1:
        if input.dim() < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {input.shape[1] if input.dim() > 1 else 1}.")
        w = weight.reshape(weight.numel(), *([1] * (input.dim() - 2)))
    return ops.where(input > 0, input, input * w)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """softmax(-x) along dim."""
    return F.softmax(-input, dim, dtype=dtype)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,  # noqa: A002
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU; in eval mode the slope is (lower + upper) / 2.

    Raises:
        NotImplementedError: training=True (the random slopes are not implemented).
    """
    if training:
        raise NotImplementedError("rrelu(training=True): strata does not draw random slopes; use eval mode")
    return F.leaky_relu(input, (lower + upper) / 2, inplace)


FUNCTIONAL = {"selu": selu, "celu": celu, "mish": mish, "hardsigmoid": hardsigmoid, "hardswish": hardswish,
              "softsign": softsign, "tanhshrink": tanhshrink, "softshrink": softshrink, "hardshrink": hardshrink,
              "threshold": threshold, "glu": glu, "prelu": prelu, "softmin": softmin, "rrelu": rrelu}


# ---------------------------------------------------------------------------------------- modules
class _Elementwise(Module):
    """An activation calling one function with fixed keyword options (and `inplace` when it has one)."""

    _options: tuple[str, ...] = ()

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        kw = {k: getattr(self, k) for k in self._options}
        return self._fn(input, **kw)

    def extra_repr(self) -> str:
        parts = [f"{k}={getattr(self, k)}" for k in self._options if k != "inplace"]
        if getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)


class LeakyReLU(_Elementwise):
    """x if x > 0 else negative_slope * x."""

    _options = ("negative_slope", "inplace")

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return F.leaky_relu(x, **kw)


class ELU(_Elementwise):
    """x if x > 0 else alpha * (exp(x) - 1)."""

    _options = ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return F.elu(x, **kw)


class CELU(ELU):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return celu(x, **kw)


class SELU(_Elementwise):
    """scale * elu(x, alpha), the self-normalising constants."""

    _options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return selu(x, **kw)


class Mish(SELU):
    """x * tanh(softplus(x))."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return mish(x, **kw)


class Hardswish(SELU):
    """x * relu6(x + 3) / 6."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return hardswish(x, **kw)


class Hardsigmoid(SELU):
    """relu6(x + 3) / 6."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return hardsigmoid(x, **kw)


class ReLU6(SELU):
    """min(max(x, 0), 6)."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return F.relu6(x, **kw)


class Softplus(_Elementwise):
    """log(1 + exp(beta x)) / beta (x above threshold)."""

    _options = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return F.softplus(x, **kw)


class Hardtanh(_Elementwise):
    """clamp(x, min_val, max_val)."""

    _options = ("min_val", "max_val", "inplace")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val <= min_val:
            raise ValueError("max_val must be larger than min_val")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return F.hardtanh(x, **kw)


class Threshold(_Elementwise):
    """x where x > threshold, else value."""

    _options = ("threshold", "value", "inplace")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return threshold(x, **kw)


class _Lambd(_Elementwise):
    _options = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd


class Softshrink(_Lambd):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return softshrink(x, **kw)


class Hardshrink(_Lambd):
    """x where |x| > lambd, else 0."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return hardshrink(x, **kw)


class _NoOptions(_Elementwise):
    pass


class LogSigmoid(_NoOptions):
    """log(sigmoid(x))."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return F.logsigmoid(x)


class Softsign(_NoOptions):
    """x / (1 + |x|)."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return softsign(x)


class Tanhshrink(_NoOptions):
    """x - tanh(x)."""

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return tanhshrink(x)


class GLU(_Elementwise):
    """a * sigmoid(b), the halves of the input along dim."""

    _options = ("dim",)

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return glu(x, **kw)


class Softmin(_Elementwise):
    """softmax(-x) along dim."""

    _options = ("dim",)

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def _fn(self, x: Tensor, **kw: Any) -> Tensor:
        return softmin(x, **kw)


class Softmax2d(Module):
    """Softmax over the channel dim of (N, C, H, W) or (C, H, W) input.

    Raises:
        ValueError: input not 3-D or 4-D.
    """

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)


class PReLU(Module):
    """x if x > 0 else a * x, with learnable a (one shared, or one per channel).

    Attributes:
        weight: (num_parameters,), initialised to `init`.
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


__all__ = ["CELU", "ELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
           "Mish", "PReLU", "ReLU6", "SELU", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign",
           "Tanhshrink", "Threshold", *FUNCTIONAL]
