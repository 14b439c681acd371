"""The wave64 executor: runs decoded GFX9 machine code on NumPy wavefronts.

Source of truth for how the CDNA virtual GPU executes a dispatch. Workgroups are split into
wavefronts of 64 lanes; a batch of whole workgroups runs at once, every wave with its own program
counter. State per wave: SGPRs (`s[w, 0..127]`, VCC at 106/107, M0 at 124, EXEC at 126/127), SCC;
per lane: VGPRs (`v[w, r, lane]`); per workgroup: LDS. The scheduler runs the instruction at the
lowest program counter for all waves that sit there, so waves that took the same branches move in
lock step; a wave at `s_barrier` waits until no wave can run, at which point every live wave of every
workgroup is at a barrier and all are released (ended waves count as arrived, as on hardware).

Initial state (AMDGPUUsage, "Initial Kernel Execution State"): the user SGPRs the kernel descriptor
enables (private segment buffer, dispatch ptr, queue ptr, kernarg segment ptr, ...), then the
enabled workgroup ids; v0 holds the work-item ids packed x | y << 10 | z << 20 (gfx90a+).

Memory: every global, scalar and LDS access is checked; a bad one raises DeviceFault with kernel,
instruction offset and disassembly, workgroup, work-item, address and nearest allocation. Loads
complete at the `s_waitcnt` that covers them (vmcnt for vector memory, lgkmcnt for LDS and scalar
loads): until then the destination registers keep their old values, so a missing wait reads stale
data, as on hardware.

Approximations (docs/amd.md): v_exp/log/rcp/rsq/sqrt_f32 are computed in float64 and rounded to
float32 (within 0.5 ulp; hardware is within 1 ulp and has no public bit-exact definition); the float32
fma is correctly rounded (_fma32); v_div_scale only scales when the exponents are extreme, as the ISA
describes.

Speed: VGPRs are register-major (v[reg, wave, lane]); fully active waves take fast paths that give the
same bits (results computed in place, lane-linear global accesses as slices, LDS index arrays reused per
address register, MFMA as reshapes); the scheduler skips its selection while every wave runs together.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from strata import config
from strata.errors import DeviceFault, LaunchCancelled, LaunchTimeout
from strata.hw.amdgpu import printf
from strata.hw.amdgpu.codeobject import KernelInfo
from strata.hw.amdgpu.decoder import (
    FLOAT_CONSTS,
    HW_REG_MODE,
    INV_2PI,
    LITERAL,
    MFMA,
    Inst,
    decode,
    flat_width,
    hwreg_fields,
)
from strata.hw.amdgpu.errors import UnsupportedAmdInstruction
from strata.hw.amdgpu.waitcnt import loads_completing_at_issue
from strata.hw.counters import Counters
from strata.hw.isa.fpround import Scratch
from strata.hw.isa.memory import warp_bank_conflicts
from strata.hw.memory import GLOBAL_BASE, DeviceMemory

WAVE = 64
# flat apertures (the high 32 bits of generic addresses of LDS and scratch), above the unified device range
SHARED_APERTURE, PRIVATE_APERTURE = 0x10000, 0x20000
_APERTURES = {235: SHARED_APERTURE, 236: SHARED_APERTURE, 237: PRIVATE_APERTURE, 238: PRIVATE_APERTURE}
DYNAMIC_STACK_BYTES = 4096  # per work-item stack added for kernels with a dynamic stack (recursion, indirect calls)
PRIVATE_BATCH_BYTES = 256 << 20
BATCH_FACTOR = 2  # a batch holds this many times STRATA_CHUNK_LANES lanes (see execute)
VGPR_BATCH_BYTES = 64 << 20
VCC, M0, EXEC = 106, 124, 126
_LANES = np.arange(WAVE, dtype=np.uint64)
_U32 = np.uint32
_U64 = np.uint64
_MASK32 = _U64(0xFFFFFFFF)


# ---------------------------------------------------------------------------- program
@dataclass
class AmdProgram:
    """A kernel decoded and checked once at load: every instruction has a handler."""

    kernel: KernelInfo
    insts: list[Inst]
    index: dict[int, int]  # byte offset -> instruction index
    handlers: list[Callable[..., None]]
    categories: list[str] = field(default_factory=list)  # per instruction: salu, valu, smem, vmem, lds, mfma, branch
    image_base: int = 0  # device address the code object's image was loaded at (s_getpc_b64 reads it)
    stops: list[bool] = field(default_factory=list)  # per instruction: may end or park waves (s_endpgm, s_barrier)
    exec_writes: list[bool] = field(default_factory=list)  # per instruction: may write EXEC
    early_loads: frozenset[int] = frozenset()  # offsets of loads that write their registers at issue (waitcnt.py)

    @property
    def ftz(self) -> bool:
        """The descriptor's FLOAT_DENORM_MODE_32 flushes float32 denormals (clang's
        -fgpu-flush-denormals-to-zero); 3 (the default) keeps them."""
        return self.kernel.descriptor.float_denorm_mode_32 == 0

    @property
    def name(self) -> str:
        return self.kernel.name


def load_program(kernel: KernelInfo) -> AmdProgram:
    """Decode a kernel and bind every instruction to its semantics.

    Raises:
        UnsupportedAmdInstruction: an instruction that cannot be decoded or executed, with its disassembly.
    """
    insts = decode(kernel.code, kernel.name, kernel.arch)
    if kernel.functions and any(i.name in ("s_swappc_b64", "s_setpc_b64") for i in insts):
        # device functions it may call: decoded at their place relative to the kernel's entry
        for fname, vaddr, code in kernel.functions:
            for ins in decode(code, f"{kernel.name} (function {fname})", kernel.arch):
                ins.offset += vaddr - kernel.code_offset
                insts.append(ins)
        insts.sort(key=lambda i: i.offset)
    aoff = kernel.descriptor.accum_offset
    for i, ins in enumerate(insts):
        if ins.f.get("acc") and ins.fmt in ("FLAT", "GLOBAL", "SCRATCH", "MUBUF"):
            # loads/stores of AGPRs (gfx90a+): the accumulation registers follow the arch VGPRs in one file
            f = dict(ins.f)
            for key in ("vdst", "data", "vdata"):
                if key in f:
                    f[key] += aoff
            f["acc"] = 0
            insts[i] = dataclasses.replace(ins, f=f, shown=ins.text)
    handlers = []
    for ins in insts:
        h = _handler(ins)
        if h is None:
            raise UnsupportedAmdInstruction(ins.text, kernel.name, ins.offset)
        handlers.append(h)
    return AmdProgram(kernel, insts, {ins.offset: i for i, ins in enumerate(insts)}, handlers,
                      [_category(ins) for ins in insts],
                      stops=[ins.name in ("s_endpgm", "s_barrier", "s_trap") for ins in insts],
                      exec_writes=[_writes_exec(ins) for ins in insts], early_loads=loads_completing_at_issue(insts))


def _writes_exec(ins: Inst) -> bool:
    """Whether the instruction may change EXEC (conservative: any scalar destination at or past 126, the
    saveexec family, v_cmpx, a VOP3 carry-out or scalar load there)."""
    f = ins.f
    return ("exec" in ins.name or ins.name.startswith("v_cmpx") or f.get("sdst", 0) >= EXEC - 1 and
            f.get("sdst", 0) < 128 or ins.fmt == "SMEM" and f.get("sdata", 0) + 16 > EXEC or
            ins.name.startswith(("v_cmp", "v_readlane", "v_readfirstlane")) and f.get("vdst", 0) in (EXEC, EXEC + 1))


def _category(ins: Inst) -> str:
    """The issue class of an instruction, as AMD's profilers count them (per wave)."""
    if ins.fmt == "SOPP":
        return "branch" if ins.name.startswith(("s_branch", "s_cbranch")) else "sync" if ins.name in (
            "s_barrier", "s_waitcnt") else "salu"
    if ins.fmt.startswith("SOP") or ins.fmt == "SOPK":
        return "branch" if ins.name in ("s_swappc_b64", "s_setpc_b64") else "salu"
    if ins.fmt == "SMEM":
        return "smem"
    if ins.fmt == "DS":
        return "lds"
    if ins.fmt in ("GLOBAL", "FLAT", "SCRATCH", "MUBUF"):
        return "vmem"
    return "mfma" if "mfma" in ins.name else "valu"


# ---------------------------------------------------------------------------- state
@dataclass
class _Pending:
    """A load issued but not yet waited for: its values land in registers at the matching s_waitcnt."""

    kind: str  # 'vm' | 'lgkm'
    waves: np.ndarray  # wave indices
    apply: Callable[[np.ndarray], None]  # write the values of the given row subset (bool per entry of waves)
    vgprs: bool = True  # it writes VGPRs (False: SGPRs, or nothing: a store counted in vmcnt)


@dataclass
class _Batch:
    s: np.ndarray  # (W, 128) uint32
    v: np.ndarray  # (NV, W, 64) uint32: register-major, so one register of every wave is contiguous
    scc: np.ndarray  # (W,) bool
    pc: np.ndarray  # (W,) int64 instruction index
    done: np.ndarray  # (W,) bool
    barrier: np.ndarray  # (W,) bool
    wg: np.ndarray  # (W,) workgroup index in the batch
    wg_id: np.ndarray  # (W, 3) workgroup id in the grid
    wave_in_wg: np.ndarray  # (W,)
    lds: np.ndarray  # (G, lds_words) uint32
    priv: np.ndarray  # (W, 64, private_words) uint32: each lane's private (scratch) segment
    pending: list[_Pending] = field(default_factory=list)
    all_waves: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # arange(W)
    wg_word: np.ndarray | None = None  # (W, 1) each wave's workgroup's first word in lds.reshape(-1)
    lds_addr: dict[Any, tuple[Any, ...]] = field(default_factory=dict)  # _lds_span's index arrays by register
    lds_conflicts: dict[Any, tuple[int]] = field(default_factory=dict)  # conflicts of one pass, by its pattern
    mode: np.ndarray | None = None  # (W,) the MODE register once a wave wrote it (s_setreg); None: the descriptor's


@dataclass(slots=True)
class _Ctx:
    """What handlers see: the batch, the selected waves, memory and the launch."""

    b: _Batch
    ix: Any  # slice(None) or index array into the batch's waves
    n: int
    mem: DeviceMemory
    prog: AmdProgram
    launch: Any  # AmdLaunch
    counters: Counters
    jump: np.ndarray | None = None  # per selected wave: new pc, or -1 for pc + 1
    _exec: np.ndarray | None = None
    dpp: tuple[np.ndarray, np.ndarray] | None = None  # DPP: (source lane per lane, read-as-zero mask)
    ins: Inst | None = None  # the instruction being executed
    sdwa: dict[str, int] | None = None  # SDWA: the instruction's fields (destination select)

    _full: bool | None = None
    _active: int | None = None

    @property
    def ftz(self) -> bool:
        """float32 denormals flush (MODE.FP_DENORM's f32 bits 0): the kernel descriptor's mode until a wave
        writes MODE with s_setreg (clang turns denormals on around the fma steps of a division in a kernel that
        flushes them); the selected waves run one instruction, so the first one's mode stands for all."""
        if self.b.mode is None:
            return self.prog.ftz
        return int(np.asarray(self.b.mode[self.ix]).reshape(-1)[0]) >> 4 & 3 == 0

    def exec_mask(self) -> np.ndarray:
        """(n, 64) bool: the lanes EXEC enables (read once per instruction: those that write EXEC read it first)."""
        if self._exec is None:
            if self.full:
                self._exec = _all_lanes(self.n)
            else:
                self._exec = _lanes(self.b.s[self.ix, EXEC], self.b.s[self.ix, EXEC + 1])
        return self._exec

    @property
    def full(self) -> bool:
        """Every lane of every selected wave is enabled (the common case, served without masks): EXEC all
        ones, and no DPP/SDWA lane selection narrowing it."""
        if self._full is None:
            if self._exec is not None:
                self._full = bool(self._exec.all())
            else:
                ex = self.b.s[self.ix, EXEC:EXEC + 2]
                self._full = bool((ex == 0xFFFFFFFF).all())
        return self._full

    def narrow(self, mask: np.ndarray) -> None:
        """Run the rest of the instruction on these lanes (DPP's row/bank masks, a FLAT's global lanes)."""
        self._exec, self._full, self._active = mask, None, None

    def active(self) -> int:
        """Lanes EXEC enables over the selected waves."""
        if self._active is None:
            self._active = WAVE * self.n if self.full else int(self.exec_mask().sum())
        return self._active


@functools.lru_cache(maxsize=8)
def _all_lanes(n: int) -> np.ndarray:
    out = np.ones((n, WAVE), bool)
    out.flags.writeable = False
    return out


