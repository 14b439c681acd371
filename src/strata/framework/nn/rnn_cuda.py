"""The recurrent steps on "cuda" as fused cells (cuDNN's role; ATen's `_thnn_fused_lstm_cell` and
`_thnn_fused_gru_cell`): per step, the hidden projection h W_hh^T is one BLAS GEMM (reading W_hh
transposed in place, no copy) and all the gate arithmetic is ONE kernel launch (kernels/rnn.py), recorded
as one autograd node whose backward is ONE kernel launch for the gates plus the BLAS products for dh and
dW_hh (and a sum for db_hh), instead of some fifteen framework ops and nodes per step.

A whole LSTM or GRU layer (`lstm_layer`, `gru_layer`, for unpacked input) goes further, as cuDNN runs a
layer: one node for all T steps, the hidden states written straight into the layer's output, per step
one GEMM and one gate kernel forward and one gate kernel and one GEMM backward, then dW_hh as ONE GEMM
over all the steps and db_hh as one sum (no per-step weight-gradient GEMMs, additions or view plumbing).

An LSTM step's node outputs the packed [h' | c'] (N, 2H), handed back as two views (as in rnn_cpu), so
its backward sees dh' and dc' together; a view's gradient is placed into the packed shape by one small
kernel. Under `create_graph` (grad mode on during the backward) the backward recomputes the step with
the composite framework ops and differentiates those, so higher-order gradients stay exact.

Each step function returns None where it does not apply (not "cuda", mixed dtypes or devices, a shape
the composite should reject with PyTorch's message, an empty batch, inside autocast), and the caller
runs the composite.

Example:
    >>> import strata
    >>> from strata.framework.nn.rnn_cuda import lstm_step
    >>> xp, h, c = (strata.zeros(2, 8, device="cuda"), strata.zeros(2, 2, device="cuda"),
    ...             strata.ones(2, 2, device="cuda"))
    >>> h1, c1 = lstm_step(xp, h, c, strata.zeros(8, 2, device="cuda"), None)
    >>> c1.tolist()   # f * c + i * g with f = i = sigmoid(0) and g = tanh(0)
    [[0.5, 0.5], [0.5, 0.5]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from strata.framework import amp, autograd, joining, profiling
from strata.framework import dtypes as dt
from strata.framework.device import on
from strata.framework.handles import library, library_handle
from strata.framework.kernels import rnn as k
from strata.framework.ops import _ptr, empty, record
from strata.framework.tensor import Tensor

LstmComposite = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor | None], tuple[Tensor, Tensor]]
GruComposite = Callable[[Tensor, Tensor, Tensor, Tensor | None], Tensor]
RnnComposite = Callable[[Tensor, Tensor, Tensor, Tensor | None, bool], Tensor]
_DTYPES = (dt.float16, dt.bfloat16, dt.float32, dt.float64)


# ----------------------------------------------------------------------------------------- plumbing
def _applies(gates: int, xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, c: Tensor | None = None) -> bool:
    """Whether the fused step can run: every operand a "cuda" tensor of one floating dtype on one device,
    with the shapes of a step ((N, G*H), (N, H), (G*H, H), (G*H,)); no autocast region lowering them."""
    ts = [t for t in (xp, h, c, w_hh, b_hh) if t is not None]
    if not all(isinstance(t, Tensor) for t in ts):
        return False
    d, dev = xp.dtype, xp.device
    if d not in _DTYPES or dev.type != "cuda" or any(t.dtype is not d or t.device != dev for t in ts):
        return False
    if h.dim() != 2 or xp.dim() != 2 or w_hh.dim() != 2:
        return False
    n, hd = h.shape
    if n == 0 or hd == 0 or tuple(xp.shape) != (n, gates * hd) or tuple(w_hh.shape) != (gates * hd, hd):
        return False
    if (c is not None and tuple(c.shape) != (n, hd)) or (b_hh is not None and tuple(b_hh.shape) != (gates * hd,)):
        return False
    # (autocast lowers the hidden projection's operands: the composite does that)
    return all(a is b for a, b in zip(amp.lower_precision(h, w_hh, b_hh), (h, w_hh, b_hh), strict=True))


def _rows(t: Tensor) -> tuple[Tensor, int]:
    """t (2-D) as the kernels and BLAS read it: unit-stride columns and a row stride >= its width (a
    row-major copy when t is not like that), and that row stride."""
    n, w = t.shape
    s0, s1 = t.stride()
    if (s1 == 1 or w == 1) and (s0 >= w or n == 1):
        return t, (s0 if n > 1 else w)
    return t.contiguous(), w


def _gemm(dtype: dt.dtype, dev: Any, ta: str, tb: str, m: int, n: int, kk: int, a: int, lda: int, b: int, ldb: int,
          beta: float, c: int, ldc: int) -> None:
    """C = op(A) op(B) + beta C, column-major, addresses (cuBLAS's gemm; gemm_ex with float32 compute for
    float16/bfloat16, as the framework's matmul)."""
    blas, handle = library("blas"), library_handle("blas", dev)
    if dtype in (dt.float32, dt.float64):
        blas.gemm(handle, ta, tb, m, n, kk, 1.0, a, lda, b, ldb, beta, c, ldc, dtype=dtype.np)
    else:
        blas.gemm_ex(handle, ta, tb, m, n, kk, 1.0, a, dtype.np, lda, b, dtype.np, ldb, beta, c, dtype.np, ldc, "f32")


def _hidden_projection(h: Tensor, hs: int, w: Tensor) -> Tensor:
    """h W^T (N, G*H), row-major: in column-major terms (W h^T), W read transposed where it lies."""
    n, hd = h.shape
    g = w.shape[0]
    out = empty((n, g), h.dtype, h.device)
    _gemm(h.dtype, h.device, "T", "N", g, n, hd, _ptr(w), hd, _ptr(h), hs, 0.0, _ptr(out), g)
    return out


def _step_operands(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None
                   ) -> tuple[Tensor, int, Tensor, int, Tensor, Tensor | None, Tensor]:
    """What every step's gate kernel reads: xp and h as strided rows, weight_hh and bias_hh contiguous, and
    the hidden projection h W_hh^T (by one GEMM)."""
    xq, xs = _rows(xp)
    hq, hs = _rows(h)
    w = w_hh.contiguous()
    b = b_hh.contiguous() if b_hh is not None else None
    return xq, xs, hq, hs, w, b, _hidden_projection(hq, hs, w)


def _weight_grads(dg: Tensor, h: Tensor, hs: int, need_w: bool, need_b: bool) -> tuple[Tensor | None, Tensor | None]:
    """dW_hh = dg^T h (G*H, H) and db_hh = dg summed over the rows, from dg (N, G*H) row-major."""
    n, hd = h.shape
    g = dg.shape[1]
    dw = None
    if need_w:
        dw = empty((g, hd), dg.dtype, dg.device)
        _gemm(dg.dtype, dg.device, "N", "T", hd, g, n, _ptr(h), hs, _ptr(dg), g, 0.0, _ptr(dw), hd)
    return dw, (dg.sum(0) if need_b else None)


def _input_grad(dg: Tensor, w: Tensor, into: Tensor | None = None) -> Tensor:
    """dg W (N, H) from dg (N, G*H) and W (G*H, H); added to `into` (N, H, row-major) when given."""
    n, g = dg.shape
    hd = w.shape[1]
    out = into if into is not None else empty((n, hd), dg.dtype, dg.device)
    _gemm(dg.dtype, dg.device, "N", "N", hd, n, g, _ptr(w), hd, _ptr(dg), g, 1.0 if into is not None else 0.0,
          _ptr(out), hd)
    return out


def _composite_grads(outputs: Tensor, inputs: Sequence[Tensor | None], g: Tensor) -> list[Any]:
    """The gradients of `inputs` (None where not required) through `outputs`, recorded (create_graph)."""
    need = [t is not None and t.requires_grad for t in inputs]
    wanted = [t for t, n in zip(inputs, need, strict=True) if n and t is not None]
    grads = iter(autograd.grad(outputs, wanted, g, create_graph=True, allow_unused=True, materialize_grads=True))
    return [next(grads) if n else None for n in need]


def _columns(p: Tensor, lo: int, hd: int) -> Tensor:
    """p[:, lo:lo + hd] (p (N, W) fresh and row-major), a view whose gradient is g placed in zeros of p's
    shape: one kernel, or by concatenation (differentiable) under create_graph."""
    n, width = p.shape
    view = p._view((n, hd), p.stride(), p._offset + lo)
    if not p.requires_grad:
        return view

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():
            return (joining.cat([g.new_zeros((n, lo)), g, g.new_zeros((n, width - lo - hd))], -1),)
        out = empty((n, width), g.dtype, g.device)
        gs, gc = g.stride()
        with on(g.device):
            k.place_cols(g.dtype.name, _ptr(g), gs, gc, _ptr(out), n, width, lo, hd)
        return (out,)
    return record(view, [p], "SliceBackward0", bw)


# ----------------------------------------------------------------------------------------- LSTM
def lstm_step(xp: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None,
              composite: LstmComposite | None = None) -> tuple[Tensor, Tensor] | None:
    """One LSTM step on "cuda" from the input projection xp = x W_ih^T + b_ih (N, 4H), states h, c (N, H),
    weight_hh (4H, H) and bias_hh: (h', c'), fused; None where it does not apply (see the module
    docstring). `composite(xp, h, c, w_hh, b_hh)` is the same step in framework ops, which the backward
    differentiates under create_graph."""
    if not _applies(4, xp, h, w_hh, b_hh, c):
        return None
    return _lstm_step(xp, h, c, w_hh, b_hh, composite)


@profiling.op("aten::_thnn_fused_lstm_cell")
def _lstm_step(xp: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None,
               composite: LstmComposite | None) -> tuple[Tensor, Tensor]:
    d, dev = xp.dtype, xp.device
    n, hd = h.shape
    inputs = [xp, h, c, w_hh, b_hh]
    grad = autograd.needs_grad(*inputs)
    with autograd.no_grad(), on(dev):
        xq, xs, hq, hs, w, b, hg = _step_operands(xp, h, w_hh, b_hh)
        cq, cs = _rows(c)
        hc = empty((n, 2 * hd), d, dev)
        ws = empty((n, 5 * hd), d, dev) if grad else None
        k.lstm_forward(d.name, _ptr(xq), xs, _ptr(hg), _ptr(b) if b is not None else 0, _ptr(cq), cs, _ptr(hc),
                       2 * hd, _ptr(hc) + hd * d.itemsize, 2 * hd, _ptr(ws) if ws is not None else 0, n, hd)
    if not grad:
        return _columns(hc, 0, hd), _columns(hc, hd, hd)

    def bw(g: Tensor) -> list[Any]:
        if autograd.is_grad_enabled():  # create_graph: differentiate the composite step, recomputed
            assert composite is not None
            h2, c2 = composite(xp, h, c, w_hh, b_hh)
            return _composite_grads(joining.cat([h2, c2], -1), inputs, g)
        need = [t is not None and t.requires_grad for t in inputs]
        assert ws is not None
        with on(dev):
            gq, gs = _rows(g)
            dg = empty((n, 4 * hd), d, dev)
            dc = empty((n, hd), d, dev) if need[2] else None
            k.lstm_backward(d.name, _ptr(gq), gs, 0, _ptr(gq) + hd * d.itemsize, gs, _ptr(ws), _ptr(cq), cs, _ptr(dg),
                            _ptr(dc) if dc is not None else 0, n, hd)
            dh = _input_grad(dg, w) if need[1] else None
            dw, db = _weight_grads(dg, hq, hs, need[3], need[4])
        return [dg if need[0] else None, dh, dc, dw, db]
    hc = record(hc, inputs, "ThnnFusedLstmCellBackward0", bw)
    return _columns(hc, 0, hd), _columns(hc, hd, hd)


# ----------------------------------------------------------------------------------------- GRU
def gru_step(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None,
             composite: GruComposite | None = None) -> Tensor | None:
    """One GRU step on "cuda" from xp = x W_ih^T + b_ih (N, 3H), h (N, H), weight_hh (3H, H), bias_hh: h',
    fused; None where it does not apply. `composite(xp, h, w_hh, b_hh)` as for `lstm_step`."""
    if not _applies(3, xp, h, w_hh, b_hh):
        return None
    return _gru_step(xp, h, w_hh, b_hh, composite)


@profiling.op("aten::_thnn_fused_gru_cell")
def _gru_step(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, composite: GruComposite | None) -> Tensor:
    d, dev = xp.dtype, xp.device
    n, hd = h.shape
    inputs = [xp, h, w_hh, b_hh]
    grad = autograd.needs_grad(*inputs)
    with autograd.no_grad(), on(dev):
        xq, xs, hq, hs, w, b, hg = _step_operands(xp, h, w_hh, b_hh)
        hy = empty((n, hd), d, dev)
        ws = empty((n, 4 * hd), d, dev) if grad else None
        k.gru_forward(d.name, _ptr(xq), xs, _ptr(hg), _ptr(b) if b is not None else 0, _ptr(hq), hs, _ptr(hy),
                      _ptr(ws) if ws is not None else 0, n, hd)
    if not grad:
        return hy

    def bw(g: Tensor) -> list[Any]:
        if autograd.is_grad_enabled():
            assert composite is not None
            return _composite_grads(composite(xp, h, w_hh, b_hh), inputs, g)
        need = [t is not None and t.requires_grad for t in inputs]
        assert ws is not None
        with on(dev):
            gq, gs = _rows(g)
            dxp, dhg, dh = empty((n, 3 * hd), d, dev), empty((n, 3 * hd), d, dev), empty((n, hd), d, dev)
            k.gru_backward(d.name, _ptr(gq), gs, 0, _ptr(ws), _ptr(hq), hs, _ptr(dxp), _ptr(dhg), _ptr(dh), n, hd)
            if need[1]:
                _input_grad(dhg, w, into=dh)
            dw, db = _weight_grads(dhg, hq, hs, need[2], need[3])
        return [dxp if need[0] else None, dh if need[1] else None, dw, db]
    return record(hy, inputs, "ThnnFusedGruCellBackward0", bw)


# ----------------------------------------------------------------------------------------- Elman RNN
def rnn_step(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool,
             composite: RnnComposite | None = None) -> Tensor | None:
    """One Elman step on "cuda": h' = tanh (or relu) of xp + h W_hh^T + b_hh, with the activation (and
    the bias) in one kernel after the GEMM; None where it does not apply."""
    if not _applies(1, xp, h, w_hh, b_hh):
        return None
    return _rnn_step(xp, h, w_hh, b_hh, relu, composite)


@profiling.op("aten::rnn_cell")
def _rnn_step(xp: Tensor, h: Tensor, w_hh: Tensor, b_hh: Tensor | None, relu: bool,
              composite: RnnComposite | None) -> Tensor:
    d, dev = xp.dtype, xp.device
    n, hd = h.shape
    inputs = [xp, h, w_hh, b_hh]
    with autograd.no_grad(), on(dev):
        xq, xs, hq, hs, w, b, hg = _step_operands(xp, h, w_hh, b_hh)
        hy = empty((n, hd), d, dev)
        k.rnn_forward(d.name, _ptr(xq), xs, _ptr(hg), _ptr(b) if b is not None else 0, _ptr(hy), n, hd, relu)
    if not autograd.needs_grad(*inputs):
        return hy

    def bw(g: Tensor) -> list[Any]:
        if autograd.is_grad_enabled():
            assert composite is not None
            return _composite_grads(composite(xp, h, w_hh, b_hh, relu), inputs, g)
        need = [t is not None and t.requires_grad for t in inputs]
        y = saved.get()
        with on(dev):
            gq, gs = _rows(g)
            dpre = empty((n, hd), d, dev)
            k.rnn_backward(d.name, _ptr(gq), gs, _ptr(y), _ptr(dpre), n, hd, relu)
            dh = _input_grad(dpre, w) if need[1] else None
            dw, db = _weight_grads(dpre, hq, hs, need[2], need[3])
        return [dpre if need[0] else None, dh, dw, db]
    record(hy, inputs, "RnnReluCellBackward0" if relu else "RnnTanhCellBackward0", bw)
    assert hy.grad_fn is not None
    saved = autograd.SavedOutput(hy, hy.grad_fn)  # (not hy itself: no cycle through hy.grad_fn)
    return hy


# ----------------------------------------------------------------------------------------- a whole LSTM layer
LstmLayerComposite = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor | None, bool], tuple[Tensor, Tensor, Tensor]]


