"""read_tensors / save_safetensors (strata.storage.loader): every dtype round trips; the direct and
bounce paths give byte-identical arrays; files of the `safetensors` library (numpy and torch flavours,
the oracles) load identically and files written here load there; corrupt files raise a named error and
leave no device memory allocated; the LoadReport and the L1 trace events say what each path did."""

from __future__ import annotations

import gc
import json
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy as st_numpy
import safetensors.torch as st_torch
import torch

import strata.cuda as cuda
import strata.trace as trace
from strata.hw import storage_model
from strata.hw.dma import copy_seconds
from strata.storage import LoadedTensors, loader, read_file_header, read_tensors, safetensors, save_safetensors

RNG = np.random.default_rng(11)


def _arrays() -> dict[str, np.ndarray]:
    """One array per safetensors dtype strata supports, with assorted shapes (0-d, empty, odd sizes)."""
    return {
        "f64": RNG.standard_normal((3, 5)),
        "f32": RNG.standard_normal((7, 3)).astype(np.float32),
        "f16": RNG.standard_normal(13).astype(np.float16),
        "bf16": RNG.standard_normal((2, 9)).astype(ml_dtypes.bfloat16),
        "i64": RNG.integers(-2**62, 2**62, (4,), dtype=np.int64),
        "i32": RNG.integers(-2**31, 2**31 - 1, (3, 3), dtype=np.int32),
        "i16": RNG.integers(-2**15, 2**15 - 1, (5,), dtype=np.int16),
        "i8": RNG.integers(-128, 127, (11,), dtype=np.int8),
        "u8": RNG.integers(0, 255, (2, 2, 3), dtype=np.uint8),
        "bool": RNG.random(6) > 0.5,
        "scalar": np.array(2.5, dtype=np.float32),
        "empty": np.zeros((0, 4), dtype=np.float32),
    }


_TORCH = {np.dtype(np.float64): torch.float64, np.dtype(np.float32): torch.float32,
          np.dtype(np.float16): torch.float16, np.dtype(ml_dtypes.bfloat16): torch.bfloat16,
          np.dtype(np.int64): torch.int64, np.dtype(np.int32): torch.int32, np.dtype(np.int16): torch.int16,
          np.dtype(np.int8): torch.int8, np.dtype(np.uint8): torch.uint8, np.dtype(np.bool_): torch.bool}


def _to_torch(a: np.ndarray) -> torch.Tensor:
    """The same bytes as a torch tensor (bf16 through its bits: NumPy has no native bfloat16)."""
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def _bytes_of(t: torch.Tensor) -> bytes:
    return t.contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


def _same(loaded: LoadedTensors, arrays: dict[str, np.ndarray]) -> None:
    assert set(loaded) == set(arrays)
    for name, a in arrays.items():
        t = loaded[name]
        assert t.shape == a.shape and t.array.shape == a.shape
        assert t.array.dtype == a.dtype and t.np_dtype == a.dtype
        assert t.array.get().tobytes() == a.tobytes(), name


@pytest.fixture
def free_vram() -> Iterator[Callable[[], int]]:
    """Free device memory, read with the cyclic GC off: between two reads only what the code under test
    frees or allocates changes it (a collection could free unrelated arrays of earlier tests)."""
    gc.disable()
    try:
        yield lambda: cuda.mem_get_info()[0]
    finally:
        gc.enable()


# ------------------------------------------------------------------------------ round trips, interop
@pytest.mark.parametrize("direct", [True, False])
def test_every_dtype_from_the_torch_library(tmp_path: Path, direct: bool) -> None:
    arrays = _arrays()
    path = tmp_path / "lib.safetensors"
    st_torch.save_file({n: _to_torch(a) for n, a in arrays.items()}, str(path), metadata={"format": "pt"})
    out = read_tensors(path, device="cuda", direct=direct)
    _same(out, arrays)
    assert out.metadata == {"format": "pt"}
    names = {n: t.dtype for n, t in out.items()}
    assert names["bf16"] == "BF16" and names["bool"] == "BOOL" and names["f64"] == "F64"


def test_files_of_the_numpy_library_load_identically(tmp_path: Path) -> None:
    arrays = {n: a for n, a in _arrays().items() if n != "bf16"}  # safetensors.numpy has no BF16
    path = tmp_path / "np.safetensors"
    st_numpy.save_file(arrays, str(path))
    oracle = st_numpy.load_file(str(path))
    _same(read_tensors(path), {n: oracle[n] for n in arrays})


