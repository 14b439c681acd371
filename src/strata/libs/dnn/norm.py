"""Normalisation layers of strata.libs.dnn: layer norm, RMS norm and batch norm, forward and backward.

Layer and RMS norm normalise each row of the last dimension with one block per row (two-pass mean and
variance with block reductions); the backward computes dx per row and dgamma/dbeta per feature column
(one thread per feature summing over rows in order: deterministic, no atomics). Batch norm normalises
each channel of (N, C, *spatial) over N and the spatial positions, one block per channel.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.dnn.handle import create_handle
    >>> h = create_handle()
    >>> x = cuda.to_device(np.array([[1.0, 3.0]], np.float32))
    >>> y, mean, rstd = cuda.empty((1, 2)), cuda.empty(1), cuda.empty(1)
    >>> layer_norm_forward(h, x, None, None, 0.0, y, mean, rstd)
    >>> y.get().tolist(), mean.get().tolist(), rstd.get().tolist()
    ([[-1.0, 1.0]], [2.0], [1.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import KernelSet, require
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

COL_BLOCK = 128

SOURCE = TYPES_CU + REDUCE_CU + r"""
// one block per row. rms: no centring (mean = 0). gamma/beta may be null (no affine). Statistics are float.
template <class T>
__global__ void norm_fwd(const T* x, const T* gamma, const T* beta, T* y, float* mean, float* rstd, int cols,
                         float eps, int rms) {
    long long base = (long long)blockIdx.x * cols;
    float mu = 0.0f;
    if (!rms) {
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += ld(x, base + c);
        mu = block_sum(s) / cols;
    }
    float q = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) { float d = ld(x, base + c) - mu; q += d * d; }
    float r = rsqrtf(block_sum(q) / cols + eps);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float v = (ld(x, base + c) - mu) * r;
        if (gamma) v *= ld(gamma, c);
        if (beta) v += ld(beta, c);
        st(y, base + c, v);
    }
    if (threadIdx.x == 0) { if (mean) mean[blockIdx.x] = mu; rstd[blockIdx.x] = r; }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma (rms: without the mean(g) term)
template <class T>
__global__ void norm_bwd_data(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd, T* dx,
                              int cols, int rms) {
    long long base = (long long)blockIdx.x * cols;
    float mu = rms ? 0.0f : mean[blockIdx.x], r = rstd[blockIdx.x];
    float sg = 0.0f, sgx = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float g = ld(dy, base + c) * (gamma ? ld(gamma, c) : 1.0f);
        sg += g;
        sgx += g * (ld(x, base + c) - mu) * r;
    }
    sg = block_sum(sg) / cols;
    sgx = block_sum(sgx) / cols;
    if (rms) sg = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float g = ld(dy, base + c) * (gamma ? ld(gamma, c) : 1.0f);
        st(dx, base + c, r * (g - sg - (ld(x, base + c) - mu) * r * sgx));
    }
}

// one thread per feature: dgamma = sum_rows dy * xhat, dbeta = sum_rows dy
template <class T>
__global__ void norm_bwd_params(const T* dy, const T* x, const float* mean, const float* rstd, T* dgamma, T* dbeta,
                                int rows, int cols, int rms) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float sg = 0.0f, sb = 0.0f;
    for (int r = 0; r < rows; ++r) {
        float g = ld(dy, (long long)r * cols + c);
        float mu = rms ? 0.0f : mean[r];
        sg += g * (ld(x, (long long)r * cols + c) - mu) * rstd[r];
        sb += g;
    }
    if (dgamma) st(dgamma, c, sg);
    if (dbeta) st(dbeta, c, sb);
}

// batch norm, one block per channel c of x (N, C, S)
__device__ __forceinline__ long long bn_at(long long i, int c, int C, long long S) {
    return ((i / S) * C + c) * S + i % S;
}

