"""Shared pieces of the native AMD code: the ctx layout and wave states amd_executor.py fills and reads, LLVM
types and constants, and the helper functions every kernel module gets (allocation lookup, sector and LDS
bank-conflict counts), built with llvmlite's IR builder."""

from __future__ import annotations

from llvmlite import ir  # type: ignore[import-untyped]

WAVE = 64
VCC, M0, EXEC = 106, 124, 126

# ctx slots (int64 each)
(C_S, C_V, C_SCC, C_PC, C_STATE, C_WG, C_LDS, C_LDS_ROW, C_LDS_BYTES, C_MEM, C_NALLOC, C_STARTS, C_ENDS,
 C_COUNTS, C_LO, C_HI, C_FUEL, C_STOPPED, C_NPC, C_YIELDED, C_MEMO,
 # a FRESH wave's start (amd_codegen.start_wave): the SGPR rows and v0 of each wave of a workgroup, waves per
 # workgroup, the batch's workgroups' ids ((G, 3) uint32) and the SGPRs of workgroup ids x, y, z (-1: none)
 C_INIT_S, C_INIT_V0, C_WPW, C_WGIDS, C_WGID_AT) = range(26)
CTX_SIZE = 28  # (C_WGID_AT is three slots)
MEMO_STRIDE = 8 + 64  # int32 per instruction of the bank-conflict memo (amd_codegen.bank_conflicts)
# wave states
RUN, BARRIER, DONE, NEED_REFERENCE, FRESH = 0, 1, 2, 3, 4  # FRESH: not started, registers unset
# per-instruction counter rows (COUNTS is (ROWS, npc) uint64)
K_WAVES, K_LANES, K_SECTORS, K_IDEAL, K_BANK = range(5)
ROWS = 5
# return codes of amd_run
R_DONE, R_YIELD, R_REFERENCE, R_BAD_PC = 0, 1, 2, 3

I1, I8, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
V32, V64, VF, VB = (ir.VectorType(I32, WAVE), ir.VectorType(I64, WAVE), ir.VectorType(F32, WAVE),
                    ir.VectorType(I1, WAVE))
VD = ir.VectorType(F64, WAVE)
I32P, I64P, I8P = I32.as_pointer(), I64.as_pointer(), I8.as_pointer()
VP = ir.VectorType(I32P, WAVE)
M32 = 0xFFFFFFFF


def c32(v: int) -> ir.Constant:
    return ir.Constant(I32, v & M32)


def c64(v: int) -> ir.Constant:
    return ir.Constant(I64, v & 0xFFFFFFFFFFFFFFFF)


def alloc_end_fn(module: ir.Module) -> ir.Function:
    """i64 amd_alloc_end(ctx, addr): the end of the allocation whose [start, end) holds addr, or 0."""
    fn = ir.Function(module, ir.FunctionType(I64, [I64P, I64]), name="amd_alloc_end")
    fn.linkage = "internal"
    ctx, addr = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    n = b.load(b.gep(ctx, [c64(C_NALLOC)]))
    starts = b.inttoptr(b.load(b.gep(ctx, [c64(C_STARTS)])), I64P)
    ends = b.inttoptr(b.load(b.gep(ctx, [c64(C_ENDS)])), I64P)
    head, body, out = fn.append_basic_block("head"), fn.append_basic_block("body"), fn.append_basic_block("out")
    entry = b.block
    b.branch(head)
    b.position_at_end(head)  # lo, hi: the last start <= addr is in [lo, hi)
    lo, hi = b.phi(I64), b.phi(I64)
    lo.add_incoming(c64(0), entry)
    hi.add_incoming(n, entry)
    b.cbranch(b.icmp_signed(">", b.sub(hi, lo), c64(1)), body, out)
    b.position_at_end(body)
    mid = b.lshr(b.add(lo, hi), c64(1))
    le = b.icmp_unsigned("<=", b.load(b.gep(starts, [mid])), addr)
    lo.add_incoming(b.select(le, mid, lo), body)
    hi.add_incoming(b.select(le, hi, mid), body)
    b.branch(head)
    b.position_at_end(out)
    found = b.and_(b.icmp_signed(">", n, c64(0)), b.icmp_unsigned("<=", b.load(b.gep(starts, [lo])), addr))
    end = b.load(b.gep(ends, [lo]))
    b.ret(b.select(b.and_(found, b.icmp_unsigned("<", addr, end)), end, c64(0)))
    return fn


