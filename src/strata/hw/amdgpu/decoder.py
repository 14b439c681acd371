"""Binary decoder for the GFX9 (gfx942 CDNA3, gfx90a CDNA2) instruction encodings clang-19 emits.

Source of truth for how strata reads AMD machine code: a kernel's bytes become a list of `Inst`
(encoding, opcode, mnemonic, operand fields, literal), and `Inst.text` is the disassembly in
llvm-objdump-19's syntax (tests compare it instruction by instruction). Encodings: SOP1, SOP2, SOPK,
SOPC, SOPP, SMEM, VOP1, VOP2, VOPC, VOP3 (a and b), VOP3P, DS, FLAT/GLOBAL/SCRATCH, and the 32-bit
literal constant, with DPP and SDWA; MUBUF. The code object's processor picks the opcode tables (gfx90a
numbers its MFMA differently) and the syntax (gfx90a's glc/slc/scc cache bits for gfx942's sc0/sc1/nt).
An encoding the tables do not know raises UnsupportedAmdInstruction naming its raw words.
"""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass, field

from strata.hw.amdgpu.errors import UnsupportedAmdInstruction
from strata.hw.amdgpu.opcodes import OPCODES

LITERAL = 255
DPP, SDWA = 0xFA, 0xF9
FLOAT_CONSTS = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0}
INV_2PI = 248
# Source operand names of the special scalar registers (operand code -> name, 64-bit name)
SPECIAL = {102: ("flat_scratch_lo", "flat_scratch"), 103: ("flat_scratch_hi", None),
           104: ("xnack_mask_lo", "xnack_mask"), 105: ("xnack_mask_hi", None), 106: ("vcc_lo", "vcc"),
           107: ("vcc_hi", None), 124: ("m0", None), 126: ("exec_lo", "exec"), 127: ("exec_hi", None),
           235: ("src_shared_base", None), 236: ("src_shared_limit", None), 237: ("src_private_base", None),
           238: ("src_private_limit", None), 239: ("src_pops_exiting_wave_id", None), 251: ("src_vccz", None),
           252: ("src_execz", None), 253: ("src_scc", None), 254: ("src_lds_direct", None)}

# Operand widths in dwords (dst, [src0, src1, src2]) where the mnemonic's type suffix does not say it.
_WIDTHS: dict[str, tuple[int, tuple[int, ...]]] = {
    "v_lshlrev_b64": (2, (1, 2)), "v_lshrrev_b64": (2, (1, 2)), "v_ashrrev_i64": (2, (1, 2)),
    "v_lshl_add_u64": (2, (2, 1, 2)), "v_mad_u64_u32": (2, (1, 1, 2)), "v_mad_i64_i32": (2, (1, 1, 2)),
    "v_cndmask_b32": (1, (1, 1, 2)), "v_ldexp_f64": (2, (2, 1)), "v_readlane_b32": (1, (1, 1)),
    "v_writelane_b32": (1, (1, 1)), "v_readfirstlane_b32": (1, (1,)),
    "s_lshl_b64": (2, (2, 1)), "s_lshr_b64": (2, (2, 1)), "s_ashr_i64": (2, (2, 1)), "s_bfe_u64": (2, (2, 1)),
    "s_bfe_i64": (2, (2, 1)), "s_ff1_i32_b64": (1, (2,)), "s_ff0_i32_b64": (1, (2,)), "s_bcnt1_i32_b64": (1, (2,)),
    "s_bcnt0_i32_b64": (1, (2,)), "s_flbit_i32_b64": (1, (2,)), "s_bitset0_b64": (2, (1,)),
    "s_bitset1_b64": (2, (1,)), "s_bfm_b64": (2, (1, 1)), "s_lshl1_add_u32": (1, (1, 1)),
    "v_cvt_f64_f32": (2, (1,)), "v_cvt_f64_i32": (2, (1,)), "v_cvt_f64_u32": (2, (1,)),
    "v_cvt_f32_f64": (1, (2,)), "v_cvt_i32_f64": (1, (2,)), "v_cvt_u32_f64": (1, (2,)),
    "v_trig_preop_f64": (2, (2, 1)), "v_pk_mov_b32": (2, (2, 2)), "v_div_fixup_f64": (2, (2, 2, 2)),
    "s_cselect_b64": (2, (2, 2)), "v_frexp_exp_i32_f64": (1, (2,)),
}
_VOP3B = {"v_div_scale_f32", "v_div_scale_f64", "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32",
          "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32", "v_mad_u64_u32", "v_mad_i64_i32"}
_SOPP_BRANCH = {"s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
                "s_cbranch_execz", "s_cbranch_execnz", "s_cbranch_cdbgsys", "s_cbranch_cdbguser",
                "s_cbranch_cdbgsys_or_user", "s_cbranch_cdbgsys_and_user"}


# VOP1/VOP2 instructions with no VOP3 form: llvm-objdump prints them without the _e32 suffix
_NO_E32 = {"v_readfirstlane_b32", "v_fmamk_f32", "v_fmaak_f32", "v_madmk_f16", "v_madak_f16", "v_madmk_f32",
           "v_madak_f32"}
_LITERAL_OPS = {"v_fmamk_f32", "v_fmaak_f32", "v_madmk_f16", "v_madak_f16", "v_madmk_f32", "v_madak_f32"}


