"""The indexing and joining ops of the op table against PyTorch CPU, on "cpu" and on "cuda" (the
virtual GPU; tiny shapes): values, dtypes and shapes; first derivatives and second derivatives (the
table's derivatives are written with the indexing ops, so they differentiate again, as PyTorch's do);
the autograd node names; PyTorch's errors for bad input. And the table itself: every op of the family
declared once with kernels on both backends, the fronts calling them."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import strata
from strata.framework import indexing, joining, op_table

from .conftest import assert_same

# a case: (the op in library L with index maker T (int64 tensors on the device), on inputs xs; the
# shapes of the float inputs that require grad)
Case = tuple[Callable[..., Any], list[tuple[int, ...]]]


def _mask(L: Any, dev: str | None, rows: list[list[bool]]) -> Any:
    return L.tensor(rows) if dev is None else L.tensor(rows, device=dev)


CASES: dict[str, Case] = {
    "index_tensor": (lambda L, T, M, x: x[T([2, 0, 2])], [(3, 4)]),
    "index_two_dims": (lambda L, T, M, x: x[T([0, 2, 2]), T([3, 1, 3])], [(3, 4)]),
    # (a host list beside a device tensor, broadcast: on cuda the index buffer is assembled on the device)
    "index_host_and_device": (lambda L, T, M, x: x[[[0], [2]], T([3, -1, 0])], [(3, 4)]),
    "index_separated_dims": (lambda L, T, M, x: x[T([1, 0]), :, T([2, 2])], [(2, 3, 4)]),
    "index_mask": (lambda L, T, M, x: x[M([[True, False, True, False]] * 3)], [(3, 4)]),
    "index_mixed_slice_list": (lambda L, T, M, x: x[1:, [0, 3, 3]], [(3, 4)]),
    "index_put": (lambda L, T, M, x, v: x.index_put((T([0, 2]),), v), [(3, 4), (2, 4)]),
    "index_put_accumulate": (lambda L, T, M, x, v: x.index_put((T([1, 1, 0]), T([2, 2, 0])), v, accumulate=True),
                             [(3, 4), (3,)]),
    "index_select": (lambda L, T, M, x: x.index_select(1, T([3, 0, 3])), [(3, 4)]),
    "index_select_dim0": (lambda L, T, M, x: L.index_select(x, 0, T([2, 2, 1, 0])), [(3, 2)]),
    "index_add": (lambda L, T, M, x, s: x.index_add(0, T([2, 0, 2]), s), [(3, 4), (3, 4)]),
    "index_add_alpha": (lambda L, T, M, x, s: x.index_add(1, T([1, 1]), s, alpha=-2.5), [(3, 4), (3, 2)]),
    "index_copy": (lambda L, T, M, x, s: x.index_copy(0, T([2, 0]), s), [(3, 4), (2, 4)]),
    "index_copy_dim1": (lambda L, T, M, x, s: L.index_copy(x, 1, T([3, 1]), s), [(3, 4), (3, 2)]),
    "index_fill": (lambda L, T, M, x: x.index_fill(1, T([0, -1, 0]), -2.5), [(3, 4)]),
    "index_fill_tensor_value": (lambda L, T, M, x, v: L.index_fill(x, 0, T([1]), v), [(3, 4), ()]),
    "masked_scatter": (lambda L, T, M, x, s: x.masked_scatter(M([[True, False, True, True]] * 3), s), [(3, 4), (10,)]),
    "masked_scatter_broadcast_mask": (lambda L, T, M, x, s: L.masked_scatter(x, M([[False, True, True, False]]), s),
                                      [(3, 4), (2, 3, 2)]),
    "gather": (lambda L, T, M, x: x.gather(1, T([[3, 0], [1, 1], [2, 3]])), [(3, 4)]),
    "gather_dim0_small_index": (lambda L, T, M, x: L.gather(x, 0, T([[2, 0, 1]])), [(3, 4)]),
    "scatter": (lambda L, T, M, x, s: x.scatter(0, T([[2, 0, 1, 2]]), s), [(3, 4), (1, 4)]),
    "scatter_value": (lambda L, T, M, x: x.scatter(1, T([[0, 2], [3, 1], [1, 1]]), 7.5), [(3, 4)]),
    "scatter_add": (lambda L, T, M, x, s: x.scatter_add(0, T([[0, 0, 2, 2], [0, 1, 2, 0]]), s), [(3, 4), (2, 4)]),
    "masked_fill": (lambda L, T, M, x: x.masked_fill(M([[True, False, False, True]]), -3.0), [(3, 4)]),
    "masked_fill_tensor_value": (lambda L, T, M, x, v: x.masked_fill(M([[False, True, True, False]]), v),
                                 [(3, 4), ()]),
    "masked_select": (lambda L, T, M, x: x.masked_select(M([[True, False, True, True]])), [(3, 4)]),
    "take_along_dim": (lambda L, T, M, x: L.take_along_dim(x, T([[0], [3], [1]]), 1), [(3, 4)]),
    "take": (lambda L, T, M, x: L.take(x, T([[0, -1], [5, 2], [5, 5]])), [(2, 3)]),
    "take_transposed": (lambda L, T, M, x: x.t().take(T([1, -2, 1])), [(2, 3)]),
    "tril": (lambda L, T, M, x: x.tril(), [(3, 4)]),
    "triu_diagonal": (lambda L, T, M, x: L.triu(x, 1), [(2, 3, 4)]),
    "cat": (lambda L, T, M, x, y: L.cat([x, y, x], 1), [(2, 3), (2, 1)]),
    "cat_negative_dim": (lambda L, T, M, x, y: L.cat([y, x], -2), [(2, 3), (1, 3)]),
    "cat_legacy_empty": (lambda L, T, M, x, e: L.cat([e, x, e], 1), [(2, 3), (0,)]),
    "stack": (lambda L, T, M, x, y: L.stack([x, y], 1), [(2, 3), (2, 3)]),
}


def _run(name: str, dev: str | None, xs: list[Any]) -> Any:
    L = strata if dev is not None else torch
    fn, _ = CASES[name]

    def T(v: Any) -> Any:
        return L.tensor(v, dtype=L.int64) if dev is None else L.tensor(v, dtype=L.int64, device=dev)
    return fn(L, T, lambda rows: _mask(L, dev, rows), *xs)


def _inputs(name: str, dtype_s: Any, dtype_t: Any, dev: str, grad: bool) -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32)
    arrays = [rng.uniform(-2, 2, shape).round(3) for shape in CASES[name][1]]
    s = [strata.tensor(a, dtype=dtype_s, device=dev, requires_grad=grad) for a in arrays]
    t = [torch.tensor(a, dtype=dtype_t, requires_grad=grad) for a in arrays]
    return s, t


def _node(t: Any) -> str | None:
    return t.grad_fn.name() if t.grad_fn is not None else None


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_gradients_and_second_derivatives(name: str, device: str) -> None:
    s, t = _inputs(name, strata.float64, torch.float64, device, True)
    ys, yt = _run(name, device, s), _run(name, None, t)
    assert_same(ys, yt, device=device)
    assert _node(ys) == _node(yt)
    w = np.random.default_rng(5).uniform(0.5, 1.5, tuple(yt.shape))
    ws, wt = strata.tensor(w, device=device), torch.tensor(w)
    # a loss that is not linear in the op's output: the first derivative depends on the inputs, so the
    # second derivative runs the derivative's own derivative
    gs = strata.autograd.grad((ys * ys * ws).sum(), s, create_graph=True)
    gt = torch.autograd.grad((yt * yt * wt).sum(), t, create_graph=True)
    assert_same(list(gs), list(gt), device=device)
    v = [np.random.default_rng(6 + i).uniform(-1, 1, tuple(x.shape)) for i, x in enumerate(t)]
    g2s = strata.autograd.grad(sum((g * strata.tensor(a, device=device)).sum() for g, a in zip(gs, v, strict=True)),
                               s, materialize_grads=True)
    g2t = torch.autograd.grad(sum((g * torch.tensor(a)).sum() for g, a in zip(gt, v, strict=True)), t,
                              allow_unused=True, materialize_grads=True)
    assert_same(list(g2s), list(g2t), device=device)


@pytest.mark.parametrize("name", ["index_tensor", "index_put_accumulate", "index_add", "gather", "scatter_add",
                                  "masked_fill", "masked_select", "triu_diagonal", "cat", "index_copy", "index_fill",
                                  "masked_scatter", "take"])
@pytest.mark.parametrize("dtype", ["int64", "float16", "int16", "bool"])
def test_other_dtypes(name: str, dtype: str, device: str) -> None:
    """Integer, half and bool tensors (no gradient): accumulating ops without an atomic add on the GPU
    (float16, int16) accumulate in a widened copy; bool accumulates as `or`."""
    s, t = _inputs(name, strata.float64, torch.float64, device, False)
    s = [x.to(getattr(strata, dtype)) if dtype != "bool" else x > 0 for x in s]
    t = [x.to(getattr(torch, dtype)) if dtype != "bool" else x > 0 for x in t]
    assert_same(_run(name, device, s), _run(name, None, t), device=device)


def test_cat_promotes_and_matches_conversions(device: str) -> None:
    a = np.array([[1.5, -2.75, 3e9]])
    s = [strata.tensor(a, dtype=strata.float64, device=device), strata.tensor([[7]], dtype=strata.int32, device=device),
         strata.tensor([[True, False]], device=device)]
    t = [torch.tensor(a, dtype=torch.float64), torch.tensor([[7]], dtype=torch.int32), torch.tensor([[True, False]])]
    assert_same(strata.cat(s, 1), torch.cat(t, 1), device=device)
    assert_same(strata.cat(s[1:], 1), torch.cat(t[1:], 1), device=device)
    assert_same(strata.cat([s[1].to(strata.float16), s[1]], 0), torch.cat([t[1].half(), t[1]], 0), device=device)


def test_scatter_with_a_larger_src(device: str) -> None:
    """src larger than index: only its first index.shape elements are read, and its gradient is g gathered
    there, zeros elsewhere (PyTorch's own backward returns the gathered shape and then rejects it)."""
    x, src = np.arange(12.0).reshape(3, 4), np.arange(6.0).reshape(3, 2) + 20
    ix = [[0], [3], [1]]
    xs = strata.tensor(x, device=device)
    ss = strata.tensor(src, device=device, requires_grad=True)
    ys = xs.scatter(1, strata.tensor(ix, device=device), ss)
    assert_same(ys, torch.tensor(x).scatter(1, torch.tensor(ix), torch.tensor(src)), device=device)
    w = np.arange(12.0).reshape(3, 4)
    ys.mul(strata.tensor(w, device=device)).sum().backward()
    expect = np.zeros((3, 2))
    expect[:, :1] = np.take_along_axis(w, np.array(ix), 1)
    np.testing.assert_array_equal(ss.grad.cpu().numpy(), expect)


def test_nonzero_and_one_argument_where(device: str) -> None:
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    s, t = strata.tensor(a, device=device), torch.tensor(a)
    assert_same(strata.nonzero(s), torch.nonzero(t), device=device)
    assert_same(list(strata.nonzero(s, as_tuple=True)), list(torch.nonzero(t, as_tuple=True)), device=device)
    assert_same(list(strata.where(s > 0)), list(torch.where(t > 0)), device=device)
    assert_same(strata.argwhere(s[0]), torch.argwhere(t[0]), device=device)
    assert_same(strata.nonzero(strata.tensor(3.0, device=device)), torch.nonzero(torch.tensor(3.0)), device=device)


def test_inplace_forms_and_setitem(device: str) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    s, t = strata.tensor(a, device=device), torch.tensor(a)
    for L, x in ((strata, s), (torch, t)):
        def T(v: Any, L: Any = L) -> Any:
            return L.tensor(v, device=device) if L is strata else L.tensor(v)
        x[T([0, 2]), 1] = -1.0
        x.index_add_(1, T([0, 0]), x[:, :2] * 0 + 1)
        x.scatter_(0, T([[1, 1, 1, 1]]), 9.0)
        x.masked_fill_(x > 8.5, 0.5)
        x.index_copy_(1, T([2]), x[:, :1] * 2)
        x.index_fill_(0, T([-1]), 3.0)
        x.masked_scatter_(x < 1.0, x.flatten() + 100)
        x[1:, T([3])] = T([[4.0], [5.0]])
    assert_same(s, t, device=device)


# ----------------------------------------------------------------------------------------- bad input
def _raises(fn: Callable[[Any, Any], Any], device: str) -> tuple[BaseException, BaseException]:
    with pytest.raises(Exception) as es:  # noqa: PT011 - the oracle says which type
        fn(strata, lambda v: strata.tensor(v, device=device))
    with pytest.raises(Exception) as et:  # noqa: PT011
        fn(torch, torch.tensor)
    return es.value, et.value


X = np.arange(12, dtype=np.float32).reshape(3, 4)
ERRORS: dict[str, Callable[[Any, Any], Any]] = {
    "index_float_tensor": lambda L, T: T(X)[T([0.0, 1.0])],
    "index_too_many": lambda L, T: T(X)[0, 1, 2],
    "index_shape_mismatch": lambda L, T: T(X)[T([0, 1]), T([0, 1, 2])],
    "index_mask_shape": lambda L, T: T(X)[T([True, False])],
    "index_put_dtype": lambda L, T: T(X).index_put_((T([0]),), T([1, 2, 3, 4])),
    "index_put_shape": lambda L, T: T(X).index_put_((T([0]),), T([1.0, 2.0])),
    "index_select_2d_index": lambda L, T: T(X).index_select(0, T([[0]])),
    "index_select_float_index": lambda L, T: T(X).index_select(0, T([0.0])),
    "index_add_dtype": lambda L, T: T(X).index_add(0, T([0]), T([[1, 2, 3, 4]])),
    "index_add_count": lambda L, T: T(X).index_add(0, T([0, 1]), T([[1.0, 2.0, 3.0, 4.0]])),
    "gather_ndim": lambda L, T: T(X).gather(0, T([0, 1])),
    "gather_float_index": lambda L, T: T(X).gather(0, T([[0.0]])),
    "gather_index_larger": lambda L, T: T(X).gather(0, T([[0, 0, 0, 0, 0]])),
    "scatter_dtype": lambda L, T: T(X).scatter(0, T([[0]]), T([[1]])),
    "scatter_add_dtype": lambda L, T: T(X).scatter_add(0, T([[0]]), T([[1]])),
    "masked_fill_float_mask": lambda L, T: T(X).masked_fill(T([1.0, 0.0, 0.0, 0.0]), 0.0),
    "masked_fill_value_dims": lambda L, T: T(X).masked_fill(T(X) > 3, T([1.0])),
    "masked_select_mask_dtype": lambda L, T: T(X).masked_select(T([1, 0, 0, 0])),
    "tril_1d": lambda L, T: T([1.0, 2.0]).tril(),
    "take_int32_index": lambda L, T: L.take(T(X), T([1]).int()),
    "index_copy_out_of_range": lambda L, T: T(X).index_copy(1, T([4]), T(X[:, :1])),
    "index_copy_negative": lambda L, T: T(X).index_copy(0, T([-1]), T(X[:1])),
    "index_copy_count": lambda L, T: T(X).index_copy(0, T([0]), T(X[:2])),
    "index_copy_dtype": lambda L, T: T(X).index_copy(0, T([0]), T(X[:1].astype(np.float64))),
    "index_copy_float_index": lambda L, T: T(X).index_copy(0, T([0.0]), T(X[:1])),
    "index_fill_out_of_range": lambda L, T: T(X).index_fill(1, T([4]), 1.0),
    "index_fill_value_dims": lambda L, T: T(X).index_fill(0, T([0]), T([1.0, 2.0])),
    "index_fill_2d_index": lambda L, T: T(X).index_fill(0, T([[0]]), 1.0),
    "masked_scatter_too_few": lambda L, T: T(X).masked_scatter(T(X) > -1, T(np.ones(5, np.float32))),
    "masked_scatter_float_mask": lambda L, T: T(X).masked_scatter(T(X * 0), T(X)),
    "masked_scatter_dtype": lambda L, T: T(X).masked_scatter(T(X) > 0, T(X.astype(np.float64))),
    "take_out_of_range": lambda L, T: L.take(T(X), T([12])),
    "take_negative_out_of_range": lambda L, T: L.take(T(X), T([0, -13])),
    "take_empty": lambda L, T: L.take(T(np.zeros(0, np.float32)), T([0])),
    "cat_empty": lambda L, T: L.cat([]),
    "cat_ndim": lambda L, T: L.cat([T(X), T([1.0])]),
    "cat_sizes": lambda L, T: L.cat([T(X), T(X[:, :2])], 0),
    "cat_zero_dim": lambda L, T: L.cat([T(X), T(1.0)]),
    "cat_empty_2d": lambda L, T: L.cat([T(np.zeros((0, 2), np.float32)), T(X)]),
    "stack_sizes": lambda L, T: L.stack([T(X), T(X[:2])]),
}
# messages that are PyTorch's word for word (the others: the same exception type; PyTorch's text names its
# C++ internals or the device)
SAME_TEXT = {"index_too_many", "index_shape_mismatch", "index_mask_shape", "index_put_shape", "index_select_2d_index",
             "index_add_dtype", "gather_ndim", "scatter_dtype", "scatter_add_dtype", "masked_fill_float_mask",
             "masked_fill_value_dims", "tril_1d", "cat_sizes", "stack_sizes", "index_put_dtype", "cat_ndim",
             "take_int32_index", "take_out_of_range", "take_negative_out_of_range", "take_empty",
             "index_copy_out_of_range", "index_copy_negative", "index_copy_count", "index_copy_dtype",
             "index_copy_float_index", "index_fill_out_of_range", "index_fill_value_dims", "index_fill_2d_index",
             "masked_scatter_too_few", "masked_scatter_float_mask", "masked_scatter_dtype", "cat_zero_dim",
             "cat_empty_2d"}


# indices out of range: on "cuda" they live on the GPU, and the kernel's check is a device-side assertion
DEVICE_CHECKED = {"take_out_of_range", "take_negative_out_of_range", "index_copy_out_of_range", "index_copy_negative",
                  "index_fill_out_of_range"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_bad_input_raises_pytorchs_error(name: str, device: str) -> None:
    if device == "cuda" and name in DEVICE_CHECKED:
        with pytest.raises(RuntimeError, match="CUDA error: device-side assert triggered"):
            ERRORS[name](strata, lambda v: strata.tensor(v, device=device)).tolist()
        return
    es, et = _raises(ERRORS[name], device)
    assert isinstance(es, type(et)), (es, et)
    if name in SAME_TEXT:
        assert str(es) == str(et)


def test_out_of_range_host_indices(device: str) -> None:
    """Indices given on the host are checked before any launch, on both devices, with PyTorch's errors."""
    s = strata.tensor(X, device=device)
    t = torch.tensor(X)
    for fn in (lambda x: x[[0, 3]], lambda x: x[:, [-5]]):
        with pytest.raises(IndexError) as es:
            fn(s)
        with pytest.raises(IndexError) as et:
            fn(t)
        assert str(es.value) == str(et.value)
    if device == "cpu":  # (on cuda these indices live on the GPU: the device-side assert of test_device_asserts)
        with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
            s.gather(1, strata.tensor([[4]] * 3))
        with pytest.raises(IndexError, match="index out of range in self"):
            s.index_select(0, strata.tensor([3]))


# ----------------------------------------------------------------------------------------- the table
FAMILY = ("index_buffer", "index", "index_select", "masked_select", "take", "index_put", "index_add", "index_copy",
          "index_fill", "masked_scatter", "gather", "scatter", "scatter_add", "masked_fill", "tril", "triu", "nonzero",
          "cat", "stack")


def test_the_table_declares_them_with_both_backends() -> None:
    for name in FAMILY:
        d = op_table.OPS[name]
        assert d.family in ("indexing", "joining"), name
        for backend in op_table.BACKENDS:
            assert callable(op_table.kernel(name, backend)), (name, backend)
    # derivatives and node names are the table's
    nodes = {"index": "IndexBackward0", "index_put": "IndexPutBackward0", "index_select": "IndexSelectBackward0",
             "index_add": "IndexAddBackward0", "gather": "GatherBackward0", "scatter": "ScatterBackward0",
             "scatter_add": "ScatterAddBackward0", "masked_fill": "MaskedFillBackward1",
             "masked_select": "MaskedSelectBackward0", "take": "TakeBackward0", "tril": "TrilBackward0",
             "triu": "TriuBackward0",
             "cat": "CatBackward0", "stack": "StackBackward0", "index_copy": "IndexCopyBackward0",
             "index_fill": "IndexFillBackward1", "masked_scatter": "MaskedScatterBackward0"}
    for name, node in nodes.items():
        assert op_table.OPS[name].node == node and op_table.OPS[name].derivative is not None
    assert op_table.OPS["scatter"].node_scalar == "ScatterBackward1"
    assert op_table.OPS["masked_fill"].node_scalar == "MaskedFillBackward0"
    assert op_table.OPS["index_fill"].node_scalar == "IndexFillBackward0"


def test_the_fronts_have_no_device_branch() -> None:
    """The fronts reach the kernels through the table only: no `device.type ==` choice of a code path
    is left in indexing.py or joining.py (the checks of where an index lives are not kernel choices)."""
    for module in (indexing, joining):
        src = inspect.getsource(module)
        branches = [ln.strip() for ln in src.splitlines() if 'device.type == "cuda"' in ln
                    or ('device.type == "cpu"' in ln and "ix." not in ln and "value." not in ln
                        and "index." not in ln)]
        assert not branches, (module.__name__, branches)


def test_a_kernel_registered_later_is_the_one_called(monkeypatch: pytest.MonkeyPatch) -> None:
    """The front calls whatever the table holds for the device (the dispatcher, not a hard-wired path)."""
    calls: list[str] = []
    real = op_table.kernel("gather", "cpu")

    def spy(*args: Any) -> Any:
        calls.append("gather")
        return real(*args)
    monkeypatch.setitem(op_table._KERNELS["cpu"], "gather", spy)
    out = strata.tensor(X).gather(1, strata.tensor([[1], [0], [3]]))
    assert calls == ["gather"] and out.flatten().tolist() == [1.0, 4.0, 11.0]

