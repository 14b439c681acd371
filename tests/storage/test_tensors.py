"""strata.storage.load_safetensors / save_safetensors with strata tensors, and strata.load reading a file
straight into device memory: every dtype on "cuda" and "cpu" against the `safetensors` library (NumPy and
PyTorch flavours) both ways, direct and bounce paths identical, corrupt files leave no device memory."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy as st_numpy
import safetensors.torch as st_torch
import torch

import strata
import strata.cuda as cuda
import strata.storage as storage
import strata.trace as trace

from .test_loader import CORRUPT

DTYPES = ["float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]
RNG = np.random.default_rng(5)


def _torch_tensor(name: str, shape: tuple[int, ...]) -> torch.Tensor:
    t = torch.from_numpy(RNG.standard_normal(shape) * 50)
    return t > 0 if name == "bool" else t.to(getattr(torch, name))


def _same(ours: strata.Tensor, ref: torch.Tensor) -> None:
    assert str(ours.dtype).split(".")[1] == str(ref.dtype).split(".")[1] and tuple(ours.shape) == tuple(ref.shape)
    assert torch.equal(torch.from_numpy(ours.cpu().numpy().view(np.uint8).copy()),
                       ref.contiguous().view(torch.uint8)) if ref.dtype is torch.bfloat16 else \
        np.array_equal(ours.cpu().numpy(), ref.numpy())


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_every_dtype_from_and_to_the_torch_library(tmp_path: Path, device: str) -> None:
    ref = {name: _torch_tensor(name, (3, 5)) for name in DTYPES}
    path = tmp_path / "torch.safetensors"
    st_torch.save_file(ref, path)
    loaded = storage.load_safetensors(path, device=device)
    for name, t in ref.items():
        assert loaded[name].device.type == device
        _same(loaded[name], t)
    back = tmp_path / "back.safetensors"
    storage.save_safetensors(dict(loaded), back)
    again = st_torch.load_file(back)
    assert all(torch.equal(again[n], ref[n]) for n in DTYPES)


def test_numpy_library_files_and_direct_vs_bounce(tmp_path: Path) -> None:
    arrays = {"w": RNG.standard_normal((33, 17)).astype(np.float32), "idx": np.arange(100, dtype=np.int64)}
    path = tmp_path / "np.safetensors"
    st_numpy.save_file(arrays, path)
    direct = storage.load_safetensors(path, direct=True)
    bounce = storage.load_safetensors(path, direct=False)
    assert bounce.report.mode == "bounce" and bounce.report.host_copy_bytes > 0
    assert direct.report.host_copy_bytes == 0 or direct.report.mode == "compat"
    for n, a in arrays.items():
        np.testing.assert_array_equal(direct[n].cpu().numpy(), a)
        np.testing.assert_array_equal(bounce[n].cpu().numpy(), a)
    # the tensors view the loaded memory: ops run on them, and they outlive the dict
    w = direct["w"]
    del direct
    gc.collect()
    np.testing.assert_allclose((w @ w.T).cpu().numpy(), arrays["w"] @ arrays["w"].T, rtol=1e-5, atol=1e-4)


def test_strata_load_reads_straight_into_device_memory(tmp_path: Path) -> None:
    strata.manual_seed(0)
    model = strata.nn.Linear(32, 16).cuda()
    opt = strata.optim.AdamW(model.parameters())
    model(strata.randn(4, 32, device="cuda")).sum().backward()
    opt.step()
    path = tmp_path / "ckpt.safetensors"
    strata.save({"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, path)
    with trace.record() as rec:
        ckpt = strata.load(path)
    names = [(e.layer, e.name) for e in rec.events]
    assert ("L1", "dma_nvme_to_device") in names and ("L1", "dma_nvme_to_host") not in names
    assert ("L1", "dma_HtoD") not in names  # no staging copy
    assert ckpt["epoch"] == 3 and ckpt["model"]["weight"].device.type == "cuda"
    for k, v in model.state_dict().items():
        assert strata.equal(ckpt["model"][k], v)
    opt2 = strata.optim.AdamW(model.parameters())
    opt2.load_state_dict(ckpt["optim"])
    cpu = strata.load(path, map_location="cpu")  # the host path for other targets
    assert cpu["model"]["bias"].device.type == "cpu" and strata.equal(cpu["model"]["bias"].cuda(), model.bias)


def test_pytorch_reads_what_strata_saves_and_back(tmp_path: Path) -> None:
    sd = {"w": strata.randn(4, 3, device="cuda"), "h": strata.ones(2, dtype=strata.bfloat16)}
    path = tmp_path / "s.safetensors"
    strata.save(sd, path)
    theirs = st_torch.load_file(path)
    np.testing.assert_array_equal(theirs["w"].numpy(), sd["w"].cpu().numpy())
    assert theirs["h"].dtype is torch.bfloat16
    torch_path = tmp_path / "t.safetensors"
    st_torch.save_file({"x": torch.arange(6.0).reshape(2, 3)}, torch_path)
    assert strata.load(torch_path, map_location="cuda")["x"].sum().item() == 15.0


@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupt_files_leave_no_device_memory(tmp_path: Path, case: str) -> None:
    blob, error, message = CORRUPT[case]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(blob)
    gc.disable()
    try:
        before = cuda.mem_get_info()[0]
        for load in (lambda: storage.load_safetensors(path), lambda: strata.load(path, map_location="cuda")):
            with pytest.raises(error, match=message):
                load()
            assert cuda.mem_get_info()[0] == before, case
    finally:
        gc.enable()


def test_the_walk_names_gds_and_its_missing_rocm_counterpart(tmp_path: Path) -> None:
    path = tmp_path / "w.safetensors"
    storage.save_safetensors({"w": np.ones((64, 64), np.float32)}, path)
    with trace.record() as rec:
        storage.load_safetensors(path)
    text = rec.walk()
    assert "L3 load_safetensors" in text and "L1 dma_nvme_to_device" in text
    assert "nvidia-fs.ko" in text and "no GDS in ROCm" in text
