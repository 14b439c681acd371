"""Element-wise and last-dimension DNN routines: activations (relu, gelu in its erf and tanh forms, silu,
sigmoid, tanh), softmax and log-softmax, and dropout, forward and backward, as CUDA kernels.

Softmax runs one block per row of the last dimension: a max pass and a sum-of-exponentials pass
(block reductions with warp shuffles), then the write. Dropout draws its keep mask with Philox4x32-10
exactly as `strata.libs.rand.bernoulli(gen, out, 1 - p)` would from the same (seed, offset).
Each kernel is a template for float, half and bfloat16 storage; arithmetic is float.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.dnn.handle import create_handle
    >>> h = create_handle()
    >>> x = cuda.to_device(np.array([[1.0, 2.0, 3.0]], np.float32))
    >>> y = cuda.empty((1, 3), np.float32)
    >>> softmax_forward(h, x, y)
    >>> np.round(y.get().astype(float), 4).tolist()
    [[0.09, 0.2447, 0.6652]]
    >>> activation_forward(h, "relu", cuda.to_device(np.array([-1.0, 2.0], np.float32)), y2 := cuda.empty(2))
    >>> y2.get().tolist()
    [0.0, 2.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import KernelSet, LibraryError, require
from strata.libs.dnn.handle import (
    BAD_PARAM,
    FLOATS,
    REDUCE_CU,
    TYPES_CU,
    Handle,
    check_handle,
    dnn_call,
    instances,
    row_block,
    tensor,
    typed,
)
from strata.libs.rand import Generator
from strata.libs.rand.philox import SOURCE as PHILOX_CU

ACTIVATIONS = {"relu": 0, "sigmoid": 1, "tanh": 2, "gelu": 3, "gelu_tanh": 4, "silu": 5}
CUDNN_MODES = {"relu": "CUDNN_ACTIVATION_RELU", "sigmoid": "CUDNN_ACTIVATION_SIGMOID", "tanh": "CUDNN_ACTIVATION_TANH",
               "gelu": "CUDNN_POINTWISE_GELU_FWD (erf)", "gelu_tanh": "CUDNN_POINTWISE_GELU_APPROX_TANH_FWD",
               "silu": "CUDNN_ACTIVATION_SWISH"}
BLOCK = 256

SOURCE = TYPES_CU + REDUCE_CU + PHILOX_CU + r"""
#define K_SQRT1_2 0.70710678118654752f
#define K_INV_SQRT_2PI 0.39894228040143268f
#define K_SQRT_2_PI 0.79788456080286536f
#define K_GELU_C 0.044715f

__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ float act(int mode, float x) {
    switch (mode) {
    case 0: return x > 0.0f ? x : 0.0f;
    case 1: return sigm(x);
    case 2: return tanhf(x);
    case 3: return 0.5f * x * (1.0f + erff(x * K_SQRT1_2));
    case 4: return 0.5f * x * (1.0f + tanhf(K_SQRT_2_PI * (x + K_GELU_C * x * x * x)));
    default: return x * sigm(x);
    }
}

// d act(x) / dx
__device__ float dact(int mode, float x) {
    switch (mode) {
    case 0: return x > 0.0f ? 1.0f : 0.0f;
    case 1: { float s = sigm(x); return s * (1.0f - s); }
    case 2: { float t = tanhf(x); return 1.0f - t * t; }
    case 3: return 0.5f * (1.0f + erff(x * K_SQRT1_2)) + x * K_INV_SQRT_2PI * expf(-0.5f * x * x);
    case 4: {
        float t = tanhf(K_SQRT_2_PI * (x + K_GELU_C * x * x * x));
        return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * K_SQRT_2_PI * (1.0f + 3.0f * K_GELU_C * x * x);
    }
    default: { float s = sigm(x); return s * (1.0f + x * (1.0f - s)); }
    }
}

template <class T> __global__ void activation_fwd(const T* x, T* y, long long n, int mode) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) st(y, i, act(mode, ld(x, i)));
}

