"""Normalisation and 1-D pooling layers beside modules.py: `GroupNorm`, `InstanceNorm1d/2d` (without
running statistics), `MaxPool1d`, `AvgPool1d`, `CosineSimilarity`, `PairwiseDistance`, with their
functional forms (`group_norm`, `instance_norm`, `max_pool1d`, `avg_pool1d`, `pairwise_distance`).
Normalisations are compositions of differentiable framework ops; 1-D pooling is 2-D pooling over a
height-1 image (so "cuda" uses the library's pooling kernels).

Example:
    >>> import strata
    >>> from strata.framework.nn.norm_extra import GroupNorm, MaxPool1d
    >>> y = GroupNorm(2, 4)(strata.arange(16.0).reshape(2, 4, 2))
    >>> [round(v, 4) for v in y[0, :2].flatten().tolist()]
    [-1.3416, -0.4472, 0.4472, 1.3416]
    >>> MaxPool1d(2)(strata.arange(6.0).reshape(1, 1, 6)).tolist()
    [[[1.0, 3.0, 5.0]]]
"""

from __future__ import annotations

from typing import Any

from strata.framework.creation import empty
from strata.framework.nn import functional as F
from strata.framework.nn.init import ones_, zeros_
from strata.framework.nn.module import Module
from strata.framework.nn.parameter import Parameter
from strata.framework.tensor import Tensor


def _one(v: Any) -> int:
    return int(v[0]) if isinstance(v, tuple | list) else int(v)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,  # noqa: A002
               eps: float = 1e-5) -> Tensor:
    """Normalise (N, C, *) over each group of C / num_groups channels and the other dims, then scale and
    shift per channel.

    Raises:
        RuntimeError: C not divisible by num_groups.
    """
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    x = input.reshape(n, num_groups, -1)
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    y = ((x - mean) / (var + eps).sqrt()).reshape(tuple(input.shape))
    shape = (1, c) + (1,) * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,  # noqa: A002
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial dims (group_norm with one channel per group).

    Raises:
        NotImplementedError: running statistics (running_mean / running_var, or use_input_stats=False).
    """
    if running_mean is not None or running_var is not None or not use_input_stats:
        raise NotImplementedError("instance_norm with running statistics is not implemented in strata")
    return group_norm(input, input.shape[1], weight, bias, eps)


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,  # noqa: A002
               ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over windows of the last dim of (N, C, L) or (C, L)."""
    st = _one(stride) if stride not in (None, [], ()) else _one(kernel_size)
    out = F.max_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), (1, st), (0, _one(padding)),
                       (1, _one(dilation)), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Mean over windows of the last dim of (N, C, L) or (C, L)."""
    st = _one(stride) if stride not in (None, [], ()) else _one(kernel_size)
    return F.avg_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), (1, st), (0, _one(padding)), ceil_mode,
                        count_include_pad).squeeze(-2)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim."""
    d = (x1 - x2 + eps).abs()
    return (d ** p).sum(-1, keepdim=keepdim) ** (1.0 / p)


FUNCTIONAL = {"group_norm": group_norm, "instance_norm": instance_norm, "max_pool1d": max_pool1d,
              "avg_pool1d": avg_pool1d, "pairwise_distance": pairwise_distance}


class GroupNorm(Module):
    """Group normalisation with per-channel affine parameters (weight ones, bias zeros).

    Raises:
        ValueError: num_channels not divisible by num_groups.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(empty(num_channels, device=device, dtype=dtype))
            self.bias = Parameter(empty(num_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.affine:
            ones_(self.weight)
            zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"


class _InstanceNorm(Module):
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if track_running_stats:
            raise NotImplementedError(f"{type(self).__name__}(track_running_stats=True) is not implemented in strata")
        self.num_features, self.eps, self.momentum, self.affine = num_features, eps, momentum, affine
        self.track_running_stats = False
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            ones_(self.weight)
            zeros_(self.bias)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        unbatched = input.dim() == self._batched_dims - 1
        x = input.unsqueeze(0) if unbatched else input
        y = instance_norm(x, weight=self.weight, bias=self.bias, eps=self.eps)
        return y.squeeze(0) if unbatched else y

    _batched_dims = 4

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, " \
               f"track_running_stats={self.track_running_stats}"


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L)."""

    _batched_dims = 3


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W)."""

    _batched_dims = 4


class MaxPool1d(Module):
    """Max over windows of the last dim."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation, self.return_indices, self.ceil_mode = padding, dilation, return_indices, ceil_mode

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        return max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                          self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool1d(Module):
    """Mean over windows of the last dim."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode, self.count_include_pad = padding, ceil_mode, count_include_pad

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class CosineSimilarity(Module):
    """x1 . x2 / max(|x1| |x2|, eps) along dim."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        from strata.framework.nn.loss_extra import cosine_similarity  # NOTE: sibling module, defined there once

        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """||x1 - x2 + eps||_p over the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


__all__ = ["AvgPool1d", "CosineSimilarity", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "MaxPool1d",
           "PairwiseDistance", *FUNCTIONAL]
