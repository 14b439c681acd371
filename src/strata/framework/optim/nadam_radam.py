"""`NAdam` and `RAdam`, as torch.optim's (their single-tensor algorithms), written in framework tensor ops
so they run on "cpu" and "cuda" alike.

NAdam (Nesterov Adam, with PyTorch's momentum-decay schedule mu_t = beta1 (1 - 0.5 * 0.96^(t psi))):

    m = lerp(m, g, 1 - beta1);  v = beta2 v + (1 - beta2) g^2;  d = sqrt(v / (1 - beta2^t)) + eps
    p -= lr (1 - mu_t) / (1 - prod mu) * g / d + lr mu_{t+1} / (1 - prod mu * mu_{t+1}) * m / d

RAdam (rectified Adam): Adam's step scaled by the variance rectification r_t once rho_t > 5, plain
momentum SGD with bias correction before that.

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> [round(x, 4) for x in w.tolist()]
    [0.8, -1.6]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from strata.framework import autograd, ops
from strata.framework import dtypes as dt
from strata.framework.device import CPU
from strata.framework.optim._update import check_betas, check_options, effective_grad, zeros_like
from strata.framework.optim.optimizer import Optimizer, ParamsT, new_step


class NAdam(Optimizer):
    """NAdam. Args as PyTorch's: lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    momentum_decay=4e-3, decoupled_weight_decay=False, maximize.

    Raises:
        ValueError: a negative lr/eps/weight_decay/momentum_decay, or a beta outside [0, 1).
        NotImplementedError: a Tensor lr, capturable or differentiable.
    """

    def __init__(self, params: ParamsT, lr: float = 2e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        check_options("NAdam", lr, eps, weight_decay, foreach, differentiable, capturable)
        check_betas(betas)
        if momentum_decay < 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "momentum_decay": momentum_decay, "decoupled_weight_decay": decoupled_weight_decay,
                                  "maximize": maximize, "foreach": foreach, "capturable": capturable,
                                  "differentiable": differentiable})

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One NAdam update of every parameter with a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            state = self.state[p]
            if not state:
                state.update(step=new_step(), mu_product=ops.full((), 1.0, dt.float32, CPU),
                             exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
            step = self._step_tensor(state)
            g = effective_grad(p, group)
            b1, b2 = (float(b) for b in group["betas"])
            lr, eps, psi = float(group["lr"]), float(group["eps"]), float(group["momentum_decay"])
            mu = b1 * (1.0 - 0.5 * 0.96 ** (step * psi))
            mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * psi))
            state["mu_product"].mul_(mu)  # a float32 host scalar, as PyTorch keeps it
            mu_prod = float(state["mu_product"].item())
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m.lerp_(g, 1 - b1)
            v.mul_(b2).add_(g * g * (1 - b2))
            denom = (v / (1 - b2 ** step)).sqrt() + eps
            p.add_(g / denom * (-lr * (1.0 - mu) / (1.0 - mu_prod)))
            p.add_(m / denom * (-lr * mu_next / (1.0 - mu_prod * mu_next)))
        return loss


class RAdam(Optimizer):
    """RAdam. Args as PyTorch's: lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
    decoupled_weight_decay=False, maximize.

    Raises:
        ValueError: a negative lr/eps/weight_decay, or a beta outside [0, 1).
        NotImplementedError: a Tensor lr, capturable or differentiable.
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        check_options("RAdam", lr, eps, weight_decay, foreach, differentiable, capturable)
        check_betas(betas)
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                                  "foreach": foreach, "capturable": capturable, "differentiable": differentiable})

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One RAdam update of every parameter with a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            state = self.state[p]
            if not state:
                state.update(step=new_step(), exp_avg=zeros_like(p), exp_avg_sq=zeros_like(p))
            step = self._step_tensor(state)
            g = effective_grad(p, group)
            b1, b2 = (float(b) for b in group["betas"])
            lr, eps = float(group["lr"]), float(group["eps"])
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m.lerp_(g, 1 - b1)
            v.mul_(b2).add_(g * g * (1 - b2))
            bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
            m_hat = m / bc1
            rho_inf = 2 / (1 - b2) - 1
            rho_t = rho_inf - 2 * step * (b2 ** step) / bc2
            if rho_t > 5.0:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                adaptive = (bc2 ** 0.5) / (v.sqrt() + eps)
                p.add_(m_hat * lr * adaptive * rect * -1.0)
            else:
                p.add_(m_hat * lr * -1.0)
        return loss


__all__ = ["NAdam", "RAdam"]
