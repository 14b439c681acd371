"""Semantics of calls, barriers, fences and traps, and of the two system calls device code makes:
`vprintf` (printf) and `__assertfail` (assert). Branches, `ret` and `exit` are the engine's. Calls to
the device runtime's extern functions (malloc/free, dynamic parallelism) are `isa/device_runtime.py`'s.
"""

from __future__ import annotations

import re
import struct
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.hw.isa.registry import LaneFault, Op, lowers, split_mods, write
from strata.hw.memory import GLOBAL_BASE
from strata.hw.ptx.ir import CallArgs, Reg, Sym

SYSCALLS = ("vprintf", "__assertfail")

# The per-thread call stack is cudaLimitStackSize (default 1024 bytes; the launching device's value,
# engine.Chunk.stack_limit). The driver sizes the stack for non-recursive call chains statically, so
# only frames of functions on a call-graph cycle (recursion) spend it: each one its local depot plus
# RETURN_FRAME_BYTES (return address and saved registers). A launch that recurses past it stops with
# cudaErrorLaunchFailure ("stack overflow"), as on hardware.
STACK_LIMIT_BYTES = 1024  # used when the engine gives no limit
RETURN_FRAME_BYTES = 8
# Each PTX call level runs ~5 nested Python calls (run_frame -> op -> _run_callee -> run_frame); the
# interpreter's recursion limit is raised to fit the depth the modeled stack allows (Python 3.11 runs
# Python-to-Python calls without using the C stack, so this costs heap frames only).
PY_FRAMES_PER_CALL = 8


@lowers("call")
def lower_call(ins: Any, ctx: Any) -> Op:
    ops = list(ins.operands)
    rets: tuple[Any, ...] = ()
    if ops and isinstance(ops[0], CallArgs):
        rets = ops.pop(0).items
    if ops and isinstance(ops[0], Reg):
        return _indirect_call(ins, ctx, rets, ops)
    if not ops or not isinstance(ops[0], Sym):
        raise ctx.fail("call needs a function name or a register holding a function address")
    name = ops.pop(0).name
    args = ops.pop(0).items if ops and isinstance(ops[0], CallArgs) else ()
    module_fn = ctx.program.module.functions.get(name)
    if module_fn is None:
        raise ctx.fail(f"call to undeclared function {name!r}")
    if not module_fn.has_body:
        if name not in SYSCALLS:
            from strata.hw.isa import device_runtime  # the device runtime library's functions (malloc, CDP2)

            op = device_runtime.lower_builtin(ins, ctx, name, [_param_name(ctx, a) for a in args],
                                              [_param_name(ctx, r) for r in rets])
            if op is None:
                raise ctx.unsupported(f"call to external function {name}")
            return op
        return _syscall(ins, ctx, name, [_param_name(ctx, a) for a in args], [_param_name(ctx, r) for r in rets])
    if len(args) != len(module_fn.params) or len(rets) != len(module_fn.returns):
        raise ctx.fail(f"call to {name} passes {len(args)} arguments and {len(rets)} returns, "
                       f"the function takes {len(module_fn.params)} and {len(module_fn.returns)}")
    sizes: dict[str, int] = {}
    binding: list[tuple[str, str]] = []
    reg_in: list[tuple[str, int]] = []  # callee register parameter <- caller slot
    reg_out: list[tuple[str, int]] = []  # callee register return -> caller slot
    for p, a in zip(module_fn.params, args, strict=True):
        if p.space == "reg":
            reg_in.append((p.name, ctx.src(a, _bits_type(p.type))))
        else:
            binding.append((p.name, _param_name(ctx, a)))
    for p, r in zip(module_fn.returns, rets, strict=True):
        if p.space == "reg":
            reg_out.append((p.name, ctx.dst(r, _bits_type(p.type))))
        else:
            binding.append((p.name, _param_name(ctx, r)))
    for _, caller_name in binding:
        sizes[caller_name] = ctx.param_vars.get(caller_name, 8)
    program = ctx.program
    recursive = name in recursive_functions(program.module)

    def run(f: Any, m: Any) -> None:
        _run_callee(f, program.functions[name], binding, sizes, m, ins, recursive, reg_in, reg_out)

    return Op(run, "control", exact=True)


def _bits_type(t: str) -> str:
    """A register parameter travels as raw bits of its width (a .f32 argument keeps its bit pattern)."""
    if t == "pred":
        return t
    from strata.hw.ptx.parser import TYPE_SIZES

    return f"b{8 * TYPE_SIZES.get(t, 4)}"


