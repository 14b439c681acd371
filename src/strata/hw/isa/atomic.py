"""Semantics of atomic memory instructions: atom and red on .global, .shared and generic addresses.

Source of truth for what many lanes hitting one address see. The engine applies the active lanes of a
chunk in lane order, so the result is always that of one legal serial order: each lane's `atom` returns
the memory value just before its own update, and the final value is what the last lane left. Scope
(.cta .gpu .sys .cluster) and ordering (.relaxed .acquire .release .acq_rel) qualifiers are accepted and
have no further effect: a lockstep engine is already sequentially consistent.

Lanes are grouped by address (a stable sort), and each group is applied in one vectorised pass:
associative operations (integer add, min, max, and, or, xor, and float add, which is applied strictly in
order with rounding after every step) run as row-wise `ufunc.accumulate` over a padded (groups, length)
layout; exch and inc/dec (same wrap value) have closed forms; cas advances one successful swap per pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from strata.hw.isa.memory import Addresser, typed
from strata.hw.isa.registry import DTYPES, LaneFault, Op, lowers, split_mods
from strata.hw.ptx.ir import Mem, Sink, Vec

_SEMS = frozenset(("relaxed", "acquire", "release", "acq_rel"))
_SCOPES = frozenset(("cta", "cluster", "gpu", "sys"))
_HINTS = frozenset(("L2::cache_hint",))
_SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared", "shared::cluster": "shared"}
_BITS = ("b32", "b64", "u32", "s32", "u64", "s64")
# op -> the types it takes (a little more lenient than the ISA for bit-identical integer spellings)
_TYPES: dict[str, tuple[str, ...]] = {
    "add": ("u32", "s32", "u64", "s64", "f32", "f64", "f16", "bf16", "f16x2", "bf16x2"),
    "min": ("u32", "s32", "u64", "s64"),
    "max": ("u32", "s32", "u64", "s64"),
    "and": _BITS, "or": _BITS, "xor": _BITS,
    "exch": (*_BITS, "f32", "f64"),
    "cas": ("b16", *_BITS, "f32", "f64"),
    "inc": ("u32",), "dec": ("u32",),
}
_ASSOC = {"add": np.add, "min": np.minimum, "max": np.maximum,
          "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
# float min/max return the other operand when one is NaN (PTX min/max.f16), like NumPy's fmin/fmax
_FLOAT_ASSOC = {"add": np.add, "min": np.fmin, "max": np.fmax}
_FLOAT_MEM = {"f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "f16": np.dtype(np.float16),
              "bf16": np.dtype(ml_dtypes.bfloat16)}
_FLT_MIN = np.float32(2.0**-126)
# sm_90 vector atomics (PTX ISA 8.1): .v2/.v4 of .f32 (add), .v2/.v4/.v8 of .f16/.bf16 and .v2/.v4 of
# .f16x2/.bf16x2 (add, min, max), on global memory only; each element is its own atomic operation
_VEC_TYPES = {"f32": (2, 4), "f16": (2, 4, 8), "bf16": (2, 4, 8), "f16x2": (2, 4), "bf16x2": (2, 4)}
_VEC_OPS = {"f32": ("add",), "f16": ("add", "min", "max"), "bf16": ("add", "min", "max"),
            "f16x2": ("add", "min", "max"), "bf16x2": ("add", "min", "max")}
_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3}


@dataclass
class _Form:
    """What a lowered atom/red does: operation, PTX type, and how memory and registers are viewed."""

    op: str
    t: str
    mem: np.dtype  # element type of memory the operation works on
    reg: str  # PTX type used to read/write the registers (raw bits for f16/bf16 kinds)
    size: int  # bytes one lane accesses (per element of a vector atomic)
    packed: bool  # f16x2 / bf16x2: two independent 16-bit operations
    vec: int = 1  # elements of a vector atomic (.v2/.v4/.v8), each one atomic operation


@lowers("atom", "red")
def lower_atom(ins: Any, ctx: Any) -> Op:
    """atom{.sem}{.scope}{.space}.op.type d, [a], b{, c}; red{...}.op.type [a], b."""
    form, space = _parse(ins, ctx)
    ops = list(ins.operands)
    has_d = ins.opcode == "atom"
    if form.op == "cas" and not has_d:
        raise ctx.unsupported()
    n_src = 2 if form.op == "cas" else 1
    want = int(has_d) + 1 + n_src
    if "L2::cache_hint" in ins.mods:
        if len(ops) != want + 1:
            raise ctx.fail(f"{ins.full_opcode} with .L2::cache_hint takes a cache-policy operand")
        ops = ops[:-1]  # a cache hint has no architectural effect
    if len(ops) != want:
        raise ctx.fail(f"{ins.full_opcode} takes {want} operands, got {len(ops)}")
    addr = ops[int(has_d)]
    if not isinstance(addr, Mem):
        raise ctx.fail(f"{ins.full_opcode} needs an address operand [a]")
    if form.vec > 1:
        return _lower_vector(ins, ctx, form, space, ops, has_d)
    d = ctx.dst(ops[0], form.reg) if has_d else None
    srcs = [ctx.src(x, form.reg) for x in ops[int(has_d) + 1:]]
    addresser = Addresser(ctx, ins, addr, space, form.size, "atomic")
    reg_dt = np.dtype(DTYPES[form.reg])
    apply = _applier(form)

    def run(f: Any, m: Any) -> None:
        V = f.V
        accs = addresser.resolve(f, m)
        for acc in accs:  # every lane is checked before any lane's update happens
            if acc.space not in ("global", "shared"):
                lane = int(acc.sel[0]) if acc.sel is not None else 0
                raise LaneFault(lane, ins, f"Invalid atomic on {acc.space} memory: {ins.full_opcode} works "
                                "on global and shared addresses only", space=acc.space, access="atomic",
                                reason=f"atomic on {acc.space} memory")
        for acc in accs:
            n = acc.off.size
            vals = [_gather(V[s], acc.sel, n, reg_dt) for s in srcs]
            if acc.space == "global":  # another thread's write (a DMA copy) lands before or after, not inside
                with acc.buf.rmw_guard(int(acc.off.min()), int(acc.off.max()) + form.size - 1):
                    old = apply(acc.buf, acc.off, vals, True)
            else:
                old = apply(acc.buf, acc.off, vals, False)
            if d is not None:
                if old.dtype.itemsize == reg_dt.itemsize:
                    old = old.view(reg_dt)  # bits, not values (u32 work type -> s32 register)
                if acc.sel is None:
                    np.copyto(V[d], old, casting="unsafe")
                else:
                    V[d][acc.sel] = old
            f.chunk.launch.counters.atomic_ops += n

    flops, flop_cls = 0, "fp32"
    if form.op == "add" and form.t.startswith(("f", "bf")):
        flops = 2 if form.packed else 1
        flop_cls = {"f32": "fp32", "f64": "fp64"}.get(form.t, "fp16")
    return Op(run, "atomic", exact=True, flops=flops, flop_cls=flop_cls)


def _lower_vector(ins: Any, ctx: Any, form: _Form, space: str, ops: list[Any], has_d: bool) -> Op:
    """atom.global.op.vN.type {d..}, [a], {b..}: N independent atomics on consecutive elements; the
    whole vector must be aligned to its size, and the address must be global (generic ones are checked
    per lane at run time)."""
    n = form.vec
    vecs = ops[:1] + ops[2:] if has_d else ops[1:]
    for v in vecs:
        if not isinstance(v, Vec) or len(v.elems) != n:
            raise ctx.fail(f"{ins.full_opcode} takes brace-enclosed vectors of {n} elements for d and b")
    dsts = [None if isinstance(e, Sink) else ctx.dst(e, form.reg) for e in vecs[0].elems] if has_d else []
    srcs = [ctx.src(e, form.reg) for e in vecs[-1].elems]
    addresser = Addresser(ctx, ins, ops[int(has_d)], space, form.size * n, "atomic")
    reg_dt = np.dtype(DTYPES[form.reg])
    apply = _applier(form)
    step = form.size

    def run(f: Any, m: Any) -> None:
        V = f.V
        accs = addresser.resolve(f, m)
        for acc in accs:
            if acc.space != "global":
                lane = int(acc.sel[0]) if acc.sel is not None else 0
                raise LaneFault(lane, ins, f"Invalid atomic on {acc.space} memory: the vector atomic "
                                f"{ins.full_opcode} works on global addresses only", space=acc.space,
                                access="atomic", reason=f"vector atomic on {acc.space} memory")
        for acc in accs:
            k = acc.off.size
            off = acc.off
            guard = acc.buf.rmw_guard(int(off.min()), int(off.max()) + step * n - 1)  # (see lower_atom)
            for e in range(n):
                with guard:  # (each element its own atomic operation)
                    old = apply(acc.buf, off + off.dtype.type(step * e) if e else off,
                                [_gather(V[srcs[e]], acc.sel, k, reg_dt)], True)
                d = dsts[e] if dsts else None
                if d is None:
                    continue
                if old.dtype.itemsize == reg_dt.itemsize:
                    old = old.view(reg_dt)
                if acc.sel is None:
                    np.copyto(V[d], old, casting="unsafe")
                else:
                    V[d][acc.sel] = old
            f.chunk.launch.counters.atomic_ops += k * n

    flops = n * (2 if form.packed else 1) if form.op == "add" else 0
    return Op(run, "atomic", exact=True, flops=flops, flop_cls="fp32" if form.t == "f32" else "fp16")


def _parse(ins: Any, ctx: Any) -> tuple[_Form, str]:
    flags, types = split_mods(ins.mods)
    space = "generic"
    op = None
    vec = 1
    for x in flags:
        if x in _SPACES:
            space = _SPACES[x]
        elif x in _TYPES:
            if op is not None:
                raise ctx.fail(f"{ins.full_opcode}: two operations")
            op = x
        elif x in ("v2", "v4", "v8") and vec == 1:
            vec = int(x[1])
        elif x not in (*_SEMS, *_SCOPES, *_HINTS, "noftz"):
            raise ctx.unsupported()  # unknown qualifiers
    if op is None or len(types) != 1:
        raise ctx.fail(f"{ins.full_opcode}: expected one operation and one type")
    t = types[0]
    if vec > 1:
        if vec not in _VEC_TYPES.get(t, ()) or op not in _VEC_OPS[t]:
            raise ctx.unsupported()
        if space not in ("global", "generic"):
            raise ctx.fail(f"{ins.full_opcode}: vector atomics work on .global memory only")
    elif t not in _TYPES[op]:
        raise ctx.unsupported()
    if ins.opcode == "red" and op in ("exch", "cas"):
        raise ctx.unsupported()
    packed = t in ("f16x2", "bf16x2")
    size = 4 if packed else np.dtype(DTYPES[t]).itemsize
    if op in ("add", "min", "max") and t in _FLOAT_MEM:
        mem = _FLOAT_MEM[t]
        reg = t if t in ("f32", "f64") else "b16"
    elif packed:
        mem = _FLOAT_MEM[t[:-2]]
        reg = "b32"
    elif op in ("add", "min", "max", "inc", "dec"):
        mem = np.dtype(DTYPES[t])
        reg = t
    else:  # bitwise, exch, cas: raw bits
        mem = np.dtype(f"u{size}")
        reg = f"b{8 * size}"
    return _Form(op, t, mem, reg, size, packed, vec), space


def _gather(v: Any, sel: np.ndarray | None, n: int, dt: np.dtype) -> np.ndarray:
    """Operand values of the lanes in `sel` (lane order), as a fresh array of dtype dt."""
    if isinstance(v, np.ndarray):
        out = v[sel] if sel is not None else v.copy()
        return out if out.dtype == dt else out.view(dt)
    return np.full(n, v, dtype=dt)


# -- the operations: (buffer, byte offsets, operand values, is_global) -> old values
def _applier(form: _Form) -> Any:
    op, mem = form.op, form.mem
    shift = _SHIFT[mem.itemsize]
    is_float = mem.kind == "f" or mem == _FLOAT_MEM["bf16"]
    if form.packed:
        pfn = _FLOAT_ASSOC[op]

        def packed_add(buf: Any, off: np.ndarray, vals: list[np.ndarray], glob: bool) -> np.ndarray:
            view = typed(buf, mem)
            b = vals[0]
            idx = off >> 1
            lo = _assoc(view, idx, (b & 0xFFFF).astype(np.uint16).view(mem), pfn, False)
            hi = _assoc(view, idx + 1, (b >> 16).astype(np.uint16).view(mem), pfn, False)
            lo32, hi32 = lo.view(np.uint16).astype(np.uint32), hi.view(np.uint16).astype(np.uint32)
            return lo32 | (hi32 << np.uint32(16))
        return packed_add

    if op in _ASSOC:
        ufunc = _FLOAT_ASSOC[op] if is_float else _ASSOC[op]
        # integer add wraps: do it on the unsigned view so signed overflow never matters
        work = np.dtype(f"u{mem.itemsize}") if op == "add" and not is_float else mem
        ftz_ok = form.t == "f32"

        def assoc(buf: Any, off: np.ndarray, vals: list[np.ndarray], glob: bool) -> np.ndarray:
            view = typed(buf, work)
            b = vals[0]
            if b.dtype != work:
                b = b.view(work)
            old = _assoc(view, off >> shift, b, ufunc, ftz_ok and glob)
            return old if not is_float or form.reg in ("f32", "f64") else old.view(np.uint16)
        return assoc

    fn = {"exch": _exch, "cas": _cas, "inc": _incdec, "dec": _incdec}[op]

    def other(buf: Any, off: np.ndarray, vals: list[np.ndarray], glob: bool) -> np.ndarray:
        view = typed(buf, mem)
        return fn(view, off >> shift, [v.view(mem) for v in vals], op)
    return other


@dataclass
class _Groups:
    """Lanes grouped by address: a stable sort, so each group keeps lane order."""

    order: np.ndarray  # sorted position -> lane position
    starts: np.ndarray  # (S,) first sorted position of each group
    lens: np.ndarray  # (S,)
    gid: np.ndarray  # (N,) group of each sorted position
    rank: np.ndarray  # (N,) position within its group
    where: np.ndarray  # (S,) element index the group addresses


def _group(idx: np.ndarray) -> _Groups | None:
    """None when every lane has its own address (the common, contention-free case)."""
    n = idx.size
    if n < 2 or bool((idx[1:] > idx[:-1]).all()):
        return None
    order = np.argsort(idx, kind="stable")
    sidx = idx[order]
    new = sidx[1:] != sidx[:-1]
    if new.all():
        return None
    starts = np.concatenate(([0], np.flatnonzero(new) + 1))
    lens = np.diff(np.append(starts, n))
    gid = np.concatenate(([0], np.cumsum(new)))
    rank = np.arange(n) - starts[gid]
    return _Groups(order, starts, lens, gid, rank, sidx[starts])


def _unsort(g: _Groups, sorted_vals: np.ndarray) -> np.ndarray:
    out = np.empty_like(sorted_vals)
    out[g.order] = sorted_vals
    return out


def _assoc(view: np.ndarray, idx: np.ndarray, b: np.ndarray, ufunc: Any, ftz: bool) -> np.ndarray:
    """mem = ufunc(mem, b) for each lane in lane order; returns the value each lane saw."""
    g = _group(idx)
    if g is None:
        old = view[idx]
        new = _ftz(ufunc(_ftz(old), _ftz(b))) if ftz else ufunc(old, b)
        view[idx] = _canon(new)
        return old
    raw = view[g.where]
    start = _ftz(raw) if ftz else raw
    bs = b[g.order]
    if ftz:
        bs = _ftz(bs)
    old_sorted = np.empty(bs.size, dtype=view.dtype)
    final = np.empty(g.starts.size, dtype=view.dtype)
    # Groups of similar length share one padded (rows, width + 1) matrix: column 0 holds the memory
    # value, then the group's operands in lane order; a row-wise accumulate applies them serially.
    key = np.searchsorted(1 << np.arange(40, dtype=np.int64), g.lens)
    keys = np.unique(key)
    for k in keys:
        segs = np.flatnonzero(key == k) if keys.size > 1 else np.arange(g.starts.size)
        el = np.flatnonzero(key[g.gid] == k) if keys.size > 1 else slice(None)
        lens = g.lens[segs]
        width = int(lens.max())
        mat = np.zeros((segs.size, width + 1), dtype=view.dtype)
        mat[:, 0] = start[segs]
        row_of = np.empty(g.starts.size, dtype=np.int64)
        row_of[segs] = np.arange(segs.size)
        rows = row_of[g.gid[el]]
        ranks = g.rank[el]
        mat[rows, ranks + 1] = bs[el]
        acc = _serial(ufunc, mat, ftz)
        old_sorted[el] = acc[rows, ranks]
        final[segs] = acc[np.arange(segs.size), lens]
    old_sorted[g.starts] = raw  # the first lane sees memory as it was (unflushed)
    view[g.where] = final
    return _unsort(g, old_sorted)


def _serial(ufunc: Any, mat: np.ndarray, ftz: bool) -> np.ndarray:
    """Row-wise running ufunc, strictly left to right (float adds round at every step)."""
    acc = ufunc.accumulate(mat, axis=1)
    if ftz:
        sub = (acc != 0) & (np.abs(acc) < _FLT_MIN)
        if sub.any():  # a running sum went subnormal: redo step by step, flushing each result
            acc = mat.copy()
            for c in range(1, mat.shape[1]):
                acc[:, c] = _ftz(ufunc(acc[:, c - 1], mat[:, c]))
    return _canon(acc)


def _ftz(x: np.ndarray) -> np.ndarray:
    """f32 flush-to-zero of subnormals (sign preserved), as atom.add.f32 does on global memory."""
    sub = np.abs(x) < _FLT_MIN
    if not sub.any():
        return x
    return np.where(sub, np.copysign(np.float32(0), x), x).astype(np.float32)


_CANON = {2: np.uint16(0x7FFF), 4: np.uint32(0x7FFFFFFF), 8: np.uint64(0x7FFFFFFFFFFFFFFF)}


def _canon(x: np.ndarray) -> np.ndarray:
    """Float results that are NaN become the canonical NaN the GPU's adders produce."""
    if x.dtype.kind in "iub":
        return x
    nan = np.isnan(x.astype(np.float32)) if x.dtype.itemsize == 2 else np.isnan(x)
    if nan.any():
        x = x.copy()
        x.view(f"u{x.dtype.itemsize}")[nan] = _CANON[x.dtype.itemsize]
    return x


