"""The fused recurrent cells on "cuda" (nn/rnn_cuda.py, kernels/rnn.py; issue 16): LSTM, GRU and RNN
layers and cells against PyTorch CPU from the same weights (outputs, final states and the gradients of
the input, the initial states and every weight and bias), the launches per step (one gate kernel
forward, one backward), second-order gradients through the composite fallback, float64 and half
precision, the cases that fall back, and the same kernels on a virtual MI300X (clang-19)."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import torch

import strata
import strata.cuda as cuda
import strata.trace as trace
from strata.framework.nn import rnn_cuda

snn = strata.nn
RNG = np.random.default_rng(1617)
HAVE_CLANG = shutil.which("clang-19") is not None


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().double().numpy() if isinstance(t, strata.Tensor) else t.detach().double().numpy()


def _close(ours: Any, ref: Any, what: str, rtol: float = 1e-4, atol: float = 2e-5) -> None:
    assert ours is not None, what
    assert tuple(ours.shape) == tuple(ref.shape), (what, ours.shape, ref.shape)
    np.testing.assert_allclose(_np(ours), _np(ref), rtol=rtol, atol=atol, err_msg=what)


def _port(tm: torch.nn.Module, sm: Any, device: str, dtype: Any = None) -> None:
    sm.load_state_dict({k: strata.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    sm.to(device)
    if dtype is not None:
        sm.to(dtype)


def _loss_weights(outs: list[Any]) -> list[np.ndarray]:
    return [RNG.standard_normal(tuple(o.shape)) for o in outs]


def _both(tm: torch.nn.Module, sm: Any, arrays: list[np.ndarray], call: Any, device: str = "cuda",
          rtol: float = 1e-4, atol: float = 2e-5) -> None:
    """Run `call(module, *tensors)` (a list of outputs) on both sides; compare outputs, then the gradients
    of a random weighted sum of them for every input and parameter."""
    _port(tm, sm, device)
    tx = [torch.tensor(a, requires_grad=True) for a in arrays]
    sx = [strata.tensor(a, device=device, requires_grad=True) for a in arrays]
    to, so = call(tm, *tx), call(sm, *sx)
    assert len(to) == len(so)
    for i, (s, t) in enumerate(zip(so, to, strict=True)):
        want = strata.device(device)
        assert s.device.type == want.type and (want.index is None or s.device.index == want.index)
        _close(s, t, f"output {i}", rtol, atol)
    ws = _loss_weights(to)
    sum(((t * torch.tensor(w, dtype=t.dtype)).sum() for t, w in zip(to, ws, strict=True)),
        torch.zeros(())).backward()
    sl = so[0].new_zeros(())
    for s, w in zip(so, ws, strict=True):
        sl = sl + (s * strata.tensor(w, dtype=s.dtype, device=device)).sum()
    sl.backward()
    for i, (s, t) in enumerate(zip(sx, tx, strict=True)):
        _close(s.grad, t.grad, f"grad of input {i}", rtol, atol)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _close(p.grad, tp[name].grad, f"grad of {name}", rtol, atol)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _launches(rec: Any) -> Counter[str]:
    """Kernel launches by name (PTX name expressions on NVIDIA, mangled names on AMD)."""
    return Counter(str(e.args.get("kernel")) for e in rec.events
                   if e.layer == "L3" and e.name in ("cudaLaunchKernel", "hipModuleLaunchKernel"))


def _count(launches: Counter[str], part: str) -> int:
    return sum(n for k, n in launches.items() if part in k)


# ----------------------------------------------------------------------------------------- parity
def test_lstm_layer_with_states_matches_torch() -> None:
    torch.manual_seed(1)
    kw: dict[str, Any] = {"num_layers": 2, "bidirectional": True}
    call = lambda m, x, h, c: [*(lambda o: (o[0], *o[1]))(m(x, (h, c)))]  # noqa: E731
    _both(torch.nn.LSTM(3, 4, **kw), snn.LSTM(3, 4, **kw), [_x(4, 2, 3), _x(4, 2, 4), _x(4, 2, 4)], call)


def test_lstm_batch_first_without_bias_matches_torch() -> None:
    torch.manual_seed(2)
    kw = {"batch_first": True, "bias": False}
    call = lambda m, x: [*(lambda o: (o[0], *o[1]))(m(x))]  # noqa: E731
    _both(torch.nn.LSTM(3, 5, **kw), snn.LSTM(3, 5, **kw), [_x(3, 4, 3)], call)


@pytest.mark.parametrize("kw", [{"num_layers": 2, "batch_first": True}, {"bidirectional": True, "bias": False}],
                         ids=["2layers", "bidir-nobias"])
def test_gru_layer_with_state_matches_torch(kw: dict[str, Any]) -> None:
    torch.manual_seed(3)
    dirs = 2 if kw.get("bidirectional") else 1
    x = _x(2, 4, 3) if kw.get("batch_first") else _x(4, 2, 3)
    call = lambda m, x, h: list(m(x, h))  # noqa: E731
    _both(torch.nn.GRU(3, 4, **kw), snn.GRU(3, 4, **kw), [x, _x(kw.get("num_layers", 1) * dirs, 2, 4)], call)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_layer_matches_torch(nonlinearity: str) -> None:
    torch.manual_seed(4)
    kw: dict[str, Any] = {"nonlinearity": nonlinearity, "num_layers": 2}
    call = lambda m, x, h: list(m(x, h))  # noqa: E731
    _both(torch.nn.RNN(3, 4, **kw), snn.RNN(3, 4, **kw), [_x(4, 2, 3), _x(2, 2, 4)], call)


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch(kind: str) -> None:
    torch.manual_seed(5)
    tm, sm = getattr(torch.nn, kind)(3, 5), getattr(snn, kind)(3, 5)
    if kind == "LSTMCell":
        call = lambda m, x, h, c: list(m(x, (h, c)))  # noqa: E731
        _both(tm, sm, [_x(4, 3), _x(4, 5), _x(4, 5)], call)
    else:
        _both(tm, sm, [_x(4, 3), _x(4, 5)], lambda m, x, h: [m(x, h)])


def test_unbatched_cell_and_a_strided_state() -> None:
    """An unbatched LSTMCell (rows of one) and a transposed (column-strided) hidden state: the step copies
    what the kernels cannot read in place and still matches."""
    torch.manual_seed(6)
    _both(torch.nn.LSTMCell(3, 4), snn.LSTMCell(3, 4), [_x(3), _x(4), _x(4)], lambda m, x, h, c: list(m(x, (h, c))))
    _both(torch.nn.GRUCell(3, 4), snn.GRUCell(3, 4), [_x(2, 3), _x(4, 2)], lambda m, x, h: [m(x, h.t())])


def test_float64_matches_torch_to_double_precision() -> None:
    torch.manual_seed(7)
    tm, sm = torch.nn.LSTM(3, 4).double(), snn.LSTM(3, 4, dtype=strata.float64)
    sm.load_state_dict({k: strata.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    sm.to("cuda")
    assert sm.weight_hh_l0.dtype is strata.float64
    x = RNG.standard_normal((3, 2, 3))
    tx, sx = torch.tensor(x, requires_grad=True), strata.tensor(x, device="cuda", requires_grad=True)
    to, (th, tc) = tm(tx)
    so, (sh, sc) = sm(sx)
    for s, t in ((so, to), (sh, th), (sc, tc)):
        _close(s, t, "float64 output", rtol=1e-12, atol=1e-13)
    (to.sum() + tc.sum()).backward()
    (so.sum() + sc.sum()).backward()
    _close(sx.grad, tx.grad, "float64 input grad", rtol=1e-12, atol=1e-13)
    _close(sm.weight_hh_l0.grad, tm.weight_hh_l0.grad, "float64 weight_hh grad", rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_step_computes_in_float(dtype: str) -> None:
    """float16/bfloat16 operands, float math inside the kernel: within the storage type's rounding of
    PyTorch's float32 result from the same (rounded) values."""
    sd, td = getattr(strata, dtype), getattr(torch, dtype)
    xp, h, c, w, b = (torch.tensor(_x(*s)).to(td) for s in ((3, 16), (3, 4), (3, 4), (16, 4), (16,)))
    sx, shh, sc0, sw, sb = (strata.tensor(t.float().numpy(), dtype=sd, device="cuda") for t in (xp, h, c, w, b))
    fused = rnn_cuda.lstm_step(sx, shh, sc0, sw, sb)
    assert fused is not None
    sh, sc = fused
    gates = xp.float() + (h.float() @ w.float().t() + b.float())
    i, f, g, o = gates.chunk(4, -1)
    c2 = f.sigmoid() * c.float() + i.sigmoid() * g.tanh()
    tol = 1e-2 if dtype == "float16" else 3e-2
    assert sh.dtype is sd and sc.dtype is sd
    _close(sc, c2, "c'", rtol=tol, atol=tol)
    _close(sh, o.sigmoid() * c2.tanh(), "h'", rtol=tol, atol=tol)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_packed_and_unbatched_input_on_cuda_match_torch(kind: str) -> None:
    """Packed sequences run the fused steps (each sequence's state held past its length); unbatched input
    runs the layer with one row."""
    torch.manual_seed(11)
    tm, sm = getattr(torch.nn, kind)(2, 3, bidirectional=True), getattr(snn, kind)(2, 3, bidirectional=True)
    lens = [3, 4, 2]

    def packed(m: Any, x: Any) -> list[Any]:
        lib = strata if isinstance(x, strata.Tensor) else torch
        out, hn = m(lib.nn.utils.rnn.pack_padded_sequence(x, lens, enforce_sorted=False))
        pad, _ = lib.nn.utils.rnn.pad_packed_sequence(out)
        return [pad, *(hn if kind == "LSTM" else (hn,))]

    _both(tm, sm, [_x(4, 3, 2)], packed)
    _both(tm, sm, [_x(4, 2)], lambda m, x: [m(x)[0]])