def recursive_functions(module: Any) -> frozenset[str]:
    """Functions on a cycle of the module's direct call graph (they may recurse without bound)."""
    cached = getattr(module, "_recursive_functions", None)
    if cached is not None:
        return frozenset(cached)
    calls: dict[str, set[str]] = {}
    for fn in module.functions.values():
        calls[fn.name] = {op.name for ins in fn.body if ins.opcode == "call"
                          for op in ins.operands if isinstance(op, Sym) and op.name in module.functions}
    out: set[str] = set()
    for start in calls:  # a function is recursive when it reaches itself; iterative DFS per function
        seen: set[str] = set()
        todo = list(calls[start])
        while todo:
            g = todo.pop()
            if g == start:
                out.add(start)
                break
            if g not in seen:
                seen.add(g)
                todo.extend(calls.get(g, ()))
    result = frozenset(out)
    module._recursive_functions = result
    return result


def _run_callee(f: Any, callee: Any, binding: list[tuple[str, str]], sizes: dict[str, int], lanes: Any,
                ins: Any, recursive: bool, reg_in: Sequence[tuple[str, int]] = (),
                reg_out: Sequence[tuple[str, int]] = ()) -> None:
    """Run `callee` on `lanes` in a new frame whose parameters are the caller's `.param` slots
    (and, for `.reg` parameters, copies of the caller's registers)."""
    from strata.hw import engine  # NOTE: same layer; engine imports the ISA, so bind late

    chunk = f.chunk
    if recursive:
        _check_stack(chunk, callee, lanes, ins)
    want = 1000 + PY_FRAMES_PER_CALL * len(chunk.frames)
    if sys.getrecursionlimit() < want:
        sys.setrecursionlimit(want)
    params = {callee_name: f.param(caller_name, sizes[caller_name]) for callee_name, caller_name in binding}
    top = chunk.local_top
    try:
        frame = engine.Frame(callee, chunk, params)
        regs = frame._bases  # the callee's register arrays, by name (only those its body uses)
        for pname, slot in reg_in:
            if pname in regs:
                write(regs[pname], _as_storage(f.V[slot], regs[pname]), lanes)
        engine.run_frame(frame, lanes)
        for pname, slot in reg_out:
            if pname in regs:
                write(f.V[slot], _as_storage(regs[pname], f.V[slot]), lanes)
    except RecursionError:  # a deep non-recursive call chain: Python's stack ran out before the model's
        lane = 0 if lanes is None else int(np.flatnonzero(lanes)[0])
        raise LaneFault(lane, ins, "stack overflow: device calls nested too deeply", "cudaErrorLaunchFailure",
                        reason="stack overflow") from None
    finally:
        chunk.local_top = top  # the callee's local depot is popped


def _as_storage(v: Any, like: np.ndarray) -> Any:
    """`v` reinterpreted (not converted) as `like`'s dtype when the widths agree."""
    a = np.asarray(v)
    if a.dtype != like.dtype and a.dtype.itemsize == like.dtype.itemsize and like.dtype.kind != "b":
        return a.view(like.dtype)
    return a


def _check_stack(chunk: Any, callee: Any, lanes: Any, ins: Any) -> None:
    """Stop the launch when the recursive frames on this chunk's call stack pass STACK_LIMIT_BYTES."""
    recursive = recursive_functions(chunk.launch.program.module)
    used = sum(fr.jf.local_size + RETURN_FRAME_BYTES for fr in chunk.frames if fr.jf.name in recursive)
    need = callee.local_size + RETURN_FRAME_BYTES
    limit_of = getattr(chunk, "stack_limit", None)
    limit = int(limit_of()) if callable(limit_of) else STACK_LIMIT_BYTES
    if used + need > limit:
        lane = 0 if lanes is None else int(np.flatnonzero(lanes)[0])
        depth = sum(1 for fr in chunk.frames if fr.jf.name in recursive)
        raise LaneFault(lane, ins, f"stack overflow: call to {callee.name} at recursion depth {depth + 1} needs "
                        f"{used + need} bytes of call stack, the limit is {limit} "
                        "(cudaLimitStackSize)", "cudaErrorLaunchFailure", reason="stack overflow",
                        stack_bytes=used + need, stack_limit=limit)


