"""Launch arguments into a kernel's parameter buffer, laid out by its PTX parameter list (what
cudaLaunchKernel does with its `void** args`, from Python values).

Every launch packs its arguments, and framework kernels take dozens (shapes and strides as scalars), so the
common case has a fast path: per parameter list, a `struct` layout built once (offsets, padding, one integer
field per parameter) and a loop that only accepts what needs no conversion rules (a Python int in range, a
DeviceArray for a pointer, a NumPy scalar of the parameter's size). Anything else goes the checked way,
which packs it or raises the precise TypeError.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.cuda.memory import DeviceArray
from strata.errors import CudaError
from strata.hw.ptx.ir import Param

_VALUE_TYPES: dict[str, type[np.generic]] = {
    "u8": np.uint8, "s8": np.int8, "b8": np.uint8, "u16": np.uint16, "s16": np.int16, "b16": np.uint16,
    "f16": np.float16, "u32": np.uint32, "s32": np.int32, "b32": np.uint32, "f32": np.float32,
    "u64": np.uint64, "s64": np.int64, "b64": np.uint64, "f64": np.float64,
}


def pack_arguments(kernel: str, params: list[Param], args: Sequence[Any]) -> bytes:
    """Pack launch arguments into the kernel's parameter buffer by its PTX parameter list (each parameter
    at its alignment, little-endian).

    Example:
        >>> from strata.hw.ptx.ir import Param
        >>> pack_arguments("k", [Param("k_param_0", "u32", 4, 4), Param("k_param_1", "s64", 8, 8)], (7, -2)).hex()
        '0700000000000000feffffffffffffff'
    """
    if isinstance(args, DeviceArray | np.generic | int | float):
        args = (args,)
    if len(args) != len(params):
        names = ", ".join(f"{p.name} (.{p.type})" for p in params)
        raise TypeError(f"[launch {kernel}] expects {len(params)} arguments ({names}), got {len(args)}")
    fast = _pack_fast(params, args)
    if fast is not None:
        return fast
    buf = bytearray()
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        buf += bytes(-len(buf) % p.align)
        buf += _pack_one(kernel, i, p, a)
    return bytes(buf)


def _pack_one(kernel: str, i: int, p: Param, a: Any) -> bytes:
    where = f"[launch {kernel}] parameter {i} ({p.name}, .{p.type}{'[' + str(p.size) + ']' if p.type == 'b8' else ''})"
    if p.type == "b8" and p.size > 1:  # a struct passed by value
        raw = a.tobytes() if isinstance(a, np.ndarray | np.generic) else bytes(a) \
            if isinstance(a, bytes | bytearray) else None
        if raw is None or len(raw) != p.size:
            raise TypeError(f"{where} expects {p.size} bytes (a struct by value), got {type(a).__name__}")
        return raw
    want = _VALUE_TYPES.get(p.type)
    if want is None:
        raise TypeError(f"{where}: parameter type .{p.type} is not supported")
    if isinstance(a, DeviceArray):
        if p.size != 8:
            raise TypeError(f"{where} is not a pointer; got a DeviceArray")
        if a.freed:
            raise CudaError("cudaErrorInvalidValue", f"{where}: DeviceArray {a.ptr:#x} was freed")
        return int(a.ptr).to_bytes(8, "little")
    if isinstance(a, np.generic):
        if a.dtype != np.dtype(want) and not (p.size == 8 and a.dtype in (np.int64, np.uint64)) and not (
                a.dtype.kind in "iu" and np.dtype(want).kind in "iu" and a.dtype.itemsize == p.size):
            raise TypeError(f"{where} expects a {np.dtype(want).name}, got numpy.{a.dtype.name}")
        return a.tobytes()
    if isinstance(a, bool):
        raise TypeError(f"{where} expects a {np.dtype(want).name}, got bool")
    if isinstance(a, int):
        if np.dtype(want).kind == "f":
            raise TypeError(f"{where} expects a {np.dtype(want).name}, got int")
        bits = 8 * p.size
        if not -(1 << (bits - 1)) <= a < (1 << bits):
            raise TypeError(f"{where}: {a} does not fit in {bits} bits")
        return (a & ((1 << bits) - 1)).to_bytes(p.size, "little")
    if isinstance(a, float) and np.dtype(want).kind == "f":
        return np.array(a, dtype=want).tobytes()
    raise TypeError(f"{where} expects a NumPy scalar or DeviceArray, got {type(a).__name__}")


_UINT = {1: "B", 2: "H", 4: "I", 8: "Q"}  # struct codes: every field is packed as its unsigned bit pattern
_UINT_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# parameter list -> (the list itself, its struct, per parameter (is float, mask, lowest int, size, dtype)), or None
# when the list has a struct passed by value or an unknown type (those always go the checked way)
_LAYOUTS: dict[int, tuple[list[Param], struct.Struct, list[tuple[bool, int, int, int, Any]]] | None] = {}


def _layout(params: list[Param]) -> tuple[struct.Struct, list[tuple[bool, int, int, int, Any]]] | None:
    hit = _LAYOUTS.get(id(params))
    if hit is not None and hit[0] is params:
        return hit[1], hit[2]
    fmt, fields, offset = "<", [], 0
    for p in params:
        want = _VALUE_TYPES.get(p.type)
        if want is None or (p.type == "b8" and p.size > 1) or p.size not in _UINT:
            return None
        pad = -offset % p.align
        fmt += "x" * pad + _UINT[p.size]
        offset += pad + p.size
        bits = 8 * p.size
        fields.append((np.dtype(want).kind == "f", (1 << bits) - 1, -(1 << (bits - 1)), p.size, np.dtype(want)))
    layout = struct.Struct(fmt)
    if len(_LAYOUTS) > 4096:  # (parameter lists live as long as their modules: bound the memo, not them)
        _LAYOUTS.clear()
    _LAYOUTS[id(params)] = (params, layout, fields)
    return layout, fields


def _pack_fast(params: list[Param], args: Sequence[Any]) -> bytes | None:
    """The packed buffer, or None when some argument needs the checked path (which may raise)."""
    layout = _layout(params)
    if layout is None:
        return None
    st, fields = layout
    values = []
    for (is_float, mask, lowest, size, want), a in zip(fields, args, strict=True):
        t = type(a)
        if t is int:
            if is_float or not lowest <= a <= mask:
                return None
            values.append(a & mask)
        elif t is DeviceArray:
            if size != 8 or a.freed:
                return None
            values.append(a.ptr)
        elif isinstance(a, np.generic):
            dt = a.dtype
            if is_float:
                if dt != want:
                    return None
                values.append(int(a.view(_UINT_DTYPES[size])))  # the bits as they are (NaN payloads too)
            elif dt.kind in "iu" and dt.itemsize == size:
                values.append(int(a) & mask)
            else:
                return None
        else:
            return None
    return st.pack(*values)
