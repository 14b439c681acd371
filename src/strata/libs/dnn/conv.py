"""2-D convolution of strata.libs.dnn (NCHW, stride, padding, dilation, groups) as implicit-GEMM kernels:
forward, backward-data, backward-filter, and the bias gradient.

Each pass is a matrix product whose operands are gathered on the fly from the tensors (no im2col
buffer), tiled 16 x 16 through shared memory; blockIdx.z is the group. With x (N, C, H, W),
w (K, C/G, R, S), y (N, K, P, Q):
    forward          y[(n,p,q), k]  = sum over (c,r,s)  x[n, c, p*sh-ph+r*dh, q*sw-pw+s*dw] * w[k, c, r, s]
    backward-data    dx[(n,h,w), c] = sum over (k,r,s)  dy[n, k, (h+ph-r*dh)/sh, (w+pw-s*dw)/sw] * w[k, c, r, s]
                                      (only where those divisions are exact and in range)
    backward-filter  dw[k, (c,r,s)] = sum over (n,p,q)  dy[n, k, p, q] * x[n, c, p*sh-ph+r*dh, q*sw-pw+s*dw]

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.dnn.handle import create_handle
    >>> h = create_handle()
    >>> x = cuda.to_device(np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3))
    >>> w = cuda.to_device(np.ones((1, 1, 2, 2), np.float32))
    >>> y = cuda.empty(conv2d_output_shape(x.shape, w.shape))
    >>> conv2d_forward(h, x, w, y)
    >>> y.get().reshape(2, 2).tolist()
    [[8.0, 12.0], [20.0, 24.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import KernelSet, require
from strata.libs.dnn.handle import BAD_PARAM, REDUCE_CU, Handle, check_handle, dnn_call, row_block, tensor
from strata.libs.dnn.pooling import pair

TILE = 16

SOURCE = REDUCE_CU + r"""
#define TILE 16
#define CONV_PARAMS int N, int C, int H, int W, int K, int R, int S, int P, int Q, int sh, int sw, int ph, int pw, \
                    int dh, int dw, int G

// acc += A[m][:] . B[:][n] for this thread's (m, n) = (row0 + ty, col0 + tx), A and B gathered by la/lb,
// the reduction dimension walked TILE at a time through shared memory.
template <class LA, class LB>
__device__ float tiled_dot(long long M, int Ncols, long long Kd, long long row0, int col0, LA la, LB lb) {
    __shared__ float As[TILE][TILE + 1];
    __shared__ float Bs[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.0f;
    for (long long k0 = 0; k0 < Kd; k0 += TILE) {
        long long ka = k0 + tx, kb = k0 + ty;
        As[ty][tx] = (row0 + ty < M && ka < Kd) ? la(row0 + ty, ka) : 0.0f;
        Bs[ty][tx] = (col0 + tx < Ncols && kb < Kd) ? lb(kb, col0 + tx) : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int j = 0; j < TILE; ++j) acc += As[ty][j] * Bs[j][tx];
        __syncthreads();
    }
    return acc;
}

extern "C" __global__ void conv_fwd(const float* x, const float* w, const float* bias, float* y, CONV_PARAMS) {
    int g = blockIdx.z, Cg = C / G, Kg = K / G, RS = R * S;
    long long M = (long long)N * P * Q, Kd = (long long)Cg * RS;
    long long row0 = (long long)blockIdx.x * TILE;
    int col0 = blockIdx.y * TILE;
    auto la = [&](long long m, long long kk) -> float {
        int q = (int)(m % Q), p = (int)((m / Q) % P), n = (int)(m / ((long long)P * Q));
        int c = (int)(kk / RS), r = (int)((kk % RS) / S), s = (int)(kk % S);
        int h = p * sh - ph + r * dh, wi = q * sw - pw + s * dw;
        if (h < 0 || h >= H || wi < 0 || wi >= W) return 0.0f;
        return x[(((long long)n * C + g * Cg + c) * H + h) * W + wi];
    };
    auto lb = [&](long long kk, int kl) -> float { return w[(long long)(g * Kg + kl) * Kd + kk]; };
    float acc = tiled_dot(M, Kg, Kd, row0, col0, la, lb);
    long long m = row0 + threadIdx.y;
    int kl = col0 + threadIdx.x;
    if (m >= M || kl >= Kg) return;
    int k = g * Kg + kl;
    if (bias) acc += bias[k];
    int q = (int)(m % Q), p = (int)((m / Q) % P), n = (int)(m / ((long long)P * Q));
    y[(((long long)n * K + k) * P + p) * Q + q] = acc;
}

