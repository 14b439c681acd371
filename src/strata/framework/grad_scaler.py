"""`GradScaler` (torch.amp.GradScaler / torch.cuda.amp.GradScaler): dynamic loss scaling for mixed
precision. `scale(loss)` multiplies by the current scale; `step(optimizer)` unscales the gradients
(`unscale_`), skips the step if any is inf or NaN; `update()` halves the scale after a skipped step and
doubles it after `growth_interval` clean ones, with PyTorch's defaults and state dict.

The scale and growth tracker live on the host (PyTorch keeps them in device tensors so a step needs no
synchronisation; strata checks the gradients with one reduction per parameter and reads the verdict).

Example:
    >>> import strata
    >>> from strata.framework.grad_scaler import GradScaler
    >>> w = strata.tensor([1.0], requires_grad=True)
    >>> opt = strata.optim.SGD([w], lr=0.1)
    >>> scaler = GradScaler("cpu", init_scale=1024.0)
    >>> scaler.scale((w * 3).sum()).backward()
    >>> _ = scaler.step(opt); scaler.update()
    >>> round(w.item(), 4), scaler.get_scale()
    (0.7, 1024.0)
"""

from __future__ import annotations

import warnings
from typing import Any

from strata.framework import autograd, ops
from strata.framework.tensor import Tensor

_READY, _UNSCALED, _STEPPED = 0, 1, 2


class GradScaler:
    """Dynamic loss scaling (see the module docstring).

    Raises:
        RuntimeError: `unscale_` twice for one optimizer before `update`, or `step` after `step`.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._device = str(device)
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer: dict[int, dict[str, Any]] = {}

    # ---- scaling
    def scale(self, outputs: Any) -> Any:
        """`outputs` (a tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer: Any) -> dict[str, Any]:
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _READY, "found_inf": False})

    def unscale_(self, optimizer: Any) -> None:
        """Divide `optimizer`'s gradients by the scale in place and record whether any is inf/NaN."""
        if not self._enabled:
            return
        st = self._state(optimizer)
        if st["stage"] == _UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if st["stage"] == _STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / self._scale
        found = False
        with autograd.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    if not found and not bool(ops.isfinite(p.grad).all().item()):
                        found = True
                    p.grad.mul_(inv)
        st["found_inf"], st["stage"] = found, _UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless done), then `optimizer.step()` unless a gradient was inf/NaN (None then)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        st = self._state(optimizer)
        if st["stage"] == _STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if st["stage"] == _READY:
            self.unscale_(optimizer)
        st["stage"] = _STEPPED
        return None if st["found_inf"] else optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Adjust the scale after this iteration's steps (or set it to `new_scale`)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            if not self._per_optimizer:
                warnings.warn("update() called without any step() / unscale_() since the last update()",
                              UserWarning, stacklevel=2)
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
        self._per_optimizer.clear()

    # ---- queries and state
    def get_scale(self) -> float:
        """The current scale (1.0 when disabled)."""
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        """PyTorch's keys: scale, growth_factor, backoff_factor, growth_interval, _growth_tracker."""
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


__all__ = ["GradScaler"]