@dataclass
class Inst:
    """One decoded instruction. `offset` is its byte offset in the kernel's code, `size` 4/8/12 bytes."""

    offset: int
    size: int
    fmt: str  # SOP1, SOP2, SOPK, SOPC, SOPP, SMEM, VOP1, VOP2, VOPC, VOP3, VOP3P, DS, FLAT, GLOBAL, ...
    op: int
    name: str  # mnemonic without the _e32/_e64 suffix
    f: dict[str, int] = field(default_factory=dict)  # raw fields
    literal: int | None = None
    words: tuple[int, ...] = ()
    arch: str = "gfx942"  # the target whose tables and syntax decoded it (gfx942 or gfx90a)
    shown: str | None = None  # the disassembly, when the executor renumbered registers (AGPRs) in `f`

    @property
    def widths(self) -> tuple[int, tuple[int, ...]]:
        """(dst dwords, (src dwords, ...)) of the operands."""
        return operand_widths(self.name, self.fmt)

    @property
    def mnemonic(self) -> str:
        """The mnemonic as llvm-objdump prints it (with _e32/_e64 where it distinguishes encodings)."""
        if self.fmt in ("VOP1", "VOP2", "VOPC"):
            if self.f.get("dpp"):
                return self.name + "_dpp"
            if self.f.get("sdwa"):
                return self.name + "_sdwa"
            return self.name if self.name in _NO_E32 else self.name + "_e32"
        if self.fmt == "VOP3" and self.op < 0x1D0 and not self.name.startswith(("v_readlane", "v_writelane")) \
                and self.name in _PROMOTED:
            return self.name + "_e64"
        return self.name

    @property
    def text(self) -> str:
        """The disassembly, as llvm-objdump-19 -d --mcpu=gfx942 prints it (without address comments)."""
        if self.shown is not None:
            return self.shown
        ops = _format_operands(self)
        if self.f.get("dpp"):
            ops += " " + dpp_text(self.f)
        elif self.f.get("sdwa"):
            ops += " " + sdwa_text(self.f, self.fmt)
        return f"{self.mnemonic} {ops}" if ops else self.mnemonic

    def __str__(self) -> str:
        return self.text


@functools.cache
def operand_widths(name: str, fmt: str) -> tuple[int, tuple[int, ...]]:
    if name in _WIDTHS:
        return _WIDTHS[name]
    if name.startswith("v_pk_"):
        w = 2 if name.endswith("f32") else 1
        return w, (w, w, w)
    types = re.findall(r"_([bfiu])(8|16|32|64)\b", name + " ")
    if fmt == "VOPC" or name.startswith("v_cmp") or name.startswith("v_cmpx"):
        w = 2 if types and types[-1][1] == "64" else 1
        return 2, (w, 1 if "_class_" in name else w)
    if not types:
        return 1, (1, 1, 1)
    if len(types) >= 2 and name.startswith("v_cvt"):
        dw = 2 if types[0][1] == "64" else 1
        sw = 2 if types[1][1] == "64" else 1
        return dw, (sw, sw, sw)
    w = 2 if types[-1][1] == "64" else 1
    return w, (w, w, w)


def _field(word: int, lo: int, width: int) -> int:
    return (word >> lo) & ((1 << width) - 1)


def _sext(v: int, bits: int) -> int:
    return v - (1 << bits) if v >> (bits - 1) & 1 else v


ARCHS = ("gfx942", "gfx90a")


@functools.cache
def _tables(arch: str) -> dict[str, dict[int, str]]:
    """The opcode tables of a target (gfx90a has its own: MFMA numbering, v_mad_f32, v_madmk/madak, ...)."""
    base = {fmt: {**table, **_EXTRA.get(fmt, {})} for fmt, table in OPCODES.items()}
    if arch == "gfx90a":
        from strata.hw.amdgpu.opcodes_gfx90a import OPCODES as GFX90A

        base.update({fmt: {**table, **_EXTRA.get(fmt, {})} for fmt, table in GFX90A.items()})
    return base


# Opcodes the generator misses (llvm-mc re-encodes their op_sel_hi bits, so its round-trip check drops them);
# the same numbers on gfx90a and gfx942 (llvm-mc-19 -show-encoding)
_EXTRA: dict[str, dict[int, str]] = {"VOP3P": {88: "v_accvgpr_read_b32", 89: "v_accvgpr_write_b32"},
                                     "SOPK": {20: "s_setreg_imm32_b32"}}  # a literal follows (clang's FTZ division)


