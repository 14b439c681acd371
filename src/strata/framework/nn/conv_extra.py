"""The convolutions beside Conv2d: `conv1d` / `Conv1d` (a 2-D convolution over a height-1 image) and the
transposed convolutions `conv_transpose1d` / `conv_transpose2d` / `ConvTranspose1d` / `ConvTranspose2d`
(the gradient of a convolution with respect to its input, used to upsample in GANs and decoders).

A transposed convolution is computed as PyTorch defines it: the input dilated by the stride (stride - 1
zeros between elements, built with stack and reshape so it stays differentiable), padded by
dilation * (kernel - 1) - padding on each side (plus output_padding after), then convolved at stride 1
with the kernel flipped and its in/out channels swapped (per group). The convolution itself is
`F.conv2d`, so "cuda" runs strata.libs.dnn's kernels forward and backward.

Example:
    >>> import strata
    >>> from strata.framework.nn.conv_extra import ConvTranspose2d
    >>> up = ConvTranspose2d(4, 2, kernel_size=4, stride=2, padding=1)
    >>> up(strata.ones(1, 4, 5, 5)).shape
    strata.Size([1, 2, 10, 10])
"""

from __future__ import annotations

from typing import Any

from strata.framework import joining
from strata.framework.creation import empty, zeros
from strata.framework.nn import functional as F
from strata.framework.nn.module import Module
from strata.framework.nn.modules import _reset_weight_and_bias
from strata.framework.nn.parameter import Parameter
from strata.framework.tensor import Tensor

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(v: Any, n: int) -> tuple[int, ...]:
    if isinstance(v, int):
        return (v,) * n
    t = tuple(int(x) for x in v)
    if len(t) == 1 and n > 1:
        return t * n
    if len(t) != n:
        raise ValueError(f"expected {n} values, got {v}")
    return t


