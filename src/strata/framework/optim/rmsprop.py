"""`RMSprop`, as torch.optim.RMSprop (its single-tensor algorithm):

    g = grad (negated with maximize) + weight_decay * p
    square_avg = alpha * square_avg + (1 - alpha) * g^2
    avg = sqrt(square_avg - grad_avg^2) if centered (grad_avg = alpha * grad_avg + (1 - alpha) * g)
          else sqrt(square_avg);  avg += eps
    momentum > 0: buf = momentum * buf + g / avg;  p -= lr * buf      else: p -= lr * g / avg

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = RMSprop([w], lr=0.01)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> [round(x, 4) for x in w.tolist()]
    [0.9, -1.9]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strata.framework import autograd
from strata.framework.optim._update import check_options, effective_grad, zeros_like
from strata.framework.optim.optimizer import Optimizer, ParamsT, new_step


class RMSprop(Optimizer):
    """RMSprop (Hinton). Args as PyTorch's: lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False, maximize.

    Raises:
        ValueError: a negative lr, eps, weight_decay, momentum or alpha.
        NotImplementedError: a Tensor lr, capturable or differentiable.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False, differentiable: bool = False) -> None:
        check_options("RMSprop", lr, eps, weight_decay, foreach, differentiable, capturable)
        if not momentum >= 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not alpha >= 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps, "centered": centered,
                                  "weight_decay": weight_decay, "capturable": capturable, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable})

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One RMSprop update of every parameter with a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            state = self.state[p]
            momentum, centered = float(group["momentum"]), bool(group["centered"])
            if not state:
                state.update(step=new_step(), square_avg=zeros_like(p))
                if momentum > 0:
                    state["momentum_buffer"] = zeros_like(p)
                if centered:
                    state["grad_avg"] = zeros_like(p)
            self._step_tensor(state)
            g = effective_grad(p, group)
            alpha, eps, lr = float(group["alpha"]), float(group["eps"]), float(group["lr"])
            sq = state["square_avg"]
            sq.mul_(alpha).add_(g * g * (1 - alpha))
            if centered:
                ga = state["grad_avg"]
                ga.lerp_(g, 1 - alpha)
                avg = (sq - ga * ga).sqrt() + eps
            else:
                avg = sq.sqrt() + eps
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).add_(g / avg)
                p.add_(buf * -lr)
            else:
                p.add_(g / avg * -lr)
        return loss


__all__ = ["RMSprop"]