def lstm_layer(xp: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool,
               composite: LstmLayerComposite) -> tuple[Tensor, Tensor, Tensor] | None:
    """One LSTM layer (one direction) on "cuda" over the input projections xp (T, N, 4H) from h0, c0 (N, H):
    (outputs (T, N, H), h_n, c_n) as cuDNN runs a layer: per step one GEMM and one gate kernel forward,
    one gate kernel and one GEMM backward, with the states written straight into the outputs, and after
    the backward loop one GEMM over all the steps for dW_hh and one sum for db_hh; one autograd node.
    None where it does not apply (see `lstm_step`), and the caller runs the layer step by step.
    `composite(xp, h0, c0, w_hh, b_hh, reverse)` is that step-by-step layer, for the backward under
    create_graph."""
    if xp.dim() != 3 or xp.shape[0] == 0 or not _applies(4, xp[0], h0, w_hh, b_hh, c0):
        return None
    return _lstm_layer(xp, h0, c0, w_hh, b_hh, reverse, composite)


@profiling.op("aten::_cudnn_rnn")
def _lstm_layer(xp: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool,
                composite: LstmLayerComposite) -> tuple[Tensor, Tensor, Tensor]:
    # q (T + 3, N, H) holds the hidden states in time order at rows 1 .. T, h0 at the row before the first
    # step (row 0 forward, T + 1 in reverse), so the states each step reads are rows [0, T) or [2, T + 2)
    # as one matrix for dW_hh, and c_T at row T + 2; the node's output is q, the results its views
    d, dev = xp.dtype, xp.device
    steps, n, hd = xp.shape[0], h0.shape[0], h0.shape[1]
    sz, row = d.itemsize, n * hd
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    inputs = [xp, h0, c0, w_hh, b_hh]
    grad = autograd.needs_grad(*inputs)
    with autograd.no_grad(), on(dev):
        xq = xp.contiguous()
        w = w_hh.contiguous()
        b = b_hh.contiguous() if b_hh is not None else None
        q = empty((steps + 3, n, hd), d, dev)
        first = steps + 1 if reverse else 0  # the row h0 sits at
        q[first].copy_(h0)
        c0q, c0s = _rows(c0)
        cs = empty((steps, n, hd), d, dev)  # c_t at time t (c_T goes to q instead)
        ws = empty((steps, n, 5 * hd), d, dev) if grad else None
        hg = empty((n, 4 * hd), d, dev)
        qp, xpp, bp = _ptr(q), _ptr(xq), (_ptr(b) if b is not None else 0)
        prev_c, prev_cs = _ptr(c0q), c0s
        for i, t in enumerate(order):
            hrow = t + 2 if reverse else t  # h_{t-1} in processing order
            _gemm(d, dev, "T", "N", 4 * hd, n, hd, _ptr(w), hd, qp + hrow * row * sz, hd, 0.0, _ptr(hg), 4 * hd)
            cy = qp + (steps + 2) * row * sz if i == steps - 1 else _ptr(cs) + t * row * sz
            k.lstm_forward(d.name, xpp + t * 4 * row * sz, 4 * hd, _ptr(hg), bp, prev_c, prev_cs,
                           qp + (t + 1) * row * sz, hd, cy, hd, _ptr(ws) + t * 5 * row * sz if ws is not None else 0,
                           n, hd)
            prev_c, prev_cs = cy, hd
    if grad:
        def bw(g: Tensor) -> list[Any]:
            if autograd.is_grad_enabled():  # create_graph: differentiate the step-by-step layer, recomputed
                out, _, c_n = composite(xp, h0, c0, w_hh, b_hh, reverse)
                ends = [out.new_zeros((1, n, hd)), h0.unsqueeze(0)]  # (the unwritten row, and h0's)
                if not reverse:
                    ends.reverse()
                return _composite_grads(joining.cat([ends[0], out, ends[1], c_n.unsqueeze(0)], 0), inputs, g)
            need = [t is not None and t.requires_grad for t in inputs]
            assert ws is not None
            with on(dev):
                gq = g.contiguous()
                gp, cp = _ptr(gq), _ptr(cs)  # (cs, ws, q, c0q: the closure keeps them alive until here)
                dgs = empty((steps, n, 4 * hd), d, dev)  # dL/d(gates) at time t: xp's gradient
                dhr = empty((n, hd), d, dev)  # dL/dh_{t-1} through W_hh, for the step before
                dc = empty((n, hd), d, dev)
                gc, gcs = gp + (steps + 2) * row * sz, hd  # dL/dc_T, then dc in place
                for i in range(steps - 1, -1, -1):
                    t = order[i]
                    c_prev, c_prev_s = (_ptr(c0q), c0s) if i == 0 else (cp + order[i - 1] * row * sz, hd)
                    k.lstm_backward(d.name, gp + (t + 1) * row * sz, hd, _ptr(dhr) if i < steps - 1 else 0, gc, gcs,
                                    _ptr(ws) + t * 5 * row * sz, c_prev, c_prev_s, _ptr(dgs) + t * 4 * row * sz,
                                    _ptr(dc), n, hd)
                    gc, gcs = _ptr(dc), hd
                    if i > 0 or need[1]:
                        _gemm(d, dev, "N", "N", hd, n, 4 * hd, _ptr(w), hd, _ptr(dgs) + t * 4 * row * sz, 4 * hd, 0.0,
                              _ptr(dhr), hd)
                h_prev = q._view((steps * n, hd), (hd, 1), q._offset + (2 if reverse else 0) * row)
                dw, db = _weight_grads(dgs.view(steps * n, 4 * hd), h_prev, hd, need[3], need[4])
            return [dgs if need[0] else None, dhr if need[1] else None, dc if need[2] else None, dw, db]
        q = record(q, inputs, "CudnnRnnBackward0", bw)
    last = order[-1]
    return _rows_of(q, 1, steps), _rows_of(q, last + 1, 1, squeeze=True), _rows_of(q, steps + 2, 1, squeeze=True)