def test_direct_and_bounce_are_byte_identical(tmp_path: Path) -> None:
    arrays = _arrays()
    # a data region several blocks long that starts and ends off 4 KiB boundaries
    arrays["big"] = RNG.standard_normal(3000).astype(np.float32)
    path = tmp_path / "both.safetensors"
    safetensors.save_file(arrays, path)
    direct, bounce = read_tensors(path, direct=True), read_tensors(path, direct=False)
    for name in arrays:
        assert direct[name].array.get().tobytes() == bounce[name].array.get().tobytes() == arrays[name].tobytes()
    assert direct.report.bytes == bounce.report.bytes == sum(a.nbytes for a in arrays.values())


@pytest.mark.parametrize("direct", [True, False])
def test_saved_files_load_in_the_safetensors_library(tmp_path: Path, direct: bool) -> None:
    arrays = _arrays()
    dev = {n: cuda.to_device(a) for n, a in arrays.items() if n != "f16"}
    dev["f16"] = arrays["f16"]  # a host array may sit beside device arrays
    path = tmp_path / "ours.safetensors"
    report = save_safetensors(dev, path, {"step": "7"}, direct=direct)
    assert report.bytes == sum(a.nbytes for a in arrays.values())
    assert report.mode == ("bounce" if not direct else report.mode)
    back = st_torch.load_file(str(path))
    for name, a in arrays.items():
        assert back[name].dtype == _TORCH[a.dtype] and tuple(back[name].shape) == a.shape
        assert _bytes_of(back[name]) == a.tobytes(), name
    from safetensors import safe_open
    with safe_open(str(path), "np") as f:
        assert f.metadata() == {"step": "7"}
    # and byte for byte the file the safetensors library and the format module write for the same arrays
    assert path.read_bytes() == st_torch.save({n: _to_torch(a) for n, a in arrays.items()}, {"step": "7"})
    assert path.read_bytes() == safetensors.serialize(arrays, {"step": "7"})
    _same(read_tensors(path), arrays)


def test_save_accepts_loaded_tensors_and_raw_dtypes(tmp_path: Path) -> None:
    bits = RNG.integers(0, 2**16, 8, dtype=np.uint16)
    save_safetensors({"raw": ("BF16", cuda.to_device(bits))}, tmp_path / "a.safetensors")
    a = read_tensors(tmp_path / "a.safetensors")
    assert a["raw"].dtype == "BF16" and a["raw"].array.get().view(np.uint16).tolist() == bits.tolist()
    save_safetensors(a, tmp_path / "b.safetensors")  # LoadedTensor values keep their dtype name
    assert (tmp_path / "b.safetensors").read_bytes() == (tmp_path / "a.safetensors").read_bytes()
    with pytest.raises(safetensors.InvalidDtypeError, match="has no safetensors name"):
        save_safetensors({"c": cuda.to_device(np.zeros(2, np.complex64))}, tmp_path / "c.safetensors")
    with pytest.raises(safetensors.InvalidDtypeError, match="needs 2-byte elements"):
        save_safetensors({"c": ("F16", np.zeros(2, np.float32))}, tmp_path / "c.safetensors")
    with pytest.raises(safetensors.InvalidMetadataError):
        save_safetensors({}, tmp_path / "c.safetensors", {"k": 1})  # type: ignore[dict-item]


def test_views_keep_the_buffer_alive(tmp_path: Path) -> None:
    arrays = {"a": np.arange(10, dtype=np.int32), "b": np.ones(3)}
    safetensors.save_file(arrays, tmp_path / "k.safetensors")
    out = read_tensors(tmp_path / "k.safetensors")
    keep = out["a"].array
    del out
    gc.collect()
    assert keep.get().tolist() == list(range(10))


def test_device_argument(tmp_path: Path) -> None:
    safetensors.save_file({"a": np.ones(2, np.float32)}, tmp_path / "d.safetensors")
    for device in ("cuda", "cuda:0", 0, cuda.current_device()):
        assert read_tensors(tmp_path / "d.safetensors", device=device)["a"].array.device.index == 0
    with pytest.raises(ValueError, match="device must be 'cuda'"):
        read_tensors(tmp_path / "d.safetensors", device="cpu")
    with pytest.raises(FileNotFoundError):
        read_tensors(tmp_path / "missing.safetensors")


