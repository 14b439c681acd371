"""LLVM IR for a lowered kernel: one native function per basic block of the JIT's lowered form.

The JIT (`hw/jit.py`) has already split the kernel into basic blocks, found reconvergence points and
laid out the registers; this module turns each block's instructions into one function

    i32 b<k>(i8** regs, i8* mask, i64 n, i64* ctx)

that runs the block for the lanes of a chunk, instruction by instruction (instruction-major, like the
reference executor): every instruction loops over the active lanes before the next one starts. That
order is what makes a fault identical to the reference's: a memory instruction first checks every
active lane and, if any check fails, returns k + 1 *before* touching memory, so the caller re-runs the
rest of the block with the reference handlers from exactly the state the reference would be in.
Registers are the frame's own NumPy arrays (`regs[r]` points at register r's lane array), so the
reference's branch, divergence and barrier machinery runs unchanged around the native blocks.

Anything outside the supported subset raises `NativeUnsupported` with the opcode and PTX line; the
executor then runs the whole kernel on the reference executor.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.jit import JitFunction, Program, kernel_param_address, kernel_param_offset
from strata.hw.memory import GLOBAL_BASE, UVA_SLOTS
from strata.hw.native import (
    chunkcheck,
    codegen_atomics,
    codegen_float,
    codegen_int,
    codegen_warp,
    codegen_wmma,
    compiler,
    lanegroups,
    partial,
    runtime,
    warphelpers,
)
from strata.hw.ptx.ir import (
    NO_REGISTER_RESULT,
    FImm,
    Imm,
    Instruction,
    Mem,
    Pair,
    Reg,
    Sink,
    Sym,
    Vec,
    operand_registers,
    written_registers,
)

I1, I8, I16, I32, I64 = (ir.IntType(w) for w in (1, 8, 16, 32, 64))
F32, F64 = ir.FloatType(), ir.DoubleType()
I8P, I64P = I8.as_pointer(), I64.as_pointer()
BLOCK_TYPE = ir.FunctionType(I32, [I8P.as_pointer(), I8P, I64, I64P])

# ctx slots (an int64 array the executor fills per chunk)
CTX_MEM, CTX_NALLOC, CTX_STARTS, CTX_ENDS = 0, 1, 2, 3
CTX_SHARED, CTX_SHARED_SIZE, CTX_SHARED_LIMIT = 4, 5, 6
CTX_LPB, CTX_FIRST_BLOCK = 7, 8
CTX_BLOCK, CTX_GRID = 9, 12  # 3 each
CTX_PARAMS, CTX_PARAMS_LEN, CTX_COUNTERS = 15, 16, 17
CTX_SHARED_BASE = 18  # int64 per lane: where its block's shared memory starts (the reference's shared_base)
CTX_SPECIALS = 19  # pointer to one pointer per entry of `specials`: each a uint32 array, one value per lane
CTX_INVARIANTS = 20  # pointer to one int64 per entry of `invariants`: the launch's value of that register
CTX_PEER_BYTES = 21  # pointer to one int64 per unified-address slot: bytes of accesses to an enabled peer's memory
CTX_OWN_LO, CTX_OWN_HI = 22, 23  # the device's own address range [base, end); addresses outside are a peer's
# added to %ctaid.x's array: a 1-D grid passes the chunk-independent block-local index and its first block
# here (no per-chunk array to fill), other grids the chunk's own %ctaid.x and 0
CTX_CTAID_X_ADD = 24
# pointer to one int64 per entry of `symbols`: the device address of that module variable (__device__,
# __constant__). Read per launch, not baked into the code: addresses depend on allocation order, so a
# constant would make the cached object valid only in the process and load that produced it.
CTX_SYMBOLS = 25
CTX_BLOCKS = 26  # pointer to the kernel's block table, which the runtime library's driver runs (driver.block_table)
CTX_SIZE = 27
# lane-varying special registers come from the reference's own per-chunk arrays (Chunk.special); the rest
# (%ntid, %nctaid) are launch constants in ctx
LANE_SPECIALS = ("%tid", "%ctaid", "%laneid", "%warpid")
# counter slots (int64 array per launch; the executor adds them to Counters)
COUNTER_NAMES = ("global_load_bytes", "global_store_bytes", "global_load_sectors", "global_store_sectors",
                 "global_load_ideal_sectors", "global_store_ideal_sectors", "global_load_requests",
                 "global_store_requests", "shared_load_bytes", "shared_store_bytes", "shared_requests",
                 "shared_bank_conflicts", "atomic_ops")
_C = {n: i for i, n in enumerate(COUNTER_NAMES)}

WIDTH = {"pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "b32": 32, "u32": 32,
         "s32": 32, "f32": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64}
FLOATS = ("f32", "f64")
# ops that run through the reference handler in a block of their own (the JIT isolates barriers)
REFERENCE_BLOCK_OPS = frozenset({"bar", "barrier"})
NOOPS = frozenset({"membar", "fence", "nop"})
_DIVISIONS = frozenset({"udiv", "sdiv", "urem", "srem"})  # (integer: see KernelCodegen._latch)
_SPECIAL_BASES = ("%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid")
_ICMP_SIGNED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_ICMP_UNSIGNED = {"lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_FCMP = {"eq": ("oeq", True), "ne": ("one", True), "lt": ("olt", True), "le": ("ole", True),
         "gt": ("ogt", True), "ge": ("oge", True), "equ": ("ueq", False), "neu": ("une", False),
         "ltu": ("ult", False), "leu": ("ule", False), "gtu": ("ugt", False), "geu": ("uge", False),
         "num": ("ord", True), "nan": ("uno", False)}
CANON_NAN32 = 0x7FFFFFFF
_RINT = {"rni": "llvm.roundeven", "rzi": "llvm.trunc", "rmi": "llvm.floor", "rpi": "llvm.ceil"}


# opcodes whose operand 0, when a register (or vector/pair of them), is only written
_DEST_FIRST = frozenset({"mov", "cvta", "add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr", "neg",
                         "abs", "min", "max", "setp", "selp", "div", "rem", "fma", "cvt", "ld", "bfi"})


def _reads(ins: Instruction) -> list[str]:
    """Registers an instruction may read (its guard, sources, address bases). Conservative: for an
    opcode outside _DEST_FIRST every register it names counts (brx's index, a call's arguments, ...)."""
    dest_first = ins.opcode in _DEST_FIRST and ins.opcode not in NO_REGISTER_RESULT
    ops = ins.operands[1:] if dest_first else ins.operands
    out = [r for op in ops for r in operand_registers(op)]
    if dest_first and ins.operands and isinstance(ins.operands[0], Mem):
        out += operand_registers(ins.operands[0])
    if ins.guard is not None:
        out.append(ins.guard.name)
    return out


def _address_slice(segment: list[tuple[int, Instruction]]) -> set[int]:
    """The instructions of a segment its memory accesses' addresses and guards depend on (and the
    accesses themselves): everything a dry run needs to compute."""
    needed: set[str] = set()
    out: set[int] = set()
    for k, ins in reversed(segment):
        if ins.opcode in ("ld", "st") and "param" not in ins.mods:
            out.add(k)
            needed.update(_address_reads(ins))
        elif needed.intersection(written_registers(ins)):
            out.add(k)
            needed.update(_reads(ins))
    return out


def _is_shared(ins: Instruction) -> bool:
    return "shared" in ins.mods or "shared::cta" in ins.mods


def _address_reads(ins: Instruction) -> list[str]:
    """Registers a memory instruction's address and guard read (not the value it stores)."""
    mem = next((op for op in ins.operands if isinstance(op, Mem)), None)
    out = operand_registers(mem) if mem is not None else []
    if ins.guard is not None:
        out.append(ins.guard.name)
    return out


def launch_invariants(jf: JitFunction) -> dict[str, tuple[int, int]]:
    """Registers whose one definition loads a kernel parameter whole (`ld.param` of the register's width,
    unguarded), or copies one (`mov`, `cvta.to.global`): register -> (parameter buffer offset, bytes).
    Their value is the launch's: the executor writes it into their lane arrays once per launch (for the
    reference handlers) and passes it in ctx, so native code neither stores nor loads them per lane."""
    fn = jf.fn
    if not fn.is_entry:
        return {}
    writes: dict[str, int] = {}
    for ins in fn.body:
        for r in written_registers(ins):
            writes[r] = writes.get(r, 0) + 1
    out: dict[str, tuple[int, int]] = {}
    for ins in fn.body:
        ops = ins.operands
        if ins.guard is not None or len(ops) != 2 or not isinstance(ops[0], Reg) or writes.get(ops[0].name) != 1:
            continue
        dst = ops[0].name
        dt = jf.reg_storage.get(dst)
        types = _types(ins)
        if dt is None or dt.kind == "b" or len(types) != 1 or WIDTH[types[0]] != 8 * dt.itemsize:
            continue
        if ins.opcode == "ld" and set(_flags(ins)) == {"param"} and isinstance(ops[1], Mem) and \
                isinstance(ops[1].base, Sym):
            off = kernel_param_offset(fn, ops[1].base.name)
            if off is not None:
                out[dst] = (off + ops[1].offset, dt.itemsize)
        elif isinstance(ops[1], Reg) and ops[1].name in out and not ops[1].negated:
            flags = set(_flags(ins))
            if (ins.opcode == "mov" and not flags) or (ins.opcode == "cvta" and flags == {"to", "global"}):
                out[dst] = out[ops[1].name]
    return out


class NativeUnsupported(Exception):
    """The kernel uses something the native executor does not compile (the reason says what)."""


def lty(t: str) -> ir.Type:
    if t == "f32":
        return F32
    if t == "f64":
        return F64
    return ir.IntType(WIDTH[t])


def _types(ins: Instruction) -> list[str]:
    return [m for m in ins.mods if m in WIDTH]


def _flags(ins: Instruction) -> list[str]:
    return [m for m in ins.mods if m not in WIDTH]


def _release(module: ir.Module, more: list[ir.Function]) -> None:
    """Cut the reference cycles of a finished llvmlite module (its text is out) and of the functions `more`
    made for it: reference counting then frees their objects, instead of the cyclic collector finding them."""
    for fn in {id(f): f for f in [*module.functions, *more]}.values():
        for blk in fn.blocks:
            for ins in blk.instructions:
                ins.operands = []
                ins.parent = None
                if isinstance(ins, ir.PhiInstr):
                    ins.incomings = []
            blk.instructions = []
            blk.parent = None
        fn.blocks = []
        fn.args, fn.return_value = (), None
        fn.parent = None
    for md in module.metadata:
        md.operands = ()
    module.metadata = []
    module._metadatacache = {}
    module.globals.clear()


