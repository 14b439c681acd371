"""strata.optim.lr_scheduler against torch.optim.lr_scheduler: the lr sequences (several groups, chained
schedulers, resuming with last_epoch, closed-form step(epoch)), state dicts, warnings and errors."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest
import torch

import strata
import strata.optim.lr_scheduler as ours_sched
from strata.optim import SGD

theirs_sched = torch.optim.lr_scheduler


def _opts(lrs: tuple[float, ...] = (0.1, 0.02)) -> tuple[Any, Any]:
    a = SGD([{"params": [strata.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs], lr=1.0)
    b = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs], lr=1.0)
    return a, b


def _sequence(opt: Any, scheds: list[Any], n: int) -> list[list[float]]:
    out = [[g["lr"] for g in opt.param_groups]]
    for _ in range(n):
        opt.step()
        for s in scheds:
            s.step()
        out.append(list(scheds[-1].get_last_lr()))
    return out


def _close(x: list[list[float]], y: list[list[float]]) -> bool:
    return len(x) == len(y) and all(a == pytest.approx(b, rel=1e-12, abs=1e-15) for a, b in zip(x, y, strict=True))


CASES: list[tuple[str, dict[str, Any]]] = [
    ("StepLR", {"step_size": 3}),
    ("StepLR", {"step_size": 2, "gamma": 0.5}),
    ("MultiStepLR", {"milestones": [2, 5, 5, 9], "gamma": 0.3}),
    ("ExponentialLR", {"gamma": 0.9}),
    ("LinearLR", {}),
    ("LinearLR", {"start_factor": 1.0, "end_factor": 0.1, "total_iters": 7}),
    ("CosineAnnealingLR", {"T_max": 5}),
    ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.001}),
    ("LambdaLR", {"lr_lambda": lambda e: 1.0 / (1 + e)}),
]


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_sequence_matches_torch(name: str, kwargs: dict[str, Any]) -> None:
    a, b = _opts()
    ours = _sequence(a, [getattr(ours_sched, name)(a, **kwargs)], 14)
    theirs = _sequence(b, [getattr(theirs_sched, name)(b, **kwargs)], 14)
    assert _close(ours, theirs)


def test_chained_schedulers_compose_as_torch() -> None:
    a, b = _opts()
    ours = _sequence(a, [ours_sched.LinearLR(a, start_factor=0.5, total_iters=3),
                         ours_sched.CosineAnnealingLR(a, T_max=6)], 10)
    theirs = _sequence(b, [theirs_sched.LinearLR(b, start_factor=0.5, total_iters=3),
                           theirs_sched.CosineAnnealingLR(b, T_max=6)], 10)
    assert _close(ours, theirs)


def test_lambda_per_group_and_errors() -> None:
    a, b = _opts()
    fns = [lambda e: 0.5 ** e, lambda e: e + 1.0]
    assert _close(_sequence(a, [ours_sched.LambdaLR(a, fns)], 4), _sequence(b, [theirs_sched.LambdaLR(b, fns)], 4))
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        ours_sched.LambdaLR(a, [fns[0]])


@pytest.mark.parametrize(("name", "kwargs"), [("StepLR", {"step_size": 2}), ("CosineAnnealingLR", {"T_max": 5}),
                                              ("ExponentialLR", {"gamma": 0.5}), ("LinearLR", {})])
def test_closed_form_step_epoch(name: str, kwargs: dict[str, Any]) -> None:
    a, b = _opts()
    sa, sb = getattr(ours_sched, name)(a, **kwargs), getattr(theirs_sched, name)(b, **kwargs)
    a.step()
    b.step()
    for epoch in (3, 1, 4):
        with pytest.warns(UserWarning, match="epoch parameter in `scheduler.step\\(\\)` was not necessary"):
            sa.step(epoch)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sb.step(epoch)
        assert sa.get_last_lr() == pytest.approx(sb.get_last_lr(), rel=1e-12)


def test_state_dict_and_resume() -> None:
    a, b = _opts()
    sa, sb = ours_sched.CosineAnnealingLR(a, T_max=8), theirs_sched.CosineAnnealingLR(b, T_max=8)
    _sequence(a, [sa], 3)
    _sequence(b, [sb], 3)
    sda, sdb = sa.state_dict(), sb.state_dict()
    assert sorted(sda) == sorted(sdb)
    assert all(sda[k] == pytest.approx(v, rel=1e-12) for k, v in sdb.items())
    # resume: a new optimizer from the old one's state, a new scheduler from the old one's state
    a2, b2 = _opts()
    a2.load_state_dict(a.state_dict())
    b2.load_state_dict(b.state_dict())
    sa2 = ours_sched.CosineAnnealingLR(a2, T_max=8, last_epoch=sa.last_epoch)
    sb2 = theirs_sched.CosineAnnealingLR(b2, T_max=8, last_epoch=sb.last_epoch)
    sa2.load_state_dict(sa.state_dict())
    sb2.load_state_dict(sb.state_dict())
    assert _close(_sequence(a2, [sa2], 6), _sequence(b2, [sb2], 6))
    assert a2.param_groups[0]["initial_lr"] == 0.1


def test_resume_without_initial_lr_and_bad_optimizer() -> None:
    a, b = _opts()
    with pytest.raises(KeyError) as e:
        ours_sched.StepLR(a, step_size=2, last_epoch=3)
    with pytest.raises(KeyError) as f:
        theirs_sched.StepLR(b, step_size=2, last_epoch=3)
    assert str(e.value) == str(f.value)
    with pytest.raises(TypeError, match="SGD is not an Optimizer"):
        ours_sched.StepLR(torch.optim.SGD([torch.zeros(1, requires_grad=True)]), step_size=1)
    with pytest.raises(ValueError, match="Starting multiplicative factor"):
        ours_sched.LinearLR(a, start_factor=0.0)
    with pytest.raises(ValueError, match="Ending multiplicative factor"):
        ours_sched.LinearLR(a, end_factor=1.5)


def test_warns_when_stepped_before_the_optimizer() -> None:
    a, _ = _opts()
    s = ours_sched.StepLR(a, step_size=1)
    with pytest.warns(UserWarning, match="Detected call of `lr_scheduler.step\\(\\)` before `optimizer.step\\(\\)`"):
        s.step()
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        s.get_lr()
    assert math.isclose(s.get_last_lr()[0], 0.01)
