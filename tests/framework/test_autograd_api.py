"""The autograd API against PyTorch CPU: `strata.autograd.grad` (first and second order, allow_unused,
materialize_grads, errors), `strata.autograd.backward` (several roots, `inputs=`), `create_graph`,
tensor hooks, `retain_grad` and the non-leaf `.grad` warning, custom `Function`s, `.grad` assignment,
`detach_`, and grad-mode helpers; on "cpu" and "cuda"."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import strata
import strata.autograd
from strata.framework.autograd import NON_LEAF_GRAD_WARNING

from .conftest import assert_same, pair

RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 3)).astype(np.float32)
W = RNG.standard_normal((3, 4)).astype(np.float32)
POS = (RNG.random((2, 3)) + 0.5).astype(np.float32)


def test_module_is_importable_like_torch_autograd() -> None:
    import strata.autograd as ag

    assert ag is strata.autograd is strata.framework.autograd
    assert ag.grad is strata.autograd.grad and ag.Function and ag.backward and ag.no_grad is strata.no_grad


def test_grad_first_order_matches_torch(device: str) -> None:
    (sx, tx), (sw, tw) = pair(X, device=device, requires_grad=True), pair(W, device=device, requires_grad=True)
    sy = (sx @ sw).tanh().sum() * 2 + (sx * sx).mean()
    ty = (tx @ tw).tanh().sum() * 2 + (tx * tx).mean()
    sg = strata.autograd.grad(sy, [sx, sw])
    tg = torch.autograd.grad(ty, [tx, tw])
    assert isinstance(sg, tuple) and len(sg) == 2
    assert_same(sg, tg, rtol=1e-4, atol=1e-5, device=device)
    assert sx.grad is None and sw.grad is None  # grad() leaves .grad alone
    assert not sg[0].requires_grad and sg[0].grad_fn is None


def test_grad_with_grad_outputs_and_non_leaf_input(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    sv, tv = pair(W[:2, :2], device=device)
    sh, th = sx.exp(), tx.exp()
    so, to = sh[:, :2] * 3, th[:, :2] * 3
    sg = strata.autograd.grad([so], [sh, sx], grad_outputs=[sv])
    tg = torch.autograd.grad([to], [th, tx], grad_outputs=[tv])
    assert_same(sg, tg, rtol=1e-5, device=device)


def _second(f: Callable[[Any, Any], Any], lib: Any, x: Any, w: Any) -> tuple:
    """d/dx and d/dw of sum(d f / d x)."""
    (gx,) = lib.autograd.grad(f(x, w), x, create_graph=True)
    return lib.autograd.grad(gx.sum(), [x, w], allow_unused=True)


SECOND_ORDER: dict[str, Callable[[Any, Any], Any]] = {
    "mul-pow": lambda x, w: (x ** 3 * w[:, :3].sum()).sum(),
    "exp-div": lambda x, w: (x.exp() / (w[0, 0] * w[0, 0] + 1)).sum(),
    "tanh-sigmoid": lambda x, w: (x.tanh() * x.sigmoid()).sum(),
    "matmul": lambda x, w: ((x @ w) ** 2).sum(),
    "mean-var": lambda x, w: x.var(dim=1).sum() + (x * x).mean(),
    "softmax": lambda x, w: ((x.softmax(dim=-1) * w[:, :3].sum(0)).sum()),
    "log_softmax": lambda x, w: (x.log_softmax(dim=1)[:, 0] * 1.0).sum(),
    "relu-max": lambda x, w: (x.relu() * x).sum() + (x * x).max(),
    "broadcast-expand": lambda x, w: (x.sum(0, keepdim=True).expand(2, 3) * x).sum(),
    "slice": lambda x, w: (x[:, :2] ** 3).sum() + (x ** 2).sum(),
}


@pytest.mark.parametrize("case", list(SECOND_ORDER))
def test_second_order_matches_torch(case: str, device: str) -> None:
    f = SECOND_ORDER[case]
    (sx, tx), (sw, tw) = pair(X, device=device, requires_grad=True), pair(W, device=device, requires_grad=True)
    sg, tg = _second(f, strata, sx, sw), _second(f, torch, tx, tw)
    for s, t in zip(sg, tg, strict=True):
        if t is None:
            assert s is None
        else:
            assert_same(s, t, rtol=1e-4, atol=1e-4, device=device)


def test_backward_create_graph_gives_differentiable_grad(device: str) -> None:
    sx, tx = pair(POS, device=device, requires_grad=True)
    with pytest.warns(UserWarning, match="create_graph=True will create a reference cycle"):
        (sx.log() * sx * sx).sum().backward(create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns the same, once per process
        (tx.log() * tx * tx).sum().backward(create_graph=True)
    for x in (sx, tx):
        assert x.grad.requires_grad and x.grad.grad_fn is not None
    sg2 = strata.autograd.grad(sx.grad.sum(), sx)
    tg2 = torch.autograd.grad(tx.grad.sum(), tx)
    assert_same(sg2, tg2, rtol=1e-4, device=device)


def test_third_order(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    out = []
    for lib, x in ((strata, sx), (torch, tx)):
        g = (x ** 4).sum()
        for _ in range(3):
            (g,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        out.append(g)
    assert_same(out[0], out[1], rtol=1e-4, atol=1e-4, device=device)


def test_unused_inputs(device: str) -> None:
    (sx, tx), (sz, tz) = pair(X, device=device, requires_grad=True), pair(POS, device=device, requires_grad=True)
    for lib, x, z in ((strata, sx, sz), (torch, tx, tz)):
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad((x * 2).sum(), [x, z])
        assert "The differentiated Tensor at index 1 appears to not have been used in the graph. Set " \
               "allow_unused=True if this is the desired behavior." in str(e.value)
        gx, gz = lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
        assert gz is None
        gx, gz = lib.autograd.grad((x * 2).sum(), [x, z], materialize_grads=True)
        assert gz.shape == z.shape and float(gz.abs().sum()) == 0.0
        with pytest.raises(ValueError, match="allow_unused"):
            lib.autograd.grad((x * 2).sum(), [x, z], allow_unused=False, materialize_grads=True)


@pytest.mark.parametrize("case", ["input-no-grad", "output-no-grad", "non-scalar", "shape", "freed"])
def test_grad_errors_match_torch(case: str, device: str) -> None:
    def run(lib: Any, x: Any, plain: Any) -> None:
        if case == "input-no-grad":
            lib.autograd.grad((x * 2).sum(), [plain])
        elif case == "output-no-grad":
            lib.autograd.grad(plain.sum(), [x])
        elif case == "non-scalar":
            lib.autograd.grad(x * 2, [x])
        elif case == "shape":
            lib.autograd.grad(x * 2, [x], grad_outputs=[x.detach()[0]])
        else:
            y = (x * x).sum()
            lib.autograd.grad(y, [x])
            lib.autograd.grad(y, [x])

    (sx, tx), (sp, tp) = pair(X, device=device, requires_grad=True), pair(X, device=device)
    with pytest.raises(RuntimeError) as te:
        run(torch, tx, tp)
    with pytest.raises(RuntimeError) as se:
        run(strata, sx, sp)
    expected = str(te.value).replace("torch.Size", "strata.Size").split(" (Triggered")[0]
    assert str(se.value) == expected


def test_backward_several_roots_and_inputs(device: str) -> None:
    (sx, tx), (sw, tw) = pair(X, device=device, requires_grad=True), pair(W, device=device, requires_grad=True)
    sv, tv = pair(np.ones((2, 4), np.float32) * 0.5, device=device)
    strata.autograd.backward([(sx @ sw), (sx * sx).sum()], [sv, None])
    torch.autograd.backward([(tx @ tw), (tx * tx).sum()], [tv, None])
    assert_same([sx.grad, sw.grad], [tx.grad, tw.grad], rtol=1e-5, device=device)
    # inputs=: only the named tensors accumulate
    (sx @ sw).sum().backward(inputs=[sw])
    (tx @ tw).sum().backward(inputs=[tw])
    assert_same([sx.grad, sw.grad], [tx.grad, tw.grad], rtol=1e-5, device=device)
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        strata.autograd.backward([sx.sum(), sx.sum()], [None])


def test_leaf_hook_replaces_grad_and_sees_the_sum(device: str) -> None:
    calls: dict[str, list] = {"s": [], "t": []}
    sx, tx = pair(X, device=device, requires_grad=True)
    hs = sx.register_hook(lambda g: calls["s"].append(g.detach().cpu().tolist()) or g * 3)
    ht = tx.register_hook(lambda g: calls["t"].append(g.detach().tolist()) or g * 3)
    (sx * sx + sx).sum().backward()  # x used three times: the hook runs once, with the total
    (tx * tx + tx).sum().backward()
    assert len(calls["s"]) == len(calls["t"]) == 1
    np.testing.assert_allclose(calls["s"][0], calls["t"][0], rtol=1e-6)
    assert_same(sx.grad, tx.grad, device=device)
    hs.remove()
    ht.remove()
    hs.remove()  # a second remove is a no-op
    (sx * 2).sum().backward()
    (tx * 2).sum().backward()
    assert_same(sx.grad, tx.grad, device=device)
    assert len(calls["s"]) == 1


def test_non_leaf_hook_changes_upstream_grads(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    res = []
    for x in (sx, tx):
        h = x.exp()
        with h.register_hook(lambda g: g * 0 + 1):  # the handle is a context manager too
            (h * h).sum().backward()
        res.append(x.grad)
        seen: list = []
        h2 = x * 2
        h2.register_hook(lambda g, seen=seen: seen.append(1))  # returning None keeps the grad
        h2.sum().backward()
        assert seen == [1]
    assert_same(res[0], res[1], device=device)
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        strata.ones(2).register_hook(lambda g: g)


def test_retain_grad_and_non_leaf_warning(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    sh, th = sx * 3, tx * 3
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed") as rec:
        assert sh.grad is None
    assert str(rec[0].message) == NON_LEAF_GRAD_WARNING
    with pytest.warns(UserWarning) as trec:
        assert th.grad is None
    assert str(trec[0].message).startswith(NON_LEAF_GRAD_WARNING)  # torch appends the C++ location
    for h in (sh, th):
        h.retain_grad()
        h.register_hook(lambda g: g * 2)  # the retained grad sees the hooks' result
        assert h.retains_grad
        (h * h).sum().backward()
    assert_same(sh.grad, th.grad, device=device)
    assert_same(sx.grad, tx.grad, device=device)
    assert not sx.retains_grad
    sx.retain_grad()  # no-op on a leaf
    assert not sx.retains_grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        strata.ones(2).retain_grad()


def test_retained_grad_also_filled_by_autograd_grad(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    hs = []
    for lib, x in ((strata, sx), (torch, tx)):
        h = x * 3
        h.retain_grad()
        lib.autograd.grad((h * h).sum(), x)
        assert x.grad is None
        hs.append(h.grad)
    assert_same(hs[0], hs[1], device=device)


class _SCube(strata.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any, k: float) -> Any:
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * x * k

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        assert ctx.needs_input_grad == (True, False)
        return g * 3 * x * x * ctx.k, None


class _TCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Any, k: float) -> Any:
        ctx.save_for_backward(x)
        ctx.k = k
        return x * x * x * k

    @staticmethod
    def backward(ctx: Any, g: Any) -> Any:
        (x,) = ctx.saved_tensors
        return g * 3 * x * x * ctx.k, None


def test_custom_function(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    sy, ty = _SCube.apply(sx, 0.5), _TCube.apply(tx, 0.5)
    assert (sy.grad_fn.name(), ty.grad_fn.name()) == ("_SCubeBackward", "_TCubeBackward")
    assert_same(sy, ty, device=device)
    (sy * sy).sum().backward()
    (ty * ty).sum().backward()
    assert_same(sx.grad, tx.grad, rtol=1e-5, device=device)
    with strata.no_grad():
        assert _SCube.apply(sx, 1.0).grad_fn is None


class _SplitSigns(strata.autograd.Function):
    """Two outputs, forward without ctx plus setup_context (PyTorch 2's style)."""

    @staticmethod
    def forward(x: Any) -> Any:
        return x.relu(), (-x).relu()

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx: Any, gp: Any, gn: Any) -> Any:
        (x,) = ctx.saved_tensors
        pos = (x > 0).float()
        return gp * pos - gn * (1 - pos)


