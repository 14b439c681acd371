"""2-D max and average pooling of strata.libs.dnn (NCHW), forward and backward.

The forward gives each output element a thread. The backward is a gather, not a scatter: each input
element's thread visits the windows that cover it (deterministic, no atomics); for max pooling it
recomputes each window's argmax from x (the first maximum in row-major order, as PyTorch picks),
which is what cudnnPoolingBackward does with its x and y arguments.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.dnn.handle import create_handle
    >>> h = create_handle()
    >>> x = cuda.to_device(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    >>> y = cuda.empty((1, 1, 2, 2))
    >>> pooling_forward(h, "max", x, y, 2)
    >>> y.get().reshape(2, 2).tolist()
    [[5.0, 7.0], [13.0, 15.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import KernelSet, require
from strata.libs.dnn.handle import BAD_PARAM, Handle, check_handle, dnn_call, tensor

BLOCK = 256
MODES = {"max": 0, "avg": 1}

SOURCE = r"""
#define NEG_INF __int_as_float(0xff800000)

// the first maximum of window (oh, ow) in row-major order, as (h * W + w); -1 if it holds only padding
__device__ int window_argmax(const float* xp, int H, int W, int h0, int w0, int kh, int kw) {
    float best = NEG_INF;
    int arg = -1;
    for (int r = 0; r < kh; ++r) {
        int h = h0 + r;
        if (h < 0 || h >= H) continue;
        for (int s = 0; s < kw; ++s) {
            int w = w0 + s;
            if (w < 0 || w >= W) continue;
            float v = xp[h * W + w];
            if (arg < 0 || v > best || v != v) { best = v; arg = h * W + w; if (v != v) return arg; }
        }
    }
    return arg;
}

extern "C" __global__ void pool_fwd(const float* x, float* y, long long NC, int H, int W, int OH, int OW, int kh,
                                    int kw, int sh, int sw, int ph, int pw, int mode, int include_pad) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= NC * OH * OW) return;
    int ow = (int)(i % OW), oh = (int)((i / OW) % OH);
    long long nc = i / ((long long)OH * OW);
    const float* xp = x + nc * H * W;
    int h0 = oh * sh - ph, w0 = ow * sw - pw;
    if (mode == 0) {
        int a = window_argmax(xp, H, W, h0, w0, kh, kw);
        y[i] = a < 0 ? NEG_INF : xp[a];
        return;
    }
    float s = 0.0f;
    int count = 0;
    for (int r = 0; r < kh; ++r)
        for (int c = 0; c < kw; ++c) {
            int h = h0 + r, w = w0 + c;
            if (h >= 0 && h < H && w >= 0 && w < W) { s += xp[h * W + w]; ++count; }
        }
    y[i] = s / (include_pad ? kh * kw : count);
}