# ---------------------------------------------------------------------------------------- functional
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation of (N, C, L) (or (C, L)) with weight (K, C / groups, k), + bias (K,).

    Raises:
        RuntimeError: not a 2-D/3-D input and a 3-D weight, or channels not matching.
    """
    if input.dim() not in (2, 3) or weight.dim() != 3:
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv1d, but got input of size: "
                           f"{list(input.shape)}")
    pad: Any = padding if isinstance(padding, str) else (0, _tuple(padding, 1)[0])
    out = F.conv2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, _tuple(stride, 1)[0]), pad,
                   (1, _tuple(dilation, 1)[0]), groups)
    return out.squeeze(-2)


def _dilate(x: Tensor, dim: int, s: int) -> Tensor:
    """x with s - 1 zeros inserted between neighbours along dim (differentiable: stack, reshape, narrow)."""
    if s == 1 or x.shape[dim] == 0:
        return x
    n = x.shape[dim]
    z = zeros(*x.shape, dtype=x.dtype, device=x.device)
    st = joining.stack([x] + [z] * (s - 1), dim + 1)
    shape = list(x.shape)
    shape[dim] = n * s
    return st.reshape(shape).narrow(dim, 0, (n - 1) * s + 1)


def _conv_transpose(x: Tensor, w: Tensor, b: Tensor | None, stride: tuple[int, ...], padding: tuple[int, ...],
                    output_padding: tuple[int, ...], groups: int, dilation: tuple[int, ...]) -> Tensor:
    """conv_transpose2d on batched 4-D input (see the module docstring for the construction)."""
    cin = x.shape[1]
    if w.shape[0] != cin:
        raise RuntimeError(f"Given transposed=1, weight of size {list(w.shape)}, expected input{list(x.shape)} to "
                           f"have {w.shape[0]} channels, but got {cin} channels instead")
    for i in range(2):
        if output_padding[i] >= max(stride[i], dilation[i]):
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got "
                               f"output_padding_height: {output_padding[0]} output_padding_width: "
                               f"{output_padding[1]} stride_height: {stride[0]} stride_width: {stride[1]} "
                               f"dilation_height: {dilation[0]} dilation_width: {dilation[1]}")
    y = _dilate(_dilate(x, 2, stride[0]), 3, stride[1])
    k = (w.shape[2], w.shape[3])
    lo = [dilation[i] * (k[i] - 1) - padding[i] for i in range(2)]
    y = F.pad(y, [lo[1], lo[1] + output_padding[1], lo[0], lo[0] + output_padding[0]])
    cout_g = w.shape[1]
    # (Cin, Cout/g, kh, kw) -> per group (Cout/g, Cin/g, kh, kw), flipped spatially
    wg = w.reshape(groups, cin // groups, cout_g, k[0], k[1]).transpose(1, 2)
    wc = wg.reshape(groups * cout_g, cin // groups, k[0], k[1]).flip([2, 3])
    return F.conv2d(y, wc, b, 1, 0, dilation, groups)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """2-D transposed convolution of (N, C_in, H, W) (or (C_in, H, W)) with weight (C_in, C_out / groups,
    kH, kW): output size (H - 1) * stride - 2 * padding + dilation * (kH - 1) + output_padding + 1.

    Raises:
        RuntimeError: a wrong input rank, channels not matching, output_padding too large.
    """
    if input.dim() not in (3, 4) or weight.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d, but got input of "
                           f"size: {list(input.shape)}")
    unbatched = input.dim() == 3
    x = input.unsqueeze(0) if unbatched else input
    out = _conv_transpose(x, weight, bias, _tuple(stride, 2), _tuple(padding, 2), _tuple(output_padding, 2), groups,
                          _tuple(dilation, 2))
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1) -> Tensor:
    """1-D transposed convolution of (N, C_in, L) (or (C_in, L)) with weight (C_in, C_out / groups, k)."""
    if input.dim() not in (2, 3) or weight.dim() != 3:
        raise RuntimeError(f"Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input of "
                           f"size: {list(input.shape)}")
    out = conv_transpose2d(input.unsqueeze(-2), weight.unsqueeze(-2), bias, (1, _tuple(stride, 1)[0]),
                           (0, _tuple(padding, 1)[0]), (0, _tuple(output_padding, 1)[0]), groups,
                           (1, _tuple(dilation, 1)[0]))
    return out.squeeze(-2)


FUNCTIONAL = {"conv1d": conv1d, "conv_transpose1d": conv_transpose1d, "conv_transpose2d": conv_transpose2d}


# ---------------------------------------------------------------------------------------- modules
class _ConvNd(Module):
    """Shared construction: checks, weight (out, in/g, *k) or transposed (in, out/g, *k), PyTorch's init."""

    weight: Parameter
    bias: Parameter | None

    def __init__(self, n: int, transposed: bool, in_channels: int, out_channels: int, kernel_size: Any, stride: Any,
                 padding: Any, dilation: Any, groups: int, bias: bool, padding_mode: str, output_padding: Any,
                 device: Any, dtype: Any) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        if transposed and padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _tuple(kernel_size, n), _tuple(stride, n), _tuple(dilation, n)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _tuple(padding, n)
        self.output_padding = _tuple(output_padding, n)
        self.padding_mode, self.transposed = padding_mode, transposed
        shape = ((in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups))
        factory = {"device": device, "dtype": dtype}
        self.weight = Parameter(empty(*shape, *self.kernel_size, **factory))
        if bias:
            self.bias = Parameter(empty(out_channels, **factory))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from PyTorch's default distributions."""
        _reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self) -> str:
        n = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}")
        if isinstance(self.padding, str) or self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """1-D cross-correlation over (N, C_in, L) input (weight (out, in / groups, k)); padding modes
    'zeros', 'reflect', 'replicate', 'circular'."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(1, False, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, 0, device, dtype)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if self.padding_mode != "zeros" and not isinstance(self.padding, str):
            p = self.padding[0]
            return conv1d(F.pad(input, [p, p], mode=self.padding_mode), self.weight, self.bias, self.stride, 0,
                          self.dilation, self.groups)
        return conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ConvTranspose1d(_ConvNd):
    """1-D transposed convolution (weight (in, out / groups, k))."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(1, True, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device, dtype)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        op = _output_padding(input, output_size, self.stride, self.padding, self.kernel_size, self.dilation,
                             self.output_padding)
        return conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                self.dilation)


class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution (weight (in, out / groups, kH, kW)); `forward(input, output_size)` picks
    the output_padding that reaches output_size, as PyTorch."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        super().__init__(2, True, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device, dtype)

    def forward(self, input: Tensor, output_size: Any = None) -> Tensor:  # noqa: A002
        op = _output_padding(input, output_size, self.stride, self.padding, self.kernel_size, self.dilation,
                             self.output_padding)
        return conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                                self.dilation)


def _output_padding(x: Tensor, output_size: Any, stride: tuple[int, ...], padding: tuple[int, ...],
                    kernel: tuple[int, ...], dilation: tuple[int, ...], default: tuple[int, ...]) -> tuple[int, ...]:
    """The output_padding that makes the output `output_size` (its last len(kernel) entries).

    Raises:
        ValueError: output_size outside the reachable range.
    """
    if output_size is None:
        return default
    n = len(kernel)
    want = [int(s) for s in list(output_size)[-n:]]
    spatial = x.shape[-n:]
    out = []
    for i in range(n):
        base = (spatial[i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (kernel[i] - 1) + 1
        if not base <= want[i] < base + stride[i]:
            raise ValueError(f"requested an output size of {want}, but valid sizes range from {base} to "
                             f"{base + stride[i] - 1} (for an input of {list(spatial)})")
        out.append(want[i] - base)
    return tuple(out)


__all__ = ["Conv1d", "ConvTranspose1d", "ConvTranspose2d", *FUNCTIONAL]
