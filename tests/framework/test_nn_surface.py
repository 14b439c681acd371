"""The torch.nn layers added for issue 16 (activations, Conv1d, transposed convolutions, adaptive
pooling, padding, PixelShuffle, channel dropout, upsampling, losses, orthogonal_), each checked against
PyTorch CPU from the same weights: forward values and the gradients of input and parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import strata
import strata.nn as snn
from strata.nn import functional as SF

RNG = np.random.default_rng(16)


def _port(tm: torch.nn.Module, sm: Any, device: str) -> None:
    """Load torch's weights into the strata module (same names, so the state dicts line up)."""
    sd = {k: strata.tensor(v.detach().numpy(), device=device) for k, v in tm.state_dict().items()}
    sm.load_state_dict(sd)


def _compare(ours: Any, ref: torch.Tensor, rtol: float, atol: float) -> None:
    np.testing.assert_allclose(ours.detach().cpu().numpy(), ref.detach().numpy(), rtol=rtol, atol=atol)


def check_module(tm: torch.nn.Module, sm: Any, x: np.ndarray, device: str = "cpu", rtol: float = 1e-4,
                 atol: float = 1e-5, grads: bool = True) -> None:
    """Same weights, same input: same output, input gradient and parameter gradients."""
    _port(tm, sm, device)
    sm.to(device)
    tx = torch.tensor(x, requires_grad=grads)
    sx = strata.tensor(x, device=device, requires_grad=grads)
    to, so = tm(tx), sm(sx)
    _compare(so, to, rtol, atol)
    if not grads:
        return
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(g)).sum().backward()
    (so * strata.tensor(g, device=device)).sum().backward()
    _compare(sx.grad, tx.grad, rtol, atol)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        _compare(p.grad, tp[name].grad, rtol, atol)


