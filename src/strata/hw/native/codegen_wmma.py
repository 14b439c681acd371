"""Native warp matrix instructions, with the reference's semantics and counters (hw/isa/tensor.py):
`wmma.mma.sync` on .f16/.bf16 (m16n16k16, m8n32k16, m32n8k16) and .tf32 (m16n16k8) multiplicands with .f32
or .f16 accumulators (`_lower_wmma_mma`, `_product`), and `wmma.load.{a,b,c}` / `wmma.store.d` to and from
shared memory (`lower_wmma`, `_shared_fast`) of those types. Global memory, .f64 and integer types,
.satfinite and rounding modifiers raise NativeUnsupported: those ops run on the reference (partial.py).

Each op is a segment of its own, emitted warp by warp through one helper function per signature and module
(a call per warp, compiled once). wmma.mma gathers the warp's A, B and C fragments from the 32 lanes'
registers into f64 matrices (strata's WMMA layout, `tensor.wmma_layout`: lane l's element e is element
l*E + e of the row-major matrix; .f16 A/B fragments hold every element twice and the first holder, lanes
0..15, is the one read, as `Fragment.to_matrix` reads it), computes D = A @ B + C and writes D's fragment
back; every source is read before any lane is written (D is usually C's own registers). With f32 C and D and
each lane's elements in one row (every shape but m32n8k16's .f16 B), whole registers move as vectors into
column-major matrices; otherwise lane by lane.

Arithmetic, bit for bit the reference's: the reference computes `np.matmul` in float64 of the decoded
inputs, adds C in float64 and rounds once to nearest (`fpround.narrow`: a NaN becomes the canonical NaN;
.f16 results go through round-to-odd f32 first). Here each output element sums its K products in float64 in
ascending k from +0.0 (as NumPy's matmul starts), then adds C and rounds the same way. Products of
.f16/.bf16/.tf32 values are exact in float64 (at most 22 significant bits; so an fma equals a multiply and
an add), so the two agree whenever the float64 sum of the K products is exact, whatever order NumPy's BLAS
sums them in: always when the largest and smallest nonzero products are less than about 2^27 apart (K = 16;
data of similar scale). Operands far apart in scale may round differently (within the ISA's tolerance:
its order and rounding are unspecified).

Lanes: the reference's wmma.mma reads all 32 lanes of a warp whatever the mask and writes the active ones.
Native code runs a warp whose lanes all execute (mask and guard) and skips a warp where none does; a chunk
with a warp where only some do (divergence, a block's partial last warp) returns before writing anything,
and the reference runs the op (`codegen._bail_if`). Loads and stores likewise, and also hand the op over for
a per-lane base or stride, a misaligned row, or an element outside the block's shared memory (the reference
reports the fault). Counters: the instruction class ('tensor' or 'memory') and the flops come from the
block's histogram, as for every native op; loads and stores add the shared bytes, one request per warp and
the bank conflicts, as `_shared_fast` counts them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.isa.tensor import ELEMENTS, Fragment, wmma_layout
from strata.hw.memory import SHARED_WINDOW
from strata.hw.native import codegen_half
from strata.hw.ptx.ir import Instruction, Mem, Reg, Vec, written_registers

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
F64P, I32P, I8P, I64P = F64.as_pointer(), I32.as_pointer(), I8.as_pointer(), I64.as_pointer()
OPCODES = frozenset({"wmma"})
_SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)$")
# multiplicand type -> (shapes, accumulator types): the subset compiled natively
_MMA: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "f16": (("m16n16k16", "m8n32k16", "m32n8k16"), ("f16", "f32")),
    "bf16": (("m16n16k16", "m8n32k16", "m32n8k16"), ("f32",)),
    "tf32": (("m16n16k8",), ("f32",)),
}
_CANON_NAN32 = 0x7FFFFFFF


def emit(g: Any, k: int, ins: Instruction) -> None:
    """The wmma instruction at op k of the block being emitted by codegen.KernelCodegen `g`."""
    g.k, g.ins = k, ins
    g.seg_local = set()
    g.seg_vals = None
    g.cur_guard = None
    if ins.mods and ins.mods[0] == "mma":
        _mma(g, ins)
        return
    if ins.mods and ins.mods[0] in ("load", "store"):
        _memory(g, ins)
        return
    raise g.fail()


class _Matrix:
    """One fragment operand: its registers, element type and the row-major layout's sizes."""

    def __init__(self, g: Any, op: Any, matrix: str, et: str, shape: str) -> None:
        m = _SHAPE.match(shape)
        assert m is not None
        M, N, K = (int(x) for x in m.groups())
        self.rows, self.cols = {"a": (M, K), "b": (K, N)}.get(matrix, (M, N))
        self.size = self.rows * self.cols
        frag = Fragment(*wmma_layout(shape, "c" if matrix == "d" else matrix, et), (self.rows, self.cols))
        self.E = frag.per_lane
        # the layout's flat index of lane l's element e must be (l*E + e) mod size: what the gather and
        # scatter below compute (checked, not assumed, so a change of layout falls back instead of diverging)
        want = np.arange(32 * self.E) % self.size
        if not frag.row_major or not np.array_equal(frag.lin, want) or self.size % self.E:
            raise g.fail(f"(the {matrix.upper()} fragment's layout)")
        self.et = et
        self.bits = ELEMENTS[et][0]
        self.per = 32 // self.bits  # elements per 32-bit register
        self.lanes = self.size // self.E  # lanes holding the first copy of every element
        elems = op.elems if isinstance(op, Vec) else (op,)
        if len(elems) * self.per != self.E:
            raise g.fail(f"(the {matrix.upper()} fragment needs {self.E // self.per} registers)")
        self.ops = list(elems)


