"""sort, argsort, topk, cumsum, cumprod, logsumexp, fused softmax/log_softmax, var_mean/std_mean against
PyTorch CPU (values, indices, dtypes, shapes, gradients, errors) on "cpu" and "cuda"."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import strata
from strata.framework import sorting

from .conftest import DEVICES, assert_same, pair

NAN = float("nan")


def _data(shape: tuple[int, ...], seed: int = 0, ties: bool = False, nan: bool = False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape).astype(np.float32) if ties else rng.standard_normal(shape).astype(np.float32)
    if nan:
        a.reshape(-1)[::5] = np.nan
    return a


def _grad_check(fn_s: Any, fn_t: Any, data: np.ndarray, device: str, dtype: Any = strata.float32,
                rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Forward and the gradient of sum(out * w) (w fixed, random) against torch."""
    s, t = pair(data, dtype, device, requires_grad=True)
    out_s, out_t = fn_s(s), fn_t(t)
    assert_same(out_s, out_t.detach(), rtol=rtol, atol=atol, device=device)
    assert out_s.grad_fn.name() == out_t.grad_fn.name()
    w = np.random.default_rng(1).standard_normal(tuple(out_t.shape)).astype(np.float32)
    ws, wt = pair(w, dtype, device)
    (out_s * ws).sum().backward()
    (out_t * wt).sum().backward()
    assert_same(s.grad, t.grad, rtol=rtol, atol=atol, device=device)


# ----------------------------------------------------------------------------------------- sort
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_sort_ties_nan_stable(device: str, descending: bool, dim: int) -> None:
    a = _data((5, 7, 3), ties=True, nan=True)
    s, t = pair(a, device=device)
    vs, is_ = strata.sort(s, dim, descending)
    vt, it = torch.sort(t, dim=dim, descending=descending, stable=True)
    assert_same(vs, vt, device=device)
    assert_same(is_, it, device=device)
    assert_same(strata.argsort(s, dim, descending, stable=True),
                torch.argsort(t, dim=dim, descending=descending, stable=True))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.float16, strata.bfloat16, strata.float64, strata.int64, strata.int8,
                                   strata.uint8, strata.bool])
def test_sort_dtypes(device: str, dtype: strata.dtype) -> None:
    a = np.random.default_rng(2).integers(0, 9, (4, 33))
    s, t = pair(a, dtype, device)
    for desc in (False, True):
        vs, is_ = s.sort(1, desc, stable=True)
        vt, it = t.sort(dim=1, descending=desc, stable=True)
        assert_same(vs, vt)
        assert_same(is_, it)


@pytest.mark.parametrize("device", DEVICES)
def test_sort_non_contiguous_and_long_rows(device: str) -> None:
    a = _data((40, 6), seed=3)
    s, t = pair(a, device=device)
    s, t = s.T[:, ::3], t.T[:, ::3]  # (6, 14), non-contiguous
    assert not s.is_contiguous()
    assert_same(tuple(strata.sort(s)), tuple(torch.sort(t)))
    assert_same(tuple(strata.sort(s, 0, True)), tuple(torch.sort(t, 0, True)))
    # a row past the shared-memory limit (global scratch path on cuda), with ties
    b = _data((2, 2100), seed=4, ties=True)
    s, t = pair(b, device=device)
    assert_same(tuple(strata.sort(s, descending=True)), tuple(torch.sort(t, descending=True, stable=True)))


@pytest.mark.parametrize("device", DEVICES)
def test_sort_gradient_and_return_type(device: str) -> None:
    _grad_check(lambda x: strata.sort(x, 0).values, lambda x: torch.sort(x, 0).values, _data((4, 5)), device)
    _grad_check(lambda x: x.sort(-1, True)[0], lambda x: x.sort(-1, True)[0], _data((3, 6), 5), device)
    s = strata.tensor([2.0, 1.0], device=device)
    r = strata.sort(s)
    values, indices = r
    assert r[0] is values and r.indices is indices and len(r) == 2
    assert repr(r).startswith("strata.return_types.sort(\nvalues=tensor([1., 2.]")


@pytest.mark.parametrize("device", DEVICES)
def test_sort_edge_shapes(device: str) -> None:
    for a in (np.float32(3.5), np.zeros((3, 0), np.float32), np.zeros((0, 4), np.float32)):
        s, t = pair(a, device=device)
        assert_same(tuple(strata.sort(s)), tuple(torch.sort(t)))
        assert_same(tuple(strata.topk(s, 0)), tuple(torch.topk(t, 0)))