extern "C" __global__ void bn_fwd_train(const float* x, const float* gamma, const float* beta, float* y,
                                        float* save_mean, float* save_invstd, float* run_mean, float* run_var,
                                        int N, int C, long long S, float eps, float momentum) {
    int c = blockIdx.x;
    long long M = (long long)N * S;
    float s = 0.0f;
    for (long long i = threadIdx.x; i < M; i += blockDim.x) s += x[bn_at(i, c, C, S)];
    float mu = block_sum(s) / M;
    float q = 0.0f;
    for (long long i = threadIdx.x; i < M; i += blockDim.x) { float d = x[bn_at(i, c, C, S)] - mu; q += d * d; }
    float var = block_sum(q) / M;
    float inv = rsqrtf(var + eps), g = gamma[c], b = beta[c];
    for (long long i = threadIdx.x; i < M; i += blockDim.x) {
        long long a = bn_at(i, c, C, S);
        y[a] = (x[a] - mu) * inv * g + b;
    }
    if (threadIdx.x == 0) {
        if (save_mean) save_mean[c] = mu;
        if (save_invstd) save_invstd[c] = inv;
        // the running variance takes the unbiased estimate, as cuDNN and PyTorch do
        if (run_mean) run_mean[c] = (1.0f - momentum) * run_mean[c] + momentum * mu;
        if (run_var) run_var[c] = (1.0f - momentum) * run_var[c] + momentum * (M > 1 ? var * M / (M - 1) : var);
    }
}

extern "C" __global__ void bn_fwd_infer(const float* x, const float* gamma, const float* beta, const float* mean,
                                        const float* var, float* y, int C, long long S, long long total, float eps) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    int c = (int)((i / S) % C);
    y[i] = (x[i] - mean[c]) * rsqrtf(var[c] + eps) * gamma[c] + beta[c];
}