extern "C" __global__ void conv_bwd_data(const float* w, const float* dy, float* dx, CONV_PARAMS) {
    int g = blockIdx.z, Cg = C / G, Kg = K / G, RS = R * S;
    long long M = (long long)N * H * W, Kd = (long long)Kg * RS;
    long long row0 = (long long)blockIdx.x * TILE;
    int col0 = blockIdx.y * TILE;
    auto la = [&](long long m, long long kk) -> float {
        int wi = (int)(m % W), h = (int)((m / W) % H), n = (int)(m / ((long long)H * W));
        int kl = (int)(kk / RS), r = (int)((kk % RS) / S), s = (int)(kk % S);
        int ph_ = h + ph - r * dh, pw_ = wi + pw - s * dw;
        if (ph_ < 0 || pw_ < 0 || ph_ % sh || pw_ % sw) return 0.0f;
        int p = ph_ / sh, q = pw_ / sw;
        if (p >= P || q >= Q) return 0.0f;
        return dy[(((long long)n * K + g * Kg + kl) * P + p) * Q + q];
    };
    auto lb = [&](long long kk, int c) -> float {
        int kl = (int)(kk / RS), rs = (int)(kk % RS);
        return w[((long long)(g * Kg + kl) * Cg + c) * RS + rs];
    };
    float acc = tiled_dot(M, Cg, Kd, row0, col0, la, lb);
    long long m = row0 + threadIdx.y;
    int c = col0 + threadIdx.x;
    if (m >= M || c >= Cg) return;
    int wi = (int)(m % W), h = (int)((m / W) % H), n = (int)(m / ((long long)H * W));
    dx[(((long long)n * C + g * Cg + c) * H + h) * W + wi] = acc;
}

extern "C" __global__ void conv_bwd_filter(const float* x, const float* dy, float* dw_, CONV_PARAMS) {
    int g = blockIdx.z, Cg = C / G, Kg = K / G, RS = R * S;
    long long Kd = (long long)N * P * Q;
    int ncols = Cg * RS;
    long long row0 = (long long)blockIdx.x * TILE;
    int col0 = blockIdx.y * TILE;
    auto la = [&](long long kl, long long kk) -> float {
        int q = (int)(kk % Q), p = (int)((kk / Q) % P), n = (int)(kk / ((long long)P * Q));
        return dy[(((long long)n * K + g * Kg + kl) * P + p) * Q + q];
    };
    auto lb = [&](long long kk, int cc) -> float {
        int q = (int)(kk % Q), p = (int)((kk / Q) % P), n = (int)(kk / ((long long)P * Q));
        int c = cc / RS, r = (cc % RS) / S, s = cc % S;
        int h = p * sh - ph + r * dh, wi = q * sw - pw + s * dw;
        if (h < 0 || h >= H || wi < 0 || wi >= W) return 0.0f;
        return x[(((long long)n * C + g * Cg + c) * H + h) * W + wi];
    };
    float acc = tiled_dot(Kg, ncols, Kd, row0, col0, la, lb);
    long long kl = row0 + threadIdx.y;
    int cc = col0 + threadIdx.x;
    if (kl < Kg && cc < ncols) dw_[(g * Kg + kl) * (long long)ncols + cc] = acc;
}