def _x(*shape: int, scale: float = 1.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


ACTIVATIONS: list[tuple[str, dict[str, Any]]] = [
    ("LeakyReLU", {"negative_slope": 0.2}), ("ELU", {"alpha": 0.7}), ("SELU", {}), ("CELU", {"alpha": 1.3}),
    ("Mish", {}), ("Softplus", {"beta": 2.0, "threshold": 3.0}), ("Softsign", {}), ("Hardtanh", {"min_val": -0.5}),
    ("ReLU6", {}), ("Hardswish", {}), ("Hardsigmoid", {}), ("LogSigmoid", {}), ("Tanhshrink", {}),
    ("Softshrink", {"lambd": 0.3}), ("Hardshrink", {"lambd": 0.3}), ("Threshold", {"threshold": 0.1, "value": -2.0}),
    ("GLU", {"dim": 1}), ("Softmin", {"dim": 1}), ("GELU", {"approximate": "tanh"}), ("SiLU", {}),
]


@pytest.mark.parametrize(("name", "kwargs"), ACTIVATIONS, ids=[a for a, _ in ACTIVATIONS])
def test_activation_matches_torch(name: str, kwargs: dict[str, Any]) -> None:
    x = _x(3, 8, scale=3.0)
    check_module(getattr(torch.nn, name)(**kwargs), getattr(snn, name)(**kwargs), x)


def test_prelu_per_channel_and_softmax2d() -> None:
    check_module(torch.nn.PReLU(3, init=0.1), snn.PReLU(3, init=0.1), _x(2, 3, 4, 4))
    check_module(torch.nn.PReLU(), snn.PReLU(), _x(5, 2))
    check_module(torch.nn.Softmax2d(), snn.Softmax2d(), _x(2, 3, 2, 2))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_activation_on_cuda_and_inplace(device: str) -> None:
    x = _x(4, 6, scale=2.0)
    check_module(torch.nn.Hardswish(), snn.Hardswish(), x, device)  # one composite on each device keeps this fast
    t, s = torch.tensor(x), strata.tensor(x, device=device)
    torch.nn.LeakyReLU(0.1, inplace=True)(t)
    snn.LeakyReLU(0.1, inplace=True)(s)
    _compare(s, t, 1e-6, 1e-6)


CONVS: list[tuple[str, Callable[[Any], Any], tuple[int, ...]]] = [
    ("conv1d", lambda nn: nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
    ("conv1d_same_dil", lambda nn: nn.Conv1d(2, 4, 3, padding="same", dilation=2, groups=2), (2, 2, 7)),
    ("conv1d_reflect", lambda nn: nn.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"), (1, 2, 6)),
    ("convT2d", lambda nn: nn.ConvTranspose2d(3, 2, 4, stride=2, padding=1), (2, 3, 4, 5)),
    ("convT2d_op_groups", lambda nn: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                                                        bias=False), (1, 4, 3, 3)),
    ("convT2d_dil", lambda nn: nn.ConvTranspose2d(2, 2, (3, 2), stride=(1, 3), dilation=2), (1, 2, 3, 4)),
    ("convT1d", lambda nn: nn.ConvTranspose1d(3, 2, 5, stride=3, padding=2, output_padding=1), (2, 3, 4)),
]


@pytest.mark.parametrize(("name", "make", "shape"), CONVS, ids=[c[0] for c in CONVS])
def test_convolutions_match_torch(name: str, make: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    torch.manual_seed(0)
    check_module(make(torch.nn), make(snn), _x(*shape))


def test_conv_transpose_on_cuda_and_output_size() -> None:
    torch.manual_seed(1)
    tm, sm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1), snn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    check_module(tm, sm, _x(1, 2, 4, 4), "cuda")
    x = _x(1, 2, 4, 4)
    assert tuple(sm.cpu()(strata.tensor(x), output_size=[8, 8]).shape) == \
        tuple(tm(torch.tensor(x), output_size=[8, 8]).shape) == (1, 3, 8, 8)
    with pytest.raises(ValueError, match="output size"):
        sm(strata.tensor(x), output_size=[12, 12])
    with pytest.raises(RuntimeError, match="output padding must be smaller"):
        SF.conv_transpose2d(strata.ones(1, 2, 3, 3), strata.ones(2, 1, 3, 3), output_padding=2, stride=2)


SHAPE_LAYERS: list[tuple[str, Callable[[Any], Any], tuple[int, ...]]] = [
    ("adaptive_avg_11", lambda nn: nn.AdaptiveAvgPool2d((1, 1)), (2, 3, 5, 7)),
    ("adaptive_avg_uneven", lambda nn: nn.AdaptiveAvgPool2d((3, 4)), (2, 2, 7, 5)),
    ("adaptive_avg_none", lambda nn: nn.AdaptiveAvgPool2d((None, 2)), (1, 2, 3, 6)),
    ("adaptive_avg_1d", lambda nn: nn.AdaptiveAvgPool1d(4), (2, 3, 10)),
    ("adaptive_max", lambda nn: nn.AdaptiveMaxPool2d(3), (1, 2, 7, 8)),
    ("reflect2d", lambda nn: nn.ReflectionPad2d((1, 2, 2, 1)), (1, 2, 4, 5)),
    ("reflect1d", lambda nn: nn.ReflectionPad1d(2), (2, 3, 5)),
    ("replicate2d", lambda nn: nn.ReplicationPad2d(2), (1, 2, 3, 3)),
    ("zeropad2d", lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), (1, 1, 3, 3)),
    ("constpad1d", lambda nn: nn.ConstantPad1d((2, 1), 3.5), (2, 4)),
    ("pixel_shuffle", lambda nn: nn.PixelShuffle(2), (2, 8, 3, 4)),
    ("pixel_unshuffle", lambda nn: nn.PixelUnshuffle(2), (1, 2, 4, 6)),
    ("upsample_nearest", lambda nn: nn.Upsample(scale_factor=2, mode="nearest"), (1, 2, 3, 4)),
    ("upsample_size", lambda nn: nn.Upsample(size=(5, 7)), (1, 1, 3, 4)),
    ("unflatten", lambda nn: nn.Unflatten(1, (2, 3)), (4, 6)),
    ("nearest_frac", lambda nn: nn.Upsample(scale_factor=1.7), (1, 1, 3, 5)),
    ("nearest_down", lambda nn: nn.Upsample(size=(2, 3)), (1, 2, 5, 7)),
    ("bilinear", lambda nn: nn.Upsample(scale_factor=2, mode="bilinear"), (1, 2, 3, 4)),
    ("bilinear_size_corners", lambda nn: nn.Upsample(size=(5, 3), mode="bilinear", align_corners=True), (2, 1, 3, 4)),
    ("bilinear_frac", lambda nn: nn.Upsample(scale_factor=(1.5, 0.6), mode="bilinear"), (1, 1, 4, 5)),
    ("upsampling_bilinear2d", lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), (1, 1, 3, 3)),
    ("linear1d", lambda nn: nn.Upsample(size=7, mode="linear"), (2, 3, 4)),
]


