"""Per-block fallback: a basic block the native code generator cannot compile runs on the reference
handlers, while the kernel's other blocks stay native.

The driver (driver.py) already hands a block it does not run back to Python (R_PY), and the native run
loop (runloop.py) then runs that block's reference ops on the frame's register arrays. So a kernel with
one `atom`, `vote` or `.approx` instruction no longer runs wholly on the reference executor: only the
blocks holding such instructions do, with the reference's own semantics, counters and fault reports.

Two things need care:

- registers: the JIT wraps definitions of uniform registers so the reference leaves NumPy scalars in the
  frame (hw/uniform.scalar_definition), but native blocks read registers from their lane arrays; the
  executor unwraps those ops in reference blocks too (executor._per_lane), so every write lands in the
  lane array;
- order between chunks: the executor runs chunks on two host threads. The reference runs them one after
  another, so an instruction whose effect another chunk can observe in an order-dependent way (an atomic
  on global or generic memory, whose returned values and float sums depend on the order of the lanes
  applying it; a call to an external function, which may print or launch, or to a device function that
  does either) makes the launch run its chunks on one thread, in the reference's order (`serial_reason`).
"""

from __future__ import annotations

from typing import Any

from strata.hw.ptx.ir import CallArgs, Instruction, Sym

# atom/red spaces that stay inside one block (a chunk holds whole blocks): any order of chunks gives the same
_BLOCK_LOCAL_SPACES = frozenset({"shared", "shared::cta"})


def compile_block(gen: Any, b: int, ins_list: list[Instruction]) -> tuple[str | None, bool]:
    """Emit block b's native function through `gen` (a codegen.KernelCodegen). Returns (why some of the
    block runs on the reference or None, whether the block has a native function `b<b>`).

    When an instruction k > 0 cannot be compiled, the block's function runs ops 0..k-1 and returns k + 1,
    the code a failed memory check returns: the reference handlers run op k (the driver and
    executor._native_op already do that). What follows op k is compiled again the same way, as functions
    `b<b>c<s>` (`gen.pieces[b]`: (s, e), native ops s..e-1, then op e on the reference, e == len: the block's
    end); the executor chains them after the reference ops between (executor._chain). So a block with one
    `ex2.approx` runs everything but that instruction natively."""
    from strata.hw.native.codegen import NativeUnsupported  # (codegen imports this module)

    pieces: list[tuple[int, int]] = []
    gen.pieces = getattr(gen, "pieces", {})
    why, end = _piece(gen, b, f"b{b}", ins_list, NativeUnsupported)
    native = end is not None and end > 0
    s = (end if end is not None else _fail_index(gen, len(ins_list))) + 1 if why is not None else len(ins_list)
    base = gen.blk_start
    while s < len(ins_list):
        gen.blk_start = base + s
        _, e = _piece(gen, b, f"b{b}c{s}", ins_list[s:], NativeUnsupported)
        gen.blk_start = base
        if e is None or e == 0:  # op s itself runs on the reference (or nothing compiles): try after it
            s = s + (e if e is not None else _fail_index(gen, len(ins_list) - s)) + 1
            continue
        pieces.append((s, s + e))
        s += e + 1
    gen.blk_start = base
    if pieces:
        gen.pieces[b] = pieces
    if why is not None and end is not None and end > 0:
        why = f"{why} (ops {end}.. of the block)"
    return why, native


def _piece(gen: Any, b: int, name: str, ins: list[Instruction],
           unsupported: type[Exception]) -> tuple[str | None, int | None]:
    """Compile ins (the block's ops from some s on) as function `name`: (None, len) when all of it compiles;
    (why, k) when op k cannot and ops 0..k-1 do (k may be 0: nothing compiled); (why, None) when even
    the ops before the failing one do not compile."""
    from strata.hw.native.codegen import NOOPS

    try:
        gen._block(b, ins, name=name)
        return None, len(ins)
    except unsupported as e:
        why, k = str(e), _fail_index(gen, len(ins))
        _drop(gen, name)
    if not 0 < k < len(ins) or all(i.opcode in NOOPS for i in ins[:k]):
        return why, 0 if 0 <= k < len(ins) else None
    try:
        gen._block(b, ins[:k], tail=k + 1, name=name)
        return why, k
    except unsupported:
        _drop(gen, name)
    return why, None


def _fail_index(gen: Any, n: int) -> int:
    """The op (of the list just emitted) the code generator was at when it gave up."""
    k = int(getattr(gen, "k", 0))
    return k if 0 <= k < n else 0


def _drop(gen: Any, name: str) -> None:
    """Forget the half-built function `name` (its name is free for a second try)."""
    gen.module.globals.pop(name, None)
    gen.module.scope._useset.discard(name)  # (llvmlite's name registry: no public way to unregister)


def serial_reason(body: list[Instruction], module: Any = None, _seen: set[str] | None = None) -> str | None:
    """Why the kernel's chunks must run one after another, in the reference's order (None: in any order).
    A call to a device function of the module counts for what the function does (a pure math helper does
    not order anything); a call to an external function (printf's vprintf, malloc, a device-side launch) or
    through a register does."""
    seen = set() if _seen is None else _seen
    for ins in body:
        if ins.opcode in ("atom", "red") and not _BLOCK_LOCAL_SPACES.intersection(ins.mods):
            return f"{ins.full_opcode} (PTX line {ins.line}): an atomic other blocks may see"
        if ins.opcode == "call":
            ops = [op for op in ins.operands if not isinstance(op, CallArgs)]
            name = ops[0].name if ops and isinstance(ops[0], Sym) else None
            fn = module.functions.get(name) if module is not None and name is not None else None
            if fn is None or name is None or not fn.has_body:
                return f"call{' to ' + name if name else ''} (PTX line {ins.line})"
            if name not in seen:
                seen.add(name)
                why = serial_reason(fn.body, module, seen)
                if why is not None:
                    return f"{why}, in {name}"
        if ins.opcode in ("multimem", "cp") and any(m.startswith("reduce") for m in ins.mods):
            return f"{ins.full_opcode} (PTX line {ins.line}): a reduction into memory other blocks may see"
    return None
