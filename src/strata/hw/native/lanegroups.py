"""The real run over groups of eight lanes: broadcast and contiguous loads instead of gathers.

The real run of a segment is a loop over the chunk's lanes that LLVM vectorizes, eight lanes at a time. An
access whose address comes from a register the segment read from its lane array looks, to LLVM, like eight
unrelated addresses: it emits a gather (`vgatherdps`), which costs about as much as eight scalar loads. In
a tiled kernel nearly every access is a gather, and they were about 90% of the tiled SGEMM's time: its
`As[ty][k]` is one address for a whole row of threads, its `Bs[k][tx]` consecutive words.

Such patterns follow from the thread index. Within eight consecutive lanes of a block whose x-dimension is
a multiple of 8, only %tid.x changes, by one per lane, so an address computed by adds, constant multiplies
and shifts from %tid.x and values uniform across the block moves by the same number of bytes from lane to
lane. `strides` predicts that number per register, statically, through every definition of the register
(a fixpoint, flow-insensitive: a loop-carried `add %rd, %rd, 64` keeps its stride). A segment's group
leader (codegen's `_group`) whose base register has a predicted stride of 0 (a broadcast) or its access
size (contiguous) is *planned*.

The prediction is only a guess; the dry run checks it. For each planned leader and warp it already keeps
every lane's key (the byte offset of a global access, the first 4-byte word of a shared one, with its
block's shared base) and whether the lane took part; `check_warp` tests that every lane took part and every
group of eight lanes' keys run `first, first + step, ...`. If that holds for every planned leader and warp of
the chunk (and so every lane of the chunk is active), the segment runs this module's loop: per group, each
planned leader's address is computed once, for the group's first lane, and lane j of the group accesses
`first + j * stride`, which LLVM turns into one broadcast or one vector load. Anything else (a partial mask,
a 2-D block of odd width, a guess that was wrong) runs the lane loop as before. Results, counters and fault
reports are the same either way: the dry run computed the counters and ran the checks, and the addresses are
the ones it checked.

The loop exists only in -O3 code (at -O0 LLVM vectorizes nothing, and the copy would only cost compile
time).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.native import chunkcheck
from strata.hw.ptx.ir import FImm, Imm, Instruction, Reg, Sym, written_registers

GROUP = 8  # lanes per group: the host's vector of 32-bit values (AVX2)
I32, I64 = ir.IntType(32), ir.IntType(64)

# special registers uniform across a block's row of threads (%tid.x moves by one per lane in a group)
_UNIFORM_SPECIALS = ("%tid.y", "%tid.z", "%ntid", "%ctaid", "%nctaid", "%warpid", "%nwarpid", "%smid", "%nsmid",
                     "%gridid", "%cluster", "%nclusterid", "%clusterid", "%is_explicit_cluster")
_STEP_SPECIALS = ("%tid.x", "%laneid")
# operations whose result is a function of their operands only (uniform operands: a uniform result)
_PURE = frozenset({"mov", "cvta", "cvt", "add", "sub", "mul", "mad", "and", "or", "xor", "not", "shl", "shr", "neg",
                   "abs", "min", "max", "setp", "selp", "div", "rem", "fma", "bfi", "bfe", "prmt", "popc", "clz",
                   "brev", "shf", "lop3", "sad", "set", "slct", "copysign", "rcp", "sqrt", "rsqrt", "cnot"})
_TOP = object()  # no definition seen yet


def strides(body: list[Instruction], regs: dict[str, str]) -> dict[str, int]:
    """Each integer register's predicted stride along %tid.x (bytes or units per lane), for registers every
    definition of which agrees on one; others are absent. A fixpoint over all definitions: each register's
    value only falls (unseen, a stride, unknown), so it ends within a few passes."""
    known: dict[str, Any] = {}
    for _ in range(64):
        changed = False
        for ins in body:
            dsts = written_registers(ins)
            if not dsts:
                continue
            s = _stride(ins, known, regs) if len(dsts) == 1 else None
            for d in dsts:
                old = known.get(d, _TOP)
                new = s if old is _TOP else (old if s is _TOP or s == old else None)
                if new is not old and new != old:
                    known[d] = new
                    changed = True
        if not changed:
            break
    return {r: s for r, s in known.items() if isinstance(s, int)}


def _operand(op: Any, known: dict[str, Any], regs: dict[str, str]) -> Any:
    if isinstance(op, (Imm, FImm, Sym)):
        return 0
    if not isinstance(op, Reg) or op.negated:
        return None
    if op.name in regs:
        return known.get(op.name, _TOP)
    return 1 if op.name.startswith(_STEP_SPECIALS) else 0 if op.name.startswith(_UNIFORM_SPECIALS) else None


def _stride(ins: Instruction, known: dict[str, Any], regs: dict[str, str]) -> Any:
    """The stride of the one register ins writes: _TOP while a source is unseen, None when unknown."""
    op = ins.opcode
    if op == "ld":
        return 0 if "param" in ins.mods else None
    if op not in _PURE or not ins.operands or not isinstance(ins.operands[0], Reg):
        return None
    srcs = [_operand(o, known, regs) for o in ins.operands[1:]]
    if any(s is None for s in srcs):
        return None
    if any(s is _TOP for s in srcs):
        return _TOP
    if all(s == 0 for s in srcs):
        return 0
    mods = set(ins.mods)
    if mods & {"f16", "f32", "f64", "bf16", "sat", "hi"}:
        return None
    a = ins.operands[1:]
    if op in ("mov", "cvta", "cvt") and len(srcs) == 1:
        return srcs[0]
    if op in ("add", "sub") and len(srcs) == 2:
        return srcs[0] + srcs[1] if op == "add" else srcs[0] - srcs[1]
    if op in ("mul", "mad", "shl") and len(srcs) >= 2:
        if srcs[0] == 0 and srcs[1] == 0:
            prod = 0
        elif srcs[1] == 0 and isinstance(a[1], Imm):
            prod = srcs[0] * (1 << a[1].value if op == "shl" else a[1].value)
        elif srcs[0] == 0 and isinstance(a[0], Imm) and op != "shl":
            prod = srcs[1] * a[0].value
        else:
            return None
        if op != "mad":
            return prod
        return prod + srcs[2] if len(srcs) == 3 else None
    return None


def plan(g: Any, segment: list[tuple[int, Instruction]], mems: dict[int, Any]) -> dict[int, int]:
    """The segment's planned leaders: id(leader) -> its stride (0 or its access size), or {} (no loop)."""
    if not g.lane_groups:
        return {}
    table = g.__dict__.get("_lane_strides")
    if table is None:
        table = g._lane_strides = strides(g.fn.body, g.fn.regs)
    out: dict[int, int] = {}
    for k, ins in segment:
        d = mems.get(k)
        if d is None or d.leader is not None or ins.guard is not None:
            continue
        base = d.mem_op.base
        if not isinstance(base, Reg) or d.base_version != (base.name, 0):
            continue  # (the base must be the segment's starting value: read once per group, at its first lane)
        wide = g.fn.regs.get(base.name, "").endswith("64")
        if d.space == "shared" and d.nbytes < 4 or d.space == "global" and not wide:
            continue  # (shared keys are words; a 32-bit global base wraps)
        s = table.get(base.name)
        if s in (0, d.nbytes):
            out[id(d)] = s
    if out and all(out.values()) and chunkcheck.eligible(g, mems):
        return {}  # (only lane-indexed global accesses, in a 1-D kernel: the whole-chunk path serves them)
    return out


