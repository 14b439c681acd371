"""The safetensors file format, as huggingface/safetensors defines it: the source of truth for how
strata reads and writes tensor files. Pure format: bytes <-> a dict of NumPy arrays (plus the optional
string-to-string `__metadata__`); no device, no framework.

Layout: an 8-byte little-endian u64 N, then N bytes of UTF-8 JSON starting with `{` (space-padded),
`{"NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [BEGIN, END]}, ..., "__metadata__": {...}}`,
then the byte buffer; offsets are relative to the buffer, contiguous from 0 with no hole or overlap,
and cover it exactly. Data is little-endian, row-major. Every violation raises a subclass of
`SafetensorsError(ValueError)` naming the tensor and the problem.

Example:
    >>> import numpy as np
    >>> from strata.storage import safetensors
    >>> blob = safetensors.serialize({"w": np.arange(6, dtype=np.float32).reshape(2, 3)}, {"step": "3"})
    >>> blob[:8], blob[8:9]
    (b'X\\x00\\x00\\x00\\x00\\x00\\x00\\x00', b'{')
    >>> tensors, meta = safetensors.deserialize_with_metadata(blob)
    >>> tensors["w"].tolist(), meta
    ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], {'step': '3'})
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from collections.abc import Mapping
from typing import IO, Any

import numpy as np

try:  # bfloat16 as a NumPy dtype; without it BF16 tensors come back as their raw uint16 bits
    import ml_dtypes

    _BF16: np.dtype = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a core dependency today
    _BF16 = np.dtype(np.uint16)

MAX_HEADER_SIZE = 100_000_000  # as the reference implementation's MAX_HEADER_SIZE
METADATA_KEY = "__metadata__"

# safetensors dtype name -> NumPy dtype (little-endian); the ten dtypes strata's tensors have
DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": _BF16,
    "I64": np.dtype("<i8"), "I32": np.dtype("<i4"), "I16": np.dtype("<i2"), "I8": np.dtype("i1"),
    "U8": np.dtype("u1"), "BOOL": np.dtype("?"),
}
# the reference writer orders tensors by this dtype order (its enum's, by increasing alignment), descending
_ORDER = {n: i for i, n in enumerate(["BOOL", "U8", "I8", "I16", "F16", "BF16", "I32", "F32", "F64", "I64"])}
_NAMES: dict[np.dtype, str] = {d.newbyteorder("="): n for n, d in DTYPES.items() if n != "BF16" or d != np.uint16}


class SafetensorsError(ValueError):
    """A safetensors buffer or file is malformed, or a tensor cannot be written in the format."""


class HeaderTooSmallError(SafetensorsError):
    """Fewer than the 8 bytes of the header length."""


class HeaderTooLargeError(SafetensorsError):
    """The header length exceeds MAX_HEADER_SIZE."""


class InvalidHeaderLengthError(SafetensorsError):
    """The header length points past the end of the buffer."""


class InvalidHeaderError(SafetensorsError):
    """The header is not UTF-8, does not start with '{', is not valid JSON, has a duplicate key, or an
    entry is not a {dtype, shape, data_offsets} object."""


class InvalidMetadataError(SafetensorsError):
    """`__metadata__` is not a map of strings to strings."""


class InvalidDtypeError(SafetensorsError):
    """An unknown or unsupported dtype name, or an array dtype the format cannot hold."""


class InvalidShapeError(SafetensorsError):
    """A shape that is not a list of non-negative integers."""


class InvalidOffsetError(SafetensorsError):
    """data_offsets malformed, out of order, leaving a hole, overlapping, or past the buffer."""


class TensorSizeMismatchError(SafetensorsError):
    """END - BEGIN differs from prod(shape) * itemsize."""


class IncompleteBufferError(SafetensorsError):
    """The tensors do not cover the byte buffer exactly (bytes missing or left over)."""


# ----------------------------------------------------------------------------------------- writing
TensorLike = np.ndarray | tuple[str, np.ndarray]


def serialize(tensors: Mapping[str, TensorLike], metadata: Mapping[str, str] | None = None) -> bytes:
    """The safetensors bytes of `tensors`.

    Args:
        tensors: name -> ndarray (one of the DTYPES), or name -> (dtype name, ndarray) to write an array's
            raw bytes under that name (e.g. ("BF16", bits_as_uint16)).
        metadata: optional string -> string map stored as `__metadata__`.

    Returns:
        The file contents, byte for byte what the reference writer produces: tensors ordered by decreasing
        dtype (alignment) then name, the header padded with spaces to a multiple of 8.

    Raises:
        InvalidDtypeError: an array dtype with no safetensors name, or a raw dtype name that is unknown or
            whose itemsize differs from the array's.
        InvalidMetadataError: metadata with a non-string key or value.
        InvalidHeaderError: a tensor named `__metadata__` or a non-string name.
    """
    entries: list[tuple[str, str, np.ndarray]] = []
    for name, value in tensors.items():
        if not isinstance(name, str) or name == METADATA_KEY:
            raise InvalidHeaderError(f"[safetensors] invalid tensor name {name!r}")
        entries.append((name, *_dtype_and_array(name, value)))
    entries.sort(key=lambda e: (-_ORDER[e[1]], e[0]))
    header: dict[str, Any] = {}
    if metadata is not None:
        _check_metadata(metadata)
        header[METADATA_KEY] = dict(metadata)
    offset = 0
    for name, dname, a in entries:
        header[name] = {"dtype": dname, "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
        offset += a.nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return b"".join([struct.pack("<Q", len(text)), text, *(a.tobytes() for _, _, a in entries)])


def save_file(tensors: Mapping[str, TensorLike], filename: str | os.PathLike[str] | IO[bytes],
              metadata: Mapping[str, str] | None = None) -> None:
    """Write `tensors` (see `serialize`) to a path or a binary file object."""
    blob = serialize(tensors, metadata)
    if isinstance(filename, str | os.PathLike):
        with open(filename, "wb") as f:
            f.write(blob)
    else:
        filename.write(blob)


def _dtype_and_array(name: str, value: TensorLike) -> tuple[str, np.ndarray]:
    if isinstance(value, tuple):
        dname, a = value
        if dname not in DTYPES:
            raise InvalidDtypeError(f"[safetensors] tensor {name!r}: unknown dtype {dname!r}")
        a = _c_order(np.asarray(a))
        if a.dtype.itemsize != DTYPES[dname].itemsize:
            raise InvalidDtypeError(f"[safetensors] tensor {name!r}: dtype {dname} needs {DTYPES[dname].itemsize}-"
                                    f"byte elements, got {a.dtype} ({a.dtype.itemsize} bytes)")
        return dname, a
    a = np.asarray(value)
    key = a.dtype.newbyteorder("=") if a.dtype.byteorder in "<>" else a.dtype
    found = _NAMES.get(key)
    if found is None:
        raise InvalidDtypeError(f"[safetensors] tensor {name!r}: dtype {a.dtype} has no safetensors name "
                                f"(supported: {', '.join(DTYPES)})")
    return found, _c_order(a.astype(DTYPES[found], copy=False))


def _c_order(a: np.ndarray) -> np.ndarray:
    # (np.ascontiguousarray would make a 0-dim array 1-dim)
    return a if a.flags.c_contiguous else a.copy(order="C")


# ----------------------------------------------------------------------------------------- reading
def read_header(data: bytes | bytearray | memoryview) -> tuple[dict[str, dict[str, Any]], dict[str, str] | None, int]:
    """Parse and validate the header of a safetensors buffer.

    Returns:
        (entries: name -> {"dtype", "shape", "data_offsets"} in header order, metadata or None, the offset
        of the byte buffer in `data`).

    Raises:
        SafetensorsError: (a subclass naming the problem) for any violation of the format.
    """
    size = len(data)
    if size < 8:
        raise HeaderTooSmallError(f"[safetensors] header too small: {size} bytes, need at least 8 for its length")
    (n,) = struct.unpack("<Q", bytes(data[:8]))
    if n > MAX_HEADER_SIZE:
        raise HeaderTooLargeError(f"[safetensors] header too large: {n} bytes, the limit is {MAX_HEADER_SIZE}")
    if 8 + n > size:
        raise InvalidHeaderLengthError(f"[safetensors] header length {n} points past the end of the buffer "
                                       f"({size} bytes)")
    raw = bytes(data[8:8 + n])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidHeaderError(f"[safetensors] header is not valid UTF-8: {e}") from e
    if not text.startswith("{"):
        raise InvalidHeaderError(f"[safetensors] header must start with '{{', got {text[:1]!r}")
    depth = _nesting_depth(text)
    if depth > MAX_HEADER_NESTING:
        raise InvalidHeaderError(f"[safetensors] header JSON is nested too deeply to parse ({depth} levels); expected "
                                 "an object of {dtype, shape, data_offsets} entries (3 levels deep)")
    try:
        header = json.loads(text, object_pairs_hook=_no_duplicates)
    except (json.JSONDecodeError, _DuplicateKey) as e:
        raise InvalidHeaderError(f"[safetensors] header is not valid JSON: {e}") from e
    except RecursionError:  # the parser recurses per nesting level; a valid header is 3 levels deep
        raise InvalidHeaderError("[safetensors] header JSON is nested too deeply to parse; expected an object of "
                                 "{dtype, shape, data_offsets} entries (3 levels deep)") from None
    if not isinstance(header, dict):
        raise InvalidHeaderError("[safetensors] header must be a JSON object")
    metadata = header.pop(METADATA_KEY, None)
    if metadata is not None:
        _check_metadata(metadata)
    buffer_len = size - 8 - n
    entries = {name: _check_entry(name, info) for name, info in header.items()}
    _check_layout(entries, buffer_len)
    return entries, metadata, 8 + n


def deserialize_with_metadata(data: bytes | bytearray | memoryview) -> tuple[dict[str, np.ndarray],
                                                                             dict[str, str] | None]:
    """(name -> writable ndarray in header order, metadata or None) from safetensors bytes.

    Raises:
        SafetensorsError: (a subclass naming the problem) for any violation of the format.
    """
    entries, metadata, start = read_header(data)
    view = memoryview(data)
    out: dict[str, np.ndarray] = {}
    for name, info in entries.items():
        b, e = info["data_offsets"]
        dt = DTYPES[info["dtype"]]
        a = np.frombuffer(view[start + b:start + e], dtype=dt).reshape(info["shape"]).copy()
        out[name] = a.astype(dt.newbyteorder("="), copy=False) if dt.byteorder == "<" else a
    return out, metadata


def deserialize(data: bytes | bytearray | memoryview) -> dict[str, np.ndarray]:
    """name -> ndarray from safetensors bytes (see `deserialize_with_metadata`)."""
    return deserialize_with_metadata(data)[0]


def load_file(filename: str | os.PathLike[str] | IO[bytes]) -> dict[str, np.ndarray]:
    """name -> ndarray from a safetensors file (a path or a binary file object)."""
    return deserialize(_read(filename))


def load_file_with_metadata(filename: str | os.PathLike[str] | IO[bytes]) -> tuple[dict[str, np.ndarray],
                                                                                 dict[str, str] | None]:
    """(tensors, metadata) from a safetensors file (a path or a binary file object)."""
    return deserialize_with_metadata(_read(filename))


def _read(filename: str | os.PathLike[str] | IO[bytes]) -> bytes:
    if isinstance(filename, str | os.PathLike):
        with open(filename, "rb") as f:
            return f.read()
    return filename.read()


class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(f"duplicate key {k!r}")
        out[k] = v
    return out


def _check_metadata(metadata: Any) -> None:
    if not isinstance(metadata, Mapping):
        raise InvalidMetadataError(f"[safetensors] __metadata__ must be a map of strings to strings, got "
                                   f"{type(metadata).__name__}")
    for k, v in metadata.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise InvalidMetadataError(f"[safetensors] __metadata__ must map strings to strings, got {k!r}: "
                                       f"{type(v).__name__}")


def _is_uint(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _check_entry(name: str, info: Any) -> dict[str, Any]:
    if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
        got = sorted(info) if isinstance(info, dict) else type(info).__name__
        raise InvalidHeaderError(f"[safetensors] tensor {name!r}: expected an object with keys dtype, shape and "
                                 f"data_offsets, got {got}")
    dname = info["dtype"]
    if not isinstance(dname, str) or dname not in DTYPES:  # (a list or an object is not hashable)
        raise InvalidDtypeError(f"[safetensors] tensor {name!r}: unsupported dtype {dname!r} (supported: "
                                f"{', '.join(DTYPES)})")
    shape = info["shape"]
    if not isinstance(shape, list) or not all(_is_uint(s) for s in shape):
        raise InvalidShapeError(f"[safetensors] tensor {name!r}: shape must be a list of non-negative integers, "
                                f"got {shape!r}")
    offs = info["data_offsets"]
    if not isinstance(offs, list) or len(offs) != 2 or not all(_is_uint(o) for o in offs) or offs[0] > offs[1]:
        raise InvalidOffsetError(f"[safetensors] tensor {name!r}: data_offsets must be [BEGIN, END] with "
                                 f"0 <= BEGIN <= END, got {offs!r}")
    expected = math.prod(shape) * DTYPES[dname].itemsize
    if offs[1] - offs[0] != expected:
        raise TensorSizeMismatchError(f"[safetensors] tensor {name!r}: data_offsets {offs} span {offs[1] - offs[0]} "
                                      f"bytes, but {dname} {shape} needs {expected}")
    return info


def _check_layout(entries: Mapping[str, dict[str, Any]], buffer_len: int) -> None:
    """Offsets contiguous from 0, no hole, no overlap, ending exactly at the end of the buffer."""
    end, prev = 0, None
    for name, info in sorted(entries.items(), key=lambda e: tuple(e[1]["data_offsets"])):
        b, e = info["data_offsets"]
        if e > buffer_len:
            raise InvalidOffsetError(f"[safetensors] tensor {name!r}: data_offsets [{b}, {e}] are past the end of "
                                     f"the {buffer_len}-byte buffer")
        if b < end:
            raise InvalidOffsetError(f"[safetensors] tensor {name!r}: data_offsets [{b}, {e}] overlap tensor "
                                     f"{prev!r} (which ends at {end})")
        if b > end:
            raise InvalidOffsetError(f"[safetensors] tensor {name!r}: data_offsets [{b}, {e}] leave a hole: the "
                                     f"previous tensor ends at {end}")
        end, prev = e, name
    if end != buffer_len:
        raise IncompleteBufferError(f"[safetensors] the tensors cover {end} bytes of the {buffer_len}-byte buffer")


# A valid header is 3 levels deep ({"name": {"shape": [...]}}); whether json's recursive parser copes with a
# deeper one depends on the interpreter's recursion limit, which other code may raise, so the depth is
# measured first, in one pass over the text.
MAX_HEADER_NESTING = 64


def _nesting_depth(text: str) -> int:
    """The deepest nesting of JSON objects and arrays in `text` (brackets inside strings don't count).

    Example:
        >>> _nesting_depth('{"a": {"shape": [1, 2], "s": "[[["}}')
        3
    """
    bare = _JSON_STRING.sub("", text).encode("utf-8", "replace")
    chars = np.frombuffer(bare, dtype=np.uint8)
    steps = (np.isin(chars, _OPEN).astype(np.int64) - np.isin(chars, _CLOSE))
    return int(np.cumsum(steps).max(initial=0))


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_OPEN = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSE = np.frombuffer(b"]}", dtype=np.uint8)
