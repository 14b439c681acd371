"""Fused recurrent-cell kernels for strata.nn on "cuda" (the role of ATen's `_thnn_fused_lstm_cell`,
`_thnn_fused_gru_cell` and their backward, and of cuDNN's fused cells): the pointwise gate math of one
time step in one launch, forward and backward. The two matrix products of a step (input and hidden
projections) stay with BLAS; these kernels take their results.

One thread per (row, hidden unit) (grid-stride). Rows of the projections and states may be strided (a
row stride in elements, columns unit-stride), so views such as h' and c' of a packed [h' | c'] need no
copy. float16/bfloat16 compute in float ("opmath"), float32/float64 in their own type. A null bias
pointer means no bias; a null workspace pointer means nothing is saved (no gradient needed).

Gate layouts are PyTorch's: LSTM (i, f, g, o), GRU (r, z, n), each block H wide.
Workspaces (what the backward reads): LSTM (N, 5H) = the activated gates i, f, g, o and tanh(c');
GRU (N, 4H) = r, z, n and the hidden projection of the new gate (with its bias).

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> xp, hg = cuda.to_device(np.zeros((1, 4), np.float32)), cuda.to_device(np.zeros((1, 4), np.float32))
    >>> c, hc = cuda.to_device(np.ones((1, 1), np.float32)), cuda.empty((1, 2), np.float32)
    >>> lstm_forward("float32", xp.ptr, 4, hg.ptr, 0, c.ptr, 1, hc.ptr, 2, hc.ptr + 4, 2, 0, 1, 1)
    >>> hc.get().tolist()   # c' = f c + i g = 0.5, h' = o tanh(c') with f = i = o = 1/2, g = 0
    [[0.23105859756469727, 0.5]]
"""

from __future__ import annotations

import numpy as np

from strata.framework.kernels import C_TYPES, COMMON_CU, FLOATS, THREADS, _grid
from strata.libs.common import KernelSet

