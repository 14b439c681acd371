"""Shape ops (split, chunk, unbind, narrow, repeat, tile, repeat_interleave, flip, roll, movedim,
swapaxes, broadcast_to, unflatten, diagonal, diag) and products (outer, bmm, einsum) against PyTorch
CPU on "cpu" and "cuda": values, shapes, dtypes, gradients, grad_fn names and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import strata

rng = np.random.default_rng(2)
A = rng.standard_normal((3, 4, 5)).astype(np.float32)
M = rng.standard_normal((4, 4)).astype(np.float32)


def run(oracle: Any, fs: Callable[..., Any], ft: Callable[..., Any], arrays: list[np.ndarray], device: str, *,
        grad: bool = True, name: bool = True, rtol: float = 1e-5) -> None:
    """Compare fs(strata tensors) with ft(torch tensors): every output (a tensor or a tuple of them), and
    with grad, the grad_fn names and the inputs' gradients of a weighted sum of all outputs."""
    pairs = [oracle.pair(a, device=device, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
    out_s, out_t = fs(*[p[0] for p in pairs]), ft(*[p[1] for p in pairs])
    single = isinstance(out_t, torch.Tensor)
    outs_s, outs_t = ([out_s], [out_t]) if single else (list(out_s), list(out_t))
    assert len(outs_s) == len(outs_t)
    for s, t in zip(outs_s, outs_t, strict=True):
        oracle.assert_same(s, t, rtol=rtol, atol=1e-5, device=device)
    if not grad:
        return
    loss_s: Any = 0
    loss_t: Any = 0
    for k, (s, t) in enumerate(zip(outs_s, outs_t, strict=True)):
        if name:
            assert s.grad_fn.name() == type(t.grad_fn).__name__
        w = rng.standard_normal(tuple(t.shape)).astype(np.float32)
        loss_s = loss_s + (s * strata.tensor(w, device=device)).sum() * (k + 1)
        loss_t = loss_t + (t * torch.tensor(w)).sum() * (k + 1)
    loss_t.backward()
    loss_s.backward()
    for (s, t) in pairs:
        if t.requires_grad:
            oracle.assert_same(s.grad, t.grad, rtol=1e-4, atol=1e-5, device=device)


def same_error(fs: Callable[[], Any], ft: Callable[[], Any]) -> None:
    """fs raises the exception type and message that ft raises in PyTorch."""
    with pytest.raises(Exception) as ref:  # noqa: PT011 - any error: compared with PyTorch's below
        ft()
    with pytest.raises(ref.type) as ours:
        fs()
    assert str(ours.value) == str(ref.value)


# ----------------------------------------------------------------------------------------- views
def test_split_chunk_unbind(device: str, oracle: Any) -> None:
    run(oracle, lambda x: strata.split(x, 2, 1), lambda x: torch.split(x, 2, 1), [A], device)
    run(oracle, lambda x: x.split([1, 3, 1], dim=-1), lambda x: x.split([1, 3, 1], dim=-1), [A], device)
    run(oracle, lambda x: strata.chunk(x, 2), lambda x: torch.chunk(x, 2), [A], device)
    run(oracle, lambda x: x.chunk(3, 2), lambda x: x.chunk(3, 2), [A], device)
    run(oracle, lambda x: strata.unbind(x, 1), lambda x: torch.unbind(x, 1), [A], device)
    run(oracle, lambda x: x.unbind(), lambda x: x.unbind(), [M], device)


def test_split_errors(device: str, oracle: Any) -> None:
    s, t = oracle.pair(A, device=device)
    same_error(lambda: strata.split(s, [1, 1], 0), lambda: torch.split(t, [1, 1], 0))
    same_error(lambda: strata.split(s, 0, 0), lambda: torch.split(t, 0, 0))
    same_error(lambda: strata.chunk(s, 0), lambda: torch.chunk(t, 0))
    same_error(lambda: strata.split(s, 1, 3), lambda: torch.split(t, 1, 3))
    se, te = oracle.pair(np.zeros((0, 3), np.float32), device=device)
    assert len(strata.chunk(se, 3)) == len(torch.chunk(te, 3))


def test_narrow(device: str, oracle: Any) -> None:
    run(oracle, lambda x: strata.narrow(x, 1, 1, 2), lambda x: torch.narrow(x, 1, 1, 2), [A], device)
    run(oracle, lambda x: x.narrow(-1, -3, 3), lambda x: x.narrow(-1, -3, 3), [A], device)
    s, t = oracle.pair(A, device=device)
    same_error(lambda: s.narrow(1, 3, 2), lambda: t.narrow(1, 3, 2))
    same_error(lambda: s.narrow(3, 0, 1), lambda: t.narrow(3, 0, 1))
    same_error(lambda: s.narrow(1, 9, 1), lambda: t.narrow(1, 9, 1))
    v = s.narrow(1, 1, 2)
    assert v.data_ptr() == s.data_ptr() + 5 * 4  # a view


def test_movedim_swapaxes_broadcast_unflatten(device: str, oracle: Any) -> None:
    run(oracle, lambda x: strata.movedim(x, 0, -1), lambda x: torch.movedim(x, 0, -1), [A], device)
    run(oracle, lambda x: x.movedim((0, 1), (2, 0)), lambda x: x.movedim((0, 1), (2, 0)), [A], device)
    # (names: Tensor.transpose records PermuteBackward0 where PyTorch says TransposeBackward0)
    run(oracle, lambda x: strata.swapaxes(x, 0, 2), lambda x: torch.swapaxes(x, 0, 2), [A], device, name=False)
    run(oracle, lambda x: x.swapdims(1, 2), lambda x: x.swapdims(1, 2), [A], device, name=False)
    run(oracle, lambda x: strata.broadcast_to(x, (2, 4, 4)), lambda x: torch.broadcast_to(x, (2, 4, 4)), [M], device)
    run(oracle, lambda x: strata.unflatten(x, 1, (2, -1)), lambda x: torch.unflatten(x, 1, (2, -1)), [A], device,
        name=False)
    run(oracle, lambda x: x.unflatten(-1, (5, 1)), lambda x: x.unflatten(-1, (5, 1)), [A], device, name=False)
    s, t = oracle.pair(A, device=device)
    same_error(lambda: s.movedim((0, 1), (0,)), lambda: t.movedim((0, 1), (0,)))
    same_error(lambda: s.movedim((0, 0), (1, 2)), lambda: t.movedim((0, 0), (1, 2)))
    same_error(lambda: s.unflatten(1, (3, 2)), lambda: t.unflatten(1, (3, 2)))


def test_diagonal_and_diag(device: str, oracle: Any) -> None:
    for off in (0, 1, -2):
        run(oracle, lambda x, o=off: strata.diagonal(x, o), lambda x, o=off: torch.diagonal(x, o), [M], device)
        run(oracle, lambda x, o=off: strata.diag(x, o), lambda x, o=off: torch.diag(x, o), [M[0]], device)
    run(oracle, lambda x: x.diagonal(1, 2, 0), lambda x: x.diagonal(1, 2, 0), [A], device)
    run(oracle, lambda x: strata.diag(x), lambda x: torch.diag(x), [A[0]], device, name=False)  # torch: ..._copy
    s, t = oracle.pair(A, device=device)
    same_error(lambda: strata.diag(s), lambda: torch.diag(t))
    same_error(lambda: s.diagonal(0, 1, 1), lambda: t.diagonal(0, 1, 1))


# ----------------------------------------------------------------------------------------- copies
def test_repeat_tile_repeat_interleave(device: str, oracle: Any) -> None:
    small = A[:2, :3, :2]
    run(oracle, lambda x: x.repeat(2, 1, 3), lambda x: x.repeat(2, 1, 3), [small], device)
    run(oracle, lambda x: x.repeat(2, 1, 1, 2), lambda x: x.repeat(2, 1, 1, 2), [small], device)
    run(oracle, lambda x: strata.tile(x, (2,)), lambda x: torch.tile(x, (2,)), [small], device)
    run(oracle, lambda x: x.tile(2, 1, 1, 1), lambda x: x.tile(2, 1, 1, 1), [small], device)
    run(oracle, lambda x: strata.repeat_interleave(x, 2, 1), lambda x: torch.repeat_interleave(x, 2, 1), [small],
        device)
    run(oracle, lambda x: x.repeat_interleave(3), lambda x: x.repeat_interleave(3), [small], device)
    ints = np.arange(6).reshape(2, 3)
    run(oracle, lambda x: x.repeat(1, 2), lambda x: x.repeat(1, 2), [ints], device, grad=False)
    s, t = oracle.pair(small, device=device)
    same_error(lambda: s.repeat(2, 2), lambda: t.repeat(2, 2))


def test_flip_roll(device: str, oracle: Any) -> None:
    run(oracle, lambda x: strata.flip(x, (0, 2)), lambda x: torch.flip(x, (0, 2)), [A], device)
    run(oracle, lambda x: x.flip(-1), lambda x: x.flip(-1), [A], device)
    run(oracle, lambda x: x.transpose(0, 2).flip(1), lambda x: x.transpose(0, 2).flip(1), [A], device)  # strided
    run(oracle, lambda x: strata.roll(x, 2, 1), lambda x: torch.roll(x, 2, 1), [A], device)
    run(oracle, lambda x: x.roll((-1, 7), (0, 2)), lambda x: x.roll((-1, 7), (0, 2)), [A], device)
    run(oracle, lambda x: x.roll(3), lambda x: x.roll(3), [M], device, name=False)
    ints = np.arange(6).reshape(2, 3)
    run(oracle, lambda x: x.flip(1).roll(1, 0), lambda x: x.flip(1).roll(1, 0), [ints], device, grad=False)
    s, t = oracle.pair(A, device=device)
    same_error(lambda: s.flip((0, 0)), lambda: t.flip((0, 0)))
    same_error(lambda: s.roll((1, 2), 0), lambda: t.roll((1, 2), 0))


# ----------------------------------------------------------------------------------------- products
def test_outer_bmm(device: str, oracle: Any) -> None:
    run(oracle, strata.outer, torch.outer, [M[0], A[0, 0]], device)
    b1, b2 = A[:, :2, :], rng.standard_normal((3, 5, 2)).astype(np.float32)
    run(oracle, strata.bmm, torch.bmm, [b1, b2], device, rtol=1e-4)
    run(oracle, lambda x, y: x.bmm(y), lambda x, y: x.bmm(y), [b1, b2], device, rtol=1e-4)
    s, t = oracle.pair(A, device=device)
    same_error(lambda: strata.outer(s, s), lambda: torch.outer(t, t))
    same_error(lambda: strata.bmm(s[0], s), lambda: torch.bmm(t[0], t))
    same_error(lambda: strata.bmm(s, s[0]), lambda: torch.bmm(t, t[0]))
    same_error(lambda: strata.bmm(s, s), lambda: torch.bmm(t, t))


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),
    ("ij,kj", [(3, 4), (2, 4)]),
    ("bij,jk,bk->bi", [(2, 3, 4), (4, 5), (2, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 2)]),
    ("i j , j", [(3, 4), (4,)]),
    ("ijk,ik->j", [(3, 4, 2), (3, 2)]),
]


