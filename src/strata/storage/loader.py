"""Loading safetensors files into device memory, and saving device arrays to them, by the direct path
(GPUDirect Storage: file -> device memory, no host staging buffer) or the bounce path (file -> pinned
host buffer -> cudaMemcpy). The role of `safetensors.torch.load_file(..., device="cuda")` and of
fastsafetensors. `read_tensors` gives device arrays; `load_safetensors` gives strata tensors, through
the tensor type the framework registers (strata.storage sits below it: `register_tensor_type`).

The header is read and validated in full (strata.storage.safetensors: length, JSON, dtypes, shapes,
contiguous in-bounds offsets covering the file exactly) before any device memory is allocated, so a
corrupt or truncated file raises a `SafetensorsError` naming the problem and leaves no allocation;
a read error afterwards frees the buffer before re-raising. A file goes into ONE device allocation
(as fastsafetensors does): on the direct path it holds the file from the 4 KiB block containing the
data start to the end, so the whole data region is one aligned O_DIRECT transfer in 16 MiB requests;
each tensor is a `DeviceArray.view` into it that keeps the buffer alive.

Example:
    >>> import os, tempfile, numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> from strata.storage import safetensors, tensor_type
    >>> safetensors.save_file({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, path)
    >>> out = read_tensors(path, device="cuda")
    >>> t = out["w"]; t.dtype, t.shape, t.array.get().tolist()
    ('F32', (2, 3), [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    >>> out.report.bytes, out.report.host_copy_bytes
    (24, 0)
    >>> bounce = read_tensors(path, direct=False)
    >>> bounce.report.mode, bounce.report.host_copy_bytes
    ('bounce', 24)
"""

from __future__ import annotations

import json
import mmap
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata import trace
from strata.cuda.device import Device, current_device
from strata.cuda.memory import DeviceArray
from strata.driver.storage_dma import ALIGN, DmaTransfer, StorageFile, read_to_device, write_from_device
from strata.hw import storage_model
from strata.hw.dma import copy_seconds
from strata.storage import safetensors, tensor_type
from strata.storage.cufile import bounce_read, bounce_write

# NumPy dtype -> safetensors name (the inverse of safetensors.DTYPES; BF16 needs ml_dtypes)
_NAMES: dict[np.dtype, str] = {dt.newbyteorder("="): name for name, dt in safetensors.DTYPES.items()
                               if name != "BF16" or dt != np.dtype(np.uint16)}

# The reference writer orders tensors by its Dtype enum (increasing alignment), descending, then by name
# (numbers.md §3.5); these are the enum's members strata holds, in its order.
_WRITE_ORDER = ["BOOL", "U8", "I8", "I16", "F16", "BF16", "I32", "F32", "F64", "I64"]


@dataclass
class LoadedTensor:
    """One tensor in device memory: `array` (a view into the file's device buffer), its safetensors
    `dtype` name ("F32", "BF16", ...) and `shape`."""

    array: DeviceArray
    dtype: str
    shape: tuple[int, ...]

    @property
    def np_dtype(self) -> np.dtype:
        return safetensors.DTYPES[self.dtype]


@dataclass
class LoadReport:
    """What a load (or save) did.

    `bytes`: tensor data bytes; `file_bytes`: bytes moved to or from the file (the direct path also reads
    the partial 4 KiB block before the data); `mode`: "gds" (all O_DIRECT), "compat" (the file system
    refused O_DIRECT: buffered reads straight into device memory), "mixed", or "bounce" (pinned host
    staging + cudaMemcpy); `host_copy_bytes`: bytes copied through host memory (0 on the GDS path, one
    per byte on the bounce path); `modeled_*`: modeled seconds (strata.hw.storage_model): the drive, the
    PCIe transfer, the host copy, and the whole path; `wall_s`: host seconds."""

    path: str
    device: int
    mode: str
    tensors: int
    bytes: int
    file_bytes: int
    host_copy_bytes: int
    requests: int
    modeled_nvme_s: float
    modeled_pcie_s: float
    modeled_host_copy_s: float
    modeled_s: float
    wall_s: float

    @property
    def host_copies_per_byte(self) -> float:
        return self.host_copy_bytes / self.bytes if self.bytes else 0.0


class LoadedTensors(dict[str, LoadedTensor]):
    """name -> LoadedTensor in header order, plus `metadata` (the file's `__metadata__` or None),
    `report` (a LoadReport) and `buffer` (the one DeviceArray all tensors view)."""

    metadata: dict[str, str] | None
    report: LoadReport
    buffer: DeviceArray


