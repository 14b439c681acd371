"""Out-of-range indices on "cuda" are device-side assertions, as in PyTorch on a GPU.

For each indexing op (t[idx], t[idx] = v, index_put_, gather, scatter, scatter_add, index_select,
index_add, take_along_dim, nll_loss, cross_entropy with weights, one_hot) with a bad index that lives on
the GPU: the kernel's own check fails a CUDA `assert`, the context faults (cudaErrorAssert, sticky), and
the error surfaces at the next synchronizing call as a RuntimeError with PyTorch's headline "CUDA error:
device-side assert triggered" and the kernel's assertion text. The oracle that the index is bad is
PyTorch CPU raising for the same call (and strata on "cpu" raising the same type). In-range indices,
negative ones included where PyTorch wraps them, give PyTorch CPU's results; the check costs a few
instructions per index (counted by the virtual GPU). The suite's conftest resets faulted devices.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import strata
from strata.cuda import DeviceFault
from strata.framework.kernels import indexing as ik
from strata.framework.nn import functional as SF
from strata.runtime import contexts

from .conftest import assert_same

ASSERTED = "CUDA error: device-side assert triggered"


class _Case:
    """`run(L, F, ix)`: the op in library L (strata or torch) with functional F and index maker ix;
    `oracle` the torch call that must raise (default: run itself)."""

    def __init__(self, run: Callable[[Any, Any, Callable[..., Any]], Any], text: str,
                 oracle: Callable[[Any, Any, Callable[..., Any]], Any] | None = None) -> None:
        self.run, self.text, self.oracle = run, text, oracle or run


def _x(L: Any, dev: str | None) -> Any:
    a = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 2
    return L.tensor(a) if dev is None else L.tensor(a, device=dev)


def _setitem(x: Any, idx: Any, v: Any) -> Any:
    x[idx] = v
    return x


IN_BOUNDS = r'-size <= index && index < size && "index out of bounds"'
GATHER = r'idx >= 0 && idx < dim_size && "index out of bounds"'
BAD: dict[str, _Case] = {
    "getitem": _Case(lambda L, F, ix: ix(x=True)[ix([0, 3])], IN_BOUNDS),
    "getitem_negative": _Case(lambda L, F, ix: ix(x=True)[ix([-1, -4])], IN_BOUNDS),
    "getitem_two_dims": _Case(lambda L, F, ix: ix(x=True)[ix([0, 2]), ix([1, 4])], IN_BOUNDS),
    "setitem": _Case(lambda L, F, ix: _setitem(ix(x=True), ix([5]), 1.0), IN_BOUNDS),
    "index_put_accumulate": _Case(
        lambda L, F, ix: ix(x=True).index_put_((ix([-4]),), ix(ones=(4,)), accumulate=True), IN_BOUNDS),
    "gather": _Case(lambda L, F, ix: ix(x=True).gather(1, ix([[4], [0], [1]])), GATHER),
    "gather_negative": _Case(lambda L, F, ix: ix(x=True).gather(1, ix([[0], [-1], [1]])), GATHER),
    "scatter": _Case(lambda L, F, ix: ix(x=True).scatter(0, ix([[3, 0, 0, 0]]), ix(ones=(1, 4))), GATHER),
    "scatter_value": _Case(lambda L, F, ix: ix(x=True).scatter(1, ix([[4]]), 2.0), GATHER),
    "scatter_add": _Case(lambda L, F, ix: ix(x=True).scatter_add(0, ix([[0, -1]]), ix(ones=(1, 2))), GATHER),
    "index_select": _Case(lambda L, F, ix: ix(x=True).index_select(0, ix([3])), "srcIndex < srcSelectDimSize"),
    "index_select_negative": _Case(lambda L, F, ix: ix(x=True).index_select(0, ix([-1])),
                                   "srcIndex < srcSelectDimSize"),
    "index_add": _Case(lambda L, F, ix: ix(x=True).index_add(0, ix([3]), ix(ones=(1, 4))), "dstIndex < dstAddDimSize"),
    # take_along_dim is gather with broadcast indices (torch._refs); PyTorch 2.13's CPU kernel takes
    # indices >= size modulo size instead of raising, so the oracle is the gather it stands for
    "take_along_dim": _Case(lambda L, F, ix: L.take_along_dim(ix(x=True), ix([[5], [0], [1]]), 1), GATHER,
                            lambda L, F, ix: ix(x=True).gather(1, ix([[5], [0], [1]]))),
    "nll_loss": _Case(lambda L, F, ix: F.nll_loss(ix(x=True), ix([1, 4, -100])), "t >= 0 && t < n_classes"),
    "nll_loss_negative": _Case(lambda L, F, ix: F.nll_loss(ix(x=True), ix([-1, 0, 1]), reduction="none"),
                               "t >= 0 && t < n_classes"),
    "cross_entropy_weighted": _Case(lambda L, F, ix: F.cross_entropy(ix(x=True), ix([0, 4, 1]), weight=ix(ones=(4,))),
                                    "t >= 0 && t < n_classes"),
    "one_hot": _Case(lambda L, F, ix: F.one_hot(ix([1, 4]), 3), GATHER),
    "one_hot_negative": _Case(lambda L, F, ix: F.one_hot(ix([-1, 2]), 3), GATHER),
}


def _maker(L: Any, dev: str | None) -> Callable[..., Any]:
    """ix(data): an int64 index tensor on dev; ix(x=True): the data tensor; ix(ones=shape): ones."""
    def ix(data: Any = None, *, x: bool = False, ones: tuple[int, ...] | None = None) -> Any:
        if x:
            return _x(L, dev)
        if ones is not None:
            return L.ones(*ones) if dev is None else L.ones(*ones, device=dev)
        return L.tensor(data, dtype=L.int64) if dev is None else L.tensor(data, dtype=L.int64, device=dev)
    return ix


def _run(case: _Case, dev: str) -> Any:
    out = case.run(strata, SF, _maker(strata, dev))
    return out.tolist() if isinstance(out, strata.Tensor) else out


@pytest.mark.parametrize("name", list(BAD))
def test_bad_index_is_a_device_side_assert_on_cuda(name: str) -> None:
    case = BAD[name]
    with pytest.raises(Exception) as ref:  # the oracle: the index is out of range for this op
        case.oracle(torch, TF, _maker(torch, None))
    with pytest.raises(type(ref.value)):  # strata checks host-side on "cpu" and raises PyTorch's type
        _run(case, "cpu")
    with pytest.raises(RuntimeError, match=ASSERTED) as got:
        _run(case, "cuda")
        strata.cuda.synchronize()
    err = got.value
    assert isinstance(err, DeviceFault) and err.name == "cudaErrorAssert" and err.code == 710
    assert case.text in err.report["assertion"] and f"Assertion `{err.report['assertion']}` failed" in str(err)


def test_the_assert_surfaces_at_the_next_sync_and_is_sticky_until_reset() -> None:
    x = _x(strata, "cuda")
    bad = strata.tensor([[4], [0], [1]], device="cuda")
    y = x.gather(1, bad)  # queued: the kernel asserts on the device, the host goes on
    with pytest.raises(RuntimeError, match=ASSERTED):
        y.tolist()
    with pytest.raises(RuntimeError, match=ASSERTED):  # sticky: every later call reports it
        strata.cuda.synchronize()
    for ctx in contexts():
        if ctx.error is not None:
            ctx.reset()
    x = _x(strata, "cuda")
    assert x.gather(1, strata.tensor([[3], [0], [1]], device="cuda")).flatten().tolist() == [-0.5, 0.0, 2.5]


def test_launch_blocking_raises_at_the_op(monkeypatch: pytest.MonkeyPatch) -> None:
    x = _x(strata, "cuda")
    idx = strata.tensor([3], device="cuda")
    monkeypatch.setenv("STRATA_LAUNCH_BLOCKING", "1")
    with pytest.raises(RuntimeError, match="srcIndex < srcSelectDimSize"):
        x.index_select(0, idx)  # PyTorch's CUDA_LAUNCH_BLOCKING=1: the error at the call that launched


GOOD: dict[str, Callable[[Any, Any, Callable[..., Any]], Any]] = {
    "getitem_negative": lambda L, F, ix: ix(x=True)[ix([-1, 0, -3, 2])],
    "getitem_two_dims": lambda L, F, ix: ix(x=True)[ix([[-1], [0]]), ix([-4, 3, -1])],
    "setitem_negative": lambda L, F, ix: _setitem(ix(x=True), (ix([-1, 0]), ix([-4, 3])), 9.0),
    "index_put_accumulate": lambda L, F, ix: ix(x=True).index_put_((ix([-1, 2, 0, -3]),), ix(ones=(4, 4)),
                                                                   accumulate=True),
    "gather": lambda L, F, ix: ix(x=True).gather(1, ix([[3, 0], [0, 0], [1, 2]])),
    "scatter": lambda L, F, ix: ix(x=True).scatter(0, ix([[2, 0, 1, 0]]), ix(ones=(1, 4))),
    "scatter_add": lambda L, F, ix: ix(x=True).scatter_add(1, ix([[0, 0, 3], [1, 1, 1], [2, 3, 3]]),
                                                           ix(ones=(3, 3))),
    "index_select": lambda L, F, ix: ix(x=True).index_select(1, ix([3, 0, 3])),
    "index_add": lambda L, F, ix: ix(x=True).index_add(0, ix([2, 2, 0]), ix(ones=(3, 4))),
    "take_along_dim": lambda L, F, ix: L.take_along_dim(ix(x=True), ix([[3], [0], [1]]), 1),
    "nll_loss": lambda L, F, ix: F.nll_loss(ix(x=True), ix([1, 3, -100]), reduction="none"),
    "cross_entropy_weighted": lambda L, F, ix: F.cross_entropy(ix(x=True), ix([0, 3, -100]), weight=ix(ones=(4,))),
    "one_hot": lambda L, F, ix: F.one_hot(ix([[1, 0], [2, 2]]), 3),
    "one_hot_inferred": lambda L, F, ix: F.one_hot(ix([0, 4, 2])),
}


@pytest.mark.parametrize("name", list(GOOD))
def test_in_range_indices_match_torch_on_cuda(name: str) -> None:
    ours = GOOD[name](strata, SF, _maker(strata, "cuda"))
    ref = GOOD[name](torch, TF, _maker(torch, None))
    assert_same(ours, ref, device="cuda")


def test_the_check_costs_a_few_instructions_per_index() -> None:
    # the same advanced-index read with checked (user) and trusted (host-checked) indices: the checked
    # kernel does one range compare per index, so its instruction count grows by a small constant per thread
    rows, cols = 64, 32
    x = strata.randn(rows, cols, device="cuda")
    idx = strata.tensor(np.random.default_rng(0).integers(-rows, rows, (1, 48)), device="cuda")
    out = strata.empty(48, cols, device="cuda")
    counts = []
    for check in (0, 1):
        rep = ik.index_get("float32", 48, [cols], out.data_ptr(), [cols, 1], x.data_ptr(), [1], idx.data_ptr(),
                           [rows], [cols], check)
        assert rep is not None
        counts.append(rep.counters.total_thread_instructions)
        want = x.cpu().numpy()[np.asarray(idx.cpu().numpy()[0])]
        np.testing.assert_array_equal(out.cpu().numpy(), want)
    threads = 48 * cols
    extra = (counts[1] - counts[0]) / threads
    assert 0 < extra <= 4, (counts, extra)  # measured: 1 (the checked path before this change: 9)
    assert counts[1] <= 1.05 * counts[0], counts