def _lanes(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """(n, 64) bool lanes of 64-bit masks given as their low and high words."""
    words = np.empty((np.size(lo), 2), "<u4")
    words[:, 0], words[:, 1] = lo, hi
    return np.unpackbits(words.view(np.uint8), axis=1, bitorder="little").astype(bool)


def _mask_words(lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    packed = np.packbits(lanes, axis=1, bitorder="little").view(np.uint32)
    return packed[:, 0].copy(), packed[:, 1].copy()


def _f32(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=_U32).view(np.float32)


def _bits(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(_U32)


# ---------------------------------------------------------------------------- operand access
def _const(code: int, width: int, literal: int | None, is_float: bool) -> int | None:
    if 128 <= code <= 192:
        return code - 128
    if 193 <= code <= 208:
        v = -(code - 192)
        return v & (0xFFFFFFFFFFFFFFFF if width == 2 else 0xFFFFFFFF)
    if code in FLOAT_CONSTS or code == INV_2PI:
        val = FLOAT_CONSTS.get(code, 0.15915494309189535)
        if width == 2:
            return int(np.array(val, np.float64).view(np.uint64))
        return int(np.array(val, np.float32).view(np.uint32))
    if code == LITERAL:
        assert literal is not None
        return literal << 32 if width == 2 and is_float else literal
    return None


def sread(c: _Ctx, code: int, width: int, ins: Inst, is_float: bool = False) -> np.ndarray:
    """A scalar operand for the selected waves: (n,) uint32, or uint64 for width 2."""
    if code < 102 or code in (VCC, EXEC, M0):  # registers: the common case first
        lo = c.b.s[c.ix, code]
        if width == 1:
            return lo.copy()
        return lo.astype(_U64) | (c.b.s[c.ix, code + 1].astype(_U64) << _U64(32))
    k = _const(code, width, ins.literal, is_float)
    if k is not None:
        return np.full(c.n, k, dtype=_U64 if width == 2 else _U32)
    if code in _APERTURES:  # src_shared_base/limit, src_private_base/limit: the flat apertures
        hi = _APERTURES[code]
        return np.full(c.n, hi << 32 if width == 2 else hi, dtype=_U64 if width == 2 else _U32)
    if code == 253:  # src_scc
        return c.b.scc[c.ix].astype(_U32)
    if code == 252:  # src_execz
        return ((c.b.s[c.ix, EXEC] | c.b.s[c.ix, EXEC + 1]) == 0).astype(_U32)
    if code == 251:  # src_vccz
        return ((c.b.s[c.ix, VCC] | c.b.s[c.ix, VCC + 1]) == 0).astype(_U32)
    if code >= 128:
        raise DeviceFault("cudaErrorIllegalInstruction", f"scalar operand code {code} is not modeled ({ins.text})")
    lo = c.b.s[c.ix, code]
    if width == 1:
        return lo.copy()
    return lo.astype(_U64) | (c.b.s[c.ix, code + 1].astype(_U64) << _U64(32))


def swrite(c: _Ctx, code: int, value: np.ndarray, width: int) -> None:
    if code >= 128:
        return  # writes to constants are ignored (never emitted)
    if width == 1:
        c.b.s[c.ix, code] = np.asarray(value).astype(_U32)
    else:
        v = np.asarray(value).astype(_U64)
        c.b.s[c.ix, code] = (v & _MASK32).astype(_U32)
        c.b.s[c.ix, code + 1] = (v >> _U64(32)).astype(_U32)


def _pair64(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """uint64 values from their low and high uint32 words (one interleaving copy)."""
    out = np.empty((*lo.shape, 2), _U32)
    out[..., 0] = lo
    out[..., 1] = hi
    return out.view(_U64)[..., 0]


def _halves(v64: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low and high uint32 words of uint64 values (views of a contiguous copy)."""
    words = np.ascontiguousarray(v64, dtype=_U64).view(_U32).reshape(*np.shape(v64), 2)
    return words[..., 0], words[..., 1]


def vread(c: _Ctx, code: int, width: int, ins: Inst, is_float: bool = False) -> np.ndarray:
    """A vector-instruction source: (n, 64), (n, 1) or (1, 1) uint32 (uint64 for width 2)."""
    if code >= 256:
        r = code - 256
        lo = c.b.v[r, c.ix]
        if width == 1:
            return lo
        return _pair64(lo, c.b.v[r + 1, c.ix])
    return _column(sread(c, code, width, ins, is_float))


def _column(x: np.ndarray) -> np.ndarray:
    """A scalar operand of the selected waves as a column against their (n, 64) lanes: (1, 1) when every wave
    holds the same value (a kernel argument, a constant), which broadcasts like a number and 2-3x faster
    than an (n, 1) column."""
    if x.size > 1 and (x == x[0]).all():
        return x[:1].reshape(1, 1)
    return x[:, None]


def vwrite(c: _Ctx, r: int, value: Any, width: int = 1, mask: np.ndarray | None = None) -> None:
    """Write VGPR r (and r+1 for width 2) on the lanes EXEC (or `mask`) enables."""
    ftz = c.ftz and width == 1 and c.ins is not None and c.ins.name.endswith("_f32") and \
        not c.ins.name.startswith("v_cvt_f32_")  # float results flush denormals to zero too
    if mask is None and c.full and c.sdwa is None and not ftz:  # every lane writes: no merge with the old values
        if width == 1:
            c.b.v[r, c.ix] = value
        else:
            lo, hi = _halves(value)
            c.b.v[r, c.ix] = lo
            c.b.v[r + 1, c.ix] = hi
        return
    m = c.exec_mask() if mask is None else mask
    val = np.broadcast_to(np.asarray(value), (c.n, WAVE))
    if ftz:
        val = _flush_bits(val)
    if c.sdwa is not None and width == 1:
        val = _sdwa_place(val, c.b.v[r, c.ix], c.sdwa["dst_sel"], c.sdwa["dst_unused"])
    if width == 1:
        old = c.b.v[r, c.ix]
        c.b.v[r, c.ix] = np.where(m, val.astype(_U32), old)
    else:
        v64 = val.astype(_U64)
        for k, part in enumerate(((v64 & _MASK32), (v64 >> _U64(32)))):
            old = c.b.v[r + k, c.ix]
            c.b.v[r + k, c.ix] = np.where(m, part.astype(_U32), old)


def _apply_mods(x: np.ndarray, ins: Inst, i: int) -> np.ndarray:
    """VOP3 abs/neg source modifiers on a float32 view."""
    if ins.fmt != "VOP3" and not (ins.f.get("dpp") or ins.f.get("sdwa")):
        return x
    if ins.f.get("abs", 0) >> i & 1 and ins.name not in _NO_ABS:
        x = np.abs(x)
    if ins.f.get("neg", 0) >> i & 1:
        x = -x
    return x


# VOP3B: bits 8..14 hold the scalar destination, not abs modifiers
_NO_ABS = {"v_div_scale_f32", "v_div_scale_f64", "v_mad_u64_u32", "v_mad_i64_i32", "v_add_co_u32", "v_addc_co_u32",
           "v_sub_co_u32", "v_subb_co_u32", "v_subrev_co_u32", "v_subbrev_co_u32"}


def fsrc(c: _Ctx, ins: Inst, i: int) -> np.ndarray:
    """Float32 source i with modifiers (denormals read as zero when the kernel's float mode flushes them)."""
    raw = usrc(c, ins, i)
    if c.ftz:
        raw = _flush_bits(raw)
    return _apply_mods(_f32(raw), ins, i)


def _flush_bits(raw: np.ndarray) -> np.ndarray:
    """float32 bit patterns with denormals replaced by zero of the same sign."""
    raw = np.asarray(raw).astype(_U32)
    return np.where((raw & _U32(0x7F800000)) == 0, raw & _U32(0x80000000), raw)


def usrc(c: _Ctx, ins: Inst, i: int, width: int = 1) -> np.ndarray:
    """Source i as raw bits (src0 of a DPP instruction comes from the lanes its control selects)."""
    code = ins.f["src0"] if i == 0 else (ins.f["vsrc1"] + 256 if ins.fmt in ("VOP2", "VOPC") else ins.f[f"src{i}"])
    if i == 1 and ins.f.get("vsrc1_sgpr"):
        code = ins.f["vsrc1"]
    value = vread(c, code, width, ins)
    if ins.f.get("sdwa") and i < 2:
        return _sdwa_select(value, ins.f[f"src{i}_sel"], bool(ins.f[f"src{i}_sext"]))
    if i == 0 and c.dpp is not None:
        lanes, zero = c.dpp
        value = np.take_along_axis(np.broadcast_to(value, (c.n, WAVE)), lanes, axis=1)
        value = np.where(zero, value.dtype.type(0), value)
    return value


def _sdwa_select(value: np.ndarray, sel: int, sext: bool) -> np.ndarray:
    """An SDWA source select: a byte or word of the register, zero- or sign-extended."""
    if sel == 6:
        return value
    bits = 8 if sel < 4 else 16
    shift = 8 * sel if sel < 4 else 16 * (sel - 4)
    v = (value.astype(np.int64) >> shift) & ((1 << bits) - 1)
    if sext:
        v = np.where(v >> (bits - 1) & 1, v - (1 << bits), v)
    return (v & 0xFFFFFFFF).astype(_U32)


def _sdwa_place(result: np.ndarray, old: np.ndarray, sel: int, unused: int) -> np.ndarray:
    """An SDWA destination select: the result's low byte/word goes to the selected field; the other bits
    are zero (UNUSED_PAD), the field's sign (UNUSED_SEXT) or the old register's (UNUSED_PRESERVE)."""
    if sel == 6:
        return result
    bits = 8 if sel < 4 else 16
    shift = 8 * sel if sel < 4 else 16 * (sel - 4)
    field = (result.astype(np.int64) & ((1 << bits) - 1)) << shift
    mask = ((1 << bits) - 1) << shift
    if unused == 2:
        rest = old.astype(np.int64) & ~mask & 0xFFFFFFFF
    elif unused == 1:
        sign = (field >> (shift + bits - 1)) & 1
        rest = np.where(sign == 1, (0xFFFFFFFF & ~((1 << (shift + bits)) - 1)), 0)
    else:
        rest = np.zeros_like(field)
    return ((field | rest) & 0xFFFFFFFF).astype(_U32)


def _setup_dpp(c: _Ctx, ins: Inst) -> None:
    """DPP (GFX9): each lane reads src0 from another lane of its row (or the wave); lanes whose row or
    bank is masked off do not write; a lane whose source is out of range or inactive writes 0 with
    bound_ctrl, else does not write."""
    f = ins.f
    ctrl = f["dpp_ctrl"]
    lane = np.arange(WAVE)
    row_base, in_row = lane & ~15, lane & 15
    valid = np.ones(WAVE, bool)
    if ctrl <= 0xFF:
        srcl = (lane & ~3) + ((ctrl >> (2 * (lane & 3))) & 3)
    elif 0x101 <= ctrl <= 0x10F:
        srcl, valid = lane + (ctrl & 0xF), in_row + (ctrl & 0xF) < 16
    elif 0x111 <= ctrl <= 0x11F:
        srcl, valid = lane - (ctrl & 0xF), in_row - (ctrl & 0xF) >= 0
    elif 0x121 <= ctrl <= 0x12F:
        srcl = row_base + (in_row - (ctrl & 0xF)) % 16
    elif ctrl in (0x130, 0x138):  # wave_shl / wave_shr by one lane
        srcl = lane + (1 if ctrl == 0x130 else -1)
        valid = (srcl >= 0) & (srcl < WAVE)
    elif ctrl in (0x134, 0x13C):  # wave_rol / wave_ror
        srcl = (lane + (1 if ctrl == 0x134 else -1)) % WAVE
    elif ctrl == 0x140:
        srcl = row_base + 15 - in_row
    elif ctrl == 0x141:
        srcl = (lane & ~7) + 7 - (lane & 7)
    elif ctrl == 0x142:  # row_bcast:15: the last lane of the previous row
        srcl, valid = row_base - 1, row_base > 0
    elif ctrl == 0x143:  # row_bcast:31: lane 31 to rows 2 and 3
        srcl, valid = np.full(WAVE, 31), lane >= 32
    else:
        raise DeviceFault("cudaErrorIllegalInstruction", f"[{c.prog.name}] DPP control {ctrl:#x} is reserved "
                          f"({ins.text})")
    srcl = np.clip(srcl, 0, WAVE - 1)
    exe = c.exec_mask()
    src_ok = valid[None, :] & np.take_along_axis(exe, np.broadcast_to(srcl, (c.n, WAVE)), axis=1)
    enabled = ((f["row_mask"] >> (lane // 16)) & 1).astype(bool) & ((f["bank_mask"] >> (in_row // 4)) & 1).astype(bool)
    write = exe & enabled[None, :]
    if not f["bound_ctrl"]:
        write &= src_ok
    c.narrow(write)
    c.dpp = (np.broadcast_to(srcl, (c.n, WAVE)), ~src_ok)


def _vdst(ins: Inst) -> int:
    return ins.f["vdst"]


# ---------------------------------------------------------------------------- faults
def _fault(c: _Ctx, ins: Inst, lanes_ok: np.ndarray | None, addr: np.ndarray, size: int, space: str, access: str,
           message: str, nearest: str, bad: tuple[int, int] | None = None) -> DeviceFault:
    """A DeviceFault for the first bad lane, with the PTX engine's report fields."""
    waves = np.arange(c.b.s.shape[0])[c.ix]
    if bad is None:
        assert lanes_ok is not None
        w, lane = (int(x[0]) for x in np.nonzero(~lanes_ok))
    else:
        w, lane = bad
    wave = int(waves[w])
    wg = tuple(int(x) for x in c.b.wg_id[wave])
    flat = int(c.b.wave_in_wg[wave]) * WAVE + lane
    bx, by, _ = c.launch.block
    item = (flat % bx, (flat // bx) % by, flat // (bx * by))
    address = int(addr[w, lane]) if addr.ndim == 2 else int(addr[w])
    source = c.prog.kernel.source_line(ins.offset)
    report = {"kernel": c.prog.name, "offset": ins.offset, "instruction": ins.text, "block": wg, "thread": item,
              "workgroup": wg, "work_item": item, "address": address, "size": size, "space": space,
              "access": access, "nearest": nearest, "source": source, "ptx_line": None}
    msg = (f"{message}: {access} of {size} bytes at {address:#x} ({space})\n"
           f"    in {c.prog.name} at offset {ins.offset:#x} ({ins.text})" + (f", source {source}" if source else "") +
           "\n"
           f"    by work-item {item} in workgroup {wg}\n    address is {nearest}")
    return DeviceFault("cudaErrorIllegalAddress", msg, report)


def _check_global(c: _Ctx, ins: Inst, addr: np.ndarray, m: np.ndarray, size: int, access: str) -> None:
    """Every byte in bounds; alignment only for atomics (GFX9 global loads and stores may be unaligned, as
    ROCm configures the memory aperture, and clang relies on it for packed 16-bit data)."""
    if not m.any():
        return
    flat = addr[m]
    aligned = access == "atomic" or size in (1, 2, 4, 8) and not (np.bitwise_or.reduce(flat) & _U64(size - 1))
    checks = [(0, size)] if aligned and size <= 8 else [(k, 1) for k in sorted({0, size - 1})]
    for k, n in checks:  # one check of whole aligned accesses, else of their first and last bytes
        fault = c.mem.check(flat + _U64(k) if k else flat, n)
        if fault is not None:
            rows, cols = np.nonzero(m)
            bad = (int(rows[fault.lane]), int(cols[fault.lane]))
            kind = "misaligned address" if fault.kind == "misaligned" else "out-of-bounds global memory access"
            raise _fault(c, ins, None, addr, size, "global", access, kind, fault.nearest, bad)


# ---------------------------------------------------------------------------- SALU
@functools.cache
def _sop2_fn(name: str) -> Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray | None]] | None:
    # returns (result, scc or None); operands are uint32 or uint64 arrays; third arg is scc in
    def u64(x: np.ndarray) -> np.ndarray:
        return x.astype(_U64)

    def i32(x: np.ndarray) -> np.ndarray:
        return x.astype(_U32).view(np.int32).astype(np.int64)

    table: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray | None]]] = {
        "s_add_u32": lambda a, b, s: ((u64(a) + u64(b)) & _MASK32, (u64(a) + u64(b)) > _MASK32),
        "s_sub_u32": lambda a, b, s: ((u64(a) - u64(b)) & _MASK32, b > a),
        "s_addc_u32": lambda a, b, s: ((u64(a) + u64(b) + s) & _MASK32, (u64(a) + u64(b) + s) > _MASK32),
        "s_subb_u32": lambda a, b, s: ((u64(a) - u64(b) - s) & _MASK32, u64(b) + s > u64(a)),
        "s_add_i32": lambda a, b, s: (_wrap32(i32(a) + i32(b)), _ovf32(i32(a) + i32(b))),
        "s_sub_i32": lambda a, b, s: (_wrap32(i32(a) - i32(b)), _ovf32(i32(a) - i32(b))),
        "s_mul_i32": lambda a, b, s: (_wrap32(i32(a) * i32(b)), None),
        "s_mul_hi_u32": lambda a, b, s: ((u64(a) * u64(b)) >> _U64(32), None),
        "s_mul_hi_i32": lambda a, b, s: (_wrap32((i32(a) * i32(b)) >> 32), None),
        "s_min_i32": lambda a, b, s: (_wrap32(np.minimum(i32(a), i32(b))), i32(a) < i32(b)),
        "s_max_i32": lambda a, b, s: (_wrap32(np.maximum(i32(a), i32(b))), i32(a) > i32(b)),
        "s_min_u32": lambda a, b, s: (np.minimum(a, b), a < b),
        "s_max_u32": lambda a, b, s: (np.maximum(a, b), a > b),
        "s_cselect_b32": lambda a, b, s: (np.where(s.astype(bool), a, b), None),
        "s_cselect_b64": lambda a, b, s: (np.where(s.astype(bool), a, b), None),
        "s_lshl1_add_u32": lambda a, b, s: _shadd(a, b, 1), "s_lshl2_add_u32": lambda a, b, s: _shadd(a, b, 2),
        "s_lshl3_add_u32": lambda a, b, s: _shadd(a, b, 3), "s_lshl4_add_u32": lambda a, b, s: _shadd(a, b, 4),
    }
    if name in table:
        return table[name]
    for w, bits in (("b32", 32), ("b64", 64)):
        mask = _U64((1 << bits) - 1)
        logic = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
                 "andn2": lambda a, b: a & ~b, "orn2": lambda a, b: a | ~b, "nand": lambda a, b: ~(a & b),
                 "nor": lambda a, b: ~(a | b), "xnor": lambda a, b: ~(a ^ b)}
        for op, fn in logic.items():
            if name == f"s_{op}_{w}":
                return _logic_op(fn, mask)
    shifts = {"s_lshl_b32": (32, "l"), "s_lshr_b32": (32, "r"), "s_ashr_i32": (32, "a"),
              "s_lshl_b64": (64, "l"), "s_lshr_b64": (64, "r"), "s_ashr_i64": (64, "a")}
    if name in shifts:
        bits, kind = shifts[name]
        return lambda a, b, s: _shift(a, b, bits, kind)
    if name in ("s_bfe_u32", "s_bfe_i32"):
        return lambda a, b, s: _sbfe(a, b, name.endswith("i32"))
    if name == "s_bfm_b32":
        return lambda a, b, s: ((((_U64(1) << (u64(a) & _U64(31))) - _U64(1)) << (u64(b) & _U64(31))) & _MASK32, None)
    return None


def _logic_op(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], mask: np.uint64) -> Callable[..., Any]:
    def op(a: np.ndarray, b: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r = fn(a.astype(_U64), b.astype(_U64)) & mask
        return r, r != 0
    return op


def _wrap32(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x).astype(np.int64) & 0xFFFFFFFF).astype(_U64)


def _ovf32(x: np.ndarray) -> np.ndarray:
    return (x > 0x7FFFFFFF) | (x < -0x80000000)


def _shadd(a: np.ndarray, b: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    r = (a.astype(_U64) << _U64(k)) + b.astype(_U64)
    return r & _MASK32, r > _MASK32


def _shift(a: np.ndarray, b: np.ndarray, bits: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    sh = b.astype(_U64) & _U64(bits - 1)
    mask = _U64((1 << bits) - 1)
    if kind == "l":
        r = (a.astype(_U64) << sh) & mask
    elif kind == "r":
        r = a.astype(_U64) >> sh
    else:
        signed = a.astype(_U32).view(np.int32).astype(np.int64) if bits == 32 else a.astype(_U64).view(np.int64)
        r = (signed >> sh.astype(np.int64)).astype(np.int64).view(_U64) & mask
    return r, r != 0


def _sbfe(a: np.ndarray, b: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    off = b.astype(_U64) & _U64(31)
    width = (b.astype(_U64) >> _U64(16)) & _U64(0x7F)
    r = (a.astype(_U64) >> off) & ((_U64(1) << width) - _U64(1))
    if signed:
        sign = np.where(width > 0, (r >> np.maximum(width, _U64(1)) - _U64(1)) & _U64(1), _U64(0))
        r = np.where(sign.astype(bool), r | (~((_U64(1) << width) - _U64(1)) & _MASK32), r)
    return r & _MASK32, r != 0


def h_sop2(c: _Ctx, ins: Inst) -> None:
    dw, sw = ins.widths
    a = sread(c, ins.f["ssrc0"], sw[0], ins)
    b = sread(c, ins.f["ssrc1"], sw[1], ins)
    fn = _sop2_fn(ins.name)
    assert fn is not None
    r, scc = fn(a, b, c.b.scc[c.ix].astype(_U64))
    swrite(c, ins.f["sdst"], r, dw)
    if scc is not None:
        c.b.scc[c.ix] = scc


_SOPC_OPS = {"eq": np.equal, "lg": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
             "le": np.less_equal}


def h_sopc(c: _Ctx, ins: Inst) -> None:
    _, sw = ins.widths
    parts = ins.name.split("_")  # s_cmp_lt_i32
    a = sread(c, ins.f["ssrc0"], sw[0], ins)
    b = sread(c, ins.f["ssrc1"], sw[1], ins)
    if parts[1] == "bitcmp0" or parts[1] == "bitcmp1":
        bit = (a.astype(_U64) >> (b.astype(_U64) & _U64(31))) & _U64(1)
        c.b.scc[c.ix] = bit == (1 if parts[1] == "bitcmp1" else 0)
        return
    if parts[-1] == "i32":
        a, b = a.view(np.int32), b.view(np.int32)
    c.b.scc[c.ix] = _SOPC_OPS[parts[2]](a, b)


def h_sop1(c: _Ctx, ins: Inst) -> None:
    name = ins.name
    dw, sw = ins.widths
    d = ins.f["sdst"]
    base = c.prog.image_base + c.prog.kernel.code_offset  # device address of the kernel's entry
    if name == "s_getpc_b64":  # the address of the next instruction, where the loader placed the code
        swrite(c, d, np.full(c.n, base + ins.offset + 4, _U64), 2)
        return
    if name in ("s_swappc_b64", "s_setpc_b64"):  # calls and returns: jump to an address in SGPRs
        target = sread(c, ins.f["ssrc0"], 2, ins).astype(np.int64) - base
        if name == "s_swappc_b64":
            swrite(c, d, np.full(c.n, base + ins.offset + 4, _U64), 2)  # the return address
        jump = np.empty(c.n, np.int64)
        for t in np.unique(target).tolist():
            idx = c.prog.index.get(int(t))
            if idx is None:
                raise DeviceFault("cudaErrorIllegalInstruction", f"[{c.prog.name}] {ins.text} at offset "
                                  f"{ins.offset:#x} jumps to {int(t) + base:#x}, which is not an instruction of the "
                                  "kernel or its device functions")
            jump[target == t] = idx
        c.jump = jump
        c.counters.branches += c.n
        return
    if name.endswith("saveexec_b64"):
        src = sread(c, ins.f["ssrc0"], 2, ins)
        exe = sread(c, EXEC, 2, ins)
        op = name[2:].split("_saveexec")[0]
        new = {"and": src & exe, "or": src | exe, "xor": src ^ exe, "andn2": src & ~exe, "orn2": src | ~exe,
               "nand": ~(src & exe), "nor": ~(src | exe), "xnor": ~(src ^ exe),
               "andn1": ~src & exe, "orn1": ~src | exe}[op]
        swrite(c, d, exe, 2)
        swrite(c, EXEC, new, 2)
        c.b.scc[c.ix] = new != 0
        return
    a = sread(c, ins.f["ssrc0"], sw[0], ins)
    if name in ("s_mov_b32", "s_mov_b64"):
        swrite(c, d, a, dw)
    elif name in ("s_not_b32", "s_not_b64"):
        r = ~a
        swrite(c, d, r, dw)
        c.b.scc[c.ix] = r != 0
    elif name in ("s_cmov_b32", "s_cmov_b64"):
        old = sread(c, d, dw, ins)
        swrite(c, d, np.where(c.b.scc[c.ix], a, old), dw)
    elif name in ("s_ff1_i32_b32", "s_ff1_i32_b64"):
        bits = 32 * sw[0]
        x = a.astype(_U64)
        low = x & (~x + _U64(1))
        r = np.where(x == 0, -1, np.log2(np.maximum(low, _U64(1)).astype(np.float64)).astype(np.int64))
        del bits
        swrite(c, d, r.astype(np.int64).astype(_U64) & _MASK32, 1)
    elif name in ("s_flbit_i32_b32", "s_flbit_i32"):  # leading zeros / leading sign bits; -1 when none differ
        x = a.astype(_U32)
        if name == "s_flbit_i32":
            x = np.where(x >> _U32(31) != 0, ~x, x)
        swrite(c, d, _ffbh(x).astype(_U64), 1)
    elif name in ("s_bcnt1_i32_b32", "s_bcnt1_i32_b64"):
        r = _popcount(a.astype(_U64))
        swrite(c, d, r, 1)
        c.b.scc[c.ix] = r != 0
    elif name in ("s_brev_b32",):
        swrite(c, d, _brev32(a.astype(_U32)), 1)
    elif name in ("s_abs_i32",):
        r = np.abs(a.view(np.int32).astype(np.int64)) & 0xFFFFFFFF
        swrite(c, d, r, 1)
        c.b.scc[c.ix] = r != 0
    elif name == "s_sext_i32_i8":
        swrite(c, d, a.astype(np.uint8).view(np.int8).astype(np.int32).view(_U32), 1)
    elif name == "s_sext_i32_i16":
        swrite(c, d, a.astype(np.uint16).view(np.int16).astype(np.int32).view(_U32), 1)
    else:  # pragma: no cover - _handler only binds the names above
        raise AssertionError(name)


_SOP1 = {"s_getpc_b64", "s_swappc_b64", "s_setpc_b64", "s_mov_b32", "s_mov_b64", "s_not_b32", "s_not_b64",
         "s_cmov_b32", "s_cmov_b64", "s_ff1_i32_b32", "s_flbit_i32_b32", "s_flbit_i32",
         "s_ff1_i32_b64", "s_bcnt1_i32_b32", "s_bcnt1_i32_b64", "s_brev_b32", "s_abs_i32", "s_sext_i32_i8",
         "s_sext_i32_i16"}


def _popcount(x: np.ndarray) -> np.ndarray:
    b = np.ascontiguousarray(x, dtype=_U64).view(np.uint8).reshape(*x.shape, 8)
    return np.unpackbits(b, axis=-1).sum(axis=-1).astype(_U64)


def _brev32(x: np.ndarray) -> np.ndarray:
    words = np.ascontiguousarray(x, dtype="<u4")
    b = np.unpackbits(words.view(np.uint8).reshape(*x.shape, 4), axis=-1, bitorder="little")
    return np.packbits(b[..., ::-1], axis=-1, bitorder="little").view("<u4").reshape(x.shape).astype(_U32)


def h_sopk(c: _Ctx, ins: Inst) -> None:
    k = ins.f["simm16"]
    sk = k - 0x10000 if k & 0x8000 else k
    d = ins.f["sdst"]
    name = ins.name
    if name == "s_movk_i32":
        swrite(c, d, np.full(c.n, sk & 0xFFFFFFFF, _U64), 1)
    elif name == "s_addk_i32":
        a = sread(c, d, 1, ins).view(np.int32).astype(np.int64) + sk
        swrite(c, d, _wrap32(a), 1)
        c.b.scc[c.ix] = _ovf32(a)
    elif name == "s_mulk_i32":
        a = sread(c, d, 1, ins).view(np.int32).astype(np.int64) * sk
        swrite(c, d, _wrap32(a), 1)
    elif name.startswith("s_cmpk_"):
        op, typ = name.split("_")[2], name.split("_")[3]
        a = sread(c, d, 1, ins)
        if typ == "i32":
            c.b.scc[c.ix] = _SOPC_OPS[op](a.view(np.int32).astype(np.int64), sk)
        else:
            c.b.scc[c.ix] = _SOPC_OPS[op](a.astype(np.int64), k)
    else:  # pragma: no cover
        raise AssertionError(name)


def _initial_mode(prog: AmdProgram) -> int:
    """MODE at wave launch, from the descriptor's rsrc1: FP_ROUND (bits 0..3), FP_DENORM (4..7), DX10_CLAMP (8),
    IEEE (9)."""
    r1 = prog.kernel.descriptor.rsrc1
    return (r1 >> 12 & 0xF) | (r1 >> 16 & 0xF) << 4 | (r1 >> 21 & 1) << 8 | (r1 >> 23 & 1) << 9


def h_hwreg(c: _Ctx, ins: Inst) -> None:
    """s_getreg_b32 / s_setreg_b32 / s_setreg_imm32_b32 on HW_REG_MODE (the only register the dispatch
    accepts). The f32 denormal bits take effect on the next instruction (`_Ctx.ftz`); the f64/f16 denormal,
    clamp and IEEE bits are kept but not modeled, and a rounding mode other than round-to-nearest-even is
    refused rather than ignored."""
    _, offset, size = hwreg_fields(ins.f["simm16"])
    mask = ((1 << size) - 1) << offset
    if c.b.mode is None:
        c.b.mode = np.full(c.b.s.shape[0], _initial_mode(c.prog), np.int64)
    cur = c.b.mode[c.ix]
    if ins.name == "s_getreg_b32":
        swrite(c, ins.f["sdst"], ((cur & mask) >> offset).astype(_U64), 1)
        return
    val = np.full(c.n, ins.literal or 0, np.int64) if ins.name == "s_setreg_imm32_b32" else \
        sread(c, ins.f["sdst"], 1, ins).astype(np.int64)
    new = (cur & ~mask) | ((val << offset) & mask)
    if (new & 0xF).any():
        raise UnsupportedAmdInstruction(f"{ins.text} (a rounding mode other than round-to-nearest-even: not "
                                        "modeled)", c.prog.name, ins.offset)
    c.b.mode[c.ix] = new


def h_sopp(c: _Ctx, ins: Inst) -> None:
    name = ins.name
    if name == "s_endpgm":
        _wait(c, "vm", 0)
        _wait(c, "lgkm", 0)
        c.b.done[_sel(c)] = True
        return
    if name == "s_waitcnt":
        simm = ins.f["simm16"]
        vm = (simm & 0xF) | (simm >> 14 & 3) << 4
        lgkm = simm >> 8 & 0xF
        if vm < 63:
            _wait(c, "vm", vm)
        if lgkm < 15:
            _wait(c, "lgkm", lgkm)
        return
    if name == "s_barrier":
        # every pending access completes before a barrier on gfx9 (the compiler puts waits before it)
        c.b.barrier[_sel(c)] = True
        c.counters.barriers += c.n
        return
    if name in ("s_nop", "s_setprio", "s_sleep", "s_code_end", "s_icache_inv", "s_dcache_wb", "s_ttracedata"):
        return
    # branches
    target = ins.offset + 4 + 4 * (ins.f["simm16"] - 0x10000 if ins.f["simm16"] & 0x8000 else ins.f["simm16"])
    idx = c.prog.index.get(target)
    if idx is None:
        raise DeviceFault("cudaErrorIllegalInstruction", f"[{c.prog.name}] branch at {ins.offset:#x} ({ins.text}) "
                          f"targets {target:#x}, which is not an instruction boundary")
    cond = name[len("s_cbranch_"):] if name.startswith("s_cbranch_") else "always"
    s = c.b.s
    taken = {
        "always": lambda: np.ones(c.n, bool),
        "scc0": lambda: ~c.b.scc[c.ix], "scc1": lambda: c.b.scc[c.ix].copy(),
        "execz": lambda: (s[c.ix, EXEC] | s[c.ix, EXEC + 1]) == 0,
        "execnz": lambda: (s[c.ix, EXEC] | s[c.ix, EXEC + 1]) != 0,
        "vccz": lambda: (s[c.ix, VCC] | s[c.ix, VCC + 1]) == 0,
        "vccnz": lambda: (s[c.ix, VCC] | s[c.ix, VCC + 1]) != 0,
    }[cond]()
    c.counters.branches += c.n
    c.jump = np.where(taken, idx, -1)


def _sel(c: _Ctx) -> np.ndarray:
    """The selected waves' indices in the batch (read-only)."""
    return c.b.all_waves if isinstance(c.ix, slice) else c.ix


def _wait(c: _Ctx, kind: str, keep: int) -> None:
    """Complete this kind's pending loads of the selected waves except the newest `keep` per wave."""
    if not c.b.pending:
        return
    waves = _sel(c)
    mine_kind = [p for p in c.b.pending if p.kind == kind]
    if all(p.waves is waves for p in mine_kind):  # every entry is of these waves (waves in lock step): by count
        for p in mine_kind[:len(mine_kind) - keep] if keep else mine_kind:
            p.apply(np.ones(p.waves.size, bool))
            p.waves = p.waves[:0]
        c.b.pending = [p for p in c.b.pending if p.waves.size]
        return
    nwaves = c.b.s.shape[0]
    chosen = np.zeros(nwaves, bool)
    chosen[waves] = True
    # which entries are due (all but the newest `keep` per wave): found newest first, applied oldest first,
    # so a register two loads write ends with the newer value, as results return in order
    dues: list[tuple[_Pending, np.ndarray]] = []
    if keep == 0:
        dues = [(p, chosen[p.waves]) for p in mine_kind]
    else:
        newer = np.zeros(nwaves, np.int64)
        for p in reversed(mine_kind):
            mine = chosen[p.waves]
            if not mine.any():
                continue
            newer[p.waves[mine]] += 1
            dues.append((p, mine & (newer[p.waves] > keep)))
        dues.reverse()
    for p, due in dues:
        if due.all():
            p.apply(due)
            p.waves = p.waves[:0]
        elif due.any():
            p.apply(due)
            p.waves = p.waves[~due]
            p.apply = _restrict(p.apply, ~due)
    c.b.pending = [p for p in c.b.pending if p.waves.size]


def _restrict(apply: Callable[[np.ndarray], None], keep: np.ndarray) -> Callable[[np.ndarray], None]:
    positions = np.flatnonzero(keep)

    def sub(rows: np.ndarray) -> None:
        full = np.zeros(keep.size, bool)
        full[positions[rows]] = True
        apply(full)
    return sub


def _count_only(c: _Ctx, kind: str) -> None:
    """A store or non-returning atomic: it counts in vmcnt/lgkmcnt until waited for (GFX9 has no separate
    store counter), so a later `s_waitcnt vmcnt(N)` must count it to know which loads are done."""
    _defer(c, kind, lambda rows, waves: None, vgprs=False)


def _defer(c: _Ctx, kind: str, write: Callable[[np.ndarray, Any], None], vgprs: bool = True) -> None:
    """Queue a register write (the load's values, already read) until the matching s_waitcnt."""
    waves = _sel(c)
    whole = c.n == c.b.s.shape[0]

    def apply(rows: np.ndarray) -> None:
        if whole and rows.all():  # every wave of the batch: views instead of gathers
            write(slice(None), slice(None))  # type: ignore[arg-type]
        else:
            write(rows, waves[rows])
    c.b.pending.append(_Pending(kind, waves, apply, vgprs))


def _completes_at_issue(c: _Ctx, ins: Inst) -> bool:
    """The load may write its registers now (waitcnt.py found nothing that could tell) and no queued VGPR write
    is pending that would land after it."""
    return ins.offset in c.prog.early_loads and not any(p.vgprs for p in c.b.pending)


# ---------------------------------------------------------------------------- SMEM
def h_smem(c: _Ctx, ins: Inst) -> None:
    n = {"s_load_dword": 1, "s_load_dwordx2": 2, "s_load_dwordx4": 4, "s_load_dwordx8": 8,
         "s_load_dwordx16": 16}[ins.name]
    base = sread(c, ins.f["sbase"], 2, ins)
    off = ins.f["offset"] if ins.f["imm"] else sread(c, ins.f["offset"], 1, ins).astype(np.int64)
    if ins.f["soe"]:
        off = off + sread(c, ins.f["soffset"], 1, ins).astype(np.int64)
    addr = (base.astype(np.int64) + off).astype(_U64) & ~_U64(3)
    a0 = int(addr[0])
    if (addr == a0).all() and (a := c.mem.allocation_at(a0)) is not None and a0 + 4 * n <= a.end:
        # one address for every wave (kernel arguments): read once
        i0 = (a0 - GLOBAL_BASE) >> 2
        row = c.mem.typed(_U32)[i0:i0 + n].copy()
        d = ins.f["sdata"]
        c.counters.global_load_bytes += 4 * n * c.n

        def write_one(rows: Any, waves: Any) -> None:
            c.b.s[waves, d:d + n] = row
        _defer(c, "lgkm", write_one, vgprs=False)
        return
    for k in range(n):
        fault = c.mem.check(addr + _U64(4 * k), 4)
        if fault is not None:
            bad = (fault.lane, 0)
            raise _fault(c, ins, None, addr[:, None] + _U64(4 * k), 4, "global (scalar)", "read",
                         "out-of-bounds scalar memory access", fault.nearest, bad)
    words = c.mem.typed(_U32)[((addr - _U64(GLOBAL_BASE)) >> _U64(2)).astype(np.int64)[:, None] + np.arange(n)]
    d = ins.f["sdata"]
    c.counters.global_load_bytes += 4 * n * c.n

    def write(rows: np.ndarray, waves: np.ndarray) -> None:
        c.b.s[waves, d:d + n] = words[rows]
    _defer(c, "lgkm", write, vgprs=False)


# ---------------------------------------------------------------------------- VALU
def _cvt_i32(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
    return np.clip(t, -2147483648, 2147483647).astype(np.int64).astype(np.int32).view(_U32)


def _cvt_u32(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
    return np.clip(t, 0, 4294967295).astype(np.uint64).astype(_U32)


def _r32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


_F1: dict[str, Callable[[np.ndarray], np.ndarray]] = {  # float32 -> float32 (or bits)
    "v_exp_f32": lambda x: _r32(np.exp2(x.astype(np.float64))),
    "v_log_f32": lambda x: _r32(np.log2(x.astype(np.float64))),
    "v_rcp_f32": lambda x: _r32(1.0 / x.astype(np.float64)),
    "v_rcp_iflag_f32": lambda x: _r32(1.0 / x.astype(np.float64)),  # rcp for integer division sequences
    "v_rsq_f32": lambda x: _r32(1.0 / np.sqrt(x.astype(np.float64))),
    "v_sqrt_f32": lambda x: _r32(np.sqrt(x.astype(np.float64))),
    "v_sin_f32": lambda x: _r32(np.sin(2 * np.pi * x.astype(np.float64))),
    "v_cos_f32": lambda x: _r32(np.cos(2 * np.pi * x.astype(np.float64))),
    "v_rndne_f32": np.rint, "v_trunc_f32": np.trunc, "v_floor_f32": np.floor, "v_ceil_f32": np.ceil,
    "v_fract_f32": lambda x: x - np.floor(x),
}
_CVT: dict[str, Callable[[np.ndarray], np.ndarray]] = {  # bits -> bits
    "v_cvt_i32_f32": lambda u: _cvt_i32(_f32(u)),
    "v_cvt_u32_f32": lambda u: _cvt_u32(_f32(u)),
    "v_cvt_f32_i32": lambda u: _bits(u.astype(_U32).view(np.int32).astype(np.float32)),
    "v_cvt_f32_u32": lambda u: _bits(u.astype(_U32).astype(np.float32)),
    "v_cvt_rpi_i32_f32": lambda u: _cvt_i32(np.floor(_f32(u) + np.float32(0.5))),
    "v_cvt_flr_i32_f32": lambda u: _cvt_i32(np.floor(_f32(u))),
    "v_mov_b32": lambda u: u, "v_not_b32": lambda u: ~u.astype(_U32),
    "v_bfrev_b32": lambda u: _brev32(np.broadcast_to(u, u.shape).astype(_U32)),
    "v_ffbl_b32": lambda u: _ffbl(u), "v_ffbh_u32": lambda u: _ffbh(u),
    "v_ffbh_i32": lambda u: _ffbh(np.where(u.astype(_U32) >> _U32(31) != 0, ~u.astype(_U32), u.astype(_U32))),
}


def _ffbl(u: np.ndarray) -> np.ndarray:
    x = u.astype(_U64)
    low = x & (~x + _U64(1)) & _MASK32
    return np.where(x == 0, 0xFFFFFFFF, np.log2(np.maximum(low, _U64(1)).astype(np.float64)).astype(np.int64)) \
        .astype(np.int64).astype(_U64).astype(_U32)


def _ffbh(u: np.ndarray) -> np.ndarray:
    x = u.astype(_U64)
    hi = np.floor(np.log2(np.maximum(x, _U64(1)).astype(np.float64))).astype(np.int64)
    return np.where(x == 0, 0xFFFFFFFF, 31 - hi).astype(np.int64).astype(_U64).astype(_U32)


def h_vop1(c: _Ctx, ins: Inst) -> None:
    name = ins.name
    if name == "v_nop":
        return
    if name == "v_readfirstlane_b32":
        m = c.exec_mask()
        first = np.where(m.any(axis=1), m.argmax(axis=1), 0)
        val = np.broadcast_to(usrc(c, ins, 0), (c.n, WAVE))[np.arange(c.n), first]
        swrite(c, ins.f["vdst"], val, 1)
        return
    if name in _F1:
        with np.errstate(all="ignore"):
            r = _bits(_F1[name](fsrc(c, ins, 0)))
        _count(c, "sfu" if name in ("v_exp_f32", "v_log_f32", "v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32",
                                    "v_sin_f32", "v_cos_f32") else "fp32")
    else:
        r = _CVT[name](usrc(c, ins, 0))
        _count(c, "integer")
    r = _omod_clamp(c, ins, r)
    vwrite(c, _vdst(ins), r)


def _omod_clamp(c: _Ctx, ins: Inst, r: np.ndarray) -> np.ndarray:
    if ins.fmt != "VOP3" or not (ins.f.get("clamp") or ins.f.get("omod")):
        return r
    x = _f32(r)
    if ins.f.get("omod"):
        x = x * np.float32({1: 2.0, 2: 4.0, 3: 0.5}[ins.f["omod"]])
    if ins.f.get("clamp") and "_f" in ins.name:
        x = np.clip(x, np.float32(0), np.float32(1))
    return _bits(x)


def _count(c: _Ctx, cls: str) -> None:
    lanes = c.active()
    c.counters.thread_instructions[cls] += lanes
    # a wave64 instruction issues as two 32-lane halves on CDNA's SIMD16 x 4 cycles; counting halves keeps
    # Counters.simt_efficiency (active lanes / 32 per issue) meaning the same as on the PTX engine
    c.counters.warp_instructions[cls] += 2 * c.n
    if cls == "fp32":
        c.counters.flops["fp32"] += lanes




_SCRATCH = Scratch()  # per-thread work arrays: fresh 512 KiB temporaries cost page faults on every instruction


def _fma32(a: np.ndarray, b: np.ndarray, d: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """A correctly rounded float32 fma (a new array). The product of two float32s is exact in float64, so
    the float64 sum is the exact result rounded once, and rounding that to float32 is correct unless the
    float64 sum is inexact and sits exactly halfway between two float32s (on the subnormal grid too),
    where the second rounding can go the wrong way. Such sums have their low 28 bits zero; of those lanes
    the exact ones (common: 2x + y of nearby values) round right as they are, and the inexact ones (rare)
    are recomputed with the round-to-odd sum. With `out` (float32, the full shape; it may be a, b or d), the
    result is written there, after every read of the operands.

    Each pass over the lanes costs about as much as the arithmetic, and NumPy's mixed float32/float64 and
    broadcast loops cost up to twice a plain one: so the operands are widened to float64 once (a scalar
    register holding one value for every wave becomes a Python number), and every step writes into reused
    work arrays."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(d))
    n = int(np.prod(shape))
    if n == 0:
        return np.empty(shape, np.float32) if out is None else out
    with np.errstate(all="ignore"):
        a64, b64, d64 = (_widened(x, shape, tag) for x, tag in ((a, "amd_fma_a"), (b, "amd_fma_b"), (d, "amd_fma_d")))
        p = _SCRATCH.get("amd_fma_p", n, np.float64).reshape(shape)
        s = _SCRATCH.get("amd_fma_s", n, np.float64).reshape(shape)
        np.multiply(a64, b64, out=p)  # exact: 24 x 24 bits
        np.add(p, d64, out=s)  # rounded once, to 53 bits
        low = _SCRATCH.get("amd_fma_l", n, _U32).reshape(shape)
        np.copyto(low, s.view(_U64), casting="unsafe")  # the low 32 bits of each float64
        np.left_shift(low, _U32(4), out=low)  # zero iff the low 28 bits are
        if np.minimum.reduce(low, axis=None) != 0:
            if out is None:
                return s.astype(np.float32)
            np.copyto(out, s, casting="unsafe")
            return out
        # whole-array exactness test (as the PTX engine's fma.rn.f32): s = p + d exactly iff s - p == d and
        # s - d == p (one of the two differences is exact, so an inexact sum fails it)
        t = _SCRATCH.get("amd_fma_t", n, np.float64).reshape(shape)
        bad = _SCRATCH.get("amd_fma_x", n, np.bool_).reshape(shape)
        other = _SCRATCH.get("amd_fma_o", n, np.bool_).reshape(shape)
        np.subtract(s, p, out=t)
        np.not_equal(t, d64, out=bad)
        np.subtract(s, d64, out=t)
        np.not_equal(t, p, out=other)
        np.bitwise_or(bad, other, out=bad)
        fix = None
        if bad.any():  # inexact sums: only those on a float32 midpoint (low bits zero) round twice
            np.equal(low, 0, out=other)
            np.bitwise_and(bad, other, out=bad)
            if bad.any():
                fix = _fma32_odd(np.broadcast_to(a, shape)[bad], np.broadcast_to(b, shape)[bad],
                                 np.broadcast_to(d, shape)[bad])
        if out is None:
            out = s.astype(np.float32)
        else:
            np.copyto(out, s, casting="unsafe")
        if fix is not None:
            out[bad] = fix
        return out


def _widened(x: Any, shape: tuple[int, ...], tag: str) -> Any:
    """A float32 operand as float64: a Python float when it is one value (a constant, or a scalar register that
    holds the same bits in every wave, which vread already hands over as (1, 1)), else a work array of the full
    shape."""
    x = np.asarray(x, np.float32)
    if x.size == 1:
        v = x.flat[0]
        if v == v:  # (a NaN is kept as an array: its payload bits must survive)
            return float(v)
    w = _SCRATCH.get(tag, int(np.prod(shape)), np.float64).reshape(shape)
    np.copyto(w, np.broadcast_to(x, shape))
    return w


def _mad32(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
    """V_MAD_F32/V_MAC_F32/V_MADMK/V_MADAK (GFX9's unfused multiply-add, which clang emits for gfx90a when
    float32 denormals are flushed): the product rounded to float32, then the sum, denormal inputs, product
    and result flushed to zero (these instructions do not support denormals)."""
    with np.errstate(all="ignore"):
        a, b, d = (_f32(_flush_bits(_bits(np.asarray(x, np.float32)))) for x in (a, b, d))
        p = _f32(_flush_bits(_bits(np.multiply(a, b, dtype=np.float32))))
        return _f32(_flush_bits(_bits(np.add(p, d, dtype=np.float32))))


def _fma32_odd(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The float32 fma through a float64 sum rounded to odd (its last bit set when inexact): rounding that
    to float32 is correct (53 >= 24 + 2 bits)."""
    return _fma32_odd64(a, b, d).astype(np.float32)


def _fma32_odd64(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
    """a * b + d of float32s as a float64 rounded to odd: scaling it by a power of two and rounding to float32
    (even to a denormal) rounds the exact value once."""
    a, b, d = (np.asarray(x, np.float32) for x in (a, b, d))
    p = a.astype(np.float64) * b.astype(np.float64)
    c = np.broadcast_to(d.astype(np.float64), np.broadcast(p, d).shape)
    with np.errstate(all="ignore"):
        s = p + c
        bb = s - p
        err = (p - (s - bb)) + (c - bb)  # TwoSum: s + err == p + c exactly
        bits = s.view(np.uint64) if isinstance(s, np.ndarray) else np.asarray(s).view(np.uint64)
        inexact = (err != 0) & np.isfinite(s) & ((bits & np.uint64(1)) == 0)
        toward = np.where(np.signbit(err) == np.signbit(s), np.uint64(1), np.uint64(0))
        # an even last bit of an inexact sum: move one ulp toward the exact value, whose odd neighbour it is
        adj = np.where(inexact, np.where(toward == 1, bits + np.uint64(1), bits - np.uint64(1)), bits)
        return np.asarray(adj).view(np.float64)


_F2: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "v_add_f32": np.add, "v_sub_f32": np.subtract, "v_subrev_f32": lambda a, b: b - a,
    "v_mul_f32": np.multiply, "v_max_f32": np.fmax, "v_min_f32": np.fmin,
    "v_mul_legacy_f32": lambda a, b: np.where((a == 0) | (b == 0), np.float32(0), a * b),
}


def _u(x: np.ndarray) -> np.ndarray:
    return x.astype(_U64)


def _s(x: np.ndarray) -> np.ndarray:
    return x.astype(_U32).view(np.int32).astype(np.int64)


def _sh5(a: np.ndarray) -> np.ndarray:
    return np.bitwise_and(a, _U32(31), dtype=_U32)


# the common 32-bit integer ops on uint32 arrays directly (NumPy's uint32 arithmetic wraps as the VALU does);
# `out` (uint32, the full shape; it may alias an operand) takes the result in place of a new array
_I2N: dict[str, Callable[..., np.ndarray]] = {
    "v_add_u32": lambda a, b, out=None: np.add(a, b, dtype=_U32, out=out),
    "v_sub_u32": lambda a, b, out=None: np.subtract(a, b, dtype=_U32, out=out),
    "v_subrev_u32": lambda a, b, out=None: np.subtract(b, a, dtype=_U32, out=out),
    "v_and_b32": lambda a, b, out=None: np.bitwise_and(a, b, dtype=_U32, out=out),
    "v_or_b32": lambda a, b, out=None: np.bitwise_or(a, b, dtype=_U32, out=out),
    "v_xor_b32": lambda a, b, out=None: np.bitwise_xor(a, b, dtype=_U32, out=out),
    "v_lshlrev_b32": lambda a, b, out=None: np.left_shift(b, _sh5(a), dtype=_U32, out=out),
    "v_lshrrev_b32": lambda a, b, out=None: np.right_shift(b, _sh5(a), dtype=_U32, out=out),
    "v_ashrrev_i32": lambda a, b, out=None: np.right_shift(b.view(np.int32), _sh5(a).view(np.int32),
                                                          out=_as_i32(out)).view(_U32),
    "v_max_i32": lambda a, b, out=None: np.maximum(a.view(np.int32), b.view(np.int32), out=_as_i32(out)).view(_U32),
    "v_min_i32": lambda a, b, out=None: np.minimum(a.view(np.int32), b.view(np.int32), out=_as_i32(out)).view(_U32),
    "v_max_u32": lambda a, b, out=None: np.maximum(a, b, dtype=_U32, out=out),
    "v_min_u32": lambda a, b, out=None: np.minimum(a, b, dtype=_U32, out=out),
    "v_mul_lo_u32": lambda a, b, out=None: np.multiply(a, b, dtype=_U32, out=out),
}


def _as_i32(out: np.ndarray | None) -> np.ndarray | None:
    return None if out is None else out.view(np.int32)

_SAT_U32: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {  # on int64 values, before the clamp
    "v_add_u32": np.add, "v_sub_u32": np.subtract, "v_subrev_u32": lambda a, b: b - a}

_I2: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {  # uint32 x uint32 -> int (masked to 32)
    "v_add_u32": lambda a, b: _u(a) + _u(b), "v_sub_u32": lambda a, b: _u(a) - _u(b),
    "v_subrev_u32": lambda a, b: _u(b) - _u(a),
    "v_and_b32": lambda a, b: _u(a) & _u(b), "v_or_b32": lambda a, b: _u(a) | _u(b),
    "v_xor_b32": lambda a, b: _u(a) ^ _u(b),
    "v_lshlrev_b32": lambda a, b: _u(b) << (_u(a) & _U64(31)),
    "v_lshrrev_b32": lambda a, b: _u(b) >> (_u(a) & _U64(31)),
    "v_ashrrev_i32": lambda a, b: (_s(b) >> (_s(a) & 31)).view(_U64),
    "v_max_i32": lambda a, b: np.maximum(_s(a), _s(b)).view(_U64),
    "v_min_i32": lambda a, b: np.minimum(_s(a), _s(b)).view(_U64),
    "v_max_u32": lambda a, b: np.maximum(_u(a), _u(b)), "v_min_u32": lambda a, b: np.minimum(_u(a), _u(b)),
    "v_mul_lo_u32": lambda a, b: _u(a) * _u(b),
    "v_mul_u32_u24": lambda a, b: (_u(a) & _U64(0xFFFFFF)) * (_u(b) & _U64(0xFFFFFF)),
    "v_mul_hi_u32": lambda a, b: (_u(a) * _u(b)) >> _U64(32),
    "v_mul_hi_i32": lambda a, b: ((_s(a) * _s(b)) >> 32).view(_U64),
    "v_mul_i32_i24": lambda a, b: (((_s(a) << 40) >> 40) * ((_s(b) << 40) >> 40)).view(_U64),
    "v_bcnt_u32_b32": lambda a, b: _popcount(_u(a) & _MASK32) + _u(b),
    "v_bfm_b32": lambda a, b: ((_U64(1) << (_u(a) & _U64(31))) - _U64(1)) << (_u(b) & _U64(31)),
}


def _u16(x: np.ndarray) -> np.ndarray:
    return x.astype(_U64) & _U64(0xFFFF)


def _i16(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.int64) & 0xFFFF).astype(np.uint16).view(np.int16).astype(np.int64)


# 16-bit integer ops: the result is the low 16 bits of the destination, the high bits are zeroed (GFX9)
_I16: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "v_add_u16": lambda a, b: _u16(a) + _u16(b), "v_sub_u16": lambda a, b: _u16(a) - _u16(b),
    "v_subrev_u16": lambda a, b: _u16(b) - _u16(a), "v_mul_lo_u16": lambda a, b: _u16(a) * _u16(b),
    "v_lshlrev_b16": lambda a, b: _u16(b) << (_u16(a) & _U64(15)),
    "v_lshrrev_b16": lambda a, b: _u16(b) >> (_u16(a) & _U64(15)),
    "v_ashrrev_i16": lambda a, b: (_i16(b) >> (_i16(a) & 15)).view(_U64),
    "v_max_u16": lambda a, b: np.maximum(_u16(a), _u16(b)), "v_min_u16": lambda a, b: np.minimum(_u16(a), _u16(b)),
    "v_max_i16": lambda a, b: np.maximum(_i16(a), _i16(b)).view(_U64),
    "v_min_i16": lambda a, b: np.minimum(_i16(a), _i16(b)).view(_U64),
}


def h_int16(c: _Ctx, ins: Inst) -> None:
    name = ins.name
    if name in ("v_mad_legacy_u16", "v_mad_u16"):
        r = _u16(usrc(c, ins, 0)) * _u16(usrc(c, ins, 1)) + _u16(usrc(c, ins, 2))
    elif name in ("v_mad_legacy_i16", "v_mad_i16"):
        r = (_i16(usrc(c, ins, 0)) * _i16(usrc(c, ins, 1)) + _i16(usrc(c, ins, 2))).view(_U64)
    else:
        r = _I16[name](usrc(c, ins, 0), usrc(c, ins, 1))
    _count(c, "integer")
    vwrite(c, _vdst(ins), (r & _U64(0xFFFF)).astype(_U32))


def _src_codes(ins: Inst) -> list[int]:
    if ins.fmt in ("VOP2", "VOPC"):
        return [ins.f["src0"], ins.f["vsrc1"] + 256]
    return [ins.f["src0"], ins.f["src1"], ins.f["src2"]]


_F2_UFUNC = {"v_add_f32": np.add, "v_sub_f32": np.subtract, "v_mul_f32": np.multiply, "v_max_f32": np.fmax,
             "v_min_f32": np.fmin}


def _in_place(c: _Ctx, ins: Inst) -> bool:
    """The result can be computed straight into the destination register: a plain VOP2 instruction (no
    DPP, SDWA, modifiers) on fully active waves selected as a view, without denormal flushing."""
    return ins.fmt == "VOP2" and c.full and isinstance(c.ix, slice) and c.dpp is None and c.sdwa is None and \
        not c.ftz


def h_valu2(c: _Ctx, ins: Inst) -> None:
    """Two-source VALU ops in VOP2 or VOP3 encoding."""
    name = ins.name
    if name in _F2_UFUNC and _in_place(c, ins):
        with np.errstate(all="ignore"):
            _F2_UFUNC[name](fsrc(c, ins, 0), fsrc(c, ins, 1), out=c.b.v[_vdst(ins)].view(np.float32))
        _count(c, "fp32")
        return
    if name in _I2N and _in_place(c, ins):
        _I2N[name](usrc(c, ins, 0).astype(_U32, copy=False), usrc(c, ins, 1).astype(_U32, copy=False),
                   out=c.b.v[_vdst(ins)])
        _count(c, "integer")
        return
    if name in _F2:
        with np.errstate(all="ignore"):
            r = _bits(_F2[name](fsrc(c, ins, 0), fsrc(c, ins, 1)))
        _count(c, "fp32")
    elif name in ("v_mac_f32", "v_madmk_f32", "v_madak_f32"):  # unfused (gfx90a; gfx940 dropped them)
        k = _f32(np.uint32(ins.literal or 0))
        x, y = fsrc(c, ins, 0), fsrc(c, ins, 1)
        a, b, d = ((x, y, _f32(c.b.v[_vdst(ins), c.ix])) if name == "v_mac_f32" else (x, k, y)
                   if name == "v_madmk_f32" else (x, y, k))
        r = _bits(_mad32(a, b, d))
        c.counters.flops["fp32"] += c.active()
        _count(c, "fp32")
    elif name == "v_fmac_f32":
        acc = _f32(c.b.v[_vdst(ins), c.ix])
        c.counters.flops["fp32"] += c.active()
        _count(c, "fp32")
        if _in_place(c, ins):  # every lane writes: round straight into the accumulator register
            _fma32(fsrc(c, ins, 0), fsrc(c, ins, 1), acc, out=acc)
            return
        r = _bits(_fma32(fsrc(c, ins, 0), fsrc(c, ins, 1), acc))
    elif name == "v_fmamk_f32":
        k = _f32(np.uint32(ins.literal or 0))
        r = _bits(_fma32(fsrc(c, ins, 0), k, fsrc(c, ins, 1)))
        _count(c, "fp32")
    elif name == "v_fmaak_f32":
        k = _f32(np.uint32(ins.literal or 0))
        r = _bits(_fma32(fsrc(c, ins, 0), fsrc(c, ins, 1), k))
        _count(c, "fp32")
    elif name == "v_ldexp_f32":
        e = np.clip(_s(usrc(c, ins, 1)), -1000, 1000).astype(np.int32)
        with np.errstate(all="ignore"):
            r = _bits(np.ldexp(fsrc(c, ins, 0), e).astype(np.float32))
        _count(c, "fp32")
    elif name == "v_cndmask_b32":
        a, b = usrc(c, ins, 0), usrc(c, ins, 1)
        if ins.fmt == "VOP3":
            sel = _lanes(*(c.b.s[c.ix, ins.f["src2"] + k] for k in (0, 1))) if ins.f["src2"] < 128 else \
                np.broadcast_to(np.asarray(_const(ins.f["src2"], 2, ins.literal, False) or 0).astype(bool), (c.n, WAVE))
            if ins.f["abs"] | ins.f["neg"]:
                a = _bits(_apply_mods(_f32(np.broadcast_to(a, (c.n, WAVE)).astype(_U32)), ins, 0))
                b = _bits(_apply_mods(_f32(np.broadcast_to(b, (c.n, WAVE)).astype(_U32)), ins, 1))
        else:
            sel = _lanes(c.b.s[c.ix, VCC], c.b.s[c.ix, VCC + 1])
        r = np.where(sel, b, a)
        _count(c, "integer")
    elif name in ("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"):
        mask = usrc(c, ins, 0).astype(_U64)
        if name.endswith("lo_u32_b32"):
            below = (_U64(1) << np.minimum(_LANES, _U64(32))) - _U64(1)
        else:
            below = (_U64(1) << (np.maximum(_LANES.astype(np.int64) - 32, 0).astype(_U64))) - _U64(1)
        r = _popcount(np.broadcast_to(mask & below & _MASK32, (c.n, WAVE))) + usrc(c, ins, 1).astype(_U64)
        _count(c, "integer")
    elif name in ("v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32", "v_subb_co_u32",
                  "v_subbrev_co_u32"):
        a, b = usrc(c, ins, 0).astype(np.int64), usrc(c, ins, 1).astype(np.int64)
        if name.startswith("v_subrev") or name.startswith("v_subbrev"):
            a, b = b, a
        cin: Any = 0
        if name in ("v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"):
            creg = VCC if ins.fmt == "VOP2" else ins.f["src2"]
            cin = _lanes(c.b.s[c.ix, creg], c.b.s[c.ix, creg + 1]).astype(np.int64)
        full = a + b + cin if "add" in name else a - b - cin
        carry = (full > 0xFFFFFFFF) | (full < 0)
        # VOP3 clamp: the unsigned result saturates instead of wrapping (the carry out is still written)
        r = (np.clip(full, 0, 0xFFFFFFFF) if ins.f.get("clamp") else full & 0xFFFFFFFF).astype(_U64)
        m = c.exec_mask()
        cdst = VCC if ins.fmt == "VOP2" else ins.f["sdst"]
        lo, hi = _mask_words(np.broadcast_to(carry, (c.n, WAVE)) & m)
        c.b.s[c.ix, cdst], c.b.s[c.ix, cdst + 1] = lo, hi
        _count(c, "integer")
    elif name in _SAT_U32 and ins.f.get("clamp"):
        # VOP3 clamp on the u32 add/sub: unsigned saturation (clang's uaddsat/usubsat, e.g. in 64-bit ctlz)
        a, b = usrc(c, ins, 0).astype(np.int64), usrc(c, ins, 1).astype(np.int64)
        r = np.clip(_SAT_U32[name](a, b), 0, 0xFFFFFFFF).astype(_U32)
        _count(c, "integer")
    elif name in _I2N:
        r = _I2N[name](usrc(c, ins, 0).astype(_U32, copy=False), usrc(c, ins, 1).astype(_U32, copy=False))
        _count(c, "integer")
    elif name in _I2:
        r = _I2[name](usrc(c, ins, 0), usrc(c, ins, 1)) & _MASK32
        _count(c, "integer")
    elif name == "v_readlane_b32":
        lane = (sread(c, ins.f["src1"], 1, ins) & 63).astype(np.int64)
        val = c.b.v[ins.f["src0"] - 256, c.ix][np.arange(c.n), lane]
        swrite(c, ins.f["vdst"], val, 1)
        return
    elif name == "v_writelane_b32":
        lane = (sread(c, ins.f["src1"], 1, ins) & 63).astype(np.int64)
        val = sread(c, ins.f["src0"], 1, ins)
        m = np.zeros((c.n, WAVE), bool)
        m[np.arange(c.n), lane] = True
        vwrite(c, _vdst(ins), val[:, None], mask=m)
        return
    else:  # pragma: no cover
        raise AssertionError(name)
    vwrite(c, _vdst(ins), _omod_clamp(c, ins, np.asarray(r)))


def h_valu3(c: _Ctx, ins: Inst) -> None:
    """VOP3-only ops (three sources, 64-bit shifts, division helpers)."""
    name = ins.name
    if name in ("v_fma_f32", "v_mad_f32", "v_fma_legacy_f32"):
        fn = _mad32 if name == "v_mad_f32" else _fma32
        r = _bits(fn(fsrc(c, ins, 0), fsrc(c, ins, 1), fsrc(c, ins, 2)))
        c.counters.flops["fp32"] += c.active()
        _count(c, "fp32")
    elif name in ("v_max3_f32", "v_min3_f32"):
        f = np.fmax if "max" in name else np.fmin
        r = _bits(f(f(fsrc(c, ins, 0), fsrc(c, ins, 1)), fsrc(c, ins, 2)))
        _count(c, "fp32")
    elif name == "v_div_fixup_f32":
        r = _bits(_div_fixup(fsrc(c, ins, 0), fsrc(c, ins, 1), fsrc(c, ins, 2)))
        _count(c, "fp32")
    elif name == "v_div_fmas_f32":
        vcc = _lanes(c.b.s[c.ix, VCC], c.b.s[c.ix, VCC + 1])
        # the ISA guide: V_DIV_FMAS does not flush input denormals (the residual of a flushing kernel's division)
        a, b, d = (_apply_mods(_f32(usrc(c, ins, i)), ins, i) for i in range(3))
        with np.errstate(all="ignore"):
            fma = _fma32(a, b, d)
            # Scaled, the exact a * b + d is rounded once, at the scaled value's precision (a denormal
            # quotient has fewer bits): the odd-rounded float64 sum keeps that single rounding right.
            scaled = (_fma32_odd64(a, b, d) * _div_fmas_scale(d, np.float32)).astype(np.float32)
            r = _bits(np.where(vcc, scaled, fma).astype(np.float32))
        _count(c, "fp32")
    elif name == "v_div_scale_f32":
        s0, s1, s2 = fsrc(c, ins, 0), fsrc(c, ins, 1), fsrc(c, ins, 2)
        res, flag = _div_scale(s0, s1, s2)
        m = c.exec_mask()
        lo, hi = _mask_words(np.broadcast_to(flag, (c.n, WAVE)) & m)
        c.b.s[c.ix, ins.f["sdst"]], c.b.s[c.ix, ins.f["sdst"] + 1] = lo, hi
        r = _bits(res)
        _count(c, "fp32")
    elif name in ("v_add3_u32", "v_lshl_add_u32", "v_add_lshl_u32", "v_lshl_or_b32", "v_and_or_b32", "v_or3_b32",
                  "v_xad_u32", "v_bfe_u32", "v_bfe_i32", "v_bfi_b32", "v_mad_u32_u24", "v_alignbit_b32", "v_perm_b32",
                  "v_max3_i32", "v_min3_i32", "v_max3_u32", "v_min3_u32", "v_med3_i32", "v_med3_u32", "v_mad_i32_i24"):
        a, b, d = (usrc(c, ins, i).astype(_U64) for i in range(3))
        r = _int3(name, a, b, d) & _MASK32
        _count(c, "integer")
    elif name == "v_lshlrev_b64" and c.full and isinstance(c.ix, slice) and _shl64_in_place(c, ins):
        _count(c, "integer")
        return
    elif name in ("v_lshlrev_b64", "v_lshl_add_u64") and c.full and (halves := _shl64_halves(c, ins)) is not None:
        lo, hi = halves
        dreg = _vdst(ins)
        if name == "v_lshl_add_u64":  # + src2, with the carry out of the low word
            dlo, dhi = _src_halves(c, ins, 2)
            if isinstance(c.ix, slice) and lo.shape[1] == 1:  # a uniform x: add straight into the destination
                out_lo, out_hi = c.b.v[dreg], c.b.v[dreg + 1]  # (they may be src2 itself: read before written)
                # no low word can carry when the largest x plus the largest y word stays below 2^32 (a base
                # address plus small offsets): one read of y's low words instead of a compare and an add
                carries = int(lo.max()) + int(dlo.max()) > 0xFFFFFFFF
                np.add(hi, dhi, out=out_hi)
                np.add(lo, dlo, out=out_lo)
                if carries:
                    np.add(out_hi, np.less(out_lo, lo), out=out_hi, casting="unsafe")  # the sum wrapped below x
                _count(c, "integer")
                return
            s_lo = np.add(lo, dlo, dtype=_U32)
            hi = np.add(np.add(hi, dhi, dtype=_U32), s_lo < dlo, dtype=_U32)
            lo = s_lo
        c.b.v[dreg, c.ix] = lo
        c.b.v[dreg + 1, c.ix] = hi
        _count(c, "integer")
        return
    elif name in ("v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64"):
        sh = usrc(c, ins, 0).astype(_U64) & _U64(63)
        x = usrc(c, ins, 1, 2)
        if name == "v_lshlrev_b64":
            r64 = x << sh
        elif name == "v_lshrrev_b64":
            r64 = x >> sh
        else:
            r64 = (x.view(np.int64) >> sh.astype(np.int64)).view(_U64)
        vwrite(c, _vdst(ins), r64, 2)
        _count(c, "integer")
        return
    elif name == "v_lshl_add_u64":
        a, sh, d = usrc(c, ins, 0, 2), usrc(c, ins, 1).astype(_U64) & _U64(7), usrc(c, ins, 2, 2)
        vwrite(c, _vdst(ins), (a << sh) + d, 2)
        _count(c, "integer")
        return
    elif name in ("v_mad_u64_u32", "v_mad_i64_i32"):
        a, b, d = usrc(c, ins, 0), usrc(c, ins, 1), usrc(c, ins, 2, 2)
        if name == "v_mad_u64_u32":
            prod = a.astype(_U64) * b.astype(_U64)
        else:
            prod = (_s(a) * _s(b)).view(_U64)
        r64 = prod + d
        carry = r64 < d if name == "v_mad_u64_u32" else np.zeros(r64.shape, bool)
        m = c.exec_mask()
        lo, hi = _mask_words(np.broadcast_to(carry, (c.n, WAVE)) & m)
        c.b.s[c.ix, ins.f["sdst"]], c.b.s[c.ix, ins.f["sdst"] + 1] = lo, hi
        vwrite(c, _vdst(ins), r64, 2)
        _count(c, "integer")
        return
    else:  # pragma: no cover
        raise AssertionError(name)
    vwrite(c, _vdst(ins), _omod_clamp(c, ins, np.asarray(r)))


def _src_halves(c: _Ctx, ins: Inst, i: int) -> tuple[np.ndarray, np.ndarray]:
    """The low and high words of 64-bit source i: (n, 64) register views or (n, 1) scalars."""
    code = ins.f[f"src{i}"]
    if code >= 256:
        return c.b.v[code - 256, c.ix], c.b.v[code - 255, c.ix]
    x = _column(sread(c, code, 2, ins))
    return (x & _MASK32).astype(_U32), (x >> _U64(32)).astype(_U32)


def _shl64_in_place(c: _Ctx, ins: Inst) -> bool:
    """v_lshlrev_b64 of a VGPR pair by one shift for every lane (`i << 2` of an index), computed straight
    into the destination pair (the same pair or one apart from it) on every wave of the batch; False when
    the operands do not allow it (the general path runs)."""
    sh_code, x_code = ins.f["src0"], ins.f["src1"]
    if x_code < 256 or sh_code >= 256 or ins.f.get("neg") or ins.f.get("abs"):
        return False
    x, d = x_code - 256, _vdst(ins)
    if d != x and abs(d - x) < 2:  # overlapping pairs: the general path reads before it writes
        return False
    sh_all = sread(c, sh_code, 1, ins)
    sh = int(sh_all[0]) & 63
    if sh_all.size > 1 and not ((sh_all & _U32(63)) == sh).all():
        return False
    lo, hi, out_lo, out_hi = c.b.v[x], c.b.v[x + 1], c.b.v[d], c.b.v[d + 1]
    if sh >= 32:
        np.left_shift(lo, _U32(sh - 32), out=out_hi)
        out_lo.fill(0)
    elif sh:
        carry = _SCRATCH.get("amd_shl64", lo.size, _U32).reshape(lo.shape)
        np.right_shift(lo, _U32(32 - sh), out=carry)  # the bits crossing into the high word, read first
        np.left_shift(hi, _U32(sh), out=out_hi)
        np.bitwise_or(out_hi, carry, out=out_hi)
        np.left_shift(lo, _U32(sh), out=out_lo)
    elif d != x:
        np.copyto(out_lo, lo)
        np.copyto(out_hi, hi)
    return True


def _shl64_halves(c: _Ctx, ins: Inst) -> tuple[np.ndarray, np.ndarray] | None:
    """v_lshlrev_b64 (shift, x) / v_lshl_add_u64 (x, shift, y): x << shift computed on 32-bit words, when
    the shift is one number for every lane (a constant or an SGPR holding one value); else None."""
    if ins.name == "v_lshlrev_b64":
        sh_code, x_i, mask = ins.f["src0"], 1, 63
    else:
        sh_code, x_i, mask = ins.f["src1"], 0, 7
    if sh_code >= 256 or ins.f.get("neg") or ins.f.get("abs"):
        return None
    sh_all = sread(c, sh_code, 1, ins)
    sh = int(sh_all[0]) & mask
    if sh_all.size > 1 and not ((sh_all & _U32(mask)) == sh).all():
        return None
    lo, hi = _src_halves(c, ins, x_i)
    if sh == 0:
        return lo, hi
    if sh >= 32:
        return np.zeros(np.broadcast(lo, hi).shape, _U32), np.left_shift(lo, _U32(sh - 32), dtype=_U32)
    new_hi = np.bitwise_or(np.left_shift(hi, _U32(sh), dtype=_U32), np.right_shift(lo, _U32(32 - sh), dtype=_U32))
    return np.left_shift(lo, _U32(sh), dtype=_U32), new_hi


def _int3(name: str, a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
    if name == "v_add3_u32":
        return a + b + d
    if name == "v_lshl_add_u32":
        return (a << (b & _U64(31))) + d
    if name == "v_add_lshl_u32":
        return ((a + b) & _MASK32) << (d & _U64(31))
    if name == "v_lshl_or_b32":
        return (a << (b & _U64(31))) | d
    if name == "v_and_or_b32":
        return (a & b) | d
    if name == "v_or3_b32":
        return a | b | d
    if name == "v_xad_u32":
        return (a ^ b) + d
    if name == "v_bfe_u32":
        return (a >> (b & _U64(31))) & ((_U64(1) << (d & _U64(31))) - _U64(1))
    if name == "v_bfe_i32":
        off, width = (b & _U64(31)).astype(np.int64), (d & _U64(31)).astype(np.int64)
        val = (_s(a) >> off) & ((1 << width) - 1)
        sign = np.where(width > 0, (val >> np.maximum(width - 1, 0)) & 1, 0)
        return np.where(sign == 1, val - (1 << width), val).view(_U64)
    if name == "v_bfi_b32":
        return (a & b) | (~a & d)
    if name == "v_mad_u32_u24":
        return (a & _U64(0xFFFFFF)) * (b & _U64(0xFFFFFF)) + d
    if name == "v_mad_i32_i24":
        return ((((_s(a) << 40) >> 40) * ((_s(b) << 40) >> 40)) + _s(d)).view(_U64) & _U64(0xFFFFFFFF)
    if name == "v_alignbit_b32":
        return ((a << _U64(32)) | b) >> (d & _U64(31))
    if name in ("v_max3_u32", "v_min3_u32", "v_med3_u32"):
        stack = np.stack(np.broadcast_arrays(a, b, d))
        return stack.max(0) if "max" in name else stack.min(0) if "min" in name else np.median(stack, 0).astype(_U64)
    if name in ("v_max3_i32", "v_min3_i32", "v_med3_i32"):
        stack = np.stack(np.broadcast_arrays(_s(a), _s(b), _s(d)))
        r = stack.max(0) if "max" in name else stack.min(0) if "min" in name else np.sort(stack, 0)[1]
        return r.view(_U64)
    if name == "v_perm_b32":
        src = (a << _U64(32)) | b
        out = np.zeros(np.broadcast(a, b, d).shape, _U64)
        for k in range(4):
            sel = (d >> _U64(8 * k)) & _U64(0xFF)
            byte = np.where(sel < 8, (src >> (np.minimum(sel, _U64(7)) * _U64(8))) & _U64(0xFF),
                            np.where(sel == 12, _U64(0), np.where(sel > 12, _U64(0xFF), _U64(0))))
            out |= byte << _U64(8 * k)
        return out
    raise AssertionError(name)


def _exponent(x: np.ndarray, dt: Any) -> np.ndarray:
    """The biased exponent field of a float32/float64 (0 for zeros and denormals), as the ISA's exponent()."""
    if dt == np.float32:
        return ((np.asarray(x, np.float32).view(np.uint32) >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int64)
    return ((np.asarray(x, np.float64).view(np.uint64) >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)


def _div_scale(s0: np.ndarray, s1: np.ndarray, s2: np.ndarray, dt: Any = np.float32) -> tuple[np.ndarray, np.ndarray]:
    """V_DIV_SCALE_F32/F64 (S0 the value to scale, S1 the denominator, S2 the numerator), the ISA guide's cases
    in order: a zero operand gives NaN (V_DIV_FIXUP answers); an exponent gap of 96 (768) scales the denominator
    up by 2^64 (2^128) and sets VCC; a denormal denominator scales both operands up; a denominator whose
    reciprocal is denormal (in the operand's format) scales both down; a denormal quotient scales the numerator
    up and sets VCC; a tiny
    numerator (exponent field <= 23, <= 53) scales both up. VCC tells V_DIV_FMAS to undo the scaling.

    Where the guide scales a huge denominator up for a denormal quotient (it would overflow), the
    denominator is scaled down instead: the quotient comes out 2^64 larger either way, which VCC undoes."""
    info = np.finfo(dt)
    gap, tiny_exp, k = (96, 23, 64) if dt == np.float32 else (768, 53, 128)
    tiny = dt(info.tiny)
    with np.errstate(all="ignore"):
        a0, a1, a2 = (np.asarray(v, dt) for v in (s0, s1, s2))
        e1, e2 = _exponent(a1, dt), _exponent(a2, dt)
        q = (a2.astype(np.float64) / a1.astype(np.float64)).astype(dt)
        q_denorm = (np.abs(q) < tiny) & (q != 0)
        # the reciprocal would be denormal (|S1| > 2^126, 2^1022): the guide computes 1 / S1 in float64 for both
        # widths; compared with the operand format's denormal range, a huge denominator is scaled down, so
        # v_rcp's result stays normal (it runs before a flushing kernel turns denormals on for the fma steps)
        rcp_denorm = np.abs(1.0 / a1.astype(np.float64)) < np.float64(tiny)
        zero = (a1 == 0) | (a2 == 0)
        big_gap = ~zero & (e2 - e1 >= gap)
        den_denorm = ~zero & ~big_gap & (e1 == 0)
        rest = ~zero & ~big_gap & ~den_denorm
        both_tiny = rest & rcp_denorm & q_denorm
        rcp_tiny = rest & rcp_denorm & ~q_denorm
        quo_denorm = rest & ~rcp_denorm & q_denorm
        num_tiny = rest & ~rcp_denorm & ~q_denorm & (e2 <= tiny_exp)
        up = den_denorm | num_tiny | (big_gap & (a0 == a1)) | (quo_denorm & (a0 == a2))
        down = rcp_tiny | (both_tiny & (a0 == a1))
        factor = np.where(up, 2.0 ** k, np.where(down, 2.0 ** -k, 1.0))
        res = np.where(zero, dt(np.nan), (a0.astype(np.float64) * factor).astype(dt) if dt == np.float32
                       else _ldexp64(a0, np.where(up, k, np.where(down, -k, 0))))
        flag = big_gap | both_tiny | quo_denorm
    shape = np.broadcast(s0, s1, s2).shape
    return np.broadcast_to(res, shape).astype(dt), np.broadcast_to(flag, shape)


def _ldexp64(x: np.ndarray, e: np.ndarray) -> np.ndarray:
    """x * 2^e for float64 without an intermediate overflow or double rounding (np.ldexp rounds once)."""
    return np.ldexp(x, e.astype(np.int32))


def _div_fmas_scale(q: np.ndarray, dt: Any) -> np.ndarray:
    """V_DIV_FMAS's post-scale when VCC is set: V_DIV_SCALE made the quotient 2^-64 (2^-128) of the true one
    for an exponent gap (the scaled quotient is then at least 2^31) and 2^64 (2^128) of it for a denormal
    quotient (then below 2^-62): the scaled quotient's magnitude says which way to undo."""
    k = 64 if dt == np.float32 else 128
    return np.where(np.abs(q) >= 1.0, 2.0 ** k, 2.0 ** -k)


def _div_fixup(q: np.ndarray, den: np.ndarray, num: np.ndarray, dt: Any = np.float32) -> np.ndarray:
    """V_DIV_FIXUP_F32/F64 (q the quotient, then the denominator and the numerator), the ISA guide's cases in
    order: a NaN operand (numerator first) quieted; 0/0 and inf/inf the default NaN; x/0 and inf/y infinity;
    x/inf and 0/y zero; an exponent gap below -150 (-1075) zero (the quotient is under half the smallest
    denormal); else q with the sign of num * den. A quotient past 2^192 (2^1152) overflows inside the Newton
    steps even after V_DIV_SCALE, leaving a NaN or infinity in q for finite operands: a correctly rounded
    division is infinity there, so a non-finite q from finite, nonzero operands is read as that overflow."""
    with np.errstate(all="ignore"):
        q, den, num = (np.asarray(v, dt) for v in (q, den, num))
        ui: Any = np.uint32 if dt == np.float32 else np.uint64
        quiet: Any = ui(1 << (22 if dt == np.float32 else 51))
        sign_neg = np.signbit(num) ^ np.signbit(den)
        under = -150 if dt == np.float32 else -1075
        inf_q = np.where(sign_neg, dt(-np.inf), dt(np.inf))
        zero_q = np.where(sign_neg, dt(-0.0), dt(0.0))
        r = np.where(sign_neg, -np.abs(q), np.abs(q))
        r = np.where(~np.isfinite(q), inf_q, r)
        r = np.where(_exponent(num, dt) - _exponent(den, dt) < under, zero_q, r)
        r = np.where(np.isinf(den) | (num == 0), zero_q, r)
        r = np.where((den == 0) | np.isinf(num), inf_q, r)
        r = np.where(((den == 0) & (num == 0)) | (np.isinf(den) & np.isinf(num)), dt(np.nan), r)
        r = np.where(np.isnan(den), (den.view(ui) | quiet).view(dt), r)
        r = np.where(np.isnan(num), (num.view(ui) | quiet).view(dt), r)
        return np.asarray(r, dt)


_CMP_F: dict[str, Callable[..., Any]] = {
          "f": lambda a, b: np.zeros(np.broadcast(a, b).shape, bool), "lt": np.less, "eq": np.equal,
          "le": np.less_equal, "gt": np.greater, "lg": lambda a, b: (a < b) | (a > b), "ge": np.greater_equal,
          "o": lambda a, b: ~np.isnan(a) & ~np.isnan(b), "u": lambda a, b: np.isnan(a) | np.isnan(b),
          "nge": lambda a, b: ~(a >= b), "nlg": lambda a, b: ~((a < b) | (a > b)), "ngt": lambda a, b: ~(a > b),
          "nle": lambda a, b: ~(a <= b), "neq": lambda a, b: ~(a == b), "nlt": lambda a, b: ~(a < b),
          "tru": lambda a, b: np.ones(np.broadcast(a, b).shape, bool)}
_CMP_I: dict[str, Callable[..., Any]] = {
          "f": _CMP_F["f"], "lt": np.less, "eq": np.equal, "le": np.less_equal, "gt": np.greater,
          "ne": np.not_equal, "ge": np.greater_equal, "t": _CMP_F["tru"]}


def h_vcmp(c: _Ctx, ins: Inst) -> None:
    parts = ins.name.split("_")  # v_cmp_gt_i32 / v_cmpx_...
    op, typ = parts[2], parts[3]
    with np.errstate(invalid="ignore"):
        if op == "class":
            if typ == "f16":  # the half's value as float64 (NaN payloads keep their quiet bit), half's normal range
                cls = _fp_class(_h16(c, ins, 0), tiny=float(np.finfo(np.float16).tiny))
            else:
                cls = _fp_class(fsrc(c, ins, 0) if typ == "f32" else dsrc(c, ins, 0))
            res = (cls & usrc(c, ins, 1).astype(np.int64)) != 0
        elif typ == "f64":
            res = _CMP_F[op](dsrc(c, ins, 0), dsrc(c, ins, 1))
        elif typ == "f32":
            res = _CMP_F[op](fsrc(c, ins, 0), fsrc(c, ins, 1))
        elif typ == "f16":
            res = _CMP_F[op](_h16(c, ins, 0), _h16(c, ins, 1))
        elif typ in ("i64", "u64"):
            a64, b64 = usrc(c, ins, 0, 2).astype(_U64), usrc(c, ins, 1, 2).astype(_U64)
            if typ == "i64":
                res = _CMP_I[op](a64.view(np.int64), b64.view(np.int64))
            else:
                res = _CMP_I[op](a64, b64)
        else:
            a, b = usrc(c, ins, 0), usrc(c, ins, 1)
            if typ in ("u16", "i16"):
                a, b = a & 0xFFFF, b & 0xFFFF
                if typ == "i16":
                    a, b = a.astype(np.uint16).view(np.int16), b.astype(np.uint16).view(np.int16)
                res = _CMP_I[op](a.astype(np.int64), b.astype(np.int64))
            elif typ == "i32":
                res = _CMP_I[op](a.astype(_U32, copy=False).view(np.int32), b.astype(_U32, copy=False).view(np.int32))
            else:
                res = _CMP_I[op](a.astype(_U32, copy=False), b.astype(_U32, copy=False))
    lanes = np.broadcast_to(res, (c.n, WAVE))
    if not c.full:
        lanes = lanes & c.exec_mask()
    lo, hi = _mask_words(lanes)
    dst = VCC if ins.fmt == "VOPC" else ins.f["vdst"]
    if ins.f.get("sdwa") and ins.f["ext"] >> 15 & 1:  # VOPC SDWA's SD bit: the mask goes to SGPRs sdst
        dst = ins.f["ext"] >> 8 & 0x7F
    c.b.s[c.ix, dst], c.b.s[c.ix, dst + 1] = lo, hi
    if parts[1] == "cmpx":
        c.b.s[c.ix, EXEC], c.b.s[c.ix, EXEC + 1] = lo, hi
    _count(c, "fp32" if typ.startswith("f") else "integer")


def h_vop3p(c: _Ctx, ins: Inst) -> None:
    """Packed float32 ops (v_pk_mul/add/fma_f32): two lanes of float32 in a register pair."""
    name = ins.name
    n_src = 3 if "fma" in name else 2
    op_sel, op_sel_hi = ins.f["op_sel"], ins.f["op_sel_hi"] | ins.f["op_sel_hi2"] << 2
    halves: list[tuple[np.ndarray, np.ndarray]] = []
    for i in range(n_src):
        code = ins.f[f"src{i}"]
        if code >= 256:  # the two words of a VGPR pair, read in place
            parts = (_f32(c.b.v[code - 256, c.ix]), _f32(c.b.v[code - 255, c.ix]))
        else:
            x = usrc(c, ins, i, 2)
            parts = (_f32((x & _MASK32).astype(_U32)), _f32((x >> _U64(32)).astype(_U32)))
        if c.ftz:  # packed f32 ops follow FLOAT_DENORM_MODE_32 like the scalar ones, inputs and results
            parts = (_f32(_flush_bits(_bits(parts[0]))), _f32(_flush_bits(_bits(parts[1]))))
        lo = parts[op_sel >> i & 1]
        hi = parts[op_sel_hi >> i & 1]
        if ins.f["neg"] >> i & 1:
            lo = -lo
        if ins.f["neg_hi"] >> i & 1:
            hi = -hi
        halves.append((lo, hi))
    out = []
    for k in range(2):
        xs = [h[k] for h in halves]
        with np.errstate(all="ignore"):
            if name == "v_pk_mul_f32":
                r = xs[0] * xs[1]
            elif name == "v_pk_add_f32":
                r = xs[0] + xs[1]
            else:
                r = _fma32(xs[0], xs[1], xs[2])
        out.append(_flush_bits(_bits(np.asarray(r, np.float32))) if c.ftz else _bits(np.asarray(r, np.float32)))
    _count(c, "fp32")
    c.counters.flops["fp32"] += c.active()
    d = _vdst(ins)
    if c.full and not c.ftz:
        c.b.v[d, c.ix] = out[0]
        c.b.v[d + 1, c.ix] = out[1]
    else:
        vwrite(c, d, out[0].astype(_U64) | (out[1].astype(_U64) << _U64(32)), 2)


_PK16: dict[str, Callable[..., np.ndarray]] = {  # packed 16-bit integer ops on (low, high) halves as int64
    "add_u16": lambda a, b: _u16(a) + _u16(b), "add_i16": lambda a, b: _i16(a) + _i16(b),
    "sub_u16": lambda a, b: _u16(a).astype(np.int64) - _u16(b).astype(np.int64),
    "sub_i16": lambda a, b: _i16(a) - _i16(b), "mul_lo_u16": lambda a, b: _u16(a) * _u16(b),
    "lshlrev_b16": lambda a, b: _u16(b) << (_u16(a) & _U64(15)),
    "lshrrev_b16": lambda a, b: _u16(b) >> (_u16(a) & _U64(15)),
    "ashrrev_i16": lambda a, b: _i16(b) >> (_i16(a) & 15),
    "max_u16": lambda a, b: np.maximum(_u16(a), _u16(b)), "min_u16": lambda a, b: np.minimum(_u16(a), _u16(b)),
    "max_i16": lambda a, b: np.maximum(_i16(a), _i16(b)), "min_i16": lambda a, b: np.minimum(_i16(a), _i16(b)),
    "mad_u16": lambda a, b, d: _u16(a) * _u16(b) + _u16(d), "mad_i16": lambda a, b, d: _i16(a) * _i16(b) + _i16(d),
}


def h_pk_int16(c: _Ctx, ins: Inst) -> None:
    """Packed 16-bit integer ops (v_pk_add_u16, v_pk_mul_lo_u16, v_pk_mad_i16, shifts, min/max, ...): each
    half of the result from the halves op_sel (low result) and op_sel_hi (high result) pick of each source;
    with clamp, add/sub/mad saturate to the 16-bit range of their type instead of wrapping."""
    op = ins.name[5:]
    n_src = 3 if op.startswith("mad") else 2
    op_sel, op_sel_hi = ins.f["op_sel"], ins.f["op_sel_hi"] | ins.f["op_sel_hi2"] << 2
    srcs = [usrc(c, ins, i).astype(_U64) for i in range(n_src)]  # inline constants are 32-bit values
    out = []
    for sel in (op_sel, op_sel_hi):
        xs = [(x >> _U64(16)) if sel >> i & 1 else x & _U64(0xFFFF) for i, x in enumerate(srcs)]
        r = np.asarray(_PK16[op](*xs)).astype(np.int64)
        if ins.f.get("clamp") and op.startswith(("add", "sub", "mad")):
            r = np.clip(r, -32768, 32767) if op.endswith("i16") else np.clip(r, 0, 65535)
        out.append((r & 0xFFFF).astype(_U32))
    _count(c, "integer")
    vwrite(c, _vdst(ins), out[0] | (out[1] << _U32(16)))


def h_frexp(c: _Ctx, ins: Inst) -> None:
    """v_frexp_mant/v_frexp_exp_i32 of f32 and f64: the mantissa in [0.5, 1) with the sign (infinities and
    NaN return themselves) and the exponent (0 for zero, infinities and NaN), as C's frexp."""
    f64 = ins.name.endswith("f64")
    x = dsrc(c, ins, 0) if f64 else fsrc(c, ins, 0)
    with np.errstate(all="ignore"):
        mant, exp = np.frexp(x)
    finite = np.isfinite(x)
    if "mant" in ins.name:
        mant = np.where(finite, mant, x)
        if f64:
            vwrite(c, _vdst(ins), np.ascontiguousarray(mant, np.float64).view(_U64), 2)
        else:
            vwrite(c, _vdst(ins), _bits(mant.astype(np.float32)))
    else:
        vwrite(c, _vdst(ins), np.where(finite, exp, 0).astype(np.int64).astype(_U32))
    _count(c, "fp32")


_FREXP = {"v_frexp_mant_f32", "v_frexp_mant_f64", "v_frexp_exp_i32_f32", "v_frexp_exp_i32_f64"}


# ---------------------------------------------------------------------------- float64
def dsrc(c: _Ctx, ins: Inst, i: int) -> np.ndarray:
    """Float64 source i (a register pair) with VOP3 modifiers."""
    code = ins.f["src0"] if i == 0 else (ins.f["vsrc1"] + 256 if ins.fmt in ("VOP2", "VOPC") else ins.f[f"src{i}"])
    return _apply_mods(np.ascontiguousarray(vread(c, code, 2, ins, True)).view(np.float64), ins, i)


def _d(x: Any) -> np.ndarray:
    return np.asarray(x, np.float64).view(_U64)


_D1: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "v_rcp_f64": lambda x: 1.0 / x, "v_rsq_f64": lambda x: 1.0 / np.sqrt(x), "v_sqrt_f64": np.sqrt,
    "v_floor_f64": np.floor, "v_ceil_f64": np.ceil, "v_trunc_f64": np.trunc, "v_rndne_f64": np.rint,
    "v_fract_f64": lambda x: x - np.floor(x),
}
_D2: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "v_add_f64": np.add, "v_mul_f64": np.multiply, "v_max_f64": np.fmax, "v_min_f64": np.fmin,
}


def _fma64(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float64 fma from error-free transformations: Dekker's exact product p + e = a * b, then
    (p + c) + e with the sum's error folded in. Correctly rounded except in rare double-rounding
    cases (an exact tie after the first sum); documented in docs/amd.md."""
    with np.errstate(all="ignore"):
        a, b, c = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64), np.asarray(c, np.float64))
        p = a * b
        split = 134217729.0  # 2^27 + 1
        ah = a * split
        ah = ah - (ah - a)
        al = a - ah
        bh = b * split
        bh = bh - (bh - b)
        bl = b - bh
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        t = (p - (s - bb)) + (c - bb)
        r = s + (t + e)
        plain = p + c
        out = np.where(np.isfinite(r) & np.isfinite(p), r, plain)
        # Dekker's split overflows for |x| >= 2^996, its partial products for a product near 2^1024, and the
        # product's error term loses bits when the product is below 2^-968 (it would be denormal): those lanes
        # (rare: extreme operands, the last correction step of a quotient or square root near either end of
        # the range) are computed exactly with rationals and rounded once; so are products that underflowed to
        # zero from nonzero operands (the sum, and an underflowed result's sign, depend on the lost product).
        big, small = 2.0 ** 995, 2.0 ** -968
        risky = (np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
                 & ((np.abs(a) >= big) | (np.abs(b) >= big) | ((np.abs(p) < small) & ((p != 0) | ((a != 0) & (b != 0))))
                    | ~(np.abs(p) < 2.0 ** 1020) | ~np.isfinite(s) | ~np.isfinite(r)))
        if risky.any():
            idx = np.flatnonzero(risky)
            fa, fb, fc = a.ravel()[idx], b.ravel()[idx], c.ravel()[idx]
            exact = [_round_f64(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)),
                                bool(np.signbit(x) != np.signbit(y)), bool(np.signbit(z)))
                     for x, y, z in zip(fa, fb, fc)]
            out = np.array(out, np.float64)
            out.ravel()[idx] = exact
        return out


def _round_f64(q: Fraction, prod_neg: bool, c_neg: bool) -> float:
    """An exact rational rounded once to float64 (CPython's int true division is correctly rounded, to
    denormals and to infinity); an exact zero takes IEEE's sign for a fused multiply-add under round-to-nearest."""
    if q == 0:
        return -0.0 if (prod_neg and c_neg) else 0.0
    try:
        return q.numerator / q.denominator
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def h_f64(c: _Ctx, ins: Inst) -> None:
    """Double-precision VALU ops. fma is a float64 multiply then add (two roundings: documented)."""
    name = ins.name
    with np.errstate(all="ignore"):
        if name in _D1:
            r = _d(_D1[name](dsrc(c, ins, 0)))
        elif name in _D2:
            r = _d(_D2[name](dsrc(c, ins, 0), dsrc(c, ins, 1)))
        elif name == "v_fma_f64":
            r = _d(_fma64(dsrc(c, ins, 0), dsrc(c, ins, 1), dsrc(c, ins, 2)))
        elif name == "v_fmac_f64":
            acc = np.ascontiguousarray(vread(c, _vdst(ins) + 256, 2, ins)).view(np.float64)
            r = _d(_fma64(dsrc(c, ins, 0), dsrc(c, ins, 1), acc))
        elif name == "v_ldexp_f64":
            e = np.clip(_s(usrc(c, ins, 1)), -3000, 3000).astype(np.int32)
            r = _d(np.ldexp(dsrc(c, ins, 0), e))
        elif name == "v_mov_b64":
            r = usrc(c, ins, 0, 2)
        elif name == "v_cvt_f64_f32":
            r = _d(fsrc(c, ins, 0).astype(np.float64))
        elif name == "v_cvt_f64_i32":
            r = _d(_s(usrc(c, ins, 0)).astype(np.float64))
        elif name == "v_cvt_f64_u32":
            r = _d(usrc(c, ins, 0).astype(np.float64))
        elif name == "v_div_fixup_f64":
            q, den, num = dsrc(c, ins, 0), dsrc(c, ins, 1), dsrc(c, ins, 2)
            r = _d(_div_fixup(q, den, num, np.float64))
        elif name == "v_div_fmas_f64":
            vcc = _lanes(c.b.s[c.ix, VCC], c.b.s[c.ix, VCC + 1])
            a, b, d = dsrc(c, ins, 0), dsrc(c, ins, 1), dsrc(c, ins, 2)
            fma = _fma64(a, b, d)
            up = np.abs(d) >= 1.0
            r64 = np.where(vcc, np.ldexp(fma, np.where(up, 128, -128)), fma)
            down = np.broadcast_to(vcc & ~up & np.isfinite(fma), r64.shape)
            if down.any():  # a denormal quotient: the exact a * b + d scaled, rounded once at its precision
                r64 = np.array(r64, np.float64)
                a_, b_, d_ = (np.broadcast_to(x, r64.shape)[down] for x in (a, b, d))
                r64[down] = [_round_f64((Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))) / 2 ** 128,
                                        bool(np.signbit(x) != np.signbit(y)), bool(np.signbit(z)))
                             for x, y, z in zip(a_, b_, d_)]
            r = _d(r64)
        elif name == "v_div_scale_f64":
            s0, s1, s2 = dsrc(c, ins, 0), dsrc(c, ins, 1), dsrc(c, ins, 2)
            res, flag = _div_scale(s0, s1, s2, np.float64)
            lo, hi = _mask_words(np.broadcast_to(flag, (c.n, WAVE)) & c.exec_mask())
            c.b.s[c.ix, ins.f["sdst"]], c.b.s[c.ix, ins.f["sdst"] + 1] = lo, hi
            r = _d(res)
        else:  # pragma: no cover
            raise AssertionError(name)
    _count(c, "fp64")
    c.counters.flops["fp64"] += c.active()
    vwrite(c, _vdst(ins), r, 2)


def h_cvt_narrow(c: _Ctx, ins: Inst) -> None:
    """Conversions to 32 bits from float64, and v_cvt_f32_ubyteN."""
    name = ins.name
    if name.startswith("v_cvt_f32_ubyte"):
        k = int(name[-1])
        r = _bits(((usrc(c, ins, 0).astype(_U64) >> _U64(8 * k)) & _U64(0xFF)).astype(np.float32))
    else:
        x = dsrc(c, ins, 0)
        with np.errstate(all="ignore"):
            r = {"v_cvt_f32_f64": lambda: _bits(x.astype(np.float32)), "v_cvt_i32_f64": lambda: _cvt_i32(x),
                 "v_cvt_u32_f64": lambda: _cvt_u32(x)}[name]()
    _count(c, "fp32")
    vwrite(c, _vdst(ins), r)


_CLASS_BITS = ("snan", "qnan", "-inf", "-normal", "-denormal", "-zero", "+zero", "+denormal", "+normal", "+inf")


def _fp_class(x: np.ndarray, tiny: float | None = None) -> np.ndarray:
    """The 10-bit class mask V_CMP_CLASS tests (bit per class, in _CLASS_BITS order); `tiny` is the smallest normal
    of the operand's format when that is narrower than x's dtype (halves held as float64)."""
    tiny = np.finfo(x.dtype).tiny if tiny is None else tiny
    neg = np.signbit(x)
    nan = np.isnan(x)
    raw: np.ndarray = np.ascontiguousarray(x).view(_U64 if x.dtype == np.float64 else _U32).astype(np.int64)
    quiet = (raw >> (51 if x.dtype == np.float64 else 22)) & 1
    a = np.abs(x)
    cls = np.select(
        [nan & (quiet == 0), nan, np.isinf(x) & neg, (a >= tiny) & neg & np.isfinite(x), (a > 0) & (a < tiny) & neg,
         (a == 0) & neg, (a == 0), (a > 0) & (a < tiny), (a >= tiny) & np.isfinite(x), np.isinf(x)],
        list(range(10)), 0)
    return (np.int64(1) << cls.astype(np.int64))


# ---------------------------------------------------------------------------- half precision
_F16_CONSTS = {240: 0.5, 241: -0.5, 242: 1.0, 243: -1.0, 244: 2.0, 245: -2.0, 246: 4.0, 247: -4.0,
               248: 0.15915494309189535}


def _h16(c: _Ctx, ins: Inst, i: int, hi: bool = False) -> np.ndarray:
    """Source i of a 16-bit float op as float64: the low (or, with op_sel, high) half of the register;
    inline float constants are half-precision values."""
    code = ins.f["src0"] if i == 0 else (ins.f["vsrc1"] + 256 if ins.fmt in ("VOP2", "VOPC") else ins.f[f"src{i}"])
    if code in _F16_CONSTS:
        bits = np.full((c.n, 1), np.float16(_F16_CONSTS[code]).view(np.uint16), np.uint16)
        x = bits.view(np.float16) if not hi else np.zeros((c.n, 1), np.float16)
    else:
        raw = usrc(c, ins, i).astype(_U32)
        x = ((raw >> _U32(16)) if hi else (raw & _U32(0xFFFF))).astype(np.uint16).view(np.float16)
    v = x.astype(np.float64)
    if ins.fmt == "VOP3" or ins.f.get("dpp") or ins.f.get("sdwa"):  # (packed ops apply neg_lo/neg_hi per half)
        if ins.f.get("abs", 0) >> i & 1:
            v = np.abs(v)
        if ins.f.get("neg", 0) >> i & 1:
            v = -v
    return v


def _to_h(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return x.astype(np.float16).view(np.uint16).astype(_U32)


_H2: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "v_add_f16": np.add, "v_sub_f16": np.subtract, "v_subrev_f16": lambda a, b: b - a, "v_mul_f16": np.multiply,
    "v_max_f16": np.fmax, "v_min_f16": np.fmin,
}


_H1: dict[str, Callable[[np.ndarray], np.ndarray]] = {  # exact on the half's float64 value (np.rint: ties to even)
    "v_rndne_f16": np.rint, "v_trunc_f16": np.trunc, "v_ceil_f16": np.ceil, "v_floor_f16": np.floor,
}


def h_f16(c: _Ctx, ins: Inst) -> None:
    """16-bit float VALU ops: computed in float64 from half inputs and rounded once to half; the result
    goes to the low half of the destination, the high half is zeroed (GFX9)."""
    name = ins.name
    opsel = ins.f.get("opsel", 0) if ins.fmt == "VOP3" else 0
    with np.errstate(all="ignore"):
        if name in _H2:
            r = _to_h(_H2[name](_h16(c, ins, 0, bool(opsel & 1)), _h16(c, ins, 1, bool(opsel & 2))))
        elif name in ("v_fma_f16", "v_mad_f16"):
            r = _to_h(_h16(c, ins, 0, bool(opsel & 1)) * _h16(c, ins, 1, bool(opsel & 2)) +
                      _h16(c, ins, 2, bool(opsel & 4)))
        elif name == "v_mac_f16":
            acc = (c.b.v[_vdst(ins), c.ix] & _U32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
            r = _to_h(_h16(c, ins, 0) * _h16(c, ins, 1) + acc)
        elif name in _H1:
            r = _to_h(_H1[name](_h16(c, ins, 0, bool(opsel & 1))))
        elif name == "v_div_fixup_f16":
            # the float32 fixup on the halves' exact float32 values: a half quotient never comes near the
            # float32 exponent-gap case, the special cases (NaN, 0/0, x/0, inf/y, x/inf) are the same
            q, den, num = (_h16(c, ins, i, bool(opsel >> i & 1)).astype(np.float32) for i in range(3))
            r = _to_h(_div_fixup(q, den, num).astype(np.float64))
        elif name == "v_cvt_f32_f16":
            r = _bits(_h16(c, ins, 0, bool(opsel & 1)).astype(np.float32))
        elif name == "v_cvt_f16_f32":
            r = _to_h(fsrc(c, ins, 0).astype(np.float64))
        elif name == "v_pack_b32_f16":
            lo, hi = _to_h(_h16(c, ins, 0, bool(opsel & 1))), _to_h(_h16(c, ins, 1, bool(opsel & 2)))
            r = lo | (hi << _U32(16))
        else:  # packed: v_pk_{add,mul,fma,max,min}_f16
            n_src = 3 if "fma" in name else 2
            op_sel, op_sel_hi = ins.f["op_sel"], ins.f["op_sel_hi"] | ins.f["op_sel_hi2"] << 2
            halves = []
            for part in (0, 1):
                sel = op_sel if part == 0 else op_sel_hi
                neg = ins.f["neg"] if part == 0 else ins.f["neg_hi"]  # neg_lo / neg_hi per result half
                xs = [_h16(c, ins, i, bool(sel >> i & 1)) * (-1.0 if neg >> i & 1 else 1.0) for i in range(n_src)]
                halves.append(_to_h(_packed_f16(name.split("_")[2], xs)))
            r = halves[0] | (halves[1] << _U32(16))
    _count(c, "fp16")
    vwrite(c, _vdst(ins), r)


def _packed_f16(op: str, xs: list[np.ndarray]) -> np.ndarray:
    if op == "add":
        return xs[0] + xs[1]
    if op == "mul":
        return xs[0] * xs[1]
    if op == "fma":
        return xs[0] * xs[1] + xs[2]
    return np.fmax(xs[0], xs[1]) if op == "max" else np.fmin(xs[0], xs[1])


def h_fma_mix(c: _Ctx, ins: Inst) -> None:
    """V_FMA_MIX_F32 / V_FMA_MIXLO_F16 / V_FMA_MIXHI_F16: a float32 fma whose sources are each a float32 register
    (op_sel_hi bit clear) or a half of one (set; op_sel picks the high half), neg_hi taking the absolute value and
    neg negating; the float32 result, or it rounded to half into the low (high) half with the other half kept (the
    fptrunc(fma(fpext ...)) clang folds into these)."""
    op_sel, op_sel_hi = ins.f["op_sel"], ins.f["op_sel_hi"] | ins.f["op_sel_hi2"] << 2
    xs = []
    with np.errstate(all="ignore"):
        for i in range(3):
            if op_sel_hi >> i & 1:
                raw = usrc(c, ins, i).astype(_U32)
                h = ((raw >> _U32(16)) if op_sel >> i & 1 else (raw & _U32(0xFFFF))).astype(np.uint16)
                x = h.view(np.float16).astype(np.float32)  # exact; half denormals are float32 normals
            else:
                x = fsrc(c, ins, i)
                if c.ftz:
                    x = _f32(_flush_bits(_bits(np.asarray(x, np.float32))))
            if ins.f["neg_hi"] >> i & 1:
                x = np.abs(x)
            if ins.f["neg"] >> i & 1:
                x = -x
            xs.append(np.asarray(x, np.float32))
        r = np.asarray(_fma32(xs[0], xs[1], xs[2]), np.float32)
        if c.ftz:
            r = _f32(_flush_bits(_bits(r)))
        if ins.f.get("clamp"):
            r = np.where(np.isnan(r), np.float32(0), np.clip(r, np.float32(0), np.float32(1))).astype(np.float32)
        d = _vdst(ins)
        if ins.name == "v_fma_mix_f32":
            out = _bits(r)
        else:
            h16 = _to_h(r.astype(np.float64))
            old = c.b.v[d, c.ix].astype(_U32)
            out = (old & _U32(0xFFFF0000)) | h16 if ins.name == "v_fma_mixlo_f16" else \
                (old & _U32(0xFFFF)) | (h16 << _U32(16))
    _count(c, "fp32")
    vwrite(c, d, out)


_FMA_MIX = ("v_fma_mix_f32", "v_fma_mixlo_f16", "v_fma_mixhi_f16")


_F16_OPS = set(_H2) | set(_H1) | {"v_div_fixup_f16", "v_fma_f16", "v_mad_f16", "v_mac_f16", "v_cvt_f32_f16",
                                  "v_cvt_f16_f32", "v_pack_b32_f16", "v_pk_add_f16", "v_pk_mul_f16", "v_pk_fma_f16",
                                  "v_pk_max_f16", "v_pk_min_f16"}


# ---------------------------------------------------------------------------- MFMA
def _mfma_values(c: _Ctx, code: int, dwords: int, kind: str) -> np.ndarray:
    """(n, 64, values per lane) of an MFMA operand's registers, as float64 (int64 for i8)."""
    r = code - 256
    raw = np.ascontiguousarray(c.b.v[r:r + dwords, c.ix].transpose(1, 2, 0))  # (n, 64, dwords) uint32
    if kind == "f32":
        return raw.view(np.float32).astype(np.float64)
    if kind == "f16":
        return raw.view(np.float16).astype(np.float64)
    if kind == "f64":
        return raw.view(np.float64)
    if kind == "bf16":
        return (raw.view(np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    return raw.view(np.int8).astype(np.int64)


def h_mfma(c: _Ctx, ins: Inst) -> None:
    """Matrix multiply-accumulate: D = A @ B + C for the whole wave, for each of the instruction's blocks (MFMA
    ignores EXEC). Products and sums are exact in float64 (int64 for i8) and rounded to float32 once per
    instruction; hardware accumulates in float32 in an unspecified order, so the last bits may differ.

    Layouts (AMD's CDNA ISA guides and matrix instruction calculator): lane (g * blocks + b) * M + i holds
    A[b][i][g * kpl + e] and lane (g * blocks + b) * N + j holds B[b][g * kpl + e][j] for its kpl consecutive
    values e; the outputs are in `_mfma_to_d`. So the matrices are reshapes of the registers."""
    m, n, k, kind, kpl, in_w, out_w, blocks = MFMA[ins.name]
    w = c.n
    f = ins.f
    aoff = c.prog.kernel.descriptor.accum_offset  # AGPR a[i] is v[accum_offset + i] (unified register file)
    acc_ab, acc_cd = f["op_sel_hi"], f["clamp"]  # MAI bits: src0/src1 AGPRs; vdst and src2 AGPRs
    src0 = f["src0"] + (aoff if acc_ab & 1 and f["src0"] >= 256 else 0)
    src1 = f["src1"] + (aoff if acc_ab & 2 and f["src1"] >= 256 else 0)
    gk = WAVE // (m * blocks)  # lane groups along K
    a = _mfma_values(c, src0, in_w, kind).reshape(w, gk, blocks, m, kpl).transpose(0, 2, 3, 1, 4)
    b = _mfma_values(c, src1, in_w, kind).reshape(w, gk, blocks, n, kpl).transpose(0, 2, 1, 4, 3)
    d = np.matmul(a.reshape(w, blocks, m, k), b.reshape(w, blocks, k, n))  # (w, blocks, m, n)
    r2 = f["src2"] + (aoff if acc_cd and f["src2"] >= 256 else 0)
    vd = f["vdst"] + (aoff if acc_cd else 0)
    if kind == "f64":  # out_w / 2 float64 values per lane, value r in the register pair 2r, 2r + 1
        nvals = out_w // 2
        if r2 >= 256:
            regs = c.b.v[r2 - 256:r2 - 256 + out_w, c.ix].transpose(1, 0, 2).reshape(w, nvals, 2, WAVE)
            d += _mfma_to_d(np.ascontiguousarray(regs.transpose(0, 1, 3, 2)).view(np.float64)[..., 0], m, n, blocks)
        elif _const(r2, 2, ins.literal, True):
            d += np.array(_const(r2, 2, ins.literal, True), np.uint64).view(np.float64)
        vals = np.ascontiguousarray(_mfma_from_d(d, nvals))
        out64 = vals.view(_U32).reshape(w, nvals, WAVE, 2).transpose(0, 1, 3, 2).reshape(w, out_w, WAVE)
        c.b.v[vd:vd + out_w, c.ix] = out64.transpose(1, 0, 2)
        _mfma_count(c, m, n, k * blocks, kind)
        return
    if r2 >= 256:
        acc = _mfma_to_d(c.b.v[r2 - 256:r2 - 256 + out_w, c.ix].transpose(1, 0, 2), m, n, blocks)
        d += acc.view(np.int32) if kind == "i8" else acc.view(np.float32)
    else:
        k0 = _const(r2, 1, ins.literal, kind != "i8") or 0
        d += np.array(k0, np.uint32).view(np.int32 if kind == "i8" else np.float32)
    bits = (d & 0xFFFFFFFF).astype(_U32) if kind == "i8" else d.astype(np.float32).view(_U32)
    c.b.v[vd:vd + out_w, c.ix] = _mfma_from_d(bits, out_w).transpose(1, 0, 2)
    _mfma_count(c, m, n, k * blocks, kind)


def _mfma_to_d(vals: np.ndarray, m: int, n: int, blocks: int) -> np.ndarray:
    """(w, values per lane, 64) of an MFMA accumulator -> (w, blocks, M, N). 32-bit values of an M x N block of
    64 or more entries: D[b][i][j] with i = 4 * G * q + 4 * g + r (G = 64 / N) is value (b * Q + q) * 4 + r of
    lane g * N + j; of a 4 x 4 block: value i of lane 4 * b + j. 64-bit values: D[i][j] is value i // 4 of lane
    16 * (i % 4) + j (16 x 16); D[b][i][j] is lane 16 * i + 4 * b + j (4 x 4, one value)."""
    w = vals.shape[0]
    if m * n < WAVE:
        return vals.reshape(w, m, blocks, n).transpose(0, 2, 1, 3)
    if vals.dtype == np.float64:
        return vals.reshape(w, 1, m, n)
    g = WAVE // n
    q = m // (4 * g)
    return vals.reshape(w, blocks, q, 4, g, n).transpose(0, 1, 2, 4, 3, 5).reshape(w, blocks, m, n)


def _mfma_from_d(d: np.ndarray, nvals: int) -> np.ndarray:
    """The inverse of `_mfma_to_d`: (w, blocks, M, N) -> (w, values per lane, 64)."""
    w, blocks, m, n = d.shape
    if m * n < WAVE:
        return d.transpose(0, 2, 1, 3).reshape(w, nvals, WAVE)
    if d.dtype == np.float64:
        return d.reshape(w, nvals, WAVE)
    g = WAVE // n
    q = m // (4 * g)
    return d.reshape(w, blocks, q, g, 4, n).transpose(0, 1, 2, 4, 3, 5).reshape(w, nvals, WAVE)


def _mfma_count(c: _Ctx, m: int, n: int, k: int, kind: str) -> None:
    c.counters.thread_instructions["tensor"] += WAVE * c.n
    c.counters.warp_instructions["tensor"] += 2 * c.n
    c.counters.flops["tensor"] += 2 * m * n * k * c.n
    key = {"f32": "tensor_tf32", "f16": "tensor_fp16", "bf16": "tensor_bf16", "i8": "int8", "f64": "tensor_fp64"}[kind]
    c.counters.tensor_flops[key] = c.counters.tensor_flops.get(key, 0) + 2 * m * n * k * c.n


# ---------------------------------------------------------------------------- LDS
def _lds_addr(c: _Ctx, ins: Inst, extra: int, size: int, access: str,
              aligned: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(word index per lane, workgroup row per wave, exec mask), checked against the workgroup's LDS (and,
    when `aligned`, for addresses that are not a multiple of the access size, up to 4: atomics)."""
    m = c.exec_mask()
    addr = (c.b.v[ins.f["addr"], c.ix].astype(_U64) + _U64(extra)) & _MASK32  # LDS addresses are 32-bit
    limit = c.launch.lds_bytes
    bad = m & (addr + _U64(size) > _U64(limit))
    if aligned:
        bad |= m & ((addr & _U64(min(size, 4) - 1)) != 0)
    if bad.any():
        rows, cols = np.nonzero(bad)
        a = int(addr[rows[0], cols[0]])
        kind = "misaligned LDS access" if a + size <= limit else "out-of-bounds LDS (shared memory) access"
        raise _fault(c, ins, None, addr, size, "shared", access, kind,
                     f"{a} bytes into the workgroup's {limit}-byte LDS allocation", (int(rows[0]), int(cols[0])))
    return (addr >> _U64(2)).astype(np.int64), c.b.wg[c.ix], m


def _lds_flat(c: _Ctx, ins: Inst, extra: int, size: int, access: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(index per lane into the batch's LDS as one flat word array, exec mask or None for all lanes); lanes
    EXEC disables index word 0 of their workgroup. Checked like _lds_addr."""
    row = c.b.lds.shape[1]
    if not c.full:
        words, wg, m = _lds_addr(c, ins, extra, size, access)
        return wg[:, None] * row + np.where(m, words, 0), m
    addr = c.b.v[ins.f["addr"], c.ix].astype(np.int64)
    if extra:
        addr += extra
    hi, al = int(addr.max()), int(np.bitwise_or.reduce(addr, axis=None)) & (min(size, 4) - 1)
    if hi + size > c.launch.lds_bytes or al:  # the checked path (32-bit wrap, the fault report)
        words, wg, m = _lds_addr(c, ins, extra, size, access)
        return wg[:, None] * row + words, None
    addr >>= 2
    addr += _wg_base(c.b)[c.ix]
    return addr, None


_ARANGE = np.arange(16, dtype=np.int64)


def _ds_offsets(name: str, f: dict[str, int], width: int) -> list[int]:
    """Byte offsets of a DS read/write: one (offset1:offset0), or read2/write2's two scaled by the size."""
    if name.startswith(("ds_read2", "ds_write2")):
        stride = (64 if "st64" in name else 1) * 4 * width
        return [f["offset0"] * stride, f["offset1"] * stride]
    return [f["offset0"] | f["offset1"] << 8]


def _lds_span(c: _Ctx, ins: Inst, offs: list[int], size: int, access: str) -> tuple[np.ndarray | None, int]:
    """For fully active waves whose every access (at each of `offs`) is in bounds and aligned: the flat LDS
    word index of each lane's address (offsets added by the caller), from one pass over the address, and
    the alignment in bytes every lane's address has (up to 16); (None, 0) otherwise, and the caller checks
    offset by offset (which reports the fault)."""
    if not c.full or any(o % 4 for o in offs):
        return None, 0
    reg = ins.f["addr"]
    addr = c.b.v[reg, c.ix]
    hit = c.b.lds_addr.get(reg)
    # loops read LDS through a few address registers that do not change: reuse their index arrays (one
    # comparison instead of four passes)
    if hit is not None and (hit[0] is c.ix or isinstance(hit[0], slice) and isinstance(c.ix, slice)) and \
            np.array_equal(hit[1], addr):
        _, _, hi, low, idx = hit
    else:
        hi, low = int(addr.max()), int(np.bitwise_or.reduce(addr, axis=None)) & 15
        idx = (addr >> _U32(2)).astype(np.int64)
        idx += _wg_base(c.b)[c.ix]
        idx.flags.writeable = False
        c.b.lds_addr[reg] = (c.ix, addr.copy(), hi, low, idx)
    if hi + max(offs) + size > c.launch.lds_bytes or low & (min(size, 4) - 1):
        return None, 0
    return idx, 16 if low == 0 else 8 if low & 7 == 0 else 4


def _lds_shifted(c: _Ctx, ins: Inst, base: np.ndarray, shift: int) -> np.ndarray:
    """`base >> shift` (record indices of 8/16-byte reads), kept beside the address register's cached index."""
    hit = c.b.lds_addr.get(ins.f["addr"])
    if hit is None or hit[4] is not base:
        return base >> shift
    key = ("shifted", ins.f["addr"], shift)
    got = c.b.lds_addr.get(key)
    if got is None or got[0] is not base:
        got = (base, base >> shift)
        c.b.lds_addr[key] = got
    return got[1]


def _wg_base(b: _Batch) -> np.ndarray:
    """(W, 1) first flat LDS word of each wave's workgroup."""
    if b.wg_word is None:
        b.wg_word = (b.wg.astype(np.int64) * b.lds.shape[1])[:, None]
    return b.wg_word


def _defer_regs(c: _Ctx, kind: str, d: int, vals: list[np.ndarray], m: np.ndarray | None) -> None:
    """Queue the write of registers d, d+1, ... (one (n, 64) array each) on the lanes of `m` (None: all)."""
    def write(rows: Any, waves: Any) -> None:
        for k, val in enumerate(vals):
            if m is None:
                c.b.v[d + k, waves] = val[rows]
            else:
                c.b.v[d + k, waves] = np.where(m[rows], val[rows], c.b.v[d + k, waves])
    _defer(c, kind, write)


def _defer_d16(c: _Ctx, kind: str, d: int, v: np.ndarray, m: np.ndarray, hi: bool) -> None:
    """Queue a d16 load's write: the low 16 bits of `v` (n, 64) into the low or high half of VGPR d, merged
    with the register's other half as it is when the value arrives."""
    half = (v & 0xFFFF).astype(_U32)
    if hi:
        half <<= _U32(16)
    keep = _U32(0x0000FFFF if hi else 0xFFFF0000)

    def write(rows: Any, waves: Any) -> None:
        old = c.b.v[d, waves]
        c.b.v[d, waves] = np.where(m[rows], (old & keep) | half[rows], old)
    _defer(c, kind, write)


def _lds_misaligned(c: _Ctx, ins: Inst, offs: list[int]) -> bool:
    """Whether an active lane's address (at one of `offs`) is not a multiple of 4: gfx90a/gfx942 LDS runs in
    unaligned mode (the driver sets SH_MEM_CONFIG.alignment_mode so), which serves such accesses."""
    m = c.exec_mask()
    addr = c.b.v[ins.f["addr"], c.ix].astype(np.int64)
    return any(bool((m & (((addr + o) & 3) != 0)).any()) for o in offs)


def _ds_bytes(c: _Ctx, ins: Inst, offs: list[int], width: int, access: str) -> None:
    """DS reads/writes of `width` dwords at addresses of any byte alignment, byte by byte per lane (the
    unaligned mode of gfx90a/gfx942; out of bounds still faults). Lanes write in order, as the hardware's
    serialization of one instruction's conflicting lanes does."""
    f = ins.f
    lds8 = c.b.lds.view(np.uint8)
    size = 4 * width
    span = np.arange(size, dtype=np.int64)
    if access == "read":
        vals: list[np.ndarray] = []
        m = c.exec_mask()
        for off in offs:
            _, wg, m = _lds_addr(c, ins, off, size, "read", aligned=False)
            byte = np.where(m, (c.b.v[f["addr"], c.ix].astype(np.int64) + off) & 0xFFFFFFFF, 0)
            raw = lds8[wg[:, None, None], byte[..., None] + span]  # (n, 64, size) bytes
            words = np.ascontiguousarray(raw).view("<u4")  # (n, 64, width)
            vals.extend(words[..., k].astype(_U32) for k in range(width))
        c.counters.shared_load_bytes += c.active() * 4 * len(vals)
        _defer_regs(c, "lgkm", f["vdst"], vals, m.copy())
    else:
        regs = [f["data0"], f["data1"]] if ins.name.startswith("ds_write2") else [f["data0"]]
        for off, reg in zip(offs, regs, strict=True):
            _, wg, m = _lds_addr(c, ins, off, size, "write", aligned=False)
            rows, lanes = np.nonzero(m)
            byte = (c.b.v[f["addr"], c.ix][rows, lanes].astype(np.int64) + off) & 0xFFFFFFFF
            data = np.stack([c.b.v[reg + k, c.ix][rows, lanes] for k in range(width)], axis=1).astype("<u4")
            lds8[wg[rows][:, None], byte[:, None] + span] = data.view(np.uint8).reshape(rows.size, size)
            c.counters.shared_store_bytes += rows.size * size
        _count_only(c, "lgkm")
    _count(c, "memory")


LDS_BANKS = 32  # CDNA's LDS: 32 banks of 4 bytes, 32 lanes of a wave64 served per pass
_HALF = WAVE // 2


def _ds_access(name: str, f: dict[str, int]) -> tuple[list[int], int] | None:
    """(byte offsets, dwords per offset) a DS instruction reads or writes at each lane's address; None for
    those that do not address the banks (ds_bpermute/ds_permute use the LDS crossbar only)."""
    if name.startswith(("ds_bpermute", "ds_permute")):
        return None
    if name in _DS_SMALL:
        return [f["offset0"] | f["offset1"] << 8], 1
    if _DS_ATOMIC64.fullmatch(name):
        return [f["offset0"] | f["offset1"] << 8], 2
    if _DS_ATOMIC.fullmatch(name):
        return [f["offset0"] | f["offset1"] << 8], 1
    width = int(name.rsplit("_b", 1)[1]) // 32
    return _ds_offsets(name, f, width), width


def _lds_bank_conflicts(c: _Ctx, ins: Inst) -> None:
    """Count a DS instruction's LDS bank conflicts, as the PTX engine counts shared memory's: the LDS serves
    a wave64 in two passes of 32 lanes, each pass a request whose T dwords per lane (T = offsets x width:
    2 for ds_read_b64 or ds_read2_b32) ideally take T cycles; a bank gives one distinct dword per cycle, so
    the pass takes as many cycles as its busiest bank has distinct dwords (lanes reading one dword share
    it), and the cycles past T are the conflicts (`shared_bank_conflicts`, in 32-lane passes like the PTX
    engine's extra wavefronts; the timing model prices them on the load/store pipe). Lanes EXEC disables
    take no part. Adding one dword offset to a whole pass moves every lane to the next bank alike, so a
    pass's conflicts depend only on its addresses relative to its first lane: when every pass has the same
    relative pattern (the usual case: waves index LDS alike) one pass is counted, and the pattern's count is
    kept for the next instruction that has it."""
    acc = _ds_access(ins.name, ins.f)
    if acc is None:
        return
    offs, width = acc
    t = len(offs) * width
    addr = c.b.v[ins.f["addr"], c.ix]
    if c.full:
        lanes = addr.reshape(-1, _HALF)
        rel = lanes - lanes[:, :1]  # uint32: wraps like the 32-bit LDS address
        if bool((rel == rel[:1]).all()) and bool((((lanes[:, 0] - lanes[0, 0]) & _U32(3)) == 0).all()):
            key = (tuple(offs), width, rel[0].tobytes())
            one = c.b.lds_conflicts.get(key)
            if one is None:
                if len(c.b.lds_conflicts) > 1024:
                    c.b.lds_conflicts.clear()
                first = lanes[:1].astype(np.int64)
                w = np.stack([((first + o) & 0xFFFFFFFF) >> 2 for o in offs], axis=-1)  # (1, 32, offsets)
                w = (w[..., None] + _ARANGE[:width]).reshape(1, -1)
                one = c.b.lds_conflicts[key] = (max(int(warp_bank_conflicts(w)[0]) + 1 - t, 0),)
            c.counters.shared_bank_conflicts += one[0] * lanes.shape[0]
            return
    a = addr.astype(np.int64)
    if t == 1:
        words = (a >> 2).reshape(-1, _HALF, 1)  # a constant offset shifts every lane alike: same banks
    else:
        words = np.stack([((a + o) & 0xFFFFFFFF) >> 2 for o in offs], axis=-1)  # (n, 64, offsets)
        if width > 1:
            words = (words[..., None] + _ARANGE[:width]).reshape(words.shape[0], WAVE, -1)
        words = words.reshape(-1, _HALF, t)
    active = None
    if not c.full:  # inactive lanes repeat an active lane's dwords (a broadcast costs nothing)
        m = c.exec_mask().reshape(-1, _HALF)
        first = m.argmax(axis=1)
        fill = words[np.arange(words.shape[0]), first]  # (passes, t)
        words = np.where(m[..., None], words, fill[:, None, :])
        active = m.any(axis=1)
    rows = words.reshape(words.shape[0], -1)
    per_pass = np.maximum(warp_bank_conflicts(rows) + 1 - t, 0)
    if active is not None:
        per_pass = per_pass * active
    c.counters.shared_bank_conflicts += int(per_pass.sum())


def h_ds(c: _Ctx, ins: Inst) -> None:
    name, f = ins.name, ins.f
    c.counters.shared_requests += c.n
    _lds_bank_conflicts(c, ins)
    lds = c.b.lds
    if name == "ds_bpermute_b32" or name == "ds_permute_b32":
        m = c.exec_mask()
        sel = ((c.b.v[f["addr"], c.ix].astype(np.int64) + (f["offset0"] | f["offset1"] << 8)) >> 2) & 63
        data = c.b.v[f["data0"], c.ix]
        if name == "ds_bpermute_b32":
            val = np.take_along_axis(data, sel, axis=1)
        else:
            val = c.b.v[f["vdst"], c.ix].copy()
            rows = np.nonzero(m)[0]
            val[rows, sel[m]] = data[m]
        d = f["vdst"]
        mm = m.copy()
        _defer(c, "lgkm", lambda rows, waves: _vset(c, waves, d, val[rows], mm[rows]))
        _count(c, "memory")
        return
    if name in ("ds_read_b32", "ds_read_b64", "ds_read_b96", "ds_read_b128", "ds_read2_b32", "ds_read2_b64",
                "ds_read2st64_b32", "ds_read2st64_b64"):
        width = int(name.rsplit("_b", 1)[1]) // 32
        offs = _ds_offsets(name, f, width)
        flat = lds.reshape(-1)
        vals: list[np.ndarray] = []
        base, align = _lds_span(c, ins, offs, 4 * width, "read")
        if base is None and _lds_misaligned(c, ins, offs):
            _ds_bytes(c, ins, offs, width, "read")
            return
        rmask: np.ndarray | None = None
        for off in offs:
            if base is not None and width in (2, 4) and align >= 4 * width and off % (4 * width) == 0:
                # aligned 8/16-byte records: one gather of whole records (LDS rows are whole records); the
                # offset moves the table, not the indices
                recs = flat.reshape(-1, width)[off // (4 * width):]
                block = recs.take(_lds_shifted(c, ins, base, width // 2), axis=0)
                vals.extend(block[..., k] for k in range(width))
                continue
            if base is None:  # a fault or partial EXEC: per-offset checks
                idx, rmask = _lds_flat(c, ins, off, 4 * width, "read")
            elif width == 1:  # the offset moves the table, not the indices
                vals.append(flat[off >> 2:].take(base))
                continue
            else:
                idx = base + (off >> 2) if off else base
            if width > 1 and rmask is None:  # one gather of `width` consecutive words per lane
                block = flat.take(idx[..., None] + _ARANGE[:width])
                vals.extend(block[..., k] for k in range(width))
            else:
                vals.extend(flat.take(idx + k if k else idx) for k in range(width))
        c.counters.shared_load_bytes += c.active() * 4 * len(vals)
        _defer_regs(c, "lgkm", f["vdst"], vals, rmask)
        _count(c, "memory")
        return
    if name in ("ds_write_b32", "ds_write_b64", "ds_write_b96", "ds_write_b128", "ds_write2_b32", "ds_write2_b64",
                "ds_write2st64_b32", "ds_write2st64_b64"):
        width = int(name.rsplit("_b", 1)[1]) // 32
        offs = _ds_offsets(name, f, width)
        regs = [f["data0"], f["data1"]] if name.startswith("ds_write2") else [f["data0"]]
        flat = lds.reshape(-1)
        base, _ = _lds_span(c, ins, offs, 4 * width, "write")
        if base is None and _lds_misaligned(c, ins, offs):
            _ds_bytes(c, ins, offs, width, "write")
            return
        for off, reg in zip(offs, regs, strict=True):
            wmask: np.ndarray | None = None
            if base is None:
                idx, wmask = _lds_flat(c, ins, off, 4 * width, "write")
            else:
                idx = base + (off >> 2) if off else base
            if wmask is not None:
                idx = idx[wmask]
            for k in range(width):
                data = c.b.v[reg + k, c.ix]
                flat[idx + k if k else idx] = data if wmask is None else data[wmask]
            c.counters.shared_store_bytes += c.active() * 4 * width
        _count_only(c, "lgkm")
        _count(c, "memory")
        return
    if name in _DS_SMALL:  # sub-dword LDS reads and writes (d16: to/from one half of the register)
        off = f["offset0"] | f["offset1"] << 8
        size = 1 if "8" in name.split("_")[2] else 2
        words, wg, m = _lds_addr(c, ins, off, size, "write" if "write" in name else "read", aligned=False)
        byte = (c.b.v[f["addr"], c.ix].astype(np.int64) + off) & 0xFFFFFFFF
        lds8 = lds.view(np.uint8)
        if "write" in name:
            rows, lanes = np.nonzero(m)
            data = c.b.v[f["data0"], c.ix][rows, lanes]
            if name.endswith("_d16_hi"):  # ds_write_b8/b16_d16_hi store from the register's high half
                data = data >> _U32(16)
            for k in range(size):
                lds8[wg[rows], byte[rows, lanes] + k] = ((data >> _U32(8 * k)) & _U32(0xFF)).astype(np.uint8)
            _count_only(c, "lgkm")
        else:
            safe = np.where(m, byte, 0)
            v = lds8[wg[:, None], safe].astype(np.int64)
            if size == 2:
                v |= lds8[wg[:, None], safe + 1].astype(np.int64) << 8
            if "_i" in name:
                v = np.where(v >> (8 * size - 1) & 1, v - (1 << (8 * size)), v)
            d = f["vdst"]
            mm = m.copy()
            if "_d16" in name:  # 16 bits into the low (or _hi: high) half; the other half keeps its value
                _defer_d16(c, "lgkm", d, v, mm, name.endswith("_hi"))
            else:
                val = (v & 0xFFFFFFFF).astype(_U32)[:, None, :]
                _defer(c, "lgkm", lambda rows, waves: _vset_multi(c, waves, d, val[rows], mm[rows]))
        _count(c, "memory")
        return
    if _DS_ATOMIC64.fullmatch(name):  # 64-bit LDS atomics on register pairs, lane by lane
        off = f["offset0"] | f["offset1"] << 8
        words, wg, m = _lds_addr(c, ins, off, 8, "atomic")
        rows, lanes = np.nonzero(m)

        def pair(r: int) -> np.ndarray:
            return (c.b.v[r, c.ix][rows, lanes].astype(_U64) |
                    (c.b.v[r + 1, c.ix][rows, lanes].astype(_U64) << _U64(32)))
        data, data1 = pair(f["data0"]), pair(f["data1"])
        op, kind = name.split("_")[1], name.rsplit("_", 1)[1]
        old = np.empty(rows.size, _U64)
        for j in range(rows.size):
            g, w = int(wg[rows[j]]), int(words[rows[j], lanes[j]])
            cur = int(lds[g, w]) | int(lds[g, w + 1]) << 32
            old[j] = cur
            d = int(data[j])
            sc, sd = (cur - (1 << 64) if cur >> 63 else cur), (d - (1 << 64) if d >> 63 else d)
            if kind == "f64":
                fc, fd = np.array(cur, _U64).view(np.float64), np.array(d, _U64).view(np.float64)
                new = int(np.array({"add": fc + fd, "max": np.fmax(fc, fd), "min": np.fmin(fc, fd)}[op],
                                   np.float64).view(_U64))
            elif op == "cmpst":
                new = int(data1[j]) if cur == d else cur
            else:
                new = {"add": cur + d, "sub": cur - d, "rsub": d - cur, "and": cur & d, "or": cur | d, "xor": cur ^ d,
                       "wrxchg": d, "inc": 0 if cur >= d else cur + 1, "dec": d if cur == 0 or cur > d else cur - 1,
                       "max": max(sc, sd) if kind == "i64" else max(cur, d),
                       "min": min(sc, sd) if kind == "i64" else min(cur, d)}[op]
            new &= (1 << 64) - 1
            lds[g, w], lds[g, w + 1] = new & 0xFFFFFFFF, new >> 32
        if "_rtn_" in name:
            d0 = f["vdst"]
            lo, hi = c.b.v[d0, c.ix].copy(), c.b.v[d0 + 1, c.ix].copy()
            lo[rows, lanes], hi[rows, lanes] = (old & _MASK32).astype(_U32), (old >> _U64(32)).astype(_U32)
            val = np.stack([lo, hi], axis=1)
            mm = m.copy()
            _defer(c, "lgkm", lambda r, waves: _vset_multi(c, waves, d0, val[r], mm[r]))
        else:
            _count_only(c, "lgkm")
        c.counters.atomic_ops += rows.size
        _count(c, "atomic")
        return
    if _DS_ATOMIC.fullmatch(name):
        off = f["offset0"] | f["offset1"] << 8
        words, wg, m = _lds_addr(c, ins, off, 4, "atomic")
        rows, lanes = np.nonzero(m)
        data = c.b.v[f["data0"], c.ix][rows, lanes]
        data1 = c.b.v[f["data1"], c.ix][rows, lanes]
        op = name.split("_")[1]
        old = np.empty(rows.size, _U32)
        for j in range(rows.size):  # lanes in order: the read-modify-writes of one instruction serialize
            g, w = int(wg[rows[j]]), int(words[rows[j], lanes[j]])
            cur = lds[g, w]
            old[j] = cur
            if op == "cmpst":  # DS_CMPST: data0 is the compare value, data1 the new one
                lds[g, w] = data1[j] if cur == data[j] else cur
            elif op == "rsub":
                lds[g, w] = _U32((int(data[j]) - int(cur)) & 0xFFFFFFFF)
            else:
                lds[g, w] = _atomic_op(name.replace("wrxchg", "swap"), cur, data[j])
        if "_rtn_" in name:
            val = c.b.v[f["vdst"], c.ix].copy()
            val[rows, lanes] = old
            d = f["vdst"]
            mm = m.copy()
            _defer(c, "lgkm", lambda r, waves: _vset(c, waves, d, val[r], mm[r]))
        else:
            _count_only(c, "lgkm")
        c.counters.atomic_ops += rows.size
        _count(c, "atomic")
        return
    raise AssertionError(name)  # pragma: no cover


def _vset(c: _Ctx, waves: np.ndarray, r: int, val: np.ndarray, m: np.ndarray) -> None:
    if m.all():
        c.b.v[r, waves] = val
    else:
        c.b.v[r, waves] = np.where(m, val.astype(_U32), c.b.v[r, waves])


def _vset_multi(c: _Ctx, waves: np.ndarray, r: int, val: np.ndarray, m: np.ndarray) -> None:
    for k in range(val.shape[1]):
        _vset(c, waves, r + k, val[:, k], m)


def _atomic_op(name: str, cur: Any, data: Any) -> Any:
    base = name.split("_rtn")[0]
    kind = base.split("_")[-1]  # u32, f32, i32
    op = base.split("_")[1] if base.startswith("ds_") else base.split("_")[2]
    if kind == "f32":
        fa, fb = np.array(cur, _U32).view(np.float32), np.array(data, _U32).view(np.float32)
        r = {"add": fa + fb, "max": np.fmax(fa, fb), "min": np.fmin(fa, fb)}[op]
        return np.float32(r).view(_U32)
    if kind == "i32" or op in ("smax", "smin"):
        sa, sb = int(np.array(cur, _U32).view(np.int32)), int(np.array(data, _U32).view(np.int32))
        return np.array({"max": max(sa, sb), "min": min(sa, sb), "smax": max(sa, sb), "smin": min(sa, sb),
                         "add": sa + sb, "sub": sa - sb}[op] & 0xFFFFFFFF, dtype=np.int64).astype(_U32)
    ua, ub = int(cur), int(data)
    return _U32({"add": (ua + ub) & 0xFFFFFFFF, "sub": (ua - ub) & 0xFFFFFFFF, "max": max(ua, ub),
                 "min": min(ua, ub), "and": ua & ub, "or": ua | ub, "xor": ua ^ ub, "swap": ub,
                 "inc": 0 if ua >= ub else ua + 1, "dec": ub if ua == 0 or ua > ub else ua - 1, "umax": max(ua, ub),
                 "umin": min(ua, ub)}[op])


# ---------------------------------------------------------------------------- global memory
def _global_addr(c: _Ctx, ins: Inst) -> np.ndarray:
    f = ins.f
    if ins.fmt == "GLOBAL" and f["saddr"] != 0x7F:
        base = sread(c, f["saddr"], 2, ins)[:, None]
        addr = base + c.b.v[f["addr"], c.ix].astype(_U64)
    else:
        addr = _pair64(c.b.v[f["addr"], c.ix], c.b.v[f["addr"] + 1, c.ix])
    if f["offset"]:
        addr = addr + _U64(f["offset"] & 0xFFFFFFFFFFFFFFFF)  # a negative offset wraps, as the adder does
    return addr


def h_flat(c: _Ctx, ins: Inst) -> None:
    """FLAT loads and stores: generic addresses; lanes in the shared aperture access the workgroup's LDS,
    lanes in the private aperture their scratch, the others global memory."""
    addr = _global_addr(c, ins)
    m = c.exec_mask()
    hi = addr >> _U64(32)
    shared, private = m & (hi == _U64(SHARED_APERTURE)), m & (hi == _U64(PRIVATE_APERTURE))
    if not (shared.any() or private.any()):
        h_global(c, ins)
        return
    atomic = "_atomic_" in ins.name
    offs = (addr & _MASK32).astype(np.int64)
    glob = m & ~shared & ~private
    if glob.any():
        c.narrow(glob)
        h_global(c, ins)
    space = _flat_atomic_space if atomic else _flat_space
    if shared.any():
        space(c, ins, offs, shared, "shared")
    if private.any():
        space(c, ins, offs, private, "private")
    c.narrow(m)


def _flat_atomic_space(c: _Ctx, ins: Inst, offs: np.ndarray, m: np.ndarray, space: str) -> None:
    """A FLAT atomic's lanes that address LDS ('shared') or scratch ('private') through a generic pointer
    (clang at -O0 keeps `&local[i]` generic): the same read-modify-write as the DS atomic (32 or 64 bits),
    lane by lane in lane order, returning the old values when the instruction asks for them."""
    name, f = ins.name, ins.f
    wide = name.endswith(("_x2", "_f64"))
    size = 8 if wide else 4
    limit = c.launch.lds_bytes if space == "shared" else c.launch.private_bytes
    bad = m & ((offs + size > limit) | (offs % size != 0))
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise _fault(c, ins, None, offs.astype(_U64), size, space, "atomic",
                     f"out-of-bounds or misaligned {space} atomic through a generic pointer",
                     f"{int(offs[rows[0], cols[0]])} bytes into the {limit}-byte {space} segment",
                     (int(rows[0]), int(cols[0])))
    rows, lanes = np.nonzero(m)
    words = offs[rows, lanes] >> 2
    n = 2 if wide else 1
    reg = [c.b.v[f["data"] + k, c.ix][rows, lanes].astype(np.int64) for k in range(2 * n)]
    data = reg[0] | reg[1] << 32 if wide else reg[0]
    cmp = (reg[2] | reg[3] << 32 if wide else reg[1]) if "cmpswap" in name else None
    op = name.split("_atomic_", 1)[1].removesuffix("_x2")
    wg, waves = c.b.wg[c.ix], _sel(c)
    old = np.empty(rows.size, np.int64 if not wide else _U64)
    for j in range(rows.size):
        mem, at = (c.b.lds[wg[rows[j]]], words[j]) if space == "shared" else \
            (c.b.priv[waves[rows[j]], lanes[j]], words[j])
        cur = int(mem[at]) | (int(mem[at + 1]) << 32 if wide else 0)
        old[j] = cur
        if wide:
            new = _atomic64_value(op, cur, int(data[j]), None if cmp is None else int(cmp[j]))
            mem[at], mem[at + 1] = new & 0xFFFFFFFF, new >> 32
        elif cmp is not None:  # data = new value, data + 1 = compare value (as global_atomic_cmpswap)
            if cur == int(cmp[j]):
                mem[at] = data[j]
        else:
            mem[at] = _atomic_op(name.replace("flat_atomic_", "ds_"), _U32(cur), _U32(data[j]))
    if f["sc0"]:  # returns the old values
        d, mm = f["vdst"], m.copy()
        val = np.stack([c.b.v[d + k, c.ix].copy() for k in range(n)], axis=1)  # (n waves, regs, 64)
        for k in range(n):
            val[rows, k, lanes] = ((old.astype(_U64) >> _U64(32 * k)) & _MASK32).astype(_U32)
        _defer(c, "vm", lambda r, ws: _vset_multi(c, ws, d, val[r], mm[r]))
    else:
        _count_only(c, "vm")
    c.counters.atomic_ops += rows.size
    _count(c, "atomic")


def _flat_space(c: _Ctx, ins: Inst, offs: np.ndarray, m: np.ndarray, space: str) -> None:
    """A FLAT load/store's lanes that address LDS ('shared') or scratch ('private') by aperture offset."""
    name, f = ins.name, ins.f
    width = flat_width(name)
    tail = name.rsplit("_", 1)[-1]
    size = {"ubyte": 1, "sbyte": 1, "ushort": 2, "sshort": 2, "byte": 1, "short": 2}.get(tail, 4 * width)
    hi16 = name.endswith("_d16_hi")  # flat_store_{short,byte}_d16_hi: the register's high half
    if hi16:
        size = 2 if "_short_" in name else 1
    limit = c.launch.lds_bytes if space == "shared" else c.launch.private_bytes
    bad = m & ((offs + size > limit) | (offs % min(size, 4) != 0))
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise _fault(c, ins, None, offs.astype(_U64), size, space, "write" if "store" in name else "read",
                     f"out-of-bounds {space} memory access through a generic pointer",
                     f"{int(offs[rows[0], cols[0]])} bytes into the {limit}-byte {space} segment",
                     (int(rows[0]), int(cols[0])))
    waves = _sel(c)
    lanes = np.broadcast_to(np.arange(WAVE), m.shape)
    mem = c.b.lds.view(np.uint8) if space == "shared" else c.b.priv.view(np.uint8)

    def at(k: int) -> tuple[np.ndarray, ...]:  # byte index tuples for the selected lanes
        rows = np.nonzero(m)
        if space == "shared":
            return (c.b.wg[c.ix][rows[0]], offs[rows] + k)
        return (waves[rows[0]], lanes[rows], offs[rows] + k)

    if "_load_" in name:
        nb = 4 * width if size >= 4 else size
        raw = np.stack([mem[at(j)].astype(np.uint32) for j in range(nb)], axis=1)  # (lanes, bytes)
        regs = []
        for k in range(max(1, nb // 4)):
            word = np.zeros(raw.shape[0], np.uint32)
            for j in range(min(4, nb)):
                word |= raw[:, 4 * k + j] << np.uint32(8 * j)
            if size < 4 and tail.startswith("s"):
                sign_fill = np.uint32(~((1 << (8 * size)) - 1) & 0xFFFFFFFF)
                word = np.where(word >> np.uint32(8 * size - 1) & 1, word | sign_fill, word)
            regs.append(word)
        full = np.zeros((c.n, len(regs), WAVE), _U32)
        hit = np.nonzero(m)
        for k, word in enumerate(regs):
            full[hit[0], k, hit[1]] = word
        d = f["vdst"]
        mm = m.copy()
        _defer(c, "vm", lambda r, ws: _vset_multi(c, ws, d, full[r], mm[r]))
    else:
        hit = np.nonzero(m)
        nb = 4 * width if size >= 4 else size
        for j in range(nb):
            data = c.b.v[f["data"] + j // 4, c.ix][hit]
            mem[at(j)] = ((data >> _U32(8 * (j % 4) + 16 * hi16)) & _U32(0xFF)).astype(np.uint8)
        _count_only(c, "vm")
    _count(c, "memory")


def _linear_first(c: _Ctx, ins: Inst, size: int) -> int | None:
    """The address of the first lane when every lane of the selected waves is active and they access one
    contiguous ascending run of `size`-byte elements (the `x[i]` pattern), found from the 32-bit address
    words without building 64-bit addresses; None otherwise (the general path decides, and reports faults)."""
    if not c.full or size % 4:
        return None
    f = ins.f
    lo = c.b.v[f["addr"], c.ix]
    l0 = int(lo[0, 0])
    if l0 + (lo.size - 1) * size > 0xFFFFFFFF:
        return None
    if ins.fmt == "GLOBAL" and f["saddr"] != 0x7F:  # SGPR base + 32-bit VGPR offset
        base = sread(c, f["saddr"], 2, ins)
        b0 = int(base[0])
        if base.size > 1 and not (base == b0).all():
            return None
        first = b0 + l0
    else:
        hi = c.b.v[f["addr"] + 1, c.ix]
        h0 = int(hi[0, 0])
        if hi.min() != h0 or hi.max() != h0:  # (two reads, no boolean array)
            return None
        first = h0 << 32 | l0
    # lane k holds l0 + k * size exactly when lo - k * size is l0 in every lane (no wrap: checked above)
    off = _SCRATCH.get("amd_linear", lo.size, _U32).reshape(lo.shape)
    np.subtract(lo, _ramp32(lo.size, size).reshape(lo.shape), out=off)
    if off.min() != l0 or off.max() != l0:
        return None
    first = (first + f["offset"]) & 0xFFFFFFFFFFFFFFFF
    if first % 4:
        return None
    a = c.mem.allocation_at(first)
    if a is None or first + lo.size * size > a.end:
        return None  # the general path reports the fault
    return first


@functools.lru_cache(maxsize=8)
def _ramp32(n: int, step: int) -> np.ndarray:
    r = np.arange(0, n * step, step, dtype=_U32)
    r.flags.writeable = False
    return r


def _run_sectors(first: int, n: int, size: int) -> int:
    """32-byte sectors touched by n waves that access consecutive 64-lane runs from `first`."""
    starts = first + np.arange(n, dtype=np.int64) * (WAVE * size)
    return int(((starts + WAVE * size - 1) // 32 - starts // 32 + 1).sum())


def _global_linear(c: _Ctx, ins: Inst, first: int) -> None:
    """A lane-linear dword load or store of fully active waves, served as one slice of memory."""
    name, f = ins.name, ins.f
    words = c.mem.typed(_U32)
    width = flat_width(name)
    start = (first - GLOBAL_BASE) // 4
    total = c.n * WAVE * width
    sectors = _run_sectors(first, c.n, 4 * width)
    if "_load_" in name:
        block = words[start:start + total].reshape(c.n, WAVE, width)
        c.counters.global_load_bytes += total * 4
        c.counters.global_load_requests += c.n
        c.counters.global_load_sectors += sectors
        c.counters.global_load_ideal_sectors += -(-total * 4 // 32)
        if _completes_at_issue(c, ins):  # straight from memory into the registers, counted in vmcnt
            for k in range(width):
                c.b.v[f["vdst"] + k, c.ix] = block[:, :, k]
            _count_only(c, "vm")
        else:
            _defer_regs(c, "vm", f["vdst"], [block[:, :, k].copy() for k in range(width)], None)
    else:
        if width == 1:
            words[start:start + total] = c.b.v[f["data"], c.ix].reshape(-1)
        else:
            data = np.stack([c.b.v[f["data"] + k, c.ix] for k in range(width)], axis=2)  # (n, 64, width)
            words[start:start + total] = data.reshape(-1)
        c.counters.global_store_bytes += total * 4
        c.counters.global_store_requests += c.n
        c.counters.global_store_sectors += sectors
        c.counters.global_store_ideal_sectors += -(-total * 4 // 32)
        _count_only(c, "vm")
    _count(c, "memory")


def h_global(c: _Ctx, ins: Inst) -> None:
    name, f = ins.name, ins.f
    if ("_load_dword" in name or "_store_dword" in name) and \
            (first := _linear_first(c, ins, 4 * flat_width(name))) is not None:
        _global_linear(c, ins, first)
        return
    addr = _global_addr(c, ins)
    m = c.exec_mask()
    words = c.mem.typed(_U32)
    if "_load_" in name:
        width = flat_width(name)
        d16 = "_d16" in name  # global_load_{ubyte,sbyte,short}_d16[_hi]: 16 bits into one half of vdst
        tail = name.split("_")[2] if d16 else name.rsplit("_", 1)[-1]
        size = {"ubyte": 1, "sbyte": 1, "ushort": 2, "sshort": 2, "short": 2}.get(tail, 4 * width)
        _check_global(c, ins, addr, m, size, "read")
        safe = np.where(m, addr, _U64(GLOBAL_BASE + 0)) - _U64(GLOBAL_BASE)
        if size >= 4 and not (safe & _U64(3)).any():
            idx = (safe >> _U64(2)).astype(np.int64)
            val = np.stack([words[idx + k] for k in range(width)], axis=1)
        elif size >= 4:  # unaligned: assemble each dword from its bytes
            o = safe.astype(np.int64)
            raw = c.mem.bytes
            val = np.stack([sum((raw[o + 4 * k + j].astype(np.uint32) << np.uint32(8 * j)) for j in range(4))
                            for k in range(width)], axis=1).astype(_U32)
        else:
            raw = c.mem.bytes
            o = safe.astype(np.int64)
            v = raw[o].astype(np.int64) if size == 1 else raw[o].astype(np.int64) | (raw[o + 1].astype(np.int64) << 8)
            if tail.startswith("s") and tail != "short":
                bits = 8 * size
                v = np.where(v >> (bits - 1) & 1, v - (1 << bits), v)
            val = (v & 0xFFFFFFFF).astype(_U32)[:, None, :]
            if d16:
                _defer_d16(c, "vm", f["vdst"], v, m.copy(), name.endswith("_hi"))
        active = int(m.sum())
        c.counters.global_load_bytes += active * size
        c.counters.global_load_requests += c.n
        c.counters.global_load_sectors += _sectors(addr, m, size)
        c.counters.global_load_ideal_sectors += _ideal_sectors(m, size)
        d = f["vdst"]
        if not d16 and _completes_at_issue(c, ins):
            _vset_multi(c, _sel(c), d, val, m)
            _count_only(c, "vm")
        elif not d16:
            mm = m.copy()
            _defer(c, "vm", lambda rows, waves: _vset_multi(c, waves, d, val[rows], mm[rows]))
        _count(c, "memory")
        return
    if "_store_" in name:
        width = flat_width(name)
        tail = name.rsplit("_", 1)[-1]
        size = {"byte": 1, "short": 2, "hi": 1 if "byte_d16" in name else 2}.get(tail, 4 * width)
        _check_global(c, ins, addr, m, size, "write")
        rows, lanes = np.nonzero(m)
        a = addr[rows, lanes] - _U64(GLOBAL_BASE)
        if size >= 4 and (a & _U64(3)).any():  # unaligned: byte by byte
            for k in range(width):
                data = c.b.v[f["data"] + k, c.ix][rows, lanes]
                for j in range(4):
                    c.mem.bytes[a.astype(np.int64) + 4 * k + j] = ((data >> _U32(8 * j)) & _U32(0xFF)).astype(np.uint8)
        elif size >= 4:
            for k in range(width):
                words[(a >> _U64(2)).astype(np.int64) + k] = c.b.v[f["data"] + k, c.ix][rows, lanes]
        else:
            data = c.b.v[f["data"], c.ix][rows, lanes]
            if name.endswith("_d16_hi"):  # the high half of the register
                data = data >> _U32(16)
            for k in range(size):
                c.mem.bytes[a.astype(np.int64) + k] = ((data >> _U32(8 * k)) & _U32(0xFF)).astype(np.uint8)
        _count_only(c, "vm")
        c.counters.global_store_bytes += rows.size * size
        c.counters.global_store_requests += c.n
        c.counters.global_store_sectors += _sectors(addr, m, size)
        c.counters.global_store_ideal_sectors += _ideal_sectors(m, size)
        _count(c, "memory")
        return
    if "_atomic_" in name and (name.endswith("_x2") or name.endswith("_f64")):
        _atomic64(c, ins, addr, m)
        return
    if "_atomic_" in name:
        _check_global(c, ins, addr, m, 4, "atomic")
        rows, lanes = np.nonzero(m)
        a = ((addr[rows, lanes] - _U64(GLOBAL_BASE)) >> _U64(2)).astype(np.int64)
        data = c.b.v[f["data"], c.ix][rows, lanes]
        returns = bool(f["sc0"])
        # another thread's write of these bytes (a DMA copy) lands before or after, never inside (memory._RMW_LOCKS)
        guard = c.mem.rmw_guard(int(a.min()) * 4, int(a.max()) * 4 + 3) if a.size else nullcontext()
        if name in ("global_atomic_add_f32", "flat_atomic_add_f32") and not returns:
            with guard:
                np.add.at(words.view(np.float32), a, data.view(np.float32))
        elif name in ("global_atomic_add", "flat_atomic_add") and not returns:
            with guard:
                np.add.at(words, a, data)
        else:
            old = np.empty(rows.size, _U32)
            cmp = c.b.v[f["data"] + 1, c.ix][rows, lanes] if "cmpswap" in name else None
            with guard:
                for j in range(rows.size):
                    cur = words[a[j]]
                    old[j] = cur
                    if cmp is not None:  # data = new value, data+1 = compare value
                        if cur == cmp[j]:
                            words[a[j]] = data[j]
                    else:
                        as_ds = name.replace("global_atomic_", "ds_").replace("flat_atomic_", "ds_")
                        words[a[j]] = _atomic_op(as_ds, cur, data[j])
            if returns:
                val = c.b.v[f["vdst"], c.ix].copy()
                val[rows, lanes] = old
                d = f["vdst"]
                mm = m.copy()
                _defer(c, "vm", lambda r, waves: _vset(c, waves, d, val[r], mm[r]))
        if not returns:
            _count_only(c, "vm")
        c.counters.atomic_ops += rows.size
        _count(c, "atomic")
        return
    raise AssertionError(name)  # pragma: no cover


def h_scratch(c: _Ctx, ins: Inst) -> None:
    """Private (scratch) memory, per lane: gfx942's architected flat scratch gives each lane its own
    private segment; the address is the instruction offset plus the VGPR (SVE) and the SGPR, if used."""
    f = ins.f
    addr = np.full((c.n, WAVE), f["offset"], np.int64)
    if f["lds"]:  # SVE: a VGPR holds the per-lane address
        addr = addr + c.b.v[f["addr"], c.ix].astype(np.int64)
    if f["saddr"] != 0x7F:
        addr = addr + sread(c, f["saddr"], 1, ins).astype(np.int64)[:, None]
    _private_access(c, ins, addr, f["data"], f["vdst"])


def _private_access(c: _Ctx, ins: Inst, addr: np.ndarray, data_reg: int, vdst: int) -> None:
    """A load or store of each lane's private segment at byte offsets `addr` (n, 64)."""
    name = ins.name.replace("buffer_", "scratch_")
    m = c.exec_mask()
    width = flat_width(name)
    tail = name.rsplit("_", 1)[-1]
    size = {"ubyte": 1, "sbyte": 1, "ushort": 2, "sshort": 2, "byte": 1, "short": 2}.get(tail, 4 * width)
    limit = c.launch.private_bytes
    bad = m & ((addr < 0) | (addr + size > limit) | ((addr % min(size, 4)) != 0))
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise _fault(c, ins, None, addr.astype(_U64), size, "local (scratch)", "write" if "store" in name else "read",
                     "out-of-bounds private (scratch) memory access",
                     f"{int(addr[rows[0], cols[0]])} bytes into the work-item's {limit}-byte private segment",
                     (int(rows[0]), int(cols[0])))
    priv = c.b.priv
    waves = _sel(c)
    word = np.clip(addr >> 2, 0, priv.shape[2] - 1)
    shift = ((addr & 3) * 8).astype(_U32)
    if "_load_" in name:
        lanes = np.arange(WAVE)[None, :]
        vals = []
        for k in range(width):
            w = priv[waves[:, None], lanes, np.clip(word + k, 0, priv.shape[2] - 1)]
            if size < 4:
                v = (w >> shift) & _U32((1 << (8 * size)) - 1)
                if tail.startswith("s"):
                    v = np.where(v >> _U32(8 * size - 1) & _U32(1), v | _U32(~((1 << (8 * size)) - 1) & 0xFFFFFFFF), v)
                w = v
            vals.append(w)
        val = np.stack(vals, axis=1)
        d = vdst
        mm = m.copy()
        _defer(c, "vm", lambda rows, ws: _vset_multi(c, ws, d, val[rows], mm[rows]))
    else:
        rows, lanes = np.nonzero(m)
        for k in range(width):
            data = c.b.v[data_reg + k, c.ix][rows, lanes]
            idx = (waves[rows], lanes, word[rows, lanes] + k)
            if size < 4:
                mask = _U32((1 << (8 * size)) - 1) << shift[rows, lanes]
                priv[idx] = (priv[idx] & ~mask) | ((data << shift[rows, lanes]) & mask)
            else:
                priv[idx] = data
        _count_only(c, "vm")
    c.counters.local_bytes += int(m.sum()) * size
    _count(c, "memory")


def h_accvgpr(c: _Ctx, ins: Inst) -> None:
    """v_accvgpr_read/write/mov: copies between the architectural VGPRs and the accumulation registers,
    which live in the same (unified, gfx90a+) register file: a[i] is v[accum_offset + i]."""
    aoff = c.prog.kernel.descriptor.accum_offset
    f = ins.f
    if ins.name == "v_accvgpr_write_b32":
        val, dst = vread(c, f["src0"], 1, ins), f["vdst"] + aoff
    else:
        val = c.b.v[f["src0"] - 256 + aoff, c.ix]
        dst = f["vdst"] if ins.name == "v_accvgpr_read_b32" else f["vdst"] + aoff
    vwrite(c, dst, np.array(val, copy=True))
    _count(c, "integer")


def h_pk_mov(c: _Ctx, ins: Inst) -> None:
    """v_pk_mov_b32 (gfx90a+): the destination pair's low word from src0's low or high word (op_sel[0]),
    its high word from src1's (op_sel[1])."""
    f = ins.f

    def words(code: int) -> tuple[np.ndarray, np.ndarray]:
        if code >= 256:
            return c.b.v[code - 256, c.ix], c.b.v[code - 255, c.ix]
        x = sread(c, code, 2, ins)
        return (x & _MASK32).astype(_U32)[:, None], (x >> _U64(32)).astype(_U32)[:, None]

    lo = np.array(words(f["src0"])[f["op_sel"] & 1], copy=True)
    hi = np.array(words(f["src1"])[f["op_sel"] >> 1 & 1], copy=True)
    vwrite(c, f["vdst"], lo)
    vwrite(c, f["vdst"] + 1, hi)
    _count(c, "integer")


def h_mubuf(c: _Ctx, ins: Inst) -> None:
    """buffer_load/store through the private segment buffer (gfx90a scratch: clang addresses a work-item's
    private memory as resource s[0:3] + soffset + offset + the VGPR offset with offen). The private segment
    buffer is swizzled (lanes interleaved by dwords): the offset and the VGPR offset are a lane's own bytes,
    while soffset is added once for the whole wave, so a wave-level offset of 64 x N bytes is N bytes of each
    lane's segment; clang keeps the stack and frame pointers (s32, s33) scaled so (a call's frame at s33
    offset:12 is s33 / 64 + 12 bytes into the lane's segment). The dispatch sets the resource base and the
    wave's scratch offset to 0, so the sum is the byte offset in the work-item's own segment."""
    f = ins.f
    res = c.b.s[c.ix, f["srsrc"]].astype(np.int64) | (c.b.s[c.ix, f["srsrc"] + 1].astype(np.int64) & 0xFFFF) << 32
    wave_off = sread(c, f["soffset"], 1, ins).astype(np.int64) // WAVE
    addr = np.broadcast_to((res + wave_off + f["offset"])[:, None], (c.n, WAVE)).copy()
    if f["offen"]:
        addr += c.b.v[f["vaddr"], c.ix].astype(np.int64)
    _private_access(c, ins, addr, f["vdata"], f["vdata"])


def _atomic64_value(op: str, cur: int, d: int, cmp: int | None) -> int:
    """The new value of a 64-bit atomic `op` (global_atomic_<op>_x2's, or add_f64) on `cur` with data `d`
    (cmpswap: `d` is the new value, `cmp` the compare value)."""
    if cmp is not None:
        return d if cur == cmp else cur
    if op == "add_f64":
        return int((np.array(cur, _U64).view(np.float64) + np.array(d, _U64).view(np.float64)).view(_U64))
    si, sd = cur - (1 << 64) if cur >> 63 else cur, d - (1 << 64) if d >> 63 else d
    new: int = {"add": cur + d, "sub": cur - d, "and": cur & d, "or": cur | d, "xor": cur ^ d, "swap": d,
                "umax": max(cur, d), "umin": min(cur, d), "smax": max(si, sd), "smin": min(si, sd),
                "inc": 0 if cur >= d else cur + 1, "dec": d if cur == 0 or cur > d else cur - 1}[op]
    return new & (2**64 - 1)


def _atomic64(c: _Ctx, ins: Inst, addr: np.ndarray, m: np.ndarray) -> None:
    """64-bit global atomics (…_x2, add_f64): register pairs, one lane at a time in lane order."""
    f, name = ins.f, ins.name
    _check_global(c, ins, addr, m, 8, "atomic")
    rows, lanes = np.nonzero(m)
    qwords = c.mem.typed(_U64)
    a = ((addr[rows, lanes] - _U64(GLOBAL_BASE)) >> _U64(3)).astype(np.int64)

    def pair(r: int) -> np.ndarray:
        return c.b.v[r, c.ix][rows, lanes].astype(_U64) | (c.b.v[r + 1, c.ix][rows, lanes].astype(_U64) << _U64(32))

    data = pair(f["data"])
    cmp = pair(f["data"] + 2) if "cmpswap" in name else None
    op = name.split("_atomic_", 1)[1].removesuffix("_x2")
    old = np.empty(rows.size, _U64)
    guard = c.mem.rmw_guard(int(a.min()) * 8, int(a.max()) * 8 + 7) if a.size else nullcontext()
    with guard:  # (see the 32-bit atomics in _global_linear)
        for j in range(rows.size):
            cur = qwords[a[j]]
            old[j] = cur
            qwords[a[j]] = _atomic64_value(op, int(cur), int(data[j]), None if cmp is None else int(cmp[j]))
    if f["sc0"]:  # returning: the old values land in vdst:vdst+1 at the matching wait
        d0 = f["vdst"]
        lo, hi = c.b.v[d0, c.ix].copy(), c.b.v[d0 + 1, c.ix].copy()
        lo[rows, lanes] = (old & _MASK32).astype(_U32)
        hi[rows, lanes] = (old >> _U64(32)).astype(_U32)
        val = np.stack([lo, hi], axis=1)
        mm = m.copy()
        _defer(c, "vm", lambda r, waves: _vset_multi(c, waves, d0, val[r], mm[r]))
    else:
        _count_only(c, "vm")
    c.counters.atomic_ops += rows.size
    _count(c, "atomic")


def _ideal_sectors(m: np.ndarray, size: int) -> int:
    """Sectors each wave's request would touch if perfectly coalesced (its active lanes' bytes / 32, rounded up),
    summed over the waves: per request, as Counters defines it (not over the waves that run together)."""
    return int((-(-m.sum(axis=1) * size // 32)).sum())


def _sectors(addr: np.ndarray, m: np.ndarray, size: int) -> int:
    """32-byte sectors the waves' accesses touch (distinct per wave instruction)."""
    if not m.any():
        return 0
    if size <= 4 and m.all() and not int(np.bitwise_or.reduce(addr, axis=None)) & (size - 1):
        sec = addr >> _U64(5)  # aligned accesses of up to 4 bytes: one sector each
        nxt, cur = sec[:, 1:], sec[:, :-1]
        if (nxt >= cur).all():  # ascending lanes: a new sector wherever it changes
            return int(sec.shape[0] + np.count_nonzero(nxt != cur))
    none = _U64(0xFFFFFFFFFFFFFFFF)
    first = np.where(m, addr // _U64(32), none)
    last = np.where(m, (addr + _U64(size - 1)) // _U64(32), none)
    sec = np.sort(np.concatenate([first, last], axis=1), axis=1)
    distinct = 1 + (np.diff(sec, axis=1) != 0).sum(axis=1) - (sec[:, -1] == none)
    return int(distinct.sum())


def h_nop(c: _Ctx, ins: Inst) -> None:
    return None


def h_trap(c: _Ctx, ins: Inst) -> None:
    """s_trap (__trap, a failed assert): the kernel aborts; the first active lane is reported."""
    m = c.exec_mask()
    rows, lanes = np.nonzero(m) if m.any() else (np.zeros(1, np.int64), np.zeros(1, np.int64))
    w, lane = int(rows[0]), int(lanes[0])
    wave = int(np.arange(c.b.s.shape[0])[c.ix][w])
    wg = tuple(int(x) for x in c.b.wg_id[wave])
    flat = int(c.b.wave_in_wg[wave]) * WAVE + lane
    bx, by, _ = c.launch.block
    item = (flat % bx, (flat // bx) % by, flat // (bx * by))
    source = c.prog.kernel.source_line(ins.offset)
    if ins.f["simm16"] == 3:  # the debug trap strata's assert() uses
        raise DeviceFault("cudaErrorAssert", f"CUDA error: device-side assert triggered\n{ins.text} executed: "
                          f"assertion failed\n    in {c.prog.name} at offset {ins.offset:#x}" +
                          (f", source {source}" if source else "") + f"\n    by work-item {item} in workgroup {wg}",
                          {"kernel": c.prog.name, "offset": ins.offset, "instruction": ins.text, "block": wg,
                           "thread": item, "workgroup": wg, "work_item": item, "reason": "assert", "source": source})
    raise DeviceFault("cudaErrorLaunchFailure", f"{ins.text} executed: the kernel aborted (unspecified launch failure)"
                      f"\n    in {c.prog.name} at offset {ins.offset:#x}" + (f", source {source}" if source else "") +
                      f"\n    by work-item {item} in workgroup {wg}",
                      {"kernel": c.prog.name, "offset": ins.offset, "instruction": ins.text, "block": wg,
                       "thread": item, "workgroup": wg, "work_item": item, "reason": "trap", "source": source})


# ---------------------------------------------------------------------------- binding
_VOP3_ONLY_3 = {"v_fma_f32", "v_mad_f32", "v_fma_legacy_f32", "v_max3_f32", "v_min3_f32", "v_div_fixup_f32",
                "v_div_fmas_f32", "v_div_scale_f32", "v_add3_u32", "v_lshl_add_u32", "v_add_lshl_u32",
                "v_lshl_or_b32", "v_and_or_b32", "v_or3_b32", "v_xad_u32", "v_bfe_u32", "v_bfe_i32", "v_bfi_b32",
                "v_mad_u32_u24", "v_mad_i32_i24", "v_alignbit_b32", "v_perm_b32", "v_max3_i32", "v_min3_i32",
                "v_max3_u32",
                "v_min3_u32", "v_med3_i32", "v_med3_u32", "v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64",
                "v_lshl_add_u64", "v_mad_u64_u32", "v_mad_i64_i32"}
_VALU2 = set(_F2) | set(_I2) | {"v_fmac_f32", "v_mac_f32", "v_fmamk_f32", "v_madmk_f32", "v_fmaak_f32",
                                "v_madak_f32", "v_ldexp_f32", "v_cndmask_b32", "v_mbcnt_lo_u32_b32",
                                "v_mbcnt_hi_u32_b32", "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32",
                                "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32", "v_readlane_b32",
                                "v_writelane_b32"}
_SOPP_OK = {"s_endpgm", "s_waitcnt", "s_barrier", "s_nop", "s_setprio", "s_sleep", "s_code_end", "s_icache_inv",
            "s_dcache_wb", "s_ttracedata", "s_branch", "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_execz",
            "s_cbranch_execnz", "s_cbranch_vccz", "s_cbranch_vccnz"}
_DS_OK = {"ds_bpermute_b32", "ds_permute_b32", "ds_read_b32", "ds_read_b64", "ds_read_b96", "ds_read_b128",
          "ds_read2_b32", "ds_read2_b64", "ds_read2st64_b32", "ds_read2st64_b64", "ds_write_b32", "ds_write_b64",
          "ds_write_b96", "ds_write_b128", "ds_write2_b32", "ds_write2_b64", "ds_write2st64_b32",
          "ds_write2st64_b64", "ds_add_u32", "ds_add_rtn_u32", "ds_add_f32", "ds_add_rtn_f32", "ds_max_i32",
          "ds_min_i32", "ds_max_u32", "ds_min_u32", "ds_max_rtn_i32", "ds_min_rtn_i32"}
_DS_ATOMIC64 = re.compile(r"ds_(add|sub|rsub|inc|dec|min|max|and|or|xor|wrxchg|cmpst)(_rtn)?_(u64|i64|b64|f64)")
_DS_SMALL = {"ds_read_u8", "ds_read_i8", "ds_read_u16", "ds_read_i16", "ds_write_b8", "ds_write_b16",
             "ds_write_b8_d16_hi", "ds_write_b16_d16_hi", "ds_read_u8_d16", "ds_read_u8_d16_hi", "ds_read_i8_d16",
             "ds_read_i8_d16_hi", "ds_read_u16_d16", "ds_read_u16_d16_hi"}
_DS_ATOMIC = re.compile(r"ds_(add|sub|rsub|inc|dec|min|max|and|or|xor|wrxchg|cmpst)(_rtn)?_(u32|i32|b32|f32)")
_ATOMIC_OPS = ("add", "sub", "smin", "umin", "smax", "umax", "and", "or", "xor", "swap", "inc", "dec", "cmpswap")
_GLOBAL_ATOMICS = {*_ATOMIC_OPS, "add_f32", "add_f64", *(f"{op}_x2" for op in _ATOMIC_OPS)}


_F64_OPS = set(_D1) | set(_D2) | {"v_fma_f64", "v_fmac_f64", "v_ldexp_f64", "v_mov_b64", "v_cvt_f64_f32",
                                   "v_cvt_f64_i32", "v_cvt_f64_u32", "v_div_fixup_f64", "v_div_fmas_f64",
                                   "v_div_scale_f64"}
_NARROW = {"v_cvt_f32_f64", "v_cvt_i32_f64", "v_cvt_u32_f64", "v_cvt_f32_ubyte0", "v_cvt_f32_ubyte1",
           "v_cvt_f32_ubyte2", "v_cvt_f32_ubyte3"}


# SDWA (VOP1/VOP2; every VOPC compare): the source selects, sign extension, abs/neg and the destination
# select are applied around the op's 32-bit semantics in usrc/fsrc/_h16/vwrite, so any op whose handler reads
# its sources through them takes SDWA
_SDWA_OK = set(_I2) | set(_F2) | set(_I16) | set(_F1) | set(_CVT) | (_F16_OPS - {"v_pack_b32_f16"}) | {
    "v_cndmask_b32", "v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32",
    "v_subb_co_u32", "v_subbrev_co_u32"}


def _handler(ins: Inst) -> Callable[..., None] | None:  # noqa: C901 - one branch per encoding
    name, fmt = ins.name, ins.fmt
    if fmt in ("VOP2", "VOP3") and (name in _I16 or name in ("v_mad_legacy_u16", "v_mad_u16", "v_mad_legacy_i16",
                                                             "v_mad_i16")) and not ins.f.get("opsel"):
        return h_int16 if not ins.f.get("sdwa_clamp") else None
    if ins.f.get("sdwa") and fmt != "VOPC" and (ins.f.get("sdwa_clamp") or ins.f.get("omod") or
                                                 name not in _SDWA_OK):
        return None  # SDWA with clamp/omod, or on ops whose sub-dword semantics are not modeled (VOPC's SDWA
        # dword has no clamp/omod: those bits are its SGPR destination)
    if fmt in ("VOP1", "VOP3") and name in _FREXP:
        return h_frexp
    if fmt == "VOP3P" and name.startswith("v_pk_") and name[5:] in _PK16 and not (
            ins.f.get("neg") or ins.f.get("neg_hi")):
        return h_pk_int16
    if fmt == "SOP2":
        return h_sop2 if _sop2_fn(name) is not None else None
    if fmt == "SOPC":
        return h_sopc if name.startswith(("s_cmp_", "s_bitcmp")) and name.split("_")[2] in (*_SOPC_OPS, "b32") \
            or name.startswith("s_bitcmp") else None
    if fmt == "SOP1":
        return h_sop1 if name in _SOP1 or name.endswith("saveexec_b64") else None
    if fmt == "SOPK":
        if name in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
            return h_hwreg if hwreg_fields(ins.f["simm16"])[0] == HW_REG_MODE else None
        return h_sopk if name in ("s_movk_i32", "s_addk_i32", "s_mulk_i32") or name.startswith("s_cmpk_") else None
    if fmt == "SOPP":
        return h_trap if name == "s_trap" else h_sopp if name in _SOPP_OK else None
    if fmt == "SMEM":
        return h_smem if name.startswith("s_load_dword") else None
    if fmt in ("VOP1", "VOP2", "VOP3", "VOP3P") and name in _F16_OPS:
        return h_f16
    if fmt in ("VOP1", "VOP2", "VOP3") and name in _F64_OPS:
        return h_f64
    if fmt in ("VOP1", "VOP3") and name in _NARROW:
        return h_cvt_narrow
    if fmt in ("VOP1",) or (fmt == "VOP3" and name in set(_F1) | set(_CVT) | {"v_readfirstlane_b32"}):
        return h_vop1 if name in _F1 or name in _CVT or name in ("v_nop", "v_readfirstlane_b32") else None
    if fmt == "VOPC" or (fmt == "VOP3" and name.startswith(("v_cmp_", "v_cmpx_"))):
        parts = name.split("_")
        ok = len(parts) == 4 and parts[3] in ("f32", "f64", "f16", "i32", "u32", "i16", "u16", "i64", "u64") and \
            (parts[2] in (_CMP_F if parts[3] in ("f32", "f64", "f16") else _CMP_I) or
             parts[2] == "class" and parts[3] in ("f32", "f64", "f16"))
        return h_vcmp if ok else None
    if fmt in ("VOP2", "VOP3") and name in _VALU2:
        return h_valu2
    if fmt == "VOP3" and name in _VOP3_ONLY_3:
        return h_valu3
    if fmt == "VOP3P" and name in ("v_pk_mul_f32", "v_pk_add_f32", "v_pk_fma_f32"):
        return h_vop3p
    if fmt == "VOP3P" and name in MFMA:
        f = ins.f
        plain = not (f.get("neg_hi") or f.get("op_sel") or f.get("neg") or f.get("op_sel_hi2"))  # no cbsz/abid/blgp
        return h_mfma if plain and f["src0"] >= 256 and f["src1"] >= 256 else None
    if name in ("v_accvgpr_read_b32", "v_accvgpr_write_b32") and fmt == "VOP3P" or \
            name == "v_accvgpr_mov_b32" and fmt == "VOP1" and not (ins.f.get("dpp") or ins.f.get("sdwa")):
        return h_accvgpr
    if fmt == "VOP3P" and name in _FMA_MIX:
        return h_fma_mix
    if fmt == "VOP3P" and name == "v_pk_mov_b32":
        return h_pk_mov
    if fmt == "MUBUF" and name.startswith(("buffer_load_", "buffer_store_")) and not (
            ins.f["idxen"] or ins.f["lds"] or ins.f["acc"] or "format" in name or "d16" in name):
        return h_mubuf
    if fmt == "DS":
        known = name in _DS_OK or name in _DS_SMALL or _DS_ATOMIC.fullmatch(name) or _DS_ATOMIC64.fullmatch(name)
        return h_ds if known and not ins.f["gds"] else None
    if fmt == "MUBUF" and name in ("buffer_wbl2", "buffer_inv", "buffer_invl2", "buffer_wbinvl1",
                                   "buffer_wbinvl1_vol"):
        return h_nop  # cache write-back/invalidate of fences: memory here is coherent
    if fmt == "SCRATCH":
        return h_scratch if ("_load_" in name or "_store_" in name) and "d16" not in name and "lds" not in name \
            else None
    if fmt == "FLAT" and ("_load_" in name or "_store_" in name) and "lds" not in name and (
            "d16" not in name or name in ("flat_store_short_d16_hi", "flat_store_byte_d16_hi")):
        return h_flat  # a generic pointer: global memory, or LDS/scratch by aperture (clang -O0's locals)
    if fmt in ("GLOBAL", "FLAT"):
        if "_load_" in name or "_store_" in name:
            return h_global if ("d16" not in name or name.endswith(("store_short_d16_hi", "store_byte_d16_hi")) or
                                fmt == "GLOBAL" and "_load_" in name) and "lds" not in name else None
        if "_atomic_" in name:
            op = name.split("_atomic_", 1)[1]
            if op not in _GLOBAL_ATOMICS:
                return None
            return h_flat if fmt == "FLAT" else h_global  # a generic pointer may be to LDS or scratch
    return None


# ---------------------------------------------------------------------------- launch
@dataclass
class AmdLaunch:
    """One dispatch: grid in workgroups, workgroup shape, the kernarg segment's address and LDS size."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    kernarg_address: int
    lds_bytes: int
    private_bytes: int = 0  # per work-item private (scratch) segment
    dispatch_address: int = 0  # device address of the AQL dispatch packet (kernels that ask for dispatch_ptr)
    executor: str = "reference"  # which executor ran it (set by execute: 'native' when hw/native ran it)


def execute(prog: AmdProgram, launch: AmdLaunch, mem: DeviceMemory, *, budget: int = 0,
            batch_lanes: int = 1 << 16, timeout_s: float = 0.0, control: Any = None,
            isa_counts: dict[str, int] | None = None) -> Counters:
    """Run a dispatch to completion; returns its counters. `isa_counts`, if given, receives wave-level
    instruction counts by issue class (salu, valu, smem, vmem, lds, mfma, branch, sync), the waves
    launched and `valu_lanes` (active lanes over VALU issues, for the EXEC efficiency).

    Raises:
        DeviceFault: an invalid memory access (with the report fields of the PTX engine's faults).
        LaunchTimeout / LaunchCancelled: the watchdog or the host stopped it.
    """
    offset = printf.buffer_offset(prog.kernel)
    if offset is None:
        return _execute(prog, launch, mem, budget, batch_lanes, timeout_s, control, isa_counts)
    # a kernel that calls printf: the runtime's buffer behind hidden_printf_buffer, printed after the kernel
    buf = printf.PrintfBuffer(prog.kernel, mem, launch.kernarg_address, offset)
    try:
        counters = _execute(prog, launch, mem, budget, batch_lanes, timeout_s, control, isa_counts)
    except DeviceFault as e:
        found = printf.assertion(buf.records()) if e.name == "cudaErrorAssert" else None
        buf.drain()  # what the kernel printed before it faulted, as CUDA flushes it
        if found is None:
            raise
        raise DeviceFault(e.name, f"{e.message}\n    Assertion `{found['assertion']}` failed at {found['file']}:"
                          f"{found['line']} in {found['function']}", {**e.report, **found}) from None
    except BaseException:
        buf.drain()
        raise
    buf.drain()
    return counters


def _execute(prog: AmdProgram, launch: AmdLaunch, mem: DeviceMemory, budget: int, batch_lanes: int,
             timeout_s: float, control: Any, isa_counts: dict[str, int] | None) -> Counters:
    launch.executor = "reference"
    if config.settings().executor == "native":
        from strata.hw.native import available  # NOTE: L0 to L0; the native executor compiles this engine's code

        if available():
            from strata.hw.native.amd_executor import execute as execute_native

            native = execute_native(prog, launch, mem, budget=budget, batch_lanes=batch_lanes, timeout_s=timeout_s,
                                    control=control, isa_counts=isa_counts)
            if native is not None:
                return native
    private = prog.kernel.private_segment_fixed_size
    if prog.kernel.metadata.get(".uses_dynamic_stack"):  # recursion or calls through pointers: a stack
        private += DYNAMIC_STACK_BYTES
    if launch.private_bytes < private:
        launch = dataclasses.replace(launch, private_bytes=private)
    bx, by, bz = launch.block
    threads = bx * by * bz
    waves_per_wg = -(-threads // WAVE)
    gx, gy, gz = launch.grid
    n_wg = gx * gy * gz
    counters = Counters()
    counters.blocks_launched = n_wg
    counters.threads_launched = n_wg * threads
    # twice STRATA_CHUNK_LANES lanes per batch: this engine's cost per instruction is mostly per batch (Python
    # dispatch, scalar work), so bigger batches pay it less often; the VGPR file of a batch stays <= 64 MiB
    nv = max(prog.kernel.vgpr_count, prog.kernel.descriptor.accum_offset + prog.kernel.agpr_count
             if prog.kernel.agpr_count else 0, 1) + 1
    lanes = max(batch_lanes, min(BATCH_FACTOR * batch_lanes, VGPR_BATCH_BYTES // (4 * nv)))
    per_batch = max(1, lanes // (waves_per_wg * WAVE))
    if launch.private_bytes:  # keep a batch's private segments within PRIVATE_BATCH_BYTES of host memory
        per_batch = max(1, min(per_batch, PRIVATE_BATCH_BYTES // (waves_per_wg * WAVE * launch.private_bytes)))
    start = time.perf_counter()
    executed = 0
    for first in range(0, n_wg, per_batch):
        wgs = np.arange(first, min(n_wg, first + per_batch))
        b = _init_batch(prog, launch, wgs, waves_per_wg, threads)
        executed = _run_batch(prog, launch, b, mem, counters, executed, budget, start, timeout_s, control,
                              isa_counts)
    if isa_counts is not None:
        isa_counts["waves"] = n_wg * waves_per_wg
        isa_counts["wavefront_size"] = WAVE
        isa_counts["lds_bank_conflicts"] = counters.shared_bank_conflicts
    return counters


def _init_batch(prog: AmdProgram, launch: AmdLaunch, wgs: np.ndarray, waves_per_wg: int, threads: int, *,
                files: tuple[np.ndarray, np.ndarray] | None = None) -> _Batch:
    """A batch's waves as the command processor starts them. `files`: the native executor's register files for
    the batch's waves, wave-major ((waves, 128) SGPRs, (waves, registers, lanes) VGPRs, seen here through a
    transposed view), left unset, and no private segment: the native code sets each wave's registers as it
    starts it (initial_sgprs and _wave_template give it the values)."""
    k = prog.kernel
    kd = k.descriptor
    gx, gy, _ = launch.grid
    n = wgs.size * waves_per_wg
    nv = max(k.vgpr_count, kd.accum_offset + k.agpr_count if k.agpr_count else 0, 1) + 1  # AGPRs follow
    wg_row = np.repeat(np.arange(wgs.size), waves_per_wg)
    wave_in = np.tile(np.arange(waves_per_wg), wgs.size)
    wg_lin = wgs[wg_row]
    wg_id = np.stack([wg_lin % gx, (wg_lin // gx) % gy, wg_lin // (gx * gy)], axis=1)
    lds = np.zeros((wgs.size, (max(launch.lds_bytes, 4) // 4 + 4) & ~3), _U32)  # rows of whole 16-byte records
    entry = np.full(n, prog.index[0], np.int64)  # the kernel's first instruction (device functions may precede it)
    if files is not None:
        return _Batch(files[0], files[1].transpose(1, 0, 2), np.zeros(n, bool), entry, np.zeros(n, bool),
                      np.zeros(n, bool), wg_row, wg_id, wave_in, lds, np.zeros((1, WAVE, 1), _U32),
                      all_waves=np.arange(n))
    # SGPR r of every wave is one contiguous column (Fortran order): scalar instructions read and write whole
    # registers across the batch's waves, which in row order are 512 bytes apart (a cache line each)
    s = np.zeros((n, 128), _U32, order="F")
    v = np.zeros((nv, n, WAVE), _U32)
    fixed, wg_slots = initial_sgprs(prog, launch)
    for at, value in fixed:
        s[:, at] = value
    for at, dim in wg_slots:
        s[:, at] = wg_id[:, dim]
    # work-item ids packed in v0; lanes past the workgroup's size start with EXEC off
    v0, lo, hi = _wave_template(launch.block, waves_per_wg, wgs.size)
    v[0] = v0
    s[:, EXEC], s[:, EXEC + 1] = lo, hi
    priv = np.zeros((n, WAVE, -(-launch.private_bytes // 4) + 1 if launch.private_bytes else 1), _U32)
    return _Batch(s, v, np.zeros(n, bool), entry, np.zeros(n, bool), np.zeros(n, bool), wg_row, wg_id, wave_in, lds,
                  priv, all_waves=np.arange(n))


def initial_sgprs(prog: AmdProgram, launch: AmdLaunch) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The SGPRs the command processor loads, as every wave of the dispatch gets them: (register, value) of the
    user SGPRs (kernarg and dispatch pointers) and (register, dimension) of the workgroup ids that follow."""
    kd = prog.kernel.descriptor
    fixed: list[tuple[int, int]] = []
    at = 0
    for what, count in kd.user_sgprs():
        if what in ("kernarg_segment_ptr", "dispatch_ptr"):
            ptr = launch.kernarg_address if what == "kernarg_segment_ptr" else launch.dispatch_address
            fixed += [(at, ptr & 0xFFFFFFFF), (at + 1, ptr >> 32)]
        at += count
    if at != kd.user_sgpr_count and kd.kernarg_preload == 0:
        at = kd.user_sgpr_count
    wg_slots: list[tuple[int, int]] = []
    for dim, on in enumerate(kd.workgroup_id_enabled):
        if on:
            wg_slots.append((at, dim))
            at += 1
    return fixed, wg_slots


@functools.lru_cache(maxsize=16)
def _wave_template(block: tuple[int, int, int], waves_per_wg: int, n_wg: int) -> tuple[np.ndarray, ...]:
    """v0 (packed work-item ids) and the initial EXEC words of a batch of `n_wg` workgroups (the same for
    every batch of a dispatch, so computed once)."""
    bx, by, bz = block
    wave_in = np.tile(np.arange(waves_per_wg), n_wg)
    flat = wave_in[:, None] * WAVE + np.arange(WAVE)[None, :]
    tx, ty, tz = flat % bx, (flat // bx) % by, flat // (bx * by)
    v0 = (tx | (ty << 10) | (tz << 20)).astype(_U32)
    lo, hi = _mask_words(flat < bx * by * bz)
    for a in (v0, lo, hi):
        a.flags.writeable = False
    return v0, lo, hi


_POLL = 256
_FAIRNESS = 64  # every this many steps the scheduler runs the waves furthest ahead instead of those behind


def _run_batch(prog: AmdProgram, launch: AmdLaunch, b: _Batch, mem: DeviceMemory, counters: Counters,
               executed: int, budget: int, start: float, timeout_s: float, control: Any,
               isa_counts: dict[str, int] | None = None) -> int:
    n_all = b.s.shape[0]
    insts, handlers = prog.insts, prog.handlers
    stops, exec_writes = prog.stops, prog.exec_writes
    mods = [1 if ins.f.get("dpp") else 2 if ins.f.get("sdwa") else 0 for ins in insts]
    pc_waves = [0] * len(insts)  # waves that executed each instruction (folded into isa_counts at the end)
    is_valu = [cat == "valu" for cat in prog.categories]
    valu_lanes = 0
    known_full: bool | None = None
    end_pc = len(insts)
    polls = 0
    steps = 0
    # every runnable wave at one pc (the common case: waves that branch alike): (pc, wave indices, index),
    # so the scheduler's selection is skipped; None runs the general selection below
    together: tuple[int, np.ndarray, Any] | None = None
    while True:
        if together is not None:
            pc, idx, ix = together
            every = True
        else:
            known_full = None
            runnable = ~b.done & ~b.barrier
            if not runnable.any():
                if (b.barrier & ~b.done).any():  # every live wave waits at a barrier: release them all
                    released = b.barrier & ~b.done
                    b.pc[released] += 1
                    b.barrier[:] = False
                    continue
                break
            pcs = np.where(runnable, b.pc, end_pc + 1)
            pc = int(pcs.min())
            steps += 1
            if steps % _FAIRNESS == 0:  # now and then the furthest-behind waves yield: a wave spinning on a flag
                ahead = np.where(runnable, b.pc, -1)  # that a wave further on sets must not starve it
                pc = int(ahead.max())
            sel = pcs == pc
            idx = np.flatnonzero(sel)
            ix = slice(None) if idx.size == n_all else idx
            every = idx.size == int(runnable.sum())
        if pc >= end_pc:
            raise DeviceFault("cudaErrorIllegalInstruction", f"[{prog.name}] execution ran past the end of the code "
                              "without s_endpgm")
        ins = insts[pc]
        c = _Ctx(b, ix, idx.size, mem, prog, launch, counters, None, None, None, ins, None,
                 known_full)  # EXEC's all-ones test carries over while the same waves run and nothing writes EXEC
        mod = mods[pc]
        if mod == 1:
            _setup_dpp(c, ins)
        elif mod == 2:
            c.sdwa = ins.f
        handlers[pc](c, ins)
        if isa_counts is not None:
            pc_waves[pc] += idx.size
            if is_valu[pc] and (c._exec is not None or c._full is not None):
                valu_lanes += c.active()
        known_full = None if exec_writes[pc] or c.dpp is not None else c._full
        if stops[pc]:  # s_endpgm, s_barrier: waves leave the runnable set
            if together is not None:  # b.pc is not kept while the waves run together
                b.pc[ix] = pc
            together = None
            if c.jump is not None:
                nxt = np.where(c.jump >= 0, c.jump, pc + 1)
                stay = b.done[idx] | b.barrier[idx]
                b.pc[idx] = np.where(stay, b.pc[idx], nxt)
            else:
                movable = ~(b.done[idx] | b.barrier[idx])
                b.pc[idx[movable]] = pc + 1
        elif c.jump is not None:
            nxt = np.where(c.jump >= 0, c.jump, pc + 1)
            first = int(nxt[0])
            if every and (nxt == first).all():
                together = (first, idx, ix)
            else:
                b.pc[ix] = nxt
                together = None
        elif every:
            together = (pc + 1, idx, ix)
        else:
            b.pc[ix] = pc + 1
        executed += 1
        polls += 1
        if polls >= _POLL:
            polls = 0
            if control is not None and getattr(control, "reason", None):
                raise LaunchCancelled(message=f"[{prog.name}] {control.reason}")
            if timeout_s and time.perf_counter() - start > timeout_s:
                raise LaunchTimeout(message=f"[{prog.name}] still running after {timeout_s:g} s "
                                    "(STRATA_KERNEL_TIMEOUT)")
            if budget and executed > budget:
                raise LaunchTimeout(message=f"[{prog.name}] exceeded the instruction budget of {budget:,}")
    if isa_counts is not None:
        for cat, waves in zip(prog.categories, pc_waves, strict=True):
            if waves:
                isa_counts[cat] = isa_counts.get(cat, 0) + waves
        isa_counts["valu_lanes"] = isa_counts.get("valu_lanes", 0) + valu_lanes
    return executed
