"""strata.autograd.forward_ad (dual tensors) and the legacy Variable against PyTorch CPU: the same tangents
(Jacobian-vector products) for elementwise, matrix and network functions, the same errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import strata
import strata.autograd.forward_ad as sfw
import strata.nn.functional as SF
from strata.autograd import Variable

RNG = np.random.default_rng(2026)
# torch's forward_ad module scripts a helper on first use, which warns on torch 2.13: not what is tested here
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


def _both(x: np.ndarray) -> tuple[torch.Tensor, strata.Tensor]:
    return torch.tensor(x), strata.tensor(x)


def _mlp(lib: Any, F: Any, w1: Any, w2: Any) -> Callable[[Any], Any]:
    return lambda x: F.softmax(lib.tanh(x @ w1) @ w2, dim=-1)


CASES: dict[str, Callable[[Any, Any], Callable[[Any], Any]]] = {
    "sin_times_exp": lambda lib, F: lambda x: lib.sin(x) * lib.exp(x / 3),
    "sum_of_squares": lambda lib, F: lambda x: (x * x).sum(dim=1),
    "matmul_self": lambda lib, F: lambda x: x @ x.T,
    "log_softmax": lambda lib, F: lambda x: F.log_softmax(x, dim=1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_tangents_match_torch(case: str) -> None:
    x, t = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((3, 4)).astype(np.float32)
    (tx, sx), (tt, st) = _both(x), _both(t)
    with tfw.dual_level():
        tp, tj = tfw.unpack_dual(CASES[case](torch, torch.nn.functional)(tfw.make_dual(tx, tt)))
    with sfw.dual_level():
        sp, sj = sfw.unpack_dual(CASES[case](strata, SF)(sfw.make_dual(sx, st)))
    np.testing.assert_allclose(sp.numpy(), tp.numpy(), rtol=1e-5, atol=1e-6)
    assert sj is not None and not sj.requires_grad and not sp.requires_grad
    np.testing.assert_allclose(sj.numpy(), tj.numpy(), rtol=1e-4, atol=1e-5)


def test_two_duals_add_their_directions_and_a_network_matches_torch() -> None:
    x, tx_, w1, tw1 = (RNG.standard_normal(s).astype(np.float32) for s in ((2, 3), (2, 3), (3, 5), (3, 5)))
    w2 = RNG.standard_normal((5, 4)).astype(np.float32)
    with tfw.dual_level():
        f = _mlp(torch, torch.nn.functional, tfw.make_dual(torch.tensor(w1), torch.tensor(tw1)), torch.tensor(w2))
        want = tfw.unpack_dual(f(tfw.make_dual(torch.tensor(x), torch.tensor(tx_)))).tangent
    with sfw.dual_level():
        g = _mlp(strata, SF, sfw.make_dual(strata.tensor(w1), strata.tensor(tw1)), strata.tensor(w2))
        got = sfw.unpack_dual(g(sfw.make_dual(strata.tensor(x), strata.tensor(tx_)))).tangent
    assert got is not None
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)


def test_a_tensor_without_duals_has_no_tangent_and_levels_end() -> None:
    with sfw.dual_level():
        sfw.make_dual(strata.ones(2), strata.ones(2))
        p, t = sfw.unpack_dual(strata.zeros(3))
        assert t is None and p.shape == (3,)
    x = strata.ones(2)
    assert sfw.unpack_dual(x) == (x, None)  # outside a level: the tensor itself
    with pytest.raises(RuntimeError, match="no level exists"):
        sfw.make_dual(strata.ones(2), strata.ones(2))


def test_errors_are_pytorchs() -> None:
    for fw, lib in ((tfw, torch), (sfw, strata)):
        with fw.dual_level():
            with pytest.raises(RuntimeError, match="different size than that of the original Tensor"):
                fw.make_dual(lib.ones(2), lib.ones(3))
            with pytest.raises(ValueError, match="Expected primal to be floating point"):
                fw.make_dual(lib.ones(2, dtype=lib.int64), lib.ones(2, dtype=lib.int64))
    with sfw.dual_level(), pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
        sfw.enter_dual_level()


def test_a_primal_that_requires_grad_keeps_its_reverse_graph() -> None:
    w = strata.tensor([1.0, 2.0], requires_grad=True)
    with sfw.dual_level():
        p, t = sfw.unpack_dual((sfw.make_dual(w, strata.tensor([1.0, 1.0])) ** 2).sum())
    assert t is not None and t.item() == 6.0  # d/de sum((w + e)^2) = 2 (1 + 2)
    p.backward()
    assert w.grad is not None and w.grad.tolist() == [2.0, 4.0]


def test_variable_is_the_legacy_constructor() -> None:
    data = strata.tensor([1.0, 2.0])
    v = Variable(data, requires_grad=True)
    assert v.requires_grad and v.is_leaf and v.tolist() == [1.0, 2.0]
    assert isinstance(strata.zeros(1), Variable) and not isinstance(1.0, Variable)
    assert isinstance(torch.zeros(1), torch.autograd.Variable)  # the oracle agrees
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0])  # type: ignore[arg-type]
