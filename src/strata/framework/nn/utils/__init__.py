"""strata.nn.utils, as torch.nn.utils: gradient clipping (`clip_grad_norm_`, `clip_grad_value_`,
`get_total_norm`, `clip_grads_with_norm_`) and flattening parameters into one vector
(`parameters_to_vector`, `vector_to_parameters`).

Example:
    >>> import strata
    >>> from strata.framework.nn.utils import clip_grad_norm_
    >>> p = strata.zeros(2, requires_grad=True)
    >>> p.grad = strata.tensor([3.0, 4.0])
    >>> clip_grad_norm_([p], max_norm=1.0).item(), [round(g, 4) for g in p.grad.tolist()]
    (5.0, [0.6, 0.8])
"""

from strata.framework.nn.utils.clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from strata.framework.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters"]
