"""strata.libs.dnn layer norm, RMS norm and batch norm against NumPy float64 references; gradients
against central finite differences of those references."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata.libs import dnn
from strata.libs.common import LibraryError


def numgrad(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dy: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d sum(f(x) * dy) / dx by central differences, one element at a time (float64)."""
    x = x.astype(np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = ((f(xp) - f(xm)) * dy).sum() / (2 * eps)
    return g


def dev(a: np.ndarray) -> cuda.DeviceArray:
    return cuda.to_device(np.ascontiguousarray(a, np.float32))


def nans(shape: tuple[int, ...]) -> cuda.DeviceArray:
    return cuda.to_device(np.full(shape, np.nan, np.float32))


def ln_ref(x: np.ndarray, g: np.ndarray | None, b: np.ndarray | None, eps: float, rms: bool) -> np.ndarray:
    mu = 0.0 if rms else x.mean(-1, keepdims=True)
    r = 1 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
    y = (x - mu) * r
    return y * (1 if g is None else g) + (0 if b is None else b)


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize(("shape", "affine"), [((4, 7), True), ((2, 3, 65), True), ((3, 300), False), ((1, 1), True)])
def test_layer_and_rms_norm(shape: tuple[int, ...], affine: bool, rms: bool) -> None:
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 2 + 3).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    f = shape[-1]
    g = rng.standard_normal(f).astype(np.float32) if affine else None
    b = None if rms or not affine else rng.standard_normal(f).astype(np.float32)
    eps = 1e-5
    h = dnn.create_handle()
    d_x, d_y, d_mean, d_rstd = dev(x), nans(shape), nans(shape[:-1]), nans(shape[:-1])
    d_g, d_b = (None if g is None else dev(g)), (None if b is None else dev(b))
    if rms:
        dnn.rms_norm_forward(h, d_x, d_g, eps, d_y, d_rstd)
    else:
        dnn.layer_norm_forward(h, d_x, d_g, d_b, eps, d_y, d_mean, d_rstd)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(d_y.get(), ln_ref(x64, g, b, eps, rms), rtol=1e-4, atol=2e-5)
    mu = 0.0 if rms else x64.mean(-1)
    np.testing.assert_allclose(d_rstd.get(), 1 / np.sqrt(((x64 - np.expand_dims(mu, -1)) ** 2).mean(-1) + eps),
                               rtol=1e-4)
    if not rms:
        np.testing.assert_allclose(d_mean.get(), mu, rtol=1e-5, atol=1e-5)

    d_dx, d_dg, d_db = nans(shape), nans((f,)), nans((f,))
    if rms:
        dnn.rms_norm_backward(h, dev(dy), d_x, d_g, d_rstd, d_dx, d_dg if affine else None)
    else:
        dnn.layer_norm_backward(h, dev(dy), d_x, d_g, d_mean, d_rstd, d_dx, d_dg if affine else None,
                                d_db if affine else None)
    rows = x64.reshape(-1, f)[:3]  # finite differences on a few rows
    want_dx = numgrad(lambda v: ln_ref(v, g, b, eps, rms), rows, dy.reshape(-1, f)[:3])
    np.testing.assert_allclose(d_dx.get().reshape(-1, f)[:3], want_dx, rtol=2e-3, atol=2e-4)
    if affine:
        assert g is not None
        want_dg = numgrad(lambda gg: ln_ref(x64, gg, b, eps, rms), g, dy)
        np.testing.assert_allclose(d_dg.get(), want_dg, rtol=1e-3, atol=1e-4)
        if not rms:
            np.testing.assert_allclose(d_db.get(), dy.reshape(-1, f).sum(0), rtol=1e-4, atol=1e-5)


