# Source of truth for the warp-level matrix instructions of the virtual GPU (PTX ISA 9.7.14): mma.sync,
# ldmatrix/stmatrix, movmatrix and WMMA (wmma.load/mma/store). Which lane holds which element follows the
# manual's row/col formulas one by one; a warp's product is one batched NumPy matmul over the chunk's warps.
"""Tensor-core instructions: mma.sync, ldmatrix, stmatrix, movmatrix, wmma.load/mma/store.

A warp's fragment registers are gathered into matrices of shape (warps, rows, cols) through a
per-(shape, matrix, type) layout: `mma_layout` is the PTX ISA's table for `mma`; WMMA fragments are
unspecified by the ISA, and strata's choice is `wmma_layout` (lane l holds elements l*E .. l*E+E-1
of the row-major matrix, wrapping around where a fragment holds more than the matrix, as .f16 A/B
fragments do). Arithmetic:

- .f16/.bf16/.tf32/.e4m3/.e5m2 multiplicands: products are exact in f64 and the dot product plus C
  is summed in f64, then rounded once (to nearest) to .f32 or .f16. The ISA leaves the order and
  rounding unspecified; this is within 1 ulp of the exact result. .tf32 operands ignore the low 13
  mantissa bits (the format's layout is implementation-defined). Subnormals are kept.
- .f64: D = fma(a_{K-1}, b_{K-1}, ... fma(a_1, b_1, fma(a_0, b_0, c))), each fma rounded per .rnd
  (default .rn): the precision the ISA documents, in ascending k order.
- .s8/.u8: exact in int64; the s32 result wraps, or saturates with .satfinite.

Counters: mma and wmma.mma are class 'tensor' with 2*M*N*K FLOPs per warp (`flops['tensor']`);
ldmatrix/stmatrix/wmma.load/wmma.store are 'memory' (checked and counted like ld/st); movmatrix
is 'integer' (a register exchange, like shfl). A wmma.load/store of whole warps from shared memory at
a warp-uniform address is one cached pattern of element offsets (and bank conflicts) per stride,
shifted per warp; anything else takes the per-element path, with the same checks and counts.

Example:
    >>> rows, cols = mma_layout("m16n8k16", "a", "f16")
    >>> rows[5].tolist(), cols[5].tolist()  # lane 5: groupID 1, threadID_in_group 1
    ([1, 1, 9, 9, 1, 1, 9, 9], [2, 3, 2, 3, 10, 11, 10, 11])
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from strata.hw.isa import fpround as fr
from strata.hw.isa.fma import fma64
from strata.hw.isa.memory import (
    Access,
    Addresser,
    count_global,
    count_shared,
    count_shared_requests,
    warp_bank_conflicts,
)
from strata.hw.isa.registry import LaneFault, Op, lowers, write
from strata.hw.memory import LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from strata.hw.ptx.ir import Instruction, Mem, Operand, Vec

# element type -> (bits, kind); kind 'f' floats, 'i' integers
ELEMENTS: dict[str, tuple[int, str]] = {
    "f16": (16, "f"), "bf16": (16, "f"), "tf32": (32, "f"), "f32": (32, "f"), "f64": (64, "f"),
    "e4m3": (8, "f"), "e5m2": (8, "f"), "s8": (8, "i"), "u8": (8, "i"), "s32": (32, "i"),
}
_BITS_DTYPE: dict[int, np.dtype] = {b: np.dtype(f"u{b // 8}") for b in (8, 16, 32, 64)}
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)$")
_LITTLE = sys.byteorder == "little"
_SCRATCH = fr.Scratch()  # per-thread work arrays of the tensor instructions
_RND = ("rn", "rz", "rm", "rp")

# mma.sync: (shape, A/B type) -> accumulator types allowed (C and D)
_MMA_TYPES: dict[tuple[str, str], tuple[str, ...]] = {
    **{(s, "f16"): ("f16", "f32") for s in ("m16n8k8", "m16n8k16")},
    **{(s, "bf16"): ("f32",) for s in ("m16n8k8", "m16n8k16")},
    **{(s, "tf32"): ("f32",) for s in ("m16n8k4", "m16n8k8")},
    **{(s, "f64"): ("f64",) for s in ("m8n8k4", "m16n8k4", "m16n8k8", "m16n8k16")},
    **{(s, t): ("s32",) for s in ("m8n8k16", "m16n8k16", "m16n8k32") for t in ("s8", "u8")},
    **{(s, t): ("f16", "f32") for s in ("m16n8k16", "m16n8k32") for t in ("e4m3", "e5m2")},
}
# wmma: A/B type -> shapes
_WMMA_SHAPES: dict[str, tuple[str, ...]] = {
    "f16": ("m16n16k16", "m8n32k16", "m32n8k16"), "bf16": ("m16n16k16", "m8n32k16", "m32n8k16"),
    "s8": ("m16n16k16", "m8n32k16", "m32n8k16"), "u8": ("m16n16k16", "m8n32k16", "m32n8k16"),
    "tf32": ("m16n16k8",), "f64": ("m8n8k4",),
}


# ------------------------------------------------------------------------------------------------
# Fragment layouts
# ------------------------------------------------------------------------------------------------


def _family(et: str) -> str:
    return {"f16": "h", "bf16": "h", "tf32": "w", "f64": "w", "s8": "b", "u8": "b", "e4m3": "b", "e5m2": "b"}[et]


@functools.cache
def mma_layout(shape: str, matrix: str, et: str) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of the element each lane holds in an `mma.sync` fragment, per the PTX ISA.

    Args:
        shape: e.g. "m16n8k16". matrix: "a", "b" or "c" (C and D share a layout).
        et: the element type of A/B ("f16", "bf16", "tf32", "f64", "s8", "u8", "e4m3", "e5m2");
            for "c" any type of the same shape (accumulator layouts depend only on the shape).
    Returns:
        Two (32, E) int arrays: element i of lane l is (rows[l, i], cols[l, i]).
    Raises:
        KeyError: a combination the ISA does not define.

    Example:
        >>> r, c = mma_layout("m8n8k4", "b", "f64")
        >>> int(r[6, 0]), int(c[6, 0])  # lane 6: row = lane % 4, col = lane >> 2
        (2, 1)
    """
    lane = np.arange(32)[:, None]
    g, t = lane >> 2, lane % 4
    fam = "c" if matrix == "c" else _family(et)
    E = {("m8n8k4", "a"): 1, ("m8n8k4", "b"): 1, ("m8n8k4", "c"): 2, ("m8n8k16", "a"): 4, ("m8n8k16", "b"): 4,
         ("m8n8k16", "c"): 2, ("m16n8k4", "a"): 2, ("m16n8k4", "b"): 1, ("m16n8k8", "a"): 4,
         ("m16n8k8", "b"): 2, ("m16n8k16", "a"): 8, ("m16n8k16", "b"): 4, ("m16n8k32", "a"): 16,
         ("m16n8k32", "b"): 8}.get((shape, matrix), 4)
    i = np.arange(E)[None, :]
    # The manual's formulas, shape by shape (9.7.14.5.2 - 9.7.14.5.10).
    table: dict[tuple[str, str, str], Callable[[], tuple[Any, Any]]] = {
        ("m8n8k4", "a", "w"): lambda: (g, t),
        ("m8n8k4", "b", "w"): lambda: (t, g),
        ("m8n8k4", "c", "c"): lambda: (g, 2 * t + i),
        ("m8n8k16", "a", "b"): lambda: (g, 4 * t + i),
        ("m8n8k16", "b", "b"): lambda: (4 * t + i, g),
        ("m8n8k16", "c", "c"): lambda: (g, 2 * t + i),
        ("m16n8k4", "a", "w"): lambda: (g + 8 * (i == 1), t),
        ("m16n8k4", "b", "w"): lambda: (t, g),
        ("m16n8k8", "a", "h"): lambda: (g + 8 * (i >= 2), 2 * t + (i & 1)),
        ("m16n8k8", "a", "w"): lambda: (g + 8 * (i & 1), t + 4 * (i >= 2)),
        ("m16n8k8", "b", "h"): lambda: (2 * t + i, g),
        ("m16n8k8", "b", "w"): lambda: (t + 4 * i, g),
        ("m16n8k16", "a", "h"): lambda: (g + 8 * ((i >> 1) & 1), 2 * t + (i & 1) + 8 * (i >= 4)),
        ("m16n8k16", "a", "w"): lambda: (g + 8 * (i & 1), t + 4 * (i >> 1)),
        ("m16n8k16", "a", "b"): lambda: (g + 8 * (i >= 4), 4 * t + (i & 3)),
        ("m16n8k16", "b", "h"): lambda: (2 * t + (i & 1) + 8 * (i >= 2), g),
        ("m16n8k16", "b", "w"): lambda: (t + 4 * i, g),
        ("m16n8k16", "b", "b"): lambda: (4 * t + i, g),
        ("m16n8k32", "a", "b"): lambda: (g + 8 * ((i >> 2) & 1), 4 * t + (i & 3) + 16 * (i >= 8)),
        ("m16n8k32", "b", "b"): lambda: (4 * t + (i & 3) + 16 * (i >= 4), g),
    }
    if matrix == "c":
        key = (shape, "c", "c") if shape.startswith("m8") else ("m16", "c", "c")
        table[("m16", "c", "c")] = lambda: (g + 8 * (i >= 2), 2 * t + (i & 1))  # every m16n8kX accumulator
    else:
        key = (shape, matrix, fam)
    rows, cols = (np.broadcast_to(x, (32, E)).astype(np.int64) for x in table[key]())
    rows.flags.writeable = cols.flags.writeable = False  # cached: shared by every caller
    return rows, cols


