"""strata.optim against torch.optim: identical parameters and gradients, several steps, every option
combination, parameter groups, state_dict round trips mid-training, errors; on "cpu" and "cuda"."""

from __future__ import annotations

import copy
import inspect
import io
from typing import Any

import numpy as np
import pytest
import torch
from torch.optim.optimizer import required as torch_required

import strata
import strata.optim
from strata.framework.optim import SGD, Adam, AdamW, Optimizer
from strata.framework.optim.optimizer import required as strata_required

from .conftest import DEVICES, as_numpy, to_torch_dtype

SHAPES = [(3, 4), (5,)]


def _params(device: str, dtype: strata.dtype = strata.float32, seed: int = 0) -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(seed)
    vals = [rng.standard_normal(s) for s in SHAPES]
    ours = [strata.tensor(v, dtype=dtype, device=device, requires_grad=True) for v in vals]
    theirs = [torch.tensor(v, dtype=to_torch_dtype(dtype), requires_grad=True) for v in vals]
    return ours, theirs


def _set_grads(ours: list[Any], theirs: list[Any], step: int, skip: int | None = None) -> None:
    rng = np.random.default_rng(100 + step)
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        g = rng.standard_normal(tuple(a.shape))
        if i == skip:
            a.grad, b.grad = None, None
            continue
        a.grad = strata.tensor(g, dtype=a.dtype, device=a.device)
        b.grad = torch.tensor(g, dtype=b.dtype)


def _check(ours: list[Any], theirs: list[Any], tol: float) -> None:
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(as_numpy(a), as_numpy(b), rtol=tol, atol=tol)


def _check_state(opt: Optimizer, ref: torch.optim.Optimizer, tol: float) -> None:
    ours, theirs = opt.state_dict(), ref.state_dict()
    assert ours["param_groups"] == theirs["param_groups"]
    assert sorted(ours["state"]) == sorted(theirs["state"])
    for k, st in theirs["state"].items():
        assert sorted(ours["state"][k]) == sorted(st)
        for name, v in st.items():
            o = ours["state"][k][name]
            assert o.shape == v.shape and o.dtype.name == str(v.dtype).removeprefix("torch.")
            if name == "step":
                assert o.device.type == "cpu"  # step counts stay on the host
            np.testing.assert_allclose(as_numpy(o), as_numpy(v), rtol=tol, atol=tol)


def _run(cls: str, kwargs: dict[str, Any], device: str, steps: int = 3, dtype: strata.dtype = strata.float32,
         tol: float = 1e-5) -> None:
    ours, theirs = _params(device, dtype)
    opt = getattr(strata.optim, cls)(ours, **kwargs)
    ref = getattr(torch.optim, cls)(theirs, **kwargs)
    for step in range(steps):
        _set_grads(ours, theirs, step, skip=1 if step == 1 else None)  # a parameter without grad is skipped
        assert opt.step() is None
        ref.step()
    _check(ours, theirs, tol)
    _check_state(opt, ref, tol)


SGD_CASES = [
    {"lr": 0.1},
    {"lr": 0.1, "momentum": 0.9},
    {"lr": 0.05, "momentum": 0.9, "dampening": 0.5, "weight_decay": 0.1},
    {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
    {"lr": 0.05, "momentum": 0.5, "maximize": True},
]
ADAM_CASES = [
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "betas": (0.8, 0.9)}),
    ("Adam", {"lr": 0.02, "maximize": True, "eps": 1e-6}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kwargs", SGD_CASES, ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()))
def test_sgd_matches_torch(kwargs: dict[str, Any], device: str) -> None:
    _run("SGD", kwargs, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("cls", "kwargs"), ADAM_CASES,
                         ids=lambda x: x if isinstance(x, str) else ",".join(f"{a}={b}" for a, b in x.items()))
def test_adam_matches_torch(cls: str, kwargs: dict[str, Any], device: str) -> None:
    _run(cls, kwargs, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("cls", "kwargs", "dtype", "tol"), [
    ("AdamW", {"lr": 0.01}, strata.float64, 1e-10),
    ("SGD", {"lr": 0.1, "momentum": 0.9}, strata.float64, 1e-12),
    ("AdamW", {"lr": 0.01, "amsgrad": True}, strata.float16, 2e-3),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}, strata.bfloat16, 2e-2),
], ids=["adamw-f64", "sgd-f64", "adamw-f16", "sgd-bf16"])
def test_other_dtypes(cls: str, kwargs: dict[str, Any], dtype: strata.dtype, tol: float, device: str) -> None:
    _run(cls, kwargs, device, dtype=dtype, tol=tol)