class KernelCodegen:
    """Builds the LLVM module of one kernel's native blocks."""

    def __init__(self, program: Program, jf: JitFunction, *, lane_groups: bool = False) -> None:
        self.program, self.jf, self.fn = program, jf, jf.fn
        self.lane_groups = lane_groups  # emit lanegroups' eight-lanes-at-a-time real runs (-O3 code only)
        self.module = ir.Module(name=f"strata_{jf.name}")
        # the blocks that call a shared body (_shared_block): straight-line glue, compiled apart without
        # optimization (compiler.compile_ir: MODULE_SPLIT)
        self.glue = ir.Module(name=f"strata_{jf.name}_glue")
        self.reg_index = {name: i for i, name in enumerate(jf.reg_storage)}
        self.reg_bits = {name: (8 if dt.kind == "b" else 8 * dt.itemsize) for name, dt in jf.reg_storage.items()}
        self._helpers: dict[str, ir.Function] = {}
        self.native_blocks: list[int] = []
        self.barrier_blocks: list[int] = []  # blocks of one bar.sync (the driver completes them when it can)
        self.specials: list[str] = []  # lane-varying special registers, in CTX_SPECIALS order
        self.symbols: list[str] = []  # module variables whose address the code reads, in CTX_SYMBOLS order
        # where each register is read (positions in the body): a register a segment writes and nothing
        # outside it reads need not be stored (see _segment)
        self.reads: dict[str, list[int]] = {}
        for pos, ins in enumerate(self.fn.body):
            for r in _reads(ins):
                self.reads.setdefault(r, []).append(pos)
        self.seg_local: set[str] = set()
        self.slots: dict[str, int] | None = None  # while emitting a shared block body: its slot table (_shared_block)
        self.peer_local: ir.Value | None = None  # the dry run's per-slot peer bytes (see _count_peer)
        self.invariants = launch_invariants(jf)
        self._inv_index = {r: k for k, r in enumerate(self.invariants)}
        # Alias scopes: each register's lane array, global memory, shared memory and the read-only
        # launch data (mask, specials, parameters) are distinct objects, which LLVM cannot see through
        # the pointer tables; telling it lets the lane loops vectorize (gathers and scatters included).
        self._scopes: dict[str, Any] = {}
        self._domain = self.module.add_metadata([ir.MetaDataString(self.module, "strata.lanes")])
        self._tagged: list[tuple[Any, str]] = []  # (load or store, scope), given their lists by _finish_tags
        self._novec: Any = None  # the loop attribute that turns vectorization off (see _latch)
        self._functions: list[ir.Function] = []  # every block function made, for _release

    def tag(self, instr: Any, scope: str) -> Any:
        """Mark a load or store as touching only `scope`: a register's lane array (`r:<name>`), global memory
        (`mem`), shared memory (`shm`) or the read-only launch data (`aux`). The metadata is set when the
        module is done (_finish_tags)."""
        self._tagged.append((instr, scope))
        return instr

    def _finish_tags(self) -> None:
        """Each tagged access's `alias.scope` (its own scope) and `noalias` (every other scope its function's
        accesses use): the facts LLVM needs, function by function, since block functions are never inlined into
        each other. Lists naming every scope of the kernel grew with the square of its registers: a GEMM of 1,500
        registers spent more than half its IR text on them, and each alias query walked a list of 1,500."""
        by_fn: dict[int, list[tuple[Any, str]]] = {}
        for instr, scope in self._tagged:
            fn = instr.parent.parent
            if self.module.globals.get(fn.name) is fn:  # (not a function partial.py dropped half-built)
                by_fn.setdefault(id(fn), []).append((instr, scope))
        for pairs in by_fn.values():
            used = sorted({scope for _instr, scope in pairs})
            for name in used:
                if name not in self._scopes:
                    self._scopes[name] = self.module.add_metadata([ir.MetaDataString(self.module, name),
                                                                   self._domain])
            lists = {name: (self.module.add_metadata([self._scopes[name]]),
                            self.module.add_metadata([self._scopes[o] for o in used if o != name]) if len(used) > 1
                            else None) for name in used}
            for instr, scope in pairs:
                own, others = lists[scope]
                instr.set_metadata("alias.scope", own)
                if others is not None:
                    instr.set_metadata("noalias", others)
        self._tagged = []

    # ---------------------------------------------------------------------------------------------
    def build(self) -> str:
        """Compile every block; returns the module's IR text. A block it cannot compile runs on the
        reference handlers (partial.py; `reference_blocks` says why); raises NativeUnsupported when no
        block is native. The module is spent afterwards (its IR objects are released)."""
        # llvmlite's IR objects point at each other (instruction <-> block <-> function <-> module): a kernel's
        # module is hundreds of thousands of objects in reference cycles, which the cyclic collector scanned
        # again and again while they were built and then had to find as garbage: about 40% of the IR
        # generation's time. It stays off while the module is built (the build allocates no other garbage
        # worth collecting), and the cycles are cut afterwards, so reference counting frees the objects at once.
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._build()
        finally:
            _release(self.module, self._functions)
            _release(self.glue, [])
            self._functions = []
            self.dry_mems: dict[int, MemDesc] = {}  # (its accesses' counting state points back at self)
            if enabled:
                gc.enable()

    def _build(self) -> str:
        body = self.fn.body
        self.reference_blocks: dict[int, str] = {}
        keys: dict[int, tuple[Any, list[str]]] = {}
        uses: dict[Any, int] = {}
        for b, blk in enumerate(self.jf.blocks):
            ins_list = body[blk.start: blk.start + len(blk.ops)]
            if ins_list and not any(i.opcode in REFERENCE_BLOCK_OPS for i in ins_list):
                keys[b] = self._block_key(blk.start, ins_list)
                uses[keys[b][0]] = uses.get(keys[b][0], 0) + 1
        self._templates: dict[Any, ir.Function | None] = {}  # block key -> its shared body (None: not native)
        for b, blk in enumerate(self.jf.blocks):
            ins_list = body[blk.start: blk.start + len(blk.ops)]
            if not ins_list:
                continue
            if b in keys and uses[keys[b][0]] > 1:
                self.blk_start = blk.start
                if self._shared_block(b, ins_list, *keys[b]):
                    self.native_blocks.append(b)
                    continue
            if any(i.opcode in REFERENCE_BLOCK_OPS for i in ins_list):
                try:
                    for i in ins_list:
                        self._check_barrier(i)
                except NativeUnsupported as e:
                    self.reference_blocks[b] = str(e)
                    continue
                self.barrier_blocks.append(b)
                continue
            self.blk_start = blk.start
            why, native = partial.compile_block(self, b, ins_list)
            if native:
                self.native_blocks.append(b)
            if why is not None:
                self.reference_blocks[b] = why
        if self.reference_blocks and not self.native_blocks:
            raise NativeUnsupported(next(iter(self.reference_blocks.values())))
        self.serial = partial.serial_reason(body, self.program.module)
        runtime.declare_shared(self.module)  # (defined once, in the runtime library's object)
        self._finish_tags()
        text = str(self.module)
        if self.glue.functions:
            text += f"\n{compiler.MODULE_SPLIT}\n{self.glue}"
        return text

    def _block_key(self, start: int, ins_list: list[Instruction]) -> tuple[Any, list[str]]:
        """What block `ins_list` (at `start` in the body) compiles to, up to which registers it names: its
        instructions with each lane-array register replaced by its order of first appearance, and per
        register every fact the code generator reads besides the instructions (type, storage, launch-invariant
        slot, uniform scalar, where the kernel reads it). Blocks with equal keys compile to the same code over
        different registers. Returns (key, the block's registers in that order)."""
        order: dict[str, int] = {}

        def canon(o: Any) -> Any:
            if isinstance(o, Reg):
                if o.name in self.fn.regs:
                    return ("R", order.setdefault(o.name, len(order)), o.negated)
                return ("N", o.name, o.negated)  # a special register (%tid.x, ...): by name
            if isinstance(o, tuple):
                return tuple(canon(x) for x in o)
            if dataclasses.is_dataclass(o):
                return (type(o).__name__, *(canon(getattr(o, f.name)) for f in dataclasses.fields(o)))
            return o

        def param(ins: Instruction, o: Any) -> Any:  # ld.param's parameter: by its order too (its offset is passed)
            if ins.opcode == "ld" and "param" in ins.mods and isinstance(o, Mem) and isinstance(o.base, Sym) and \
                    self.fn.is_entry and kernel_param_offset(self.fn, o.base.name) is not None:
                return ("P", order.setdefault("param:" + o.base.name, len(order)), o.offset)
            return canon(o)
        code = tuple((ins.opcode, ins.mods, tuple(param(ins, o) for o in ins.operands), canon(ins.guard))
                     for ins in ins_list)
        end = start + len(ins_list)
        scalars = self._scalar_registers()
        facts: list[tuple[Any, ...]] = []
        for name in order:
            if name.startswith("param:"):
                facts.append(("param",))
                continue
            reads = self.reads.get(name, ())
            facts.append((self.fn.regs[name], self.reg_bits.get(name), self.reg_index.get(name) is not None,
                          name in self._inv_index, name in scalars,
                          tuple(p - start for p in reads if start <= p < end),
                          any(not start <= p < end for p in reads)))
        return (code, tuple(facts)), list(order)

    def _shared_block(self, b: int, ins_list: list[Instruction], key: Any, regs: list[str]) -> bool:
        """Block b as a call of the code its key shares with other blocks of the kernel (see _block_key).

        The shared body `strata_shared_<n>` is compiled once, over a table in the key's register order
        instead of the frame's list of lane arrays (`reg_ptr` reads through `reg_index`, `slots`): per register
        its lane array, or for a launch invariant its index in ctx's table of values; per ld.param parameter
        its offset in the parameter buffer. `b<b>`, in the glue module (compiled without optimization:
        compiler.compile_ir), fills the table and calls the body. LLVM's cost follows the number of functions
        it optimizes (about 5 ms for a lane loop of a few instructions), so a kernel whose blocks repeat (the
        framework's unrolled loop over 32 dimensions, a GEMM's tile loads) now compiles each distinct block
        once: the GEMM of the transformer step 2.5-3x faster. False when the body is not wholly native (the
        block then takes the usual path, partial.py)."""
        tmpl = self._templates.get(key, False)
        if tmpl is False:
            name = f"strata_shared_{len(self._templates)}"
            saved = self.reg_index
            # (an invariant's slot holds its index, not a lane array: reg_ptr on it fails, as without storage)
            self.reg_index = {r: j for j, r in enumerate(regs) if r in saved and r not in self._inv_index}
            self.slots = {r: j for j, r in enumerate(regs)}
            try:
                self._block(b, ins_list, name=name)
                tmpl = self.module.globals[name]
                tmpl.attributes.add("noinline")  # (compiled once, called by every block of the key)
            except NativeUnsupported:
                partial._drop(self, name)
                tmpl = None
            finally:
                self.reg_index = saved
                self.slots = None
            self._templates[key] = tmpl
        if tmpl is None:
            return False
        callee = self.glue.globals.get(tmpl.name)
        if callee is None:
            callee = ir.Function(self.glue, BLOCK_TYPE, name=tmpl.name)
        fn = ir.Function(self.glue, BLOCK_TYPE, name=f"b{b}")
        regs_arg, mask, n, ctx = fn.args
        bld = ir.IRBuilder(fn.append_basic_block("entry"))
        table = bld.alloca(I8P, max(len(regs), 1))
        for j, r in enumerate(regs):
            if r.startswith("param:"):  # its offset in the parameter buffer
                v = ir.Constant(I64, kernel_param_offset(self.fn, r[len("param:"):])).inttoptr(I8P)
            elif r in self._inv_index:  # its index in ctx's table of invariant values
                v = ir.Constant(I64, self._inv_index[r]).inttoptr(I8P)
            elif r in self.reg_index:  # its lane array
                v = bld.load(bld.gep(regs_arg, [ir.Constant(I64, self.reg_index[r])]))
            else:
                continue
            bld.store(v, bld.gep(table, [ir.Constant(I64, j)]))
        bld.ret(bld.call(callee, [table, mask, n, ctx]))
        return True

    def _check_barrier(self, ins: Instruction) -> None:
        if ins.opcode not in REFERENCE_BLOCK_OPS:
            raise NativeUnsupported(f"{ins.full_opcode} beside a barrier (PTX line {ins.line})")
        flags = set(_flags(ins))
        if not flags <= {"sync", "aligned", "cta"} or "sync" not in flags or len(ins.operands) != 1 or \
                not isinstance(ins.operands[0], Imm):
            raise NativeUnsupported(f"{ins.full_opcode} (only bar.sync/barrier.sync with a constant id, "
                                    f"PTX line {ins.line})")

    def _block(self, b: int, ins_list: list[Instruction], tail: int = 0, name: str | None = None) -> None:
        """Block b's function over ins_list (named `name`, b<b> by default); it returns `tail` at the end
        (partial.py: k + 1 makes the reference handlers run the block's ops from k on)."""
        fn = ir.Function(self.module, BLOCK_TYPE, name=name or f"b{b}")
        self._functions.append(fn)  # (partial.py may drop it from the module: _release still finds it)
        self.f = fn
        self.regs_arg, self.mask_arg, self.n_arg, self.ctx_arg = fn.args
        for a in (self.regs_arg, self.mask_arg, self.ctx_arg):
            a.add_attribute("noalias")
        entry = fn.append_basic_block("entry")
        self.bld = ir.IRBuilder(entry)
        # A chunk's lanes are whole warps (engine.Chunk pads each block to a multiple of 32): saying so lets the
        # vectorizer drop the scalar remainder of every lane loop (about a tenth of a kernel's code and compile time)
        self.n_arg = self.bld.and_(self.n_arg, ir.Constant(I64, -32))
        self.bail_block = fn.append_basic_block("bail")
        self.bail_phi_pending: list[tuple[ir.Block, int]] = []
        # hoist the register pointers and ctx loads: every lane loop reuses them
        self._ptr_cache: dict[str, ir.Value] = {}
        self._ctx_cache: dict[int, ir.Value] = {}
        self._special_ptr: dict[str, ir.Value] = {}
        self._symbol_cache: dict[str, ir.Value] = {}
        self._inv_cache: dict[str, ir.Value] = {}
        self._slot_cache: dict[int, ir.Value] = {}
        self._hoisting = False
        self.seg_vals: dict[str, ir.Value] | None = None
        self.cur_guard: ir.Value | None = None
        self.dry = False
        self._param_vals: dict[int, list[ir.Value]] = {}  # ld.param at op k: its values, loaded before the loops
        self.chunk_mode = False  # emitting the dry run's whole-chunk pass (chunkcheck)
        self.chunk_facts: dict[int, Any] = {}  # the last chunk pass's facts per leader access (chunkcheck)
        self.linear: dict[int, Any] | None = None  # while emitting a real run at lane-indexed addresses
        self.groups: Any = None  # while emitting a real run eight lanes at a time (lanegroups.run)
        # Segments: runs of instructions fused lane by lane. Lanes only interact through memory, so a
        # segment holds any number of loads or a single store (never both): then running it lane by lane
        # gives what running it instruction by instruction over all lanes gives.
        # A segment also ends before a memory instruction whose address or guard depends on a value loaded
        # in the same segment (a gather through loaded indices): the dry run computes addresses without
        # loading anything (an unchecked address must never be dereferenced), so every address and guard
        # it needs must come from registers the segment did not load.
        # A segment may end with one store after its loads (never a load after the store): run lane by
        # lane, that equals the reference's order unless a lane's store reaches a later lane's load, which
        # the dry run rules out for the chunk (see _fusion_check) or, for a store and loads in shared
        # memory, the segment is split before the store.
        segment: list[tuple[int, Instruction]] = []
        has_mem = has_store = shared_load = False
        tainted: set[str] = set()
        for k, ins in enumerate(ins_list):
            if ins.opcode in NOOPS:
                continue
            if ins.opcode == "shfl":  # lanes read each other's registers: all of them, before any writes
                self._segment(segment)
                segment, has_mem, has_store, shared_load = [], False, False, False
                tainted = set()
                self._shfl(k, ins)
                continue
            if ins.opcode in ("atom", "red") or ins.opcode in codegen_warp.OPCODES or \
                    ins.opcode in codegen_wmma.OPCODES:  # segments of their own
                self._segment(segment)
                segment, has_mem, has_store, shared_load = [], False, False, False
                tainted = set()
                emitter = codegen_atomics if ins.opcode in ("atom", "red") else \
                    codegen_wmma if ins.opcode in codegen_wmma.OPCODES else codegen_warp
                emitter.emit(self, k, ins)
                continue
            reads = _reads(ins)
            if ins.opcode in ("ld", "st") and not any(m == "param" for m in ins.mods):
                store = ins.opcode == "st"
                shared = _is_shared(ins)
                if has_store or (store and has_mem and shared and shared_load) or \
                        tainted.intersection(_address_reads(ins)):
                    self._segment(segment)
                    segment, has_mem, has_store, shared_load = [], False, False, False
                    tainted = set()
                has_mem, has_store = True, has_store or store
                shared_load = shared_load or (shared and not store)
                if not store:
                    tainted.update(written_registers(ins))
            elif tainted.intersection(reads):
                tainted.update(written_registers(ins))
            else:
                tainted.difference_update(written_registers(ins))
            segment.append((k, ins))
        self._segment(segment)
        self.bld.ret(ir.Constant(I32, tail))
        bb = ir.IRBuilder(self.bail_block)
        if self.bail_phi_pending:
            phi = bb.phi(I32)
            for blk, code in self.bail_phi_pending:
                phi.add_incoming(ir.Constant(I32, code), blk)
            bb.ret(phi)
        else:
            bb.ret(ir.Constant(I32, 0))

    # -- small helpers ------------------------------------------------------------------------------
    def fail(self, why: str = "") -> NativeUnsupported:
        ins = self.ins
        return NativeUnsupported(f"{ins.full_opcode}{(' ' + why) if why else ''} (PTX line {ins.line})")

    def hoist(self, make: Callable[[], ir.Value]) -> ir.Value:
        """Emit `make()` in the entry block (before its terminator), so every loop reuses the value."""
        if self._hoisting:
            return make()
        bld = self.bld
        saved = bld.block
        entry = self.f.entry_basic_block
        if entry.is_terminated:
            bld.position_before(entry.terminator)
        else:
            bld.position_at_end(entry)
        self._hoisting = True
        try:
            return make()
        finally:
            self._hoisting = False
            bld.position_at_end(saved)  # code is always appended at the end of the current block

    def ctx(self, i: int) -> ir.Value:
        v = self._ctx_cache.get(i)
        if v is None:
            v = self.hoist(lambda: self.bld.load(self.bld.gep(self.ctx_arg, [ir.Constant(I64, i)])))
            self._ctx_cache[i] = v
        return v

    def reg_ptr(self, name: str) -> ir.Value:
        p = self._ptr_cache.get(name)
        if p is None:
            if name not in self.reg_index:
                raise self.fail(f"register {name} has no storage")
            bld = self.bld

            def make() -> ir.Value:
                raw = bld.load(bld.gep(self.regs_arg, [ir.Constant(I64, self.reg_index[name])]))
                return bld.bitcast(raw, ir.IntType(self.reg_bits[name]).as_pointer())
            p = self.hoist(make)
            self._ptr_cache[name] = p
        return p

    def lane_loop(self, body: Callable[[ir.Value], None], guard: Any = None) -> None:
        """for i < n: if mask[i] (and the guard predicate): body(i)."""
        bld = self.bld
        pre = bld.block
        head = self.f.append_basic_block()
        check = self.f.append_basic_block()
        work = self.f.append_basic_block()
        nxt = self.f.append_basic_block()
        done = self.f.append_basic_block()
        bld.branch(head)
        bld.position_at_end(head)
        i = bld.phi(I64)
        i.add_incoming(ir.Constant(I64, 0), pre)
        bld.cbranch(bld.icmp_signed("<", i, self.n_arg), check, done)
        bld.position_at_end(check)
        act = self.active(i, guard)
        bld.cbranch(act, work, nxt)
        bld.position_at_end(work)
        first = len(self.f.blocks) - 3  # (work, next, done: the body's blocks are `work` and those after)
        body(i)
        bld.branch(nxt)
        bld.position_at_end(nxt)
        i2 = bld.add(i, ir.Constant(I64, 1))
        i.add_incoming(i2, nxt)
        self._latch(bld.branch(head), first)
        bld.position_at_end(done)

    def _latch(self, br: Any, first: int) -> None:
        """Mark a masked lane loop's back edge `br` not to be vectorized when its body (the function's blocks
        from index `first` on) divides integers: x86 has no vector integer division, so under the mask test the
        vectorizer would emit a predicated scalar division per vector lane (8 blocks for each), which runs no
        faster than the scalar loop, and LLVM spent about a fifth of an elementwise kernel's compile time
        optimizing and emitting them (kernels with 32 shape parameters divide indices in most blocks). Unmasked
        loops (the lane-indexed real run, the dry run's warps) keep the vectorizer: a division there is
        scalarized without predication while the rest of the loop stays vector."""
        for blk in self.f.blocks[first:]:
            if any(getattr(ins, "opname", "") in _DIVISIONS for ins in blk.instructions):
                break
        else:
            return
        if self._novec is None:
            self._novec = self.module.add_metadata([ir.MetaDataString(self.module, "llvm.loop.vectorize.enable"),
                                                    ir.Constant(ir.IntType(1), 0)])
        self.loop_hints(br, [self._novec])

    def loop_hints(self, br: Any, hints: list[Any]) -> None:
        """Give the loop whose back edge is `br` these `llvm.loop` properties."""
        # A loop ID is a distinct node naming itself first (llvmlite has no `distinct`: a self-reference is)
        loop_id = ir.values.MDValue(self.module, [], name=str(len(self.module.metadata)))
        loop_id.operands = (loop_id, *hints)
        br.set_metadata("llvm.loop", loop_id)

    def _shfl(self, k: int, ins: Instruction) -> None:
        """shfl.sync.{up,down,bfly,idx}.b32 d[|p], a, b, c, membermask, as the reference's: each active lane
        reads `a` of its source lane (whether that lane is active or not: the register's lane array; a
        register the reference keeps as a uniform scalar gives that value), the source from the PTX
        pseudo-code (clamp and segment mask in c; out of range: the lane itself, p false). Warp by warp,
        every source is read before any lane writes (d may be a)."""
        self.k, self.ins = k, ins
        fl = _flags(ins)
        modes = [m for m in fl if m in ("up", "down", "bfly", "idx")]
        nops = 5 if "sync" in fl else 4
        if len(modes) != 1 or set(fl) - {modes[0], "sync"} or _types(ins) != ["b32"] or len(ins.operands) != nops:
            raise self.fail()
        mode = modes[0]
        dst, a_op, b_op, c_op = ins.operands[:4]
        d_op, p_op = (dst.first, dst.second) if isinstance(dst, Pair) else (dst, None)
        if isinstance(a_op, Reg) and (a_op.negated or a_op.name not in self.fn.regs):
            raise self.fail("source operand")
        scalar = isinstance(a_op, Reg) and a_op.name in self._scalar_registers()
        bld = self.bld
        self.seg_local = set()
        tmp = self.entry_alloca(I32, 32)
        c31 = ir.Constant(I32, 31)

        def warp(w: ir.Value) -> None:
            if not scalar:
                def gather(j: ir.Value) -> None:
                    bld.store(self.read(a_op, "b32", bld.add(bld.mul(w, ir.Constant(I64, 32)), j)), bld.gep(tmp, [j]))
                self._count_loop(ir.Constant(I64, 32), gather)

            def lane(j: ir.Value) -> None:
                i = bld.add(bld.mul(w, ir.Constant(I64, 32)), j)
                with bld.if_then(self.active(i, ins.guard)):
                    self.i = i
                    lane32 = bld.trunc(j, I32)
                    bv = bld.and_(self.read(b_op, "b32", i), c31)
                    cv = self.read(c_op, "b32", i)
                    clamp, seg = bld.and_(cv, c31), bld.and_(bld.lshr(cv, ir.Constant(I32, 8)), c31)
                    max_lane = bld.or_(bld.and_(lane32, seg), bld.and_(clamp, bld.and_(bld.not_(seg), c31)))
                    if mode == "up":
                        src = bld.sub(lane32, bv)
                        ok = bld.icmp_signed(">=", src, max_lane)
                    elif mode == "down":
                        src = bld.add(lane32, bv)
                        ok = bld.icmp_signed("<=", src, max_lane)
                    elif mode == "bfly":
                        src = bld.xor(lane32, bv)
                        ok = bld.icmp_signed("<=", src, max_lane)
                    else:
                        src = bld.or_(bld.and_(lane32, seg), bld.and_(bv, bld.and_(bld.not_(seg), c31)))
                        ok = bld.icmp_signed("<=", src, max_lane)
                    src = bld.select(ok, src, lane32)
                    if not isinstance(d_op, Sink):
                        val = self.read(a_op, "b32", i) if scalar else bld.load(bld.gep(tmp, [bld.zext(src, I64)]))
                        self.write(d_op, "b32", val, i)
                    if p_op is not None and not isinstance(p_op, Sink):
                        self.write(p_op, "pred", ok, i)
            self._count_loop(ir.Constant(I64, 32), lane)
        self._count_loop(bld.sdiv(self.n_arg, ir.Constant(I64, 32)), warp)

    def _scalar_registers(self) -> set[str]:
        """Registers the reference keeps as one uniform scalar (the JIT wrapped their definition)."""
        got = self.__dict__.get("_scalars")
        if got is None:
            got = set()
            for blk in self.jf.blocks:
                for k, (op, _exact) in enumerate(blk.ops):
                    if getattr(op, "__name__", "") == "run_uniform":
                        ins = self.fn.body[blk.start + k]
                        if ins.operands and isinstance(ins.operands[0], Reg):
                            got.add(ins.operands[0].name)
            self._scalars = got
        return got

    def _segment(self, segment: list[tuple[int, Instruction]]) -> None:
        """Emit one segment. With memory instructions, a dry run goes first: every lane computes its
        addresses (through the segment's arithmetic and loads, storing nothing) and checks them, warp by
        warp, keeping the memory counters aside. Any failed check returns the segment's first
        instruction + 1 before anything was written, so the reference handlers run the rest of the block
        from exactly the reference's state and report the fault (or the access it handles and we don't:
        a warp spread over several allocations, generic windows) themselves. Then the real run, lane by
        lane, without checks."""
        if not segment:
            return
        self.k, self.ins = segment[0]
        self.seg_first = segment[0][0]
        self.seg_local = self._local_registers(segment)
        mems: list[tuple[int, MemDesc]] = []
        for k, ins in segment:
            self.k, self.ins = k, ins
            if ins.opcode == "ld" and "param" in ins.mods:
                self._ld_param_check(ins)
            elif ins.opcode in ("ld", "st"):
                mems.append((k, self._mem_desc(ins)))
        by_k = dict(mems)
        fast, planned, groups_ok = self._dry_run(segment, by_k) if mems else (None, {}, None)
        self.dry = False

        def per_warp_checked() -> None:
            """The real run after the warp-by-warp dry run: eight lanes at a time when it saw every planned
            access follow its pattern (lanegroups), else lane by lane under the mask."""
            if not planned:
                self.lane_loop(lambda i: self._lanes_body(segment, i), None)
                return
            with self.bld.if_else(self.bld.load(groups_ok)) as (then, other):
                with then:
                    lanegroups.run(self, segment, planned, by_k)
                with other:
                    self.lane_loop(lambda i: self._lanes_body(segment, i), None)

        if fast is None:
            per_warp_checked()
            return
        # the dry run's whole-chunk check passed: every lane runs, at addresses following the lane index
        # (chunkcheck), which LLVM can see when they are written so: plain vector loads and stores
        with self.bld.if_else(fast) as (then, other):
            with then:
                self.linear = self.chunk_facts
                try:
                    self._count_loop(self.n_arg, lambda i: self._lanes_body(segment, i))
                finally:
                    self.linear = None
            with other:
                per_warp_checked()

    def _local_registers(self, segment: list[tuple[int, Instruction]]) -> set[str]:
        """Registers whose every read is inside the segment, after the segment's first write of them:
        their values never leave the segment, so the real run keeps them in SSA values only. (A failed
        dry run hands the segment to the reference from its start, which recomputes them too.)"""
        lo, hi = self.blk_start + segment[0][0], self.blk_start + segment[-1][0]
        first: dict[str, int] = {}
        for k, ins in segment:
            for r in written_registers(ins):
                first.setdefault(r, self.blk_start + k)
        return {r for r, w in first.items() if all(lo <= p <= hi and p > w for p in self.reads.get(r, ()))}

    def _lanes_body(self, segment: list[tuple[int, Instruction]], i: ir.Value) -> None:
        self.seg_vals = {}
        self.i = i
        needed = _address_slice(segment) if self.dry else None
        try:
            for k, ins in segment:
                if needed is not None and k not in needed:
                    continue  # the dry run computes addresses only: what they do not depend on is left out
                self.k, self.ins = k, ins
                self.cur_guard = None
                if ins.guard is not None:
                    g = self.read(Reg(ins.guard.name), "pred", i)
                    self.cur_guard = self.bld.not_(g) if ins.guard.negated else g
                self._instruction(ins)
        finally:
            self.seg_vals = None
            self.cur_guard = None

    def _dry_run(self, segment: list[tuple[int, Instruction]], mems: dict[int, MemDesc]
                 ) -> tuple[ir.Value | None, dict[int, int], ir.Value | None]:
        """Warp by warp: a branch-free lane loop computes every access's address (nothing is loaded or
        stored) and reduces it to the warp's min, max, OR and count of taking part lanes; then one check
        per access and warp (alignment from the OR; one allocation holding [min, max + size), found
        through the access's last hit or a binary search), and the warp's counters. A failed check sends
        the whole segment to the reference (which reports a fault, or serves lanes spread over several
        allocations). Returns (the whole-chunk check's i1 when it was emitted, the leaders lanegroups
        planned, and the i1 slot saying every warp followed their plan)."""
        bld = self.bld
        local = self.entry_alloca(I64, len(COUNTER_NAMES))
        warphelpers.clear(self, local, len(COUNTER_NAMES))
        # peer traffic, per unified slot, kept aside like the counters: a bail leaves it to the reference
        peer = any(d.space == "global" for d in mems.values())
        self.peer_local = self.entry_alloca(I64, UVA_SLOTS) if peer else None
        if self.peer_local is not None:
            warphelpers.clear(self, self.peer_local, UVA_SLOTS)
        self._group(segment, mems)
        for d in mems.values():
            d.stats = WarpStats(self) if d.leader is None else d.leader.stats
            if d.leader is None:
                d.hit_lo, d.hit_hi = self.entry_alloca(I64), self.entry_alloca(I64)
                d.hit_slot = self.entry_alloca(I64)  # (set with the first hit: the empty range above misses)
                bld.store(ir.Constant(I64, 1), d.hit_lo)
                bld.store(ir.Constant(I64, 0), d.hit_hi)
                bld.store(ir.Constant(I64, -1), d.hit_slot)
                d.red = [self.entry_alloca(I64) for _ in range(4)]  # min, max, OR of addresses; lanes
                d.dev = [self.entry_alloca(I64) for _ in range(2)]  # min, max of address - lane * size
        self.dry = True
        self.dry_mems = mems
        planned = lanegroups.plan(self, segment, mems)
        groups_ok = self.entry_alloca(I1) if planned else None
        if groups_ok is not None:
            bld.store(ir.Constant(I1, 1), groups_ok)

        def warp(w: ir.Value) -> None:
            self.dry_warp = w
            for d in mems.values():  # (every lane writes its key and part: no reset of the stats)
                for slot, v in zip(d.red + d.dev, (-1, 0, 0, 0, -1, 0) if d.red else (), strict=True):
                    bld.store(ir.Constant(I64, v), slot)

            def lane(j: ir.Value) -> None:
                i = bld.add(bld.mul(w, ir.Constant(I64, 32)), j)
                mv = self.tag(bld.load(bld.gep(self.mask_arg, [i])), "aux")
                self.dry_act = bld.icmp_unsigned("!=", mv, ir.Constant(I8, 0))
                self._lanes_body(segment, i)
            self._count_loop(ir.Constant(I64, 32), lane)
            for d in mems.values():
                if d.leader is None:
                    self._warp_check(d)
                    if fusion:
                        self._chunk_range(d)
            if planned:
                lanegroups.check_warp(self, planned, mems, groups_ok)
            for d in mems.values():
                d.stats.finish(d, local)
            if fusion and store is not None:
                self._increasing(store, inc_ok, prev)
        store = next((d for d in mems.values() if not d.load), None)
        fusion = [d for d in mems.values() if d.load and store is not None and d.space == store.space == "global"]
        inc_ok, prev = self.entry_alloca(I1), self.entry_alloca(I64)
        if fusion:
            bld.store(ir.Constant(I1, 1), inc_ok)
            bld.store(ir.Constant(I64, -1), prev)
            for d in mems.values():
                if d.leader is None:
                    d.chunk_lo, d.chunk_hi = self.entry_alloca(I64), self.entry_alloca(I64)
                    bld.store(ir.Constant(I64, -1), d.chunk_lo)
                    bld.store(ir.Constant(I64, 0), d.chunk_hi)
        warps = bld.sdiv(self.n_arg, ir.Constant(I64, 32))
        fast = None
        if chunkcheck.eligible(self, mems):  # one check per access and chunk when it can (chunkcheck)
            fast, facts = chunkcheck.chunk_pass(self, segment, mems)
            self.chunk_facts = facts
            with bld.if_else(fast) as (then, other):
                with then:
                    chunkcheck.closed_form(self, mems, facts, local, bool(fusion), inc_ok)
                with other:
                    self._count_loop(warps, warp)
        else:
            self._count_loop(warps, warp)
        if fusion and store is not None:
            self._fusion_check(fusion, store, inc_ok)
        self.dry = False
        bld.call(warphelpers.add_into(self), [bld.inttoptr(self.ctx(CTX_COUNTERS), I64P), local,
                                              ir.Constant(I64, len(COUNTER_NAMES))])
        if self.peer_local is not None:
            bld.call(warphelpers.add_into(self), [bld.inttoptr(self.ctx(CTX_PEER_BYTES), I64P), self.peer_local,
                                                  ir.Constant(I64, UVA_SLOTS)])
        return fast, planned, groups_ok

    def _chunk_range(self, d: MemDesc) -> None:
        """Widen the chunk-wide byte range [lo, hi) of a leader's group by this warp's accesses."""
        bld = self.bld
        mn_p, mx_p, _, c_p = d.red
        with bld.if_then(bld.icmp_signed(">", bld.load(c_p), ir.Constant(I64, 0))):
            lo = bld.add(bld.load(mn_p), ir.Constant(I64, d.span[0]))
            hi = bld.add(bld.load(mx_p), ir.Constant(I64, d.span[1] + d.nbytes))
            umin = self.intrinsic("llvm.umin.i64", I64, [I64, I64])
            umax = self.intrinsic("llvm.umax.i64", I64, [I64, I64])
            bld.store(bld.call(umin, [bld.load(d.chunk_lo), lo]), d.chunk_lo)
            bld.store(bld.call(umax, [bld.load(d.chunk_hi), hi]), d.chunk_hi)

    def _increasing(self, store: MemDesc, ok: ir.Value, prev: ir.Value) -> None:
        """Whether the store's lanes, in lane order, write strictly increasing, consecutive-per-warp
        addresses so far (so no two lanes store to overlapping bytes)."""
        bld = self.bld
        out = store.stats.out
        c, mn, mx, lin = (bld.load(bld.gep(out, [ir.Constant(I64, k)])) for k in range(4))
        with bld.if_then(bld.icmp_signed(">", c, ir.Constant(I64, 0))):
            p = bld.load(prev)
            after = bld.or_(bld.icmp_signed("==", p, ir.Constant(I64, -1)), bld.icmp_unsigned(">", mn, p))
            good = bld.and_(after, bld.icmp_unsigned("!=", lin, ir.Constant(I64, 0)))
            bld.store(bld.and_(bld.load(ok), good), ok)
            bld.store(mx, prev)

    def _fusion_check(self, loads: list[MemDesc], store: MemDesc, inc_ok: ir.Value) -> None:
        """A store fused after global loads: run lane by lane only if no lane's store reaches a later lane's
        load: each load's chunk-wide range misses the store's, or it reads exactly where the same lane
        stores (same base register and offset) and the lanes store to increasing, disjoint addresses.
        Otherwise the reference runs the segment (bail)."""
        bld = self.bld
        ok = ir.Constant(I1, 1)
        s_group = store.leader or store  # (a store counted with a load has that load's range)
        s_lo, s_hi = bld.load(s_group.chunk_lo), bld.load(s_group.chunk_hi)
        for d in loads:
            g = d.leader or d
            lo, hi = bld.load(g.chunk_lo), bld.load(g.chunk_hi)
            disjoint = bld.or_(bld.icmp_unsigned("<=", hi, s_lo), bld.icmp_unsigned("<=", s_hi, lo))
            same = d.base_version is not None and d.base_version == store.base_version and \
                d.mem_op.offset == store.mem_op.offset and d.nbytes == store.nbytes
            if same:
                disjoint = bld.or_(disjoint, bld.load(inc_ok))
            ok = bld.and_(ok, disjoint)
        self._bail_if(bld.not_(ok), self.seg_first)

    def _dry_lane(self, d: MemDesc, a: ir.Value, i: ir.Value) -> None:
        """One lane's part in its warp's reductions (selects, no branches: the lane loop vectorizes)."""
        if d.leader is not None:
            return  # checked and counted with its leader
        bld = self.bld
        part = self.dry_act if self.cur_guard is None else bld.and_(self.dry_act, self.cur_guard)
        if self.chunk_mode:  # the whole-chunk pass (chunkcheck)
            chunkcheck.lane(self, d, a, i, part)
            return
        mn_p, mx_p, or_p, c_p = d.red
        umin = self.intrinsic("llvm.umin.i64", I64, [I64, I64])
        umax = self.intrinsic("llvm.umax.i64", I64, [I64, I64])
        a0 = bld.select(part, a, ir.Constant(I64, 0))  # the reductions' canonical forms: they vectorize
        bld.store(bld.call(umin, [bld.load(mn_p), bld.select(part, a, ir.Constant(I64, -1))]), mn_p)
        bld.store(bld.call(umax, [bld.load(mx_p), a0]), mx_p)
        bld.store(bld.or_(bld.load(or_p), a0), or_p)
        bld.store(bld.add(bld.load(c_p), bld.zext(part, I64)), c_p)
        # whether the warp's lanes follow their index (a full warp's contiguity, WarpStats.summarize)
        dev = bld.sub(a, bld.mul(bld.and_(i, ir.Constant(I64, 31)), ir.Constant(I64, d.nbytes)))
        bld.store(bld.call(umin, [bld.load(d.dev[0]), bld.select(part, dev, ir.Constant(I64, -1))]), d.dev[0])
        bld.store(bld.call(umax, [bld.load(d.dev[1]), bld.select(part, dev, ir.Constant(I64, 0))]), d.dev[1])
        if d.leader is None:
            d.stats.add(a, i, d, part)

    def _warp_check(self, d: MemDesc) -> None:
        """Bail to the reference unless every taking-part lane's access is aligned and inside one live
        allocation (global) or the block's shared memory."""
        bld = self.bld
        mn_p, mx_p, or_p, c_p = d.red
        nb = d.nbytes
        with bld.if_then(bld.icmp_signed(">", bld.load(c_p), ir.Constant(I64, 0))):
            mn, mx = bld.load(mn_p), bld.load(mx_p)
            lo_d, hi_d = d.span  # the lowest and highest offset of its group from it (wrapping fails the check)
            if lo_d:
                mn = bld.add(mn, ir.Constant(I64, lo_d))
            if hi_d:
                mx = bld.add(mx, ir.Constant(I64, hi_d))
            mis = bld.icmp_unsigned("!=", bld.and_(bld.load(or_p), ir.Constant(I64, nb - 1)), ir.Constant(I64, 0))
            if d.space == "shared":
                # cluster-tagged (distributed shared) and huge addresses first: then max + nb cannot wrap; the
                # lowest too: a follower below its leader by more than the leader's address wraps (to the top of
                # its 32-bit space, where the reference reports it)
                oob = bld.icmp_unsigned(">", bld.or_(mn, mx), ir.Constant(I64, 0xFFFFFF))
                oob = bld.or_(oob, bld.icmp_unsigned(">", bld.add(mx, ir.Constant(I64, nb)),
                                                     self.ctx(CTX_SHARED_LIMIT)))
                self._bail_if(bld.or_(mis, oob), self.seg_first)
                return
            self._bail_if(bld.not_(bld.call(warphelpers.check_global(self), [
                mn, mx, bld.load(or_p), bld.load(c_p), d.hit_lo, d.hit_hi, d.hit_slot, self.ctx_arg, self.peer_local,
                ir.Constant(I64, nb), ir.Constant(I64, 0), ir.Constant(I64, 0), ir.Constant(I64, nb * d.group)])),
                self.seg_first)

    def _group(self, segment: list[tuple[int, Instruction]], mems: dict[int, MemDesc]) -> None:
        """Memory instructions of a segment at `[%r + c]` for one value of %r (not rewritten in between),
        unguarded, of one space, size and direction, see the same lanes at addresses shifted by a
        constant: the first is the leader, the others count from its warp summary (bank conflicts are
        shift-invariant for whole words, the reference's own rule; sectors follow from the shifted
        min and max when the leader's lanes are contiguous)."""
        version: dict[str, int] = {}
        leaders: dict[tuple[Any, ...], MemDesc] = {}
        for k, ins in segment:
            d = mems.get(k)
            if d is not None:
                d.leader, d.delta = None, 0
                base = d.mem_op.base
                d.base_version = (base.name, version.get(base.name, 0)) if isinstance(base, Reg) and \
                    ins.guard is None else None  # (a guarded access is never "the same lanes" as another)
                if isinstance(base, Reg) and ins.guard is None:
                    # a global store may count from a load's summary (the same lanes and addresses, shifted:
                    # SAXPY's y[i] = a * x[i] + y[i]); shared loads and stores never share a segment
                    key = (d.space, base.name, version.get(base.name, 0), d.nbytes, d.load or d.space == "global")
                    lead = leaders.get(key)
                    delta = d.mem_op.offset - lead.mem_op.offset if lead is not None else 0
                    if lead is None:
                        leaders[key] = d
                        d.span, d.group = (0, 0), 1
                    elif abs(delta) < (1 << 20) and delta % d.nbytes == 0 and (d.space != "shared" or delta % 4 == 0):
                        # aligned like its leader, and checked with it: the leader's check covers the
                        # group's whole span [min + lowest delta, max + highest delta] (see _warp_check)
                        d.leader, d.delta = lead, delta
                        lead.span = (min(lead.span[0], delta), max(lead.span[1], delta))
                        lead.group += 1
            for r in written_registers(ins):
                version[r] = version.get(r, 0) + 1

    def _count_loop(self, count: ir.Value, body: Callable[[ir.Value], None], hints: list[Any] | None = None) -> None:
        """for j in range(count): body(j), the loop given `hints` (llvm.loop properties) if any."""
        bld = self.bld
        pre = bld.block
        head, work, done = (self.f.append_basic_block() for _ in range(3))
        bld.branch(head)
        bld.position_at_end(head)
        j = bld.phi(I64)
        j.add_incoming(ir.Constant(I64, 0), pre)
        bld.cbranch(bld.icmp_signed("<", j, count), work, done)
        bld.position_at_end(work)
        body(j)
        j.add_incoming(bld.add(j, ir.Constant(I64, 1)), bld.block)
        br = bld.branch(head)  # (no mask test: a division is scalarized without predication, the rest stays vector)
        if hints:
            self.loop_hints(br, hints)
        bld.position_at_end(done)

    def per_lane(self, body: Callable[[ir.Value], None]) -> None:
        body(self.i)

    def active(self, i: ir.Value, guard: Any) -> ir.Value:
        """Lane i runs: its mask byte (the executor always passes a mask, all ones for every lane) and
        the instruction's guard predicate."""
        bld = self.bld
        mv = self.tag(bld.load(bld.gep(self.mask_arg, [i])), "aux")
        act = bld.icmp_unsigned("!=", mv, ir.Constant(I8, 0))
        if guard is not None:
            g = self.read(Reg(guard.name), "pred", i)
            if guard.negated:
                g = bld.not_(g)
            act = bld.and_(act, g)
        return act

    def entry_alloca(self, ty: ir.Type, count: int | None = None) -> ir.Value:
        """A stack slot allocated once in the entry block (never inside a loop)."""
        with self.bld.goto_block(self.f.entry_basic_block):
            self.bld.position_at_start(self.f.entry_basic_block)
            return self.bld.alloca(ty, count)

    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        g = self.module.globals.get(name)
        if g is None:
            g = ir.Function(self.module, ir.FunctionType(ret, args), name=name)
        return g

    # -- operands -----------------------------------------------------------------------------------
    def read(self, op: Any, t: str, i: ir.Value) -> ir.Value:
        bld = self.bld
        w = WIDTH.get(t)
        if w is None:
            raise self.fail(f"type .{t}")
        if isinstance(op, Reg):
            if op.negated:
                if t != "pred":
                    raise self.fail("negated operand")
                return bld.not_(self.read(Reg(op.name), "pred", i))
            if op.name not in self.fn.regs:
                return self.special(op.name, t, i)
            sbits = self.reg_bits.get(op.name)
            if sbits is None:
                raise self.fail(f"register {op.name} has no storage")
            raw = self.raw(op.name, i)
            if t == "pred":
                if self.fn.regs[op.name] != "pred":
                    raise self.fail("predicate read of a value register")
                return bld.icmp_unsigned("!=", raw, ir.Constant(I8, 0))
            if self.fn.regs[op.name] == "pred":
                raise self.fail("value read of a predicate register")
            if w > sbits:
                raise self.fail(f"{op.name} is narrower than .{t}")
            v = bld.trunc(raw, ir.IntType(w)) if w < sbits else raw
            return bld.bitcast(v, lty(t)) if t in FLOATS else v
        return self.constant(op, t)

    def raw(self, name: str, i: ir.Value) -> ir.Value:
        """Lane i's register bits (the segment's SSA value when it has one)."""
        vals = self.seg_vals
        if vals is not None and name in vals:
            return vals[name]
        k = self._inv_index.get(name)
        if k is not None:  # the launch's value, loaded once per block function
            return self._invariant(name, k)
        v = self.tag(self.bld.load(self.bld.gep(self.reg_ptr(name), [i])), f"r:{name}")
        if vals is not None:
            vals[name] = v
        return v

    def store_raw(self, name: str, v: ir.Value, i: ir.Value) -> None:
        """Store lane i's register bits; a guarded instruction keeps the old bits where its guard is false."""
        bld = self.bld
        if self.cur_guard is not None:
            v = bld.select(self.cur_guard, v, self.raw(name, i))
        if not self.dry and name not in self.seg_local and name not in self._inv_index:
            self.tag(bld.store(v, bld.gep(self.reg_ptr(name), [i])), f"r:{name}")
        if self.seg_vals is not None:
            self.seg_vals[name] = v

    def _invariant(self, name: str, k: int) -> ir.Value:
        """The launch's value of invariant register `name` (ctx's table entry k), loaded once per function."""
        got = self._inv_cache.get(name)
        if got is not None:
            return got
        bld = self.bld
        slot = self.slots.get(name) if self.slots is not None else None
        at = ir.Constant(I64, k) if slot is None else self._slot_value(slot)  # (a shared body: its caller's k)

        def make() -> ir.Value:
            table = bld.inttoptr(self.ctx(CTX_INVARIANTS), I64P)
            v = self.tag(bld.load(bld.gep(table, [at])), "aux")
            bits = self.reg_bits[name]
            return bld.trunc(v, ir.IntType(bits)) if bits < 64 else v
        got = self._inv_cache[name] = self.hoist(make)
        return got

    def constant(self, op: Any, t: str) -> ir.Value:
        w = WIDTH[t]
        if isinstance(op, Imm):
            if t in FLOATS:
                bits = int(np.array([op.value], dtype=np.float32 if t == "f32" else np.float64).view(
                    np.uint32 if t == "f32" else np.uint64)[0])
                return ir.Constant(ir.IntType(w), bits).bitcast(lty(t))
            if t == "pred":
                return ir.Constant(I1, 1 if op.value else 0)
            return ir.Constant(ir.IntType(w), op.value & ((1 << w) - 1))
        if isinstance(op, FImm):
            if t in FLOATS:
                if op.width == w:
                    return ir.Constant(ir.IntType(w), op.bits).bitcast(lty(t))
                src = np.array([op.bits], dtype=np.uint32 if op.width == 32 else np.uint64).view(
                    np.float32 if op.width == 32 else np.float64)
                val = src.astype(np.float32 if t == "f32" else np.float64)
                bits = int(val.view(np.uint32 if t == "f32" else np.uint64)[0])
                return ir.Constant(ir.IntType(w), bits).bitcast(lty(t))
            if t == "pred":
                raise self.fail("float literal as predicate")
            return ir.Constant(ir.IntType(w), op.bits & ((1 << w) - 1))
        if isinstance(op, Sym):
            if op.name in self.jf.local_offsets and self.fn.is_entry and t not in FLOATS and t != "pred":
                # a kernel's local variable: the root frame's local memory starts each chunk's (engine.Frame)
                return ir.Constant(ir.IntType(w), self.jf.local_offsets[op.name] & ((1 << w) - 1))
            addr = self.program.symbol_address(op.name)
            if addr is None:
                addr = kernel_param_address(self.fn, op.name)
            if addr is None or t in FLOATS or t == "pred" or op.name in self.jf.local_offsets:
                raise self.fail(f"symbol {op.name}")
            if self._module_variable(op.name):
                v = self.symbol_address(op.name)
                return self.bld.trunc(v, ir.IntType(w)) if w < 64 else v
            return ir.Constant(ir.IntType(w), addr & ((1 << w) - 1))
        raise self.fail(f"operand {type(op).__name__}")

    def _module_variable(self, name: str) -> bool:
        """Whether `name` is a module variable in global or constant memory (allocated at load time: its
        address comes from ctx). Shared offsets, function and parameter addresses follow from the PTX text
        alone, so they stay constants."""
        return name in self.program.global_addresses and name not in self.program.module.functions \
            and not self.program.shared_space(name)

    def symbol_address(self, name: str) -> ir.Value:
        """A module variable's device address (i64), loaded from ctx's symbol table once per block function."""
        v = self._symbol_cache.get(name)
        if v is None:
            if name not in self.symbols:
                self.symbols.append(name)
            k = self.symbols.index(name)
            bld = self.bld

            def make() -> ir.Value:
                table = bld.inttoptr(self.ctx(CTX_SYMBOLS), I64P)
                return self.tag(bld.load(bld.gep(table, [ir.Constant(I64, k)])), "aux")
            v = self._symbol_cache[name] = self.hoist(make)
        return v

    def special(self, name: str, t: str, i: ir.Value) -> ir.Value:
        bld = self.bld
        base, _, axis = name.partition(".")
        if base not in _SPECIAL_BASES or t in FLOATS or t == "pred":
            raise self.fail(f"special register {name}")
        k = "xyz".index(axis) if axis in ("x", "y", "z") else -1
        if base in LANE_SPECIALS:
            if (base in ("%tid", "%ctaid")) != (k >= 0):
                raise self.fail(f"special register {name}")
            if name not in self.specials:
                self.specials.append(name)
            idx = self.specials.index(name)
            arr = self._special_ptr.get(name)
            if arr is None:
                def make() -> ir.Value:
                    table = bld.inttoptr(self.ctx(CTX_SPECIALS), I64P)
                    return bld.inttoptr(bld.load(bld.gep(table, [ir.Constant(I64, idx)])), I32.as_pointer())
                arr = self.hoist(make)
                self._special_ptr[name] = arr
            v = bld.zext(self.tag(bld.load(bld.gep(arr, [i])), "aux"), I64)
            if name == "%ctaid.x":  # a 1-D grid's array is the chunk's block-local index, plus its first block
                v = bld.add(v, self.ctx(CTX_CTAID_X_ADD))
        elif base == "%ntid" and k >= 0:
            v = self.ctx(CTX_BLOCK + k)
        elif base == "%nctaid" and k >= 0:
            v = self.ctx(CTX_GRID + k)
        else:
            raise self.fail(f"special register {name}")
        w = WIDTH[t]
        return bld.trunc(v, ir.IntType(w)) if w < 64 else v

    def write(self, op: Any, t: str, v: ir.Value, i: ir.Value) -> None:
        bld = self.bld
        if isinstance(op, Sink):
            return
        if not isinstance(op, Reg) or op.negated or op.name not in self.reg_bits:
            raise self.fail("destination")
        if t == "pred":
            if self.fn.regs[op.name] != "pred":
                raise self.fail("predicate into a value register")
            self.store_raw(op.name, bld.zext(v, I8), i)
            return
        if self.fn.regs[op.name] == "pred":
            raise self.fail("value into a predicate register")
        sbits = self.reg_bits[op.name]
        w = WIDTH[t]
        if t in FLOATS:
            if w != sbits:
                raise self.fail(f".{t} into a {sbits}-bit register")
            v = bld.bitcast(v, ir.IntType(w))
        if w > sbits:
            raise self.fail(f".{t} into a {sbits}-bit register")
        if w < sbits:
            v = bld.sext(v, ir.IntType(sbits)) if t.startswith("s") else bld.zext(v, ir.IntType(sbits))
        self.store_raw(op.name, v, i)

    # -- instructions -------------------------------------------------------------------------------
    def _instruction(self, ins: Instruction) -> None:
        op = ins.opcode
        if op in NOOPS:
            return
        if op in ("ld", "st"):
            if "param" in ins.mods:
                self._memory(ins)
            else:
                self._mem_lane(self._mem_desc(ins) if not self.dry else self.dry_mems[self.k])
            return
        if op in codegen_float.OPCODES and codegen_float.handles(ins):  # rcp, sqrt, rsqrt, copysign, div.approx
            codegen_float.emit(self, ins)
            return
        if codegen_int.handles(ins):  # popc, clz, brev, bfind, bfe, shf, lop3, prmt, sad, add/sub.sat.s32
            codegen_int.emit(self, ins)
            return
        handler = getattr(self, f"_op_{op}", None)
        if handler is None:
            raise self.fail()
        handler(ins)

    def _simple(self, ins: Instruction, compute: Callable[[ir.Value], tuple[ir.Value, str]]) -> None:
        """Lane loop writing operand 0 from compute(i) -> (value, type)."""
        v, t = compute(self.i)
        self.write(ins.operands[0], t, v, self.i)

    def _one_type(self, ins: Instruction) -> str:
        ts = _types(ins)
        if len(ts) != 1:
            raise self.fail("type")
        return ts[0]

    # mov / cvta
    def _op_mov(self, ins: Instruction) -> None:
        t = self._one_type(ins)
        if _flags(ins) or len(ins.operands) != 2 or isinstance(ins.operands[1], Pair):
            raise self.fail()
        dst, src = ins.operands
        if isinstance(dst, Vec) or isinstance(src, Vec):
            self._mov_vector(t, dst, src)
            return
        self._simple(ins, lambda i: (self.read(src, t, i), t))

    def _mov_vector(self, t: str, dst: Any, src: Any) -> None:
        """mov.b64 d, {a, b} packs elements (the first is the least significant); mov.b64 {a, b}, d unpacks."""
        if t not in ("b32", "b64") or (isinstance(dst, Vec) == isinstance(src, Vec)):
            raise self.fail()
        bld = self.bld
        w = WIDTH[t]
        vec = src if isinstance(src, Vec) else dst
        k = len(vec.elems)
        if k not in (2, 4) or w % k or w // k < 8:
            raise self.fail()
        ew = w // k
        i = self.i
        if isinstance(src, Vec):
            v = ir.Constant(ir.IntType(w), 0)
            for j, e in enumerate(src.elems):
                part = bld.zext(self.read(e, f"b{ew}", i), ir.IntType(w)) if ew < w else self.read(e, f"b{ew}", i)
                v = bld.or_(v, bld.shl(part, ir.Constant(ir.IntType(w), j * ew)) if j else part)
            self.write(dst, t, v, i)
            return
        whole = self.read(src, t, i)
        for j, e in enumerate(dst.elems):
            if isinstance(e, Sink):
                continue
            part = bld.lshr(whole, ir.Constant(ir.IntType(w), j * ew)) if j else whole
            self.write(e, f"b{ew}", bld.trunc(part, ir.IntType(ew)), i)

    def _op_cvta(self, ins: Instruction) -> None:
        fl = _flags(ins)
        t = self._one_type(ins)
        if set(fl) not in ({"to", "global"}, {"global"}) or t not in ("u64", "b64", "s64"):
            raise self.fail()  # shared/local generic windows: the reference's
        self._simple(ins, lambda i: (self.read(ins.operands[1], t, i), t))

    # integer arithmetic
    def _int_type(self, ins: Instruction, allowed: tuple[str, ...] = ("u16", "u32", "u64", "s16", "s32", "s64",
                                                                        "b16", "b32", "b64")) -> str:
        t = self._one_type(ins)
        if t not in allowed:
            raise self.fail()
        return t

    def _float_op(self, ins: Instruction) -> bool:
        return any(m in FLOATS for m in ins.mods)

    def _op_add(self, ins: Instruction) -> None:
        self._addsub(ins, False)

    def _op_sub(self, ins: Instruction) -> None:
        self._addsub(ins, True)

    def _addsub(self, ins: Instruction, sub: bool) -> None:
        if self._float_op(ins):
            self._farith(ins)
            return
        t = self._int_type(ins)
        if _flags(ins):
            raise self.fail()
        bld = self.bld
        ut = f"u{WIDTH[t]}"
        d, a, b = ins.operands

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x, y = self.read(a, ut, i), self.read(b, ut, i)
            return (bld.sub(x, y) if sub else bld.add(x, y)), ut
        self._simple(ins, compute)

    def _mode(self, ins: Instruction) -> str:
        modes = [f for f in _flags(ins) if f in ("lo", "hi", "wide")]
        rest = [f for f in _flags(ins) if f not in ("lo", "hi", "wide")]
        if len(modes) != 1 or rest:
            raise self.fail()
        return modes[0]

    def _product(self, ins: Instruction, mode: str, t: str, a: Any, b: Any, i: ir.Value) -> tuple[ir.Value, str]:
        bld = self.bld
        w = WIDTH[t]
        signed = t.startswith("s")
        if mode == "lo":
            ut = f"u{w}"
            return bld.mul(self.read(a, ut, i), self.read(b, ut, i)), ut
        if w == 64 and mode == "wide":
            raise self.fail("64-bit .wide")
        wide = ir.IntType(2 * w)  # (i128 for 64-bit .hi)
        ext = bld.sext if signed else bld.zext
        p = bld.mul(ext(self.read(a, t, i), wide), ext(self.read(b, t, i), wide))
        if mode == "wide":
            return p, f"{t[0]}{2 * w}"
        return bld.trunc(bld.lshr(p, ir.Constant(wide, w)), ir.IntType(w)), f"u{w}"

    def _op_mul(self, ins: Instruction) -> None:
        if self._float_op(ins):
            self._farith(ins)
            return
        t = self._int_type(ins, ("u16", "u32", "u64", "s16", "s32", "s64"))
        mode = self._mode(ins)
        _, a, b = ins.operands
        self._simple(ins, lambda i: self._product(ins, mode, t, a, b, i))

    def _op_mad(self, ins: Instruction) -> None:
        if self._float_op(ins):
            self._ffma(ins)
            return
        t = self._int_type(ins, ("u16", "u32", "u64", "s16", "s32", "s64"))
        mode = self._mode(ins)
        _, a, b, c = ins.operands

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            p, pt = self._product(ins, mode, t, a, b, i)
            ct = pt if mode == "wide" else f"u{WIDTH[t]}"
            return self.bld.add(p, self.read(c, ct, i)), ct
        self._simple(ins, compute)

    def _bitop(self, ins: Instruction, name: str) -> None:
        t = self._one_type(ins)
        if _flags(ins) or t not in ("pred", "b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"):
            raise self.fail()
        bt = t if t == "pred" else f"b{WIDTH[t]}"
        bld = self.bld
        ops = ins.operands

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            if name == "not":
                return bld.not_(self.read(ops[1], bt, i)), bt
            x, y = self.read(ops[1], bt, i), self.read(ops[2], bt, i)
            return getattr(bld, name)(x, y), bt
        self._simple(ins, compute)

    def _op_bfi(self, ins: Instruction) -> None:
        """bfi.b32/.b64 f, a, b, pos, len as the reference's: pos and len are their low 8 bits, the field is
        len bits from pos clipped to the width (a position past the width inserts nothing)."""
        t = self._one_type(ins)
        if _flags(ins) or t not in ("b32", "b64") or len(ins.operands) != 5:
            raise self.fail()
        bld = self.bld
        w = WIDTH[t]
        ty = ir.IntType(w)
        zero, ones, wc = ir.Constant(ty, 0), ir.Constant(ty, (1 << w) - 1), ir.Constant(ty, w)
        _, a_op, b_op, c_op, d_op = ins.operands

        def widen(v: ir.Value) -> ir.Value:
            return bld.zext(v, ty) if w > 32 else v

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            a, b = self.read(a_op, t, i), self.read(b_op, t, i)
            pos = widen(bld.and_(self.read(c_op, "u32", i), ir.Constant(I32, 0xFF)))
            ln = widen(bld.and_(self.read(d_op, "u32", i), ir.Constant(I32, 0xFF)))
            umin = self.intrinsic(f"llvm.umin.i{w}", ty, [ty, ty])
            k = bld.call(umin, [ln, bld.sub(wc, bld.call(umin, [pos, wc]))])
            full = bld.icmp_unsigned(">=", k, wc)
            mask = bld.select(full, ones, bld.sub(bld.shl(ir.Constant(ty, 1), bld.select(full, zero, k)),
                                                  ir.Constant(ty, 1)))
            past = bld.icmp_unsigned(">=", pos, wc)  # shifts by the width or more give 0, as NumPy's
            sh = bld.select(past, zero, pos)
            field = bld.select(past, zero, bld.shl(mask, sh))
            ins_bits = bld.select(past, zero, bld.shl(a, sh))
            return bld.or_(bld.and_(b, bld.not_(field)), bld.and_(ins_bits, field)), t
        self._simple(ins, compute)

    def _op_and(self, ins: Instruction) -> None:
        self._bitop(ins, "and_")

    def _op_or(self, ins: Instruction) -> None:
        self._bitop(ins, "or_")

    def _op_xor(self, ins: Instruction) -> None:
        self._bitop(ins, "xor")

    def _op_not(self, ins: Instruction) -> None:
        self._bitop(ins, "not")

    def _shift(self, ins: Instruction, left: bool) -> None:
        t = self._one_type(ins)
        if _flags(ins) or t not in ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"):
            raise self.fail()
        w = WIDTH[t]
        bld = self.bld
        arith = t.startswith("s") and not left
        vt = t if arith else f"b{w}"
        ty = ir.IntType(w)

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            # PTX clamps shift amounts above the width: the result is 0 (or the sign for shr.s)
            x = self.read(ins.operands[1], vt, i)
            s = bld.zext(self.read(ins.operands[2], "u32", i), I64)
            big = bld.icmp_unsigned(">=", s, ir.Constant(I64, w))
            sc = bld.trunc(bld.select(big, ir.Constant(I64, w - 1), s), ty) if w < 64 else \
                bld.select(big, ir.Constant(I64, w - 1), s)
            if left:
                r = bld.select(big, ir.Constant(ty, 0), bld.shl(x, sc))
            elif arith:
                r = bld.ashr(x, sc)
            else:
                r = bld.select(big, ir.Constant(ty, 0), bld.lshr(x, sc))
            return r, vt
        self._simple(ins, compute)

    def _op_shl(self, ins: Instruction) -> None:
        self._shift(ins, True)

    def _op_shr(self, ins: Instruction) -> None:
        self._shift(ins, False)

    def _op_neg(self, ins: Instruction) -> None:
        if self._float_op(ins):
            self._fneg_abs(ins, True)
            return
        t = self._int_type(ins, ("s16", "s32", "s64"))
        if _flags(ins):
            raise self.fail()
        self._simple(ins, lambda i: (self.bld.neg(self.read(ins.operands[1], t, i)), t))

    def _op_abs(self, ins: Instruction) -> None:
        if self._float_op(ins):
            self._fneg_abs(ins, False)
            return
        t = self._int_type(ins, ("s16", "s32", "s64"))
        if _flags(ins):
            raise self.fail()
        bld = self.bld

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x = self.read(ins.operands[1], t, i)
            return bld.select(bld.icmp_signed("<", x, ir.Constant(x.type, 0)), bld.neg(x), x), t
        self._simple(ins, compute)

    def _op_min(self, ins: Instruction) -> None:
        self._minmax(ins, "<")

    def _op_max(self, ins: Instruction) -> None:
        self._minmax(ins, ">")

    def _minmax(self, ins: Instruction, cmp: str) -> None:
        if self._float_op(ins):
            self._fminmax(ins, cmp == ">")
            return
        t = self._int_type(ins, ("u16", "u32", "u64", "s16", "s32", "s64"))
        if _flags(ins):
            raise self.fail()
        bld = self.bld
        icmp = bld.icmp_signed if t.startswith("s") else bld.icmp_unsigned

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x, y = self.read(ins.operands[1], t, i), self.read(ins.operands[2], t, i)
            return bld.select(icmp(cmp, x, y), x, y), t
        self._simple(ins, compute)

    def _fminmax(self, ins: Instruction, is_max: bool) -> None:
        """min/max.f32/.f64 as the reference's: a NaN loses to a number, two NaNs give the canonical NaN,
        -0 < +0 (equal values combine their bits: AND for max, OR for min), `.ftz` flushes first."""
        t = self._one_type(ins)
        fl = set(_flags(ins))
        if t not in FLOATS or fl - ({"ftz"} if t == "f32" else set()) or len(ins.operands) != 3:
            raise self.fail()
        bld = self.bld
        w = WIDTH[t]
        ity = ir.IntType(w)
        canon = ir.Constant(ity, CANON_NAN32 if t == "f32" else (1 << 63) - 1)

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x, y = self.read(ins.operands[1], t, i), self.read(ins.operands[2], t, i)
            if "ftz" in fl:
                x, y = self.flush32(x), self.flush32(y)
            xn, yn = bld.fcmp_unordered("uno", x, x), bld.fcmp_unordered("uno", y, y)
            pick_x = bld.fcmp_ordered(">" if is_max else "<", x, y)
            r = bld.select(xn, y, bld.select(yn, x, bld.select(pick_x, x, y)))
            xb, yb = bld.bitcast(x, ity), bld.bitcast(y, ity)
            rb = bld.select(bld.fcmp_ordered("==", x, y), bld.and_(xb, yb) if is_max else bld.or_(xb, yb),
                            bld.bitcast(r, ity))
            return bld.select(bld.and_(xn, yn), canon, rb), f"b{w}"
        self._simple(ins, compute)

    # comparisons
    def _op_setp(self, ins: Instruction) -> None:
        t = self._one_type(ins)
        fl = _flags(ins)
        cmps = [f for f in fl if f in _ICMP_SIGNED or f in _ICMP_UNSIGNED or f in _FCMP]
        bools = [f for f in fl if f in ("and", "or", "xor")]
        ftz = "ftz" in fl
        if len(cmps) != 1 or len(bools) > 1 or set(fl) - set(cmps) - set(bools) - {"ftz"}:
            raise self.fail()
        cmp = cmps[0]
        bld = self.bld
        ops = ins.operands
        if len(ops) != (4 if bools else 3):
            raise self.fail()
        if t in FLOATS:
            if cmp not in _FCMP or (ftz and t != "f32"):
                raise self.fail()
            pred, ordered = _FCMP[cmp]
        else:
            if ftz or t not in ("b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"):
                raise self.fail()
            if cmp not in _ICMP_SIGNED and cmp not in _ICMP_UNSIGNED:
                raise self.fail()
        dst = ops[0]
        first, second = (dst.first, dst.second) if isinstance(dst, Pair) else (dst, None)

        def body(i: ir.Value) -> None:
            if t in FLOATS:
                x, y = self.read(ops[1], t, i), self.read(ops[2], t, i)
                if ftz:
                    x, y = self.flush32(x), self.flush32(y)
                r = bld.fcmp_ordered(pred, x, y) if ordered else bld.fcmp_unordered(pred, x, y)
            else:
                if cmp in _ICMP_UNSIGNED or (t.startswith("b") and cmp not in ("eq", "ne")):
                    vt = f"u{WIDTH[t]}"
                    sym = _ICMP_UNSIGNED.get(cmp) or _ICMP_SIGNED[cmp]
                    r = bld.icmp_unsigned(sym, self.read(ops[1], vt, i), self.read(ops[2], vt, i))
                elif t.startswith("u"):
                    r = bld.icmp_unsigned(_ICMP_SIGNED[cmp], self.read(ops[1], t, i), self.read(ops[2], t, i))
                else:
                    r = bld.icmp_signed(_ICMP_SIGNED[cmp], self.read(ops[1], t, i), self.read(ops[2], t, i))
            rq = bld.not_(r)
            if bools:
                c = self.read(ops[3], "pred", i)
                comb = {"and": bld.and_, "or": bld.or_, "xor": bld.xor}[bools[0]]
                r, rq = comb(r, c), comb(rq, c)
            self.write(first, "pred", r, i)
            if second is not None:
                self.write(second, "pred", rq, i)
        self.per_lane(body)

    def _op_selp(self, ins: Instruction) -> None:
        t = self._one_type(ins)
        if _flags(ins) or t == "pred" or WIDTH[t] < 16:
            raise self.fail()
        bt = f"b{WIDTH[t]}"
        d, a, b, c = ins.operands

        def rd(op: Any, i: ir.Value) -> ir.Value:
            if t in FLOATS and not isinstance(op, Reg):
                return self.bld.bitcast(self.read(op, t, i), ir.IntType(WIDTH[t]))
            return self.read(op, bt, i)
        self._simple(ins, lambda i: (self.bld.select(self.read(c, "pred", i), rd(a, i), rd(b, i)), bt))

    # floating point
    def _fmods(self, ins: Instruction, allowed: set[str], directed: bool = False) -> tuple[str, bool, bool]:
        """(type, .ftz, .sat); `directed`: the caller rounds f32 .rz/.rm/.rp (codegen_float.directed32)."""
        t = self._one_type(ins)
        if t not in FLOATS:
            raise self.fail()
        fl = set(_flags(ins))
        rnd = fl & {"rn", "rz", "rm", "rp"}
        if (rnd - {"rn"} and not (directed and t == "f32")) or len(rnd) > 1 or fl - rnd - allowed:
            raise self.fail("(directed rounding and these modifiers run on the reference)")
        ftz, sat = "ftz" in fl, "sat" in fl
        if t == "f64" and (ftz or sat):
            raise self.fail()
        return t, ftz, sat

    def flush32(self, x: ir.Value) -> ir.Value:
        """.ftz on an f32: subnormals become zero of the same sign."""
        bld = self.bld
        bits = bld.bitcast(x, I32)
        mag = bld.and_(bits, ir.Constant(I32, 0x7FFFFFFF))
        sub = bld.icmp_unsigned("<", bld.sub(mag, ir.Constant(I32, 1)), ir.Constant(I32, 0x7FFFFF))
        return bld.select(sub, bld.bitcast(bld.and_(bits, ir.Constant(I32, 0x80000000)), F32), x)

    def post32(self, r: ir.Value, ftz: bool, sat: bool, canon: bool = True) -> ir.Value:
        """The reference's f32 result rules: .ftz flush, .sat clamp to [+0, 1] (NaN -> +0), canonical NaN
        (left out when `canon` is false: see _nan_feeds_arith)."""
        bld = self.bld
        if ftz:
            r = self.flush32(r)
        if sat:
            pos = bld.fcmp_ordered(">", r, ir.Constant(F32, 0.0))
            one = ir.Constant(F32, 1.0)
            r = bld.select(pos, bld.select(bld.fcmp_ordered("<", r, one), r, one), ir.Constant(F32, 0.0))
        if not canon:
            return r
        # the NaN test and choice on the bits: LLVM may fold a float `select(isnan(r), NaN, r)` into `r` (to it
        # every NaN is as good as another; it does after llvm.sqrt), which would keep the host's NaN
        bits = bld.bitcast(r, I32)
        nan = bld.icmp_unsigned(">", bld.and_(bits, ir.Constant(I32, 0x7FFFFFFF)), ir.Constant(I32, 0x7F800000))
        return bld.bitcast(bld.select(nan, ir.Constant(I32, CANON_NAN32), bits), F32)

    def _farith(self, ins: Instruction) -> None:
        t, ftz, sat = self._fmods(ins, {"ftz", "sat"}, directed=True)
        bld = self.bld
        fop = {"add": bld.fadd, "sub": bld.fsub, "mul": bld.fmul}[ins.opcode]
        rnd = next(iter(set(_flags(ins)) & {"rz", "rm", "rp"}), None)

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x, y = self.read(ins.operands[1], t, i), self.read(ins.operands[2], t, i)
            if ftz:
                x, y = self.flush32(x), self.flush32(y)
            if rnd is None:
                r = fop(x, y)
            elif ins.opcode == "mul":  # the f64 product of two f32 is exact
                r = codegen_float.directed32(self, bld.fmul(bld.fpext(x, F64), bld.fpext(y, F64)), None, rnd)
            else:
                y64 = bld.fpext(y, F64)
                r = codegen_float.directed32(self, bld.fpext(x, F64), bld.fneg(y64) if ins.opcode == "sub" else y64,
                                             rnd)
            return (self.post32(r, ftz, sat, not self._nan_feeds_arith(ins)) if t == "f32" else r), t
        self._simple(ins, compute)

    def _nan_feeds_arith(self, ins: Instruction) -> bool:
        """Whether ins's f32 result only feeds round-to-nearest f32 add, sub, mul, fma or mad in its own segment
        (a register the segment keeps as an SSA value). Then its canonical NaN is left out: a NaN operand gives
        those a NaN result whatever its bits, and they canonicalize their own. In a dot product's chain the NaN
        test and select were as long as the fma (SGEMM's inner loop)."""
        d = ins.operands[0] if ins.operands else None
        if not isinstance(d, Reg) or d.name not in self.seg_local:
            return False
        for pos in self.reads.get(d.name, ()):
            use = self.fn.body[pos]
            if use.opcode not in ("add", "sub", "mul", "fma", "mad") or "f32" not in use.mods or \
                    set(_flags(use)) & {"rz", "rm", "rp"}:
                return False
        return True

    def _op_rem(self, ins: Instruction) -> None:
        self._int_div(ins, False)

    def _int_div(self, ins: Instruction, is_div: bool) -> None:
        """Truncating integer div/rem as the reference's: magnitudes divided unsigned, signs fixed after;
        a zero divisor gives all ones (quotient and remainder), INT_MIN / -1 wraps (remainder 0)."""
        t = self._int_type(ins, ("u16", "u32", "u64", "s16", "s32", "s64"))
        if _flags(ins):
            raise self.fail()
        bld = self.bld
        w = WIDTH[t]
        ty = ir.IntType(w)
        signed = t.startswith("s")
        zero, one, ones = ir.Constant(ty, 0), ir.Constant(ty, 1), ir.Constant(ty, (1 << w) - 1)
        top = ir.Constant(ty, w - 1)

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x, y = self.read(ins.operands[1], t, i), self.read(ins.operands[2], t, i)

            def mag(v: ir.Value) -> ir.Value:
                return bld.select(bld.icmp_signed("<", v, zero), bld.neg(v), v) if signed else v
            mx, my = mag(x), mag(y)
            by_zero = bld.icmp_unsigned("==", y, zero)
            safe = bld.select(by_zero, one, my)  # never divide by zero (x86 traps); the result is replaced
            q = bld.udiv(mx, safe)
            if is_div:
                res = q
                sign = bld.ashr(bld.xor(x, y), top) if signed else None
            else:
                res = bld.sub(mx, bld.mul(q, safe))
                sign = bld.ashr(x, top) if signed else None
            if sign is not None:
                res = bld.sub(bld.xor(res, sign), sign)
            return bld.select(by_zero, ones, res), f"u{w}"
        self._simple(ins, compute)

    def _op_div(self, ins: Instruction) -> None:
        if not self._float_op(ins):
            self._int_div(ins, True)
            return
        fl = set(_flags(ins))
        if "rn" not in fl:
            raise self.fail("(div.approx/.full run on the reference)")
        t, ftz, sat = self._fmods(ins, {"ftz"})
        bld = self.bld

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x, y = self.read(ins.operands[1], t, i), self.read(ins.operands[2], t, i)
            if ftz:
                x, y = self.flush32(x), self.flush32(y)
            r = bld.fdiv(x, y)
            return (self.post32(r, ftz, sat) if t == "f32" else r), t
        self._simple(ins, compute)

    def _op_fma(self, ins: Instruction) -> None:
        self._ffma(ins)

    def _ffma(self, ins: Instruction) -> None:
        rnd = next(iter(set(_flags(ins)) & {"rn", "rz", "rm", "rp"}), None)
        if rnd is None:
            raise self.fail("(fma without a rounding modifier)")
        t, ftz, sat = self._fmods(ins, {"ftz", "sat"}, directed=True)
        bld = self.bld
        fma = self.intrinsic(f"llvm.fma.{'f32' if t == 'f32' else 'f64'}", lty(t), [lty(t)] * 3)

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x, y, z = (self.read(o, t, i) for o in ins.operands[1:4])
            if ftz:
                x, y, z = self.flush32(x), self.flush32(y), self.flush32(z)
            if rnd == "rn":
                r = bld.call(fma, [x, y, z])  # one rounding, as PTX's fma
            else:  # f32 (the f64 product of two f32 is exact; _fmods refuses f64)
                r = codegen_float.directed32(self, bld.fmul(bld.fpext(x, F64), bld.fpext(y, F64)),
                                             bld.fpext(z, F64), rnd)
            return (self.post32(r, ftz, sat, not self._nan_feeds_arith(ins)) if t == "f32" else r), t
        self._simple(ins, compute)

    def _fneg_abs(self, ins: Instruction, neg: bool) -> None:
        """Float abs/neg as the reference: flip or clear the sign bit (NaN payloads kept); .ftz first."""
        t, ftz, _ = self._fmods(ins, {"ftz"})
        bld = self.bld
        w = WIDTH[t]
        sign = ir.Constant(ir.IntType(w), 1 << (w - 1))

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x = self.read(ins.operands[1], t, i)
            if ftz:
                x = self.flush32(x)
            b = bld.bitcast(x, ir.IntType(w))
            r = bld.xor(b, sign) if neg else bld.and_(b, ir.Constant(ir.IntType(w), (1 << (w - 1)) - 1))
            return r, f"b{w}"
        self._simple(ins, compute)

    # conversions
    def _op_cvt(self, ins: Instruction) -> None:
        halves = [m for m in ins.mods if m in ("f16", "bf16")]
        if halves:
            self._cvt_from_half(ins, halves)
            return
        ts = _types(ins)
        fl = set(_flags(ins))
        if len(ts) != 2:
            raise self.fail()
        dt, at = ts
        bld = self.bld
        if dt == "pred" or at == "pred":
            raise self.fail()
        if dt not in FLOATS and at not in FLOATS:  # int -> int: extension or truncation
            if fl:
                raise self.fail()

            def conv_ii(i: ir.Value) -> tuple[ir.Value, str]:
                v = self.read(ins.operands[1], at, i)
                wa, wd = WIDTH[at], WIDTH[dt]
                if wd < wa:
                    v = bld.trunc(v, ir.IntType(wd))
                elif wd > wa:
                    v = bld.sext(v, ir.IntType(wd)) if at.startswith("s") else bld.zext(v, ir.IntType(wd))
                return v, dt
            self._simple(ins, conv_ii)
            return
        if dt in FLOATS and at not in FLOATS:  # int -> float, round to nearest only
            if fl != {"rn"}:
                raise self.fail()

            def conv_if(i: ir.Value) -> tuple[ir.Value, str]:
                v = self.read(ins.operands[1], at, i)
                conv = bld.sitofp if at.startswith("s") else bld.uitofp
                return conv(v, lty(dt)), dt
            self._simple(ins, conv_if)
            return
        if dt not in FLOATS:  # float -> int: saturating, NaN rules of the reference
            irnd = fl & {"rni", "rzi", "rmi", "rpi"}
            if len(irnd) != 1 or fl - irnd - {"ftz"} or ("ftz" in fl and at != "f32"):
                raise self.fail()
            mode = irnd.pop()
            rfn = _RINT[mode]
            rint = self.intrinsic(f"{rfn}.{at}", lty(at), [lty(at)])
            signed = dt.startswith("s")
            w = WIDTH[dt]
            sat_name = f"llvm.fpto{'s' if signed else 'u'}i.sat"
            fsat = self.intrinsic(f"{sat_name}.i{w}.{at}", ir.IntType(w), [lty(at)])
            nan_bits = (1 << (w - 1)) if (at == "f64" or w == 64) else 0

            def conv_fi(i: ir.Value) -> tuple[ir.Value, str]:
                x = self.read(ins.operands[1], at, i)
                if "ftz" in fl:
                    x = self.flush32(x)
                r = bld.call(fsat, [bld.call(rint, [x])])
                nan = bld.fcmp_unordered("uno", x, x)
                return bld.select(nan, ir.Constant(ir.IntType(w), nan_bits), r), dt
            self._simple(ins, conv_fi)
            return
        # float -> float
        if dt == at:
            self._cvt_same(ins, dt, fl)
            return
        if dt == "f64":  # widening: exact
            if fl - {"ftz"}:
                raise self.fail()

            def conv_ff(i: ir.Value) -> tuple[ir.Value, str]:
                x = self.read(ins.operands[1], at, i)
                if "ftz" in fl:
                    x = self.flush32(x)
                return bld.fpext(x, F64), dt
            self._simple(ins, conv_ff)
            return
        if fl - {"ftz", "sat"} != {"rn"}:
            raise self.fail()

        def conv_dn(i: ir.Value) -> tuple[ir.Value, str]:
            r = bld.fptrunc(self.read(ins.operands[1], at, i), F32)
            return self.post32(r, "ftz" in fl, "sat" in fl), dt
        self._simple(ins, conv_dn)

    def _cvt_from_half(self, ins: Instruction, halves: list[str]) -> None:
        """cvt.f32.f16 / .f32.bf16 / .f64.f16 / .f64.bf16: exact widening, bit for bit as the reference's
        (integer work, not the CPU's half conversion, which would quiet signaling NaNs)."""
        ts = [m for m in ins.mods if m in WIDTH or m in ("f16", "bf16")]
        fl = set(ins.mods) - set(ts)
        if len(ts) != 2 or ts[1] not in ("f16", "bf16") or ts[0] not in FLOATS or fl - {"ftz"} or \
                ("ftz" in fl and ts[0] != "f32"):
            raise self.fail()
        dt, at = ts
        bld = self.bld

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            h = bld.zext(self.read(ins.operands[1], "b16", i), I32)
            if at == "bf16":
                f = bld.bitcast(bld.shl(h, ir.Constant(I32, 16)), F32)
            else:  # the exponent/mantissa field read as an f32 is the value times 2^-112 (subnormals too)
                em = bld.shl(bld.and_(h, ir.Constant(I32, 0x7FFF)), ir.Constant(I32, 13))
                scaled = bld.fmul(bld.bitcast(em, F32), ir.Constant(I32, 0x77800000).bitcast(F32))
                fb = bld.bitcast(scaled, I32)
                special = bld.icmp_unsigned(">=", em, ir.Constant(I32, 0x7C00 << 13))  # inf/NaN
                fb = bld.or_(fb, bld.select(special, ir.Constant(I32, 0x7F800000), ir.Constant(I32, 0)))
                fb = bld.or_(fb, bld.shl(bld.and_(h, ir.Constant(I32, 0x8000)), ir.Constant(I32, 16)))
                f = bld.bitcast(fb, F32)
            if dt == "f64":
                return bld.fpext(f, F64), dt
            return (self.flush32(f) if "ftz" in fl else f), dt
        self._simple(ins, compute)

    def _cvt_same(self, ins: Instruction, t: str, fl: set[str]) -> None:
        """cvt.{irnd}{.ftz}{.sat}.fT.fT: round to integral and/or the result modifiers, as the reference's
        float_to_float (no canonical NaN unless rounding; .sat sends NaN and negatives to +0)."""
        irnd = fl & {"rni", "rzi", "rmi", "rpi"}
        if fl - irnd - {"ftz", "sat"} or len(irnd) > 1 or (t == "f64" and fl & {"ftz", "sat"}):
            raise self.fail()
        bld = self.bld
        rint = None
        if irnd:
            rfn = _RINT[next(iter(irnd))]
            rint = self.intrinsic(f"{rfn}.{t}", lty(t), [lty(t)])

        def compute(i: ir.Value) -> tuple[ir.Value, str]:
            x = self.read(ins.operands[1], t, i)
            if "ftz" in fl:
                x = self.flush32(x)
            if rint is not None:
                x = bld.call(rint, [x])
                if t == "f32":
                    x = bld.select(bld.fcmp_unordered("uno", x, x), ir.Constant(I32, CANON_NAN32).bitcast(F32), x)
            if "ftz" in fl:
                x = self.flush32(x)
            if "sat" in fl:
                one = ir.Constant(F32, 1.0)
                x = bld.select(bld.fcmp_ordered(">", x, ir.Constant(F32, 0.0)),
                               bld.select(bld.fcmp_ordered("<", x, one), x, one), ir.Constant(F32, 0.0))
            return x, t
        self._simple(ins, compute)

    # memory ---------------------------------------------------------------------------------------
    def _memory(self, ins: Instruction) -> None:
        """ld.param (kernel parameters): a constant per launch, read for each lane."""
        t = self._one_type(ins)
        vec = 4 if "v4" in ins.mods else 2 if "v2" in ins.mods else 1
        if set(_flags(ins)) - {"param", "v2", "v4"} or ins.opcode != "ld" or t == "pred" or WIDTH[t] < 8:
            raise self.fail()
        val_op = ins.operands[0]
        elems = list(val_op.elems) if isinstance(val_op, Vec) else [val_op]
        if len(elems) != vec or not isinstance(ins.operands[1], Mem):
            raise self.fail()
        vt = {"f32": "u32", "f64": "u64"}.get(t, t)
        self._ld_param(ins, ins.operands[1], elems, vt, WIDTH[t] // 8)

    def _mem_desc(self, ins: Instruction) -> MemDesc:
        fl = set(_flags(ins)) - {"v2", "v4", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "relaxed", "weak",
                                 "volatile",
                                 "gpu", "cta", "sys", "L1::no_allocate", "L1::evict_last", "L1::evict_first",
                                 "L2::64B", "L2::128B", "L2::256B", "L1::evict_normal", "L1::evict_unchanged",
                                 "L2::evict_first", "L2::evict_last", "L2::evict_normal"}
        spaces = fl & {"global", "shared", "const", "shared::cta"}
        if fl - spaces or len(spaces) > 1:
            raise self.fail("(memory modifiers)")
        space = spaces.pop() if spaces else "generic"
        space = "shared" if space == "shared::cta" else "global" if space != "shared" else space
        t = self._one_type(ins)
        vec = 4 if "v4" in ins.mods else 2 if "v2" in ins.mods else 1
        if t == "pred" or WIDTH[t] < 8:
            raise self.fail()
        load = ins.opcode == "ld"
        mem_op, val_op = (ins.operands[1], ins.operands[0]) if load else (ins.operands[0], ins.operands[1])
        if not isinstance(mem_op, Mem):
            raise self.fail("address")
        elems = list(val_op.elems) if isinstance(val_op, Vec) else [val_op]
        if len(elems) != vec:
            raise self.fail("vector width")
        if isinstance(mem_op.base, Sym) and space != "shared" and (
                self.program.symbol_address(mem_op.base.name) is None or self.program.shared_space(mem_op.base.name)):
            raise self.fail("symbol address")  # (a module variable's address is a constant: __device__, __constant__)
        if mem_op.base is None:
            raise self.fail("absolute address")
        size = WIDTH[t] // 8
        if size * vec > 32:
            raise self.fail("access wider than a sector")
        # loads move bits: a float type loads as its unsigned type (zero-extended into wider registers)
        vt = {"f32": "u32", "f64": "u64"}.get(t, t)
        return MemDesc(space, load, mem_op, elems, vt, size, size * vec)

    def _mem_lane(self, d: MemDesc) -> None:
        """One lane's access: in the dry run, its check and its warp's counters (loads still load: later
        addresses of the segment may depend on them, and nothing in the segment stores)."""
        bld = self.bld
        i = self.i
        g = self.cur_guard
        grouped = lanegroups.address(self, self.dry_mems[self.k], i) if self.groups is not None else None
        if grouped is not None:
            a, sbase = grouped
        else:
            sbase = None
            a = chunkcheck.linear_address(self, self.dry_mems[self.k], i) if self.linear else \
                self._address(d.mem_op, i)
        if self.dry:  # addresses only: nothing is loaded before its warp's check (see _dry_run)
            self._dry_lane(d, a, i)
            if d.load:
                for e in d.elems:
                    if not isinstance(e, Sink):  # never read: no address of the segment depends on it
                        self.write(e, d.vt, ir.Constant(lty(d.vt), 0), i)
            return
        if d.space == "shared":
            # a checked offset is below the chunk's shared size (< 2 GiB): 32 bits, so that the vectorized
            # loops gather 16 lanes at a time
            off = bld.add(bld.trunc(a, I32), bld.trunc(self.shared_base(i) if sbase is None else sbase, I32))
            host = bld.gep(bld.inttoptr(self.ctx(CTX_SHARED), I8P), [off])
        else:
            host = bld.gep(bld.inttoptr(self.ctx(CTX_MEM), I8P), [bld.sub(a, ir.Constant(I64, GLOBAL_BASE))])
        ety = lty(d.vt)
        scope = "shm" if d.space == "shared" else "mem"
        for k, e in enumerate(d.elems):
            p = bld.bitcast(bld.gep(host, [ir.Constant(I64, k * d.size)]), ety.as_pointer())
            if d.load:
                if isinstance(e, Sink):
                    continue
                if g is None:
                    v = self.tag(bld.load(p, align=d.size), scope)
                else:  # only an active lane's address is known to be valid
                    slot = self.entry_alloca(ety)
                    bld.store(ir.Constant(ety, 0), slot)
                    with bld.if_then(g):
                        bld.store(self.tag(bld.load(p, align=d.size), scope), slot)
                    v = bld.load(slot)
                self.write(e, d.vt, v, i)
            elif not self.dry:
                v = self.read(e, d.vt, i)
                if g is None:
                    self.tag(bld.store(v, p, align=d.size), scope)
                else:
                    with bld.if_then(g):
                        self.tag(bld.store(v, p, align=d.size), scope)

    def shared_base(self, i: ir.Value) -> ir.Value:
        """Lane i's block's offset in the chunk's shared memory (once per lane and segment)."""
        vals = self.seg_vals
        if vals is not None and "$sbase" in vals:
            return vals["$sbase"]
        table = self.hoist(lambda: self.bld.inttoptr(self.ctx(CTX_SHARED_BASE), I64P))
        v = self.tag(self.bld.load(self.bld.gep(table, [i])), "aux")
        if vals is not None:
            vals["$sbase"] = v
        return v

    def _param_offset(self, ins: Instruction) -> Any:
        """The parameter's byte offset in the parameter buffer: an int, or in a shared block body (see
        _shared_block) an i64 value its caller passes in the slot table."""
        mem_op = ins.operands[1]
        if not isinstance(mem_op, Mem) or not isinstance(mem_op.base, Sym) or not self.fn.is_entry:
            raise self.fail("ld.param through a register")
        off = kernel_param_offset(self.fn, mem_op.base.name)
        if off is None:
            raise self.fail("ld.param of a non-kernel parameter")
        slot = self.slots.get("param:" + mem_op.base.name) if self.slots is not None else None
        if slot is not None:
            return self.bld.add(self._slot_value(slot), ir.Constant(I64, mem_op.offset))
        return off + mem_op.offset

    def _slot_value(self, slot: int) -> ir.Value:
        """A shared block body's per-caller integer in its slot table (an invariant's index, a parameter's
        offset), loaded once per function."""
        v = self._slot_cache.get(slot)
        if v is None:
            bld = self.bld
            v = self._slot_cache[slot] = self.hoist(
                lambda: bld.ptrtoint(bld.load(bld.gep(self.regs_arg, [ir.Constant(I64, slot)])), I64))
        return v

    def _offset(self, off: Any, add: int) -> Any:
        return off + add if isinstance(off, int) else self.bld.add(off, ir.Constant(I64, add))

    def _i64(self, v: Any) -> ir.Value:
        return ir.Constant(I64, v) if isinstance(v, int) else v

    def _ld_param_check(self, ins: Instruction) -> None:
        """A parameter buffer too short for the read: the reference reports it (bail before the segment)."""
        t = self._one_type(ins)
        vec = 4 if "v4" in ins.mods else 2 if "v2" in ins.mods else 1
        end = self._offset(self._param_offset(ins), WIDTH[t] // 8 * vec)
        short = self.bld.icmp_signed("<", self.ctx(CTX_PARAMS_LEN), self._i64(end))
        self._bail_if(short, self.seg_first)
        # the value, once before the segment's loops (it is the launch's; loaded per lane, a masked lane
        # loop could only gather it)
        bld = self.bld
        vt = {"f32": "u32", "f64": "u64"}.get(t, t)
        base = bld.inttoptr(self.ctx(CTX_PARAMS), I8P)
        off = self._param_offset(ins)
        self._param_vals[self.k] = [self.tag(bld.load(bld.bitcast(
            bld.gep(base, [self._i64(self._offset(off, e * (WIDTH[t] // 8)))]), lty(vt).as_pointer()),
            align=1), "aux") for e in range(vec)]

    def _ld_param(self, ins: Instruction, mem_op: Mem, elems: list[Any], vt: str, size: int) -> None:
        off = self._param_offset(ins)
        bld = self.bld
        base = bld.inttoptr(self.ctx(CTX_PARAMS), I8P)

        pre = self._param_vals.get(self.k)  # (loaded before the segment: _ld_param_check)

        def body(i: ir.Value) -> None:
            for k, e in enumerate(elems):
                if isinstance(e, Sink):
                    continue
                if pre is not None:
                    self.write(e, vt, pre[k], i)
                    continue
                p = bld.bitcast(bld.gep(base, [self._i64(self._offset(off, k * size))]), lty(vt).as_pointer())
                self.write(e, vt, self.tag(bld.load(p, align=1), "aux"), i)
        self.per_lane(body)

    def _bail_if(self, cond: ir.Value, k: int | None = None) -> None:
        """Return k + 1 (the first instruction the reference must run) when cond holds."""
        bld = self.bld
        cont = self.f.append_basic_block()
        bld.cbranch(cond, self.bail_block, cont)
        self.bail_phi_pending.append((bld.block, (self.k if k is None else k) + 1))
        bld.position_at_end(cont)

    def _address(self, mem_op: Mem, i: ir.Value) -> ir.Value:
        """The lane's address as i64 (32-bit base registers wrap mod 2^32, as the reference's Addresser)."""
        bld = self.bld
        base = mem_op.base
        if isinstance(base, Sym):
            addr = self.program.symbol_address(base.name)
            if addr is None:
                raise self.fail("symbol address")
            if self._module_variable(base.name):  # a global or constant variable: its 64-bit address, from ctx
                return bld.add(self.symbol_address(base.name), ir.Constant(I64, mem_op.offset & 0xFFFFFFFFFFFFFFFF))
            if not self.program.shared_space(base.name):  # (a function's or parameter's address)
                return ir.Constant(I64, (addr + mem_op.offset) & 0xFFFFFFFFFFFFFFFF)
            return ir.Constant(I64, (addr + mem_op.offset) & 0xFFFFFFFF)
        assert isinstance(base, Reg)
        rt = self.fn.regs.get(base.name)
        if rt is None:
            raise self.fail("special register address")
        wide = rt.endswith("64")
        v = self.read(base, "u64" if wide else "u32", i)
        if wide:
            return bld.add(v, ir.Constant(I64, mem_op.offset & 0xFFFFFFFFFFFFFFFF))
        v = bld.add(v, ir.Constant(I32, mem_op.offset & 0xFFFFFFFF))
        return bld.zext(v, I64)

    # -- helper functions (one per module) ----------------------------------------------------------
    def _alloc_lookup(self) -> ir.Function:
        """i64 (addr, size, n, starts, ends): the live allocation holding [addr, addr + size), or -1."""
        f = self._helpers.get("lookup")
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(I64, [I64, I64, I64, I64, I64]), name="alloc_lookup")
        f.attributes.add("noinline")
        f.linkage = "internal"
        a, size, n, sp, ep = f.args
        b = ir.IRBuilder(f.append_basic_block())
        starts, ends = b.inttoptr(sp, I64P), b.inttoptr(ep, I64P)
        lo_p, hi_p = b.alloca(I64), b.alloca(I64)
        b.store(ir.Constant(I64, 0), lo_p)
        b.store(n, hi_p)
        head, body, done = (f.append_basic_block() for _ in range(3))
        b.branch(head)
        b.position_at_end(head)
        lo, hi = b.load(lo_p), b.load(hi_p)
        b.cbranch(b.icmp_signed("<", lo, hi), body, done)
        b.position_at_end(body)
        mid = b.lshr(b.add(lo, hi), ir.Constant(I64, 1))
        s = b.load(b.gep(starts, [mid]))
        le = b.icmp_unsigned("<=", s, a)  # first start > a is the upper bound
        b.store(b.select(le, b.add(mid, ir.Constant(I64, 1)), lo), lo_p)
        b.store(b.select(le, hi, mid), hi_p)
        b.branch(head)
        b.position_at_end(done)
        idx = b.sub(b.load(lo_p), ir.Constant(I64, 1))
        valid = b.icmp_signed(">=", idx, ir.Constant(I64, 0))
        safe = b.select(valid, idx, ir.Constant(I64, 0))
        end = b.load(b.gep(ends, [safe]))
        fits = b.and_(b.icmp_unsigned(">=", end, size), b.icmp_unsigned("<=", a, b.sub(end, size)))
        b.ret(b.select(b.and_(valid, fits), safe, ir.Constant(I64, -1)))
        self._helpers["lookup"] = f
        return f

    def _summary_helper(self) -> ir.Function:
        """void (i64* keys, i8* act, i64 step, i64* out): the active lanes' keys compacted to the front;
        out = count, min, max, and 1 if each active key is the previous active one plus `step`."""
        f = self._helpers.get("summary")
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [I64P, I8P, I64, I64P]), name="warp_summary")
        f.linkage = "internal"
        f.attributes.add("noinline")
        buf, act, step, out = f.args
        b = ir.IRBuilder(f.append_basic_block())
        cp, mnp, mxp, linp, prevp, jp = (b.alloca(I64) for _ in range(6))
        # (only warps with lanes that do not take part come here: WarpStats.summarize does full ones)
        for p, v in ((cp, 0), (mnp, -1), (mxp, 0), (linp, 1), (prevp, 0), (jp, 0)):
            b.store(ir.Constant(I64, v), p)
        head, body, take, nxt, done = (f.append_basic_block() for _ in range(5))
        b.branch(head)
        b.position_at_end(head)
        j = b.load(jp)
        b.cbranch(b.icmp_signed("<", j, ir.Constant(I64, 32)), body, done)
        b.position_at_end(body)
        b.cbranch(b.icmp_unsigned("!=", b.load(b.gep(act, [j])), ir.Constant(I8, 0)), take, nxt)
        b.position_at_end(take)
        key = b.load(b.gep(buf, [j]))
        c = b.load(cp)
        b.store(key, b.gep(buf, [c]))
        first = b.icmp_signed("==", c, ir.Constant(I64, 0))
        stepped = b.icmp_unsigned("==", key, b.add(b.load(prevp), step))
        b.store(b.select(b.or_(first, stepped), b.load(linp), ir.Constant(I64, 0)), linp)
        b.store(key, prevp)
        mn, mx = b.load(mnp), b.load(mxp)
        b.store(b.select(b.icmp_unsigned("<", key, mn), key, mn), mnp)
        b.store(b.select(b.icmp_unsigned(">", key, mx), key, mx), mxp)
        b.store(b.add(c, ir.Constant(I64, 1)), cp)
        b.branch(nxt)
        b.position_at_end(nxt)
        b.store(b.add(j, ir.Constant(I64, 1)), jp)
        b.branch(head)
        b.position_at_end(done)
        for k, p in enumerate((cp, mnp, mxp, linp)):
            b.store(b.load(p), b.gep(out, [ir.Constant(I64, k)]))
        b.ret_void()
        self._helpers["summary"] = f
        return f

    def _sort_helper(self) -> ir.Function:
        """void (i64* buf, i64 n): insertion sort (linear on the already-sorted coalesced case)."""
        f = self._helpers.get("sort")
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [I64P, I64]), name="sort_lanes")
        f.linkage = "internal"
        f.attributes.add("noinline")  # once per warp: keep the lane loops small
        buf, n = f.args
        b = ir.IRBuilder(f.append_basic_block())
        ip, jp, vp = b.alloca(I64), b.alloca(I64), b.alloca(I64)
        b.store(ir.Constant(I64, 1), ip)
        ohead, obody, ihead, icheck, ibody, iend, done = (f.append_basic_block() for _ in range(7))
        b.branch(ohead)
        b.position_at_end(ohead)
        i = b.load(ip)
        b.cbranch(b.icmp_signed("<", i, n), obody, done)
        b.position_at_end(obody)
        b.store(b.load(b.gep(buf, [i])), vp)
        b.store(b.sub(i, ir.Constant(I64, 1)), jp)
        b.branch(ihead)
        b.position_at_end(ihead)
        j = b.load(jp)
        b.cbranch(b.icmp_signed(">=", j, ir.Constant(I64, 0)), icheck, iend)
        b.position_at_end(icheck)
        bj = b.load(b.gep(buf, [j]))
        b.cbranch(b.icmp_signed(">", bj, b.load(vp)), ibody, iend)
        b.position_at_end(ibody)
        b.store(bj, b.gep(buf, [b.add(j, ir.Constant(I64, 1))]))
        b.store(b.sub(j, ir.Constant(I64, 1)), jp)
        b.branch(ihead)
        b.position_at_end(iend)
        b.store(b.load(vp), b.gep(buf, [b.add(b.load(jp), ir.Constant(I64, 1))]))
        b.store(b.add(b.load(ip), ir.Constant(I64, 1)), ip)
        b.branch(ohead)
        b.position_at_end(done)
        b.ret_void()
        self._helpers["sort"] = f
        return f

    def _global_helper(self) -> ir.Function:
        """void (i64* out, i64* keys, i64 nbytes, i64 delta, i64* counters, i64 store): a warp's global
        counters from its summary `out` (count, min, max, consecutive) of keys shifted by delta: bytes,
        requests, 32-byte sectors and ideal sectors (the reference's definitions), for loads (store = 0) or
        stores (1). Only called with a positive count."""
        f = self._helpers.get("global")
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [I64P, I64P, I64, I64, I64P, I64]),
                        name="global_counts")
        f.linkage = "internal"
        f.attributes.add("noinline")
        out, buf, nb, delta, counters, store = f.args
        b = ir.IRBuilder(f.append_basic_block())
        c, mn, mx, lin = (b.load(b.gep(out, [ir.Constant(I64, k)])) for k in range(4))
        mn, mx = b.add(mn, delta), b.add(mx, delta)

        def bump(name: str, v: ir.Value) -> None:  # the load slot, or the store slot just after it
            p = b.gep(counters, [b.add(ir.Constant(I64, _C[name]), store)])
            b.store(b.add(b.load(p), v), p)

        bump("global_load_bytes", b.mul(c, nb))
        bump("global_load_requests", ir.Constant(I64, 1))
        res = b.alloca(I64, 2)
        keys, jp = b.alloca(I64, 32), b.alloca(I64)  # (in the entry block: static stack slots)
        o0, o1 = b.gep(res, [ir.Constant(I64, 0)]), b.gep(res, [ir.Constant(I64, 1)])
        same = b.icmp_unsigned("==", mn, mx)
        five = ir.Constant(I64, 5)
        # lanes at consecutive addresses (or all at one) need no sort: one contiguous range
        with b.if_else(b.or_(b.icmp_unsigned("!=", lin, ir.Constant(I64, 0)), same)) as (then, other):
            with then:
                span = b.add(b.sub(b.lshr(b.add(mx, b.sub(nb, ir.Constant(I64, 1))), five), b.lshr(mn, five)),
                             ir.Constant(I64, 1))
                b.store(span, o0)
                b.store(b.select(same, ir.Constant(I64, 1), c), o1)
            with other:
                # lanes in address order (rows of a row-major tile, one after another): distinct sectors and
                # offsets are the changes along the lanes; otherwise sort (a copy, shifted: keys stay as they are)
                mono = b.call(self._runs_helper(), [buf, c, delta, res])
                with b.if_then(b.not_(mono)):
                    b.store(ir.Constant(I64, 0), jp)
                    head, body, done = (f.append_basic_block() for _ in range(3))
                    b.branch(head)
                    b.position_at_end(head)
                    j = b.load(jp)
                    b.cbranch(b.icmp_signed("<", j, c), body, done)
                    b.position_at_end(body)
                    b.store(b.add(b.load(b.gep(buf, [j])), delta), b.gep(keys, [j]))
                    b.store(b.add(j, ir.Constant(I64, 1)), jp)
                    b.branch(head)
                    b.position_at_end(done)
                    b.call(self._sectors_helper(), [keys, c, res])
        bump("global_load_sectors", b.load(o0))
        bump("global_load_ideal_sectors", b.lshr(b.add(b.mul(b.load(o1), nb), ir.Constant(I64, 31)), five))
        b.ret_void()
        self._helpers["global"] = f
        return f

    def _runs_helper(self) -> ir.Function:
        """i1 (i64* keys, i64 n, i64 delta, i64* out): whether the n keys are non-decreasing; if so out[0] =
        distinct 32-byte sectors of keys + delta, out[1] = distinct keys (a branch-free loop: SIMD)."""
        f = self._helpers.get("runs")
        if f is not None:
            return f
        f = ir.Function(self.module, ir.FunctionType(I1, [I64P, I64, I64, I64P]), name="warp_runs")
        f.linkage = "internal"
        f.attributes.add("noinline")
        buf, n, delta, out = f.args
        b = ir.IRBuilder(f.append_basic_block())
        down, ds, dk, jp = (b.alloca(I64) for _ in range(4))
        for p in (down, ds, dk):
            b.store(ir.Constant(I64, 0), p)
        b.store(ir.Constant(I64, 1), jp)
        head, body, done = (f.append_basic_block() for _ in range(3))
        b.branch(head)
        b.position_at_end(head)
        j = b.load(jp)
        b.cbranch(b.icmp_signed("<", j, n), body, done)
        b.position_at_end(body)
        cur = b.add(b.load(b.gep(buf, [j])), delta)
        prev = b.add(b.load(b.gep(buf, [b.sub(j, ir.Constant(I64, 1))])), delta)
        b.store(b.or_(b.load(down), b.zext(b.icmp_unsigned("<", cur, prev), I64)), down)
        five = ir.Constant(I64, 5)
        b.store(b.add(b.load(ds), b.zext(b.icmp_unsigned("!=", b.lshr(cur, five), b.lshr(prev, five)), I64)), ds)
        b.store(b.add(b.load(dk), b.zext(b.icmp_unsigned("!=", cur, prev), I64)), dk)
        b.store(b.add(j, ir.Constant(I64, 1)), jp)
        b.branch(head)
        b.position_at_end(done)
        b.store(b.add(b.load(ds), ir.Constant(I64, 1)), b.gep(out, [ir.Constant(I64, 0)]))
        b.store(b.add(b.load(dk), ir.Constant(I64, 1)), b.gep(out, [ir.Constant(I64, 1)]))
        b.ret(b.icmp_unsigned("==", b.load(down), ir.Constant(I64, 0)))
        self._helpers["runs"] = f
        return f

    def _sectors_helper(self) -> ir.Function:
        """void (i64* offsets, i64 n, i64* out): out[0] distinct 32-byte sectors, out[1] distinct offsets.
        Accesses are aligned and at most 32 bytes, so each lies in one sector (the reference's start and
        end sectors coincide)."""
        f = self._helpers.get("sectors")
        if f is not None:
            return f
        sort = self._sort_helper()
        f = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [I64P, I64, I64P]), name="warp_sectors")
        f.linkage = "internal"
        f.attributes.add("noinline")  # once per warp: keep the lane loops small
        buf, n, out = f.args
        b = ir.IRBuilder(f.append_basic_block())
        b.call(sort, [buf, n])
        sp, dp, ip = b.alloca(I64), b.alloca(I64), b.alloca(I64)
        b.store(ir.Constant(I64, 1), sp)
        b.store(ir.Constant(I64, 1), dp)
        b.store(ir.Constant(I64, 1), ip)
        head, body, done = (f.append_basic_block() for _ in range(3))
        b.branch(head)
        b.position_at_end(head)
        i = b.load(ip)
        b.cbranch(b.icmp_signed("<", i, n), body, done)
        b.position_at_end(body)
        cur = b.load(b.gep(buf, [i]))
        prev = b.load(b.gep(buf, [b.sub(i, ir.Constant(I64, 1))]))
        newd = b.zext(b.icmp_unsigned("!=", cur, prev), I64)
        news = b.zext(b.icmp_unsigned("!=", b.lshr(cur, ir.Constant(I64, 5)), b.lshr(prev, ir.Constant(I64, 5))), I64)
        b.store(b.add(b.load(dp), newd), dp)
        b.store(b.add(b.load(sp), news), sp)
        b.store(b.add(i, ir.Constant(I64, 1)), ip)
        b.branch(head)
        b.position_at_end(done)
        b.store(b.load(sp), b.gep(out, [ir.Constant(I64, 0)]))
        b.store(b.load(dp), b.gep(out, [ir.Constant(I64, 1)]))
        b.ret_void()
        self._helpers["sectors"] = f
        return f

    def _conflicts_helper(self) -> ir.Function:
        """i64 (i64* words, i64 n): extra wavefronts of one shared request: the busiest bank's distinct
        words, less one (the reference's warp_bank_conflicts)."""
        f = self._helpers.get("conflicts")
        if f is not None:
            return f
        sort = self._sort_helper()
        f = ir.Function(self.module, ir.FunctionType(I64, [I64P, I64]), name="bank_conflicts")
        f.linkage = "internal"
        f.attributes.add("noinline")  # once per warp: keep the lane loops small
        buf, n = f.args
        b = ir.IRBuilder(f.append_basic_block())
        b.call(sort, [buf, n])
        banks = b.alloca(I64, 32)
        for k in range(32):
            b.store(ir.Constant(I64, 0), b.gep(banks, [ir.Constant(I64, k)]))
        ip, mp = b.alloca(I64), b.alloca(I64)
        b.store(ir.Constant(I64, 0), ip)
        b.store(ir.Constant(I64, 0), mp)
        head, body, count, nxt, done = (f.append_basic_block() for _ in range(5))
        b.branch(head)
        b.position_at_end(head)
        i = b.load(ip)
        b.cbranch(b.icmp_signed("<", i, n), body, done)
        b.position_at_end(body)
        cur = b.load(b.gep(buf, [i]))
        first = b.icmp_signed("==", i, ir.Constant(I64, 0))
        prev = b.load(b.gep(buf, [b.select(first, i, b.sub(i, ir.Constant(I64, 1)))]))
        b.cbranch(b.or_(first, b.icmp_unsigned("!=", cur, prev)), count, nxt)
        b.position_at_end(count)
        slot = b.gep(banks, [b.and_(cur, ir.Constant(I64, 31))])
        v = b.add(b.load(slot), ir.Constant(I64, 1))
        b.store(v, slot)
        m = b.load(mp)
        b.store(b.select(b.icmp_signed(">", v, m), v, m), mp)
        b.branch(nxt)
        b.position_at_end(nxt)
        b.store(b.add(i, ir.Constant(I64, 1)), ip)
        b.branch(head)
        b.position_at_end(done)
        m = b.load(mp)
        b.ret(b.select(b.icmp_signed(">", m, ir.Constant(I64, 0)), b.sub(m, ir.Constant(I64, 1)), m))
        self._helpers["conflicts"] = f
        return f


