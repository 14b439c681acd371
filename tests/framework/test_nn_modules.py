"""strata.nn modules against torch.nn (PyTorch CPU as the oracle): registration and traversal, state
dicts and their errors, weight tying, train/eval, device and dtype moves, hooks, containers, printed
forms, and each layer's forward and backward with identical weights on "cpu" and "cuda"."""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn as tnn

import strata
import strata.nn as nn
from strata.nn import functional as F  # noqa: N812

DEVICES = ["cpu", "cuda"]
O: Any = None  # the conftest oracle module (assert_same), bound for the helpers below


@pytest.fixture(autouse=True)
def _bind_oracle(oracle: Any) -> None:
    global O
    O = oracle


# ----------------------------------------------------------------------------------------- helpers
def load_from_torch(sm: Any, tm: Any, device: str = "cpu") -> Any:
    """Give strata module `sm` torch module `tm`'s weights and buffers (through NumPy); sm moves to device."""
    sm.to(device)
    sm.load_state_dict({k: strata.tensor(v.detach().numpy(), device=device) for k, v in tm.state_dict().items()})
    return sm


def raised(fn: Callable[[], Any]) -> tuple[type, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is comparing what was raised
        return type(e), str(e)
    raise AssertionError("nothing raised")


def check_layer(tm: Any, sm: Any, x: np.ndarray, device: str, *, grad: bool = True, rtol: float = 1e-5,
                atol: float = 1e-5, xdtype: Any = None) -> None:
    """Same forward output and same input / parameter gradients as torch for identical weights."""
    load_from_torch(sm, tm, device)
    needs = grad and x.dtype.kind == "f"
    xt = torch.tensor(x, requires_grad=needs)
    xs = strata.tensor(x, device=device, requires_grad=needs)
    yt, ys = tm(xt), sm(xs)
    O.assert_same(ys, yt, rtol=rtol, atol=atol, device=device)
    if not grad:
        return
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(g))
    ys.backward(strata.tensor(g, device=device))
    if needs:
        O.assert_same(xs.grad, xt.grad, rtol=rtol, atol=atol)
    tparams = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        O.assert_same(p.grad, tparams[name].grad, rtol=rtol, atol=atol)