# ----------------------------------------------------------------------------------------- topk
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(device: str, largest: bool) -> None:
    a = _data((6, 9), seed=6)  # no ties: PyTorch leaves the order of ties unspecified
    for dim, k in ((-1, 3), (0, 2), (1, 9), (0, 0)):
        s, t = pair(a, device=device)
        rs, rt = strata.topk(s, k, dim, largest), torch.topk(t, k, dim, largest)
        assert_same(tuple(rs), tuple(rt), device=device)
        assert rs.values.is_contiguous()
    _grad_check(lambda x: x.topk(2, 0, largest).values, lambda x: x.topk(2, 0, largest).values, a, device)


@pytest.mark.parametrize("device", DEVICES)
def test_topk_nan_and_errors(device: str) -> None:
    s, t = pair([3.0, NAN, 1.0, 7.0], device=device)
    assert_same(strata.topk(s, 2).values, torch.topk(t, 2).values)
    assert_same(strata.topk(s, 2, largest=False).indices, torch.topk(t, 2, largest=False).indices)
    for bad in (5, -1):
        with pytest.raises(RuntimeError, match="selected index k out of range"):
            strata.topk(s, bad)
    with pytest.raises(RuntimeError, match="topk does not support bool"):
        strata.topk(s > 2, 1)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 2"):
        strata.sort(s, 2)


# ----------------------------------------------------------------------------------------- scans
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_values_and_dtypes(device: str, op: str) -> None:
    rng = np.random.default_rng(7)
    ints = rng.integers(-2, 3, (3, 5, 4))
    for dtype in (strata.int32, strata.uint8, strata.bool, strata.int64):
        s, t = pair(ints, dtype, device)
        for dim in (0, 2, -2):
            assert_same(getattr(strata, op)(s, dim), getattr(torch, op)(t, dim))
    s, t = pair(ints, strata.int32, device)
    assert_same(getattr(s, op)(1, dtype=strata.float16), getattr(t, op)(1, dtype=torch.float16))
    floats = rng.uniform(0.5, 1.5, (4, 6)).astype(np.float32)
    for dtype in (strata.float32, strata.float16, strata.bfloat16, strata.float64):
        s, t = pair(floats, dtype, device)
        assert_same(getattr(strata, op)(s, 1), getattr(torch, op)(t, 1))
        assert_same(getattr(strata, op)(s.T, 1), getattr(torch, op)(t.T, 1))  # non-contiguous
    s, t = pair(np.float32(2.5), device=device)
    assert_same(getattr(strata, op)(s, -1), getattr(torch, op)(t, -1))
    s, t = pair(np.zeros((2, 0), np.float32), device=device)
    assert_same(getattr(strata, op)(s, 1), getattr(torch, op)(t, 1))


@pytest.mark.parametrize("device", DEVICES)
def test_cumsum_long_rows_and_gradient(device: str) -> None:
    a = _data((2, 1300), seed=8)  # several chunks of the block scan
    _grad_check(lambda x: x.cumsum(1), lambda x: x.cumsum(1), a, device, rtol=1e-4, atol=1e-4)
    _grad_check(lambda x: strata.cumsum(x, 0, dtype=strata.float64), lambda x: torch.cumsum(x, 0, dtype=torch.float64),
                _data((3, 4), 9), device)
    with pytest.raises(IndexError, match="Dimension out of range"):
        strata.cumsum(strata.zeros(2, 3, device=device), 2)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        strata.cumsum(strata.zeros(2, device=device), 0, dtype=strata.bool)


@pytest.mark.parametrize("device", DEVICES)
def test_cumprod_gradient_with_zeros(device: str) -> None:
    a = np.array([[1.5, 0.0, 3.0, 0.0, 2.0], [0.5, -2.0, 0.0, 1.0, 4.0], [1.0, 2.0, 3.0, -1.0, 0.5]], np.float32)
    _grad_check(lambda x: x.cumprod(1), lambda x: x.cumprod(1), a, device)
    _grad_check(lambda x: x.cumprod(0), lambda x: x.cumprod(0), a, device)