def _parse(g: Any, ins: Instruction) -> tuple[str, str, str, str]:
    """(shape, multiplicand type, C type, D type) of a wmma.mma compiled natively; raises NativeUnsupported."""
    shape = ""
    types: list[str] = []
    for mod in ins.mods[1:]:
        if _SHAPE.match(mod):
            shape = mod
        elif mod in ELEMENTS:
            types.append(mod)
        elif mod not in ("sync", "aligned", "row", "col"):  # (the layouts: the loads' business, as there)
            raise g.fail()
    if len(types) == 2:  # .f16 multiplicands are implicit
        types = [types[0], "f16", "f16", types[1]]
    if len(types) != 4 or not shape:
        raise g.fail()
    dt, at, bt, ct = types
    shapes, accs = _MMA.get(at, ((), ()))
    if at != bt or shape not in shapes or dt not in accs or ct not in accs:
        raise g.fail()
    return shape, at, ct, dt


def _mma(g: Any, ins: Instruction) -> None:
    shape, at, ct, dt = _parse(g, ins)
    if len(ins.operands) != 4:
        raise g.fail("operands")
    d_op, a_op, b_op, c_op = ins.operands
    mats = [_Matrix(g, a_op, "a", at, shape), _Matrix(g, b_op, "b", at, shape), _Matrix(g, c_op, "c", ct, shape),
            _Matrix(g, d_op, "d", dt, shape)]
    if mats[3].lanes != 32:
        raise g.fail("(accumulator layout)")
    bld = g.bld
    c32 = ir.Constant(I64, 32)
    guard = ins.guard
    tables = [_register_table(g, m, dst=x == 3) for x, m in enumerate(mats)]
    helper = _warp_fn(g, mats)
    _whole_warps_or_bail(g, guard)

    def warp(w: ir.Value) -> None:
        base = bld.mul(w, c32)
        with bld.if_then(g.active(base, guard)):  # (every lane of the warp executes, or none: checked above)
            bld.call(helper, [*tables, base])
    g._count_loop(bld.sdiv(g.n_arg, c32), warp)


