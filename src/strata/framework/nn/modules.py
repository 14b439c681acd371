"""The layers of torch.nn with their names, signatures, defaults, parameters, initialisation and printed
form: Linear, Embedding, LayerNorm, RMSNorm, Dropout, Conv2d, MaxPool2d, AvgPool2d, BatchNorm1d/2d,
activations (ReLU, GELU, SiLU, Tanh, Sigmoid, Softmax, LogSoftmax), Identity and Flatten.

Each layer holds its Parameters and buffers and calls `strata.nn.functional` in `forward`, so the math
runs where the input lives (NumPy on "cpu", kernels and strata.libs on "cuda"). Initialisation follows
PyTorch's (Linear and Conv2d: kaiming_uniform_(a=sqrt(5)) weights, U(-1/sqrt(fan_in), 1/sqrt(fan_in))
biases) with strata's random generators.

Example:
    >>> import strata
    >>> from strata.framework import nn
    >>> layer = nn.Linear(3, 2)
    >>> layer, layer.weight.shape, layer(strata.ones(5, 3)).shape
    (Linear(in_features=3, out_features=2, bias=True), strata.Size([2, 3]), strata.Size([5, 2]))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from strata.framework import autograd
from strata.framework import dtypes as dt
from strata.framework.creation import empty, ones, tensor, zeros
from strata.framework.nn import functional as F  # noqa: N812 - PyTorch's spelling
from strata.framework.nn import init
from strata.framework.nn.module import Module
from strata.framework.nn.parameter import Parameter
from strata.framework.tensor import Tensor


def _pair(x: Any) -> tuple[int, int]:
    if isinstance(x, Sequence):
        if len(x) != 2:
            raise ValueError(f"expected 2 values, got {len(x)}: {x!r}")
        return int(x[0]), int(x[1])
    return int(x), int(x)


def _factory(device: Any, dtype: Any) -> dict[str, Any]:
    return {"device": device, "dtype": dtype}


class Identity(Module):
    """Returns its input (arguments are accepted and ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """input."""
        return input


class Linear(Module):
    """y = x @ weight.T + bias.

    Args:
        in_features, out_features: sizes of the last dim of input and output.
        bias: whether to add a learned bias.
        device, dtype: where and how the parameters are created.

    Attributes:
        weight: (out_features, in_features), kaiming_uniform_(a=sqrt(5)).
        bias: (out_features,), U(-1/sqrt(in_features), 1/sqrt(in_features)), or None.
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(empty(out_features, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from PyTorch's default distributions."""
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """input @ weight.T + bias."""
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


def _reset_weight_and_bias(weight: Tensor, bias: Tensor | None) -> None:
    # a = sqrt(5) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the weight, the same bound as the bias
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


class Embedding(Module):
    """A lookup table: row `i` of `weight` for each index `i` of the input.

    Args:
        num_embeddings, embedding_dim: table size.
        padding_idx: a row kept at zero that receives no gradient (negative counts from the end).
        max_norm, norm_type, scale_grad_by_freq, sparse: accepted as PyTorch's; passed to F.embedding.
        _weight: an initial table to use instead of N(0, 1); _freeze: make it not require grad.

    Raises:
        AssertionError: padding_idx out of range (as PyTorch).
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                 sparse: bool = False, _weight: Tensor | None = None, _freeze: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty((num_embeddings, embedding_dim), **_factory(device, dtype)),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self) -> None:
        """Draw the table from N(0, 1); zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with autograd.no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """weight[input]."""
        kw: dict[str, Any] = {}
        if self.max_norm is not None:
            kw.update(max_norm=self.max_norm, norm_type=self.norm_type)
        if self.scale_grad_by_freq:
            kw["scale_grad_by_freq"] = True
        if self.sparse:
            kw["sparse"] = True
        return F.embedding(input, self.weight, self.padding_idx, **kw)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings: Tensor, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        sparse: bool = False) -> Embedding:
        """An Embedding whose table is `embeddings` (2-D), frozen by default."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)


def _shape_tuple(normalized_shape: Any) -> tuple[int, ...]:
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(s) for s in normalized_shape)


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims.

    Args:
        normalized_shape: the trailing shape to normalise over (an int or a sequence).
        eps: added to the variance.
        elementwise_affine: learn weight (ones) and bias (zeros).
        bias: learn the bias (with elementwise_affine).
        device, dtype: where and how the parameters are created.
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, **_factory(device, dtype)))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, **_factory(device, dtype)))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self) -> None:
        """weight = 1, bias = 0."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Layer normalisation of input."""
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """y = x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims.

    Args:
        normalized_shape: the trailing shape to normalise over.
        eps: added to the mean square (None: the dtype's machine epsilon, as PyTorch).
        elementwise_affine: learn weight (ones).
        device, dtype: where and how the parameters are created.
    """

    def __init__(self, normalized_shape: Any, eps: float | None = None, elementwise_affine: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape = _shape_tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, **_factory(device, dtype)))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self) -> None:
        """weight = 1."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        """RMS normalisation of x."""
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class Dropout(Module):
    """In training mode, zero each element with probability p and scale the rest by 1/(1-p); in eval
    mode, the identity.

    Raises:
        ValueError: p outside [0, 1].
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """F.dropout(input, p, training, inplace)."""
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class Conv2d(Module):
    """2-D cross-correlation over (N, C_in, H, W) input: out = conv(input, weight) + bias.

    Args:
        in_channels, out_channels: channel counts (each divisible by `groups`).
        kernel_size, stride, dilation: an int or a pair.
        padding: an int, a pair, "valid" (none) or "same" (output size = input size; stride 1 only).
        groups: channel groups; bias: learn a bias; padding_mode: only "zeros" is implemented.
        device, dtype: where and how the parameters are created.

    Attributes:
        weight: (out_channels, in_channels // groups, kH, kW); bias: (out_channels,) or None.

    Raises:
        ValueError: bad groups, padding string or padding mode.
    """

    weight: Parameter
    bias: Parameter | None

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.kernel_size = _pair(kernel_size)
        self.stride = _pair(stride)
        self.dilation = _pair(dilation)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'same', 'valid'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding: Any = padding
        else:
            self.padding = _pair(padding)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode='{padding_mode}'")
        if padding_mode != "zeros":
            raise NotImplementedError(f"Conv2d: padding_mode='{padding_mode}' is not implemented yet (only 'zeros')")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.padding_mode = padding_mode
        self.transposed = False
        self.output_padding = (0, 0)
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        self.weight = Parameter(empty(shape, **_factory(device, dtype)))
        if bias:
            self.bias = Parameter(empty(out_channels, **_factory(device, dtype)))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias from PyTorch's default distributions."""
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The convolution of input with weight, plus bias."""
        padding: Any = self.padding
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            # total padding d*(k-1) per dim; an odd total puts the extra row/column after, as PyTorch
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            if any(t % 2 for t in totals):
                (th, tw) = totals
                input = F.pad(input, [tw // 2, tw - tw // 2, th // 2, th - th // 2])
                padding = (0, 0)
            else:
                padding = (totals[0] // 2, totals[1] // 2)
        return F.conv2d(input, self.weight, self.bias, self.stride, padding, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if isinstance(self.padding, str) or self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class MaxPool2d(Module):
    """Max over kernel_size windows of (N, C, H, W) or (C, H, W) input.

    Args:
        kernel_size: window size; stride: window step (default kernel_size); padding: implicit -inf
        padding; dilation, return_indices, ceil_mode: as PyTorch's (passed to F.max_pool2d).
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, dilation: Any = 1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor) -> Any:  # noqa: A002
        """F.max_pool2d of input."""
        kw: dict[str, Any] = {}
        if self.dilation != 1:
            kw["dilation"] = self.dilation
        if self.ceil_mode:
            kw["ceil_mode"] = True
        if self.return_indices:
            kw["return_indices"] = True
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, **kw)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Mean over kernel_size windows of (N, C, H, W) or (C, H, W) input.

    Args:
        kernel_size: window size; stride: window step (default kernel_size); padding: implicit zero
        padding; ceil_mode, count_include_pad, divisor_override: as PyTorch's (passed to F.avg_pool2d).
    """

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """F.avg_pool2d of input."""
        kw: dict[str, Any] = {}
        if self.ceil_mode:
            kw["ceil_mode"] = True
        if not self.count_include_pad:
            kw["count_include_pad"] = False
        if self.divisor_override is not None:
            kw["divisor_override"] = self.divisor_override
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, **kw)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _BatchNorm(Module):
    """Batch normalisation over all dims but the channel dim (1), with running statistics.

    In training mode the batch's mean and (biased) variance normalise the input, and the running mean
    and (unbiased) variance move toward them by `momentum` (a cumulative average when momentum is
    None); in eval mode the running statistics normalise.
    """

    _dims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1, affine: bool = True,
                 track_running_stats: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, **_factory(device, dtype)))
            if bias:
                self.bias = Parameter(zeros(num_features, **_factory(device, dtype)))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, **_factory(device, dtype)))
            self.register_buffer("running_var", ones(num_features, **_factory(device, dtype)))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dt.int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self) -> None:
        """running_mean = 0, running_var = 1, num_batches_tracked = 0."""
        if self.track_running_stats:
            with autograd.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """Reset the running statistics, weight = 1, bias = 0."""
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() not in self._dims:
            want = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {want} input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """Normalise input by batch statistics (training) or running statistics (eval)."""
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with autograd.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average (reads the count, as PyTorch does)
                factor = 1.0 / float(self.num_batches_tracked.item())
        use_batch_stats = self.training or (self.running_mean is None and self.running_var is None)
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch_stats, factor, self.eps)

    def _load_from_state_dict(self, state_dict: Any, prefix: str, local_metadata: dict[str, Any], strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str],
                              assign: bool = False) -> None:
        # checkpoints without num_batches_tracked (older PyTorch) load, keeping the current count
        key = prefix + "num_batches_tracked"
        if self.track_running_stats and key not in state_dict and self.num_batches_tracked is not None:
            state_dict[key] = self.num_batches_tracked
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs, assign)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input over N (and L), per channel C."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input over N, H, W, per channel C."""

    _dims = (4,)


