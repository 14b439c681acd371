"""`Parameter` and `Buffer`: tensors that a `Module` registers when assigned as attributes.

A Parameter is a Tensor subclass sharing its data's storage, a leaf that requires grad by default;
ops on it give plain tensors. A Buffer marks a tensor to be registered as a module buffer.

Example:
    >>> import strata
    >>> from strata.framework.nn import Parameter
    >>> p = Parameter(strata.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    >>> isinstance(p, strata.Tensor), isinstance(p * 2, Parameter)
    (True, False)
"""

from __future__ import annotations

from typing import Any

from strata.framework import autograd
from strata.framework import ops as _ops
from strata.framework.creation import tensor as _tensor
from strata.framework.device import CPU
from strata.framework.dtypes import get_default_dtype
from strata.framework.tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    Args:
        data: the tensor to wrap (shared, not copied); an empty float tensor if None.
        requires_grad: whether it requires grad (default True).

    Raises:
        RuntimeError: requires_grad on a tensor that is not floating point.
    """

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = _ops.empty((0,), get_default_dtype(), CPU)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter: expected a Tensor as data, got {type(data).__name__}")
        super().__init__(data._storage, data.shape, data.stride(), data.storage_offset(), data.dtype)
        if requires_grad and not data.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = bool(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        with autograd.no_grad():
            out = Parameter(self.detach().clone(), self.requires_grad)
        if self.grad is not None:
            out.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.detach().cpu()._to_numpy(), str(self.device), self.requires_grad))


def _rebuild_parameter(values: Any, device: str, requires_grad: bool) -> Parameter:
    return Parameter(_tensor(values, device=device), requires_grad)


class Buffer(Tensor):
    """A tensor marked to become a module buffer when assigned as an attribute (`persistent` decides
    whether it goes into the state dict). Assigning it registers its data, as a plain Tensor."""

    def __init__(self, data: Tensor, *, persistent: bool = True) -> None:
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: expected a Tensor as data, got {type(data).__name__}")
        super().__init__(data._storage, data.shape, data.stride(), data.storage_offset(), data.dtype,
                         data.requires_grad)
        self.persistent = persistent
