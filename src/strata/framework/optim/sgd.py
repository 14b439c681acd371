"""`SGD`: stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay and
maximize, as torch.optim.SGD (its single-tensor algorithm).

    g = -grad if maximize else grad;  g += weight_decay * p
    buf = g (first step) or momentum * buf + (1 - dampening) * g;  g = g + momentum * buf if nesterov else buf
    p -= lr * g

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = strata.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     _ = opt.step()
    >>> [round(x, 4) for x in w.tolist()], sorted(opt.state[w])
    ([0.46, -0.46], ['momentum_buffer'])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.framework import autograd, ops
from strata.framework.kernels import optim as kernels
from strata.framework.optim.optimizer import Optimizer, ParamsT, check_grad
from strata.framework.tensor import Tensor


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as torch.optim.SGD.

    Args:
        params: tensors, (name, tensor) pairs, or dicts of per-group options.
        lr: learning rate. momentum: momentum factor. dampening: dampening of the momentum.
        weight_decay: L2 penalty added to the gradient. nesterov: Nesterov momentum.
        maximize: ascend instead of descend. foreach, differentiable, fused: accepted for compatibility;
            strata has one implementation (fused kernels on "cuda"); differentiable=True is not supported.

    Raises:
        ValueError: lr, momentum or weight_decay negative; nesterov without momentum or with dampening.
        NotImplementedError: a Tensor lr, or differentiable=True.
    """

    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float | Tensor = 0, nesterov: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) or isinstance(weight_decay, Tensor):
            raise NotImplementedError("[strata.optim.SGD] lr and weight_decay as Tensors are not supported; "
                                      "pass Python floats")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        if differentiable:
            raise NotImplementedError("[strata.optim.SGD] differentiable=True is not supported")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening, "weight_decay": weight_decay,
                    "nesterov": nesterov, "maximize": maximize, "foreach": foreach, "differentiable": differentiable,
                    "fused": fused}
        super().__init__(params, defaults)

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One SGD update of every parameter that has a gradient; returns closure() if given."""
        loss = self._closure(closure)
        for group, p in self._params_with_grad():
            buf, first = None, False
            if group["momentum"] != 0:  # (state stays empty without momentum, as in PyTorch)
                state = self.state[p]
                buf = state.get("momentum_buffer")
                first = buf is None
                if first:
                    buf = state["momentum_buffer"] = ops.empty(p.shape, p.dtype, p.device)
            _sgd_update(p, check_grad(p), buf, group, first)
        return loss


def _sgd_update(p: Tensor, grad: Tensor, buf: Tensor | None, group: dict[str, Any], first: bool) -> None:
    lr, wd, momentum = float(group["lr"]), float(group["weight_decay"]), float(group["momentum"])
    dampening, nesterov, maximize = float(group["dampening"]), bool(group["nesterov"]), bool(group["maximize"])
    if p.device.type == "cpu" and p.dtype.name in ("float32", "float64"):
        _sgd_update_inplace(p._host(), grad._host(), buf._host() if buf is not None else None,
                            lr, wd, momentum, dampening, nesterov, maximize, first)
        return
    if p.device.type == "cpu":
        acc: Any = np.float64 if p.dtype.name == "float64" else np.float32
        x: Any = p._host().astype(acc)
        d: Any = grad._host().astype(acc)
        if maximize:
            d = -d
        if wd != 0:
            d = d + acc(wd) * x
        if momentum != 0:
            assert buf is not None
            bh = buf._host()
            b = d if first else bh.astype(acc) * acc(momentum) + acc(1 - dampening) * d
            bh[...] = b.astype(p.dtype.np)
            b = bh.astype(acc)
            d = d + acc(momentum) * b if nesterov else b
        p._host()[...] = (x + acc(-lr) * d).astype(p.dtype.np)
        return
    target, g = _contiguous(p), _contiguous(grad, p.dtype)
    kernels.sgd(p.dtype.name, p.numel(), ops._ptr(target), ops._ptr(g), ops._ptr(buf) if buf is not None else 0,
                lr=lr, weight_decay=wd, momentum=momentum, dampening=dampening, nesterov=nesterov,
                maximize=maximize, first=first)
    if target is not p:
        ops.copy_into(p, target)


def _sgd_update_inplace(x: np.ndarray, d: np.ndarray, b: np.ndarray | None, lr: float, wd: float, momentum: float,
                        dampening: float, nesterov: bool, maximize: bool, first: bool) -> None:
    """The float32/float64 host update in place, op by op in the parameter's dtype as PyTorch's
    foreach kernels round (the same values as the widening path above, without its copies)."""
    s = x.dtype.type
    if maximize:
        d = -d
    if wd != 0:
        d = d + s(wd) * x
    if momentum != 0:
        assert b is not None
        if first:
            b[...] = d
        else:
            b *= s(momentum)
            b += s(1 - dampening) * d if dampening else d  # (1 * d is d exactly: no temporary)
        d = d + s(momentum) * b if nesterov else b
    x += s(-lr) * d


def _contiguous(t: Tensor, dtype: Any = None) -> Tensor:
    """t itself when it is contiguous (and of `dtype`), else a row-major copy (written back by the caller)."""
    if t.is_contiguous() and (dtype is None or t.dtype is dtype):
        return t
    return ops._cast(t, dtype or t.dtype)