RNN_CU = COMMON_CU + r"""
template <typename A> __device__ __forceinline__ A sigm(A x) { return A(1) / (A(1) + m_exp(-x)); }

// the hidden projection's element k of row r plus its bias (when there is one)
#define HIDDEN(k) (up(u[(k) * hd + j]) + (b ? up(b[(k) * hd + j]) : A(0)))

// gates = xp + (h W_hh^T + b_hh); c' = f c + i g; h' = o tanh(c'), written to hy and cy (row strides hys, cys)
template <typename T> __global__ void lstm_fwd(const T* xp, long long xs, const T* hg, const T* b, const T* c,
                                               long long cs, T* hy, long long hys, T* cy, long long cys, T* ws,
                                               long long rows, long long hd) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(e, rows * hd) {
        long long r = e / hd, j = e - r * hd;
        const T* x = xp + r * xs;
        const T* u = hg + r * 4 * hd;
        A i = sigm(up(x[j]) + HIDDEN(0));
        A f = sigm(up(x[hd + j]) + HIDDEN(1));
        A g = m_tanh(up(x[2 * hd + j]) + HIDDEN(2));
        A o = sigm(up(x[3 * hd + j]) + HIDDEN(3));
        A c1 = f * up(c[r * cs + j]) + i * g;
        A tc = m_tanh(c1);
        hy[r * hys + j] = Down<T>::f(o * tc);
        cy[r * cys + j] = Down<T>::f(c1);
        if (ws) {
            T* w = ws + r * 5 * hd;
            w[j] = Down<T>::f(i); w[hd + j] = Down<T>::f(f); w[2 * hd + j] = Down<T>::f(g);
            w[3 * hd + j] = Down<T>::f(o); w[4 * hd + j] = Down<T>::f(tc);
        }
    }
}

// dh' = gh (row stride ghs) + dh2 (rows, H; null: none), dc' = gc (row stride gcs): dgates (rows, 4H) before the
// activations; dc = dL/dc (rows, H; null: not wanted; it may be gc itself: each thread reads, then writes)
template <typename T> __global__ void lstm_bwd(const T* gh, long long ghs, const T* dh2, const T* gc, long long gcs,
                                               const T* ws, const T* c, long long cs, T* dgates, T* dc,
                                               long long rows, long long hd) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(e, rows * hd) {
        long long r = e / hd, j = e - r * hd;
        const T* w = ws + r * 5 * hd;
        A i = up(w[j]), f = up(w[hd + j]), g = up(w[2 * hd + j]), o = up(w[3 * hd + j]), tc = up(w[4 * hd + j]);
        A dh = up(gh[r * ghs + j]) + (dh2 ? up(dh2[r * hd + j]) : A(0));
        A dct = up(gc[r * gcs + j]) + dh * o * (A(1) - tc * tc);  // directly, and through h' = o tanh(c')
        T* d = dgates + r * 4 * hd;
        d[j] = Down<T>::f(dct * g * i * (A(1) - i));
        d[hd + j] = Down<T>::f(dct * up(c[r * cs + j]) * f * (A(1) - f));
        d[2 * hd + j] = Down<T>::f(dct * i * (A(1) - g * g));
        d[3 * hd + j] = Down<T>::f(dh * tc * o * (A(1) - o));
        if (dc) dc[r * hd + j] = Down<T>::f(dct * f);
    }
}

// r = sig(x_r + h_r), z = sig(x_z + h_z), n = tanh(x_n + r h_n), h' = n + z (h - n), h_* with b_hh
template <typename T> __global__ void gru_fwd(const T* xp, long long xs, const T* hg, const T* b, const T* h,
                                              long long hs, T* hy, T* ws, long long rows, long long hd) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(e, rows * hd) {
        long long r = e / hd, j = e - r * hd;
        const T* x = xp + r * xs;
        const T* u = hg + r * 3 * hd;
        A hn = HIDDEN(2);
        A rg = sigm(up(x[j]) + HIDDEN(0));
        A z = sigm(up(x[hd + j]) + HIDDEN(1));
        A n = m_tanh(up(x[2 * hd + j]) + rg * hn);
        A hp = up(h[r * hs + j]);
        hy[r * hd + j] = Down<T>::f(n + z * (hp - n));
        if (ws) {
            T* w = ws + r * 4 * hd;
            w[j] = Down<T>::f(rg); w[hd + j] = Down<T>::f(z); w[2 * hd + j] = Down<T>::f(n);
            w[3 * hd + j] = Down<T>::f(hn);
        }
    }
}

// dh' = gh (row stride ghs) + dh2 ((rows, H) or null): dxp (rows, 3H) the input projection's gradient, dhg
// (rows, 3H) the hidden projection's (they differ in the new gate, which r scales on the hidden side), dh =
// dh' z (rows, H), the direct part of dL/dh (the caller adds dhg W_hh; dh may be dh2: read, then written)
template <typename T> __global__ void gru_bwd(const T* gh, long long ghs, const T* dh2, const T* ws, const T* h,
                                              long long hs, T* dxp, T* dhg, T* dh, long long rows, long long hd) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(e, rows * hd) {
        long long r = e / hd, j = e - r * hd;
        const T* w = ws + r * 4 * hd;
        A rg = up(w[j]), z = up(w[hd + j]), n = up(w[2 * hd + j]), hn = up(w[3 * hd + j]);
        A g = up(gh[r * ghs + j]) + (dh2 ? up(dh2[r * hd + j]) : A(0));
        A dn = g * (A(1) - z) * (A(1) - n * n);
        A dz = g * (up(h[r * hs + j]) - n) * z * (A(1) - z);
        A dr = dn * hn * rg * (A(1) - rg);
        T* dx = dxp + r * 3 * hd;
        T* du = dhg + r * 3 * hd;
        dx[j] = Down<T>::f(dr); dx[hd + j] = Down<T>::f(dz); dx[2 * hd + j] = Down<T>::f(dn);
        du[j] = Down<T>::f(dr); du[hd + j] = Down<T>::f(dz); du[2 * hd + j] = Down<T>::f(dn * rg);
        dh[r * hd + j] = Down<T>::f(g * z);
    }
}

// h' = tanh(xp + (h W_hh^T + b_hh)) or relu of it
template <typename T> __global__ void rnn_fwd(const T* xp, long long xs, const T* hg, const T* b, T* hy,
                                              long long rows, long long hd, int relu) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(e, rows * hd) {
        long long r = e / hd, j = e - r * hd;
        const T* u = hg + r * hd;
        A v = up(xp[r * xs + j]) + HIDDEN(0);
        hy[r * hd + j] = Down<T>::f(relu ? ((v > A(0) || v != v) ? v : A(0)) : m_tanh(v));  // (relu keeps NaN)
    }
}

// dpre = dh' * act'(pre), from the output y = h' (relu' = y > 0, tanh' = 1 - y^2)
template <typename T> __global__ void rnn_bwd(const T* gy, long long gs, const T* y, T* dpre, long long rows,
                                              long long hd, int relu) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(e, rows * hd) {
        long long r = e / hd, j = e - r * hd;
        A g = up(gy[r * gs + j]), v = up(y[e]);
        dpre[e] = Down<T>::f(relu ? (v > A(0) ? g : A(0)) : g * (A(1) - v * v));
    }
}

// out (rows, width) = zeros with g (rows, hd; strides gs, gc) in columns [lo, lo + hd): the gradient of a
// column slice of a packed output
template <typename T> __global__ void place_cols(const T* g, long long gs, long long gc, T* out, long long rows,
                                                 long long width, long long lo, long long hd) {
    GRID_STRIDE(e, rows * width) {
        long long r = e / width, j = e - r * width - lo;
        out[e] = (j >= 0 && j < hd) ? g[r * gs + j * gc] : Down<T>::f(0.0f);
    }
}
"""

KERNEL_NAMES = ("lstm_fwd", "lstm_bwd", "gru_fwd", "gru_bwd", "rnn_fwd", "rnn_bwd", "place_cols")
_sets: dict[str, KernelSet] = {}


