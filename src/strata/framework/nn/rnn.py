"""Recurrent layers, as torch.nn's: `RNN` (tanh or relu), `LSTM`, `GRU` (multi-layer, `batch_first`,
`bidirectional`, dropout between layers, unbatched input) and the single-step cells `RNNCell`,
`LSTMCell`, `GRUCell`, with PyTorch's parameter names (`weight_ih_l0`, `weight_hh_l0_reverse`, ...),
shapes, gate order (LSTM: input, forget, cell, output; GRU: reset, update, new), initialisation
(every parameter uniform in +-1/sqrt(hidden_size)) and PackedSequence input (strata.nn.utils.rnn: each
sequence stops at its own length), so state dicts move between strata and PyTorch.

Each layer projects the whole input sequence through `weight_ih` in one matmul, then runs the time
loop with one matmul against `weight_hh` and the gate arithmetic per step, all as differentiable
framework ops: on "cuda" every step is library and framework kernels and backpropagation through time
is autograd's. On "cpu" an LSTM layer (and an LSTM cell's step) is one fused op instead (rnn_cpu: the
recurrence and its backpropagation through time in NumPy, one autograd node per layer), the step-by-step
ops remaining for packed sequences and for higher-order gradients. On "cuda" each LSTM, GRU and RNN step
(of a layer or a cell) is a fused cell instead (rnn_cuda, cuDNN's role): the hidden projection by BLAS and
the gate arithmetic in one kernel launch, one autograd node with a one-kernel backward; an LSTM or GRU
layer (unpacked input) is one node for all its steps, with one GEMM for dW_hh over them. The composite step
ops remain under autocast and for higher-order gradients (the fused backward recomputes them).

Example:
    >>> import strata
    >>> from strata.framework.nn.rnn import LSTM
    >>> lstm = LSTM(input_size=3, hidden_size=5, num_layers=2, batch_first=True, bidirectional=True)
    >>> out, (h, c) = lstm(strata.ones(4, 7, 3))
    >>> out.shape, h.shape, c.shape
    (strata.Size([4, 7, 10]), strata.Size([4, 4, 5]), strata.Size([4, 4, 5]))
"""

from __future__ import annotations

import math
from typing import Any