@pytest.mark.parametrize(("name", "make", "shape"), SHAPE_LAYERS, ids=[c[0] for c in SHAPE_LAYERS])
def test_shape_layers_match_torch(name: str, make: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    check_module(make(torch.nn), make(snn), _x(*shape))


def test_shape_layers_on_cuda() -> None:
    check_module(torch.nn.AdaptiveAvgPool2d((2, 3)), snn.AdaptiveAvgPool2d((2, 3)), _x(1, 2, 5, 7), "cuda")
    check_module(torch.nn.PixelShuffle(3), snn.PixelShuffle(3), _x(1, 9, 2, 2), "cuda")
    check_module(torch.nn.ReflectionPad2d(1), snn.ReflectionPad2d(1), _x(1, 1, 3, 3), "cuda")


def test_shape_layer_errors_follow_torch() -> None:
    with pytest.raises(RuntimeError, match="divisible by the square"):
        SF.pixel_shuffle(strata.ones(1, 6, 2, 2), 2)
    with pytest.raises(RuntimeError, match="Expected 3D or 4D"):
        SF.adaptive_avg_pool2d(strata.ones(4, 4), 2)
    with pytest.raises(NotImplementedError, match="nearest"):
        SF.interpolate(strata.ones(1, 1, 2, 2), scale_factor=2, mode="bicubic")


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_dropout2d_zeroes_whole_channels(device: str) -> None:
    strata.manual_seed(0)
    x = strata.ones(8, 16, 3, 3, device=device, requires_grad=True)
    m = snn.Dropout2d(0.5)
    y = m(x)
    per_channel = y.detach().cpu().numpy().reshape(8, 16, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(axis=2) == per_channel.max(axis=2)).all()  # a channel is kept or dropped whole
    assert 0.25 < (per_channel[:, :, 0] == 0).mean() < 0.75
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), y.detach().cpu().numpy())
    m.eval()
    assert m(x) is x


LOSSES: list[tuple[str, dict[str, Any], bool]] = [
    ("BCELoss", {}, True), ("BCELoss", {"reduction": "sum"}, True), ("BCEWithLogitsLoss", {}, False),
    ("L1Loss", {}, False), ("SmoothL1Loss", {"beta": 0.5}, False), ("HuberLoss", {"delta": 0.7}, False),
    ("KLDivLoss", {"reduction": "batchmean"}, False), ("KLDivLoss", {"reduction": "none", "log_target": True}, False),
]


@pytest.mark.parametrize(("name", "kwargs", "probs"), LOSSES, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(LOSSES)])
def test_losses_match_torch(name: str, kwargs: dict[str, Any], probs: bool) -> None:
    x = _x(4, 5)
    t = RNG.random((4, 5)).astype(np.float32)
    if probs:
        x = 1 / (1 + np.exp(-x))
    if name == "KLDivLoss":
        x = np.log(np.abs(x) + 0.1).astype(np.float32)
        t[0, 0] = 0.0
        if kwargs.get("log_target"):
            t = np.log(t + 0.05).astype(np.float32)
    tx, sx = torch.tensor(x, requires_grad=True), strata.tensor(x, requires_grad=True)
    to = getattr(torch.nn, name)(**kwargs)(tx, torch.tensor(t))
    so = getattr(snn, name)(**kwargs)(sx, strata.tensor(t))
    _compare(so, to, 1e-5, 1e-6)
    to.sum().backward()
    so.sum().backward()
    _compare(sx.grad, tx.grad, 1e-5, 1e-6)


def test_orthogonal_init_is_orthogonal_and_scaled() -> None:
    for shape in ((4, 6), (6, 4), (3, 2, 2)):
        w = snn.init.orthogonal_(strata.empty(*shape), gain=2.0)
        m = w.reshape(shape[0], -1).numpy()
        gram = m @ m.T if shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(gram, 4.0 * np.eye(gram.shape[0]), atol=1e-5)
    with pytest.raises(ValueError, match="2 or more"):
        snn.init.orthogonal_(strata.empty(3))
    w = snn.init.orthogonal_(strata.empty(5, 5, device="cuda"))
    np.testing.assert_allclose(w.cpu().numpy() @ w.cpu().numpy().T, np.eye(5), atol=1e-5)


def test_functional_and_init_names_are_bound() -> None:
    for name in ("conv1d", "conv_transpose2d", "adaptive_avg_pool2d", "pixel_shuffle", "dropout2d", "selu",
                 "hardswish", "glu", "smooth_l1_loss", "kl_div", "interpolate"):
        assert callable(getattr(SF, name)) and name in SF.__all__
    assert snn.init.orthogonal_ is not None and callable(snn.init.eye_)


NORMS: list[tuple[str, Callable[[Any], Any], tuple[int, ...]]] = [
    ("groupnorm", lambda nn: nn.GroupNorm(2, 6), (3, 6, 4)),
    ("groupnorm_noaffine_4d", lambda nn: nn.GroupNorm(3, 3, affine=False), (2, 3, 2, 3)),
    ("instancenorm2d_affine", lambda nn: nn.InstanceNorm2d(3, affine=True), (2, 3, 4, 4)),
    ("instancenorm1d", lambda nn: nn.InstanceNorm1d(2), (3, 2, 5)),
    ("maxpool1d", lambda nn: nn.MaxPool1d(3, stride=2, padding=1), (2, 3, 9)),
    ("avgpool1d", lambda nn: nn.AvgPool1d(2), (2, 2, 7)),
    ("avgpool1d_pad", lambda nn: nn.AvgPool1d(3, 2, 1, count_include_pad=False), (1, 2, 6)),
]


