"""Which vector-memory loads may write their registers when they issue instead of at their `s_waitcnt`.

The engine models a load's latency by queueing its register write until the `s_waitcnt vmcnt(N)` that
retires it, so a kernel that reads the register too early sees the old value, as on the GPU. Queueing
costs a copy of the loaded values and a second pass to write them. When nothing can observe the
difference it is not needed: if, on the straight-line path from the load to the wait that retires it,
no instruction reads or writes the load's destination registers and none can branch away from that path,
writing at issue gives every instruction the same values. A branch *into* the path (the join after an
`if` block holding the load) does not matter: waves arriving there did not issue the load, and the load
writes only the registers of the waves (and lanes) that did. This module finds those loads once, when
a kernel is loaded; the executor still counts them in vmcnt (so later waits retire the right loads) and
still queues them when another queued load is pending (whose later write must not overtake this one).

The register sets are over-approximated (an operand of a vector-ALU instruction with any 64-bit or packed
operand counts as a register pair, an LDS or buffer operand as four registers, instructions with less
regular operands end the path), so a load is only ever left queued by mistake, never completed early by
mistake.

Example:
    >>> from strata.hw.amdgpu.decoder import Inst
    >>> load = Inst(0, 8, "GLOBAL", 0, "global_load_dword", {"vdst": 4, "addr": 2, "data": 0, "saddr": 0x7F})
    >>> wait = Inst(8, 4, "SOPP", 0, "s_waitcnt", {"simm16": 0x0F70})  # vmcnt(0)
    >>> use = Inst(12, 4, "VOP2", 0, "v_add_f32", {"src0": 256 + 4, "vsrc1": 4, "vdst": 5})
    >>> sorted(loads_completing_at_issue([load, wait, use]))
    [0]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from strata.hw.amdgpu.decoder import Inst, flat_width

_SPAN = 4  # registers an LDS or buffer operand may cover (b128 data): over-approximated on purpose
_VMEM = ("GLOBAL", "FLAT", "SCRATCH", "MUBUF")  # formats counted by vmcnt
_FLAT = ("GLOBAL", "FLAT", "SCRATCH")
_MEMORY_VGPR_FIELDS = ("addr", "data", "data0", "data1", "vdst", "vdata", "vaddr")
_VALU = ("VOP1", "VOP2", "VOP3", "VOPC")
_SCALAR = ("SOP1", "SOP2", "SOPC", "SOPK", "SMEM")
_CONTROL_SOP1 = ("s_setpc_b64", "s_swappc_b64", "s_getpc_b64", "s_rfe_b64")


def vmcnt(ins: Inst) -> int:
    """The vmcnt an `s_waitcnt` waits for (63: it does not wait on vector memory)."""
    simm = ins.f["simm16"]
    return (simm & 0xF) | (simm >> 14 & 3) << 4


def loads_completing_at_issue(insts: Sequence[Inst]) -> frozenset[int]:
    """Byte offsets of the GLOBAL/FLAT loads whose register write may happen at issue (see the module)."""
    return frozenset(ins.offset for i, ins in enumerate(insts)
                     if ins.fmt in ("GLOBAL", "FLAT") and "_load_" in ins.name and "_d16" not in ins.name and
                     _untouched_until_retired(insts, i))


def _untouched_until_retired(insts: Sequence[Inst], i: int) -> bool:
    load = insts[i]
    dst = set(range(load.f["vdst"], load.f["vdst"] + flat_width(load.name)))
    later_vm = 0  # vector-memory operations issued after the load
    for j in range(i + 1, len(insts)):
        ins = insts[j]
        if ins.fmt == "SOPP":
            if ins.name == "s_waitcnt":
                if vmcnt(ins) <= later_vm:
                    return True  # this wait retires the load (loads return in order)
                continue
            if ins.name == "s_endpgm":
                return True
            if ins.name != "s_nop":
                return False  # branches, barriers, traps, sleeps: the straight line ends here
            continue
        if ins.fmt in _SCALAR:
            if ins.name in _CONTROL_SOP1:
                return False
            continue
        regs = _vgprs(ins)
        if regs is None or dst & regs:
            return False
        if ins.fmt in _VMEM:
            later_vm += 1
    return False


def _vgprs(ins: Inst) -> set[int] | None:
    """The VGPRs an instruction may read or write (over-approximated), or None when not worked out."""
    f = ins.f
    if ins.fmt in _VALU:
        if f.get("dpp") or f.get("sdwa") or ins.name.startswith(("v_mfma", "v_smfma", "v_accvgpr")) or \
                "sad" in ins.name:  # (v_mqsad_u32_u8 writes four registers)
            return None
        span = 2 if "64" in ins.name or ins.name.startswith("v_pk_") else 1
        codes = [f.get(k, 0) - 256 for k in ("src0", "src1", "src2") if f.get(k, 0) >= 256]
        if "vsrc1" in f:
            codes.append(f["vsrc1"])
        if "vdst" in f:
            codes.append(f["vdst"])
        return _spans(codes, span)
    if ins.fmt in _FLAT:  # the 64-bit address; data for stores and atomics, vdst for loads and returning atomics
        width = flat_width(ins.name)
        regs = _spans([f["addr"]], 2)
        if "_load_" not in ins.name:
            regs |= _spans([f["data"]], width)
        if "_load_" in ins.name or "_atomic_" in ins.name:
            regs |= _spans([f["vdst"]], width)
        return regs
    if ins.fmt in _VMEM or ins.fmt == "DS":
        return _spans((f[k] for k in _MEMORY_VGPR_FIELDS if k in f), _SPAN)
    return None


def _spans(codes: Iterable[int], span: int) -> set[int]:
    return {r + k for r in codes for k in range(span)}
