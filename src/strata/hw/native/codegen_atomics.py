"""Native `atom` and `red` on global, shared and generic (global) addresses: the reference's semantics
(hw/isa/atomic.py), bit for bit.

The reference applies the active lanes of a chunk in lane order, as one legal serial order: each lane's
`atom` returns memory just before its own update. A lane loop in lane order is that order itself, so the
native form is a plain read-modify-write per lane. Chunks of a kernel with global atomics run one after
another on one host thread (partial.serial_reason), as the reference runs them; shared memory belongs to
the blocks of one chunk.

Each atomic is a segment of its own. A check pass goes first over the chunk's taking-part lanes: the
addresses' minimum, maximum and OR; the access must be aligned, and inside the block's shared memory or one
live allocation of this device. Any failed check returns before a lane has updated anything, so the
reference handler runs the instruction (and the rest of the block) from exactly that state: it reports the
fault, or serves what native code does not (lanes spread over several allocations, a peer's memory, generic
shared or local window addresses). Counters: `atomic_ops` (one per taking-part lane); the instruction
class and flops come from the block's histogram, as for every native block.

Supported: add (32/64-bit integers wrapping, f32 with the reference's flush-to-zero on global memory, f64;
float results that are NaN become the canonical NaN), min/max (signed and unsigned), and/or/xor, exch, cas
(32 and 64 bits, raw bits), inc/dec (u32). Anything else (16-bit and packed floats, vectors, cache hints,
distributed shared memory) raises NativeUnsupported, and the block runs on the reference.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.memory import GLOBAL_BASE, PARAM_WINDOW
from strata.hw.native import codegen_half, codegen_int
from strata.hw.ptx.ir import Instruction, Mem, Sink

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
I8P, I64P = I8.as_pointer(), I64.as_pointer()

_SEMS = frozenset(("relaxed", "acquire", "release", "acq_rel", "cta", "gpu", "sys"))
_SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared"}
_INTS = ("u32", "s32", "u64", "s64")
_BITS = ("b32", "b64", *_INTS)
_HALVES = ("f16", "bf16", "f16x2", "bf16x2")
_TYPES = {"add": (*_INTS, "f32", "f64", *_HALVES), "min": _INTS, "max": _INTS, "and": _BITS, "or": _BITS, "xor": _BITS,
          "exch": (*_BITS, "f32", "f64"), "cas": (*_BITS, "f32", "f64"), "inc": ("u32",), "dec": ("u32",)}
_CANON = {32: 0x7FFFFFFF, 64: 0x7FFFFFFFFFFFFFFF}


def parse(g: Any, ins: Instruction) -> tuple[str, str, str, int]:
    """(operation, PTX type, space, bytes) of an atom/red the native code runs; raises NativeUnsupported."""
    space, op, types = "generic", None, []
    for m in ins.mods:
        if m in _SPACES:
            space = _SPACES[m]
        elif m in _TYPES and op is None:
            op = m
        elif m in ("b32", "b64", "u32", "s32", "u64", "s64", "f32", "f64", *_HALVES):
            types.append(m)
        elif m not in _SEMS and m != "noftz":
            raise g.fail("(atomic modifiers)")
    if op is None or len(types) != 1 or types[0] not in _TYPES[op]:
        raise g.fail("(atomic type)")
    if ins.opcode == "red" and op in ("exch", "cas"):
        raise g.fail()
    t = types[0]
    if t in _HALVES:
        return op, t, space, 4 if t.endswith("x2") else 2
    return op, t, space, int(t[1:]) // 8


def emit(g: Any, k: int, ins: Instruction) -> None:
    """The atomic at op k of the block being emitted by codegen.KernelCodegen `g`."""
    from strata.hw.native import codegen as cg  # (codegen imports this module)

    g.k, g.ins = k, ins
    op, t, space, nb = parse(g, ins)
    has_d = ins.opcode == "atom"
    ops = list(ins.operands)
    want = int(has_d) + 2 + (op == "cas")
    mem_op = ops[int(has_d)] if len(ops) == want else None
    if not isinstance(mem_op, Mem):
        raise g.fail("operands")
    dst = ops[0] if has_d else None
    srcs = ops[int(has_d) + 1:]
    if mem_op.base is None:
        raise g.fail("absolute address")
    bits = 8 * nb
    ity = ir.IntType(bits)
    bt = f"b{bits}"
    reg_t = t if op in ("add", "min", "max", "inc", "dec") else bt  # the reference's register view
    if t in _HALVES:
        reg_t = bt  # (raw bits: b16, or b32 for a packed pair)
    bld = g.bld
    g.seg_local = set()
    g.seg_vals = None
    g.cur_guard = None

    # check pass: every taking-part lane's address, reduced; bail before any update
    mn_p, mx_p, or_p, c_p = (g.entry_alloca(I64) for _ in range(4))
    for slot, v in zip((mn_p, mx_p, or_p, c_p), (-1, 0, 0, 0), strict=True):
        bld.store(ir.Constant(I64, v), slot)
    umin = g.intrinsic("llvm.umin.i64", I64, [I64, I64])
    umax = g.intrinsic("llvm.umax.i64", I64, [I64, I64])

    def check(i: ir.Value) -> None:
        g.i = i
        with bld.if_then(g.active(i, ins.guard)):
            a = g._address(mem_op, i)
            bld.store(bld.call(umin, [bld.load(mn_p), a]), mn_p)
            bld.store(bld.call(umax, [bld.load(mx_p), a]), mx_p)
            bld.store(bld.or_(bld.load(or_p), a), or_p)
            bld.store(bld.add(bld.load(c_p), ir.Constant(I64, 1)), c_p)
    g._count_loop(g.n_arg, check)
    count = bld.load(c_p)
    with bld.if_then(bld.icmp_signed(">", count, ir.Constant(I64, 0))):
        mn, mx = bld.load(mn_p), bld.load(mx_p)
        bad = bld.icmp_unsigned("!=", bld.and_(bld.load(or_p), ir.Constant(I64, nb - 1)), ir.Constant(I64, 0))
        if space == "shared":
            bad = bld.or_(bad, bld.icmp_unsigned(">", mx, ir.Constant(I64, 0xFFFFFF)))
            bad = bld.or_(bad, bld.icmp_unsigned(">", bld.add(mx, ir.Constant(I64, nb)), g.ctx(cg.CTX_SHARED_LIMIT)))
        else:
            own = bld.and_(bld.icmp_unsigned(">=", mn, g.ctx(cg.CTX_OWN_LO)),
                           bld.icmp_unsigned("<", mx, g.ctx(cg.CTX_OWN_HI)))
            inside = bld.and_(bld.icmp_unsigned(">=", mn, ir.Constant(I64, GLOBAL_BASE)),
                              bld.icmp_unsigned("<", mx, ir.Constant(I64, PARAM_WINDOW)))
            idx = bld.call(g._alloc_lookup(), [mn, ir.Constant(I64, nb), g.ctx(cg.CTX_NALLOC), g.ctx(cg.CTX_STARTS),
                                               g.ctx(cg.CTX_ENDS)])
            found = bld.and_(bld.and_(own, inside), bld.icmp_signed(">=", idx, ir.Constant(I64, 0)))
            safe = bld.select(found, idx, ir.Constant(I64, 0))
            end = bld.load(bld.gep(bld.inttoptr(g.ctx(cg.CTX_ENDS), I64P), [safe]))
            fits = bld.and_(found, bld.icmp_unsigned("<=", mx, bld.sub(end, ir.Constant(I64, nb))))
            bad = bld.or_(bad, bld.not_(fits))
        g._bail_if(bad, k)
        counters = bld.inttoptr(g.ctx(cg.CTX_COUNTERS), I64P)
        p = bld.gep(counters, [ir.Constant(I64, cg._C["atomic_ops"])])
        bld.store(bld.add(bld.load(p), count), p)

    # the updates, lane by lane in lane order (the reference's serial order)
    ftz = op == "add" and t == "f32" and space != "shared"  # (generic addresses that passed are global)

    def lane(i: ir.Value) -> None:
        g.i = i
        with bld.if_then(g.active(i, ins.guard)):
            a = g._address(mem_op, i)
            if space == "shared":
                off = bld.add(bld.trunc(a, I32), bld.trunc(g.shared_base(i), I32))
                host = bld.gep(bld.inttoptr(g.ctx(cg.CTX_SHARED), I8P), [off])
                scope = "shm"
            else:
                host = bld.gep(bld.inttoptr(g.ctx(cg.CTX_MEM), I8P), [bld.sub(a, ir.Constant(I64, GLOBAL_BASE))])
                scope = "mem"
            ptr = bld.bitcast(host, ity.as_pointer())
            old = g.tag(bld.load(ptr, align=nb), scope)
            vals = [_bits(g, s, reg_t, bits, i) for s in srcs]
            new = _apply(g, op, t, old, vals, ftz)
            if new is not None:
                g.tag(bld.store(new, ptr, align=nb), scope)
            if dst is not None and not isinstance(dst, Sink):
                fty = F32 if bits == 32 else F64
                g.write(dst, reg_t, old if reg_t not in ("f32", "f64") else bld.bitcast(old, fty), i)
    g._count_loop(g.n_arg, lane)


def _bits(g: Any, op: Any, reg_t: str, bits: int, i: ir.Value) -> ir.Value:
    v = g.read(op, reg_t, i)
    return g.bld.bitcast(v, ir.IntType(bits)) if reg_t in ("f32", "f64") else v


def _apply(g: Any, op: str, t: str, old: ir.Value, vals: list[ir.Value], ftz: bool) -> ir.Value | None:
    """The value the lane leaves in memory (None: unchanged)."""
    bld = g.bld
    b = vals[0]
    ity = old.type
    if t in _HALVES:  # the reference's float16 / bfloat16 add: exact f32 sum, one rounding, canonical NaN
        et = t.removesuffix("x2")

        def add16(x: ir.Value, y: ir.Value) -> ir.Value:
            return codegen_half.narrow(g, et, bld.fadd(codegen_half.widen(g, et, x), codegen_half.widen(g, et, y)))
        if not t.endswith("x2"):
            return add16(old, b)
        i16 = ir.IntType(16)
        halves = [bld.zext(add16(bld.trunc(bld.lshr(old, ir.Constant(I32, sh)), i16),
                                 bld.trunc(bld.lshr(b, ir.Constant(I32, sh)), i16)), I32) for sh in (0, 16)]
        return bld.or_(halves[0], bld.shl(halves[1], ir.Constant(I32, 16)))
    if op == "add" and t in ("f32", "f64"):
        fty = F32 if t == "f32" else F64
        x, y = bld.bitcast(old, fty), bld.bitcast(b, fty)
        if ftz:
            x, y = g.flush32(x), g.flush32(y)
        r = bld.fadd(x, y)
        if ftz:
            r = g.flush32(r)
        nan = bld.fcmp_unordered("uno", r, r)
        return bld.select(nan, ir.Constant(ity, _CANON[ity.width]), bld.bitcast(r, ity))
    if op in ("add", "min", "max", "and", "or", "xor"):
        return codegen_int.combine(bld, op, old, b, t.startswith("s"))
    if op == "exch":
        return b
    if op == "cas":
        return bld.select(bld.icmp_unsigned("==", old, b), vals[1], old)
    if op == "inc":  # old >= b ? 0 : old + 1
        return bld.select(bld.icmp_unsigned(">=", old, b), ir.Constant(ity, 0), bld.add(old, ir.Constant(ity, 1)))
    if op == "dec":  # (old == 0 || old > b) ? b : old - 1
        wrap = bld.or_(bld.icmp_unsigned("==", old, ir.Constant(ity, 0)), bld.icmp_unsigned(">", old, b))
        return bld.select(wrap, b, bld.sub(old, ir.Constant(ity, 1)))
    raise g.fail()