def _register_table(g: Any, m: _Matrix, dst: bool) -> ir.Value:
    """An array of the fragment registers' lane arrays (i32*), for the warp helper."""
    bld = g.bld
    table = g.entry_alloca(I32P, len(m.ops))
    for r, op in enumerate(m.ops):
        if not isinstance(op, Reg) or op.negated or g.reg_bits.get(op.name) != 32 or \
                g.fn.regs.get(op.name) == "pred" or (dst and op.name in g._inv_index):
            raise g.fail(f"(fragment register {op})")
        bld.store(bld.bitcast(g.reg_ptr(op.name), I32P), bld.gep(table, [ir.Constant(I64, r)]))
    return table


def _whole_warps_or_bail(g: Any, guard: Any) -> None:
    """Return k + 1 (the reference runs the op) when some warp of the chunk has lanes that execute it and lanes
    that do not: each lane's activity against its warp's first lane's."""
    bld = g.bld
    mixed = g.entry_alloca(I1)
    bld.store(ir.Constant(I1, 0), mixed)

    def lane(i: ir.Value) -> None:
        first = bld.and_(i, ir.Constant(I64, -32))
        differs = bld.xor(g.active(i, guard), g.active(first, guard))
        bld.store(bld.or_(bld.load(mixed), differs), mixed)
    g._count_loop(g.n_arg, lane)
    g._bail_if(bld.load(mixed))


class _Builder:
    """What codegen_half's helpers use of a KernelCodegen (`bld`, `intrinsic`), for code in a helper function."""

    def __init__(self, g: Any, bld: ir.IRBuilder) -> None:
        self.bld, self.intrinsic = bld, g.intrinsic


