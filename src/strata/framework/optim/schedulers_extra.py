"""The learning-rate schedulers beside lr_scheduler.py, with PyTorch's formulas, arguments and errors:
`ReduceLROnPlateau` (cut the rate when a metric stops improving), `OneCycleLR` (warm up to max_lr, anneal
to a tiny rate, cycling momentum / beta1 the other way), `CosineAnnealingWarmRestarts` (SGDR),
`ConstantLR` and `PolynomialLR`. They are bound into `strata.optim.lr_scheduler` (torch.optim.lr_scheduler).

Example:
    >>> import strata
    >>> w = strata.zeros(1, requires_grad=True)
    >>> opt = strata.optim.SGD([w], lr=1.0)
    >>> plateau = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    >>> for loss in [3.0, 2.0, 2.5, 2.4, 2.6]:
    ...     plateau.step(loss)
    >>> plateau.get_last_lr()
    [0.5]
"""

from __future__ import annotations

import math
from typing import Any

from strata.framework.optim.lr_scheduler import LRScheduler
from strata.framework.optim.optimizer import Optimizer


class ReduceLROnPlateau:
    """Multiply every group's lr by `factor` once the metric passed to `step(metric)` has not improved for
    more than `patience` steps (then wait `cooldown` steps), never below `min_lr`.

    Raises:
        ValueError: factor >= 1, an unknown mode / threshold_mode, or min_lr of the wrong length.
        TypeError: optimizer is not an Optimizer.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr: float | list[float] = 0, eps: float = 1e-8) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer, self.factor = optimizer, factor
        if isinstance(min_lr, list | tuple):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.min_lrs = [float(v) for v in min_lr]
        else:
            self.min_lrs = [float(min_lr)] * len(optimizer.param_groups)
        if mode not in ("min", "max"):
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0
        self.last_epoch = 0
        self._last_lr = [float(g["lr"]) for g in optimizer.param_groups]

    def is_better(self, a: float, best: float) -> bool:
        """Whether metric `a` improves on `best` by more than the threshold."""
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    @property
    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def step(self, metrics: Any, epoch: int | None = None) -> None:
        """Record this epoch's metric (a number or a one-element tensor) and cut the rates if it is time."""
        current = float(metrics.item() if hasattr(metrics, "item") else metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for i, group in enumerate(self.optimizer.param_groups):
                old = float(group["lr"])
                new = max(old * self.factor, self.min_lrs[i])
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [float(g["lr"]) for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)


class OneCycleLR(LRScheduler):
    """The 1cycle policy, stepped once per batch: lr from max_lr / div_factor up to max_lr over
    pct_start of total_steps, then down to initial_lr / final_div_factor ('cos' or 'linear' annealing;
    three_phase adds a symmetric descent before the final one); momentum (or Adam's beta1) goes the other
    way between base_momentum and max_momentum.

    Raises:
        ValueError: no total_steps and no epochs/steps_per_epoch, a non-positive count, pct_start outside
            [0, 1], an unknown anneal_strategy, or stepping past total_steps.
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float], total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True, base_momentum: float = 0.85,
                 max_momentum: float = 0.95, div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
            if epochs <= 0 or not isinstance(epochs, int):
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if steps_per_epoch <= 0 or not isinstance(steps_per_epoch, int):
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            total_steps = epochs * steps_per_epoch
        elif total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0 <= pct_start <= 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.total_steps, self._anneal_cos = total_steps, anneal_strategy == "cos"
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self._phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                             "max_momentum"),
                            (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self._phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                            (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        groups = optimizer.param_groups
        max_lrs = list(max_lr) if isinstance(max_lr, list | tuple) else [max_lr] * len(groups)
        if len(max_lrs) != len(groups):
            raise ValueError(f"expected {len(groups)} values for max_lr, got {len(max_lrs)}")
        if last_epoch == -1:
            for lr, group in zip(max_lrs, groups, strict=True):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                for group in groups:
                    self._set_momentum(group, max_momentum)
                    group["max_momentum"], group["base_momentum"] = max_momentum, base_momentum
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict[str, Any], m: float) -> None:
        if self.use_beta1:
            group["betas"] = (m, *group["betas"][1:])
        else:
            group["momentum"] = m

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_cos:
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_a, lr_b, m_a, m_b) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[lr_a], group[lr_b], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m_a], group[m_b], pct))
                    break
                start = end
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: cosine annealing from initial_lr to eta_min over T_i epochs, restarting with T_i *= T_mult.

    Raises:
        ValueError: T_0 not a positive int, T_mult not an int >= 1, a negative epoch.
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch (or go to a fractional `epoch`, as PyTorch allows for per-batch stepping)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur, self.T_i = self.T_cur - self.T_i, self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i, self.T_cur = self.T_0, epoch
        self.last_epoch = math.floor(epoch)
        self._step_count += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr(), strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor for the first total_iters epochs, then initial_lr.

    Raises:
        ValueError: factor outside [0, 1].
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        f = self.factor if self.last_epoch < self.total_iters else 1.0
        return [base * f for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - min(epoch, total_iters) / total_iters) ** power."""

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        e = min(self.last_epoch, self.total_iters)
        return [base * (1.0 - e / self.total_iters) ** self.power for base in self.base_lrs]


SCHEDULERS = {"ReduceLROnPlateau": ReduceLROnPlateau, "OneCycleLR": OneCycleLR,
              "CosineAnnealingWarmRestarts": CosineAnnealingWarmRestarts, "ConstantLR": ConstantLR,
              "PolynomialLR": PolynomialLR}

__all__ = ["ConstantLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau"]