class MemDesc:
    """A global/shared ld or st, parsed once per block (its warp statistics live here during the dry run)."""

    def __init__(self, space: str, load: bool, mem_op: Mem, elems: list[Any], vt: str, size: int,
                 nbytes: int) -> None:
        self.space, self.load, self.mem_op, self.elems = space, load, mem_op, elems
        self.vt, self.size, self.nbytes = vt, size, nbytes
        self.stats: WarpStats
        self.hit_lo: ir.Value
        self.hit_hi: ir.Value
        self.hit_slot: ir.Value  # the unified slot of the last hit allocation when a peer's, else -1
        self.leader: MemDesc | None = None  # counts from this instruction's warp summary, shifted by delta
        self.delta = 0
        self.red: list[ir.Value] = []  # dry run: the warp's min, max and OR of addresses, taking-part lanes
        self.dev: list[ir.Value] = []  # dry run: the warp's min and max of address - lane * nbytes
        self.span = (0, 0)  # a leader: the lowest and highest offset of its followers from it
        self.group = 1  # a leader: how many accesses (itself included) count from its summary
        self.base_version: tuple[str, int] | None = None  # (base register, its version in the segment)
        self.chunk_lo: ir.Value
        self.chunk_hi: ir.Value


class WarpStats:
    """One memory instruction's view of a warp during the dry run: each lane's key (byte offset for
    global, first 4-byte word for shared) and whether it took part. `finish` summarizes them (one shared
    helper: count, min, max, contiguity; active keys compacted to the front) and turns that into the
    reference's counters."""

    def __init__(self, g: KernelCodegen) -> None:
        self.g = g
        self.buf = g.entry_alloca(I64, 32)
        self.act = g.entry_alloca(I8, 32)
        self.out = g.entry_alloca(I64, 4)  # the leader's summary: count, min, max, contiguous
        self.conf = g.entry_alloca(I64)  # the leader's bank conflicts (shared)

    def add(self, a: ir.Value, i: ir.Value, d: MemDesc, part: ir.Value) -> None:
        g = self.g
        bld = g.bld
        if d.space == "shared":
            key = bld.lshr(bld.add(a, g.shared_base(i)), ir.Constant(I64, 2))
        else:
            key = bld.sub(a, ir.Constant(I64, GLOBAL_BASE))
        j = bld.and_(i, ir.Constant(I64, 31))
        bld.store(key, bld.gep(self.buf, [j]))
        bld.store(bld.zext(part, I8), bld.gep(self.act, [j]))

    def finish(self, d: MemDesc, counters: ir.Value) -> None:
        """The access's counters for this warp (warphelpers: one function per module). A shared group counts
        through its leader (whole-word shifts: the same conflicts); a global follower through its leader's
        summary, shifted by its offset."""
        g = self.g
        bld = g.bld
        store = ir.Constant(I64, 0 if d.load else 1)
        nb = ir.Constant(I64, d.nbytes)
        lead = d.leader or d
        mn_p, mx_p, _, c_p = lead.red
        c, mn, mx = bld.load(c_p), bld.load(mn_p), bld.load(mx_p)
        if d.space == "shared":
            if d.leader is not None:
                return
            table = g.hoist(lambda: bld.inttoptr(g.ctx(CTX_SHARED_BASE), I64P))
            sb = g.tag(bld.load(bld.gep(table, [bld.mul(g.dry_warp, ir.Constant(I64, 32))])), "aux")
            bld.call(warphelpers.finish_shared(g), [c, mn, mx, sb, self.buf, self.act, self.out, counters, nb,
                                                     ir.Constant(I64, d.group), store])
            return
        lin = bld.icmp_unsigned("==", bld.load(lead.dev[0]), bld.load(lead.dev[1]))
        bld.call(warphelpers.finish_global(g), [c, mn, mx, lin, self.buf, self.act, self.out, nb,
                                                 ir.Constant(I64, d.delta), counters, store,
                                                 ir.Constant(I1, 1 if d.leader is None else 0)])
