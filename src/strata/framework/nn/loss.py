"""Loss modules, as torch.nn's: `CrossEntropyLoss`, `NLLLoss`, `MSELoss`. Each stores its options
(class `weight` as a buffer, `ignore_index`, `reduction`, `label_smoothing`) and calls the matching
`strata.nn.functional` loss in `forward(input, target)`.

Example:
    >>> import strata
    >>> from strata.framework import nn
    >>> nn.MSELoss(reduction="sum")(strata.tensor([1.0, 2.0]), strata.tensor([0.0, 0.0])).item()
    5.0
"""

from __future__ import annotations

import warnings
from typing import Any

from strata.framework.nn import functional as F  # noqa: N812 - PyTorch's spelling
from strata.framework.nn.module import Module
from strata.framework.tensor import Tensor


def _legacy_reduction(size_average: Any, reduce: Any) -> str:
    """The `reduction` that PyTorch's deprecated size_average / reduce arguments mean."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' instead.",
                  stacklevel=3)
    return reduction


class _Loss(Module):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Tensor | None = None, size_average: Any = None, reduce: Any = None,
                 reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.weight: Tensor | None


class MSELoss(_Loss):
    """Mean squared error: mean((input - target)^2) ('mean'), its sum ('sum') or per element ('none')."""

    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """F.mse_loss(input, target, reduction)."""
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of class-index targets given log-probabilities (N, C) or (N, C, d1, ...);
    targets equal to `ignore_index` contribute nothing; `weight` rescales each class."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """F.nll_loss(input, target, weight, ignore_index, reduction)."""
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits (N, C) or (N, C, d1, ...) against class indices (or class probabilities):
    log_softmax over C followed by the negative log likelihood, with optional class `weight`,
    `ignore_index` and `label_smoothing`."""

    def __init__(self, weight: Tensor | None = None, size_average: Any = None, ignore_index: int = -100,
                 reduce: Any = None, reduction: str = "mean", label_smoothing: float = 0.0) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """F.cross_entropy(input, target, weight, ignore_index, reduction, label_smoothing)."""
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)