def test_custom_function_two_outputs_setup_context(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    p, n = _SplitSigns.apply(sx)
    (p * 2 + n * n).sum().backward()
    (tx.relu() * 2 + (-tx).relu() ** 2).sum().backward()
    assert_same(sx.grad, tx.grad, rtol=1e-5, device=device)


def test_custom_function_wrong_gradient_count() -> None:
    class Bad(strata.autograd.Function):
        @staticmethod
        def forward(ctx: Any, a: Any, b: Any) -> Any:
            return a * b

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g

    a, b = strata.ones(2, requires_grad=True), strata.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"function BadBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        Bad.apply(a, b).sum().backward()


def test_grad_assignment_checks(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    for x, lib in ((sx, strata), (tx, torch)):
        with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type int"):
            x.grad = 3
        with pytest.raises(RuntimeError, match="attempting to assign a gradient of size"):
            x.grad = lib.ones(2, device=x.device)
        with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype"):
            x.grad = lib.ones(2, 3, dtype=lib.float64, device=x.device)
        x.grad = lib.ones(2, 3, device=x.device)
        g = x.grad
        (x * 2).sum().backward()
        assert x.grad is g  # accumulated in place, as PyTorch does
        x.grad = None
        assert x.grad is None
    if device == "cuda":
        with pytest.raises(RuntimeError, match="different device"):
            sx.grad = strata.ones(2, 3)


def test_detach_and_detach_(device: str) -> None:
    sx, tx = pair(X, device=device, requires_grad=True)
    for x in (sx, tx):
        y = x * 2
        d = y.detach()
        assert not d.requires_grad and d.is_leaf and d.grad_fn is None
        y.detach_()
        assert not y.requires_grad and y.is_leaf and y.grad_fn is None
        with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach\\(\\) instead."):
            (x * 2)[:1].detach_()
        assert x.requires_grad_(False) is x and not x.requires_grad
        x.requires_grad_()
        assert x.requires_grad
        with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
            (x * 2).requires_grad_(False)


def test_set_grad_enabled_as_call_context_and_decorator() -> None:
    x = strata.ones(2, requires_grad=True)
    with strata.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert strata.is_grad_enabled()
    strata.set_grad_enabled(False)
    try:
        assert not strata.is_grad_enabled()
    finally:
        strata.set_grad_enabled(True)

    @strata.set_grad_enabled(False)
    def f() -> Any:
        return x * 2
    assert strata.is_grad_enabled()
    assert not f().requires_grad and strata.is_grad_enabled()


def test_accumulate_grad_node_is_shared() -> None:
    x = strata.ones(2, requires_grad=True)
    a, b = x * 2, x + 1
    assert a.grad_fn.next_functions[0][0] is b.grad_fn.next_functions[0][0]
    assert a.grad_fn.next_functions[0][0].variable is x


def test_inference_mode_as_context_and_decorator() -> None:
    x = strata.ones(2, requires_grad=True)
    with strata.inference_mode():
        assert not (x * 2).requires_grad
    with strata.inference_mode(False):
        assert (x * 2).requires_grad

    @strata.inference_mode()
    def f() -> bool:
        return (x * 2).requires_grad

    assert f() is False and (x * 2).requires_grad
