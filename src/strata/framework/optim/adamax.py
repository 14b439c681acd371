"""`Adamax`, as torch.optim.Adamax (its single-tensor algorithm), Adam with the infinity norm:

    g = grad (negated with maximize) + weight_decay * p
    exp_avg = beta1 * exp_avg + (1 - beta1) * g
    exp_inf = max(beta2 * exp_inf, |g| + eps)
    p -= lr / (1 - beta1^step) * exp_avg / exp_inf

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> [round(x, 4) for x in w.tolist()]
    [0.9, -1.9]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strata.framework import autograd
from strata.framework.optim._update import check_betas, check_options, effective_grad, zeros_like
from strata.framework.optim.optimizer import Optimizer, ParamsT, new_step


class Adamax(Optimizer):
    """Adamax (Kingma and Ba 2015). Args as PyTorch's: lr=2e-3, betas=(0.9, 0.999), eps=1e-8,
    weight_decay=0, maximize.

    Raises:
        ValueError: a negative lr/eps/weight_decay, or a beta outside [0, 1).
        NotImplementedError: a Tensor lr, capturable or differentiable.
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        check_options("Adamax", lr, eps, weight_decay, foreach, differentiable, capturable)
        check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                                  "capturable": capturable})

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adamax update of every parameter with a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            state = self.state[p]
            if not state:
                state.update(step=new_step(), exp_avg=zeros_like(p), exp_inf=zeros_like(p))
            step = self._step_tensor(state)
            g = effective_grad(p, group)
            b1, b2 = (float(b) for b in group["betas"])
            m, u = state["exp_avg"], state["exp_inf"]
            m.lerp_(g, 1 - b1)
            u.copy_((u * b2).maximum(g.abs() + float(group["eps"])))
            p.add_(m / u * (-float(group["lr"]) / (1 - b1 ** step)))
        return loss


__all__ = ["Adamax"]
