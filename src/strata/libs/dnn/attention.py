"""Fused scaled-dot-product attention of strata.libs.dnn, forward and backward, tiled in the manner of
FlashAttention (Dao et al. 2022; the FlashAttention-2 loop order): the (Tq, Tk) score matrix never
exists in memory.

Forward: a block owns 16 query rows and walks the keys 16 at a time through shared memory, keeping
per row a running max m, a running sum l and an unnormalised output (online softmax: when the max
grows, the old sum and output are rescaled by exp(m_old - m_new)). It writes out = acc / l and the
log-sum-exp lse = m + log l, which is all the backward needs. Backward: D_i = rowsum(dout * out), then
one kernel per key tile accumulates dK and dV over the query tiles and one per query tile accumulates
dQ over the key tiles, each recomputing P = exp(S - lse) (no atomics: deterministic).

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> from strata.libs.dnn.handle import create_handle
    >>> h = create_handle()
    >>> q = cuda.to_device(np.zeros((1, 1, 2, 4), np.float32))
    >>> k = cuda.to_device(np.zeros((1, 1, 3, 4), np.float32))
    >>> v = cuda.to_device(np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4))
    >>> out, lse = cuda.empty((1, 1, 2, 4)), cuda.empty((1, 1, 2))
    >>> attention_forward(h, q, k, v, out, lse)
    >>> out.get()[0, 0].tolist()  # equal scores: the mean of the values
    [[4.0, 5.0, 6.0, 7.0], [4.0, 5.0, 6.0, 7.0]]
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from strata.cuda import DeviceArray
from strata.libs.common import KernelSet, require
from strata.libs.dnn.handle import BAD_PARAM, NOT_SUPPORTED, Handle, check_handle, dnn_call, tensor

BLOCK_ROWS = 16
MAX_HEAD_DIM = 128

SOURCE = r"""
#define BR 16
#define DMAX 128
#define DPT (DMAX / BR)   // output columns per thread
#define NEG_INF __int_as_float(0xff800000)

// reductions over the 16 lanes of one row (a half-warp): xor offsets below 16 stay inside it
__device__ __forceinline__ float row_max(float v) {
    for (int o = 8; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o, 16));
    return v;
}
__device__ __forceinline__ float row_sum(float v) {
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, 16);
    return v;
}

// rows [r0, r0 + BR) of a (T, D) matrix into shared memory, zero past T
__device__ void load_tile(float (*dst)[DMAX], const float* src, int r0, int T, int D) {
    int r = r0 + threadIdx.y;
    for (int d = threadIdx.x; d < D; d += BR) dst[threadIdx.y][d] = r < T ? src[(long long)r * D + d] : 0.0f;
}

__device__ float dot_rows(const float* a, const float* b, int D) {
    float s = 0.0f;
    #pragma unroll 8
    for (int d = 0; d < D; ++d) s += a[d] * b[d];
    return s;
}

// block (tile of BR query rows, batch*head); threads (BR, BR): ty = query row, tx = key in tile / column
extern "C" __global__ void attn_fwd(const float* q, const float* k, const float* v, float* out, float* lse, int Tq,
                                    int Tk, int D, float scale, int causal) {
    __shared__ float Qs[BR][DMAX], Ks[BR][DMAX], Vs[BR][DMAX];
    __shared__ float Ps[BR][BR + 1];
    long long bh = blockIdx.y;
    q += bh * Tq * D; k += bh * Tk * D; v += bh * Tk * D; out += bh * Tq * D; lse += bh * Tq;
    int ty = threadIdx.y, tx = threadIdx.x, q0 = blockIdx.x * BR, row = q0 + ty;
    load_tile(Qs, q, q0, Tq, D);
    float m = NEG_INF, l = 0.0f, acc[DPT];
    for (int j = 0; j < DPT; ++j) acc[j] = 0.0f;
    int kend = causal ? min(Tk, q0 + BR) : Tk;
    for (int k0 = 0; k0 < kend; k0 += BR) {
        __syncthreads();
        load_tile(Ks, k, k0, Tk, D);
        load_tile(Vs, v, k0, Tk, D);
        __syncthreads();
        int key = k0 + tx;
        float s = scale * dot_rows(Qs[ty], Ks[tx], D);
        if (key >= Tk || (causal && key > row)) s = NEG_INF;
        float m_new = fmaxf(m, row_max(s));
        float p = s == NEG_INF ? 0.0f : expf(s - m_new);
        float alpha = m == NEG_INF ? 0.0f : expf(m - m_new);
        l = l * alpha + row_sum(p);
        Ps[ty][tx] = p;
        __syncthreads();
        for (int j = 0; j < DPT; ++j) {
            int d = tx + BR * j;
            if (d >= D) break;
            float a = acc[j] * alpha;
            #pragma unroll
            for (int c = 0; c < BR; ++c) a += Ps[ty][c] * Vs[c][d];
            acc[j] = a;
        }
        m = m_new;
    }
    if (row >= Tq) return;
    for (int j = 0; j < DPT; ++j) {
        int d = tx + BR * j;
        if (d < D) out[(long long)row * D + d] = acc[j] / l;
    }
    if (tx == 0) lse[row] = m + logf(l);
}