def _indirect_call(ins: Any, ctx: Any, rets: tuple[Any, ...], ops: list[Any]) -> Op:
    """`call (ret), %rd, (args), prototype;`: lanes may hold different targets; each group runs."""
    target = ctx.src(ops.pop(0), "u64")
    args = ops.pop(0).items if ops and isinstance(ops[0], CallArgs) else ()
    arg_names = [_param_name(ctx, a) for a in args]
    ret_names = [_param_name(ctx, r) for r in rets]
    sizes = {n: ctx.param_vars.get(n, 8) for n in (*arg_names, *ret_names)}
    program = ctx.program
    module = program.module

    def run(f: Any, m: Any) -> None:
        from strata.hw.jit import function_at

        t = f.V[target]
        t = np.broadcast_to(np.asarray(t, dtype=np.uint64), (f.chunk.n,))
        active = t if m is None else t[m]
        for addr in np.unique(active):
            name = function_at(module, int(addr))
            lanes = (t == addr) if m is None else (m & (t == addr))
            callee_ir = module.functions.get(name) if name else None
            if callee_ir is None or not callee_ir.has_body or len(callee_ir.params) != len(arg_names) \
                    or len(callee_ir.returns) != len(ret_names):
                lane = int(np.flatnonzero(lanes)[0])
                what = f"no function at {int(addr):#x}" if callee_ir is None else \
                    f"{name} does not match the call's prototype"
                raise LaneFault(lane, ins, f"indirect call through a bad function pointer: {what}",
                                "cudaErrorInvalidPc", address=int(addr), reason="bad function pointer")
            if any(p.space == "reg" for p in (*callee_ir.params, *callee_ir.returns)):
                lane = int(np.flatnonzero(lanes)[0])
                raise LaneFault(lane, ins, f"indirect call to {name}, which takes .reg parameters (not modeled)",
                                "cudaErrorInvalidPc", address=int(addr), reason="bad function pointer")
            binding = [(p.name, a) for p, a in zip(callee_ir.params, arg_names, strict=True)]
            binding += [(p.name, r) for p, r in zip(callee_ir.returns, ret_names, strict=True)]
            _run_callee(f, program.functions[name], binding, sizes, lanes, ins,
                        name in recursive_functions(module))

    return Op(run, "control", exact=True)


def _param_name(ctx: Any, op: Any) -> str:
    """A call argument or return slot: a `.param` variable of the calling function (or one of its own
    parameters, passed on)."""
    if isinstance(op, Sym):
        own = {p.name for p in (*ctx.fn.params, *ctx.fn.returns)}
        if op.name not in ctx.param_vars and op.name not in own:
            raise ctx.fail(f"call argument {op.name!r} is not a .param variable of {ctx.fn.name}")
        return op.name
    raise ctx.unsupported("call arguments that are not .param variables")


# -- barriers
@lowers("bar", "barrier")
def lower_bar(ins: Any, ctx: Any) -> Op:
    flags, types = split_mods(ins.mods)
    if "warp" in flags:  # bar.warp.sync (__syncwarp) is the warp family's
        from strata.hw.isa import warp

        return warp.lower_bar_warp(ins, ctx)
    from strata.hw.isa import warp

    block = ctx.block_index
    partial = len(ins.operands) > 1  # bar.sync id, count: only `count` threads take part
    if "arrive" in flags:  # bar.arrive id, count: counts toward a named barrier without waiting
        if partial and "cluster" not in flags:
            return warp.lower_named_barrier(ins, ctx, block, arrive=True)
        return Op(lambda f, m: None, "sync")
    if "red" in flags:
        return _bar_red(ins, ctx, flags, types)
    if partial and "cluster" not in flags:  # lanes wait until `count` threads of their block arrived
        return warp.lower_named_barrier(ins, ctx, block, arrive=False)
    if "cluster" in flags:  # barrier.cluster.wait: every live thread of the cluster's blocks (isa/warp.py)
        return Op(lambda f, m: warp.cluster_barrier(f, m, ins, block), "sync", exact=True)

    def run(f: Any, m: Any) -> None:
        chunk = f.chunk
        if not partial and (m is not None or chunk.block_sync is not None):
            warp.block_barrier(f, m, ins, block)  # lanes wait there for the rest of their block
        chunk.launch.counters.barriers += chunk.nblocks if m is None else int(
            np.count_nonzero(m.reshape(chunk.nblocks, -1).any(axis=1)))

    return Op(run, "sync", exact=True)


def _check_convergence(chunk: Any, m: np.ndarray, ins: Any) -> None:
    """bar.sync must be reached by every live thread of a block (threads that exited don't count)."""
    live = chunk.alive if chunk.alive is not None else np.ones(chunk.n, dtype=bool)
    act = m.reshape(chunk.nblocks, -1)
    waiting = (live & ~m).reshape(chunk.nblocks, -1)
    bad = act.any(axis=1) & waiting.any(axis=1)
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        lane = b * chunk.lanes_per_block + int(np.flatnonzero(waiting[b])[0])
        raise LaneFault(lane, ins, "Barrier error: bar.sync reached by some threads of the block while "
                        "other live threads of the block are elsewhere (divergent barrier); this thread "
                        "did not arrive", "cudaErrorLaunchFailure", reason="divergent barrier")


