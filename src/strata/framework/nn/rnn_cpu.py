"""The LSTM step on "cpu" as one fused op (the role cuDNN's fused cell plays on a GPU): the gates, the
cell and hidden states in a few NumPy calls, and one autograd node whose backward is the cell's
closed-form gradient, instead of some fifteen recorded framework ops per step and their nodes.

The node's output packs the two states, [h' | c'] (N, 2H), which the step hands back as two views; the
gradients of both views meet in the packed tensor, so the backward sees dh' and dc' together. Under
`create_graph` (grad mode on during the backward) the backward recomputes the step with the composite
framework ops and differentiates those, so higher-order gradients stay exact.

Example:
    >>> import strata
    >>> from strata.framework.nn.rnn_cpu import lstm_step
    >>> xp, h, c = strata.zeros(2, 8), strata.zeros(2, 2), strata.ones(2, 2)
    >>> h1, c1 = lstm_step(xp, h, c, strata.zeros(8, 2), None)
    >>> c1.tolist()   # f * c + i * g with f = i = sigmoid(0) and g = tanh(0)
    [[0.5, 0.5], [0.5, 0.5]]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.framework import amp, autograd, joining
from strata.framework import dtypes as dt
from strata.framework.ops import record
from strata.framework.quiet import quiet
from strata.framework.tensor import Tensor, from_array

Composite = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor | None], tuple[Tensor, Tensor]]
_DTYPES = (dt.float32, dt.float64)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-a))  # (the cpu kernel's formula for sigmoid, for the same values)


def _forward(xa: np.ndarray, ha: np.ndarray, ca: np.ndarray, wa: np.ndarray, ba: np.ndarray | None) -> tuple:
    """(packed [h' | c'], the activated gates (i, f, g, o), tanh(c')) of one step."""
    hd = ha.shape[-1]
    t = ha @ wa.T
    if ba is not None:
        t += ba
    gates = xa + t  # (the composite's order: xp + (h W^T + b))
    act = np.empty_like(gates)
    act[:, :2 * hd] = _sigmoid(gates[:, :2 * hd])
    act[:, 2 * hd:3 * hd] = np.tanh(gates[:, 2 * hd:3 * hd])
    act[:, 3 * hd:] = _sigmoid(gates[:, 3 * hd:])
    i, f, g, o = act[:, :hd], act[:, hd:2 * hd], act[:, 2 * hd:3 * hd], act[:, 3 * hd:]
    hc = np.empty((gates.shape[0], 2 * hd), gates.dtype)
    c1 = hc[:, hd:]
    np.multiply(f, ca, out=c1)
    c1 += i * g
    tc = np.tanh(c1)
    np.multiply(o, tc, out=hc[:, :hd])
    return hc, (i, f, g, o), tc


def _backward(gh: np.ndarray, ca: np.ndarray, ha: np.ndarray, wa: np.ndarray, gates: tuple, tc: np.ndarray,
              need: tuple[bool, ...]) -> list[np.ndarray | None]:
    """The step's gradients (xp, h, c, w_hh, b_hh; None where not needed) from g = [dh' | dc']."""
    i, f, g, o = gates
    hd = tc.shape[-1]
    dh, dc = gh[:, :hd], gh[:, hd:]
    dct = dc + dh * o * (1 - tc * tc)  # dL/dc' in full: directly, and through h' = o tanh(c')
    dg_ = np.empty((gh.shape[0], 4 * hd), gh.dtype)  # dL/d(gates) before the activations
    dg_[:, :hd] = dct * g * i * (1 - i)
    dg_[:, hd:2 * hd] = dct * ca * f * (1 - f)
    dg_[:, 2 * hd:3 * hd] = dct * i * (1 - g * g)
    dg_[:, 3 * hd:] = dh * tc * o * (1 - o)
    return [dg_ if need[0] else None, dg_ @ wa if need[1] else None, dct * f if need[2] else None,
            dg_.T @ ha if need[3] else None, dg_.sum(0) if need[4] else None]


def _split(hc: Tensor, hd: int) -> tuple[Tensor, Tensor]:
    """h' and c', the two halves of the packed state (differentiable views)."""
    if not hc.requires_grad:
        return hc._view((hc.shape[0], hd), hc.stride(), 0), hc._view((hc.shape[0], hd), hc.stride(), hd)
    return _half(hc, 0, hd), _half(hc, hd, hd)


def _half(hc: Tensor, lo: int, hd: int) -> Tensor:
    """hc[:, lo:lo + hd] as a view whose gradient is g placed in zeros of hc's shape: in NumPy, or by
    indexing (differentiable) when the backward itself records (create_graph)."""
    index = (slice(None), slice(lo, lo + hd))

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():
            return (_scatter_differentiable(g, hc.shape, index),)
        za = np.zeros(tuple(hc.shape), g.dtype.np)
        za[index] = g._host()
        return (from_array(za, g.dtype),)
    return record(hc._view((hc.shape[0], hd), hc.stride(), lo), [hc], "SliceBackward0", bw)


def _scatter_differentiable(g: Tensor, shape: Any, index: tuple) -> Tensor:
    """zeros(shape) with g at `index`, recorded (its gradient is the slice again)."""
    return joining.cat([g.new_zeros((shape[0], index[1].start)), g,
                        g.new_zeros((shape[0], shape[1] - index[1].stop))], -1)


def lstm_step(xp: Tensor, h: Tensor, c: Tensor, w_hh: Tensor, b_hh: Tensor | None,
              composite: Composite | None = None) -> tuple[Tensor, Tensor] | None:
    """One LSTM step from the input projection xp (N, 4H), states h, c (N, H), weight_hh (4H, H) and
    bias_hh, fused; None where the fused step does not apply (not cpu, not float32 / float64, inside
    autocast), and the caller runs `composite`, the same step in framework ops (which the backward also
    uses under create_graph)."""
    ts = (xp, h, c, w_hh) if b_hh is None else (xp, h, c, w_hh, b_hh)
    d = xp.dtype
    if d not in _DTYPES or any(t.dtype is not d or t.device.type != "cpu" for t in ts) or xp.dim() != 2 or \
            h.dim() != 2 or c.dim() != 2:
        return None
    if any(a is not b for a, b in zip(amp.lower_precision(h, w_hh, b_hh), (h, w_hh, b_hh), strict=True)):
        return None  # (autocast lowers the projection: the composite does that)
    hd = h.shape[-1]
    ba = b_hh._host() if b_hh is not None else None
    xa, ha, ca, wa = xp._host(), h._host(), c._host(), w_hh._host()
    hc_a, gates, tc = quiet(_forward, xa, ha, ca, wa, ba)
    hc = from_array(hc_a, d)
    inputs = [xp, h, c, w_hh, b_hh]
    if not autograd.needs_grad(*inputs):
        return _split(hc, hd)

    def bw(g: Tensor) -> list[Any]:
        need = tuple(t is not None and t.requires_grad for t in inputs)
        if autograd.is_grad_enabled():  # create_graph: differentiate the composite step, recomputed
            assert composite is not None
            wanted = [t for t, n in zip(inputs, need, strict=True) if n and t is not None]
            h2, c2 = composite(xp, h, c, w_hh, b_hh)
            grads = iter(autograd.grad(joining.cat([h2, c2], -1), wanted, g, create_graph=True,
                                       allow_unused=True, materialize_grads=True))
            return [next(grads) if n else None for n in need]
        ga = g._host()
        res = quiet(_backward, ga, ca, ha, wa, gates, tc, need)
        return [from_array(np.ascontiguousarray(r), d) if r is not None else None for r in res]
    return _split(record(hc, inputs, "LstmCellBackward0", bw), hd)



# ----------------------------------------------------------------------------------------- a whole layer
CompositeLayer = Callable[[Tensor, Tensor, Tensor, Tensor, Tensor | None, bool], tuple[Tensor, Tensor, Tensor]]


def _layer_forward(xa: np.ndarray, h0: np.ndarray, c0: np.ndarray, wa: np.ndarray, ba: np.ndarray | None,
                   order: range) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The recurrence over a layer's T steps (in `order`): (packed [h_1 .. h_T, c_T] (T + 1, N, H) with
    h_t at its time index, the activated gates (T, N, 4H), the cell states (T, N, H), their tanh). Each
    step writes into the preallocated arrays (few NumPy calls per step: they are most of its time)."""
    steps, n, g4 = xa.shape
    hd = g4 // 4
    packed = np.empty((steps + 1, n, hd), xa.dtype)
    acts, cs, tcs = np.empty_like(xa), np.empty((steps, n, hd), xa.dtype), np.empty((steps, n, hd), xa.dtype)
    wt = wa.T
    h, c_prev = h0, c0
    for t in order:
        act = acts[t]
        np.matmul(h, wt, out=act)
        if ba is not None:
            act += ba
        act += xa[t]  # (x W_ih^T + b_ih) + (h W_hh^T + b_hh): the composite's sum, in the other order
        g = act[:, 2 * hd:3 * hd]
        gt = np.tanh(g)
        np.negative(act, out=act)  # sigmoid(x) = 1 / (1 + exp(-x)), the cpu kernel's formula, in place
        np.exp(act, out=act)
        act += 1
        np.reciprocal(act, out=act)
        g[...] = gt
        c = cs[t]
        np.multiply(act[:, hd:2 * hd], c_prev, out=c)
        c += act[:, :hd] * g
        np.tanh(c, out=tcs[t])
        np.multiply(act[:, 3 * hd:], tcs[t], out=packed[t])
        h, c_prev = packed[t], c
    packed[steps] = c_prev
    return packed, acts, cs, tcs


def _layer_backward(gp: np.ndarray, h0: np.ndarray, c0: np.ndarray, wa: np.ndarray, packed: np.ndarray,
                    acts: np.ndarray, cs: np.ndarray, tcs: np.ndarray, order: range,
                    need: tuple[bool, ...]) -> list[np.ndarray | None]:
    """Backpropagation through the layer's time steps: the gradients of (xp, h0, c0, w_hh, b_hh) from
    that of the packed output (dh_t at each time index, dc_T last). The factors that do not depend on
    the incoming gradient are computed for all steps at once; the loop keeps the few that do."""
    steps, n, hd = tcs.shape
    ts = list(order)
    i, f, g, o = acts[..., :hd], acts[..., hd:2 * hd], acts[..., 2 * hd:3 * hd], acts[..., 3 * hd:]
    c_prev = np.empty_like(cs)  # c_{t-1} at each step's time index
    h_prev = np.empty_like(tcs)
    for k, t in enumerate(ts):
        c_prev[t] = cs[ts[k - 1]] if k else c0
        h_prev[t] = packed[ts[k - 1]] if k else h0
    d_tanh = o * (1 - tcs * tcs)  # dh_t -> dc_t
    facs = np.empty_like(acts)  # dc_t -> d(gates) for i, f, g; dh_t -> d(gates) for o
    facs[..., :hd] = g * i * (1 - i)
    facs[..., hd:2 * hd] = c_prev * f * (1 - f)
    facs[..., 2 * hd:3 * hd] = i * (1 - g * g)
    facs[..., 3 * hd:] = tcs * o * (1 - o)
    dgs = np.empty_like(acts)  # dL/d(gates) before the activations, per step
    dh_next, dc = np.zeros((n, hd), gp.dtype), gp[steps].copy()
    dct = np.empty((n, hd), gp.dtype)
    for k in range(steps - 1, -1, -1):
        t = ts[k]
        dh = gp[t] + dh_next
        np.multiply(dh, d_tanh[t], out=dct)
        dct += dc  # dL/dc_t in full: directly, and through h_t = o tanh(c_t)
        dg_, fac = dgs[t], facs[t]
        np.multiply(fac[:, :3 * hd].reshape(n, 3, hd), dct[:, None, :], out=dg_[:, :3 * hd].reshape(n, 3, hd))
        np.multiply(dh, fac[:, 3 * hd:], out=dg_[:, 3 * hd:])
        dh_next = dg_ @ wa
        dc = dct * f[t]
    dw = db = None
    if need[3]:  # sum over the steps of dG_t^T h_{t-1}, as one product over all of them
        dw = dgs.reshape(-1, 4 * hd).T @ h_prev.reshape(-1, hd)
    if need[4]:
        db = dgs.reshape(-1, 4 * hd).sum(0)
    return [dgs if need[0] else None, dh_next if need[1] else None, dc if need[2] else None, dw, db]


def lstm_layer(xp: Tensor, h0: Tensor, c0: Tensor, w_hh: Tensor, b_hh: Tensor | None, reverse: bool,
               composite: CompositeLayer) -> tuple[Tensor, Tensor, Tensor] | None:
    """One LSTM layer (one direction) over the input projections xp (T, N, 4H) from states h0, c0 (N, H):
    (outputs (T, N, H), h_n, c_n), fused into one autograd node (backpropagation through time in NumPy);
    None where it does not apply (see `lstm_step`), and the caller runs the layer step by step.
    `composite(xp, h0, c0, w_hh, b_hh, reverse)` is that step-by-step layer, for the backward under
    create_graph."""
    ts = (xp, h0, c0, w_hh) if b_hh is None else (xp, h0, c0, w_hh, b_hh)
    d = xp.dtype
    if d not in _DTYPES or any(t.dtype is not d or t.device.type != "cpu" for t in ts) or xp.dim() != 3 or \
            xp.shape[0] == 0 or h0.dim() != 2 or c0.dim() != 2:
        return None
    if any(a is not b for a, b in zip(amp.lower_precision(h0, w_hh, b_hh), (h0, w_hh, b_hh), strict=True)):
        return None
    steps = xp.shape[0]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    ha, ca, wa = h0._host(), c0._host(), w_hh._host()
    ba = b_hh._host() if b_hh is not None else None
    packed_a, acts, cs, tcs = quiet(_layer_forward, xp._host(), ha, ca, wa, ba, order)
    packed = from_array(packed_a, d)
    inputs = [xp, h0, c0, w_hh, b_hh]
    if autograd.needs_grad(*inputs):
        def bw(g: Tensor) -> list[Any]:
            need = tuple(t is not None and t.requires_grad for t in inputs)
            if autograd.is_grad_enabled():  # create_graph: differentiate the step-by-step layer, recomputed
                wanted = [t for t, n in zip(inputs, need, strict=True) if n and t is not None]
                out, _, c_n = composite(xp, h0, c0, w_hh, b_hh, reverse)
                grads = iter(autograd.grad(joining.cat([out, c_n.unsqueeze(0)], 0), wanted, g, create_graph=True,
                                           allow_unused=True, materialize_grads=True))
                return [next(grads) if n else None for n in need]
            res = quiet(_layer_backward, g._host(), ha, ca, wa, packed_a, acts, cs, tcs, order, need)
            return [from_array(np.ascontiguousarray(r), d) if r is not None else None for r in res]
        packed = record(packed, inputs, "LstmLayerBackward0", bw)
    last = order[-1]
    return _part(packed, 0, steps), _part(packed, last, 1, squeeze=True), _part(packed, steps, 1, squeeze=True)


def _part(p: Tensor, start: int, length: int, squeeze: bool = False) -> Tensor:
    """p[start:start + length] (or p[start] with `squeeze`), a view whose gradient is g placed in zeros
    of p's shape: in NumPy, or by concatenation (differentiable) under create_graph."""
    n, rest = p.shape[0], tuple(p.shape[1:])
    st = p.stride()
    view = p._view(rest if squeeze else (length, *rest), st[1:] if squeeze else st, start * st[0])
    if not p.requires_grad:
        return view

    def bw(g: Tensor) -> tuple:
        if autograd.is_grad_enabled():
            gg = g.unsqueeze(0) if squeeze else g
            parts = [g.new_zeros((start, *rest)), gg, g.new_zeros((n - start - length, *rest))]
            return (joining.cat(parts, 0),)
        za = np.zeros((n, *rest), g.dtype.np)
        za[start:start + length] = g._host()
        return (from_array(za, g.dtype),)
    return record(view, [p], "SliceBackward0", bw)
