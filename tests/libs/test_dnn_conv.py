"""strata.libs.dnn 2-D pooling and convolution (implicit GEMM) against NumPy float64 references; gradients
against central finite differences of those references."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import strata.cuda as cuda
from strata.libs import dnn
from strata.libs.common import LibraryError


def numgrad(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dy: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """d sum(f(x) * dy) / dx by central differences, one element at a time (float64)."""
    x = x.astype(np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = ((f(xp) - f(xm)) * dy).sum() / (2 * eps)
    return g


def pool_ref(x: np.ndarray, mode: str, k: tuple[int, int], s: tuple[int, int], p: tuple[int, int],
             include_pad: bool) -> np.ndarray:
    n, c, h, w = x.shape
    oh, ow = (h + 2 * p[0] - k[0]) // s[0] + 1, (w + 2 * p[1] - k[1]) // s[1] + 1
    fill = -np.inf if mode == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    ones = np.pad(np.ones((h, w)), ((p[0], p[0]), (p[1], p[1])))
    y = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            if mode == "max":
                y[:, :, i, j] = win.max((2, 3))
            else:
                cnt = k[0] * k[1] if include_pad else ones[i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]].sum()
                y[:, :, i, j] = win.sum((2, 3)) / cnt
    return y


@pytest.mark.parametrize(("mode", "shape", "k", "s", "p", "include_pad"), [
    ("max", (2, 3, 7, 6), (3, 3), (2, 2), (1, 1), True),
    ("max", (1, 2, 5, 5), (2, 3), (1, 2), (0, 1), True),
    ("avg", (2, 3, 7, 6), (3, 3), (2, 2), (1, 1), True),
    ("avg", (2, 3, 7, 6), (3, 2), (2, 1), (1, 1), False),
    ("avg", (1, 1, 4, 4), (4, 4), (4, 4), (0, 0), True),
])
def test_pooling(mode: str, shape: tuple[int, ...], k: tuple[int, int], s: tuple[int, int], p: tuple[int, int],
                 include_pad: bool) -> None:
    rng = np.random.default_rng(8)
    x = rng.standard_normal(shape).astype(np.float32)  # distinct values: no ties in a max window
    want = pool_ref(x.astype(np.float64), mode, k, s, p, include_pad)
    h = dnn.create_handle()
    d_x, d_y = cuda.to_device(x), cuda.empty(want.shape)
    dnn.pooling_forward(h, mode, d_x, d_y, k, s, p, count_include_pad=include_pad)
    y = d_y.get()
    assert y.shape == want.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    dy = rng.standard_normal(want.shape).astype(np.float32)
    d_dx = cuda.to_device(np.full(shape, np.nan, np.float32))
    dnn.pooling_backward(h, mode, d_x, cuda.to_device(dy), d_dx, k, s, p, count_include_pad=include_pad)
    ref = numgrad(lambda v: pool_ref(v, mode, k, s, p, include_pad), x.astype(np.float64), dy, eps=1e-6)
    np.testing.assert_allclose(d_dx.get(), ref, rtol=1e-4, atol=1e-5)


def test_max_pooling_ties_go_to_the_first_maximum() -> None:
    h = dnn.create_handle()
    x = cuda.to_device(np.ones((1, 1, 2, 2), np.float32))
    dx = cuda.empty((1, 1, 2, 2))
    dnn.pooling_backward(h, "max", x, cuda.to_device(np.full((1, 1, 1, 1), 5, np.float32)), dx, 2)
    assert dx.get().reshape(-1).tolist() == [5.0, 0.0, 0.0, 0.0]


def conv_ref(x: np.ndarray, w: np.ndarray, stride: tuple[int, int], pad: tuple[int, int], dil: tuple[int, int],
             groups: int, bias: np.ndarray | None = None) -> np.ndarray:
    n, c, hh, ww = x.shape
    k, cg, r_, s_ = w.shape
    p_ = (hh + 2 * pad[0] - dil[0] * (r_ - 1) - 1) // stride[0] + 1
    q_ = (ww + 2 * pad[1] - dil[1] * (s_ - 1) - 1) // stride[1] + 1
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    y = np.zeros((n, k, p_, q_))
    kg = k // groups
    for g in range(groups):
        for r in range(r_):
            for s in range(s_):
                h0, w0 = r * dil[0], s * dil[1]
                patch = xp[:, g * cg:(g + 1) * cg, h0:h0 + stride[0] * (p_ - 1) + 1:stride[0],
                           w0:w0 + stride[1] * (q_ - 1) + 1:stride[1]]
                y[:, g * kg:(g + 1) * kg] += np.einsum("ncpq,kc->nkpq", patch, w[g * kg:(g + 1) * kg, :, r, s])
    return y if bias is None else y + bias.reshape(1, -1, 1, 1)


CONV_CASES = [  # x shape, w shape, stride, padding, dilation, groups
    ((2, 3, 7, 6), (5, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((1, 4, 9, 8), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((2, 4, 6, 7), (4, 1, 3, 3), (2, 2), (2, 1), (2, 1), 4),  # depthwise
    ((1, 17, 5, 5), (18, 17, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # 1x1, more than one tile each way
]


@pytest.mark.parametrize(("xs", "ws", "stride", "pad", "dil", "groups"), CONV_CASES)
def test_conv2d_forward_and_backward(xs: tuple[int, ...], ws: tuple[int, ...], stride: tuple[int, int],
                                     pad: tuple[int, int], dil: tuple[int, int], groups: int) -> None:
    rng = np.random.default_rng(9)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    b = rng.standard_normal(ws[0]).astype(np.float32)
    geo = {"stride": stride, "padding": pad, "dilation": dil, "groups": groups}
    want = conv_ref(x.astype(np.float64), w.astype(np.float64), stride, pad, dil, groups, b)
    ys = dnn.conv2d_output_shape(xs, ws, stride, pad, dil)
    assert ys == want.shape
    h = dnn.create_handle()
    d_x, d_w, d_y = cuda.to_device(x), cuda.to_device(w), cuda.to_device(np.full(ys, np.nan, np.float32))
    dnn.conv2d_forward(h, d_x, d_w, d_y, bias=cuda.to_device(b), **geo)  # type: ignore[arg-type]
    y = d_y.get()
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)

    dy = rng.standard_normal(ys).astype(np.float32)
    d_dy = cuda.to_device(dy)
    d_dx, d_dw, d_db = (cuda.to_device(np.full(s, np.nan, np.float32)) for s in (xs, ws, (ws[0],)))
    dnn.conv2d_backward_data(h, d_w, d_dy, d_dx, **geo)  # type: ignore[arg-type]
    dnn.conv2d_backward_filter(h, d_x, d_dy, d_dw, **geo)  # type: ignore[arg-type]
    dnn.conv2d_backward_bias(h, d_dy, d_db)
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    ref_dx = numgrad(lambda v: conv_ref(v, w64, stride, pad, dil, groups), x64, dy)
    ref_dw = numgrad(lambda v: conv_ref(x64, v, stride, pad, dil, groups), w64, dy)
    np.testing.assert_allclose(d_dx.get(), ref_dx, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d_dw.get(), ref_dw, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(d_db.get(), dy.sum((0, 2, 3)), rtol=1e-5, atol=1e-5)


def test_conv2d_trace_names_the_vendor_calls() -> None:
    from strata import trace

    h = dnn.create_handle()
    x, w, y = cuda.zeros((1, 1, 3, 3)), cuda.zeros((1, 1, 3, 3)), cuda.empty((1, 1, 1, 1))
    with trace.record() as rec:
        dnn.conv2d_forward(h, x, w, y)
    (ev,) = [e for e in rec.events if e.layer == "L4"]
    assert (ev.name, ev.args["cuda"], ev.args["rocm"], ev.args["kernel"]) == (
        "dnn.conv2d_forward", "cudnnConvolutionForward", "miopenConvolutionForward", "conv_fwd")


def test_conv_and_pooling_bad_arguments() -> None:
    h = dnn.create_handle()
    x = cuda.empty((1, 4, 5, 5))
    with pytest.raises(LibraryError, match=r"w.shape\[1\] must be C / groups = 2, got 4"):
        dnn.conv2d_forward(h, x, cuda.empty((2, 4, 3, 3)), cuda.empty((1, 2, 3, 3)), groups=2)
    with pytest.raises(LibraryError, match=r"channels \(4\) and filters \(3\) must be multiples of groups \(2\)"):
        dnn.conv2d_forward(h, x, cuda.empty((3, 2, 3, 3)), cuda.empty((1, 3, 3, 3)), groups=2)
    with pytest.raises(LibraryError, match=r"y must have shape \(1, 2, 5, 5\), got \(1, 2, 3, 3\)"):
        dnn.conv2d_forward(h, x, cuda.empty((2, 4, 3, 3)), cuda.empty((1, 2, 3, 3)), padding=1)
    with pytest.raises(LibraryError, match=r"larger than the padded input"):
        dnn.conv2d_output_shape((1, 1, 2, 2), (1, 1, 3, 3))
    with pytest.raises(LibraryError, match=r"stride must be an int or a pair of ints >= 1, got 0"):
        dnn.pooling_forward(h, "max", x, x, 2, 0)
    with pytest.raises(LibraryError, match=r"padding must be <= kernel_size // 2"):
        dnn.pooling_forward(h, "avg", x, x, 2, 1, 2)