def _rows_of(q: Tensor, start: int, length: int, squeeze: bool = False) -> Tensor:
    """q[start:start + length] (or q[start] with `squeeze`; q fresh and row-major), a view whose gradient
    is g placed in zeros of q's shape: one kernel, or by concatenation (differentiable) under create_graph."""
    rest = tuple(q.shape[1:])
    per = q.stride(0)
    view = q._view(rest if squeeze else (length, *rest), q.stride()[1:] if squeeze else q.stride(),
                   q._offset + start * per)
    if not q.requires_grad:
        return view

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():
            gg = g.unsqueeze(0) if squeeze else g
            parts = [g.new_zeros((start, *rest)), gg, g.new_zeros((q.shape[0] - start - length, *rest))]
            return (joining.cat(parts, 0),)
        out = empty(tuple(q.shape), g.dtype, g.device)
        with on(g.device):
            gq = g.contiguous()
            k.place_cols(g.dtype.name, _ptr(gq), 0, 1, _ptr(out), 1, q.numel(), start * per, length * per)
        return (out,)
    return record(view, [q], "SliceBackward0", bw)


# ----------------------------------------------------------------------------------------- a whole GRU layer
def gru_layer(xp: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool,
              step: GruComposite) -> tuple[Tensor, Tensor] | None:
    """One GRU layer (one direction) on "cuda" over the input projections xp (T, N, 3H) from h0 (N, H):
    (outputs (T, N, H), h_n), as `lstm_layer` runs an LSTM layer (one node, per step one GEMM and one gate
    kernel each way, dW_hh as one GEMM over all steps); None where it does not apply. `step(xp, h, w_hh,
    b_hh)` is the composite step, which the backward runs step by step under create_graph."""
    if xp.dim() != 3 or xp.shape[0] == 0 or not _applies(3, xp[0], h0, w_hh, b_hh):
        return None
    return _gru_layer(xp, h0, w_hh, b_hh, reverse, step)


