"""strata.nn.functional: torch.nn.functional's names and signatures over strata tensors.

The ops whose kernels differ per device are declared in the op table (op_table.py) and reach their
kernels through it, never by testing the device here: activations, dropout, cross-entropy's fused pass,
nll's class-index check and embedding have a kernel per backend (backends/cpu.py: NumPy, half and
bfloat16 in float32; backends/cuda.py: the strata.libs.dnn routines that play cuDNN's role, dtypes they
lack computed in float32 and cast back); linear, layer/RMS/batch norm, conv2d, pooling and attention are
composites written here with framework ops, whose fused kernels (cpu addmm; cuda dnn, which takes no
float64) are the backends' fast paths. Under create_graph a fused kernel's backward differentiates its
composite (or the table's derivative), so second derivatives exist on both devices. Ops without a fused
kernel (pad, one_hot, mse_loss, nll_loss, ...) are compositions of framework ops.

Example:
    >>> import strata
    >>> from strata.framework.nn import functional as F
    >>> x = strata.tensor([[1.0, -2.0, 3.0]], device="cuda", requires_grad=True)
    >>> loss = F.cross_entropy(F.relu(x), strata.tensor([2], device="cuda"))
    >>> loss.backward()
    >>> round(loss.item(), 4), [round(v, 4) for v in x.grad.cpu()[0].tolist()]
    (0.1698, [0.1142, 0.0, -0.1562])
"""

from __future__ import annotations

import builtins
import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.framework import amp, autograd, creation, indexing, joining, linalg, op_table, ops, reductions, sorting
from strata.framework import dtypes as dt
from strata.framework import random as _random
from strata.framework.device import device, on
from strata.framework.handles import library, library_handle
from strata.framework.ops import empty, record
from strata.framework.tensor import Tensor

_DNN_FLOATS = (dt.float32, dt.float16, dt.bfloat16)


# ----------------------------------------------------------------------------------------- plumbing
def _dnn(dev: device) -> Any:
    """The strata.libs.dnn handle of `dev` (shared with every framework module: framework.handles)."""
    return library_handle("dnn", dev)


def _lib() -> Any:
    return library("dnn")


def _c(t: Tensor) -> Tensor:
    """t's values as a row-major tensor, outside the graph."""
    return t.detach().contiguous()


def _c32(t: Tensor) -> Tensor:
    """t's values as a row-major float32 tensor (for dnn routines that take only float32)."""
    t = t.detach()
    return ops._cast(t, dt.float32) if t.dtype is not dt.float32 else t.contiguous()


def _as(t: Tensor, dtype: dt.dtype) -> Tensor:
    return t if t.dtype is dtype else ops._cast(t, dtype)


def _arr(t: Tensor) -> Any:
    return ops.device_array(t)


def _dim(d: int, n: int) -> int:
    m = builtins.max(n, 1)
    if not -m <= d < m:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-m}, {m - 1}], but got {d})")
    return d % m


def _pair(v: Any, what: str = "") -> tuple[int, int]:
    if isinstance(v, int | np.integer):
        return int(v), int(v)
    t = tuple(int(e) for e in v)
    return (t[0], t[0]) if len(t) == 1 else (t[0], t[1])


def _move_last(x: Tensor, d: int) -> Tensor:
    """x with dim d moved to the end (a view)."""
    order = [i for i in range(x.dim()) if i != d] + [d]
    return x.permute(*order)


def _move_back(y: Tensor, d: int) -> Tensor:
    """Inverse of _move_last."""
    n = y.dim()
    order = list(range(d)) + [n - 1] + list(range(d, n - 1))
    return y.permute(*order)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return reductions.mean(loss)
    if reduction == "sum":
        return reductions.sum(loss)
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    if size_average is None and reduce is None:
        return reduction
    sa = True if size_average is None else size_average
    rd = True if reduce is None else reduce
    return "none" if not rd else ("mean" if sa else "sum")


def _need_float(op: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"\"{op}\" not implemented for '{ops._torch_name(x.dtype.name)}'")


# ----------------------------------------------------------------------------------------- linear
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """y = input @ weight^T + bias, with weight (out_features, in_features) (through strata.libs.blas on
    "cuda"; lowered to the autocast dtype inside an autocast region).

    Raises:
        RuntimeError: mismatched inner sizes ("mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)").
    """
    x, w, b = amp.lower_precision(input, weight, bias)
    if b is not None:  # a backend's addmm in one op (cpu: NumPy), where it takes these operands
        fused = op_table.fast_path("linear", x._storage.device.type)
        out = fused(x, w, b) if fused is not None else None
        if out is not None:
            return _addmm_record(out, x, w, b)
    out = linalg.matmul(x, w.t() if w.dim() == 2 else w)
    return out if b is None else ops.add(out, b)