@pytest.mark.parametrize(("name", "make", "shape"), NORMS, ids=[c[0] for c in NORMS])
def test_norms_and_1d_pooling_match_torch(name: str, make: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    torch.manual_seed(3)
    tm = make(torch.nn)
    if getattr(tm, "weight", None) is not None:  # non-trivial affine parameters
        with torch.no_grad():
            tm.weight.uniform_(0.5, 1.5)
            tm.bias.uniform_(-0.5, 0.5)
    check_module(tm, make(snn), _x(*shape))


def test_distance_modules_match_torch() -> None:
    a, b = _x(4, 5), _x(4, 5)
    for tm, sm in ((torch.nn.CosineSimilarity(dim=1), snn.CosineSimilarity(dim=1)),
                   (torch.nn.PairwiseDistance(p=3.0, keepdim=True), snn.PairwiseDistance(p=3.0, keepdim=True))):
        ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
        sa, sb = strata.tensor(a, requires_grad=True), strata.tensor(b, requires_grad=True)
        to, so = tm(ta, tb), sm(sa, sb)
        _compare(so, to, 1e-5, 1e-6)
        to.sum().backward()
        so.sum().backward()
        _compare(sa.grad, ta.grad, 1e-4, 1e-6)
        _compare(sb.grad, tb.grad, 1e-4, 1e-6)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        snn.GroupNorm(4, 6)


def test_missing_functional_and_init_names_say_so() -> None:
    with pytest.raises(AttributeError, match="strata does not provide torch.nn.functional.ctc_loss"):
        SF.ctc_loss  # noqa: B018
    with pytest.raises(AttributeError, match="strata does not provide torch.nn.init.sparse_"):
        snn.init.sparse_  # noqa: B018
    assert not hasattr(SF, "no_such_op") and hasattr(SF, "conv2d")


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(("mode", "padding"), [("bilinear", "zeros"), ("bilinear", "border"), ("nearest", "zeros")])
def test_affine_grid_and_grid_sample_match_torch(align_corners: bool, mode: str, padding: str) -> None:
    # generic coefficients: no sample lands exactly on a pixel, where bilinear sampling has a kink and a
    # one-ulp difference in the grid picks the other (equally valid) one-sided gradient
    theta = np.array([[[0.913, -0.287, 0.173], [0.241, 1.093, -0.117]],
                      [[1.187, 0.031, 0.466], [-0.029, 0.713, 0.281]]], np.float32)
    img = _x(2, 3, 5, 6)
    tt, st = torch.tensor(theta, requires_grad=True), strata.tensor(theta, requires_grad=True)
    ti, si = torch.tensor(img, requires_grad=True), strata.tensor(img, requires_grad=True)
    tg = torch.nn.functional.affine_grid(tt, [2, 3, 4, 7], align_corners=align_corners)
    sg = SF.affine_grid(st, [2, 3, 4, 7], align_corners=align_corners)
    _compare(sg, tg, 1e-5, 1e-6)
    to = torch.nn.functional.grid_sample(ti, tg, mode=mode, padding_mode=padding, align_corners=align_corners)
    so = SF.grid_sample(si, sg, mode=mode, padding_mode=padding, align_corners=align_corners)
    _compare(so, to, 1e-4, 1e-5)
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    (to * torch.tensor(g)).sum().backward()
    (so * strata.tensor(g)).sum().backward()
    _compare(si.grad, ti.grad, 1e-4, 1e-5)
    if mode == "bilinear":
        _compare(st.grad, tt.grad, 1e-3, 1e-4)


@pytest.mark.parametrize(("kernel", "dilation", "padding", "stride"), [(3, 1, 0, 1), ((2, 3), (1, 2), (1, 0), (2, 1))])
def test_unfold_and_fold_match_torch(kernel: Any, dilation: Any, padding: Any, stride: Any) -> None:
    x = _x(2, 3, 6, 7)
    tx, sx = torch.tensor(x, requires_grad=True), strata.tensor(x, requires_grad=True)
    kw = {"kernel_size": kernel, "dilation": dilation, "padding": padding, "stride": stride}
    tu, su = torch.nn.functional.unfold(tx, **kw), SF.unfold(sx, **kw)
    _compare(su, tu, 1e-6, 1e-6)
    tf_, sf_ = torch.nn.functional.fold(tu, (6, 7), **kw), SF.fold(su, (6, 7), **kw)
    _compare(sf_, tf_, 1e-5, 1e-5)
    g = RNG.standard_normal(tuple(tf_.shape)).astype(np.float32)
    (tf_ * torch.tensor(g)).sum().backward()
    (sf_ * strata.tensor(g)).sum().backward()
    _compare(sx.grad, tx.grad, 1e-5, 1e-5)
