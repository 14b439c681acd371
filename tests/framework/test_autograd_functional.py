"""strata.autograd.functional against torch.autograd.functional (the oracle, PyTorch 2.13 CPU): values,
shapes, tuple conventions, create_graph (results differentiable, linked to the caller's graph), strict
mode and the errors on bad input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import strata
import strata.autograd.functional as SF

torch = pytest.importorskip("torch")
TF = torch.autograd.functional

RNG = np.random.default_rng(16)
A = RNG.standard_normal(3)
B = RNG.standard_normal((2, 3))
V3 = RNG.standard_normal(3)
V23 = RNG.standard_normal((2, 3))


def _t(lib: Any, a: Any, requires_grad: bool = False) -> Any:
    return lib.tensor(a, dtype=lib.float64, requires_grad=requires_grad)


def _np(x: Any) -> Any:
    if isinstance(x, tuple):
        return tuple(_np(e) for e in x)
    return np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x)


def _assert_close(ours: Any, theirs: Any) -> None:
    """Same nesting, shapes and values (float64 on both sides)."""
    assert isinstance(ours, tuple) == isinstance(theirs, tuple), (type(ours), type(theirs))
    if isinstance(ours, tuple):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            _assert_close(o, t)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(_np(ours), _np(theirs), rtol=1e-10, atol=1e-12)


# one function body for both libraries: `lib` is strata or torch
def f_two(lib: Any) -> Callable[..., Any]:
    return lambda x, y: ((x * y).sin() + x.exp(), (y * y).sum(dim=1))


def f_one(lib: Any) -> Callable[..., Any]:
    return lambda x: (x * x).tanh() * 2.0


def f_scalar(lib: Any) -> Callable[..., Any]:
    return lambda x: (x ** 3).sum() * x.sin().sum()


def f_scalar2(lib: Any) -> Callable[..., Any]:
    return lambda x, y: ((x * y).exp().sum() + (y ** 2).sum() * x.sum())


def test_jacobian_tuple_inputs_and_outputs() -> None:
    ours = SF.jacobian(f_two(strata), (_t(strata, A), _t(strata, B)))
    theirs = TF.jacobian(f_two(torch), (_t(torch, A), _t(torch, B)))
    _assert_close(ours, theirs)
    assert tuple(ours[0][1].shape) == (2, 3, 2, 3) and not ours[0][1].requires_grad


@pytest.mark.parametrize("case", ["tensor->tensor", "tensor->tuple", "tuple->tensor"])
def test_jacobian_tuple_conventions(case: str) -> None:
    args: tuple[np.ndarray, ...]
    if case == "tensor->tensor":
        make, args = (lambda lib: f_one(lib)), (A,)
    elif case == "tensor->tuple":
        make, args = (lambda lib: (lambda x: (x.exp(), x.sum()))), (A,)
    else:
        make, args = (lambda lib: (lambda x, y: (x * y).sum(dim=0))), (A, B)

    def inputs(lib: Any) -> Any:
        ts = tuple(_t(lib, a) for a in args)
        return ts[0] if len(ts) == 1 else ts
    _assert_close(SF.jacobian(make(strata), inputs(strata)), TF.jacobian(make(torch), inputs(torch)))


def test_jacobian_unused_input_is_zero_or_strict_error() -> None:
    def make(lib: Any) -> Callable[..., Any]:
        return lambda x, y: x * 2.0
    ours = SF.jacobian(make(strata), (_t(strata, A), _t(strata, B)))
    _assert_close(ours, TF.jacobian(make(torch), (_t(torch, A), _t(torch, B))))
    assert not ours[1].numpy().any()
    with pytest.raises(RuntimeError, match="independent of input 1"):
        SF.jacobian(make(strata), (_t(strata, A), _t(strata, B)), strict=True)


def test_jacobian_create_graph_is_differentiable_and_linked() -> None:
    # the Jacobian stays differentiable, and reaches back to the caller's x (which requires grad)
    results = []
    for lib, fn in ((strata, SF), (torch, TF)):
        x = _t(lib, A, requires_grad=True)
        jac = fn.jacobian(f_one(lib), x, create_graph=True)
        assert jac.requires_grad
        (jac * jac).sum().backward()
        results.append((jac, x.grad))
    _assert_close(results[0][0], results[1][0])
    _assert_close(results[0][1], results[1][1])


def test_hessian_single_and_tuple_inputs() -> None:
    _assert_close(SF.hessian(f_scalar(strata), _t(strata, A)), TF.hessian(f_scalar(torch), _t(torch, A)))
    ours = SF.hessian(f_scalar2(strata), (_t(strata, A), _t(strata, B)))
    _assert_close(ours, TF.hessian(f_scalar2(torch), (_t(torch, A), _t(torch, B))))
    assert tuple(ours[0][1].shape) == (3, 2, 3) and tuple(ours[1][1].shape) == (2, 3, 2, 3)


def test_hessian_create_graph() -> None:
    h = SF.hessian(f_scalar(strata), _t(strata, A), create_graph=True)
    assert h.requires_grad and not SF.hessian(f_scalar(strata), _t(strata, A)).requires_grad
    _assert_close(h, TF.hessian(f_scalar(torch), _t(torch, A), create_graph=True))


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_vhp_hvp(name: str) -> None:
    ours = getattr(SF, name)(f_scalar2(strata), (_t(strata, A), _t(strata, B)), (_t(strata, V3), _t(strata, V23)))
    theirs = getattr(TF, name)(f_scalar2(torch), (_t(torch, A), _t(torch, B)), (_t(torch, V3), _t(torch, V23)))
    _assert_close(ours, theirs)
    assert not ours[0].requires_grad and not ours[1][0].requires_grad
    # with create_graph, the product differentiates back to the caller's inputs
    grads = []
    for lib, fn in ((strata, SF), (torch, TF)):
        x = _t(lib, A, requires_grad=True)
        out, prod = getattr(fn, name)(f_scalar(lib), x, _t(lib, V3), create_graph=True)
        assert out.requires_grad and prod.requires_grad
        (prod * prod).sum().backward()
        grads.append(x.grad)
    _assert_close(grads[0], grads[1])


@pytest.mark.parametrize("name", ["vjp", "jvp"])
def test_vjp_jvp(name: str) -> None:
    v_ours = (_t(strata, A), _t(strata, V23)) if name == "jvp" else (_t(strata, V23), _t(strata, [1.0, -2.0]))
    v_theirs = (_t(torch, A), _t(torch, V23)) if name == "jvp" else (_t(torch, V23), _t(torch, [1.0, -2.0]))
    ours = getattr(SF, name)(f_two(strata), (_t(strata, A), _t(strata, B)), v_ours)
    theirs = getattr(TF, name)(f_two(torch), (_t(torch, A), _t(torch, B)), v_theirs)
    _assert_close(ours, theirs)
    assert not ours[1][0].requires_grad
    # one tensor in, one out: no tuples; create_graph links to the caller's graph
    grads = []
    for lib, fn in ((strata, SF), (torch, TF)):
        x = _t(lib, A, requires_grad=True)
        out, prod = getattr(fn, name)(f_one(lib), x, _t(lib, V3), create_graph=True)
        assert not isinstance(prod, tuple) and prod.requires_grad
        prod.sum().backward()
        grads.append((out, prod, x.grad))
    _assert_close(grads[0], grads[1])


def test_scalar_function_needs_no_v() -> None:
    _assert_close(SF.vjp(lambda x: (x * x).sum(), _t(strata, A)),
                  TF.vjp(lambda x: (x * x).sum(), _t(torch, A)))
    _assert_close(SF.jvp(lambda x: x.exp(), _t(strata, [0.5])), TF.jvp(lambda x: x.exp(), _t(torch, [0.5])))


def test_bad_input_errors() -> None:
    x = _t(strata, A)
    with pytest.raises(RuntimeError, match="v can only be None"):
        SF.vjp(f_one(strata), x)
    with pytest.raises(RuntimeError, match="invalid size"):
        SF.vjp(f_one(strata), x, _t(strata, V23))
    with pytest.raises(RuntimeError, match="invalid length"):
        SF.jvp(f_two(strata), (x, _t(strata, B)), (x,))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        SF.jacobian(lambda t: 3.0, x)
    with pytest.raises(TypeError, match="inputs given to vjp"):
        SF.vjp(f_one(strata), [x])  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="single element"):
        SF.hessian(f_one(strata), x)
    with pytest.raises(ValueError, match="strategy"):
        SF.jacobian(f_one(strata), x, strategy="sideways")
    with pytest.raises(ValueError, match="requires `vectorize=True`"):
        SF.jacobian(f_one(strata), x, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="does not require gradients"):
        SF.vjp(lambda t: t.detach() * 2, x, _t(strata, V3), strict=True)


def test_vectorize_gives_the_same_values() -> None:
    # strata has no vmap: vectorize=True (and forward-mode, which needs it) compute the same rows
    ref = TF.jacobian(f_one(torch), _t(torch, A))
    _assert_close(SF.jacobian(f_one(strata), _t(strata, A), vectorize=True), ref)
    _assert_close(SF.jacobian(f_one(strata), _t(strata, A), vectorize=True, strategy="forward-mode"), ref)


def test_jacobian_on_cuda() -> None:
    x = strata.tensor(A[:2], dtype=strata.float32, device="cuda")
    jac = SF.jacobian(lambda t: (t * t).sin(), x)
    assert jac.device.type == "cuda"
    ref = TF.jacobian(lambda t: (t * t).sin(), torch.tensor(A[:2], dtype=torch.float32))
    np.testing.assert_allclose(jac.cpu().numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


def _cube(lib: Any, factor: float, detach_backward: bool) -> Any:
    """A custom Function for x**3 whose backward is `factor * x**2` (3 is right), detached or not."""
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            ctx.save_for_backward(t)
            return t * t * t

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (t,) = ctx.saved_tensors
            sq = (t * t).detach() if detach_backward else t * t
            return g * factor * sq
    return Cube.apply


@pytest.mark.parametrize(("factor", "detach"), [(3.0, False), (2.0, False), (3.0, True)])
def test_gradcheck_verdicts_match_torch(factor: float, detach: bool) -> None:
    # torch's own gradcheck/gradgradcheck on the same custom Function is the oracle for the verdicts
    verdicts = []
    for lib in (strata, torch):
        x = _t(lib, A, requires_grad=True)
        y = _t(lib, B, requires_grad=True)
        fn = _cube(lib, factor, detach)
        verdicts.append((lib.autograd.gradcheck(fn, (x,), raise_exception=False),
                         lib.autograd.gradgradcheck(fn, (x,), raise_exception=False),
                         lib.autograd.gradcheck(lambda a, b, f=fn: (f(a) * b).sum(dim=0), (x, y),
                                                raise_exception=False)))
    assert verdicts[0] == verdicts[1]
    assert verdicts[0][0] == (factor == 3.0)


def test_gradcheck_errors() -> None:
    from strata.autograd import GradcheckError
    x = _t(strata, A, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        strata.autograd.gradcheck(_cube(strata, 2.0, False), (x,))
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        strata.autograd.gradcheck(lambda t: t * 2, (_t(strata, A),))
    single = strata.tensor(A[:2], dtype=strata.float32, requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        assert strata.autograd.gradcheck(lambda t: t * 2, (single,), eps=1e-2)