def _exch(view: np.ndarray, idx: np.ndarray, vals: list[np.ndarray], op: str) -> np.ndarray:
    b = vals[0]
    g = _group(idx)
    if g is None:
        old = view[idx]
        view[idx] = b
        return old
    bs = b[g.order]
    old_sorted = np.empty_like(bs)
    old_sorted[1:] = bs[:-1]  # each lane sees the value the previous lane of its group wrote
    old_sorted[g.starts] = view[g.where]
    view[g.where] = bs[g.starts + g.lens - 1]
    return _unsort(g, old_sorted)


def _cas(view: np.ndarray, idx: np.ndarray, vals: list[np.ndarray], op: str) -> np.ndarray:
    cmp, new = vals
    g = _group(idx)
    if g is None:
        old = view[idx]
        view[idx] = np.where(old == cmp, new, old)
        return old
    cs, ns = cmp[g.order], new[g.order]
    n = cs.size
    cur = view[g.where]
    old_sorted = np.empty_like(cs)
    pending = np.ones(n, dtype=bool)
    pos = np.arange(n)
    # Each pass finds, in every group, the next lane whose swap changes memory; lanes before it
    # (and it) see the current value. Swaps that store the value already there change nothing.
    while True:
        c = cur[g.gid]
        hit = pending & (cs == c) & (ns != c)
        if not hit.any():
            old_sorted[pending] = c[pending]
            break
        first = np.minimum.reduceat(np.where(hit, pos, n), g.starts)  # (S,)
        upto = pending & (pos <= first[g.gid])
        old_sorted[upto] = c[upto]
        pending &= ~upto
        won = first < n
        cur[won] = ns[first[won]]
        if not pending.any():
            break
    view[g.where] = cur
    return _unsort(g, old_sorted)


