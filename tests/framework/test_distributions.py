"""strata.framework.distributions (torch.distributions under the alias) against PyTorch CPU: log_prob,
entropy, moments, KL divergences and their gradients from the same parameters; samples checked for
shape, support and frequencies."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import strata
from strata.framework import distributions as D

RNG = np.random.default_rng(7)


def _np(t: object) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, strata.Tensor) else t.detach().numpy()  # type: ignore[union-attr]


def _close(a: object, b: object, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


@pytest.mark.parametrize("use_logits", [False, True])
def test_categorical_matches_torch(use_logits: bool) -> None:
    p = RNG.random((3, 4)).astype(np.float32) + 0.05
    arg = np.log(p).astype(np.float32) if use_logits else p
    tp, sp = torch.tensor(arg, requires_grad=True), strata.tensor(arg, requires_grad=True)
    kw = "logits" if use_logits else "probs"
    td, sd = torch.distributions.Categorical(**{kw: tp}), D.Categorical(**{kw: sp})
    v = np.array([0, 3, 2])
    tl, sl = td.log_prob(torch.tensor(v)), sd.log_prob(strata.tensor(v))
    _close(sl, tl)
    _close(sd.entropy(), td.entropy())
    _close(sd.probs, td.probs)
    (tl.sum() + td.entropy().sum()).backward()
    (sl.sum() + sd.entropy().sum()).backward()
    _close(sp.grad, tp.grad, 1e-4, 1e-5)
    # broadcasting a batch of values against the batch of distributions
    _close(sd.log_prob(strata.tensor(np.array([[1, 1, 1], [0, 2, 3]]))),
           td.log_prob(torch.tensor(np.array([[1, 1, 1], [0, 2, 3]]))))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_categorical_samples_follow_probs(device: str) -> None:
    strata.manual_seed(0)
    d = D.Categorical(probs=strata.tensor([[0.1, 0.0, 0.9], [1.0, 0.0, 0.0]], device=device))
    s = d.sample((500,))
    assert tuple(s.shape) == (500, 2) and s.dtype == strata.int64 and s.device.type == device
    a = _np(s)
    assert set(np.unique(a[:, 0])) <= {0, 2} and (a[:, 1] == 0).all() and 0.8 < (a[:, 0] == 2).mean() < 0.97
    assert tuple(d.sample().shape) == (2,)


def test_normal_matches_torch_with_rsample_gradients() -> None:
    loc, scale = RNG.standard_normal(4).astype(np.float32), (RNG.random(4) + 0.5).astype(np.float32)
    tl, ts = torch.tensor(loc, requires_grad=True), torch.tensor(scale, requires_grad=True)
    sl, ss = strata.tensor(loc, requires_grad=True), strata.tensor(scale, requires_grad=True)
    td, sd = torch.distributions.Normal(tl, ts), D.Normal(sl, ss)
    v = RNG.standard_normal(4).astype(np.float32)
    _close(sd.log_prob(strata.tensor(v)), td.log_prob(torch.tensor(v)))
    _close(sd.entropy(), td.entropy())
    _close(sd.cdf(strata.tensor(v)), td.cdf(torch.tensor(v)))
    q_t, q_s = torch.distributions.Normal(0.5, 2.0), D.Normal(0.5, 2.0)
    tk, sk = torch.distributions.kl_divergence(td, q_t), D.kl_divergence(sd, q_s)
    _close(sk, tk)
    (td.log_prob(torch.tensor(v)).sum() + tk.sum()).backward()
    (sd.log_prob(strata.tensor(v)).sum() + sk.sum()).backward()
    _close(sl.grad, tl.grad, 1e-4, 1e-5)
    _close(ss.grad, ts.grad, 1e-4, 1e-5)
    # rsample: d(sample)/d(loc) = 1, d(sample)/d(scale) = the standard draw
    strata.manual_seed(1)
    sl.grad = None
    x = sd.rsample((3,))
    x.sum().backward()
    np.testing.assert_allclose(_np(sl.grad), np.full(4, 3.0))
    assert tuple(sd.sample((5, 2)).shape) == (5, 2, 4) and not sd.sample().requires_grad


def test_bernoulli_and_uniform_match_torch() -> None:
    p = RNG.random(5).astype(np.float32)
    td, sd = torch.distributions.Bernoulli(probs=torch.tensor(p)), D.Bernoulli(probs=strata.tensor(p))
    v = np.array([1.0, 0.0, 1.0, 1.0, 0.0], np.float32)
    _close(sd.log_prob(strata.tensor(v)), td.log_prob(torch.tensor(v)), 1e-5, 1e-5)
    _close(sd.entropy(), td.entropy(), 1e-5, 1e-5)
    tq, sq = torch.distributions.Bernoulli(logits=torch.tensor(-p)), D.Bernoulli(logits=strata.tensor(-p))
    _close(D.kl_divergence(sd, sq), torch.distributions.kl_divergence(td, tq), 1e-5, 1e-5)
    tu, su = torch.distributions.Uniform(-1.0, 3.0, validate_args=False), D.Uniform(-1.0, 3.0)
    pts = np.array([-2.0, 0.0, 2.5], np.float32)
    _close(su.log_prob(strata.tensor(pts)), tu.log_prob(torch.tensor(pts)))
    _close(su.entropy(), tu.entropy())
    draws = _np(su.sample((200,)))
    assert draws.min() >= -1.0 and draws.max() < 3.0
    with pytest.raises(ValueError, match="not both"):
        D.Categorical()
    with pytest.raises(NotImplementedError, match="kl_divergence"):
        D.kl_divergence(su, sq)
