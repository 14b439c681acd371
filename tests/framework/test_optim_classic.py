"""The classic optimizers (Adadelta, Adagrad, RMSprop, Adamax) against torch.optim from the same start:
parameters after several steps, the state's names and values, option checks, and state-dict round trips."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import strata

CASES: list[tuple[str, dict[str, Any]]] = [
    ("Adadelta", {}), ("Adadelta", {"lr": 0.5, "rho": 0.8, "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {}), ("Adagrad", {"lr": 0.05, "lr_decay": 0.1, "initial_accumulator_value": 0.3,
                                  "weight_decay": 0.01}),
    ("RMSprop", {}), ("RMSprop", {"momentum": 0.9, "centered": True, "weight_decay": 0.05}),
    ("RMSprop", {"alpha": 0.9, "maximize": True}),
    ("Adamax", {}), ("Adamax", {"lr": 0.01, "betas": (0.8, 0.9), "weight_decay": 0.1}),
]
W0 = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
X = np.random.default_rng(8).standard_normal((5, 3)).astype(np.float32)


def _run(lib: Any, name: str, kwargs: dict[str, Any], device: str | None, steps: int = 4) -> tuple[Any, Any]:
    dev = {"device": device} if device else {}
    w = lib.tensor(W0, requires_grad=True, **dev)
    b = lib.tensor(np.zeros(4, np.float32), requires_grad=True, **dev)
    x = lib.tensor(X, **dev)
    opt = getattr(lib.optim, name)([w, b], **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        ((x @ w + b).tanh() ** 2).sum().backward()
        opt.step()
    return (w, b), opt


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_torch_after_steps(name: str, kwargs: dict[str, Any]) -> None:
    (tw, tb), topt = _run(torch, name, kwargs, None)
    (sw, sb), sopt = _run(strata, name, kwargs, "cpu")
    np.testing.assert_allclose(sw.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sb.detach().numpy(), tb.detach().numpy(), rtol=1e-5, atol=1e-6)
    ts, ss = topt.state_dict()["state"], sopt.state_dict()["state"]
    assert sorted(ss[0]) == sorted(ts[0])
    for key, ref in ts[0].items():
        np.testing.assert_allclose(np.asarray(ss[0][key].tolist()), ref.numpy(), rtol=1e-5, atol=1e-6, err_msg=key)
    assert sopt.state_dict()["param_groups"][0].keys() == topt.state_dict()["param_groups"][0].keys()


@pytest.mark.parametrize("name", ["Adadelta", "RMSprop"])
def test_on_cuda(name: str) -> None:
    kwargs = {"momentum": 0.5, "centered": True} if name == "RMSprop" else {}
    (tw, _), _ = _run(torch, name, kwargs, None, steps=2)
    (sw, _), sopt = _run(strata, name, kwargs, "cuda", steps=2)
    assert sw.device.type == "cuda" and sopt.state[sw]["square_avg"].device.type == "cuda"
    np.testing.assert_allclose(sw.detach().cpu().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_state_dict_round_trip_continues_identically() -> None:
    (w1, _), opt1 = _run(strata, "RMSprop", {"momentum": 0.9}, "cpu", steps=2)
    w2 = strata.tensor(w1.detach().numpy(), requires_grad=True)
    b2 = strata.tensor(opt1.param_groups[0]["params"][1].detach().numpy(), requires_grad=True)
    opt2 = strata.optim.RMSprop([w2, b2], momentum=0.9)
    opt2.load_state_dict(opt1.state_dict())
    x = strata.tensor(X)
    for w, b, opt in ((w1, opt1.param_groups[0]["params"][1], opt1), (w2, b2, opt2)):
        opt.zero_grad()
        ((x @ w + b).tanh() ** 2).sum().backward()
        opt.step()
    assert w1.tolist() == w2.tolist()


@pytest.mark.parametrize(("name", "kwargs", "match"), [
    ("Adadelta", {"rho": 1.5}, "Invalid rho"), ("Adagrad", {"lr_decay": -1}, "Invalid lr_decay"),
    ("RMSprop", {"alpha": -0.1}, "Invalid alpha"), ("Adamax", {"betas": (0.9, 1.0)}, "Invalid beta"),
    ("RMSprop", {"lr": -1}, "Invalid learning rate"), ("Adagrad", {"eps": -1}, "Invalid epsilon"),
])
def test_bad_options_raise_torch_errors(name: str, kwargs: dict[str, Any], match: str) -> None:
    w = [torch.zeros(1, requires_grad=True)]
    with pytest.raises(ValueError, match=match):
        getattr(torch.optim, name)(w, **kwargs)
    with pytest.raises(ValueError, match=match):
        getattr(strata.optim, name)([strata.zeros(1, requires_grad=True)], **kwargs)
