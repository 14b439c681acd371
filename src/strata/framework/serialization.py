"""`strata.save` / `strata.load`: state dicts in the safetensors format (strata.storage.safetensors), so the
`safetensors` library, and PyTorch users through `safetensors.torch`, read what strata writes and back;
and, with `save(..., format="torch")` (what `torch.save` does under `strata run --as-torch`), PyTorch's own
zip checkpoint format (strata.framework.checkpoint_zip), which holds any picklable object (whole modules,
NumPy arrays) and which real PyTorch loads. `load` tells the formats apart by the file's first bytes.

A flat dict of names to tensors (a module's `state_dict()`) is written as is: one safetensors tensor per
name. Any other object made of dicts (str or int keys), lists, tuples, tensors, numbers, strings, bools and
None (an optimizer's `state_dict()`, a checkpoint {"model": ..., "optim": ..., "epoch": 3}) is flattened:
each tensor is stored under its dotted path ("optim.state.0.exp_avg") and the structure, with the
non-tensor values, goes to `__metadata__["strata.structure"]` as JSON. The devices of tensors not on
"cpu" go to `__metadata__["strata.devices"]`, so `load` puts them back, as torch.load does, unless
`map_location` says otherwise. A file path whose tensors all go to one "cuda" device is read straight
into device memory (strata.storage.load_safetensors, the direct path: no host staging); otherwise the
file is read on the host and each tensor copied once.

Example:
    >>> import io, strata
    >>> buf = io.BytesIO()
    >>> strata.save({"w": strata.ones(2, 3), "step": strata.tensor(7)}, buf)
    >>> _ = buf.seek(0)
    >>> sd = strata.load(buf)
    >>> sorted(sd), sd["w"].shape, sd["step"].item()
    (['step', 'w'], strata.Size([2, 3]), 7)
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

from strata import storage
from strata.cuda import DeviceArray
from strata.framework import checkpoint_zip, ops
from strata.framework import dtypes as dt
from strata.framework.checkpoint_zip import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals
from strata.framework.device import CPU, canonical, device
from strata.framework.storage import Storage
from strata.framework.tensor import Tensor, contiguous_strides
from strata.storage import safetensors

STRUCTURE_KEY = "strata.structure"
DEVICES_KEY = "strata.devices"

FileLike = str | os.PathLike[str] | IO[bytes]


def save(obj: Any, f: FileLike, pickle_module: Any = None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True, _disable_byteorder_record: bool = False, *,
         metadata: Mapping[str, str] | None = None, format: str = "safetensors") -> None:  # noqa: A002
    """Write `obj` (a state dict, an optimizer state dict, or a nest of them) to a path or a binary file
    object, in the safetensors format; or, with format="torch", any picklable object in PyTorch's zip
    checkpoint format.

    Args:
        obj: a dict of names to tensors, or a nest of dicts/lists/tuples of tensors and plain values
            (format="torch": anything picklable).
        f: a file path or a writable binary file object.
        pickle_module, pickle_protocol, _use_new_zipfile_serialization, _disable_byteorder_record: torch.save's
            arguments; only pickle_protocol is used (format="torch"); the legacy format is not written.
        metadata: extra strings for the file's `__metadata__` (keys starting with "strata." are reserved).
        format: "safetensors" (default) or "torch".

    Raises:
        TypeError: a value that cannot be stored (not a tensor, number, string, bool, None or container),
            or a dict key that is neither str nor int.
        ValueError: two tensors flattening to the same name, a reserved metadata key, an unknown format,
            metadata with format="torch".
        NotImplementedError: _use_new_zipfile_serialization=False (PyTorch's legacy format).
    """
    if format == "torch":
        if metadata:
            raise ValueError("strata.save: metadata is a safetensors feature; format='torch' has none")
        if not _use_new_zipfile_serialization:
            raise NotImplementedError("strata.save: PyTorch's legacy (pre-1.6) format is not written; use the zip "
                                      "format (_use_new_zipfile_serialization=True)")
        checkpoint_zip.save(obj, f, pickle_protocol)
        return
    if format != "safetensors":
        raise ValueError(f"strata.save: format must be 'safetensors' or 'torch', got {format!r}")
    tensors: dict[str, Tensor] = {}
    meta = dict(metadata or {})
    if any(k.startswith("strata.") for k in meta):
        raise ValueError("strata.save: metadata keys starting with 'strata.' are reserved")
    flat = isinstance(obj, Mapping) and all(isinstance(k, str) and isinstance(v, Tensor) for k, v in obj.items())
    if flat:
        tensors = dict(obj)
    else:
        meta[STRUCTURE_KEY] = json.dumps(_encode(obj, "", tensors), separators=(",", ":"))
    devices = {k: str(t.device) for k, t in tensors.items() if t.device.type != "cpu"}
    if devices:
        meta[DEVICES_KEY] = json.dumps(devices, separators=(",", ":"))
    arrays = {k: t.detach()._to_numpy() for k, t in tensors.items()}
    safetensors.save_file(arrays, f, meta or None)


def load(f: FileLike, map_location: Any = None, pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Read what `save` wrote: a safetensors file (a dict of names to tensors, or strata's nest), or a
    PyTorch zip checkpoint (written by strata's format="torch" or by torch.save).

    Args:
        f: a file path or a readable binary file object.
        map_location: where tensors go: None (back to the device each was saved from; "cpu" for files from
            elsewhere), a device or device string, a dict mapping saved device strings to devices, or a
            callable (tensor on "cpu", saved location string) -> tensor.
        weights_only: for zip checkpoints, restrict unpickling to tensors, containers and plain values (the
            default, as PyTorch's since 2.6); False unpickles anything (trusted files only). Safetensors
            files never run code either way.
        pickle_module, mmap, pickle_load_args: accepted for torch.load compatibility; the file is read at once.

    Returns:
        The saved object: a dict of names to tensors, or the saved nest.

    Raises:
        strata.storage.safetensors.SafetensorsError: a malformed file (a ValueError; the subclass names the
            problem).
        ValueError: a `strata.structure` metadata entry that does not match the file's tensors.
        checkpoint_zip.WeightsOnlyUnpicklingError: a zip checkpoint naming a disallowed global under
            weights_only (a pickle.UnpicklingError).
        checkpoint_zip.CheckpointFormatError: a malformed zip checkpoint (a ValueError).
    """
    if checkpoint_zip.is_checkpoint_zip(f):
        return checkpoint_zip.load(f, lambda a, loc: _place(a, loc, map_location), weights_only is not False)
    targets = _targets(f, map_location)
    cuda_targets = {d for d in targets.values() if d.type == "cuda"}
    if len(cuda_targets) == 1:  # straight from the file into device memory (strata.storage's direct path)
        loaded = storage.load_safetensors(f, device=cuda_targets.pop(), direct=True)  # type: ignore[arg-type]
        tensors: dict[str, Tensor] = {k: t if targets[k].type == "cuda" else t.cpu() for k, t in loaded.items()}
        meta = loaded.metadata or {}
    else:
        arrays, file_meta = safetensors.load_file_with_metadata(f)
        meta = file_meta or {}
        saved_dev: dict[str, str] = json.loads(meta[DEVICES_KEY]) if DEVICES_KEY in meta else {}
        tensors = {k: _place(a, saved_dev.get(k, "cpu"), map_location) for k, a in arrays.items()}
    if STRUCTURE_KEY not in meta:
        return tensors
    used: set[str] = set()
    out = _decode(json.loads(meta[STRUCTURE_KEY]), tensors, used)
    if used != set(tensors):
        raise ValueError(f"strata.load: the file's tensors {sorted(set(tensors) - used)} are not in its structure")
    return out


def _tensor_from_array(array: DeviceArray | np.ndarray, owner: DeviceArray | None) -> Tensor:
    """A device array as a "cuda" tensor viewing its memory (no copy), or a host array as a "cpu" tensor."""
    d = dt.from_numpy_dtype(array.dtype)
    if isinstance(array, np.ndarray):
        return ops.from_host(array, d, CPU)
    dev = device("cuda", array.device.index)
    shape = tuple(array.shape)
    return Tensor(Storage.borrow(array, dev, owner), shape, contiguous_strides(shape), 0, d)


def _array_from_tensor(t: Tensor) -> DeviceArray | np.ndarray:
    """A tensor's data for strata.storage to write: a host array, or a DeviceArray view of it on "cuda"."""
    t = t.detach()
    return t._to_numpy() if t.device == CPU else ops.device_array(t.contiguous())


storage.register_tensor_type(Tensor, _tensor_from_array, _array_from_tensor)


def _targets(f: FileLike, map_location: Any) -> dict[str, device]:
    """Where each tensor of file `f` goes, when `f` is a path; {} for a file object or a callable
    map_location (those are read on the host). A file whose tensors go to one "cuda" device (and maybe
    the host: an optimizer's step counts) is read by the direct path."""
    if not isinstance(f, str | os.PathLike) or callable(map_location) and not isinstance(map_location, Mapping):
        return {}
    header = storage.read_file_header(f)
    meta = header.metadata or {}
    saved_dev: dict[str, str] = json.loads(meta[DEVICES_KEY]) if DEVICES_KEY in meta else {}
    return {k: canonical(_target(saved_dev.get(k, "cpu"), map_location)) for k in header.entries}


def _target(location: str, map_location: Any) -> Any:
    """Where map_location (None, a mapping, a device or str) sends tensors saved at `location`."""
    if map_location is None:
        return location
    if isinstance(map_location, Mapping):
        return map_location.get(location, location)
    if isinstance(map_location, str | device):
        return map_location
    raise TypeError(f"strata.load: map_location must be None, a device, a str, a dict or a callable, got "
                    f"{type(map_location).__name__}")


def _place(a: np.ndarray, location: str, map_location: Any) -> Tensor:
    """The host array as a tensor where map_location sends `location` (one host-to-device copy)."""
    t = ops.from_host(a, dt.from_numpy_dtype(a.dtype), CPU)
    if callable(map_location) and not isinstance(map_location, Mapping):
        res = map_location(t, location)
        if not isinstance(res, Tensor):
            raise TypeError(f"strata.load: map_location returned {type(res).__name__}, expected a Tensor")
        return res
    dev = canonical(_target(location, map_location))
    return t if dev == CPU else ops.from_host(a, t.dtype, dev)


def _encode(obj: Any, path: str, tensors: dict[str, Tensor]) -> Any:
    """The JSON structure of obj; tensors are collected under their dotted path."""
    if isinstance(obj, Tensor):
        if path in tensors:
            raise ValueError(f"strata.save: two tensors flatten to the name {path!r}")
        tensors[path] = obj
        return {"T": path}
    if isinstance(obj, Mapping):
        items = []
        for k, v in obj.items():
            if not isinstance(k, str | int) or isinstance(k, bool):
                raise TypeError(f"strata.save: dict keys must be str or int, got {type(k).__name__}")
            items.append([k, _encode(v, f"{path}.{k}" if path else str(k), tensors)])
        return {"D": items}
    if isinstance(obj, list | tuple):
        kind = "L" if isinstance(obj, list) else "U"
        return {kind: [_encode(v, f"{path}.{i}" if path else str(i), tensors) for i, v in enumerate(obj)]}
    if obj is None or isinstance(obj, bool | int | float | str):
        return {"V": obj}
    if isinstance(obj, np.integer | np.floating | np.bool_):
        return {"V": obj.item()}
    if isinstance(obj, dt.dtype):
        return {"dtype": obj.name}
    raise TypeError(f"strata.save: cannot store a value of type {type(obj).__name__} (at {path or 'the top'}) in "
                    "safetensors; save(..., format='torch') writes PyTorch's checkpoint format, which holds any "
                    "picklable object")


def _decode(node: Any, tensors: Mapping[str, Tensor], used: set[str]) -> Any:
    if not isinstance(node, dict) or len(node) != 1:
        raise ValueError(f"strata.load: malformed structure entry {node!r}")
    (kind, val), = node.items()
    if kind == "T":
        if val not in tensors:
            raise ValueError(f"strata.load: the structure names tensor {val!r}, which the file does not hold")
        used.add(val)
        return tensors[val]
    if kind == "D":
        return {k: _decode(v, tensors, used) for k, v in val}
    if kind == "L":
        return [_decode(v, tensors, used) for v in val]
    if kind == "U":
        return tuple(_decode(v, tensors, used) for v in val)
    if kind == "V":
        return val
    if kind == "dtype":
        return dt.as_dtype(val)
    raise ValueError(f"strata.load: malformed structure entry {node!r}")


__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]
