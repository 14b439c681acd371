"""Shared pieces of the classic optimizers (Adadelta, Adagrad, RMSprop, Adamax, NAdam, RAdam): option checks and the
gradient as an update sees it. Their updates are written once in framework tensor ops (in place, under
no_grad), so they run on "cpu" and "cuda" alike; no fused kernel yet."""

from __future__ import annotations

from typing import Any

from strata.framework.optim.optimizer import check_grad
from strata.framework.tensor import Tensor


def check_options(name: str, lr: Any, eps: float, weight_decay: float, foreach: Any, differentiable: bool,
                  capturable: bool = False, fused: Any = None) -> None:
    """PyTorch's checks on the common options.

    Raises:
        ValueError: lr, eps or weight_decay negative.
        NotImplementedError: a Tensor lr, differentiable, capturable or fused.
    """
    if isinstance(lr, Tensor):
        raise NotImplementedError(f"[strata.optim.{name}] lr as a Tensor is not supported; pass a Python float")
    if not lr >= 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not eps >= 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not weight_decay >= 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")
    for flag, what in ((differentiable, "differentiable"), (capturable, "capturable"), (fused, "fused")):
        if flag:
            raise NotImplementedError(f"[strata.optim.{name}] {what}=True is not supported")


def check_betas(betas: tuple[float, float]) -> None:
    """PyTorch's check of Adam-family betas: each in [0, 1) (ValueError naming the index)."""
    for i, b in enumerate(betas):
        if not 0.0 <= b < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")


def effective_grad(p: Tensor, group: dict[str, Any]) -> Tensor:
    """The gradient the update uses: negated with maximize, plus weight_decay * p (L2); with
    `decoupled_weight_decay` (NAdamW/RAdamW-style) the parameter is decayed in place instead."""
    g = check_grad(p)
    if group.get("maximize"):
        g = -g
    wd = float(group.get("weight_decay", 0.0))
    if wd == 0:
        return g
    if group.get("decoupled_weight_decay"):
        p.mul_(1 - float(group["lr"]) * wd)
        return g
    return g + p * wd


def zeros_like(p: Tensor) -> Tensor:
    """A zero state tensor shaped, typed and placed as p."""
    return p.detach() * 0.0