def check_warp(g: Any, planned: dict[int, int], mems: dict[int, Any], ok: ir.Value) -> None:
    """In the dry run's warp loop, after the checks and before the counters (which may compact the keys):
    ok &= every planned leader's 32 lanes took part, and each group of eight lanes' keys run `first, first +
    step, ...`. Inline vector code (four <8 x i64> compares per access): as a call it cost more than the
    test, the caller saving its vector registers around it."""
    bld = g.bld
    v64, v8, v32 = ir.VectorType(I64, GROUP), ir.VectorType(ir.IntType(8), GROUP), ir.VectorType(I32, GROUP)
    undef = ir.Constant(v64, ir.Undefined)
    splat0 = ir.Constant(v32, [0] * GROUP)
    bad = ir.Constant(ir.VectorType(ir.IntType(1), GROUP), [0] * GROUP)
    for d in mems.values():
        s = planned.get(id(d))
        if s is None:
            continue
        step = s // 4 if d.space == "shared" else s  # (shared keys are 4-byte words)
        steps = ir.Constant(v64, [step * j for j in range(GROUP)])
        for grp in range(32 // GROUP):
            at = ir.Constant(I64, GROUP * grp)
            keys = bld.load(bld.bitcast(bld.gep(d.stats.buf, [at]), v64.as_pointer()), align=8)
            first = bld.shuffle_vector(keys, undef, splat0)
            act = bld.load(bld.bitcast(bld.gep(d.stats.act, [at]), v8.as_pointer()), align=1)
            bad = bld.or_(bad, bld.or_(bld.icmp_unsigned("!=", keys, bld.add(first, steps)),
                                       bld.icmp_unsigned("==", act, ir.Constant(v8, [0] * GROUP))))
    good = bld.icmp_unsigned("==", bld.bitcast(bad, ir.IntType(GROUP)), ir.Constant(ir.IntType(GROUP), 0))
    bld.store(bld.and_(bld.load(ok), good), ok)


def run(g: Any, segment: list[tuple[int, Instruction]], planned: dict[int, int], mems: dict[int, Any]) -> None:
    """The segment's real run, group by group: each planned leader's address at the group's first lane, then
    the group's eight lanes at `first + j * stride` (LLVM: broadcasts and vector loads), unmasked (the dry run
    saw every lane take part)."""
    bld = g.bld
    leaders = [d for d in mems.values() if id(d) in planned]
    shared = any(d.space == "shared" for d in leaders)

    def group(k: ir.Value) -> None:
        first = bld.mul(k, ir.Constant(I64, GROUP))
        saved, g.seg_vals = g.seg_vals, None  # (values of this lane, not cached for the group's lanes)
        starts = {id(d): g._address(d.mem_op, first) for d in leaders}
        sbase = g.shared_base(first) if shared else None
        g.seg_vals = saved
        g.groups = (first, starts, sbase, planned)
        try:
            g._count_loop(ir.Constant(I64, GROUP), lambda j: g._lanes_body(segment, bld.add(first, j)),
                          _vectorize_hints(g))
        finally:
            g.groups = None

    g._count_loop(bld.udiv(g.n_arg, ir.Constant(I64, GROUP)), group)  # (n: whole warps)


def address(g: Any, d: Any, i: ir.Value) -> tuple[ir.Value, ir.Value | None] | None:
    """In the group loop: lane i's address of access d and, when shared, its block's shared base (the group's),
    if d's leader is planned; None otherwise (the lane computes it as usual). A follower adds its constant
    offset from the leader (no wrap: the dry run's span check covers it)."""
    first, starts, sbase, planned = g.groups
    lead = d.leader or d
    s = planned.get(id(lead))
    if s is None:
        return None
    bld = g.bld
    a = bld.add(starts[id(lead)], ir.Constant(I64, d.delta))
    if s:
        a = bld.add(a, bld.mul(bld.sub(i, first), ir.Constant(I64, s)))
    return a, sbase


def _vectorize_hints(g: Any) -> list[Any]:
    """The group loop's llvm.loop properties: vectorize at width GROUP. Its cost model passes over loops of fewer
    than 16 iterations unless told; one vector iteration with no scalar remainder is the point here."""
    m = g.module
    hints = g.__dict__.get("_group_hints")
    if hints is None:
        hints = g._group_hints = [
            m.add_metadata([ir.MetaDataString(m, "llvm.loop.vectorize.enable"), ir.Constant(ir.IntType(1), 1)]),
            m.add_metadata([ir.MetaDataString(m, "llvm.loop.vectorize.width"), ir.Constant(I32, GROUP)])]
    return hints