from strata.framework import joining, ops
from strata.framework.creation import empty, tensor, zeros
from strata.framework.nn import functional as F
from strata.framework.nn import init, rnn_cpu, rnn_cuda
from strata.framework.nn.module import Module
from strata.framework.nn.parameter import Parameter
from strata.framework.nn.utils.rnn import PackedSequence, pad_packed_sequence, repack
from strata.framework.tensor import Tensor

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# ---------------------------------------------------------------------------------------- one step
def _lstm_step(xp: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    """One LSTM step from the precomputed input projection xp = x W_ih^T + b_ih: fused on "cpu"
    (rnn_cpu) and "cuda" (rnn_cuda), else the composite below."""
    fused = rnn_cpu.lstm_step(xp, h, c, w_hh, b_hh, _lstm_step_composite)
    if fused is None:
        fused = rnn_cuda.lstm_step(xp, h, c, w_hh, b_hh, _lstm_step_composite)
    return fused if fused is not None else _lstm_step_composite(xp, h, c, w_hh, b_hh)


def _lstm_step_composite(xp: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None
                         ) -> tuple[Tensor, Tensor]:
    """The LSTM step in framework ops (every device; differentiable to any order)."""
    gates = xp + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _lstm_layer_composite(xp: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool
                          ) -> tuple[Tensor, Tensor, Tensor]:
    """One LSTM layer step by step in framework ops: (outputs (T, N, H), h_n, c_n)."""
    xs = xp.unbind(0)
    out: list[Tensor] = [h] * len(xs)
    for t in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
        h, c = _lstm_step_composite(xs[t], h, c, w_hh, b_hh)
        out[t] = h
    return joining.stack(out, 0), h, c


def _gru_step(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    """One GRU step: fused on "cuda" (rnn_cuda), else the composite below."""
    fused = rnn_cuda.gru_step(xp, h, w_hh, b_hh, _gru_step_composite)
    return fused if fused is not None else _gru_step_composite(xp, h, w_hh, b_hh)


def _gru_step_composite(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> Tensor:
    """One GRU step in framework ops: n = tanh(x_n + r * (h W_hn^T + b_hn)), h' = (1 - z) n + z h."""
    hp = F.linear(h, w_hh, b_hh)
    xr, xz, xn = xp.chunk(3, -1)
    hr, hz, hn = hp.chunk(3, -1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (h - n)


def _rnn_step(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool) -> Tensor:
    fused = rnn_cuda.rnn_step(xp, h, w_hh, b_hh, relu, _rnn_step_composite)
    return fused if fused is not None else _rnn_step_composite(xp, h, w_hh, b_hh, relu)


def _rnn_step_composite(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool) -> Tensor:
    pre = xp + F.linear(h, w_hh, b_hh)
    return F.relu(pre) if relu else pre.tanh()


# ---------------------------------------------------------------------------------------- layers
class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU (see the module docstring).

    An LSTM with `proj_size` > 0 projects each step's hidden state to proj_size features through
    `weight_hr_l{k}` (PyTorch's LSTM with projections): h has proj_size features, c keeps hidden_size. Its
    steps run as framework ops (no fused cell).

    Raises:
        ValueError: a bad dropout, num_layers, hidden_size or proj_size; proj_size on a non-LSTM.
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be an integer greater than zero" if isinstance(hidden_size, int)
                             else f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, float(dropout), bidirectional
        self.proj_size = proj_size
        gate = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        out_size = proj_size or hidden_size  # the features of h (and of each layer's output per direction)
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                in_size = input_size if layer == 0 else out_size * dirs
                names = [f"weight_ih{sfx}", f"weight_hh{sfx}"] + ([f"bias_ih{sfx}", f"bias_hh{sfx}"] if bias else [])
                shapes = [(gate, in_size), (gate, out_size)] + ([(gate,), (gate,)] if bias else [])
                if proj_size:
                    names.append(f"weight_hr{sfx}")
                    shapes.append((proj_size, hidden_size))
                for name, shape in zip(names, shapes, strict=True):
                    setattr(self, name, Parameter(empty(*shape, **factory)))
                self._flat_weights_names += names
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def flatten_parameters(self) -> None:
        """No-op: strata keeps no packed weight buffer (cuDNN's contiguous copy)."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        """The parameters per layer and direction, in PyTorch's order."""
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        names = self._flat_weights_names
        return [[getattr(self, n) for n in names[i:i + per]] for i in range(0, len(names), per)]

    def _layer_params(self, layer: int, d: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None]:
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        b_ih = getattr(self, f"bias_ih{sfx}") if self.bias else None
        b_hh = getattr(self, f"bias_hh{sfx}") if self.bias else None
        return getattr(self, f"weight_ih{sfx}"), getattr(self, f"weight_hh{sfx}"), b_ih, b_hh

    def _check_input(self, x: Tensor) -> bool:
        if x.dim() not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {x.dim()}D instead")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{x.shape[-1]}")
        return x.dim() == 2

    def _initial(self, hx: Tensor | None, batch: int, like: Tensor, unbatched: bool, what: str) -> Tensor:
        dirs = 2 if self.bidirectional else 1
        features = self.proj_size if self.proj_size and what == "hidden" else self.hidden_size
        expected = (self.num_layers * dirs, batch, features)
        if hx is None:
            return zeros(*expected, dtype=like.dtype, device=like.device)
        h = hx.unsqueeze(1) if unbatched else hx
        if tuple(h.shape) != expected:
            raise RuntimeError(f"Expected {what} size {list(expected)}, got {list(h.shape)}")
        return h

    def _run(self, x: Tensor, h0: Tensor, c0: Tensor | None, lengths: list[int] | None = None
             ) -> tuple[Tensor, Tensor, Tensor | None]:
        """x: (L, N, H_in) time-major. Returns output (L, N, dirs * H), h_n, c_n. With lengths (packed
        input), a sequence's state stops changing past its length and its outputs there are zero."""
        dirs = 2 if self.bidirectional else 1
        masks: list[Tensor] | None = None
        if lengths is not None:
            lens = tensor(lengths, device=x.device)
            masks = [(lens > t).unsqueeze(1) for t in range(x.shape[0])]
        hs, cs = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                w_ih, w_hh, b_ih, b_hh = self._layer_params(layer, d)
                k = layer * dirs + d
                proj = F.linear(layer_in, w_ih, b_ih)  # (once: the step-by-step path below reuses it)
                w_hr = getattr(self, f"weight_hr_l{layer}" + ("_reverse" if d else "")) if self.proj_size else None
                if self.mode == "LSTM" and masks is None and c0 is not None and w_hr is None:  # the layer fused
                    fused = rnn_cpu.lstm_layer(proj, h0[k], c0[k], w_hh, b_hh, bool(d), _lstm_layer_composite)
                    if fused is None:  # (on cuda: the layer as cuDNN runs it)
                        fused = rnn_cuda.lstm_layer(proj, h0[k], c0[k], w_hh, b_hh, bool(d), _lstm_layer_composite)
                    if fused is not None:
                        outs.append(fused[0])
                        hs.append(fused[1])
                        cs.append(fused[2])
                        continue
                if self.mode == "GRU" and masks is None:  # the whole layer fused on cuda
                    fused_gru = rnn_cuda.gru_layer(proj, h0[k], w_hh, b_hh, bool(d), _gru_step_composite)
                    if fused_gru is not None:
                        outs.append(fused_gru[0])
                        hs.append(fused_gru[1])
                        continue
                xp = proj.unbind(0)
                steps = range(len(xp) - 1, -1, -1) if d else range(len(xp))
                h = h0[k]
                c = c0[k] if c0 is not None else None
                out: list[Tensor] = [h] * len(xp)
                for t in steps:
                    c_new = None
                    if self.mode == "LSTM" and w_hr is not None:  # with projections: h = (o * tanh(c)) W_hr^T
                        assert c is not None
                        h_new, c_new = _lstm_step_composite(xp[t], h, c, w_hh, b_hh)
                        h_new = F.linear(h_new, w_hr)
                    elif self.mode == "LSTM":
                        assert c is not None
                        h_new, c_new = _lstm_step(xp[t], h, c, w_hh, b_hh)
                    elif self.mode == "GRU":
                        h_new = _gru_step(xp[t], h, w_hh, b_hh)
                    else:
                        h_new = _rnn_step(xp[t], h, w_hh, b_hh, self.mode == "RNN_RELU")
                    if masks is None:
                        h, c = h_new, c_new if c_new is not None else c
                        out[t] = h
                    else:
                        h = ops.where(masks[t], h_new, h)
                        if c_new is not None and c is not None:
                            c = ops.where(masks[t], c_new, c)
                        out[t] = h_new * masks[t].to(h_new.dtype)
                hs.append(h)
                if c is not None:
                    cs.append(c)
                outs.append(joining.stack(out, 0))
            layer_in = outs[0] if dirs == 1 else joining.cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_in = F.dropout(layer_in, self.dropout, True)
        return layer_in, joining.stack(hs, 0), (joining.stack(cs, 0) if cs else None)

    def _forward(self, input: Any, h0: Tensor | None, c0: Tensor | None  # noqa: A002
                 ) -> tuple[Any, Tensor, Tensor | None, bool]:
        if isinstance(input, PackedSequence):
            padded, lengths = pad_packed_sequence(input)
            self._check_input(padded)
            h = self._initial(h0, padded.shape[1], padded, False, "hidden")
            c = self._initial(c0, padded.shape[1], padded, False, "cell") if self.mode == "LSTM" else None
            out, hn, cn = self._run(padded, h, c, [int(v) for v in lengths.tolist()])
            return repack(out, input), hn, cn, False
        unbatched = self._check_input(input)
        x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if self.batch_first else input)
        h = self._initial(h0, x.shape[1], x, unbatched, "hidden")
        c = self._initial(c0, x.shape[1], x, unbatched, "cell") if self.mode == "LSTM" else None
        out, hn, cn = self._run(x, h, c)
        if unbatched:
            return out.squeeze(1), hn.squeeze(1), (cn.squeeze(1) if cn is not None else None), True
        return (out.transpose(0, 1) if self.batch_first else out), hn, cn, False

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:  # (PyTorch prints it second)
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu: `nonlinearity='relu'`).

    forward(input, hx=None) -> (output, h_n).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:  # noqa: A002
        out, hn, _, _ = self._forward(input, hx, None)
        return out, hn


class LSTM(RNNBase):
    """Long short-term memory; forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)

    def forward(self, input: Any, hx: tuple[Tensor, Tensor] | None = None  # noqa: A002
                ) -> tuple[Any, tuple[Tensor, Tensor]]:
        h0, c0 = hx if hx is not None else (None, None)
        out, hn, cn, _ = self._forward(input, h0, c0)
        assert cn is not None
        return out, (hn, cn)


class GRU(RNNBase):
    """Gated recurrent unit; forward(input, hx=None) -> (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:  # noqa: A002
        out, hn, _, _ = self._forward(input, hx, None)
        return out, hn


# ---------------------------------------------------------------------------------------- cells
class RNNCellBase(Module):
    """weight_ih (gates * hidden, input), weight_hh (gates * hidden, hidden), bias_ih, bias_hh."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, gates: int, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        factory = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(empty(gates * hidden_size, input_size, **factory))
        self.weight_hh = Parameter(empty(gates * hidden_size, hidden_size, **factory))
        if bias:
            self.bias_ih = Parameter(empty(gates * hidden_size, **factory))
            self.bias_hh = Parameter(empty(gates * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every parameter uniform in [-1/sqrt(hidden_size), 1/sqrt(hidden_size)]."""
        bound = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def _prep(self, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor, bool]:  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"{type(self).__name__}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[-1]} expected {self.input_size}")
        unbatched = input.dim() == 1
        x = input.unsqueeze(0) if unbatched else input
        if hx is None:
            h = zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        else:
            h = hx.unsqueeze(0) if unbatched else hx
        return x, h, unbatched

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        return s


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, h, unbatched = self._prep(input, hx)
        out = _rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        self.nonlinearity == "relu")
        return out.squeeze(0) if unbatched else out


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)=None) -> (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None  # noqa: A002
                ) -> tuple[Tensor, Tensor]:
        x, h, unbatched = self._prep(input, hx[0] if hx is not None else None)
        c = (hx[1].unsqueeze(0) if unbatched else hx[1]) if hx is not None else h * 0.0
        h2, c2 = _lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h2.squeeze(0), c2.squeeze(0)) if unbatched else (h2, c2)


class GRUCell(RNNCellBase):
    """One GRU step: forward(input, h=None) -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, h, unbatched = self._prep(input, hx)
        out = _gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out.squeeze(0) if unbatched else out


__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
