"""Flatten parameters into one vector and back, as torch.nn.utils.convert_parameters.

Example:
    >>> import strata
    >>> from strata.framework.nn.utils import parameters_to_vector
    >>> parameters_to_vector([strata.ones(2, 2), strata.zeros(3)]).tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Iterable

from strata.framework.joining import cat
from strata.framework.tensor import Tensor


def _same_device(params: list[Tensor]) -> None:
    for p in params[1:]:
        if p.device != params[0].device:
            raise TypeError("Found two parameters on different devices, this is currently not supported.")


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All parameters flattened and concatenated into one 1-D tensor (differentiable)."""
    params = list(parameters)
    _same_device(params)
    return cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Make each parameter's data the next slice of `vec` (reshaped to the parameter's shape).

    Raises:
        TypeError: `vec` is not a tensor.
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    _same_device(params)
    at = 0
    for p in params:
        n = p.numel()
        p.data = vec[at:at + n].view_as(p).data
        at += n