def _warp_fn(g: Any, mats: list[_Matrix]) -> ir.Function:
    """The module's `wmma_warp_<types and shape>(a**, b**, c**, d**, base)` for one warp whose first lane is
    `base`: gathers A, B and C from their registers' lane arrays into f64 matrices, calls the product, writes
    D's registers. One per signature and module, so each wmma.mma of a kernel costs a call, not a copy."""
    a, b, c, d = mats
    name = f"wmma_warp_m{a.rows}n{d.cols}k{a.cols}_{a.et}_{c.et}_{d.et}"
    f = g._helpers.get(name)
    if f is not None:
        return f
    f = ir.Function(g.module, ir.FunctionType(ir.VoidType(), [I32P.as_pointer()] * 4 + [I64]), name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")
    g._helpers[name] = f
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    e = _Builder(g, bld)
    base = f.args[4]
    bufs = [bld.alloca(F64, m.size) for m in mats]
    if c.et == d.et == "f32" and all(m.cols % m.E == 0 for m in mats):
        # each lane's elements lie in one row: whole registers move as vectors, matrices kept column by column
        for m, table, buf in zip(mats[:3], f.args[:3], bufs[:3], strict=True):
            _gather_columns(bld, m, table, buf, base)
        bld.call(_product_columns_fn(g, a.rows, d.cols, a.cols), bufs)
        _scatter_columns(bld, d, f.args[3], bufs[3], base)
    else:
        for m, table, buf in zip(mats[:3], f.args[:3], bufs[:3], strict=True):
            _gather(e, f, m, table, buf, base)
        bld.call(_product_fn(g, a.rows, d.cols, a.cols), bufs)
        _scatter(e, f, d, f.args[3], bufs[3], base)
    bld.ret_void()
    return f


def _register_vector(bld: ir.IRBuilder, table: ir.Value, r: int, base: ir.Value, lanes: int) -> ir.Value:
    """Pointer to lanes base .. base + lanes - 1 of fragment register r, as one <lanes x i32>."""
    arr = bld.gep(bld.load(bld.gep(table, [ir.Constant(I64, r)])), [base])
    return bld.bitcast(arr, ir.VectorType(I32, lanes).as_pointer())


def _splat32(lanes: int, v: int) -> ir.Constant:
    return ir.Constant(ir.VectorType(I32, lanes), [v] * lanes)


def _gather_columns(bld: ir.IRBuilder, m: _Matrix, table: ir.Value, buf: ir.Value, base: ir.Value) -> None:
    """The warp's fragment registers -> buf[col * rows + row] (column-major f64), a whole register at a time.
    With E | cols, lane j's element e is (row j // P, column (j % P) * E + e), P = cols / E lanes per row:
    element e of every lane, deinterleaved by P, gives P whole columns."""
    L, P = m.lanes, m.cols // m.E
    R = L // P
    vt, col_t = ir.VectorType(F64, L), ir.VectorType(F64, R)
    for r in range(len(m.ops)):
        v = bld.load(_register_vector(bld, table, r, base, L), align=4)
        for h in range(m.per):
            if m.et == "f16":
                bits = bld.trunc(bld.lshr(v, _splat32(L, 16)) if h else v, ir.VectorType(I16, L))
                vals = bld.fpext(bld.bitcast(bits, ir.VectorType(ir.HalfType(), L)), vt)
            else:
                if m.et == "bf16":
                    bits = bld.and_(v, _splat32(L, 0xFFFF0000)) if h else bld.shl(v, _splat32(L, 16))
                elif m.et == "tf32":  # the low 13 mantissa bits are ignored
                    bits = bld.and_(v, _splat32(L, 0xFFFFE000))
                else:
                    bits = v
                vals = bld.fpext(bld.bitcast(bits, ir.VectorType(F32, L)), vt)
            e = r * m.per + h
            for q in range(P):
                pick = ir.Constant(ir.VectorType(I32, R), [q + P * i for i in range(R)])
                col = vals if P == 1 else bld.shuffle_vector(vals, ir.Constant(vt, ir.Undefined), pick)
                at = bld.gep(buf, [ir.Constant(I64, (q * m.E + e) * R)])
                bld.store(col, bld.bitcast(at, col_t.as_pointer()), align=8)


def _scatter_columns(bld: ir.IRBuilder, d: _Matrix, table: ir.Value, out: ir.Value, base: ir.Value) -> None:
    """Column-major f64 D -> its f32 fragment registers (to nearest; NaN -> 0x7fffffff), a register at a time:
    the P columns of element e, interleaved back into lane order."""
    P = d.cols // d.E
    R = 32 // P
    col_t = ir.VectorType(F64, R)
    for r in range(len(d.ops)):
        cols = [bld.load(bld.bitcast(bld.gep(out, [ir.Constant(I64, (q * d.E + r) * R)]), col_t.as_pointer()),
                         align=8) for q in range(P)]
        while len(cols) > 1:  # concatenate: [column 0 rows..., column 1 rows..., ...]
            n = cols[0].type.count
            cols = [bld.shuffle_vector(x, y, ir.Constant(ir.VectorType(I32, 2 * n), list(range(2 * n))))
                    for x, y in zip(cols[::2], cols[1::2], strict=True)]
        vals = cols[0]
        if P > 1:  # lane j = row * P + q
            vals = bld.shuffle_vector(vals, ir.Constant(vals.type, ir.Undefined),
                                      ir.Constant(ir.VectorType(I32, 32), [(j % P) * R + j // P for j in range(32)]))
        bits = bld.bitcast(bld.fptrunc(vals, ir.VectorType(F32, 32)), ir.VectorType(I32, 32))
        word = bld.select(bld.fcmp_unordered("uno", vals, vals), _splat32(32, _CANON_NAN32), bits)
        bld.store(word, _register_vector(bld, table, r, base, 32), align=4)


def _product_columns_fn(g: Any, M: int, N: int, K: int) -> ir.Function:
    """The module's `wmma_f64c_m<M>n<N>k<K>(a, b, c, d)`: d = a @ b + c on column-major f64 matrices (column n
    of d: the sum over ascending k of a's column k times b[k][n], from +0.0, then c's column n; fma(a, b, acc)
    is acc + a * b exactly, as in `_product_fn`), four columns at a time."""
    name = f"wmma_f64c_m{M}n{N}k{K}"
    f = g._helpers.get(name)
    if f is not None:
        return f
    f = ir.Function(g.module, ir.FunctionType(ir.VoidType(), [F64P] * 4), name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")
    for arg in f.args:
        arg.add_attribute("noalias")
    g._helpers[name] = f
    a, b, c, d = f.args
    vt = ir.VectorType(F64, M)
    vtp = vt.as_pointer()
    fma_name = f"llvm.fma.v{M}f64"
    fma = g.module.globals.get(fma_name) or ir.Function(g.module, ir.FunctionType(vt, [vt, vt, vt]), name=fma_name)
    group = next(x for x in (4, 2, 1) if N % x == 0)
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    splat_mask = ir.Constant(ir.VectorType(I32, M), [0] * M)

    def c64(v: int) -> ir.Value:
        return ir.Constant(I64, v)

    def block(n0: ir.Value) -> None:
        n0 = bld.mul(n0, c64(group))
        pre = bld.block
        head, body, done = (f.append_basic_block() for _ in range(3))
        bld.branch(head)
        bld.position_at_end(head)
        k = bld.phi(I64)
        k.add_incoming(c64(0), pre)
        accs = []
        for _ in range(group):
            phi = bld.phi(vt)
            phi.add_incoming(ir.Constant(vt, None), pre)
            accs.append(phi)
        bld.cbranch(bld.icmp_signed("<", k, c64(K)), body, done)
        bld.position_at_end(body)
        ak = bld.load(bld.bitcast(bld.gep(a, [bld.mul(k, c64(M))]), vtp), align=8)
        for q, acc in enumerate(accs):
            bv = bld.load(bld.gep(b, [bld.add(bld.mul(bld.add(n0, c64(q)), c64(K)), k)]))
            splat = bld.shuffle_vector(bld.insert_element(ir.Constant(vt, ir.Undefined), bv, c64(0)),
                                       ir.Constant(vt, ir.Undefined), splat_mask)
            acc.add_incoming(bld.call(fma, [ak, splat, acc]), body)
        k.add_incoming(bld.add(k, c64(1)), body)
        bld.branch(head)
        bld.position_at_end(done)
        for q, acc in enumerate(accs):
            at = bld.mul(bld.add(n0, c64(q)), c64(M))
            cv = bld.load(bld.bitcast(bld.gep(c, [at]), vtp), align=8)
            bld.store(bld.fadd(acc, cv), bld.bitcast(bld.gep(d, [at]), vtp), align=8)
    _loop(bld, f, N // group, block)
    bld.ret_void()
    return f


def _gather(e: _Builder, f: ir.Function, m: _Matrix, table: ir.Value, buf: ir.Value, base: ir.Value) -> None:
    """The warp's fragment registers -> buf[row * cols + col], f64 values (tensor._values' decoding). Lane by
    lane, its registers in turn: each lane's E values are consecutive in buf (plain stores, no scatters)."""
    bld = e.bld
    arrs = [bld.gep(bld.load(bld.gep(table, [ir.Constant(I64, r)])), [base]) for r in range(len(m.ops))]

    def lane(j: ir.Value) -> None:
        at = bld.mul(j, ir.Constant(I64, m.E))
        for r, arr in enumerate(arrs):
            v = bld.load(bld.gep(arr, [j]))
            for h in range(m.per):
                bld.store(_decode(e, m.et, v, h), bld.gep(buf, [bld.add(at, ir.Constant(I64, r * m.per + h))]))
    _loop(bld, f, m.lanes, lane)


def _decode(e: _Builder, et: str, v: ir.Value, h: int) -> ir.Value:
    """Element h of a 32-bit register (low half first) as an f64 value."""
    bld = e.bld
    if et == "tf32":  # the low 13 mantissa bits are ignored
        return bld.fpext(bld.bitcast(bld.and_(v, ir.Constant(I32, 0xFFFFE000)), F32), F64)
    if et == "f32":
        return bld.fpext(bld.bitcast(v, F32), F64)
    half = bld.trunc(bld.lshr(v, ir.Constant(I32, 16)) if h else v, I16)
    return bld.fpext(codegen_half.widen(e, et, half), F64)


def _scatter(e: _Builder, f: ir.Function, d: _Matrix, table: ir.Value, out: ir.Value, base: ir.Value) -> None:
    """D's f64 values -> the warp's fragment registers, rounded to nearest (fpround.narrow); lane by lane."""
    bld = e.bld
    arrs = [bld.gep(bld.load(bld.gep(table, [ir.Constant(I64, r)])), [base]) for r in range(len(d.ops))]

    def lane(j: ir.Value) -> None:
        at = bld.mul(j, ir.Constant(I64, d.E))
        for r, arr in enumerate(arrs):
            word: ir.Value = ir.Constant(I32, 0)
            for h in range(d.per):
                x = bld.load(bld.gep(out, [bld.add(at, ir.Constant(I64, r * d.per + h))]))
                if d.et == "f32":
                    bits = bld.bitcast(bld.fptrunc(x, F32), I32)
                    word = bld.select(bld.fcmp_unordered("uno", x, x), ir.Constant(I32, _CANON_NAN32), bits)
                else:  # f16: round to odd to f32, then to nearest (exact as one rounding; NaN -> 0x7fff)
                    bits = bld.zext(codegen_half.narrow(e, "f16", codegen_half._ro_f32(e, x)), I32)
                    word = bld.or_(word, bld.shl(bits, ir.Constant(I32, 16)) if h else bits)
            bld.store(word, bld.gep(arr, [j]))
    _loop(bld, f, 32, lane)


# ------------------------------------------------------------------------------------------------
# wmma.load / wmma.store from and to shared memory
# ------------------------------------------------------------------------------------------------


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
    shapes = [m for m in rest if _SHAPE.match(m)]
    types = [m for m in rest if m in ELEMENTS]
    layouts = [m for m in rest if m in ("row", "col")]
    if len(shapes) != 1 or len(types) != 1 or len(layouts) != 1 or "sync" not in rest or \
            any(m not in ("sync", "aligned", *shapes, *types, *layouts) for m in rest):
        raise g.fail()
    if types[0] not in ("f16", "bf16", "tf32", "f32"):
        raise g.fail("(element type)")
    return store, which, shapes[0], types[0], layouts[0] == "row", "shared" if spaces else "generic"


def _memory(g: Any, ins: Instruction) -> None:
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
    m = _Matrix(g, ops[reg_i], which, et, shape)
    size = m.bits // 8
    major_n, minor_n = (m.rows, m.cols) if row else (m.cols, m.rows)
    stride_op = ops[2] if len(ops) == 3 else None
    table = _register_table(g, m, dst=not store)
    mover = _move_fn(g, m, row, store)
    fast_mover = _move_vector_fn(g, m, row, store) if m.cols % m.E == 0 else None
    conflicts_fn = _conflicts_fn(g, major_n, minor_n, size)
    guard = ins.guard
    bld = g.bld
    c32 = ir.Constant(I64, 32)
    warps = bld.sdiv(g.n_arg, c32)
    _whole_warps_or_bail(g, guard)

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


def _move_vector_fn(g: Any, m: _Matrix, row: bool, store: bool) -> ir.Function:
    """`_move_fn`'s work in whole words and vectors, for fragments whose lanes each hold part of one row
    (E | cols; P = cols / E lanes per row; lane j, of the L lanes holding the first copies, has row j // P,
    columns (j % P) * E ..). Row layout: a lane's E elements are consecutive in memory, and its registers are
    their bytes (little-endian pairs for 16-bit types): word-sized copies. Column layout: element e of the lanes
    j % P = q is column q * E + e, consecutive in memory: one vector per column, interleaved into lane order.
    A column-layout store needs columns that do not overlap in memory (stride >= rows; the caller checks)."""
    kind = "store" if store else "load"
    name = f"wmma_{kind}v_{m.rows}x{m.cols}_{'row' if row else 'col'}_{m.et}_{m.E}"
    f = g._helpers.get(name)
    if f is not None:
        return f
    f = ir.Function(g.module, ir.FunctionType(ir.VoidType(), [I32P.as_pointer(), I64, I8P, I64]), name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")
    g._helpers[name] = f
    table, base, ptr, stride = f.args
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    size = m.bits // 8
    L, P = m.lanes, m.cols // m.E
    R = L // P
    nregs = len(m.ops)
    if row:
        arrs = [bld.gep(bld.load(bld.gep(table, [ir.Constant(I64, r)])), [base]) for r in range(nregs)]

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
        _loop(bld, f, 32 if not store else L, lane)
        bld.ret_void()
        return f
    ety = ir.IntType(m.bits)
    col_t = ir.VectorType(ety, R)
    for r in range(nregs):
        regp = _register_vector(bld, table, r, base, 32)
        word = bld.load(regp, align=4) if store else None
        out: ir.Value = ir.Constant(ir.VectorType(I32, 32), None)
        for h in range(m.per):
            e = r * m.per + h
            at = [bld.mul(bld.mul(ir.Constant(I64, q * m.E + e), stride), ir.Constant(I64, size)) for q in range(P)]
            cols = [bld.bitcast(bld.gep(ptr, [a]), col_t.as_pointer()) for a in at]
            if store:
                assert word is not None and L == 32
                part = bld.lshr(word, _splat32(32, 16)) if h else word
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
            out = bld.or_(out, bld.shl(wide, _splat32(32, 16)) if h else wide)
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


def _move_fn(g: Any, m: _Matrix, row: bool, store: bool) -> ir.Function:
    """The module's `wmma_<load|store>_<layout>(regs**, base, warp_ptr, stride)`: one warp's fragment registers
    from (or to) shared memory at warp_ptr, element e of lane j at ((major * stride + minor) * size) bytes,
    (major, minor) the element's (row, col), or (col, row) for the column-major layout (tensor.lower_wmma)."""
    kind = "store" if store else "load"
    name = f"wmma_{kind}_{m.rows}x{m.cols}_{'row' if row else 'col'}_{m.et}_{m.E}"
    f = g._helpers.get(name)
    if f is not None:
        return f
    f = ir.Function(g.module, ir.FunctionType(ir.VoidType(), [I32P.as_pointer(), I64, I8P, I64]), name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")
    g._helpers[name] = f
    table, base, ptr, stride = f.args
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    ety = ir.IntType(m.bits)

    arrs = [bld.gep(bld.load(bld.gep(table, [ir.Constant(I64, r)])), [base]) for r in range(len(m.ops))]

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
    _loop(bld, f, 32, lane)
    bld.ret_void()
    return f


def _conflicts_fn(g: Any, major_n: int, minor_n: int, size: int) -> ir.Function:
    """The module's `wmma_conflicts_<majors>x<minors>_<size>(stride, phase) -> i64`: the bank conflicts of one
    warp request (memory.warp_bank_conflicts: the busiest bank's distinct words, less one) of a fragment whose
    elements start at ((major * stride + minor) * size + phase) bytes. Each major's elements touch one run of
    consecutive words (elements of at most 4 bytes), and the runs start in increasing order (stride >= 0), so
    the distinct words are each run's words beyond the highest word seen so far."""
    name = f"wmma_conflicts_{major_n}x{minor_n}_{size}"
    f = g._helpers.get(name)
    if f is not None:
        return f
    f = ir.Function(g.module, ir.FunctionType(I64, [I64, I64]), name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")
    g._helpers[name] = f
    stride, phase = f.args
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    banks = bld.alloca(I64, 32)
    seen = bld.alloca(I64)
    _loop(bld, f, 32, lambda b: bld.store(ir.Constant(I64, 0), bld.gep(banks, [b])))
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
    _loop(bld, f, major_n, run)
    best = bld.alloca(I64)
    bld.store(ir.Constant(I64, 0), best)

    def most(b: ir.Value) -> None:
        v, cur = bld.load(bld.gep(banks, [b])), bld.load(best)
        bld.store(bld.select(bld.icmp_signed(">", v, cur), v, cur), best)
    _loop(bld, f, 32, most)
    bld.ret(bld.sub(bld.load(best), ir.Constant(I64, 1)))
    return f


def _product_fn(g: Any, M: int, N: int, K: int) -> ir.Function:
    """The module's `wmma_f64_m<M>n<N>k<K>(a, b, c, d)`: d = a @ b + c on row-major f64 matrices, each element's
    products summed in ascending k from +0.0, then c added. One helper per shape and module (a call per warp,
    compiled once). A row of the result is one <N x double> vector; ROWS rows at a time, so the FMAs of
    different rows overlap instead of waiting on each other. `fma(a, b, acc)` equals `acc + a * b` here: the
    products of .f16/.bf16/.tf32 values are exact in f64 (22 significant bits at most, no underflow)."""
    name = f"wmma_f64_m{M}n{N}k{K}"
    f = g._helpers.get(name)
    if f is not None:
        return f
    f = ir.Function(g.module, ir.FunctionType(ir.VoidType(), [F64P] * 4), name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")
    for arg in f.args:
        arg.add_attribute("noalias")
    g._helpers[name] = f
    a, b, c, d = f.args
    vt = ir.VectorType(F64, N)
    vtp = vt.as_pointer()
    fma_name = f"llvm.fma.v{N}f64"
    fma = g.module.globals.get(fma_name) or ir.Function(g.module, ir.FunctionType(vt, [vt, vt, vt]), name=fma_name)
    rows = next(r for r in (4, 2, 1) if M % r == 0)
    entry = f.append_basic_block("entry")
    bld = ir.IRBuilder(entry)
    zero = ir.Constant(vt, None)
    splat_mask = ir.Constant(ir.VectorType(I32, N), [0] * N)

    def c64(v: int) -> ir.Value:
        return ir.Constant(I64, v)

    def vec_at(ptr: ir.Value, at: ir.Value) -> ir.Value:
        return bld.bitcast(bld.gep(ptr, [at]), vtp)

    def block(m0: ir.Value) -> None:
        m0 = bld.mul(m0, c64(rows))
        pre = bld.block
        head, body, done = (f.append_basic_block() for _ in range(3))
        bld.branch(head)
        bld.position_at_end(head)
        k = bld.phi(I64)
        k.add_incoming(c64(0), pre)
        accs = []
        for _ in range(rows):
            phi = bld.phi(vt)
            phi.add_incoming(zero, pre)
            accs.append(phi)
        bld.cbranch(bld.icmp_signed("<", k, c64(K)), body, done)
        bld.position_at_end(body)
        bk = bld.load(vec_at(b, bld.mul(k, c64(N))), align=8)
        for r, acc in enumerate(accs):
            av = bld.load(bld.gep(a, [bld.add(bld.mul(bld.add(m0, c64(r)), c64(K)), k)]))
            splat = bld.shuffle_vector(bld.insert_element(ir.Constant(vt, ir.Undefined), av, c64(0)),
                                       ir.Constant(vt, ir.Undefined), splat_mask)
            acc.add_incoming(bld.call(fma, [splat, bk, acc]), body)
        k.add_incoming(bld.add(k, c64(1)), body)
        bld.branch(head)
        bld.position_at_end(done)
        for r, acc in enumerate(accs):
            at = bld.mul(bld.add(m0, c64(r)), c64(N))
            cv = bld.load(vec_at(c, at), align=8)
            bld.store(bld.fadd(acc, cv), vec_at(d, at), align=8)
    _loop(bld, f, M // rows, block)
    bld.ret_void()
    return f


def _loop(bld: ir.IRBuilder, f: ir.Function, count: int, body: Callable[[ir.Value], None]) -> None:
    """for j in range(count): body(j), in function f at the builder's position."""
    pre = bld.block
    head, work, done = (f.append_basic_block() for _ in range(3))
    bld.branch(head)
    bld.position_at_end(head)
    j = bld.phi(I64)
    j.add_incoming(ir.Constant(I64, 0), pre)
    bld.cbranch(bld.icmp_signed("<", j, ir.Constant(I64, count)), work, done)
    bld.position_at_end(work)
    body(j)
    j.add_incoming(bld.add(j, ir.Constant(I64, 1)), bld.block)
    bld.branch(head)
    bld.position_at_end(done)
