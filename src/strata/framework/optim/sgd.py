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

from strata.framework import autograd, op_table, ops
from strata.framework.backends import optim_cpu, optim_cuda  # noqa: F401 - their fast paths register here
from strata.framework.optim.optimizer import Optimizer, ParamsT, check_grad
from strata.framework.tensor import Tensor


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as torch.optim.SGD.

    Args:
        params: tensors, (name, tensor) pairs, or dicts of per-group options.
        lr: learning rate. momentum: momentum factor. dampening: dampening of the momentum.
        weight_decay: L2 penalty added to the gradient. nesterov: Nesterov momentum.
        maximize: ascend instead of descend. foreach, differentiable, fused: accepted for compatibility;
            strata has one implementation (`sgd_step`, with each backend's fused kernel as its fast path: NumPy
            in place for float32/float64 on "cpu", one kernel per parameter on "cuda"); differentiable=True
            is not supported.

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
    """One parameter's step: the backend's fused kernel when it takes these tensors, else the composite."""
    lr, wd, momentum = float(group["lr"]), float(group["weight_decay"]), float(group["momentum"])
    dampening, nesterov, maximize = float(group["dampening"]), bool(group["nesterov"]), bool(group["maximize"])
    fused = op_table.fast_path("sgd_step", p.device.type)
    if fused is None or not fused(p, grad, buf, first, lr, wd, momentum, dampening, nesterov, maximize):
        sgd_step(p, grad, buf, first, lr, wd, momentum, dampening, nesterov, maximize)


def sgd_step(p: Tensor, grad: Tensor, buf: Tensor | None, first: bool, lr: float, wd: float, momentum: float,
             dampening: float, nesterov: bool, maximize: bool) -> None:
    """The SGD update, written once with tensor ops (PyTorch's single-tensor algorithm; in place, under
    no_grad): every device and dtype, each op rounding in the parameter's dtype."""
    d = -grad if maximize else grad
    if wd != 0:
        d = d.add(p, alpha=wd)
    if momentum != 0:
        assert buf is not None
        if first:
            buf.copy_(d)
        else:
            buf.mul_(momentum).add_(d, alpha=1 - dampening)
        d = d.add(buf, alpha=momentum) if nesterov else buf
    p.add_(d, alpha=-lr)