// Di = sum_d dout[i, d] * out[i, d], one thread per row of all batch*heads
extern "C" __global__ void attn_bwd_dot(const float* out, const float* dout, float* Di, long long rows, int D) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < rows) Di[i] = dot_rows(out + i * D, dout + i * D, D);
}

// block (tile of BR keys, batch*head); ty = key, tx = query in the current query tile / column
extern "C" __global__ void attn_bwd_dkv(const float* q, const float* k, const float* v, const float* dout,
                                        const float* lse, const float* Di, float* dk, float* dv, int Tq, int Tk, int D,
                                        float scale, int causal) {
    __shared__ float Ks[BR][DMAX], Vs[BR][DMAX], Qs[BR][DMAX], dOs[BR][DMAX];
    __shared__ float Ps[BR][BR + 1], dSs[BR][BR + 1], Ls[BR], Dd[BR];
    long long bh = blockIdx.y;
    q += bh * Tq * D; dout += bh * Tq * D; lse += bh * Tq; Di += bh * Tq;
    k += bh * Tk * D; v += bh * Tk * D; dk += bh * Tk * D; dv += bh * Tk * D;
    int ty = threadIdx.y, tx = threadIdx.x, k0 = blockIdx.x * BR, key = k0 + ty;
    load_tile(Ks, k, k0, Tk, D);
    load_tile(Vs, v, k0, Tk, D);
    float dk_acc[DPT], dv_acc[DPT];
    for (int j = 0; j < DPT; ++j) dk_acc[j] = dv_acc[j] = 0.0f;
    for (int i0 = causal ? k0 : 0; i0 < Tq; i0 += BR) {
        __syncthreads();
        load_tile(Qs, q, i0, Tq, D);
        load_tile(dOs, dout, i0, Tq, D);
        if (ty == 0) { int i = i0 + tx; Ls[tx] = i < Tq ? lse[i] : 0.0f; Dd[tx] = i < Tq ? Di[i] : 0.0f; }
        __syncthreads();
        int qi = i0 + tx;
        float p = 0.0f, ds = 0.0f;
        if (qi < Tq && key < Tk && !(causal && key > qi)) {
            p = expf(scale * dot_rows(Qs[tx], Ks[ty], D) - Ls[tx]);
            ds = p * (dot_rows(dOs[tx], Vs[ty], D) - Dd[tx]);
        }
        Ps[ty][tx] = p;
        dSs[ty][tx] = ds;
        __syncthreads();
        for (int j = 0; j < DPT; ++j) {
            int d = tx + BR * j;
            if (d >= D) break;
            float a = dv_acc[j], b = dk_acc[j];
            #pragma unroll
            for (int c = 0; c < BR; ++c) { a += Ps[ty][c] * dOs[c][d]; b += dSs[ty][c] * Qs[c][d]; }
            dv_acc[j] = a; dk_acc[j] = b;
        }
    }
    if (key >= Tk) return;
    for (int j = 0; j < DPT; ++j) {
        int d = tx + BR * j;
        if (d < D) { dk[(long long)key * D + d] = scale * dk_acc[j]; dv[(long long)key * D + d] = dv_acc[j]; }
    }
}

