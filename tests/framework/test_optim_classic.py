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
    ("NAdam", {}), ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {"lr": 0.01}), ("RAdam", {"betas": (0.5, 0.6), "weight_decay": 0.1}),
    ("RAdam", {"betas": (0.5, 0.6), "weight_decay": 0.1, "decoupled_weight_decay": True}),
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


def _lrs(lib: Any, make: Any, steps: int, opt_name: str = "SGD", metrics: list[float] | None = None,
         **opt_kw: Any) -> list[Any]:
    w = lib.zeros(1, requires_grad=True)
    opt = getattr(lib.optim, opt_name)([w], lr=0.1, **opt_kw)
    sched = make(lib.optim.lr_scheduler, opt)
    out = []
    for i in range(steps):
        opt.step()
        if metrics is not None:
            sched.step(metrics[i])
        else:
            sched.step()
        g = opt.param_groups[0]
        out.append((sched.get_last_lr()[0], g.get("momentum"), tuple(g["betas"]) if "betas" in g else None))
    return out


SCHEDULERS: list[tuple[str, Any, int, dict[str, Any]]] = [
    ("onecycle_cos_sgd", lambda m, o: m.OneCycleLR(o, max_lr=1.0, total_steps=10), 10, {"momentum": 0.9}),
    ("onecycle_linear_3phase_adam", lambda m, o: m.OneCycleLR(o, max_lr=0.5, epochs=2, steps_per_epoch=6,
                                                              anneal_strategy="linear", three_phase=True), 12,
     {"opt_name": "Adam"}),
    ("warm_restarts", lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01), 12, {}),
    ("constant", lambda m, o: m.ConstantLR(o, factor=0.5, total_iters=3), 6, {}),
    ("polynomial", lambda m, o: m.PolynomialLR(o, total_iters=4, power=2.0), 6, {}),
    ("plateau_min", lambda m, o: m.ReduceLROnPlateau(o, patience=1, factor=0.5, cooldown=1), 9,
     {"metrics": [3.0, 2.0, 2.5, 2.4, 2.6, 2.7, 1.0, 1.5, 1.6]}),
    ("plateau_max_abs", lambda m, o: m.ReduceLROnPlateau(o, mode="max", threshold=0.5, threshold_mode="abs",
                                                         patience=0, min_lr=0.03), 5,
     {"metrics": [1.0, 1.2, 2.0, 2.1, 2.2]}),
]


@pytest.mark.parametrize(("name", "make", "steps", "kw"), SCHEDULERS, ids=[s[0] for s in SCHEDULERS])
def test_schedulers_match_torch(name: str, make: Any, steps: int, kw: dict[str, Any]) -> None:
    ours, ref = _lrs(strata, make, steps, **kw), _lrs(torch, make, steps, **kw)
    for (lr_s, m_s, b_s), (lr_t, m_t, b_t) in zip(ours, ref, strict=True):
        assert lr_s == pytest.approx(lr_t, rel=1e-9, abs=1e-12)
        assert (m_s is None) == (m_t is None) and (m_s is None or m_s == pytest.approx(m_t, rel=1e-12))
        assert (b_s is None) == (b_t is None) and (b_s is None or b_s == pytest.approx(b_t, rel=1e-12))


def test_scheduler_errors_match_torch() -> None:
    for lib in (torch, strata):
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match="Factor should be < 1.0"):
            lib.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.5)
        with pytest.raises(ValueError, match="total_steps OR"):
            lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2)
        opt.step()
        sched.step()
        opt.step()
        sched.step()
        with pytest.raises(ValueError, match="Tried to step 3 times"):
            sched.step()


def test_radam_rectified_branch_matches_torch() -> None:
    """rho_t passes 5 only after about six steps: run long enough to use the rectified update."""
    kwargs = {"lr": 0.05, "betas": (0.9, 0.9)}
    (tw, _), _ = _run(torch, "RAdam", kwargs, None, steps=9)
    (sw, _), _ = _run(strata, "RAdam", kwargs, "cpu", steps=9)
    np.testing.assert_allclose(sw.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)


def _lbfgs_run(lib: Any, device: str | None, **kw: Any) -> tuple[Any, list[float]]:
    dev = {"device": device} if device else {}
    w = lib.tensor(W0, requires_grad=True, **dev)
    x = lib.tensor(X, **dev)
    target = lib.tensor(np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4), **dev)
    opt = lib.optim.LBFGS([w], **kw)
    losses = []

    def closure() -> Any:
        opt.zero_grad()
        # smooth and well conditioned: without a line search L-BFGS is chaotic on rougher losses, where
        # float32 rounding differences between two implementations grow into different trajectories
        loss = ((x @ w - target) ** 2).sum() + 0.1 * (w ** 2).sum() + 0.01 * (w ** 4).sum()
        loss.backward()
        return loss

    for _ in range(3):
        losses.append(float(opt.step(closure).detach()))
    return w, losses


@pytest.mark.parametrize("kw", [{}, {"lr": 0.5, "max_iter": 5, "history_size": 3}, {"max_iter": 4, "max_eval": 3}],
                         ids=["defaults", "short_history", "max_eval"])
def test_lbfgs_matches_torch(kw: dict[str, Any]) -> None:
    tw, tl = _lbfgs_run(torch, None, **kw)
    sw, sl = _lbfgs_run(strata, "cpu", **kw)
    np.testing.assert_allclose(sl, tl, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(sw.detach().numpy(), tw.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_lbfgs_options() -> None:
    w = strata.zeros(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="strong_wolfe"):
        strata.optim.LBFGS([w], line_search_fn="strong_wolfe")
    with pytest.raises(RuntimeError, match="closure"):
        strata.optim.LBFGS([w]).step()