def decode_one(code: bytes, at: int, kernel: str = "", arch: str = "gfx942") -> Inst:
    """Decode the instruction at byte `at` of `code` (for `arch`: gfx942 or gfx90a)."""
    if at + 4 > len(code):
        raise UnsupportedAmdInstruction(f"truncated instruction at end of code ({len(code) - at} bytes)", kernel, at)
    w0 = struct.unpack_from("<I", code, at)[0]

    def word1() -> int:
        if at + 8 > len(code):
            raise UnsupportedAmdInstruction(f"truncated 64-bit instruction {w0:08X}", kernel, at)
        return int(struct.unpack_from("<I", code, at + 4)[0])

    f: dict[str, int] = {}
    words: list[int] = [w0]
    if w0 >> 23 == 0x17D:
        fmt, op = "SOP1", _field(w0, 8, 8)
        f.update(sdst=_field(w0, 16, 7), ssrc0=_field(w0, 0, 8))
        srcs = [f["ssrc0"]]
    elif w0 >> 23 == 0x17E:
        fmt, op = "SOPC", _field(w0, 16, 7)
        f.update(ssrc0=_field(w0, 0, 8), ssrc1=_field(w0, 8, 8))
        srcs = [f["ssrc0"], f["ssrc1"]]
    elif w0 >> 23 == 0x17F:
        fmt, op = "SOPP", _field(w0, 16, 7)
        f.update(simm16=_field(w0, 0, 16))
        srcs = []
    elif w0 >> 28 == 0xB:
        fmt, op = "SOPK", _field(w0, 23, 5)
        f.update(sdst=_field(w0, 16, 7), simm16=_field(w0, 0, 16))
        srcs = []
    elif w0 >> 30 == 0b10:
        fmt, op = "SOP2", _field(w0, 23, 7)
        f.update(sdst=_field(w0, 16, 7), ssrc0=_field(w0, 0, 8), ssrc1=_field(w0, 8, 8))
        srcs = [f["ssrc0"], f["ssrc1"]]
    elif w0 >> 26 == 0b110000:
        fmt, op = "SMEM", _field(w0, 18, 8)
        w1 = word1()
        words.append(w1)
        f.update(sbase=_field(w0, 0, 6) * 2, sdata=_field(w0, 6, 7), soe=_field(w0, 14, 1), nv=_field(w0, 15, 1),
                 glc=_field(w0, 16, 1), imm=_field(w0, 17, 1), offset=_sext(_field(w1, 0, 21), 21),
                 soffset=_field(w1, 25, 7))
        srcs = []
    elif w0 >> 23 == 0x1A7:
        fmt, op = "VOP3P", _field(w0, 16, 7)
        w1 = word1()
        words.append(w1)
        f.update(vdst=_field(w0, 0, 8), neg_hi=_field(w0, 8, 3), op_sel=_field(w0, 11, 3),
                 op_sel_hi2=_field(w0, 14, 1), clamp=_field(w0, 15, 1), src0=_field(w1, 0, 9),
                 src1=_field(w1, 9, 9), src2=_field(w1, 18, 9), op_sel_hi=_field(w1, 27, 2), neg=_field(w1, 29, 3))
        srcs = [f["src0"], f["src1"], f["src2"]]
    elif w0 >> 26 == 0b110100:
        fmt, op = "VOP3", _field(w0, 16, 10)
        w1 = word1()
        words.append(w1)
        f.update(vdst=_field(w0, 0, 8), abs=_field(w0, 8, 3), sdst=_field(w0, 8, 7), opsel=_field(w0, 11, 4),
                 clamp=_field(w0, 15, 1), src0=_field(w1, 0, 9), src1=_field(w1, 9, 9), src2=_field(w1, 18, 9),
                 omod=_field(w1, 27, 2), neg=_field(w1, 29, 3))
        srcs = [f["src0"], f["src1"], f["src2"]]
    elif w0 >> 26 == 0b110110:
        fmt, op = "DS", _field(w0, 17, 8)
        w1 = word1()
        words.append(w1)
        f.update(offset0=_field(w0, 0, 8), offset1=_field(w0, 8, 8), gds=_field(w0, 16, 1), addr=_field(w1, 0, 8),
                 data0=_field(w1, 8, 8), data1=_field(w1, 16, 8), vdst=_field(w1, 24, 8))
        srcs = []
    elif w0 >> 26 == 0b110111:
        seg = _field(w0, 14, 2)
        fmt = {0: "FLAT", 1: "SCRATCH", 2: "GLOBAL"}.get(seg, "FLAT?")
        op = _field(w0, 18, 7)
        w1 = word1()
        words.append(w1)
        f.update(offset=_sext(_field(w0, 0, 13), 13) if seg else _field(w0, 0, 12), lds=_field(w0, 13, 1),
                 sc0=_field(w0, 16, 1), nt=_field(w0, 17, 1), sc1=_field(w0, 25, 1),
                 addr=_field(w1, 0, 8), data=_field(w1, 8, 8), saddr=_field(w1, 16, 7), acc=_field(w1, 23, 1),
                 vdst=_field(w1, 24, 8))
        srcs = []
    elif w0 >> 26 == 0b111000:
        fmt, op = "MUBUF", _field(w0, 18, 7)
        w1 = word1()
        words.append(w1)
        f.update(offset=_field(w0, 0, 12), offen=_field(w0, 12, 1), idxen=_field(w0, 13, 1), sc0=_field(w0, 14, 1),
                 sc1=_field(w0, 15, 1), lds=_field(w0, 16, 1), nt=_field(w0, 17, 1), vaddr=_field(w1, 0, 8),
                 vdata=_field(w1, 8, 8), srsrc=_field(w1, 16, 5) * 4, acc=_field(w1, 23, 1),
                 soffset=_field(w1, 24, 8))
        srcs = [f["soffset"]]
    elif w0 >> 25 == 0b0111110:
        fmt, op = "VOPC", _field(w0, 17, 8)
        f.update(src0=_field(w0, 0, 9), vsrc1=_field(w0, 9, 8))
        srcs = [f["src0"]]
    elif w0 >> 25 == 0b0111111:
        fmt, op = "VOP1", _field(w0, 9, 8)
        f.update(vdst=_field(w0, 17, 8), src0=_field(w0, 0, 9))
        srcs = [f["src0"]]
    elif w0 >> 31 == 0:
        fmt, op = "VOP2", _field(w0, 25, 6)
        f.update(vdst=_field(w0, 17, 8), vsrc1=_field(w0, 9, 8), src0=_field(w0, 0, 9))
        srcs = [f["src0"]]
    else:
        raise UnsupportedAmdInstruction(f"unknown encoding {w0:08X}", kernel, at)
    table = _tables(arch).get("GLOBAL" if fmt == "FLAT" else fmt, {})
    name = table.get(op)
    if name is None:
        raise UnsupportedAmdInstruction(f"{fmt} opcode {op} (encoding {' '.join(f'{w:08X}' for w in words)})",
                                        kernel, at)
    if fmt == "FLAT":
        name = "flat_" + name.split("_", 1)[1]
    if fmt in ("VOP1", "VOP2", "VOPC") and f["src0"] in (DPP, SDWA):
        ext = word1()
        words.append(ext)
        f["ext"] = ext
        if f["src0"] == DPP:  # the DPP dword: the real src0 VGPR and the cross-lane control
            f.update(dpp=1, src0=256 + (ext & 0xFF), dpp_ctrl=ext >> 8 & 0x1FF, bound_ctrl=ext >> 19 & 1,
                     neg=(ext >> 20 & 1) | (ext >> 22 & 1) << 1, abs=(ext >> 21 & 1) | (ext >> 23 & 1) << 1,
                     bank_mask=ext >> 24 & 0xF, row_mask=ext >> 28 & 0xF)
        else:  # SDWA: sub-dword selects of the sources and the destination
            f.update(sdwa=1, src0=(ext & 0xFF) + (0 if ext >> 23 & 1 else 256), dst_sel=ext >> 8 & 7,
                     dst_unused=ext >> 11 & 3, sdwa_clamp=ext >> 13 & 1, omod=ext >> 14 & 3,
                     src0_sel=ext >> 16 & 7, src0_sext=ext >> 19 & 1, src1_sel=ext >> 24 & 7,
                     src1_sext=ext >> 27 & 1, neg=(ext >> 20 & 1) | (ext >> 28 & 1) << 1,
                     abs=(ext >> 21 & 1) | (ext >> 29 & 1) << 1)
            if ext >> 31 & 1:  # src1 is an SGPR
                f["vsrc1_sgpr"] = 1
    literal = None
    if name in _LITERAL_OPS or name == "s_setreg_imm32_b32":
        srcs.append(LITERAL)
    if LITERAL in srcs and (fmt != "SOPK" or name == "s_setreg_imm32_b32"):
        lat = at + 4 * len(words)
        if lat + 4 > len(code):
            raise UnsupportedAmdInstruction(f"{name}: literal constant missing at end of code", kernel, at)
        literal = int(struct.unpack_from("<I", code, lat)[0])
        words.append(literal)
    return Inst(at, 4 * len(words), fmt, op, name, f, literal, tuple(words), arch)


