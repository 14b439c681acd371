"""A minimal MessagePack reader for the AMDGPU metadata note (code object v3+ metadata is msgpack).

Only decoding, only the types LLVM writes (nil, bool, ints, floats, str, bin, array, map). Malformed
input raises CodeObjectError naming the byte offset.
"""

from __future__ import annotations

import struct
from typing import Any

from strata.hw.amdgpu.errors import CodeObjectError


def unpack(data: bytes) -> Any:
    """Decode one msgpack object that fills `data`.

    Example:
        >>> unpack(bytes([0x82, 0xa1, 0x61, 0x01, 0xa1, 0x62, 0x92, 0xc3, 0xc0]))
        {'a': 1, 'b': [True, None]}
    """
    value, end = _read(data, 0)
    if end != len(data):
        raise CodeObjectError(f"metadata: {len(data) - end} trailing bytes after the msgpack object at offset {end}")
    return value


def _need(data: bytes, at: int, n: int) -> None:
    if at + n > len(data):
        raise CodeObjectError(f"metadata: msgpack truncated at offset {at} (needs {n} more bytes, "
                              f"{len(data) - at} left)")


def _read(data: bytes, at: int, depth: int = 0) -> tuple[Any, int]:
    if depth > 64:
        raise CodeObjectError(f"metadata: msgpack nesting deeper than 64 at offset {at}")
    _need(data, at, 1)
    b = data[at]
    at += 1
    if b <= 0x7F:
        return b, at
    if b >= 0xE0:
        return b - 0x100, at
    if 0xA0 <= b <= 0xBF:
        return _str(data, at, b & 0x1F)
    if 0x90 <= b <= 0x9F:
        return _array(data, at, b & 0x0F, depth)
    if 0x80 <= b <= 0x8F:
        return _map(data, at, b & 0x0F, depth)
    fixed = {0xC0: None, 0xC2: False, 0xC3: True}
    if b in fixed:
        return fixed[b], at
    ints = {0xCC: "<B", 0xCD: ">H", 0xCE: ">I", 0xCF: ">Q", 0xD0: ">b", 0xD1: ">h", 0xD2: ">i", 0xD3: ">q",
            0xCA: ">f", 0xCB: ">d"}
    if b in ints:
        fmt = ints[b]
        n = struct.calcsize(fmt)
        _need(data, at, n)
        return struct.unpack_from(fmt, data, at)[0], at + n
    lengths = {0xD9: (">B", "str"), 0xDA: (">H", "str"), 0xDB: (">I", "str"), 0xC4: (">B", "bin"),
               0xC5: (">H", "bin"), 0xC6: (">I", "bin"), 0xDC: (">H", "array"), 0xDD: (">I", "array"),
               0xDE: (">H", "map"), 0xDF: (">I", "map")}
    if b in lengths:
        fmt, kind = lengths[b]
        n = struct.calcsize(fmt)
        _need(data, at, n)
        count = struct.unpack_from(fmt, data, at)[0]
        at += n
        if kind == "str":
            return _str(data, at, count)
        if kind == "bin":
            _need(data, at, count)
            return bytes(data[at:at + count]), at + count
        if kind == "array":
            return _array(data, at, count, depth)
        return _map(data, at, count, depth)
    raise CodeObjectError(f"metadata: unsupported msgpack type byte {b:#04x} at offset {at - 1}")


def _str(data: bytes, at: int, n: int) -> tuple[str, int]:
    _need(data, at, n)
    try:
        return bytes(data[at:at + n]).decode("utf-8"), at + n
    except UnicodeDecodeError as exc:
        raise CodeObjectError(f"metadata: invalid UTF-8 string at offset {at}") from exc


def _array(data: bytes, at: int, n: int, depth: int) -> tuple[list[Any], int]:
    out = []
    for _ in range(n):
        v, at = _read(data, at, depth + 1)
        out.append(v)
    return out, at


def _map(data: bytes, at: int, n: int, depth: int) -> tuple[dict[Any, Any], int]:
    out: dict[Any, Any] = {}
    for _ in range(n):
        k, at = _read(data, at, depth + 1)
        v, at = _read(data, at, depth + 1)
        if isinstance(k, list | dict):
            raise CodeObjectError(f"metadata: unhashable msgpack map key before offset {at}")
        out[k] = v
    return out, at
