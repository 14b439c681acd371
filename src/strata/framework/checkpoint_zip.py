"""PyTorch's own checkpoint format (what `torch.save` writes since 1.6), read and written by strata: a
zip archive (stored, not compressed) holding

- `archive/data.pkl`: the object, pickled (protocol 2) with each tensor as a call to
  `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)` (parameters
  wrapped in `torch._utils._rebuild_parameter`), each storage a persistent id
  `("storage", torch.FloatStorage, key, location, numel)`;
- `archive/data/<key>`: the storage's raw bytes, 64-byte aligned in the archive;
- `archive/byteorder` ("little"), `archive/version` ("3"), `archive/.format_version` ("1"),
  `archive/.storage_alignment` ("64").

strata writes the `torch.*` names into the pickle as text, so real PyTorch loads the file with its own
classes, and strata maps them back to its own when it loads. Each tensor is saved with its own storage
(PyTorch keeps views of one storage as views; strata writes each view's data once per tensor).

Loading is restricted by default (`weights_only=True`, PyTorch's default since 2.6): only tensors,
containers, numbers, strings, dtypes, devices and the names added with `add_safe_globals` may appear;
anything else raises `WeightsOnlyUnpicklingError` naming the global. `weights_only=False` unpickles
anything (whole modules, NumPy arrays, user classes): only for files you trust, as with PyTorch.

Example:
    >>> import io, strata
    >>> from strata.framework import checkpoint_zip
    >>> buf = io.BytesIO()
    >>> checkpoint_zip.save({"w": strata.ones(2, 3), "step": 7}, buf)
    >>> _ = buf.seek(0)
    >>> out = checkpoint_zip.load(buf)
    >>> out["w"].shape, out["step"]
    (strata.Size([2, 3]), 7)
"""

from __future__ import annotations

import _compat_pickle
import collections
import functools
import io
import os
import pickle
import struct
import sys
import zipfile
from collections.abc import Callable, Iterable
from typing import IO, Any

import numpy as np

from strata.framework import dtypes as dt
from strata.framework import ops
from strata.framework.device import CPU, device
from strata.framework.nn.parameter import Parameter
from strata.framework.tensor import Size, Tensor

FileLike = str | os.PathLike[str] | IO[bytes]
Place = Callable[[np.ndarray, str], Tensor]

ALIGNMENT = 64
_ZIP_MAGIC = b"PK\x03\x04"

# dtype name -> PyTorch's legacy storage class name (what the pickle names)
_STORAGE_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                  "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
                  "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}
_STORAGE_DTYPES = {v: k for k, v in _STORAGE_NAMES.items()}


class WeightsOnlyUnpicklingError(pickle.UnpicklingError):
    """`load(weights_only=True)` met a global outside the allowlist (a class or function the file would
    call). Load with weights_only=False only if the file is trusted, or allow the name with
    `add_safe_globals`."""


class CheckpointFormatError(ValueError):
    """The file is not a PyTorch zip checkpoint strata can read (not a zip, no data.pkl, a missing
    storage record, the pre-1.6 legacy format)."""