@profiling.op("aten::_cudnn_rnn")
def _gru_layer(xp: Tensor, h0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool,
               step: GruComposite) -> tuple[Tensor, Tensor]:
    # q (T + 2, N, H): the hidden states in time order at rows 1 .. T, h0 at the row before the first step
    # (0 forward, T + 1 in reverse); as in _lstm_layer
    d, dev = xp.dtype, xp.device
    steps, n, hd = xp.shape[0], h0.shape[0], h0.shape[1]
    sz, row = d.itemsize, n * hd
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    inputs = [xp, h0, w_hh, b_hh]
    grad = autograd.needs_grad(*inputs)
    first = steps + 1 if reverse else 0
    with autograd.no_grad(), on(dev):
        xq = xp.contiguous()
        w = w_hh.contiguous()
        b = b_hh.contiguous() if b_hh is not None else None
        q = empty((steps + 2, n, hd), d, dev)
        q[first].copy_(h0)
        ws = empty((steps, n, 4 * hd), d, dev) if grad else None
        hg = empty((n, 3 * hd), d, dev)
        qp, xpp, bp = _ptr(q), _ptr(xq), (_ptr(b) if b is not None else 0)
        for t in order:
            hp = qp + (t + 2 if reverse else t) * row * sz  # h_{t-1} in processing order
            _gemm(d, dev, "T", "N", 3 * hd, n, hd, _ptr(w), hd, hp, hd, 0.0, _ptr(hg), 3 * hd)
            k.gru_forward(d.name, xpp + t * 3 * row * sz, 3 * hd, _ptr(hg), bp, hp, hd, qp + (t + 1) * row * sz,
                          _ptr(ws) + t * 4 * row * sz if ws is not None else 0, n, hd)
    if grad:
        def bw(g: Tensor) -> list[Any]:
            if autograd.is_grad_enabled():  # create_graph: differentiate the composite steps, recomputed
                h, outs = h0, [h0] * steps
                for t in order:
                    h = outs[t] = step(xp[t], h, w_hh, b_hh)
                ends = [h0.new_zeros((n, hd)), h0]  # (the unwritten row, and h0's)
                if not reverse:
                    ends.reverse()
                return _composite_grads(joining.stack([ends[0], *outs, ends[1]], 0), inputs, g)
            need = [t is not None and t.requires_grad for t in inputs]
            assert ws is not None
            with on(dev):
                gq = g.contiguous()
                gp, qp = _ptr(gq), _ptr(q)  # (q, ws: the closure keeps them alive until here)
                dxs, dhs = empty((steps, n, 3 * hd), d, dev), empty((steps, n, 3 * hd), d, dev)
                carry = empty((n, hd), d, dev)  # dL/dh_{t-1} from step t, for the step before
                for i in range(steps - 1, -1, -1):
                    t = order[i]
                    hp = qp + (t + 2 if reverse else t) * row * sz
                    k.gru_backward(d.name, gp + (t + 1) * row * sz, hd, _ptr(carry) if i < steps - 1 else 0,
                                   _ptr(ws) + t * 4 * row * sz, hp, hd, _ptr(dxs) + t * 3 * row * sz,
                                   _ptr(dhs) + t * 3 * row * sz, _ptr(carry), n, hd)
                    _gemm(d, dev, "N", "N", hd, n, 3 * hd, _ptr(w), hd, _ptr(dhs) + t * 3 * row * sz, 3 * hd, 1.0,
                          _ptr(carry), hd)
                h_prev = q._view((steps * n, hd), (hd, 1), q._offset + (2 if reverse else 0) * row)
                dw, db = _weight_grads(dhs.view(steps * n, 3 * hd), h_prev, hd, need[2], need[3])
            return [dxs if need[0] else None, carry if need[1] else None, dw, db]
        q = record(q, inputs, "CudnnRnnBackward0", bw)
    last = order[-1]
    return _rows_of(q, 1, steps), _rows_of(q, last + 1, 1, squeeze=True)