# ----------------------------------------------------------------------------------------- launches
def test_one_gate_kernel_per_step_forward_and_backward() -> None:
    """An LSTM step is one GEMM and one gate kernel forward; its backward is one gate kernel plus BLAS and
    the bias reduction; a T-step layer launches exactly T gate kernels each way and no elementwise
    sigmoid/tanh/mul kernels."""
    d = "cuda"
    xp, h, c = (strata.randn(*s, device=d, requires_grad=True) for s in ((2, 12), (2, 3), (2, 3)))
    w, b = strata.randn(12, 3, device=d, requires_grad=True), strata.randn(12, device=d, requires_grad=True)
    rnn_cuda.lstm_step(xp, h, c, w, b)  # (compiles outside the recordings)
    with trace.record() as rec:
        fused = rnn_cuda.lstm_step(xp, h, c, w, b)
    assert fused is not None
    h1, c1 = fused
    fwd = _launches(rec)
    assert _count(fwd, "lstm_fwd") == 1 and sum(fwd.values()) == 2, fwd
    assert sum(n for k, n in fwd.items() if "gemm" in k) == 1, fwd
    assert "aten::_thnn_fused_lstm_cell" in [e.name for e in rec.events if e.layer == "L5"]
    assert h1.grad_fn is not None and c1.grad_fn is not None
    node = h1.grad_fn.next_functions[0][0]
    assert node is not None and node.name() == "ThnnFusedLstmCellBackward0"
    loss = (h1 * 2).sum() + c1.sum()
    with trace.record() as rec:
        loss.backward()
    bwd = _launches(rec)
    assert _count(bwd, "lstm_bwd") == 1, bwd
    assert not [k for k in bwd if "unary" in k], bwd

    for kind, kernel in (("LSTM", "lstm"), ("GRU", "gru"), ("RNN", "rnn")):
        m = getattr(snn, kind)(3, 4).to(d)
        x = strata.randn(5, 2, 3, device=d, requires_grad=True)
        m(x)[0].sum().backward()
        with trace.record() as rec:
            out = m(x)[0]
        fwd = _launches(rec)
        assert _count(fwd, f"{kernel}_fwd") == 5, (kind, fwd)
        assert not [k for k in fwd if "unary" in k], (kind, fwd)
        assert _count(fwd, "binary<float, 2>") + _count(fwd, "binaryIfLi2E") == 0, (kind, fwd)  # no mul (PTX or AMD)
        with trace.record() as rec:
            out.sum().backward()
        assert _count(_launches(rec), f"{kernel}_bwd") == 5, kind


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_layer_is_one_node_and_each_step_adds_one_gemm_and_one_kernel(kind: str) -> None:
    """A whole LSTM or GRU layer on cuda: one CudnnRnnBackward0 node; the launches grow by exactly one GEMM
    and one gate kernel per step forward and per step backward (dW_hh and db_hh once per layer)."""
    m = getattr(snn, kind)(3, 4).to("cuda")
    out, _ = m(strata.randn(2, 2, 3, device="cuda", requires_grad=True))
    assert out.grad_fn is not None
    assert [f.name() for f, _ in out.grad_fn.next_functions if f is not None] == ["CudnnRnnBackward0"]

    def launches(steps: int) -> tuple[Counter[str], Counter[str]]:
        x = strata.randn(steps, 2, 3, device="cuda", requires_grad=True)
        m(x)[0].sum().backward()  # (compiles outside the recordings)
        with trace.record() as rec:
            y = m(x)[0]
        fwd = _launches(rec)
        with trace.record() as rec:
            y.sum().backward()
        return fwd, _launches(rec)

    (f3, b3), (f6, b6) = launches(3), launches(6)
    for small, big, gate in ((f3, f6, f"{kind.lower()}_fwd"), (b3, b6, f"{kind.lower()}_bwd")):
        assert _count(small, gate) == 3 and _count(big, gate) == 6, (small, big)
        assert _count(big, "gemm") - _count(small, "gemm") == 3, (small, big)
        assert sum(big.values()) - sum(small.values()) == 6, (small, big)


