"""Shape and sampling layers beside modules.py: adaptive pooling (`AdaptiveAvgPool1d/2d`,
`AdaptiveMaxPool1d/2d`), padding layers (`ReflectionPad1d/2d`, `ReplicationPad1d/2d`, `ZeroPad1d/2d`,
`ConstantPad1d/2d`, `CircularPad1d/2d`), `PixelShuffle` / `PixelUnshuffle`, channel dropout (`Dropout1d`,
`Dropout2d`, `Dropout3d`), `Upsample` (nearest, (bi/tri)linear) and `Unflatten`, with their functional forms.

All are compositions of differentiable framework ops. Adaptive pooling uses PyTorch's windows
(start = floor(i * size / out), end = ceil((i + 1) * size / out)); a window is a product of one range per
dimension, so pooling one dimension at a time gives the same averages and maxima.

Example:
    >>> import strata
    >>> from strata.framework.nn.layers_extra import AdaptiveAvgPool2d, PixelShuffle
    >>> AdaptiveAvgPool2d((1, 1))(strata.ones(2, 3, 5, 7)).shape, PixelShuffle(2)(strata.ones(1, 8, 3, 3)).shape
    (strata.Size([2, 3, 1, 1]), strata.Size([1, 2, 6, 6]))
"""

from __future__ import annotations

import math
from typing import Any

from strata.framework import joining
from strata.framework import random as _random
from strata.framework.nn import functional as F
from strata.framework.nn.module import Module
from strata.framework.tensor import Tensor


def _sizes(v: Any, n: int, x: Tensor) -> tuple[int, ...]:
    t = (v,) * n if v is None or isinstance(v, int) else tuple(v)
    # None keeps the input's size along that dim (PyTorch's convention)
    return tuple(x.shape[x.dim() - n + i] if s is None else int(s) for i, s in enumerate(t))


def _adaptive_1dim(x: Tensor, dim: int, out: int, mode: str) -> Tensor:
    size = x.shape[dim]
    if out <= 0:
        raise RuntimeError(f"adaptive pooling: output size must be positive, got {out}")
    if size % out == 0:
        k = size // out
        shape = [*x.shape[:dim], out, k, *x.shape[dim + 1:]]
        v = x.reshape(shape)
        return v.mean(dim + 1) if mode == "avg" else v.amax(dim + 1)
    parts = []
    for i in range(out):
        a, b = (i * size) // out, math.ceil((i + 1) * size / out)
        w = x.narrow(dim, a, b - a)
        parts.append(w.mean(dim) if mode == "avg" else w.amax(dim))
    return joining.stack(parts, dim)


