"""The loss modules beside loss.py: `BCELoss`, `BCEWithLogitsLoss`, `L1Loss`, `SmoothL1Loss`,
`HuberLoss`, `KLDivLoss`, with the functional forms strata.nn.functional
lacks (`smooth_l1_loss`, `huber_loss`, `kl_div`, `cosine_similarity`). Each composes differentiable
framework ops with PyTorch's formulas and reductions.

Example:
    >>> import strata
    >>> from strata.framework.nn.loss_extra import BCELoss
    >>> round(BCELoss()(strata.tensor([0.8, 0.1]), strata.tensor([1.0, 0.0])).item(), 4)
    0.1643
"""

from __future__ import annotations

from typing import Any

from strata.framework import ops
from strata.framework.nn import functional as F
from strata.framework.nn.loss import _Loss, _WeightedLoss
from strata.framework.tensor import Tensor


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _same_shape(name: str, x: Tensor, t: Tensor) -> None:
    if tuple(x.shape) != tuple(t.shape):
        raise ValueError(f"{name}: target size {list(t.shape)} differs from input size {list(x.shape)}; strata "
                         "does not broadcast losses")


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target)."""
    _same_shape("smooth_l1_loss", input, target)
    d = (input - target).abs()
    if beta == 0.0:
        return _reduce(d, reduction)
    return _reduce(ops.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,  # noqa: A002
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    _same_shape("huber_loss", input, target)
    d = (input - target).abs()
    loss = ops.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    return _reduce(loss * weight if weight is not None else loss, reduction)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,  # noqa: A002
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """target * (log target - input) pointwise (input holds log-probabilities); 'batchmean' divides the
    sum by the batch size."""
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # 0 * log 0 is taken as 0, as PyTorch's xlogy
        safe = ops.where(target > 0, target, target * 0.0 + 1.0)
        loss = ops.where(target > 0, target * (safe.log() - input), target * 0.0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / max(|x1| |x2|, eps) along dim."""
    num = (x1 * x2).sum(dim)
    den = ((x1 * x1).sum(dim) * (x2 * x2).sum(dim)).clamp(min=eps * eps).sqrt()
    return num / den


FUNCTIONAL = {"smooth_l1_loss": smooth_l1_loss, "huber_loss": huber_loss, "kl_div": kl_div,
              "cosine_similarity": cosine_similarity}


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities: -(t log x + (1 - t) log(1 - x)), logs clamped at -100."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Sigmoid + binary cross entropy in one stable formula, with optional pos_weight."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean", pos_weight: Tensor | None = None) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", pos_weight)
        self.pos_weight: Tensor | None

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class L1Loss(_Loss):
    """|input - target|, reduced."""

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below beta, linear above."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below delta, delta-scaled linear above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of target from exp(input)."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean",
                 log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


__all__ = ["BCELoss", "BCEWithLogitsLoss", "HuberLoss", "KLDivLoss", "L1Loss", "SmoothL1Loss", *FUNCTIONAL]