def bn_ref(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    axes = (0, *range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mu, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("shape", [(4, 3, 5, 6), (7, 5), (2, 3, 9)])
def test_batch_norm(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(shape) * 1.5 + 0.5).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    c = shape[1]
    g, b = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    rm0, rv0 = rng.standard_normal(c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32)
    eps, momentum = 1e-5, 0.1
    h = dnn.create_handle()
    d_x, d_y, d_sm, d_si = dev(x), nans(shape), nans((c,)), nans((c,))
    d_rm, d_rv = dev(rm0), dev(rv0)
    dnn.batch_norm_forward_training(h, d_x, dev(g), dev(b), eps, momentum, d_rm, d_rv, d_y, d_sm, d_si)
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(d_y.get(), bn_ref(x64, g, b, eps), rtol=1e-4, atol=2e-5)
    axes = (0, *range(2, x.ndim))
    m = x.size // c
    np.testing.assert_allclose(d_sm.get(), x64.mean(axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_si.get(), 1 / np.sqrt(x64.var(axes) + eps), rtol=1e-4)
    np.testing.assert_allclose(d_rm.get(), 0.9 * rm0 + 0.1 * x64.mean(axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_rv.get(), 0.9 * rv0 + 0.1 * x64.var(axes) * m / (m - 1), rtol=1e-5)

    d_dx, d_dg, d_db = nans(shape), nans((c,)), nans((c,))
    dnn.batch_norm_backward(h, d_x, dev(dy), dev(g), d_sm, d_si, d_dx, d_dg, d_db)
    np.testing.assert_allclose(d_dx.get(), numgrad(lambda v: bn_ref(v, g, b, eps), x64, dy), rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(d_dg.get(), numgrad(lambda gg: bn_ref(x64, gg, b, eps), g, dy), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(d_db.get(), dy.sum(axes), rtol=1e-4, atol=1e-5)

    d_yi = nans(shape)
    dnn.batch_norm_forward_inference(h, d_x, dev(g), dev(b), dev(rm0), dev(rv0), eps, d_yi)
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    want = (x64 - rm0.reshape(bshape)) / np.sqrt(rv0.reshape(bshape) + eps) * g.reshape(bshape) + b.reshape(bshape)
    np.testing.assert_allclose(d_yi.get(), want, rtol=1e-5, atol=1e-5)


def test_norm_bad_arguments() -> None:
    h = dnn.create_handle()
    x, y = cuda.empty((2, 3)), cuda.empty((2, 3))
    with pytest.raises(LibraryError, match=r"\[layer_norm_forward\] gamma must have shape \(3,\), got \(2,\)"):
        dnn.layer_norm_forward(h, x, cuda.empty(2), None, 1e-5, y, cuda.empty(2), cuda.empty(2))
    with pytest.raises(LibraryError, match=r"\[rms_norm_forward\] rstd must have shape \(2,\), got \(3,\)"):
        dnn.rms_norm_forward(h, x, None, 1e-5, y, cuda.empty(3))
    with pytest.raises(LibraryError, match=r"eps must be >= 0, got -1"):
        dnn.layer_norm_forward(h, x, None, None, -1, y, cuda.empty(2), cuda.empty(2))
    with pytest.raises(LibraryError, match=r"\[batch_norm_forward_training\] x must have at least 2 dimension"):
        dnn.batch_norm_forward_training(h, cuda.empty(3), cuda.empty(3), cuda.empty(3), 1e-5, 0.1, None, None,
                                        cuda.empty(3), None, None)


@pytest.mark.parametrize(("dtype", "tol"), [(np.float16, 3e-3), (ml_dtypes.bfloat16, 2e-2)])
def test_layer_norm_half_and_bfloat16(dtype: Any, tol: float) -> None:
    rng = np.random.default_rng(14)
    x = (rng.standard_normal((4, 48)) + 1).astype(dtype)
    g, b = rng.standard_normal(48).astype(dtype), rng.standard_normal(48).astype(dtype)
    dy = rng.standard_normal((4, 48)).astype(dtype)
    h = dnn.create_handle()
    d_x, d_y, d_mean, d_rstd = cuda.to_device(x), cuda.empty(x.shape, dtype), cuda.empty(4), cuda.empty(4)
    d_g, d_b = cuda.to_device(g), cuda.to_device(b)
    dnn.layer_norm_forward(h, d_x, d_g, d_b, 1e-5, d_y, d_mean, d_rstd)
    x64, g64, b64, dy64 = (a.astype(np.float64) for a in (x, g, b, dy))
    assert d_y.get().dtype == np.dtype(dtype)
    np.testing.assert_allclose(d_y.get().astype(np.float64), ln_ref(x64, g64, b64, 1e-5, False), rtol=tol, atol=tol)
    d_dx, d_dg, d_db = cuda.empty(x.shape, dtype), cuda.empty(48, dtype), cuda.empty(48, dtype)
    dnn.layer_norm_backward(h, cuda.to_device(dy), d_x, d_g, d_mean, d_rstd, d_dx, d_dg, d_db)
    want = numgrad(lambda v: ln_ref(v, g64, b64, 1e-5, False), x64, dy64)
    np.testing.assert_allclose(d_dx.get().astype(np.float64), want, rtol=4 * tol, atol=4 * tol)
    np.testing.assert_allclose(d_db.get().astype(np.float64), dy64.sum(0), rtol=tol, atol=tol)
    with pytest.raises(LibraryError, match=r"gamma must be .*, got float32"):
        dnn.layer_norm_forward(h, d_x, cuda.empty(48), None, 1e-5, d_y, d_mean, d_rstd)
