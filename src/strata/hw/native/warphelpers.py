"""The dry run's per-warp work after its lane loop, as one small function per module instead of inline code.

Per access and warp, the warp-by-warp dry run (codegen.KernelCodegen._dry_run) checks a global access
against the allocation table and turns the warp's addresses into the reference's memory counters. Inline,
that code was repeated for every access of every segment and was most of a kernel's compile time (LLVM
optimizing and selecting it again and again: SGEMM's 16 x 16 tile, about 100 of 230 ms). Here it is
emitted once per module and called with the warp's reductions (values: the lane loop's reduction
variables stay in registers, so that loop still vectorizes):

- `warp_check_global(mn, mx, or, lanes, hit_lo*, hit_hi*, hit_slot*, ctx*, peer*, size, span_lo, span_hi,
  bytes_per_lane) -> i1`: aligned, and [mn + span_lo, mx + span_hi + size) inside the allocation of the
  last hit or (binary search) one live allocation; a peer's allocation adds the warp's bytes to `peer`.
  0: the reference must run the segment (it reports the fault, or serves lanes spread over allocations).
- `warp_finish_global(lanes, mn, mx, lin, keys*, act*, out*, size, delta, counters*, store, summarize)`: the
  leader's summary in `out` (lanes, first and last byte offsets, contiguity) when `summarize`, then the
  access's bytes, requests, sectors and ideal sectors (codegen's `global_counts`).
- `warp_finish_shared(lanes, mn, mx, base, words*, act*, out*, counters*, size, group, store)`: bytes,
  requests and bank conflicts of a shared access and its group (the busiest bank's distinct words less
  one, times the group: whole-word shifts conflict alike).

The definitions are the reference's, unchanged; only where the code lives moved.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.memory import GLOBAL_BASE, PARAM_WINDOW, UVA_SHIFT

I1, I8, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
I8P, I64P = I8.as_pointer(), I64.as_pointer()


def _new(g: Any, name: str, ret: ir.Type, args: list[ir.Type]) -> tuple[ir.Function | None, Any]:
    f = g._helpers.get(name)
    if f is not None:
        return f, None
    f = ir.Function(g.module, ir.FunctionType(ret, args), name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")  # once per warp and access: one copy per module keeps compile time down
    g._helpers[name] = f
    return None, f


def check_global(g: Any) -> ir.Function:
    """The module's warp_check_global (see the module docstring)."""
    from strata.hw.native import codegen as cg  # (codegen imports this module)

    have, f = _new(g, "warp_check_global", I1, [I64, I64, I64, I64, I64P, I64P, I64P, I64P, I64P, I64, I64, I64,
                                                  I64])
    if have is not None:
        return have
    mn, mx, orv, c, lo_p, hi_p, slot_p, ctx, peer, nb, span_lo, span_hi, per_lane = f.args
    b = ir.IRBuilder(f.append_basic_block())
    one = ir.Constant(I64, 1)

    def ctx_at(k: int) -> ir.Value:
        return b.load(b.gep(ctx, [ir.Constant(I64, k)]))

    good, bad = f.append_basic_block("good"), f.append_basic_block("bad")
    with b.if_then(b.icmp_signed("<=", c, ir.Constant(I64, 0))):
        b.ret(ir.Constant(I1, 1))  # no lane takes part
    mn = b.add(mn, span_lo)  # the group's whole span (wrapping fails the check below)
    mx = b.add(mx, span_hi)
    mis = b.icmp_unsigned("!=", b.and_(orv, b.sub(nb, one)), ir.Constant(I64, 0))
    with b.if_then(mis):
        b.branch(bad)
    lo, hi = b.load(lo_p), b.load(hi_p)
    # mx <= hi - nb, not mx + nb <= hi: that wraps for addresses near 2^64
    fast = b.and_(b.icmp_unsigned(">=", mn, lo),
                  b.and_(b.icmp_unsigned(">=", hi, nb), b.icmp_unsigned("<=", mx, b.sub(hi, nb))))
    with b.if_then(b.not_(fast)):
        starts, ends = ctx_at(cg.CTX_STARTS), ctx_at(cg.CTX_ENDS)
        inside = b.and_(b.icmp_unsigned(">=", mn, ir.Constant(I64, GLOBAL_BASE)),
                        b.icmp_unsigned("<", mx, ir.Constant(I64, PARAM_WINDOW)))
        idx = b.call(g._alloc_lookup(), [mn, nb, ctx_at(cg.CTX_NALLOC), starts, ends])
        found = b.and_(inside, b.icmp_signed(">=", idx, ir.Constant(I64, 0)))
        safe = b.select(found, idx, ir.Constant(I64, 0))
        end = b.load(b.gep(b.inttoptr(ends, I64P), [safe]))
        fits = b.and_(found, b.icmp_unsigned("<=", mx, b.sub(end, nb)))
        with b.if_then(b.not_(fits)):
            b.branch(bad)
        start = b.load(b.gep(b.inttoptr(starts, I64P), [safe]))
        b.store(start, lo_p)
        b.store(end, hi_p)
        # whose allocation it is: an enabled peer's (its unified slot) or this device's (-1)
        away = b.or_(b.icmp_unsigned("<", start, ctx_at(cg.CTX_OWN_LO)),
                     b.icmp_unsigned(">=", start, ctx_at(cg.CTX_OWN_HI)))
        slot = b.lshr(b.sub(start, ir.Constant(I64, GLOBAL_BASE)), ir.Constant(I64, UVA_SHIFT))
        b.store(b.select(away, slot, ir.Constant(I64, -1)), slot_p)
    b.branch(good)
    b.position_at_end(bad)
    b.ret(ir.Constant(I1, 0))
    b.position_at_end(good)
    slot = b.load(slot_p)
    with b.if_then(b.icmp_signed(">=", slot, ir.Constant(I64, 0))):  # a peer's: interconnect bytes, per lane
        p = b.gep(peer, [slot])
        b.store(b.add(b.load(p), b.mul(c, per_lane)), p)
    b.ret(ir.Constant(I1, 1))
    return f


