"""The host-side shortcuts of the framework's "cuda" ops (issue 17: host Python per op) keep their results:
memoized kernel geometry and view layouts must follow the operands' strides, not only their shapes; the
matmul operands viewed as (B, r, c) directly must agree with the copying path; clip_grad_norm_'s one-vector
norms must give the same bits as the per-gradient norms. NumPy and PyTorch CPU are the oracles."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import strata
from strata.framework import kernels
from strata.framework.nn.utils import clip_grad


def _host(t: strata.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def test_geometry_memo_follows_strides_not_only_shapes():
    """a + b for one shape with b row-major, transposed, broadcast and sliced, interleaved (each launch
    looks its geometry up by shape and strides), against NumPy."""
    rng = np.random.default_rng(1)
    a_np = rng.standard_normal((5, 5)).astype(np.float32)
    b_np = rng.standard_normal((5, 5)).astype(np.float32)
    r_np = rng.standard_normal((1, 5)).astype(np.float32)
    big_np = rng.standard_normal((10, 5)).astype(np.float32)
    a, b, r, big = (strata.tensor(x, device="cuda") for x in (a_np, b_np, r_np, big_np))
    for _ in range(2):
        np.testing.assert_array_equal(_host(a + b), a_np + b_np)
        np.testing.assert_array_equal(_host(a + b.t()), a_np + b_np.T)
        np.testing.assert_array_equal(_host(a + r), a_np + r_np)
        np.testing.assert_array_equal(_host(a + big[::2]), a_np + big_np[::2])
        np.testing.assert_array_equal(_host(b.t().contiguous()), b_np.T)
        np.testing.assert_allclose(_host(big[::2].sum(0)), big_np[::2].astype(np.float64).sum(0), rtol=1e-5, atol=1e-6)


def test_geometry_memo_is_bounded(monkeypatch):
    """A full memo starts over rather than growing without bound; results stay right across the reset."""
    monkeypatch.setattr(kernels, "_GEOMETRIES_MAX", 3)
    kernels._GEOMETRIES.clear()
    x_np = np.arange(24, dtype=np.float32)
    x = strata.tensor(x_np, device="cuda")
    for n in range(2, 9):
        np.testing.assert_array_equal(_host(x[:n] * x[:n]), x_np[:n] * x_np[:n])
        assert len(kernels._GEOMETRIES) <= 3


def test_geometry_rejects_too_many_dims():
    """More than MAXD dims that do not coalesce: the typed error, each time (nothing memoized)."""
    shape = (2,) * (kernels.MAXD + 1)
    x = strata.ones(*shape, device="cuda").permute(*reversed(range(kernels.MAXD + 1)))
    for _ in range(2):
        with pytest.raises(RuntimeError, match="more than 6 dims"):
            x + x.contiguous()


def test_view_memo_follows_strides():
    """view() of one shape succeeds on a row-major tensor and fails on its transpose, in either order, and
    reshape copies the transpose; -1 is inferred; a bad request raises every time."""
    x = strata.arange(12.0, device="cuda").reshape(3, 4)
    xt = x.t()
    for _ in range(2):
        assert x.view(4, 3).stride() == (3, 1)
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            xt.view(12)
        np.testing.assert_array_equal(_host(xt.reshape(12)), np.arange(12.0).reshape(3, 4).T.reshape(12))
        assert x.view(-1, 6).shape == (2, 6)
        with pytest.raises(RuntimeError, match="invalid for input of size 12"):
            x.view(5, -1)


def test_view_keeps_autograd():
    """A view of a tensor requiring grad records ViewBackward0; of one that does not, no node."""
    w = strata.ones(2, 3, device="cuda", requires_grad=True)
    v = w.view(6)
    assert v.grad_fn is not None and v.grad_fn.name() == "ViewBackward0"
    (v * strata.arange(6.0, device="cuda")).sum().backward()
    np.testing.assert_array_equal(_host(w.grad), np.arange(6.0).reshape(2, 3))
    assert w.detach().view(6).grad_fn is None


def test_tensors_on_one_cuda_device_share_its_device_object():
    """"cuda" and "cuda:0" tensors carry one device object, so the ops' same-device test is an identity."""
    a = strata.zeros(2, device="cuda")
    b = strata.ones(2, device="cuda:0")
    c = strata.zeros(2).to("cuda")
    assert a.device is b.device is c.device
    assert (a + b).device is a.device