def _adaptive(x: Tensor, output_size: Any, n: int, mode: str, name: str) -> Tensor:
    if x.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got {list(x.shape)}")
    if any(s == 0 for s in x.shape[-n:]):
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input has "
                           f"sizes {list(x.shape)} with dimension {x.dim() - n} being empty")
    sizes = _sizes(output_size, n, x)
    for i, s in enumerate(sizes):
        x = _adaptive_1dim(x, x.dim() - n + i, s, mode)
    return x


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows of the last dim of (N, C, L) or (C, L)."""
    return _adaptive(input, output_size, 1, "avg", "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Average over PyTorch's adaptive windows of (N, C, H, W) or (C, H, W) to output_size (int or pair;
    None keeps a dim)."""
    return _adaptive(input, output_size, 2, "avg", "adaptive_avg_pool2d")


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Tensor:  # noqa: A002
    """Max over adaptive windows of the last dim.

    Raises:
        NotImplementedError: return_indices=True.
    """
    if return_indices:
        raise NotImplementedError("adaptive_max_pool1d(return_indices=True) is not implemented in strata")
    return _adaptive(input, output_size, 1, "max", "adaptive_max_pool1d")


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Tensor:  # noqa: A002
    """Max over adaptive windows of the last two dims.

    Raises:
        NotImplementedError: return_indices=True.
    """
    if return_indices:
        raise NotImplementedError("adaptive_max_pool2d(return_indices=True) is not implemented in strata")
    return _adaptive(input, output_size, 2, "max", "adaptive_max_pool2d")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r).

    Raises:
        RuntimeError: fewer than 3 dims, or channels not divisible by r^2.
    """
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    n = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W).

    Raises:
        RuntimeError: fewer than 3 dims, or H/W not divisible by r.
    """
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"height={h}, width={w}, downscale_factor={r}")
    n = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def _channel_dropout(x: Tensor, p: float, training: bool, inplace: bool, batched_dims: int) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    lead = x.dim() - batched_dims + 1  # (N, C) or (C,)
    shape = [*x.shape[:lead]] + [1] * (x.dim() - lead)
    if p == 1.0:
        mask = _random.rand(*shape, device=x.device, dtype=x.dtype) * 0.0
    else:
        mask = (_random.rand(*shape, device=x.device) >= p).to(x.dtype) / (1.0 - p)
    return x.mul_(mask) if inplace else x * mask


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, L) / (C, L) with probability p, scale the rest by 1 / (1 - p)."""
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input.")
    return _channel_dropout(input, p, training, inplace, 2 if input.dim() == 3 else 1)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, H, W) / (C, H, W) with probability p, scale the rest by 1 / (1 - p)."""
    return _channel_dropout(input, p, training, inplace, 3 if input.dim() == 4 else 2)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero whole channels of (N, C, D, H, W) / (C, D, H, W)."""
    return _channel_dropout(input, p, training, inplace, 4 if input.dim() == 5 else 3)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",  # noqa: A002
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims (all after N, C): mode 'nearest' (source index floor(out_index * scale)),
    'linear' / 'bilinear' / 'trilinear' (separable linear interpolation, PyTorch's half-pixel source
    coordinates, or corner-aligned with align_corners=True). As in PyTorch, a given scale_factor sets
    the coordinate scale (1 / scale_factor) unless recompute_scale_factor.

    Raises:
        NotImplementedError: another mode, or antialias.
        ValueError: neither or both of size and scale_factor; align_corners with mode 'nearest'.
    """
    linear = {"linear": 1, "bilinear": 2, "trilinear": 3}
    if mode != "nearest" and mode not in linear or antialias:
        raise NotImplementedError(f"interpolate(mode={mode!r}, antialias={antialias}): strata implements modes "
                                  "'nearest', 'linear', 'bilinear' and 'trilinear' without antialias")
    if mode == "nearest" and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | "
                         "bicubic | trilinear")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined")
    n = input.dim() - 2
    if mode in linear and linear[mode] != n:
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {linear[mode] + 2}D input")
    if size is not None:
        out = _sizes(size, n, input)
        scales: list[float | None] = [None] * n
    else:
        sf = (scale_factor,) * n if isinstance(scale_factor, int | float) else tuple(scale_factor)
        out = tuple(int(math.floor(input.shape[2 + i] * sf[i])) for i in range(n))
        scales = [None if recompute_scale_factor else 1.0 / float(sf[i]) for i in range(n)]
    x = input
    for i in range(n):
        d, size_in = 2 + i, x.shape[2 + i]
        given = scales[i]
        scale: float = given if given is not None else size_in / out[i]
        if mode == "nearest":
            if out[i] % size_in == 0 and given in (None, size_in / out[i]):
                x = x.repeat_interleave(out[i] // size_in, dim=d)
            else:
                idx = [min(int(math.floor(j * scale)), size_in - 1) for j in range(out[i])]
                x = x.index_select(d, _index(idx, x))
            continue
        x = _linear_1dim(x, d, size_in, out[i], scale, bool(align_corners))
    return x


def _linear_1dim(x: Tensor, d: int, size_in: int, size_out: int, scale: float, align_corners: bool) -> Tensor:
    """Linear interpolation along dim d: each output is a blend of its two neighbouring inputs."""
    lo, hi, w = [], [], []
    for j in range(size_out):
        if align_corners:
            src = j * (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
        else:
            src = max((j + 0.5) * scale - 0.5, 0.0)
        i0 = min(int(math.floor(src)), size_in - 1)
        lo.append(i0)
        hi.append(min(i0 + 1, size_in - 1))
        w.append(src - i0)
    shape = [1] * x.dim()
    shape[d] = size_out
    from strata.framework.creation import tensor  # NOTE: same layer; the blend weights are host metadata

    wt = tensor(w, dtype=x.dtype, device=x.device).reshape(shape)
    a, b = x.index_select(d, _index(lo, x)), x.index_select(d, _index(hi, x))
    return a + (b - a) * wt


def _index(idx: list[int], like: Tensor) -> Tensor:
    from strata.framework.creation import tensor  # NOTE: same layer; only this path builds an index tensor

    return tensor(idx, device=like.device)


FUNCTIONAL = {"adaptive_avg_pool1d": adaptive_avg_pool1d, "adaptive_avg_pool2d": adaptive_avg_pool2d,
              "adaptive_max_pool1d": adaptive_max_pool1d, "adaptive_max_pool2d": adaptive_max_pool2d,
              "pixel_shuffle": pixel_shuffle, "pixel_unshuffle": pixel_unshuffle, "dropout1d": dropout1d,
              "dropout2d": dropout2d, "dropout3d": dropout3d, "interpolate": interpolate}


# ---------------------------------------------------------------------------------------- modules
class _Adaptive(Module):
    _fn: Any

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return type(self)._fn(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """Average pooling to a fixed output length."""

    _fn = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_Adaptive):
    """Average pooling to a fixed output size."""

    _fn = staticmethod(adaptive_avg_pool2d)


class AdaptiveMaxPool1d(_Adaptive):
    """Max pooling to a fixed output length."""

    _fn = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_Adaptive):
    """Max pooling to a fixed output size."""

    _fn = staticmethod(adaptive_max_pool2d)


class _Pad(Module):
    mode = "constant"
    n = 2

    def __init__(self, padding: Any, value: float = 0.0) -> None:
        super().__init__()
        self.padding = (padding,) * (2 * self.n) if isinstance(padding, int) else tuple(padding)
        if len(self.padding) != 2 * self.n:
            raise ValueError(f"{type(self).__name__}: padding must be an int or {2 * self.n} ints, got {padding}")
        self.value = value

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if self.mode == "constant":
            return F.pad(input, list(self.padding), "constant", self.value)
        return F.pad(input, list(self.padding), self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}, value={self.value}" if self.mode == "constant" else f"{self.padding}"


class ReflectionPad1d(_Pad):
    """Mirror the last dim about its edges."""

    mode, n = "reflect", 1


class ReflectionPad2d(_Pad):
    """Mirror the last two dims about their edges (left, right, top, bottom)."""

    mode, n = "reflect", 2


class ReplicationPad1d(_Pad):
    """Repeat the edge values of the last dim."""

    mode, n = "replicate", 1


class ReplicationPad2d(_Pad):
    """Repeat the edge values of the last two dims."""

    mode, n = "replicate", 2


class CircularPad1d(_Pad):
    """Wrap the last dim around."""

    mode, n = "circular", 1


class CircularPad2d(_Pad):
    """Wrap the last two dims around."""

    mode, n = "circular", 2


class ConstantPad1d(_Pad):
    """Pad the last dim with `value`."""

    n = 1


class ConstantPad2d(_Pad):
    """Pad the last two dims with `value`."""

    n = 2


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)