class _InplaceActivation(Module):
    """An elementwise activation with PyTorch's `inplace` option: F.<function>(input, inplace=...)."""

    function: str  # looked up at call time, so the traced F.<function> runs

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """The activation of input (written into input when inplace)."""
        fn = getattr(F, self.function)
        return fn(input, inplace=True) if self.inplace else fn(input)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_InplaceActivation):
    """max(x, 0) elementwise."""

    function = "relu"


class GELU(Module):
    """x * Phi(x) elementwise (approximate='tanh': the tanh approximation).

    Raises:
        ValueError: approximate not 'none' or 'tanh' (when called, as PyTorch).
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """F.gelu(input, approximate)."""
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(_InplaceActivation):
    """x * sigmoid(x) elementwise."""

    function = "silu"


class Tanh(Module):
    """tanh(x) elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """input.tanh()."""
        return input.tanh()


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """input.sigmoid()."""
        return input.sigmoid()


class Softmax(Module):
    """exp(x) / sum(exp(x)) along `dim`."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """F.softmax(input, dim)."""
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """log(softmax(x)) along `dim`."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """F.log_softmax(input, dim)."""
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Flatten(Module):
    """Merge dims start_dim..end_dim into one (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        """input.flatten(start_dim, end_dim)."""
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"