def randn(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class TorchNet(tnn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = tnn.Embedding(5, 4)
        self.body = tnn.Sequential(tnn.Linear(4, 4), tnn.ReLU(), tnn.LayerNorm(4))
        self.head = tnn.Linear(4, 5, bias=False)
        self.head.weight = self.emb.weight  # tied
        self.scale = tnn.Parameter(torch.ones(()))
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.register_buffer("cache", torch.zeros(2), persistent=False)

    def forward(self, idx: Any) -> Any:
        return self.head(self.body(self.emb(idx))) * self.scale


class StrataNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(5, 4)
        self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.LayerNorm(4))
        self.head = nn.Linear(4, 5, bias=False)
        self.head.weight = self.emb.weight
        self.scale = nn.Parameter(strata.ones(()))
        self.register_buffer("steps", strata.zeros((), dtype=strata.int64))
        self.register_buffer("cache", strata.zeros(2), persistent=False)

    def forward(self, idx: Any) -> Any:
        return self.head(self.body(self.emb(idx))) * self.scale


# ----------------------------------------------------------------------------------------- imports
def test_strata_nn_import_paths() -> None:
    import importlib

    import strata.framework.nn as fnn
    assert strata.nn is fnn and nn is fnn
    assert importlib.import_module("strata.nn.functional") is fnn.functional is F
    assert importlib.import_module("strata.nn.init") is fnn.init
    assert importlib.import_module("strata.nn.utils") is fnn.utils
    assert nn.utils.clip_grad_norm_ is fnn.utils.clip_grad_norm_


# ----------------------------------------------------------------------------------------- Parameter
def test_parameter_basics() -> None:
    p = nn.Parameter(strata.tensor([1.0, 2.0]))
    tp = tnn.Parameter(torch.tensor([1.0, 2.0]))
    assert isinstance(p, strata.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert repr(p) == repr(tp)
    assert not isinstance(p * 2, nn.Parameter)
    assert repr(nn.Parameter(strata.tensor([1, 2]), requires_grad=False)) == \
        repr(tnn.Parameter(torch.tensor([1, 2]), requires_grad=False))
    assert raised(lambda: nn.Parameter(strata.tensor([1, 2]))) == \
        raised(lambda: tnn.Parameter(torch.tensor([1, 2])))
    base = strata.zeros(3)
    shared = nn.Parameter(base)
    base[0] = 5.0
    assert shared.tolist() == [5.0, 0.0, 0.0]  # wraps, does not copy
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and q.tolist() == p.tolist() and q.requires_grad


# ----------------------------------------------------------------------------------------- registration
def test_registration_and_traversal_match_torch() -> None:
    s, t = StrataNet(), TorchNet()
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in s.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in s.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in s.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in s.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in s.body.named_parameters(prefix="body")] == \
        [n for n, _ in t.body.named_parameters(prefix="body")]
    assert [n for n, _ in s.named_parameters(recurse=False)] == ["scale"]
    assert len(list(s.parameters())) == len(list(t.parameters())) == 6
    assert len(list(s.modules())) == len(list(t.modules()))
    assert len(list(s.children())) == 3 and len(list(s.buffers())) == 2
    sd, td = s.state_dict(), t.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == list(td)  # tied weights under both names, non-persistent buffer left out
    assert [tuple(v.shape) for v in sd.values()] == [tuple(v.shape) for v in td.values()]
    assert not any(v.requires_grad for v in sd.values())
    assert all(isinstance(v, nn.Parameter) for k, v in s.state_dict(keep_vars=True).items() if k != "steps")
    assert s.get_submodule("body.0") is s.body[0]
    assert s.get_parameter("body.0.bias") is s.body[0].bias
    assert "emb" in dir(s) and "steps" in dir(s) and "scale" in dir(s)


def test_setattr_and_delattr_semantics() -> None:
    m = nn.Module()
    m.w = nn.Parameter(strata.ones(2))
    assert [n for n, _ in m.named_parameters()] == ["w"]
    m.w = None  # a registered parameter may be set to None
    assert m.w is None and list(m.parameters()) == []
    m.register_buffer("b", strata.zeros(1))
    m.b = strata.ones(3)  # assigning a tensor to a buffer name replaces the buffer
    assert m.b.tolist() == [1.0, 1.0, 1.0] and "b" in m.state_dict()
    m.sub = nn.Identity()
    assert [n for n, _ in m.named_children()] == ["sub"]
    m.sub = nn.Parameter(strata.zeros(1))  # a name moves between registries
    assert [n for n, _ in m.named_children()] == [] and "sub" in dict(m.named_parameters())
    del m.sub
    assert "sub" not in dict(m.named_parameters())
    m.plain = 3
    assert m.plain == 3 and "plain" not in m.state_dict()
    m.extra = nn.Buffer(strata.zeros(2), persistent=False)
    assert "extra" in dict(m.named_buffers()) and "extra" not in m.state_dict()


def _make_errors(lib: Any, t: Any) -> list[Callable[[], Any]]:
    """Actions that raise in torch.nn; `lib` is torch.nn or strata.nn, `t` torch or strata."""
    def lin() -> Any:
        m = lib.Module()
        m.weight = lib.Parameter(t.zeros(3, 2))
        return m

    class Early(lib.Module):
        def __init__(self) -> None:
            self.w = lib.Parameter(t.ones(1))

    return [
        lambda: lin().foo,
        lambda: setattr(lin(), "weight", t.zeros(3, 2)),
        lambda: lin().register_buffer("weight", t.zeros(1)),
        lambda: lin().register_buffer("a.b", t.zeros(1)),
        lambda: lin().register_buffer("", t.zeros(1)),
        lambda: lin().register_buffer(3, t.zeros(1)),
        lambda: lin().register_buffer("x", 3),
        lambda: lin().register_parameter("x", t.zeros(1)),
        lambda: lin().register_parameter("x", lib.Parameter(t.ones(1)) * 2),
        lambda: lin().add_module("x", 3),
        lambda: lin().add_module("a.b", lib.Module()),
        lambda: lin().train("x"),
        lambda: lib.Module()(1),
        lambda: lib.Module(3),
        lambda: lib.Module(a=1),
        lambda: lib.Tanh(1),
        lambda: Early(),
        lambda: lib.Sequential(lib.Identity())[3],
        lambda: lib.ModuleList([lib.Identity()])[-2],
        lambda: lib.ModuleList(3),
        lambda: lib.Dropout(1.5),
        lambda: lib.Conv2d(3, 4, 3, groups=2),
        lambda: lib.Conv2d(4, 3, 3, groups=2),
        lambda: lib.Conv2d(2, 2, 3, padding="same", stride=2),
        lambda: lib.Linear(2, 2).to(t.int64),
        lambda: lin().load_state_dict([1]),
    ]


def test_errors_match_torch() -> None:
    for ours, ref in zip(_make_errors(nn, strata), _make_errors(tnn, torch), strict=True):
        assert raised(ours) == raised(ref)
    # PyTorch prints the valid strings as a set, in hash order: compare the type and the start
    ours_e = raised(lambda: nn.Conv2d(2, 2, 3, padding="full"))
    ref_e = raised(lambda: tnn.Conv2d(2, 2, 3, padding="full"))
    assert ours_e[0] is ref_e[0] and ours_e[1].split("{")[0] == ref_e[1].split("{")[0]


# ----------------------------------------------------------------------------------------- state dict
def test_load_state_dict_errors_and_results() -> None:
    s, t = nn.Linear(2, 3), tnn.Linear(2, 3)
    bad = {"weight": np.zeros((3, 3), np.float32), "foo": np.zeros(1, np.float32)}
    assert raised(lambda: s.load_state_dict({k: strata.tensor(v) for k, v in bad.items()})) == \
        raised(lambda: t.load_state_dict({k: torch.tensor(v) for k, v in bad.items()}))
    bad = {"weight": np.zeros((3, 3), np.float32), "bias": np.zeros(3, np.float32)}
    assert raised(lambda: s.load_state_dict({k: strata.tensor(v) for k, v in bad.items()}, strict=False)) == \
        raised(lambda: t.load_state_dict({k: torch.tensor(v) for k, v in bad.items()}, strict=False))
    assert raised(lambda: s.load_state_dict({"weight": 3, "bias": strata.zeros(3)}))[0] is RuntimeError
    r = s.load_state_dict({"weight": strata.ones(3, 2)}, strict=False)
    rt = t.load_state_dict({"weight": torch.ones(3, 2)}, strict=False)
    assert repr(r) == repr(rt) and r.missing_keys == ["bias"] and r.unexpected_keys == []
    assert s.weight.tolist() == [[1.0, 1.0]] * 3
    r = s.load_state_dict({"weight": strata.zeros(3, 2), "bias": strata.ones(3)})
    assert repr(r) == repr(t.load_state_dict({"weight": torch.zeros(3, 2), "bias": torch.ones(3)}))
    assert s.bias.tolist() == [1.0, 1.0, 1.0] and s.bias.requires_grad and s.bias.is_leaf


@pytest.mark.parametrize("device", DEVICES)
def test_load_state_dict_converts_and_keeps_objects(device: str) -> None:
    s = nn.Linear(2, 2).to(device)
    w = s.weight
    s.load_state_dict({"weight": strata.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=strata.float64),
                       "bias": strata.tensor([5.0, 6.0])})  # cpu, other dtype: copied in, converted
    assert s.weight is w and w.device.type == device and w.dtype is strata.float32
    assert w.tolist() == [[1.0, 2.0], [3.0, 4.0]] and s.bias.tolist() == [5.0, 6.0]
    s.load_state_dict({"weight": strata.zeros(2, 2), "bias": strata.zeros(2)}, assign=True)
    assert s.weight is not w and isinstance(s.weight, nn.Parameter) and s.weight.requires_grad