class PixelShuffle(Module):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class _ChannelDropout(Module):
    _fn: Any

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_ChannelDropout):
    """Zero whole channels of (N, C, L) in training."""

    _fn = staticmethod(dropout1d)


class Dropout2d(_ChannelDropout):
    """Zero whole channels of (N, C, H, W) in training."""

    _fn = staticmethod(dropout2d)


class Dropout3d(_ChannelDropout):
    """Zero whole channels of (N, C, D, H, W) in training."""

    _fn = staticmethod(dropout3d)


class Upsample(Module):
    """Resize by `size` or `scale_factor` (modes 'nearest', 'linear', 'bilinear', 'trilinear')."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool | None = None, recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.size, self.scale_factor, self.mode, self.align_corners = size, scale_factor, mode, align_corners

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners)

    def extra_repr(self) -> str:
        what = f"scale_factor={float(self.scale_factor)}" if self.scale_factor is not None else f"size={self.size}"
        return f"{what}, mode='{self.mode}'"


class UpsamplingNearest2d(Upsample):
    """Upsample with mode 'nearest'."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, "nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample with mode 'bilinear' and align_corners=True (PyTorch's definition of this layer)."""

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, "bilinear", align_corners=True)


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size`."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "CircularPad1d",
           "CircularPad2d", "ConstantPad1d", "ConstantPad2d", "Dropout1d", "Dropout2d", "Dropout3d", "PixelShuffle",
           "PixelUnshuffle", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "Unflatten",
           "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "ZeroPad1d", "ZeroPad2d", *FUNCTIONAL]
