"""The composite torch.* functions of strata.framework.torch_functions (meshgrid, cdist, tensordot, cross,
kron, trace, isin, unique, bincount, tril/triu_indices, block_diag, addcmul/addcdiv) against PyTorch
CPU: values, dtypes, and gradients where PyTorch has them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import strata
from strata.framework import torch_functions as tf

RNG = np.random.default_rng(42)


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, strata.Tensor) else t.detach().numpy()


def _same(ours: Any, ref: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    if isinstance(ref, tuple | list):
        assert len(ours) == len(ref)
        for o, r in zip(ours, ref, strict=True):
            _same(o, r, rtol, atol)
        return
    assert tuple(ours.shape) == tuple(ref.shape) and ours.dtype.name == str(ref.dtype).removeprefix("torch.")
    np.testing.assert_allclose(_np(ours), _np(ref), rtol=rtol, atol=atol)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_meshgrid_cartesian_prod(device: str) -> None:
    a, b = np.arange(3), np.arange(4) * 2
    for indexing in ("ij", "xy"):
        _same(tf.meshgrid(strata.tensor(a, device=device), strata.tensor(b, device=device), indexing=indexing),
              torch.meshgrid(torch.tensor(a), torch.tensor(b), indexing=indexing))
    _same(tf.cartesian_prod(strata.tensor(a, device=device), strata.tensor(b, device=device)),
          torch.cartesian_prod(torch.tensor(a), torch.tensor(b)))


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, float("inf")])
def test_cdist_values_and_gradients(p: float) -> None:
    x, y = RNG.standard_normal((2, 4, 3)).astype(np.float32), RNG.standard_normal((2, 5, 3)).astype(np.float32)
    y[0, 0] = x[0, 0]  # a zero distance: the gradient there is 0 in both
    tx, ty = torch.tensor(x, requires_grad=True), torch.tensor(y, requires_grad=True)
    sx, sy = strata.tensor(x, requires_grad=True), strata.tensor(y, requires_grad=True)
    to, so = torch.cdist(tx, ty, p=p), tf.cdist(sx, sy, p=p)
    _same(so, to, 1e-5, 1e-5)
    to.sum().backward()
    so.sum().backward()
    np.testing.assert_allclose(_np(sx.grad), _np(tx.grad), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_np(sy.grad), _np(ty.grad), rtol=1e-4, atol=1e-5)


def test_tensordot_cross_kron_trace_block_diag() -> None:
    a, b = RNG.standard_normal((2, 3, 4)).astype(np.float32), RNG.standard_normal((4, 3, 5)).astype(np.float32)
    _same(tf.tensordot(strata.tensor(a), strata.tensor(b), dims=([1, 2], [1, 0])),
          torch.tensordot(torch.tensor(a), torch.tensor(b), dims=([1, 2], [1, 0])), 1e-5, 1e-5)
    m, n = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((4, 2)).astype(np.float32)
    _same(tf.tensordot(strata.tensor(m), strata.tensor(n), dims=1), torch.tensordot(torch.tensor(m),
                                                                                   torch.tensor(n), dims=1), 1e-5, 1e-5)
    u, v = RNG.standard_normal((5, 3)).astype(np.float32), RNG.standard_normal((5, 3)).astype(np.float32)
    _same(tf.cross(strata.tensor(u), strata.tensor(v), dim=1), torch.cross(torch.tensor(u), torch.tensor(v), dim=1))
    k1, k2 = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((3, 2)).astype(np.float32)
    _same(tf.kron(strata.tensor(k1), strata.tensor(k2)), torch.kron(torch.tensor(k1), torch.tensor(k2)))
    _same(tf.trace(strata.tensor(m[:, :3])), torch.trace(torch.tensor(m[:, :3])))
    _same(tf.block_diag(strata.tensor(k1), strata.tensor(k2), strata.tensor(np.float32(2.0))),
          torch.block_diag(torch.tensor(k1), torch.tensor(k2), torch.tensor(np.float32(2.0))))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_unique_isin_bincount(device: str) -> None:
    x = np.array([[3, 1, 3], [2, 7, 1]], dtype=np.int64)
    _same(tf.unique(strata.tensor(x, device=device), return_inverse=True, return_counts=True),
          torch.unique(torch.tensor(x), return_inverse=True, return_counts=True))
    _same(tf.unique(strata.tensor(x, device=device)), torch.unique(torch.tensor(x)))
    run = np.array([1, 1, 2, 2, 2, 1, 3], dtype=np.int64)
    _same(tf.unique_consecutive(strata.tensor(run, device=device), return_inverse=True, return_counts=True),
          torch.unique_consecutive(torch.tensor(run), return_inverse=True, return_counts=True))
    _same(tf.isin(strata.tensor(x, device=device), strata.tensor([1, 2], device=device)),
          torch.isin(torch.tensor(x), torch.tensor([1, 2])))
    _same(tf.isin(strata.tensor(x, device=device), [1, 2], invert=True),
          torch.isin(torch.tensor(x), torch.tensor([1, 2]), invert=True))
    _same(tf.bincount(strata.tensor(run, device=device), minlength=6), torch.bincount(torch.tensor(run), minlength=6))
    w = np.linspace(0, 1, 7).astype(np.float32)
    _same(tf.bincount(strata.tensor(run, device=device), strata.tensor(w, device=device)),
          torch.bincount(torch.tensor(run), torch.tensor(w)))
    with pytest.raises(RuntimeError, match="non-negative"):
        tf.bincount(strata.tensor([1, -1], device=device))


def test_tri_indices_and_addcmul() -> None:
    for args in ((4, 4, 0), (3, 5, 1), (5, 3, -1)):
        _same(tf.tril_indices(*args), torch.tril_indices(*args))
        _same(tf.triu_indices(*args), torch.triu_indices(*args))
    a, b, c = (RNG.standard_normal(4).astype(np.float32) for _ in range(3))
    _same(tf.addcmul(strata.tensor(a), strata.tensor(b), strata.tensor(c), value=0.5),
          torch.addcmul(torch.tensor(a), torch.tensor(b), torch.tensor(c), value=0.5))
    _same(tf.addcdiv(strata.tensor(a), strata.tensor(b), strata.tensor(c), value=-2),
          torch.addcdiv(torch.tensor(a), torch.tensor(b), torch.tensor(c), value=-2))


def test_small_reductions_and_elementwise_composites() -> None:
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    x[1, 2] = np.nan
    tx, sx = torch.tensor(x), strata.tensor(x)
    _same(tf.nansum(sx), torch.nansum(tx))
    _same(tf.nansum(sx, 1, keepdim=True), torch.nansum(tx, 1, keepdim=True))
    _same(tf.nanmean(sx, 0), torch.nanmean(tx, 0))
    y = RNG.standard_normal((4, 5)).astype(np.float32)
    ty, sy = torch.tensor(y), strata.tensor(y)
    _same(tf.median(sy), torch.median(ty))
    tm, sm = torch.median(ty, 1), tf.median(sy, 1)
    _same(sm.values, tm.values)
    _same(sm.indices, tm.indices)
    _same(tf.diff(sy, 2, 0), torch.diff(ty, 2, 0))
    _same(tf.diff(sy, prepend=sy[:, :1]), torch.diff(ty, prepend=ty[:, :1]))
    p = RNG.random(6).astype(np.float32)
    _same(tf.logit(strata.tensor(p), 0.1), torch.logit(torch.tensor(p), 0.1))
    _same(tf.clamp_min(sy, 0.2), torch.clamp_min(ty, 0.2))
    _same(tf.clamp_max(sy, 0.2), torch.clamp_max(ty, 0.2))


def test_index_fill_and_copy_in_place() -> None:
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    src = RNG.standard_normal((3, 2)).astype(np.float32)
    tx, sx = torch.tensor(x), strata.tensor(x)
    tx.index_fill_(1, torch.tensor([0, 3]), -1.0)
    tf.METHODS["index_fill_"](sx, 1, strata.tensor([0, 3]), -1.0)
    _same(sx, tx)
    tx.index_copy_(1, torch.tensor([2, 1]), torch.tensor(src))
    tf.METHODS["index_copy_"](sx, 1, strata.tensor([2, 1]), strata.tensor(src))
    _same(sx, tx)


def test_kthvalue_and_quantile_match_torch() -> None:
    y = RNG.standard_normal((4, 6)).astype(np.float32)
    ty, sy = torch.tensor(y, requires_grad=True), strata.tensor(y, requires_grad=True)
    tk, sk = torch.kthvalue(ty, 2, 1), tf.kthvalue(sy, 2, 1)
    _same(sk.values, tk.values)
    _same(sk.indices, tk.indices)
    for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
        _same(tf.quantile(sy, 0.37, dim=1, interpolation=interp), torch.quantile(ty, 0.37, dim=1, interpolation=interp))
    _same(tf.quantile(sy, strata.tensor([0.1, 0.5, 0.9]), dim=0, keepdim=True),
          torch.quantile(ty, torch.tensor([0.1, 0.5, 0.9]), dim=0, keepdim=True))
    tq, sq = torch.quantile(ty, 0.25), tf.quantile(sy, 0.25)
    _same(sq, tq)
    tq.backward()
    sq.backward()
    np.testing.assert_allclose(_np(sy.grad), _np(ty.grad), atol=1e-6)
    with pytest.raises(ValueError, match="range"):
        tf.quantile(sy, 1.5)
