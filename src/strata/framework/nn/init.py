"""Weight initialisation, as torch.nn.init: fill a tensor in place (under no_grad) from a distribution
whose scale follows the tensor's fan-in / fan-out (Glorot/Xavier, He/Kaiming). Random numbers come
from strata's generators (`Tensor.uniform_` / `normal_`: the device Philox generator on "cuda"), so
the values differ from PyTorch's for the same seed while the distributions are the same.

fan_in = size(1) * receptive field, fan_out = size(0) * receptive field, where the receptive field is
the product of the dims after the first two (kernel height * width for a conv weight).

Example:
    >>> import strata
    >>> from strata.framework.nn import init
    >>> w = strata.empty(4, 6)
    >>> init.constant_(w, 0.5).sum().item(), init.calculate_gain("relu") ** 2
    (12.0, 2.0000000000000004)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

from strata.framework import autograd
from strata.framework import dtypes as dt
from strata.framework.ops import empty, where
from strata.framework.tensor import Tensor

_LINEAR_LIKE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                "sigmoid")


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    """The recommended scale factor for weights feeding `nonlinearity`: 1 for linear/conv/sigmoid,
    5/3 for tanh, sqrt(2) for relu, sqrt(2 / (1 + negative_slope^2)) for leaky_relu (slope `param`,
    default 0.01), 3/4 for selu.

    Raises:
        ValueError: an unknown nonlinearity or an invalid negative slope.
    """
    if nonlinearity in _LINEAR_LIKE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, bool) or not isinstance(param, int | float):
            raise ValueError(f"negative_slope {param} not a valid number")
        else:
            slope = param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of at least 2 dims.

    Raises:
        ValueError: fewer than 2 dims.
    """
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _gen(generator: Any) -> dict[str, Any]:
    return {} if generator is None else {"generator": generator}


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with U(a, b) in place; returns `tensor`."""
    with autograd.no_grad():
        return tensor.uniform_(a, b, **_gen(generator))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with N(mean, std^2) in place; returns `tensor`."""
    with autograd.no_grad():
        return tensor.normal_(mean, std, **_gen(generator))


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val` in place; returns `tensor`."""
    with autograd.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1 in place; returns `tensor`."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0 in place; returns `tensor`."""
    return constant_(tensor, 0.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)); returns `tensor`."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)); returns `tensor`."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _empty_noop(tensor: Tensor) -> bool:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return True
    return False


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Any = None) -> Tensor:
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan), gain = calculate_gain(nonlinearity,
    a), fan by `mode` ("fan_in" or "fan_out"); returns `tensor`.

    Raises:
        ValueError: a bad mode, nonlinearity, or a tensor of fewer than 2 dims.
    """
    if _empty_noop(tensor):
        return tensor
    fan = _fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Any = None) -> Tensor:
    """He normal: N(0, std^2) with std = gain / sqrt(fan); returns `tensor`."""
    if _empty_noop(tensor):
        return tensor
    fan = _fan(tensor, mode)
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Any = None) -> Tensor:
    """Fill with N(mean, std^2) truncated to [a, b] (inverse-CDF sampling: u ~ U(cdf(a), cdf(b)), then
    the normal quantile of u, computed with strata ops); returns `tensor`."""
    def cdf(x: float) -> float:
        return (1.0 + math.erf((x - mean) / (std * math.sqrt(2.0)))) / 2.0

    with autograd.no_grad():
        u = empty(tensor.shape, dt.float64 if tensor.dtype is dt.float64 else dt.float32, tensor.device)
        lo, hi = max(cdf(a), 1e-12), min(cdf(b), 1 - 1e-7)
        u.uniform_(lo, hi, **_gen(generator))
        x = _normal_quantile(u) * std + mean
        return tensor.copy_(x.clamp(a, b))


# Acklam's rational approximation of the standard normal quantile (relative error < 1.2e-9)
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
      -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
      -1.328068155288572e01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
      4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)


def _horner(x: Tensor, coeffs: tuple[float, ...]) -> Tensor:
    acc: Any = x * coeffs[0] + coeffs[1]
    for c in coeffs[2:]:
        acc = acc * x + c
    return acc


def _normal_quantile(p: Tensor) -> Tensor:
    """Phi^-1(p) elementwise for p in (0, 1), as strata ops (so it runs on the tensor's device)."""
    q = p - 0.5
    r = q * q
    central = _horner(r, _A) * q / (_horner(r, _B) * r + 1)
    tail_p = where(p < 0.5, p, 1 - p)
    t = (tail_p.log() * -2).sqrt()
    tail = _horner(t, _C) / (_horner(t, _D) * t + 1)
    tail = where(p < 0.5, tail, -tail)
    return where((p - 0.5).abs() <= 0.5 - 0.02425, central, tail)
