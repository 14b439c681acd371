# Source of truth for what the .f32/.f64 families (floating.py, fma.py) share: how an instruction's
# type, rounding, .ftz/.sat/.approx modifiers and operands are parsed and its result stored, and the
# f32 result rules (.ftz flush, .sat clamp, canonical NaN) and the sign of an exact zero under .rm.
"""Shared lowering helpers of the .f32/.f64 floating-point families.

Example:
    >>> import numpy as np
    >>> post32(np.array([1.5, -0.0, np.nan], np.float32), ftz=False, sat=True).tolist()  # .sat: NaN -> +0
    [1.0, 0.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.hw.isa import fpround as fr
from strata.hw.isa.registry import DTYPES, split_mods, write
from strata.hw.ptx.ir import Instruction

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
FLOAT_TYPES = frozenset(("f32", "f64"))
_CLS = {"f32": "fp32", "f64": "fp64"}


class FloatMods:
    """Parsed modifiers of one float instruction."""

    def __init__(self, ins: Instruction, ctx: Any, allowed: set[str], nsrc: int) -> None:
        flags, types = split_mods(ins.mods)
        if "f32x2" in flags:
            raise ctx.unsupported()  # sm_100 packed f32
        if len(types) != 1 or types[0] not in FLOAT_TYPES:
            raise ctx.fail(f"{ins.full_opcode} needs one of the types .f32/.f64")
        self.t = types[0]
        rnds = [f for f in flags if f in fr.ROUND_MODES]
        if len(rnds) > 1:
            raise ctx.fail(f"{ins.full_opcode} has more than one rounding modifier")
        self.rnd = rnds[0] if rnds else None
        self.flags = {f for f in flags if f not in fr.ROUND_MODES}
        for f in self.flags:
            if f not in allowed:
                raise ctx.unsupported()
        if self.t == "f64" and self.flags & {"ftz", "sat"} and not (self.flags >= {"approx", "ftz"}):
            raise ctx.fail(f"{ins.full_opcode}: .ftz/.sat are not allowed on .f64")
        self.ftz = "ftz" in self.flags
        self.sat = "sat" in self.flags
        if len(ins.operands) != nsrc + 1:
            raise ctx.fail(f"{ins.full_opcode} needs {nsrc + 1} operands, got {len(ins.operands)}")
        self.srcs = [ctx.src(op, self.t) for op in ins.operands[1:]]
        self.d, self.bits = _dst(ctx, ins.operands[0], self.t)

    @property
    def cls(self) -> str:
        return _CLS[self.t]


def _dst(ctx: Any, op: Any, t: str) -> tuple[int, Any]:
    """Destination slot; when the register is wider than the type the result is written as bits."""
    d = ctx.dst(op, t)
    if ctx.slots[d].dtype == DTYPES[t]:
        return d, None
    bt = "b32" if t == "f32" else "b64"
    return ctx.dst(op, bt), DTYPES[bt]


def store(V: list[Any], d: int, bits: Any, r: Any, m: Any) -> None:
    if bits is not None:
        r = np.asarray(r).view(bits)
    write(V[d], r, m)


def post32(r: Any, ftz: bool, sat: bool) -> np.ndarray:
    """f32 result post-processing: .ftz flush, .sat clamp, canonical NaN."""
    if ftz:
        r = fr.flush32(r)
    if sat:
        r = np.where(r > 0, np.minimum(r, np.float32(1)), np.float32(0)).astype(np.float32)
    return fr.canon_nan32(r)


def rm_zero(r: np.ndarray, x: Any, y: Any, s: Any) -> np.ndarray:
    """Round-toward-minus: an exact zero sum s = x + y is -0 unless both are +0 (IEEE 754 6.3).

    s is the f64 sum (zero only when exactly zero); results that merely round to zero keep the
    sign of the exact value.
    """
    z = s == 0
    if np.any(z):
        neg = np.signbit(x) | np.signbit(y)
        r = np.where(z & neg, -np.abs(r), r).astype(r.dtype)
    return r


def all_finite(*xs: Any) -> Any:
    ok = np.isfinite(xs[0])
    for x in xs[1:]:
        ok = ok & np.isfinite(x)
    return ok