// db[k] = sum over (n, p, q) of dy[n, k, p, q]; one block per k
extern "C" __global__ void conv_bwd_bias(const float* dy, float* db, int N, int K, long long PQ) {
    int k = blockIdx.x;
    float s = 0.0f;
    for (long long i = threadIdx.x; i < N * PQ; i += blockDim.x) s += dy[((i / PQ) * K + k) * PQ + i % PQ];
    s = block_sum(s);
    if (threadIdx.x == 0) db[k] = s;
}
"""

KERNELS = KernelSet("dnn_conv", SOURCE)


def conv2d_output_shape(x_shape: tuple[int, ...], w_shape: tuple[int, ...], stride: int | tuple[int, int] = 1,
                        padding: int | tuple[int, int] = 0,
                        dilation: int | tuple[int, int] = 1) -> tuple[int, int, int, int]:
    """(N, K, P, Q) with P = (H + 2 ph - dh (R - 1) - 1) // sh + 1, likewise Q
    (cudnnGetConvolution2dForwardOutputDim / miopenGetConvolutionForwardOutputDim).

    Raises:
        LibraryError: CUDNN_STATUS_BAD_PARAM if the shapes are not 4-D or the output would be empty.
    """
    op = "conv2d_output_shape"
    require(len(x_shape) == 4 and len(w_shape) == 4, BAD_PARAM,
            f"[{op}] x and w must be 4-D (NCHW, KCRS), got {tuple(x_shape)} and {tuple(w_shape)}")
    (sh, sw), (ph, pw), (dh, dw) = pair(stride, "stride", op, 1), pair(padding, "padding", op, 0), \
        pair(dilation, "dilation", op, 1)
    n, _, h, w = x_shape
    k, _, r, s = w_shape
    p, q = (h + 2 * ph - dh * (r - 1) - 1) // sh + 1, (w + 2 * pw - dw * (s - 1) - 1) // sw + 1
    require(p >= 1 and q >= 1, BAD_PARAM, f"[{op}] the dilated filter ({dh * (r - 1) + 1}, {dw * (s - 1) + 1}) is "
                                          f"larger than the padded input ({h + 2 * ph}, {w + 2 * pw})")
    return n, k, p, q


def conv2d_forward(handle: Handle, x: DeviceArray, w: DeviceArray, y: DeviceArray, *, bias: DeviceArray | None = None,
                   stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
                   dilation: int | tuple[int, int] = 1, groups: int = 1) -> None:
    """y[n, k, p, q] = sum_{c in k's group, r, s} x[n, c, p sh - ph + r dh, q sw - pw + s dw] * w[k, c, r, s]
    (+ bias[k]): cross-correlation, as cuDNN and PyTorch define convolution (cudnnConvolutionForward with
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, or cudnnConvolutionBiasActivationForward with identity
    activation when `bias` is given; miopenConvolutionForward with miopenConvolutionFwdAlgoImplicitGEMM).

    Args:
        handle: from create_handle.
        x: float32 (N, C, H, W).
        w: float32 (K, C / groups, R, S).
        y: float32 conv2d_output_shape(x.shape, w.shape, stride, padding, dilation).
        bias: float32 (K,) or None.
        stride, padding, dilation: an int or an (h, w) pair.
        groups: C and K must both be multiples of it.
    """
    op = "conv2d_forward"
    geo = _geometry(handle, op, x, w, stride, padding, dilation, groups)
    n, c, h, wd, k, r, s, p, q = geo[:9]
    tensor(y, "y", op, (n, k, p, q))
    b = 0 if bias is None else tensor(bias, "bias", op, (k,))
    with dnn_call(handle, op, "cudnnConvolutionForward" if bias is None else "cudnnConvolutionBiasActivationForward",
                  "miopenConvolutionForward" if bias is None else "miopenConvolutionBiasActivationForward",
                  x=x.shape, w=w.shape, algo="IMPLICIT_GEMM"):
        if n * p * q and k:
            _launch(handle, "conv_fwd", n * p * q, k // groups, groups, (x, w, b, y), geo)


def conv2d_backward_data(handle: Handle, w: DeviceArray, dy: DeviceArray, dx: DeviceArray, *,
                         stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
                         dilation: int | tuple[int, int] = 1, groups: int = 1) -> None:
    """dx = d(sum y * dy)/dx for conv2d_forward: each input element gathers dy times w over the outputs
    it fed (cudnnConvolutionBackwardData with CUDNN_CONVOLUTION_BWD_DATA_ALGO_1 (implicit GEMM);
    miopenConvolutionBackwardData with miopenConvolutionBwdDataAlgoImplicitGEMM).

    Args:
        handle: from create_handle.
        w: float32 (K, C / groups, R, S).
        dy: float32 (N, K, P, Q).
        dx: float32 (N, C, H, W), overwritten; its shape with w's fixes the geometry.
        stride, padding, dilation, groups: as in the forward call.
    """
    op = "conv2d_backward_data"
    geo = _geometry(handle, op, dx, w, stride, padding, dilation, groups, x_name="dx")
    n, c, h, wd, k, r, s, p, q = geo[:9]
    tensor(dy, "dy", op, (n, k, p, q))
    with dnn_call(handle, op, "cudnnConvolutionBackwardData", "miopenConvolutionBackwardData", dx=dx.shape,
                  w=w.shape, algo="IMPLICIT_GEMM"):
        if n * h * wd and c:
            _launch(handle, "conv_bwd_data", n * h * wd, c // groups, groups, (w, dy, dx), geo)


def conv2d_backward_filter(handle: Handle, x: DeviceArray, dy: DeviceArray, dw: DeviceArray, *,
                           stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
                           dilation: int | tuple[int, int] = 1, groups: int = 1) -> None:
    """dw = d(sum y * dy)/dw for conv2d_forward: dw[k, c, r, s] = sum_{n,p,q} dy[n, k, p, q] * x[n, c', ...]
    (cudnnConvolutionBackwardFilter; MIOpen calls it miopenConvolutionBackwardWeights).

    Args:
        handle: from create_handle.
        x: float32 (N, C, H, W).
        dy: float32 (N, K, P, Q).
        dw: float32 (K, C / groups, R, S), overwritten.
        stride, padding, dilation, groups: as in the forward call.
    """
    op = "conv2d_backward_filter"
    geo = _geometry(handle, op, x, dw, stride, padding, dilation, groups, w_name="dw")
    n, c, h, wd, k, r, s, p, q = geo[:9]
    tensor(dy, "dy", op, (n, k, p, q))
    with dnn_call(handle, op, "cudnnConvolutionBackwardFilter", "miopenConvolutionBackwardWeights", x=x.shape,
                  dw=dw.shape, algo="IMPLICIT_GEMM"):
        if k and c:
            _launch(handle, "conv_bwd_filter", k // groups, (c // groups) * r * s, groups, (x, dy, dw), geo)


def conv2d_backward_bias(handle: Handle, dy: DeviceArray, db: DeviceArray) -> None:
    """db[k] = sum over n, p, q of dy[n, k, p, q] (cudnnConvolutionBackwardBias / miopenConvolutionBackwardBias).

    Args:
        handle: from create_handle.
        dy: float32 (N, K, P, Q).
        db: float32 (K,), overwritten.
    """
    op = "conv2d_backward_bias"
    check_handle(handle, op)
    dy = tensor(dy, "dy", op)
    require(dy.ndim == 4, BAD_PARAM, f"[{op}] dy must be 4-D (N, K, P, Q), got shape {dy.shape}")
    n, k, p, q = dy.shape
    tensor(db, "db", op, (k,))
    with dnn_call(handle, op, "cudnnConvolutionBackwardBias", "miopenConvolutionBackwardBias", dy=dy.shape):
        if k:
            handle.launch(KERNELS.get("conv_bwd_bias"), k, row_block(n * p * q),
                          (dy, db, np.int32(n), np.int32(k), np.int64(p * q)))


def _geometry(handle: Handle, op: str, x: Any, w: Any, stride: Any, padding: Any, dilation: Any, groups: Any, *,
              x_name: str = "x", w_name: str = "w") -> tuple[int, ...]:
    check_handle(handle, op)
    x, w = tensor(x, x_name, op), tensor(w, w_name, op)
    require(x.ndim == 4, BAD_PARAM, f"[{op}] {x_name} must be 4-D (N, C, H, W), got shape {x.shape}")
    require(w.ndim == 4, BAD_PARAM, f"[{op}] {w_name} must be 4-D (K, C / groups, R, S), got shape {w.shape}")
    require(isinstance(groups, int) and groups >= 1, BAD_PARAM, f"[{op}] groups must be an int >= 1, got {groups!r}")
    n, c, h, wd = x.shape
    k, cg, r, s = w.shape
    require(c % groups == 0 and k % groups == 0, BAD_PARAM,
            f"[{op}] channels ({c}) and filters ({k}) must be multiples of groups ({groups})")
    require(cg == c // groups, BAD_PARAM, f"[{op}] {w_name}.shape[1] must be C / groups = {c // groups}, got {cg}")
    _, _, p, q = conv2d_output_shape(x.shape, w.shape, stride, padding, dilation)
    (sh, sw), (ph, pw), (dh, dw) = pair(stride, "stride", op, 1), pair(padding, "padding", op, 0), \
        pair(dilation, "dilation", op, 1)
    return n, c, h, wd, k, r, s, p, q, sh, sw, ph, pw, dh, dw, groups


def _launch(handle: Handle, kernel: str, m: int, ncols: int, groups: int, arrays: tuple[Any, ...],
            geo: tuple[int, ...]) -> None:
    grid = (-(-m // TILE), -(-ncols // TILE), groups)
    require(grid[1] <= 65535, BAD_PARAM, f"[{kernel}] too many output columns per group: {ncols}")
    handle.launch(KERNELS.get(kernel), grid, (TILE, TILE), (*arrays, *(np.int32(v) for v in geo)))