def decode(code: bytes, kernel: str = "", arch: str = "gfx942") -> list[Inst]:
    """Decode a kernel's machine code into instructions, in order.

    Raises:
        UnsupportedAmdInstruction: an encoding or opcode the tables do not know (names its raw words).
    """
    out: list[Inst] = []
    at = 0
    while at < len(code):
        ins = decode_one(code, at, kernel, arch)
        out.append(ins)
        at += ins.size
    return out


# -- formatting (llvm-objdump syntax)
_PROMOTED = set(OPCODES.get("VOP1", {}).values()) | set(OPCODES.get("VOP2", {}).values()) | \
    set(OPCODES.get("VOPC", {}).values())


def sreg(code: int, width: int = 1, literal: int | None = None) -> str:
    """The text of a scalar source/destination operand code (0..255)."""
    if code <= 101:
        return f"s{code}" if width == 1 else f"s[{code}:{code + width - 1}]"
    if 108 <= code <= 123:
        n = code - 108
        return f"ttmp{n}" if width == 1 else f"ttmp[{n}:{n + width - 1}]"
    if code in SPECIAL:
        lo, wide = SPECIAL[code]
        if width == 2 and wide:
            return wide
        return lo
    if 128 <= code <= 192:
        return str(code - 128)
    if 193 <= code <= 208:
        return str(-(code - 192))
    if code in FLOAT_CONSTS:
        return repr(FLOAT_CONSTS[code])
    if code == INV_2PI:
        return "0.15915494"
    if code == LITERAL:
        v = literal or 0
        # llvm prints a literal that an inline constant could have encoded (relocated addresses) as decimal
        return str(v - (1 << 32) if v >= 0xFFFFFFF0 else v) if v <= 64 or v >= 0xFFFFFFF0 else f"0x{v:x}"
    return f"src{code}"


HW_REGS = {1: "HW_REG_MODE", 2: "HW_REG_STATUS", 3: "HW_REG_TRAPSTS", 4: "HW_REG_HW_ID", 5: "HW_REG_GPR_ALLOC",
           6: "HW_REG_LDS_ALLOC", 7: "HW_REG_IB_STS", 15: "HW_REG_SH_MEM_BASES"}
HW_REG_MODE = 1


def hwreg_fields(simm16: int) -> tuple[int, int, int]:
    """(register id, bit offset, bit size) of s_getreg/s_setreg's simm16."""
    return simm16 & 0x3F, simm16 >> 6 & 0x1F, (simm16 >> 11 & 0x1F) + 1


def hwreg(simm16: int) -> str:
    """s_getreg/s_setreg's register operand as llvm prints it: hwreg(NAME) for the whole register, else
    hwreg(NAME, offset, size); an id without a name is printed as its number."""
    rid, offset, size = hwreg_fields(simm16)
    name = HW_REGS.get(rid, str(rid))
    return f"hwreg({name})" if offset == 0 and size == 32 else f"hwreg({name}, {offset}, {size})"


def src(code: int, width: int = 1, literal: int | None = None) -> str:
    """The text of a 9-bit vector-instruction source operand (256+ are VGPRs)."""
    if code >= 256:
        r = code - 256
        return f"v{r}" if width == 1 else f"v[{r}:{r + width - 1}]"
    return sreg(code, width, literal)


def vreg(r: int, width: int = 1) -> str:
    return f"v{r}" if width == 1 else f"v[{r}:{r + width - 1}]"


def _neg_abs(text: str, i: int, f: dict[str, int]) -> str:
    if f.get("sdwa") and i < 2 and f.get(f"src{i}_sext"):  # SDWA's integer sign extension of the selection
        text = f"sext({text})"
    if f.get("abs", 0) >> i & 1:
        text = f"|{text}|"
    if f.get("neg", 0) >> i & 1:
        text = f"-{text}"
    return text


def dpp_text(f: dict[str, int]) -> str:
    """The DPP control as llvm-objdump prints it."""
    ctrl = f["dpp_ctrl"]
    if ctrl <= 0xFF:
        sel = "[" + ",".join(str(ctrl >> (2 * k) & 3) for k in range(4)) + "]"
        text = f"quad_perm:{sel}"
    elif 0x101 <= ctrl <= 0x10F:
        text = f"row_shl:{ctrl & 0xF}"
    elif 0x111 <= ctrl <= 0x11F:
        text = f"row_shr:{ctrl & 0xF}"
    elif 0x121 <= ctrl <= 0x12F:
        text = f"row_ror:{ctrl & 0xF}"
    else:
        text = {0x130: "wave_shl:1", 0x134: "wave_rol:1", 0x138: "wave_shr:1", 0x13C: "wave_ror:1",
                0x140: "row_mirror", 0x141: "row_half_mirror", 0x142: "row_bcast:15",
                0x143: "row_bcast:31"}.get(ctrl, f"dpp_ctrl:{ctrl:#x}")
    text += f" row_mask:0x{f['row_mask']:x} bank_mask:0x{f['bank_mask']:x}"
    if f["bound_ctrl"]:
        text += " bound_ctrl:1"
    return text


SDWA_SEL = ("BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD", "SEL7")
SDWA_UNUSED = ("UNUSED_PAD", "UNUSED_SEXT", "UNUSED_PRESERVE", "UNUSED3")


