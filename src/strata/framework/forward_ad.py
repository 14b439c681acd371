"""Forward-mode automatic differentiation, as torch.autograd.forward_ad: dual tensors carry a tangent
(a direction) beside their value, and `unpack_dual` of a result gives its Jacobian-vector product.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = f(x)
        value, jvp = forward_ad.unpack_dual(y)     # jvp = J_f(primal) @ tangent

PyTorch propagates tangents op by op with forward derivative formulas. strata computes the same product
from its reverse-mode graph when a result is unpacked, with the double-vjp construction: for a vector u,
v(u) = J^T u is linear in u, so the gradient of <v(u), t> with respect to u is J t. `make_dual` puts the
primal on the graph (a leaf that requires grad, or a view of it when the primal already requires grad);
`unpack_dual` runs two backward passes (the first with create_graph). The results are the same numbers;
the cost is two reverse passes per unpack, and every op on the way needs a derivative that can itself be
differentiated (all of the op table's can). One dual level at a time, as in PyTorch.

Example:
    >>> import strata
    >>> import strata.framework.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(strata.tensor([1.0, 2.0]), strata.tensor([1.0, 0.0]))
    ...     fwAD.unpack_dual(x * x).tangent
    tensor([2., 0.])
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

from strata.framework import autograd
from strata.framework.creation import zeros_like
from strata.framework.tensor import Tensor


class UnpackedDualTensor(NamedTuple):
    """What `unpack_dual` returns: the value and its tangent (None: the tensor depends on no dual)."""

    primal: Tensor
    tangent: Tensor | None


class _Level(threading.local):
    def __init__(self) -> None:
        self.level = -1  # -1: no dual level is entered
        self.duals: list[tuple[Tensor, Tensor]] = []  # (the dual tensor on the graph, its tangent)
        self.keep_graph = False  # a primal required grad itself: unpacked values keep their reverse graph


_STATE = _Level()


def enter_dual_level() -> int:
    """Enter a dual level (the one PyTorch supports at a time) and return its number (0).

    Raises:
        RuntimeError: a level is already entered (nested forward AD).
    """
    if _STATE.level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _STATE.level, _STATE.duals, _STATE.keep_graph = 0, [], False
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Leave the dual level: its dual tensors become plain tensors (their tangents are dropped).

    Raises:
        RuntimeError: `level` is not the current level.
    """
    if level is not None and level != _STATE.level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. This is "
                           "not supported.")
    _STATE.level, _STATE.duals = -1, []


@contextmanager
def dual_level() -> Iterator[int]:
    """`with dual_level():` the scope in which dual tensors live."""
    level = enter_dual_level()
    try:
        yield level
    finally:
        exit_dual_level(level=level)


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A dual tensor: `tensor`'s value with `tangent` as its forward gradient.

    Raises:
        RuntimeError: no dual level is entered; the tangent's shape, dtype or device differs from the tensor's;
            the tensor is not floating point.
    """
    if _STATE.level < 0 or (level is not None and level != _STATE.level):
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual(): expected Tensors for both the primal and the tangent, got "
                        f"{type(tensor).__name__} and {type(tangent).__name__}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if tangent.dtype != tensor.dtype:
        raise RuntimeError(f"Expected tangent to have the same dtype as the primal ({tensor.dtype}), got "
                           f"{tangent.dtype}")
    if tangent.device != tensor.device:
        raise RuntimeError(f"Expected tangent to be on the same device as the primal ({tensor.device}), got "
                           f"{tangent.device}")
    dual = tensor.view_as(tensor) if tensor.requires_grad else tensor.detach().requires_grad_(True)
    _STATE.keep_graph |= tensor.requires_grad
    _STATE.duals.append((dual, tangent.detach()))
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(value, tangent) of a tensor: the tangent is the Jacobian-vector product of the computation from the
    level's dual tensors to `tensor` with their tangents, or None when it depends on none of them."""
    duals = list(_STATE.duals) if _STATE.level >= 0 else []
    if not isinstance(tensor, Tensor) or not duals or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    u = zeros_like(tensor).requires_grad_(True)
    vjps = autograd.grad(tensor, [d for d, _ in duals], u, create_graph=True, allow_unused=True)
    used = [(v, t) for v, (_, t) in zip(vjps, duals, strict=True) if v is not None and v.requires_grad]
    if not used:
        return UnpackedDualTensor(_value(tensor), None)
    (jvp,) = autograd.grad([v for v, _ in used], [u], [t for _, t in used], allow_unused=True)
    return UnpackedDualTensor(_value(tensor), zeros_like(tensor) if jvp is None else jvp.detach())


def _value(tensor: Tensor) -> Tensor:
    """The primal: the tensor without the graph make_dual added (kept when a primal required grad itself)."""
    return tensor if _STATE.keep_graph else tensor.detach()


__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual"]