# ----------------------------------------------------------------------------------------- higher order
@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_second_order_gradients_through_the_composite(kind: str) -> None:
    """grad(create_graph=True) of a fused step, then backward of a function of that gradient: the fused
    node's backward recomputes the composite step under grad mode, so the result is PyTorch's."""
    torch.manual_seed(8)
    tm, sm = getattr(torch.nn, kind)(3, 4), getattr(snn, kind)(3, 4)
    if kind == "RNNCell":
        tm, sm = torch.nn.RNNCell(3, 4, nonlinearity="tanh"), snn.RNNCell(3, 4)
    _port(tm, sm, "cuda")
    arrays = [_x(2, 3), _x(2, 4), _x(2, 4)]
    n = 3 if kind == "LSTMCell" else 2
    tx = [torch.tensor(a, requires_grad=True) for a in arrays[:n]]
    sx = [strata.tensor(a, device="cuda", requires_grad=True) for a in arrays[:n]]

    def first(m: Any, xs: list[Any], lib: Any) -> Any:
        out = m(xs[0], (xs[1], xs[2])) if n == 3 else m(xs[0], xs[1])
        outs = list(out) if isinstance(out, tuple) else [out]
        y = sum(((o * o).sum() for o in outs), outs[0].new_zeros(()))
        return lib.autograd.grad(y, xs[:2], create_graph=True)

    tg, sg = first(tm, tx, torch), first(sm, sx, strata)
    for s, t in zip(sg, tg, strict=True):
        _close(s, t, "first-order grad")
    (tg[0].pow(2).sum() + (tg[1] * tg[0].sum()).sum()).backward()
    (sg[0].pow(2).sum() + (sg[1] * sg[0].sum()).sum()).backward()
    for i, (s, t) in enumerate(zip(sx, tx, strict=True)):
        _close(s.grad, t.grad, f"second-order grad of input {i}")
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _close(p.grad, tp[name].grad, f"second-order grad of {name}")


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_second_order_gradients_through_a_bidirectional_layer(kind: str) -> None:
    """The layer node under create_graph (both directions): its backward differentiates the step-by-step
    layer, recomputed; gradients of a function of the first-order gradients match PyTorch's."""
    torch.manual_seed(10)
    tm, sm = getattr(torch.nn, kind)(3, 2, bidirectional=True), getattr(snn, kind)(3, 2, bidirectional=True)
    _port(tm, sm, "cuda")
    arrays = [_x(3, 2, 3), _x(2, 2, 2), _x(2, 2, 2)][:3 if kind == "LSTM" else 2]
    tx = [torch.tensor(a, requires_grad=True) for a in arrays]
    sx = [strata.tensor(a, device="cuda", requires_grad=True) for a in arrays]
    grads = []
    for m, xs, lib in ((tm, tx, torch), (sm, sx, strata)):
        if kind == "LSTM":
            out, (hn, cn) = m(xs[0], (xs[1], xs[2]))
        else:
            out, hn = m(xs[0], xs[1])
            cn = hn
        y = (out * out).sum() + (hn * cn).sum()
        g = lib.autograd.grad(y, [xs[0], xs[-1]], create_graph=True)
        (g[0].pow(2).sum() + g[1].sum() * g[0].sum()).backward()
        grads.append(g)
    for s, t in zip(grads[1], grads[0], strict=True):
        _close(s, t, "first-order grad")
    for i, (s, t) in enumerate(zip(sx, tx, strict=True)):
        _close(s.grad, t.grad, f"second-order grad of input {i}")
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _close(p.grad, tp[name].grad, f"second-order grad of {name}")