def sdwa_text(f: dict[str, int], fmt: str) -> str:
    """The SDWA selects as llvm-objdump prints them."""
    parts = []
    if fmt != "VOPC":
        parts += [f"dst_sel:{SDWA_SEL[f['dst_sel']]}", f"dst_unused:{SDWA_UNUSED[f['dst_unused']]}"]
    parts.append(f"src0_sel:{SDWA_SEL[f['src0_sel']]}")
    if fmt != "VOP1":
        parts.append(f"src1_sel:{SDWA_SEL[f['src1_sel']]}")
    return " ".join(parts)


def _waitcnt(simm: int) -> str:
    vm = (simm & 0xF) | (simm >> 14 & 3) << 4
    exp = simm >> 4 & 7
    lgkm = simm >> 8 & 0xF
    parts = []
    if vm != 63:
        parts.append(f"vmcnt({vm})")
    if exp != 7:
        parts.append(f"expcnt({exp})")
    if lgkm != 15:
        parts.append(f"lgkmcnt({lgkm})")
    return " ".join(parts) if parts else "vmcnt(63) expcnt(7) lgkmcnt(15)"


def _format_operands(ins: Inst) -> str:  # noqa: C901 - one branch per encoding
    f, name, lit = ins.f, ins.name, ins.literal
    dw, sws = ins.widths
    sw = list(sws) + [1, 1, 1]
    if ins.fmt == "SOP2":
        return f"{sreg(f['sdst'], dw)}, {sreg(f['ssrc0'], sw[0], lit)}, {sreg(f['ssrc1'], sw[1], lit)}"
    if ins.fmt == "SOP1":
        if name in ("s_setpc_b64", "s_rfe_b64"):
            return sreg(f["ssrc0"], 2)
        if name == "s_getpc_b64":
            return sreg(f["sdst"], 2)
        return f"{sreg(f['sdst'], dw)}, {sreg(f['ssrc0'], sw[0], lit)}"
    if ins.fmt == "SOPC":
        return f"{sreg(f['ssrc0'], sw[0], lit)}, {sreg(f['ssrc1'], sw[1], lit)}"
    if ins.fmt == "SOPK":
        if name == "s_getreg_b32":
            return f"{sreg(f['sdst'])}, {hwreg(f['simm16'])}"
        if name == "s_setreg_b32":
            return f"{hwreg(f['simm16'])}, {sreg(f['sdst'])}"
        if name == "s_setreg_imm32_b32":
            return f"{hwreg(f['simm16'])}, {sreg(LITERAL, 1, lit)}"
        return f"{sreg(f['sdst'], dw)}, 0x{f['simm16']:x}"
    if ins.fmt == "SOPP":
        if name == "s_waitcnt":
            return _waitcnt(f["simm16"])
        if name in ("s_endpgm", "s_barrier", "s_dcache_wb", "s_icache_inv", "s_ttracedata", "s_endpgm_saved",
                    "s_wakeup", "s_code_end"):
            return ""
        return str(f["simm16"]) if name in _SOPP_BRANCH or name in ("s_nop", "s_sleep", "s_setprio", "s_trap") \
            else f"0x{f['simm16']:x}"
    if ins.fmt == "SMEM":
        n = {"s_load_dword": 1, "s_load_dwordx2": 2, "s_load_dwordx4": 4, "s_load_dwordx8": 8,
             "s_load_dwordx16": 16}.get(name, 1)
        off = f"0x{f['offset'] & 0x1FFFFF:x}" if f["imm"] else sreg(f["soffset"] if f["soe"] else f["offset"])
        text = f"{sreg(f['sdata'], n)}, {sreg(f['sbase'], 2)}, {off}"
        return text + (" glc" if f["glc"] else "")
    if ins.fmt == "VOP1":
        if name == "v_accvgpr_mov_b32":
            return f"{_mai_reg(f['vdst'], 1, True)}, {_mai_reg(f['src0'] - 256, 1, True)}"
        if name == "v_readfirstlane_b32":
            return f"{sreg(f['vdst'])}, {src(f['src0'], 1, lit)}"
        if name in ("v_nop", "v_clrexcp"):
            return ""
        return f"{vreg(f['vdst'], dw)}, {_neg_abs(src(f['src0'], sw[0], lit), 0, f)}"
    if ins.fmt == "VOP2":
        s1_text = sreg(f["vsrc1"]) if f.get("vsrc1_sgpr") else vreg(f["vsrc1"], sw[1])
        s0, s1 = _neg_abs(src(f["src0"], sw[0], lit), 0, f), _neg_abs(s1_text, 1, f)
        if name in ("v_cndmask_b32",):
            return f"{vreg(f['vdst'])}, {s0}, {s1}, vcc"
        if name in ("v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"):
            return f"{vreg(f['vdst'])}, vcc, {s0}, {s1}, vcc"
        if name in ("v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32"):
            return f"{vreg(f['vdst'])}, vcc, {s0}, {s1}"
        if name in ("v_madmk_f32", "v_fmamk_f32", "v_madmk_f16"):
            return f"{vreg(f['vdst'])}, {s0}, 0x{lit or 0:x}, {s1}"
        if name in ("v_madak_f32", "v_fmaak_f32", "v_madak_f16"):
            return f"{vreg(f['vdst'])}, {s0}, {s1}, 0x{lit or 0:x}"
        return f"{vreg(f['vdst'], dw)}, {s0}, {s1}"
    if ins.fmt == "VOPC":
        dst = "exec" if name.startswith("v_cmpx") else "vcc"
        if f.get("sdwa") and f["ext"] >> 15 & 1:  # SDWA's SD bit: an SGPR pair instead of VCC
            dst = sreg(f["ext"] >> 8 & 0x7F, 2)
        return f"{dst}, {_neg_abs(src(f['src0'], sw[0], lit), 0, f)}, {_neg_abs(vreg(f['vsrc1'], sw[1]), 1, f)}"
    if ins.fmt == "VOP3":
        n_src = _vop3_sources(name)
        srcs = [_neg_abs(src(f[f"src{i}"], sw[i], lit), i, f) for i in range(n_src)]
        if name in ("v_readlane_b32",):
            return f"{sreg(f['vdst'])}, {srcs[0]}, {srcs[1]}"
        if name.startswith("v_cmp"):
            dst = sreg(f["vdst"], 2)
        else:
            dst = vreg(f["vdst"], dw)
        parts = [dst]
        if name in _VOP3B:
            parts.append(sreg(f["sdst"], 2))
            srcs = [_neg_abs(src(f[f"src{i}"], sw[i], lit), i, {"neg": f["neg"]}) for i in range(n_src)]
            if name in ("v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"):
                srcs.append(sreg(f["src2"], 2))  # the carry in
        text = ", ".join(parts + srcs)
        if f["clamp"]:
            text += " clamp"
        if f["omod"]:
            text += {1: " mul:2", 2: " mul:4", 3: " div:2"}[f["omod"]]
        return text
    if ins.fmt == "VOP3P" and name in MFMA:
        return _format_mfma(ins)
    if name == "v_accvgpr_read_b32":
        return f"{vreg(f['vdst'])}, {_mai_reg(f['src0'] - 256, 1, True)}"
    if name == "v_accvgpr_write_b32":
        return f"{_mai_reg(f['vdst'], 1, True)}, {src(f['src0'], 1, lit)}"
    if ins.fmt == "VOP3P":
        n_src = 3 if any(t in name for t in ("fma", "mad")) else 2
        srcs = [src(f[f"src{i}"], sw[i], lit) for i in range(n_src)]
        text = ", ".join([vreg(f["vdst"], dw)] + srcs)
        op_sel = f["op_sel"]
        op_sel_hi = f["op_sel_hi"] | f["op_sel_hi2"] << 2
        default_hi = (1 << n_src) - 1
        if op_sel:
            text += " op_sel:[" + ",".join(str(op_sel >> i & 1) for i in range(n_src)) + "]"
        if (op_sel_hi & default_hi) != default_hi:
            text += " op_sel_hi:[" + ",".join(str(op_sel_hi >> i & 1) for i in range(n_src)) + "]"
        if f["neg"] & default_hi:
            text += " neg_lo:[" + ",".join(str(f["neg"] >> i & 1) for i in range(n_src)) + "]"
        if f["neg_hi"] & default_hi:
            text += " neg_hi:[" + ",".join(str(f["neg_hi"] >> i & 1) for i in range(n_src)) + "]"
        if f["clamp"]:
            text += " clamp"
        return text
    if ins.fmt == "DS":
        return _format_ds(ins)
    if ins.fmt in ("GLOBAL", "FLAT", "SCRATCH"):
        return _format_flat(ins)
    if ins.fmt == "MUBUF":
        return _format_mubuf(ins)
    return " ".join(f"{w:08X}" for w in ins.words)