def sectors_fn(module: ir.Module) -> ir.Function:
    """i64 amd_sectors(addrs, mask, size): distinct 32-byte sectors of the first and last bytes of the active
    lanes' accesses (the reference's _sectors): one pass when they ascend, else a quadratic count."""
    got = module.globals.get("amd_sectors")
    if got is not None:
        return got
    fn = ir.Function(module, ir.FunctionType(I64, [I64P, I64, I64]), name="amd_sectors")
    fn.linkage = "internal"
    addrs, mask, size = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    seq = b.alloca(ir.ArrayType(I64, 2 * WAVE))
    seqp = b.bitcast(seq, I64P)
    entry = b.block
    # gather the active lanes' (first, last) sectors in lane order
    head, on, nxt, done = (fn.append_basic_block(x) for x in ("head", "on", "next", "gathered"))
    b.branch(head)
    b.position_at_end(head)
    lane, cnt = b.phi(I64), b.phi(I64)
    lane.add_incoming(c64(0), entry)
    cnt.add_incoming(c64(0), entry)
    b.cbranch(b.icmp_unsigned("!=", b.and_(b.lshr(mask, lane), c64(1)), c64(0)), on, nxt)
    b.position_at_end(on)
    a = b.load(b.gep(addrs, [lane]))
    b.store(b.lshr(a, c64(5)), b.gep(seqp, [cnt]))
    b.store(b.lshr(b.add(a, b.sub(size, c64(1))), c64(5)), b.gep(seqp, [b.add(cnt, c64(1))]))
    cnt2 = b.add(cnt, c64(2))
    b.branch(nxt)
    b.position_at_end(nxt)
    cnt_n = b.phi(I64)
    cnt_n.add_incoming(cnt, head)
    cnt_n.add_incoming(cnt2, on)
    lane_n = b.add(lane, c64(1))
    lane.add_incoming(lane_n, nxt)
    cnt.add_incoming(cnt_n, nxt)
    b.cbranch(b.icmp_unsigned("<", lane_n, c64(WAVE)), head, done)
    b.position_at_end(done)
    total = cnt_n
    empty, ascend_head = fn.append_basic_block("empty"), fn.append_basic_block("asc_head")
    b.cbranch(b.icmp_unsigned("==", total, c64(0)), empty, ascend_head)
    b.position_at_end(empty)
    b.ret(c64(0))
    # ascending: count changes
    b.position_at_end(ascend_head)
    j, changes = b.phi(I64), b.phi(I64)
    j.add_incoming(c64(1), done)
    changes.add_incoming(c64(1), done)
    asc_body, asc_end, quad = (fn.append_basic_block(x) for x in ("asc_body", "asc_end", "quad"))
    b.cbranch(b.icmp_unsigned("<", j, total), asc_body, asc_end)
    b.position_at_end(asc_body)
    cur, prev = b.load(b.gep(seqp, [j])), b.load(b.gep(seqp, [b.sub(j, c64(1))]))
    asc_ok = fn.append_basic_block("asc_ok")
    b.cbranch(b.icmp_unsigned("<", cur, prev), quad, asc_ok)
    b.position_at_end(asc_ok)
    j.add_incoming(b.add(j, c64(1)), asc_ok)
    changes.add_incoming(b.add(changes, b.zext(b.icmp_unsigned("!=", cur, prev), I64)), asc_ok)
    b.branch(ascend_head)
    b.position_at_end(asc_end)
    b.ret(changes)
    # not ascending: count the entries equal to no earlier one
    b.position_at_end(quad)
    qi_head, qi_body, qj_head, qj_body, qi_next, qout = (fn.append_basic_block(x) for x in (
        "qi_head", "qi_body", "qj_head", "qj_body", "qi_next", "qout"))
    b.branch(qi_head)
    b.position_at_end(qi_head)
    qi, distinct = b.phi(I64), b.phi(I64)
    qi.add_incoming(c64(0), quad)
    distinct.add_incoming(c64(0), quad)
    b.cbranch(b.icmp_unsigned("<", qi, total), qi_body, qout)
    b.position_at_end(qi_body)
    v = b.load(b.gep(seqp, [qi]))
    b.branch(qj_head)
    b.position_at_end(qj_head)
    qj = b.phi(I64)
    qj.add_incoming(c64(0), qi_body)
    seen_before = fn.append_basic_block("seen")
    fresh = fn.append_basic_block("fresh")
    b.cbranch(b.icmp_unsigned("<", qj, qi), qj_body, fresh)
    b.position_at_end(qj_body)
    same = b.icmp_unsigned("==", b.load(b.gep(seqp, [qj])), v)
    qj.add_incoming(b.add(qj, c64(1)), qj_body)
    b.cbranch(same, seen_before, qj_head)
    b.position_at_end(seen_before)
    b.branch(qi_next)
    b.position_at_end(fresh)
    b.branch(qi_next)
    b.position_at_end(qi_next)
    inc = b.phi(I64)
    inc.add_incoming(c64(0), seen_before)
    inc.add_incoming(c64(1), fresh)
    qi.add_incoming(b.add(qi, c64(1)), qi_next)
    distinct.add_incoming(b.add(distinct, inc), qi_next)
    b.branch(qi_head)
    b.position_at_end(qout)
    b.ret(distinct)
    return fn