@pytest.mark.parametrize(("sa", "sb"), [
    ((4, 3), (3, 5)),                 # plain 2-D
    ((2, 4, 3), (3, 5)),              # weight broadcast over the batch
    ((4, 3), (2, 3, 5)),
    ((2, 1, 4, 3), (3, 3, 5)),        # batch dims that no view flattens: the copying path
    ((2, 3, 4, 3), (2, 3, 3, 5)),
])
def test_matmul_batched_operands_match_torch(sa, sb):
    """matmul over broadcast batch dims (operands viewed as (B, r, c), or copied when they cannot be), with
    the transposed weight layout too, against PyTorch CPU; gradients included."""
    rng = np.random.default_rng(2)
    a_np = rng.standard_normal(sa).astype(np.float32)
    b_np = rng.standard_normal(sb).astype(np.float32)
    a = strata.tensor(a_np, device="cuda", requires_grad=True)
    b = strata.tensor(b_np, device="cuda", requires_grad=True)
    ta, tb = torch.tensor(a_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
    out, tout = a @ b, ta @ tb
    assert tuple(out.shape) == tuple(tout.shape)
    np.testing.assert_allclose(_host(out), tout.detach().numpy(), rtol=1e-5, atol=1e-5)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(_host(a.grad), ta.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_host(b.grad), tb.grad.numpy(), rtol=1e-5, atol=1e-5)
    bt = strata.tensor(np.ascontiguousarray(np.swapaxes(b_np, -1, -2)), device="cuda").mT  # column-major
    np.testing.assert_allclose(_host(a.detach() @ bt), tout.detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_vector_path_same_bits(dtype):
    """On "cuda" the per-gradient 2-norms come as one vector: the same bits as each gradient's own norm
    stacked (the general path), and close to NumPy's float64 norm; the gradients are scaled by it."""
    rng = np.random.default_rng(3)
    shapes = [(7, 5), (5,), (3, 4, 2), (64,)]
    d = getattr(strata, dtype)
    grads = [strata.tensor(rng.standard_normal(s) * 3, device="cuda").to(d) for s in shapes]
    fast = clip_grad._cuda_norms2(grads)
    assert fast is not None
    general = strata.stack([clip_grad._vector_norm(g, 2.0) for g in grads])
    np.testing.assert_array_equal(_host(fast), _host(general))
    params = []
    for g in grads:
        p = strata.zeros(g.shape, device="cuda", dtype=d, requires_grad=True)
        p.grad = g.clone()
        params.append(p)
    total = strata.nn.utils.clip_grad_norm_(params, 1.0)
    want = np.sqrt(sum(float((_host(g).astype(np.float64) ** 2).sum()) for g in grads))
    np.testing.assert_allclose(total.item(), want, rtol=1e-5)
    np.testing.assert_array_equal(_host(total), _host(clip_grad._vector_norm(general, 2.0)))
    scale = min(1.0, 1.0 / (want + 1e-6))
    for p, g in zip(params, grads, strict=True):
        np.testing.assert_allclose(_host(p.grad), _host(g) * scale, rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_vector_path_only_where_it_applies():
    """Mixed dtypes, a 0-dim or empty gradient, or "cpu": the general path (None from the vector path)."""
    f32 = strata.ones(3, device="cuda")
    assert clip_grad._cuda_norms2([f32, strata.ones(3, device="cuda", dtype=strata.float64)]) is None
    assert clip_grad._cuda_norms2([f32, strata.ones((), device="cuda")]) is None
    assert clip_grad._cuda_norms2([f32, strata.ones(0, device="cuda")]) is None
    assert clip_grad._cuda_norms2([strata.ones(3)]) is None
    assert clip_grad._cuda_norms2([strata.ones(3, device="cuda", dtype=strata.float16)]) is None
    total = clip_grad.get_total_norm([f32, strata.full((), 2.0, device="cuda")])
    assert total.item() == pytest.approx(np.sqrt(3 + 4))


def test_cuda_inplace_binary_writes_into_self(monkeypatch):
    """g.mul_(0-dim factor), add_(tensor), sub_(number), div_ on "cuda" run one kernel into self (no copy
    kernel), with PyTorch's values."""
    rng = np.random.default_rng(4)
    g_np = rng.standard_normal((4, 6)).astype(np.float32)
    o_np = rng.standard_normal((4, 6)).astype(np.float32)
    g, o = strata.tensor(g_np, device="cuda"), strata.tensor(o_np, device="cuda")
    tg, to = torch.tensor(g_np), torch.tensor(o_np)
    c = strata.tensor(0.37, device="cuda")

    def no_copy(*a, **k):
        raise AssertionError("the in-place op went through a result tensor and a copy")
    monkeypatch.setattr(kernels, "copy", no_copy)
    assert g.mul_(c) is g
    g.add_(o)
    g.sub_(1.5)
    g.div_(o[0])  # broadcast over the rows
    g.add_(g)  # self as the other operand: each element read and written by one thread
    tg.mul_(torch.tensor(0.37)).add_(to).sub_(1.5).div_(to[0])
    tg.add_(tg)
    np.testing.assert_array_equal(_host(g), tg.numpy())


def test_cuda_inplace_binary_general_cases_unchanged():
    """What the shortcut leaves to the general path keeps PyTorch's results and errors: an overlapping view
    as the other operand, a transposed self, half, promotion and broadcast errors, autograd on a non-leaf."""
    z = strata.arange(5.0, device="cuda")
    z[1:].add_(z[:-1])
    zt = torch.arange(5.0)
    zt[1:].add_(zt[:-1].clone())
    np.testing.assert_array_equal(_host(z), zt.numpy())
    x_np = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = strata.tensor(x_np, device="cuda")
    x.t().mul_(strata.tensor([1.0, 2.0], device="cuda"))
    np.testing.assert_array_equal(_host(x), x_np * np.array([[1.0], [2.0]], np.float32))
    h = strata.ones(3, dtype=strata.float16, device="cuda")
    h.add_(0.1)
    np.testing.assert_array_equal(_host(h), (torch.ones(3, dtype=torch.float16) + 0.1).numpy())
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        strata.arange(4, device="cuda").div_(2)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        strata.ones(3, device="cuda").add_(strata.ones(2, 3, device="cuda"))
    w = strata.ones(3, device="cuda", requires_grad=True)
    y = w * 2
    y.mul_(strata.tensor([1.0, 2.0, 3.0], device="cuda"))
    y.sum().backward()
    np.testing.assert_array_equal(_host(w.grad), [2.0, 4.0, 6.0])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int32", "bool"])
def test_tensor_number_ops_one_kernel_same_bits(dtype, monkeypatch):
    """t op number and number op t on "cuda" take the number as a kernel argument (no fill kernel): the bits
    of the two-launch way (the number filled into a 0-dim tensor of the compute dtype first), and PyTorch's
    dtypes and values."""
    rng = np.random.default_rng(5)
    base = np.abs(rng.uniform(-4, 4, size=(3, 5)).round(2)) + (0.5 if dtype == "uint8" else 0)
    if dtype not in ("uint8", "bool"):
        base[0] *= -1
    t = strata.tensor(base, device="cuda").to(getattr(strata, dtype))
    tt = torch.tensor(base).to(getattr(torch, dtype))
    ops = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "sub": lambda x, y: x - y,
           "div": lambda x, y: x / y, "pow": lambda x, y: x ** y}
    cases = [(n, name, left) for n in ([3, 0.1, 2.5, True] if dtype != "bool" else [True, 2, 0.5])
             for name in ops for left in (False, True)
             if not (name == "sub" and (dtype == "bool" or n is True))  # (PyTorch rejects bool subtraction)
             and not (name == "pow" and (left or dtype in ("uint8", "bool")))]
    got = {}
    with monkeypatch.context() as m:
        def no_fill(*a, **k):
            raise AssertionError("a number operand was filled into a tensor by a kernel of its own")
        m.setattr(kernels, "fill", no_fill)
        for n, name, left in cases:
            got[(n, name, left)] = ops[name](n, t) if left else ops[name](t, n)
    for n, name, left in cases:
        g = got[(n, name, left)]
        s0 = strata.full((), n, dtype=g.dtype, device="cuda")  # the two-launch way's operand
        ref = ops[name](s0, t) if left else ops[name](t, s0)
        assert _host(g).tobytes() == _host(ref).tobytes(), (n, name, left)  # (bytes: NaNs compare too)
        want = ops[name](n, tt) if left else ops[name](tt, n)
        assert str(g.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], (n, name, left)
        np.testing.assert_allclose(_host(g).astype(np.float64), want.to(torch.float64).numpy(), rtol=1e-2, atol=1e-2)
