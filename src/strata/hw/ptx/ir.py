"""The PTX module as the virtual GPU's front end sees it: operands, instructions, functions.

This is the parser's output and the JIT's input. It keeps every fact the engine or an error
message needs (PTX line, CUDA source line from `.loc`) and nothing about how instructions run.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Reg:
    """A register operand (`%r1`, `%tid.x`, `%p2`); `negated` for `!%p2`."""

    name: str
    negated: bool = False


@dataclass(frozen=True)
class Imm:
    """An integer literal (`42`, `-1`, `0xff`)."""

    value: int


@dataclass(frozen=True)
class FImm:
    """A floating literal; `bits` is its IEEE pattern of `width` bits (`0f3F800000` -> 32)."""

    bits: int
    width: int


@dataclass(frozen=True)
class Sym:
    """A name that is not a register: a label, a variable, a parameter or a function."""

    name: str


@dataclass(frozen=True)
class Mem:
    """An address operand `[base+offset]`; base is a Reg, a Sym or None (absolute address)."""

    base: Reg | Sym | None
    offset: int = 0


@dataclass(frozen=True)
class Vec:
    """A vector operand `{%f1, %f2, %f3, %f4}`; elements may be `_` (Sink)."""

    elems: tuple[Operand, ...]


@dataclass(frozen=True)
class Pair:
    """Two destinations written `%r1|%p1` (setp with two results, shfl.sync's predicate)."""

    first: Operand
    second: Operand


@dataclass(frozen=True)
class Sink:
    """The bit bucket `_`."""


@dataclass(frozen=True)
class Sel:
    """A video-instruction operand: a register with a byte/half-word selector or mask (`%r1.b0`,
    `%r2.h10`, `%r3.b7654`; `sel` is 'b0', 'h10', ...) and/or arithmetic negation (`-%r4`, vmad)."""

    reg: Reg
    sel: str = ""
    negated: bool = False


@dataclass(frozen=True)
class CallArgs:
    """A parenthesised operand list in `call (ret), func, (a, b);`."""

    items: tuple[Operand, ...]


Operand = Reg | Imm | FImm | Sym | Mem | Vec | Pair | Sink | CallArgs | Sel


@dataclass
class Instruction:
    """One PTX instruction: `@%p add.rn.f32 %f1, %f2, %f3;` -> opcode 'add', mods ('rn', 'f32')."""

    opcode: str
    mods: tuple[str, ...]
    operands: tuple[Operand, ...]
    guard: Reg | None = None
    line: int = 0
    loc: tuple[int, int] | None = None  # (file index, CUDA source line) from `.loc`

    @property
    def full_opcode(self) -> str:
        return ".".join((self.opcode, *self.mods))


@dataclass
class VarDecl:
    """A state-space variable: `.global .align 4 .b8 table[16] = {...};`, `.shared`, `.local`..."""

    space: str  # 'global' | 'const' | 'shared' | 'local' | 'param'
    name: str
    type: str  # 'b8', 'u32', 'f32', ...
    size: int  # bytes in all
    align: int
    init: bytes | None = None
    extern: bool = False
    line: int = 0
    # (offset in init, symbol) for initializers that hold addresses of other variables
    relocs: tuple[tuple[int, str, int], ...] = ()
    managed: bool = False  # `.attribute(.managed)`: a __managed__ variable (global memory the host sees too)


@dataclass
class Param:
    """A kernel or function parameter (`.param .u64 k_param_0`, `.param .align 8 .b8 p[16]`)."""

    name: str
    type: str
    size: int
    align: int
    ptr_space: str | None = None  # `.ptr.global` attribute, if given
    space: str = "param"  # 'reg' for `.func` register parameters (`.func (.reg .b32 r) f (.reg .b32 a)`)


@dataclass
class Function:
    """A `.entry` (kernel) or `.func` (device function)."""

    name: str
    is_entry: bool
    params: list[Param] = field(default_factory=list)
    returns: list[Param] = field(default_factory=list)
    regs: dict[str, str] = field(default_factory=dict)  # register name -> type ('b32', 'pred')
    body: list[Instruction] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> index into body
    variables: list[VarDecl] = field(default_factory=list)  # .local/.shared/.param inside the body
    directives: dict[str, tuple[int, ...]] = field(default_factory=dict)  # maxntid, reqntid, ...
    line: int = 0
    has_body: bool = True
    prototypes: set[str] = field(default_factory=set)  # `.callprototype` labels for indirect calls
    branch_targets: dict[str, tuple[str, ...]] = field(default_factory=dict)  # `ts: .branchtargets L0, L1;`


@dataclass
class Module:
    """A whole PTX module as NVRTC or nvcc emits it."""

    version: tuple[int, int] = (0, 0)
    target: tuple[str, ...] = ()
    address_size: int = 64
    variables: list[VarDecl] = field(default_factory=list)
    functions: dict[str, Function] = field(default_factory=dict)
    files: dict[int, str] = field(default_factory=dict)
    text: str = ""

    @property
    def kernels(self) -> list[str]:
        return [f.name for f in self.functions.values() if f.is_entry]


# Instructions whose first operand is not a register they write (stores, barriers, calls, ...).
NO_REGISTER_RESULT = frozenset({"st", "red", "bar", "barrier", "membar", "fence", "prefetch", "prefetchu",
                                "call", "trap", "brkpt", "nop", "pmevent", "cp", "griddepcontrol"})


def operand_registers(op: Operand) -> list[str]:
    """Register names an operand mentions: itself, an address base, vector or call-list elements."""
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Sel):
        return [op.reg.name]
    if isinstance(op, Mem) and isinstance(op.base, Reg):
        return [op.base.name]
    if isinstance(op, Vec | CallArgs):
        items = op.elems if isinstance(op, Vec) else op.items
        return [r for e in items for r in operand_registers(e)]
    if isinstance(op, Pair):
        return operand_registers(op.first) + operand_registers(op.second)
    return []


def written_registers(ins: Instruction) -> list[str]:
    """Registers an instruction writes: those in its first operand, unless it only stores or syncs."""
    if ins.opcode in NO_REGISTER_RESULT or not ins.operands or isinstance(ins.operands[0], Mem):
        return []
    return operand_registers(ins.operands[0])