def _cache_bits(ins: Inst) -> str:
    """The cache-policy bits: sc0/sc1/nt on gfx942 (gfx940 family), glc/slc/scc on gfx90a."""
    f = ins.f
    if ins.arch == "gfx90a":
        return "".join(t for t, on in ((" glc", f["sc0"]), (" slc", f["nt"]), (" scc", f["sc1"])) if on)
    return "".join(t for t, on in ((" sc0", f["sc0"]), (" sc1", f["sc1"]), (" nt", f["nt"])) if on)


def _format_mubuf(ins: Inst) -> str:
    """buffer_* instructions: data, address (off, or the VGPR(s) offen/idxen use), resource, soffset."""
    f, name = ins.f, ins.name
    tail = ""
    if f["offen"]:
        tail += " offen"
    if f["idxen"]:
        tail += " idxen"
    if f["offset"]:
        tail += f" offset:{f['offset']}"
    tail += _cache_bits(ins) + (" lds" if f["lds"] else "")
    if not name.startswith(("buffer_load", "buffer_store", "buffer_atomic")):
        # buffer_wbl2, buffer_inv, buffer_wbinvl1*: cache control only (gfx90a's take no cache-policy operand)
        return "" if ins.arch == "gfx90a" else tail.strip()
    w = flat_width(name.replace("buffer_", "global_"))
    if "_d16" in name or name.endswith(("_format_x", "ubyte", "sbyte", "ushort", "sshort", "byte", "short")):
        w = 1
    n_addr = f["offen"] + f["idxen"]
    addr = "off" if n_addr == 0 else vreg(f["vaddr"], n_addr)
    data = _mai_reg(f["vdata"], w, bool(f["acc"]))
    return f"{data}, {addr}, {sreg(f['srsrc'], 4)}, {sreg(f['soffset'], 1, ins.literal)}{tail}"


