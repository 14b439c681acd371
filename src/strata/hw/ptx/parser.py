"""PTX text -> `ir.Module`: the front end of the virtual GPU's driver JIT.

Accepts whole modules as NVRTC and nvcc 12-13 emit them (PTX ISA up to 9.x): directives, module
variables with initializers, `.entry`/`.func` with parameters and returns, register declarations,
labels, guards, vector operands, addresses, float literals and `.loc`/`.file` line info, including
the `{ ... }` scopes inline assembly opens. Malformed text raises PTXSyntaxError with line and column.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import struct
from dataclasses import dataclass

from strata.errors import PTXSyntaxError
from strata.hw.ptx.ir import (
    CallArgs,
    FImm,
    Function,
    Imm,
    Instruction,
    Mem,
    Module,
    Operand,
    Pair,
    Param,
    Reg,
    Sel,
    Sink,
    Sym,
    VarDecl,
    Vec,
)

TYPE_SIZES: dict[str, int] = {
    "b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
    "b32": 4, "u32": 4, "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "tf32": 4,
    "b64": 8, "u64": 8, "s64": 8, "f64": 8, "b128": 16, "pred": 1,
    "e4m3x2": 2, "e5m2x2": 2,
}
SPACES = ("global", "const", "shared", "local", "param", "tex")

# Limits of what the front end accepts. Each bounds the memory or time one line of PTX can cost (a
# `%r<N>` declaration names N registers in a few bytes); all sit far above what NVRTC emits (the
# largest modules of the test suite declare ~1000 registers in one declaration, ~5000 in a module).
MAX_REGISTERS_PER_FUNCTION = 65536  # registers one function declares in all (`%r<N>` counts N)
MAX_REGISTERS_PER_MODULE = 262144  # registers all functions of a module declare together
MAX_PARAM_BYTES = 32764  # one parameter or `.param` variable: CUDA's kernel-parameter limit (12.1+)
MAX_LOCAL_BYTES = 512 * 1024  # one `.local` variable: the per-thread local memory of sm_70..sm_100
MAX_NESTING = 64  # `{` nesting of initializers and vector operands (the parser recurses on them)
MAX_LITERAL = (1 << 64) - 1  # integer literals are at most 64 bits (PTX ISA 4.5.1)
VECTOR_FIELDS = ("x", "y", "z", "w")
_FIELD_ALIAS = {"r": "x", "g": "y", "b": "z", "a": "w"}  # `%v.r` is `%v.x` (PTX ISA 5.4.2)
# byte/half-word selectors and masks of video instructions: `.b0`, `.b3210`, `.b7654`, `.h1`, `.h32`
_VIDEO_SELECTOR = re.compile(r"b[0-7]{1,4}|h[0-3]{1,2}")

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*.*?\*/)
  | (?P<string>"[^"\n]*")
  | (?P<fhex>0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16})
  | (?P<float>\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)
  | (?P<int>0[xX][0-9a-fA-F]+U?|0[bB][01]+U?|\d+U?)
  | (?P<directive>\.[A-Za-z_][A-Za-z0-9_]*)
  | (?P<word>[A-Za-z_$%][A-Za-z0-9_$%]*(?:\.[A-Za-z0-9_]+(?:::[A-Za-z0-9_]+)*)*)
  | (?P<punct>[{}()\[\],;:@!+\-|<>=])
    """,
    re.VERBOSE | re.DOTALL,
)


@dataclass
class Token:
    kind: str
    text: str
    line: int
    col: int


def tokenize(text: str) -> list[Token]:
    """Split PTX text into tokens, dropping whitespace and comments."""
    tokens: list[Token] = []
    line, line_start, pos = 1, 0, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise PTXSyntaxError(
                f"unexpected character {text[pos]!r}", line, pos - line_start + 1,
                _line_text(text, line_start),
            )
        kind = m.lastgroup or ""
        if kind == "nl":
            line, line_start = line + 1, m.end()
        elif kind == "bcomment":
            newlines = m.group().count("\n")
            if newlines:
                line += newlines
                line_start = m.start() + m.group().rfind("\n") + 1
        elif kind not in ("ws", "lcomment"):
            tokens.append(Token(kind, m.group(), line, pos - line_start + 1))
        pos = m.end()
    tokens.append(Token("eof", "", line, pos - line_start + 1))
    return tokens


