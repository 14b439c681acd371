"""How an instruction family plugs into the JIT: `@lowers("add", ...)` and the `Op` it returns.

Families that share an opcode by type (`add.s32`, `add.f32`, `add.f16`) register with
`@lowers_for_types`, which hands the other types to the lowering registered before.

A lowering runs once per instruction when a module is loaded. It resolves operands to slots of the
frame's value list (`f.V`) and returns an `Op` whose `fn(f, m)` executes the instruction for every
lane of a chunk at once; `m` is None (all lanes) or a bool mask of the lanes that execute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from strata.hw.ptx.ir import Instruction

if TYPE_CHECKING:
    from strata.hw.jit import LoweringContext

RunFn = Callable[[Any, Any], None]


@dataclass
class Op:
    """A lowered instruction.

    fn: `fn(frame, mask)`; reads and writes `frame.V[slot]`.
    cls: instruction class for the counters (see strata.hw.counters.INSTRUCTION_CLASSES).
    exact: True when the op needs the exact active mask (memory, warp, side effects). Pure register
        ops get mask None when the lanes are converged, since inactive-but-exited lanes don't matter.
    flops: floating-point operations per lane (fma = 2), keyed by precision class.
    """

    fn: RunFn
    cls: str
    exact: bool = False
    flops: int = 0
    flop_cls: str = "fp32"


Lowering = Callable[["Instruction", "LoweringContext"], Op]
REGISTRY: dict[str, Lowering] = {}


def lowers(*opcodes: str) -> Callable[[Lowering], Lowering]:
    """Register a lowering for PTX opcodes (the part before the first dot)."""

    def deco(fn: Lowering) -> Lowering:
        for op in opcodes:
            REGISTRY[op] = fn
        return fn

    return deco


def lowers_for_types(opcodes: tuple[str, ...], types: frozenset[str]) -> Callable[[Lowering], Lowering]:
    """Register a lowering for the variants of `opcodes` whose suffixes include one of `types`.

    Other variants go to whatever lowering was registered for the opcode before (another family's),
    so families sharing an opcode (`add.s32` is integer.py's, `add.f32` floating.py's, `add.f16`
    half.py's) can load in any order as long as each one chains like this.
    """

    def deco(fn: Lowering) -> Lowering:
        for op in opcodes:
            REGISTRY[op] = _dispatch(fn, REGISTRY.get(op), types)
        return fn

    return deco


def _dispatch(fn: Lowering, prev: Lowering | None, types: frozenset[str]) -> Lowering:
    def lower(ins: Instruction, ctx: Any) -> Op:
        if any(m in types for m in ins.mods):
            return fn(ins, ctx)
        if prev is not None:
            return prev(ins, ctx)
        raise ctx.unsupported()

    return lower


# PTX type suffix -> NumPy dtype used to view a register's bits for that operation.
DTYPES: dict[str, np.dtype] = {
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "f16": np.dtype(np.float16), "bf16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32),
    "f32": np.dtype(np.float32), "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32),
    "tf32": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64),
    "f64": np.dtype(np.float64), "pred": np.dtype(np.bool_),
}

TYPE_NAMES = frozenset(DTYPES)


def split_mods(mods: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Split an instruction's suffixes into (non-type modifiers, type suffixes) in order."""
    flags = [m for m in mods if m not in TYPE_NAMES]
    types = [m for m in mods if m in TYPE_NAMES]
    return flags, types


def write(dst: np.ndarray, value: Any, m: np.ndarray | None) -> None:
    """Store `value` into register view `dst` for the lanes in `m` (all lanes when None)."""
    if m is None:
        np.copyto(dst, value, casting="unsafe")
    else:
        np.copyto(dst, value, casting="unsafe", where=m)


class LaneFault(Exception):
    """Raised by an op when a lane does something illegal; the engine adds block/thread context.

    lane: index of the offending lane in the chunk. fields: address, size, access, space, reason,
    nearest (allocation), and the CUDA error name to raise (cuda_name).
    """

    def __init__(self, lane: int, ins: Instruction, message: str, cuda_name: str = "cudaErrorIllegalAddress",
                 **fields: Any) -> None:
        self.lane, self.ins, self.message, self.cuda_name, self.fields = lane, ins, message, cuda_name, fields
        super().__init__(message)