def _incdec(view: np.ndarray, idx: np.ndarray, vals: list[np.ndarray], op: str) -> np.ndarray:
    """inc: old >= b ? 0 : old + 1; dec: (old == 0 || old > b) ? b : old - 1 (u32)."""
    b = vals[0]
    step = _inc if op == "inc" else _dec
    g = _group(idx)
    if g is None:
        old = view[idx]
        view[idx] = step(old, b)
        return old
    bs = b[g.order]
    start = view[g.where]
    if bool((bs == bs[g.starts][g.gid]).all()):
        # one wrap value per address: the sequence of values is periodic with period b + 1
        s = bs[g.starts].astype(np.int64)[g.gid]
        r = start.astype(np.int64)[g.gid]
        k = g.rank
        over = r > s
        if op == "inc":
            seq = np.where(over, (k - 1) % (s + 1), (r + k) % (s + 1))
        else:
            seq = np.where(over, (s - (k - 1)) % (s + 1), (r - k) % (s + 1))
        old_sorted = np.where(k == 0, r, seq).astype(view.dtype)
    else:  # mixed wrap values: apply one lane of every address per round
        old_sorted = np.empty_like(bs)
        cur = start.copy()
        for r_ in range(int(g.lens.max())):
            live = np.flatnonzero(g.lens > r_)
            e = g.starts[live] + r_
            old_sorted[e] = cur[live]
            cur[live] = step(cur[live], bs[e])
    last = g.starts + g.lens - 1
    view[g.where] = step(old_sorted[last], bs[last])
    return _unsort(g, old_sorted)


def _inc(old: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(old >= b, np.uint32(0), old + np.uint32(1)).astype(np.uint32)


def _dec(old: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where((old == 0) | (old > b), b, old - np.uint32(1)).astype(np.uint32)
