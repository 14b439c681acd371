"""Fused optimizer-step kernels for strata.optim on "cuda": one launch updates a parameter and its state
(SGD with momentum, Adam/AdamW with amsgrad), in the parameter's dtype, with the arithmetic of PyTorch's
single-tensor CPU path done in opmath (float for half/bfloat16/float32, double for float64).
Contiguous operands, one thread per element (grid-stride); one KernelSet per dtype, compiled on first use.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> p, g = cuda.to_device(np.ones(3, np.float32)), cuda.to_device(np.full(3, 2.0, np.float32))
    >>> sgd("float32", 3, p.ptr, g.ptr, 0, lr=0.1, weight_decay=0.0, momentum=0.0, dampening=0.0,
    ...     nesterov=False, maximize=False, first=True)
    >>> p.get().tolist()
    [0.800000011920929, 0.800000011920929, 0.800000011920929]
"""

from __future__ import annotations

import numpy as np

from strata.framework.kernels import C_TYPES, COMMON_CU, MAX_BLOCKS, THREADS
from strata.libs.common import KernelSet

OPTIM_CU = COMMON_CU + r"""
template <typename A> __device__ __forceinline__ A lerp(A a, A b, A w) {   // as ATen's lerp
    return w < A(0.5) ? a + w * (b - a) : b - (b - a) * (A(1) - w);
}

// buf: momentum buffer (unused when momentum == 0); first: the buffer starts as the gradient
template <typename T> __global__ void sgd(T* p, const T* g, T* buf, long long n, typename Op<T>::type lr,
                                          typename Op<T>::type wd, typename Op<T>::type momentum,
                                          typename Op<T>::type dampening, int nesterov, int maximize, int first) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(i, n) {
        A x = up(p[i]);
        A d = up(g[i]);
        if (maximize) d = -d;
        if (wd != A(0)) d = d + wd * x;
        if (momentum != A(0)) {
            A b = first ? d : up(buf[i]) * momentum + (A(1) - dampening) * d;
            buf[i] = Down<T>::f(b);
            b = up(buf[i]);
            d = nesterov ? d + momentum * b : b;
        }
        p[i] = Down<T>::f(x + (-lr) * d);
    }
}

// decay: 1 - lr * weight_decay for AdamW (decoupled), else weight_decay is added to the gradient
template <typename T> __global__ void adam(T* p, const T* g, T* m, T* v, T* vmax, long long n,
                                           typename Op<T>::type wd, typename Op<T>::type decay,
                                           typename Op<T>::type one_minus_beta1, typename Op<T>::type beta2,
                                           typename Op<T>::type one_minus_beta2, typename Op<T>::type eps,
                                           typename Op<T>::type neg_step_size, typename Op<T>::type bc2_sqrt,
                                           int amsgrad, int maximize, int decoupled) {
    typedef typename Op<T>::type A;
    GRID_STRIDE(i, n) {
        A x = up(p[i]);
        A d = up(g[i]);
        if (maximize) d = -d;
        if (wd != A(0)) {
            if (decoupled) { x = up(Down<T>::f(x * decay)); } else { d = d + wd * x; }
        }
        A mi = up(Down<T>::f(lerp(up(m[i]), d, one_minus_beta1)));
        A vi = up(Down<T>::f(up(v[i]) * beta2 + one_minus_beta2 * d * d));
        m[i] = Down<T>::f(mi);
        v[i] = Down<T>::f(vi);
        A s = vi;
        if (amsgrad) {
            A w = up(vmax[i]);
            s = (is_nan(w) || w > vi) ? w : vi;
            vmax[i] = Down<T>::f(s);
        }
        A denom = up(Down<T>::f(m_sqrt(s) / bc2_sqrt)) + eps;
        p[i] = Down<T>::f(x + neg_step_size * (mi / denom));
    }
}
"""

FLOATS = ("float16", "bfloat16", "float32", "float64")
_sets: dict[str, KernelSet] = {}


def _kernels(dt: str) -> KernelSet:
    if dt not in FLOATS:
        raise RuntimeError(f"[strata.optim] parameters must be floating point, got {dt}")
    ks = _sets.get(dt)
    if ks is None:
        c = C_TYPES[dt]
        ks = _sets[dt] = KernelSet(f"framework_optim_{dt}", OPTIM_CU, name_expressions=[f"sgd<{c}>", f"adam<{c}>"])
    return ks


def _scalar(dt: str, x: float) -> np.floating:
    return np.float64(x) if dt == "float64" else np.float32(x)


def _grid(n: int) -> int:
    return max(1, min(MAX_BLOCKS, (n + THREADS - 1) // THREADS))


def sgd(dt: str, n: int, p: int, g: int, buf: int, *, lr: float, weight_decay: float, momentum: float,
        dampening: float, nesterov: bool, maximize: bool, first: bool) -> None:
    """One SGD step over `n` contiguous elements at device addresses p (updated), g, buf (momentum buffer,
    written when momentum != 0)."""
    if n == 0:
        return
    s = [_scalar(dt, x) for x in (lr, weight_decay, momentum, dampening)]
    _kernels(dt).get(f"sgd<{C_TYPES[dt]}>")(_grid(n), THREADS, (p, g, buf, np.int64(n), *s, np.int32(nesterov),
                                                                   np.int32(maximize), np.int32(first)))


def adam(dt: str, n: int, p: int, g: int, m: int, v: int, vmax: int, *, lr: float, beta1: float, beta2: float,
         eps: float, weight_decay: float, step: float, amsgrad: bool, maximize: bool, decoupled: bool) -> None:
    """One Adam/AdamW step (`step` counts this one) over `n` contiguous elements: p updated; m, v (and vmax
    with amsgrad) the moment buffers, updated."""
    if n == 0:
        return
    bc1 = 1 - beta1 ** step
    bc2 = 1 - beta2 ** step
    s = [_scalar(dt, x) for x in (weight_decay, 1 - lr * weight_decay, 1 - beta1, beta2, 1 - beta2, eps,
                                   -(lr / bc1), bc2 ** 0.5)]
    _kernels(dt).get(f"adam<{C_TYPES[dt]}>")(_grid(n), THREADS, (p, g, m, v, vmax, np.int64(n), *s,
                                                                    np.int32(amsgrad), np.int32(maximize),
                                                                    np.int32(decoupled)))
