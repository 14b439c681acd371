"""The driver JIT of the virtual GPU: lowers each PTX function once into runnable basic blocks.

Like a GPU driver compiling PTX to machine code at module load, this resolves every operand to a
slot in a frame's value list, picks one handler per opcode variant, splits the body into basic
blocks and computes each branch's reconvergence point (its immediate post-dominator). Anything the
engine cannot run is rejected here, at load time, with UnsupportedInstruction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from strata.errors import PTXSyntaxError, UnsupportedInstruction
from strata.hw.counters import INSTRUCTION_CLASSES
from strata.hw.isa import REGISTRY
from strata.hw.isa.registry import DTYPES, TYPE_NAMES
from strata.hw.memory import PARAM_WINDOW
from strata.hw.ptx.ir import (
    FImm,
    Function,
    Imm,
    Instruction,
    Module,
    Operand,
    Reg,
    Sym,
    VarDecl,
    operand_registers,
    written_registers,
)
from strata.hw.ptx.parser import TYPE_SIZES
from strata.hw.uniform import scalar_definition, uniform_registers

EXIT = -1
TERMINATORS = ("bra", "ret", "exit", "brx")
CLASS_INDEX = {c: i for i, c in enumerate(INSTRUCTION_CLASSES)}

# Special registers: name -> how the engine computes them per chunk (see engine.Chunk.special).
SPECIAL_PREFIXES = (
    "%tid", "%ntid", "%ctaid", "%nctaid", "%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid",
    "%gridid", "%clock", "%clock64", "%globaltimer", "%lanemask_eq", "%lanemask_lt", "%lanemask_le",
    "%lanemask_gt", "%lanemask_ge", "%dynamic_smem_size", "%total_smem_size", "%envreg",
    "%globaltimer_lo", "%globaltimer_hi", "%pm", "%cluster", "%nclusterid", "%clusterid",
    "%is_explicit_cluster", "%cluster_ctarank", "%cluster_nctarank", "%aggr_smem_size", "%reserved_smem_offset",
)

# Shared memory reserved for NVIDIA system software in every block on sm_80+ (the CUDA Programming Guide's
# 1 KB per block, cudaDevAttrReservedSharedMemoryPerBlock). Cooperative groups keep the scratch of
# multi-warp tiles (barriers and a slot per warp, <= 288 bytes) at %reserved_smem_offset_1. Modeled as a
# block's first 1 KB of shared memory in modules that read %reserved_smem_*, user variables after it.
RESERVED_SMEM_BYTES = 1024
RESERVED_SMEM_NAME = "$reserved_smem"  # the synthetic shared variable that holds the region


def storage_dtype(ptx_type: str) -> np.dtype:
    """Register storage: raw bits of the declared width (pred -> bool)."""
    if ptx_type == "pred":
        return np.dtype(np.bool_)
    return np.dtype(f"u{TYPE_SIZES.get(ptx_type, 4)}")


@dataclass(frozen=True)
class Slot:
    """How a frame fills one entry of its value list."""

    kind: str  # 'view' | 'const' | 'special' | 'local_sym'
    key: Any
    dtype: np.dtype


@dataclass
class Block:
    """A basic block: ops in order, then a terminator."""

    start: int
    ops: list[tuple[Callable[[Any, Any], None], bool]] = field(default_factory=list)
    term: str = "fall"  # 'fall' | 'bra' | 'ret' | 'exit'
    target: int = EXIT  # block index for 'bra'
    guard: int = -1  # slot of the guard predicate, -1 if none
    guard_neg: bool = False
    ipdom: int = EXIT
    hist: np.ndarray = field(default_factory=lambda: np.zeros(len(INSTRUCTION_CLASSES), np.int64))
    flops: dict[str, int] = field(default_factory=dict)
    n_instructions: int = 0
    lines: list[int] = field(default_factory=list)
    # 'brx': the blocks lanes may jump to, and (frame, mask) -> each lane's next block (isa/control.jump_table)
    targets: tuple[int, ...] = ()
    jump: Callable[[Any, Any], np.ndarray] | None = None

    @property
    def pure_exit(self) -> bool:
        """Just `ret` or `exit`: lanes branching here can leave at once (nothing else to run)."""
        return not self.ops and self.term in ("ret", "exit") and self.guard < 0


@dataclass
class JitFunction:
    """A lowered `.entry` or `.func`."""

    name: str
    fn: Function
    slots: list[Slot]
    reg_storage: dict[str, np.dtype]
    blocks: list[Block]
    local_size: int  # bytes of this frame's local depot (all .local variables)
    local_offsets: dict[str, int]
    param_vars: dict[str, int]  # body .param variable -> size
    index: int = 0
    reg_pool: dict[int, list[Any]] = field(default_factory=dict)  # lanes -> free register sets (engine.RegisterSet)


class LoweringContext:
    """What a lowering sees: the instruction's operands as slots, symbols, and the program.

    `block_index` and `last_write` (register -> position of its last writer earlier in the current
    basic block) let a memory op share address work with other ops of the same block execution.
    """

    def __init__(self, program: Program, fn: Function) -> None:
        self.block_index = 0
        self.block_pos = 0  # the current instruction's position in its basic block
        self.last_write: dict[str, int] = {}
        self.program = program
        self.fn = fn
        self.slots: list[Slot] = []
        self._slot_index: dict[tuple[Any, ...], int] = {}
        self.reg_storage: dict[str, np.dtype] = {}
        self.ins: Instruction | None = None
        self.local_offsets: dict[str, int] = {}
        self.local_size = 0
        self.param_vars: dict[str, int] = {}
        for v in fn.variables:
            if v.space == "local":
                off = -(-self.local_size // max(v.align, 1)) * max(v.align, 1)
                self.local_offsets[v.name] = off
                self.local_size = off + v.size
            elif v.space == "param":
                self.param_vars[v.name] = v.size
            elif v.space == "shared":
                program.add_shared(v)
            elif v.space in ("global", "const"):
                program.add_global(v)

    # -- errors
    def fail(self, message: str) -> PTXSyntaxError:
        line = self.ins.line if self.ins else 0
        return PTXSyntaxError(f"{message} (in {self.fn.name})", line)

    def unsupported(self, what: str | None = None) -> UnsupportedInstruction:
        ins = self.ins
        name = what or (ins.full_opcode if ins else "?")
        return UnsupportedInstruction(name, self.fn.name, ins.line if ins else 0)

    # -- slots
    def _slot(self, kind: str, key: Any, dtype: np.dtype) -> int:
        k = (kind, key, dtype.str if dtype.kind != "b" else "bool")
        i = self._slot_index.get(k)
        if i is None:
            i = len(self.slots)
            self.slots.append(Slot(kind, key, dtype))
            self._slot_index[k] = i
        return i

    def reg_type(self, name: str) -> str:
        t = self.fn.regs.get(name)
        if t is None:
            raise self.fail(f"register {name} is not declared")
        return t

    def src(self, op: Operand, ptx_type: str) -> int:
        """Slot holding `op` read as `ptx_type` (a register view, a constant or a special reg)."""
        dtype = DTYPES[ptx_type] if ptx_type in DTYPES else np.dtype(ptx_type)
        if isinstance(op, Reg):
            if op.negated:
                raise self.fail(f"'!' is only allowed on predicate operands, got !{op.name}")
            if op.name.startswith(SPECIAL_PREFIXES) and op.name not in self.fn.regs:
                return self._slot("special", op.name, dtype)
            rt = self.reg_type(op.name)
            self._declare(op.name, rt)
            return self._view(op.name, rt, dtype)
        if isinstance(op, Imm):
            return self._slot("const", op.value, dtype)
        if isinstance(op, FImm):
            return self._slot("const", ("f", op.bits, op.width), dtype)
        if isinstance(op, Sym):
            return self.symbol_slot(op.name, dtype)
        raise self.fail(f"operand {op!r} cannot be used as a value here")

    def dst(self, op: Operand, ptx_type: str) -> int:
        """Slot of a register view that writes `ptx_type` values into register `op`.

        A narrower type than the register widens on write (sign- or zero-extending), as PTX does
        for `ld.u8 %r1` or `cvt.s8.s32` into a 32-bit register.
        """
        if not isinstance(op, Reg) or op.negated:
            raise self.fail(f"destination must be a register, got {op!r}")
        rt = self.reg_type(op.name)
        self._declare(op.name, rt)
        dtype = DTYPES[ptx_type] if ptx_type in DTYPES else np.dtype(ptx_type)
        store = self.reg_storage[op.name]
        if dtype.kind == "b" or store.kind == "b":
            return self._view(op.name, rt, dtype)
        if dtype.itemsize < store.itemsize:
            signed = dtype.kind == "i"
            dtype = np.dtype(f"{'i' if signed else 'u'}{store.itemsize}")
            if ptx_type == "f16":  # half in a 32-bit register: bits go in the low half, zero-extended
                dtype = np.dtype(f"u{store.itemsize}")
        return self._view(op.name, rt, dtype)

    def _declare(self, name: str, rt: str) -> None:
        if name not in self.reg_storage:
            if rt == "b128":  # registers are 1-D lane arrays of NumPy scalars; none is 128 bits wide
                raise self.unsupported(f"{self.ins.full_opcode if self.ins else '?'} on .b128 register {name}")
            self.reg_storage[name] = storage_dtype(rt)

    def _view(self, name: str, rt: str, dtype: np.dtype) -> int:
        store = self.reg_storage[name]
        if (store.kind == "b") != (dtype.kind == "b"):
            raise self.fail(f"register {name} (.{rt}) used as {dtype}")
        if dtype.itemsize > store.itemsize:
            raise self.fail(f"register {name} (.{rt}) is narrower than the operand type {dtype}")
        return self._slot("view", name, dtype)

    def symbol_slot(self, name: str, dtype: np.dtype) -> int:
        """A variable's address as a constant (global/const/shared) or frame-relative (local)."""
        if name in self.local_offsets:
            return self._slot("local_sym", self.local_offsets[name], dtype)
        addr = self.program.symbol_address(name)
        if addr is None:
            addr = kernel_param_address(self.fn, name)
        if addr is None:
            raise self.fail(f"unknown symbol {name!r}")
        return self._slot("const", addr, dtype)

    def pred(self, op: Operand) -> tuple[int, bool]:
        if not isinstance(op, Reg):
            raise self.fail(f"expected a predicate register, got {op!r}")
        return self.src(Reg(op.name), "pred"), op.negated


