"""The op table (op_table.py) against PyTorch CPU, op by op, straight from the table: every
differentiable elementwise op's values, dtype, gradient (through the table's derivative) and second
derivative (the derivative is itself differentiable); every op's kernels on both backends; the
surface the table generates (methods, in-place forms, strata.* functions, node names); the
dispatcher's errors."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
import torch

import strata
from strata.framework import op_table

from .conftest import assert_same

# an input domain per op where both the op and its derivative are finite (PyTorch's test inputs do the same)
_DOMAIN = {"log": (0.2, 3.0), "sqrt": (0.2, 3.0), "rsqrt": (0.2, 3.0), "reciprocal": (0.3, 3.0),
           "asin": (-0.8, 0.8), "acos": (-0.8, 0.8), "atanh": (-0.8, 0.8), "acosh": (1.2, 3.0),
           "log1p": (-0.5, 2.0), "log2": (0.2, 3.0), "log10": (0.2, 3.0), "erfinv": (-0.8, 0.8),
           "tan": (-1.2, 1.2)}
_TORCH_NAME = {"gelu": lambda t: torch.nn.functional.gelu(t),
               "gelu_tanh": lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
               "silu": lambda t: torch.nn.functional.silu(t)}
_STRATA_FN = {"gelu": lambda s: strata.nn.functional.gelu(s),
              "gelu_tanh": lambda s: strata.nn.functional.gelu(s, approximate="tanh"),
              "silu": lambda s: strata.nn.functional.silu(s),
              "round": lambda s: strata.round(s)}

UNARY = sorted(n for n, d in op_table.OPS.items() if d.family in ("unary", "math_unary") and d.derivative)
BINARY = sorted(n for n, d in op_table.OPS.items()
                if d.family in ("binary", "math_binary") and d.derivative and n != "floor_divide")


def _data(name: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    lo, hi = _DOMAIN.get(name, (-2.0, 2.0))
    x = np.random.default_rng(seed).uniform(lo, hi, shape)
    if name in ("abs", "sign", "relu", "floor", "ceil", "trunc", "frac", "round"):
        x = np.where(np.abs(x - np.round(x)) < 0.05, x + 0.1, x)  # away from the kinks
    return x


def _torch_fn(name: str) -> Any:
    return _TORCH_NAME.get(name) or getattr(torch, name)


def _strata_fn(name: str) -> Any:
    return _STRATA_FN.get(name) or getattr(strata, name)


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_gradients_and_second_derivatives(name: str) -> None:
    x = _data(name, (3, 4), 0)
    s = strata.tensor(x, dtype=strata.float64, requires_grad=True)
    t = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ys, yt = _strata_fn(name)(s), _torch_fn(name)(t)
    assert_same(ys, yt, rtol=1e-6, atol=1e-7)
    assert ys.grad_fn.name() == op_table.OPS[name].node
    w = np.random.default_rng(1).standard_normal((3, 4))
    (gs,) = strata.autograd.grad((ys * strata.tensor(w)).sum(), s, create_graph=True)
    (gt,) = torch.autograd.grad((yt * torch.tensor(w)).sum(), t, create_graph=True)
    if gt._is_zerotensor():  # PyTorch's lazy zeros (sign, rounding): compare with real ones
        gt = torch.zeros_like(t)
    assert_same(gs, gt, rtol=1e-6, atol=1e-7)
    if gs.requires_grad and gt.requires_grad:  # second order, where the first derivative depends on x
        g2s = strata.autograd.grad(gs.sum(), s, materialize_grads=True)[0]
        g2t = torch.autograd.grad(gt.sum(), t, allow_unused=True)[0]
        if g2t is None or g2t._is_zerotensor():
            g2t = torch.zeros_like(t)
        assert_same(g2s, g2t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", BINARY)
def test_binary_values_and_gradients_with_broadcasting(name: str) -> None:
    a = _data(name, (3, 4), 2)
    b = _data(name, (4,), 3)
    if name in ("pow",):
        a = np.abs(a) + 0.2
    if name in ("div", "fmod", "remainder", "atan2", "copysign"):
        b = np.where(np.abs(b) < 0.3, 0.7, b)
    sa, sb = (strata.tensor(v, dtype=strata.float64, requires_grad=True) for v in (a, b))
    ta, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (a, b))
    ys, yt = getattr(strata, name)(sa, sb), getattr(torch, name)(ta, tb)
    assert_same(ys, yt, rtol=1e-6, atol=1e-7)
    assert ys.grad_fn.name() == op_table.OPS[name].node
    ys.sum().backward()
    yt.sum().backward()
    assert_same(sa.grad, ta.grad, rtol=1e-6, atol=1e-7)
    assert_same(sb.grad, tb.grad, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("dim", [None, 1])
def test_reductions_from_the_table(name: str, dim: Any) -> None:
    x = np.array([[1.5, -2.0, 3.0, 3.0], [0.5, 0.0, 2.0, -1.0], [2.0, 2.0, -0.5, 1.0]])
    s = strata.tensor(x, dtype=strata.float32, requires_grad=True)
    t = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    kw = {} if dim is None else {"dim": dim}
    ys, yt = getattr(s, name)(**kw), getattr(t, name)(**kw)
    assert_same(ys, yt)
    assert ys.grad_fn.name() == yt.grad_fn.name()
    ys.sum().backward()
    yt.sum().backward()
    assert_same(s.grad, t.grad)


def test_every_op_has_a_kernel_on_both_backends() -> None:
    composite = {n for n, d in op_table.OPS.items() if d.family == "composite"}
    derived = {"amax", "amin"}  # reductions computed by the max / min kernels
    expected = set(op_table.OPS) - composite - derived
    for backend in op_table.BACKENDS:
        missing = expected - set(op_table.kernels_of(backend))
        assert not missing, f"{backend}: no kernel for {sorted(missing)}"


def test_the_surface_is_generated_from_the_table() -> None:
    for name, d in op_table.OPS.items():
        for public in (name, *d.aliases):
            if d.method:
                assert callable(getattr(strata.Tensor, public)), public
            if d.inplace:
                assert callable(getattr(strata.Tensor, public + "_")), public
            if d.function:
                # (strata.<name> may be the L5-traced wrapper of the table's function)
                assert inspect.unwrap(getattr(strata, public)) is inspect.unwrap(op_table.FUNCTIONS[public]), public
    x = strata.tensor([0.25, 0.5])
    assert x.sin_() is x and np.allclose(x.tolist(), np.sin([0.25, 0.5]))
    assert inspect.unwrap(strata.arctan2) is inspect.unwrap(strata.atan2)


def test_table_ops_run_on_cuda() -> None:
    x = np.array([[0.5, -1.0, 2.0]])
    s = strata.tensor(x, dtype=strata.float32, device="cuda", requires_grad=True)
    t = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    ys = (s.exp() * s.sin() + s.atan2(s + 2.0)).sum(1)
    yt = (t.exp() * t.sin() + t.atan2(t + 2.0)).sum(1)
    assert_same(ys, yt, device="cuda")
    ys.sum().backward()
    yt.sum().backward()
    assert_same(s.grad, t.grad, device="cuda")


def test_dispatcher_errors() -> None:
    with pytest.raises(KeyError, match="not declared"):
        op_table.register("cpu", "no_such_op")
    with pytest.raises(KeyError, match="unknown backend"):
        op_table.register("tpu", "exp")
    with pytest.raises(NotImplementedError, match="'layer_norm' has no kernel for the 'cpu' backend"):
        op_table.kernel("layer_norm", "cpu")
    with pytest.raises(ValueError, match="declared twice"):
        op_table.op("exp", "unary", op_table.FLOAT, None)