def _addmm_record(out: Tensor, x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    """The one node of x @ w^T + b (PyTorch's addmm), whose weight gradient g^T x comes out row-major, as
    the weight is."""
    def bw(g: Tensor) -> tuple:  # framework ops: differentiable again under create_graph
        gx = linalg.matmul(g, w) if x.requires_grad else None
        gw = linalg.matmul(g.mT, x) if w.requires_grad else None
        gb = reductions.sum(g, 0) if b.requires_grad else None
        return gx, gw, gb
    return record(out, [x, w, b], op_table.OPS["linear"].node, bw)


def _composite_grad(fn: Any, inputs: Sequence[Any], g: Tensor) -> tuple:
    """A fused kernel's backward under create_graph: the gradient of its composite definition `fn(*inputs)`
    (tensor ops), recomputed and differentiated with create_graph, so that it differentiates again. One
    gradient per input (None for inputs that need none)."""
    wanted = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    with autograd.enable_grad():
        out = fn(*inputs)
        grads = autograd.grad(out, [inputs[i] for i in wanted], g, create_graph=True, allow_unused=True)
    result: list[Any] = [None] * len(inputs)
    for i, gi in zip(wanted, grads, strict=True):
        result[i] = gi
    return tuple(result)


# ----------------------------------------------------------------------------------------- activations
def _activation(mode: str, input: Tensor, name: str) -> Tensor:  # noqa: A002
    """A differentiable activation by the op table's fused kernels of the input's device (NumPy on "cpu",
    dnn or the float64 kernels on "cuda"). Under create_graph the backward is the table's derivative of
    the elementwise op `mode`, written with tensor ops, so it differentiates again."""
    x = input
    dev = x._storage.device.type
    out, saved = op_table.kernel("activation", dev)(mode, x, x.requires_grad and autograd.is_grad_enabled())
    if not (x.requires_grad and autograd.is_grad_enabled()):
        return out
    back, deriv = op_table.kernel("activation_backward", dev), op_table.OPS[mode].derivative
    assert deriv is not None

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():  # create_graph: a backward that records its own graph
            return (ops._fit(deriv(g, x, kept.get()), x),)
        return (back(mode, saved, g, x.dtype),)
    node = autograd.Node(name, [x], bw)
    kept = autograd.SavedOutput(out, node)  # (not `out` itself: no cycle through out.grad_fn)
    out._requires_grad = True
    out.grad_fn = node
    return out


def _float_act(op: str, x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"\"{op}\" not implemented for '{ops._torch_name(x.dtype.name)}'")


def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """max(x, 0) elementwise (integers too); relu'(0) = 0."""
    if inplace:
        return relu_(input)
    if not input.dtype.is_floating_point:
        return ops.unary_op("relu", input)
    return _activation("relu", input, "ReluBackward0")


def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """In-place relu."""
    return ops.inplace(input, lambda src: relu(src))


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); with approximate='tanh',
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).

    Raises:
        RuntimeError: approximate is neither 'none' nor 'tanh'; an integral input.
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_act("GeluKernelImpl", input)
    return _activation("gelu" if approximate == "none" else "gelu_tanh", input, "GeluBackward0")


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """x * sigmoid(x) (SiLU / swish)."""
    _float_act("silu", input)
    if inplace:
        return ops.inplace(input, lambda src: silu(src))
    return _activation("silu", input, "SiluBackward0")


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """tanh(x) elementwise (integers give the default float dtype)."""
    if not input.dtype.is_floating_point:
        return ops.unary_op("tanh", input)
    return _activation("tanh", input, "TanhBackward0")


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """1 / (1 + exp(-x)) elementwise."""
    if not input.dtype.is_floating_point:
        return ops.unary_op("sigmoid", input)
    return _activation("sigmoid", input, "SigmoidBackward0")


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:  # noqa: A002
    """x if x > 0 else negative_slope * x."""
    if inplace:
        return ops.inplace(input, lambda src: leaky_relu(src, negative_slope))
    return ops.where(ops.binary("gt", input, 0), input, input * negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """x if x > 0 else alpha * (exp(x) - 1)."""
    if inplace:
        return ops.inplace(input, lambda src: elu(src, alpha))
    neg = (ops.unary_op("exp", ops.clamp(input, max=0.0)) - 1) * alpha  # clamped: no inf in the unused branch
    return ops.where(ops.binary("gt", input, 0), input, neg)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """log(1 + exp(beta x)) / beta, and x where beta x > threshold (computed without overflow)."""
    bx = input * beta if beta != 1.0 else input
    soft = relu(bx) + ops.log(ops.unary_op("exp", -ops.unary_op("abs", bx)) + 1)
    soft = soft / beta if beta != 1.0 else soft
    return ops.where(ops.binary("gt", bx, threshold), input, soft)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """log(sigmoid(x)) = -softplus(-x)."""
    return -softplus(-input)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """clamp(x, min_val, max_val)."""
    if inplace:
        return ops.inplace(input, lambda src: hardtanh(src, min_val, max_val))
    return ops.clamp(input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """min(max(x, 0), 6)."""
    return hardtanh(input, 0.0, 6.0, inplace)


# ----------------------------------------------------------------------------------------- softmax
def _softmax_dim(ndim: int) -> int:
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                  "as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:  # noqa: A002
    """exp(x_i - max) / sum_j exp(x_j - max) along `dim` (input first cast to `dtype` if given)."""
    return _softmax(input, dim, dtype, log=False)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """x_i - max - log(sum_j exp(x_j - max)) along `dim`."""
    return _softmax(input, dim, dtype, log=True)


def _softmax(x: Tensor, dim: int | None, dtype: Any, log: bool) -> Tensor:
    if dim is None:
        dim = _softmax_dim(x.dim())
    return sorting.log_softmax(x, dim, dtype) if log else sorting.softmax(x, dim, dtype)


# ----------------------------------------------------------------------------------------- dropout
def _philox(dev: device, n: int) -> tuple[int, int]:
    """(seed, offset) for n words of `dev`'s default generator (strata.framework.random), which moves
    on past them (whole Philox counters, as its own draws do)."""
    g = _random.default_generator if dev.type == "cpu" else _random.cuda_default_generator(dev.index)
    seed, offset = g.initial_seed(), g.get_offset()
    g.set_offset(offset + (n + 3) // 4 * 4)
    return seed, offset


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:  # noqa: A002
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (identity when not training).
    The mask comes from the device's default Philox4x32-10 generator (strata.manual_seed seeds it): on
    "cuda" drawn by strata.libs.dnn's dropout kernel, on "cpu" the same stream in NumPy, so one seed
    gives one mask on both devices; the backward reuses it.

    Raises:
        ValueError: p outside [0, 1].
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0 or input.numel() == 0:
        return input
    _need_float("dropout", input)
    if inplace:
        return ops.inplace(input, lambda src: _dropout(src, p))
    return _dropout(input, p)


def _dropout(x: Tensor, p: float) -> Tensor:
    # (the device's generator moves on here, the mask is drawn by the device's kernel)
    out, back = op_table.kernel("dropout", x._storage.device.type)(x, p, *_philox(x.device, x.numel()))
    return record(out, [x], op_table.OPS["dropout"].node, lambda g: (back(g),))


# ----------------------------------------------------------------------------------------- embedding
def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """out[..., :] = weight[input[...], :]; rows equal to padding_idx get no gradient.

    Raises:
        RuntimeError: indices that are not int32/int64; IndexError (cpu) for an index outside [0, V).
        NotImplementedError: max_norm, scale_grad_by_freq or sparse.
    """
    if input.dtype not in (dt.int64, dt.int32):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{ops._torch_name(input.dtype.name)}Tensor instead (while "
                           "checking arguments for embedding)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not implemented")
    v, dd = weight.shape
    if padding_idx is not None:
        if padding_idx >= v or padding_idx < -v:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= v
    ops._check_same_device(input, weight)
    fused = op_table.fast_path("embedding", weight._storage.device.type)
    done = fused(input, weight, padding_idx) if fused is not None else None
    if done is not None:  # the device's gather and scatter-add of rows (NumPy; dnn in float32)
        out, back = done

        def bw(g: Tensor) -> tuple:
            if autograd.is_grad_enabled():  # create_graph: the gradient with tensor ops, differentiable again
                return None, _embedding_grad(g, input, v, padding_idx)
            return None, back(g)
        return record(out, [input, weight], op_table.OPS["embedding"].node, bw)
    # float64 on "cuda" (no dnn routine): a one-hot matmul through BLAS
    hot = one_hot(input.long(), v).to(dt.float64)
    if padding_idx is None:
        return linalg.matmul(hot, weight)
    pad_col = ops.binary("eq", creation.arange(v, device=weight.device), padding_idx)
    keep = ops.where(pad_col, 0.0, hot)
    return ops.add(linalg.matmul(keep, weight), linalg.matmul(ops.binary("sub", hot, keep), weight.detach()))


def _embedding_grad(g: Tensor, input: Tensor, v: int, padding_idx: int | None) -> Tensor:  # noqa: A002
    """d embedding / d weight with tensor ops: g's rows added at their indices (the padding row zero)."""
    dd = g.shape[-1]
    dw = indexing.index_add(g.new_zeros((v, dd)), 0, input.reshape(-1), g.reshape(-1, dd))
    if padding_idx is None:
        return dw
    pad = ops.binary("eq", creation.arange(v, device=g.device), padding_idx).unsqueeze(1)
    return indexing.masked_fill(dw, pad, 0.0)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 (..., num_classes) with a 1 at each index (num_classes=-1: max + 1, which reads the max on
    the host, as PyTorch does).

    Raises:
        RuntimeError: a non-int64 input, a negative index or one >= num_classes (cpu); on "cuda" such an
            index is the device-side assertion of the scatter that writes the ones (as in PyTorch, which
            skips the host check there to avoid a sync), raised at the next synchronizing call.
    """
    if tensor.dtype is not dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(reductions.max(tensor).item()) + 1
    if tensor.device.type == "cpu" and tensor.numel():  # (indices on the host are checked there, as PyTorch)
        a = tensor._host()
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    zeros = ops.full((*tensor.shape, num_classes), 0, dt.int64, tensor.device)
    return indexing.scatter(zeros, -1, tensor.detach().unsqueeze(-1), 1)  # (the op table's scatter kernel)


# ----------------------------------------------------------------------------------------- normalisation
def _norm_shape(op: str, x: Tensor, normalized_shape: Any,
                params: Sequence[tuple[str, Tensor | None]]) -> tuple[int, int]:
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or x.dim() < k or tuple(x.shape[x.dim() - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{''.join(', ' + str(s) for s in shape)}], but got input of size{list(x.shape)}")
    for what, p in params:
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got {what} of shape "
                               f"{list(p.shape)} and normalized_shape = {list(shape)}")
    return math.prod(shape), k


def layer_norm(input: Tensor, normalized_shape: Sequence[int] | int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims (biased var).

    Raises:
        RuntimeError: the input's trailing dims, or weight/bias, do not match normalized_shape.
    """
    x, w, b = amp.full_precision(input, weight, bias)
    cols, k = _norm_shape("layer_norm", x, normalized_shape, [("weight", w), ("bias", b)])
    return _row_norm(x, w, b, eps, cols, k, rms=False)


def rms_norm(input: Tensor, normalized_shape: Sequence[int] | int, weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the last len(normalized_shape) dims; eps defaults to
    the machine epsilon of the dtype the norm is computed in, as PyTorch's (its opmath type: float32
    for float16 and bfloat16 inputs, else the input's own dtype)."""
    x, w = amp.full_precision(input, weight)
    cols, k = _norm_shape("rms_norm", x, normalized_shape, [("weight", w)])
    if eps is None:
        eps = float(np.finfo(np.float32 if x.dtype in (dt.float16, dt.bfloat16) else x.dtype.np).eps)
    return _row_norm(x, w, None, eps, cols, k, rms=True)


def _row_norm(x: Tensor, w: Tensor | None, b: Tensor | None, eps: float, cols: int, k: int, *,
              rms: bool) -> Tensor:
    """Layer norm (or RMS norm) of x over its trailing `cols` elements per row; differentiable. Written
    once, with tensor ops (`_row_norm_composite`); a backend's fused kernel for the op table's
    `layer_norm` / `rms_norm` replaces it where one is registered (cuda: strata.libs.dnn's, which
    computes in float32, so float64 keeps the composite)."""
    _need_float("LayerNormKernelImpl", x)
    fused = op_table.fast_path("rms_norm" if rms else "layer_norm", x.device.type)
    if fused is not None and x.dtype is not dt.float64:
        return fused(x, w, b, eps, cols, rms)
    return _row_norm_composite(x, w, b, eps, k, rms)


@op_table.register("cuda", "layer_norm", "rms_norm")
def _row_norm_dnn(x: Tensor, w: Tensor | None, b: Tensor | None, eps: float, cols: int, rms: bool) -> Tensor:
    """The fused path on "cuda": strata.libs.dnn's row-norm forward and backward kernels."""
    name = "RmsNormBackward0" if rms else "NativeLayerNormBackward0"
    shape = x.shape
    dev, h, lib = x.device, _dnn(x.device), _lib()
    xc = _c(x).reshape(-1, cols)
    wc = _c(_as(w, x.dtype)).reshape(cols) if w is not None else None
    bc = _c(_as(b, x.dtype)).reshape(cols) if b is not None else None
    rows = xc.shape[0]
    y = empty(xc.shape, x.dtype, dev)
    mean = empty((rows,), dt.float32, dev)
    rstd_t = empty((rows,), dt.float32, dev)
    with on(dev):
        if rms:
            lib.rms_norm_forward(h, _arr(xc), _arr(wc) if wc is not None else None, eps, _arr(y), _arr(rstd_t))
        else:
            lib.layer_norm_forward(h, _arr(xc), _arr(wc) if wc is not None else None,
                                   _arr(bc) if bc is not None else None, eps, _arr(y), _arr(mean), _arr(rstd_t))

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():  # create_graph: through the composite, differentiable again
            return _composite_grad(lambda x, w, b: _row_norm_composite(
                x.reshape(-1, cols), w.reshape(cols) if w is not None else None,
                b.reshape(cols) if b is not None else None, eps, 1, rms).reshape(shape), (x, w, b), g)
        gc = _c(_as(g, x.dtype)).reshape(-1, cols)
        dx = empty(xc.shape, x.dtype, dev)
        dw = empty((cols,), x.dtype, dev) if w is not None and w.requires_grad else None
        db = empty((cols,), x.dtype, dev) if b is not None and b.requires_grad else None
        wa = _arr(wc) if wc is not None else None
        with on(dev):
            if rms:
                lib.rms_norm_backward(h, _arr(gc), _arr(xc), wa, _arr(rstd_t), _arr(dx),
                                      _arr(dw) if dw is not None else None)
            else:
                lib.layer_norm_backward(h, _arr(gc), _arr(xc), wa, _arr(mean), _arr(rstd_t), _arr(dx),
                                        _arr(dw) if dw is not None else None, _arr(db) if db is not None else None)
        return (dx.reshape(shape), ops._fit(dw.reshape(w.shape), w) if dw is not None and w is not None else None,
                ops._fit(db.reshape(b.shape), b) if db is not None and b is not None else None)
    return record(y.reshape(shape), [x, w, b], name, bw)


def _row_norm_composite(x: Tensor, w: Tensor | None, b: Tensor | None, eps: float, k: int, rms: bool) -> Tensor:
    """_row_norm from framework ops over the last k dims: the definition (gradients by autograd)."""
    dims = list(range(x.dim() - k, x.dim()))
    xm = x if rms else x - reductions.mean(x, dims, keepdim=True)
    y = xm * ops.unary_op("rsqrt", reductions.mean(xm * xm, dims, keepdim=True) + eps)
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Per-channel (dim 1) normalisation of (N, C, *): batch statistics when training (biased variance;
    running_mean/running_var updated in place with momentum and the unbiased variance), else the running
    statistics.

    Raises:
        ValueError: training with one value per channel.
        RuntimeError: not training and no running statistics.
    """
    x = input
    if x.dim() < 2:
        raise ValueError(f"expected 2D or higher input (got {x.dim()}D input)")
    c = x.shape[1]
    if training and x.numel() // c <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape!r}"
                         .replace("strata.Size", "torch.Size"))
    for what, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{what} should contain {c} elements not {t.numel()}")
    bshape = [1, c] + [1] * (x.dim() - 2)
    if not training:
        if running_mean is None or running_var is None:
            raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
        y = (x - running_mean.detach().reshape(bshape)) * ops.unary_op(
            "rsqrt", running_var.detach().reshape(bshape) + eps)
        if weight is not None:
            y = y * weight.reshape(bshape)
        return y + bias.reshape(bshape) if bias is not None else y
    fused = op_table.fast_path("batch_norm", x._storage.device.type)  # (cuda: dnn's, for its dtypes)
    out = fused(x, running_mean, running_var, weight, bias, momentum, eps) if fused is not None else None
    if out is not None:
        return out
    return _batch_norm_composite(x, running_mean, running_var, weight, bias, momentum, eps)


def _batch_norm_composite(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None,
                          bias: Tensor | None, momentum: float, eps: float) -> Tensor:
    """Training-mode batch norm from framework ops: the definition (the running statistics updated)."""
    c = x.shape[1]
    bshape = [1, c] + [1] * (x.dim() - 2)
    dims = [0] + list(range(2, x.dim()))
    n = x.numel() // c
    mu = reductions.mean(x, dims, keepdim=True)
    xm = x - mu
    var = reductions.mean(xm * xm, dims, keepdim=True)
    y = xm * ops.unary_op("rsqrt", var + eps)
    with autograd.no_grad():
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(mu.reshape(c).to(running_mean.dtype) * momentum)
        if running_var is not None:
            unbiased = var.reshape(c) * (n / builtins.max(n - 1, 1))
            running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    if weight is not None:
        y = y * weight.reshape(bshape)
    return y + bias.reshape(bshape) if bias is not None else y


@op_table.register("cuda", "batch_norm")
def _batch_norm_dnn(x: Tensor, running_mean: Tensor | None, running_var: Tensor | None, weight: Tensor | None,
                    bias: Tensor | None, momentum: float, eps: float) -> Tensor | None:
    """Training-mode batch norm by strata.libs.dnn (in float32); None for float64 (the composite runs)."""
    if x.dtype not in _DNN_FLOATS:
        return None
    dev, h, lib = x.device, _dnn(x.device), _lib()
    c = x.shape[1]
    xc = _c32(x)
    gamma = _c32(weight).reshape(c) if weight is not None else ops.full((c,), 1.0, dt.float32, dev)
    beta = _c32(bias).reshape(c) if bias is not None else ops.full((c,), 0.0, dt.float32, dev)
    y = empty(xc.shape, dt.float32, dev)
    save_mean, save_invstd = empty((c,), dt.float32, dev), empty((c,), dt.float32, dev)
    # running stats update in place when they are contiguous float32; otherwise through a copy
    rm = running_mean if running_mean is not None and running_mean.dtype is dt.float32 and \
        running_mean.is_contiguous() else (_c32(running_mean) if running_mean is not None else None)
    rv = running_var if running_var is not None and running_var.dtype is dt.float32 and \
        running_var.is_contiguous() else (_c32(running_var) if running_var is not None else None)
    with on(dev):
        lib.batch_norm_forward_training(h, _arr(xc), _arr(gamma), _arr(beta), eps, momentum,
                                        _arr(rm) if rm is not None else None, _arr(rv) if rv is not None else None,
                                        _arr(y), _arr(save_mean), _arr(save_invstd))
    for src, dst in ((rm, running_mean), (rv, running_var)):
        if src is not None and dst is not None and src is not dst:
            ops.copy_into(dst, src)

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():  # create_graph: through the composite (no second update of the statistics)
            return _composite_grad(lambda x, w, b: _batch_norm_composite(x, None, None, w, b, momentum, eps),
                                   (x, weight, bias), g)
        dx, dg, db = empty(xc.shape, dt.float32, dev), empty((c,), dt.float32, dev), empty((c,), dt.float32, dev)
        with on(dev):
            lib.batch_norm_backward(h, _arr(xc), _arr(_c32(g)), _arr(gamma), _arr(save_mean), _arr(save_invstd),
                                    _arr(dx), _arr(dg), _arr(db))
        return (_as(dx, x.dtype), ops._fit(dg.reshape(weight.shape), weight) if weight is not None else None,
                ops._fit(db.reshape(bias.shape), bias) if bias is not None else None)
    return record(_as(y, x.dtype), [x, weight, bias], "CudnnBatchNormBackward0", bw)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) along `dim`."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not supported")
    if p == 2.0:
        norm = ops.unary_op("sqrt", reductions.sum(input * input, dim, keepdim=True))
    elif p == 1.0:
        norm = reductions.sum(ops.unary_op("abs", input), dim, keepdim=True)
    else:
        norm = ops.pow(reductions.sum(ops.pow(ops.unary_op("abs", input), p), dim, keepdim=True), 1.0 / p)
    return input / ops.clamp(norm, min=eps)


# ----------------------------------------------------------------------------------------- convolution, pooling
def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> Tensor:  # noqa: A002
    """Pad (or, with negative sizes, crop) the last len(pad) // 2 dims: pad = (left_last, right_last,
    left_second_last, ...), filled with `value` (0 by default) for mode='constant'; 'reflect' mirrors
    the input about its edges (without repeating them), 'replicate' repeats the edge values, 'circular'
    wraps around.

    Raises:
        RuntimeError: an odd-length pad, more pairs than dims, or a negative output size.
        NotImplementedError: an unknown mode.
    """
    x = input
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > x.dim():
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                         f"padding length {len(pad)} and input of dimension {x.dim()}")
    if mode in ("reflect", "replicate", "circular"):
        return _pad_edges(x, [int(v) for v in pad], mode)
    if mode != "constant":
        raise NotImplementedError(f"{mode} padding is not implemented")
    new = list(x.shape)
    src: list[slice] = [slice(None)] * x.dim()
    dst: list[slice] = [slice(None)] * x.dim()
    for i in range(len(pad) // 2):
        d = x.dim() - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        size = x.shape[d] + lo + hi
        if size < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        new[d] = size
        src[d] = slice(builtins.max(-lo, 0), x.shape[d] - builtins.max(-hi, 0))
        dst[d] = slice(builtins.max(lo, 0), size - builtins.max(hi, 0))
    out = ops.full(new, 0 if value is None else value, x.dtype, x.device)
    inner = out[tuple(dst)]
    if inner.numel():
        ops.copy_into(inner, x.detach()[tuple(src)])
    shape = x.shape

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():  # create_graph: g's inner part padded back where x was cropped (recorded)
            back = [builtins.max(-int(v), 0) for v in pad]
            return (globals()["pad"](g[tuple(dst)], back),)
        z = ops.full(shape, 0, g.dtype, g.device)
        zi = z[tuple(src)]
        if zi.numel():
            ops.copy_into(zi, g[tuple(dst)])
        return (z,)
    return record(out, [x], "ConstantPadNdBackward0", bw)


def _pad_edges(x: Tensor, pads: list[int], mode: str) -> Tensor:
    """pad for the reflect, replicate and circular modes, as slices of x joined with cat (differentiable)."""
    k = len(pads) // 2
    if len(pads) not in (2, 4, 6) or x.dim() not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {x.dim()}D input tensor.\nSupported combinations for "
            "non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: "
            "padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    for i in range(k):
        d = x.dim() - 1 - i
        lo, hi, size = pads[2 * i], pads[2 * i + 1], x.shape[d]
        if lo < 0 or hi < 0:
            raise NotImplementedError(f"pad: negative padding is not implemented for mode '{mode}'")
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(x.shape)}")
        if mode == "circular" and (lo > size or hi > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "reflect":
            left = [_part(x, d, j, j + 1) for j in range(lo, 0, -1)]
            right = [_part(x, d, j, j + 1) for j in range(size - 2, size - 2 - hi, -1)]
        elif mode == "replicate":
            left = [_rep(_part(x, d, 0, 1), d, lo)] if lo else []
            right = [_rep(_part(x, d, size - 1, size), d, hi)] if hi else []
        else:
            left = [_part(x, d, size - lo, size)] if lo else []
            right = [_part(x, d, 0, hi)] if hi else []
        if left or right:
            x = joining.cat([*left, x, *right], d)
    return x


def _part(x: Tensor, d: int, a: int, b: int) -> Tensor:
    """x[..., a:b, ...] along dim d (a view)."""
    return x[(slice(None),) * d + (slice(a, b),)]


def _rep(t: Tensor, d: int, n: int) -> Tensor:
    """t (size 1 along d) expanded to n along d."""
    return t.expand(*[n if j == d else e for j, e in enumerate(t.shape)])


def _conv_padding(padding: Any, w: Tensor, stride: tuple[int, int], dilation: tuple[int, int]) -> tuple[Any, Any]:
    """(symmetric padding, extra right/bottom padding or None) for an int, pair, 'valid' or 'same'."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0), None
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if stride != (1, 1):
            raise ValueError("padding='same' is not supported for strided convolutions")
        tot = [dilation[i] * (w.shape[2 + i] - 1) for i in range(2)]
        sym = (tot[0] // 2, tot[1] // 2)
        extra = (tot[0] % 2, tot[1] % 2)
        return sym, (extra if any(extra) else None)
    return _pair(padding), None


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,  # noqa: A002
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation of (N, C, H, W) (or (C, H, W)) with weight (K, C / groups, R, S), + bias (K,);
    stride, padding (an int, a pair, 'valid' or 'same'), dilation, groups as in PyTorch. On "cuda"
    strata.libs.dnn's implicit-GEMM kernels (float32 compute); elsewhere an im2col matmul of framework ops.

    Raises:
        RuntimeError: the input's channels do not match weight.shape[1] * groups.
    """
    x, w, b = amp.lower_precision(input, weight, bias)
    unbatched = x.dim() == 3
    if unbatched:
        x = x.unsqueeze(0)
    if x.dim() != 4 or w.dim() != 4:
        raise RuntimeError(f"Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
                           f"{list(input.shape)}")
    if x.shape[1] != w.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected input{list(x.shape)} "
                           f"to have {w.shape[1] * groups} channels, but got {x.shape[1]} channels instead")
    if w.shape[0] % groups:
        raise RuntimeError("Given groups=" + str(groups) + ", expected weight to be divisible by " + str(groups) +
                           " at dimension 0, but got weight of size " + str(list(w.shape)) + " instead")
    if x.dtype is not w.dtype:
        raise RuntimeError(f"Input type ({ops._torch_name(x.dtype.name)}) and weight type "
                           f"({ops._torch_name(w.dtype.name)}) should be the same")
    ops._check_same_device(x, w, b)
    st, dl = _pair(stride), _pair(dilation)
    pd, extra = _conv_padding(padding, w, st, dl)
    if extra is not None:
        x = globals()["pad"](x, (0, extra[1], 0, extra[0]))
    hp, wp = x.shape[2] + 2 * pd[0], x.shape[3] + 2 * pd[1]
    if hp < dl[0] * (w.shape[2] - 1) + 1 or wp < dl[1] * (w.shape[3] - 1) + 1:
        raise RuntimeError(f"Calculated padded input size per channel: ({hp} x {wp}). Kernel size: "
                           f"({dl[0] * (w.shape[2] - 1) + 1} x {dl[1] * (w.shape[3] - 1) + 1}). Kernel size can't "
                           "be greater than actual input size")
    fused = op_table.fast_path("conv2d", x._storage.device.type)  # (cuda: dnn's, for its dtypes)
    out = fused(x, w, b, st, pd, dl, groups) if fused is not None else None
    if out is None:
        out = _conv2d_im2col(x, w, b, st, pd, dl, groups)
    return out.squeeze(0) if unbatched else out


@op_table.register("cuda", "conv2d")
def _conv2d_dnn(x: Tensor, w: Tensor, b: Tensor | None, st: tuple[int, int], pd: tuple[int, int],
                dl: tuple[int, int], groups: int) -> Tensor | None:
    """conv2d by strata.libs.dnn (in float32); None for float64 (the im2col composite runs)."""
    if x.dtype not in _DNN_FLOATS:
        return None
    dev, h, lib = x.device, _dnn(x.device), _lib()
    xc, wc = _c32(x), _c32(w)
    bc = _c32(b) if b is not None else None
    kw = {"stride": st, "padding": pd, "dilation": dl, "groups": groups}
    y = empty(lib.conv2d_output_shape(tuple(x.shape), tuple(w.shape), st, pd, dl), dt.float32, dev)
    with on(dev):
        lib.conv2d_forward(h, _arr(xc), _arr(wc), _arr(y), bias=_arr(bc) if bc is not None else None, **kw)

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():  # create_graph: through the im2col composite, differentiable again
            return _composite_grad(lambda x, w, b: _conv2d_im2col(x, w, b, st, pd, dl, groups), (x, w, b), g)
        gc = _c32(g)
        dx = dw = db = None
        with on(dev):
            if x.requires_grad:
                dx = empty(xc.shape, dt.float32, dev)
                lib.conv2d_backward_data(h, _arr(wc), _arr(gc), _arr(dx), **kw)
            if w.requires_grad:
                dw = empty(wc.shape, dt.float32, dev)
                lib.conv2d_backward_filter(h, _arr(xc), _arr(gc), _arr(dw), **kw)
            if b is not None and b.requires_grad:
                db = empty((w.shape[0],), dt.float32, dev)
                lib.conv2d_backward_bias(h, _arr(gc), _arr(db))
        return ops._fit(dx, x), ops._fit(dw, w), ops._fit(db, b)
    return record(_as(y, x.dtype), [x, w, b], "ConvolutionBackward0", bw)


def _windows(x: Tensor, k: tuple[int, int], st: tuple[int, int], dl: tuple[int, int]) -> tuple[list[Tensor], int, int]:
    """The kh * kw strided views x[..., r*dh + sh*i, s*dw + sw*j] (each (..., P, Q)) of a padded x."""
    hh, ww = x.shape[-2], x.shape[-1]
    p = (hh - dl[0] * (k[0] - 1) - 1) // st[0] + 1
    q = (ww - dl[1] * (k[1] - 1) - 1) // st[1] + 1
    views = [x[..., r * dl[0]: r * dl[0] + st[0] * (p - 1) + 1: st[0], s * dl[1]: s * dl[1] + st[1] * (q - 1) + 1:
               st[1]] for r in range(k[0]) for s in range(k[1])]
    return views, p, q


def _conv2d_im2col(x: Tensor, w: Tensor, b: Tensor | None, st: tuple[int, int], pd: tuple[int, int],
                   dl: tuple[int, int], groups: int) -> Tensor:
    """conv2d as one batched matmul over gathered patches (framework ops; differentiable)."""
    n, c = x.shape[:2]
    k, cg, r, s = w.shape
    if pd != (0, 0):
        x = pad(x, (pd[1], pd[1], pd[0], pd[0]))
    views, p, q = _windows(x, (r, s), st, dl)
    cols = joining.stack(views, -1)  # (N, C, P, Q, R*S)
    cols = cols.reshape(n, groups, cg, p * q, r * s).permute(0, 1, 3, 2, 4).reshape(n, groups, p * q, cg * r * s)
    wg = w.reshape(groups, k // groups, cg * r * s).transpose(1, 2)  # (G, Cg*R*S, K/G)
    y = linalg.matmul(cols, wg)  # (N, G, P*Q, K/G)
    y = y.permute(0, 1, 3, 2).reshape(n, k, p, q)
    return y + b.reshape(1, k, 1, 1) if b is not None else y


def _pool_args(op: str, x: Tensor, kernel_size: Any, stride: Any, padding: Any,
               dilation: Any) -> tuple[tuple[int, int], ...]:
    if x.dim() not in (3, 4):
        raise RuntimeError(f"non-empty 3D or 4D (batch mode) tensor expected for input, got {x.dim()}D")
    k = _pair(kernel_size)
    st = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else _pair(stride)
    pd, dl = _pair(padding), _pair(dilation)
    if pd[0] > k[0] // 2 or pd[1] > k[1] // 2:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pd[0]}, "
                           f"kernel_size={k[0]} and dilation={dl[0]}")
    return k, st, pd, dl


def _pool_out(size: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """Output extent of one pooled dim (PyTorch's rule: with ceil_mode, the last window must start
    inside the input or its left padding)."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    if out < 1:
        raise RuntimeError(f"Given input size: ({size}). Calculated output size: ({out}). Output size is too small")
    return out


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over each (kernel_size) window of (N, C, H, W) or (C, H, W), padding counted as -inf; the
    gradient goes to the window's first maximum. With return_indices, also the int64 flat (h * W + w)
    index of each maximum."""
    k, st, pd, dl = _pool_args("max_pool2d", input, kernel_size, stride, padding, dilation)
    return _pool(input, "max", k, st, pd, dl, ceil_mode, True, None, return_indices)


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,  # noqa: A002
               ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """Mean over each window (divided by the window's extent inside the padded input, by its elements
    inside the input when count_include_pad=False, or by divisor_override)."""
    k, st, pd, dl = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1)
    return _pool(input, "avg", k, st, pd, dl, ceil_mode, count_include_pad, divisor_override, False)


def _pool(x: Tensor, mode: str, k: tuple[int, int], st: tuple[int, int], pd: tuple[int, int], dl: tuple[int, int],
          ceil_mode: bool, include_pad: bool, divisor: int | None, indices: bool, fast: bool = True) -> Any:
    unbatched = x.dim() == 3
    if unbatched:
        x = x.unsqueeze(0)
    hh, ww = x.shape[2], x.shape[3]
    oh, ow = (_pool_out(hh, k[0], st[0], pd[0], dl[0], ceil_mode), _pool_out(ww, k[1], st[1], pd[1], dl[1], ceil_mode))
    floor = (oh, ow) == ((hh + 2 * pd[0] - dl[0] * (k[0] - 1) - 1) // st[0] + 1,
                         (ww + 2 * pd[1] - dl[1] * (k[1] - 1) - 1) // st[1] + 1)
    idx = None
    # (cuda: dnn's, for what it takes; not `fast`: the composite, for the fused kernel's own create_graph backward)
    fused = op_table.fast_path(mode + "_pool2d", x._storage.device.type) if fast else None
    out = fused(x, mode, k, st, pd, include_pad) if fused is not None and dl == (1, 1) and divisor is None and \
        floor and not indices else None
    if out is None:
        if mode == "max" and not x.dtype.is_floating_point:
            raise NotImplementedError("max_pool2d of integer tensors is not implemented")
        # pad: the padding, then (ceil_mode) whatever the last windows overhang, which no window counts
        eh = builtins.max(0, (oh - 1) * st[0] + dl[0] * (k[0] - 1) + 1 - (hh + 2 * pd[0]))
        ew = builtins.max(0, (ow - 1) * st[1] + dl[1] * (k[1] - 1) + 1 - (ww + 2 * pd[1]))
        fill = -math.inf if mode == "max" else 0.0
        spec = (pd[1], pd[1] + ew, pd[0], pd[0] + eh)
        xp = pad(x, spec, value=fill) if any(spec) else x
        views, _, _ = _windows(xp, k, st, dl)
        stacked = joining.stack(views, -1)  # (N, C, OH, OW, kh * kw)
        if mode == "max":
            mx = reductions.max(stacked, -1)
            out = mx.values
            if indices:
                with autograd.no_grad():
                    pos = creation.arange(hh * ww, device=x.device).reshape(1, 1, hh, ww)
                    pos = pad(pos, spec, value=-1) if any(spec) else pos
                    where_ = joining.stack(_windows(pos, k, st, dl)[0], -1)  # flat index of each window element
                    hot = ops.binary("eq", mx.indices.unsqueeze(-1), creation.arange(k[0] * k[1], device=x.device))
                    idx = reductions.sum(ops.where(hot, where_, 0), -1)
        else:
            total = reductions.sum(stacked, -1)
            if divisor is not None:
                out = total / divisor
            else:
                with autograd.no_grad():
                    inside = ops.full((1, 1, hh, ww), 1.0, x.dtype, x.device)
                    if include_pad:
                        inside = pad(inside, (pd[1], pd[1], pd[0], pd[0]), value=1.0)
                        inside = pad(inside, (0, ew, 0, eh))
                    else:
                        inside = pad(inside, spec)
                    count = reductions.sum(joining.stack(_windows(inside, k, st, dl)[0], -1), -1)
                out = total / count
    if unbatched:
        out = out.squeeze(0)
        idx = idx.squeeze(0) if idx is not None else None
    return (out, idx) if indices else out


@op_table.register("cuda", "max_pool2d", "avg_pool2d")
def _pool_dnn(x: Tensor, mode: str, k: tuple[int, int], st: tuple[int, int], pd: tuple[int, int],
              include_pad: bool) -> Tensor | None:
    """Max / average pooling (no dilation, floor sizes, no indices) by strata.libs.dnn (in float32); None
    for float64."""
    if x.dtype not in _DNN_FLOATS:
        return None
    dev, h, lib = x.device, _dnn(x.device), _lib()
    xc = _c32(x)
    oh = (x.shape[2] + 2 * pd[0] - k[0]) // st[0] + 1
    ow = (x.shape[3] + 2 * pd[1] - k[1]) // st[1] + 1
    y = empty((*x.shape[:2], oh, ow), dt.float32, dev)
    with on(dev):
        lib.pooling_forward(h, mode, _arr(xc), _arr(y), k, st, pd, count_include_pad=include_pad)

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():  # create_graph: through the composite, differentiable again
            return _composite_grad(lambda x: _pool(x, mode, k, st, pd, (1, 1), False, include_pad, None, False,
                                                   fast=False), (x,), g)
        dx = empty(xc.shape, dt.float32, dev)
        with on(dev):
            lib.pooling_backward(h, mode, _arr(xc), _arr(_c32(g)), _arr(dx), k, st, pd,
                                 count_include_pad=include_pad)
        return (_as(dx, x.dtype),)
    return record(_as(y, x.dtype), [x], op_table.OPS[mode + "_pool2d"].node, bw)


# ----------------------------------------------------------------------------------------- losses
def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                  size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """-log softmax(input)[target] per sample (class dim 1; input (C,), (N, C) or (N, C, d1, ...)),
    weighted by weight[target], with rows whose target is ignore_index left out, label smoothing eps
    mixing in the mean over classes; or, for a floating target of input's shape, -sum_c target_c *
    log softmax_c. 'mean' divides by the summed weights of the counted rows (probabilities: by N).

    Raises:
        ValueError: batch sizes differ; an unknown reduction. IndexError (cpu): a target out of range.
    """
    reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    x, w = amp.full_precision(input, weight)
    if x.dim() == 0:
        raise RuntimeError("cross_entropy: input must have at least one dimension")
    cdim = 0 if x.dim() == 1 else 1
    c = x.shape[cdim]
    if target.dtype.is_floating_point and tuple(target.shape) == tuple(x.shape):
        return _cross_entropy_probs(x, target, w, reduction, label_smoothing, cdim)
    shape = target.shape
    if x.dim() == 1:
        x, target = x.unsqueeze(0), target.unsqueeze(0)
    _check_target(x, target)
    x2 = _move_last(x, 1).reshape(-1, c) if x.dim() > 2 else x
    t1 = target.reshape(-1)
    fused = op_table.fast_path("cross_entropy", x._storage.device.type) if w is None else None
    done = fused(x2, t1, ignore_index, label_smoothing, reduction) if fused is not None else None
    if done is not None:  # the device's fused kernel (NumPy; dnn in float32)
        out, back = done

        def bw(g: Tensor) -> tuple:
            if autograd.is_grad_enabled():  # create_graph: the gradient with tensor ops, differentiable again
                return _ce_grad(x2, t1, g, ignore_index, label_smoothing, reduction), None
            return back(g), None
        loss = record(out, [x2, t1], op_table.OPS["cross_entropy"].node, bw)
    else:
        logp = log_softmax(x2, 1)
        loss = _nll(logp, t1, w, ignore_index, reduction)
        if label_smoothing > 0.0:
            smooth = -(logp * w) if w is not None else -logp
            smooth = reductions.sum(smooth, 1)
            valid = ops.binary("ne", t1, ignore_index)
            smooth = ops.where(valid, smooth, 0.0)
            if reduction == "sum":
                smooth = reductions.sum(smooth)
            elif reduction == "mean":
                denom = reductions.sum(_pick(w, t1, valid)) if w is not None else reductions.sum(valid.to(x.dtype))
                smooth = reductions.sum(smooth) / denom
            loss = loss * (1 - label_smoothing) + smooth * (label_smoothing / c)
    # (a loss already of the target's shape keeps its node, as PyTorch's NllLossBackward0)
    return loss.reshape(shape) if reduction == "none" and tuple(loss.shape) != tuple(shape) else loss


def _check_target(x: Tensor, target: Tensor) -> None:
    if target.shape[0] != x.shape[0]:
        raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size ({target.shape[0]}).")
    if tuple(target.shape[1:]) != tuple(x.shape[2:]):
        raise RuntimeError(f"Expected target size {[x.shape[0], *x.shape[2:]]}, got {list(target.shape)}")
    ops._check_same_device(x, target)
    if target.dtype not in (dt.int64, dt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {ops._torch_name(target.dtype.name)}")


def _ce_grad(x: Tensor, t: Tensor, g: Tensor, ignore_index: int, ls: float, reduction: str) -> Tensor:
    """d cross_entropy / dx for (M, C) logits and class indices, with tensor ops: (softmax(x) - (1 - ls)
    one_hot(t) - ls / C) * g, per row, rows whose target is ignore_index zero ('mean': g over their count)."""
    c = x.shape[1]
    valid = ops.binary("ne", t, ignore_index)
    hot = ops.binary("eq", t.unsqueeze(1), creation.arange(c, device=x.device))
    d = sorting.softmax(x, 1) - hot.to(x.dtype) * (1.0 - ls) - ls / c
    if reduction == "none":
        scale = g.reshape(-1, 1)
    else:
        scale = g / reductions.sum(valid).to(g.dtype) if reduction == "mean" else g
    return ops.where(valid.unsqueeze(1), d * scale, 0.0)


def _pick(v: Tensor, t: Tensor, valid: Tensor) -> Tensor:
    """v[t] for class weights v (C,) and targets t (M,), 0 where not valid (framework ops, no gather)."""
    hot = ops.binary("eq", t.unsqueeze(1), creation.arange(v.shape[0], device=v.device))
    return ops.where(valid, reductions.sum(ops.where(hot, v, 0.0), 1), 0.0)


def _nll(logp: Tensor, t: Tensor, w: Tensor | None, ignore_index: int, reduction: str) -> Tensor:
    """NLL of (M, C) log-probabilities and (M,) class indices, composed from framework ops."""
    m, c = logp.shape
    # (on cuda, as PyTorch's nll kernel, a bad class index is a device-side assertion: no host sync)
    op_table.kernel("class_index_check", logp._storage.device.type)(t, c, ignore_index)
    valid = ops.binary("ne", t, ignore_index)
    hot = ops.binary("eq", t.unsqueeze(1), creation.arange(c, device=logp.device))  # (M, C)
    picked = reductions.sum(ops.where(hot, logp, 0.0), 1)
    wt = _pick(w, t, valid) if w is not None else valid.to(logp.dtype)
    loss = -(picked * wt)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return reductions.sum(loss)
    return reductions.sum(loss) / reductions.sum(wt)


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
             size_average: bool | None = None, ignore_index: int = -100, reduce: bool | None = None,
             reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] * weight[target[n]] per sample (class dim 1), rows with ignore_index left out;
    'mean' divides by the summed weights."""
    reduction = _legacy(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    x, w = amp.full_precision(input, weight)
    shape = target.shape
    if x.dim() == 1:
        x, target = x.unsqueeze(0), target.unsqueeze(0)
    _check_target(x, target)
    c = x.shape[1]
    x2 = _move_last(x, 1).reshape(-1, c) if x.dim() > 2 else x
    loss = _nll(x2, target.reshape(-1), w, ignore_index, reduction)
    return loss.reshape(shape) if reduction == "none" else loss


def _cross_entropy_probs(x: Tensor, target: Tensor, w: Tensor | None, reduction: str, ls: float,
                         cdim: int) -> Tensor:
    if tuple(target.shape) != tuple(x.shape):
        raise RuntimeError(f"Expected target size {list(x.shape)}, got {list(target.shape)}")
    c = x.shape[cdim]
    logp = log_softmax(x, cdim)
    t = target * (1 - ls) + ls / c if ls > 0 else target
    prod = logp * t
    if w is not None:
        prod = prod * w.reshape([c] + [1] * (x.dim() - cdim - 1))
    per = -reductions.sum(prod, cdim)
    if reduction == "mean":
        return reductions.sum(per) / builtins.max(x.numel() // c, 1) if x.numel() else reductions.mean(per)
    return _reduce(per, reduction)


def _loss_shapes(op: str, x: Tensor, t: Tensor) -> None:
    if tuple(x.shape) != tuple(t.shape):
        warnings.warn(f"Using a target size ({t.shape}) that is different to the input size ({x.shape}). This will "
                      "likely lead to incorrect results due to broadcasting. Please ensure they have the same size."
                      .replace("strata.Size", "torch.Size"), UserWarning, stacklevel=3)


def mse_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
             reduce: bool | None = None, reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """(input - target)^2, reduced ('mean', 'sum' or 'none'), optionally times weight."""
    reduction = _legacy(size_average, reduce, reduction)
    x, t = amp.full_precision(input, target)
    _loss_shapes("mse_loss", x, t)
    d = x - t
    loss = d * d
    return _reduce(loss * weight if weight is not None else loss, reduction)


def l1_loss(input: Tensor, target: Tensor, size_average: bool | None = None,  # noqa: A002
            reduce: bool | None = None, reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """|input - target|, reduced."""
    reduction = _legacy(size_average, reduce, reduction)
    _loss_shapes("l1_loss", input, target)
    loss = ops.unary_op("abs", input - target)
    return _reduce(loss * weight if weight is not None else loss, reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                         size_average: bool | None = None, reduce: bool | None = None,
                         reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)) with the logs clamped at -100, as PyTorch's.

    Raises:
        ValueError: target and input sizes differ.
    """
    reduction = _legacy(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size."
                         .replace("strata.Size", "torch.Size"))
    lx = ops.clamp(ops.log(input), min=-100.0)
    l1x = ops.clamp(ops.log(1 - input), min=-100.0)
    loss = -(target * lx + (1 - target) * l1x)
    return _reduce(loss * weight if weight is not None else loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,  # noqa: A002
                                     size_average: bool | None = None, reduce: bool | None = None,
                                     reduction: str = "mean", pos_weight: Tensor | None = None) -> Tensor:
    """-(pos_weight t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), computed stably as
    (1 - t) x + (1 + (pos_weight - 1) t) (log(1 + exp(-|x|)) + max(-x, 0))."""
    reduction = _legacy(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})"
                         .replace("strata.Size", "torch.Size"))
    x = input
    softplus = ops.log(1 + ops.unary_op("exp", -ops.unary_op("abs", x))) + relu(-x)
    coef = 1 + (pos_weight - 1) * target if pos_weight is not None else 1
    loss = (1 - target) * x + coef * softplus
    return _reduce(loss * weight if weight is not None else loss, reduction)


# ----------------------------------------------------------------------------------------- attention
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dims (scale 1 / sqrt(E) by
    default); attn_mask is bool (True = attend) or additive float, broadcast over batch and heads;
    is_causal hides key j from query i when j > i (with attn_mask too, both apply, as PyTorch's fused
    CPU kernels do). With enable_gqa, key/value heads (dim -3) are
    shared by groups of query heads. Without a mask or dropout on "cuda", strata.libs.dnn's fused
    flash-attention kernels run it; otherwise framework ops (matmul through BLAS, softmax).

    Raises:
        RuntimeError: query, key and value of different dtypes.
    """
    q, k, v = amp.lower_precision(query, key, value)
    if not (q.dtype is k.dtype is v.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{linalg._ctype(q.dtype)} key.dtype: {linalg._ctype(k.dtype)} and value.dtype: "
                           f"{linalg._ctype(v.dtype)} instead.")
    ops._check_same_device(q, k, v, attn_mask)
    if enable_gqa and q.dim() >= 3 and k.shape[-3] != q.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k, v = _repeat_heads(k, rep), _repeat_heads(v, rep)
    e = q.shape[-1]
    sc = 1.0 / math.sqrt(e) if scale is None else float(scale)
    batch = tuple(ops.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    fused = op_table.fast_path("scaled_dot_product_attention", q._storage.device.type)
    if fused is not None and attn_mask is None and dropout_p == 0.0:  # (cuda: dnn's fused attention)
        out = fused(q.expand(*batch, *q.shape[-2:]), k.expand(*batch, *k.shape[-2:]),
                    v.expand(*batch, *v.shape[-2:]), sc, is_causal)
        if out is not None:
            return out
    return _attention_composite(q, k, v, attn_mask, dropout_p, sc, is_causal)


def _attention_composite(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, dropout_p: float, sc: float,
                         is_causal: bool) -> Tensor:
    """Attention from framework ops (matmul through BLAS, softmax): the definition."""
    scores = linalg.matmul(q, k.transpose(-2, -1)) * sc
    lq, lk = q.shape[-2], k.shape[-2]
    if is_causal:
        rows = creation.arange(lq, device=q.device).unsqueeze(1)
        keep = ops.binary("ge", rows, creation.arange(lk, device=q.device))
        scores = ops.where(keep, scores, -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype is dt.bool_:
            scores = ops.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    attn = softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p)
    return linalg.matmul(attn, v)


def _repeat_heads(t: Tensor, rep: int) -> Tensor:
    """(..., H, S, D) -> (..., H * rep, S, D), each head repeated rep times in a row (repeat_interleave)."""
    *lead, hh, s, d = t.shape
    return t.unsqueeze(-3).expand(*lead, hh, rep, s, d).reshape(*lead, hh * rep, s, d)


@op_table.register("cuda", "scaled_dot_product_attention")
def _attention_dnn(q: Tensor, k: Tensor, v: Tensor, sc: float, causal: bool) -> Tensor | None:
    """Attention of (B..., L, E) q, k, v (broadcast batch) by strata.libs.dnn's fused kernel (in float32);
    None where it does not apply (float64, head size over 128 or differing from v's, no keys, more than
    65535 batch entries)."""
    e = q.shape[-1]
    if q.dtype not in _DNN_FLOATS or v.shape[-1] != e or not 0 < e <= 128 or k.shape[-2] == 0 or \
            math.prod(q.shape[:-2]) > 65535:
        return None
    dev, h, lib = q.device, _dnn(q.device), _lib()
    qc, kc, vc = _c32(q), _c32(k), _c32(v)
    out = empty(qc.shape, dt.float32, dev)
    lse = empty(qc.shape[:-1], dt.float32, dev)
    with on(dev):
        lib.attention_forward(h, _arr(qc), _arr(kc), _arr(vc), _arr(out), _arr(lse), scale=sc, causal=causal)

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():  # create_graph: through the composite, differentiable again
            return _composite_grad(lambda q, k, v: _attention_composite(q, k, v, None, 0.0, sc, causal), (q, k, v), g)
        dq, dk, dv = empty(qc.shape, dt.float32, dev), empty(kc.shape, dt.float32, dev), empty(vc.shape, dt.float32,
                                                                                               dev)
        with on(dev):
            lib.attention_backward(h, _arr(qc), _arr(kc), _arr(vc), _arr(out), _arr(_c32(g)), _arr(lse), _arr(dq),
                                   _arr(dk), _arr(dv), scale=sc, causal=causal)
        return ops._fit(dq, q), ops._fit(dk, k), ops._fit(dv, v)
    return record(_as(out, q.dtype), [q, k, v], "ScaledDotProductEfficientAttentionBackward0", bw)


__all__ = [
    "avg_pool2d", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "conv2d",
    "cross_entropy", "dropout", "elu", "embedding", "gelu", "hardtanh", "l1_loss", "layer_norm", "leaky_relu",
    "linear", "log_softmax", "logsigmoid", "max_pool2d", "mse_loss", "nll_loss", "normalize", "one_hot", "pad",
    "relu", "relu6", "relu_", "rms_norm", "scaled_dot_product_attention", "sigmoid", "silu", "softmax", "softplus",
    "tanh",
]