def kernel_param_offset(fn: Function, name: str) -> int | None:
    """Byte offset of kernel parameter `name` in the packed argument buffer (None if not one)."""
    if not fn.is_entry:
        return None
    off = 0
    for p in fn.params:
        off = -(-off // p.align) * p.align
        if p.name == name:
            return off
        off += p.size
    return None


def kernel_param_address(fn: Function, name: str) -> int | None:
    """The address `mov.b64 %rd, name` gives a kernel parameter: PARAM_WINDOW + its offset. NVRTC
    takes it for large by-value structs, then reads fields with `ld.param [%rd+off]`."""
    off = kernel_param_offset(fn, name)
    return None if off is None else PARAM_WINDOW + off


class Program:
    """A loaded PTX module: lowered functions plus where its variables live.

    `symbols` maps module variables to device addresses (the runtime allocates them) and shared
    variables to offsets in each block's shared memory.
    """

    def __init__(self, module: Module, global_addresses: dict[str, int]) -> None:
        self.module = module
        self.global_addresses = dict(global_addresses)
        self.shared_offsets: dict[str, int] = {}
        self.shared_static_size = 0
        self.dynamic_shared: set[str] = set()
        self.functions: dict[str, JitFunction] = {}
        self.kernel_shared: dict[str, int] = {}  # kernel -> its static shared bytes
        # Shared layout: the reserved region if the module reads %reserved_smem_* (system software's,
        # first as on hardware), module-scope and device-function variables (every kernel may reach
        # them), then each kernel's own variables from the same offset (kernels never coexist).
        if _reads_reserved_smem(module):
            self.add_shared(VarDecl("shared", RESERVED_SMEM_NAME, "b8", RESERVED_SMEM_BYTES, 16))
        for v in module.variables:
            if v.space == "shared":
                self.add_shared(v)
        for f in module.functions.values():
            if not f.is_entry:
                for v in f.variables:
                    if v.space == "shared":
                        self.add_shared(v)
        common = self.shared_static_size
        widest = common
        for f in module.functions.values():
            if f.is_entry:
                self.shared_static_size = common
                for v in f.variables:
                    if v.space == "shared":
                        self.add_shared(v)
                self.kernel_shared[f.name] = self.shared_static_size
                widest = max(widest, self.shared_static_size)
        self.shared_static_size = widest
        for f in module.functions.values():
            if f.has_body:
                self.functions[f.name] = lower_function(self, f)
        for i, jf in enumerate(self.functions.values()):
            jf.index = i
        for f in module.functions.values():
            if not f.has_body and f.name not in self.functions:
                # an .extern .func declaration nothing defines: fail when a call needs it
                continue

    def add_shared(self, v: Any) -> None:
        if v.name in self.shared_offsets or v.name in self.dynamic_shared:
            return
        if v.extern or v.size == 0:
            self.dynamic_shared.add(v.name)
            return
        align = max(v.align, 1)
        off = -(-self.shared_static_size // align) * align
        self.shared_offsets[v.name] = off
        self.shared_static_size = off + v.size

    def add_global(self, v: Any) -> None:
        if v.name not in self.global_addresses:
            raise PTXSyntaxError(f"function-scope .{v.space} variable {v.name!r} was not allocated", v.line)

    def dynamic_shared_offset(self) -> int:
        """Where `extern .shared` arrays start: after the largest kernel's static variables, so
        device-function code that names them sees one address in every kernel."""
        return -(-self.shared_static_size // 16) * 16

    def shared_bytes(self, kernel: str, dynamic: int) -> int:
        """Shared memory one block of `kernel` uses: static variables, plus dynamic if requested."""
        if dynamic or self.dynamic_shared:
            return self.dynamic_shared_offset() + dynamic
        return self.kernel_shared.get(kernel, self.shared_static_size)

    def symbol_address(self, name: str) -> int | None:
        if name == "WARP_SZ":  # PTX's predefined constant
            return 32
        if name in self.module.functions:
            return function_address(self.module, name)
        if name in self.global_addresses:
            return self.global_addresses[name]
        if name in self.shared_offsets:
            return self.shared_offsets[name]
        if name in self.dynamic_shared:
            return self.dynamic_shared_offset()
        return None

    def shared_space(self, name: str) -> bool:
        return name in self.shared_offsets or name in self.dynamic_shared

    def reserved_smem(self, name: str) -> int | None:
        """The value of `%reserved_smem_offset_{begin,end,cap,0,1}`: where the reserved region lies in
        a block's shared window. `_0` is its start and `_1` its second half (cooperative groups' scratch)."""
        begin = self.shared_offsets.get(RESERVED_SMEM_NAME, 0)
        return {"%reserved_smem_offset_begin": begin, "%reserved_smem_offset_end": begin + RESERVED_SMEM_BYTES,
                "%reserved_smem_offset_cap": RESERVED_SMEM_BYTES, "%reserved_smem_offset_0": begin,
                "%reserved_smem_offset_1": begin + RESERVED_SMEM_BYTES // 2}.get(name)


def _reads_reserved_smem(module: Module) -> bool:
    return any(n.startswith("%reserved_smem_offset") for f in module.functions.values() for ins in f.body
               for op in ins.operands for n in operand_registers(op))


def function_address(module: Module, name: str) -> int:
    """The address a function pointer to `name` holds (a code address in its own window)."""
    from strata.hw.memory import FUNCTION_WINDOW

    return FUNCTION_WINDOW + 16 * list(module.functions).index(name)


def function_at(module: Module, address: int) -> str | None:
    """The function whose address is `address`, or None."""
    from strata.hw.memory import FUNCTION_WINDOW

    k, rem = divmod(address - FUNCTION_WINDOW, 16)
    names = list(module.functions)
    return names[k] if rem == 0 and 0 <= k < len(names) else None


def lower_function(program: Program, fn: Function) -> JitFunction:
    """Lower one function: operands to slots, instructions to ops, body to basic blocks."""
    ctx = LoweringContext(program, fn)
    body = fn.body
    leaders = {0} | set(fn.labels.values())
    for i, ins in enumerate(body):
        if ins.opcode in TERMINATORS:
            leaders.add(i + 1)
        elif ins.opcode in ("bar", "barrier") and not {"arrive", "red"} & set(ins.mods):
            leaders.update((i, i + 1))  # a block of its own: lanes wait there (isa/warp.park_at_barrier)
    starts = sorted(x for x in leaders if x < len(body)) or [0]
    block_of = {s: b for b, s in enumerate(starts)}
    blocks: list[Block] = []
    uniform = uniform_registers(fn)
    scalar_defs: list[tuple[Block, int, str]] = []
    for b, s in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else len(body)
        blk = Block(start=s)
        ctx.block_index = b
        ctx.last_write = {}
        for pos, ins in enumerate(body[s:end]):
            ctx.ins = ins
            ctx.block_pos = pos
            blk.lines.append(ins.line)
            if ins.opcode in TERMINATORS:
                _terminator(ctx, blk, ins, fn, block_of)
                blk.hist[CLASS_INDEX["control"]] += 1
                blk.n_instructions += 1
                continue
            lowering = REGISTRY.get(ins.opcode)
            if lowering is None:
                raise UnsupportedInstruction(ins.full_opcode, fn.name, ins.line)
            op = lowering(ins, ctx)
            fn_run = op.fn if not _trace_instructions() else _traced(op.fn, fn.name, ins)
            if ins.guard is not None:
                fn_run = _guarded(fn_run, *ctx.pred(ins.guard))
            if uniform and ins.operands and isinstance(ins.operands[0], Reg) and ins.operands[0].name in uniform:
                scalar_defs.append((blk, len(blk.ops), ins.operands[0].name))
            blk.ops.append((fn_run, op.exact))
            for reg in written_registers(ins):
                ctx.last_write[reg] = pos
            blk.hist[CLASS_INDEX[op.cls]] += 1
            blk.n_instructions += 1
            if op.flops:
                blk.flops[op.flop_cls] = blk.flops.get(op.flop_cls, 0) + op.flops
        if blk.term == "fall" and b + 1 >= len(starts):
            blk.term = "ret"
        blocks.append(blk)
    if scalar_defs:
        scalar_defs = _dominating_definitions(fn, blocks, starts, scalar_defs)
    for blk, k, reg in scalar_defs:  # now every view of the register has its slot
        views = [(i, sl.dtype) for i, sl in enumerate(ctx.slots) if sl.kind == "view" and sl.key == reg]
        run, exact = blk.ops[k]
        blk.ops[k] = (scalar_definition(run, ctx.reg_storage[reg], views), exact)
    _post_dominators(blocks)
    return JitFunction(fn.name, fn, ctx.slots, ctx.reg_storage, blocks, ctx.local_size,
                       ctx.local_offsets, ctx.param_vars)


def _dominating_definitions(fn: Function, blocks: list[Block], starts: list[int],
                            defs: list[tuple[Block, int, str]]) -> list[tuple[Block, int, str]]:
    """The uniform definitions that run before every read of their register: a read the definition
    does not dominate (reordered or hand-written PTX) would see the register's lane array, not the
    scalar. Such registers, and uniform ones computed from them, stay per-lane."""
    n = len(blocks)
    succ = [[t for t in _successors(blocks, b) if t != EXIT] for b in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    for b in range(n):
        for t in succ[b]:
            pred[t].append(b)
    idom = _dominator_tree(0, succ, pred) if n else {}
    index = {id(blk): b for b, blk in enumerate(blocks)}
    where = {reg: (index[id(blk)], k) for blk, k, reg in defs}
    reads: dict[str, list[tuple[int, int]]] = {}
    sources: dict[str, set[str]] = {}
    for b, start in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else len(fn.body)
        for pos, ins in enumerate(fn.body[start:end]):
            ops = ins.operands[1:] if written_registers(ins) else ins.operands
            names = {r for op in ops for r in operand_registers(op)}
            if ins.guard is not None:
                names.add(ins.guard.name)
            for r in names & where.keys():
                reads.setdefault(r, []).append((b, pos))
            for w in written_registers(ins):
                if w in where and where[w] == (b, pos):
                    sources[w] = names

    def dominates(a: int, b: int) -> bool:
        if b not in idom:  # unreachable: never reads anything
            return True
        while b != a:
            up = idom[b]
            if up == b:
                return False
            b = up
        return True

    bad = {reg for reg, (db, dk) in where.items()
           if any(not (rb == db and rp > dk) and (rb == db or not dominates(db, rb)) for rb, rp in reads.get(reg, ()))}
    changed = True
    while changed:  # a uniform value computed from a demoted one is per-lane too
        changed = False
        for reg in where.keys() - bad:
            if sources.get(reg, set()) & bad:
                bad.add(reg)
                changed = True
    return [d for d in defs if d[2] not in bad]


def _terminator(ctx: LoweringContext, blk: Block, ins: Instruction, fn: Function,
                block_of: dict[int, int]) -> None:
    if ins.opcode == "brx":
        _jump_table(ctx, blk, ins, fn, block_of)
        return
    blk.term = ins.opcode
    if ins.opcode == "bra":
        if len(ins.operands) != 1 or not isinstance(ins.operands[0], Sym):
            raise ctx.fail("bra needs one label operand")
        label = ins.operands[0].name
        if label not in fn.labels:
            raise ctx.fail(f"branch to undefined label {label!r}")
        idx = fn.labels[label]
        blk.target = block_of.get(idx, EXIT)
    if ins.guard is not None:
        blk.guard, blk.guard_neg = ctx.pred(ins.guard)


def _jump_table(ctx: LoweringContext, blk: Block, ins: Instruction, fn: Function, block_of: dict[int, int]) -> None:
    """`brx.idx %i, ts;` ends a block with one successor per `.branchtargets` label (and the next block
    when guarded); reconvergence is the ipdom of all of them, as for any branch."""
    from strata.hw.isa.control import jump_table

    table = ins.operands[1].name if len(ins.operands) == 2 and isinstance(ins.operands[1], Sym) else ""
    labels = fn.branch_targets.get(table)
    if labels is None:
        raise ctx.fail(f"{ins.full_opcode} needs a `.branchtargets` label declared in {fn.name}, got {table!r}")
    for label in labels:
        if label not in fn.labels:
            raise ctx.fail(f"jump table {table} names undefined label {label!r}")
    targets = [block_of.get(fn.labels[label], EXIT) for label in labels]
    nxt = ctx.block_index + 1 if ctx.block_index + 1 < len(block_of) else EXIT
    blk.term = "brx"
    blk.jump = jump_table(ins, ctx, table, targets, nxt)
    blk.targets = tuple(dict.fromkeys([*targets, *([nxt] if ins.guard is not None else [])]))


def _trace_instructions() -> bool:
    from strata import config

    return config.settings().debug >= 4


def _traced(run: Callable[[Any, Any], None], fname: str, ins: Instruction) -> Callable[[Any, Any], None]:
    """STRATA_DEBUG=4: print each instruction as it executes, with how many lanes run it."""
    import sys

    text = f"[strata] {fname} PTX line {ins.line}: {ins.full_opcode} " + ", ".join(map(_fmt, ins.operands))

    def traced(f: Any, m: Any) -> None:
        lanes = "all live lanes" if m is None else f"{int(np.count_nonzero(m))} lanes"
        print(f"{text}  ({lanes})", file=sys.stderr)
        run(f, m)

    return traced


def _fmt(op: Operand) -> str:
    from strata.hw.ptx.ir import Mem, Pair, Sel, Vec

    if isinstance(op, Sel):
        return ("-" if op.negated else "") + op.reg.name + (f".{op.sel}" if op.sel else "")
    if isinstance(op, Reg):
        return ("!" if op.negated else "") + op.name
    if isinstance(op, Imm):
        return str(op.value)
    if isinstance(op, FImm):
        return f"0{'f' if op.width == 32 else 'd'}{op.bits:0{op.width // 4}X}"
    if isinstance(op, Sym):
        return op.name
    if isinstance(op, Mem):
        base = "" if op.base is None else _fmt(op.base)
        if not base:
            return f"[{op.offset}]"
        return f"[{base}{'' if not op.offset else f'{op.offset:+d}'}]"
    if isinstance(op, Vec):
        return "{" + ", ".join(map(_fmt, op.elems)) + "}"
    if isinstance(op, Pair):
        return f"{_fmt(op.first)}|{_fmt(op.second)}"
    return type(op).__name__


def _guarded(run: Callable[[Any, Any], None], slot: int, neg: bool) -> Callable[[Any, Any], None]:
    def guarded(f: Any, m: Any) -> None:
        p = f.V[slot]
        g = ~p if neg else p
        if m is not None:
            g = g & m
        run(f, g)

    return guarded


def _successors(blocks: list[Block], b: int) -> list[int]:
    blk = blocks[b]
    nxt = b + 1 if b + 1 < len(blocks) else EXIT
    if blk.term == "bra":
        return [blk.target, nxt] if blk.guard >= 0 else [blk.target]
    if blk.term in ("ret", "exit"):
        return [EXIT, nxt] if blk.guard >= 0 else [EXIT]
    if blk.term == "brx":
        return list(blk.targets)
    return [nxt]


def _post_dominators(blocks: list[Block]) -> None:
    """Set each block's immediate post-dominator: where lanes that split at its branch rejoin.

    Dominators of the reversed graph from a virtual exit (Cooper, Harvey, Kennedy: "A Simple, Fast
    Dominance Algorithm"), near-linear in the number of blocks. A block with no path to the exit (an
    endless loop) never reconverges: EXIT.
    """
    n = len(blocks)
    succ = [_successors(blocks, b) for b in range(n)]
    exit_node = n  # the virtual exit, EXIT's stand-in
    preds_rev: list[list[int]] = [[] for _ in range(n + 1)]  # reversed graph: node -> its CFG successors
    for b in range(n):
        preds_rev[b] = [exit_node if s == EXIT else s for s in succ[b]]
    succ_rev: list[list[int]] = [[] for _ in range(n + 1)]  # reversed graph: node -> its CFG predecessors
    for b in range(n):
        for s in preds_rev[b]:
            succ_rev[s].append(b)
    idom = _dominator_tree(exit_node, succ_rev, preds_rev)
    for b in range(n):
        d = idom.get(b)
        blocks[b].ipdom = EXIT if d is None or d == exit_node else d


def _dominator_tree(root: int, succ: list[list[int]], pred: list[list[int]]) -> dict[int, int]:
    """Immediate dominators of the nodes reachable from `root` (root -> root), iteratively."""
    order: list[int] = []  # postorder, by an explicit stack (no recursion on deep graphs)
    seen = {root}
    stack = [(root, iter(succ[root]))]
    while stack:
        node, it = stack[-1]
        for nxt in it:
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, iter(succ[nxt])))
                break
        else:
            stack.pop()
            order.append(node)
    post = {v: i for i, v in enumerate(order)}
    idom = {root: root}
    changed = True
    while changed:
        changed = False
        for v in reversed(order):  # reverse postorder
            if v == root:
                continue
            new = -1
            for p in pred[v]:
                if p not in idom:
                    continue
                if new < 0:
                    new = p
                    continue
                a, b = p, new
                while a != b:
                    while post[a] < post[b]:
                        a = idom[a]
                    while post[b] < post[a]:
                        b = idom[b]
                new = a
            if new >= 0 and idom.get(v) != new:
                idom[v] = new
                changed = True
    return idom


def const_value(key: Any, dtype: np.dtype) -> Any:
    """A constant slot's value as a NumPy scalar of `dtype`."""
    if isinstance(key, tuple) and key and key[0] == "f":
        _, bits, width = key
        if dtype.kind == "f":
            fv = np.array([bits], dtype=np.uint32 if width == 32 else np.uint64).view(
                np.float32 if width == 32 else np.float64)[0]
            return dtype.type(fv)
        return np.array([bits & ((1 << (8 * dtype.itemsize)) - 1)], dtype=f"u{dtype.itemsize}").view(dtype)[0]
    if dtype.kind == "b":
        return np.bool_(bool(key))
    if dtype.kind == "f":
        return dtype.type(key)
    return np.array([key & ((1 << (8 * dtype.itemsize)) - 1)], dtype=f"u{dtype.itemsize}").view(dtype)[0]


__all__ = ["EXIT", "Block", "JitFunction", "LoweringContext", "Program", "Slot", "TYPE_NAMES",
           "const_value", "lower_function"]


def register_pressure(fn: Function) -> int:
    """Estimate registers per thread as a register allocator would need them: the peak number of
    32-bit register words live at once (linear live intervals, stretched over loops), plus 2.

    NVRTC declares one virtual register per value; counting declarations overestimates by 3-10x.
    """
    first: dict[str, int] = {}
    last: dict[str, int] = {}

    for i, ins in enumerate(fn.body):
        names = [n for op in ins.operands for n in operand_registers(op)]
        if ins.guard is not None:
            names.append(ins.guard.name)
        for n in names:
            if n in fn.regs:
                first.setdefault(n, i)
                last[n] = i
    # A loop (a backward branch at i to target t) keeps a value live into it (first < t <= last) live
    # through it (last >= i). `reach[t]` is the furthest backward branch into t; each register's end
    # grows to the furthest branch whose target its interval covers, until it stops growing.
    reach = np.full(len(fn.body) + 1, -1, dtype=np.int64)
    for i, ins in enumerate(fn.body):
        if ins.opcode == "bra" and ins.operands and isinstance(ins.operands[0], Sym):
            target = fn.labels.get(ins.operands[0].name, i)
            if target <= i:
                reach[target] = max(reach[target], i)
    if (reach >= 0).any():
        furthest = _range_max(reach)
        for n in first:
            end = last[n]
            while True:  # a fixpoint: a longer interval may cover more loop heads
                grown = max(end, furthest(first[n] + 1, end))
                if grown == end:
                    break
                end = grown
            last[n] = end
    delta = np.zeros(len(fn.body) + 2, dtype=np.int64)
    for n, s in first.items():
        t = fn.regs[n]
        if t == "pred":
            continue
        words = 2 if t.endswith("64") else 1
        delta[s] += words
        delta[last[n] + 1] -= words
    peak = int(np.cumsum(delta).max()) if len(delta) else 0
    return max(16, min(255, peak + 2 + (peak + 2) % 2))


def _range_max(values: np.ndarray) -> Callable[[int, int], int]:
    """max(values[lo..hi]) (inclusive) in O(1) per query after an O(n log n) sparse table; -1 if empty."""
    table = [values]
    k = 1
    while 2 * k <= len(values):
        prev = table[-1]
        table.append(np.maximum(prev[:-k], prev[k:]))
        k *= 2

    def query(lo: int, hi: int) -> int:
        hi = min(hi, len(values) - 1)
        if lo > hi:
            return -1
        level = (hi - lo + 1).bit_length() - 1
        row = table[level]
        return int(max(row[lo], row[hi - (1 << level) + 1]))

    return query
