"""The cpu fast paths of the dispatcher (issue 16) keep PyTorch's behaviour: promotion of Python numbers,
in-place ops written straight into the tensor, gradients a leaf takes without a copy, the cached NumPy
view, silenced floating-point warnings, and the fused LSTM step (with higher-order gradients). PyTorch
CPU is the oracle throughout."""

from __future__ import annotations

import gc
import operator
import pickle
import warnings
import weakref

import numpy as np
import pytest
import torch

import strata


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize(("dtype", "other"), [
    ("float32", 2.5), ("float32", 3), ("int32", 7), ("int32", 2.5), ("bool", 3), ("bool", 1.5), ("int8", 300),
    ("uint8", -1), ("float64", 1e300), ("float32", 1e300), ("int64", 2 ** 40 + 1), ("float16", 0.1),
])
@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv])
def test_tensor_with_python_number_matches_torch(dtype, other, op):
    """dtype and values of `t op number` and `number op t` for the common promotions."""
    if op is operator.sub and dtype == "bool":
        pytest.skip("bool subtraction is an error in both")
    base = np.array([0, 1, 2, 5], dtype=np.float64)
    s = strata.tensor(base).to(getattr(strata, dtype))
    t = torch.tensor(base).to(getattr(torch, dtype))
    for rs, rt in ((op(s, other), op(t, other)), (op(other, s), op(other, t))):
        assert str(rs.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
        np.testing.assert_allclose(rs.to(strata.float64).numpy(), rt.to(torch.float64).numpy(), rtol=1e-3)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("case", ["t-True", "True-t", "t-bool_t", "bool_t-t", "bool_t-bool_t", "t.sub_(True)",
                                  "bool_t-1"])
def test_subtraction_with_a_bool_operand_raises_as_torch(device, case):
    """PyTorch refuses `-` with any bool operand (a bool tensor or a Python bool): the same error and message."""
    def run(lib, t):
        b = t > 0
        return {"t-True": lambda: t - True, "True-t": lambda: True - t, "t-bool_t": lambda: t - b,
                "bool_t-t": lambda: b - t, "bool_t-bool_t": lambda: b - b, "t.sub_(True)": lambda: t.sub_(True),
                "bool_t-1": lambda: b - 1}[case]()

    with pytest.raises(RuntimeError) as want:
        run(torch, torch.arange(4.0))
    with pytest.raises(RuntimeError) as got:
        run(strata, strata.arange(4.0, device=device))
    assert str(got.value) == str(want.value)


def test_inplace_into_matches_the_general_path():
    """add_/mul_/sub_/div_ in place: values, overlapping views, broadcasting errors, dtype errors, half."""
    x = strata.arange(6.0).reshape(2, 3)
    x.add_(strata.ones(2, 3))
    x.mul_(2)
    x.sub_(0.5)
    x.div_(strata.full((2, 3), 2.0))
    np.testing.assert_allclose(x.numpy(), ((np.arange(6.0).reshape(2, 3) + 1) * 2 - 0.5) / 2)
    z = strata.arange(5.0)
    z[1:].add_(z[:-1])  # overlapping: the right side is read as before the write, as torch's result is
    zt = torch.arange(5.0)
    zt[1:].add_(zt[:-1].clone())
    np.testing.assert_array_equal(z.numpy(), zt.numpy())
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        strata.arange(4).div_(2)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        strata.ones(3).add_(strata.ones(2, 3))
    h = strata.ones(3, dtype=strata.float16)
    h.add_(0.1)
    assert h.dtype is strata.float16
    np.testing.assert_array_equal(h.numpy(), torch.ones(3, dtype=torch.float16).add_(0.1).numpy())
    w = strata.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        w.add_(1.0)


def test_leaf_takes_a_gradient_nothing_else_sees():
    """A gradient becomes .grad without a copy only when nothing else can see it: two leaves fed the
    same gradient get separate tensors, a hook's saved gradient is not changed by a later accumulation,
    and a second backward accumulates."""
    x, y = strata.ones(4, requires_grad=True), strata.ones(4, requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(10.0)
    np.testing.assert_array_equal(y.grad.numpy(), np.ones(4))
    seen = []
    w = strata.ones(3, requires_grad=True)
    w.register_hook(lambda g: seen.append(g))
    (w * 2).sum().backward()
    (w * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 4.0))
    np.testing.assert_array_equal(seen[0].numpy(), np.full(3, 2.0))
    g = strata.full((2,), 3.0)
    v = strata.ones(2, requires_grad=True)
    (v * 1).backward(g)
    v.grad.add_(1.0)
    np.testing.assert_array_equal(g.numpy(), np.full(2, 3.0))  # the caller's gradient is not the leaf's .grad


def test_linear_weight_gradient_is_row_major():
    """The weight of a linear layer gets a row-major gradient equal to torch's (no strided view)."""
    torch.manual_seed(0)
    tl = torch.nn.Linear(6, 4)
    sl = strata.nn.Linear(6, 4)
    sl.load_state_dict({k: strata.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    tl(torch.tensor(x)).relu().sum().backward()
    sl(strata.tensor(x)).relu().sum().backward()
    assert sl.weight.grad.stride() == (6, 1)
    np.testing.assert_allclose(sl.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sl.bias.grad.numpy(), tl.bias.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_numpy_view_is_the_callers_own():
    """numpy() shares memory but is a new array each time: reshaping it in place leaves the tensor alone."""
    t = strata.arange(6.0)
    a = t.numpy()
    assert a is not t.numpy()
    a.shape = (2, 3)
    a[1, 2] = 50.0
    assert t.shape == (6,)
    np.testing.assert_array_equal((t + 1).numpy(), np.array([1, 2, 3, 4, 5, 51.0]))


def test_float_errors_are_silent_and_numpy_state_is_kept():
    """Overflow, 0/0 and NaN casts give PyTorch's values without warnings; NumPy's own mode is untouched."""
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = strata.tensor([1.0, 0.0, 3e38]) / strata.tensor([0.0, 0.0, 1e-38])
        big = strata.tensor([3e38]) * 10.0
        cast = strata.tensor([float("nan")]).to(strata.int32)
    t = torch.tensor([1.0, 0.0, 3e38]) / torch.tensor([0.0, 0.0, 1e-38])
    np.testing.assert_array_equal(r.numpy(), t.numpy())
    assert np.isinf(big.numpy()).all()
    assert cast.dtype is strata.int32
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning):
        np.divide(np.ones(1), np.zeros(1))


def test_chunk_gradient_is_differentiable():
    """The gradient of a chunk (split) is itself differentiable under create_graph (second order)."""
    x0 = np.linspace(-1, 1, 8).astype(np.float64).reshape(2, 4)
    res = []
    for fw in (strata, torch):
        x = fw.tensor(x0, requires_grad=True)
        a, b = x.chunk(2, -1)
        (g,) = fw.autograd.grad((a.sigmoid() ** 2 * b).sum(), x, create_graph=True)
        (gg,) = fw.autograd.grad((g ** 2).sum(), x)
        res.append((_np(g), _np(gg)))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10)


@pytest.mark.parametrize("bias", [True, False])
def test_fused_lstm_matches_torch_to_second_order(bias):
    """The fused cpu LSTM step: outputs, states, every gradient, and the gradient of a gradient, as torch's."""
    torch.manual_seed(0)
    tl = torch.nn.LSTM(5, 7, 2, bias=bias)
    sl = strata.nn.LSTM(5, 7, 2, bias=bias)
    sl.load_state_dict({k: strata.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3, 5)).astype(np.float32)
    h0 = rng.standard_normal((2, 3, 7)).astype(np.float32)
    tx, sx = torch.tensor(x, requires_grad=True), strata.tensor(x, requires_grad=True)
    th, sh = torch.tensor(h0, requires_grad=True), strata.tensor(h0, requires_grad=True)
    to, (thn, tcn) = tl(tx, (th, th * 0.5))
    so, (shn, scn) = sl(sx, (sh, sh * 0.5))
    for a, b in ((so, to), (shn, thn), (scn, tcn)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    (to.sum() + tcn.pow(2).sum()).backward()
    (so.sum() + scn.pow(2).sum()).backward()
    np.testing.assert_allclose(sx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sh.grad.numpy(), th.grad.numpy(), rtol=1e-5, atol=1e-6)
    for (name, tp), (_, sp) in zip(tl.named_parameters(), sl.named_parameters(), strict=True):
        np.testing.assert_allclose(sp.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
    sx2, tx2 = strata.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (gs,) = strata.autograd.grad(sl(sx2)[0].pow(2).sum(), sx2, create_graph=True)
    (gt,) = torch.autograd.grad(tl(tx2)[0].pow(2).sum(), tx2, create_graph=True)
    np.testing.assert_allclose(_np(gs), _np(gt), rtol=1e-4, atol=1e-6)
    (ggs,) = strata.autograd.grad(gs.pow(2).sum(), sx2)
    (ggt,) = torch.autograd.grad(gt.pow(2).sum(), tx2)
    np.testing.assert_allclose(ggs.numpy(), ggt.numpy(), rtol=1e-3, atol=1e-6)


def test_pickled_views_still_share_their_storage():
    """A tensor and its view, pickled together (as DataLoader workers send them), still share memory: the
    cached NumPy views are remade from the storage, not copied apart from it."""
    a = strata.ones(3) + 1
    b = a[1:]
    b.numpy()
    a2, b2 = pickle.loads(pickle.dumps((a, b)))
    b2.add_(5.0)
    np.testing.assert_array_equal(a2.numpy(), [2.0, 7.0, 7.0])


def test_recorded_outputs_are_freed_by_reference_counting():
    """A recorded op's output is not in a reference cycle with its node: dropping it frees it at once
    (with the cyclic collector off), and third-order gradients through saved outputs are still torch's."""
    gc.disable()
    try:
        x = strata.ones(1000, requires_grad=True)
        for make in (lambda: x.exp(), lambda: x * 2.0 + x, lambda: x.reshape(10, 100) @ strata.ones(100, 3)):
            ref = weakref.ref(make())
            assert ref() is None
    finally:
        gc.enable()
    x0 = np.linspace(-1, 1, 5)
    res = []
    for fw in (strata, torch):
        x = fw.tensor(x0, requires_grad=True)
        y = (x.exp() * x.sigmoid() + x.tanh() / (x * x + 1)) @ fw.ones(5, dtype=x.dtype)
        (g,) = fw.autograd.grad(y, x, create_graph=True)
        (gg,) = fw.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = fw.autograd.grad(gg.sum(), x)
        res.append([_np(t) for t in (g, gg, ggg)])
    for a, b in zip(*res, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("sa", "sb"), [((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (4, 5)), ((2, 3, 0), (0, 5)),
                                        ((0, 3, 4), (4, 5)), ((2, 3, 4), (4, 0))])
def test_batched_times_matrix_folds_like_torch(sa, sb):
    """(..., k) @ (k, n), folded into one product: values, shapes and both gradients as torch's, also for
    a non-contiguous left operand and empty dims."""
    rng = np.random.default_rng(0)
    a0, b0 = rng.standard_normal(sa), rng.standard_normal(sb)
    res = []
    for fw in (strata, torch):
        a, b = fw.tensor(a0, requires_grad=True), fw.tensor(b0, requires_grad=True)
        y = a @ b
        z = a.transpose(0, -2) @ b if len(sa) > 2 else y
        (y.tanh().sum() + z.sin().sum()).backward()
        res.append((_np(y), _np(z), a.grad.numpy(), b.grad.numpy()))
    for s, t in zip(*res, strict=True):
        assert s.shape == t.shape
        np.testing.assert_allclose(s, t, rtol=1e-10, atol=1e-12)


def test_leaf_gradients_are_not_copied(monkeypatch):
    """The backward of a small MLP runs no copy kernel: each parameter takes its gradient as computed."""
    from strata.framework import op_table

    copies = []
    kernels = op_table._KERNELS["cpu"]
    copy = kernels["copy"]
    monkeypatch.setitem(kernels, "copy", lambda *a: (copies.append(tuple(a[0].shape)), copy(*a))[1])
    m = strata.nn.Sequential(strata.nn.Linear(6, 5), strata.nn.ReLU(), strata.nn.Linear(5, 3))
    loss = strata.nn.functional.cross_entropy(m(strata.randn(4, 6)), strata.tensor([0, 1, 2, 0]))
    copies.clear()
    loss.backward()
    assert copies == []
    assert all(p.grad is not None and p.grad.is_contiguous() for p in m.parameters())
