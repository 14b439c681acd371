"""Uniform registers: values every thread of a launch shares, kept as one scalar instead of a lane array.

Like the scalar registers of real GPUs (AMD SGPRs, NVIDIA uniform registers), a kernel's parameters and
what is computed only from them (base pointers after `cvta`, sizes, `%ntid`) are the same in every lane.
The JIT finds them conservatively: defined by exactly one unguarded instruction of the kernel, from
constants, kernel parameters, launch-shape registers and other uniform registers (so every execution
of that instruction, by any lanes, yields the same value; a lane reading the register without having
run its one definition would read an undefined value on hardware too); and read only by instructions
whose semantics accept a scalar operand (as they accept an immediate). Such a register costs one
scalar op instead of a pass over every lane.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.hw.ptx.ir import (
    NO_REGISTER_RESULT,
    CallArgs,
    FImm,
    Function,
    Imm,
    Instruction,
    Mem,
    Operand,
    Pair,
    Reg,
    Sym,
    Vec,
    operand_registers,
    written_registers,
)

DEFINERS = frozenset({"mov", "ld", "cvta", "add", "sub", "mul", "shl", "shr", "and", "or", "xor", "mad", "cvt"})
READERS = frozenset({
    "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "and", "or", "xor", "not", "shl", "shr",
    "setp", "selp", "cvta", "cvt", "mov", "ld", "st", "neg", "abs", "set", "mul24", "mad24", "sad",
})
UNIFORM_SPECIALS = ("%ntid", "%nctaid", "%nsmid", "%gridid", "%nwarpid", "%dynamic_smem_size",
                    "%total_smem_size")


def uniform_registers(fn: Function) -> set[str]:
    """Registers of kernel `fn` that hold one value for every lane (see the module docstring)."""
    if not fn.is_entry:
        return set()
    defs: dict[str, int] = {}
    for ins in fn.body:
        for r in written_registers(ins):
            defs[r] = defs.get(r, 0) + 1
    params = {p.name for p in fn.params}
    cand: dict[str, Instruction] = {}
    for ins in fn.body:
        if ins.guard is not None or ins.opcode not in DEFINERS or len(ins.operands) < 2:
            continue
        dst = ins.operands[0]
        if not isinstance(dst, Reg) or defs.get(dst.name) != 1 or fn.regs.get(dst.name) == "pred":
            continue
        if "cc" in ins.mods:  # carry-chain ops keep per-lane flags
            continue
        if ins.opcode == "ld":
            src = ins.operands[1]
            ok = "param" in ins.mods and isinstance(src, Mem) and isinstance(src.base, Sym) and \
                src.base.name in params and not any(m in ("v2", "v4") for m in ins.mods)
        elif ins.opcode == "cvta":
            ok = ("global" in ins.mods or "const" in ins.mods) and _sources_uniform(ins.operands[1:], cand)
        else:
            ok = _sources_uniform(ins.operands[1:], cand)
        if ok:
            cand[dst.name] = ins
    changed = True
    while changed:  # drop candidates read where a scalar is not accepted, and what they fed
        changed = False
        for ins in fn.body:
            for r in _read(ins):
                if r in cand and not _safe_reader(ins):
                    del cand[r]
                    changed = True
        for r, ins in list(cand.items()):
            if ins.opcode != "ld" and not _sources_uniform(ins.operands[1:], cand):
                del cand[r]
                changed = True
    return set(cand)


def _sources_uniform(ops: tuple[Operand, ...], cand: dict[str, Instruction]) -> bool:
    for op in ops:
        if isinstance(op, Imm | FImm | Sym):
            continue
        if isinstance(op, Reg) and not op.negated and (op.name in cand or op.name.startswith(UNIFORM_SPECIALS)):
            continue
        return False
    return True


def _safe_reader(ins: Instruction) -> bool:
    """Whether the op takes a NumPy scalar where it reads a register (as it takes an immediate)."""
    if ins.opcode not in READERS:
        return False
    if ins.opcode in ("fma", "mad", "div", "rem", "min", "max") and ("f64" in ins.mods or "cc" in ins.mods):
        return False
    return ins.opcode in ("ld", "st") or not any(isinstance(op, Vec | Pair | CallArgs) for op in ins.operands)


def _read(ins: Instruction) -> list[str]:
    ops = ins.operands if ins.opcode in NO_REGISTER_RESULT else ins.operands[1:]
    out = [r for op in ops for r in operand_registers(op)]
    if ins.opcode not in NO_REGISTER_RESULT and ins.operands and isinstance(ins.operands[0], Mem):
        out += operand_registers(ins.operands[0])
    if ins.guard is not None:
        out.append(ins.guard.name)
    return out


def scalar_definition(run: Any, storage: np.dtype, view_slots: list[tuple[int, np.dtype]]) -> Any:
    """Wrap a lowered op so it computes its (uniform) result once and leaves NumPy scalars in every
    view slot of the destination register."""

    def run_uniform(f: Any, m: Any) -> None:
        V = f.V
        cell = np.zeros(1, dtype=storage)
        views = [(i, _view(cell, dt)) for i, dt in view_slots]
        for i, v in views:
            V[i] = v
        run(f, None)  # the first block runs every live lane together; the value is the same for all
        for i, v in views:
            V[i] = v[0]

    return run_uniform


def _view(cell: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.itemsize == cell.dtype.itemsize:
        return cell.view(dt)
    return cell.view(dt)[:: cell.dtype.itemsize // dt.itemsize]
