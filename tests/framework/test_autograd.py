"""Autograd against torch.autograd: gradients of the ops on both devices, accumulation, retain_graph,
no_grad/enable_grad, detach, leaf/non-leaf semantics, in-place ops in the graph, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import strata

torch = pytest.importorskip("torch")

rng = np.random.default_rng(1)
X = rng.standard_normal((3, 4))
W = rng.standard_normal((4, 2))
V = rng.standard_normal((4,))
POS = np.abs(X) + 0.5

GRAPHS = [
    ("arith", lambda m, x, w, v: ((x + v) * x - v / (x * x + 1)).sum()),
    ("pow_scalar", lambda m, x, w, v: (x ** 3 + 2 ** x).mean()),
    ("unary", lambda m, x, w, v: (x.exp() + x.tanh() + x.sigmoid() + x.relu() + x.abs() - x.neg()).sum()),
    ("log_sqrt", lambda m, x, w, v: (x.abs().add(0.5).log() + (x * x + 1).sqrt() + (x * x + 1).rsqrt()).sum()),
    ("matmul", lambda m, x, w, v: (x @ w).tanh().sum()),
    ("matvec", lambda m, x, w, v: (x @ v).sum() + (v @ v)),
    ("reductions", lambda m, x, w, v: x.sum(0).max() + x.mean(1, keepdim=True).sum() + x.max(1).values.sum()),
    ("min_dim", lambda m, x, w, v: x.min(0, keepdim=True)[0].sum() * 2),
    ("broadcast", lambda m, x, w, v: (x * v + v).sum()),
    ("views", lambda m, x, w, v: (x.T.reshape(2, 6)[:, 1:4] * x.view(12)[:3]).sum() + x.unsqueeze(0).expand(2, 3, 4)
     .sum()),
    ("where_clamp", lambda m, x, w, v: m.where(x > 0, x * 2, v).sum() + x.clamp(-0.5, 0.5).sum()),
    ("maximum", lambda m, x, w, v: m.maximum(x, v).sum() + m.minimum(x, x.detach() * 0).sum()),
    ("reused", lambda m, x, w, v: (x * x).sum() * (x * x).sum()),
    ("reciprocal_div", lambda m, x, w, v: (1 / (x * x + 1)).sum() + (v / 3).sum()),
    ("to_dtype", lambda m, x, w, v: (x.to(m.float64) * 2).sum().float()),
]


@pytest.mark.parametrize(("name", "fn"), GRAPHS, ids=[g[0] for g in GRAPHS])
def test_gradients_match_torch(name: str, fn: Any, device: str, oracle: Any) -> None:
    sx, tx = oracle.pair(X, dtype=strata.float32, device=device, requires_grad=True)
    sw, tw = oracle.pair(W, dtype=strata.float32, device=device, requires_grad=True)
    sv, tv = oracle.pair(V, dtype=strata.float32, device=device, requires_grad=True)
    out, ref = fn(strata, sx, sw, sv), fn(torch, tx, tw, tv)
    oracle.assert_same(out, ref, rtol=1e-4, atol=1e-5, device=device)
    assert out.grad_fn is not None and out.requires_grad
    out.backward()
    ref.backward()
    for s, t in ((sx, tx), (sw, tw), (sv, tv)):
        if t.grad is None:
            assert s.grad is None
        else:
            oracle.assert_same(s.grad, t.grad, rtol=1e-4, atol=1e-5, device=device)


def test_grad_fn_names_and_leaves(device: str) -> None:
    x = strata.ones(2, device=device, requires_grad=True)
    y = x * 2
    z = y.sum()
    assert x.is_leaf and x.grad_fn is None
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.name() == "SumBackward0"
    assert z.grad_fn.next_functions[0][0] is y.grad_fn
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    z.backward()
    with pytest.warns(UserWarning, match="not a leaf"):
        assert y.grad is None  # non-leaf grads are not kept, and reading one warns as PyTorch does
    assert x.grad.tolist() == [2.0, 2.0]
    assert strata.ones(2).requires_grad is False


def test_accumulation_and_retain_graph(device: str) -> None:
    x = strata.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0, 12.0]  # accumulated over two passes
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    x.grad = None
    (x * 3).backward(strata.tensor([1.0, 0.0, 2.0], device=device))
    assert x.grad.tolist() == [3.0, 0.0, 6.0]


def test_no_grad_enable_grad_and_detach(device: str) -> None:
    x = strata.ones(2, device=device, requires_grad=True)
    with strata.no_grad():
        y = x * 2
        with strata.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None
    assert z.requires_grad
    assert strata.is_grad_enabled()

    @strata.no_grad()
    def f(t: strata.Tensor) -> strata.Tensor:
        return t + 1
    assert not f(x).requires_grad
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf and d._storage is not None
    w = d * x
    w.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_in_place_ops_in_the_graph(device: str, oracle: Any) -> None:
    sx, tx = oracle.pair(X, dtype=strata.float32, device=device, requires_grad=True)
    outs = []
    for x in (sx, tx):
        y = x * 1.5
        y.add_(x)
        y.mul_(x)
        y.relu_()
        outs.append(y.sum())
    outs[0].backward()
    outs[1].backward()
    oracle.assert_same(sx.grad, tx.grad, rtol=1e-5, device=device)
    for x in (sx, tx):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            x.add_(1)
        with torch.no_grad():
            pass
    with strata.no_grad():
        sx.add_(1)  # allowed under no_grad, as in PyTorch


def test_errors_match_torch(device: str) -> None:
    for m, dev in ((strata, device), (torch, "cpu")):
        x = m.ones(2, device=dev, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
            (x * 2).backward()
        with pytest.raises(RuntimeError, match="Mismatch in shape: grad_output"):
            (x * 2).backward(m.ones(3, device=dev))
        with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
            m.ones(2, device=dev).sum().backward()
        with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
            m.ones(2, dtype=m.int64, device=dev).requires_grad_()
        with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
            (x * 2).requires_grad_(False)
        with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
            m.ones(2, requires_grad=True).numpy()


def test_mixed_dtype_grads_are_cast_back(device: str, oracle: Any) -> None:
    sh, th = oracle.pair(V, dtype=strata.float16, device=device, requires_grad=True)
    sd, td = oracle.pair(V, dtype=strata.float64, device=device, requires_grad=True)
    out, ref = (sh * sd).sum(), (th * td).sum()
    out.backward()
    ref.backward()
    oracle.assert_same(sh.grad, th.grad, device=device)
    oracle.assert_same(sd.grad, td.grad, device=device)
