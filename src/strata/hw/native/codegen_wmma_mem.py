"""Native `wmma.load.{a,b,c}` and `wmma.store.d` to and from shared memory (shared or generic addresses), with
the reference's semantics and counters (hw/isa/tensor.py: `lower_wmma`, `_shared_fast`); codegen_wmma.emit
hands them here (its docstring has the rules shared with wmma.mma: whole warps, the hand-over to the
reference).

A check pass over the chunk's warps goes first: every lane of a running warp with one base address and one
stride, rows 16-byte aligned, every element inside the block's shared memory; anything else returns k + 1
before a byte moves, and the reference runs the op (and reports the fault, if it is one). Then warp by warp,
in order, one helper call per warp moves the fragment: whole words per lane for the row layout, whole columns
as vectors for the column layout (`_move_vector_fn`), element by element in the reference's order otherwise
(`_move_fn`). Counters: the shared bytes of every element of every lane (repeats included), one request per
warp and its bank conflicts (`_conflicts_fn`), as `_shared_fast` counts them.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.isa.tensor import ELEMENTS
from strata.hw.memory import SHARED_WINDOW
from strata.hw.native.codegen_wmma import (
    I1,
    I8P,
    I32,
    I32P,
    I64,
    I64P,
    SHAPE,
    Matrix,
    helper_fn,
    loop,
    register_lanes,
    register_table,
    register_vector,
    splat32,
    whole_warps_or_bail,
)
from strata.hw.ptx.ir import Instruction, Mem, Reg, written_registers


def _parse_memory(g: Any, ins: Instruction) -> tuple[bool, str, str, str, bool, str]:
    """(store, matrix, shape, element type, row layout, space) of a wmma.load/store compiled natively (shared
    or generic addresses; .global runs on the reference); raises NativeUnsupported."""
    store = ins.mods[0] == "store"
    which = ins.mods[1] if len(ins.mods) > 1 else ""
    if which not in (("d",) if store else ("a", "b", "c")):
        raise g.fail()
    spaces = [m for m in ins.mods[2:] if m.split("::")[0] in ("global", "shared", "local", "const")]
    if len(spaces) > 1 or (spaces and spaces[0] not in ("shared", "shared::cta")):
        raise g.fail("(only shared memory is native)")
    rest = [m for m in ins.mods[2:] if m not in spaces]
    shapes = [m for m in rest if SHAPE.match(m)]
    types = [m for m in rest if m in ELEMENTS]
    layouts = [m for m in rest if m in ("row", "col")]
    if len(shapes) != 1 or len(types) != 1 or len(layouts) != 1 or "sync" not in rest or \
            any(m not in ("sync", "aligned", *shapes, *types, *layouts) for m in rest):
        raise g.fail()
    if types[0] not in ("f16", "bf16", "tf32", "f32"):
        raise g.fail("(element type)")
    return store, which, shapes[0], types[0], layouts[0] == "row", "shared" if spaces else "generic"


def emit(g: Any, ins: Instruction) -> None:
    """wmma.load.{a,b,c} / wmma.store.d at a shared (or generic, in the shared window) address: as the
    reference's `_shared_fast`, for warps whose 32 lanes all execute with one base address and one stride,
    16-byte aligned and inside the block's shared memory. A check pass over the chunk's warps goes first;
    anything else (a fault to report, generic addresses in global memory, per-lane bases) returns k + 1
    before anything is read or written, and the reference runs the op. Counters as the reference's: bytes
    (every element of every lane, repeats included), one shared request per warp, and the bank conflicts of
    the warp's words (`_conflicts_fn`)."""
    from strata.hw.native import codegen as cg  # (codegen imports this module)

    store, which, shape, et, row, space = _parse_memory(g, ins)
    ops = list(ins.operands)
    mem_i, reg_i = (0, 1) if store else (1, 0)
    mem_op = ops[mem_i] if len(ops) in (2, 3) else None
    if not isinstance(mem_op, Mem) or mem_op.base is None:
        raise g.fail("operands")
    if space == "generic" and not (isinstance(mem_op.base, Reg) and _shared_pointer(g, mem_op.base.name, {})):
        # (a generic address the run-time check would find in global memory would hand the rest of the block to
        # the reference at every launch: the op runs there from the start instead, the ops after it stay native)
        raise g.fail("(a generic address not derived from cvta.shared)")
    m = Matrix(g, ops[reg_i], which, et, shape)
    size = m.bits // 8
    major_n, minor_n = (m.rows, m.cols) if row else (m.cols, m.rows)
    stride_op = ops[2] if len(ops) == 3 else None
    table = register_table(g, m)
    mover = _move_fn(g, m, row, store)
    fast_mover = _move_vector_fn(g, m, row, store) if m.cols % m.E == 0 else None
    conflicts_fn = _conflicts_fn(g, major_n, minor_n, size)
    guard = ins.guard
    bld = g.bld
    c32 = ir.Constant(I64, 32)
    warps = bld.sdiv(g.n_arg, c32)
    whole_warps_or_bail(g, guard)

    def address(i: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(lane i's address, its stride in elements) as i64."""
        g.i = i
        st = ir.Constant(I64, m.cols if row else m.rows) if stride_op is None else \
            bld.zext(g.read(stride_op, "u32", i), I64)
        return g._address(mem_op, i), st

    def offset(a: ir.Value) -> ir.Value:
        """The address's offset in the block's shared memory (generic: from the shared window)."""
        return bld.sub(a, ir.Constant(I64, SHARED_WINDOW)) if space == "generic" else a

    bad = g.entry_alloca(I1)
    bld.store(ir.Constant(I1, 0), bad)

    def check(w: ir.Value) -> None:
        base = bld.mul(w, c32)
        with bld.if_then(g.active(base, guard)):
            a0, s0 = address(base)
            diff = g.entry_alloca(I1)
            bld.store(ir.Constant(I1, 0), diff)

            def lane(j: ir.Value) -> None:
                a, st = address(bld.add(base, j))
                d = bld.or_(bld.icmp_unsigned("!=", a, a0), bld.icmp_unsigned("!=", st, s0))
                bld.store(bld.or_(bld.load(diff), d), diff)
            g._count_loop(c32, lane)
            off = offset(a0)
            span = bld.add(bld.mul(s0, ir.Constant(I64, (major_n - 1) * size)), ir.Constant(I64, minor_n * size))
            why = bld.or_(bld.load(diff), bld.icmp_unsigned(
                "!=", bld.and_(bld.or_(a0, bld.mul(s0, ir.Constant(I64, size))), ir.Constant(I64, 15)),
                ir.Constant(I64, 0)))
            # below 2^24 first (a generic address under the window wraps high): then off + span cannot wrap
            why = bld.or_(why, bld.icmp_unsigned(">", off, ir.Constant(I64, 0xFFFFFF)))
            why = bld.or_(why, bld.icmp_unsigned(">", s0, ir.Constant(I64, 0xFFFFFF)))
            why = bld.or_(why, bld.icmp_unsigned(">", bld.add(off, span), g.ctx(cg.CTX_SHARED_LIMIT)))
            bld.store(bld.or_(bld.load(bad), why), bad)
    g._count_loop(warps, check)
    g._bail_if(bld.load(bad))

    # the real pass, warp by warp in order (a later warp's store wins, as in the reference's one scatter)
    requests, conflicts = g.entry_alloca(I64), g.entry_alloca(I64)
    cached_stride, cache = g.entry_alloca(I64), g.entry_alloca(I64, 4)  # conflicts by phase, for one stride
    for p, v in ((requests, 0), (conflicts, 0), (cached_stride, -1)):
        bld.store(ir.Constant(I64, v), p)
    sbase = g.hoist(lambda: bld.inttoptr(g.ctx(cg.CTX_SHARED_BASE), I64P))
    shared = g.hoist(lambda: bld.inttoptr(g.ctx(cg.CTX_SHARED), I8P))

    def run(w: ir.Value) -> None:
        base = bld.mul(w, c32)
        with bld.if_then(g.active(base, guard)):
            a0, s0 = address(base)
            start = bld.add(offset(a0), g.tag(bld.load(bld.gep(sbase, [base])), "aux"))
            phase = bld.and_(start, ir.Constant(I64, 3))
            with bld.if_then(bld.icmp_unsigned("!=", s0, bld.load(cached_stride))):
                bld.store(s0, cached_stride)
                for k in range(4):
                    bld.store(ir.Constant(I64, -1), bld.gep(cache, [ir.Constant(I64, k)]))
            slot = bld.gep(cache, [phase])
            with bld.if_then(bld.icmp_signed("<", bld.load(slot), ir.Constant(I64, 0))):
                bld.store(bld.call(conflicts_fn, [s0, phase]), slot)
            bld.store(bld.add(bld.load(conflicts), bld.load(slot)), conflicts)
            bld.store(bld.add(bld.load(requests), ir.Constant(I64, 1)), requests)
            args = [table, base, bld.gep(shared, [start]), s0]
            if fast_mover is None:
                bld.call(mover, args)
            elif store and not row:  # (columns that overlap in memory: the reference's element order decides)
                with bld.if_else(bld.icmp_unsigned(">=", s0, ir.Constant(I64, m.rows))) as (then, other):
                    with then:
                        bld.call(fast_mover, args)
                    with other:
                        bld.call(mover, args)
            else:
                bld.call(fast_mover, args)
    g._count_loop(warps, run)
    counters = bld.inttoptr(g.ctx(cg.CTX_COUNTERS), I64P)
    n_req = bld.load(requests)
    nbytes = bld.mul(n_req, ir.Constant(I64, 32 * m.E * size))
    for name, v in (("shared_store_bytes" if store else "shared_load_bytes", nbytes), ("shared_requests", n_req),
                    ("shared_bank_conflicts", bld.load(conflicts))):
        p = bld.gep(counters, [ir.Constant(I64, cg.COUNTER_NAMES.index(name))])
        bld.store(bld.add(bld.load(p), v), p)


def _move_vector_fn(g: Any, m: Matrix, row: bool, store: bool) -> ir.Function:
    """`_move_fn`'s work in whole words and vectors, for fragments whose lanes each hold part of one row
    (E | cols; P = cols / E lanes per row; lane j, of the L lanes holding the first copies, has row j // P,
    columns (j % P) * E ..). Row layout: a lane's E elements are consecutive in memory, and its registers are
    their bytes (little-endian pairs for 16-bit types): word-sized copies. Column layout: element e of the lanes
    j % P = q is column q * E + e, consecutive in memory: one vector per column, interleaved into lane order.
    A column-layout store needs columns that do not overlap in memory (stride >= rows; the caller checks)."""
    kind = "store" if store else "load"
    name = f"wmma_{kind}v_{m.rows}x{m.cols}_{'row' if row else 'col'}_{m.et}_{m.E}"
    f, fresh = helper_fn(g, name, ir.FunctionType(ir.VoidType(), [I32P.as_pointer(), I64, I8P, I64]))
    if not fresh:
        return f
    table, base, ptr, stride = f.args
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    size = m.bits // 8
    L, P = m.lanes, m.cols // m.E
    R = L // P
    nregs = len(m.ops)
    if row:
        arrs = [register_lanes(bld, table, r, base) for r in range(nregs)]

        def lane(j: ir.Value) -> None:
            jj = bld.urem(j, ir.Constant(I64, L))  # (.f16 A/B: lanes L.. repeat the first L)
            r_, q = bld.udiv(jj, ir.Constant(I64, P)), bld.urem(jj, ir.Constant(I64, P))
            start = bld.mul(bld.add(bld.mul(r_, stride), bld.mul(q, ir.Constant(I64, m.E))), ir.Constant(I64, size))
            words = bld.bitcast(bld.gep(ptr, [start]), I32P)
            for r, arr in enumerate(arrs):
                w = bld.gep(words, [ir.Constant(I64, r)])
                if store:
                    bld.store(bld.load(bld.gep(arr, [j])), w, align=4)
                else:
                    bld.store(bld.load(w, align=4), bld.gep(arr, [j]))
        loop(bld, f, 32 if not store else L, lane)
        bld.ret_void()
        return f
    ety = ir.IntType(m.bits)
    col_t = ir.VectorType(ety, R)
    for r in range(nregs):
        regp = register_vector(bld, table, r, base, 32)
        word = bld.load(regp, align=4) if store else None
        out: ir.Value = ir.Constant(ir.VectorType(I32, 32), None)
        for h in range(m.per):
            e = r * m.per + h
            at = [bld.mul(bld.mul(ir.Constant(I64, q * m.E + e), stride), ir.Constant(I64, size)) for q in range(P)]
            cols = [bld.bitcast(bld.gep(ptr, [a]), col_t.as_pointer()) for a in at]
            if store:
                assert word is not None and L == 32
                part = bld.lshr(word, splat32(32, 16)) if h else word
                vals = bld.trunc(part, ir.VectorType(ety, 32)) if m.bits < 32 else part
                for q, cp in enumerate(cols):  # lane j = row * P + q
                    pick = ir.Constant(ir.VectorType(I32, R), [row_ * P + q for row_ in range(R)])
                    v = vals if P == 1 else bld.shuffle_vector(vals, ir.Constant(vals.type, ir.Undefined), pick)
                    bld.store(v, cp, align=size)
                continue
            parts = [bld.load(cp, align=size) for cp in cols]
            while len(parts) > 1:  # concatenate: [column q = 0 rows..., column 1 rows..., ...]
                n = parts[0].type.count
                parts = [bld.shuffle_vector(x, y, ir.Constant(ir.VectorType(I32, 2 * n), list(range(2 * n))))
                         for x, y in zip(parts[::2], parts[1::2], strict=True)]
            # lane j (its first copy jj = j mod L) = row jj // P, column q = jj % P
            order = [((j % L) % P) * R + (j % L) // P for j in range(32)]
            vals = bld.shuffle_vector(parts[0], ir.Constant(parts[0].type, ir.Undefined),
                                      ir.Constant(ir.VectorType(I32, 32), order))
            wide = bld.zext(vals, ir.VectorType(I32, 32)) if m.bits < 32 else vals
            out = bld.or_(out, bld.shl(wide, splat32(32, 16)) if h else wide)
        if not store:
            bld.store(out, regp, align=4)
    bld.ret_void()
    return f


def _shared_pointer(g: Any, reg: str, memo: dict[str, bool]) -> bool:
    """Whether every definition of `reg` makes it a generic pointer into shared memory: `cvta.shared`, or a
    copy of such a pointer, or one plus an offset (`add`/`sub`). A guess for choosing where the op runs, not
    for correctness: the run-time check still sends any address outside the block's shared memory to the
    reference."""
    if reg in memo:
        return memo[reg]
    memo[reg] = True  # (while deciding: a loop's pointer increment is decided by the pointer's other definitions)
    ok = False
    for ins in g.fn.body:
        if reg not in written_registers(ins):
            continue
        srcs = [op.name for op in ins.operands[1:] if isinstance(op, Reg)]
        ok = (ins.opcode == "cvta" and "shared" in ins.mods and "to" not in ins.mods) or \
            (ins.opcode in ("mov", "add", "sub") and
             any(_shared_pointer(g, r, memo) for r in srcs[:1 if ins.opcode == "sub" else 2]))
        if not ok:
            break
    memo[reg] = ok
    return ok


def _move_fn(g: Any, m: Matrix, row: bool, store: bool) -> ir.Function:
    """The module's `wmma_<load|store>_<layout>(regs**, base, warp_ptr, stride)`: one warp's fragment registers
    from (or to) shared memory at warp_ptr, element e of lane j at ((major * stride + minor) * size) bytes,
    (major, minor) the element's (row, col), or (col, row) for the column-major layout (tensor.lower_wmma)."""
    kind = "store" if store else "load"
    name = f"wmma_{kind}_{m.rows}x{m.cols}_{'row' if row else 'col'}_{m.et}_{m.E}"
    f, fresh = helper_fn(g, name, ir.FunctionType(ir.VoidType(), [I32P.as_pointer(), I64, I8P, I64]))
    if not fresh:
        return f
    table, base, ptr, stride = f.args
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    ety = ir.IntType(m.bits)

    arrs = [register_lanes(bld, table, r, base) for r in range(len(m.ops))]

    def lane(j: ir.Value) -> None:  # lane by lane, each lane's elements in order: the reference's store order
        for r, arr in enumerate(arrs):
            at = bld.add(bld.mul(j, ir.Constant(I64, m.E)), ir.Constant(I64, r * m.per))
            word = bld.load(bld.gep(arr, [j])) if store else ir.Constant(I32, 0)
            out: ir.Value = ir.Constant(I32, 0)
            for h in range(m.per):
                idx = bld.urem(bld.add(at, ir.Constant(I64, h)) if h else at, ir.Constant(I64, m.size))
                r_, c_ = bld.udiv(idx, ir.Constant(I64, m.cols)), bld.urem(idx, ir.Constant(I64, m.cols))
                major, minor = (r_, c_) if row else (c_, r_)
                off = bld.mul(bld.add(bld.mul(major, stride), minor), ir.Constant(I64, m.bits // 8))
                p = bld.bitcast(bld.gep(ptr, [off]), ety.as_pointer())
                shift = ir.Constant(I32, h * m.bits)
                if store:
                    v = bld.lshr(word, shift) if h else word
                    bld.store(bld.trunc(v, ety) if m.bits < 32 else v, p, align=m.bits // 8)
                else:
                    v = bld.load(p, align=m.bits // 8)
                    v = bld.zext(v, I32) if m.bits < 32 else v
                    out = bld.or_(out, bld.shl(v, shift) if h else v)
            if not store:
                bld.store(out, bld.gep(arr, [j]))
    loop(bld, f, 32, lane)
    bld.ret_void()
    return f


def _conflicts_fn(g: Any, major_n: int, minor_n: int, size: int) -> ir.Function:
    """The module's `wmma_conflicts_<majors>x<minors>_<size>(stride, phase) -> i64`: the bank conflicts of one
    warp request (memory.warp_bank_conflicts: the busiest bank's distinct words, less one) of a fragment whose
    elements start at ((major * stride + minor) * size + phase) bytes. Each major's elements touch one run of
    consecutive words (elements of at most 4 bytes), and the runs start in increasing order (stride >= 0), so
    the distinct words are each run's words beyond the highest word seen so far."""
    name = f"wmma_conflicts_{major_n}x{minor_n}_{size}"
    f, fresh = helper_fn(g, name, ir.FunctionType(I64, [I64, I64]))
    if not fresh:
        return f
    stride, phase = f.args
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    banks = bld.alloca(I64, 32)
    seen = bld.alloca(I64)
    loop(bld, f, 32, lambda b: bld.store(ir.Constant(I64, 0), bld.gep(banks, [b])))
    bld.store(ir.Constant(I64, -1), seen)
    two = ir.Constant(I64, 2)

    def run(major: ir.Value) -> None:
        first = bld.add(bld.mul(bld.mul(major, stride), ir.Constant(I64, size)), phase)
        lo = bld.lshr(first, two)
        hi = bld.lshr(bld.add(first, ir.Constant(I64, (minor_n - 1) * size)), two)
        prev = bld.load(seen)
        w0 = bld.select(bld.icmp_signed(">", lo, prev), lo, bld.add(prev, ir.Constant(I64, 1)))
        pre = bld.block
        head, body, done = (f.append_basic_block() for _ in range(3))
        bld.branch(head)
        bld.position_at_end(head)
        w = bld.phi(I64)
        w.add_incoming(w0, pre)
        bld.cbranch(bld.icmp_signed("<=", w, hi), body, done)
        bld.position_at_end(body)
        p = bld.gep(banks, [bld.and_(w, ir.Constant(I64, 31))])
        bld.store(bld.add(bld.load(p), ir.Constant(I64, 1)), p)
        w.add_incoming(bld.add(w, ir.Constant(I64, 1)), body)
        bld.branch(head)
        bld.position_at_end(done)
        bld.store(bld.select(bld.icmp_signed(">", hi, prev), hi, prev), seen)
    loop(bld, f, major_n, run)
    best = bld.alloca(I64)
    bld.store(ir.Constant(I64, 0), best)

    def most(b: ir.Value) -> None:
        v, cur = bld.load(bld.gep(banks, [b])), bld.load(best)
        bld.store(bld.select(bld.icmp_signed(">", v, cur), v, cur), best)
    loop(bld, f, 32, most)
    bld.ret(bld.sub(bld.load(best), ir.Constant(I64, 1)))
    return f
