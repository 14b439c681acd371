"""strata.libs.dnn activations, softmax / log-softmax and dropout against NumPy float64 references;
backward routines against central finite differences of those references."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.libs import dnn, rand
from strata.libs.common import LibraryError

ERF = np.vectorize(math.erf)
REF: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "gelu": lambda x: 0.5 * x * (1 + ERF(x / math.sqrt(2))),
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "silu": lambda x: x / (1 + np.exp(-x)),
}


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


def run(fn: Callable[..., None], *arrays: np.ndarray, outs: tuple[tuple[int, ...], ...],
        **kw: object) -> list[np.ndarray]:
    """Call fn(h, *inputs, *outputs, **kw) with device copies; return the outputs on the host."""
    h = dnn.create_handle()
    d_in = [cuda.to_device(np.ascontiguousarray(a)) for a in arrays]
    d_out = [cuda.to_device(np.full(s, np.nan, np.float32)) for s in outs]
    fn(h, *d_in, *d_out, **kw)
    return [o.get() for o in d_out]


@pytest.mark.parametrize("mode", sorted(REF))
def test_activation_forward_and_backward(mode: str) -> None:
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 5, 7)) * 3).astype(np.float32)
    x[0, 0, :3] = [40.0, -40.0, 1e-3]  # saturation and the neighbourhood of 0
    dy = rng.standard_normal(x.shape).astype(np.float32)
    h = dnn.create_handle()
    d_x, d_y, d_dy, d_dx = cuda.to_device(x), cuda.empty(x.shape), cuda.to_device(dy), cuda.empty(x.shape)
    dnn.activation_forward(h, mode, d_x, d_y)
    y = d_y.get()
    assert y.shape == x.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, REF[mode](x.astype(np.float64)), rtol=2e-6, atol=2e-6)
    dnn.activation_backward(h, mode, d_x, d_dy, d_dx)
    x64, eps = x.astype(np.float64), 1e-6  # element-wise: one central difference per element at once
    want = (REF[mode](x64 + eps) - REF[mode](x64 - eps)) / (2 * eps) * dy
    if mode == "relu":
        want = np.where(x > 0, dy, 0.0)
    np.testing.assert_allclose(d_dx.get(), want, rtol=1e-4, atol=1e-5)


def test_activation_in_place_and_empty() -> None:
    h = dnn.create_handle()
    x = cuda.to_device(np.array([-2.0, 0.0, 3.0], np.float32))
    dnn.activation_forward(h, "relu", x, x)
    assert x.get().tolist() == [0.0, 0.0, 3.0]
    e = cuda.empty((0, 4))
    dnn.activation_forward(h, "tanh", e, e)
    assert h.last_kernel is None


def softmax_ref(x: np.ndarray, log: bool = False) -> np.ndarray:
    z = x - x.max(-1, keepdims=True)
    lse = np.log(np.exp(z).sum(-1, keepdims=True))
    return z - lse if log else np.exp(z - lse)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (2, 3, 33), (5, 300)])
def test_softmax_forward_backward(shape: tuple[int, ...], log: bool) -> None:
    rng = np.random.default_rng(2)
    x = (rng.standard_normal(shape) * 4).astype(np.float32)
    x.reshape(-1)[0] = 80.0  # exp would overflow without the max shift
    dy = rng.standard_normal(shape).astype(np.float32)
    (y,) = run(dnn.softmax_forward, x, outs=(shape,), log=log)
    assert y.shape == shape and y.dtype == np.float32
    np.testing.assert_allclose(y, softmax_ref(x.astype(np.float64), log), rtol=1e-5, atol=1e-6)
    (dx,) = run(dnn.softmax_backward, y, dy, outs=(shape,), log=log)
    x_small = x.reshape(-1, shape[-1])[:2].reshape(-1, shape[-1])  # finite differences on two rows
    want = numgrad(lambda v: softmax_ref(v, log), x_small, dy.reshape(-1, shape[-1])[:2])
    np.testing.assert_allclose(dx.reshape(-1, shape[-1])[:2], want, rtol=1e-3, atol=1e-5)


def test_dropout_matches_rand_bernoulli_and_scales() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((17, 33)).astype(np.float32)
    p = 0.3
    h = dnn.create_handle()
    gen = rand.create_generator(seed=99, offset=5)
    d_x, d_y, d_m = cuda.to_device(x), cuda.empty(x.shape), cuda.empty(x.shape, np.uint8)
    dnn.dropout_forward(h, d_x, d_y, d_m, p, gen)
    assert gen.offset == 5 + x.size
    ref_mask = cuda.empty(x.shape, np.uint8)
    rand.bernoulli(rand.create_generator(seed=99, offset=5), ref_mask, 1 - p)
    mask = d_m.get()
    assert (mask == ref_mask.get()).all()
    assert 0.55 < mask.mean() < 0.85
    np.testing.assert_allclose(d_y.get(), np.where(mask == 1, x / (1 - p), 0), rtol=1e-6)
    # reproducible from (seed, offset); the next call continues the stream with a different mask
    d_y2, d_m2 = cuda.empty(x.shape), cuda.empty(x.shape, np.uint8)
    dnn.dropout_forward(h, d_x, d_y2, d_m2, p, rand.create_generator(seed=99, offset=5))
    assert (d_m2.get() == mask).all()
    dnn.dropout_forward(h, d_x, d_y2, d_m2, p, gen)
    assert (d_m2.get() != mask).any()
    dy = rng.standard_normal(x.shape).astype(np.float32)
    d_dx = cuda.empty(x.shape)
    dnn.dropout_backward(h, cuda.to_device(dy), d_m, d_dx, p)
    np.testing.assert_allclose(d_dx.get(), np.where(mask == 1, dy / (1 - p), 0), rtol=1e-6)


def test_dropout_edges() -> None:
    h = dnn.create_handle()
    x = cuda.to_device(np.ones(64, np.float32))
    y, m = cuda.empty(64), cuda.empty(64, np.uint8)
    dnn.dropout_forward(h, x, y, m, 1.0, rand.create_generator(1))
    assert (y.get() == 0).all() and (m.get() == 0).all()
    dnn.dropout_forward(h, x, y, m, 0.0, rand.create_generator(1))
    assert (y.get() == 1).all()
    with pytest.raises(LibraryError, match=r"\[dropout_forward\] p must be in \[0, 1\], got 1.5"):
        dnn.dropout_forward(h, x, y, m, 1.5, rand.create_generator(1))


def test_bad_arguments() -> None:
    h = dnn.create_handle()
    x, y = cuda.empty((2, 3)), cuda.empty((3, 2))
    with pytest.raises(LibraryError, match=r"\[softmax_forward\] y must have shape \(2, 3\), got \(3, 2\)") as e:
        dnn.softmax_forward(h, x, y)
    assert e.value.status == "CUDNN_STATUS_BAD_PARAM"
    with pytest.raises(LibraryError, match="mode must be one of") as e:
        dnn.activation_forward(h, "swish", x, x)
    with pytest.raises(LibraryError, match="x must be float32 or float16 or bfloat16, got float64") as e:
        dnn.activation_forward(h, "relu", cuda.empty(3, np.float64), cuda.empty(3))
    assert e.value.status == "CUDNN_STATUS_NOT_SUPPORTED"
    with pytest.raises(LibraryError, match="x must be a DeviceArray, got ndarray"):
        dnn.activation_forward(h, "relu", np.zeros(3, np.float32), cuda.empty(3))  # type: ignore[arg-type]
    dnn.destroy_handle(h)
    with pytest.raises(LibraryError, match="destroyed") as e:
        dnn.softmax_forward(h, x, x)
    assert e.value.status == "CUDNN_STATUS_NOT_INITIALIZED"


def test_stream_and_trace() -> None:
    s = cuda.Stream()
    h = dnn.create_handle(s)
    x = cuda.to_device(np.zeros((4, 8), np.float32))
    y = cuda.empty((4, 8))
    with trace.record() as rec:
        dnn.softmax_forward(h, x, y, log=True)
        s.synchronize()
    ev = [e for e in rec.events if e.layer == "L4"]
    assert [e.name for e in ev] == ["dnn.softmax_forward"]
    assert ev[0].args["cuda"] == "cudnnSoftmaxForward" and ev[0].args["rocm"] == "miopenSoftmaxForward_V2"
    assert ev[0].args["kernel"] == "softmax_fwd<float>" == h.last_kernel
    np.testing.assert_allclose(y.get(), np.full((4, 8), -np.log(8)), rtol=1e-6)


def test_array_on_another_device_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_DEVICES", "h200,h200")
    cuda.set_device(0)  # whichever device an earlier test left current
    h = dnn.create_handle()
    assert h.device.index == 0
    try:
        cuda.set_device(1)
        other = cuda.zeros(4)
    finally:
        cuda.set_device(0)
    with pytest.raises(LibraryError, match=r"\[activation_fwd<float>\] an array lives on device 1, the handle on "):
        dnn.activation_forward(h, "relu", other, cuda.empty(4))


@pytest.mark.parametrize(("dtype", "tol"), [(np.float16, 2e-3), (ml_dtypes.bfloat16, 1.6e-2)])
def test_half_and_bfloat16_storage(dtype: Any, tol: float) -> None:
    # inputs rounded to the storage type, computed in float, rounded once on the way out
    rng = np.random.default_rng(13)
    x = (rng.standard_normal((3, 40)) * 2).astype(dtype)
    dy = rng.standard_normal((3, 40)).astype(dtype)
    x64, dy64 = x.astype(np.float64), dy.astype(np.float64)
    h = dnn.create_handle()
    d_x, d_dy = cuda.to_device(x), cuda.to_device(dy)
    d_y, d_dx = cuda.empty(x.shape, dtype), cuda.empty(x.shape, dtype)
    dnn.activation_forward(h, "gelu_tanh", d_x, d_y)
    assert d_y.get().dtype == np.dtype(dtype) and h.last_kernel is not None and "<" in h.last_kernel
    np.testing.assert_allclose(d_y.get().astype(np.float64), REF["gelu_tanh"](x64), rtol=tol, atol=tol)
    dnn.softmax_forward(h, d_x, d_y, log=True)
    np.testing.assert_allclose(d_y.get().astype(np.float64), softmax_ref(x64, True), rtol=tol, atol=tol)
    y = d_y.get().astype(np.float64)
    dnn.softmax_backward(h, d_y, d_dy, d_dx, log=True)
    np.testing.assert_allclose(d_dx.get().astype(np.float64), dy64 - np.exp(y) * dy64.sum(-1, keepdims=True),
                               rtol=tol, atol=tol)
    with pytest.raises(LibraryError, match=rf"\[softmax_forward\] y must be {np.dtype(dtype).name}, got float32"):
        dnn.softmax_forward(h, d_x, cuda.empty(x.shape, np.float32))