def finish_global(g: Any) -> ir.Function:
    """The module's warp_finish_global (see the module docstring)."""
    have, f = _new(g, "warp_finish_global", ir.VoidType(),
                   [I64, I64, I64, I1, I64P, I8P, I64P, I64, I64, I64P, I64, I1])
    if have is not None:
        return have
    c, mn, mx, lin, keys, act, out, nb, delta, counters, store, summarize = f.args
    b = ir.IRBuilder(f.append_basic_block())
    with b.if_then(summarize):
        for k, v in enumerate((c, b.sub(mn, ir.Constant(I64, GLOBAL_BASE)), b.sub(mx, ir.Constant(I64, GLOBAL_BASE)),
                               b.zext(lin, I64))):
            b.store(v, b.gep(out, [ir.Constant(I64, k)]))
        # a warp with lanes that do not take part: the helper compacts its keys and finds the contiguity
        with b.if_then(b.icmp_unsigned("!=", c, ir.Constant(I64, 32))):
            b.call(g._summary_helper(), [keys, act, nb, out])
    with b.if_then(b.icmp_signed(">", b.load(out), ir.Constant(I64, 0))):
        b.call(g._global_helper(), [out, keys, nb, delta, counters, store])
    b.ret_void()
    return f


def finish_shared(g: Any) -> ir.Function:
    """The module's warp_finish_shared (see the module docstring)."""
    from strata.hw.native.codegen import _C

    have, f = _new(g, "warp_finish_shared", ir.VoidType(),
                   [I64, I64, I64, I64, I64P, I8P, I64P, I64P, I64, I64, I64])
    if have is not None:
        return have
    c, mn, mx, sb, words, act, out, counters, nb, group, store = f.args
    b = ir.IRBuilder(f.append_basic_block())
    two = ir.Constant(I64, 2)
    mn = b.lshr(b.add(mn, sb), two)  # first 4-byte words (a warp's lanes share one block's shared base)
    mx = b.lshr(b.add(mx, sb), two)
    for k, v in enumerate((c, mn, mx, ir.Constant(I64, 0))):
        b.store(v, b.gep(out, [ir.Constant(I64, k)]))

    def bump(slot: Any, v: ir.Value) -> None:
        p = b.gep(counters, [slot])
        b.store(b.add(b.load(p), v), p)

    with b.if_then(b.icmp_signed(">", c, ir.Constant(I64, 0))):
        bump(b.add(ir.Constant(I64, _C["shared_load_bytes"]), store), b.mul(c, b.mul(nb, group)))
        bump(ir.Constant(I64, _C["shared_requests"]), group)
        # distinct words within 32 of each other sit in distinct banks: no conflict, no sort
        with b.if_then(b.icmp_unsigned(">=", b.sub(mx, mn), ir.Constant(I64, 32))):
            with b.if_then(b.icmp_unsigned("<", c, ir.Constant(I64, 32))):  # compact the keys
                b.call(g._summary_helper(), [words, act, nb, out])
            conf = b.call(g._conflicts_helper(), [words, c])
            bump(ir.Constant(I64, _C["shared_bank_conflicts"]), b.mul(conf, group))
    b.ret_void()
    return f


def clear(g: Any, p: ir.Value, n: int) -> None:
    """Zero n int64 slots at p (llvm.memset: one call, not n stores)."""
    bld = g.bld
    memset = g.intrinsic("llvm.memset.p0i8.i64", ir.VoidType(), [I8P, I8, I64, I1])
    bld.call(memset, [bld.bitcast(p, I8P), ir.Constant(I8, 0), ir.Constant(I64, 8 * n), ir.Constant(I1, 0)])


def add_into(g: Any) -> ir.Function:
    """The module's `void add_into(i64* dst, i64* src, i64 n)`: dst[k] += src[k] (a segment's counters and
    peer bytes, kept aside during its dry run, into the launch's)."""
    have, f = _new(g, "add_into", ir.VoidType(), [I64P, I64P, I64])
    if have is not None:
        return have
    dst, src, n = f.args
    b = ir.IRBuilder(f.append_basic_block())
    pre = b.block
    head, body, done = (f.append_basic_block() for _ in range(3))
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64)
    k.add_incoming(ir.Constant(I64, 0), pre)
    b.cbranch(b.icmp_signed("<", k, n), body, done)
    b.position_at_end(body)
    p = b.gep(dst, [k])
    b.store(b.add(b.load(p), b.load(b.gep(src, [k]))), p)
    k.add_incoming(b.add(k, ir.Constant(I64, 1)), body)
    b.branch(head)
    b.position_at_end(done)
    b.ret_void()
    return f
