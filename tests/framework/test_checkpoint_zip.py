"""PyTorch's zip checkpoint format (torch.save / torch.load) in strata, checked both ways against real
PyTorch 2.13: files strata writes load in torch (with torch's default weights_only=True), files torch
writes load in strata; state dicts, optimizer state, nested containers, every dtype, views with offsets
and strides, parameters, whole modules, NumPy arrays, map_location, and the restricted unpickler."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import strata
from strata.framework import checkpoint_zip
from strata.framework.checkpoint_zip import CheckpointFormatError, WeightsOnlyUnpicklingError

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _np(t: object) -> np.ndarray:
    if isinstance(t, strata.Tensor):
        a = t.detach().cpu()._to_numpy()
        return a.astype(np.float64) if t.dtype.name == "bfloat16" else a
    assert isinstance(t, torch.Tensor)
    t = t.detach()
    return t.float().numpy().astype(np.float64) if t.dtype == torch.bfloat16 else t.numpy()


def _strata_save(obj: object) -> io.BytesIO:
    buf = io.BytesIO()
    strata.save(obj, buf, format="torch")
    buf.seek(0)
    return buf


def _torch_save(obj: object) -> io.BytesIO:
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    return buf


def test_archive_layout_matches_torch() -> None:
    names = zipfile.ZipFile(_strata_save({"w": strata.ones(2)})).namelist()
    ref = zipfile.ZipFile(_torch_save({"w": torch.ones(2)})).namelist()
    assert set(names) == set(ref) - {"archive/.data/serialization_id"}
    zf = zipfile.ZipFile(_strata_save({"w": strata.ones(2)}))
    assert zf.read("archive/version") == b"3\n" and zf.read("archive/byteorder") == b"little"
    info = zf.getinfo("archive/data/0")
    assert (info.header_offset + 30 + len(info.filename) + len(info.extra)) % 64 == 0  # aligned storage


@pytest.mark.parametrize("name", DTYPES)
def test_strata_file_loads_in_torch_every_dtype(name: str) -> None:
    a = (np.arange(12).reshape(3, 4) % 5 - 2).astype(np.float32)
    t = strata.tensor(a).to(getattr(strata, name if name != "bool" else "bool_"))
    out = torch.load(_strata_save({"t": t, "col": t[:, 1]}))  # torch's default: weights_only=True
    assert out["t"].dtype == getattr(torch, name)
    np.testing.assert_array_equal(_np(out["t"]), _np(t))
    np.testing.assert_array_equal(_np(out["col"]), _np(t[:, 1]))


@pytest.mark.parametrize("name", DTYPES)
def test_torch_file_loads_in_strata_every_dtype(name: str) -> None:
    base = torch.arange(24).reshape(4, 6) % 7 - 3
    t = base.to(getattr(torch, name))
    views = {"t": t, "offset_view": t[1:, 2:5], "strided": t[::2, ::3], "transposed": t.t(), "scalar": t[2, 3]}
    out = strata.load(_torch_save(views))
    for k, v in views.items():
        assert out[k].dtype.name == name and tuple(out[k].shape) == tuple(v.shape), k
        np.testing.assert_array_equal(_np(out[k]), _np(v), err_msg=k)


def test_module_state_dict_and_optimizer_state_both_ways() -> None:
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2))
    sm = strata.nn.Sequential(strata.nn.Linear(3, 4), strata.nn.BatchNorm1d(4), strata.nn.Linear(4, 2))
    sm.load_state_dict(strata.load(_torch_save(tm.state_dict())))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    tm.eval()
    sm.eval()
    np.testing.assert_allclose(_np(sm(strata.tensor(x))), _np(tm(torch.tensor(x))), rtol=1e-5, atol=1e-6)
    # strata's optimizer state -> torch's optimizer
    sopt = strata.optim.Adam(sm.parameters(), lr=0.01)
    sm(strata.tensor(x)).sum().backward()
    sopt.step()
    ckpt = torch.load(_strata_save({"model": sm.state_dict(), "optim": sopt.state_dict(), "epoch": 3}))
    assert ckpt["epoch"] == 3 and ckpt["model"].keys() == tm.state_dict().keys()
    tm.load_state_dict(ckpt["model"])
    topt = torch.optim.Adam(tm.parameters(), lr=0.01)
    topt.load_state_dict(ckpt["optim"])
    np.testing.assert_allclose(_np(topt.state[next(tm.parameters())]["exp_avg"]),
                               _np(sopt.state[next(sm.parameters())]["exp_avg"]), rtol=1e-6)
    assert float(topt.state[next(tm.parameters())]["step"]) == 1.0


def test_nested_containers_dtypes_devices_sizes_round_trip() -> None:
    obj = {"a": [1, 2.5, "x", None, True], "b": (strata.ones(2), {"c": strata.zeros(1, dtype=strata.int64)}),
           "dtype": strata.float16, "dev": strata.device("cuda", 0), "size": strata.Size([2, 3]), 7: {1, 2}}
    ref = torch.load(_strata_save(obj))
    assert ref["dtype"] is torch.float16 and ref["dev"] == torch.device("cuda", 0)
    assert ref["size"] == torch.Size([2, 3]) and ref[7] == {1, 2} and ref["a"] == [1, 2.5, "x", None, True]
    back = strata.load(_strata_save(obj))
    assert back["dtype"] is strata.float16 and back["dev"] == strata.device("cuda", 0)
    assert back["b"][1]["c"].dtype == strata.int64 and isinstance(back["b"], tuple)
    back_t = strata.load(_torch_save(ref))
    assert back_t["dtype"] is strata.float16 and back_t["size"] == (2, 3)


def test_parameters_keep_their_type_and_requires_grad() -> None:
    lin = strata.nn.Linear(2, 3)
    ref = torch.load(_strata_save({"p": lin.weight, "g": strata.ones(2, requires_grad=True)}))
    assert isinstance(ref["p"], torch.nn.Parameter) and ref["p"].requires_grad and ref["g"].requires_grad
    back = strata.load(_torch_save({"p": torch.nn.Parameter(torch.ones(2))}))
    assert isinstance(back["p"], strata.nn.Parameter) and back["p"].requires_grad


def test_whole_module_and_numpy_arrays_need_weights_only_false() -> None:
    model = strata.nn.Sequential(strata.nn.Linear(3, 2), strata.nn.ReLU())
    buf = _strata_save({"model": model, "arr": np.arange(4.0), "rng": np.random.default_rng(0).random(2)})
    with pytest.raises(WeightsOnlyUnpicklingError, match="Unsupported global"):
        strata.load(buf)
    buf.seek(0)
    out = strata.load(buf, weights_only=False)
    x = strata.ones(1, 3)
    assert out["model"](x).tolist() == model(x).tolist()
    np.testing.assert_array_equal(out["arr"], np.arange(4.0))
    # a torch checkpoint with NumPy arrays, and a whole torch module (torch's classes map to strata's)
    torch.manual_seed(1)
    tmod = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    back = strata.load(_torch_save({"arr": np.ones(3, np.float32), "m": tmod}), weights_only=False)
    np.testing.assert_array_equal(back["arr"], np.ones(3, np.float32))
    xs = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(_np(back["m"](strata.tensor(xs))), _np(tmod(torch.tensor(xs))), rtol=1e-6)


class _Config:
    def __init__(self, depth: int) -> None:
        self.depth = depth


def test_add_safe_globals_allows_a_class() -> None:
    buf = _strata_save({"cfg": _Config(3)})
    with pytest.raises(pickle.UnpicklingError, match=r"_Config"):
        strata.load(buf)
    with strata.framework.serialization.safe_globals([_Config]):
        buf.seek(0)
        assert strata.load(buf)["cfg"].depth == 3
    assert _Config not in checkpoint_zip.get_safe_globals()


def test_map_location_and_cuda_tensors() -> None:
    t = strata.arange(6.0, device="cuda").reshape(2, 3)
    buf = _strata_save({"t": t})
    assert strata.load(buf)["t"].device == strata.device("cuda", 0)
    buf.seek(0)
    assert strata.load(buf, map_location="cpu")["t"].device == strata.device("cpu")
    buf.seek(0)
    ref = torch.load(buf, map_location="cpu")  # saved at "cuda:0"; this torch has no GPU
    np.testing.assert_array_equal(ref["t"].numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3))
    out = strata.load(_torch_save({"t": torch.ones(2)}), map_location={"cpu": "cuda:0"})
    assert out["t"].device == strata.device("cuda", 0)


def test_paths_and_format_detection(tmp_path: Path) -> None:
    p = tmp_path / "model.pt"
    strata.save({"w": strata.ones(3)}, p, format="torch")
    assert torch.load(p)["w"].tolist() == [1.0, 1.0, 1.0]
    torch.save({"w": torch.full((2,), 4.0)}, p)
    assert strata.load(p)["w"].tolist() == [4.0, 4.0]
    s = tmp_path / "model.safetensors"
    strata.save({"w": strata.ones(2)}, s)  # the default format is still safetensors
    assert strata.load(s)["w"].tolist() == [1.0, 1.0]


def test_malformed_checkpoints_raise_typed_errors() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("archive/version", b"3\n")
    buf.seek(0)
    with pytest.raises(CheckpointFormatError, match="data.pkl"):
        strata.load(buf)
    good = _torch_save({"w": torch.ones(4)}).getvalue()
    broken = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(good)) as src, zipfile.ZipFile(broken, "w") as dst:
        for n in src.namelist():
            if not n.endswith("data/0"):
                dst.writestr(n, src.read(n))
    broken.seek(0)
    with pytest.raises(CheckpointFormatError, match="no record"):
        strata.load(broken)
    with pytest.raises(ValueError, match="format must be"):
        strata.save({}, io.BytesIO(), format="pickle")
    with pytest.raises(NotImplementedError, match="legacy"):
        strata.save({}, io.BytesIO(), format="torch", _use_new_zipfile_serialization=False)