def kernels(dt: str) -> KernelSet:
    """The KernelSet of dtype `dt` (compiled on first use, per device kind).

    Raises:
        RuntimeError: `dt` is not a floating dtype.
    """
    ks = _sets.get(dt)
    if ks is None:
        if dt not in FLOATS:
            raise RuntimeError(f"[strata.nn rnn kernels] expected a floating dtype ({', '.join(FLOATS)}), got {dt}")
        c = C_TYPES[dt]
        ks = _sets[dt] = KernelSet(f"framework_rnn_{dt}", RNN_CU,
                                   name_expressions=[f"{k}<{c}>" for k in KERNEL_NAMES])
    return ks


def _launch(dt: str, name: str, n: int, args: tuple) -> None:
    if n > 0:
        kernels(dt).get(f"{name}<{C_TYPES[dt]}>")(_grid(n), THREADS, args)


def _i(*xs: int) -> tuple[np.int64, ...]:
    return tuple(np.int64(x) for x in xs)


def lstm_forward(dt: str, xp: int, xs: int, hg: int, b: int, c: int, cs: int, hy: int, hys: int, cy: int, cys: int,
                 ws: int, rows: int, hd: int) -> None:
    """One LSTM step's gates: xp (rows, 4H; row stride xs) the input projection with b_ih, hg (rows, 4H)
    = h W_hh^T, b = b_hh (4H) or 0, c (rows, H; row stride cs); writes h' to hy and c' to cy (rows, H; row
    strides hys, cys) and, when ws is not 0, the workspace (rows, 5H) the backward reads. Pointers are
    device addresses."""
    _launch(dt, "lstm_fwd", rows * hd, (xp, *_i(xs), hg, b, c, *_i(cs), hy, *_i(hys), cy, *_i(cys), ws,
                                        *_i(rows, hd)))


def lstm_backward(dt: str, gh: int, ghs: int, dh2: int, gc: int, gcs: int, ws: int, c: int, cs: int, dgates: int,
                  dc: int, rows: int, hd: int) -> None:
    """The step's backward from dh' = gh (row stride ghs) + dh2 ((rows, H) or 0) and dc' = gc (row stride
    gcs): dgates (rows, 4H), the gradient of the gate pre-activations (= that of xp; dh and dW_hh follow
    by BLAS), and dc (rows, H) unless it is 0 (dc may be gc, updated in place)."""
    _launch(dt, "lstm_bwd", rows * hd, (gh, *_i(ghs), dh2, gc, *_i(gcs), ws, c, *_i(cs), dgates, dc,
                                        *_i(rows, hd)))


def gru_forward(dt: str, xp: int, xs: int, hg: int, b: int, h: int, hs: int, hy: int, ws: int, rows: int,
                hd: int) -> None:
    """One GRU step's gates: xp (rows, 3H), hg = h W_hh^T (rows, 3H), b = b_hh or 0, h (rows, H); writes
    hy = h' (rows, H) and, unless ws is 0, the workspace (rows, 4H)."""
    _launch(dt, "gru_fwd", rows * hd, (xp, *_i(xs), hg, b, h, *_i(hs), hy, ws, *_i(rows, hd)))


def gru_backward(dt: str, gh: int, ghs: int, dh2: int, ws: int, h: int, hs: int, dxp: int, dhg: int, dh: int,
                 rows: int, hd: int) -> None:
    """The step's backward from dh' = gh (rows, H; row stride ghs) + dh2 ((rows, H) or 0): dxp and dhg
    (rows, 3H), the gradients of the input and hidden projections, and dh (rows, H), the part of dL/dh
    that does not pass through W_hh (dh may be dh2, updated in place)."""
    _launch(dt, "gru_bwd", rows * hd, (gh, *_i(ghs), dh2, ws, h, *_i(hs), dxp, dhg, dh, *_i(rows, hd)))


def rnn_forward(dt: str, xp: int, xs: int, hg: int, b: int, hy: int, rows: int, hd: int, relu: bool) -> None:
    """h' = tanh (or relu) of xp + hg + b, all (rows, H) but the bias (H) or 0."""
    _launch(dt, "rnn_fwd", rows * hd, (xp, *_i(xs), hg, b, hy, *_i(rows, hd), np.int32(relu)))


def rnn_backward(dt: str, gy: int, gs: int, y: int, dpre: int, rows: int, hd: int, relu: bool) -> None:
    """dpre = dh' times the activation's derivative, read from the output y = h' (rows, H)."""
    _launch(dt, "rnn_bwd", rows * hd, (gy, *_i(gs), y, dpre, *_i(rows, hd), np.int32(relu)))


def place_cols(dt: str, g: int, gs: int, gc: int, out: int, rows: int, width: int, lo: int, hd: int) -> None:
    """out (rows, width) = zeros holding g (rows, hd; strides gs, gc) at columns lo .. lo + hd."""
    _launch(dt, "place_cols", rows * width, (g, *_i(gs, gc), out, *_i(rows, width, lo, hd)))