template <class T> __global__ void activation_bwd(const T* x, const T* dy, T* dx, long long n, int mode) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) st(dx, i, ld(dy, i) * dact(mode, ld(x, i)));
}

// one block per row: y = exp(x - max) / sum, or (log) x - max - log(sum)
template <class T> __global__ void softmax_fwd(const T* x, T* y, int cols, int log_mode) {
    long long base = (long long)blockIdx.x * cols;
    float m = NEG_INF;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, ld(x, base + c));
    m = block_max(m);
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(ld(x, base + c) - m);
    s = block_sum(s);
    if (log_mode) {
        float lse = m + logf(s);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) st(y, base + c, ld(x, base + c) - lse);
    } else {
        float inv = 1.0f / s;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) st(y, base + c, expf(ld(x, base + c) - m) * inv);
    }
}

// softmax: dx = y * (dy - sum(dy * y)); log-softmax: dx = dy - exp(y) * sum(dy)
template <class T> __global__ void softmax_bwd(const T* y, const T* dy, T* dx, int cols, int log_mode) {
    long long base = (long long)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
        s += log_mode ? ld(dy, base + c) : ld(dy, base + c) * ld(y, base + c);
    s = block_sum(s);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float yy = ld(y, base + c), g = ld(dy, base + c);
        st(dx, base + c, log_mode ? g - expf(yy) * s : yy * (g - s));
    }
}

// keep = (uniform <= 1 - p), the draw rand.bernoulli makes; y = x * keep * scale
template <class T> __global__ void dropout_fwd(const T* x, T* y, unsigned char* mask, long long n, float keep_p,
                                               float scale, unsigned long long offset, unsigned k0, unsigned k1) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned char keep = to_uniform(raw_at(offset, i, k0, k1)) <= keep_p ? 1 : 0;
    mask[i] = keep;
    st(y, i, keep ? ld(x, i) * scale : 0.0f);
}