def wmma_layout(shape: str, matrix: str, et: str) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of each WMMA fragment element: strata's choice, since the ISA leaves it unspecified.

    Lane l's element e is element (l*E + e) mod (rows*cols) of the row-major matrix, where E is the
    fragment's elements per lane; .f16 A/B fragments (16 elements per lane, as eight .f16x2
    registers) hold some elements twice.

    Example:
        >>> r, c = wmma_layout("m16n16k16", "c", "f32")
        >>> r.shape, int(r[3, 0]), int(c[3, 0])
        ((32, 8), 1, 8)
    """
    R, C = _dims(shape, matrix)
    E = 16 if et == "f16" and matrix in ("a", "b") else R * C // 32
    flat = np.arange(32 * E).reshape(32, E) % (R * C)
    return flat // C, flat % C


def _dims(shape: str, matrix: str) -> tuple[int, int]:
    m = _SHAPE.match(shape)
    assert m is not None, shape
    M, N, K = (int(x) for x in m.groups())
    return {"a": (M, K), "b": (K, N)}.get(matrix, (M, N))


class Fragment:
    """A layout as index arrays: the warp's fragment elements <-> the matrix, both as gathers."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> None:
        self.shape = shape
        self.per_lane = rows.shape[1]
        self.lin = (rows * shape[1] + cols).reshape(-1)  # (32*E,) matrix index held at each slot
        inv = np.full(shape[0] * shape[1], -1, dtype=np.int64)
        inv[self.lin[::-1]] = np.arange(self.lin.size)[::-1]  # first holder wins
        assert (inv >= 0).all(), "a fragment layout must cover its matrix"
        self.inv = inv
        size = inv.size
        # WMMA's layouts hold the row-major matrix in lane order: gathers become reshapes
        self.row_major = bool((inv == np.arange(size)).all())
        self.identity = self.row_major and self.lin.size == size

    def to_matrix(self, vals: np.ndarray) -> np.ndarray:
        """(n, E) per-lane elements -> (warps, rows, cols)."""
        warp = vals.reshape(-1, self.lin.size)
        if self.row_major:
            return warp[:, :self.inv.size].reshape(-1, *self.shape)
        return warp[:, self.inv].reshape(-1, *self.shape)

    def from_matrix(self, mat: np.ndarray) -> np.ndarray:
        """(warps, rows, cols) -> (n, E) per-lane elements."""
        if self.identity:
            return mat.reshape(-1, self.per_lane)
        return mat.reshape(mat.shape[0], -1)[:, self.lin].reshape(-1, self.per_lane)


