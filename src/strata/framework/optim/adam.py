"""`Adam` and `AdamW`, as torch.optim.Adam / AdamW (their single-tensor algorithm, step counts on the host).

    t += 1;  g = -grad if maximize else grad
    Adam: g += weight_decay * p            AdamW: p *= 1 - lr * weight_decay
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g;  (amsgrad: v_max = max(v_max, v), used for v)
    p -= lr / (1 - beta1 ** t) * m / (sqrt(v) / sqrt(1 - beta2 ** t) + eps)

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = strata.optim.AdamW([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward()
    >>> _ = opt.step()
    >>> [round(x, 4) for x in w.tolist()], opt.state[w]["step"]
    ([0.9, -1.9], tensor(1.))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.framework import autograd, ops
from strata.framework.kernels import optim as kernels
from strata.framework.optim.optimizer import Optimizer, ParamsT, check_grad, new_step
from strata.framework.optim.sgd import _contiguous
from strata.framework.tensor import Tensor


class Adam(Optimizer):
    """Adam, as torch.optim.Adam (L2 weight decay added to the gradient, or decoupled as AdamW's).

    Args:
        params: tensors, (name, tensor) pairs, or dicts of per-group options.
        lr: learning rate. betas: decay rates of the first and second moments. eps: added to the denominator.
        weight_decay: L2 penalty. amsgrad: use the running maximum of the second moment.
        maximize: ascend instead of descend. decoupled_weight_decay: AdamW's weight decay.
        foreach, capturable, differentiable, fused: accepted for compatibility; capturable=True and
            differentiable=True are not supported.

    Raises:
        ValueError: a negative lr, eps or weight_decay, or a beta outside [0, 1).
        NotImplementedError: Tensor lr/betas, capturable=True or differentiable=True.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None:
        _validate(lr, betas, eps, weight_decay, foreach, capturable, differentiable, fused, type(self).__name__)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay, "amsgrad": amsgrad,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable, "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adam update of every parameter that has a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            grad = check_grad(p)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = new_step()
                state["exp_avg"] = ops.zeros_like(p)
                state["exp_avg_sq"] = ops.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = ops.zeros_like(p)
            step = self._step_tensor(state)
            _adam_update(p, grad, state, group, step)
        return loss


class AdamW(Adam):
    """AdamW, as torch.optim.AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay).

    Args: as Adam's (weight_decay defaults to 0.01).
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


def _validate(lr: Any, betas: Any, eps: float, weight_decay: float, foreach: Any, capturable: bool,
              differentiable: bool, fused: Any, name: str) -> None:
    if isinstance(lr, Tensor) or any(isinstance(b, Tensor) for b in betas):
        raise NotImplementedError(f"[strata.optim.{name}] lr and betas as Tensors are not supported; pass floats")
    if not lr >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not eps >= 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not weight_decay >= 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    if fused and differentiable:
        raise RuntimeError("`fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if capturable or differentiable:
        raise NotImplementedError(f"[strata.optim.{name}] capturable=True and differentiable=True are not supported")


def _adam_update(p: Tensor, grad: Tensor, state: dict[str, Any], group: dict[str, Any], step: float) -> None:
    lr, wd, eps = float(group["lr"]), float(group["weight_decay"]), float(group["eps"])
    beta1, beta2 = (float(b) for b in group["betas"])
    amsgrad, maximize = bool(group["amsgrad"]), bool(group["maximize"])
    decoupled = bool(group.get("decoupled_weight_decay", False))
    m, v = state["exp_avg"], state["exp_avg_sq"]
    vmax = state.get("max_exp_avg_sq") if amsgrad else None
    if p.device.type == "cpu":
        _adam_numpy(p, grad, m, v, vmax, lr, beta1, beta2, eps, wd, step, maximize, decoupled)
        return
    target, g = _contiguous(p), _contiguous(grad, p.dtype)
    bufs = [_contiguous(b) if b is not None else None for b in (m, v, vmax)]
    kernels.adam(p.dtype.name, p.numel(), ops._ptr(target), ops._ptr(g),
                 *(ops._ptr(b) if b is not None else 0 for b in bufs), lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                 weight_decay=wd, step=step, amsgrad=amsgrad, maximize=maximize, decoupled=decoupled)
    for dst, src in zip((p, m, v, vmax), (target, *bufs), strict=True):
        if dst is not None and src is not None and src is not dst:
            ops.copy_into(dst, src)


def _adam_numpy(p: Tensor, grad: Tensor, m: Tensor, v: Tensor, vmax: Tensor | None, lr: float, beta1: float,
                beta2: float, eps: float, wd: float, step: float, maximize: bool, decoupled: bool) -> None:
    """The same update with NumPy on host tensors, op by op in PyTorch's order (half/bfloat16 in float32,
    rounded to the parameter's dtype after each op as PyTorch's CPU kernels do)."""
    acc: Any = np.float64 if p.dtype.name == "float64" else np.float32
    st = p.dtype.np

    def r(a: Any) -> Any:  # round to the storage dtype, back to opmath
        return a.astype(st).astype(acc)

    x: Any = p._host().astype(acc)
    d: Any = grad._host().astype(acc)
    if maximize:
        d = -d
    if wd != 0:
        if decoupled:
            x = r(x * acc(1 - lr * wd))
        else:
            d = r(d + acc(wd) * x)
    mh, vh = m._host(), v._host()
    w = acc(1 - beta1)
    mo = mh.astype(acc)
    mn = r(mo + w * (d - mo) if w < 0.5 else d - (d - mo) * acc(1 - w))
    vn = r(r(vh.astype(acc) * acc(beta2)) + acc(1 - beta2) * d * d)
    mh[...], vh[...] = mn.astype(st), vn.astype(st)
    s = vn
    if vmax is not None:
        mx = vmax._host()
        s = r(np.maximum(mx.astype(acc), vn))
        mx[...] = s.astype(st)
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    denom = r(r(np.sqrt(s) / acc(bc2 ** 0.5)) + acc(eps))
    p._host()[...] = (x + acc(-(lr / bc1)) * r(mn / denom)).astype(st)