# MFMA shapes: name -> (M, N, K, input kind, k values per lane, input dwords, output dwords, blocks). A multi-block
# instruction does `blocks` independent M x N x K products at once (blocks of lanes hold their operands).
MFMA: dict[str, tuple[int, int, int, str, int, int, int, int]] = {
    "v_mfma_f32_16x16x4_f32": (16, 16, 4, "f32", 1, 1, 4, 1),
    "v_mfma_f32_32x32x2_f32": (32, 32, 2, "f32", 1, 1, 16, 1),
    "v_mfma_f32_16x16x16_f16": (16, 16, 16, "f16", 4, 2, 4, 1),
    "v_mfma_f32_32x32x8_f16": (32, 32, 8, "f16", 4, 2, 16, 1),
    "v_mfma_f32_16x16x16_bf16": (16, 16, 16, "bf16", 4, 2, 4, 1),
    "v_mfma_f32_32x32x8_bf16": (32, 32, 8, "bf16", 4, 2, 16, 1),
    "v_mfma_i32_16x16x32_i8": (16, 16, 32, "i8", 8, 2, 4, 1),
    "v_mfma_i32_32x32x16_i8": (32, 32, 16, "i8", 8, 2, 16, 1),
    "v_mfma_f64_16x16x4_f64": (16, 16, 4, "f64", 1, 2, 8, 1),
    "v_mfma_f32_32x32x1_2b_f32": (32, 32, 1, "f32", 1, 1, 32, 2),
    "v_mfma_f32_16x16x1_4b_f32": (16, 16, 1, "f32", 1, 1, 16, 4),
    "v_mfma_f32_4x4x1_16b_f32": (4, 4, 1, "f32", 1, 1, 4, 16),
    "v_mfma_f32_32x32x4_2b_f16": (32, 32, 4, "f16", 4, 2, 32, 2),
    "v_mfma_f32_16x16x4_4b_f16": (16, 16, 4, "f16", 4, 2, 16, 4),
    "v_mfma_f32_4x4x4_16b_f16": (4, 4, 4, "f16", 4, 2, 4, 16),
    "v_mfma_f32_32x32x4_2b_bf16": (32, 32, 4, "bf16", 4, 2, 32, 2),
    "v_mfma_f32_16x16x4_4b_bf16": (16, 16, 4, "bf16", 4, 2, 16, 4),
    "v_mfma_f32_4x4x4_16b_bf16": (4, 4, 4, "bf16", 4, 2, 4, 16),
    "v_mfma_i32_32x32x4_2b_i8": (32, 32, 4, "i8", 4, 1, 32, 2),
    "v_mfma_i32_16x16x4_4b_i8": (16, 16, 4, "i8", 4, 1, 16, 4),
    "v_mfma_i32_4x4x4_16b_i8": (4, 4, 4, "i8", 4, 1, 4, 16),
    "v_mfma_f64_4x4x4_4b_f64": (4, 4, 4, "f64", 1, 2, 2, 4),
    # gfx90a (CDNA2) spellings of the same shapes, its own i8 shapes (4 bytes per lane) and its older bf16
    # shapes (2 values per lane)
    "v_mfma_f32_16x16x4f32": (16, 16, 4, "f32", 1, 1, 4, 1),
    "v_mfma_f32_32x32x2f32": (32, 32, 2, "f32", 1, 1, 16, 1),
    "v_mfma_f32_16x16x16f16": (16, 16, 16, "f16", 4, 2, 4, 1),
    "v_mfma_f32_32x32x8f16": (32, 32, 8, "f16", 4, 2, 16, 1),
    "v_mfma_f32_16x16x16bf16_1k": (16, 16, 16, "bf16", 4, 2, 4, 1),
    "v_mfma_f32_32x32x8bf16_1k": (32, 32, 8, "bf16", 4, 2, 16, 1),
    "v_mfma_i32_16x16x16i8": (16, 16, 16, "i8", 4, 1, 4, 1),
    "v_mfma_i32_32x32x8i8": (32, 32, 8, "i8", 4, 1, 16, 1),
    "v_mfma_f64_16x16x4f64": (16, 16, 4, "f64", 1, 2, 8, 1),
    "v_mfma_f32_32x32x1f32": (32, 32, 1, "f32", 1, 1, 32, 2),
    "v_mfma_f32_16x16x1f32": (16, 16, 1, "f32", 1, 1, 16, 4),
    "v_mfma_f32_4x4x1f32": (4, 4, 1, "f32", 1, 1, 4, 16),
    "v_mfma_f32_32x32x4f16": (32, 32, 4, "f16", 4, 2, 32, 2),
    "v_mfma_f32_16x16x4f16": (16, 16, 4, "f16", 4, 2, 16, 4),
    "v_mfma_f32_4x4x4f16": (4, 4, 4, "f16", 4, 2, 4, 16),
    "v_mfma_i32_32x32x4i8": (32, 32, 4, "i8", 4, 1, 32, 2),
    "v_mfma_i32_16x16x4i8": (16, 16, 4, "i8", 4, 1, 16, 4),
    "v_mfma_i32_4x4x4i8": (4, 4, 4, "i8", 4, 1, 4, 16),
    "v_mfma_f32_32x32x4bf16_1k": (32, 32, 4, "bf16", 4, 2, 32, 2),
    "v_mfma_f32_16x16x4bf16_1k": (16, 16, 4, "bf16", 4, 2, 16, 4),
    "v_mfma_f32_4x4x4bf16_1k": (4, 4, 4, "bf16", 4, 2, 4, 16),
    "v_mfma_f32_32x32x2bf16": (32, 32, 2, "bf16", 2, 1, 32, 2),
    "v_mfma_f32_16x16x2bf16": (16, 16, 2, "bf16", 2, 1, 16, 4),
    "v_mfma_f32_4x4x2bf16": (4, 4, 2, "bf16", 2, 1, 4, 16),
    "v_mfma_f32_32x32x4bf16": (32, 32, 4, "bf16", 2, 1, 16, 1),
    "v_mfma_f32_16x16x8bf16": (16, 16, 8, "bf16", 2, 1, 4, 1),
    "v_mfma_f64_4x4x4f64": (4, 4, 4, "f64", 1, 2, 2, 4),
}


def _mai_reg(r: int, width: int, acc: bool) -> str:
    prefix = "a" if acc else "v"
    return f"{prefix}{r}" if width == 1 else f"{prefix}[{r}:{r + width - 1}]"


def _format_mfma(ins: Inst) -> str:
    f = ins.f
    in_w, out_w = MFMA[ins.name][5:7]
    acc_cd = bool(f["clamp"])  # bit 15 of a MAI instruction is ACC_CD: vdst and src2 are AGPRs
    acc = f["op_sel_hi"]  # bits 27/28: src0/src1 are AGPRs

    def operand(code: int, width: int, is_acc: bool) -> str:
        return _mai_reg(code - 256, width, is_acc) if code >= 256 else src(code, width, ins.literal)

    parts = [_mai_reg(f["vdst"], out_w, acc_cd), operand(f["src0"], in_w, bool(acc & 1)),
             operand(f["src1"], in_w, bool(acc & 2)), operand(f["src2"], out_w, acc_cd)]
    text = ", ".join(parts)
    cbsz, abid, blgp = f["neg_hi"], f["op_sel"] | f["op_sel_hi2"] << 3, f["neg"]
    for label, v in (("cbsz", cbsz), ("abid", abid), ("blgp", blgp)):
        if v:
            text += f" {label}:{v}"
    return text