template <class T> __global__ void dropout_bwd(const T* dy, const unsigned char* mask, T* dx, long long n,
                                               float scale) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) st(dx, i, mask[i] ? ld(dy, i) * scale : 0.0f);
}
"""

KERNELS = KernelSet("dnn_pointwise", SOURCE, name_expressions=instances(
    "activation_fwd", "activation_bwd", "softmax_fwd", "softmax_bwd", "dropout_fwd", "dropout_bwd"))


def activation_forward(handle: Handle, mode: str, x: DeviceArray, y: DeviceArray) -> None:
    """y = act(x) element-wise (cudnnActivationForward / miopenActivationForward).

    Modes: 'relu' max(x, 0); 'sigmoid' 1/(1+e^-x); 'tanh'; 'gelu' x*Phi(x) = 0.5x(1+erf(x/sqrt 2));
    'gelu_tanh' 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3))); 'silu' x*sigmoid(x) (cuDNN's SWISH with beta 1).

    Args:
        handle: from create_handle.
        mode: one of the modes above.
        x, y: DeviceArrays of one shape and dtype, float32, float16 or bfloat16 (y may be x: in place).
    Raises:
        LibraryError: CUDNN_STATUS_BAD_PARAM for an unknown mode or mismatched shapes.
    """
    op = "activation_forward"
    code = _mode(handle, op, mode)
    x = tensor(x, "x", op, dtypes=FLOATS)
    y = tensor(y, "y", op, x.shape, dtypes=(x.dtype,))
    with dnn_call(handle, op, "cudnnActivationForward", "miopenActivationForward", mode=CUDNN_MODES[mode],
                  shape=x.shape):
        if x.size:
            handle.launch(KERNELS.get(typed("activation_fwd", x.dtype)), -(-x.size // BLOCK), BLOCK,
                          (x, y, np.int64(x.size), np.int32(code)))


def activation_backward(handle: Handle, mode: str, x: DeviceArray, dy: DeviceArray, dx: DeviceArray) -> None:
    """dx = dy * act'(x) element-wise (cudnnActivationBackward / miopenActivationBackward).

    Takes the forward input `x` (cuDNN also takes y; every mode here is a function of x alone).
    relu's derivative at 0 is 0, as in PyTorch.

    Args:
        handle: from create_handle.
        mode: as activation_forward.
        x, dy, dx: DeviceArrays of one shape and floating dtype (dx may be dy).
    """
    op = "activation_backward"
    code = _mode(handle, op, mode)
    x = tensor(x, "x", op, dtypes=FLOATS)
    dy = tensor(dy, "dy", op, x.shape, dtypes=(x.dtype,))
    dx = tensor(dx, "dx", op, x.shape, dtypes=(x.dtype,))
    with dnn_call(handle, op, "cudnnActivationBackward", "miopenActivationBackward", mode=CUDNN_MODES[mode],
                  shape=x.shape):
        if x.size:
            handle.launch(KERNELS.get(typed("activation_bwd", x.dtype)), -(-x.size // BLOCK), BLOCK,
                          (x, dy, dx, np.int64(x.size), np.int32(code)))


def softmax_forward(handle: Handle, x: DeviceArray, y: DeviceArray, log: bool = False) -> None:
    """y = softmax(x) = exp(x - max) / sum exp(x - max) over the last dimension; with `log`,
    y = x - logsumexp(x) (cudnnSoftmaxForward with CUDNN_SOFTMAX_ACCURATE / CUDNN_SOFTMAX_LOG over
    each row; miopenSoftmaxForward_V2 with MIOPEN_SOFTMAX_ACCURATE / MIOPEN_SOFTMAX_LOG).

    Args:
        handle: from create_handle.
        x, y: DeviceArrays of one shape (..., features), at least 1-D, and one floating dtype.
        log: log-softmax.
    """
    op = "softmax_forward"
    check_handle(handle, op)
    x = tensor(x, "x", op, min_ndim=1, dtypes=FLOATS)
    y = tensor(y, "y", op, x.shape, dtypes=(x.dtype,))
    rows, cols = _rows(x)
    with dnn_call(handle, op, "cudnnSoftmaxForward", "miopenSoftmaxForward_V2", log=log, shape=x.shape):
        if rows and cols:
            handle.launch(KERNELS.get(typed("softmax_fwd", x.dtype)), rows, row_block(cols),
                          (x, y, np.int32(cols), np.int32(log)))


def softmax_backward(handle: Handle, y: DeviceArray, dy: DeviceArray, dx: DeviceArray, log: bool = False) -> None:
    """Gradient of softmax over the last dimension from its output y: dx = y * (dy - sum(dy * y));
    with `log` (y = log-softmax), dx = dy - exp(y) * sum(dy) (cudnnSoftmaxBackward / miopenSoftmaxBackward_V2).

    Args:
        handle: from create_handle.
        y, dy, dx: DeviceArrays of one shape (..., features) and one floating dtype.
        log: y came from log-softmax.
    """
    op = "softmax_backward"
    check_handle(handle, op)
    y = tensor(y, "y", op, min_ndim=1, dtypes=FLOATS)
    dy = tensor(dy, "dy", op, y.shape, dtypes=(y.dtype,))
    dx = tensor(dx, "dx", op, y.shape, dtypes=(y.dtype,))
    rows, cols = _rows(y)
    with dnn_call(handle, op, "cudnnSoftmaxBackward", "miopenSoftmaxBackward_V2", log=log, shape=y.shape):
        if rows and cols:
            handle.launch(KERNELS.get(typed("softmax_bwd", y.dtype)), rows, row_block(cols),
                          (y, dy, dx, np.int32(cols), np.int32(log)))


def dropout_forward(handle: Handle, x: DeviceArray, y: DeviceArray, mask: DeviceArray, p: float,
                    gen: Generator) -> None:
    """y = x * keep / (1 - p) with keep ~ Bernoulli(1 - p), drawn with Philox4x32-10 from the generator's
    (seed, offset); the generator's offset advances by x.size (cudnnDropoutForward / miopenDropoutForward,
    whose dropout descriptor holds the RNG state; here a strata.libs.rand Generator does).

    The mask equals what `rand.bernoulli(gen, mask, 1 - p)` writes for the same (seed, offset).

    Args:
        handle: from create_handle.
        x, y: DeviceArrays of one shape and one floating dtype.
        mask: uint8 DeviceArray of that shape: 1 where kept (the reserve space dropout_backward reads).
        p: drop probability in [0, 1] (p == 1 drops everything).
        gen: a strata.libs.rand Generator.
    """
    op = "dropout_forward"
    check_handle(handle, op)
    x = tensor(x, "x", op, dtypes=FLOATS)
    y = tensor(y, "y", op, x.shape, dtypes=(x.dtype,))
    mask = tensor(mask, "mask", op, x.shape, dtypes=(np.uint8,))
    scale = _dropout_scale(op, p)
    if not isinstance(gen, Generator):
        raise LibraryError(BAD_PARAM, f"[{op}] gen must be a strata.libs.rand Generator, got {type(gen).__name__}")
    with dnn_call(handle, op, "cudnnDropoutForward", "miopenDropoutForward", p=p, seed=gen.seed, offset=gen.offset,
                  shape=x.shape):
        if x.size:
            k0, k1 = gen.key
            handle.launch(KERNELS.get(typed("dropout_fwd", x.dtype)), -(-x.size // BLOCK), BLOCK,
                          (x, y, mask, np.int64(x.size), np.float32(1.0 - p), np.float32(scale),
                           np.uint64(gen.offset), np.uint32(k0), np.uint32(k1)))
        gen.offset += x.size


def dropout_backward(handle: Handle, dy: DeviceArray, mask: DeviceArray, dx: DeviceArray, p: float) -> None:
    """dx = dy * mask / (1 - p) (cudnnDropoutBackward / miopenDropoutBackward).

    Args:
        handle: from create_handle.
        dy, dx: DeviceArrays of one shape and one floating dtype.
        mask: the uint8 mask dropout_forward wrote.
        p: the drop probability of the forward call.
    """
    op = "dropout_backward"
    check_handle(handle, op)
    dy = tensor(dy, "dy", op, dtypes=FLOATS)
    mask = tensor(mask, "mask", op, dy.shape, dtypes=(np.uint8,))
    dx = tensor(dx, "dx", op, dy.shape, dtypes=(dy.dtype,))
    scale = _dropout_scale(op, p)
    with dnn_call(handle, op, "cudnnDropoutBackward", "miopenDropoutBackward", p=p, shape=dy.shape):
        if dy.size:
            handle.launch(KERNELS.get(typed("dropout_bwd", dy.dtype)), -(-dy.size // BLOCK), BLOCK,
                          (dy, mask, dx, np.int64(dy.size), np.float32(scale)))


def _mode(handle: Handle, op: str, mode: Any) -> int:
    check_handle(handle, op)
    require(mode in ACTIVATIONS, BAD_PARAM, f"[{op}] mode must be one of {sorted(ACTIVATIONS)}, got {mode!r}")
    return ACTIVATIONS[mode]


def _rows(x: DeviceArray) -> tuple[int, int]:
    cols = x.shape[-1]
    require(cols < 1 << 31, BAD_PARAM, f"[softmax] the last dimension must be < 2^31, got {cols}")
    return (x.size // cols if cols else 0), cols


def _dropout_scale(op: str, p: Any) -> float:
    require(isinstance(p, float | int) and 0.0 <= p <= 1.0, BAD_PARAM, f"[{op}] p must be in [0, 1], got {p!r}")
    return 0.0 if p == 1.0 else 1.0 / (1.0 - float(p))
