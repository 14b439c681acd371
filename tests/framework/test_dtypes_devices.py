"""Dtypes (names, sizes, categories), PyTorch's promotion rules and devices, against PyTorch."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

import strata
from strata.framework.dtypes import ALL

torch = pytest.importorskip("torch")


def tdt(d: strata.dtype) -> Any:
    return getattr(torch, d.name)


def test_dtype_attributes_match_torch() -> None:
    for d in ALL:
        t = tdt(d)
        assert d.itemsize == t.itemsize, d
        assert d.is_floating_point == t.is_floating_point, d
        assert d.is_signed == t.is_signed, d
        assert repr(d) == repr(t).replace("torch.", "strata."), d
    assert strata.float is strata.float32 and strata.long is strata.int64 and strata.half is strata.float16
    assert strata.bool is strata.bool_


@pytest.mark.parametrize(("a", "b"), list(itertools.product(ALL, ALL)), ids=lambda d: d.name)
def test_promote_types_table(a: strata.dtype, b: strata.dtype) -> None:
    assert strata.promote_types(a, b).name == str(torch.promote_types(tdt(a), tdt(b))).removeprefix("torch.")


SCALARS = [True, 3, 2.5]


@pytest.mark.parametrize("d", ALL, ids=lambda d: d.name)
def test_result_type_with_scalars_and_zero_dim(d: strata.dtype) -> None:
    s = strata.zeros(2, dtype=d)
    t = torch.zeros(2, dtype=tdt(d))
    for x in SCALARS:
        assert strata.result_type(s, x).name == str(torch.result_type(t, x)).removeprefix("torch.")
        assert strata.result_type(x, s).name == str(torch.result_type(x, t)).removeprefix("torch.")
    for other in ALL:  # a zero-dim tensor of another dtype against a dimensioned one
        z, tz = strata.zeros((), dtype=other), torch.zeros((), dtype=tdt(other))
        assert strata.result_type(s, z).name == str(torch.result_type(t, tz)).removeprefix("torch."), other
        assert strata.result_type(z, 1.5).name == str(torch.result_type(tz, 1.5)).removeprefix("torch."), other


def test_default_dtype_drives_float_scalars() -> None:
    assert strata.get_default_dtype() is strata.float32
    strata.set_default_dtype(strata.float64)
    try:
        assert strata.tensor([1.5]).dtype is strata.float64
        assert strata.result_type(strata.tensor([1, 2]), 1.5) is strata.float64
        assert strata.result_type(strata.tensor([1.0], dtype=strata.float16), 1.5) is strata.float16
    finally:
        strata.set_default_dtype(strata.float32)
    with pytest.raises(TypeError):
        strata.set_default_dtype(strata.int32)


@pytest.mark.parametrize("spec", ["cpu", "cuda", "cuda:0", "cuda:1"])
def test_device_parsing_matches_torch(spec: str) -> None:
    d, t = strata.device(spec), torch.device(spec)
    assert (d.type, d.index) == (t.type, t.index)
    assert repr(d) == repr(t) and str(d) == str(t)


def test_device_equality_and_errors() -> None:
    assert strata.device("cuda", 0) == strata.device("cuda:0") == "cuda:0"
    assert strata.device("cuda") != strata.device("cuda:0")  # as torch: index None differs from 0
    assert strata.device(1) == strata.device("cuda:1")
    assert len({strata.device("cpu"), strata.device("cpu")}) == 1
    for bad in ("gpu", "cuda:x", "cuda:-1"):
        with pytest.raises(RuntimeError):
            torch.device(bad)
        with pytest.raises(RuntimeError):
            strata.device(bad)
    with pytest.raises(RuntimeError, match="must not include an index"):
        strata.device("cuda:0", 1)
