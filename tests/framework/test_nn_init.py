"""strata.nn.init against torch.nn.init: gains, fan computation, errors and warnings exactly; random
initialisers by their distributions (strata's random streams are not PyTorch's), with the bounds and
scales PyTorch's formulas give, on "cpu" and "cuda"; the default initialisation of layers."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn as tnn

import strata
import strata.nn as nn

DEVICES = ["cpu", "cuda"]
GAINS = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
         "sigmoid", "tanh", "relu", "leaky_relu", "selu"]


def raised(fn: Callable[[], Any]) -> tuple[type, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is comparing what was raised
        return type(e), str(e)
    raise AssertionError("nothing raised")


def values(t: strata.Tensor) -> np.ndarray:
    return np.asarray(t.detach().cpu().float().tolist(), np.float64)


def test_calculate_gain_matches_torch() -> None:
    for name in GAINS:
        assert nn.init.calculate_gain(name) == tnn.init.calculate_gain(name)
    for slope in (0.2, 0, 1):
        assert nn.init.calculate_gain("leaky_relu", slope) == tnn.init.calculate_gain("leaky_relu", slope)
    assert raised(lambda: nn.init.calculate_gain("foo")) == raised(lambda: tnn.init.calculate_gain("foo"))
    assert raised(lambda: nn.init.calculate_gain("leaky_relu", "x")) == \
        raised(lambda: tnn.init.calculate_gain("leaky_relu", "x"))


def test_fans_and_errors_match_torch() -> None:
    for shape in [(2, 3), (4, 3, 5, 5), (3, 1, 2), (7, 0)]:
        assert nn.init._calculate_fan_in_and_fan_out(strata.empty(shape)) == \
            tnn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    for fn in ("kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_"):
        assert raised(lambda fn=fn: getattr(nn.init, fn)(strata.zeros(3))) == \
            raised(lambda fn=fn: getattr(tnn.init, fn)(torch.zeros(3)))
    assert raised(lambda: nn.init.kaiming_uniform_(strata.zeros(3, 3), mode="x")) == \
        raised(lambda: tnn.init.kaiming_uniform_(torch.zeros(3, 3), mode="x"))
    for lib, t in ((nn, strata), (tnn, torch)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.init.kaiming_uniform_(t.zeros(0, 3))
            lib.init.kaiming_normal_(t.zeros(0, 3))
        assert [str(x.message) for x in w] == ["Initializing zero-element tensors is a no-op"] * 2


@pytest.mark.parametrize("device", DEVICES)
def test_constant_fills(device: str) -> None:
    for fn, args in [("constant_", (0.25,)), ("zeros_", ()), ("ones_", ())]:
        s = strata.empty(2, 3, device=device)
        t = torch.empty(2, 3)
        assert getattr(nn.init, fn)(s, *args) is s
        getattr(tnn.init, fn)(t, *args)
        assert s.tolist() == t.tolist()
    s = strata.zeros(2, dtype=strata.int64, device=device)
    nn.init.constant_(s, 2.7)
    assert s.tolist() == tnn.init.constant_(torch.zeros(2, dtype=torch.int64), 2.7).tolist()


def _expected(kind: str, shape: tuple[int, ...], **kw: Any) -> float:
    """The bound (uniform) or std (normal) that PyTorch's formula gives, computed with torch's helpers."""
    fan_in, fan_out = tnn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    if kind.startswith("xavier"):
        std = kw.get("gain", 1.0) * math.sqrt(2.0 / (fan_in + fan_out))
    else:
        fan = fan_in if kw.get("mode", "fan_in") == "fan_in" else fan_out
        std = tnn.init.calculate_gain(kw.get("nonlinearity", "leaky_relu"), kw.get("a", 0)) / math.sqrt(fan)
    return std * math.sqrt(3.0) if kind.endswith("uniform_") else std


CASES = [
    ("kaiming_uniform_", (64, 16, 2), {"a": math.sqrt(5)}),
    ("kaiming_uniform_", (48, 40), {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", (64, 48), {"nonlinearity": "relu"}),
    ("xavier_uniform_", (40, 50), {"gain": 2.0}),
    ("xavier_normal_", (30, 8, 2, 3), {}),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kind,shape,kw", CASES)
def test_random_initialisers_follow_torch_scales(device: str, kind: str, shape: tuple[int, ...],
                                                 kw: dict[str, Any]) -> None:
    strata.manual_seed(0)
    p = nn.Parameter(strata.empty(shape, device=device))
    out = getattr(nn.init, kind)(p, **kw)
    assert out is p and p.is_leaf and p.requires_grad and p.grad_fn is None and p.device.type == device
    v = values(p)
    scale = _expected(kind, shape, **kw)
    std = scale / math.sqrt(3.0) if kind.endswith("uniform_") else scale
    assert abs(v.mean()) < 0.1 * std
    assert abs(v.std() / std - 1) < 0.08
    if kind.endswith("uniform_"):
        assert np.abs(v).max() <= scale * (1 + 1e-6) and np.abs(v).max() > 0.95 * scale
    ref = getattr(tnn.init, kind)(torch.empty(shape), **kw).double().numpy()  # the oracle's own sample
    assert abs(v.std() / ref.std() - 1) < 0.1


@pytest.mark.parametrize("device", DEVICES)
def test_uniform_normal_trunc_normal(device: str) -> None:
    strata.manual_seed(1)
    u = values(nn.init.uniform_(strata.empty(2000, device=device), -2.0, 3.0))
    assert u.min() >= -2.0 and u.max() <= 3.0 and abs(u.mean() - 0.5) < 0.15
    n = values(nn.init.normal_(strata.empty(2000, device=device), 1.0, 0.5))
    assert abs(n.mean() - 1.0) < 0.05 and abs(n.std() - 0.5) < 0.04
    t = values(nn.init.trunc_normal_(strata.empty(4000, device=device), mean=0.5, std=1.0, a=-1.0, b=1.5))
    ref = tnn.init.trunc_normal_(torch.empty(200000), mean=0.5, std=1.0, a=-1.0, b=1.5).double().numpy()
    assert t.min() >= -1.0 and t.max() <= 1.5
    assert abs(t.mean() - ref.mean()) < 0.04 and abs(t.std() - ref.std()) < 0.04
    h = nn.init.normal_(strata.empty(500, dtype=strata.float16, device=device), std=0.02)
    assert h.dtype is strata.float16 and abs(values(h).std() - 0.02) < 0.004


def test_same_seed_same_init() -> None:
    strata.manual_seed(7)
    a = nn.Linear(6, 4)
    strata.manual_seed(7)
    b = nn.Linear(6, 4)
    assert a.weight.tolist() == b.weight.tolist() and a.bias.tolist() == b.bias.tolist()
    c = nn.Linear(6, 4)
    assert a.weight.tolist() != c.weight.tolist()


@pytest.mark.parametrize("device", DEVICES)
def test_layer_default_init(device: str) -> None:
    strata.manual_seed(2)
    lin = nn.Linear(50, 40, device=device)
    bound = 1 / math.sqrt(50)
    w, b = values(lin.weight), values(lin.bias)
    assert lin.weight.device.type == device
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.95 * bound and abs(w.std() * math.sqrt(3) / bound - 1) < .1
    assert np.abs(b).max() <= bound
    conv = nn.Conv2d(4, 6, 3, device=device)
    cb = 1 / math.sqrt(4 * 9)
    assert np.abs(values(conv.weight)).max() <= cb and np.abs(values(conv.bias)).max() <= cb
    emb = nn.Embedding(40, 30, padding_idx=3, device=device)
    e = values(emb.weight)
    assert np.all(e[3] == 0) and abs(np.delete(e, 3, axis=0).std() - 1) < 0.08
    ln = nn.LayerNorm(5, device=device, dtype=strata.float64)
    assert ln.weight.dtype is strata.float64 and values(ln.weight).tolist() == [1.0] * 5
    assert values(ln.bias).tolist() == [0.0] * 5
    bn = nn.BatchNorm2d(3, device=device)
    assert values(bn.running_var).tolist() == [1.0] * 3 and bn.num_batches_tracked.dtype is strata.int64