# ----------------------------------------------------------------------------------------- fallbacks
def test_cases_that_fall_back_to_the_composite() -> None:
    cpu = [strata.zeros(2, 8), strata.zeros(2, 2), strata.zeros(2, 2), strata.zeros(8, 2)]
    assert rnn_cuda.lstm_step(cpu[0], cpu[1], cpu[2], cpu[3], None) is None
    g = [t.to("cuda") for t in cpu]
    assert rnn_cuda.lstm_step(g[0], g[1], g[2], g[3][:6], None) is None  # bad weight shape: composite's error
    assert rnn_cuda.lstm_step(g[0], g[1], g[2].double(), g[3], None) is None  # mixed dtypes
    assert rnn_cuda.gru_step(g[0][:0, :6], g[1][:0], g[3][:6], None) is None  # empty batch
    assert rnn_cuda.rnn_step(g[0].long()[:, :2], g[1].long(), g[3].long()[:2], None, False) is None  # integers
    with strata.autocast("cuda", dtype=strata.float16):
        assert rnn_cuda.gru_step(g[0][:, :6], g[1], g[3][:6], None) is None
    h3 = strata.zeros(2, 3, device="cuda")  # a hidden state of the wrong width: the composite's matmul error
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        snn.LSTMCell(3, 2).to("cuda")(strata.zeros(2, 3, device="cuda"), (h3, h3))