@dataclass
class FileHeader:
    """A validated safetensors header read from a file without reading its data."""

    entries: dict[str, dict[str, Any]]  # name -> {"dtype", "shape", "data_offsets"}, header order
    metadata: dict[str, str] | None
    data_start: int  # file offset of the byte buffer (8 + header length)
    file_size: int


def read_file_header(path: str | os.PathLike[str]) -> FileHeader:
    """Read and validate the header of a safetensors file (the data is not read: the file is mapped and
    only its header pages are touched).

    Raises:
        SafetensorsError: (a subclass naming the problem) for a malformed or truncated file.
        OSError: the file cannot be opened.
    """
    with open(path, "rb") as f:
        return _header_of_fd(f.fileno())


def read_tensors(path: str | os.PathLike[str], device: str | int | Device = "cuda", direct: bool = True
                 ) -> LoadedTensors:
    """Load every tensor of a safetensors file into device memory, as device arrays (`load_safetensors`
    wraps them as strata tensors).

    Args:
        path: the file.
        device: "cuda", "cuda:N", a device index or a strata.cuda.Device.
        direct: True for the direct (GDS) path; False for the bounce path through pinned host memory.

    Returns:
        A LoadedTensors dict (name -> LoadedTensor) with `.metadata`, `.report` and `.buffer`.

    Raises:
        SafetensorsError: the file is malformed or truncated (nothing is left allocated).
        ValueError: an unknown device.
        OSError: the file cannot be opened or read (nothing is left allocated).
    """
    dev = _device(device)
    t0 = time.perf_counter()
    name = os.fspath(path)
    with trace.span("L3", "load_safetensors", file=name, direct=direct) as span_args:
        sf = StorageFile.open(path)
        try:
            header = _header_of_fd(sf.fd)
            nbytes = header.file_size - header.data_start
            if direct:
                # whole 4 KiB blocks from the one holding the data start; O_DIRECT reads stop short at EOF
                lo = header.data_start // ALIGN * ALIGN
                length = header.file_size - lo
                buf = DeviceArray((-(-length // ALIGN) * ALIGN,), np.uint8, dev)
                base = buf.ptr + header.data_start - lo
            else:
                lo, length = header.data_start, nbytes
                buf = DeviceArray((length,), np.uint8, dev)
                base = buf.ptr
            try:
                if direct:
                    t = read_to_device(dev.file, sf, buf.ptr, buf.nbytes, lo)
                else:
                    t = bounce_read(dev.file, sf.fd, buf.ptr, length, lo)
                if t.nbytes != length:
                    raise safetensors.IncompleteBufferError(
                        f"[load_safetensors] {name}: the file ended after {t.nbytes} of {length} bytes "
                        "(it shrank while being read)")
            except BaseException:
                buf.free()
                raise
        finally:
            sf.close()
        out = LoadedTensors()
        for tname, info in header.entries.items():
            begin = info["data_offsets"][0]
            shape = tuple(info["shape"])
            arr = DeviceArray.view(base + begin, shape, safetensors.DTYPES[info["dtype"]], dev, owner=buf)
            out[tname] = LoadedTensor(arr, info["dtype"], shape)
        out.metadata = header.metadata
        out.buffer = buf
        out.report = _report(name, dev, "bounce" if not direct else _mode(t), len(out), nbytes, t,
                             time.perf_counter() - t0, direct)
        span_args.update(device_start=t.device_start, device_end=t.device_end, bytes=nbytes, mode=out.report.mode)
    return out


class TensorDict(dict[str, Any]):
    """name -> strata tensor in header order, plus `metadata` (the file's `__metadata__` or None) and
    `report` (a LoadReport)."""

    metadata: dict[str, str] | None
    report: LoadReport


def load_safetensors(path: str | os.PathLike[str], device: Any = "cuda", direct: bool = True) -> TensorDict:
    """Load a safetensors file as strata tensors (as `safetensors.torch.load_file` does for PyTorch).

    On "cuda" the file goes into one device allocation by the direct path (GPUDirect Storage's role:
    O_DIRECT reads straight into device memory) or, with direct=False, the bounce path (pinned host
    buffer + cudaMemcpy); each tensor views that allocation. On "cpu" it is read into host memory.

    Args:
        path: the file.
        device: "cuda", "cuda:N", "cpu", a device index, a strata.device or a strata.cuda.Device.
        direct: the direct path (True) or the bounce path (False), for "cuda".

    Returns:
        A TensorDict with `.metadata` and `.report` (bytes, host copies, modeled and wall time).

    Raises:
        SafetensorsError: the file is malformed or truncated, a subclass naming the problem (nothing is
            left allocated).
        OSError: the file cannot be opened or read.

    Example:
        >>> import os, tempfile, strata
        >>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
        >>> save_safetensors({"w": strata.arange(6.0).reshape(2, 3)}, path)  # doctest: +ELLIPSIS
        LoadReport(...)
        >>> sd = load_safetensors(path, device="cuda")
        >>> sd["w"].device, sd["w"].sum().item(), sd.report.host_copy_bytes
        (device(type='cuda', index=0), 15.0, 0)
    """
    t0 = time.perf_counter()
    if tensor_type.device_kind(device) == "cpu":
        arrays, meta = safetensors.load_file_with_metadata(path)
        out = TensorDict({n: tensor_type.wrap(a, None) for n, a in arrays.items()})
        size = os.path.getsize(path)
        nbytes = sum(a.nbytes for a in arrays.values())
        nvme = storage_model.nvme_read_seconds(size)
        out.metadata, out.report = meta, LoadReport(os.fspath(path), -1, "host", len(out), nbytes, size, nbytes, 1,
                                                    nvme, 0.0, 0.0, nvme, time.perf_counter() - t0)
        return out
    loaded = read_tensors(path, tensor_type.device_kind(device), direct)
    out = TensorDict({n: tensor_type.wrap(t.array, loaded.buffer) for n, t in loaded.items()})
    out.metadata, out.report = loaded.metadata, loaded.report
    return out


def save_safetensors(tensors: Mapping[str, Any], path: str | os.PathLike[str],
                     metadata: Mapping[str, str] | None = None, *, direct: bool = True) -> LoadReport:
    """Write arrays to a safetensors file (readable by the `safetensors` library); device arrays go
    from device memory to the file directly (GDS writes) or, with direct=False, through pinned memory.

    Args:
        tensors: name -> strata tensor (any device), DeviceArray, LoadedTensor, NumPy array, or (dtype
            name, array) to store an array's raw bytes under a dtype of the same item size (e.g. ("BF16",
            uint16 bits)).
        path: the file (created or truncated).
        metadata: optional string -> string map stored as `__metadata__`.
        direct: device arrays by the direct path (True) or the bounce path (False).

    Returns:
        A LoadReport of the write.

    Raises:
        SafetensorsError: a dtype the format cannot hold, a bad name or bad metadata (no file is written).
    """
    t0 = time.perf_counter()
    entries = sorted((_entry(n, v) for n, v in tensors.items()), key=lambda e: (-_WRITE_ORDER.index(e[1]), e[0]))
    header: dict[str, Any] = {}
    if metadata is not None:
        safetensors.serialize({}, metadata)  # validates the metadata map
        header[safetensors.METADATA_KEY] = dict(metadata)
    offset = 0
    for n, dname, shape, arr in entries:
        size = _nbytes(arr)
        header[n] = {"dtype": dname, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    data_start = 8 + len(text)
    name = os.fspath(path)
    transfers: list[DmaTransfer] = []
    host_bytes = 0
    dev = current_device()
    with trace.span("L3", "save_safetensors", file=name, direct=direct, bytes=offset), \
            StorageFile.open(path, writable=True, create=True) as sf:
        os.ftruncate(sf.fd, 0)
        os.pwrite(sf.fd, len(text).to_bytes(8, "little") + text, 0)
        for n, _, _, arr in entries:
            begin = header[n]["data_offsets"][0]
            if isinstance(arr, np.ndarray):
                os.pwrite(sf.fd, arr.tobytes(), data_start + begin)
                host_bytes += arr.nbytes
            elif arr.nbytes:
                dev = arr.device
                fn = write_from_device if direct else _bounce_write
                transfers.append(fn(dev.file, sf, arr.ptr, arr.nbytes, data_start + begin))
        os.ftruncate(sf.fd, data_start + offset)
    moved = sum(t.nbytes for t in transfers)
    buffered = sum(t.buffered_bytes for t in transfers)
    direct_bytes = sum(t.direct_bytes for t in transfers)
    modeled = sum(t.modeled_s for t in transfers)
    mode = "bounce" if not direct else "gds" if buffered == 0 else "compat" if direct_bytes == 0 else "mixed"
    spec = dev.spec
    return LoadReport(name, dev.index, mode, len(entries), offset, data_start + offset, buffered + host_bytes,
                      sum(t.requests for t in transfers),
                      moved / storage_model.DEFAULT_NVME.write_bandwidth,
                      moved / (storage_model.P2P_EFFICIENCY * spec.host_link[1]),
                      storage_model.host_memcpy_seconds(buffered), modeled, time.perf_counter() - t0)


# ------------------------------------------------------------------------------------------ helpers
def _header_of_fd(fd: int) -> FileHeader:
    size = os.fstat(fd).st_size
    if size == 0:
        entries, meta, start = safetensors.read_header(b"")
    else:
        mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        try:
            entries, meta, start = safetensors.read_header(memoryview(mm))
        finally:
            del mm  # unmapped when the last view goes (an exception's traceback may still hold one)
    return FileHeader(entries, meta, start, size)


def _device(device: str | int | Device) -> Device:
    if isinstance(device, Device):
        return device
    if isinstance(device, int) and not isinstance(device, bool):
        return Device(device)
    if isinstance(device, str):
        if device == "cuda":
            return current_device()
        if device.startswith("cuda:") and device[5:].isdigit():
            return Device(int(device[5:]))
    raise ValueError(f"[read_tensors] device must be 'cuda', 'cuda:N', an index or a Device, got {device!r} "
                     "(for host arrays use strata.storage.safetensors.load_file)")


def _mode(t: DmaTransfer) -> str:
    return "gds" if t.buffered_bytes == 0 else "compat" if t.direct_bytes == 0 else "mixed"


def _report(name: str, dev: Device, mode: str, count: int, nbytes: int, t: DmaTransfer, wall: float,
            direct: bool) -> LoadReport:
    spec = dev.spec
    nvme = storage_model.nvme_read_seconds(t.nbytes, requests=t.requests)
    if direct:
        pcie = t.direct_bytes / (storage_model.P2P_EFFICIENCY * spec.host_link[1])
        host = storage_model.host_memcpy_seconds(t.buffered_bytes)
    else:
        pcie = copy_seconds(spec, "HtoD", t.nbytes, pinned=True)
        host = storage_model.host_memcpy_seconds(t.nbytes)
    return LoadReport(name, dev.index, mode, count, nbytes, t.nbytes, t.buffered_bytes, t.requests, nvme, pcie, host,
                      t.modeled_s, wall)


def _entry(name: str, value: Any) -> tuple[str, str, tuple[int, ...], DeviceArray | np.ndarray]:
    if not isinstance(name, str) or name == safetensors.METADATA_KEY:
        raise safetensors.InvalidHeaderError(f"[save_safetensors] invalid tensor name {name!r}")
    raw: str | None = None
    if isinstance(value, tuple):
        raw, value = value
        if raw not in safetensors.DTYPES:
            raise safetensors.InvalidDtypeError(f"[save_safetensors] tensor {name!r}: unknown dtype {raw!r}")
    value = tensor_type.unwrap(value)
    if isinstance(value, LoadedTensor):
        raw, value = raw or value.dtype, value.array
    if isinstance(value, DeviceArray):
        arr: DeviceArray | np.ndarray = value
        value._check_live("save_safetensors")
    else:
        arr = np.ascontiguousarray(value)
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
    dt = arr.dtype
    if raw is None:
        key = dt.newbyteorder("=") if dt.byteorder in "<>" else dt
        raw = _NAMES.get(key)
        if raw is None:
            raise safetensors.InvalidDtypeError(f"[save_safetensors] tensor {name!r}: dtype {dt} has no safetensors "
                                                f"name (supported: {', '.join(safetensors.DTYPES)})")
    elif safetensors.DTYPES[raw].itemsize != dt.itemsize:
        raise safetensors.InvalidDtypeError(f"[save_safetensors] tensor {name!r}: dtype {raw} needs "
                                            f"{safetensors.DTYPES[raw].itemsize}-byte elements, got {dt}")
    return name, raw, tuple(arr.shape), arr


def _nbytes(arr: DeviceArray | np.ndarray) -> int:
    return int(arr.nbytes)


def _bounce_write(dev: Any, sf: StorageFile, address: int, size: int, file_offset: int) -> DmaTransfer:
    return bounce_write(dev, sf.fd, address, size, file_offset)


__all__ = ["FileHeader", "LoadReport", "LoadedTensor", "LoadedTensors", "TensorDict", "load_safetensors",
           "read_file_header", "read_tensors", "save_safetensors"]
