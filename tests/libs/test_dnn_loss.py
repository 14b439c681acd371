"""strata.libs.dnn cross-entropy and embedding against NumPy float64 references; gradients against
central finite differences (cross-entropy) and a NumPy scatter-add (embedding)."""

from __future__ import annotations

from collections.abc import Callable

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


def ce_ref(x: np.ndarray, t: np.ndarray, ignore: int, eps: float, reduction: str) -> np.ndarray:
    """PyTorch's cross_entropy, written out: per-row smoothed NLL of log-softmax, reduced."""
    z = x - x.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    valid = t != ignore
    safe = np.where(valid, t, 0)
    nll = -logp[np.arange(len(t)), safe]
    per = np.where(valid, (1 - eps) * nll + eps * -logp.mean(1), 0.0)
    if reduction == "none":
        return per
    return np.array(per.sum() / (valid.sum() if reduction == "mean" else 1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize(("n", "c", "smoothing", "itype"), [(5, 7, 0.0, np.int64), (9, 300, 0.1, np.int32),
                                                            (1, 1, 0.2, np.int64)])
def test_cross_entropy(n: int, c: int, smoothing: float, itype: type, reduction: str) -> None:
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((n, c)) * 3).astype(np.float32)
    t: np.ndarray = rng.integers(0, c, n).astype(itype)
    if n > 2:
        t[1] = -100  # ignored
    h = dnn.create_handle()
    d_x, d_t = cuda.to_device(x), cuda.to_device(t)
    lshape = (n,) if reduction == "none" else ()
    d_loss = cuda.empty(lshape)  # NOTE: cuda.to_device of a 0-d array gives shape (1,) (np.ascontiguousarray)
    kw = {"ignore_index": -100, "label_smoothing": smoothing, "reduction": reduction}
    dnn.cross_entropy_forward(h, d_x, d_t, d_loss, **kw)  # type: ignore[arg-type]
    loss = d_loss.get()
    assert loss.shape == lshape and loss.dtype == np.float32
    np.testing.assert_allclose(loss, ce_ref(x.astype(np.float64), t, -100, smoothing, reduction), rtol=1e-5,
                               atol=1e-6)
    g = rng.standard_normal(lshape).astype(np.float32)
    d_dx = cuda.to_device(np.full((n, c), np.nan, np.float32))
    d_g = cuda.empty(lshape)
    d_g.set(g)
    dnn.cross_entropy_backward(h, d_x, d_t, d_g, d_dx, **kw)  # type: ignore[arg-type]
    rows = slice(0, 3)  # finite differences through the whole loss, compared on a few rows
    want = numgrad(lambda v: ce_ref(np.concatenate([v, x[3:]]), t, -100, smoothing, reduction),
                   x[rows].astype(np.float64), g)
    np.testing.assert_allclose(d_dx.get()[rows], want, rtol=1e-3, atol=1e-5)
    if n > 2:
        assert (d_dx.get()[1] == 0).all()


def test_cross_entropy_all_ignored_mean_is_nan_like_pytorch() -> None:
    h = dnn.create_handle()
    loss = cuda.empty(1)
    dnn.cross_entropy_forward(h, cuda.to_device(np.ones((2, 3), np.float32)), cuda.to_device(np.array([-1, -1])),
                              loss, ignore_index=-1)
    assert np.isnan(loss.get()[0])


def test_cross_entropy_target_out_of_range_is_a_device_assert() -> None:
    h = dnn.create_handle()
    loss = cuda.empty(2)
    dnn.cross_entropy_forward(h, cuda.to_device(np.ones((2, 3), np.float32)), cuda.to_device(np.array([0, 3])),
                              loss, reduction="none")
    with pytest.raises(cuda.DeviceFault, match="cudaErrorAssert"):
        loss.get()


def test_cross_entropy_bad_arguments() -> None:
    h = dnn.create_handle()
    x, t = cuda.empty((2, 3)), cuda.to_device(np.zeros(2, np.int64))
    with pytest.raises(LibraryError, match=r"loss must have shape \(\) or \(1,\) for reduction 'mean', got \(2,\)"):
        dnn.cross_entropy_forward(h, x, t, cuda.empty(2))
    with pytest.raises(LibraryError, match=r"target must be int32 or int64, got float32"):
        dnn.cross_entropy_forward(h, x, cuda.empty(2), cuda.empty(()))
    with pytest.raises(LibraryError, match=r"reduction must be 'none', 'mean' or 'sum', got 'avg'"):
        dnn.cross_entropy_forward(h, x, t, cuda.empty(()), reduction="avg")


@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_embedding_forward_and_scatter_add_backward(itype: type) -> None:
    rng = np.random.default_rng(7)
    v, d = 11, 5
    w = rng.standard_normal((v, d)).astype(np.float32)
    idx: np.ndarray = rng.integers(0, v, (3, 7)).astype(itype)
    idx[0, :4] = 2  # repeated rows: the atomics must add them all
    h = dnn.create_handle()
    d_out = cuda.empty((3, 7, d))
    dnn.embedding_forward(h, cuda.to_device(w), cuda.to_device(idx), d_out)
    out = d_out.get()
    assert out.shape == (3, 7, d) and out.dtype == np.float32
    np.testing.assert_array_equal(out, w[idx])
    g = rng.standard_normal((3, 7, d)).astype(np.float32)
    d_dw = cuda.to_device(np.full((v, d), np.nan, np.float32))
    dnn.embedding_backward(h, cuda.to_device(g), cuda.to_device(idx), d_dw, padding_idx=-1)
    want = np.zeros((v, d))
    np.add.at(want, idx.reshape(-1), g.reshape(-1, d))
    want[v - 1] = 0
    np.testing.assert_allclose(d_dw.get(), want, rtol=1e-5, atol=1e-6)


def test_embedding_index_out_of_range_is_a_device_assert() -> None:
    h = dnn.create_handle()
    out = cuda.empty((2, 3))
    dnn.embedding_forward(h, cuda.to_device(np.ones((4, 3), np.float32)), cuda.to_device(np.array([1, 4])), out)
    with pytest.raises(cuda.DeviceFault, match="cudaErrorAssert"):
        out.get()
