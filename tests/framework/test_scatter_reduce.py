"""scatter_reduce against PyTorch 2.13 CPU: every reduction, include_self both ways, along each dim, float and
integer dtypes, NaN propagation, first and (for sum/mean/amax/amin) second derivatives, node name, errors; on
"cpu" (NumPy's ufunc.at) and "cuda" (atomic kernels)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import strata

from .conftest import DEVICES, as_numpy

RNG = np.random.default_rng(2611)
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _case(dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = RNG.integers(-3, 4, (4, 5)).astype(np.float64)  # small integers: ties for amax/amin, zeros for prod
    index = RNG.integers(0, 4 if dim == 0 else 5, (6, 3) if dim == 0 else (4, 7))
    src = RNG.integers(-3, 4, index.shape).astype(np.float64)
    return x, index, src


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
@pytest.mark.parametrize("dim", [0, 1])
def test_values_and_gradients_match_torch(reduce: str, include_self: bool, dim: int, device: str) -> None:
    x, index, src = _case(dim)
    tx, tsrc = torch.tensor(x, requires_grad=True), torch.tensor(src, requires_grad=True)
    sx = strata.tensor(x, device=device, requires_grad=True)
    ssrc = strata.tensor(src, device=device, requires_grad=True)
    t = tx.scatter_reduce(dim, torch.tensor(index), tsrc, reduce, include_self=include_self)
    s = sx.scatter_reduce(dim, strata.tensor(index, device=device), ssrc, reduce, include_self=include_self)
    np.testing.assert_allclose(as_numpy(s), t.detach().numpy(), rtol=1e-12)
    assert s.grad_fn.name() == t.grad_fn.name()
    w = RNG.standard_normal(x.shape)
    tg = torch.autograd.grad((t * torch.tensor(w)).sum(), [tx, tsrc], create_graph=True)
    sg = strata.autograd.grad((s * strata.tensor(w, device=device)).sum(), [sx, ssrc], create_graph=True)
    for a, b in zip(sg, tg, strict=True):
        np.testing.assert_allclose(as_numpy(a), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    t_on = [g for g in tg if g.requires_grad]
    s_on = [g for g in sg if g.requires_grad]
    if reduce != "prod" and t_on:  # (PyTorch: "GradGrad not supported" for prod's zero handling)
        assert s_on
        tgg = torch.autograd.grad(sum((g * g).sum() for g in t_on), [tx, tsrc], allow_unused=True)
        sgg = strata.autograd.grad(sum((g * g).sum() for g in s_on), [sx, ssrc], allow_unused=True)
        for a, b in zip(sgg, tgg, strict=True):
            if b is None:
                assert a is None or not as_numpy(a).any()
            else:
                np.testing.assert_allclose(as_numpy(a), b.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("dtype", "tdtype"), [(strata.float32, torch.float32), (strata.int64, torch.int64),
                                               (strata.int32, torch.int32), (strata.float16, torch.float16)])
def test_dtypes_and_nan(dtype: Any, tdtype: Any, device: str) -> None:
    x = RNG.integers(-5, 6, 8)
    index = RNG.integers(0, 8, 20)
    src = RNG.integers(-5, 6, 20)
    for reduce in REDUCES:
        for include_self in (True, False):
            t = torch.tensor(x, dtype=tdtype).scatter_reduce(0, torch.tensor(index), torch.tensor(src, dtype=tdtype),
                                                            reduce, include_self=include_self)
            s = strata.tensor(x, dtype=dtype, device=device).scatter_reduce(
                0, strata.tensor(index, device=device), strata.tensor(src, dtype=dtype, device=device), reduce,
                include_self=include_self)
            assert s.dtype == dtype
            np.testing.assert_array_equal(as_numpy(s), t.numpy(), err_msg=f"{reduce} {include_self}")
    if dtype.is_floating_point:
        src_nan = np.where(np.arange(20) == 3, np.nan, src)
        for reduce in ("amax", "amin"):
            t = torch.tensor(x, dtype=tdtype).scatter_reduce(0, torch.tensor(index),
                                                            torch.tensor(src_nan, dtype=tdtype), reduce)
            s = strata.tensor(x, dtype=dtype, device=device).scatter_reduce(
                0, strata.tensor(index, device=device), strata.tensor(src_nan, dtype=dtype, device=device), reduce)
            np.testing.assert_array_equal(as_numpy(s), t.numpy())


def test_in_place_and_errors() -> None:
    x = strata.zeros(4)
    out = x.scatter_reduce_(0, strata.tensor([0, 0, 3]), strata.tensor([1.0, 2.0, 5.0]), "amax")
    assert out is x and x.tolist() == [2.0, 0.0, 0.0, 5.0]
    assert strata.ones(2).scatter_reduce(0, strata.tensor([0]), strata.tensor([3.0]), "max").tolist() == [3.0, 1.0]
    for lib in (torch, strata):
        with pytest.raises(RuntimeError, match="reduce argument must be either sum, prod, mean, amax or amin"):
            lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1), "multiply")
        with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
            lib.zeros(3).scatter_reduce(0, lib.tensor([0]), lib.ones(1, dtype=lib.float64), "sum")
