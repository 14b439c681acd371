"""strata.save / strata.load and strata.storage.safetensors: round trips of every dtype (file path and file
object, "cpu" and "cuda"), interchange with the real `safetensors` library in both directions (numpy and
torch front ends), module and optimizer state dicts, and every kind of corrupt file raising its error."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import safetensors
import safetensors.numpy
import safetensors.torch
import torch

import strata
from strata.storage import safetensors as st

from .conftest import DEVICES, as_numpy, to_torch_dtype

DTYPES = [strata.float32, strata.float64, strata.float16, strata.bfloat16, strata.int64, strata.int32,
          strata.int16, strata.int8, strata.uint8, strata.bool]


def _values(d: strata.dtype, shape: tuple[int, ...] = (2, 3), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if d is strata.bool:
        return rng.random(shape) > 0.5
    if d.is_floating_point:
        return rng.standard_normal(shape) * 10
    return rng.integers(0 if d is strata.uint8 else -100, 100, shape)


def _state(device: str) -> dict[str, strata.Tensor]:
    sd = {f"t_{d.name}": strata.tensor(_values(d, seed=i), dtype=d, device=device) for i, d in enumerate(DTYPES)}
    sd["scalar"] = strata.tensor(2.5, device=device)
    sd["empty"] = strata.zeros(0, 4, device=device)
    sd["transposed"] = strata.arange(12, device=device).view(3, 4).T  # not contiguous
    return sd


def _same(a: strata.Tensor, b: strata.Tensor) -> None:
    assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape) and a.device == b.device
    np.testing.assert_array_equal(a.cpu()._to_numpy(), b.cpu()._to_numpy())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("target", ["path", "file"])
def test_round_trip_every_dtype(device: str, target: str, tmp_path: Path) -> None:
    sd = _state(device)
    if target == "path":
        f: Any = tmp_path / "sd.safetensors"
        strata.save(sd, f)
    else:
        f = io.BytesIO()
        strata.save(sd, f)
        f.seek(0)
    back = strata.load(f)
    assert list(back) != [] and set(back) == set(sd)
    for k, v in sd.items():
        _same(back[k], v)  # the device comes back too, as torch.load does


@pytest.mark.parametrize("device", DEVICES)
def test_map_location(device: str) -> None:
    buf = io.BytesIO()
    strata.save({"a": strata.ones(2, device=device), "b": strata.zeros(3, dtype=strata.int8)}, buf)
    for loc, want in [("cpu", "cpu"), ("cuda", "cuda"), (strata.device("cuda:0"), "cuda"),
                      ({"cuda:0": "cpu"}, "cpu" if device == "cuda" else "cpu")]:
        buf.seek(0)
        back = strata.load(buf, map_location=loc)
        assert back["a"].device.type == want and back["a"].tolist() == [1.0, 1.0]
        assert back["b"].device.type == (want if not isinstance(loc, dict) else "cpu")
    buf.seek(0)
    back = strata.load(buf, map_location=lambda t, where: t.to(strata.float64))
    assert back["a"].dtype is strata.float64
    buf.seek(0)
    with pytest.raises(TypeError, match="map_location must be"):
        strata.load(buf, map_location=3.5)


@pytest.mark.parametrize("device", DEVICES)
def test_read_by_safetensors_torch(device: str, tmp_path: Path) -> None:
    sd = _state(device)
    path = tmp_path / "ours.safetensors"
    strata.save(sd, path, metadata={"format": "pt"})
    theirs = safetensors.torch.load_file(path)
    assert set(theirs) == set(sd)
    for k, v in sd.items():
        t = theirs[k]
        assert t.dtype == to_torch_dtype(v.dtype) and tuple(t.shape) == tuple(v.shape)
        np.testing.assert_array_equal(as_numpy(t), as_numpy(v))
    with safetensors.safe_open(path, "pt") as f:
        assert f.metadata()["format"] == "pt"


def test_written_by_safetensors_torch(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    theirs = {d.name: torch.tensor(_values(d, (3, 2), seed=i)).to(to_torch_dtype(d)) for i, d in enumerate(DTYPES)}
    theirs["scalar"] = torch.tensor(rng.standard_normal())
    path = tmp_path / "theirs.safetensors"
    safetensors.torch.save_file(theirs, path, metadata={"note": "from torch"})
    ours = strata.load(path)
    for k, t in theirs.items():
        assert ours[k].dtype.name == str(t.dtype).removeprefix("torch.") and tuple(ours[k].shape) == tuple(t.shape)
        np.testing.assert_array_equal(as_numpy(ours[k]), as_numpy(t))
    tensors, meta = st.load_file_with_metadata(path)
    assert meta == {"note": "from torch"} and tensors["bfloat16"].dtype == ml_dtypes.bfloat16


def test_numpy_front_end_both_ways() -> None:
    arrays = {d.name: _values(d, seed=i).astype(d.np) for i, d in enumerate(DTYPES) if d is not strata.bfloat16}
    arrays["scalar"] = np.array(1.5)
    ours = st.serialize(arrays, {"k": "v"})
    assert ours == safetensors.numpy.save(arrays, metadata={"k": "v"})  # byte for byte the reference writer's
    for blob in (ours, safetensors.numpy.save(arrays)):
        back = st.deserialize(blob)
        for k, a in arrays.items():
            assert back[k].dtype == a.dtype and back[k].shape == a.shape
            np.testing.assert_array_equal(back[k], a)
    bits = np.arange(4, dtype=np.uint16) + 0x3F80  # raw bfloat16 bits: 1.0, 1.0078125, ...
    back = safetensors.torch.load(st.serialize({"b": ("BF16", bits)}))["b"]
    assert back.dtype == torch.bfloat16 and back.tolist() == [1.0, 1.0078125, 1.015625, 1.0234375]


@pytest.mark.parametrize("device", DEVICES)
def test_module_state_dict(device: str) -> None:
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    buf = io.BytesIO()
    buf.write(safetensors.torch.save(ref.state_dict()))
    buf.seek(0)
    model = strata.nn.Sequential(strata.nn.Linear(3, 4), strata.nn.ReLU(), strata.nn.Linear(4, 2)).to(device)
    model.load_state_dict(strata.load(buf, map_location=device))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out = model(strata.tensor(x, device=device))
    np.testing.assert_allclose(as_numpy(out), ref(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    # and back: strata's file read by safetensors.torch loads into the torch module
    buf = io.BytesIO()
    strata.save(model.state_dict(), buf)
    ref2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    ref2.load_state_dict(safetensors.torch.load(buf.getvalue()))
    np.testing.assert_allclose(ref2(torch.tensor(x)).detach().numpy(), as_numpy(out), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_nested_checkpoint(device: str) -> None:
    w = strata.tensor([1.0, 2.0], device=device, requires_grad=True)
    opt = strata.optim.AdamW([w], lr=0.01, amsgrad=True)
    w.grad = strata.ones(2, device=device)
    opt.step()
    ckpt = {"model": {"w": w.detach()}, "optim": opt.state_dict(), "epoch": 3, "best": 0.25, "tags": ["a", None],
            "flags": (True, 1.5), "dtype": strata.bfloat16}
    buf = io.BytesIO()
    strata.save(ckpt, buf)
    header, meta, _ = st.read_header(buf.getvalue())
    assert "optim.state.0.exp_avg" in header and "strata.structure" in (meta or {})
    buf.seek(0)
    back = strata.load(buf)
    assert back["epoch"] == 3 and back["best"] == 0.25 and back["tags"] == ["a", None]
    assert back["flags"] == (True, 1.5) and back["dtype"] is strata.bfloat16
    assert back["optim"]["param_groups"] == opt.state_dict()["param_groups"]
    assert list(back["optim"]["state"]) == [0]
    for k, v in opt.state_dict()["state"][0].items():
        _same(back["optim"]["state"][0][k], v)
    _same(back["model"]["w"], w.detach())


def test_save_errors() -> None:
    with pytest.raises(TypeError, match="cannot store a value of type object"):
        strata.save({"a": object()}, io.BytesIO())
    with pytest.raises(TypeError, match="dict keys must be str or int"):
        strata.save({(1, 2): 3}, io.BytesIO())
    with pytest.raises(ValueError, match="two tensors flatten to the name 'a.b'"):
        strata.save({"a": {"b": strata.ones(1)}, "a.b": strata.ones(1), "n": 1}, io.BytesIO())
    with pytest.raises(ValueError, match="reserved"):
        strata.save({"a": strata.ones(1)}, io.BytesIO(), metadata={"strata.structure": "x"})
    with pytest.raises(st.InvalidMetadataError):
        st.serialize({"a": np.ones(1)}, {"k": 1})  # type: ignore[dict-item]
    with pytest.raises(st.InvalidDtypeError, match="complex128 has no safetensors name"):
        st.serialize({"c": np.ones(2, complex)})
    with pytest.raises(st.InvalidDtypeError, match="needs 2-byte elements"):
        st.serialize({"c": ("BF16", np.ones(2, np.float32))})


# ----------------------------------------------------------------------------------------- corrupt files
def _blob(header: Any, data: bytes = b"", n: int | None = None) -> bytes:
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(text) if n is None else n) + text + data


def _entry(dtype: str = "F32", shape: Any = (2,), offsets: Any = (0, 8)) -> dict[str, Any]:
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


CORRUPT: list[tuple[str, bytes, type, str]] = [
    ("too-small", b"\x01\x00\x00", st.HeaderTooSmallError, "at least 8"),
    ("too-large", _blob(b"{}", n=200_000_000), st.HeaderTooLargeError, "limit is 100000000"),
    ("length-past-end", _blob(b"{}", n=50), st.InvalidHeaderLengthError, "past the end"),
    ("not-utf8", _blob(b"{\xff\xfe}"), st.InvalidHeaderError, "UTF-8"),
    ("no-brace", _blob(b' {"a": 1}'), st.InvalidHeaderError, "must start with '{'"),
    ("bad-json", _blob(b'{"a": '), st.InvalidHeaderError, "not valid JSON"),
    ("duplicate", _blob(b'{"a":' + json.dumps(_entry()).encode() + b',"a":' + json.dumps(_entry()).encode() + b"}",
                        bytes(8)), st.InvalidHeaderError, "duplicate key 'a'"),
    ("missing-key", _blob({"a": {"dtype": "F32", "shape": [2]}}, bytes(8)), st.InvalidHeaderError, "'a'"),
    ("bad-dtype", _blob({"a": _entry("F8_E4M3", (8,))}, bytes(8)), st.InvalidDtypeError, "'F8_E4M3'"),
    ("unknown-dtype", _blob({"a": _entry("Q32")}, bytes(8)), st.InvalidDtypeError, "'Q32'"),
    ("negative-shape", _blob({"a": _entry(shape=(-2,))}, bytes(8)), st.InvalidShapeError, "'a'"),
    ("float-shape", _blob({"a": _entry(shape=(2.0,))}, bytes(8)), st.InvalidShapeError, "non-negative integers"),
    ("reversed-offsets", _blob({"a": _entry(offsets=(8, 0))}, bytes(8)), st.InvalidOffsetError, "BEGIN <= END"),
    ("size-mismatch", _blob({"a": _entry(shape=(3,))}, bytes(8)), st.TensorSizeMismatchError, "needs 12"),
    ("hole", _blob({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(12, 20))}, bytes(20)),
     st.InvalidOffsetError, "'b'.*hole"),
    ("overlap", _blob({"a": _entry(offsets=(0, 8)), "b": _entry(offsets=(4, 12))}, bytes(12)),
     st.InvalidOffsetError, "'b'.*overlap tensor 'a'"),
    ("past-end", _blob({"a": _entry(offsets=(0, 8))}, bytes(4)), st.InvalidOffsetError, "past the end"),
    ("not-from-zero", _blob({"a": _entry(offsets=(4, 12))}, bytes(12)), st.InvalidOffsetError, "hole"),
    ("trailing-bytes", _blob({"a": _entry()}, bytes(10)), st.IncompleteBufferError, "cover 8 bytes of the 10"),
    ("metadata-not-str", _blob({"__metadata__": {"k": 1}}), st.InvalidMetadataError, "strings to strings"),
    ("header-not-object", _blob(b"{}", b"") [:8] + b"[]", st.InvalidHeaderError, "start with"),
]


@pytest.mark.parametrize(("blob", "error", "match"), [c[1:] for c in CORRUPT], ids=[c[0] for c in CORRUPT])
def test_corrupt_files_raise_their_error(blob: bytes, error: type, match: str) -> None:
    with pytest.raises(error, match=match) as e:
        st.deserialize(blob)
    assert isinstance(e.value, st.SafetensorsError) and isinstance(e.value, ValueError)
    with pytest.raises(error):
        strata.load(io.BytesIO(blob))
    # the reference reader rejects it as well (it knows more dtypes than strata holds, and lets a duplicate
    # key's last entry win where strata refuses the ambiguity)
    if error is not st.InvalidDtypeError and "duplicate" not in match:
        with pytest.raises(Exception):  # noqa: B017,PT011
            safetensors.numpy.load(blob)


def test_valid_edge_cases_accepted() -> None:
    # zero-size tensors may share an offset; padding spaces after the JSON are allowed
    blob = _blob(json.dumps({"e": _entry(shape=(0, 3), offsets=(0, 0)), "f": _entry(shape=(0,), offsets=(0, 0)),
                             "a": _entry()}).encode() + b"   ", np.arange(2, dtype="<f4").tobytes())
    back = st.deserialize(blob)
    assert back["e"].shape == (0, 3) and back["a"].tolist() == [0.0, 1.0]
    assert safetensors.numpy.load(blob)["a"].tolist() == [0.0, 1.0]
