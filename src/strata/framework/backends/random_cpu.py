"""The "cpu" backend's random kernels (the op table's `random_fill`, `random_check_p`, `multinomial_keys`,
`multinomial_replacement`): the Philox4x32-10 words computed with NumPy and mapped to values as the "cuda"
kernels map them (philox.py), so one seed gives the same numbers on both devices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.framework import dtypes as dt
from strata.framework import op_table, ops, philox
from strata.framework.device import CPU
from strata.framework.tensor import Tensor


@op_table.register("cpu", "random_fill")
def random_fill(t: Tensor, kind: str, seed: int, offset: int, nwords: int, a: Any, b: Any, p: Tensor | None,
                wide: bool) -> None:
    """Write `kind` values from words offset.. of the stream keyed by `seed` into t, row-major element order."""
    del wide  # (the word count already says it)
    w = philox.philox_words(seed, offset, nwords)
    if kind == "bernoulli" and p is not None:
        a = np.broadcast_to(ops._opmath(p._host()).astype(np.float32), tuple(t.shape)).reshape(-1)
    t._host()[...] = philox.values(kind, t.dtype, w, t.numel(), a, b).reshape(tuple(t.shape))


@op_table.register("cpu", "random_check_p")
def random_check_p(p: Tensor) -> None:
    """bernoulli_'s check of a probability tensor on the host: every element in [0, 1]."""
    v = ops._opmath(p._host())
    if v.size and not bool(((v >= 0) & (v <= 1)).all()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
                           "be improved?  If so, please report an enhancement request to PyTorch.)")


def _row_status(row: np.ndarray) -> int:
    """multinomial's code for one row of weights (0 valid, 1 negative/NaN, 2 inf, 3 zero sum)."""
    bad = np.flatnonzero(~((row >= 0) & (row <= np.finfo(np.float64).max)))
    if bad.size:
        return 1 if not row[bad[0]] >= 0 else 2
    return 0 if (row > 0).any() else 3


@op_table.register("cpu", "multinomial_keys")
def multinomial_keys(p: Tensor, seed: int, offset: int, nwords: int) -> tuple[Tensor, list[int]]:
    """(p / E per element, E exponential draws; each row's status code) for sampling without replacement."""
    rows, n = (p.shape[0] if p.dim() == 2 else 1), p.shape[-1]
    v = ops._opmath(p._host()).reshape(rows, n)
    status = [_row_status(r) for r in v]
    e = philox.values("exponential", p.dtype, philox.philox_words(seed, offset, nwords), rows * n, 1.0, None)
    with np.errstate(all="ignore"):
        q = ops.from_host((ops._opmath(p._host()) / ops._opmath(e.reshape(p.shape))).astype(p.dtype.np), p.dtype, CPU)
    return q, status


@op_table.register("cpu", "multinomial_replacement")
def multinomial_replacement(p: Tensor, k: int, seed: int, offset: int, out_shape: tuple[int, ...]) -> Tensor:
    """k draws per row with replacement by inverting the row's CDF, after PyTorch's CPU checks (element by
    element, then the row's sum)."""
    v = ops._opmath(p._host()).reshape(-1, p.shape[-1])
    for row in v:
        code = _row_status(row)
        if code in (1, 2):
            which = "< 0" if code == 1 else "= infinity or NaN"
            raise RuntimeError(f"invalid multinomial distribution (encountering probability entry {which})")
        if code == 3:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rows, _ = v.shape
    u = philox.draws(philox.philox_words(seed, offset, 2 * rows * k), True).reshape(rows, k)
    cdf = np.cumsum(v.astype(np.float64), axis=1)
    out = np.empty((rows, k), np.int64)
    for r in range(rows):
        last = int(np.flatnonzero(v[r] > 0)[-1])
        idx = np.searchsorted(cdf[r], u[r] * cdf[r, -1], side="right")
        out[r] = np.minimum(idx, last)
    return ops.from_host(out.reshape(out_shape), dt.int64, CPU)