# ------------------------------------------------------------------------------------------ names
class _TorchName:
    """A `torch.*` global written into the pickle by name (strata has no such object to import)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __reduce__(self) -> str:
        return self.name  # pickle then calls save_global, which the pickler below writes by name

    def __call__(self, *args: Any) -> Any:  # pickle asks a reduce function to be callable; never called
        raise TypeError(f"{self.module}.{self.name} is a name written into a checkpoint, not callable in strata")

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


_REBUILD_TENSOR = _TorchName("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchName("torch._utils", "_rebuild_parameter")
_TORCH_DEVICE = _TorchName("torch", "device")
_TORCH_SIZE = _TorchName("torch", "Size")
_ORDERED_DICT = collections.OrderedDict


_PurePickler: Any = pickle._Pickler  # the Python pickler: its save_global can be overridden


class _Pickler(_PurePickler):
    """The pure-Python pickler (its save_global can be overridden), writing strata's tensors, dtypes,
    devices and sizes as PyTorch's pickles name them."""

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: list[tuple[str, Tensor]] = []

    def save_global(self, obj: Any, name: str | None = None) -> None:
        if isinstance(obj, dt.dtype):  # torch.float32 and friends
            obj = _TorchName("torch", obj.name)
        if isinstance(obj, _TorchName):
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, dt.dtype):
            return obj.name  # a string: pickle writes the object as a global (save_global above)
        if isinstance(obj, device):
            return (_TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        if isinstance(obj, Size):
            return (_TORCH_SIZE, (tuple(int(s) for s in obj),))
        return NotImplemented

    def _reduce_tensor(self, t: Tensor) -> Any:
        data = t.detach()
        if isinstance(t, Parameter):  # the plain tensor inside is pickled (and reduced) on its own
            return (_REBUILD_PARAMETER, (data, t.requires_grad, _ORDERED_DICT()))
        key = str(len(self.storages))
        self.storages.append((key, data))
        numel = data.numel()
        storage = ("storage", _TorchName("torch", _STORAGE_NAMES[data.dtype.name]), key, str(data.device), numel)
        shape = tuple(int(s) for s in data.shape)
        stride = tuple(int(s) for s in _contiguous_strides(shape))
        return (_REBUILD_TENSOR, (_Persistent(storage), 0, shape, stride, t.requires_grad, _ORDERED_DICT()))

    def persistent_id(self, obj: Any) -> Any:
        return obj.pid if isinstance(obj, _Persistent) else None


class _Persistent:
    """A persistent id (the storage reference) inside the pickle."""

    def __init__(self, pid: tuple[Any, ...]) -> None:
        self.pid = pid


def _contiguous_strides(shape: tuple[int, ...]) -> list[int]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= max(s, 1)
    return out[::-1]


# ------------------------------------------------------------------------------------------ save
def save(obj: Any, f: FileLike, pickle_protocol: int = 2) -> None:
    """Write `obj` in PyTorch's zip checkpoint format to a path or a writable binary file object.

    Raises:
        pickle.PicklingError, TypeError: a value pickle cannot store (a lambda, an open file, ...).
    """
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    own = isinstance(f, str | os.PathLike)
    fh: IO[bytes] = open(f, "wb") if isinstance(f, str | os.PathLike) else f  # noqa: SIM115 - closed below
    try:
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
            _record(zf, "archive/data.pkl", buf.getvalue())
            _record(zf, "archive/.format_version", b"1")
            _record(zf, "archive/.storage_alignment", str(ALIGNMENT).encode())
            _record(zf, "archive/byteorder", sys.byteorder.encode())
            for key, t in pickler.storages:
                _record(zf, f"archive/data/{key}", np.ascontiguousarray(t._to_numpy()).tobytes())
            _record(zf, "archive/version", b"3\n")
    finally:
        if own:
            fh.close()


def _record(zf: zipfile.ZipFile, name: str, data: bytes) -> None:
    """One stored record whose data starts at a multiple of ALIGNMENT (padding in an 'FB' extra field,
    as PyTorch's writer pads)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = zf.start_dir
    pad = (-(start + 30 + len(name.encode()) + 4)) % ALIGNMENT
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    zf.writestr(info, data)


# ------------------------------------------------------------------------------------------ load
_SAFE: dict[str, Any] = {}  # "module.name" -> object, added with add_safe_globals


def add_safe_globals(safe_globals: Iterable[Any]) -> None:
    """Allow these classes/functions (or (object, "module.name") pairs) in weights_only loads."""
    for g in safe_globals:
        obj, name = g if isinstance(g, tuple) else (g, f"{g.__module__}.{g.__qualname__}")
        _SAFE[name] = obj


def get_safe_globals() -> list[Any]:
    """The objects added with add_safe_globals."""
    return list(_SAFE.values())


def clear_safe_globals() -> None:
    """Forget every add_safe_globals entry."""
    _SAFE.clear()


class safe_globals:  # noqa: N801 - PyTorch's name
    """Context manager: add_safe_globals for the `with` body only."""

    def __init__(self, globals_: Iterable[Any]) -> None:
        self.globals = list(globals_)

    def __enter__(self) -> None:
        self._saved = dict(_SAFE)
        add_safe_globals(self.globals)

    def __exit__(self, *exc: object) -> None:
        _SAFE.clear()
        _SAFE.update(self._saved)


class _Storage:
    """A loaded storage: its elements as a host array, and where it was saved."""

    def __init__(self, array: np.ndarray, location: str) -> None:
        self.array, self.location = array, location


class _StorageType:
    def __init__(self, dtype: dt.dtype) -> None:
        self.dtype = dtype


def _builtins() -> dict[str, Any]:
    return {"collections.OrderedDict": collections.OrderedDict, "collections.Counter": collections.Counter,
            "builtins.set": set, "builtins.frozenset": frozenset, "builtins.bytearray": bytearray,
            "builtins.complex": complex, "builtins.slice": slice, "_codecs.encode": _codecs_encode}


def _codecs_encode(text: str, encoding: str = "utf-8") -> bytes:
    return text.encode(encoding)


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: IO[bytes], zf: zipfile.ZipFile, prefix: str, place: Place, weights_only: bool,
                 byteorder: str) -> None:
        super().__init__(file)
        self.zf, self.prefix, self.place, self.weights_only = zf, prefix, place, weights_only
        self.byteorder = byteorder
        self.loaded: dict[str, _Storage] = {}

    def find_class(self, module: str, name: str) -> Any:
        # protocol-2 pickles name Python 2's modules (__builtin__.set): map them as pickle's own find_class does
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        known = _torch_global(module, name)
        if known is _rebuild_tensor_v2:
            return functools.partial(_rebuild_tensor_v2, self.place)
        if known is not None:
            return known
        if full in _builtins():
            return _builtins()[full]
        if full in _SAFE:
            return _SAFE[full]
        if self.weights_only:
            raise WeightsOnlyUnpicklingError(
                f"Weights only load failed. Unsupported global: GLOBAL {full} was not an allowed global by "
                f"default. Load with weights_only=False if the file is trusted (it can run arbitrary code), or "
                f"allow the name with strata's (torch.serialization's) add_safe_globals([{name}]).")
        if module.startswith("torch.nn.modules") or module == "torch.nn":
            from strata.framework import nn  # NOTE: same layer; only whole-module loads need it

            if hasattr(nn, name):
                return getattr(nn, name)
        if module.startswith("torch.optim"):
            from strata.framework import optim  # NOTE: as above

            if hasattr(optim, name):
                return getattr(optim, name)
        if module == "torch" or module.startswith("torch."):
            raise CheckpointFormatError(f"strata.load: the file uses {full}, which strata does not provide")
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage":
            raise pickle.UnpicklingError(f"strata.load: unknown persistent id {pid!r} in the checkpoint")
        _, stype, key, location, _numel = pid
        if key not in self.loaded:
            dtype = stype.dtype if isinstance(stype, _StorageType) else dt.uint8
            name = f"{self.prefix}data/{key}"
            try:
                raw = self.zf.read(name)
            except KeyError:
                raise CheckpointFormatError(f"strata.load: the checkpoint has no record {name!r} for storage "
                                            f"{key}") from None
            arr = np.frombuffer(raw, dtype=dtype.np)
            if self.byteorder != sys.byteorder:
                arr = arr.byteswap()
            self.loaded[key] = _Storage(arr, str(location))
        return self.loaded[key]


def _rebuild_tensor_v2(place: Place, storage: _Storage, storage_offset: int, size: tuple[int, ...],
                       stride: tuple[int, ...], requires_grad: bool = False, backward_hooks: Any = None,
                       metadata: Any = None) -> Tensor:
    arr = storage.array
    size = tuple(int(s) for s in size)
    if int(np.prod(size)) == 0:
        view = np.empty(size, arr.dtype)
    else:
        last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride, strict=True))
        if storage_offset < 0 or last >= arr.size:
            raise CheckpointFormatError(f"strata.load: a tensor of size {list(size)} and stride {list(stride)} at "
                                        f"offset {storage_offset} reaches past its storage of {arr.size} elements")
        view = np.lib.stride_tricks.as_strided(arr[storage_offset:], size,
                                               tuple(s * arr.itemsize for s in stride))
    t = place(np.array(view, copy=True), storage.location)  # a writable copy: the record's bytes are read-only
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data: Tensor, requires_grad: bool, backward_hooks: Any = None) -> Parameter:
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data: Tensor, requires_grad: bool, backward_hooks: Any, state: Any) -> Parameter:
    return Parameter(data, requires_grad)


def _rebuild_from_type_v2(func: Callable[..., Any], new_type: Any, args: tuple[Any, ...], state: Any) -> Any:
    return func(*args)


def _torch_device(kind: str, index: int | None = None) -> device:
    return device(kind) if index is None else device(kind, index)


def _torch_global(module: str, name: str) -> Any:
    """The strata object standing for a torch global a checkpoint names (None: not a torch tensor name)."""
    if module == "torch._utils":
        return {"_rebuild_tensor_v2": _rebuild_tensor_v2, "_rebuild_parameter": _rebuild_parameter,
                "_rebuild_parameter_with_state": _rebuild_parameter_with_state}.get(name)
    if module == "torch._tensor" and name == "_rebuild_from_type_v2":
        return _rebuild_from_type_v2
    if module == "torch.nn.parameter" and name == "Parameter":
        return Parameter
    if module == "torch":
        if name in _STORAGE_DTYPES:
            return _StorageType(dt.as_dtype(_STORAGE_DTYPES[name]))
        if name == "device":
            return _torch_device
        if name == "Size":
            return Size
        if name == "Tensor":
            return Tensor
        try:
            return dt.as_dtype(name)
        except (TypeError, ValueError, KeyError, AttributeError):
            return None
    return None


def is_checkpoint_zip(f: FileLike) -> bool:
    """True when `f` starts with a zip header (PyTorch's format), False otherwise; file objects are
    rewound to where they were."""
    if isinstance(f, str | os.PathLike):
        with open(f, "rb") as fh:
            return fh.read(4) == _ZIP_MAGIC
    pos = f.tell()
    head = f.read(4)
    f.seek(pos)
    return head == _ZIP_MAGIC


def load(f: FileLike, place: Place | None = None, weights_only: bool = True) -> Any:
    """Read a PyTorch zip checkpoint (written by strata or by PyTorch).

    Args:
        f: a path or a readable, seekable binary file object.
        place: builds each tensor from its host array and saved location ("cpu", "cuda:0"); default: on
            the host.
        weights_only: restrict the pickle to tensors, containers and plain values (see the module
            docstring).

    Raises:
        CheckpointFormatError: not a zip checkpoint, or a malformed one.
        WeightsOnlyUnpicklingError: weights_only and the pickle names a global outside the allowlist.
    """
    try:
        zf = zipfile.ZipFile(f)
    except zipfile.BadZipFile as e:
        raise CheckpointFormatError(f"strata.load: not a PyTorch zip checkpoint ({e}); the pre-1.6 legacy "
                                    "format is not supported") from None
    with zf:
        pkl = [n for n in zf.namelist() if n.endswith("data.pkl") and n.count("/") == 1]
        if not pkl:
            raise CheckpointFormatError("strata.load: the zip archive has no <name>/data.pkl record; it is not a "
                                        "PyTorch checkpoint")
        prefix = pkl[0][: -len("data.pkl")]
        byteorder = zf.read(prefix + "byteorder").decode() if prefix + "byteorder" in zf.namelist() else "little"
        if byteorder not in ("little", "big"):
            raise CheckpointFormatError(f"strata.load: unknown byteorder record {byteorder!r}")
        return _Unpickler(io.BytesIO(zf.read(pkl[0])), zf, prefix, place or _host_tensor, weights_only,
                          byteorder).load()


def _host_tensor(a: np.ndarray, location: str) -> Tensor:
    return ops.from_host(a, dt.from_numpy_dtype(a.dtype), CPU)


__all__ = ["CheckpointFormatError", "WeightsOnlyUnpicklingError", "add_safe_globals", "clear_safe_globals",
           "get_safe_globals", "is_checkpoint_zip", "load", "safe_globals", "save"]
