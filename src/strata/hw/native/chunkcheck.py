"""The dry run's whole-chunk fast path: one check per access and chunk instead of one per warp.

A segment's dry run (codegen.KernelCodegen._dry_run) checks every warp's accesses and computes every
warp's memory counters before the segment runs. When a chunk's lanes all take part in a global access
and their addresses follow the lane index (lane i at a0 + i * size: SAXPY's x[i], y[i] and any other
`base[global index]` over full blocks), all of that has a closed form:

- the check: lane 0's address aligned, and one allocation holding [a0 + lowest offset of the access's
  group, a0 + (n - 1) * size + highest offset + size), the same allocation table and rules as per warp;
- the counters, per warp as the reference defines them: every warp moves 32 * size bytes in one request,
  over `((b + 32 * size - 1) >> 5) - (b >> 5) + 1` sectors where b is its first byte offset (each warp's
  b is the previous one's plus a multiple of 32, so every warp has the same count), and
  `(32 * size + 31) >> 5` ideal sectors;
- a peer's allocation: n * size bytes of interconnect traffic per access of the group;
- the fusion check's inputs: the chunk's byte range per group, and the store's lanes strictly
  increasing.

One branch-free pass over the chunk's lanes (LLVM vectorizes it) reduces each group leader's addresses to
min and max of `address - i * size` (0 for a lane not taking part): equal, and a global address, only when
every lane takes part and they follow the lane index. If every leader passes, the closed forms replace the
warp loop; if any does not (a partial mask, a strided or gathered address, a fault, a warp spread over
allocations), the warp-by-warp dry run runs as before and decides, so a fault report and every counter stay
the reference's.
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.memory import GLOBAL_BASE, PARAM_WINDOW, UVA_SHIFT

I1, I8, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)
I64P = I64.as_pointer()


def eligible(g: Any, mems: dict[int, Any]) -> bool:
    """Whether to emit the fast path for the segment's accesses: global ones only (shared accesses keep
    their per-warp bank-conflict counts), in a kernel of 1-D blocks. A kernel that reads %tid.y or %tid.z
    mostly indexes 2-D tiles (SGEMM's rows), whose addresses do not follow the lane index over a chunk:
    the pass would fail every time, and its code costs compile time (a choice of speed only: the warp-by-warp
    dry run gives the same results)."""
    if not mems or not all(d.space == "global" for d in mems.values()):
        return False
    tiles = g.__dict__.get("_reads_tid_yz")
    if tiles is None:
        tiles = g._reads_tid_yz = any(isinstance(r, str) and r.startswith(("%tid.y", "%tid.z"))
                                      for ins in g.fn.body for r in _registers(ins))
    return not tiles


def _registers(ins: Any) -> list[str]:
    from strata.hw.ptx.ir import operand_registers

    return [r for op in ins.operands for r in operand_registers(op)]


def lane(g: Any, d: Any, a: ir.Value, i: ir.Value, part: ir.Value) -> None:
    """One lane's part in its leader's chunk reductions (a select and min/max: the loop vectorizes). A lane
    that does not take part counts as address 0 (never a global one), so min and max agree only when every
    lane takes part at a0 + i * size."""
    bld = g.bld
    mn_p, mx_p = d.chunk_red
    dev = bld.select(part, bld.sub(a, bld.mul(i, ir.Constant(I64, d.nbytes))), ir.Constant(I64, 0))
    umin = g.intrinsic("llvm.umin.i64", I64, [I64, I64])
    umax = g.intrinsic("llvm.umax.i64", I64, [I64, I64])
    bld.store(bld.call(umin, [bld.load(mn_p), dev]), mn_p)
    bld.store(bld.call(umax, [bld.load(mx_p), dev]), mx_p)


def chunk_pass(g: Any, segment: list[Any], mems: dict[int, Any]) -> tuple[ir.Value, dict[int, Any]]:
    """Emit the pass and the checks; returns (i1: every leader passed, leader id -> its chunk facts)."""
    from strata.hw.native import codegen as cg  # (codegen imports this module)

    bld = g.bld
    leaders = [d for d in mems.values() if d.leader is None]
    for d in leaders:
        d.chunk_red = [g.entry_alloca(I64) for _ in range(2)]  # min, max of a - i * size (0 if not taking part)
        for slot, v in zip(d.chunk_red, (-1, 0), strict=True):
            bld.store(ir.Constant(I64, v), slot)

    def body(i: ir.Value) -> None:
        mv = g.tag(bld.load(bld.gep(g.mask_arg, [i])), "aux")
        g.dry_act = bld.icmp_unsigned("!=", mv, ir.Constant(I8, 0))
        g._lanes_body(segment, i)

    g.chunk_mode = True
    try:
        g._count_loop(g.n_arg, body)
    finally:
        g.chunk_mode = False
    n = g.n_arg
    fast = bld.icmp_signed(">", n, ir.Constant(I64, 0))
    facts: dict[int, Any] = {}
    starts_i, ends_i = g.ctx(cg.CTX_STARTS), g.ctx(cg.CTX_ENDS)
    for d in leaders:
        mn_p, mx_p = d.chunk_red
        a0 = bld.load(mn_p)
        nb = d.nbytes
        # every lane at a0 + i * size (a0 below the global window fails `inside`), a0 aligned: so is every lane
        ok = bld.and_(bld.icmp_unsigned("==", a0, bld.load(mx_p)),
                      bld.icmp_unsigned("==", bld.and_(a0, ir.Constant(I64, nb - 1)), ir.Constant(I64, 0)))
        last = bld.add(a0, bld.mul(bld.sub(n, ir.Constant(I64, 1)), ir.Constant(I64, nb)))
        lo = bld.add(a0, ir.Constant(I64, d.span[0]))
        hi = bld.add(last, ir.Constant(I64, d.span[1]))  # the highest first byte of any access of the group
        # no wrap around 2^64 anywhere (then lo <= a0 <= last <= hi in plain order), inside the global window
        ok = bld.and_(ok, bld.and_(bld.icmp_unsigned("<=", a0, last), bld.icmp_unsigned("<=", lo, a0)))
        ok = bld.and_(ok, bld.icmp_unsigned("<=", last, hi))
        ok = bld.and_(ok, bld.and_(bld.icmp_unsigned(">=", lo, ir.Constant(I64, GLOBAL_BASE)),
                                   bld.icmp_unsigned("<", hi, ir.Constant(I64, PARAM_WINDOW))))
        idx = bld.call(g._alloc_lookup(), [lo, ir.Constant(I64, nb), g.ctx(cg.CTX_NALLOC), starts_i, ends_i])
        found = bld.icmp_signed(">=", idx, ir.Constant(I64, 0))
        safe = bld.select(found, idx, ir.Constant(I64, 0))
        end = bld.load(bld.gep(bld.inttoptr(ends_i, I64P), [safe]))
        start = bld.load(bld.gep(bld.inttoptr(starts_i, I64P), [safe]))
        fits = bld.and_(found, bld.and_(bld.icmp_unsigned(">=", end, ir.Constant(I64, nb)),
                                        bld.icmp_unsigned("<=", hi, bld.sub(end, ir.Constant(I64, nb)))))
        fast = bld.and_(fast, bld.and_(ok, fits))
        away = bld.or_(bld.icmp_unsigned("<", start, g.ctx(cg.CTX_OWN_LO)),
                       bld.icmp_unsigned(">=", start, g.ctx(cg.CTX_OWN_HI)))
        slot = bld.lshr(bld.sub(start, ir.Constant(I64, GLOBAL_BASE)), ir.Constant(I64, UVA_SHIFT))
        facts[id(d)] = (a0, lo, bld.add(hi, ir.Constant(I64, nb)), bld.select(away, slot, ir.Constant(I64, -1)))
    return fast, facts


def closed_form(g: Any, mems: dict[int, Any], facts: dict[int, Any], local: ir.Value, fusion: bool,
                inc_ok: ir.Value) -> None:
    """The counters, peer bytes and fusion inputs of a chunk that passed (see the module docstring)."""
    from strata.hw.native.codegen import COUNTER_NAMES

    bld = g.bld
    n = g.n_arg
    nw = bld.lshr(n, ir.Constant(I64, 5))
    five = ir.Constant(I64, 5)
    names = {name: k for k, name in enumerate(COUNTER_NAMES)}

    def bump(name: str, store: bool, v: ir.Value) -> None:
        p = bld.gep(local, [ir.Constant(I64, names[name] + (1 if store else 0))])
        bld.store(bld.add(bld.load(p), v), p)

    for d in mems.values():
        lead = d.leader or d
        a0 = facts[id(lead)][0]
        nb = d.nbytes
        store = not d.load
        base = bld.sub(a0, ir.Constant(I64, GLOBAL_BASE - d.delta))  # the first warp's first byte offset
        per_warp = bld.add(bld.sub(bld.lshr(bld.add(base, ir.Constant(I64, 32 * nb - 1)), five),
                                   bld.lshr(base, five)), ir.Constant(I64, 1))
        bump("global_load_bytes", store, bld.mul(n, ir.Constant(I64, nb)))
        bump("global_load_requests", store, nw)
        bump("global_load_sectors", store, bld.mul(nw, per_warp))
        bump("global_load_ideal_sectors", store, bld.mul(nw, ir.Constant(I64, (32 * nb + 31) >> 5)))
    for d in mems.values():
        if d.leader is not None:
            continue
        _a0, lo, hi, slot = facts[id(d)]
        if g.peer_local is not None:
            with bld.if_then(bld.icmp_signed(">=", slot, ir.Constant(I64, 0))):
                p = bld.gep(g.peer_local, [slot])
                bld.store(bld.add(bld.load(p), bld.mul(n, ir.Constant(I64, d.nbytes * d.group))), p)
        if fusion:
            bld.store(lo, d.chunk_lo)
            bld.store(hi, d.chunk_hi)
    if fusion:
        bld.store(ir.Constant(I1, 1), inc_ok)  # lanes at a0 + i * size: strictly increasing, disjoint


def linear_address(g: Any, d: Any, i: ir.Value) -> ir.Value:
    """Lane i's address of access d in a chunk that passed: its leader's lane-0 address + i * size, plus d's
    offset from its leader (the same base register: the same address the lane computes, written so that
    LLVM sees consecutive lanes at consecutive addresses). A follower whose base register has 32 bits
    wraps its address at 2^32, so it is computed as usual."""
    lead = d.leader or d
    base = d.mem_op.base
    if d.leader is not None and not g.fn.regs.get(getattr(base, "name", ""), "").endswith("64"):
        return g._address(d.mem_op, i)
    bld = g.bld
    a0 = g.linear[id(lead)][0]
    return bld.add(bld.add(a0, ir.Constant(I64, d.delta)), bld.mul(i, ir.Constant(I64, lead.nbytes)))