def banks_fn(module: ir.Module) -> ir.Function:
    """i64 amd_banks(words, mask, t): LDS bank conflicts of a wave's DS instruction (the reference's
    _lds_bank_conflicts): per 32-lane pass with an active lane, max(busiest bank's distinct dwords - t, 0)."""
    got = module.globals.get("amd_banks")
    if got is not None:
        return got
    fn = ir.Function(module, ir.FunctionType(I64, [I32P, I64, I64]), name="amd_banks")
    fn.linkage = "internal"
    words, mask, t = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    per_bank = b.bitcast(b.alloca(ir.ArrayType(I32, 32)), I32P)
    seen = b.bitcast(b.alloca(ir.ArrayType(I32, 32 * 32 * 8)), I32P)  # per bank: its distinct dwords
    entry = b.block
    p_head, p_body, p_out = (fn.append_basic_block(x) for x in ("p_head", "p_body", "p_out"))
    b.branch(p_head)
    b.position_at_end(p_head)
    pas, total = b.phi(I64), b.phi(I64)
    pas.add_incoming(c64(0), entry)
    total.add_incoming(c64(0), entry)
    b.cbranch(b.icmp_unsigned("<", pas, c64(2)), p_body, p_out)
    b.position_at_end(p_body)
    pmask = b.and_(b.lshr(mask, b.mul(pas, c64(32))), c64(M32))
    clear = fn.append_basic_block("clear")
    p_skip = fn.append_basic_block("p_skip")
    b.cbranch(b.icmp_unsigned("==", pmask, c64(0)), p_skip, clear)
    b.position_at_end(clear)
    memset = ir.Function(module, ir.FunctionType(ir.VoidType(), [I8P, I8, I64, I1]), name="llvm.memset.p0i8.i64") \
        if "llvm.memset.p0i8.i64" not in module.globals else module.globals["llvm.memset.p0i8.i64"]
    b.call(memset, [b.bitcast(per_bank, I8P), ir.Constant(I8, 0), c64(128), ir.Constant(I1, 0)])
    l_head, l_body, l_next, l_out = (fn.append_basic_block(x) for x in ("l_head", "l_body", "l_next", "l_out"))
    b.branch(l_head)
    b.position_at_end(l_head)
    lane = b.phi(I64)
    lane.add_incoming(c64(0), clear)
    b.cbranch(b.icmp_unsigned("<", lane, c64(32)), l_body, l_out)
    b.position_at_end(l_body)
    w_head, w_body, w_out = (fn.append_basic_block(x) for x in ("w_head", "w_body", "w_out"))
    b.cbranch(b.icmp_unsigned("!=", b.and_(b.lshr(pmask, lane), c64(1)), c64(0)), w_head, l_next)
    b.position_at_end(w_head)
    k = b.phi(I64)
    k.add_incoming(c64(0), l_body)
    b.cbranch(b.icmp_unsigned("<", k, t), w_body, w_out)
    b.position_at_end(w_body)
    word = b.load(b.gep(words, [b.add(b.mul(b.add(b.mul(pas, c64(32)), lane), t), k)]))
    bank = b.zext(b.and_(word, c32(31)), I64)
    have = b.load(b.gep(per_bank, [bank]))
    row = b.mul(bank, c64(32 * 8))
    s_head, s_body, s_new, s_done = (fn.append_basic_block(x) for x in ("s_head", "s_body", "s_new", "s_done"))
    b.branch(s_head)
    b.position_at_end(s_head)
    q = b.phi(I32)
    q.add_incoming(c32(0), w_body)
    b.cbranch(b.icmp_unsigned("<", q, have), s_body, s_new)
    b.position_at_end(s_body)
    hit = b.icmp_unsigned("==", b.load(b.gep(seen, [b.add(row, b.zext(q, I64))])), word)
    q.add_incoming(b.add(q, c32(1)), s_body)
    b.cbranch(hit, s_done, s_head)
    b.position_at_end(s_new)
    b.store(word, b.gep(seen, [b.add(row, b.zext(have, I64))]))
    b.store(b.add(have, c32(1)), b.gep(per_bank, [bank]))
    b.branch(s_done)
    b.position_at_end(s_done)
    k.add_incoming(b.add(k, c64(1)), s_done)
    b.branch(w_head)
    b.position_at_end(w_out)
    b.branch(l_next)
    b.position_at_end(l_next)
    lane.add_incoming(b.add(lane, c64(1)), l_next)
    b.branch(l_head)
    b.position_at_end(l_out)  # the busiest bank
    m_head, m_body, m_out = (fn.append_basic_block(x) for x in ("m_head", "m_body", "m_out"))
    b.branch(m_head)
    b.position_at_end(m_head)
    bi, best = b.phi(I64), b.phi(I64)
    bi.add_incoming(c64(0), l_out)
    best.add_incoming(c64(0), l_out)
    b.cbranch(b.icmp_unsigned("<", bi, c64(32)), m_body, m_out)
    b.position_at_end(m_body)
    c = b.zext(b.load(b.gep(per_bank, [bi])), I64)
    bi.add_incoming(b.add(bi, c64(1)), m_body)
    best.add_incoming(b.select(b.icmp_unsigned(">", c, best), c, best), m_body)
    b.branch(m_head)
    b.position_at_end(m_out)
    extra = b.select(b.icmp_signed(">", best, t), b.sub(best, t), c64(0))
    b.branch(p_skip)
    b.position_at_end(p_skip)
    add = b.phi(I64)
    add.add_incoming(c64(0), p_body)
    add.add_incoming(extra, m_out)
    pas.add_incoming(b.add(pas, c64(1)), p_skip)
    total.add_incoming(b.add(total, add), p_skip)
    b.branch(p_head)
    b.position_at_end(p_out)
    b.ret(total)
    return fn