def _vop3_sources(name: str) -> int:
    three = ("v_fma", "v_mad", "v_div_fixup", "v_div_fmas", "v_div_scale", "v_add3", "v_lshl_add", "v_add_lshl",
             "v_lshl_or", "v_and_or", "v_or3", "v_bfe", "v_bfi", "v_alignbit", "v_alignbyte", "v_med3", "v_min3",
             "v_max3", "v_cndmask", "v_perm", "v_sad", "v_xad", "v_msad", "v_qsad", "v_mqsad", "v_cvt_pk_u8",
             "v_mullit", "v_lerp", "v_dot")
    if name.startswith(three) and name not in ("v_mad_legacy_f32_fake",):
        return 3
    one = ("v_mov", "v_cvt", "v_exp", "v_log", "v_rcp", "v_rsq", "v_sqrt", "v_sin", "v_cos", "v_not", "v_bfrev",
           "v_ffbh", "v_ffbl", "v_fract", "v_trunc", "v_ceil", "v_rndne", "v_floor", "v_frexp", "v_readfirstlane",
           "v_clrexcp", "v_movreld", "v_movrels", "v_movrelsd", "v_screen", "v_log_legacy", "v_exp_legacy",
           "v_swap", "v_accvgpr_read", "v_accvgpr_write", "v_accvgpr_mov")
    if name.startswith(one) and not name.startswith("v_cvt_pk") and not name.startswith("v_cvt_pkrtz"):
        return 1
    return 2


_DS_LOADS = {"ds_read_b32": 1, "ds_read_b64": 2, "ds_read_b96": 3, "ds_read_b128": 4, "ds_read_u8": 1,
             "ds_read_i8": 1, "ds_read_u16": 1, "ds_read_i16": 1, "ds_read2_b32": 2, "ds_read2_b64": 4,
             "ds_read2st64_b32": 2, "ds_read2st64_b64": 4, "ds_read_u8_d16": 1, "ds_read_u16_d16_hi": 1}
_DS_STORES = {"ds_write_b32": 1, "ds_write_b64": 2, "ds_write_b96": 3, "ds_write_b128": 4, "ds_write_b8": 1,
              "ds_write_b16": 1, "ds_write2_b32": 1, "ds_write2_b64": 2, "ds_write2st64_b32": 1,
              "ds_write2st64_b64": 2}


def _format_ds(ins: Inst) -> str:
    f, name = ins.f, ins.name
    two = "2" in name.split("_")[1]
    if two:
        mods = (f" offset0:{f['offset0']}" if f["offset0"] else "") + \
            (f" offset1:{f['offset1']}" if f["offset1"] else "")
    else:
        off = f["offset0"] | f["offset1"] << 8
        mods = f" offset:{off}" if off else ""
    if f["gds"]:
        mods += " gds"
    if name in _DS_LOADS:
        return f"{vreg(f['vdst'], _DS_LOADS[name])}, {vreg(f['addr'])}{mods}"
    if name in _DS_STORES:
        w = _DS_STORES[name]
        data = f"{vreg(f['data0'], w)}" + (f", {vreg(f['data1'], w)}" if two else "")
        return f"{vreg(f['addr'])}, {data}{mods}"
    if name in ("ds_bpermute_b32", "ds_permute_b32"):
        return f"{vreg(f['vdst'])}, {vreg(f['addr'])}, {vreg(f['data0'])}{mods}"
    if name == "ds_swizzle_b32":
        return f"{vreg(f['vdst'])}, {vreg(f['addr'])}{mods}"
    w = 2 if re.search(r"_[biuf]64", name) else 1
    if name.endswith("_rtn_b32") or name.endswith("_rtn_u32") or name.endswith("_rtn_f32") or "_rtn_" in name:
        data = vreg(f["data0"], w) + (f", {vreg(f['data1'], w)}" if "cmpst" in name or "mskor" in name else "")
        return f"{vreg(f['vdst'], w)}, {vreg(f['addr'])}, {data}{mods}"
    data = vreg(f["data0"], w) + (f", {vreg(f['data1'], w)}" if "cmpst" in name or "mskor" in name else "")
    return f"{vreg(f['addr'])}, {data}{mods}"


_FLAT_WIDTH = {"dword": 1, "dwordx2": 2, "dwordx3": 3, "dwordx4": 4, "ubyte": 1, "sbyte": 1, "ushort": 1,
               "sshort": 1, "byte": 1, "short": 1}


@functools.cache
def flat_width(name: str) -> int:
    """Dwords of data a FLAT/GLOBAL instruction moves per lane."""
    tail = name.split("_")[-1]
    if tail in _FLAT_WIDTH:
        return _FLAT_WIDTH[tail]
    if "cmpswap_x2" in name:
        return 4
    if name.endswith(("_x2", "_f64")) or "cmpswap" in name:
        return 2
    return 1


def _format_flat(ins: Inst) -> str:
    f, name = ins.f, ins.name
    saddr = f["saddr"]
    has_saddr = ins.fmt != "FLAT" and saddr != 0x7F
    addr = vreg(f["addr"], 1 if has_saddr else 2)
    if ins.fmt == "SCRATCH":  # gfx940: bit 13 (SVE) says whether the VGPR address is used
        addr = vreg(f["addr"]) if f["lds"] else "off"
        tail = sreg(saddr) if saddr != 0x7F else "off"
    tail = sreg(saddr, 2 if ins.fmt == "GLOBAL" else 1) if has_saddr else ("off" if ins.fmt != "FLAT" else "")
    w = flat_width(name)
    is_atomic = "atomic" in name
    acc = bool(f.get("acc"))  # gfx90a+: the data/destination registers are AGPRs
    if "load" in name:
        parts = [_mai_reg(f["vdst"], w, acc), addr]
    elif is_atomic:
        dw = w // 2 if "cmpswap" in name else w
        parts = ([_mai_reg(f["vdst"], dw, acc)] if f["sc0"] else []) + [addr, _mai_reg(f["data"], w, acc)]
    else:
        parts = [addr, _mai_reg(f["data"], w, acc)]
    if tail:
        parts.append(tail)
    text = ", ".join(parts)
    if f["offset"]:
        text += f" offset:{f['offset']}"
    return text + _cache_bits(ins)
