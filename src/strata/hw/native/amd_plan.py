"""Whether an AMD (gfx9, wave64) kernel's loads may write their registers at issue: the static check made
once per kernel before it runs on the native executor.

The native AMD code writes a load's registers when the load issues, while the reference executor
(hw/amdgpu/executor.py) queues the write until the `s_waitcnt` that retires it (vmcnt for global loads,
lgkmcnt for scalar loads and LDS reads). Both give every instruction the same values when, on every path
a wave can take from the load to the wait that retires it, no instruction reads or writes the load's
destination registers. waitcnt.py proves that on the straight line only; this module follows branches
too (both ways of a conditional one), since the usual `if (...) x = a[i]; else x = 0;` joins after the
load before its wait. Every instruction reachable before the retiring wait is checked once (joins and loops
are followed until they add nothing); a path that jumps through registers or traps is taken as touching the
registers: such a kernel runs on the reference executor, whose queue models the stale read.

Example:
    >>> from strata.hw.amdgpu.decoder import Inst
    >>> load = Inst(0, 8, "SMEM", 0, "s_load_dword", {"sdata": 4, "sbase": 0, "imm": 1, "offset": 0, "soe": 0})
    >>> wait = Inst(8, 4, "SOPP", 0, "s_waitcnt", {"simm16": 0xC07F})  # lgkmcnt(0)
    >>> loads_observed_early([load, wait])
    []
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from strata.hw.amdgpu.decoder import Inst, flat_width

_VALU = ("VOP1", "VOP2", "VOP3", "VOPC", "VOP3P")
_VMEM = ("GLOBAL", "FLAT", "SCRATCH", "MUBUF")
_SPECIAL = {106, 107, 124, 125, 126, 127}  # VCC, M0, EXEC: read implicitly by many instructions
_VOP3B = {"v_div_scale_f32", "v_div_scale_f64", "v_mad_u64_u32", "v_mad_i64_i32", "v_add_co_u32", "v_addc_co_u32",
          "v_sub_co_u32", "v_subb_co_u32", "v_subrev_co_u32", "v_subbrev_co_u32"}  # a scalar carry-out (sdst)
SMEM_DWORDS = {"s_load_dword": 1, "s_load_dwordx2": 2, "s_load_dwordx4": 4, "s_load_dwordx8": 8,
               "s_load_dwordx16": 16}
_NOT_BRANCHES = ("s_waitcnt", "s_endpgm", "s_nop", "s_barrier", "s_setprio", "s_sleep", "s_code_end",
                 "s_icache_inv", "s_dcache_wb", "s_ttracedata")


def ds_read_dwords(name: str) -> int:
    """Registers an LDS read (or lane permute) writes (ds_read2_b64: 4)."""
    if not name.startswith("ds_read"):
        return 1
    width = int(name.rsplit("_b", 1)[1]) // 32 if "_b" in name else 1
    return width * (2 if name.startswith("ds_read2") else 1)


def loads_observed_early(insts: Sequence[Inst]) -> list[int]:
    """Byte offsets of the loads whose destination registers some path may touch before their wait."""
    index = {ins.offset: i for i, ins in enumerate(insts)}
    bad = []
    for i, ins in enumerate(insts):
        if ins.fmt in ("GLOBAL", "FLAT") and "_load_" in ins.name:
            dst, kind, scalar = set(range(ins.f["vdst"], ins.f["vdst"] + flat_width(ins.name))), "vm", False
        elif ins.fmt == "SMEM" and ins.name in SMEM_DWORDS:
            dst, kind, scalar = set(range(ins.f["sdata"], ins.f["sdata"] + SMEM_DWORDS[ins.name])), "lgkm", True
            if dst & _SPECIAL:
                bad.append(ins.offset)
                continue
        elif ins.fmt == "DS" and ins.name.startswith(("ds_read", "ds_bpermute", "ds_permute")):
            dst, kind, scalar = set(range(ins.f["vdst"], ins.f["vdst"] + ds_read_dwords(ins.name))), "lgkm", False
        else:
            continue
        if not _untouched(insts, index, i, dst, kind, scalar):
            bad.append(ins.offset)
    return bad


def _counter(ins: Inst, kind: str) -> int:
    simm = int(ins.f["simm16"])
    return (simm & 0xF) | (simm >> 14 & 3) << 4 if kind == "vm" else simm >> 8 & 0xF


def _untouched(insts: Sequence[Inst], index: dict[int, int], i: int, dst: set[int], kind: str, scalar: bool) -> bool:
    """Every path from load i reaches the wait that retires it (or s_endpgm) without touching `dst`."""
    limit = 63 if kind == "vm" else 15
    stack = [(i + 1, 0)]
    seen: set[tuple[int, int]] = set()
    while stack:
        j, later = stack.pop()
        if (j, later) in seen:
            continue  # a join or a loop: the instructions from here on are checked already
        seen.add((j, later))
        if j >= len(insts):
            return False
        ins = insts[j]
        if ins.fmt == "SOPP":
            if ins.name == "s_waitcnt":
                k = _counter(ins, kind)
                if k < limit and k <= later:
                    continue  # retired on this path
                stack.append((j + 1, later))
            elif ins.name == "s_endpgm":
                continue
            elif ins.name in _NOT_BRANCHES:
                stack.append((j + 1, later))
            elif ins.name.startswith(("s_branch", "s_cbranch_")):
                simm = int(ins.f["simm16"])
                target = index.get(ins.offset + 4 + 4 * (simm - 0x10000 if simm & 0x8000 else simm))
                if target is None:
                    return False
                stack.append((target, later))
                if ins.name != "s_branch":
                    stack.append((j + 1, later))
            else:
                return False  # traps and the rest: not followed
            continue
        regs = _sgprs(ins) if scalar else _vgprs(ins)
        if regs is None or dst & regs:
            return False
        counted = ins.fmt in _VMEM if kind == "vm" else ins.fmt in ("SMEM", "DS")
        stack.append((j + 1, min(later + 1, 64) if counted else later))
    return True


def _spans(codes: Iterable[int], span: int) -> set[int]:
    return {r + k for r in codes for k in range(span)}


def _sgprs(ins: Inst) -> set[int] | None:
    """SGPRs an instruction may read or write (operand widths from the decoder's tables; a VOP3B carry-out or a
    compare's mask as a pair); None for jumps through registers."""
    if ins.name in ("s_setpc_b64", "s_swappc_b64", "s_getpc_b64", "s_rfe_b64"):
        return None
    f = ins.f
    regs: set[int] = set()

    def add(key: str, span: int) -> None:
        if key in f and f[key] < 128:
            regs.update(range(f[key], f[key] + span))
    if ins.fmt in ("SOP1", "SOP2", "SOPC", "SOPK"):
        dw, sw = ins.widths
        add("sdst", max(dw, 1))
        for k, w in zip(("ssrc0", "ssrc1"), (*sw, 2, 2), strict=False):
            add(k, max(w, 1))
    elif ins.fmt == "SMEM":
        add("sdata", SMEM_DWORDS.get(ins.name, 16))
        add("sbase", 2)
        if f.get("soe"):
            add("soffset", 1)
        if not f.get("imm"):
            add("offset", 1)
    elif ins.fmt in _VALU:
        _, sw = ins.widths
        for i, key in enumerate(("src0", "src1", "src2")[:len(sw)]):  # (unused source fields hold 0: not s0)
            add(key, max(sw[i], 1))
        if ins.name in _VOP3B:  # (in other VOP3 encodings these bits are abs modifiers)
            add("sdst", 2)
        if ins.name.startswith(("v_cmp", "v_readlane", "v_readfirstlane")):
            add("vdst", 2)
    elif ins.fmt in ("GLOBAL", "SCRATCH"):
        add("saddr", 2)
    return regs


def _vgprs(ins: Inst) -> set[int] | None:
    """VGPRs an instruction may read or write (from the operand widths of the decoder's tables; four registers
    for memory operands other than plain LDS reads and writes); None when not worked out (MFMA, DPP/SDWA)."""
    f = ins.f
    if ins.fmt in ("SOP1", "SOP2", "SOPC", "SOPK", "SMEM", "SOPP"):
        return set()
    if ins.fmt in _VALU:
        if f.get("dpp") or f.get("sdwa") or "mfma" in ins.name or ins.name.startswith("v_accvgpr"):
            return None
        dw, sw = ins.widths
        regs: set[int] = set()
        for i, key in enumerate(("src0", "src1", "src2")):
            if f.get(key, 0) >= 256:
                w = sw[i] if i < len(sw) else 2
                regs.update(range(f[key] - 256, f[key] - 256 + max(w, 1)))
        if "vsrc1" in f:
            w = sw[1] if len(sw) > 1 else 2
            regs.update(range(f["vsrc1"], f["vsrc1"] + max(w, 1)))
        if "vdst" in f and not ins.name.startswith(("v_cmp", "v_readlane", "v_readfirstlane")):
            regs.update(range(f["vdst"], f["vdst"] + max(dw, 1)))
        return regs
    if ins.fmt == "DS" and ins.name in ("ds_bpermute_b32", "ds_permute_b32"):
        return {f["addr"], f["data0"], f["vdst"]}
    if ins.fmt == "DS" and ins.name.startswith(("ds_read_b", "ds_read2_b", "ds_read2st64_b")):
        return {f["addr"], *range(f["vdst"], f["vdst"] + ds_read_dwords(ins.name))}
    if ins.fmt == "DS" and ins.name.startswith(("ds_write_b", "ds_write2_b", "ds_write2st64_b")):
        w = ds_read_dwords(ins.name.replace("write", "read")) // (2 if "write2" in ins.name else 1)
        return {f["addr"], *range(f["data0"], f["data0"] + w), *(range(f["data1"], f["data1"] + w)
                                                                  if "write2" in ins.name else ())}
    if ins.fmt in ("GLOBAL", "FLAT") and "_atomic_" not in ins.name:  # the address, then data or destination
        width = flat_width(ins.name)
        regs = set(range(f["addr"], f["addr"] + (1 if ins.fmt == "GLOBAL" and f.get("saddr", 0x7F) != 0x7F else 2)))
        key = "vdst" if "_load_" in ins.name else "data"
        return regs | set(range(f[key], f[key] + width))
    if ins.fmt in _VMEM or ins.fmt == "DS":
        return _spans((f[k] for k in ("addr", "data", "data0", "data1", "vdst", "vdata", "vaddr") if k in f), 4)
    return None
