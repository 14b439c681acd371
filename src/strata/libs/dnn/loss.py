"""Cross-entropy and embedding of strata.libs.dnn, forward and backward.

Cross-entropy is fused log-softmax + negative log-likelihood over the classes of each row (one block
per row), with PyTorch's ignore_index, label smoothing and reductions. The embedding backward is a
scatter-add: every (index, feature) pair adds its gradient into dweight with atomicAdd. A target or
index out of range is a device-side assertion (cudaErrorAssert, sticky on the context), as in PyTorch.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.dnn.handle import create_handle
    >>> h = create_handle()
    >>> logits = cuda.to_device(np.zeros((2, 4), np.float32))
    >>> target = cuda.to_device(np.array([1, 3], np.int64))
    >>> loss = cuda.empty((), np.float32)
    >>> cross_entropy_forward(h, logits, target, loss)
    >>> round(float(loss.get()), 6) == round(float(np.log(4)), 6)
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import KernelSet, require
from strata.libs.dnn.handle import BAD_PARAM, REDUCE_CU, Handle, check_handle, dnn_call, row_block, tensor

REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}
INDEX_TYPES = (np.int32, np.int64)
BLOCK = 256

SOURCE = REDUCE_CU + r"""
__device__ __forceinline__ long long index_at(const void* p, long long i, int is64) {
    return is64 ? ((const long long*)p)[i] : (long long)((const int*)p)[i];
}

// one block per row: loss_r = (1 - eps) * (lse - x_t) + eps * (lse - mean_c x_c); ignored rows give 0.
// valid_r (if not null) = 1 for counted rows.
extern "C" __global__ void ce_fwd(const float* x, const void* target, int is64, float* loss, float* valid, int C,
                                  long long ignore_index, float smoothing) {
    long long r = blockIdx.x;
    const float* xr = x + r * C;
    long long t = index_at(target, r, is64);
    float m = NEG_INF;
    for (int c = threadIdx.x; c < C; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_max(m);
    float s = 0.0f, sx = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) { s += expf(xr[c] - m); sx += xr[c]; }
    s = block_sum(s);
    sx = block_sum(sx);
    if (threadIdx.x != 0) return;
    if (t == ignore_index) { loss[r] = 0.0f; if (valid) valid[r] = 0.0f; return; }
    assert(t >= 0 && t < C);
    float lse = m + logf(s);
    loss[r] = (1.0f - smoothing) * (lse - xr[t]) + smoothing * (lse - sx / C);
    if (valid) valid[r] = 1.0f;
}

// one block: out[0] = sum(loss) (mean: / sum(valid)); also count[0] = sum(valid) if count is not null
extern "C" __global__ void ce_reduce(const float* loss, const float* valid, float* out, long long n, int mean) {
    float s = 0.0f, v = 0.0f;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) { s += loss[i]; v += valid[i]; }
    s = block_sum(s);
    v = block_sum(v);
    if (threadIdx.x == 0) out[0] = mean ? s / v : s;
}

// one block: count[0] = number of rows whose target is not ignore_index
extern "C" __global__ void ce_count(const void* target, int is64, long long n, long long ignore_index, float* count) {
    float v = 0.0f;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) v += index_at(target, i, is64) != ignore_index;
    v = block_sum(v);
    if (threadIdx.x == 0) count[0] = v;
}

// one block per row: dx = scale * (softmax(x) - (1 - eps) onehot(t) - eps / C)
extern "C" __global__ void ce_bwd(const float* x, const void* target, int is64, const float* dloss, const float* count,
                                  float* dx, int C, long long ignore_index, float smoothing, int reduction) {
    long long r = blockIdx.x;
    const float* xr = x + r * C;
    float* dr = dx + r * C;
    long long t = index_at(target, r, is64);
    if (t == ignore_index) {
        for (int c = threadIdx.x; c < C; c += blockDim.x) dr[c] = 0.0f;
        return;
    }
    if (threadIdx.x == 0) assert(t >= 0 && t < C);
    float scale = reduction == 0 ? dloss[r] : reduction == 1 ? dloss[0] / count[0] : dloss[0];
    float m = NEG_INF;
    for (int c = threadIdx.x; c < C; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_max(m);
    float s = 0.0f;
    for (int c = threadIdx.x; c < C; c += blockDim.x) s += expf(xr[c] - m);
    float inv = 1.0f / block_sum(s);
    for (int c = threadIdx.x; c < C; c += blockDim.x)
        dr[c] = scale * (expf(xr[c] - m) * inv - (c == t ? 1.0f - smoothing : 0.0f) - smoothing / C);
}

// out[i, d] = weight[indices[i], d]
extern "C" __global__ void embedding_fwd(const float* weight, const void* indices, int is64, float* out, long long n,
                                         int D, long long V) {
    long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n * D) return;
    long long i = e / D, d = e % D, t = index_at(indices, i, is64);
    assert(t >= 0 && t < V);
    out[e] = weight[t * D + d];
}