extern "C" __global__ void pool_bwd(const float* x, const float* dy, float* dx, long long NC, int H, int W, int OH,
                                    int OW, int kh, int kw, int sh, int sw, int ph, int pw, int mode,
                                    int include_pad) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= NC * H * W) return;
    int w = (int)(i % W), h = (int)((i / W) % H);
    long long nc = i / ((long long)H * W);
    const float* xp = x + nc * H * W;
    const float* dyp = dy + nc * OH * OW;
    // outputs whose window holds row h: oh * sh - ph <= h < oh * sh - ph + kh (C's division truncates
    // toward zero, so a negative numerator still clamps to 0 through max)
    int oh_lo = max(0, (h + ph - kh + sh) / sh), oh_hi = min(OH - 1, (h + ph) / sh);
    int ow_lo = max(0, (w + pw - kw + sw) / sw), ow_hi = min(OW - 1, (w + pw) / sw);
    float g = 0.0f;
    for (int oh = oh_lo; oh <= oh_hi; ++oh)
        for (int ow = ow_lo; ow <= ow_hi; ++ow) {
            int h0 = oh * sh - ph, w0 = ow * sw - pw;
            if (mode == 0) {
                if (window_argmax(xp, H, W, h0, w0, kh, kw) == h * W + w) g += dyp[oh * OW + ow];
            } else {
                int count = kh * kw;
                if (!include_pad)
                    count = (min(h0 + kh, H) - max(h0, 0)) * (min(w0 + kw, W) - max(w0, 0));
                g += dyp[oh * OW + ow] / count;
            }
        }
    dx[i] = g;
}
"""

KERNELS = KernelSet("dnn_pooling", SOURCE)


def pooling_forward(handle: Handle, mode: str, x: DeviceArray, y: DeviceArray, kernel_size: int | tuple[int, int],
                    stride: int | tuple[int, int] | None = None, padding: int | tuple[int, int] = 0, *,
                    count_include_pad: bool = True) -> None:
    """2-D pooling of NCHW x: y[n, c, i, j] = max (or mean) of x[n, c] over the window at
    (i * sh - ph, j * sw - pw) of size kernel_size, padding counted as -inf (max) or 0 (avg)
    (cudnnPoolingForward with CUDNN_POOLING_MAX / CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING or
    _EXCLUDE_PADDING; miopenPoolingForward). Output size (H + 2 ph - kh) // sh + 1 (floor mode).

    Args:
        handle: from create_handle.
        mode: 'max' or 'avg'.
        x: float32 (N, C, H, W).
        y: float32 (N, C, OH, OW).
        kernel_size, stride (default: kernel_size), padding: an int or an (h, w) pair; padding <= kernel // 2.
        count_include_pad: for 'avg', divide by the whole window (True) or by its elements inside x.
    """
    op = "pooling_forward"
    g = _geometry(handle, op, mode, x, kernel_size, stride, padding)
    tensor(y, "y", op, (*x.shape[:2], g[2], g[3]))
    _run(handle, op, "cudnnPoolingForward", "miopenPoolingForward", "pool_fwd", x.shape[0] * x.shape[1] * g[2] * g[3],
         (x, y), x, g, mode, count_include_pad)


def pooling_backward(handle: Handle, mode: str, x: DeviceArray, dy: DeviceArray, dx: DeviceArray,
                     kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                     padding: int | tuple[int, int] = 0, *, count_include_pad: bool = True) -> None:
    """Gradient of pooling_forward: each dy element flows to its window's first maximum ('max') or
    evenly over its window ('avg') (cudnnPoolingBackward / miopenPoolingBackward; x is the forward input).

    Args:
        handle: from create_handle.
        mode, kernel_size, stride, padding, count_include_pad: as in the forward call.
        x, dx: float32 (N, C, H, W).
        dy: float32 (N, C, OH, OW).
    """
    op = "pooling_backward"
    g = _geometry(handle, op, mode, x, kernel_size, stride, padding)
    tensor(dy, "dy", op, (*x.shape[:2], g[2], g[3]))
    tensor(dx, "dx", op, x.shape)
    _run(handle, op, "cudnnPoolingBackward", "miopenPoolingBackward", "pool_bwd", x.size, (x, dy, dx), x, g, mode,
         count_include_pad)


def pair(v: Any, what: str, op: str, minimum: int) -> tuple[int, int]:
    """An int or a pair of ints as an (h, w) pair, each >= minimum."""
    t = (v, v) if isinstance(v, int | np.integer) else tuple(v)
    require(len(t) == 2 and all(isinstance(e, int | np.integer) and e >= minimum for e in t), BAD_PARAM,
            f"[{op}] {what} must be an int or a pair of ints >= {minimum}, got {v!r}")
    return int(t[0]), int(t[1])


def _geometry(handle: Handle, op: str, mode: Any, x: Any, kernel_size: Any, stride: Any,
              padding: Any) -> tuple[int, ...]:
    check_handle(handle, op)
    require(mode in MODES, BAD_PARAM, f"[{op}] mode must be 'max' or 'avg', got {mode!r}")
    x = tensor(x, "x", op)
    require(x.ndim == 4, BAD_PARAM, f"[{op}] x must be 4-D (N, C, H, W), got shape {x.shape}")
    kh, kw = pair(kernel_size, "kernel_size", op, 1)
    sh, sw = pair(kernel_size if stride is None else stride, "stride", op, 1)
    ph, pw = pair(padding, "padding", op, 0)
    require(ph <= kh // 2 and pw <= kw // 2, BAD_PARAM,
            f"[{op}] padding must be <= kernel_size // 2 = ({kh // 2}, {kw // 2}), got ({ph}, {pw})")
    h, w = x.shape[2:]
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    require(oh >= 1 and ow >= 1, BAD_PARAM, f"[{op}] the window ({kh}, {kw}) is larger than the padded input "
                                            f"({h + 2 * ph}, {w + 2 * pw})")
    return h, w, oh, ow, kh, kw, sh, sw, ph, pw


def _run(handle: Handle, op: str, cuda_name: str, rocm_name: str, kernel: str, threads: int,
         arrays: tuple[DeviceArray, ...], x: DeviceArray, g: tuple[int, ...], mode: str, include_pad: bool) -> None:
    with dnn_call(handle, op, cuda_name, rocm_name, mode=mode, shape=x.shape, window=g[4:6], stride=g[6:8],
                  padding=g[8:10]):
        if threads:
            handle.launch(KERNELS.get(kernel), -(-threads // BLOCK), BLOCK,
                          (*arrays, np.int64(x.shape[0] * x.shape[1]), *(np.int32(v) for v in g),
                           np.int32(MODES[mode]), np.int32(include_pad)))