@functools.cache
def _fragment(kind: str, shape: str, matrix: str, et: str) -> Fragment:
    matrix = "c" if matrix == "d" else matrix
    rows, cols = (mma_layout if kind == "mma" else wmma_layout)(shape, matrix, et)
    return Fragment(rows, cols, _dims(shape, matrix))


# ------------------------------------------------------------------------------------------------
# Register <-> element bits <-> values
# ------------------------------------------------------------------------------------------------


def _reg_type(et: str) -> str:
    return "b64" if et == "f64" else "b32"


def _regs_needed(et: str, elems: int) -> int:
    bits = ELEMENTS[et][0]
    return elems if bits == 64 else elems * bits // 32


def _unpack(regs: np.ndarray, et: str) -> np.ndarray:
    """(n, R) register bits -> (n, E) element bits, low bits first."""
    bits = ELEMENTS[et][0]
    if bits >= 32:
        return regs
    if _LITTLE:  # a register's low bits are its first bytes: the elements are a view
        return np.ascontiguousarray(regs, dtype=np.uint32).view(_BITS_DTYPE[bits])
    per = 32 // bits
    shifts = (np.arange(per, dtype=np.uint32) * np.uint32(bits))[None, None, :]
    out = (regs[:, :, None] >> shifts) & np.uint32((1 << bits) - 1)
    return out.reshape(regs.shape[0], -1).astype(_BITS_DTYPE[bits])


def _pack(elems: np.ndarray, et: str) -> np.ndarray:
    """(n, E) element bits -> (n, R) register bits."""
    bits = ELEMENTS[et][0]
    if bits >= 32:
        return elems
    if _LITTLE:
        return np.ascontiguousarray(elems, dtype=_BITS_DTYPE[bits]).view(np.uint32)
    per = 32 // bits
    e = elems.astype(np.uint32).reshape(elems.shape[0], -1, per)
    shifts = (np.arange(per, dtype=np.uint32) * np.uint32(bits))[None, None, :]
    return np.bitwise_or.reduce(e << shifts, axis=2).astype(np.uint32)


