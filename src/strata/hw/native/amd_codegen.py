"""AMD (gfx9, wave64) machine code -> LLVM IR: one function that runs a range of wavefronts.

`amd_run(ctx)` runs every runnable wave in [ctx[LO], ctx[HI]) from its program counter until it ends, reaches
`s_barrier` or has used its fuel (backward branches), then stores the wave's state and goes on with the next
wave; it returns early when a wave needs the reference executor for one instruction. State lives in the same
arrays the Python side keeps (amd_executor.py): SGPRs as (W, 128) uint32 (EXEC, VCC, M0 at their usual numbers),
VGPRs as (W, NV, 64) uint32, SCC as a byte, the program counter as an instruction index. Inside the function the
wave's SGPRs are a local array (LLVM keeps them in machine registers) and each VGPR operation is one <64 x i32>
vector operation merged into the register under EXEC (a select and a plain store); a kernel without barriers
keeps the running wave's VGPRs in a local array too (local_vgprs), and a kernel with barriers releases a
workgroup's barrier itself (release_workgroup). 64-bit lane values (addresses, 64-bit shifts by constants) are
computed on their 32-bit word pairs, and the NaN rule of float results runs only when some lane is NaN.

What is compiled gives the reference's bits (hw/amdgpu/executor.py): float32 add/sub/mul as IEEE, fma as one
rounding, v_max/v_min_f32 as NumPy's fmax/fmin on arrays (NaN -> the other operand, equal values -> the
second), v_rcp/v_rsq/v_sqrt_f32 through float64 as the reference computes them, integer ops with the same
wrap rules. An instruction outside the subset makes the whole kernel fall back (`Unsupported`).

Memory: each global, scalar and LDS access is checked natively (every active lane inside one allocation of
the device, or inside the workgroup's LDS, aligned; a FLAT access is taken as global, so lanes in the LDS or
private aperture fail that check); when that check does not pass, the wave stops *before*
the instruction with state NEED_REFERENCE, and the Python side runs that one instruction on the reference
handler, which serves it (lanes spread over several allocations, misaligned LDS) or raises the reference's
own DeviceFault. Counters are kept per instruction (waves, active lanes, sectors, ideal sectors, LDS bank
conflicts) and turned into the reference's Counters and isa_counts by the Python side.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.amdgpu import executor as ref
from strata.hw.amdgpu.decoder import Inst, flat_width
from strata.hw.memory import GLOBAL_BASE
from strata.hw.native.amd_ir import (
    BARRIER,
    C_COUNTS,
    C_FUEL,
    C_HI,
    C_INIT_S,
    C_INIT_V0,
    C_LDS,
    C_LDS_BYTES,
    C_LDS_ROW,
    C_LO,
    C_MEM,
    C_MEMO,
    C_PC,
    C_S,
    C_SCC,
    C_STATE,
    C_STOPPED,
    C_V,
    C_WG,
    C_WGIDS,
    C_WPW,
    C_YIELDED,
    DONE,
    EXEC,
    F32,
    F64,
    FRESH,
    I1,
    I8,
    I8P,
    I32,
    I32P,
    I64,
    I64P,
    K_BANK,
    K_IDEAL,
    K_LANES,
    K_SECTORS,
    K_WAVES,
    M32,
    MEMO_STRIDE,
    NEED_REFERENCE,
    R_BAD_PC,
    R_DONE,
    R_REFERENCE,
    R_YIELD,
    RUN,
    V32,
    V64,
    VB,
    VCC,
    VD,
    VF,
    VP,
    WAVE,
    alloc_end_fn,
    banks_fn,
    c32,
    c64,
    sectors_fn,
)
from strata.hw.native.amd_plan import SMEM_DWORDS

_NO_POINTERS: Any = types.SimpleNamespace(kernarg_address=0, dispatch_address=0)  # (initial_sgprs' slots only)
RELEASE_FUEL = 1 << 14  # workgroup barrier releases in one call of amd_run before it returns (R_YIELD)
LOCAL_V_BYTES = 32 << 10  # a wave's VGPRs on the stack (local_v) up to this size (128 VGPRs)


def local_vgprs(insts: list[Inst], nv: int) -> bool:
    """Whether a kernel's waves keep their VGPRs in a stack buffer while they run (no s_barrier, at most
    LOCAL_V_BYTES of them), copied to the batch's register file only when a wave stops before its end."""
    return nv * WAVE * 4 <= LOCAL_V_BYTES and not any(ins.name == "s_barrier" for ins in insts)


class Unsupported(Exception):
    """An instruction (or form of one) the native code does not compile: the kernel runs on the reference."""


# -------------------------------------------------------------------------------------------- classification
_F2 = {"v_add_f32", "v_sub_f32", "v_subrev_f32", "v_mul_f32", "v_max_f32", "v_min_f32"}
_I2 = {"v_add_u32", "v_sub_u32", "v_subrev_u32", "v_and_b32", "v_or_b32", "v_xor_b32", "v_lshlrev_b32",
       "v_lshrrev_b32", "v_ashrrev_i32", "v_max_i32", "v_min_i32", "v_max_u32", "v_min_u32", "v_mul_lo_u32",
       "v_mul_u32_u24", "v_mul_hi_u32", "v_mul_hi_i32", "v_mul_i32_i24", "v_bcnt_u32_b32", "v_bfm_b32"}
_CARRY = {"v_add_co_u32", "v_sub_co_u32", "v_subrev_co_u32", "v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"}
_INT3 = {"v_add3_u32", "v_lshl_add_u32", "v_add_lshl_u32", "v_lshl_or_b32", "v_and_or_b32", "v_or3_b32",
         "v_xad_u32", "v_bfe_u32", "v_bfe_i32", "v_bfi_b32", "v_mad_u32_u24", "v_alignbit_b32", "v_max3_i32",
         "v_min3_i32", "v_max3_u32", "v_min3_u32", "v_mad_i32_i24", "v_perm_b32"}
_SHIFT64 = {"v_lshlrev_b64", "v_lshrrev_b64", "v_ashrrev_i64", "v_lshl_add_u64"}
_F1_SFU = {"v_rcp_f32", "v_rcp_iflag_f32", "v_rsq_f32", "v_sqrt_f32"}
_F1_ROUND = {"v_rndne_f32": "llvm.roundeven", "v_trunc_f32": "llvm.trunc", "v_floor_f32": "llvm.floor",
             "v_ceil_f32": "llvm.ceil"}
_CVT1 = {"v_mov_b32", "v_not_b32", "v_cvt_f32_i32", "v_cvt_f32_u32", "v_cvt_i32_f32", "v_cvt_u32_f32",
         "v_bfrev_b32", "v_ffbl_b32", "v_ffbh_u32", "v_cvt_flr_i32_f32"}
_CMP_F = {"f": "false", "lt": "olt", "eq": "oeq", "le": "ole", "gt": "ogt", "lg": "one", "ge": "oge", "o": "ord",
          "u": "uno", "nge": "ult", "nlg": "ueq", "ngt": "ule", "nle": "ugt", "neq": "une", "nlt": "uge",
          "tru": "true"}
_CMP_I = {"lt": "<", "eq": "==", "le": "<=", "gt": ">", "ne": "!=", "ge": ">=", "f": "f", "t": "t"}
_GLOBAL_MEM = {"global_load_dword", "global_load_dwordx2", "global_load_dwordx3", "global_load_dwordx4",
               "global_store_dword", "global_store_dwordx2", "global_store_dwordx3", "global_store_dwordx4",
               "global_load_ubyte", "global_load_sbyte", "global_load_ushort", "global_load_sshort",
               "global_store_byte", "global_store_short"}
_SUBDWORD = {"ubyte": (1, False), "sbyte": (1, True), "ushort": (2, False), "sshort": (2, True), "byte": (1, False),
             "short": (2, False)}  # global access tail -> (bytes, sign-extended)
_DS_READ = {"ds_read_b32", "ds_read_b64", "ds_read_b96", "ds_read_b128", "ds_read2_b32", "ds_read2_b64",
            "ds_read2st64_b32", "ds_read2st64_b64"}
_DS_WRITE = {n.replace("read", "write") for n in _DS_READ}
_SOPP_NOP = {"s_nop", "s_setprio", "s_sleep", "s_code_end", "s_icache_inv", "s_dcache_wb", "s_ttracedata",
             "s_waitcnt"}
_SOP2_LOGIC = {"and", "or", "xor", "andn2", "orn2", "nand", "nor", "xnor"}
_SAVEEXEC = {"and", "or", "xor", "andn2", "orn2", "nand", "nor", "xnor", "andn1", "orn1"}


def count_class(ins: Inst) -> tuple[str | None, bool, str | None]:
    """(the reference's _count class or None, whether its active lanes go to isa valu_lanes, the flops key the
    reference adds the active lanes to besides _count's) of a compiled instruction."""
    name = ins.name
    if ins.fmt in ("GLOBAL", "FLAT", "DS"):
        return "memory", False, None
    if name in _F1_SFU:
        return "sfu", True, None
    if name == "v_readfirstlane_b32":
        return None, True, None
    if name in ("v_readlane_b32", "v_writelane_b32"):  # (the reference counts neither their class nor lanes)
        return None, False, None
    if name == "v_mov_b64":
        return "fp64", True, "fp64"
    if name in ("v_fmac_f32", "v_fma_f32", "v_pk_mul_f32", "v_pk_add_f32", "v_pk_fma_f32"):
        return "fp32", True, "fp32"
    if ins.fmt == "VOPC" or name.startswith(("v_cmp_", "v_cmpx_")):
        return ("fp32" if name.split("_")[3].startswith("f") else "integer"), True, None
    if name in _F2 or name in _F1_ROUND or name in ("v_fmamk_f32", "v_fmaak_f32", "v_ldexp_f32", "v_fract_f32"):
        return "fp32", True, None
    if name.startswith("v_"):
        return "integer", True, None
    return None, False, None


