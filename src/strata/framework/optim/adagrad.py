"""`Adagrad`, as torch.optim.Adagrad (its single-tensor algorithm):

    g = grad (negated with maximize) + weight_decay * p
    clr = lr / (1 + (step - 1) * lr_decay)
    sum += g^2
    p -= clr * g / (sqrt(sum) + eps)

The accumulator starts at `initial_accumulator_value` and, as in PyTorch, the state (`step`, `sum`) is
created when the optimizer is constructed.

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adagrad([w], lr=0.1)
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


class Adagrad(Optimizer):
    """Adagrad (Duchi et al. 2011). Args as PyTorch's: lr=1e-2, lr_decay=0, weight_decay=0,
    initial_accumulator_value=0, eps=1e-10, maximize.

    Raises:
        ValueError: a negative lr, lr_decay, eps, weight_decay or initial_accumulator_value.
        NotImplementedError: a Tensor lr, differentiable or fused.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        check_options("Adagrad", lr, eps, weight_decay, foreach, differentiable, fused=fused)
        if not lr_decay >= 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not initial_accumulator_value >= 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        super().__init__(params, {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                                  "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                                  "maximize": maximize, "differentiable": differentiable, "fused": fused})
        for group in self.param_groups:
            for p in group["params"]:
                init = float(group["initial_accumulator_value"])
                self.state[p] = {"step": new_step(), "sum": zeros_like(p) + init}

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One Adagrad update of every parameter with a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            state = self.state[p]
            if not state:  # a group added after construction
                state.update(step=new_step(), sum=zeros_like(p) + float(group["initial_accumulator_value"]))
            step = self._step_tensor(state)
            g = effective_grad(p, group)
            clr = float(group["lr"]) / (1 + (step - 1) * float(group["lr_decay"]))
            acc = state["sum"]
            acc.add_(g * g)
            p.add_(g / (acc.sqrt() + float(group["eps"])) * -clr)
        return loss


__all__ = ["Adagrad"]