def test_state_dict_round_trip_between_models() -> None:
    a, b = StrataNet(), StrataNet()
    b.load_state_dict(a.state_dict())
    for (na, pa), (nb, pb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert na == nb and pa.tolist() == pb.tolist()
    assert b.head.weight is b.emb.weight  # still tied after loading


# ----------------------------------------------------------------------------------------- tying
@pytest.mark.parametrize("device", DEVICES)
def test_weight_tying_grads_accumulate(device: str) -> None:
    s, t = StrataNet(), TorchNet()
    load_from_torch(s, t, device)
    assert s.head.weight is s.emb.weight
    idx = np.array([[0, 3, 1], [4, 4, 2]])
    out_s = s(strata.tensor(idx, device=device))
    out_t = t(torch.tensor(idx))
    O.assert_same(out_s, out_t, atol=1e-5)
    out_s.sum().backward()
    out_t.sum().backward()
    O.assert_same(s.emb.weight.grad, t.emb.weight.grad, atol=1e-5)  # both uses summed into one .grad
    O.assert_same(s.scale.grad, t.scale.grad, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------------------- modes
def test_train_eval_and_apply() -> None:
    s = StrataNet()
    assert all(m.training for m in s.modules())
    assert s.eval() is s and not any(m.training for m in s.modules())
    s.train()
    assert all(m.training for m in s.modules())
    s.body.train(False)
    assert s.training and not s.body[0].training
    seen: list[str] = []
    s.apply(lambda m: seen.append(type(m).__name__))
    t_seen: list[str] = []
    TorchNet().apply(lambda m: t_seen.append(type(m).__name__))
    assert seen == [n.replace("Torch", "Strata") for n in t_seen]


def test_requires_grad_and_zero_grad() -> None:
    s = nn.Linear(3, 2)
    s(strata.ones(1, 3)).sum().backward()
    assert s.weight.grad is not None
    s.zero_grad(set_to_none=False)
    assert s.weight.grad.tolist() == [[0.0] * 3] * 2 and s.bias.grad.tolist() == [0.0, 0.0]
    s.zero_grad()
    assert s.weight.grad is None and s.bias.grad is None
    assert s.requires_grad_(False) is s and not s.weight.requires_grad
    assert not s(strata.ones(1, 3)).requires_grad


# ----------------------------------------------------------------------------------------- to / cuda / half
def test_to_moves_in_place_and_keeps_tying() -> None:
    s = StrataNet()
    params = list(s.parameters())
    s(strata.tensor([[1, 2]])).sum().backward()
    assert s.cuda() is s
    assert [id(p) for p in s.parameters()] == [id(p) for p in params]  # an optimizer's references stay valid
    assert all(p.device.type == "cuda" and p.requires_grad and p.is_leaf for p in s.parameters())
    assert all(p.grad is not None and p.grad.device.type == "cuda" for p in s.parameters())
    assert s.steps.device.type == "cuda" and s.cache.device.type == "cuda"
    assert s.head.weight is s.emb.weight
    s.to(strata.float64)
    assert all(p.dtype is strata.float64 for p in s.parameters())
    assert s.steps.dtype is strata.int64  # integer buffers keep their dtype
    s.half()
    assert s.body[0].weight.dtype is strata.float16 and s.cache.dtype is strata.float16
    s.bfloat16().float()
    assert s.body[0].weight.dtype is strata.float32
    s.to("cpu", strata.float64)
    assert s.scale.device.type == "cpu" and s.scale.dtype is strata.float64 and any(s.scale is p for p in params)
    s.double().cpu()
    s.to(strata.zeros(1, dtype=strata.float32, device="cuda"))
    assert s.emb.weight.device.type == "cuda" and s.emb.weight.dtype is strata.float32
    s.to(device="cpu")
    assert s.emb.weight.device.type == "cpu"


# ----------------------------------------------------------------------------------------- hooks
def test_forward_hooks() -> None:
    s = nn.Identity()
    calls: list[str] = []
    h1 = s.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    h2 = s.register_forward_hook(lambda m, args, out: out + 1)
    s.register_forward_hook(lambda m, args, out: calls.append("first"), prepend=True)
    assert s(strata.tensor([1.0])).tolist() == [3.0] and calls == ["first"]
    h1.remove()
    assert s(strata.tensor([1.0])).tolist() == [2.0]
    h2.remove()
    assert s(strata.tensor([1.0])).tolist() == [1.0]
    s.register_forward_pre_hook(lambda m, args, kwargs: ((args[0] - 1,), kwargs), with_kwargs=True)
    assert s(strata.tensor([1.0])).tolist() == [0.0]


# ----------------------------------------------------------------------------------------- containers
def test_sequential_operations_match_torch() -> None:
    def build(lib: Any) -> Any:
        seq = lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Linear(3, 3))
        seq.append(lib.Tanh())
        seq.insert(1, lib.Identity())
        seq.insert(-1, lib.SiLU())
        del seq[2]
        seq[0] = lib.Linear(2, 3, bias=False)
        seq.extend([lib.Identity()])
        seq.pop(-1)
        return seq

    s, t = build(nn), build(tnn)
    assert [n for n, _ in s.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [type(m).__name__ for m in s] == [type(m).__name__ for m in t]
    assert len(s) == len(t) and type(s[1:3]) is nn.Sequential and len(s[1:3]) == 2
    assert [type(m).__name__ for m in s[::2]] == [type(m).__name__ for m in t[::2]]
    assert type(s[-1]).__name__ == type(t[-1]).__name__
    named = nn.Sequential(OrderedDict([("fc", nn.Identity()), ("act", nn.ReLU())]))
    assert [n for n, _ in named.named_children()] == ["fc", "act"]
    assert [n for n, _ in (s + named).named_children()] == [str(i) for i in range(len(s) + 2)]


def test_modulelist_and_moduledict_match_torch() -> None:
    def build(lib: Any) -> tuple[Any, Any]:
        ml = lib.ModuleList([lib.Linear(2, 2) for _ in range(3)])
        ml.append(lib.ReLU())
        ml.insert(1, lib.Tanh())
        ml += [lib.Identity()]
        del ml[0]
        ml.extend([lib.SiLU()])
        ml.pop(2)
        md = lib.ModuleDict({"b": lib.Linear(1, 1), "a": lib.ReLU()})
        md["c"] = lib.Tanh()
        md.update([("d", lib.Identity())])
        del md["a"]
        return ml, md

    (sl, sd), (tl, td) = build(nn), build(tnn)
    assert [n for n, _ in sl.named_modules()] == [n for n, _ in tl.named_modules()]
    assert [type(m).__name__ for m in sl] == [type(m).__name__ for m in tl]
    assert [type(m).__name__ for m in sl[1:]] == [type(m).__name__ for m in tl[1:]]
    assert type(sl[-1]).__name__ == type(tl[-1]).__name__ and len(sl) == len(tl)
    assert list(sd) == list(td) and list(sd.keys()) == list(td.keys()) and "c" in sd and "a" not in sd
    assert [type(m).__name__ for m in sd.values()] == [type(m).__name__ for m in td.values()]
    assert [n for n, _ in sd.named_parameters()] == [n for n, _ in td.named_parameters()]
    assert type(sd.pop("c")).__name__ == "Tanh" and len(sd) == 2
    sd.clear()
    assert len(sd) == 0
    assert repr(sl) == repr(tl) and repr(sd) == repr(nn.ModuleDict())
    assert raised(lambda: sl()) == raised(lambda: tl())


def test_parameterlist_and_parameterdict_match_torch() -> None:
    def build(lib: Any, t: Any) -> tuple[Any, Any]:
        pl = lib.ParameterList([lib.Parameter(t.ones(2, 3)), t.zeros(3)])
        pl.append(lib.Parameter(t.zeros(2, dtype=t.float64), requires_grad=False))
        pl += [t.ones(())]
        pd = lib.ParameterDict({"a": lib.Parameter(t.ones(2)), "b": t.zeros(1)})
        pd["c"] = t.ones(2, 2)
        pd.update([("d", t.zeros(4))])
        del pd["a"]
        return pl, pd

    (sl, sd), (tl, td) = build(nn, strata), build(tnn, torch)
    for s, t in ((sl, tl), (sd, td)):
        assert repr(s) == repr(t)
        assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()]
        assert list(s.state_dict()) == list(t.state_dict())
        assert [p.requires_grad for p in s.parameters()] == [p.requires_grad for p in t.parameters()]
    assert isinstance(sl[1], nn.Parameter) and len(sl) == len(tl) and len(sl[1:]) == 3
    assert list(sd) == list(td) and "c" in sd and sd.get("zz") is None and len(sd) == 3
    assert raised(lambda: sl()) == raised(lambda: tl())
    gpu = nn.ParameterList([strata.ones(2, device="cuda")])
    assert repr(gpu) == "ParameterList(  (0): Parameter containing: [torch.float32 of size 2 (GPU 0)])"  # as torch


# ----------------------------------------------------------------------------------------- printing
def _zoo(lib: Any) -> list[Any]:
    return [
        lib.Linear(4, 3), lib.Linear(3, 4, bias=False), lib.Embedding(10, 3), lib.Embedding(10, 3, padding_idx=-1),
        lib.LayerNorm(4), lib.LayerNorm((2, 3), elementwise_affine=False), lib.LayerNorm(4, bias=False),
        lib.RMSNorm(4), lib.RMSNorm([4], eps=1e-6), lib.Dropout(), lib.Dropout(0.1, inplace=True),
        lib.Conv2d(3, 8, 3), lib.Conv2d(3, 8, (3, 2), stride=2, padding=1, dilation=2, bias=False),
        lib.Conv2d(4, 8, 3, padding="same", groups=2), lib.Conv2d(2, 2, 3, padding="valid"),
        lib.MaxPool2d(2), lib.MaxPool2d((2, 3), stride=1, padding=1), lib.AvgPool2d(2),
        lib.AvgPool2d(3, stride=2, padding=1), lib.BatchNorm2d(8), lib.BatchNorm1d(4, affine=False, momentum=None),
        lib.BatchNorm2d(3, bias=False), lib.ReLU(), lib.ReLU(inplace=True), lib.GELU(), lib.GELU(approximate="tanh"),
        lib.SiLU(), lib.Tanh(), lib.Sigmoid(), lib.Softmax(dim=1), lib.Softmax(), lib.LogSoftmax(dim=-1),
        lib.Identity(), lib.Flatten(), lib.Flatten(0, 2), lib.CrossEntropyLoss(), lib.MSELoss(), lib.NLLLoss(),
        lib.Sequential(lib.Linear(4, 3), lib.ReLU(), lib.Sequential(lib.Linear(3, 3), lib.GELU())),
        lib.ModuleList([lib.Linear(2, 2), lib.Linear(2, 2), lib.ReLU(), lib.Linear(2, 2)]),
        lib.ModuleDict({"a": lib.Tanh(), "b": lib.ModuleList([lib.ReLU()] * 3)}), lib.ModuleList(),
    ]


def test_repr_matches_torch() -> None:
    for s, t in zip(_zoo(nn), _zoo(tnn), strict=True):
        assert repr(s) == repr(t)
        assert [n for n, _ in s.named_parameters()] == [n for n, _ in t.named_parameters()], repr(t)
        assert list(s.state_dict()) == list(t.state_dict()), repr(t)
        assert [tuple(v.shape) for v in s.state_dict().values()] == [tuple(v.shape) for v in t.state_dict().values()]
    assert repr(StrataNet()) == repr(TorchNet()).replace("TorchNet", "StrataNet")


def test_deepcopy_module() -> None:
    s = StrataNet()
    c = copy.deepcopy(s)
    assert c is not s and c.head.weight is c.emb.weight and c.emb.weight is not s.emb.weight
    assert all(isinstance(p, nn.Parameter) for p in c.parameters())
    for (_, a), (_, b) in zip(s.state_dict().items(), c.state_dict().items(), strict=True):
        assert a.tolist() == b.tolist()


# ----------------------------------------------------------------------------------------- layers
@pytest.mark.parametrize("device", DEVICES)
def test_linear(device: str) -> None:
    check_layer(tnn.Linear(5, 3), nn.Linear(5, 3), randn(4, 5), device)
    check_layer(tnn.Linear(5, 3, bias=False), nn.Linear(5, 3, bias=False), randn(2, 4, 5), device)


@pytest.mark.parametrize("device", DEVICES)
def test_embedding(device: str) -> None:
    idx = np.array([[0, 2, 9], [9, 1, 2]])
    check_layer(tnn.Embedding(10, 4), nn.Embedding(10, 4), idx, device)
    check_layer(tnn.Embedding(10, 4, padding_idx=9), nn.Embedding(10, 4, padding_idx=9), idx, device)
    e = nn.Embedding(6, 3, padding_idx=-2)
    assert e.padding_idx == 4 and e.weight[4].tolist() == [0.0, 0.0, 0.0]
    w = strata.tensor(randn(3, 2))
    fp = nn.Embedding.from_pretrained(w)
    assert not fp.weight.requires_grad and fp(strata.tensor([2])).tolist() == [w[2].tolist()]


@pytest.mark.parametrize("device", DEVICES)
def test_norms(device: str) -> None:
    x = randn(3, 2, 4)
    for tm, sm in [(tnn.LayerNorm(4), nn.LayerNorm(4)),
                   (tnn.LayerNorm((2, 4), eps=1e-3), nn.LayerNorm((2, 4), eps=1e-3)),
                   (tnn.LayerNorm(4, elementwise_affine=False), nn.LayerNorm(4, elementwise_affine=False)),
                   (tnn.LayerNorm(4, bias=False), nn.LayerNorm(4, bias=False)),
                   (tnn.RMSNorm(4), nn.RMSNorm(4)), (tnn.RMSNorm((2, 4), eps=1e-5), nn.RMSNorm((2, 4), eps=1e-5))]:
        with torch.no_grad():
            for p in tm.parameters():
                p.add_(torch.tensor(randn(*p.shape, seed=3)))
        check_layer(tm, sm, x, device, rtol=1e-4, atol=1e-5)


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # torch's own performance note
@pytest.mark.parametrize("device", DEVICES)
def test_conv2d(device: str) -> None:
    x = randn(2, 4, 5, 5)
    check_layer(tnn.Conv2d(4, 3, 3), nn.Conv2d(4, 3, 3), x, device, rtol=1e-4)
    check_layer(tnn.Conv2d(4, 4, (3, 2), stride=2, padding=1, groups=2, bias=False),
                nn.Conv2d(4, 4, (3, 2), stride=2, padding=1, groups=2, bias=False), x, device, rtol=1e-4)
    check_layer(tnn.Conv2d(4, 2, 2, padding="same"), nn.Conv2d(4, 2, 2, padding="same"), x, device, rtol=1e-4)
    check_layer(tnn.Conv2d(4, 2, 3, padding="same", dilation=2), nn.Conv2d(4, 2, 3, padding="same", dilation=2), x,
                device, rtol=1e-4)


@pytest.mark.parametrize("device", DEVICES)
def test_pooling(device: str) -> None:
    x = randn(2, 3, 6, 6)
    check_layer(tnn.MaxPool2d(2), nn.MaxPool2d(2), x, device)
    check_layer(tnn.MaxPool2d(3, stride=2, padding=1), nn.MaxPool2d(3, stride=2, padding=1), x, device)
    check_layer(tnn.AvgPool2d(2), nn.AvgPool2d(2), x, device)
    check_layer(tnn.AvgPool2d(3, stride=1, padding=1), nn.AvgPool2d(3, stride=1, padding=1), x, device)


@pytest.mark.parametrize("device", DEVICES)
def test_batchnorm2d_train_and_eval(device: str) -> None:
    tm, sm = tnn.BatchNorm2d(3), nn.BatchNorm2d(3)
    load_from_torch(sm, tm, device)
    for step in range(2):
        x = randn(4, 3, 2, 2, seed=step) * (step + 1) + step
        check_layer(tm, sm, x, device, rtol=1e-4, atol=1e-5)  # reloads torch's state: running stats included
        ys = sm(strata.tensor(x, device=device))
        yt = tm(torch.tensor(x))
        O.assert_same(ys, yt, rtol=1e-4, atol=1e-5)
        for name in ("running_mean", "running_var", "num_batches_tracked"):
            O.assert_same(getattr(sm, name), getattr(tm, name), rtol=1e-4, atol=1e-6)
    tm.eval()
    sm.eval()
    x = randn(2, 3, 2, 2, seed=9)
    check_layer(tm, sm, x, device, rtol=1e-4, atol=1e-5)
    assert int(sm.num_batches_tracked.item()) == int(tm.num_batches_tracked)
    assert raised(lambda: sm(strata.zeros(2, 3, device=device))) == raised(lambda: tm(torch.zeros(2, 3)))
    tm1, sm1 = tnn.BatchNorm1d(3, momentum=None), nn.BatchNorm1d(3, momentum=None)
    load_from_torch(sm1, tm1, device)
    for step in range(2):
        x = randn(5, 3, seed=step) + step
        sm1(strata.tensor(x, device=device))
        tm1(torch.tensor(x))
    O.assert_same(sm1.running_mean, tm1.running_mean, rtol=1e-4, atol=1e-6)
    O.assert_same(sm1.running_var, tm1.running_var, rtol=1e-4, atol=1e-6)
    sm2 = nn.BatchNorm2d(3)
    sd = {k: v for k, v in nn.BatchNorm2d(3).state_dict().items() if k != "num_batches_tracked"}
    assert repr(sm2.load_state_dict(sd)) == "<All keys matched successfully>"  # older checkpoints load


@pytest.mark.parametrize("device", DEVICES)
def test_activations_and_shape_layers(device: str) -> None:
    x = randn(2, 3, 4)
    pairs = [(tnn.ReLU(), nn.ReLU()), (tnn.GELU(), nn.GELU()), (tnn.GELU("tanh"), nn.GELU("tanh")),
             (tnn.SiLU(), nn.SiLU()), (tnn.Tanh(), nn.Tanh()), (tnn.Sigmoid(), nn.Sigmoid()),
             (tnn.Softmax(dim=1), nn.Softmax(dim=1)), (tnn.LogSoftmax(dim=-1), nn.LogSoftmax(dim=-1)),
             (tnn.Identity(), nn.Identity()), (tnn.Flatten(), nn.Flatten()), (tnn.Flatten(0, 1), nn.Flatten(0, 1))]
    for tm, sm in pairs:
        check_layer(tm, sm, x, device, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_train_and_eval(device: str) -> None:
    strata.manual_seed(0)
    d = nn.Dropout(0.5)
    x = strata.ones(400, device=device, requires_grad=True)
    y = d(x)
    vals = np.asarray(y.tolist())
    assert set(np.unique(vals)) <= {0.0, 2.0} and 0.3 < (vals == 0).mean() < 0.7
    y.sum().backward()
    assert np.array_equal(np.asarray(x.grad.tolist()), vals)  # the same mask scales the gradient
    d.eval()
    assert d(x).tolist() == x.tolist()
    assert nn.Dropout(0.0)(x).tolist() == x.tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_losses(device: str) -> None:
    logits = randn(6, 4)
    tgt = np.array([0, 3, 1, -100, 2, 3])
    w = np.array([1.0, 2.0, 0.5, 1.5], np.float32)

    def run(tm: Any, sm: Any, inp: np.ndarray, target: np.ndarray) -> None:
        load_from_torch(sm, tm, device)
        xt = torch.tensor(inp, requires_grad=True)
        xs = strata.tensor(inp, device=device, requires_grad=True)
        lt = tm(xt, torch.tensor(target))
        ls = sm(xs, strata.tensor(target, device=device))
        O.assert_same(ls, lt, rtol=1e-4, atol=1e-5)
        lt.sum().backward()
        ls.sum().backward()
        O.assert_same(xs.grad, xt.grad, rtol=1e-4, atol=1e-5)

    run(tnn.CrossEntropyLoss(), nn.CrossEntropyLoss(), logits, tgt)
    run(tnn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1, reduction="sum"),
        nn.CrossEntropyLoss(weight=strata.tensor(w), label_smoothing=0.1, reduction="sum"), logits, tgt)
    run(tnn.CrossEntropyLoss(ignore_index=3, reduction="none"), nn.CrossEntropyLoss(ignore_index=3, reduction="none"),
        logits, np.array([0, 3, 1, 1, 2, 3]))
    run(tnn.NLLLoss(weight=torch.tensor(w)), nn.NLLLoss(weight=strata.tensor(w)),
        np.log(np.full((6, 4), 0.25, np.float32)) + logits * 0.1, tgt)
    run(tnn.MSELoss(), nn.MSELoss(), logits, randn(6, 4, seed=5))
    run(tnn.MSELoss(reduction="none"), nn.MSELoss(reduction="none"), logits, randn(6, 4, seed=5))
    ce = nn.CrossEntropyLoss(weight=strata.tensor(w))
    assert list(ce.state_dict()) == list(tnn.CrossEntropyLoss(weight=torch.tensor(w)).state_dict()) == ["weight"]


@pytest.mark.parametrize("device", DEVICES)
def test_small_model_matches_torch(device: str) -> None:
    """A small CNN classifier end to end: same loss and parameter gradients as torch."""
    def build(lib: Any) -> Any:
        return lib.Sequential(lib.Conv2d(1, 2, 3, padding=1), lib.BatchNorm2d(2), lib.ReLU(), lib.MaxPool2d(2),
                              lib.Flatten(), lib.Linear(8, 3))

    t, s = build(tnn), build(nn)
    load_from_torch(s, t, device)
    x, y = randn(2, 1, 4, 4), np.array([0, 2])
    lt = tnn.CrossEntropyLoss()(t(torch.tensor(x)), torch.tensor(y))
    ls = nn.CrossEntropyLoss()(s(strata.tensor(x, device=device)), strata.tensor(y, device=device))
    O.assert_same(ls, lt, rtol=1e-4, atol=1e-5)
    lt.backward()
    ls.backward()
    tp = dict(t.named_parameters())
    for name, p in s.named_parameters():
        O.assert_same(p.grad, tp[name].grad, rtol=1e-3, atol=1e-5)


# ----------------------------------------------------------------------------------------- utils
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
def test_clip_grad_norm(device: str, norm_type: float) -> None:
    grads = [randn(3, 2, seed=1) * 3, randn(4, seed=2)]
    sp = [strata.zeros(g.shape, device=device, requires_grad=True) for g in grads]
    tp = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for p, q, g in zip(sp, tp, grads, strict=True):
        p.grad, q.grad = strata.tensor(g, device=device), torch.tensor(g)
    ns = nn.utils.clip_grad_norm_(sp, 1.5, norm_type=norm_type)
    nt = torch.nn.utils.clip_grad_norm_(tp, 1.5, norm_type=norm_type)
    O.assert_same(ns, nt, rtol=1e-5, device=device)
    for p, q in zip(sp, tp, strict=True):
        O.assert_same(p.grad, q.grad, rtol=1e-5)
    # under the limit nothing changes; a single tensor is accepted
    before = sp[1].grad.tolist()
    nn.utils.clip_grad_norm_(sp[1], 1e6)
    assert np.allclose(sp[1].grad.tolist(), before)
    assert nn.utils.clip_grad_norm_([strata.zeros(2, requires_grad=True)], 1.0).item() == 0.0


def test_clip_grad_errors_and_value() -> None:
    p = strata.zeros(2, requires_grad=True)
    p.grad = strata.tensor([float("inf"), 1.0])
    q = torch.zeros(2, requires_grad=True)
    q.grad = torch.tensor([float("inf"), 1.0])
    assert raised(lambda: nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)) == \
        raised(lambda: torch.nn.utils.clip_grad_norm_([q], 1.0, error_if_nonfinite=True))
    g = randn(5) * 2
    for device in DEVICES:
        p = strata.zeros(5, device=device, requires_grad=True)
        p.grad = strata.tensor(g, device=device)
        q = torch.zeros(5, requires_grad=True)
        q.grad = torch.tensor(g)
        assert nn.utils.clip_grad_value_([p], 0.7) is None
        torch.nn.utils.clip_grad_value_([q], 0.7)
        O.assert_same(p.grad, q.grad)


def test_parameters_to_vector_and_back() -> None:
    s, t = nn.Linear(3, 2), tnn.Linear(3, 2)
    load_from_torch(s, t)
    v = nn.utils.parameters_to_vector(s.parameters())
    O.assert_same(v, torch.nn.utils.parameters_to_vector(t.parameters()))
    nn.utils.vector_to_parameters(v * 2, s.parameters())
    assert np.allclose(s.weight.tolist(), (t.weight.detach() * 2).tolist())
    assert raised(lambda: nn.utils.vector_to_parameters([1.0], s.parameters()))[0] is TypeError