// block (tile of BR queries, batch*head); ty = query, tx = key in the current key tile / column
extern "C" __global__ void attn_bwd_dq(const float* q, const float* k, const float* v, const float* dout,
                                       const float* lse, const float* Di, float* dq, int Tq, int Tk, int D,
                                       float scale, int causal) {
    __shared__ float Qs[BR][DMAX], dOs[BR][DMAX], Ks[BR][DMAX], Vs[BR][DMAX];
    __shared__ float dSs[BR][BR + 1];
    long long bh = blockIdx.y;
    q += bh * Tq * D; dout += bh * Tq * D; lse += bh * Tq; Di += bh * Tq; dq += bh * Tq * D;
    k += bh * Tk * D; v += bh * Tk * D;
    int ty = threadIdx.y, tx = threadIdx.x, q0 = blockIdx.x * BR, row = q0 + ty;
    load_tile(Qs, q, q0, Tq, D);
    load_tile(dOs, dout, q0, Tq, D);
    float L = row < Tq ? lse[row] : 0.0f, Dr = row < Tq ? Di[row] : 0.0f, acc[DPT];
    for (int j = 0; j < DPT; ++j) acc[j] = 0.0f;
    int kend = causal ? min(Tk, q0 + BR) : Tk;
    for (int k0 = 0; k0 < kend; k0 += BR) {
        __syncthreads();
        load_tile(Ks, k, k0, Tk, D);
        load_tile(Vs, v, k0, Tk, D);
        __syncthreads();
        int key = k0 + tx;
        float ds = 0.0f;
        if (row < Tq && key < Tk && !(causal && key > row)) {
            float p = expf(scale * dot_rows(Qs[ty], Ks[tx], D) - L);
            ds = p * (dot_rows(dOs[ty], Vs[tx], D) - Dr);
        }
        dSs[ty][tx] = ds;
        __syncthreads();
        for (int j = 0; j < DPT; ++j) {
            int d = tx + BR * j;
            if (d >= D) break;
            float a = acc[j];
            #pragma unroll
            for (int c = 0; c < BR; ++c) a += dSs[ty][c] * Ks[c][d];
            acc[j] = a;
        }
    }
    if (row >= Tq) return;
    for (int j = 0; j < DPT; ++j) {
        int d = tx + BR * j;
        if (d < D) dq[(long long)row * D + d] = scale * acc[j];
    }
}
"""

KERNELS = KernelSet("dnn_attention", SOURCE)
CUDA_FWD = "cudnn frontend SDPA forward (cudnnMultiHeadAttnForward in the legacy API)"
ROCM_FWD = "MIOpen MHA (miopenCreateMhaProblem, miopenProblemDirectionForward)"
CUDA_BWD = "cudnn frontend SDPA backward (cudnnMultiHeadAttnBackwardData/Weights in the legacy API)"
ROCM_BWD = "MIOpen MHA (miopenCreateMhaProblem, miopenProblemDirectionBackward)"


def attention_forward(handle: Handle, q: DeviceArray, k: DeviceArray, v: DeviceArray, out: DeviceArray,
                      lse: DeviceArray, *, scale: float | None = None, causal: bool = False) -> None:
    """out = softmax(scale * q @ k^T + mask) @ v over the last two dimensions, fused and tiled (flash
    attention); lse = logsumexp of each row of the masked, scaled scores (kept for the backward).

    The causal mask hides key j from query i when j > i (top-left aligned, as PyTorch's
    scaled_dot_product_attention(is_causal=True); MIOpen's miopenMhaMaskCausal). Plays the role of the
    cuDNN frontend's SDPA forward and MIOpen's MHA problem (miopenCreateMhaProblem, forward).

    Args:
        handle: from create_handle.
        q: float32 (..., Tq, D), D <= 128; leading dimensions (batch, heads) as k and v.
        k, v: float32 (..., Tk, D).
        out: float32 (..., Tq, D).
        lse: float32 (..., Tq).
        scale: multiplies the scores; default 1 / sqrt(D).
        causal: apply the causal mask.
    """
    op = "attention_forward"
    bh, tq, tk, d, sc = _shapes(handle, op, q, k, v, scale)
    tensor(out, "out", op, q.shape)
    tensor(lse, "lse", op, q.shape[:-1])
    with dnn_call(handle, op, CUDA_FWD, ROCM_FWD, q=q.shape, k=k.shape, causal=causal):
        if bh and tq and d:
            require(tk > 0, BAD_PARAM, f"[{op}] no keys: softmax over an empty row (k has shape {k.shape})")
            handle.launch(KERNELS.get("attn_fwd"), (-(-tq // BLOCK_ROWS), bh), (BLOCK_ROWS, BLOCK_ROWS),
                          (q, k, v, out, lse, np.int32(tq), np.int32(tk), np.int32(d), np.float32(sc),
                           np.int32(causal)))


def attention_backward(handle: Handle, q: DeviceArray, k: DeviceArray, v: DeviceArray, out: DeviceArray,
                       dout: DeviceArray, lse: DeviceArray, dq: DeviceArray, dk: DeviceArray, dv: DeviceArray, *,
                       scale: float | None = None, causal: bool = False) -> None:
    """Gradients of attention_forward: with P = exp(scale q k^T - lse) (masked), dv = P^T dout,
    dP = dout v^T, dS = P * (dP - rowsum(dout * out)), dq = scale dS k, dk = scale dS^T q (the cuDNN
    frontend's SDPA backward; MIOpen's MHA problem, backward direction).

    Args:
        handle: from create_handle.
        q, k, v, out, lse: as given to / written by attention_forward.
        dout: float32 shaped like out.
        dq, dk, dv: float32 shaped like q, k, v; overwritten.
        scale, causal: as in the forward call.
    """
    op = "attention_backward"
    bh, tq, tk, d, sc = _shapes(handle, op, q, k, v, scale)
    for a, what in ((out, "out"), (dout, "dout"), (dq, "dq")):
        tensor(a, what, op, q.shape)
    tensor(dk, "dk", op, k.shape)
    tensor(dv, "dv", op, v.shape)
    tensor(lse, "lse", op, q.shape[:-1])
    with dnn_call(handle, op, CUDA_BWD, ROCM_BWD, q=q.shape, k=k.shape, causal=causal):
        if not bh or not d:
            return
        rows = bh * tq
        di = handle.workspace(4 * max(rows, 1)).ptr
        common = (np.int32(tq), np.int32(tk), np.int32(d), np.float32(sc), np.int32(causal))
        if rows:
            handle.launch(KERNELS.get("attn_bwd_dot"), -(-rows // 128), 128, (out, dout, di, np.int64(rows),
                                                                              np.int32(d)))
        if tk:
            handle.launch(KERNELS.get("attn_bwd_dkv"), (-(-tk // BLOCK_ROWS), bh), (BLOCK_ROWS, BLOCK_ROWS),
                          (q, k, v, dout, lse, di, dk, dv, *common))
        if tq:
            handle.launch(KERNELS.get("attn_bwd_dq"), (-(-tq // BLOCK_ROWS), bh), (BLOCK_ROWS, BLOCK_ROWS),
                          (q, k, v, dout, lse, di, dq, *common))


def _shapes(handle: Handle, op: str, q: Any, k: Any, v: Any, scale: Any) -> tuple[int, int, int, int, float]:
    check_handle(handle, op)
    q, k = tensor(q, "q", op, min_ndim=2), tensor(k, "k", op, min_ndim=2)
    require(k.shape[:-2] == q.shape[:-2] and k.shape[-1] == q.shape[-1], BAD_PARAM,
            f"[{op}] k must have shape {(*q.shape[:-2], 'Tk', q.shape[-1])}, got {k.shape}")
    tensor(v, "v", op, k.shape)
    tq, d = q.shape[-2:]
    tk = k.shape[-2]
    require(d <= MAX_HEAD_DIM, NOT_SUPPORTED, f"[{op}] head dimension must be <= {MAX_HEAD_DIM}, got {d}")
    bh = int(np.prod(q.shape[:-2], dtype=np.int64))
    require(bh <= 65535, BAD_PARAM, f"[{op}] batch * heads must be <= 65535, got {bh}")
    sc = 1.0 / math.sqrt(d) if scale is None and d else (1.0 if scale is None else float(scale))
    return bh, tq, tk, d, sc

