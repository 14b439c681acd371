"""`LBFGS`, as torch.optim.LBFGS without a line search (PyTorch's default, `line_search_fn=None`): each
`step(closure)` runs up to `max_iter` iterations of limited-memory BFGS on the parameters flattened into
one vector, with the two-loop recursion over the last `history_size` curvature pairs, the first step
scaled by min(1, 1 / |g|_1) * lr, and PyTorch's stopping rules (tolerance_grad, tolerance_change,
max_eval). Vectors are framework tensors, so it runs on "cpu" and "cuda"; scalars (dot products) are read
back to the host, as PyTorch's comparisons on them do.

Example:
    >>> import strata
    >>> w = strata.tensor([3.0, -1.0], requires_grad=True)
    >>> opt = LBFGS([w], lr=1.0)
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> [round(v, 4) for v in w.tolist()]
    [1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.framework import autograd, joining
from strata.framework.creation import zeros
from strata.framework.optim.optimizer import Optimizer, ParamsT
from strata.framework.tensor import Tensor


def _dot(a: Tensor, b: Tensor) -> float:
    # rounded to the vectors' precision: PyTorch keeps these scalars as 0-dim tensors of the parameters' dtype
    return _round((a * b).sum().item(), a)


def _round(v: float, like: Tensor) -> float:
    return float(np.float32(v)) if like.dtype.name == "float32" else float(v)


class LBFGS(Optimizer):
    """L-BFGS. Args as PyTorch's: lr=1, max_iter=20, max_eval=max_iter * 5 // 4, tolerance_grad=1e-7,
    tolerance_change=1e-9, history_size=100, line_search_fn=None. One parameter group only.

    Raises:
        ValueError: more than one parameter group (PyTorch's restriction).
        NotImplementedError: line_search_fn="strong_wolfe", or a Tensor lr.
        RuntimeError: step() without a closure.
    """

    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if isinstance(lr, Tensor):
            raise NotImplementedError("[strata.optim.LBFGS] lr as a Tensor is not supported")
        if not lr >= 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn is not None:
            raise NotImplementedError(f"LBFGS(line_search_fn={line_search_fn!r}) is not implemented in strata; use "
                                      "line_search_fn=None")
        super().__init__(params, {"lr": lr, "max_iter": max_iter,
                                  "max_eval": max_eval if max_eval is not None else max_iter * 5 // 4,
                                  "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                                  "history_size": history_size, "line_search_fn": line_search_fn})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def _flat_grad(self) -> Tensor:
        return joining.cat([p.grad.reshape(-1) if p.grad is not None else
                            zeros(p.numel(), dtype=p.dtype, device=p.device) for p in self._params], 0)

    def _add_grad(self, step: float, d: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(d[offset:offset + n].reshape(tuple(p.shape)) * step)
            offset += n

    @autograd.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # noqa: C901 - PyTorch's loop, kept whole
        """Up to max_iter L-BFGS iterations, re-evaluating the loss with `closure` (required); returns the
        loss of the first evaluation."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure that re-evaluates the model and returns the loss")
        group = self.param_groups[0]
        lr, max_iter, max_eval = float(group["lr"]), int(group["max_iter"]), int(group["max_eval"])
        tol_grad, tol_change = float(group["tolerance_grad"]), float(group["tolerance_change"])
        history = int(group["history_size"])
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with autograd.enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(flat_grad.abs().max().item()) <= tol_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1.0
            else:
                assert d is not None and t is not None and prev_flat_grad is not None
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:
                    if len(old_dirs) == history:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(_round(1.0 / ys, y))
                    h_diag = _round(ys / _dot(y, y), y)
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _round(_dot(old_stps[i], q) * ro[i], q)
                    q = q - old_dirs[i] * al[i]
                r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = _round(_dot(old_dirs[i], r) * ro[i], r)
                    r = r + old_stps[i] * (al[i] - be_i)
                d = r
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            if state["n_iter"] == 1:
                t = _round(min(1.0, _round(1.0 / flat_grad.abs().sum().item(), flat_grad)) * lr, flat_grad)
            else:
                t = lr
            gtd = _dot(flat_grad, d)
            if gtd > -tol_change:
                break
            ls_evals = 0
            self._add_grad(t, d)
            if n_iter != max_iter:
                with autograd.enable_grad():
                    loss = float(closure())
                flat_grad = self._flat_grad()
                ls_evals = 1
            opt_cond = float(flat_grad.abs().max().item()) <= tol_grad
            current_evals += ls_evals
            state["func_evals"] += ls_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if float((d * t).abs().max().item()) <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss


__all__ = ["LBFGS"]