def _decode(b: np.ndarray, et: str) -> np.ndarray:
    """Element bits -> values (f64 for floats, int64 for integers)."""
    if et == "f16":
        return b.astype(np.uint16).view(np.float16).astype(np.float64)
    if et == "bf16":
        return (b.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if et == "tf32":
        return (b.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if et == "f32":
        return b.astype(np.uint32).view(np.float32).astype(np.float64)
    if et == "f64":
        return b.astype(np.uint64).view(np.float64)
    if et in ("e4m3", "e5m2"):
        f8 = ml_dtypes.float8_e4m3fn if et == "e4m3" else ml_dtypes.float8_e5m2
        return b.astype(np.uint8).view(f8).astype(np.float64)
    if et == "s8":
        return b.astype(np.uint8).view(np.int8).astype(np.int64)
    if et == "u8":
        return b.astype(np.int64)
    return b.astype(np.uint32).view(np.int32).astype(np.int64)  # s32


def _values(regs: np.ndarray, et: str, tag: str) -> np.ndarray:
    """(n, R) register bits -> (n, E) values, as `_decode(_unpack(regs))`; the 16- and 32-bit float
    types go through reused f64 work arrays (a bf16 is the high half of an f32)."""
    if et not in ("f16", "bf16", "tf32", "f32") or not _LITTLE:
        return _decode(_unpack(regs, et), et)
    n, R = regs.shape
    per = 2 if ELEMENTS[et][0] == 16 else 1
    out = _SCRATCH.get(f"{tag}_f64", n * R * per, np.float64).reshape(n, R * per)
    if et == "f16":
        np.copyto(out, regs.view(np.float16))
    elif et == "f32":
        np.copyto(out, regs.view(np.float32))
    else:
        bits = _SCRATCH.get(f"{tag}_f32", n * R * per, np.uint32).reshape(n, R * per)
        if et == "bf16":
            np.left_shift(regs.view(np.uint16), np.uint32(16), out=bits)
        else:  # tf32: the low 13 mantissa bits are ignored
            np.bitwise_and(regs, np.uint32(0xFFFFE000), out=bits)
        np.copyto(out, bits.view(np.float32))
    return out


def _peak_key(t: str) -> str:
    """The catalogue's peak_flops entry for tensor work on operands of PTX type `t`."""
    if t in ("s8", "u8"):
        return "int8"
    if t in ("e4m3", "e5m2"):
        return "tensor_fp8"
    return {"f16": "tensor_fp16", "bf16": "tensor_bf16", "tf32": "tensor_tf32", "f64": "tensor_fp64"}.get(
        t, "tensor_fp16")


def _product(A: np.ndarray, B: np.ndarray, C: np.ndarray, ab: str, dt: str, rnd: str, sat: bool) -> np.ndarray:
    """D = A @ B + C for (warps, M, K) x (warps, K, N) + (warps, M, N); returns D's element bits."""
    if ab == "f64":
        W, M, K = A.shape
        N = B.shape[2]
        d = C.reshape(-1).copy()
        for k in range(K):  # the documented precision: one f64 fma per k, in ascending k
            a = np.broadcast_to(A[:, :, k, None], (W, M, N)).reshape(-1)
            b = np.broadcast_to(B[:, None, k, :], (W, M, N)).reshape(-1)
            d = fma64(a, b, d, rnd)
        return d.view(np.uint64).reshape(W, M, N)
    if ELEMENTS[ab][1] == "i":
        v = np.matmul(A, B) + C
        if sat:
            v = np.clip(v, -(2**31), 2**31 - 1)
        return (v & 0xFFFFFFFF).astype(np.uint32)
    v = np.matmul(A, B, out=_SCRATCH.get("mma_d", C.size, np.float64).reshape(C.shape))
    np.add(v, C, out=v)  # f64: exact products, one rounding below
    return fr.narrow(v, dt, "rn")


# ------------------------------------------------------------------------------------------------
# Operands
# ------------------------------------------------------------------------------------------------


def _vec_slots(ctx: Any, op: Operand, t: str, n: int, what: str, dst: bool = False) -> list[int]:
    elems = op.elems if isinstance(op, Vec) else (op,)
    if len(elems) != n:
        raise ctx.fail(f"{ctx.ins.full_opcode}: {what} needs {n} registers, got {len(elems)}")
    return [ctx.dst(e, t) if dst else ctx.src(e, t) for e in elems]


def _gather(V: list[Any], slots: list[int], n: int, dtype: np.dtype, buf: np.ndarray | None = None) -> np.ndarray:
    out = np.empty((n, len(slots)), dtype=dtype) if buf is None else buf.reshape(n, len(slots))
    for j, s in enumerate(slots):
        out[:, j] = V[s]  # a scalar (constant operand) broadcasts
    return out


def _scatter(V: list[Any], slots: list[int], vals: np.ndarray, m: Any) -> None:
    for j, s in enumerate(slots):
        write(V[s], vals[:, j], m)


def _parse(ctx: Any, ins: Instruction, known: set[str]) -> tuple[str, list[str], set[str]]:
    """(shape, element types in order, other modifiers) of an mma/wmma opcode."""
    shape = ""
    types: list[str] = []
    flags: set[str] = set()
    for mod in ins.mods:
        if _SHAPE.match(mod):
            shape = mod
        elif mod in ELEMENTS:
            types.append(mod)
        elif mod in known:
            flags.add(mod)
        else:
            raise ctx.unsupported()
    if not shape or "sync" not in flags:
        raise ctx.fail(f"{ins.full_opcode}: expected .sync and a shape")
    return shape, types, flags


# ------------------------------------------------------------------------------------------------
# mma.sync and wmma.mma
# ------------------------------------------------------------------------------------------------


@lowers("mma")
def lower_mma(ins: Instruction, ctx: Any) -> Op:
    """mma.sync.aligned.shape.row.col{.satfinite}.dtype.atype.btype.ctype{.rnd} d, a, b, c."""
    shape, types, flags = _parse(ctx, ins, {"sync", "aligned", "row", "col", "satfinite", *_RND})
    if len(types) != 4:
        raise ctx.unsupported()  # m8n8k4 .f16 (Volta quad-pairs), sub-byte, .b1, block-scaled forms
    dt, at, bt, ct = types
    if (shape, at) not in _MMA_TYPES or (shape, bt) not in _MMA_TYPES or ct not in _MMA_TYPES[(shape, at)]:
        raise ctx.unsupported()
    if dt != ct or (at != bt and ELEMENTS[at][1] == "f" and {at, bt} != {"e4m3", "e5m2"}):
        raise ctx.fail(f"{ins.full_opcode}: unsupported combination of .dtype/.atype/.btype/.ctype")
    if not {"row", "col"} <= flags:
        raise ctx.fail(f"{ins.full_opcode}: mma takes .row.col layouts")
    return _lower_product(ins, ctx, "mma", shape, (at, bt), ct, flags)


def _lower_wmma_mma(ins: Instruction, ctx: Any) -> Op:
    """wmma.mma.sync.aligned.alayout.blayout.shape{.rnd}.dtype{.atype.btype}.ctype{.satfinite} d, a, b, c."""
    shape, types, flags = _parse(ctx, ins, {"mma", "sync", "aligned", "row", "col", "satfinite", *_RND})
    if len(types) == 2:  # f16 multiplicands are implicit
        types = [types[0], "f16", "f16", types[1]]
    if len(types) != 4:
        raise ctx.fail(f"{ins.full_opcode}: expected .dtype.ctype or .dtype.atype.btype.ctype")
    dt, at, bt, ct = types
    if at != bt or shape not in _WMMA_SHAPES.get(at, ()):
        raise ctx.unsupported()
    acc = {"f16": ("f16", "f32"), "s8": ("s32",), "u8": ("s32",), "f64": ("f64",)}.get(at, ("f32",))
    if dt not in acc or ct not in acc:
        raise ctx.fail(f"{ins.full_opcode}: unsupported accumulator types")
    return _lower_product(ins, ctx, "wmma", shape, (at, bt), ct, flags, dt)


def _lower_product(ins: Instruction, ctx: Any, kind: str, shape: str, ab: tuple[str, str], ct: str,
                   flags: set[str], dt: str | None = None) -> Op:
    dt = dt or ct
    if len(ins.operands) != 4:
        raise ctx.fail(f"{ins.full_opcode} takes 4 operands (d, a, b, c), got {len(ins.operands)}")
    frags = {m: _fragment(kind, shape, m, t) for m, t in (("a", ab[0]), ("b", ab[1]), ("c", ct), ("d", dt))}
    types = {"a": ab[0], "b": ab[1], "c": ct, "d": dt}
    slots = {}
    for k, (m, op) in enumerate(zip("dabc", ins.operands, strict=True)):
        need = _regs_needed(types[m], frags[m].per_lane)
        slots[m] = _vec_slots(ctx, op, _reg_type(types[m]), need, f"matrix {m.upper()}", dst=(k == 0))
    rnd = next((r for r in _RND if r in flags), "rn")
    sat = "satfinite" in flags
    M, N = frags["c"].shape
    K = frags["a"].shape[1]
    reg_dt = {m: np.dtype(np.uint64 if types[m] == "f64" else np.uint32) for m in "abcd"}

    def run(f: Any, m: Any) -> None:
        V, n = f.V, f.chunk.n
        mats = {}
        for x in "abc":
            regs = _gather(V, slots[x], n, reg_dt[x], _SCRATCH.get(f"mma_{x}", n * len(slots[x]), reg_dt[x]))
            mats[x] = frags[x].to_matrix(_values(regs, types[x], f"mma_{x}"))  # (warps, rows, cols)
        d = _product(mats["a"], mats["b"], mats["c"], ab[0], dt, rnd, sat)
        _scatter(V, slots["d"], _pack(frags["d"].from_matrix(d), dt), m)

    # "tensor:<catalogue peak>" so the timing model prices each precision at its own tensor rate
    return Op(run, "tensor", exact=True, flops=2 * M * N * K // 32, flop_cls=f"tensor:{_peak_key(ab[0])}")


# ------------------------------------------------------------------------------------------------
# Addresses of many elements per lane (wmma.load/store; cp.async's partial copies)
# ------------------------------------------------------------------------------------------------


class ElementAddresser(Addresser):
    """`[base+offset]` plus per-element byte offsets: every element address of every active lane,
    checked like any ld/st (memcheck), in the global or shared space (generic resolves per element)."""

    def resolve_elements(self, f: Any, lanes: np.ndarray, a: np.ndarray, offsets: np.ndarray,
                         valid: np.ndarray | None = None) -> list[tuple[np.ndarray, Access]]:
        """[(flat positions, Access)] for lanes `lanes` whose `[base+offset]` addresses are `a` (from
        `lanes()`): offsets is (E,) or (lanes, E) bytes; positions index the flattened (lanes, E) grid;
        `valid` (lanes, E) leaves elements out (not accessed)."""
        E = offsets.shape[-1]
        addr = (a[:, None] + np.asarray(offsets).astype(np.uint64)).reshape(-1)
        owner = np.repeat(lanes, E)
        pos = np.arange(addr.size)
        if valid is not None:
            keep = valid.reshape(-1)
            pos, addr, owner = pos[keep], addr[keep], owner[keep]
        if addr.size == 0:
            return []
        if self.space != "generic":
            return [(pos, self._one(f, self.space, owner, addr))]
        out = []
        shared = (addr >= np.uint64(SHARED_WINDOW)) & (addr < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
        local = (addr >= np.uint64(LOCAL_WINDOW)) & (addr < np.uint64(LOCAL_WINDOW + WINDOW_SIZE))
        if local.any():
            i = int(np.flatnonzero(local)[0])
            raise self._fault(f, owner, i, int(addr[i]), f"{self.ins.opcode} cannot access local memory",
                              "local window", space="local")
        if shared.any():
            out.append((pos[shared], self._one(f, "shared", owner[shared], addr[shared] - np.uint64(SHARED_WINDOW))))
        rest = ~shared
        if rest.any():
            out.append((pos[rest], self._one(f, "global", owner[rest], addr[rest])))
        return out


def _space(ctx: Any, ins: Instruction, allowed: tuple[str, ...]) -> str:
    spaces = [m.split("::")[0] for m in ins.mods if m.split("::")[0] in ("global", "shared", "local", "const")]
    if len(spaces) > 1 or (spaces and spaces[0] not in allowed):
        raise ctx.fail(f"{ins.full_opcode}: state space must be one of {', '.join(allowed)}")
    return spaces[0] if spaces else "generic"


def _buffer_view(f: Any, acc: Access, dt: np.dtype) -> np.ndarray:
    if acc.space == "global":
        return f.chunk.mem.typed(dt)
    return acc.buf.view(dt)


def _count(f: Any, acc: Access, size: int, store: bool) -> None:
    (count_global if acc.space == "global" else count_shared)(f, acc, size, store)


# ------------------------------------------------------------------------------------------------
# wmma.load / wmma.store
# ------------------------------------------------------------------------------------------------


@lowers("wmma")
def lower_wmma(ins: Instruction, ctx: Any) -> Op:
    """wmma.load.{a,b,c}, wmma.mma, wmma.store.d (see the module docstring for the layout)."""
    if not ins.mods or ins.mods[0] not in ("load", "store", "mma"):
        raise ctx.unsupported()
    if ins.mods[0] == "mma":
        return _lower_wmma_mma(ins, ctx)
    store = ins.mods[0] == "store"
    which = ins.mods[1] if len(ins.mods) > 1 else ""
    if which not in (("d",) if store else ("a", "b", "c")):
        raise ctx.fail(f"{ins.full_opcode}: expected wmma.load.{{a,b,c}} or wmma.store.d")
    rest = [m for m in ins.mods[2:] if m.split("::")[0] not in ("global", "shared")]
    shape = next((m for m in rest if _SHAPE.match(m)), "")
    types = [m for m in rest if m in ELEMENTS]
    layout = [m for m in rest if m in ("row", "col")]
    if any(m not in ("sync", "aligned", shape, *types, *layout) for m in rest) or len(types) != 1 or \
            len(layout) != 1 or "sync" not in rest:
        raise ctx.unsupported()
    et = types[0]
    matrix = "c" if which == "d" else which
    ab_ok = et in _WMMA_SHAPES and shape in _WMMA_SHAPES[et]
    acc_ok = et in ("f16", "f32", "s32", "f64") and any(shape in s for s in _WMMA_SHAPES.values())
    if not (ab_ok if matrix in ("a", "b") else acc_ok) or (et == "f64") != (shape == "m8n8k4"):
        raise ctx.unsupported()
    space = _space(ctx, ins, ("global", "shared"))
    mem_i, reg_i = (0, 1) if store else (1, 0)
    mem_op = ins.operands[mem_i] if len(ins.operands) in (2, 3) else None
    if not isinstance(mem_op, Mem):
        raise ctx.fail(f"{ins.full_opcode} takes a register vector, an address and an optional stride")
    frag = _fragment("wmma", shape, matrix, et)
    bits = ELEMENTS[et][0]
    size = bits // 8
    slots = _vec_slots(ctx, ins.operands[reg_i], _reg_type(et), _regs_needed(et, frag.per_lane),
                       f"the {matrix.upper()} fragment", dst=not store)
    R, C = frag.shape
    default = C if layout[0] == "row" else R
    stride_slot = ctx.src(ins.operands[2], "u32") if len(ins.operands) == 3 else None
    rows = (frag.lin // C).reshape(32, -1)
    cols = (frag.lin % C).reshape(32, -1)
    major, minor = (rows, cols) if layout[0] == "row" else (cols, rows)
    addresser = ElementAddresser(ctx, ins, mem_op, space, size, "write" if store else "read")
    edt = _BITS_DTYPE[bits]
    reg_dt = np.dtype(np.uint64 if et == "f64" else np.uint32)
    patterns: dict[int, _Pattern] = {}

    def run(f: Any, m: Any) -> None:
        V, n = f.V, f.chunk.n
        sel, base = addresser.lanes(f, m)
        if base.size == 0:
            return
        if m is None and space != "global" and \
                _shared_fast(f, base, V[stride_slot] if stride_slot is not None else default, patterns,
                             major, minor, size, space, store, slots, et, edt, reg_dt):
            return
        lanes = np.arange(n) if sel is None else sel
        stride = default if stride_slot is None else V[stride_slot]
        stride = np.broadcast_to(np.asarray(stride, dtype=np.int64), (n,))[lanes]
        # each row (or column) of the matrix in memory must start 16-byte aligned
        bad = ((base | (stride * size).astype(np.uint64)) & np.uint64(15)) != 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            addr = int(base[i])
            sp = space if space != "generic" else \
                "shared" if SHARED_WINDOW <= addr < SHARED_WINDOW + WINDOW_SIZE else "global"
            where = f.chunk.mem.describe_nearest(addr) if sp == "global" else "shared memory"
            raise addresser._fault(f, lanes, i, addr, "misaligned (wmma rows must start 16-byte aligned)",
                                   where, "cudaErrorMisalignedAddress", sp)
        lane = lanes & 31
        off = (major[lane] * stride[:, None] + minor[lane]) * size  # (lanes, E) bytes from the base
        accesses = addresser.resolve_elements(f, lanes, base, off)
        if store:
            elems = _unpack(_gather(V, slots, n, reg_dt), et)[lanes].reshape(-1)
            for pos, acc in accesses:
                _buffer_view(f, acc, edt)[acc.off >> _SHIFT[size]] = elems[pos]
                _count(f, acc, size, True)
            return
        got = np.zeros(lanes.size * frag.per_lane, dtype=edt)
        for pos, acc in accesses:
            got[pos] = _buffer_view(f, acc, edt)[acc.off >> _SHIFT[size]]
            _count(f, acc, size, False)
        full = np.zeros((n, frag.per_lane), dtype=edt)
        full[lanes] = got.reshape(lanes.size, -1)
        _scatter(V, slots, _pack(full, et), m)

    return Op(run, "memory", exact=True)


_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3}


class _Pattern:
    """A wmma.load/store's byte offsets from the warp's base for one stride, lane-major (32*E,),
    their range, and the bank conflicts of one warp request by the base's phase within a word."""

    def __init__(self, major: np.ndarray, minor: np.ndarray, stride: int, size: int) -> None:
        self.off = ((major * stride + minor) * size).reshape(-1)
        self.lo, self.hi = int(self.off.min()), int(self.off.max())
        self.elems = self.off >> _SHIFT[size]
        self.conflicts = [-1] * 4

    def conflicts_at(self, phase: int) -> int:
        c = self.conflicts[phase]
        if c < 0:
            c = self.conflicts[phase] = int(warp_bank_conflicts(((self.off + phase) >> 2)[None, :])[0])
        return c


def _shared_fast(f: Any, base: np.ndarray, stride: Any, patterns: dict[int, _Pattern], major: np.ndarray,
                 minor: np.ndarray, size: int, space: str, store: bool, slots: list[int], et: str,
                 edt: np.dtype, reg_dt: np.dtype) -> bool:
    """wmma.load/store of whole warps from shared memory at a warp-uniform base and one stride: the
    element addresses and their bank conflicts are one pattern shifted per warp. False (nothing done)
    for anything else, which the general path handles and reports."""
    chunk = f.chunk
    n = chunk.n
    if n % 32:
        return False
    if isinstance(stride, np.ndarray):
        if stride.size != n or (stride != stride[0]).any():
            return False
        stride = stride[0]
    stride = int(stride)
    bw = base[::32]  # (warps,) one address per warp
    if base.size != n or (base.reshape(-1, 32) != bw[:, None]).any() or \
            (int(np.bitwise_or.reduce(bw)) | stride * size) & 15:
        return False
    pat = patterns.get(stride)
    if pat is None:
        if len(patterns) > 64:
            patterns.clear()
        pat = patterns[stride] = _Pattern(major, minor, stride, size)
    lo, hi = int(bw.min()), int(bw.max())
    if space == "generic":
        if lo + pat.lo < SHARED_WINDOW or hi + pat.hi >= SHARED_WINDOW + WINDOW_SIZE:
            return False
        lo, hi, bw = lo - SHARED_WINDOW, hi - SHARED_WINDOW, bw - np.uint64(SHARED_WINDOW)
    if lo + pat.lo < 0 or hi + pat.hi + size > chunk.shared_limit:
        return False
    start = bw.view(np.int64) + chunk.shared_base[::32]  # (warps,) byte offset into the chunk's shared
    shift = _SHIFT[size]
    idx = (start >> shift)[:, None] + pat.elems[None, :]  # (warps, 32*E) element indices
    view = chunk.shared.view(edt)
    phases = np.bincount(start & 3, minlength=4)
    conflicts = sum(int(k) * pat.conflicts_at(p) for p, k in enumerate(phases) if k)
    count_shared_requests(f, idx.size * size, bw.size, conflicts, store)
    if store:
        view[idx.reshape(-1)] = _unpack(_gather(f.V, slots, n, reg_dt), et).reshape(-1)
    else:
        _scatter(f.V, slots, _pack(view[idx].reshape(n, -1), et), None)
    return True


# ------------------------------------------------------------------------------------------------
# ldmatrix / stmatrix / movmatrix: 8x8 matrices of 16-bit elements
# ------------------------------------------------------------------------------------------------

_LANE = np.arange(32)
# thread t holds row t/4, columns 2(t%4) and 2(t%4)+1 of an 8x8 matrix (9.7.14.5.15, Figure 104)
_ROW = np.repeat(_LANE >> 2, 2).reshape(32, 2)
_COL = (2 * (_LANE % 4))[:, None] + np.arange(2)[None, :]


def _matrix_mods(ctx: Any, ins: Instruction) -> tuple[int, bool, str]:
    mods = [m for m in ins.mods if m.split("::")[0] not in ("shared",)]
    num = next((int(m[1:]) for m in mods if m in ("x1", "x2", "x4")), 0)
    trans = "trans" in mods
    if not num or any(m not in ("sync", "aligned", "m8n8", "x1", "x2", "x4", "trans", "b16") for m in mods) or \
            "m8n8" not in mods or "b16" not in mods:
        raise ctx.unsupported()  # .m16n16/.m8n16/.b8 are sm_100+ forms
    return num, trans, _space(ctx, ins, ("shared",))


def _matrix_lanes(f: Any, m: Any, num: int) -> Any:
    """Lanes that supply row addresses: the first 8*num of each warp (x4: all)."""
    if num == 4:
        return m
    src = (np.arange(f.chunk.n) & 31) < 8 * num
    return src if m is None else m & src


def _row_accesses(f: Any, addresser: Addresser, mask: Any, ins: Instruction) -> list[Access]:
    accs = addresser.resolve(f, mask)
    for acc in accs:
        if acc.space != "shared":
            lanes = np.arange(f.chunk.n) if acc.sel is None else acc.sel
            raise LaneFault(int(lanes[0]), ins, f"{ins.opcode} address is not in shared memory ({acc.space})",
                            "cudaErrorIllegalAddress", space=acc.space, access=addresser.access, size=16)
    return accs


def _count_rows(f: Any, acc: Access, store: bool) -> None:
    """One shared request per 8x8 matrix (8 rows of 16 bytes), with its bank conflicts."""
    lanes = np.arange(f.chunk.n) if acc.sel is None else acc.sel
    words = acc.off[:, None] + np.arange(0, 16, 4)[None, :]
    for j in range(4):
        pick = (lanes & 31) // 8 == j
        if pick.any():
            count_shared(f, Access("shared", np.repeat(lanes[pick], 4), acc.buf, words[pick].reshape(-1)), 4, store)


@lowers("ldmatrix")
def lower_ldmatrix(ins: Instruction, ctx: Any) -> Op:
    """ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16 {r...}, [p]."""
    num, trans, space = _matrix_mods(ctx, ins)
    if len(ins.operands) != 2 or not isinstance(ins.operands[1], Mem):
        raise ctx.fail(f"{ins.full_opcode} takes a register vector and an address")
    dsts = _vec_slots(ctx, ins.operands[0], "b32", num, "the destination", dst=True)
    addresser = Addresser(ctx, ins, ins.operands[1], space, 16, "read")
    rr, cc = (_COL, _ROW) if trans else (_ROW, _COL)

    def run(f: Any, m: Any) -> None:
        n = f.chunk.n
        rows = np.zeros((n, 8), dtype=np.uint16)  # the 8 elements at each lane's row address
        for acc in _row_accesses(f, addresser, _matrix_lanes(f, m, num), ins):
            idx = (acc.off >> 1)[:, None] + np.arange(8)[None, :]
            vals = acc.buf.view(np.uint16)[idx]
            if acc.sel is None:
                rows[:] = vals
            else:
                rows[acc.sel] = vals
            _count_rows(f, acc, False)
        mats = rows.reshape(-1, 4, 8, 8)  # (warps, matrix j, row, col): row r of j from lane 8j + r
        for j, d in enumerate(dsts):
            e = mats[:, j][:, rr, cc].astype(np.uint32)  # (warps, 32, 2)
            write(f.V[d], (e[..., 0] | (e[..., 1] << np.uint32(16))).reshape(-1), m)

    return Op(run, "memory", exact=True)


@lowers("stmatrix")
def lower_stmatrix(ins: Instruction, ctx: Any) -> Op:
    """stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}{.shared}.b16 [p], {r...}: ldmatrix's inverse."""
    num, trans, space = _matrix_mods(ctx, ins)
    if len(ins.operands) != 2 or not isinstance(ins.operands[0], Mem):
        raise ctx.fail(f"{ins.full_opcode} takes an address and a register vector")
    srcs = _vec_slots(ctx, ins.operands[1], "b32", num, "the source")
    addresser = Addresser(ctx, ins, ins.operands[0], space, 16, "write")
    rr, cc = (_COL, _ROW) if trans else (_ROW, _COL)

    def run(f: Any, m: Any) -> None:
        n = f.chunk.n
        mats = np.zeros((n // 32, 4, 8, 8), dtype=np.uint16)
        for j, s in enumerate(srcs):
            r = np.broadcast_to(f.V[s], (n,)).astype(np.uint32).reshape(-1, 32)
            mats[:, j, rr[:, 0], cc[:, 0]] = (r & np.uint32(0xFFFF)).astype(np.uint16)
            mats[:, j, rr[:, 1], cc[:, 1]] = (r >> np.uint32(16)).astype(np.uint16)
        rows = mats.reshape(n, 8)
        for acc in _row_accesses(f, addresser, _matrix_lanes(f, m, num), ins):
            idx = (acc.off >> 1)[:, None] + np.arange(8)[None, :]
            acc.buf.view(np.uint16)[idx] = rows if acc.sel is None else rows[acc.sel]
            _count_rows(f, acc, True)

    return Op(run, "memory", exact=True)


@lowers("movmatrix")
def lower_movmatrix(ins: Instruction, ctx: Any) -> Op:
    """movmatrix.sync.aligned.m8n8.trans.b16 d, a: lane t receives row t/4 of the transposed matrix."""
    if sorted(ins.mods) != sorted(("sync", "aligned", "m8n8", "trans", "b16")):
        raise ctx.unsupported()
    if len(ins.operands) != 2:
        raise ctx.fail(f"{ins.full_opcode} takes 2 operands")
    d = ctx.dst(ins.operands[0], "b32")
    a = ctx.src(ins.operands[1], "b32")
    # element k of lane t is M[t/4][2(t%4)+k], i.e. flat index 2t+k of the warp's 64 halves;
    # the result's element k of lane t is M[2(t%4)+k][t/4]
    src = ((_COL * 8) + _ROW).reshape(-1)

    def run(f: Any, m: Any) -> None:
        n = f.chunk.n
        r = np.broadcast_to(f.V[a], (n,)).astype(np.uint32).reshape(-1, 32)
        halves = np.stack([r & np.uint32(0xFFFF), r >> np.uint32(16)], axis=2).reshape(-1, 64)
        t = halves[:, src].reshape(-1, 32, 2)
        write(f.V[d], (t[..., 0] | (t[..., 1] << np.uint32(16))).reshape(-1), m)

    return Op(run, "integer", exact=True)


__all__ = ["ELEMENTS", "ElementAddresser", "Fragment", "mma_layout", "wmma_layout"]