def test_no_graph_without_grad() -> None:
    m = snn.GRU(3, 4).to("cuda")
    with strata.no_grad():
        out, hn = m(strata.randn(3, 2, 3, device="cuda"))
    assert out.grad_fn is None and hn.grad_fn is None and not out.requires_grad


# ----------------------------------------------------------------------------------------- MI300X
@pytest.fixture
def amd_device() -> Iterator[str]:
    dev = cuda.Device(model="mi300x")
    yield f"cuda:{dev.index}"


@pytest.mark.skipif(not HAVE_CLANG, reason="clang-19 not installed (make amd)")
def test_lstm_and_gru_on_mi300x_match_torch(amd_device: str) -> None:
    """The same CUDA C++ compiled by clang-19 for gfx942, run by the CDNA engine: parity with PyTorch and
    one gate kernel per step."""
    torch.manual_seed(9)
    call = lambda m, x, h, c: [*(lambda o: (o[0], *o[1]))(m(x, (h, c)))]  # noqa: E731
    with trace.record() as rec:
        _both(torch.nn.LSTM(3, 4), snn.LSTM(3, 4), [_x(3, 2, 3), _x(1, 2, 4), _x(1, 2, 4)], call, device=amd_device)
    launches = _launches(rec)
    assert _count(launches, "lstm_fwd") == 3 and _count(launches, "lstm_bwd") == 3, launches
    assert any(e.layer == "L0" and e.args.get("isa") == "gfx9" for e in rec.events)
    _both(torch.nn.GRU(3, 4, bidirectional=True), snn.GRU(3, 4, bidirectional=True), [_x(3, 2, 3), _x(2, 2, 4)],
          lambda m, x, h: list(m(x, h)), device=amd_device)
    _both(torch.nn.GRUCell(3, 4), snn.GRUCell(3, 4), [_x(2, 3), _x(2, 4)], lambda m, x, h: [m(x, h)],
          device=amd_device)