def _bar_red(ins: Any, ctx: Any, flags: list[str], types: list[str]) -> Op:
    op = next((x for x in ("popc", "and", "or") if x in flags), None)
    if op is None or len(ins.operands) < 3:
        raise ctx.unsupported()
    psrc, neg = ctx.pred(ins.operands[-1])
    d = ctx.dst(ins.operands[0], "u32" if op == "popc" else "pred")

    def run(f: Any, m: Any) -> None:
        chunk = f.chunk
        if m is not None:
            _check_convergence(chunk, m, ins)
        p = f.V[psrc]
        p = ~p if neg else p
        act = np.ones(chunk.n, dtype=bool) if m is None else m
        if chunk.alive is not None:
            act = act & chunk.alive
        vals = (p & act).reshape(chunk.nblocks, -1)
        if op == "popc":
            per_block = vals.sum(axis=1).astype(np.uint32)
        elif op == "and":
            per_block = ~((~p & act).reshape(chunk.nblocks, -1).any(axis=1))
        else:
            per_block = vals.any(axis=1)
        write(f.V[d], np.repeat(per_block, chunk.lanes_per_block), m)
        chunk.launch.counters.barriers += chunk.nblocks

    return Op(run, "sync", exact=True)


def jump_table(ins: Any, ctx: Any, table: str, targets: Sequence[int], fallthrough: int) -> Any:
    """`@p brx.idx{.uni} %i, ts;`: a function of (frame, mask) giving each lane's next basic block, block
    `targets[%i]` (the labels of `ts: .branchtargets ...`), or `fallthrough` where the guard is false. The
    engine splits the lanes by destination like a multi-way branch. An index past the table is undefined
    behaviour in PTX; here it stops the launch with cudaErrorIllegalInstruction."""
    flags, types = split_mods(ins.mods)
    if "idx" not in flags or types or any(x not in ("idx", "uni") for x in flags):
        raise ctx.unsupported()
    if len(ins.operands) != 2 or not isinstance(ins.operands[1], Sym):
        raise ctx.fail(f"{ins.full_opcode} takes an index and a .branchtargets label")
    index = ctx.src(ins.operands[0], "u32")
    guard = ctx.pred(ins.guard) if ins.guard is not None else None
    k = len(targets)
    dest_of = np.array([*targets, fallthrough], dtype=np.int64)

    def dest(f: Any, m: Any) -> np.ndarray:
        V = f.V
        i = np.broadcast_to(np.asarray(V[index], dtype=np.int64), (f.chunk.n,))
        bad = i >= k
        if guard is not None:
            g = V[guard[0]]
            go = np.broadcast_to(~g if guard[1] else g, i.shape)
            bad = bad & go
            i = np.where(go, i, k)
        if m is not None:
            bad = bad & m
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            raise LaneFault(lane, ins, f"brx.idx index {int(i[lane])} is outside the {k}-entry jump table {table} "
                            "(undefined behaviour in PTX)", "cudaErrorIllegalInstruction",
                            reason="brx.idx index out of range")
        return dest_of[np.minimum(i, k)]

    return dest


@lowers("nanosleep")
def lower_nanosleep(ins: Any, ctx: Any) -> Op:
    """`nanosleep.u32 t`: the warp sleeps about t ns (PTX allows [0, 2t]); modeled as exactly the longest
    t of its active lanes, converted to cycles at the device clock, so %clock64 reads after it advance."""
    if len(ins.operands) != 1:
        raise ctx.fail(f"{ins.full_opcode} takes one operand")
    t = ctx.src(ins.operands[0], "u32")

    def run(f: Any, m: Any) -> None:
        v = f.V[t]
        if isinstance(v, np.ndarray):
            v = v if m is None else v[m]
            if not v.size:
                return
            v = v.max()
        launch = f.chunk.launch
        launch.cycles += int(int(v) * launch.clock_mhz) // 1000

    return Op(run, "sync", exact=True)


@lowers("membar", "fence", "nop", "pmevent", "griddepcontrol", "setmaxnreg")
def lower_noop(ins: Any, ctx: Any) -> Op:
    # The engine runs a chunk in lockstep: every store is visible before the next instruction, so
    # fences order nothing further.
    return Op(lambda f, m: None, "sync")