extern "C" __global__ void fill_zero(float* p, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) p[i] = 0.0f;
}

// dweight[indices[i], d] += dout[i, d] (scatter-add; rows equal to padding_idx get nothing)
extern "C" __global__ void embedding_bwd(const float* dout, const void* indices, int is64, float* dweight, long long n,
                                         int D, long long V, long long padding_idx) {
    long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n * D) return;
    long long i = e / D, d = e % D, t = index_at(indices, i, is64);
    assert(t >= 0 && t < V);
    if (t != padding_idx) atomicAdd(&dweight[t * D + d], dout[e]);
}
"""

KERNELS = KernelSet("dnn_loss", SOURCE)


def cross_entropy_forward(handle: Handle, logits: DeviceArray, target: DeviceArray, loss: DeviceArray, *,
                          ignore_index: int = -100, label_smoothing: float = 0.0, reduction: str = "mean") -> None:
    """loss_i = (1 - eps) * -log softmax(x_i)[t_i] + eps * mean_c(-log softmax(x_i)[c]), 0 where
    t_i == ignore_index; reduced as PyTorch's cross_entropy does ('mean' divides by the number of rows
    not ignored). Neither cuDNN nor MIOpen has a cross-entropy call: this plays the role of
    cudnnSoftmaxForward / miopenSoftmaxForward_V2 in LOG mode fused with the NLL kernel frameworks add.

    Args:
        handle: from create_handle.
        logits: float32 (N, C).
        target: int32 or int64 (N,), class indices in [0, C) or ignore_index.
        loss: float32 (N,) for reduction 'none', else a one-element array (shape () or (1,)).
        ignore_index: target value whose rows count for nothing.
        label_smoothing: eps in [0, 1].
        reduction: 'none', 'mean' or 'sum'.
    Raises:
        LibraryError: CUDNN_STATUS_BAD_PARAM for mismatched shapes or bad options.
        DeviceFault: cudaErrorAssert (when the result is read) for a target outside [0, C).
    """
    op = "cross_entropy_forward"
    logits, target, n, c, is64 = _ce_args(handle, op, logits, target, label_smoothing, reduction)
    _loss_shape(op, "loss", loss, n, reduction)
    with dnn_call(handle, op, "cudnnSoftmaxForward (LOG) + NLL", "miopenSoftmaxForward_V2 (LOG) + NLL",
                  shape=logits.shape, reduction=reduction, label_smoothing=label_smoothing):
        if reduction == "none":
            if n:
                handle.launch(KERNELS.get("ce_fwd"), n, row_block(c), (logits, target, is64, loss, 0, np.int32(c),
                                                                       np.int64(ignore_index),
                                                                       np.float32(label_smoothing)))
            return
        ws = handle.workspace(8 * max(n, 1)).ptr
        if n:
            handle.launch(KERNELS.get("ce_fwd"), n, row_block(c), (logits, target, is64, ws, ws + 4 * n, np.int32(c),
                                                                   np.int64(ignore_index),
                                                                   np.float32(label_smoothing)))
        handle.launch(KERNELS.get("ce_reduce"), 1, 256, (ws, ws + 4 * n, loss, np.int64(n),
                                                         np.int32(reduction == "mean")))


def cross_entropy_backward(handle: Handle, logits: DeviceArray, target: DeviceArray, dloss: DeviceArray,
                           dlogits: DeviceArray, *, ignore_index: int = -100, label_smoothing: float = 0.0,
                           reduction: str = "mean") -> None:
    """dlogits_i = g_i * (softmax(x_i) - (1 - eps) onehot(t_i) - eps / C), 0 for ignored rows, where g_i is
    dloss_i ('none'), dloss / (rows not ignored) ('mean') or dloss ('sum') (the role of
    cudnnSoftmaxBackward + the NLL backward frameworks add).

    Args:
        handle: from create_handle.
        logits, dlogits: float32 (N, C).
        target: int32 or int64 (N,).
        dloss: float32 shaped like the forward's loss.
        ignore_index, label_smoothing, reduction: as in the forward call.
    """
    op = "cross_entropy_backward"
    logits, target, n, c, is64 = _ce_args(handle, op, logits, target, label_smoothing, reduction)
    _loss_shape(op, "dloss", dloss, n, reduction)
    tensor(dlogits, "dlogits", op, logits.shape)
    with dnn_call(handle, op, "cudnnSoftmaxBackward (LOG) + NLL backward",
                  "miopenSoftmaxBackward_V2 (LOG) + NLL backward", shape=logits.shape, reduction=reduction):
        if not n or not c:
            return
        count = 0
        if reduction == "mean":
            count = handle.workspace(4).ptr
            handle.launch(KERNELS.get("ce_count"), 1, 256, (target, is64, np.int64(n), np.int64(ignore_index), count))
        handle.launch(KERNELS.get("ce_bwd"), n, row_block(c),
                      (logits, target, is64, dloss, count, dlogits, np.int32(c), np.int64(ignore_index),
                       np.float32(label_smoothing), np.int32(REDUCTIONS[reduction])))


def embedding_forward(handle: Handle, weight: DeviceArray, indices: DeviceArray, out: DeviceArray) -> None:
    """out[..., :] = weight[indices[...], :] (an embedding lookup: the gather frameworks run beside
    cuDNN; no cuDNN/MIOpen counterpart, the role of PyTorch's embedding kernel).

    Args:
        handle: from create_handle.
        weight: float32 (V, D).
        indices: int32 or int64, any shape, values in [0, V).
        out: float32 indices.shape + (D,).
    Raises:
        DeviceFault: cudaErrorAssert for an index outside [0, V).
    """
    op = "embedding_forward"
    check_handle(handle, op)
    weight = tensor(weight, "weight", op)
    require(weight.ndim == 2, BAD_PARAM, f"[{op}] weight must be 2-D (num_embeddings, embedding_dim), "
                                         f"got shape {weight.shape}")
    indices = tensor(indices, "indices", op, dtypes=INDEX_TYPES)
    v, d = weight.shape
    tensor(out, "out", op, (*indices.shape, d))
    with dnn_call(handle, op, "(none: PyTorch embedding kernel)", "(none)", shape=out.shape):
        total = indices.size * d
        if total:
            handle.launch(KERNELS.get("embedding_fwd"), -(-total // BLOCK), BLOCK,
                          (weight, indices, np.int32(indices.dtype == np.int64), out, np.int64(indices.size),
                           np.int32(d), np.int64(v)))


def embedding_backward(handle: Handle, dout: DeviceArray, indices: DeviceArray, dweight: DeviceArray, *,
                       padding_idx: int | None = None) -> None:
    """dweight = 0, then dweight[indices[i], :] += dout[i, :] for every i (a scatter-add with atomics;
    the role of PyTorch's embedding_dense_backward). Rows equal to `padding_idx` get no gradient.

    Args:
        handle: from create_handle.
        dout: float32 indices.shape + (D,).
        indices: int32 or int64, any shape.
        dweight: float32 (V, D), overwritten.
        padding_idx: a row in [-V, V) that receives no gradient (negative counts from the end), or None.
    """
    op = "embedding_backward"
    check_handle(handle, op)
    dweight = tensor(dweight, "dweight", op)
    require(dweight.ndim == 2, BAD_PARAM, f"[{op}] dweight must be 2-D, got shape {dweight.shape}")
    indices = tensor(indices, "indices", op, dtypes=INDEX_TYPES)
    v, d = dweight.shape
    tensor(dout, "dout", op, (*indices.shape, d))
    pad = -1
    if padding_idx is not None:
        require(-v <= padding_idx < v, BAD_PARAM, f"[{op}] padding_idx must be in [-{v}, {v}), got {padding_idx}")
        pad = padding_idx % v
    with dnn_call(handle, op, "(none: PyTorch embedding_dense_backward)", "(none)", shape=dweight.shape):
        if dweight.size:
            handle.launch(KERNELS.get("fill_zero"), -(-dweight.size // BLOCK), BLOCK, (dweight, np.int64(dweight.size)))
        total = indices.size * d
        if total:
            handle.launch(KERNELS.get("embedding_bwd"), -(-total // BLOCK), BLOCK,
                          (dout, indices, np.int32(indices.dtype == np.int64), dweight, np.int64(indices.size),
                           np.int32(d), np.int64(v), np.int64(pad)))


def _ce_args(handle: Handle, op: str, logits: Any, target: Any, smoothing: Any,
             reduction: Any) -> tuple[DeviceArray, DeviceArray, int, int, np.int32]:
    check_handle(handle, op)
    logits = tensor(logits, "logits", op)
    require(logits.ndim == 2, BAD_PARAM, f"[{op}] logits must be 2-D (N, C), got shape {logits.shape}")
    n, c = logits.shape
    require(c > 0 or n == 0, BAD_PARAM, f"[{op}] logits must have at least one class, got shape {logits.shape}")
    target = tensor(target, "target", op, (n,), dtypes=INDEX_TYPES)
    require(reduction in REDUCTIONS, BAD_PARAM, f"[{op}] reduction must be 'none', 'mean' or 'sum', got {reduction!r}")
    require(isinstance(smoothing, float | int) and 0.0 <= smoothing <= 1.0, BAD_PARAM,
            f"[{op}] label_smoothing must be in [0, 1], got {smoothing!r}")
    return logits, target, n, c, np.int32(target.dtype == np.int64)


def _loss_shape(op: str, what: str, loss: Any, n: int, reduction: str) -> None:
    if reduction == "none":
        tensor(loss, what, op, (n,))
    else:
        loss = tensor(loss, what, op)
        require(loss.size == 1 and loss.ndim <= 1, BAD_PARAM,
                f"[{op}] {what} must have shape () or (1,) for reduction {reduction!r}, got {loss.shape}")
