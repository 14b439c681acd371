"""Advanced indexing (integer tensors, lists, NumPy arrays, boolean masks, mixed with ints, slices, None,
Ellipsis), assignment and index_put_, gather/scatter/scatter_add, index_select/index_add, masked_fill,
masked_select, take_along_dim, nonzero/where, tril/triu against PyTorch CPU: values, dtypes, shapes,
gradients and errors, on "cpu" and "cuda"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import strata

from .conftest import DEVICES, assert_same, pair


def _ix(lib: Any, data: Any, dev: str, dtype: Any = None) -> Any:
    """An index tensor in strata (on dev) or torch."""
    if lib is torch:
        return torch.tensor(data, dtype=getattr(torch, dtype.name) if dtype is not None else None)
    return strata.tensor(data, device=dev, dtype=dtype)


def _grad_check(fn: Callable[[Any, Any], Any], data: np.ndarray, device: str, dtype: Any = strata.float32,
                name: bool = True) -> None:
    """fn(lib, x) against torch: forward, node name, and the gradient of sum(out * w)."""
    s, t = pair(data, dtype, device, requires_grad=True)
    out_s, out_t = fn(strata, s), fn(torch, t)
    assert_same(out_s, out_t.detach(), device=device)
    assert out_s.grad_fn.name() == out_t.grad_fn.name() or not name
    w = np.random.default_rng(1).standard_normal(tuple(out_t.shape)).astype(np.float32)
    ws, wt = pair(w, dtype, device)
    (out_s * ws).sum().backward()
    (out_t * wt).sum().backward()
    assert_same(s.grad, t.grad, device=device)


def _err(fn: Callable[[Any], Any], device: str) -> None:
    """fn(lib) raises the same error type and message in strata (on device) and torch."""
    with pytest.raises(Exception) as ref:
        fn(torch)
    with pytest.raises(type(ref.value)) as got:
        fn(strata)
        if device == "cuda":
            strata.cuda.synchronize()
    assert str(got.value) == str(ref.value)


X = np.arange(60, dtype=np.float32).reshape(3, 4, 5) - 20

READS: list[Callable[[Any, str], Any]] = [
    lambda L, d: [2, 0, 2],
    lambda L, d: _ix(L, [[0, 1], [2, -1]], d),
    lambda L, d: (slice(None), _ix(L, [3, 0], d)),
    lambda L, d: (_ix(L, [0, 2], d), slice(1, 3), _ix(L, [4, 0], d)),  # separated: B goes first
    lambda L, d: (slice(None), _ix(L, [1, 2], d), _ix(L, [[0], [4]], d)),  # adjacent, broadcast (2, 2)
    lambda L, d: (Ellipsis, _ix(L, [1, -1], d)),
    lambda L, d: (None, _ix(L, [1, 0], d), None, slice(None, None, 2)),
    lambda L, d: (1, slice(None), np.array([0, 3])),
    lambda L, d: (slice(None), 0, _ix(L, [2, 2, 1], d, strata.int32)),
    lambda L, d: _ix(L, X > 0, d),
    lambda L, d: (slice(None), _ix(L, [True, False, True, True], d)),
    lambda L, d: (_ix(L, [True, False, True], d), slice(None), [1, 3]),
    lambda L, d: (0, [[True, False, True, False, True]] * 4),
    lambda L, d: (True, 1),
    lambda L, d: (slice(None), False),
    lambda L, d: [],
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(READS)))
def test_advanced_reads_match_torch_with_gradients(device: str, case: int) -> None:
    _grad_check(lambda L, x: x[READS[case](L, device)], X, device)


@pytest.mark.parametrize("device", DEVICES)
def test_a_zero_dim_integer_tensor_selects_like_an_int(device: str) -> None:
    # (the basic path names every view node SliceBackward0; PyTorch says SelectBackward0 here)
    _grad_check(lambda L, x: x[_ix(L, 1, device), _ix(L, [0, 2], device)], X, device, name=False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.int64, strata.bool_])
def test_reads_of_other_dtypes(device: str, dtype: strata.dtype) -> None:
    s, t = pair(X, dtype, device)
    assert_same(s[[0, 2], :, [1, 1]], t[[0, 2], :, [1, 1]], device=device)
    assert_same(s[s.to(strata.float32) > 3], t[t.float() > 3], device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_reads_of_non_contiguous_tensors(device: str) -> None:
    s, t = pair(X, strata.float32, device)
    st, tt = s.transpose(0, 2)[:, ::2], t.transpose(0, 2)[:, ::2]
    assert_same(st[[4, 0], 1], tt[[4, 0], 1], device=device)
    i_s, i_t = strata.tensor([[0, 1, 2]], device=device).expand(2, 3), torch.tensor([[0, 1, 2]]).expand(2, 3)
    assert_same(st[:, :, i_s], tt[:, :, i_t], device=device)


WRITES: list[Callable[[Any, str], Any]] = [
    lambda L, d: ([0, 2], slice(None), [1, 3]),
    lambda L, d: (slice(None), _ix(L, [3, 0], d)),
    lambda L, d: _ix(L, X > 5, d),
    lambda L, d: (Ellipsis, _ix(L, [[1], [0]], d)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(WRITES)))
def test_assignment_of_scalars_and_broadcast_tensors(device: str, case: int) -> None:
    s, t = pair(X, strata.float32, device)
    s[WRITES[case](strata, device)] = -7.5
    t[WRITES[case](torch, device)] = -7.5
    assert_same(s, t, device=device)
    shape = t[WRITES[case](torch, device)].shape
    v = np.arange(shape[-1], dtype=np.float32) * 3 + 1
    vs, vt = pair(v, strata.float32, device)
    s[WRITES[case](strata, device)] = vs
    t[WRITES[case](torch, device)] = vt
    assert_same(s, t, device=device)
    si, ti = pair(X, strata.int64, device)  # values are converted to the tensor's dtype
    si[WRITES[case](strata, device)] = 2.7
    ti[WRITES[case](torch, device)] = 2.7
    assert_same(si, ti, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_masked_assignment_clears_negatives(device: str) -> None:
    s, t = pair(X, strata.float32, device)
    s[s < 0] = 0
    t[t < 0] = 0
    assert_same(s, t, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.float32, strata.int64, strata.float16, strata.int16])
def test_index_put_accumulate_adds_repeated_indices(device: str, dtype: strata.dtype) -> None:
    s, t = pair(np.zeros((4, 3)), dtype, device)
    vals = np.arange(15).reshape(5, 3) % 7
    vs, vt = pair(vals, dtype, device)
    i = [0, 3, 0, 0, 1]
    s.index_put_((strata.tensor(i, device=device),), vs, accumulate=True)
    t.index_put_((torch.tensor(i),), vt, accumulate=True)
    assert_same(s, t, device=device)
    out_s = s.index_put((strata.tensor([1, 1], device=device), strata.tensor([2, 0], device=device)),
                        strata.tensor(5, dtype=dtype, device=device))
    out_t = t.index_put((torch.tensor([1, 1]), torch.tensor([2, 0])), torch.tensor(5, dtype=vt.dtype))
    assert_same(out_s, out_t, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_gradients(device: str, accumulate: bool) -> None:
    s, t = pair(X, strata.float32, device, requires_grad=True)
    vs, vt = pair(np.ones((2, 5), np.float32) * 3, strata.float32, device, requires_grad=True)
    out_s = s.index_put((strata.tensor([2, 0], device=device), strata.tensor([1, 3], device=device)), vs, accumulate)
    out_t = t.index_put((torch.tensor([2, 0]), torch.tensor([1, 3])), vt, accumulate)
    assert_same(out_s, out_t.detach(), device=device)
    assert out_s.grad_fn.name() == out_t.grad_fn.name() == "IndexPutBackward0"
    w = torch.randn(out_t.shape)
    (out_s * strata.tensor(w.numpy(), device=device)).sum().backward()
    (out_t * w).sum().backward()
    assert_same(s.grad, t.grad, device=device)
    assert_same(vs.grad, vt.grad, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("advanced", [True, False])
def test_assignment_into_a_graph_records_the_copy(device: str, advanced: bool) -> None:
    def run(L: Any, x: Any, v: Any) -> Any:
        y = x * 2
        if advanced:
            y[_ix(L, [0, 2], device)] = v
        else:
            y[1:, 0] = v
        return y
    s, t = pair(X, strata.float32, device, requires_grad=True)
    vs, vt = pair(np.full(5, 4.0, np.float32), strata.float32, device, requires_grad=True)
    ys, yt = run(strata, s, vs), run(torch, t, vt)
    assert ys.grad_fn.name() == yt.grad_fn.name()
    assert_same(ys, yt.detach(), device=device)
    w = torch.randn(yt.shape)
    (ys * strata.tensor(w.numpy(), device=device)).sum().backward()
    (yt * w).sum().backward()
    assert_same(s.grad, t.grad, device=device)
    assert_same(vs.grad, vt.grad, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_assignment_into_a_leaf_that_requires_grad_raises(device: str) -> None:
    _err(lambda L: L.zeros(3, requires_grad=True).__setitem__([0], 1.0), device)
    _err(lambda L: L.zeros(3, requires_grad=True).__setitem__(0, 1.0), device)


INDEX_ERRORS: list[Callable[[Any, str], Any]] = [
    lambda L, d: L.zeros(3, 4)[[5]],
    lambda L, d: L.zeros(3, 4)[:, [0, -5]],
    lambda L, d: L.zeros(2, 3, 4)[[0], :, [9]],
    lambda L, d: L.zeros(3, 4)[_ix(L, [1.0], d)],
    lambda L, d: L.zeros(3, 4)[[0, 1], [0, 1, 2]],
    lambda L, d: L.zeros(3, 4)[_ix(L, [True, False], d)],
    lambda L, d: L.zeros(3, 4)[[0], [0], [0]],
    lambda L, d: L.zeros(3).index_put_((_ix(L, [0, 1], d),), L.ones(3)),
    lambda L, d: L.zeros(3).index_put_((_ix(L, [0], d),), L.ones(1, dtype=L.int64)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(INDEX_ERRORS)))
def test_indexing_errors_match_torch(device: str, case: int) -> None:
    def fn(L: Any) -> Any:
        return INDEX_ERRORS[case](L, device) if L is torch else _on(INDEX_ERRORS[case], device)
    _err(fn, device)


def _on(f: Callable[[Any, str], Any], device: str) -> Any:
    """Run a strata case with creation functions defaulting to `device`."""
    class _Lib:
        def __getattr__(self, name: str) -> Any:
            fn = getattr(strata, name)
            if name in ("zeros", "ones", "tensor", "arange"):
                return lambda *a, **k: fn(*a, device=device, **k)
            return fn
    return f(_Lib(), device)


# ----------------------------------------------------------------------------------------- gather/scatter
A = np.arange(12, dtype=np.float32).reshape(3, 4) * 0.5 - 2


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_and_take_along_dim(device: str, dim: int) -> None:
    idx = np.array([[0, 2, 1, 0], [1, 0, 0, 2]]) if dim == 0 else np.array([[3, 0], [1, 1], [2, 2]])
    _grad_check(lambda L, x: L.gather(x, dim, _ix(L, idx, device)), A, device)
    _grad_check(lambda L, x: x.take_along_dim(_ix(L, idx[:1], device), dim), A, device)
    _grad_check(lambda L, x: L.take_along_dim(x, _ix(L, [11, 0, 5], device)), A, device)


@pytest.mark.parametrize("device", DEVICES)
def test_scatter_forms_and_gradients(device: str) -> None:
    idx = [[2, 0, 1, 2], [0, 1, 2, 0]]
    src = np.arange(12, dtype=np.float32).reshape(3, 4) + 100
    for fn, rows in ((lambda L, x, s: x.scatter(0, _ix(L, idx, device), s), 2),
                     (lambda L, x, s: L.scatter_add(x, 0, _ix(L, idx + [[2, 2, 2, 2]], device), s), 3),
                     (lambda L, x, s: x.scatter(1, _ix(L, [[3], [0]], device), 9.5), 3)):
        s, t = pair(A, strata.float32, device, requires_grad=True)
        ss, st = pair(src[:rows], strata.float32, device, requires_grad=True)
        out_s, out_t = fn(strata, s, ss), fn(torch, t, st)
        assert out_s.grad_fn.name() == out_t.grad_fn.name()
        assert_same(out_s, out_t.detach(), device=device)
        w = torch.randn(out_t.shape)
        (out_s * strata.tensor(w.numpy(), device=device)).sum().backward()
        (out_t * w).sum().backward()
        assert_same(s.grad, t.grad, device=device)
        if st.grad is not None:
            assert_same(ss.grad, st.grad, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.int64, strata.float16])
def test_scatter_add_and_in_place_variants(device: str, dtype: strata.dtype) -> None:
    s, t = pair(np.zeros((2, 4)), dtype, device)
    ss, st = pair(np.ones((2, 5)), dtype, device)
    i_s, i_t = strata.tensor([[0, 0, 3, 3, 3]] * 2, device=device), torch.tensor([[0, 0, 3, 3, 3]] * 2)
    assert s.scatter_add_(1, i_s, ss) is s
    t.scatter_add_(1, i_t, st)
    assert_same(s, t, device=device)
    s.scatter_(1, i_s[:, :4], 7)
    t.scatter_(1, i_t[:, :4], 7)
    assert_same(s, t, device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_index_select_and_index_add(device: str) -> None:
    _grad_check(lambda L, x: L.index_select(x, 1, _ix(L, [3, 0, 3], device)), A, device)
    _grad_check(lambda L, x: x.index_select(0, _ix(L, 2, device)), A, device)
    src = np.arange(8, dtype=np.float32).reshape(2, 4)
    for alpha in (1, 2.5):
        s, t = pair(A, strata.float32, device, requires_grad=True)
        ss, st = pair(src, strata.float32, device, requires_grad=True)
        out_s = s.index_add(0, strata.tensor([2, 2], device=device), ss, alpha=alpha)
        out_t = t.index_add(0, torch.tensor([2, 2]), st, alpha=alpha)
        assert out_s.grad_fn.name() == out_t.grad_fn.name()
        assert_same(out_s, out_t.detach(), device=device)
        w = torch.randn(out_t.shape)
        (out_s * strata.tensor(w.numpy(), device=device)).sum().backward()
        (out_t * w).sum().backward()
        assert_same(s.grad, t.grad, device=device)
        assert_same(ss.grad, st.grad, device=device)
    si, ti = pair(np.zeros((3, 2)), strata.int32, device)
    si.index_add_(0, strata.tensor([1, 1, 0], device=device), strata.ones(3, 2, dtype=strata.int32, device=device))
    ti.index_add_(0, torch.tensor([1, 1, 0]), torch.ones(3, 2, dtype=torch.int32))
    assert_same(si, ti, device=device)


GS_ERRORS: list[Callable[[Any, str], Any]] = [
    lambda L, d: L.gather(L.zeros(3, 4), 0, L.tensor([[0, 0, 0, 0, 0]])),
    lambda L, d: L.gather(L.zeros(3, 4), 0, L.tensor([[3]])),
    lambda L, d: L.gather(L.zeros(3, 4), 0, L.tensor([0])),
    lambda L, d: L.gather(L.zeros(3, 4), 0, L.zeros(1, 1)),
    lambda L, d: L.zeros(3, 4).scatter(0, L.tensor([[0, 1]]), L.tensor([[1, 2]])),
    lambda L, d: L.zeros(3, 4).scatter(1, L.tensor([[4]]), 1.0),
    lambda L, d: L.index_select(L.zeros(3, 4), 0, L.tensor([3])),
    lambda L, d: L.index_select(L.zeros(3, 4), 0, L.tensor([[0]])),
    lambda L, d: L.index_select(L.zeros(3, 4), 0, L.tensor([1.0])),
    lambda L, d: L.zeros(3, 4).index_add_(0, L.tensor([5]), L.ones(1, 4)),
    lambda L, d: L.take_along_dim(L.zeros(3, 4), L.tensor([0]), 1),
    lambda L, d: L.zeros(3, 4).masked_fill(L.tensor([1.0, 0, 0, 0]), 1),
    lambda L, d: L.zeros(3, 4).masked_fill(L.tensor([True]), L.tensor([1.0])),
    lambda L, d: L.masked_select(L.zeros(3, 4), L.tensor([1, 0, 0, 0])),
    lambda L, d: L.ones(4).masked_fill_(L.tensor([[True], [False]]), 2),
    lambda L, d: L.tril(L.ones(3)),
    lambda L, d: L.triu(L.ones(3)),
]


# cases whose bad index lives on the GPU under "cuda": a device-side assert there, as in PyTorch on a GPU
# (tests/framework/test_device_asserts.py checks those), so only their "cpu" errors are compared here
GS_DEVICE_ASSERTS = {1, 5, 6, 9}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(GS_ERRORS)))
def test_gather_scatter_mask_errors_match_torch(device: str, case: int) -> None:
    if device == "cuda" and case in GS_DEVICE_ASSERTS:
        with pytest.raises(RuntimeError, match="CUDA error: device-side assert triggered"):
            _on(GS_ERRORS[case], device)
            strata.cuda.synchronize()
        return
    _err(lambda L: GS_ERRORS[case](L, device) if L is torch else _on(GS_ERRORS[case], device), device)


# ----------------------------------------------------------------------------------------- masks
@pytest.mark.parametrize("device", DEVICES)
def test_masked_fill_and_masked_select(device: str) -> None:
    m = A > 0
    _grad_check(lambda L, x: x.masked_fill(_ix(L, m, device), -1.5), A, device)
    _grad_check(lambda L, x: L.masked_fill(x, _ix(L, m[0], device), 3), A, device)
    _grad_check(lambda L, x: L.masked_select(x, _ix(L, m, device)), A, device)
    _grad_check(lambda L, x: x[1].masked_select(_ix(L, [[True], [False]], device)), A, device)
    # a 0-dim value tensor gets a gradient; integer tensors keep their dtype
    s, t = pair(A, strata.float32, device)
    vs, vt = pair(np.float32(2.0), strata.float32, device, requires_grad=True)
    out_s, out_t = s.masked_fill(strata.tensor(m, device=device), vs), t.masked_fill(torch.tensor(m), vt)
    assert_same(out_s, out_t.detach(), device=device)
    out_s.sum().backward()
    out_t.sum().backward()
    assert_same(vs.grad, vt.grad, device=device)
    si, ti = pair(A, strata.int64, device)
    assert_same(si.masked_fill(si > 0, 2.9), ti.masked_fill(ti > 0, 2.9), device=device)
    assert_same(si.masked_fill_(si < 0, 7), ti.masked_fill_(ti < 0, 7), device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [strata.float32, strata.bool_, strata.int64])
def test_nonzero_argwhere_and_one_argument_where(device: str, dtype: strata.dtype) -> None:
    data = (np.arange(40).reshape(2, 4, 5) % 3 == 0) * np.arange(40).reshape(2, 4, 5)
    s, t = pair(data, dtype, device)
    assert_same(strata.nonzero(s), torch.nonzero(t), device=device)
    assert_same(s.nonzero(as_tuple=True), t.nonzero(as_tuple=True), device=device)
    assert_same(strata.where(s), torch.where(t), device=device)
    assert_same(s.argwhere(), t.argwhere(), device=device)
    assert_same(strata.nonzero(s[0, 0, 1]), torch.nonzero(t[0, 0, 1]), device=device)
    assert_same(strata.nonzero(s[0, 0, 3], as_tuple=True), torch.nonzero(t[0, 0, 3], as_tuple=True), device=device)
    z_s, z_t = pair(np.zeros((3, 2)), dtype, device)
    assert_same(z_s.nonzero(), z_t.nonzero(), device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_nonzero_of_a_long_strided_mask(device: str) -> None:
    data = np.random.default_rng(0).standard_normal((40, 30)).astype(np.float32)
    s, t = pair(data, strata.float32, device)
    assert_same((s.T > 0.5).nonzero(), (t.T > 0.5).nonzero(), device=device)
    assert_same(s.T[s.T > 0.5], t.T[t.T > 0.5], device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("diagonal", [0, 1, -2])
def test_tril_triu(device: str, diagonal: int) -> None:
    data = np.arange(2 * 3 * 5, dtype=np.float32).reshape(2, 3, 5)
    _grad_check(lambda L, x: L.tril(x, diagonal), data, device)
    _grad_check(lambda L, x: x.transpose(1, 2).triu(diagonal=diagonal), data, device)
    si, ti = pair(data, strata.int64, device)
    assert_same(si.tril_(diagonal), ti.tril_(diagonal), device=device)
    assert_same(si.triu_(diagonal), ti.triu_(diagonal), device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_where_keeps_its_three_argument_form(device: str) -> None:
    s, t = pair(A, strata.float32, device)
    assert_same(strata.where(s > 0, s, 0.0), torch.where(t > 0, t, 0.0), device=device)
