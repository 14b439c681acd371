"""strata.linalg's decompositions, solves and norms against torch.linalg (PyTorch 2.13 CPU): values, shapes,
gradients (second order where the formula is itself differentiable), autograd node names and errors, on
"cpu" (NumPy's LAPACK) and "cuda" (strata.libs.solver on the virtual GPU)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import strata

RNG = np.random.default_rng(1717)
DEVICES = ["cpu", "cuda"]


def _spd(*batch: int, n: int = 4) -> np.ndarray:
    m = RNG.standard_normal((*batch, n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy()


def _flat(out: Any) -> list[Any]:
    return [t for o in out for t in _flat(o)] if isinstance(out, tuple | list) else [out]


def _compare(fn_t: Callable[..., Any], fn_s: Callable[..., Any], inputs: list[np.ndarray], device: str,
             rtol: float = 1e-6, atol: float = 1e-8, grad: bool = True, second: bool = False) -> None:
    """fn on float64 inputs in both libraries: every output, then the gradients of a random projection."""
    tx = [torch.tensor(x, requires_grad=grad) for x in inputs]
    sx = [strata.tensor(x, device=device, requires_grad=grad) for x in inputs]
    to, so = _flat(fn_t(*tx)), _flat(fn_s(*sx))
    assert len(to) == len(so)
    for t, s in zip(to, so, strict=True):
        assert tuple(s.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(s), _np(t), rtol=rtol, atol=atol)
    if not grad:
        return
    ws = [RNG.standard_normal(tuple(t.shape)) for t in to]
    tl = sum((t * torch.tensor(w)).sum() for t, w in zip(to, ws, strict=True))
    sl = sum((s * strata.tensor(w, device=device)).sum() for s, w in zip(so, ws, strict=True))
    tg = torch.autograd.grad(tl, tx, create_graph=second)
    sg = strata.autograd.grad(sl, sx, create_graph=second)
    for t, s in zip(tg, sg, strict=True):
        np.testing.assert_allclose(_np(s), _np(t), rtol=1e-5, atol=1e-7)
    if second:
        tgg = torch.autograd.grad(sum((g * g).sum() for g in tg), tx)
        sgg = strata.autograd.grad(sum((g * g).sum() for g in sg), sx)
        for t, s in zip(tgg, sgg, strict=True):
            np.testing.assert_allclose(_np(s), _np(t), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("device", DEVICES)
def test_inverse_solve_and_determinants(device: str) -> None:
    a = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
    b = RNG.standard_normal((2, 3, 2))
    _compare(torch.linalg.inv, strata.linalg.inv, [a], device, second=True)
    _compare(torch.linalg.solve, strata.linalg.solve, [a, b], device, second=True)
    _compare(torch.linalg.solve, strata.linalg.solve, [a[0], RNG.standard_normal(3)], device)  # a vector B
    _compare(torch.linalg.solve, strata.linalg.solve, [a, RNG.standard_normal(3)], device)  # broadcast B
    _compare(lambda x, y: torch.linalg.solve(x, y, left=False), lambda x, y: strata.linalg.solve(x, y, left=False),
             [a, RNG.standard_normal((2, 2, 3))], device)
    _compare(torch.linalg.det, strata.linalg.det, [a], device, second=True)
    _compare(lambda x: torch.linalg.slogdet(x).logabsdet, lambda x: strata.linalg.slogdet(x).logabsdet, [a], device)
    sgn = strata.linalg.slogdet(strata.tensor(a, device=device)).sign
    np.testing.assert_array_equal(_np(sgn), _np(torch.linalg.slogdet(torch.tensor(a)).sign))
    small = strata.linalg.det(strata.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)).item()
    want = torch.linalg.det(torch.tensor([[1.0, 2.0], [3.0, 4.0]])).item()
    assert small == want if device == "cpu" else abs(small - want) <= 4 * 1.2e-7 * 2  # (cuda: its own LU's rounding)


@pytest.mark.parametrize("device", DEVICES)
def test_cholesky_and_qr(device: str) -> None:
    a = _spd(2)
    _compare(torch.linalg.cholesky, strata.linalg.cholesky, [a], device)
    _compare(lambda x: torch.linalg.cholesky(x, upper=True), lambda x: strata.linalg.cholesky(x, upper=True), [a],
             device)
    tall = RNG.standard_normal((2, 5, 3))
    _compare(torch.linalg.qr, strata.linalg.qr, [tall], device)
    _compare(torch.linalg.qr, strata.linalg.qr, [RNG.standard_normal((4, 4))], device)
    _compare(lambda x: torch.linalg.qr(x, mode="complete"), lambda x: strata.linalg.qr(x, mode="complete"),
             [RNG.standard_normal((3, 5))], device, grad=False)
    _compare(lambda x: torch.linalg.qr(x, mode="complete"), lambda x: strata.linalg.qr(x, mode="complete"),
             [tall], device, grad=False)
    q, r = strata.linalg.qr(strata.tensor(tall, device=device), mode="r")
    assert q.numel() == 0
    np.testing.assert_allclose(_np(r), _np(torch.linalg.qr(torch.tensor(tall), mode="r").R), atol=1e-12)


def test_eigh_svd_and_the_norms_built_on_them() -> None:
    s = _spd(2)
    # eigenvectors are defined up to sign (LAPACK builds may differ): compare their absolute values, whose
    # gradient is sign-consistent, and the reconstruction V diag(w) V^T
    for uplo in ("L", "U"):
        _compare(lambda x, u=uplo: (lambda w, v: (w, v.abs(), (v * w.unsqueeze(-2)) @ v.mT))(*torch.linalg.eigh(x, u)),
                 lambda x, u=uplo: (lambda w, v: (w, v.abs(), (v * w.unsqueeze(-2)) @ v.mT))(*strata.linalg.eigh(x, u)),
                 [s], "cpu")
    _compare(torch.linalg.eigvalsh, strata.linalg.eigvalsh, [s], "cpu", second=True)
    m = RNG.standard_normal((2, 5, 3))
    # singular vectors are defined up to sign: compare U diag(S) Vh's gradient through a sign-free function
    _compare(lambda x: torch.linalg.svdvals(x), lambda x: strata.linalg.svdvals(x), [m], "cpu")
    _compare(lambda x: (lambda u, s, v: (u * s.unsqueeze(-2)) @ v)(*torch.linalg.svd(x, full_matrices=False)),
             lambda x: (lambda u, s, v: (u * s.unsqueeze(-2)) @ v)(*strata.linalg.svd(x, full_matrices=False)),
             [m], "cpu")
    _compare(lambda x: torch.linalg.svd(x, full_matrices=False).U.abs(),
             lambda x: strata.linalg.svd(x, full_matrices=False).U.abs(), [m], "cpu")
    for ord_ in ("fro", "nuc", 2, -2, 1, -1, float("inf"), float("-inf")):
        _compare(lambda x, o=ord_: torch.linalg.matrix_norm(x, ord=o),
                 lambda x, o=ord_: strata.linalg.matrix_norm(x, ord=o), [m], "cpu")
    _compare(lambda x: torch.linalg.norm(x[0]), lambda x: strata.linalg.norm(x[0]), [m], "cpu")
    _compare(lambda x: torch.linalg.norm(x, ord=3, dim=1), lambda x: strata.linalg.norm(x, ord=3, dim=1), [m], "cpu")
    _compare(lambda x: torch.linalg.pinv(x), lambda x: strata.linalg.pinv(x), [m], "cpu")
    full = RNG.standard_normal((4, 4))
    full[:, 3] = full[:, 0] + full[:, 1]
    assert strata.linalg.matrix_rank(strata.tensor(full)).item() == torch.linalg.matrix_rank(torch.tensor(full)).item()


@pytest.mark.parametrize("device", DEVICES)
def test_products_and_matrix_norms_on_either_device(device: str) -> None:
    a, b = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    sq = RNG.standard_normal((3, 3))
    _compare(torch.linalg.cross, strata.linalg.cross, [a, b], device)
    _compare(torch.linalg.vecdot, strata.linalg.vecdot, [a, b], device)
    _compare(lambda x: torch.linalg.matrix_power(x, 3), lambda x: strata.linalg.matrix_power(x, 3), [sq], device)
    _compare(lambda x: torch.linalg.matrix_power(x, -2), lambda x: strata.linalg.matrix_power(x, -2),
             [sq + 3 * np.eye(3)], device)
    _compare(lambda x, y: torch.linalg.multi_dot([x, y.T, x]), lambda x, y: strata.linalg.multi_dot([x, y.T, x]),
             [a, b], device)
    _compare(lambda x: torch.linalg.matrix_norm(x, ord=1), lambda x: strata.linalg.matrix_norm(x, ord=1), [a], device)
    _compare(lambda x: torch.linalg.norm(x, ord="fro"), lambda x: strata.linalg.norm(x, ord="fro"), [a], device)


def test_float32_and_node_names() -> None:
    a = (RNG.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)
    for name in ("inv", "det", "cholesky"):
        x = a @ a.T if name == "cholesky" else a
        t = getattr(torch.linalg, name)(torch.tensor(x, requires_grad=True))
        s = getattr(strata.linalg, name)(strata.tensor(x, requires_grad=True))
        assert s.dtype == strata.float32 and s.grad_fn.name() == t.grad_fn.name()
        np.testing.assert_allclose(_np(s), _np(t), rtol=2e-5, atol=1e-6)
    t = torch.linalg.solve(torch.tensor(a, requires_grad=True), torch.ones(3))
    s = strata.linalg.solve(strata.tensor(a, requires_grad=True), strata.ones(3))
    assert s.grad_fn.name() == t.grad_fn.name()
    assert strata.linalg.qr(strata.tensor(a, requires_grad=True)).Q.grad_fn is not None


@pytest.mark.parametrize("device", DEVICES)
def test_errors_are_pytorchs(device: str) -> None:
    cases: list[tuple[str, Callable[[Any], Any], Any]] = [
        ("inv", lambda L: L.linalg.inv, [[1.0, 2.0], [2.0, 4.0]]),
        ("batched inv", lambda L: L.linalg.inv, np.zeros((2, 2, 2))),
        ("solve", lambda L: (lambda a: L.linalg.solve(a, a[0])), [[1.0, 2.0], [2.0, 4.0]]),
        ("cholesky", lambda L: L.linalg.cholesky, [[1.0, 2.0], [2.0, 1.0]]),
        ("batched cholesky", lambda L: L.linalg.cholesky, [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]]),
        ("not square", lambda L: L.linalg.det, np.ones((2, 3))),
        ("1-D", lambda L: L.linalg.inv, np.ones(2)),
    ]
    for what, fn, x in cases:
        with pytest.raises(RuntimeError) as te:
            fn(torch)(torch.tensor(x))
        with pytest.raises(RuntimeError) as se:
            fn(strata)(strata.tensor(x, device=device))
        assert str(se.value) == str(te.value), what
        if "not square" not in what and "1-D" not in what:
            assert isinstance(se.value, strata.linalg.LinAlgError), what
    for dtype, tname in ((strata.int64, "Long"), (strata.float16, "Half")):
        with pytest.raises(RuntimeError, match=f"Got {tname}"):
            strata.linalg.inv(strata.ones(2, 2, dtype=dtype, device=device))
    with pytest.raises(RuntimeError, match="unrecognized mode 'x'"):
        strata.linalg.qr(strata.ones(2, 2, device=device), mode="x")
    with pytest.raises(RuntimeError, match="Order 3 not supported"):
        strata.linalg.matrix_norm(strata.ones(2, 2, device=device), ord=3)
    with pytest.raises(AttributeError, match="strata does not provide torch.linalg.lstsq"):
        strata.linalg.lstsq  # noqa: B018


def test_eigh_and_svd_on_cuda_say_what_to_do() -> None:
    with pytest.raises(NotImplementedError, match=r"no syevd yet.*A\.cpu\(\)"):
        strata.linalg.eigh(strata.eye(2, device="cuda"))
    with pytest.raises(NotImplementedError, match="no gesvd yet"):
        strata.linalg.svdvals(strata.eye(2, device="cuda"))


def test_ex_variants_return_info_instead_of_raising() -> None:
    inv, info = strata.linalg.inv_ex(strata.tensor([[1.0, 2.0], [2.0, 4.0]]))
    t_inv, t_info = torch.linalg.inv_ex(torch.tensor([[1.0, 2.0], [2.0, 4.0]]))
    assert info.item() == t_info.item() == 2 and info.dtype == strata.int32
    L, info = strata.linalg.cholesky_ex(strata.tensor([[1.0, 2.0], [2.0, 1.0]]))
    assert info.item() == torch.linalg.cholesky_ex(torch.tensor([[1.0, 2.0], [2.0, 1.0]])).info.item()
    del inv, t_inv, L
