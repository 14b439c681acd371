"""The "cuda" backend's random kernels (the op table's `random_fill`, `random_check_p`, `multinomial_keys`,
`multinomial_replacement`): the Philox4x32-10 words from strata.libs.rand on the GPU (cuRAND's role), turned
into values by the framework's kernels (kernels/random.py) and written straight into the output.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.cuda import Device
from strata.cuda.memory import DeviceArray
from strata.framework import dtypes as dt
from strata.framework import op_table, ops
from strata.framework.device import on
from strata.framework.kernels import random as kernels
from strata.framework.tensor import Tensor
from strata.libs import rand as librand


def _words(dev: Any, seed: int, offset: int, nwords: int) -> Tensor:
    """Words offset.. of the Philox stream keyed by `seed`, generated on the device by strata.libs.rand."""
    words = ops.empty((nwords,), dt.int32, dev)
    arr = DeviceArray.view(ops._ptr(words), (nwords,), np.uint32, Device(dev.index or 0), owner=words._storage)
    librand.generate(librand.create_generator(seed, offset), arr)
    return words


@op_table.register("cuda", "random_fill")
def random_fill(t: Tensor, kind: str, seed: int, offset: int, nwords: int, a: Any, b: Any, p: Tensor | None,
                wide: bool) -> None:
    """Write `kind` values into t (any strides) with one kernel over the words."""
    if t.numel() == 0:
        return
    dev = t.device
    with on(dev):
        wp = ops._ptr(_words(dev, seed, offset, nwords))
        shape, out, st, name = tuple(t.shape), ops._ptr(t), t.stride(), t.dtype.name
        if kind == "uniform":
            kernels.uniform(name, shape, out, st, wp, float(a), float(b))
        elif kind == "normal":
            kernels.normal(name, shape, out, st, wp, float(a), float(b))
        elif kind == "exponential":
            kernels.exponential(name, shape, out, st, wp, float(a))
        elif kind == "randint":
            kernels.randint(name, shape, out, st, wp, int(a), int(b), wide)
        elif p is not None:
            pf = p if p.dtype is dt.float32 and p.device == dev else ops.to_copy(p.detach(), dev, dt.float32)
            kernels.bernoulli(name, shape, out, st, wp, ops._ptr(pf), ops._bstrides(pf, shape), 0.0)
        else:
            kernels.bernoulli(name, shape, out, st, wp, 0, [0] * len(shape), float(a))


@op_table.register("cuda", "random_check_p")
def random_check_p(p: Tensor) -> None:
    """No check: it would read the device (PyTorch's CUDA bernoulli_ does not check p either)."""


@op_table.register("cuda", "multinomial_keys")
def multinomial_keys(p: Tensor, seed: int, offset: int, nwords: int) -> tuple[Tensor, list[int]]:
    """(p / E per element; each row's status code): the check kernel, then the keys kernel, then the one read
    of the device (the status codes), as PyTorch's."""
    rows, n = (p.shape[0] if p.dim() == 2 else 1), p.shape[-1]
    rs, cs = (p.stride(0) if p.dim() == 2 else 0), p.stride(-1)
    st = ops.empty((rows,), dt.int32, p.device)
    q = ops.empty(p.shape, p.dtype, p.device)
    with on(p.device):
        kernels.multinomial_check(p.dtype.name, rows, n, ops._ptr(st), ops._ptr(p), rs, cs)
        words = _words(p.device, seed, offset, nwords)
        kernels.multinomial_keys(p.dtype.name, rows, n, ops._ptr(q), ops._ptr(p), rs, cs, ops._ptr(words))
    return q, st.tolist()


@op_table.register("cuda", "multinomial_replacement")
def multinomial_replacement(p: Tensor, k: int, seed: int, offset: int, out_shape: tuple[int, ...]) -> Tensor:
    """k draws per row with replacement: one kernel inverts each row's CDF (no host checks, as PyTorch's CUDA)."""
    rows, n = (p.shape[0] if p.dim() == 2 else 1), p.shape[-1]
    out = ops.empty(out_shape, dt.int64, p.device)
    cdf = ops.empty((rows, n), dt.float64, p.device)
    with on(p.device):
        words = _words(p.device, seed, offset, 2 * rows * k)
        rs = p.stride(0) if p.dim() == 2 else 0
        kernels.multinomial_replacement(p.dtype.name, rows, n, ops._ptr(out), ops._ptr(p), rs, p.stride(-1), k,
                                        ops._ptr(cdf), ops._ptr(words))
    return out