# ----------------------------------------------------------------------------- report and traces
def test_load_report_and_trace_events(tmp_path: Path) -> None:
    arrays = {"w": RNG.standard_normal((64, 64)).astype(np.float32), "b": RNG.standard_normal(64)}
    path = tmp_path / "r.safetensors"
    safetensors.save_file(arrays, path)
    nbytes = sum(a.nbytes for a in arrays.values())
    spec = cuda.current_device().spec
    with trace.record() as rec:
        direct = read_tensors(path, direct=True)
    r = direct.report
    assert r.bytes == nbytes and r.tensors == 2 and r.wall_s > 0
    if r.mode == "gds":
        assert r.host_copy_bytes == 0 and r.host_copies_per_byte == 0
        assert r.modeled_s == pytest.approx(storage_model.gds_read_seconds(spec, r.file_bytes, requests=r.requests))
    assert r.file_bytes >= nbytes
    ev = [e for e in rec.events if (e.layer, e.name) == ("L1", "dma_nvme_to_device")]
    assert len(ev) == 1 and ev[0].args["bytes"] == r.file_bytes
    assert any(e.name == "load_safetensors" and e.layer == "L3" for e in rec.events)

    with trace.record() as rec:
        bounce = read_tensors(path, direct=False)
    b = bounce.report
    assert b.mode == "bounce" and b.host_copy_bytes == nbytes and b.host_copies_per_byte == 1.0
    assert b.modeled_s == pytest.approx(storage_model.bounce_read_seconds(spec, nbytes, requests=1))
    assert b.modeled_pcie_s == pytest.approx(copy_seconds(spec, "HtoD", nbytes, pinned=True))
    assert b.modeled_s > r.modeled_s
    names = [(e.layer, e.name) for e in rec.events]
    assert ("L1", "dma_nvme_to_host") in names and ("L1", "dma_HtoD") in names
    assert ("L1", "dma_nvme_to_device") not in names


def test_read_file_header_reads_no_data(tmp_path: Path) -> None:
    arrays = {"x": np.zeros((3, 4), np.float16), "y": np.zeros(5, np.int64)}
    path = tmp_path / "h.safetensors"
    safetensors.save_file(arrays, path, {"a": "b"})
    h = read_file_header(path)
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    assert h.data_start == 8 + n and h.file_size == len(raw) and h.metadata == {"a": "b"}
    assert h.entries["x"] == {"dtype": "F16", "shape": [3, 4], "data_offsets": [40, 64]}


# ---------------------------------------------------------------------------------- corrupt files
def _good() -> bytes:
    return safetensors.serialize({"a": np.arange(8, dtype=np.float32), "b": np.arange(4, dtype=np.int16)})


def _with_header(header: Any, data: bytes, raw: bytes | None = None) -> bytes:
    text = raw if raw is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


_DATA = np.arange(8, dtype=np.float32).tobytes() + np.arange(4, dtype=np.int16).tobytes()  # 40 bytes
_A = {"dtype": "F32", "shape": [8], "data_offsets": [0, 32]}
_B = {"dtype": "I16", "shape": [4], "data_offsets": [32, 40]}

CORRUPT: dict[str, tuple[bytes, type[Exception], str]] = {
    "too small": (b"\x01\x00", safetensors.HeaderTooSmallError, "header too small"),
    "header length past end": (struct.pack("<Q", 10_000) + b"{}", safetensors.InvalidHeaderLengthError,
                               "points past the end"),
    "header too large": (struct.pack("<Q", 2**40) + b"{}", safetensors.HeaderTooLargeError, "header too large"),
    "bad json": (_with_header(None, _DATA, b'{"a": {"dtype": "F32",'), safetensors.InvalidHeaderError,
                 "not valid JSON"),
    "not an object": (_with_header(None, _DATA, b"[1, 2]"), safetensors.InvalidHeaderError, "start with '{'"),
    "unknown dtype": (_with_header({"a": {**_A, "dtype": "F7"}, "b": _B}, _DATA), safetensors.InvalidDtypeError,
                      "'F7'"),
    "bad shape": (_with_header({"a": {**_A, "shape": [8, -1]}, "b": _B}, _DATA), safetensors.InvalidShapeError,
                  "shape must be"),
    "size mismatch": (_with_header({"a": {**_A, "shape": [7]}, "b": _B}, _DATA), safetensors.TensorSizeMismatchError,
                      "needs 28"),
    "overlap": (_with_header({"a": _A, "b": {**_B, "data_offsets": [24, 32]}}, _DATA[:32]),
                safetensors.InvalidOffsetError, "overlap"),
    "out of bounds": (_with_header({"a": _A, "b": {**_B, "data_offsets": [32, 40]}}, _DATA[:36]),
                      safetensors.InvalidOffsetError, "past the end"),
    "hole": (_with_header({"a": _A, "b": {**_B, "data_offsets": [34, 42]}}, _DATA + b"xx"),
             safetensors.InvalidOffsetError, "hole"),
    "truncated data": (_good()[:-3], safetensors.InvalidOffsetError, "past the end"),
    "trailing bytes": (_good() + b"\x00" * 5, safetensors.IncompleteBufferError, "cover"),
}