def parse(text: str) -> Module:
    """Parse a PTX module.

    Example:
        >>> m = parse(".version 8.0\\n.target sm_90\\n.address_size 64\\n"
        ...           ".visible .entry k() { ret; }")
        >>> m.kernels, m.functions["k"].body[0].opcode
        (['k'], 'ret')
    """
    parser = _Parser(text)
    try:
        return parser.module()
    except RecursionError:  # a safety net: nesting is bounded by MAX_NESTING already
        raise parser.error("PTX nested too deeply") from None


@functools.lru_cache(maxsize=128)
def parse_cached(text: str) -> Module:
    """`parse`, remembered per PTX text: loading the same module again (another device, a rebuilt
    Module from the compile cache) skips the parser. The IR is never modified after parsing."""
    return parse(text)


def _line_text(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def _int_value(tok: str) -> int:
    t = tok.rstrip("U")
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    # PTX, like C, reads a leading 0 as octal
    if len(t) > 1 and t[0] == "0":
        if any(c in "89" for c in t):
            raise ValueError(f"{tok} is not an octal number")
        return int(t, 8)
    return int(t)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.toks = tokenize(text)
        self.i = 0
        self.mod = Module(text=text)
        self.loc: tuple[int, int] | None = None
        self.fn = Function("", False)
        self.module_regs = 0  # registers declared so far in the whole module
        self.depth = 0  # current `{` nesting of initializers and vector operands
        self.fn_regs = 0  # registers declared so far in the current function
        self.vectors: dict[str, int] = {}  # vector registers of the current function -> length

    # -- token helpers
    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.i]
        if t.kind == "eof":  # every loop that consumes tokens ends here on truncated input
            raise self.error("unexpected end of input", t)
        self.i += 1
        return t

    def skip_past(self, text: str) -> None:
        """Consume tokens up to and including `text` (a `;` or `)`); truncated input is an error."""
        while self.next().text != text:
            pass

    def nest(self) -> None:
        """Enter one more `{` level; too deep is an error, not a Python RecursionError."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"braces nested more than {MAX_NESTING} deep")

    def error(self, msg: str, tok: Token | None = None) -> PTXSyntaxError:
        tok = tok or self.peek()
        src = self.lines[tok.line - 1] if 0 < tok.line <= len(self.lines) else ""
        return PTXSyntaxError(msg, tok.line, tok.col, src)

    def expect(self, text: str) -> Token:
        t = self.peek()
        if t.text != text:
            got = "end of input" if t.kind == "eof" else repr(t.text)
            raise self.error(f"expected '{text}', got {got}")
        return self.next()

    def accept(self, text: str) -> bool:
        if self.peek().text == text:
            self.next()
            return True
        return False

    def expect_int(self) -> int:
        neg = self.accept("-")
        t = self.next()
        if t.kind != "int":
            raise self.error(f"expected an integer, got {t.text!r}", t)
        v = self.int_value(t)
        return -v if neg else v

    def int_value(self, t: Token) -> int:
        try:
            v = _int_value(t.text)
        except ValueError as e:
            raise self.error(str(e), t) from None
        if v > MAX_LITERAL:
            raise self.error(f"integer literal {t.text} does not fit in 64 bits", t)
        return v

    def positive_int(self, what: str, limit: int) -> int:
        """An integer in [1, limit] (array dimensions, register counts)."""
        tok = self.peek()
        v = self.expect_int()
        if not 0 < v <= limit:
            raise self.error(f"{what} {v} is out of range (1..{limit})", tok)
        return v

    def expect_name(self) -> Token:
        t = self.next()
        if t.kind != "word":
            raise self.error(f"expected a name, got {t.text!r}", t)
        return t

    # -- module level
    def module(self) -> Module:
        while self.peek().kind != "eof":
            self.top_level()
        return self.mod

    def top_level(self) -> None:
        t = self.peek()
        d = t.text
        if d == ".version":
            self.next()
            tok = self.next()
            major, _, minor = tok.text.partition(".")
            if not (major.isdigit() and minor.isdigit()):
                raise self.error(f"bad .version {tok.text!r}, expected MAJOR.MINOR", tok)
            self.mod.version = (int(major), int(minor))
            if self.mod.version[0] > 9:
                raise self.error(f"PTX ISA {tok.text} is newer than supported (up to 9.x)", tok)
        elif d == ".target":
            self.next()
            targets = [self.expect_name().text]
            while self.accept(","):
                targets.append(self.expect_name().text)
            self.mod.target = tuple(targets)
        elif d == ".address_size":
            self.next()
            self.mod.address_size = self.expect_int()
        elif d == ".file":
            self.next()
            idx = self.expect_int()
            s = self.next()
            if s.kind != "string":
                raise self.error("expected a file name string after .file", s)
            self.mod.files[idx] = s.text.strip('"')
            while self.accept(","):
                self.expect_int()
        elif d == ".section" or d == "@@DWARF":
            self.skip_section()
        elif d in (".visible", ".extern", ".weak", ".common", ".entry", ".func", ".global",
                   ".const", ".shared", ".local", ".tex", ".alias"):
            self.declaration()
        elif t.kind == "eof":
            return
        else:
            raise self.error(f"unexpected {d!r} at module scope")

    def skip_section(self) -> None:
        # DWARF sections (-G) carry nothing the engine needs
        self.next()
        while self.peek().text != "{" and self.peek().kind != "eof":
            self.next()
        depth = 0
        while self.peek().kind != "eof":
            tok = self.next()
            if tok.text == "{":
                depth += 1
            elif tok.text == "}":
                depth -= 1
                if depth == 0:
                    return

    def declaration(self) -> None:
        extern = False
        while self.peek().text in (".visible", ".extern", ".weak", ".common"):
            extern |= self.next().text == ".extern"
        t = self.peek()
        if t.text in (".entry", ".func"):
            self.function(extern)
        elif t.text == ".alias":
            self.skip_past(";")
        else:
            for v in self.var_decl(extern):
                self.mod.variables.append(v)

    # -- variables
    def var_decl(self, extern: bool = False) -> list[VarDecl]:
        line = self.peek().line
        space = self.next().text.lstrip(".")
        if space not in SPACES:
            raise self.error(f"unknown state space .{space}")
        align, vec, vtype = 0, 1, ""
        managed = False
        while self.peek().kind == "directive":
            d = self.next().text
            if d == ".attribute" and self.peek().text == "(":
                managed |= self.var_attributes(space)
            elif d == ".align":
                tok = self.peek()
                align = self.positive_int("alignment", 1 << 32)
                if align & (align - 1):
                    raise self.error(f"alignment {align} is not a power of two", tok)
            elif d in (".v2", ".v4", ".v8"):
                vec = int(d[2:])
            elif d.lstrip(".") in TYPE_SIZES:
                vtype = d.lstrip(".")
            elif d in (".ptr", ".attribute"):
                continue
            else:
                raise self.error(f"unexpected {d!r} in a variable declaration")
        if not vtype:
            raise self.error(f"a .{space} variable needs a type")
        out: list[VarDecl] = []
        while True:
            name = self.expect_name().text
            count, unsized = 1, False
            dims: list[int] = []
            while self.accept("["):
                if self.accept("]"):
                    unsized = True
                    dims.append(0)
                    continue
                dims.append(self.positive_int("array dimension", MAX_LITERAL))
                self.expect("]")
            for d_ in dims:
                count *= d_ if d_ else 1
            elem = TYPE_SIZES[vtype] * vec
            init = None
            relocs: tuple[tuple[int, str, int], ...] = ()
            if self.accept("="):
                init, relocs, n_init = self.initializer(vtype, vec)
                if unsized:
                    count = max(count, n_init // elem if elem else 0)
            size = elem * count if not (unsized and init is None) else 0
            # the loader zero-fills variables, so a short initializer is not padded here
            if init is not None and len(init) > size:
                raise self.error(f"initializer of {name!r} has {len(init)} bytes, the variable holds {size}")
            limit = {"param": MAX_PARAM_BYTES, "local": MAX_LOCAL_BYTES}.get(space)
            if limit is not None and size > limit:
                raise self.error(f".{space} variable {name!r} of {size} bytes exceeds the limit of {limit}")
            out.append(VarDecl(space, name, vtype, size, align or elem, init, extern, line, relocs, managed))
            if not self.accept(","):
                break
        self.expect(";")
        return out

    def var_attributes(self, space: str) -> bool:
        """`.attribute(.managed)` or `.attribute(.unified(uuid1, uuid2))` of a .global variable; True
        when it is managed."""
        self.expect("(")
        managed = False
        while True:
            tok = self.next()
            if tok.text == ".managed":
                managed = True
            elif tok.text == ".unified":
                if self.accept("("):
                    self.skip_past(")")
            else:
                raise self.error(f"unknown variable attribute {tok.text!r} (expected .managed or .unified)", tok)
            if not self.accept(","):
                break
        self.expect(")")
        if space != "global":
            raise self.error(f".attribute({'.managed' if managed else '.unified'}) applies to .global variables, "
                             f"not .{space}")
        return managed

    def initializer(self, vtype: str, vec: int) -> tuple[bytes, tuple[tuple[int, str, int], ...], int]:
        values: list[Operand] = []

        def items() -> None:
            if self.accept("{"):
                self.nest()
                if not self.accept("}"):
                    items()
                    while self.accept(","):
                        items()
                    self.expect("}")
                self.depth -= 1
            else:
                values.append(self.init_value())

        items()
        size = TYPE_SIZES[vtype]
        out = bytearray()
        relocs: list[tuple[int, str, int]] = []
        for v in values:
            if isinstance(v, Sym) or (isinstance(v, Mem) and isinstance(v.base, Sym)):
                sym = v.name if isinstance(v, Sym) else v.base.name  # type: ignore[union-attr]
                off = 0 if isinstance(v, Sym) else v.offset
                relocs.append((len(out), sym, off))
                out += bytes(size)
            else:
                out += _encode_scalar(v, vtype)
        return bytes(out), tuple(relocs), len(out)

    def init_value(self) -> Operand:
        t = self.peek()
        if t.kind == "word" and t.text.startswith(("generic(", "generic")) and t.text == "generic":
            self.next()
            self.expect("(")
            name = self.expect_name().text
            self.expect(")")
            return Sym(name)
        if t.kind == "word":
            self.next()
            if self.accept("+"):
                return Mem(Sym(t.text), self.expect_int())
            return Sym(t.text)
        return self.literal()

    def literal(self) -> Operand:
        neg = self.accept("-")
        t = self.next()
        if t.kind == "int":
            v = self.int_value(t)
            return Imm(-v if neg else v)
        if t.kind == "fhex":
            width = 32 if t.text[1] in "fF" else 64
            bits = int(t.text[2:], 16)
            if neg:
                bits ^= 1 << (width - 1)
            return FImm(bits, width)
        if t.kind == "float":
            fv = -float(t.text) if neg else float(t.text)
            return FImm(struct.unpack("<Q", struct.pack("<d", fv))[0], 64)
        raise self.error(f"expected a literal, got {t.text!r}", t)

    # -- functions
    def function(self, extern: bool) -> None:
        kind = self.next()
        is_entry = kind.text == ".entry"
        fn = Function("", is_entry, line=kind.line)
        if not is_entry and self.peek().text == "(":
            fn.returns = self.param_list()
        while self.peek().kind == "directive" and self.peek().text in (".attribute", ".noreturn"):
            self.next()
            if self.peek().text == "(":
                self.next()
                self.skip_past(")")
        fn.name = self.expect_name().text
        if self.peek().text == "(":
            fn.params = self.param_list()
        while self.peek().kind == "directive" and self.peek().text in (
            ".maxntid", ".reqntid", ".minnctapersm", ".maxnreg", ".maxnctapersm", ".noreturn",
            ".pragma", ".explicitcluster", ".reqnctapercluster", ".maxclusterrank", ".blocksareclusters",
        ):
            d = self.next().text.lstrip(".")
            vals: list[int] = []
            if d == "pragma":
                self.skip_past(";")
                continue
            if self.peek().kind == "int":
                vals.append(self.expect_int())
                while self.accept(","):
                    vals.append(self.expect_int())
            fn.directives[d] = tuple(vals)
        for p in (*fn.returns, *fn.params):
            if p.space == "reg":  # `.func (.reg .b32 r) f (.reg .b32 a)`: registers of the body
                if fn.is_entry:
                    raise self.error(f"kernel parameter {p.name!r} must be .param, not .reg")
                fn.regs[p.name] = p.type
        if self.accept(";"):
            fn.has_body = False
        else:
            self.body(fn)
        prev = self.mod.functions.get(fn.name)
        if prev is None or not prev.has_body:
            self.mod.functions[fn.name] = fn
        elif fn.has_body:
            raise self.error(f"function {fn.name!r} defined twice", kind)

    def param_list(self) -> list[Param]:
        self.expect("(")
        params: list[Param] = []
        if self.accept(")"):
            return params
        while True:
            params.append(self.param())
            if self.accept(")"):
                return params
            self.expect(",")

    def param(self) -> Param:
        space = self.next()
        if space.text not in (".param", ".reg"):
            raise self.error(f"expected .param or .reg, got {space.text!r}", space)
        align, ptype, ptr_space, vec = 0, "", None, 1
        while self.peek().kind == "directive":
            d = self.next().text.lstrip(".")
            if d == "align":
                align = self.positive_int("alignment", MAX_PARAM_BYTES)
            elif d == "ptr":
                continue
            elif d in SPACES:
                ptr_space = d
            elif d in TYPE_SIZES:
                ptype = d
            elif d in ("v2", "v4", "v8") and space.text == ".param":
                vec = int(d[1:])
            else:
                raise self.error(f"unexpected .{d} in a parameter")
        if not ptype:
            raise self.error("a parameter needs a type")
        name = self.expect_name().text
        size = TYPE_SIZES[ptype] * vec
        if self.accept("["):
            if space.text == ".reg":
                raise self.error(".reg parameters cannot be arrays")
            size *= self.positive_int("parameter array size", MAX_PARAM_BYTES)
            self.expect("]")
        if size > MAX_PARAM_BYTES:
            raise self.error(f"parameter {name!r} of {size} bytes exceeds the limit of {MAX_PARAM_BYTES}")
        return Param(name, ptype, size, align or TYPE_SIZES[ptype] * vec, ptr_space, space.text.lstrip("."))

    def body(self, fn: Function) -> None:
        self.fn = fn
        self.fn_regs = len(fn.regs)  # `.reg` parameters
        self.vectors = {}
        self.expect("{")
        # inline asm opens nested scopes whose registers may shadow outer ones; rename them
        scopes: list[dict[str, str]] = [{}]
        # labels are scoped too (inline asm with a spin-wait label, inlined twice, defines it twice): per
        # nested scope, where its instructions start and the labels it defines
        scope_labels: list[tuple[int, dict[str, str]]] = [(0, {})]
        scope_id = 0
        while True:
            t = self.peek()
            if t.kind == "eof":
                raise self.error(f"unterminated body of {fn.name!r}: missing '}}'")
            if t.text == "}":
                self.next()
                if len(scopes) == 1:
                    return
                scopes.pop()
                start, labels = scope_labels.pop()
                if labels:
                    _rename_labels(fn.body, start, labels)
                    for scoped in labels.values():  # a jump table of the block lists the block's labels
                        if scoped in fn.branch_targets:
                            fn.branch_targets[scoped] = tuple(labels.get(x, x) for x in fn.branch_targets[scoped])
                continue
            if t.text == "{":
                self.next()
                if len(scopes) > MAX_NESTING:  # register lookups walk the scopes: keep them few
                    raise self.error(f"scopes nested more than {MAX_NESTING} deep", t)
                scope_id += 1
                scopes.append({"": f"$s{scope_id}"})
                scope_labels.append((len(fn.body), {}))
                continue
            if t.text == ".reg":
                self.reg_decl(fn, scopes)
            elif t.text in (".local", ".shared", ".param", ".const", ".global"):
                for v in self.var_decl():
                    if len(scopes) > 1:
                        scopes[-1][v.name] = v.name + scopes[-1][""]
                        v.name = scopes[-1][v.name]
                    fn.variables.append(v)
            elif t.text == ".loc":
                self.next()
                f = self.expect_int()
                ln = self.expect_int()
                self.expect_int()
                while self.accept(","):
                    # `, function_name ..., inlined_at f l c` forms
                    while self.peek().text != "," and self.peek().line == t.line and self.peek().kind != "eof":
                        self.next()
                self.loc = (f, ln)
            elif t.text in (".pragma", ".maxnreg", ".maxntid", ".reqntid", ".minnctapersm"):
                self.skip_past(";")
            elif t.kind == "word" and self.peek(1).text == ":" and self.peek(2).text == ".callprototype":
                self.next()
                self.next()
                self.skip_past(";")  # a call signature for indirect calls; no code
                fn.prototypes.add(t.text)
            elif t.kind == "word" and self.peek(1).text == ":" and self.peek(2).text == ".branchtargets":
                self.next()
                self.next()
                self.next()
                name = t.text
                if len(scopes) > 1:  # scoped like a label (inline asm inlined twice declares it twice)
                    name = t.text + scopes[-1][""]
                    if t.text in scope_labels[-1][1]:
                        raise self.error(f"label {t.text!r} defined twice in one block", t)
                    scope_labels[-1][1][t.text] = name
                if name in fn.branch_targets or name in fn.labels:
                    raise self.error(f"label {t.text!r} defined twice", t)
                targets = [self.expect_name().text]  # a jump table for brx.idx; the jit checks the labels
                while self.accept(","):
                    targets.append(self.expect_name().text)
                self.expect(";")
                fn.branch_targets[name] = tuple(targets)
            elif t.kind == "word" and self.peek(1).text == ":":
                self.next()
                self.next()
                name = t.text
                if len(scopes) > 1:  # local to its `{ }` block: branches inside the block reach it
                    name = t.text + scopes[-1][""]
                    if t.text in scope_labels[-1][1]:
                        raise self.error(f"label {t.text!r} defined twice in one block", t)
                    scope_labels[-1][1][t.text] = name
                if name in fn.labels:
                    raise self.error(f"label {t.text!r} defined twice", t)
                fn.labels[name] = len(fn.body)
            else:
                fn.body.append(self.instruction(fn, scopes))

    def reg_decl(self, fn: Function, scopes: list[dict[str, str]]) -> None:
        self.next()
        rtype = ""
        vec = 1
        while self.peek().kind == "directive":
            d = self.next().text.lstrip(".")
            if d in ("v2", "v4"):
                vec = int(d[1:])
            elif d in TYPE_SIZES:
                rtype = d
            else:
                raise self.error(f"unexpected .{d} in a register declaration")
        if not rtype:
            raise self.error("a register declaration needs a type")
        if vec != 1 and rtype == "pred":
            raise self.error("predicate registers cannot be vectors")
        while True:
            name_tok = self.expect_name()
            name = name_tok.text
            if "." in name:
                raise self.error(f"bad register name {name!r}", name_tok)
            count = self.positive_int("register count", MAX_REGISTERS_PER_FUNCTION) if self.accept("<") else 0
            if count:
                self.expect(">")
            names = [f"{name}{k}" for k in range(count)] if count else [name]
            self.count_registers(len(names) * vec, name_tok)
            for n in names:
                full = self.scoped(n, scopes, declare=True)
                if vec == 1:
                    fn.regs[full] = rtype
                    continue
                # a vector register is its elements, `%v.x` .. `%v.w`, each a scalar register
                self.vectors[full] = vec
                for c in VECTOR_FIELDS[:vec]:
                    fn.regs[f"{full}.{c}"] = rtype
            if not self.accept(","):
                break
        self.expect(";")

    def count_registers(self, n: int, tok: Token) -> None:
        self.fn_regs += n
        self.module_regs += n
        if self.fn_regs > MAX_REGISTERS_PER_FUNCTION:
            raise self.error(f"function declares more than {MAX_REGISTERS_PER_FUNCTION} registers", tok)
        if self.module_regs > MAX_REGISTERS_PER_MODULE:
            raise self.error(f"module declares more than {MAX_REGISTERS_PER_MODULE} registers", tok)

    def register_name(self, text: str, scopes: list[dict[str, str]]) -> str:
        """The scoped name of `text`; a vector element `%v.r` becomes `%v.x` of the scoped `%v`."""
        base, dot, fld = text.partition(".")
        if dot and fld in (*VECTOR_FIELDS, *_FIELD_ALIAS):
            vbase = self.scoped(base, scopes)
            if vbase in self.vectors:
                return f"{vbase}.{_FIELD_ALIAS.get(fld, fld)}"
        return self.scoped(text, scopes)

    @staticmethod
    def scoped(name: str, scopes: list[dict[str, str]], declare: bool = False) -> str:
        if declare:
            if len(scopes) == 1:
                return name
            scopes[-1][name] = name + scopes[-1][""]
            return scopes[-1][name]
        for sc in reversed(scopes[1:]):
            if name in sc:
                return sc[name]
        return name

    # -- instructions
    def instruction(self, fn: Function, scopes: list[dict[str, str]]) -> Instruction:
        guard = None
        first = self.peek()
        if self.accept("@"):
            neg = self.accept("!")
            g = self.expect_name()
            guard = Reg(self.scoped(g.text, scopes), neg)
        op_tok = self.next()
        if op_tok.kind != "word":
            raise self.error(f"expected an instruction, got {op_tok.text!r}", op_tok)
        parts = op_tok.text.split(".")
        opcode, mods = parts[0], tuple(parts[1:])
        # `.type` suffixes the lexer split off, e.g. `ld.global.nc.v4.f32` stays one token, but
        # some forms put a directive-like token right after the opcode
        while self.peek().kind == "directive" and self.peek().line == op_tok.line and \
                self.peek().col == op_tok.col + len(op_tok.text):
            mods = (*mods, self.next().text.lstrip("."))
        operands: list[Operand] = []
        if self.peek().text != ";":
            operands.append(self.operand(scopes))
            while self.accept(","):
                operands.append(self.operand(scopes))
        if self.peek().text != ";":
            raise self.error(f"expected ';' after {op_tok.text}, got {self.peek().text!r}")
        self.next()
        return Instruction(opcode, mods, tuple(operands), guard, first.line, self.loc)

    def operand(self, scopes: list[dict[str, str]]) -> Operand:
        op = self.simple_operand(scopes)
        if self.accept("|"):
            return Pair(op, self.simple_operand(scopes))
        return op

    def simple_operand(self, scopes: list[dict[str, str]]) -> Operand:
        t = self.peek()
        if t.text == "[":
            return self.address(scopes)
        if t.text == "{":
            self.next()
            self.nest()
            elems = [self.simple_operand(scopes)]
            while self.accept(","):
                elems.append(self.simple_operand(scopes))
            self.expect("}")
            self.depth -= 1
            flat: list[Operand] = []
            for e in elems:  # a whole vector register inside braces stands for its elements
                flat.extend(e.elems if isinstance(e, Vec) else (e,))
            return Vec(tuple(flat))
        if t.text == "(":
            self.next()
            self.nest()
            items: list[Operand] = []
            if not self.accept(")"):
                items.append(self.simple_operand(scopes))
                while self.accept(","):
                    items.append(self.simple_operand(scopes))
                self.expect(")")
            self.depth -= 1
            return CallArgs(tuple(items))
        if t.text == "!":
            self.next()
            r = self.expect_name()
            return Reg(self.scoped(r.text, scopes), True)
        if t.kind == "word":
            self.next()
            if t.text == "_":
                return Sink()
            name = self.register_name(t.text, scopes)
            if name in self.vectors:
                return Vec(tuple(Reg(f"{name}.{c}") for c in VECTOR_FIELDS[:self.vectors[name]]))
            base, _, sel = name.rpartition(".")
            if base and name not in self.fn.regs and _VIDEO_SELECTOR.fullmatch(sel):
                rbase = self.scoped(t.text.rpartition(".")[0], scopes)
                if rbase in self.fn.regs:
                    return Sel(Reg(rbase), sel)
            if name.startswith("%") or name in self.fn.regs:  # inline asm names registers freely
                return Reg(name)
            return Sym(name)
        if t.text == "-" and self.peek(1).kind == "word":  # `-%r3`: a negated vmad operand
            self.next()
            op = self.simple_operand(scopes)
            if isinstance(op, Reg):
                return Sel(op, "", True)
            if isinstance(op, Sel) and not op.negated:
                return Sel(op.reg, op.sel, True)
            raise self.error("only a register can be negated here")
        if t.kind in ("int", "fhex", "float") or t.text == "-":
            return self.literal()
        raise self.error(f"expected an operand, got {t.text!r}")

    def address(self, scopes: list[dict[str, str]]) -> Mem | Vec:
        # texture and surface forms `[tex, {coords}]` are tuples, not addresses
        depth, k = 0, 1
        while self.peek(k).kind != "eof" and not (depth == 0 and self.peek(k).text == "]"):
            text = self.peek(k).text
            depth += text == "{"
            depth -= text == "}"
            if depth == 0 and text == ",":
                self.expect("[")
                items = [self.simple_operand(scopes)]
                while self.accept(","):
                    items.append(self.simple_operand(scopes))
                self.expect("]")
                return Vec(tuple(items))
            k += 1
        self.expect("[")
        base: Reg | Sym | None = None
        offset = 0
        t = self.peek()
        if t.kind == "word":
            self.next()
            name = self.register_name(t.text, scopes)
            base = Reg(name) if name.startswith("%") or name in self.fn.regs else Sym(name)
            while self.peek().text in ("+", "-"):
                sign = -1 if self.next().text == "-" else 1
                offset += sign * self.expect_int()
        else:
            offset = self.expect_int()
        self.expect("]")
        return Mem(base, offset)


def _encode_scalar(v: Operand, vtype: str) -> bytes:
    size = TYPE_SIZES[vtype]
    if isinstance(v, FImm):
        if vtype.startswith("f") and size in (4, 8):
            if v.width == size * 8:
                return v.bits.to_bytes(size, "little")
            fv = struct.unpack("<d", v.bits.to_bytes(8, "little"))[0] if v.width == 64 else \
                struct.unpack("<f", v.bits.to_bytes(4, "little"))[0]
            return struct.pack("<f" if size == 4 else "<d", fv)
        return (v.bits & ((1 << (size * 8)) - 1)).to_bytes(size, "little")
    if isinstance(v, Imm):
        if vtype in ("f32", "f64"):
            return struct.pack("<f" if size == 4 else "<d", float(v.value))
        return (v.value & ((1 << (size * 8)) - 1)).to_bytes(size, "little")
    raise PTXSyntaxError(f"cannot use {v!r} to initialise a .{vtype} variable")


def _rename_labels(body: list[Instruction], start: int, labels: dict[str, str]) -> None:
    """Point the branches of a closed `{ }` block (body[start:]) at the labels the block defined."""
    for i in range(start, len(body)):
        ins = body[i]
        if any(isinstance(op, Sym) and op.name in labels for op in ins.operands):
            ops = tuple(Sym(labels[op.name]) if isinstance(op, Sym) and op.name in labels else op
                        for op in ins.operands)
            body[i] = dataclasses.replace(ins, operands=ops)
