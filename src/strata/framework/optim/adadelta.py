"""`Adadelta`, as torch.optim.Adadelta (its single-tensor algorithm):

    g = grad (negated with maximize) + weight_decay * p
    square_avg = rho * square_avg + (1 - rho) * g^2
    delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
    acc_delta = rho * acc_delta + (1 - rho) * delta^2
    p -= lr * delta

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adadelta([w], lr=1.0)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> [round(x, 5) for x in w.tolist()], sorted(opt.state[w])
    ([0.99684, -1.99684], ['acc_delta', 'square_avg', 'step'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strata.framework import autograd
from strata.framework.optim._update import check_options, effective_grad, zeros_like
from strata.framework.optim.optimizer import Optimizer, ParamsT, new_step


class Adadelta(Optimizer):
    """Adadelta (Zeiler 2012). Args as PyTorch's: lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize.

    Raises:
        ValueError: a negative lr/eps/weight_decay, or rho outside [0, 1].
        NotImplementedError: a Tensor lr, capturable or differentiable.
    """

    def __init__(self, params: ParamsT, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *, capturable: bool = False,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_options("Adadelta", lr, eps, weight_decay, foreach, differentiable, capturable)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                                  "maximize": maximize, "capturable": capturable, "foreach": foreach,
                                  "differentiable": differentiable})

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adadelta update of every parameter with a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            state = self.state[p]
            if not state:
                state.update(step=new_step(), square_avg=zeros_like(p), acc_delta=zeros_like(p))
            self._step_tensor(state)
            g = effective_grad(p, group)
            rho, eps, lr = float(group["rho"]), float(group["eps"]), float(group["lr"])
            sq, acc = state["square_avg"], state["acc_delta"]
            sq.mul_(rho).add_(g * g * (1 - rho))
            delta = ((acc + eps).sqrt() / (sq + eps).sqrt()) * g
            acc.mul_(rho).add_(delta * delta * (1 - rho))
            p.add_(delta * -lr)
        return loss


__all__ = ["Adadelta"]