# -------------------------------------------------------------------------------------------- the generator
class AmdCodegen:
    """Builds the IR of one kernel; `Unsupported` names the first instruction it cannot compile."""

    def __init__(self, prog: Any, nv: int) -> None:
        self.prog = prog
        self.insts: list[Inst] = prog.insts
        self.nv = nv
        self.module = ir.Module(name=f"amd_{prog.name}")
        self.fn = ir.Function(self.module, ir.FunctionType(I32, [I64P]), name="amd_run")
        self.ctx_arg = self.fn.args[0]
        self._intr: dict[str, ir.Function] = {}
        self.b: ir.IRBuilder = ir.IRBuilder(self.fn.append_basic_block("entry"))

    # ---------------------------------------------------------------- small helpers
    def intr(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        key = name
        if key not in self._intr:
            self._intr[key] = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return self._intr[key]

    def ctx(self, slot: int) -> ir.Value:
        return self.b.load(self.b.gep(self.ctx_arg, [c64(slot)]))

    def ptr(self, slot: int, ty: ir.Type) -> ir.Value:
        return self.b.inttoptr(self.ctx(slot), ty)

    def splat(self, v: ir.Value, vty: ir.VectorType) -> ir.Value:
        b = self.b
        one = b.insert_element(ir.Constant(ir.VectorType(vty.element, 1), ir.Undefined), v, c32(0))
        return b.shuffle_vector(one, ir.Constant(ir.VectorType(vty.element, 1), ir.Undefined),
                                ir.Constant(ir.VectorType(I32, vty.count), None))  # (zeroinitializer: lane 0)

    # ---------------------------------------------------------------- scalar state
    def sgpr_ptr(self, r: int) -> ir.Value:
        return self.b.gep(self.sregs, [c32(0), c32(r)])

    def sget(self, r: int) -> ir.Value:
        return self.b.load(self.sgpr_ptr(r))

    def sset(self, r: int, v: ir.Value) -> None:
        if r < 128:
            self.b.store(v, self.sgpr_ptr(r))

    def sget64(self, r: int) -> ir.Value:
        b = self.b
        return b.or_(b.zext(self.sget(r), I64), b.shl(b.zext(self.sget(r + 1), I64), c64(32)))

    def sset64(self, r: int, v: ir.Value) -> None:
        b = self.b
        self.sset(r, b.trunc(v, I32))
        self.sset(r + 1, b.trunc(b.lshr(v, c64(32)), I32))

    def scc(self) -> ir.Value:
        return self.b.load(self.scc_slot)

    def set_scc(self, v: ir.Value) -> None:
        self.b.store(v, self.scc_slot)

    def sread(self, code: int, width: int, ins: Inst) -> ir.Value:
        """A scalar operand as i32 (width 1) or i64 (width 2), as the reference's sread gives it."""
        b = self.b
        if code < 128:
            return self.sget(code) if width == 1 else self.sget64(code)
        k = ref._const(code, width, ins.literal, False)
        if k is not None:
            return c32(k) if width == 1 else c64(k)
        if code in ref._APERTURES:
            hi = ref._APERTURES[code]
            return c32(hi) if width == 1 else c64(hi << 32)
        if code == 253:
            v = b.zext(self.scc(), I32)
        elif code in (252, 251):
            reg = EXEC if code == 252 else VCC
            v = b.zext(b.icmp_unsigned("==", self.sget64(reg), c64(0)), I32)
        else:
            raise Unsupported(f"scalar operand code {code}")
        return v if width == 1 else b.zext(v, I64)

    # ---------------------------------------------------------------- vector state
    def exec64(self) -> ir.Value:
        return self.sget64(EXEC)

    def lane_mask(self, m64: ir.Value) -> ir.Value:
        return self.b.bitcast(m64, VB)

    def vptr(self, r: int) -> ir.Value:
        if r >= self.nv:
            raise Unsupported(f"VGPR v{r} past the kernel's {self.nv}")
        return self.b.bitcast(self.b.gep(self.vbase, [c64(r * WAVE)]), V32.as_pointer())

    def vget(self, r: int) -> ir.Value:
        return self.b.load(self.vptr(r), align=4)

    def vset(self, r: int, v: ir.Value, mask: ir.Value | None = None) -> None:
        """Write VGPR r on the lanes of `mask` (EXEC when None)."""
        m = self.lane_mask(self.exec64()) if mask is None else mask
        # a select and a whole-register store, not a masked store: x86 cannot forward a masked store to the next
        # instruction's load of the register (a stall of tens of cycles per 16 lanes), and LLVM can forward a
        # plain store's value in machine registers (the wave's registers are its own: nothing else writes them)
        at = self.vptr(r)
        self.b.store(self.b.select(m, v, self.b.load(at, align=4)), at, align=4)

    def vset64(self, r: int, v: ir.Value, mask: ir.Value | None = None) -> None:
        b = self.b
        self.vset(r, b.trunc(v, V32), mask)
        self.vset(r + 1, b.trunc(b.lshr(v, self.splat(c64(32), V64)), V32), mask)

    def vread(self, code: int, width: int, ins: Inst) -> ir.Value:
        """A vector source: <64 x i32> (width 1) or <64 x i64> (width 2); scalars are broadcast."""
        b = self.b
        if code >= 256:
            lo = self.vget(code - 256)
            if width == 1:
                return lo
            hi = self.vget(code - 255)
            return b.or_(b.zext(lo, V64), b.shl(b.zext(hi, V64), self.splat(c64(32), V64)))
        return self.splat(self.sread(code, width, ins), V32 if width == 1 else V64)

    def src_code(self, ins: Inst, i: int) -> int:
        f = ins.f
        code = f["src0"] if i == 0 else (f["vsrc1"] + 256 if ins.fmt in ("VOP2", "VOPC") else f[f"src{i}"])
        if i == 1 and f.get("vsrc1_sgpr"):
            code = f["vsrc1"]
        return int(code)

    def usrc(self, ins: Inst, i: int, width: int = 1) -> ir.Value:
        return self.vread(self.src_code(ins, i), width, ins)

    def fsrc(self, ins: Inst, i: int) -> ir.Value:
        x = self.b.bitcast(self.usrc(ins, i), VF)
        if ins.fmt == "VOP3":
            if ins.f.get("abs", 0) >> i & 1 and ins.name not in ref._NO_ABS:
                x = self.b.call(self.intr("llvm.fabs.v64f32", VF, [VF]), [x])
            if ins.f.get("neg", 0) >> i & 1:
                x = self.b.fneg(x)
        return x

    def nan_rule(self, r: ir.Value, xs: list[ir.Value],
                 invalid_first: Callable[[], ir.Value] | None = None) -> ir.Value:
        """The NaN the reference's NumPy (SSE) arithmetic gives where `r` is NaN: the first NaN operand in
        order, quieted, else the default NaN (0xFFC00000). LLVM may commute an add or multiply, which on x86
        picks the other operand's NaN when both are NaN; this fixes the order. For fma the product's invalid
        case (0 x inf, `invalid_first()`) comes before the addend's NaN, as in the reference's float64 steps.
        The rule runs in a block of its own, entered only when some lane's result is NaN (rare: the common
        case costs one compare and a branch)."""
        b = self.b
        is_nan = b.fcmp_unordered("uno", r, r)
        start = b.block
        slow, join = self.fn.append_basic_block("nan_rule"), self.fn.append_basic_block("nan_join")
        b.cbranch(b.call(self.intr("llvm.vector.reduce.or.v64i1", I1, [VB]), [is_nan]), slow, join)
        b.position_at_end(slow)
        quiet = lambda x: b.or_(self.fres(x), self.splat(c32(0x400000), V32))  # noqa: E731
        nan = lambda x: b.fcmp_unordered("uno", x, x)  # noqa: E731
        out = self.splat(c32(0xFFC00000), V32)
        for k in range(len(xs) - 1, -1, -1):  # built from the last operand back: the first NaN wins
            if k == 2 and invalid_first is not None:
                out = b.select(invalid_first(), self.splat(c32(0xFFC00000), V32), b.select(nan(xs[k]), quiet(xs[k]),
                                                                                            out))
            else:
                out = b.select(nan(xs[k]), quiet(xs[k]), out)
        fixed = b.bitcast(b.select(is_nan, out, self.fres(r)), VF)
        slow_end = b.block
        b.branch(join)
        b.position_at_end(join)
        phi = b.phi(VF)
        phi.add_incoming(r, start)
        phi.add_incoming(fixed, slow_end)
        return phi

    def fma(self, fn: ir.Function, xs: list[ir.Value]) -> ir.Value:
        """fma(a, b, c) rounded once (llvm.fma), with the reference's NaN: its float64 product then sum pick a's,
        b's, the invalid product's default NaN, then c's."""
        b = self.b
        a_, b_ = xs[0], xs[1]

        def invalid() -> ir.Value:
            zero = ir.Constant(VF, [ir.Constant(F32, 0.0)] * WAVE)
            inf = ir.Constant(VF, [ir.Constant(F32, math.inf)] * WAVE)
            fabs = self.intr("llvm.fabs.v64f32", VF, [VF])
            is_inf = lambda x: b.fcmp_ordered("==", b.call(fabs, [x]), inf)  # noqa: E731
            is_zero = lambda x: b.fcmp_ordered("==", x, zero)  # noqa: E731
            return b.or_(b.and_(is_zero(a_), is_inf(b_)), b.and_(is_inf(a_), is_zero(b_)))
        return self.nan_rule(b.call(fn, xs), xs, invalid)

    def fres(self, x: ir.Value) -> ir.Value:
        return self.b.bitcast(x, V32)

    def popcount64(self, v: ir.Value) -> ir.Value:
        return self.b.call(self.intr("llvm.ctpop.i64", I64, [I64]), [v])

    def count(self, idx: int, row: int, v: ir.Value) -> None:
        b = self.b
        p = b.gep(self.counts, [c64(row * self.npc + idx)])
        b.store(b.add(b.load(p), v), p)

    # ---------------------------------------------------------------- the function
    def build(self) -> str:
        prog, insts = self.prog, self.insts
        self.npc = len(insts)
        # per instruction: the block whose wave count it shares (a block is entered only at its start, and the
        # only exit before its end, to the reference, is at its last instruction: a memory access, then a leader)
        self.groups = list(range(self.npc))
        for ins in insts:  # everything is checked before any IR is built
            self.check(ins)
        leaders = {prog.index[0]}
        for i, ins in enumerate(insts):
            if ins.fmt == "SOPP" and ins.name.startswith(("s_branch", "s_cbranch")):
                leaders.add(self.target(ins))
                leaders.add(i + 1)
            if ins.name in ("s_barrier", "s_endpgm") or ins.fmt in ("GLOBAL", "FLAT", "DS", "SMEM"):
                leaders.add(i + 1)  # resumed after a barrier, or after the reference ran the instruction
        leaders = {i for i in leaders if i < len(insts)}
        b = self.b
        entry = self.entry_block = b.block
        self.sregs = b.alloca(ir.ArrayType(I32, 128), name="s")
        self.barriers = any(ins.name == "s_barrier" for ins in insts)
        self.releases = b.alloca(I64, name="releases")  # workgroup barriers this call may still release
        b.store(c64(RELEASE_FUEL), self.releases)
        # A kernel without s_barrier runs each wave to its end in one go, bar a yield or a reference replay: its
        # VGPRs then live in a stack buffer (in L1, never aliasing memory) and go to the batch's register file
        # only when the wave stops before its end; the batch's file (tens of MB) is otherwise never touched.
        self.local_v = local_vgprs(insts, self.nv)
        if self.local_v:
            self.vlocal = b.alloca(ir.ArrayType(I32, self.nv * WAVE), name="v")
            self.vlocal.align = 64
        self.scc_slot = b.alloca(I1, name="scc")
        self.addrs = b.alloca(ir.ArrayType(I64, WAVE), name="addrs")
        self.words = b.alloca(ir.ArrayType(I32, WAVE * 8), name="words")
        self.wave_slot = b.alloca(I64, name="w")
        self.fuel = b.alloca(I64, name="fuel")
        b.store(self.ctx(C_LO), self.wave_slot)
        self.counts = self.ptr(C_COUNTS, I64P)
        self.mem = self.ptr(C_MEM, I8P)
        loop = self.fn.append_basic_block("wave_loop")
        body = self.fn.append_basic_block("wave_body")
        nxt = self.fn.append_basic_block("wave_next")
        done = self.fn.append_basic_block("all_done")
        self.bad_pc = self.fn.append_basic_block("bad_pc")
        b.branch(loop)
        b.position_at_end(loop)
        w = b.load(self.wave_slot)
        b.cbranch(b.icmp_signed("<", w, self.ctx(C_HI)), body, done)
        b.position_at_end(body)
        state_p = b.gep(self.ptr(C_STATE, I8P), [w])
        self.state_p = state_p
        self.pc_p = b.gep(self.ptr(C_PC, I32P), [w])
        self.scc_p = b.gep(self.ptr(C_SCC, I8P), [w])
        s_src = b.gep(self.ptr(C_S, I32P), [b.mul(w, c64(128))])
        self.s_src = s_src
        self.vslot = b.gep(self.ptr(C_V, I32P), [b.mul(w, c64(self.nv * WAVE))])  # the wave's batch registers
        self.vbase = b.bitcast(self.vlocal, I32P) if self.local_v else self.vslot
        runnable, go = self.fn.append_basic_block("runnable"), self.fn.append_basic_block("go")
        fresh, started = self.fn.append_basic_block("fresh"), self.fn.append_basic_block("started")
        state = b.load(state_p)
        b.cbranch(b.icmp_unsigned("==", state, ir.Constant(I8, FRESH)), fresh, started)
        b.position_at_end(fresh)
        self.start_wave(w)
        b.branch(go)
        b.position_at_end(started)
        b.cbranch(b.icmp_unsigned("==", state, ir.Constant(I8, RUN)), runnable, nxt)
        b.position_at_end(runnable)
        memcpy = self.intr("llvm.memcpy.p0i8.p0i8.i64", ir.VoidType(), [I8P, I8P, I64, I1])
        b.call(memcpy, [b.bitcast(self.sregs, I8P), b.bitcast(s_src, I8P), c64(512), ir.Constant(I1, 0)])
        b.store(b.trunc(b.load(self.scc_p), I1), self.scc_slot)
        if self.local_v:  # (a wave resumed after a yield or a replay)
            b.call(memcpy, [b.bitcast(self.vbase, I8P), b.bitcast(self.vslot, I8P), c64(4 * self.nv * WAVE),
                            ir.Constant(I1, 0)])
        b.branch(go)
        b.position_at_end(go)
        b.store(self.ctx(C_FUEL), self.fuel)  # each wave's own: one that spins on a flag lets the others run
        wg = b.load(b.gep(self.ptr(C_WG, I32P), [w]))
        self.lds = b.gep(self.ptr(C_LDS, I32P), [b.mul(b.zext(wg, I64), self.ctx(C_LDS_ROW))])
        self.lds_bytes = self.ctx(C_LDS_BYTES)
        blocks = {i: self.fn.append_basic_block(f"pc{i}") for i in sorted(leaders)}
        self.blocks = blocks
        sw = b.switch(b.load(self.pc_p), self.bad_pc)
        for i, blk in blocks.items():
            sw.add_case(c32(i), blk)
        self.next_wave = nxt
        leader = 0
        for i, ins in enumerate(insts):
            if i in blocks:
                if b.block is not None and not b.block.is_terminated and b.block is not entry:
                    b.branch(blocks[i])
                b.position_at_end(blocks[i])
            elif b.block.is_terminated:
                continue  # unreachable straight-line code after a jump (padding s_nop)
            if i in blocks:  # one count per block: its instructions run as many times (count_groups)
                self.count(i, K_WAVES, c64(1))
                leader = i
            self.groups[i] = leader
            self.emit(i, ins)
        if not b.block.is_terminated:
            b.branch(self.bad_pc)  # ran past the end: the Python side reports it as the reference does
        b.position_at_end(self.bad_pc)
        b.store(b.load(self.wave_slot), b.gep(self.ctx_arg, [c64(C_STOPPED)]))
        b.ret(ir.Constant(I32, R_BAD_PC))
        b.position_at_end(nxt)
        if self.barriers:
            self.release_workgroup(loop)
        b.store(b.add(b.load(self.wave_slot), c64(1)), self.wave_slot)
        b.branch(loop)
        b.position_at_end(done)
        yielded = b.icmp_unsigned("!=", self.ctx(C_YIELDED), c64(0))
        b.ret(b.select(yielded, ir.Constant(I32, R_YIELD), ir.Constant(I32, R_DONE)))
        return str(self.module)

    def release_workgroup(self, loop: ir.Block) -> None:
        """After the last wave of a workgroup had its turn: when none of the workgroup's waves can run (each waits
        at s_barrier or has ended, which counts as arrived: the reference's rule, for the workgroup the barrier
        belongs to) and some wait, release them and run the workgroup again from its first wave. A workgroup runs
        barrier phase after barrier phase while its registers and LDS are in cache, instead of every wave of the
        batch (tens of MB of registers) running one phase before the next phase starts. A wave that yielded
        (RUN) keeps the workgroup waiting: the other workgroups run, then the call returns R_YIELD. After
        RELEASE_FUEL releases the call returns R_YIELD at once (every wave is saved), so a kernel that loops over
        barriers forever still comes back to Python, which polls the watchdog and the cancel flag."""
        b = self.b
        w = b.load(self.wave_slot)
        row = b.zext(b.load(b.gep(self.ptr(C_WG, I32P), [w])), I64)
        wpw = self.ctx(C_WPW)
        first = b.mul(row, wpw)
        end = b.add(first, wpw)
        states = self.ptr(C_STATE, I8P)
        check, head, body, decide, release, rel_head, rel_body, again, on = (self.fn.append_basic_block(f"wg_{x}")
            for x in ("check", "head", "body", "decide", "release", "rel_head", "rel_body", "again", "on"))
        b.cbranch(b.icmp_unsigned("==", b.add(w, c64(1)), end), check, on)
        b.position_at_end(check)
        b.branch(head)
        b.position_at_end(head)  # any wave that may still run, any wave at a barrier
        k, runs, waits = b.phi(I64), b.phi(I1), b.phi(I1)
        k.add_incoming(first, check)
        runs.add_incoming(ir.Constant(I1, 0), check)
        waits.add_incoming(ir.Constant(I1, 0), check)
        b.cbranch(b.icmp_unsigned("<", k, end), body, decide)
        b.position_at_end(body)
        st = b.load(b.gep(states, [k]))
        at_barrier = b.icmp_unsigned("==", st, ir.Constant(I8, BARRIER))
        k.add_incoming(b.add(k, c64(1)), body)
        runs.add_incoming(b.or_(runs, b.and_(b.icmp_unsigned("!=", st, ir.Constant(I8, DONE)),
                                             b.not_(at_barrier))), body)
        waits.add_incoming(b.or_(waits, at_barrier), body)
        b.branch(head)
        b.position_at_end(decide)
        due, out = self.fn.append_basic_block("wg_due"), self.fn.append_basic_block("wg_out")
        b.cbranch(b.and_(waits, b.not_(runs)), due, on)
        b.position_at_end(due)  # (a kernel looping over barriers forever still returns for the watchdog)
        left = b.sub(b.load(self.releases), c64(1))
        b.store(left, self.releases)
        b.cbranch(b.icmp_signed(">=", left, c64(0)), release, out)
        b.position_at_end(out)  # every wave is saved: the next call releases the workgroup
        b.ret(ir.Constant(I32, R_YIELD))
        b.position_at_end(release)
        b.branch(rel_head)
        b.position_at_end(rel_head)
        j = b.phi(I64)
        j.add_incoming(first, release)
        b.cbranch(b.icmp_unsigned("<", j, end), rel_body, again)
        b.position_at_end(rel_body)
        sp = b.gep(states, [j])
        st = b.load(sp)
        b.store(b.select(b.icmp_unsigned("==", st, ir.Constant(I8, BARRIER)), ir.Constant(I8, RUN), st), sp)
        j.add_incoming(b.add(j, c64(1)), rel_body)
        b.branch(rel_head)
        b.position_at_end(again)
        b.store(first, self.wave_slot)
        b.branch(loop)
        b.position_at_end(on)

    def count_groups(self) -> list[int]:
        """Per instruction, the block (leader) whose K_WAVES count it shares; its own K_WAVES entry, when it is
        not a leader, holds only the waves that stopped before it for the reference (minus one each)."""
        return list(self.groups)

    def start_wave(self, w: ir.Value) -> None:
        """Set a FRESH wave's registers as the command processor starts it (the reference's _init_batch, bit for
        bit): every register 0, then its workgroup's SGPR row and v0 for its place in the workgroup, then the
        workgroup ids; done here, as the wave starts, so the host never writes (nor faults in) the register files
        and each wave's registers are in cache when it runs. The SGPRs go straight to the running copy (the
        batch's row is written when the wave stops: save)."""
        b = self.b
        memcpy = self.intr("llvm.memcpy.p0i8.p0i8.i64", ir.VoidType(), [I8P, I8P, I64, I1])
        memset = self.intr("llvm.memset.p0i8.i64", ir.VoidType(), [I8P, I8, I64, I1])
        row = b.zext(b.load(b.gep(self.ptr(C_WG, I32P), [w])), I64)  # (no divisions: they cost as much as the rest)
        wave_in = b.sub(w, b.mul(row, self.ctx(C_WPW)))  # (a batch holds whole workgroups, waves in order)
        s_dst = b.gep(self.sregs, [c32(0), c32(0)])
        s_src = b.gep(self.ptr(C_INIT_S, I32P), [b.mul(wave_in, c64(128))])
        # the row is 0 but for the user SGPRs (kernarg and dispatch pointers) and EXEC, whose places, like those
        # of the workgroup ids, follow from the kernel descriptor alone: zeros, then those few words at constant
        # indices, so that LLVM keeps the wave's SGPRs in machine registers and folds the zeros (amd_executor
        # still passes the places in ctx: C_WGID_AT)
        b.call(memset, [b.bitcast(s_dst, I8P), ir.Constant(I8, 0), c64(512), ir.Constant(I1, 0)])
        fixed, wg_slots = ref.initial_sgprs(self.prog, _NO_POINTERS)
        for at in sorted({at for at, _ in fixed} | {EXEC, EXEC + 1}):
            if at < 128:
                b.store(b.load(b.gep(s_src, [c64(at)])), self.sgpr_ptr(at))
        ids = b.gep(self.ptr(C_WGIDS, I32P), [b.mul(row, c64(3))])
        for at, d in wg_slots:
            if at < 128:
                b.store(b.load(b.gep(ids, [c64(d)])), self.sgpr_ptr(at))
        vbase = b.bitcast(self.vbase, I8P)
        b.call(memset, [vbase, ir.Constant(I8, 0), c64(4 * self.nv * WAVE), ir.Constant(I1, 0)])
        v0 = b.gep(self.ptr(C_INIT_V0, I32P), [b.mul(wave_in, c64(WAVE))])
        b.call(memcpy, [vbase, b.bitcast(v0, I8P), c64(4 * WAVE), ir.Constant(I1, 0)])
        b.store(ir.Constant(I1, 0), self.scc_slot)
        b.store(ir.Constant(I8, RUN), self.state_p)

    def target(self, ins: Inst) -> int:
        simm = ins.f["simm16"]
        t = ins.offset + 4 + 4 * (simm - 0x10000 if simm & 0x8000 else simm)
        idx = self.prog.index.get(t)
        if idx is None:
            raise Unsupported(f"branch to {t:#x}, not an instruction")
        return int(idx)

    def save(self, pc: int | ir.Value, state: int) -> None:
        """Store the wave's registers, program counter and state."""
        b = self.b
        if state != DONE:  # (an ended wave's scalar state is never read again)
            memcpy = self.intr("llvm.memcpy.p0i8.p0i8.i64", ir.VoidType(), [I8P, I8P, I64, I1])
            b.call(memcpy, [b.bitcast(self.s_src, I8P), b.bitcast(self.sregs, I8P), c64(512), ir.Constant(I1, 0)])
            b.store(b.zext(self.scc(), I8), self.scc_p)
            if self.local_v:
                b.call(memcpy, [b.bitcast(self.vslot, I8P), b.bitcast(self.vbase, I8P), c64(4 * self.nv * WAVE),
                                ir.Constant(I1, 0)])
        b.store(pc if isinstance(pc, ir.Value) else c32(pc), self.pc_p)
        b.store(ir.Constant(I8, state), self.state_p)

    def stop(self, pc: int, state: int) -> None:
        """End the wave's run here (barrier, end) and go on with the next wave."""
        self.save(pc, state)
        self.b.branch(self.next_wave)

    def need_reference(self, i: int, ok: ir.Value) -> None:
        """Unless `ok`, stop before instruction i and return to Python, which runs it on the reference."""
        b = self.b
        bad = self.fn.append_basic_block(f"ref{i}")
        good = self.fn.append_basic_block(f"ok{i}")
        b.cbranch(ok, good, bad)
        b.position_at_end(bad)
        self.save(i, NEED_REFERENCE)
        b.store(b.load(self.wave_slot), b.gep(self.ctx_arg, [c64(C_STOPPED)]))
        # the wave was counted as it reached i (with its block); the reference counts it again when it runs it
        self.count(i, K_WAVES, c64(-1))
        b.ret(ir.Constant(I32, R_REFERENCE))
        b.position_at_end(good)

    def jump(self, i: int, target: int, cond: ir.Value | None) -> None:
        """A branch: backward ones burn the wave's fuel; when it runs out the wave is saved at the target, the
        other waves run, and the call returns R_YIELD (Python polls the watchdog and calls again)."""
        b = self.b
        fall = self.blocks.get(i + 1)
        dest = self.blocks[target]
        if target <= i:
            burn = self.fn.append_basic_block(f"burn{i}")
            if cond is not None:
                assert fall is not None
                b.cbranch(cond, burn, fall)
            else:
                b.branch(burn)
            b.position_at_end(burn)
            left = b.sub(b.load(self.fuel), c64(1))
            b.store(left, self.fuel)
            out = self.fn.append_basic_block(f"yield{i}")
            b.cbranch(b.icmp_signed(">", left, c64(0)), dest, out)
            b.position_at_end(out)  # out of fuel: saved where it goes on; the next wave runs
            self.save(target, RUN)
            b.store(c64(1), b.gep(self.ctx_arg, [c64(C_YIELDED)]))
            b.branch(self.next_wave)
        elif cond is not None:
            assert fall is not None
            b.cbranch(cond, dest, fall)
        else:
            b.branch(dest)

    # ---------------------------------------------------------------- what compiles
    def check(self, ins: Inst) -> None:
        """Raise Unsupported unless `emit` compiles this instruction exactly as the reference runs it."""
        f, name, fmt = ins.f, ins.name, ins.fmt
        if f.get("dpp") or f.get("sdwa") or f.get("clamp") or f.get("omod") or f.get("opsel") or \
                f.get("acc") or (fmt == "VOP3" and name not in ref._NO_ABS and f.get("abs") and
                                 not _is_float(name)) or (fmt == "VOP3" and f.get("neg") and not _is_float(name)):
            raise Unsupported(f"{ins.text} (modifiers)")
        ok = False
        if fmt == "SOPP":
            ok = name in _SOPP_NOP or name in ("s_endpgm", "s_barrier", "s_branch") or name in (
                "s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_execz", "s_cbranch_execnz", "s_cbranch_vccz",
                "s_cbranch_vccnz")
        elif fmt == "SOP2":
            ok = _sop2_ok(name)
        elif fmt == "SOPC":
            parts = name.split("_")
            ok = len(parts) == 4 and parts[1] == "cmp" and parts[2] in ref._SOPC_OPS and parts[3] in (
                "i32", "u32", "u64") and (parts[3] != "u64" or parts[2] in ("eq", "lg"))
        elif fmt == "SOP1":
            ok = name in ("s_mov_b32", "s_mov_b64", "s_not_b32", "s_not_b64", "s_cmov_b32", "s_cmov_b64",
                          "s_bcnt1_i32_b32", "s_bcnt1_i32_b64", "s_ff1_i32_b32", "s_ff1_i32_b64", "s_brev_b32",
                          "s_abs_i32", "s_sext_i32_i8", "s_sext_i32_i16") or (
                name.endswith("_saveexec_b64") and name[2:].split("_saveexec")[0] in _SAVEEXEC)
        elif fmt == "SOPK":
            ok = name in ("s_movk_i32", "s_addk_i32", "s_mulk_i32") or (
                name.startswith("s_cmpk_") and name.split("_")[2] in ref._SOPC_OPS)
        elif fmt == "SMEM":
            ok = name in SMEM_DWORDS
        elif fmt in ("GLOBAL", "FLAT"):  # a FLAT access whose lanes are all global is the same as a GLOBAL one
            ok = name.replace("flat_", "global_", 1) in _GLOBAL_MEM
        elif fmt == "DS":
            ok = (name in _DS_READ or name in _DS_WRITE or name == "ds_bpermute_b32") and not f.get("gds")
        elif fmt in ("VOP1", "VOP3") and (name in _F1_SFU or name in _F1_ROUND or name in _CVT1 or
                                          name in ("v_fract_f32", "v_readfirstlane_b32")):
            ok = fmt == "VOP1" or name in _F1_SFU or name in _F1_ROUND or name in _CVT1 or name == "v_fract_f32"
        elif name == "v_mov_b64":
            ok = fmt in ("VOP1", "VOP3")
        elif fmt == "VOPC" or (fmt == "VOP3" and name.startswith(("v_cmp_", "v_cmpx_"))):
            parts = name.split("_")
            ok = len(parts) == 4 and parts[1] == "cmp" and (parts[3] == "f32" and parts[2] in _CMP_F or
                                      parts[3] in ("i32", "u32", "i64", "u64") and parts[2] in _CMP_I)
        elif fmt == "VOP3" and name in ("v_readlane_b32", "v_writelane_b32"):
            ok = name == "v_writelane_b32" or f["src0"] >= 256
        elif fmt in ("VOP2", "VOP3") and (name in _F2 or name in _I2 or name in _CARRY or name in (
                "v_fmac_f32", "v_fmamk_f32", "v_fmaak_f32", "v_cndmask_b32", "v_mbcnt_lo_u32_b32",
                "v_mbcnt_hi_u32_b32", "v_ldexp_f32")):
            ok = not (name == "v_cndmask_b32" and fmt == "VOP3" and (f.get("abs") or f.get("neg")))
        elif fmt == "VOP3":
            ok = name in _INT3 or name in _SHIFT64 or name in ("v_fma_f32", "v_mad_u64_u32", "v_mad_i64_i32")
        elif fmt == "VOP3P":
            ok = name in ("v_pk_mul_f32", "v_pk_add_f32", "v_pk_fma_f32")
        if not ok:
            raise Unsupported(ins.text)

    def emit(self, i: int, ins: Inst) -> None:
        fmt = ins.fmt
        if fmt == "SOPP":
            self.sopp(i, ins)
        elif fmt in ("SOP1", "SOP2", "SOPC", "SOPK"):
            self.salu(ins)
        elif fmt == "SMEM":
            self.smem(i, ins)
        elif fmt in ("GLOBAL", "FLAT"):
            self.global_mem(i, ins)
        elif fmt == "DS":
            self.ds(i, ins)
        else:
            cls, lanes, _ = count_class(ins)
            if cls is not None or lanes:
                self.count(i, K_LANES, self.popcount64(self.exec64()))
            self.valu(ins)

    # ---------------------------------------------------------------- SOPP
    def sopp(self, i: int, ins: Inst) -> None:
        name, b = ins.name, self.b
        if name in _SOPP_NOP:
            return
        if name == "s_endpgm":
            self.stop(i, DONE)
        elif name == "s_barrier":
            self.stop(i + 1, BARRIER)
        elif name == "s_branch":
            self.jump(i, self.target(ins), None)
        else:
            cond = name[len("s_cbranch_"):]
            if cond in ("scc0", "scc1"):
                c = self.scc() if cond == "scc1" else b.not_(self.scc())
            else:
                reg = EXEC if cond.startswith("exec") else VCC
                zero = b.icmp_unsigned("==", self.sget64(reg), c64(0))
                c = zero if cond.endswith("z") and not cond.endswith("nz") else b.not_(zero)
            self.jump(i, self.target(ins), c)

    # ---------------------------------------------------------------- SALU
    def salu(self, ins: Inst) -> None:
        b, name, f = self.b, ins.name, ins.f
        if ins.fmt == "SOPK":
            k = f["simm16"]
            sk = k - 0x10000 if k & 0x8000 else k
            d = f["sdst"]
            if name == "s_movk_i32":
                self.sset(d, c32(sk))
            elif name in ("s_addk_i32", "s_mulk_i32"):
                a = b.sext(self.sget(d), I64)
                r = b.add(a, c64(sk)) if name == "s_addk_i32" else b.mul(a, c64(sk))
                self.sset(d, b.trunc(r, I32))
                if name == "s_addk_i32":
                    self.set_scc(_ovf32(b, r))
            else:
                op, typ = name.split("_")[2], name.split("_")[3]
                a = self.sget(d)
                if typ == "i32":
                    self.set_scc(_icmp(b, op, b.sext(a, I64), c64(sk), True))
                else:
                    self.set_scc(_icmp(b, op, b.zext(a, I64), c64(k), False))
            return
        dw, sw = ins.widths
        if ins.fmt == "SOPC":
            parts = name.split("_")
            wid = 2 if parts[3] == "u64" else 1
            a, c = self.sread(f["ssrc0"], wid, ins), self.sread(f["ssrc1"], wid, ins)
            self.set_scc(_icmp(b, parts[2], a, c, parts[3] == "i32"))
            return
        if ins.fmt == "SOP1":
            self.sop1(ins, dw, sw)
            return
        a = self.sread(f["ssrc0"], sw[0], ins)
        c = self.sread(f["ssrc1"], sw[1], ins)
        r, scc = self.sop2(name, a, c)
        if dw == 2:
            self.sset64(f["sdst"], r if r.type == I64 else b.zext(r, I64))
        else:
            self.sset(f["sdst"], r if r.type == I32 else b.trunc(r, I32))
        if scc is not None:
            self.set_scc(scc)

    def sop2(self, name: str, a: ir.Value, c: ir.Value) -> tuple[ir.Value, ir.Value | None]:
        b = self.b
        z = lambda x: b.zext(x, I64) if x.type == I32 else x  # noqa: E731
        s = lambda x: b.sext(x, I64)  # noqa: E731
        m32 = c64(M32)
        if name == "s_add_u32":
            r = b.add(z(a), z(c))
            return b.trunc(r, I32), b.icmp_unsigned(">", r, m32)
        if name == "s_sub_u32":
            return b.sub(a, c), b.icmp_unsigned(">", c, a)
        if name == "s_addc_u32":
            r = b.add(b.add(z(a), z(c)), b.zext(self.scc(), I64))
            return b.trunc(r, I32), b.icmp_unsigned(">", r, m32)
        if name == "s_subb_u32":
            sc = b.zext(self.scc(), I64)
            return b.trunc(b.sub(b.sub(z(a), z(c)), sc), I32), b.icmp_unsigned(">", b.add(z(c), sc), z(a))
        if name in ("s_add_i32", "s_sub_i32"):
            r = b.add(s(a), s(c)) if name == "s_add_i32" else b.sub(s(a), s(c))
            return b.trunc(r, I32), _ovf32(b, r)
        if name == "s_mul_i32":
            return b.mul(a, c), None
        if name == "s_mul_hi_u32":
            return b.trunc(b.lshr(b.mul(z(a), z(c)), c64(32)), I32), None
        if name == "s_mul_hi_i32":
            return b.trunc(b.ashr(b.mul(s(a), s(c)), c64(32)), I32), None
        if name in ("s_min_i32", "s_max_i32", "s_min_u32", "s_max_u32"):
            signed = name.endswith("i32")
            lt = b.icmp_signed("<", a, c) if signed else b.icmp_unsigned("<", a, c)
            gt = b.icmp_signed(">", a, c) if signed else b.icmp_unsigned(">", a, c)
            return (b.select(lt, a, c), lt) if "min" in name else (b.select(gt, a, c), gt)
        if name in ("s_cselect_b32", "s_cselect_b64"):
            return b.select(self.scc(), a, c), None
        if name.startswith("s_lshl") and name.endswith("_add_u32"):
            k = int(name[6])
            r = b.add(b.shl(z(a), c64(k)), z(c))
            return b.trunc(r, I32), b.icmp_unsigned(">", r, m32)
        op, wid = name[2:].rsplit("_", 1)
        if op in _SOP2_LOGIC:
            r = {"and": lambda: b.and_(a, c), "or": lambda: b.or_(a, c), "xor": lambda: b.xor(a, c),
                 "andn2": lambda: b.and_(a, b.not_(c)), "orn2": lambda: b.or_(a, b.not_(c)),
                 "nand": lambda: b.not_(b.and_(a, c)), "nor": lambda: b.not_(b.or_(a, c)),
                 "xnor": lambda: b.not_(b.xor(a, c))}[op]()
            return r, b.icmp_unsigned("!=", r, ir.Constant(r.type, 0))
        if op in ("lshl", "lshr", "ashr"):
            bits = 64 if wid.endswith("64") else 32
            sh = b.and_(c if c.type == a.type else b.zext(c, a.type), ir.Constant(a.type, bits - 1))
            r = b.shl(a, sh) if op == "lshl" else b.lshr(a, sh) if op == "lshr" else b.ashr(a, sh)
            return r, b.icmp_unsigned("!=", r, ir.Constant(r.type, 0))
        raise Unsupported(name)  # pragma: no cover - check() admits only the names above

    def sop1(self, ins: Inst, dw: int, sw: tuple[int, ...]) -> None:
        b, name, f = self.b, ins.name, ins.f
        d = f["sdst"]
        if name.endswith("saveexec_b64"):
            src = self.sread(f["ssrc0"], 2, ins)
            exe = self.sget64(EXEC)
            op = name[2:].split("_saveexec")[0]
            new = {"and": lambda: b.and_(src, exe), "or": lambda: b.or_(src, exe), "xor": lambda: b.xor(src, exe),
                   "andn2": lambda: b.and_(src, b.not_(exe)), "orn2": lambda: b.or_(src, b.not_(exe)),
                   "nand": lambda: b.not_(b.and_(src, exe)), "nor": lambda: b.not_(b.or_(src, exe)),
                   "xnor": lambda: b.not_(b.xor(src, exe)), "andn1": lambda: b.and_(b.not_(src), exe),
                   "orn1": lambda: b.or_(b.not_(src), exe)}[op]()
            self.sset64(d, exe)
            self.sset64(EXEC, new)
            self.set_scc(b.icmp_unsigned("!=", new, c64(0)))
            return
        a = self.sread(f["ssrc0"], sw[0], ins)

        def put(v: ir.Value, width: int) -> None:
            self.sset64(d, v) if width == 2 else self.sset(d, v)
        if name in ("s_mov_b32", "s_mov_b64"):
            put(a, dw)
        elif name in ("s_not_b32", "s_not_b64"):
            r = b.not_(a)
            put(r, dw)
            self.set_scc(b.icmp_unsigned("!=", r, ir.Constant(r.type, 0)))
        elif name in ("s_cmov_b32", "s_cmov_b64"):
            old = self.sget64(d) if dw == 2 else self.sget(d)
            put(b.select(self.scc(), a, old), dw)
        elif name.startswith("s_bcnt1"):
            r = b.trunc(self.popcount64(b.zext(a, I64) if a.type == I32 else a), I32)
            self.sset(d, r)
            self.set_scc(b.icmp_unsigned("!=", r, c32(0)))
        elif name.startswith("s_ff1"):
            x = b.zext(a, I64) if a.type == I32 else a
            tz = b.call(self.intr("llvm.cttz.i64", I64, [I64, I1]), [x, ir.Constant(I1, 0)])
            self.sset(d, b.select(b.icmp_unsigned("==", x, c64(0)), c32(M32), b.trunc(tz, I32)))
        elif name == "s_brev_b32":
            self.sset(d, b.call(self.intr("llvm.bitreverse.i32", I32, [I32]), [a]))
        elif name == "s_abs_i32":
            r = b.call(self.intr("llvm.abs.i32", I32, [I32, I1]), [a, ir.Constant(I1, 0)])
            self.sset(d, r)
            self.set_scc(b.icmp_unsigned("!=", r, c32(0)))
        elif name == "s_sext_i32_i8":
            self.sset(d, b.sext(b.trunc(a, I8), I32))
        elif name == "s_sext_i32_i16":
            self.sset(d, b.sext(b.trunc(a, ir.IntType(16)), I32))
        else:  # pragma: no cover
            raise Unsupported(name)

    # ---------------------------------------------------------------- VALU
    def valu(self, ins: Inst) -> None:  # noqa: C901 - one branch per family
        b, name, f = self.b, ins.name, ins.f
        if ins.fmt == "VOPC" or name.startswith(("v_cmp_", "v_cmpx_")):
            self.vcmp(ins)
            return
        if name == "v_readfirstlane_b32":
            exe = self.exec64()
            first = b.call(self.intr("llvm.cttz.i64", I64, [I64, I1]), [exe, ir.Constant(I1, 0)])
            lane = b.select(b.icmp_unsigned("==", exe, c64(0)), c64(0), first)
            self.sset(f["vdst"], b.extract_element(self.usrc(ins, 0), lane))
            return
        if name in ("v_readlane_b32", "v_writelane_b32"):
            lane = b.and_(self.sread(f["src1"], 1, ins), c32(63))
            if name == "v_readlane_b32":
                self.sset(f["vdst"], b.extract_element(self.vget(f["src0"] - 256), lane))
            else:
                one = b.bitcast(b.shl(c64(1), b.zext(lane, I64)), VB)  # that lane only, whatever EXEC says
                self.vset(f["vdst"], self.splat(self.sread(f["src0"], 1, ins), V32), one)
            return
        if name in _F1_SFU:
            x = b.fpext(self.fsrc(ins, 0), VD)
            one = ir.Constant(VD, [ir.Constant(F64, 1.0)] * WAVE)
            sq = self.intr("llvm.sqrt.v64f64", VD, [VD])
            r = b.fdiv(one, x) if name in ("v_rcp_f32", "v_rcp_iflag_f32") else \
                b.fdiv(one, b.call(sq, [x])) if name == "v_rsq_f32" else b.call(sq, [x])
            self.vset(f["vdst"], self.fres(b.fptrunc(r, VF)))
            return
        if name in _F1_ROUND:
            fn = self.intr(f"{_F1_ROUND[name]}.v64f32", VF, [VF])
            self.vset(f["vdst"], self.fres(b.call(fn, [self.fsrc(ins, 0)])))
            return
        if name == "v_fract_f32":
            x = self.fsrc(ins, 0)
            self.vset(f["vdst"], self.fres(b.fsub(x, b.call(self.intr("llvm.floor.v64f32", VF, [VF]), [x]))))
            return
        if name in _CVT1:
            self.vset(f["vdst"], self.cvt(name, self.usrc(ins, 0)))
            return
        if name == "v_mov_b64":
            self.vset64(f["vdst"], self.usrc(ins, 0, 2))
            return
        if name in _F2:
            x, y = self.fsrc(ins, 0), self.fsrc(ins, 1)
            if name == "v_subrev_f32":
                r = self.nan_rule(b.fsub(y, x), [y, x])
            elif name in ("v_max_f32", "v_min_f32"):
                # NumPy's fmax/fmin on arrays (SSE maxps/minps, then NaN in y -> x): equal values give y
                better = b.fcmp_ordered(">" if "max" in name else "<", x, y)
                r = b.select(b.fcmp_unordered("uno", y, y), x, b.select(better, x, y))
            else:
                r = self.nan_rule({"v_add_f32": b.fadd, "v_sub_f32": b.fsub, "v_mul_f32": b.fmul}[name](x, y), [x, y])
            self.vset(f["vdst"], self.fres(r))
            return
        fma = self.intr("llvm.fma.v64f32", VF, [VF, VF, VF])
        if name == "v_fmac_f32":
            acc = b.bitcast(self.vget(f["vdst"]), VF)
            self.vset(f["vdst"], self.fres(self.fma(fma, [self.fsrc(ins, 0), self.fsrc(ins, 1), acc])))
            return
        if name in ("v_fmamk_f32", "v_fmaak_f32"):
            k = b.bitcast(self.splat(c32(ins.literal or 0), V32), VF)
            x, y = self.fsrc(ins, 0), self.fsrc(ins, 1)
            args = [x, k, y] if name == "v_fmamk_f32" else [x, y, k]
            self.vset(f["vdst"], self.fres(self.fma(fma, args)))
            return
        if name == "v_fma_f32":
            self.vset(f["vdst"], self.fres(self.fma(fma, [self.fsrc(ins, 0), self.fsrc(ins, 1), self.fsrc(ins, 2)])))
            return
        if name == "v_ldexp_f32":
            e = b.sext(self.usrc(ins, 1), V64)
            e = b.select(b.icmp_signed("<", e, self.splat(c64(-1000), V64)), self.splat(c64(-1000), V64), e)
            e = b.select(b.icmp_signed(">", e, self.splat(c64(1000), V64)), self.splat(c64(1000), V64), e)
            fn = self.intr("llvm.ldexp.v64f32.v64i32", VF, [VF, V32])
            self.vset(f["vdst"], self.fres(b.call(fn, [self.fsrc(ins, 0), b.trunc(e, V32)])))
            return
        if name == "v_cndmask_b32":
            a, c = self.usrc(ins, 0), self.usrc(ins, 1)
            if ins.fmt == "VOP3":
                code = f["src2"]
                sel = self.sget64(code) if code < 128 else c64(-1 if ref._const(code, 2, ins.literal, False)
                                                               else 0)
            else:
                sel = self.sget64(VCC)
            self.vset(f["vdst"], b.select(self.lane_mask(sel), c, a))
            return
        if name in ("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32"):
            lo = name.startswith("v_mbcnt_lo")
            below = [((1 << min(k, 32)) - 1) & M32 if lo else ((1 << max(k - 32, 0)) - 1) & M32 for k in range(WAVE)]
            m = b.and_(self.usrc(ins, 0), ir.Constant(V32, [c32(x) for x in below]))
            cnt = b.call(self.intr("llvm.ctpop.v64i32", V32, [V32]), [m])
            self.vset(f["vdst"], b.add(cnt, self.usrc(ins, 1)))
            return
        if name in _CARRY:
            self.carry(ins)
            return
        if name in _I2:
            self.vset(f["vdst"], self.int2(name, self.usrc(ins, 0), self.usrc(ins, 1)))
            return
        if name in _INT3:
            self.vset(f["vdst"], self.int3(name, self.usrc(ins, 0), self.usrc(ins, 1), self.usrc(ins, 2)))
            return
        if name in _SHIFT64 and self.shift64_pairs(ins):
            return
        if name in _SHIFT64:
            k64 = lambda v: self.splat(c64(v), V64)  # noqa: E731
            if name == "v_lshl_add_u64":
                x, sh, d = self.usrc(ins, 0, 2), b.and_(b.zext(self.usrc(ins, 1), V64), k64(7)), self.usrc(ins, 2, 2)
                r = b.add(b.shl(x, sh), d)
            else:
                sh, x = b.and_(b.zext(self.usrc(ins, 0), V64), k64(63)), self.usrc(ins, 1, 2)
                r = b.shl(x, sh) if name == "v_lshlrev_b64" else b.lshr(x, sh) if name == "v_lshrrev_b64" else \
                    b.ashr(x, sh)
            self.vset64(f["vdst"], r)
            return
        if name in ("v_mad_u64_u32", "v_mad_i64_i32"):
            a, c, d = self.usrc(ins, 0), self.usrc(ins, 1), self.usrc(ins, 2, 2)
            ext = b.zext if name == "v_mad_u64_u32" else b.sext
            r = b.add(b.mul(ext(a, V64), ext(c, V64)), d)
            if name == "v_mad_u64_u32":
                carry = b.bitcast(b.icmp_unsigned("<", r, d), I64)
                self.sset64(f["sdst"], b.and_(carry, self.exec64()))
            else:
                self.sset64(f["sdst"], c64(0))
            self.vset64(f["vdst"], r)
            return
        if name.startswith("v_pk_"):
            self.packed(ins)
            return
        raise Unsupported(ins.text)  # pragma: no cover - check() admits only the names above

    def pair(self, code: int, ins: Inst) -> tuple[ir.Value, ir.Value]:
        """A 64-bit vector source as its (low, high) <64 x i32> words (a register pair, or a scalar broadcast)."""
        b = self.b
        if code >= 256:
            return self.vget(code - 256), self.vget(code - 255)
        x = self.sread(code, 2, ins)
        return self.splat(b.trunc(x, I32), V32), self.splat(b.trunc(b.lshr(x, c64(32)), I32), V32)

    def add_pairs(self, a: tuple[ir.Value, ir.Value], c: tuple[ir.Value, ir.Value]) -> tuple[ir.Value, ir.Value]:
        """64-bit lane sums on (low, high) words: the low words' carry goes into the high words (wrapping, as
        the 64-bit sum does)."""
        b = self.b
        lo = b.add(a[0], c[0])
        return lo, b.add(b.add(a[1], c[1]), b.zext(b.icmp_unsigned("<", lo, a[0]), V32))

    def shift_pair(self, x: tuple[ir.Value, ir.Value], k: int, op: str) -> tuple[ir.Value, ir.Value]:
        """A 64-bit shift by a constant k in [0, 63] on (low, high) words ('shl', 'lshr', 'ashr')."""
        b = self.b
        lo, hi = x
        kk = lambda v: self.splat(c32(v), V32)  # noqa: E731
        if k == 0:
            return lo, hi
        if op == "shl":
            if k >= 32:
                return kk(0), b.shl(lo, kk(k - 32)) if k > 32 else lo
            return b.shl(lo, kk(k)), b.or_(b.shl(hi, kk(k)), b.lshr(lo, kk(32 - k)))
        top = (lambda v, n: b.ashr(v, kk(n))) if op == "ashr" else (lambda v, n: b.lshr(v, kk(n)))
        if k >= 32:
            return (top(hi, k - 32) if k > 32 else hi), (top(hi, 31) if op == "ashr" else kk(0))
        return b.or_(b.lshr(lo, kk(k)), b.shl(hi, kk(32 - k))), top(hi, k)

    def shift64_pairs(self, ins: Inst) -> bool:
        """v_lshl_add_u64 and the 64-bit shifts by a constant amount, on 32-bit words: x86 has no cheap way
        between <64 x i64> and register pairs (each 64-bit value costs 16 widenings and narrowings), and the
        carry of one add is one compare. False when the amount is not a constant (the <64 x i64> form then)."""
        name, f = ins.name, ins.f
        at = 1 if name == "v_lshl_add_u64" else 0
        code = self.src_code(ins, at)
        k = ref._const(code, 1, ins.literal, False) if 128 <= code < 256 else None
        if k is None:
            return False
        if name == "v_lshl_add_u64":
            r = self.add_pairs(self.shift_pair(self.pair(self.src_code(ins, 0), ins), k & 7, "shl"),
                               self.pair(self.src_code(ins, 2), ins))
        else:
            op = {"v_lshlrev_b64": "shl", "v_lshrrev_b64": "lshr", "v_ashrrev_i64": "ashr"}[name]
            r = self.shift_pair(self.pair(self.src_code(ins, 1), ins), k & 63, op)
        m = self.lane_mask(self.exec64())
        self.vset(f["vdst"], r[0], m)
        self.vset(f["vdst"] + 1, r[1], m)
        return True

    def cvt(self, name: str, u: ir.Value) -> ir.Value:
        b = self.b
        if name == "v_mov_b32":
            return u
        if name == "v_not_b32":
            return b.not_(u)
        if name == "v_cvt_f32_i32":
            return self.fres(b.sitofp(u, VF))
        if name == "v_cvt_f32_u32":
            return self.fres(b.uitofp(u, VF))
        if name in ("v_cvt_i32_f32", "v_cvt_u32_f32", "v_cvt_flr_i32_f32"):
            x = b.bitcast(u, VF)
            if name == "v_cvt_flr_i32_f32":
                x = b.call(self.intr("llvm.floor.v64f32", VF, [VF]), [x])
            signed = name != "v_cvt_u32_f32"
            fn = self.intr(f"llvm.fpto{'s' if signed else 'u'}i.sat.v64i32.v64f32", V32, [VF])
            return b.call(fn, [x])  # NaN -> 0, saturating: the reference's clip of the truncated float64
        if name == "v_bfrev_b32":
            return b.call(self.intr("llvm.bitreverse.v64i32", V32, [V32]), [u])
        zero = b.icmp_unsigned("==", u, self.splat(c32(0), V32))
        if name == "v_ffbl_b32":
            r = b.call(self.intr("llvm.cttz.v64i32", V32, [V32, I1]), [u, ir.Constant(I1, 0)])
        else:
            r = b.call(self.intr("llvm.ctlz.v64i32", V32, [V32, I1]), [u, ir.Constant(I1, 0)])
        return b.select(zero, self.splat(c32(M32), V32), r)

    def int2(self, name: str, a: ir.Value, c: ir.Value) -> ir.Value:
        b = self.b
        sh = lambda x: b.and_(x, self.splat(c32(31), V32))  # noqa: E731
        if name == "v_add_u32":
            return b.add(a, c)
        if name == "v_sub_u32":
            return b.sub(a, c)
        if name == "v_subrev_u32":
            return b.sub(c, a)
        if name == "v_and_b32":
            return b.and_(a, c)
        if name == "v_or_b32":
            return b.or_(a, c)
        if name == "v_xor_b32":
            return b.xor(a, c)
        if name == "v_lshlrev_b32":
            return b.shl(c, sh(a))
        if name == "v_lshrrev_b32":
            return b.lshr(c, sh(a))
        if name == "v_ashrrev_i32":
            return b.ashr(c, sh(a))
        if name in ("v_max_i32", "v_min_i32", "v_max_u32", "v_min_u32"):
            signed = name.endswith("i32")
            op = ">" if "max" in name else "<"
            cmp = b.icmp_signed(op, a, c) if signed else b.icmp_unsigned(op, a, c)
            return b.select(cmp, a, c)
        if name == "v_mul_lo_u32":
            return b.mul(a, c)
        if name == "v_mul_u32_u24":
            m = self.splat(c32(0xFFFFFF), V32)
            return b.mul(b.and_(a, m), b.and_(c, m))
        if name in ("v_mul_hi_u32", "v_mul_hi_i32"):
            ext = b.zext if name == "v_mul_hi_u32" else b.sext
            p = b.mul(ext(a, V64), ext(c, V64))
            return b.trunc(b.lshr(p, self.splat(c64(32), V64)), V32)
        if name == "v_mul_i32_i24":
            e = lambda x: b.ashr(b.shl(x, self.splat(c32(8), V32)), self.splat(c32(8), V32))  # noqa: E731
            return b.mul(e(a), e(c))
        if name == "v_bcnt_u32_b32":
            return b.add(b.call(self.intr("llvm.ctpop.v64i32", V32, [V32]), [a]), c)
        if name == "v_bfm_b32":
            ones = b.sub(b.shl(self.splat(c64(1), V64), b.zext(sh(a), V64)), self.splat(c64(1), V64))
            return b.trunc(b.shl(ones, b.zext(sh(c), V64)), V32)
        raise Unsupported(name)  # pragma: no cover

    def int3(self, name: str, a: ir.Value, c: ir.Value, d: ir.Value) -> ir.Value:
        b = self.b
        k = lambda v: self.splat(c32(v), V32)  # noqa: E731
        sh = lambda x: b.and_(x, k(31))  # noqa: E731
        if name == "v_add3_u32":
            return b.add(b.add(a, c), d)
        if name == "v_lshl_add_u32":
            return b.add(b.shl(a, sh(c)), d)
        if name == "v_add_lshl_u32":
            return b.shl(b.add(a, c), sh(d))
        if name == "v_lshl_or_b32":
            return b.or_(b.shl(a, sh(c)), d)
        if name == "v_and_or_b32":
            return b.or_(b.and_(a, c), d)
        if name == "v_or3_b32":
            return b.or_(b.or_(a, c), d)
        if name == "v_xad_u32":
            return b.add(b.xor(a, c), d)
        if name == "v_bfe_u32":
            width = b.zext(sh(d), V64)
            field = b.lshr(b.zext(a, V64), b.zext(sh(c), V64))
            return b.trunc(b.and_(field, b.sub(b.shl(self.splat(c64(1), V64), width), self.splat(c64(1), V64))),
                           V32)
        if name == "v_bfe_i32":
            one = self.splat(c64(1), V64)
            off, width = b.zext(sh(c), V64), b.zext(sh(d), V64)
            val = b.and_(b.ashr(b.sext(a, V64), off), b.sub(b.shl(one, width), one))
            wm1 = b.select(b.icmp_unsigned(">", width, self.splat(c64(0), V64)), b.sub(width, one),
                           self.splat(c64(0), V64))
            sign = b.and_(b.icmp_unsigned(">", width, self.splat(c64(0), V64)),
                          b.icmp_unsigned("!=", b.and_(b.lshr(val, wm1), one), self.splat(c64(0), V64)))
            return b.trunc(b.select(sign, b.sub(val, b.shl(one, width)), val), V32)
        if name == "v_bfi_b32":
            return b.or_(b.and_(a, c), b.and_(b.not_(a), d))
        if name == "v_mad_u32_u24":
            return b.add(b.mul(b.and_(a, k(0xFFFFFF)), b.and_(c, k(0xFFFFFF))), d)
        if name == "v_mad_i32_i24":
            e = lambda x: b.ashr(b.shl(x, k(8)), k(8))  # noqa: E731
            return b.add(b.mul(e(a), e(c)), d)
        if name == "v_alignbit_b32":
            wide = b.or_(b.shl(b.zext(a, V64), self.splat(c64(32), V64)), b.zext(c, V64))
            return b.trunc(b.lshr(wide, b.zext(sh(d), V64)), V32)
        if name == "v_perm_b32":  # byte k of the result: byte sel of (a:b), 0 for sel 8..12, 0xFF past 12
            k64 = lambda v: self.splat(c64(v), V64)  # noqa: E731
            src = b.or_(b.shl(b.zext(a, V64), k64(32)), b.zext(c, V64))
            out = k64(0)
            for j in range(4):
                sel = b.and_(b.lshr(b.zext(d, V64), k64(8 * j)), k64(0xFF))
                pick = b.and_(b.lshr(src, b.mul(b.select(b.icmp_unsigned("<", sel, k64(8)), sel, k64(7)), k64(8))),
                              k64(0xFF))
                byte = b.select(b.icmp_unsigned("<", sel, k64(8)), pick,
                                b.select(b.icmp_unsigned(">", sel, k64(12)), k64(0xFF), k64(0)))
                out = b.or_(out, b.shl(byte, k64(8 * j)))
            return b.trunc(out, V32)
        if name in ("v_max3_i32", "v_min3_i32", "v_max3_u32", "v_min3_u32"):
            op = "v_max_" if "max" in name else "v_min_"
            two = op + name[-3:]
            return self.int2(two, self.int2(two, a, c), d)
        raise Unsupported(name)  # pragma: no cover

    def carry(self, ins: Inst) -> None:
        b, name, f = self.b, ins.name, ins.f
        a, c = b.zext(self.usrc(ins, 0), V64), b.zext(self.usrc(ins, 1), V64)
        if name.startswith(("v_subrev", "v_subbrev")):
            a, c = c, a
        cin = self.splat(c64(0), V64)
        if name in ("v_addc_co_u32", "v_subb_co_u32", "v_subbrev_co_u32"):
            creg = VCC if ins.fmt == "VOP2" else f["src2"]
            if creg >= 128:
                raise Unsupported(f"{ins.text} (carry-in from a constant)")
            cin = b.zext(self.lane_mask(self.sget64(creg)), V64)
        full = b.add(b.add(a, c), cin) if "add" in name else b.sub(b.sub(a, c), cin)
        # (as int64: the sum exceeds 32 bits, or the difference is negative)
        carry = b.icmp_signed(">", full, self.splat(c64(M32), V64)) if "add" in name else \
            b.icmp_signed("<", full, self.splat(c64(0), V64))
        cdst = VCC if ins.fmt == "VOP2" else f["sdst"]
        exe = self.exec64()
        self.sset64(cdst, b.and_(b.bitcast(carry, I64), exe))
        self.vset(f["vdst"], b.trunc(full, V32), self.lane_mask(exe))

    def vcmp(self, ins: Inst) -> None:
        b, name, f = self.b, ins.name, ins.f
        parts = name.split("_")
        op, typ = parts[2], parts[3]
        if typ == "f32":
            pred = _CMP_F[op]
            x, y = self.fsrc(ins, 0), self.fsrc(ins, 1)
            if pred == "false":
                res = ir.Constant(VB, [ir.Constant(I1, 0)] * WAVE)
            elif pred == "true":
                res = ir.Constant(VB, [ir.Constant(I1, 1)] * WAVE)
            elif pred in ("ord", "uno"):
                res = b.fcmp_ordered("ord", x, y) if pred == "ord" else b.fcmp_unordered("uno", x, y)
            else:
                if pred[0] == "o":
                    res = b.fcmp_ordered({"olt": "<", "oeq": "==", "ole": "<=", "ogt": ">", "one": "!=",
                                          "oge": ">="}[pred], x, y)
                else:
                    res = b.fcmp_unordered({"ult": "<", "ueq": "==", "ule": "<=", "ugt": ">", "une": "!=",
                                            "uge": ">="}[pred], x, y)
        else:
            wid = 2 if typ.endswith("64") else 1
            x, y = self.usrc(ins, 0, wid), self.usrc(ins, 1, wid)
            isym = _CMP_I[op]
            if isym in ("f", "t"):
                res = ir.Constant(VB, [ir.Constant(I1, 1 if isym == "t" else 0)] * WAVE)
            elif typ[0] == "i":
                res = b.icmp_signed(isym, x, y)
            else:
                res = b.icmp_unsigned(isym, x, y)
        bits = b.and_(b.bitcast(res, I64), self.exec64())
        dst = VCC if ins.fmt == "VOPC" else f["vdst"]
        self.sset64(dst, bits)
        if parts[1] == "cmpx":
            self.sset64(EXEC, bits)

    def packed(self, ins: Inst) -> None:
        """v_pk_mul/add/fma_f32 on register pairs, with op_sel/op_sel_hi and neg/neg_hi."""
        b, name, f = self.b, ins.name, ins.f
        n_src = 3 if "fma" in name else 2
        op_sel, op_sel_hi = f["op_sel"], f["op_sel_hi"] | f["op_sel_hi2"] << 2
        halves = []
        for i in range(n_src):
            code = f[f"src{i}"]
            if code >= 256:
                words = (self.vget(code - 256), self.vget(code - 255))
            else:
                x = self.sread(code, 2, ins)
                words = (self.splat(b.trunc(x, I32), V32), self.splat(b.trunc(b.lshr(x, c64(32)), I32), V32))
            lo, hi = b.bitcast(words[op_sel >> i & 1], VF), b.bitcast(words[op_sel_hi >> i & 1], VF)
            if f["neg"] >> i & 1:
                lo = b.fneg(lo)
            if f["neg_hi"] >> i & 1:
                hi = b.fneg(hi)
            halves.append((lo, hi))
        out = []
        fma = self.intr("llvm.fma.v64f32", VF, [VF, VF, VF])
        for k in range(2):
            xs = [h[k] for h in halves]
            r = self.nan_rule(b.fmul(xs[0], xs[1]), xs) if name == "v_pk_mul_f32" else \
                self.nan_rule(b.fadd(xs[0], xs[1]), xs) if name == "v_pk_add_f32" else self.fma(fma, xs)
            out.append(self.fres(r))
        exe = self.lane_mask(self.exec64())
        self.vset(f["vdst"], out[0], exe)
        self.vset(f["vdst"] + 1, out[1], exe)

    # ---------------------------------------------------------------- memory
    def alloc_end(self, addr: ir.Value) -> ir.Value:
        """The end of the allocation holding `addr` (0 when none): binary search over the sorted starts, after a
        one-entry cache per call site (an address found inside an allocation and that allocation's end: every
        address from the one to the other is in the same allocation, and the table does not change during a
        call), which serves the next wave's access to the same array without the search."""
        b = self.b
        fn = self.module.globals.get("amd_alloc_end")
        if fn is None:
            fn = alloc_end_fn(self.module)
        with b.goto_block(self.entry_block):  # (set once per call; LLVM keeps the pair in machine registers)
            seen, seen_end = b.alloca(I64), b.alloca(I64)
            b.store(c64(-1), seen)
            b.store(c64(0), seen_end)
        q, e = b.load(seen), b.load(seen_end)
        hit = b.and_(b.icmp_unsigned("<=", q, addr), b.icmp_unsigned("<", addr, e))
        start = b.block
        miss, join = self.fn.append_basic_block("alloc_miss"), self.fn.append_basic_block("alloc_join")
        b.cbranch(hit, join, miss)
        b.position_at_end(miss)
        found = b.call(fn, [self.ctx_arg, addr])
        inside = b.icmp_unsigned("!=", found, c64(0))
        b.store(b.select(inside, addr, q), seen)
        b.store(b.select(inside, found, e), seen_end)
        b.branch(join)
        b.position_at_end(join)
        end = b.phi(I64)
        end.add_incoming(e, start)
        end.add_incoming(found, miss)
        return end

    def active_range(self, addr: ir.Value, m64: ir.Value) -> tuple[ir.Value, ir.Value]:
        b = self.b
        mask = self.lane_mask(m64)
        lo = b.call(self.intr("llvm.vector.reduce.umin.v64i64", I64, [V64]),
                    [b.select(mask, addr, self.splat(c64(-1), V64))])
        hi = b.call(self.intr("llvm.vector.reduce.umax.v64i64", I64, [V64]),
                    [b.select(mask, addr, self.splat(c64(0), V64))])
        return lo, hi

    def lane_loop(self, tag: str, m64: ir.Value, body: Callable[[ir.Value], None]) -> None:
        """for lane in 0..63 where bit lane of m64: body(lane as i64)."""
        b = self.b
        head = self.fn.append_basic_block(f"{tag}_head")
        work = self.fn.append_basic_block(f"{tag}_work")
        skip = self.fn.append_basic_block(f"{tag}_next")
        out = self.fn.append_basic_block(f"{tag}_out")
        start = b.block
        b.branch(head)
        b.position_at_end(head)
        lane = b.phi(I64)
        lane.add_incoming(c64(0), start)
        on = b.icmp_unsigned("!=", b.and_(b.lshr(m64, lane), c64(1)), c64(0))
        b.cbranch(on, work, skip)
        b.position_at_end(work)
        body(lane)
        b.branch(skip)
        b.position_at_end(skip)
        n = b.add(lane, c64(1))
        lane.add_incoming(n, skip)
        b.cbranch(b.icmp_unsigned("<", n, c64(WAVE)), head, out)
        b.position_at_end(out)

    def lane_ptr(self, r: int, lane: ir.Value) -> ir.Value:
        return self.b.gep(self.vbase, [self.b.add(c64(r * WAVE), lane)])

    def smem(self, i: int, ins: Inst) -> None:
        b, f = self.b, ins.f
        n = SMEM_DWORDS[ins.name]
        base = self.sread(f["sbase"], 2, ins)
        off = c64(f["offset"]) if f["imm"] else b.zext(self.sread(f["offset"], 1, ins), I64)
        if f["soe"]:
            off = b.add(off, b.zext(self.sread(f["soffset"], 1, ins), I64))
        addr = b.and_(b.add(base, off), c64(~3))
        end = self.alloc_end(addr)
        self.need_reference(i, b.and_(b.icmp_unsigned("!=", end, c64(0)),
                                      b.icmp_unsigned("<=", b.add(addr, c64(4 * n)), end)))
        host = b.bitcast(b.gep(self.mem, [b.sub(addr, c64(GLOBAL_BASE))]), I32P)
        for k in range(n):
            self.sset(f["sdata"] + k, b.load(b.gep(host, [c64(k)]), align=4))

    def gather(self, ptrs: ir.Value, mask: ir.Value, align: int) -> ir.Value:
        """<64 x i32> loaded from each lane's pointer on the lanes of `mask` (0 elsewhere)."""
        fn = self.intr("llvm.masked.gather.v64i32.v64p0", V32, [VP, I32, VB, V32])
        return self.b.call(fn, [ptrs, c32(align), mask, self.splat(c32(0), V32)])

    def scatter(self, val: ir.Value, ptrs: ir.Value, mask: ir.Value, align: int) -> None:
        """Store each lane's value on the lanes of `mask`, in lane order (the last lane wins, as NumPy's)."""
        fn = self.intr("llvm.masked.scatter.v64i32.v64p0", ir.VoidType(), [V32, VP, I32, VB])
        self.b.call(fn, [val, ptrs, c32(align), mask])

    def half_pattern(self, offs: ir.Value, exe: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(contiguous, broadcast): with every lane active, whether each 32-lane half reads consecutive dwords
        from its first lane's byte offset (x[i] of 32 neighbours) or all the same one (a row of a tile): the
        accesses then need two vector or two scalar loads instead of a 64-lane gather."""
        b = self.b
        first = b.shuffle_vector(offs, offs, ir.Constant(V32, [c32(0 if k < 32 else 32) for k in range(WAVE)]))
        c = c32 if offs.type == V32 else c64
        ramp = ir.Constant(offs.type, [c(4 * (k % 32)) for k in range(WAVE)])
        every = lambda m: b.call(self.intr("llvm.vector.reduce.and.v64i1", I1, [VB]), [m])  # noqa: E731
        full = b.icmp_unsigned("==", exe, c64(-1))
        return (b.and_(full, every(b.icmp_unsigned("==", offs, b.add(first, ramp)))),
                b.and_(full, every(b.icmp_unsigned("==", offs, first))))

    def lane_offset(self, offs: ir.Value, lane: int) -> ir.Value:
        """Lane `lane`'s byte offset as i64 (a 32-bit offset zero-extended: GEP would sign-extend it)."""
        v = self.b.extract_element(offs, c32(lane))
        return self.b.zext(v, I64) if v.type == I32 else v

    def load_dwords(self, base: ir.Value, offs: list[ir.Value], mask: ir.Value, exe: ir.Value) -> list[ir.Value]:
        """<64 x i32> per byte-offset vector in `offs` (each a constant shift of offs[0]) from host memory at
        `base`, on the lanes of `mask`: two 32-lane loads per value when each half is contiguous, two scalars
        when each half reads one address, a gather otherwise (the same values)."""
        b = self.b
        contig, bcast = self.half_pattern(offs[0], exe)
        blocks = [self.fn.append_basic_block(x) for x in ("ld_contig", "ld_bcast", "ld_gather", "ld_join")]
        other = self.fn.append_basic_block("ld_other")
        b.cbranch(contig, blocks[0], other)
        b.position_at_end(other)
        b.cbranch(bcast, blocks[1], blocks[2])
        results: list[list[tuple[ir.Value, ir.Block]]] = [[] for _ in offs]
        half = ir.VectorType(I32, 32)
        for kind, blk in zip(("contig", "bcast", "gather"), blocks[:3], strict=True):
            b.position_at_end(blk)
            for j, o in enumerate(offs):
                if kind == "gather":
                    v = self.gather(self.host_ptrs(base, o), mask, 4)
                else:
                    parts = []
                    for h in (0, 32):
                        at = b.gep(b.bitcast(base, I8P), [self.lane_offset(o, h)])  # (byte offsets)
                        if kind == "contig":
                            parts.append(b.load(b.bitcast(at, half.as_pointer()), align=4))
                        else:
                            parts.append(self.splat(b.load(b.bitcast(at, I32P), align=4), half))
                    v = b.shuffle_vector(parts[0], parts[1], ir.Constant(V32, [c32(k) for k in range(WAVE)]))
                results[j].append((v, b.block))
            b.branch(blocks[3])
        b.position_at_end(blocks[3])
        out = []
        for incoming in results:
            phi = b.phi(V32)
            for v, blk in incoming:
                phi.add_incoming(v, blk)
            out.append(phi)
        return out

    def store_dwords(self, base: ir.Value, offs: ir.Value, val: ir.Value, mask: ir.Value, exe: ir.Value) -> None:
        """Store a <64 x i32> at host `base` + each lane's byte offset: two 32-lane stores (the low half first,
        so the high half wins where they overlap, as in lane order) when each half is contiguous, else a
        scatter."""
        b = self.b
        contig, _ = self.half_pattern(offs, exe)
        fast, slow, join = (self.fn.append_basic_block(x) for x in ("st_contig", "st_scatter", "st_join"))
        b.cbranch(contig, fast, slow)
        b.position_at_end(fast)
        half = ir.VectorType(I32, 32)
        for h in (0, 32):
            part = b.shuffle_vector(val, val, ir.Constant(ir.VectorType(I32, 32), [c32(h + k) for k in range(32)]))
            at = b.gep(b.bitcast(base, I8P), [self.lane_offset(offs, h)])  # (byte offsets)
            b.store(part, b.bitcast(at, half.as_pointer()), align=4)
        b.branch(join)
        b.position_at_end(slow)
        self.scatter(val, self.host_ptrs(base, offs), mask, 4)
        b.branch(join)
        b.position_at_end(join)

    def host_ptrs(self, base: ir.Value, byte_offsets: ir.Value) -> ir.Value:
        """Pointers base + offset per lane (offsets <64 x i64>, or <64 x i32> taken as unsigned)."""
        b = self.b
        if byte_offsets.type == V32:
            byte_offsets = b.zext(byte_offsets, V64)
        return b.inttoptr(b.add(self.splat(b.ptrtoint(base, I64), V64), byte_offsets), VP)

    def sectors(self, addr: ir.Value, exe: ir.Value, size: int) -> ir.Value:
        """The reference's _sectors for one wave: with every lane active and the lanes' (first, last) sectors
        ascending, one vector pass counts the changes; otherwise the loop of amd_sectors."""
        b = self.b
        sh5 = self.splat(c64(5), V64)
        first = b.lshr(addr, sh5)
        last = b.lshr(b.add(addr, self.splat(c64(size - 1), V64)), sh5)
        # lane k's successor: lane k+1's first sector; lane 63's is its own last (no change there)
        nxt = b.shuffle_vector(first, last, ir.Constant(V32, [c32(k + 1 if k < WAVE - 1 else 2 * WAVE - 1)
                                                               for k in range(WAVE)]))
        ascending = b.call(self.intr("llvm.vector.reduce.and.v64i1", I1, [VB]),
                           [b.icmp_unsigned("<=", last, nxt)])
        full = b.and_(b.icmp_unsigned("==", exe, c64(-1)), ascending)
        fast_bb, slow_bb, join = (self.fn.append_basic_block(x) for x in ("sec_fast", "sec_slow", "sec_join"))
        b.cbranch(full, fast_bb, slow_bb)
        b.position_at_end(fast_bb)
        # changes inside each access (first != last) and between lane k's last and lane k+1's first
        inner = self.popcount64(b.bitcast(b.icmp_unsigned("!=", first, last), I64))
        step = self.popcount64(b.bitcast(b.icmp_unsigned("!=", last, nxt), I64))
        fast = b.add(c64(1), b.add(inner, step))
        b.branch(join)
        b.position_at_end(slow_bb)
        b.store(addr, b.bitcast(self.addrs, V64.as_pointer()), align=8)
        slow = b.call(sectors_fn(self.module), [b.bitcast(self.addrs, I64P), exe, c64(size)])
        b.branch(join)
        b.position_at_end(join)
        out = b.phi(I64)
        out.add_incoming(fast, fast_bb)
        out.add_incoming(slow, slow_bb)
        return out

    def global_mem(self, i: int, ins: Inst) -> None:
        b, f, name = self.b, ins.f, ins.name
        width = flat_width(name)
        size, signed = _SUBDWORD.get(name.rsplit("_", 1)[-1], (4 * width, False))
        # the address as (low, high) words, the 64-bit sums with their carries (no <64 x i64> until needed)
        if ins.fmt == "GLOBAL" and f["saddr"] != 0x7F:
            words = self.add_pairs(self.pair(f["saddr"], ins), (self.vget(f["addr"]), self.splat(c32(0), V32)))
        else:
            words = self.vget(f["addr"]), self.vget(f["addr"] + 1)
        if f["offset"]:
            off = f["offset"] & 0xFFFFFFFFFFFFFFFF
            words = self.add_pairs(words, (self.splat(c32(off), V32), self.splat(c32(off >> 32), V32)))
        exe = self.exec64()
        join = None
        if size == 4 and width == 1:
            join = self.fn.append_basic_block(f"gm_join{i}")
            general = self.fn.append_basic_block(f"gm_general{i}")
            self.whole_wave_dword(i, name, f, words, exe, join, general)
            b.position_at_end(general)
        addr = b.or_(b.zext(words[0], V64), b.shl(b.zext(words[1], V64), self.splat(c64(32), V64)))
        self.global_general(i, name, f, addr, exe, size, width, signed)
        if join is not None:
            b.branch(join)
            b.position_at_end(join)

    def whole_wave_dword(self, i: int, name: str, f: dict[str, Any], words: tuple[ir.Value, ir.Value],
                         exe: ir.Value, join: ir.Block, general: ir.Block) -> None:
        """The common case of a dword access, every lane on and lane k at the first lane's address + 4k (x[i] of
        a wave's 64 work-items): its checks, counts and access from the first address alone (the same results
        as the general path: its sectors are those from the first byte's to the last byte's, all touched);
        otherwise on to `general`."""
        b = self.b
        lo, hi = words
        lo0, hi0 = b.extract_element(lo, c32(0)), b.extract_element(hi, c32(0))
        a0 = b.or_(b.zext(lo0, I64), b.shl(b.zext(hi0, I64), c64(32)))
        last = b.add(a0, c64(4 * (WAVE - 1)))
        # lane k at a0 + 4k: the low words step by 4 without wrapping (so no carry) and the high words are equal
        steps = ir.Constant(V32, [c32(4 * k) for k in range(WAVE)])
        every = lambda m: b.call(self.intr("llvm.vector.reduce.and.v64i1", I1, [VB]), [m])  # noqa: E731
        alike = b.and_(every(b.icmp_unsigned("==", lo, b.add(self.splat(lo0, V32), steps))),
                       every(b.icmp_unsigned("==", hi, self.splat(hi0, V32))))
        whole = b.and_(b.and_(b.icmp_unsigned("==", exe, c64(-1)), alike),
                       b.icmp_unsigned("<=", lo0, c32(M32 - 4 * (WAVE - 1))))
        fast = self.fn.append_basic_block(f"gm_whole{i}")
        b.cbranch(whole, fast, general)
        b.position_at_end(fast)
        end = self.alloc_end(a0)
        inside = b.and_(b.icmp_unsigned("!=", end, c64(0)), b.icmp_unsigned("<=", b.add(last, c64(4)), end))
        self.need_reference(i, b.and_(inside, b.icmp_unsigned("==", b.and_(a0, c64(3)), c64(0))))
        self.count(i, K_LANES, c64(WAVE))
        self.count(i, K_SECTORS, b.add(b.sub(b.lshr(b.add(last, c64(3)), c64(5)), b.lshr(a0, c64(5))), c64(1)))
        self.count(i, K_IDEAL, c64(4 * WAVE // 32))
        at = b.bitcast(b.gep(self.mem, [b.sub(a0, c64(GLOBAL_BASE))]), V32.as_pointer())
        if "_load_" in name:
            self.vset(f["vdst"], b.load(at, align=4), ir.Constant(VB, [ir.Constant(I1, 1)] * WAVE))
        else:
            b.store(self.vget(f["data"]), at, align=4)
        b.branch(join)

    def global_general(self, i: int, name: str, f: dict[str, Any], addr: ir.Value, exe: ir.Value, size: int,
                       width: int, signed: bool) -> None:
        """A global access in general: the active lanes' range checked against one allocation, sectors counted
        by amd_codegen.sectors, loads and stores by halves when contiguous, else gathers and scatters."""
        b = self.b
        mask = self.lane_mask(exe)
        lo, hi = self.active_range(addr, exe)
        end = self.alloc_end(lo)
        any_on = b.icmp_unsigned("!=", exe, c64(0))
        inside = b.and_(b.icmp_unsigned("!=", end, c64(0)), b.icmp_unsigned("<=", b.add(hi, c64(size)), end))
        # unaligned dwords (the reference assembles them from bytes) go to the reference too
        low = b.call(self.intr("llvm.vector.reduce.or.v64i64", I64, [V64]),
                     [b.select(mask, addr, self.splat(c64(0), V64))])
        aligned = b.icmp_unsigned("==", b.and_(low, c64(3 if size >= 4 else 0)), c64(0))
        self.need_reference(i, b.or_(b.not_(any_on), b.and_(inside, aligned)))
        lanes = self.popcount64(exe)
        self.count(i, K_LANES, lanes)
        self.count(i, K_SECTORS, self.sectors(addr, exe, size))
        self.count(i, K_IDEAL, b.udiv(b.add(b.mul(lanes, c64(size)), c64(31)), c64(32)))
        offs = b.sub(addr, self.splat(c64(GLOBAL_BASE), V64))
        if size < 4:  # bytes and shorts, at any alignment (zero- or sign-extended loads, the low bits stored)
            nt = ir.IntType(8 * size)
            vt, pt = ir.VectorType(nt, WAVE), ir.VectorType(nt.as_pointer(), WAVE)
            ptrs = b.inttoptr(b.add(self.splat(b.ptrtoint(self.mem, I64), V64), offs), pt)
            if "_load_" in name:
                fn = self.intr(f"llvm.masked.gather.v64i{8 * size}.v64p0", vt, [pt, I32, VB, vt])
                got = b.call(fn, [ptrs, c32(1), mask, ir.Constant(vt, [ir.Constant(nt, 0)] * WAVE)])
                self.vset(f["vdst"], b.sext(got, V32) if signed else b.zext(got, V32), mask)
            else:
                fn = self.intr(f"llvm.masked.scatter.v64i{8 * size}.v64p0", ir.VoidType(), [vt, pt, I32, VB])
                b.call(fn, [b.trunc(self.vget(f["data"]), vt), ptrs, c32(1), mask])
            return
        at_k = [b.add(offs, self.splat(c64(4 * k), V64)) if k else offs for k in range(width)]
        if "_load_" in name:
            vals = self.load_dwords(self.mem, at_k, mask, exe)
            for k, val in enumerate(vals):  # (every value read before any register is written)
                self.vset(f["vdst"] + k, val, mask)
        elif width == 1:
            self.store_dwords(self.mem, offs, self.vget(f["data"]), mask, exe)
        else:
            for k in range(width):
                self.scatter(self.vget(f["data"] + k), self.host_ptrs(self.mem, at_k[k]), mask, 4)

    def ds(self, i: int, ins: Inst) -> None:
        b, f, name = self.b, ins.f, ins.name
        if name == "ds_bpermute_b32":  # each lane reads data0 of lane ((addr + offset) >> 2) & 63, inactive or not
            exe = self.exec64()
            self.count(i, K_LANES, self.popcount64(exe))
            off = f["offset0"] | f["offset1"] << 8
            sel = b.and_(b.lshr(b.add(b.zext(self.vget(f["addr"]), V64), self.splat(c64(off), V64)),
                                self.splat(c64(2), V64)), self.splat(c64(63), V64))
            src = b.bitcast(self.vptr(f["data0"]), I32P)
            ones = ir.Constant(VB, [ir.Constant(I1, 1)] * WAVE)
            got = self.gather(self.host_ptrs(src, b.shl(sel, self.splat(c64(2), V64))), ones, 4)
            self.vset(f["vdst"], got)
            return
        width = int(name.rsplit("_b", 1)[1]) // 32
        two = name.startswith(("ds_read2", "ds_write2"))
        if two:
            stride = (64 if "st64" in name else 1) * 4 * width
            offs = [f["offset0"] * stride, f["offset1"] * stride]
        else:
            offs = [f["offset0"] | f["offset1"] << 8]
        size = 4 * width
        exe = self.exec64()
        raw = self.vget(f["addr"])
        # 32-bit lane addresses (LDS addresses wrap at 32 bits): a lane is inside when a + size <= the LDS size,
        # that is a <= lds_bytes - size (no lane is when the LDS is smaller than one access)
        room = b.sub(self.lds_bytes, c64(size))
        too_small = b.icmp_signed("<", room, c64(0))
        room32 = b.trunc(b.select(b.icmp_signed(">", room, c64(M32)), c64(M32), b.select(too_small, c64(0), room)),
                         I32)
        ok = b.not_(b.and_(too_small, b.icmp_unsigned("!=", exe, c64(0))))
        mask = self.lane_mask(exe)
        k32 = lambda v: self.splat(c32(v), V32)  # noqa: E731
        room_v = self.splat(room32, V32)
        words = []  # per offset: each lane's first dword index
        for off in offs:
            a = b.add(raw, k32(off))
            bad = b.or_(b.icmp_unsigned(">", a, room_v), b.icmp_unsigned("!=", b.and_(a, k32(3)), k32(0)))
            anybad = b.call(self.intr("llvm.vector.reduce.or.v64i1", I1, [VB]), [b.and_(bad, mask)])
            ok = b.and_(ok, b.not_(anybad))
            words.append(b.lshr(a, k32(2)))
        self.need_reference(i, ok)
        self.count(i, K_LANES, self.popcount64(exe))
        self.count(i, K_BANK, self.bank_conflicts(i, raw, exe, offs, width))
        lds_base = self.lds
        # (byte offsets in 32 bits: every lane accessed passed the check, so they are below the LDS size)
        t4 = lambda w, k: b.shl(b.add(w, k32(k)), k32(2))  # noqa: E731
        if name in _DS_READ:
            vals = self.load_dwords(lds_base, [t4(w, k) for w in words for k in range(width)], mask, exe)
            for r, val in enumerate(vals):  # (every value read before any register is written)
                self.vset(f["vdst"] + r, val, mask)
        else:
            regs = [f["data0"], f["data1"]] if two else [f["data0"]]
            for w, reg in zip(words, regs, strict=True):
                for k in range(width):
                    if width == 1:
                        self.store_dwords(lds_base, t4(w, k), self.vget(reg + k), mask, exe)
                    else:
                        self.scatter(self.vget(reg + k), self.host_ptrs(lds_base, t4(w, k)), mask, 4)

    def bank_conflicts(self, i: int, raw: ir.Value, exe: ir.Value, offs: list[int], width: int) -> ir.Value:
        """The wave's LDS bank conflicts for this instruction. A pass's conflicts depend only on its lanes'
        addresses relative to each other (a shift by whole dwords moves every lane's banks alike), so the last
        pattern of each instruction is kept with its count (`memo`: valid, lane 0's address mod 4, EXEC, count,
        then the 64 relative addresses) and a wave with the same pattern reuses it, as the reference does."""
        b = self.b
        memo = b.gep(self.ptr(C_MEMO, I32P), [c64(i * MEMO_STRIDE)])
        a0 = b.extract_element(raw, c32(0))
        rel = b.sub(raw, self.splat(a0, V32))
        relp = b.bitcast(b.gep(memo, [c64(8)]), V32.as_pointer())
        same = b.and_(b.icmp_unsigned("==", b.load(memo), c32(1)),
                      b.icmp_unsigned("==", b.load(b.gep(memo, [c64(1)])), b.and_(a0, c32(3))))
        same = b.and_(same, b.icmp_unsigned("==", b.load(b.gep(memo, [c64(2)])), b.trunc(exe, I32)))
        same = b.and_(same, b.icmp_unsigned("==", b.load(b.gep(memo, [c64(3)])),
                                            b.trunc(b.lshr(exe, c64(32)), I32)))
        eq = b.call(self.intr("llvm.vector.reduce.and.v64i1", I1, [VB]),
                    [b.icmp_unsigned("==", b.load(relp, align=4), rel)])
        hit_bb, miss_bb, join = (self.fn.append_basic_block(f"bank{i}_{x}") for x in ("hit", "miss", "join"))
        b.cbranch(b.and_(same, eq), hit_bb, miss_bb)
        b.position_at_end(hit_bb)
        cached = b.zext(b.load(b.gep(memo, [c64(4)])), I64)
        b.branch(join)
        b.position_at_end(miss_bb)
        t = len(offs) * width
        words = b.bitcast(self.words, I32P)

        def fill(lane: ir.Value) -> None:
            a = b.zext(b.load(self.lane_ptr(self.insts[i].f["addr"], lane)), I64)
            for j, off in enumerate(offs):
                w = b.trunc(b.lshr(b.and_(b.add(a, c64(off)), c64(M32)), c64(2)), I32)
                for k in range(width):
                    b.store(b.add(w, c32(k)), b.gep(words, [b.add(b.mul(lane, c64(t)), c64(j * width + k))]))
        self.lane_loop(f"dw{i}", exe, fill)
        fresh = b.call(banks_fn(self.module), [words, exe, c64(t)])
        b.store(c32(1), memo)
        b.store(b.and_(a0, c32(3)), b.gep(memo, [c64(1)]))
        b.store(b.trunc(exe, I32), b.gep(memo, [c64(2)]))
        b.store(b.trunc(b.lshr(exe, c64(32)), I32), b.gep(memo, [c64(3)]))
        b.store(b.trunc(fresh, I32), b.gep(memo, [c64(4)]))
        b.store(rel, relp, align=4)
        miss_end = b.block
        b.branch(join)
        b.position_at_end(join)
        out = b.phi(I64)
        out.add_incoming(cached, hit_bb)
        out.add_incoming(fresh, miss_end)
        return out


def _is_float(name: str) -> bool:
    return name.endswith("_f32") or name in _F1_SFU or name.startswith("v_pk_")


def _sop2_ok(name: str) -> bool:
    if name in ("s_add_u32", "s_sub_u32", "s_addc_u32", "s_subb_u32", "s_add_i32", "s_sub_i32", "s_mul_i32",
                "s_mul_hi_u32", "s_mul_hi_i32", "s_min_i32", "s_max_i32", "s_min_u32", "s_max_u32",
                "s_cselect_b32", "s_cselect_b64", "s_lshl1_add_u32", "s_lshl2_add_u32", "s_lshl3_add_u32",
                "s_lshl4_add_u32"):
        return True
    if "_" not in name[2:]:
        return False
    op, wid = name[2:].rsplit("_", 1)
    return op in _SOP2_LOGIC and wid in ("b32", "b64") or op in ("lshl", "lshr") and wid in ("b32", "b64") or \
        op == "ashr" and wid in ("i32", "i64")


def _ovf32(b: ir.IRBuilder, r: ir.Value) -> ir.Value:
    return b.or_(b.icmp_signed(">", r, c64(0x7FFFFFFF)), b.icmp_signed("<", r, c64(-0x80000000)))


def _icmp(b: ir.IRBuilder, op: str, a: ir.Value, c: ir.Value, signed: bool) -> ir.Value:
    sym = {"eq": "==", "lg": "!=", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}[op]
    return b.icmp_signed(sym, a, c) if signed else b.icmp_unsigned(sym, a, c)