@pytest.mark.parametrize("direct", [True, False])
@pytest.mark.parametrize("case", list(CORRUPT))
def test_corrupt_files_raise_and_leak_nothing(tmp_path: Path, free_vram: Callable[[], int], case: str,
                                              direct: bool) -> None:
    blob, error, message = CORRUPT[case]
    path = tmp_path / "bad.safetensors"
    path.write_bytes(blob)
    with pytest.raises(safetensors.SafetensorsError):  # the oracle: the format module agrees it is corrupt
        safetensors.deserialize(blob)
    before = free_vram()
    with pytest.raises(error, match=message) as info:
        read_tensors(path, direct=direct)
    assert free_vram() == before  # measured while the traceback (and its frames' locals) is alive
    del info


def test_the_safetensors_library_also_refuses_them(tmp_path: Path) -> None:
    for case in ("bad json", "unknown dtype", "overlap", "truncated data", "hole", "header length past end"):
        with pytest.raises(Exception):  # noqa: B017 - the library raises its own SafetensorError
            st_numpy.load(CORRUPT[case][0])


def test_a_file_shrinking_during_the_read_leaks_nothing(tmp_path: Path, free_vram: Callable[[], int],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "shrink.safetensors"
    safetensors.save_file({"a": np.arange(5000, dtype=np.float32)}, path)
    real = loader.read_to_device

    def truncate_then_read(*args: Any, **kwargs: Any) -> Any:
        with open(path, "r+b") as f:
            f.truncate(9000)
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, "read_to_device", truncate_then_read)
    before = free_vram()
    with pytest.raises(safetensors.IncompleteBufferError, match="shrank") as info:
        read_tensors(path)
    assert free_vram() == before  # measured while the traceback (and its frames' locals) is alive
    del info


def test_an_io_error_during_the_read_leaks_nothing(tmp_path: Path, free_vram: Callable[[], int],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "eio.safetensors"
    safetensors.save_file({"a": np.arange(100, dtype=np.float32)}, path)

    def fail(*args: Any, **kwargs: Any) -> Any:
        raise OSError(5, "Input/output error")

    before = free_vram()
    for name in ("read_to_device", "bounce_read"):
        with monkeypatch.context() as m:
            m.setattr(loader, name, fail)
            with pytest.raises(OSError, match="Input/output error") as info:
                read_tensors(path, direct=name == "read_to_device")
        assert free_vram() == before  # measured while the traceback (and its frames' locals) is alive
        del info


def test_compat_mode_when_the_file_system_refuses_o_direct(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from strata.driver import storage_dma
    arrays = _arrays()
    path = tmp_path / "compat.safetensors"
    safetensors.save_file(arrays, path)
    monkeypatch.setattr(storage_dma, "_open_direct", lambda p, f: None)
    out = read_tensors(path, direct=True)
    _same(out, arrays)
    assert out.report.mode == "compat" and out.report.host_copy_bytes == out.report.file_bytes


def test_the_walk_shows_both_paths(tmp_path: Path) -> None:
    path = tmp_path / "walk.safetensors"
    safetensors.save_file({"w": np.ones((8, 8), np.float32)}, path)
    with trace.record() as rec:
        read_tensors(path)
        read_tensors(path, direct=False)
    text = rec.walk()
    assert text.count("L3 load_safetensors") == 2
    assert "L1 dma_nvme_to_device" in text and "L1 dma_HtoD" in text


@pytest.mark.parametrize("direct", [True, False])
def test_files_without_data(tmp_path: Path, direct: bool) -> None:
    for i, (arrays, meta) in enumerate([({}, None), ({}, {"only": "metadata"}), ({"e": np.zeros((0, 3))}, None)]):
        path = tmp_path / f"empty{i}.safetensors"
        st_numpy.save_file(arrays, str(path), meta)
        out = read_tensors(path, direct=direct)
        assert set(out) == set(arrays) and out.metadata == meta and out.report.bytes == 0
        for name, a in arrays.items():
            assert out[name].shape == a.shape and out[name].array.get().shape == a.shape
