"""The weight initialisers beside init.py: `orthogonal_` (recurrent and GAN weights) and `eye_`.

`orthogonal_` follows PyTorch's construction: a standard-normal matrix (rows = dim 0, cols = the other
dims flattened) from the framework's generator on the tensor's device, its QR factorisation, Q with
each column's sign set by R's diagonal, scaled by `gain`. The QR runs on the host (NumPy's LAPACK):
strata has no device QR yet (cuSOLVER's geqrf role), and initialisation is a one-time cost.

Example:
    >>> import strata
    >>> from strata.framework.nn.init_extra import orthogonal_
    >>> w = orthogonal_(strata.empty(4, 6))
    >>> bool(((w @ w.T) - strata.eye(4)).abs().max() < 1e-5)
    True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.framework import autograd, random
from strata.framework.creation import eye, tensor
from strata.framework.tensor import Tensor


def orthogonal_(tensor_: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """Fill a tensor of 2 or more dims with a (semi-)orthogonal matrix times gain.

    Raises:
        ValueError: fewer than 2 dims.
    """
    if tensor_.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor_.numel() == 0:
        return tensor_
    rows = tensor_.shape[0]
    cols = tensor_.numel() // rows
    kw = {"generator": generator} if generator is not None else {}
    flat = random.randn(rows, cols, device=tensor_.device, **kw).cpu().numpy().astype(np.float64)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with autograd.no_grad():
        tensor_.copy_(tensor(q.reshape(tuple(tensor_.shape)) * gain, dtype=tensor_.dtype, device=tensor_.device))
    return tensor_


def eye_(tensor_: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal).

    Raises:
        ValueError: not 2-D.
    """
    if tensor_.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with autograd.no_grad():
        tensor_.copy_(eye(tensor_.shape[0], tensor_.shape[1], dtype=tensor_.dtype, device=tensor_.device))
    return tensor_


INIT = {"orthogonal_": orthogonal_, "eye_": eye_, "orthogonal": orthogonal_}

__all__ = ["eye_", "orthogonal_"]
