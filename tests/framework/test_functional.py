"""strata.nn.functional against torch.nn.functional (PyTorch CPU as the oracle): forward values, dtypes,
shapes, gradients w.r.t. every differentiable input and errors, on "cpu" and on "cuda"."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strata
from strata.framework.nn import functional as F

from .conftest import DEVICES, assert_same, pair, to_torch_dtype

RNG = np.random.default_rng(0)


def randn(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def check(fn: Callable[..., Any], tfn: Callable[..., Any], arrays: list[np.ndarray], device: str, *,
          dtype: Any = None, grad: bool | list[bool] = True, rtol: float = 1e-5, atol: float = 1e-5,
          grtol: float | None = None) -> tuple[Any, Any]:
    """Run fn on strata tensors and tfn on torch tensors made from `arrays`; compare the outputs, then
    the gradients of sum(out * r) for a random r w.r.t. every array marked in `grad`."""
    grads = grad if isinstance(grad, list) else [grad] * len(arrays)
    pairs = [pair(a, dtype if a.dtype.kind == "f" else None, device, requires_grad=g and a.dtype.kind == "f")
             for a, g in zip(arrays, grads, strict=True)]
    ours = fn(*[p[0] for p in pairs])
    ref = tfn(*[p[1] for p in pairs])
    assert_same(ours, ref, rtol=rtol, atol=atol, device=device)
    if any(p[0].requires_grad for p in pairs):
        r = RNG.standard_normal(tuple(ref.shape))
        rs, rt = pair(r, ours.dtype, device)
        (ours * rs).sum().backward()
        (ref * rt).sum().backward()
        for (s, t) in pairs:
            if t.requires_grad:
                assert s.grad is not None
                assert_same(s.grad, t.grad, rtol=grtol or rtol * 10, atol=(grtol or atol * 10), device=device)
    return ours, ref


def errors_match(fn: Callable[[], Any], tfn: Callable[[], Any]) -> None:
    """Both raise the same exception type with the same message."""
    with pytest.raises(Exception) as ref:  # noqa: PT011 - whatever torch raises
        tfn()
    with pytest.raises(type(ref.value)) as ours:
        fn()
    assert str(ours.value) == str(ref.value)


# ----------------------------------------------------------------------------------------- linear, activations
@pytest.mark.parametrize("device", DEVICES)
def test_linear(device: str) -> None:
    check(F.linear, TF.linear, [randn(4, 3), randn(5, 3), randn(5)], device)
    check(lambda x, w: F.linear(x, w), lambda x, w: TF.linear(x, w), [randn(2, 2, 3), randn(5, 3)], device)
    x, _ = pair(randn(2, 3), device=device)
    w, _ = pair(randn(4, 5), device=device)
    errors_match(lambda: F.linear(x, w), lambda: TF.linear(torch.zeros(2, 3), torch.zeros(4, 5)))


@pytest.mark.parametrize("device", DEVICES)
def test_linear_autocast_bf16(device: str) -> None:
    x, _ = pair(randn(4, 3), device=device)
    w, _ = pair(randn(5, 3), device=device)
    with strata.autocast(device, dtype=strata.bfloat16):
        y = F.linear(x, w)
        p = F.softmax(y, -1)
    assert y.dtype is strata.bfloat16
    assert p.dtype is strata.float32
    assert F.linear(x, w).dtype is strata.float32


ACTS = [
    ("relu", F.relu, TF.relu), ("gelu", F.gelu, TF.gelu),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh")),
    ("silu", F.silu, TF.silu), ("tanh", F.tanh, torch.tanh), ("sigmoid", F.sigmoid, torch.sigmoid),
]
COMPOSED = [
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2)), ("elu", F.elu, TF.elu),
    ("softplus", lambda x: F.softplus(x, 2.0, 5.0), lambda x: TF.softplus(x, 2.0, 5.0)),
    ("logsigmoid", F.logsigmoid, TF.logsigmoid), ("hardtanh", F.hardtanh, TF.hardtanh), ("relu6", F.relu6, TF.relu6),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,tfn", ACTS, ids=[a[0] for a in ACTS])
def test_activations(device: str, name: str, fn: Any, tfn: Any) -> None:
    a = randn(3, 5) * 3
    a[0, 0] = 0.0
    check(fn, tfn, [a], device)
    check(fn, tfn, [a], device, dtype=strata.float64, rtol=1e-10, atol=1e-12)
    check(fn, tfn, [a.T], device, dtype=strata.bfloat16)  # a non-contiguous view
    ours, _ = check(fn, tfn, [a], device, dtype=strata.float16)
    assert ours.grad_fn is not None and ours.grad_fn.name() == tfn(torch.ones(1, requires_grad=True)).grad_fn.name()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn,tfn", COMPOSED, ids=[a[0] for a in COMPOSED])
def test_composed_activations(device: str, name: str, fn: Any, tfn: Any) -> None:
    a = randn(3, 5) * 4
    a[0, 0] = 60.0  # large: no overflow in the branch not taken
    check(fn, tfn, [a], device)


@pytest.mark.parametrize("device", DEVICES)
def test_activation_variants_and_errors(device: str) -> None:
    s, t = pair(np.array([-2, 0, 3]), device=device)
    assert_same(F.relu(s), TF.relu(t))
    s, t = pair(randn(4), device=device)
    s2, t2 = s.clone(), t.clone()
    F.relu_(s2)
    TF.relu_(t2)
    assert_same(s2, t2)
    F.relu(s, inplace=True)
    assert_same(s, t2)
    errors_match(lambda: F.gelu(s, approximate="foo"), lambda: TF.gelu(t, approximate="foo"))


# ----------------------------------------------------------------------------------------- softmax
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax(device: str, log: bool) -> None:
    fn, tfn = (F.log_softmax, TF.log_softmax) if log else (F.softmax, TF.softmax)
    a = randn(2, 3, 4) * 4
    for d in (-1, 0, 1):
        check(lambda x, d=d: fn(x, d), lambda x, d=d: tfn(x, d), [a], device)
    check(lambda x: fn(x, 1), lambda x: tfn(x, 1), [a], device, dtype=strata.float64, rtol=1e-10, atol=1e-12)
    check(lambda x: fn(x, -1), lambda x: tfn(x, -1), [a], device, dtype=strata.bfloat16)
    check(lambda x: fn(x, 0, dtype=strata.float64), lambda x: tfn(x, 0, dtype=torch.float64), [a], device)
    s, t = pair(np.arange(4), device=device)
    errors_match(lambda: fn(s, 0), lambda: tfn(t, 0))


# ----------------------------------------------------------------------------------------- dropout
@pytest.mark.parametrize("device", DEVICES)
def test_dropout_statistics_and_backward(device: str) -> None:
    x = strata.ones(4000, device=device, requires_grad=True)
    y = F.dropout(x, 0.3)
    v = y.detach().cpu().numpy()
    zero = v == 0
    assert abs(zero.mean() - 0.3) < 0.04
    np.testing.assert_allclose(v[~zero], 1 / 0.7, rtol=1e-6)
    (y * 2).sum().backward()
    g = x.grad.cpu().numpy()
    np.testing.assert_array_equal(g == 0, zero)  # the same mask in the backward
    np.testing.assert_allclose(g[~zero], 2 / 0.7, rtol=1e-6)
    assert y.grad_fn.name() == "NativeDropoutBackward0"
    assert F.dropout(x, 0.3, training=False) is x
    z = F.dropout(strata.ones(300, device=device), 1.0)
    assert z.cpu().numpy().sum() == 0
    h = F.dropout(strata.ones(2000, device=device, dtype=strata.float16), 0.5)
    assert h.dtype is strata.float16 and abs((h.cpu().float().numpy() == 0).mean() - 0.5) < 0.05
    d = F.dropout(strata.ones(2000, device=device, dtype=strata.float64), 0.5)
    assert d.dtype is strata.float64 and set(np.unique(d.cpu().numpy())) <= {0.0, 2.0}
    strata.manual_seed(7)
    m1 = F.dropout(strata.ones(500, device=device), 0.5).cpu().numpy()
    m2 = F.dropout(strata.ones(500, device=device), 0.5).cpu().numpy()
    strata.manual_seed(7)
    np.testing.assert_array_equal(F.dropout(strata.ones(500, device=device), 0.5).cpu().numpy(), m1)
    assert (m1 != m2).any()
    a = strata.ones(2000, device=device)
    F.dropout(a, 0.5, inplace=True)
    assert abs((a.cpu().numpy() == 0).mean() - 0.5) < 0.05
    errors_match(lambda: F.dropout(x, 1.5), lambda: TF.dropout(torch.ones(2), 1.5))


# ----------------------------------------------------------------------------------------- embedding, one_hot
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.float32, strata.float64, strata.bfloat16])
def test_embedding(device: str, dtype: Any) -> None:
    idx = np.array([[1, 4, 1], [0, 2, 4]])
    check(F.embedding, TF.embedding, [idx, randn(5, 3)], device, dtype=dtype)
    check(lambda i, w: F.embedding(i, w, padding_idx=1), lambda i, w: TF.embedding(i, w, padding_idx=1),
          [idx.astype(np.int32), randn(5, 3)], device, dtype=dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_embedding_errors_and_one_hot(device: str) -> None:
    w, tw = pair(randn(3, 2), device=device)
    s, t = pair(np.array([1.0]), device=device)
    errors_match(lambda: F.embedding(s, w), lambda: TF.embedding(t, tw))
    if device == "cpu":
        s, t = pair(np.array([5]), device=device)
        errors_match(lambda: F.embedding(s, w), lambda: TF.embedding(t, tw))
    s, t = pair(np.array([[0, 3], [2, 1]]), device=device)
    assert_same(F.one_hot(s), TF.one_hot(t))
    assert_same(F.one_hot(s, 6), TF.one_hot(t, 6))
    s, t = pair(np.array([1.0]), device=device)
    errors_match(lambda: F.one_hot(s), lambda: TF.one_hot(t))


# ----------------------------------------------------------------------------------------- norms
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.float32, strata.float64, strata.bfloat16])
def test_layer_norm(device: str, dtype: Any) -> None:
    # bfloat16: gradients within a few bf16 ulps of PyTorch's (which rounds some intermediates to bf16)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype is strata.float32 else {"rtol": 1e-8, "atol": 1e-10}
    if dtype is strata.bfloat16:
        tol["grtol"] = 6e-2
    check(lambda x, w, b: F.layer_norm(x, (4,), w, b), lambda x, w, b: TF.layer_norm(x, (4,), w, b),
          [randn(2, 3, 4) * 2 + 1, randn(4), randn(4)], device, dtype=dtype, **tol)
    check(lambda x: F.layer_norm(x, [3, 4], eps=1e-3), lambda x: TF.layer_norm(x, [3, 4], eps=1e-3),
          [randn(2, 3, 4)], device, dtype=dtype, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_rms_norm_and_errors(device: str) -> None:
    check(lambda x, w: F.rms_norm(x, (4,), w), lambda x, w: TF.rms_norm(x, (4,), w), [randn(3, 4), randn(4)],
          device, rtol=1e-4, atol=1e-4)
    check(lambda x: F.rms_norm(x, [2, 4], eps=1e-2), lambda x: TF.rms_norm(x, [2, 4], eps=1e-2), [randn(3, 2, 4)],
          device, dtype=strata.float64, rtol=1e-8, atol=1e-10)
    check(lambda x: F.rms_norm(x, [4]), lambda x: TF.rms_norm(x, [4]), [randn(3, 4)], device, dtype=strata.float16)
    s, t = pair(randn(2, 3), device=device)
    errors_match(lambda: F.layer_norm(s, (4,)), lambda: TF.layer_norm(t, (4,)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.float32, strata.float64])
def test_batch_norm_training_updates_running_stats(device: str, dtype: Any) -> None:
    x = randn(4, 3, 2, 2) * 2 + 1
    rm, trm = pair(randn(3), dtype, device)
    rv, trv = pair(np.abs(randn(3)) + 0.5, dtype, device)
    check(lambda x, w, b: F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2),
          lambda x, w, b: TF.batch_norm(x, trm, trv, w, b, training=True, momentum=0.2),
          [x, randn(3), randn(3)], device, dtype=dtype, rtol=1e-4, atol=1e-4)
    assert_same(rm, trm, rtol=1e-5, atol=1e-5)
    assert_same(rv, trv, rtol=1e-5, atol=1e-5)
    check(lambda x: F.batch_norm(x, rm, rv, training=False), lambda x: TF.batch_norm(x, trm, trv, training=False),
          [randn(2, 3)], device, dtype=dtype, rtol=1e-5, atol=1e-5)
    s, t = pair(randn(1, 3), device=device)
    errors_match(lambda: F.batch_norm(s, None, None, training=True),
                 lambda: TF.batch_norm(t, None, None, training=True))


# ----------------------------------------------------------------------------------------- conv, pool, pad
@pytest.mark.parametrize("device", DEVICES)
def test_conv2d(device: str) -> None:
    check(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), lambda x, w, b: TF.conv2d(x, w, b, 2, 1),
          [randn(2, 3, 6, 5), randn(4, 3, 3, 3), randn(4)], device, rtol=1e-4, atol=1e-4)
    check(lambda x, w: F.conv2d(x, w, groups=2, dilation=(2, 1), padding="same"),
          lambda x, w: TF.conv2d(x, w, groups=2, dilation=(2, 1), padding="same"),
          [randn(1, 4, 5, 5), randn(2, 2, 2, 3)], device, rtol=1e-4, atol=1e-4)
    check(lambda x, w: F.conv2d(x, w), lambda x, w: TF.conv2d(x, w), [randn(2, 4, 4), randn(3, 2, 2, 2)], device,
          dtype=strata.float64, rtol=1e-10, atol=1e-10)
    s, t = pair(randn(2, 5, 8, 8), device=device)
    w, tw = pair(randn(4, 3, 3, 3), device=device)
    errors_match(lambda: F.conv2d(s, w), lambda: TF.conv2d(t, tw))


@pytest.mark.parametrize("device", DEVICES)
def test_pooling(device: str) -> None:
    a = randn(2, 3, 6, 5)
    check(lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [a], device)
    check(lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [a], device, dtype=strata.bfloat16)
    check(lambda x: F.max_pool2d(x, 3, 2, 1), lambda x: TF.max_pool2d(x, 3, 2, 1), [a], device)
    check(lambda x: F.avg_pool2d(x, (3, 2), 1, (1, 1)), lambda x: TF.avg_pool2d(x, (3, 2), 1, (1, 1)), [a], device)
    check(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
          lambda x: TF.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [a], device)
    # the framework-op path (dilation, divisor_override), in float32 on both devices to keep kernel loads few
    check(lambda x: F.max_pool2d(x, 2, dilation=2), lambda x: TF.max_pool2d(x, 2, dilation=2), [a[0]], device)
    check(lambda x: F.avg_pool2d(x, 2, divisor_override=3), lambda x: TF.avg_pool2d(x, 2, divisor_override=3),
          [a], device)
    for kw in ({"stride": 2, "padding": 1}, {"stride": 2, "count_include_pad": False}):
        check(lambda x, kw=kw: F.avg_pool2d(x, 3, ceil_mode=True, **kw),
              lambda x, kw=kw: TF.avg_pool2d(x, 3, ceil_mode=True, **kw), [a], device)
    s, t = pair(a, device=device)
    out, idx = F.max_pool2d(s, 3, 2, 1, ceil_mode=True, return_indices=True)
    ref, ridx = TF.max_pool2d(t, 3, 2, 1, ceil_mode=True, return_indices=True)
    assert_same(out, ref)
    assert_same(idx, ridx)
    out, idx = F.max_pool2d(s[0], 2, dilation=2, return_indices=True)
    assert_same(idx, TF.max_pool2d(t[0], 2, dilation=2, return_indices=True)[1])


@pytest.mark.parametrize("device", DEVICES)
def test_pad(device: str) -> None:
    a = randn(2, 3, 4)
    check(lambda x: F.pad(x, (1, 2)), lambda x: TF.pad(x, (1, 2)), [a], device)
    check(lambda x: F.pad(x, (1, -1, 0, 2), value=-3.5), lambda x: TF.pad(x, (1, -1, 0, 2), value=-3.5), [a], device)
    for mode in ("reflect", "replicate", "circular"):
        check(lambda x, m=mode: F.pad(x, (2, 1, 0, 2), mode=m), lambda x, m=mode: TF.pad(x, (2, 1, 0, 2), mode=m),
              [a], device)
    s, t = pair(a, device=device)
    errors_match(lambda: F.pad(s, (1, 2, 3)), lambda: TF.pad(t, (1, 2, 3)))
    errors_match(lambda: F.pad(s, (4, 0), mode="reflect"), lambda: TF.pad(t, (4, 0), mode="reflect"))
    errors_match(lambda: F.pad(s[0, 0], (1, 1, 1, 1), mode="replicate"),
                 lambda: TF.pad(t[0, 0], (1, 1, 1, 1), mode="replicate"))
    errors_match(lambda: F.pad(s, (-3, -2)), lambda: TF.pad(t, (-3, -2)))


# ----------------------------------------------------------------------------------------- losses
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(device: str, reduction: str) -> None:
    target = np.array([1, -100, 3, 0, 3])
    for ls in (0.0, 0.2):
        check(lambda x, t, ls=ls: F.cross_entropy(x, t, reduction=reduction, label_smoothing=ls),
              lambda x, t, ls=ls: TF.cross_entropy(x, t, reduction=reduction, label_smoothing=ls),
              [randn(5, 4) * 2, target], device, rtol=1e-5, atol=1e-5)
        check(lambda x, t, w, ls=ls: F.cross_entropy(x, t, w, ignore_index=3, reduction=reduction,
                                                     label_smoothing=ls),
              lambda x, t, w, ls=ls: TF.cross_entropy(x, t, w, ignore_index=3, reduction=reduction,
                                                      label_smoothing=ls),
              [randn(5, 4), np.array([1, 2, 3, 0, 3]), np.abs(randn(4))], device, grad=[True, False, False])


@pytest.mark.parametrize("device", DEVICES)
def test_cross_entropy_shapes_dtypes_and_probs(device: str) -> None:
    check(lambda x, t: F.cross_entropy(x, t), lambda x, t: TF.cross_entropy(x, t),
          [randn(2, 4, 3, 2), RNG.integers(0, 4, (2, 3, 2))], device)
    check(lambda x, t: F.cross_entropy(x, t, reduction="none"), lambda x, t: TF.cross_entropy(x, t, reduction="none"),
          [randn(2, 4, 3), RNG.integers(0, 4, (2, 3))], device, dtype=strata.float64, rtol=1e-10, atol=1e-12)
    check(F.cross_entropy, TF.cross_entropy, [randn(3, 5), np.array([0, 4, 2])], device, dtype=strata.bfloat16)
    check(F.cross_entropy, TF.cross_entropy, [randn(5), np.array(2)], device)
    check(lambda x, t: F.cross_entropy(x, t, reduction="none"), lambda x, t: TF.cross_entropy(x, t, reduction="none"),
          [randn(5), np.array(2)], device)
    check(lambda x, t: F.nll_loss(x, t, reduction="none"), lambda x, t: TF.nll_loss(x, t, reduction="none"),
          [randn(5), np.array(2)], device)
    probs = np.exp(randn(3, 4))
    probs /= probs.sum(1, keepdims=True)
    check(lambda x, p: F.cross_entropy(x, p, label_smoothing=0.1),
          lambda x, p: TF.cross_entropy(x, p, label_smoothing=0.1), [randn(3, 4), probs], device)
    s, t = pair(randn(2, 3), device=device)
    ts, tt = pair(np.array([0, 1, 1]), device=device)
    errors_match(lambda: F.cross_entropy(s, ts), lambda: TF.cross_entropy(t, tt))
    for bad in (np.array([0, 1], np.int32), np.array([0.0, 1.0], np.float32)):
        bs, bt = pair(bad, device=device)
        errors_match(lambda bs=bs: F.cross_entropy(s, bs), lambda bt=bt: TF.cross_entropy(t, bt))
    check(F.nll_loss, TF.nll_loss, [randn(2, 3), np.array([2, 0], np.uint8)], device)
    if device == "cpu":
        ts, tt = pair(np.array([0, 5]), device=device)
        errors_match(lambda: F.cross_entropy(s, ts), lambda: TF.cross_entropy(t, tt))


@pytest.mark.parametrize("device", DEVICES)
def test_nll_and_regression_losses(device: str) -> None:
    check(lambda x, t: F.nll_loss(x, t, ignore_index=0), lambda x, t: TF.nll_loss(x, t, ignore_index=0),
          [randn(4, 3), np.array([0, 1, 2, 2])], device)
    check(lambda x, t, w: F.nll_loss(x, t, w, reduction="sum"), lambda x, t, w: TF.nll_loss(x, t, w, reduction="sum"),
          [randn(4, 3, 2), RNG.integers(0, 3, (4, 2)), np.abs(randn(3))], device, grad=[True, False, False])
    for red in ("mean", "sum", "none"):
        check(lambda x, t, r=red: F.mse_loss(x, t, reduction=r), lambda x, t, r=red: TF.mse_loss(x, t, reduction=r),
              [randn(3, 4), randn(3, 4)], device)
        check(lambda x, t, r=red: F.l1_loss(x, t, reduction=r), lambda x, t, r=red: TF.l1_loss(x, t, reduction=r),
              [randn(3, 4), randn(3, 4)], device)
    p = 1 / (1 + np.exp(-randn(3, 4)))
    check(F.binary_cross_entropy, TF.binary_cross_entropy, [p, (randn(3, 4) > 0).astype(np.float32)], device,
          grad=[True, False])
    check(lambda x, t, pw: F.binary_cross_entropy_with_logits(x, t, pos_weight=pw),
          lambda x, t, pw: TF.binary_cross_entropy_with_logits(x, t, pos_weight=pw),
          [randn(3, 4) * 3, (randn(3, 4) > 0).astype(np.float32), np.abs(randn(4))], device,
          grad=[True, False, False])
    s, t = pair(randn(2, 3), device=device)
    errors_match(lambda: F.mse_loss(s, s, reduction="avg"), lambda: TF.mse_loss(t, t, reduction="avg"))


@pytest.mark.parametrize("device", DEVICES)
def test_normalize(device: str) -> None:
    check(F.normalize, TF.normalize, [randn(3, 4)], device)
    check(lambda x: F.normalize(x, p=1.0, dim=0), lambda x: TF.normalize(x, p=1.0, dim=0), [randn(3, 4)], device)


# ----------------------------------------------------------------------------------------- attention
def _sdpa(**kw: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kw),
            lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, **kw))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa(device: str, causal: bool) -> None:
    q, k, v = randn(2, 2, 5, 8), randn(2, 2, 7, 8), randn(2, 2, 7, 8)
    check(*_sdpa(is_causal=causal), [q, k, v], device, rtol=1e-4, atol=1e-5)
    check(*_sdpa(is_causal=causal, scale=0.3), [q[0], k[0, :1], v[0, :1]], device, rtol=1e-4, atol=1e-5)  # broadcast


@pytest.mark.parametrize("device", DEVICES)
def test_sdpa_masks_gqa_and_dtypes(device: str) -> None:
    q, k, v = randn(1, 2, 4, 8), randn(1, 2, 6, 8), randn(1, 2, 6, 3)
    mask = RNG.random((4, 6)) > 0.4
    mask[:, 0] = True
    ms, mt = pair(mask, device=device)
    fs, ft = pair(randn(2, 4, 6), device=device)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=ms),
          lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, attn_mask=mt), [q, k, v], device, rtol=1e-4)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=ms, is_causal=True),
          lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, attn_mask=mt, is_causal=True), [q, k, k], device,
          rtol=1e-4)
    check(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=fs),
          lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, attn_mask=ft), [q, k, v], device, rtol=1e-4)
    check(*_sdpa(is_causal=True, enable_gqa=True), [randn(1, 4, 3, 8), randn(1, 2, 3, 8), randn(1, 2, 3, 8)],
          device, rtol=1e-4)
    check(*_sdpa(is_causal=True), [randn(1, 3, 8), randn(1, 3, 8), randn(1, 3, 8)], device, dtype=strata.bfloat16)
    check(*_sdpa(), [randn(1, 3, 4), randn(1, 2, 4), randn(1, 2, 4)], device, dtype=strata.float64, rtol=1e-10,
          atol=1e-12)
    qs, qt = pair(randn(1, 2, 4), device=device)
    ks, kt = pair(randn(1, 2, 4), strata.float64, device)
    errors_match(lambda: F.scaled_dot_product_attention(qs, ks, qs),
                 lambda: TF.scaled_dot_product_attention(qt, kt, qt))


def test_dropout_same_mask_on_both_devices() -> None:
    strata.manual_seed(123)
    cpu = F.dropout(strata.ones(3, 50), 0.4).numpy()
    strata.manual_seed(123)
    np.testing.assert_array_equal(F.dropout(strata.ones(3, 50, device="cuda"), 0.4).cpu().numpy(), cpu)


@pytest.mark.parametrize("device", DEVICES)
def test_sdpa_dropout_and_autocast(device: str) -> None:
    q = strata.ones(1, 4, 8, device=device)
    out = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    vals = out.cpu().numpy()
    assert set(np.round(np.unique(vals), 4)) <= {0.0, 0.5, 1.0, 1.5, 2.0}  # mean of 4 dropped-or-doubled ones
    with strata.autocast(device, dtype=strata.bfloat16):
        assert F.scaled_dot_product_attention(q, q, q).dtype is strata.bfloat16


def test_dnn_routines_run_on_cuda() -> None:
    """The cuda ops go through strata.libs.dnn (the handle remembers the last kernels)."""
    x = strata.tensor(randn(2, 3), device="cuda")
    h = F._dnn(x.device)
    F.gelu(x)
    assert h.last_kernel.startswith("activation_fwd")
    F.softmax(x, 0)
    assert h.last_kernel.startswith("softmax_fwd")
    F.layer_norm(x, (3,))
    assert h.last_kernel.startswith("norm_fwd")
    assert math.isfinite(F.cross_entropy(x, strata.tensor([0, 2], device="cuda")).item())
    assert "ce_" in h.last_kernel
    assert to_torch_dtype(strata.float32) is torch.float32
