"""strata.libs.dnn fused (flash) attention against a naive NumPy float64 reference, with and without the
causal mask; the backward against central finite differences of that reference."""

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


def naive(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, causal: bool) -> tuple[np.ndarray, np.ndarray]:
    """The whole score matrix, masked, softmaxed, times v; and each row's logsumexp."""
    s = scale * q @ np.swapaxes(k, -1, -2)
    if causal:
        tq, tk = s.shape[-2:]
        s = np.where(np.arange(tk)[None, :] > np.arange(tq)[:, None], -np.inf, s)
    m = s.max(-1, keepdims=True)
    e = np.exp(s - m)
    return e / e.sum(-1, keepdims=True) @ v, (m + np.log(e.sum(-1, keepdims=True)))[..., 0]


CASES = [  # batch dims, Tq, Tk, D, causal
    ((1, 2), 5, 7, 8, False),
    ((1, 2), 5, 7, 8, True),
    ((2,), 33, 33, 16, True),
    ((1,), 17, 40, 64, False),
    ((1, 1), 20, 10, 4, True),  # more queries than keys
    ((1,), 3, 18, 128, False),
    ((2, 1), 9, 9, 1, True),
]


@pytest.mark.parametrize(("lead", "tq", "tk", "d", "causal"), CASES)
def test_attention_forward_matches_naive(lead: tuple[int, ...], tq: int, tk: int, d: int, causal: bool) -> None:
    rng = np.random.default_rng(10)
    q = rng.standard_normal((*lead, tq, d)).astype(np.float32)
    k = rng.standard_normal((*lead, tk, d)).astype(np.float32)
    v = rng.standard_normal((*lead, tk, d)).astype(np.float32)
    h = dnn.create_handle()
    d_out, d_lse = cuda.empty(q.shape), cuda.empty(q.shape[:-1])
    dnn.attention_forward(h, cuda.to_device(q), cuda.to_device(k), cuda.to_device(v), d_out, d_lse, causal=causal)
    want, want_lse = naive(q.astype(np.float64), k.astype(np.float64), v.astype(np.float64), 1 / np.sqrt(d), causal)
    out = d_out.get()
    assert out.shape == q.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(d_lse.get(), want_lse, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("lead", "tq", "tk", "d", "causal", "scale"), [
    ((1, 2), 5, 7, 3, False, None), ((1,), 18, 18, 4, True, 0.7), ((1,), 6, 3, 2, True, None)])
def test_attention_backward_matches_finite_differences(lead: tuple[int, ...], tq: int, tk: int, d: int, causal: bool,
                                                       scale: float | None) -> None:
    rng = np.random.default_rng(11)
    q = rng.standard_normal((*lead, tq, d)).astype(np.float32)
    k = rng.standard_normal((*lead, tk, d)).astype(np.float32)
    v = rng.standard_normal((*lead, tk, d)).astype(np.float32)
    dout = rng.standard_normal(q.shape).astype(np.float32)
    h = dnn.create_handle()
    d_q, d_k, d_v = cuda.to_device(q), cuda.to_device(k), cuda.to_device(v)
    d_out, d_lse = cuda.empty(q.shape), cuda.empty(q.shape[:-1])
    dnn.attention_forward(h, d_q, d_k, d_v, d_out, d_lse, scale=scale, causal=causal)
    d_dq, d_dk, d_dv = (cuda.to_device(np.full(a.shape, np.nan, np.float32)) for a in (q, k, v))
    dnn.attention_backward(h, d_q, d_k, d_v, d_out, cuda.to_device(dout), d_lse, d_dq, d_dk, d_dv, scale=scale,
                           causal=causal)
    sc = 1 / np.sqrt(d) if scale is None else scale
    q64, k64, v64 = q.astype(np.float64), k.astype(np.float64), v.astype(np.float64)
    want_dq = numgrad(lambda a: naive(a, k64, v64, sc, causal)[0], q64, dout)
    want_dk = numgrad(lambda a: naive(q64, a, v64, sc, causal)[0], k64, dout)
    want_dv = numgrad(lambda a: naive(q64, k64, a, sc, causal)[0], v64, dout)
    np.testing.assert_allclose(d_dq.get(), want_dq, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(d_dk.get(), want_dk, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(d_dv.get(), want_dv, rtol=1e-3, atol=1e-4)


def test_attention_backward_larger_tiles_against_the_analytic_gradient() -> None:
    # several query and key tiles, causal: the closed-form gradient of the naive reference
    rng = np.random.default_rng(12)
    tq = tk = 37
    d = 24
    q, k, v, dout = (rng.standard_normal((2, tq, d)) for _ in range(4))
    sc = 1 / np.sqrt(d)
    out, lse = naive(q, k, v, sc, True)
    p = np.exp(np.where(np.arange(tk)[None, :] > np.arange(tq)[:, None], -np.inf, sc * q @ np.swapaxes(k, 1, 2))
               - lse[..., None])
    dp = dout @ np.swapaxes(v, 1, 2)
    ds = p * (dp - (dout * out).sum(-1, keepdims=True))
    want = {"dq": sc * ds @ k, "dk": sc * np.swapaxes(ds, 1, 2) @ q, "dv": np.swapaxes(p, 1, 2) @ dout}
    h = dnn.create_handle()
    d_q, d_k, d_v = (cuda.to_device(a.astype(np.float32)) for a in (q, k, v))
    d_out, d_lse = cuda.empty(q.shape), cuda.empty(q.shape[:-1])
    dnn.attention_forward(h, d_q, d_k, d_v, d_out, d_lse, causal=True)
    grads = {n: cuda.empty(q.shape) for n in want}
    d_dout = cuda.to_device(dout.astype(np.float32))
    dnn.attention_backward(h, d_q, d_k, d_v, d_out, d_dout, d_lse, grads["dq"], grads["dk"], grads["dv"], causal=True)
    assert h.last_kernel == "attn_bwd_dot+attn_bwd_dkv+attn_bwd_dq"
    for n, w in want.items():
        np.testing.assert_allclose(grads[n].get(), w, rtol=1e-3, atol=1e-4, err_msg=n)


def test_attention_bad_arguments() -> None:
    h = dnn.create_handle()
    q = cuda.empty((2, 4, 8))
    with pytest.raises(LibraryError, match=r"k must have shape \(2, 'Tk', 8\), got \(2, 4, 7\)"):
        dnn.attention_forward(h, q, cuda.empty((2, 4, 7)), cuda.empty((2, 4, 7)), q, cuda.empty((2, 4)))
    with pytest.raises(LibraryError, match=r"head dimension must be <= 128, got 129") as e:
        big = cuda.empty((1, 2, 129))
        dnn.attention_forward(h, big, big, big, big, cuda.empty((1, 2)))
    assert e.value.status == "CUDNN_STATUS_NOT_SUPPORTED"
    with pytest.raises(LibraryError, match=r"lse must have shape \(2, 4\), got \(2, 8\)"):
        dnn.attention_forward(h, q, q, q, cuda.empty(q.shape), cuda.empty((2, 8)))
