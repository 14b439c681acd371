"""Framework kernels for strata.nn.functional where strata.libs.dnn has no routine: the activations
(relu, sigmoid, tanh, gelu erf/tanh forms, silu), forward and backward, in double precision, which
cuDNN-style libraries do not offer. Contiguous operands, one thread per element; compiled on first use.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> x = cuda.to_device(np.array([-1.0, 0.0, 2.0]))
    >>> y = cuda.empty(3, np.float64)
    >>> activation_f64("relu", x.ptr, y.ptr, 3)
    >>> y.get().tolist()
    [0.0, 0.0, 2.0]
"""

from __future__ import annotations

import numpy as np

from strata.libs.common import KernelSet

MODES = {"relu": 0, "sigmoid": 1, "tanh": 2, "gelu": 3, "gelu_tanh": 4, "silu": 5}
THREADS = 256

SOURCE = r"""
#define SQRT1_2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794
#define SQRT_2_PI 0.79788456080286535588
#define GELU_C 0.044715

__device__ double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

__device__ double act(int mode, double x) {
    switch (mode) {
    case 0: return x > 0.0 ? x : 0.0;
    case 1: return sigm(x);
    case 2: return tanh(x);
    case 3: return 0.5 * x * (1.0 + erf(x * SQRT1_2));
    case 4: return 0.5 * x * (1.0 + tanh(SQRT_2_PI * (x + GELU_C * x * x * x)));
    default: return x * sigm(x);
    }
}

__device__ double dact(int mode, double x) {
    switch (mode) {
    case 0: return x > 0.0 ? 1.0 : 0.0;
    case 1: { double s = sigm(x); return s * (1.0 - s); }
    case 2: { double t = tanh(x); return 1.0 - t * t; }
    case 3: return 0.5 * (1.0 + erf(x * SQRT1_2)) + x * INV_SQRT_2PI * exp(-0.5 * x * x);
    case 4: {
        double t = tanh(SQRT_2_PI * (x + GELU_C * x * x * x));
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * SQRT_2_PI * (1.0 + 3.0 * GELU_C * x * x);
    }
    default: { double s = sigm(x); return s * (1.0 + x * (1.0 - s)); }
    }
}

extern "C" __global__ void act_fwd_f64(const double* x, double* y, long long n, int mode) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = act(mode, x[i]);
}

extern "C" __global__ void act_bwd_f64(const double* x, const double* dy, double* dx, long long n, int mode) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) dx[i] = dy[i] * dact(mode, x[i]);
}
"""

KERNELS = KernelSet("framework_nn_act_f64", SOURCE)


def activation_f64(mode: str, x: int, y: int, n: int) -> None:
    """y = act(x) for `n` contiguous doubles at device addresses x, y (mode as strata.libs.dnn's)."""
    if n:
        KERNELS.get("act_fwd_f64")(-(-n // THREADS), THREADS, (x, y, np.int64(n), np.int32(MODES[mode])))


def activation_backward_f64(mode: str, x: int, dy: int, dx: int, n: int) -> None:
    """dx = dy * act'(x) for `n` contiguous doubles."""
    if n:
        KERNELS.get("act_bwd_f64")(-(-n // THREADS), THREADS, (x, dy, dx, np.int64(n), np.int32(MODES[mode])))
