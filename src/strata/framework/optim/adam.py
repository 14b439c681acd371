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

from strata.framework import autograd, op_table, ops
from strata.framework.backends import optim_cpu, optim_cuda  # noqa: F401 - their fast paths register here
from strata.framework.optim.optimizer import Optimizer, ParamsT, check_grad, new_step
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
    """One parameter's step: the backend's fused kernel when it takes these tensors, else the composite."""
    lr, wd, eps = float(group["lr"]), float(group["weight_decay"]), float(group["eps"])
    beta1, beta2 = (float(b) for b in group["betas"])
    amsgrad, maximize = bool(group["amsgrad"]), bool(group["maximize"])
    decoupled = bool(group.get("decoupled_weight_decay", False))
    m, v = state["exp_avg"], state["exp_avg_sq"]
    vmax = state.get("max_exp_avg_sq") if amsgrad else None
    args = (p, grad, m, v, vmax, lr, beta1, beta2, eps, wd, step, maximize, decoupled)
    fused = op_table.fast_path("adam_step", p.device.type)
    if fused is None or not fused(*args):
        adam_step(*args)


def adam_step(p: Tensor, grad: Tensor, m: Tensor, v: Tensor, vmax: Tensor | None, lr: float, beta1: float,
              beta2: float, eps: float, wd: float, step: float, maximize: bool, decoupled: bool) -> None:
    """The Adam/AdamW update, written once with tensor ops (PyTorch's single-tensor algorithm; in place,
    under no_grad): every device and dtype, each op rounding in the parameter's dtype."""
    g = -grad if maximize else grad
    if wd != 0:
        if decoupled:
            p.mul_(1 - lr * wd)
        else:
            g = g.add(p, alpha=wd)
    m.lerp_(g, 1 - beta1)
    v.mul_(beta2).add_(g * (1 - beta2) * g)  # (addcmul: self + value * t1 * t2, in that order)
    if vmax is not None:
        vmax.copy_(ops.maximum(vmax, v))
    bc1, bc2 = 1 - beta1 ** step, 1 - beta2 ** step
    denom = ((vmax if vmax is not None else v).sqrt() / bc2 ** 0.5).add_(eps)
    p.add_(m / denom, alpha=-(lr / bc1))  # (addcdiv: self + value * (t1 / t2))