@pytest.mark.parametrize("device", DEVICES)
def test_param_groups_with_their_own_options(device: str) -> None:
    ours, theirs = _params(device)
    opt = SGD([{"params": [ours[0]], "lr": 0.5, "nesterov": True}, {"params": ours[1]}], lr=0.1, momentum=0.9)
    ref = torch.optim.SGD([{"params": [theirs[0]], "lr": 0.5, "nesterov": True}, {"params": theirs[1]}], lr=0.1,
                          momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    for step in range(3):
        _set_grads(ours, theirs, step)
        opt.step()
        ref.step()
    _check(ours, theirs, 1e-5)
    _check_state(opt, ref, 1e-5)
    assert repr(opt) == repr(ref)


@pytest.mark.parametrize("device", DEVICES)
def test_add_param_group_and_named_params(device: str) -> None:
    ours, theirs = _params(device)
    opt = AdamW([("a", ours[0])], lr=0.01)
    ref = torch.optim.AdamW([("a", theirs[0])], lr=0.01)
    opt.add_param_group({"params": [("b", ours[1])], "lr": 0.1})
    ref.add_param_group({"params": [("b", theirs[1])], "lr": 0.1})
    for step in range(2):
        _set_grads(ours, theirs, step)
        opt.step()
        ref.step()
    _check(ours, theirs, 1e-5)
    _check_state(opt, ref, 1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("cls", "kwargs"), [("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01}),
                                             ("AdamW", {"lr": 0.01, "amsgrad": True})])
def test_state_dict_round_trip_continues_identically(cls: str, kwargs: dict[str, Any], device: str) -> None:
    ours, theirs = _params(device)
    opt = getattr(strata.optim, cls)(ours, **kwargs)
    ref = getattr(torch.optim, cls)(theirs, **kwargs)
    for step in range(2):
        _set_grads(ours, theirs, step)
        opt.step()
        ref.step()
    # a fresh optimizer (other hyperparameters) on copies of the parameters, resumed through safetensors
    buf = io.BytesIO()
    strata.save(opt.state_dict(), buf)
    buf.seek(0)
    params2 = [p.detach().clone().requires_grad_(True) for p in ours]
    opt2 = getattr(strata.optim, cls)(params2, lr=123.0)
    opt2.load_state_dict(strata.load(buf))
    assert opt2.param_groups[0]["lr"] == kwargs["lr"]
    for s in opt2.state.values():
        for name, v in s.items():
            assert v.device.type == ("cpu" if name == "step" else device)
    for step in range(2, 5):
        _set_grads(params2, theirs, step)
        opt2.step()
        ref.step()
    _check(params2, theirs, 1e-5)
    _check_state(opt2, ref, 1e-5)


def test_load_state_dict_casts_and_copies() -> None:
    p = strata.zeros(3, dtype=strata.float64, requires_grad=True)
    opt = Adam([p])
    sd = {"state": {0: {"step": strata.tensor(4.0), "exp_avg": strata.ones(3), "exp_avg_sq": strata.ones(3)}},
          "param_groups": [dict(copy.deepcopy(opt.state_dict()["param_groups"][0]), lr=0.5)]}
    opt.load_state_dict(sd)
    st = opt.state[p]
    assert st["exp_avg"].dtype is strata.float64 and st["step"].dtype is strata.float32
    assert st["exp_avg"] is not sd["state"][0]["exp_avg"]
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[0]["params"][0] is p


@pytest.mark.parametrize("device", DEVICES)
def test_closure_and_zero_grad(device: str) -> None:
    w = strata.tensor([1.0, -2.0], device=device, requires_grad=True)
    tw = torch.tensor([1.0, -2.0], requires_grad=True)
    opt, ref = SGD([w], lr=0.1), torch.optim.SGD([tw], lr=0.1)

    def closure() -> Any:
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    def tclosure() -> Any:
        ref.zero_grad()
        loss = (tw * tw).sum()
        loss.backward()
        return loss

    with strata.no_grad():  # the closure runs with grad enabled all the same
        loss = opt.step(closure)
    assert loss.item() == ref.step(tclosure).item()
    np.testing.assert_allclose(as_numpy(w), as_numpy(tw), rtol=1e-6)
    opt.zero_grad(set_to_none=False)
    assert w.grad is not None and w.grad.tolist() == [0.0, 0.0] and not w.grad.requires_grad
    opt.zero_grad()
    assert w.grad is None


def test_cuda_step_does_not_sync() -> None:
    ctx = strata.cuda.Device(0).context
    ours, theirs = _params("cuda")
    opt = AdamW(ours, lr=0.01, amsgrad=True)
    _set_grads(ours, theirs, 0)
    opt.step()  # compiles / loads the kernels
    _set_grads(ours, theirs, 1)
    before = ctx.host_syncs
    opt.step()
    opt.zero_grad()
    assert ctx.host_syncs == before


def test_signatures_match_torch() -> None:
    for name in ("SGD", "Adam", "AdamW"):
        ours = inspect.signature(getattr(strata.optim, name)).parameters
        theirs = inspect.signature(getattr(torch.optim, name)).parameters
        assert [(p.name, p.default, p.kind) for p in ours.values()] == \
               [(p.name, p.default, p.kind) for p in theirs.values()], name
    sd = Adam([strata.zeros(1, requires_grad=True)]).state_dict()["param_groups"][0]
    assert sd == torch.optim.Adam([torch.zeros(1, requires_grad=True)]).state_dict()["param_groups"][0]


def _err(fn: Any) -> tuple[type, str]:
    with pytest.raises(Exception) as e:  # noqa: PT011 - comparing against torch's type and message
        fn()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("case", [
    "empty", "tensor", "set", "lr", "momentum", "wd", "nesterov", "eps", "beta0", "beta1", "nonleaf", "twice",
    "required", "group-type", "names-missing", "not-tensor",
])
def test_errors_match_torch(case: str) -> None:
    def build(lib: Any, tensor: Any) -> Any:
        a = tensor([1.0, 2.0]).requires_grad_(True)
        b = tensor([1.0, 2.0]).requires_grad_(True)
        o = lib.optim
        required = (torch_required if lib is torch else strata_required)
        return {
            "empty": lambda: o.SGD([]),
            "tensor": lambda: o.SGD(a),
            "set": lambda: o.SGD([{"params": {a}}]),
            "lr": lambda: o.SGD([a], lr=-1.0),
            "momentum": lambda: o.SGD([a], momentum=-0.5),
            "wd": lambda: o.AdamW([a], weight_decay=-0.1),
            "nesterov": lambda: o.SGD([a], lr=0.1, nesterov=True),
            "eps": lambda: o.Adam([a], eps=-1.0),
            "beta0": lambda: o.Adam([a], betas=(1.0, 0.9)),
            "beta1": lambda: o.AdamW([a], betas=(0.9, -0.1)),
            "nonleaf": lambda: o.SGD([a * 2]),
            "twice": lambda: o.SGD([{"params": [a]}, {"params": [a, b]}]),
            "required": lambda: o.Optimizer([a], {"lr": required}),
            "group-type": lambda: o.SGD([a]).add_param_group([b]),
            "names-missing": lambda: o.SGD([("a", a), b]),
            "not-tensor": lambda: o.SGD([a, 3]),
        }[case]()
    ours = _err(lambda: build(strata, strata.tensor))
    theirs = _err(lambda: build(torch, torch.tensor))
    if case == "group-type":  # the type in the message is the host language's list either way
        assert ours[0] is theirs[0]
    else:
        assert ours == theirs


def test_load_state_dict_errors() -> None:
    a, b = strata.zeros(2, requires_grad=True), strata.zeros(2, requires_grad=True)
    sd = SGD([a, b]).state_dict()
    with pytest.raises(ValueError, match="different number of parameter groups"):
        SGD([{"params": [a]}, {"params": [b]}]).load_state_dict(sd)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        SGD([a]).load_state_dict(sd)
