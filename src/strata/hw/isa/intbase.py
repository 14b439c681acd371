# Source of truth for the building blocks the integer, bit and comparison families (integer.py,
# bits.py, compare.py) share: modifier and operand parsing, type widths, the closures that run a NumPy
# ufunc over a chunk's lanes, and the 16-bit halves of packed registers.
"""Shared lowering helpers of the integer-style instruction families.

A lowering parses `ins.mods` with :func:`int_mods`, checks them with :func:`check_flags` /
:func:`one_type`, resolves :func:`operands` to frame slots, and returns an `Op` whose run function is
one of :func:`binary_run`, :func:`unary_run` or :func:`computed_run`.

Example:
    >>> type_width("u32"), type_width("bf16x2"), utype("s64")
    (32, 16, 'u64')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from strata.hw.isa.registry import split_mods, write
from strata.hw.ptx.ir import Operand, Reg

INT_TYPES = frozenset(("u16", "u32", "u64", "s16", "s32", "s64", "b16", "b32", "b64"))
X2_TYPES = ("u16x2", "s16x2")
FLOAT_TYPES = frozenset(("f16", "bf16", "f16x2", "bf16x2", "f32", "f64"))
UNSIGNED: dict[int, np.dtype[Any]] = {16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
SIGNED: dict[int, np.dtype[Any]] = {16: np.dtype(np.int16), 32: np.dtype(np.int32), 64: np.dtype(np.int64)}
MASK32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)

Run = Callable[[Any, Any], None]


# ------------------------------------------------------------------------------------------------
# Modifiers and operands
# ------------------------------------------------------------------------------------------------


def int_mods(ins: Any, ctx: Any) -> tuple[list[str], list[str]]:
    """(flags, types) with the packed integer types `.u16x2/.s16x2` counted as types."""
    flags, types = split_mods(ins.mods)
    x2 = [f for f in flags if f in X2_TYPES]
    return [f for f in flags if f not in X2_TYPES], x2 + types


def check_flags(ctx: Any, flags: list[str], allowed: set[str] | frozenset[str]) -> None:
    for f in flags:
        if f not in allowed:
            raise ctx.unsupported()


def one_type(ins: Any, ctx: Any, types: list[str], allowed: frozenset[str] | set[str]) -> str:
    if len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode} needs exactly one type suffix")
    if types[0] not in allowed:
        raise ctx.unsupported()
    return types[0]


def operands(ins: Any, ctx: Any, n: int) -> tuple[Operand, ...]:
    if len(ins.operands) != n:
        raise ctx.fail(f"{ins.full_opcode} needs {n} operands, got {len(ins.operands)}")
    return tuple(ins.operands)


def type_width(t: str) -> int:
    """Bits of one element: 'u32' -> 32, 'bf16x2' -> 16."""
    return int("".join(ch for ch in t.split("x")[0] if ch.isdigit()))


def utype(t: str) -> str:
    return f"u{type_width(t)}"


def pred_src(ctx: Any, op: Operand) -> tuple[int, bool]:
    if isinstance(op, Reg):
        return ctx.pred(op)
    return ctx.src(op, "pred"), False


# ------------------------------------------------------------------------------------------------
# Run functions: write every lane of a chunk at once
# ------------------------------------------------------------------------------------------------


def binary_run(uf: np.ufunc, d: int, a: int, b: int, dt: np.dtype) -> Run:
    """`d = uf(a, b)` computed in dtype `dt`, written in place for the lanes in the mask."""

    def run(f: Any, m: Any) -> None:
        V = f.V
        uf(V[a], V[b], out=V[d], dtype=dt, casting="unsafe", where=True if m is None else m)

    return run


def unary_run(uf: np.ufunc, d: int, a: int, dt: np.dtype) -> Run:
    def run(f: Any, m: Any) -> None:
        V = f.V
        uf(V[a], out=V[d], dtype=dt, casting="unsafe", where=True if m is None else m)

    return run


def computed_run(d: int, compute: Callable[[list[Any]], Any]) -> Run:
    """`d = compute(V)` (a temporary) stored for the lanes in the mask."""

    def run(f: Any, m: Any) -> None:
        V = f.V
        write(V[d], compute(V), m)

    return run


# ------------------------------------------------------------------------------------------------
# Bit patterns: 16-bit halves of packed registers, sign masks
# ------------------------------------------------------------------------------------------------


def lo16(x: Any) -> np.ndarray:
    return np.asarray(x).astype(np.uint16)


def hi16(x: Any) -> np.ndarray:
    return (np.asarray(x) >> np.uint32(16)).astype(np.uint16)


def pack16(lo: Any, hi: Any) -> np.ndarray:
    lo32 = np.asarray(lo).view(np.uint16).astype(np.uint32)
    return lo32 | (np.asarray(hi).view(np.uint16).astype(np.uint32) << np.uint32(16))


def sign_mask(x: Any, w: int) -> Any:
    """All ones (unsigned) where the signed value x is negative, else 0: branch-free selects."""
    return (np.asarray(x) >> SIGNED[w].type(w - 1)).view(UNSIGNED[w])