@lowers("trap", "brkpt")
def lower_trap(ins: Any, ctx: Any) -> Op:
    def run(f: Any, m: Any) -> None:
        lanes = np.flatnonzero(m) if m is not None else np.arange(1)
        if lanes.size:
            raise LaneFault(int(lanes[0]), ins, f"{ins.opcode} executed: the kernel aborted (unspecified launch "
                            "failure)", "cudaErrorLaunchFailure", reason=ins.opcode)

    return Op(run, "control", exact=True)


# -- system calls
def _syscall(ins: Any, ctx: Any, name: str, args: list[str], rets: list[str]) -> Op:
    sizes = {n: ctx.param_vars.get(n, 8) for n in (*args, *rets)}

    def arg(f: Any, k: int, lanes: np.ndarray, fmt: str) -> np.ndarray:
        raw = f.param(args[k], sizes[args[k]])[lanes]
        dt = np.dtype(fmt)
        return np.ascontiguousarray(raw[:, : dt.itemsize]).view(dt)[:, 0]

    if name == "__assertfail":
        def run_assert(f: Any, m: Any) -> None:
            lanes = np.flatnonzero(m) if m is not None else np.arange(f.chunk.n)
            if not lanes.size:
                return
            lane = lanes[:1]
            mem = f.chunk.mem
            msg = _cstring(mem, int(arg(f, 0, lane, "<u8")[0]))
            file = _cstring(mem, int(arg(f, 1, lane, "<u8")[0]))
            line = int(arg(f, 2, lane, "<u4")[0])
            func = _cstring(mem, int(arg(f, 3, lane, "<u8")[0]))
            raise LaneFault(int(lane[0]), ins, f"Assertion `{msg}` failed at {file}:{line} in {func}",
                            "cudaErrorAssert", reason="assert", assertion=msg, file=file, line=line)

        return Op(run_assert, "control", exact=True)

    def run_printf(f: Any, m: Any) -> None:
        lanes = np.flatnonzero(m) if m is not None else np.arange(f.chunk.n)
        if f.chunk.alive is not None:
            lanes = lanes[f.chunk.alive[lanes]]
        if not lanes.size:
            return
        fmts = arg(f, 0, lanes, "<u8")
        bufs = arg(f, 1, lanes, "<u8")
        out = []
        for lane, fp, bp in zip(lanes, fmts, bufs, strict=True):
            out.append(_format(f, int(lane), _cstring(f.chunk.mem, int(fp)), int(bp)))
        sys.stdout.write("".join(out))
        if rets:
            store = f.param(rets[0], sizes[rets[0]])
            store[lanes, :4] = 0

    return Op(run_printf, "control", exact=True)


def _cstring(mem: Any, addr: int, limit: int = 4096) -> str:
    if addr < GLOBAL_BASE or mem.allocation_at(addr) is None:
        return f"<bad string pointer {addr:#x}>"
    a = mem.allocation_at(addr)
    raw = mem.read(addr, min(limit, a.end - addr))
    return raw.split(b"\0", 1)[0].decode("utf-8", "replace")


_SPEC = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+))?(hh|h|ll|l|z|j|t)?([diouxXeEfgGcsp%])")


def _format(f: Any, lane: int, fmt: str, buf: int) -> str:
    """Format one lane's printf: arguments are packed in its local buffer, each aligned to its size."""
    from strata.hw.memory import LOCAL_WINDOW  # local buffer address is generic

    chunk = f.chunk
    pos = 0

    def take(size: int) -> bytes:
        nonlocal pos
        pos = -(-pos // size) * size
        addr = buf + pos
        pos += size
        if LOCAL_WINDOW <= addr < LOCAL_WINDOW + (1 << 32) and chunk.local is not None:
            o = addr - LOCAL_WINDOW
            return chunk.local[lane, o:o + size].tobytes()
        if addr >= GLOBAL_BASE and chunk.mem.allocation_at(addr) is not None:
            return chunk.mem.read(addr, size)
        return bytes(size)

    def sub(mt: re.Match[str]) -> str:
        flags, width, prec, length, conv = mt.groups()
        if conv == "%":
            return "%"
        spec = "%" + (flags or "") + (width or "") + (f".{prec}" if prec else "")
        if conv in "diouxXc":
            size = 8 if length in ("l", "ll", "z", "j", "t") else 4
            raw = take(size)
            signed = conv in "di"
            v = int.from_bytes(raw, "little", signed=signed)
            return (spec + ("d" if conv == "i" else "d" if conv == "u" else conv)) % v
        if conv in "eEfgG":
            return (spec + conv) % struct.unpack("<d", take(8))[0]
        if conv == "s":
            return (spec + "s") % _cstring(chunk.mem, int.from_bytes(take(8), "little"))
        return f"{int.from_bytes(take(8), 'little'):#x}"

    return _SPEC.sub(sub, fmt)

