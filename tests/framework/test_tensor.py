"""Tensors: creation, views and their strides, slicing, conversions and printing, against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import strata

torch = pytest.importorskip("torch")


def _repr(t: Any) -> str:
    return repr(t).replace("torch.", "strata.")


CREATION = [
    ("tensor", lambda m, dev: m.tensor([[1, 2], [3, 4]], device=dev)),
    ("tensor_float", lambda m, dev: m.tensor([1, 2.5], device=dev)),
    ("tensor_bool", lambda m, dev: m.tensor([True, False], device=dev)),
    ("tensor_scalar", lambda m, dev: m.tensor(3.5, device=dev)),
    ("tensor_dtype", lambda m, dev: m.tensor([1, 2], dtype=m.float16, device=dev)),
    ("zeros", lambda m, dev: m.zeros(2, 3, device=dev)),
    ("ones", lambda m, dev: m.ones((3,), dtype=m.int32, device=dev)),
    ("full", lambda m, dev: m.full((2, 2), 7, device=dev)),
    ("full_float", lambda m, dev: m.full((2,), 1.5, device=dev)),
    ("full_bool", lambda m, dev: m.full((2,), True, device=dev)),
    ("arange", lambda m, dev: m.arange(5, device=dev)),
    ("arange_float", lambda m, dev: m.arange(0, 1, 0.25, device=dev)),
    ("arange_neg", lambda m, dev: m.arange(10, 0, -3, device=dev)),
    ("linspace", lambda m, dev: m.linspace(-1, 1, 7, device=dev)),
    ("eye", lambda m, dev: m.eye(3, 2, device=dev)),
    ("eye_square_int", lambda m, dev: m.eye(4, dtype=m.int32, device=dev)),
    ("arange_half", lambda m, dev: m.arange(-2, 3, 0.5, dtype=m.float16, device=dev)),
    ("arange_bf16", lambda m, dev: m.arange(0, 300, 7, dtype=m.bfloat16, device=dev)),
    ("arange_long", lambda m, dev: m.arange(-(2 ** 40), 2 ** 40, 2 ** 37, device=dev)),
    ("arange_f64", lambda m, dev: m.arange(0.1, 10.0, 0.3, dtype=m.float64, device=dev)),
    ("linspace_f64", lambda m, dev: m.linspace(-3, 5, 101, dtype=m.float64, device=dev)),
    ("zeros_like", lambda m, dev: m.zeros_like(m.ones(2, 3, dtype=m.float64, device=dev))),
    ("ones_like", lambda m, dev: m.ones_like(m.ones(2, dtype=m.int16, device=dev))),
    ("full_like", lambda m, dev: m.full_like(m.ones(2, device=dev), 4)),
]


@pytest.mark.parametrize(("name", "make"), CREATION, ids=[c[0] for c in CREATION])
def test_creation(name: str, make: Any, device: str, oracle: Any) -> None:
    ours = make(strata, device)
    oracle.assert_same(ours, make(torch, "cpu"), device=device)
    assert ours.is_contiguous()


def test_sequences_on_cuda_are_kernels_without_a_host_wait() -> None:
    """arange, linspace and eye on "cuda" are written by kernels: no host-to-device copy, no host sync."""
    ctx = strata.cuda.Device(0).context
    strata.cuda.synchronize()
    before = ctx.host_syncs
    a = strata.arange(1000, device="cuda")
    lin = strata.linspace(0, 1, 11, dtype=strata.float64, device="cuda")
    e = strata.eye(5, 7, device="cuda")
    assert ctx.host_syncs == before
    np.testing.assert_array_equal(a.cpu().numpy(), np.arange(1000))
    np.testing.assert_array_equal(lin.cpu().numpy(), strata.linspace(0, 1, 11, dtype=strata.float64).numpy())
    np.testing.assert_array_equal(e.cpu().numpy(), np.eye(5, 7, dtype=np.float32))


def test_creation_errors() -> None:
    for m in (strata, torch):
        with pytest.raises(RuntimeError):
            m.arange(0, 5, 0)
        with pytest.raises(RuntimeError):
            m.zeros(-1)
        with pytest.raises(ValueError):
            m.tensor([[1, 2], [3]])


def test_from_numpy_shares_memory() -> None:
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = strata.from_numpy(a)
    a[0, 0] = 42
    assert t[0, 0].item() == 42.0 and t.dtype is strata.float32
    t.numpy()[1, 2] = -1
    assert a[1, 2] == -1


VIEWS = [
    ("view", lambda x: x.view(4, 6)),
    ("view_infer", lambda x: x.view(-1, 3)),
    ("reshape_noncontig", lambda x: x.transpose(0, 2).reshape(-1)),
    ("permute", lambda x: x.permute(2, 0, 1)),
    ("transpose", lambda x: x.transpose(0, 1)),
    ("T_2d", lambda x: x[0].T),
    ("mT", lambda x: x.mT),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4)),
    ("expand_new_dim", lambda x: x[0, 0].expand(3, 4)),
    ("squeeze", lambda x: x[:, :1].squeeze()),
    ("squeeze_dim", lambda x: x[:, :1].squeeze(1)),
    ("unsqueeze", lambda x: x.unsqueeze(-1)),
    ("flatten", lambda x: x.flatten(1)),
    ("slice", lambda x: x[1, 1:3, ::2]),
    ("slice_neg", lambda x: x[-1, -2:]),
    ("ellipsis_none", lambda x: x[..., None, 1]),
    ("contiguous", lambda x: x.permute(1, 2, 0).contiguous()),
    ("view_of_transpose", lambda x: x.transpose(1, 2).reshape(2, 4, 3)),
]


@pytest.mark.parametrize(("name", "fn"), VIEWS, ids=[v[0] for v in VIEWS])
def test_views_match_torch(name: str, fn: Any, device: str, oracle: Any) -> None:
    s, t = oracle.pair(np.arange(24).reshape(2, 3, 4), device=device)
    ours, ref = fn(s), fn(t)
    oracle.assert_same(ours, ref, device=device)
    if ref.data_ptr() == t.data_ptr() + ref.storage_offset() * 8 - t.storage_offset() * 8 or ref._base is t:
        assert ours.stride() == ref.stride(), name
        assert ours.storage_offset() == ref.storage_offset(), name
        assert ours._storage is s._storage  # a view shares the storage
    assert ours.is_contiguous() == ref.is_contiguous()


def test_view_errors_match_torch() -> None:
    s, t = strata.arange(24).view(2, 3, 4), torch.arange(24).view(2, 3, 4)
    for x in (s, t):
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            x.transpose(0, 1).view(-1)
        with pytest.raises(RuntimeError, match="is invalid for input of size 24"):
            x.view(5, -1)
        with pytest.raises(RuntimeError, match="must match the existing size"):
            x.expand(2, 3, 5)
        with pytest.raises(IndexError, match="Dimension out of range"):
            x.transpose(0, 3)
        with pytest.raises(IndexError, match="out of bounds"):
            x[2]
        with pytest.raises(IndexError, match="too many indices"):
            x[0, 0, 0, 0]


def test_setitem_writes_through_views(device: str) -> None:
    s = strata.zeros(3, 4, device=device)
    t = torch.zeros(3, 4)
    for x in (s, t):
        x[1] = 5
        x[:, 2] = x[:, 2] + 1
        x[0, ::2] = 7.5
        x.T[3] = -1
    assert s.tolist() == t.tolist()


@pytest.mark.parametrize("d", ["float32", "float16", "bfloat16", "int64", "int8", "uint8", "bool", "float64"])
def test_to_between_devices_and_dtypes(d: str, oracle: Any) -> None:
    data = [[0.0, 1.5, -2.0], [3.25, 250.0, 7.0]]
    if d == "uint8":
        data = np.abs(data)  # negative floats to uint8 are undefined behaviour in C++ (and differ)
    s, t = oracle.pair(data, dtype=strata.float32)
    sd, td = getattr(strata, d), getattr(torch, d)
    oracle.assert_same(s.to(sd), t.to(td))
    c = s.cuda()
    assert c.device == strata.device("cuda:0") and c.is_cuda
    oracle.assert_same(c.to(sd), t.to(td), device="cuda")  # cast by the copy kernel
    oracle.assert_same(c.T.to(sd).cpu(), t.T.to(td), device="cpu")  # strided cast, then device-to-host
    oracle.assert_same(s.to("cuda", sd), t.to(td), device="cuda")
    assert s.to(strata.float32) is s and c.to("cuda:0") is c


def test_item_tolist_numpy(device: str) -> None:
    s = strata.tensor([[1.5, 2.0]], device=device)
    assert s.tolist() == [[1.5, 2.0]] and s[0, 1].item() == 2.0 and isinstance(s[0, 0].item(), float)
    assert strata.tensor(7, device=device).item() == 7
    assert strata.tensor([True], device=device).item() is True
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        s.item()
    if device == "cuda":
        with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
            s.numpy()
    else:
        assert s.numpy().tolist() == [[1.5, 2.0]]


REPRS = [
    lambda m: m.tensor([[1.0, 2.5], [-3.0, 4.0]]),
    lambda m: m.tensor([1.0, 2.0, 3.0]),
    lambda m: m.tensor([1e-5, 1.0]),
    lambda m: m.tensor([1.0, 12345.0]),
    lambda m: m.tensor(3.0),
    lambda m: m.tensor([1, -20, 300]),
    lambda m: m.tensor([True, False]),
    lambda m: m.tensor([1.5, 2.0], dtype=m.float16),
    lambda m: m.tensor([1, 2], dtype=m.int32),
    lambda m: m.zeros(0, 3),
    lambda m: m.zeros(0),
    lambda m: m.arange(24.0).view(2, 3, 4),
    lambda m: m.arange(40.0) / 3,
    lambda m: m.tensor([float("nan"), float("inf"), 1.0]),
    lambda m: m.ones(2, requires_grad=True),
    lambda m: m.ones(2, requires_grad=True) * 2,
    lambda m: m.tensor([[1.0, 5.0], [5.0, 1.0]]).max(0),
    lambda m: m.tensor([[1, 5], [5, 1]]).min(1, keepdim=True),
    # over 1000 elements: summarized, the first and last 3 of every long dim
    lambda m: m.arange(2000.0).reshape(40, 50),
    lambda m: m.arange(1001),
    lambda m: (m.arange(3 * 20 * 30) % 7 - 3.5).reshape(3, 20, 30) / 9,
    lambda m: m.arange(5000).reshape(50, 100) % 7 == 0,
    lambda m: m.arange(1200.0).reshape(2, 600).T,
]


@pytest.mark.parametrize("make", REPRS)
def test_repr_matches_torch(make: Any) -> None:
    assert repr(make(strata)) == _repr(make(torch))


def test_repr_cuda_suffix() -> None:
    assert repr(strata.tensor([1.0, 2.0], device="cuda", dtype=strata.float64)) == \
        "tensor([1., 2.], device='cuda:0', dtype=strata.float64)"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_new_factories_follow_torch(device: str) -> None:
    for m, dev in ((strata, device), (torch, "cpu")):
        t = m.ones(2, dtype=m.float16, device=dev)
        made = [t.new_zeros(2, 3), t.new_ones((1, 2)), t.new_full((2,), 3.5), t.new_tensor([1, 2]),
                t.new_zeros(2, dtype=m.int64), t.new_empty(3)]
        got = [(tuple(x.shape), str(x.dtype).split(".")[1]) for x in made]
        if m is strata:
            ours = got
            assert all(x.device == t.device for x in made)
            values = [x.cpu().tolist() for x in made[:5]]
        else:
            assert ours == got
            assert values == [x.tolist() for x in made[:5]]
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices"):
        _ = strata.ones(2).mT
