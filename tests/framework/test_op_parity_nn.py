"""nn.functional's ops whose kernels differ per device, now on the op table (activations, cross-entropy's
fused kernel, nll's class-index check, embedding, dropout, linear's addmm, one_hot), against PyTorch CPU
on "cpu" and "cuda" (the virtual GPU; tiny shapes): values, dtypes, node names, first and second
derivatives (under create_graph the backward is written with tensor ops, so it differentiates again, as
PyTorch's does), PyTorch's errors; and the table listing them with both backends registered."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strata
from strata.framework import op_table
from strata.framework.nn import functional as SF

from .conftest import assert_same

ACTIVATIONS: dict[str, tuple[Any, Any]] = {
    "relu": (SF.relu, TF.relu),
    "sigmoid": (SF.sigmoid, torch.sigmoid),
    "tanh": (SF.tanh, torch.tanh),
    "gelu": (SF.gelu, TF.gelu),
    "gelu_tanh": (lambda x: SF.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh")),
    "silu": (SF.silu, TF.silu),
}
X = np.array([[-2.5, -1.0, -0.3, 0.2], [0.7, 1.4, 2.2, -0.05]])


def _grads(y: Any, xs: Any, lib: Any, w: np.ndarray, device: str | None) -> tuple[Any, Any]:
    """(d sum(y^2 w) / dx with create_graph, and the derivative of sum(g^2) of that)."""
    wt = lib.tensor(w, dtype=y.dtype) if device is None else lib.tensor(w, dtype=y.dtype, device=device)
    (g,) = lib.autograd.grad((y * y * wt).sum(), xs, create_graph=True)
    (g2,) = lib.autograd.grad((g * g).sum(), xs)
    return g, g2


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values_gradients_and_second_derivatives(name: str, dtype: str, device: str) -> None:
    fs, ft = ACTIVATIONS[name]
    s = strata.tensor(X, dtype=getattr(strata, dtype), device=device, requires_grad=True)
    t = torch.tensor(X, dtype=getattr(torch, dtype), requires_grad=True)
    ys, yt = fs(s), ft(t)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    assert_same(ys, yt, device=device, **tol)
    assert ys.grad_fn.name() == yt.grad_fn.name()
    w = np.linspace(0.5, 1.5, X.size).reshape(X.shape)
    (g1,) = strata.autograd.grad((fs(s) ** 2).sum(), s)  # (the fused backward kernel: no create_graph)
    gs, g2s = _grads(ys, s, strata, w, device)
    gt, g2t = _grads(yt, t, torch, w, None)
    assert_same(gs, gt, device=device, **tol)
    assert_same(g1, torch.autograd.grad((ft(t) ** 2).sum(), t)[0], device=device, **tol)
    assert_same(g2s, g2t, device=device, rtol=1e-4 if dtype == "float32" else 1e-9, atol=1e-5 if dtype == "float32"
                else 1e-11)


@pytest.mark.parametrize("name", ["relu", "gelu", "silu"])
def test_activation_half_types_and_no_grad(name: str, device: str) -> None:
    fs, ft = ACTIVATIONS[name]
    for sd, td in ((strata.float16, torch.float16), (strata.bfloat16, torch.bfloat16)):
        assert_same(fs(strata.tensor(X, dtype=sd, device=device)), ft(torch.tensor(X, dtype=td)), device=device)
    with strata.no_grad():
        y = fs(strata.tensor(X, device=device, requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_entropy_values_gradients_and_second_derivatives(reduction: str, smoothing: float, dtype: str,
                                                               device: str) -> None:
    """The fused kernel (cpu; dnn on cuda float32) and the composite (cuda float64) alike; ignored rows."""
    x = np.random.default_rng(0).standard_normal((4, 5))
    target = [1, -100, 4, 0]
    s = strata.tensor(x, dtype=getattr(strata, dtype), device=device, requires_grad=True)
    t = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ys = SF.cross_entropy(s * s, strata.tensor(target, device=device), reduction=reduction, label_smoothing=smoothing)
    yt = TF.cross_entropy(t * t, torch.tensor(target), reduction=reduction, label_smoothing=smoothing)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    assert_same(ys, yt, device=device, **tol)
    fused = op_table.fast_path("cross_entropy", device) is not None and not (device == "cuda" and dtype == "float64")
    if fused and smoothing == 0.0:  # (PyTorch composes label smoothing: its node is then an AddBackward0)
        assert ys.grad_fn.name() == yt.grad_fn.name() == "NllLossBackward0"
    w = np.linspace(0.5, 1.5, 4) if reduction == "none" else np.array(1.0)
    gs, g2s = _grads(ys, s, strata, w, device)
    gt, g2t = _grads(yt, t, torch, w, None)
    assert_same(gs, gt, device=device, **tol)
    assert_same(g2s, g2t, device=device, rtol=1e-4 if dtype == "float32" else 1e-9,
                atol=1e-5 if dtype == "float32" else 1e-11)


def test_cross_entropy_without_create_graph_uses_the_fused_backward(device: str) -> None:
    x = np.random.default_rng(1).standard_normal((3, 4))
    s = strata.tensor(x, dtype=strata.float32, device=device, requires_grad=True)
    t = torch.tensor(x, dtype=torch.float32, requires_grad=True)
    SF.cross_entropy(s, strata.tensor([3, 0, 1], device=device)).backward()
    TF.cross_entropy(t, torch.tensor([3, 0, 1])).backward()
    assert_same(s.grad, t.grad, device=device)
    assert not s.grad.requires_grad


def test_bad_targets_on_cpu_raise_pytorchs_index_error() -> None:
    x = torch.zeros(2, 3)
    for f_s, f_t in ((SF.cross_entropy, TF.cross_entropy), (SF.nll_loss, TF.nll_loss)):
        for target in ([0, 3], [-1, 0]):
            with pytest.raises(IndexError) as es:
                f_s(strata.zeros(2, 3), strata.tensor(target))
            with pytest.raises(IndexError) as et:
                f_t(x, torch.tensor(target))
            assert str(es.value) == str(et.value)


def test_the_table_declares_them_with_both_backends() -> None:
    for name in ("activation", "activation_backward", "class_index_check", "softmax", "log_softmax"):
        assert op_table.OPS[name].family == "nn"
        for backend in op_table.BACKENDS:
            assert callable(op_table.kernel(name, backend)), (name, backend)
    for name in ("dropout",):
        for backend in op_table.BACKENDS:
            assert callable(op_table.kernel(name, backend)), (name, backend)
    for name, node in (("cross_entropy", "NllLossBackward0"), ("embedding", "EmbeddingBackward0")):
        d = op_table.OPS[name]
        assert d.family == "composite" and d.node == node
        for backend in op_table.BACKENDS:  # (the fused kernels: the composite's fast path on each device)
            assert op_table.fast_path(name, backend) is not None
    assert op_table.OPS["linear"].node == "AddmmBackward0" and op_table.fast_path("linear", "cpu") is not None
    for mode in ACTIVATIONS:  # the create_graph backward is the table's elementwise derivative
        assert op_table.OPS[mode].derivative is not None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("padding_idx", [None, 1])
def test_embedding_values_gradients_and_second_derivatives(dtype: str, padding_idx: Any, device: str) -> None:
    weight = np.random.default_rng(2).standard_normal((5, 3))
    idx = [[1, 4, 1], [0, 2, 4]]
    s = strata.tensor(weight, dtype=getattr(strata, dtype), device=device, requires_grad=True)
    t = torch.tensor(weight, dtype=getattr(torch, dtype), requires_grad=True)
    ys = SF.embedding(strata.tensor(idx, device=device), s, padding_idx=padding_idx)
    yt = TF.embedding(torch.tensor(idx), t, padding_idx=padding_idx)
    assert_same(ys, yt, device=device)
    if not (device == "cuda" and dtype == "float64"):  # (there the composite one-hot matmul runs)
        assert ys.grad_fn.name() == yt.grad_fn.name()
    (g1,) = strata.autograd.grad((SF.embedding(strata.tensor(idx, device=device), s, padding_idx=padding_idx) ** 3)
                                 .sum(), s)
    w = np.linspace(0.5, 1.5, 18).reshape(2, 3, 3)
    gs, g2s = _grads(ys, s, strata, w, device)
    gt, g2t = _grads(yt, t, torch, w, None)
    assert_same(gs, gt, device=device)
    assert_same(g1, torch.autograd.grad((TF.embedding(torch.tensor(idx), t, padding_idx=padding_idx) ** 3).sum(),
                                        t)[0], device=device)
    assert_same(g2s, g2t, device=device, rtol=1e-4, atol=1e-5)


def test_embedding_bad_index_on_cpu() -> None:
    with pytest.raises(IndexError) as es:
        SF.embedding(strata.tensor([0, 5]), strata.zeros(5, 2))
    with pytest.raises(IndexError) as et:
        TF.embedding(torch.tensor([0, 5]), torch.zeros(5, 2))
    assert str(es.value) == str(et.value)


@pytest.mark.parametrize("data", [[0, 2, 1, 2], [[1], [0]], []])
def test_one_hot(data: Any, device: str) -> None:
    s = strata.tensor(data, dtype=strata.int64, device=device)
    assert_same(SF.one_hot(s, 3), TF.one_hot(torch.tensor(data, dtype=torch.int64), 3), device=device)
    if data:
        assert_same(SF.one_hot(s), TF.one_hot(torch.tensor(data, dtype=torch.int64)), device=device)


def test_one_hot_errors_on_cpu() -> None:
    for data in ([0, -1], [0, 3]):
        with pytest.raises(RuntimeError) as es:
            SF.one_hot(strata.tensor(data), 3)
        with pytest.raises(RuntimeError) as et:
            TF.one_hot(torch.tensor(data), 3)
        assert str(es.value) == str(et.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_one_mask_per_seed_on_both_devices(dtype: str) -> None:
    """The mask is random (no PyTorch oracle for its values); what is checked: the kept elements are x / (1 - p),
    the others 0, the backward applies the same mask, the node, and one seed gives one mask on
    "cpu" and on "cuda" (the kernels draw the same Philox stream)."""
    x = np.linspace(1.0, 2.0, 64).reshape(8, 8)
    outs = []
    for dev in ("cpu", "cuda"):
        strata.manual_seed(7)
        s = strata.tensor(x, dtype=getattr(strata, dtype), device=dev, requires_grad=True)
        y = SF.dropout(s, 0.25)
        # (PyTorch's node on a GPU; its CPU build composes dropout as a MulBackward0)
        assert y.grad_fn.name() == op_table.OPS["dropout"].node == "NativeDropoutBackward0"
        y.backward(strata.ones_like(y) * 3.0)
        yv, gv = y.detach().cpu().numpy(), s.grad.cpu().numpy()
        kept = yv != 0
        np.testing.assert_allclose(yv[kept], (x / 0.75)[kept], rtol=1e-6)
        np.testing.assert_allclose(gv, np.where(kept, 3.0 / 0.75, 0.0), rtol=1e-6)
        assert 0 < kept.sum() < kept.size
        outs.append(kept)
    np.testing.assert_array_equal(outs[0], outs[1])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_linear_values_gradients_and_second_derivatives(dtype: str, device: str) -> None:
    """F.linear with a bias: on "cpu" the fused addmm (the op table's fast path), on "cuda" the composite."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(shape) for shape in ((2, 3), (4, 3), (4,))]
    s = [strata.tensor(a, dtype=getattr(strata, dtype), device=device, requires_grad=True) for a in arrays]
    t = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    ys, yt = SF.linear(*s), TF.linear(*t)
    assert_same(ys, yt, device=device)
    if device == "cpu":
        assert ys.grad_fn.name() == yt.grad_fn.name() == "AddmmBackward0"
    gs = strata.autograd.grad((ys * ys).sum(), s, create_graph=True)
    gt = torch.autograd.grad((yt * yt).sum(), t, create_graph=True)
    assert_same(list(gs), list(gt), device=device)
    g2s = strata.autograd.grad(sum((g * g).sum() for g in gs), s)
    g2t = torch.autograd.grad(sum((g * g).sum() for g in gt), t)
    assert_same(list(g2s), list(g2t), device=device, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------------------------- dnn fast paths
DNN_CASES: dict[str, tuple[Any, Any, list[tuple[int, ...]]]] = {
    "conv2d": (lambda F, x, w, b: F.conv2d(x, w, b, stride=1, padding=1),
               lambda F, x, w, b: F.conv2d(x, w, b, stride=1, padding=1), [(1, 2, 4, 4), (3, 2, 3, 3), (3,)]),
    "max_pool2d": (lambda F, x: F.max_pool2d(x, 2), lambda F, x: F.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "avg_pool2d": (lambda F, x: F.avg_pool2d(x, 2, stride=1), lambda F, x: F.avg_pool2d(x, 2, stride=1),
                   [(1, 2, 3, 3)]),
    "batch_norm": (lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                   lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(3, 2, 2, 2), (2,), (2,)]),
    # (the oracle spelled out: PyTorch's CPU attention kernel has no second derivative)
    "scaled_dot_product_attention": (lambda F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                                     lambda F, q, k, v: torch.softmax((q @ k.transpose(-2, -1) / 2.0).masked_fill(
                                         torch.ones(3, 3, dtype=torch.bool).triu(1), float("-inf")), -1) @ v,
                                     [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4)]),
    "layer_norm": (lambda F, x, w, b: F.layer_norm(x, (2, 3), w, b), lambda F, x, w, b: F.layer_norm(x, (2, 3), w, b),
                   [(2, 2, 3), (2, 3), (2, 3)]),
    "rms_norm": (lambda F, x, w: F.rms_norm(x, (3,), w), lambda F, x, w: F.rms_norm(x, (3,), w), [(2, 3), (3,)]),
}


@pytest.mark.parametrize("name", sorted(DNN_CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dnn_fast_paths_and_composites(name: str, dtype: str, device: str) -> None:
    """cuda float32: strata.libs.dnn's fused kernels (the op table's fast paths, recording the table's node,
    PyTorch's name on a GPU); float64 and cpu: the composites. Values, gradients and second derivatives as
    PyTorch's (under create_graph a fused kernel's backward differentiates its composite)."""
    fs, ft, shapes = DNN_CASES[name]
    rng = np.random.default_rng(4)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    s = [strata.tensor(a, dtype=getattr(strata, dtype), device=device, requires_grad=True) for a in arrays]
    t = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in arrays]
    ys, yt = fs(SF, *s), ft(TF, *t)
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-11}
    assert_same(ys, yt, device=device, **tol)
    if device == "cuda" and dtype == "float32":
        assert ys.grad_fn.name() == op_table.OPS[name].node
    w = np.random.default_rng(5).uniform(0.5, 1.5, tuple(yt.shape))
    gs = strata.autograd.grad((ys * ys * strata.tensor(w, dtype=ys.dtype, device=device)).sum(), s, create_graph=True)
    gt = torch.autograd.grad((yt * yt * torch.tensor(w, dtype=yt.dtype)).sum(), t, create_graph=True)
    assert_same(list(gs), list(gt), device=device, **tol)
    g2s = strata.autograd.grad(sum((g * g).sum() for g in gs), s)
    g2t = torch.autograd.grad(sum((g * g).sum() for g in gt), t)
    for a, b in zip(g2s, g2t, strict=True):  # (batch norm's second derivative loses digits in float32, PyTorch's too)
        scale = float(b.abs().max()) or 1.0
        assert_same(a, b, device=device, rtol=1e-2 if dtype == "float32" else 1e-8,
                    atol=(1e-2 if dtype == "float32" else 1e-9) * scale)


def test_the_dnn_fast_paths_are_registered_for_cuda_only() -> None:
    for name in DNN_CASES:
        assert op_table.OPS[name].family == "composite"
        assert op_table.fast_path(name, "cuda") is not None and op_table.fast_path(name, "cpu") is None


@pytest.mark.parametrize("pads", [(1, 2), (1, -1, 0, 1), (-1, 0)])
def test_constant_pad_second_derivative(pads: tuple[int, ...], device: str) -> None:
    """F.pad's backward (the gradient's inner part, padded back where the input was cropped) is itself
    recorded under create_graph: im2col convolutions differentiate twice through it."""
    x = np.random.default_rng(6).standard_normal((2, 3))
    s = strata.tensor(x, device=device, requires_grad=True)
    t = torch.tensor(x, requires_grad=True)
    ys, yt = SF.pad(s, pads, value=0.5), TF.pad(t, pads, value=0.5)
    assert_same(ys, yt, device=device)
    w = np.linspace(0.5, 1.5, yt.numel()).reshape(tuple(yt.shape))
    gs, g2s = _grads(ys, s, strata, w, device)
    gt, g2t = _grads(yt, t, torch, w, None)
    assert_same(gs, gt, device=device)
    assert_same(g2s, g2t, device=device)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_values_gradients_and_second_derivatives(name: str, dtype: str, dim: int, device: str) -> None:
    """The op table's softmax kernels (cpu NumPy; cuda dnn's fused pass and backward, float64 the
    composite); under create_graph the backward is the tensor formula."""
    x = np.random.default_rng(7).standard_normal((3, 4))
    s = strata.tensor(x, dtype=getattr(strata, dtype), device=device, requires_grad=True)
    t = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
    ys, yt = getattr(SF, name)(s, dim), getattr(TF, name)(t, dim)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-12}
    assert_same(ys, yt, device=device, **tol)
    assert ys.grad_fn.name() == yt.grad_fn.name() == op_table.OPS[name].node
    w = np.linspace(0.5, 1.5, 12).reshape(3, 4)
    (g1,) = strata.autograd.grad((getattr(SF, name)(s, dim) * strata.tensor(w, dtype=s.dtype, device=device)).sum(), s)
    (g1t,) = torch.autograd.grad((getattr(TF, name)(t, dim) * torch.tensor(w, dtype=t.dtype)).sum(), t)
    assert_same(g1, g1t, device=device, **tol)  # (the fused backward on cuda float32)
    gs, g2s = _grads(ys, s, strata, w, device)
    gt, g2t = _grads(yt, t, torch, w, None)
    assert_same(gs, gt, device=device, **tol)
    assert_same(g2s, g2t, device=device, rtol=1e-4 if dtype == "float32" else 1e-9,
                atol=1e-5 if dtype == "float32" else 1e-11)