# ----------------------------------------------------------------------------------------- logsumexp
@pytest.mark.parametrize("device", DEVICES)
def test_logsumexp(device: str) -> None:
    a = _data((3, 4, 5), seed=10) * 50
    for dim, keepdim in ((1, False), ((0, 2), True), (-1, True), ((0, 1, 2), False)):
        _grad_check(lambda x, d=dim, k=keepdim: strata.logsumexp(x, d, k),
                    lambda x, d=dim, k=keepdim: torch.logsumexp(x, d, k), a, device, rtol=1e-5, atol=1e-5)
    inf = float("inf")
    s, t = pair([[1.0, -inf], [-inf, -inf], [inf, 2.0], [NAN, 1.0], [1000.0, 1000.0]], device=device)
    assert_same(s.logsumexp(1), t.logsumexp(1))
    s, t = pair([[1, 2], [3, 4]], device=device)
    assert_same(strata.logsumexp(s, 0), torch.logsumexp(t, 0))
    s, t = pair(np.zeros((2, 0), np.float32), device=device)
    assert_same(strata.logsumexp(s, 1), torch.logsumexp(t, 1))
    s, t = pair(np.float32(2.0), device=device)
    assert_same(strata.logsumexp(s, 0), torch.logsumexp(t, 0))


# ----------------------------------------------------------------------------------------- softmax
@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.float32, strata.float16, strata.bfloat16, strata.float64])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_fused(device: str, dtype: strata.dtype, log: bool) -> None:
    fs, ft = (sorting.log_softmax, torch.log_softmax) if log else (sorting.softmax, torch.softmax)
    a = _data((3, 4, 6), seed=11) * 3
    tol = 1e-5 if dtype in (strata.float32, strata.float64) else 2e-2
    for dim in (-1, 1, 0):
        _grad_check(lambda x, d=dim: fs(x, d), lambda x, d=dim: ft(x, d), a, device, dtype, rtol=tol, atol=tol)
    s, t = pair(a, dtype, device)
    assert_same(fs(s.transpose(0, 2), 1), ft(t.transpose(0, 2), 1), rtol=tol, atol=tol)
    out = fs(s, 0)
    assert out.is_contiguous()


@pytest.mark.parametrize("device", DEVICES)
def test_softmax_dtype_edges_and_errors(device: str) -> None:
    _grad_check(lambda x: sorting.softmax(x, 1, dtype=strata.float64), lambda x: torch.softmax(x, 1, torch.float64),
                _data((2, 5), 12), device)
    _grad_check(lambda x: sorting.log_softmax(x, 0, strata.float16), lambda x: torch.log_softmax(x, 0, torch.float16),
                _data((2, 5), 13), device, strata.float32, rtol=2e-2, atol=2e-2)
    s, t = pair([1, 2, 3], device=device)
    assert_same(sorting.softmax(s, 0, strata.float32), torch.softmax(t, 0, torch.float32))
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        sorting.softmax(s, 0)
    with pytest.raises(NotImplementedError, match="\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"):
        sorting.log_softmax(s, 0)
    inf = float("inf")
    s, t = pair([[-inf, -inf], [-inf, 0.0], [NAN, 1.0]], device=device)
    assert_same(sorting.softmax(s, 1), torch.softmax(t, 1))
    assert_same(sorting.log_softmax(s, 1), torch.log_softmax(t, 1))
    for a in (np.float32(2.0), np.zeros((0, 3), np.float32)):
        s, t = pair(a, device=device)
        assert_same(sorting.softmax(s, 0), torch.softmax(t, 0))
        assert_same(sorting.log_softmax(s, -1), torch.log_softmax(t, -1))
    with pytest.raises(IndexError, match="Dimension out of range"):
        sorting.softmax(strata.zeros(2, device=device), 1)


# ----------------------------------------------------------------------------------------- moments
@pytest.mark.parametrize("device", DEVICES)
def test_var_mean_std_mean(device: str) -> None:
    a = _data((4, 5), seed=14)
    s, t = pair(a, device=device)
    assert_same(strata.var_mean(s), torch.var_mean(t))
    assert_same(strata.var_mean(s, 1, correction=0, keepdim=True), torch.var_mean(t, 1, correction=0, keepdim=True))
    assert_same(strata.std_mean(s, (0,)), torch.std_mean(t, (0,)))


@pytest.mark.parametrize("device", DEVICES)
def test_autocast_runs_in_float32(device: str) -> None:
    s, t = pair(_data((2, 6), 15), strata.bfloat16, device, requires_grad=True)
    with strata.autocast(device, dtype=strata.bfloat16):
        out = sorting.softmax(s, 1)
        assert strata.cumsum(s, 1).dtype is strata.float32
        assert sorting.log_softmax(s, 1, dtype=strata.bfloat16).dtype is strata.bfloat16
    assert_same(out, torch.softmax(t.float(), 1), rtol=1e-6, atol=1e-6)
    out.sum().backward()
    assert s.grad is not None and s.grad.dtype is strata.bfloat16