extern "C" __global__ void bn_bwd(const float* x, const float* dy, const float* gamma, const float* save_mean,
                                  const float* save_invstd, float* dx, float* dgamma, float* dbeta, int N, int C,
                                  long long S) {
    int c = blockIdx.x;
    long long M = (long long)N * S;
    float mu = save_mean[c], inv = save_invstd[c];
    float sb = 0.0f, sg = 0.0f;
    for (long long i = threadIdx.x; i < M; i += blockDim.x) {
        long long a = bn_at(i, c, C, S);
        sb += dy[a];
        sg += dy[a] * (x[a] - mu) * inv;
    }
    sb = block_sum(sb);
    sg = block_sum(sg);
    float k = gamma[c] * inv;
    for (long long i = threadIdx.x; i < M; i += blockDim.x) {
        long long a = bn_at(i, c, C, S);
        dx[a] = k * (dy[a] - sb / M - (x[a] - mu) * inv * sg / M);
    }
    if (threadIdx.x == 0) { dgamma[c] = sg; dbeta[c] = sb; }
}
"""

KERNELS = KernelSet("dnn_norm", SOURCE, name_expressions=instances("norm_fwd", "norm_bwd_data", "norm_bwd_params"))


def layer_norm_forward(handle: Handle, x: DeviceArray, gamma: DeviceArray | None, beta: DeviceArray | None,
                       eps: float, y: DeviceArray, mean: DeviceArray, rstd: DeviceArray) -> None:
    """y = (x - mean) * rstd * gamma + beta over the last dimension, rstd = 1 / sqrt(var + eps) with the
    biased variance (cudnnNormalizationForwardTraining with CUDNN_NORM_PER_CHANNEL over features, the
    cuDNN frontend's LayerNorm; miopenLayerNormForward).

    Args:
        handle: from create_handle.
        x, y: (..., features), float32, float16 or bfloat16 (one dtype for x, y, gamma, beta).
        gamma, beta: (features,), or None for no scale / no shift.
        eps: added to the variance.
        mean, rstd: float32 x.shape[:-1], written (what the backward reads).
    """
    _norm_forward(handle, "layer_norm_forward", "cudnnNormalizationForwardTraining (layer norm)",
                  "miopenLayerNormForward", x, gamma, beta, eps, y, mean, rstd, rms=False)


def layer_norm_backward(handle: Handle, dy: DeviceArray, x: DeviceArray, gamma: DeviceArray | None,
                        mean: DeviceArray, rstd: DeviceArray, dx: DeviceArray, dgamma: DeviceArray | None,
                        dbeta: DeviceArray | None) -> None:
    """Gradients of layer_norm_forward: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) with
    g = dy * gamma and xhat = (x - mean) * rstd; dgamma = sum_rows dy * xhat, dbeta = sum_rows dy
    (cudnnNormalizationBackward; MIOpen's documented 6.x API has only the forward, miopenLayerNormForward).

    Args:
        handle: from create_handle.
        dy, x, dx: (..., features), x's floating dtype for all of them and for gamma, dgamma, dbeta.
        gamma: (features,) or None.
        mean, rstd: what layer_norm_forward wrote (float32).
        dgamma, dbeta: (features,) outputs, or None to skip.
    """
    _norm_backward(handle, "layer_norm_backward", "cudnnNormalizationBackward (layer norm)",
                   "(none in MIOpen 6.x: forward only)", dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rms=False)


def rms_norm_forward(handle: Handle, x: DeviceArray, gamma: DeviceArray | None, eps: float, y: DeviceArray,
                     rstd: DeviceArray) -> None:
    """y = x * rstd * gamma over the last dimension, rstd = 1 / sqrt(mean(x^2) + eps) (the cuDNN
    frontend's RMSNorm; MIOpen's miopenT5LayerNormForward).

    Args:
        handle: from create_handle.
        x, y: (..., features), float32, float16 or bfloat16 (gamma likewise).
        gamma: (features,) or None.
        eps: added to the mean square.
        rstd: float32 x.shape[:-1], written.
    """
    _norm_forward(handle, "rms_norm_forward", "cudnn frontend RMSNorm (forward)", "miopenT5LayerNormForward", x,
                  gamma, None, eps, y, None, rstd, rms=True)


def rms_norm_backward(handle: Handle, dy: DeviceArray, x: DeviceArray, gamma: DeviceArray | None,
                      rstd: DeviceArray, dx: DeviceArray, dgamma: DeviceArray | None) -> None:
    """Gradients of rms_norm_forward: dx = rstd * (g - xhat * mean(g * xhat)), g = dy * gamma,
    xhat = x * rstd; dgamma = sum_rows dy * xhat (cudnn frontend RMSNorm backward / miopenT5LayerNormBackward).

    Args:
        handle: from create_handle.
        dy, x, dx: (..., features), one floating dtype (gamma and dgamma likewise).
        gamma: (features,) or None.
        rstd: what rms_norm_forward wrote (float32).
        dgamma: (features,) output, or None to skip.
    """
    _norm_backward(handle, "rms_norm_backward", "cudnn frontend RMSNorm (backward)", "miopenT5LayerNormBackward", dy,
                   x, gamma, None, rstd, dx, dgamma, None, rms=True)


def batch_norm_forward_training(handle: Handle, x: DeviceArray, gamma: DeviceArray, beta: DeviceArray, eps: float,
                                momentum: float, running_mean: DeviceArray | None, running_var: DeviceArray | None,
                                y: DeviceArray, save_mean: DeviceArray | None,
                                save_invstd: DeviceArray | None) -> None:
    """y = (x - mean_c) / sqrt(var_c + eps) * gamma_c + beta_c with each channel's batch statistics over
    N and the spatial positions (biased variance); running stats r = (1 - momentum) r + momentum * stat
    with the unbiased variance (cudnnBatchNormalizationForwardTraining, CUDNN_BATCHNORM_SPATIAL, whose
    exponentialAverageFactor is `momentum`; miopenBatchNormalizationForwardTraining).

    Args:
        handle: from create_handle.
        x, y: float32 (N, C, *spatial), at least 2-D.
        gamma, beta: float32 (C,).
        eps: added to the variance.
        momentum: in [0, 1].
        running_mean, running_var: float32 (C,) updated in place, or None.
        save_mean, save_invstd: float32 (C,) outputs for batch_norm_backward, or None.
    """
    op = "batch_norm_forward_training"
    x, (n, c, s) = _bn_shape(handle, op, x)
    tensor(y, "y", op, x.shape)
    params = [tensor(a, w, op, (c,)) for a, w in ((gamma, "gamma"), (beta, "beta"))]
    opt = [_opt(a, w, op, (c,)) for a, w in ((save_mean, "save_mean"), (save_invstd, "save_invstd"),
                                              (running_mean, "running_mean"), (running_var, "running_var"))]
    require(0.0 <= momentum <= 1.0, BAD_PARAM, f"[{op}] momentum must be in [0, 1], got {momentum}")
    _eps(op, eps)
    with dnn_call(handle, op, "cudnnBatchNormalizationForwardTraining", "miopenBatchNormalizationForwardTraining",
                  shape=x.shape):
        if c and n * s:
            handle.launch(KERNELS.get("bn_fwd_train"), c, row_block(n * s),
                          (x, *params, y, *opt, np.int32(n), np.int32(c), np.int64(s), np.float32(eps),
                           np.float32(momentum)))


def batch_norm_forward_inference(handle: Handle, x: DeviceArray, gamma: DeviceArray, beta: DeviceArray,
                                 running_mean: DeviceArray, running_var: DeviceArray, eps: float,
                                 y: DeviceArray) -> None:
    """y = (x - running_mean_c) / sqrt(running_var_c + eps) * gamma_c + beta_c
    (cudnnBatchNormalizationForwardInference / miopenBatchNormalizationForwardInference).

    Args:
        handle: from create_handle.
        x, y: float32 (N, C, *spatial).
        gamma, beta, running_mean, running_var: float32 (C,).
        eps: added to the variance.
    """
    op = "batch_norm_forward_inference"
    x, (n, c, s) = _bn_shape(handle, op, x)
    tensor(y, "y", op, x.shape)
    params = [tensor(a, w, op, (c,)) for a, w in ((gamma, "gamma"), (beta, "beta"), (running_mean, "running_mean"),
                                                   (running_var, "running_var"))]
    _eps(op, eps)
    with dnn_call(handle, op, "cudnnBatchNormalizationForwardInference", "miopenBatchNormalizationForwardInference",
                  shape=x.shape):
        if x.size:
            handle.launch(KERNELS.get("bn_fwd_infer"), -(-x.size // 256), 256,
                          (x, *params, y, np.int32(c), np.int64(s), np.int64(x.size), np.float32(eps)))


def batch_norm_backward(handle: Handle, x: DeviceArray, dy: DeviceArray, gamma: DeviceArray, save_mean: DeviceArray,
                        save_invstd: DeviceArray, dx: DeviceArray, dgamma: DeviceArray, dbeta: DeviceArray) -> None:
    """Gradients of batch_norm_forward_training: dbeta_c = sum dy, dgamma_c = sum dy * xhat,
    dx = gamma_c * invstd_c * (dy - dbeta_c / M - xhat * dgamma_c / M), M = N * prod(spatial)
    (cudnnBatchNormalizationBackward / miopenBatchNormalizationBackward).

    Args:
        handle: from create_handle.
        x, dy, dx: float32 (N, C, *spatial).
        gamma, save_mean, save_invstd: float32 (C,) (the last two from the forward call).
        dgamma, dbeta: float32 (C,) outputs.
    """
    op = "batch_norm_backward"
    x, (n, c, s) = _bn_shape(handle, op, x)
    tensor(dy, "dy", op, x.shape)
    tensor(dx, "dx", op, x.shape)
    params = [tensor(a, w, op, (c,)) for a, w in ((gamma, "gamma"), (save_mean, "save_mean"),
                                                   (save_invstd, "save_invstd"))]
    grads = [tensor(a, w, op, (c,)) for a, w in ((dgamma, "dgamma"), (dbeta, "dbeta"))]
    with dnn_call(handle, op, "cudnnBatchNormalizationBackward", "miopenBatchNormalizationBackward", shape=x.shape):
        if c and n * s:
            handle.launch(KERNELS.get("bn_bwd"), c, row_block(n * s),
                          (x, dy, *params, dx, *grads, np.int32(n), np.int32(c), np.int64(s)))


def _norm_forward(handle: Handle, op: str, cuda_name: str, rocm_name: str, x: DeviceArray, gamma: Any, beta: Any,
                  eps: float, y: DeviceArray, mean: Any, rstd: DeviceArray, *, rms: bool) -> None:
    check_handle(handle, op)
    x = tensor(x, "x", op, min_ndim=1, dtypes=FLOATS)
    tensor(y, "y", op, x.shape, dtypes=(x.dtype,))
    cols, rows = x.shape[-1], x.shape[:-1]
    g, b = _opt(gamma, "gamma", op, (cols,), x.dtype), _opt(beta, "beta", op, (cols,), x.dtype)
    m = 0 if rms else tensor(mean, "mean", op, rows)
    tensor(rstd, "rstd", op, rows)
    _eps(op, eps)
    with dnn_call(handle, op, cuda_name, rocm_name, shape=x.shape, eps=eps):
        if x.size:
            handle.launch(KERNELS.get(typed("norm_fwd", x.dtype)), x.size // cols, row_block(cols),
                          (x, g, b, y, m, rstd, np.int32(cols), np.float32(eps), np.int32(rms)))


def _norm_backward(handle: Handle, op: str, cuda_name: str, rocm_name: str, dy: DeviceArray, x: DeviceArray,
                   gamma: Any, mean: Any, rstd: DeviceArray, dx: DeviceArray, dgamma: Any, dbeta: Any, *,
                   rms: bool) -> None:
    check_handle(handle, op)
    x = tensor(x, "x", op, min_ndim=1, dtypes=FLOATS)
    tensor(dy, "dy", op, x.shape, dtypes=(x.dtype,))
    tensor(dx, "dx", op, x.shape, dtypes=(x.dtype,))
    cols, rows = x.shape[-1], x.shape[:-1]
    g = _opt(gamma, "gamma", op, (cols,), x.dtype)
    m = 0 if rms else tensor(mean, "mean", op, rows)
    tensor(rstd, "rstd", op, rows)
    dg, db = _opt(dgamma, "dgamma", op, (cols,), x.dtype), _opt(dbeta, "dbeta", op, (cols,), x.dtype)
    nrows = x.size // cols if cols else 0
    with dnn_call(handle, op, cuda_name, rocm_name, shape=x.shape):
        if x.size:
            handle.launch(KERNELS.get(typed("norm_bwd_data", x.dtype)), nrows, row_block(cols),
                          (dy, x, g, m, rstd, dx, np.int32(cols), np.int32(rms)))
        if cols and (dgamma is not None or dbeta is not None):
            handle.launch(KERNELS.get(typed("norm_bwd_params", x.dtype)), -(-cols // COL_BLOCK), COL_BLOCK,
                          (dy, x, m, rstd, dg, db, np.int32(nrows), np.int32(cols), np.int32(rms)))


def _opt(a: Any, what: str, op: str, shape: tuple[int, ...], dtype: Any = np.float32) -> DeviceArray | int:
    """An optional array argument of `dtype`: the array, or 0 (a null pointer) for None."""
    return 0 if a is None else tensor(a, what, op, shape, dtypes=(dtype,))


def _eps(op: str, eps: float) -> None:
    require(isinstance(eps, float | int) and eps >= 0, BAD_PARAM, f"[{op}] eps must be >= 0, got {eps!r}")


def _bn_shape(handle: Handle, op: str, x: Any) -> tuple[DeviceArray, tuple[int, int, int]]:
    check_handle(handle, op)
    x = tensor(x, "x", op, min_ndim=2)
    s = int(np.prod(x.shape[2:], dtype=np.int64))
    return x, (x.shape[0], x.shape[1], s)