@pytest.mark.parametrize(("eq", "shapes"), EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(eq: str, shapes: list[tuple[int, ...]], device: str, oracle: Any) -> None:
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    run(oracle, lambda *xs: strata.einsum(eq, *xs), lambda *xs: torch.einsum(eq, *xs), arrays, device, name=False,
        rtol=1e-4)
    if len(arrays) == 2:  # operands as one list
        run(oracle, lambda *xs: strata.einsum(eq, list(xs)), lambda *xs: torch.einsum(eq, list(xs)), arrays, device,
            grad=False, rtol=1e-4)


def test_einsum_errors(device: str, oracle: Any) -> None:
    s, t = oracle.pair(M, device=device)
    same_error(lambda: strata.einsum("ij,jk->ik", s), lambda: torch.einsum("ij,jk->ik", t))
    same_error(lambda: strata.einsum("ij->ij", s, s), lambda: torch.einsum("ij->ij", t, t))
    same_error(lambda: strata.einsum("ijk->i", s), lambda: torch.einsum("ijk->i", t))
    same_error(lambda: strata.einsum("ij->k", s), lambda: torch.einsum("ij->k", t))
    s3, t3 = oracle.pair(A, device=device)
    with pytest.raises(RuntimeError, match="einsum\\(\\): operands do not broadcast"):
        strata.einsum("ij,jk->ik", s3[0], s3[0])
    with pytest.raises(RuntimeError):
        torch.einsum("ij,jk->ik", t3[0], t3[0])
