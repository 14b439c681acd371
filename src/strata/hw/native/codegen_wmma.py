"""Native warp matrix instructions, with the reference's semantics and counters (hw/isa/tensor.py):
`wmma.mma.sync` on .f16/.bf16 (m16n16k16, m8n32k16, m32n8k16) and .tf32 (m16n16k8) multiplicands with .f32
or .f16 accumulators (`_lower_wmma_mma`, `_product`), and `wmma.load.{a,b,c}` / `wmma.store.d` to and from
shared memory (`lower_wmma`, `_shared_fast`) of those types (codegen_wmma_mem.py). Global memory, .f64 and
integer types, .satfinite and rounding modifiers raise NativeUnsupported: those ops run on the reference
(partial.py).

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
block's histogram, as for every native op; loads and stores add the shared bytes, requests and bank
conflicts themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]

from strata.hw.isa.tensor import ELEMENTS, Fragment, wmma_layout
from strata.hw.native import codegen_half
from strata.hw.ptx.ir import Instruction, Reg, Vec

I1, I8, I16, I32, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
F32, F64 = ir.FloatType(), ir.DoubleType()
F64P, I32P, I8P, I64P = F64.as_pointer(), I32.as_pointer(), I8.as_pointer(), I64.as_pointer()
OPCODES = frozenset({"wmma"})
SHAPE = re.compile(r"m(\d+)n(\d+)k(\d+)$")
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
        from strata.hw.native import codegen_wmma_mem  # (it imports this module)

        codegen_wmma_mem.emit(g, ins)
        return
    raise g.fail()


class Matrix:
    """One fragment operand: its registers, element type and the row-major layout's sizes."""

    def __init__(self, g: Any, op: Any, matrix: str, et: str, shape: str) -> None:
        m = SHAPE.match(shape)
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
        if SHAPE.match(mod):
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
    mats = [Matrix(g, a_op, "a", at, shape), Matrix(g, b_op, "b", at, shape), Matrix(g, c_op, "c", ct, shape),
            Matrix(g, d_op, "d", dt, shape)]
    if mats[3].lanes != 32:
        raise g.fail("(accumulator layout)")
    bld = g.bld
    c32 = ir.Constant(I64, 32)
    guard = ins.guard
    tables = [register_table(g, m) for m in mats]
    helper = _warp_fn(g, mats)
    whole_warps_or_bail(g, guard)

    def warp(w: ir.Value) -> None:
        base = bld.mul(w, c32)
        with bld.if_then(g.active(base, guard)):  # (every lane of the warp executes, or none: checked above)
            bld.call(helper, [*tables, base])
    g._count_loop(bld.sdiv(g.n_arg, c32), warp)


def register_table(g: Any, m: Matrix) -> ir.Value:
    """An array of the fragment registers' lane arrays (i32*), for the warp helper. A launch invariant (a
    register holding a kernel parameter, codegen.launch_invariants) has no lane array native code may read:
    such an op runs on the reference."""
    bld = g.bld
    table = g.entry_alloca(I32P, len(m.ops))
    for r, op in enumerate(m.ops):
        if not isinstance(op, Reg) or op.negated or g.reg_bits.get(op.name) != 32 or \
                g.fn.regs.get(op.name) == "pred" or op.name in g._inv_index:
            raise g.fail(f"(fragment register {op})")
        bld.store(bld.bitcast(g.reg_ptr(op.name), I32P), bld.gep(table, [ir.Constant(I64, r)]))
    return table


def whole_warps_or_bail(g: Any, guard: Any) -> None:
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


def _warp_fn(g: Any, mats: list[Matrix]) -> ir.Function:
    """The module's `wmma_warp_<types and shape>(a**, b**, c**, d**, base)` for one warp whose first lane is
    `base`: gathers A, B and C from their registers' lane arrays into f64 matrices, calls the product, writes
    D's registers. One per signature and module, so each wmma.mma of a kernel costs a call, not a copy."""
    a, b, c, d = mats
    name = f"wmma_warp_m{a.rows}n{d.cols}k{a.cols}_{a.et}_{c.et}_{d.et}"
    f, fresh = helper_fn(g, name, ir.FunctionType(ir.VoidType(), [I32P.as_pointer()] * 4 + [I64]))
    if not fresh:
        return f
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    e = _Builder(g, bld)
    base = f.args[4]
    bufs = [bld.alloca(F64, m.size) for m in mats]
    if c.et == d.et == "f32" and all(m.cols % m.E == 0 for m in mats):
        # each lane's elements lie in one row: whole registers move as vectors, matrices kept column by column
        for m, table, buf in zip(mats[:3], f.args[:3], bufs[:3], strict=True):
            _gather_columns(bld, m, table, buf, base)
        bld.call(_product_fn(g, a.rows, d.cols, a.cols, columns=True), bufs)
        _scatter_columns(bld, d, f.args[3], bufs[3], base)
    else:
        for m, table, buf in zip(mats[:3], f.args[:3], bufs[:3], strict=True):
            _gather(e, f, m, table, buf, base)
        bld.call(_product_fn(g, a.rows, d.cols, a.cols), bufs)
        _scatter(e, f, d, f.args[3], bufs[3], base)
    bld.ret_void()
    return f


def register_lanes(bld: ir.IRBuilder, table: ir.Value, r: int, base: ir.Value) -> ir.Value:
    """Pointer (i32*) to lane `base` of fragment register r's lane array."""
    return bld.gep(bld.load(bld.gep(table, [ir.Constant(I64, r)])), [base])


def register_vector(bld: ir.IRBuilder, table: ir.Value, r: int, base: ir.Value, lanes: int) -> ir.Value:
    """Pointer to lanes base .. base + lanes - 1 of fragment register r, as one <lanes x i32>."""
    return bld.bitcast(register_lanes(bld, table, r, base), ir.VectorType(I32, lanes).as_pointer())


def splat32(lanes: int, v: int) -> ir.Constant:
    return ir.Constant(ir.VectorType(I32, lanes), [v] * lanes)


def _gather_columns(bld: ir.IRBuilder, m: Matrix, table: ir.Value, buf: ir.Value, base: ir.Value) -> None:
    """The warp's fragment registers -> buf[col * rows + row] (column-major f64), a whole register at a time.
    With E | cols, lane j's element e is (row j // P, column (j % P) * E + e), P = cols / E lanes per row:
    element e of every lane, deinterleaved by P, gives P whole columns."""
    L, P = m.lanes, m.cols // m.E
    R = L // P
    vt, col_t = ir.VectorType(F64, L), ir.VectorType(F64, R)
    for r in range(len(m.ops)):
        v = bld.load(register_vector(bld, table, r, base, L), align=4)
        for h in range(m.per):
            if m.et == "f16":
                bits = bld.trunc(bld.lshr(v, splat32(L, 16)) if h else v, ir.VectorType(I16, L))
                vals = bld.fpext(bld.bitcast(bits, ir.VectorType(ir.HalfType(), L)), vt)
            else:
                if m.et == "bf16":
                    bits = bld.and_(v, splat32(L, 0xFFFF0000)) if h else bld.shl(v, splat32(L, 16))
                elif m.et == "tf32":  # the low 13 mantissa bits are ignored
                    bits = bld.and_(v, splat32(L, 0xFFFFE000))
                else:
                    bits = v
                vals = bld.fpext(bld.bitcast(bits, ir.VectorType(F32, L)), vt)
            e = r * m.per + h
            for q in range(P):
                pick = ir.Constant(ir.VectorType(I32, R), [q + P * i for i in range(R)])
                col = vals if P == 1 else bld.shuffle_vector(vals, ir.Constant(vt, ir.Undefined), pick)
                at = bld.gep(buf, [ir.Constant(I64, (q * m.E + e) * R)])
                bld.store(col, bld.bitcast(at, col_t.as_pointer()), align=8)


def _scatter_columns(bld: ir.IRBuilder, d: Matrix, table: ir.Value, out: ir.Value, base: ir.Value) -> None:
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
        word = bld.select(bld.fcmp_unordered("uno", vals, vals), splat32(32, _CANON_NAN32), bits)
        bld.store(word, register_vector(bld, table, r, base, 32), align=4)


def _gather(e: _Builder, f: ir.Function, m: Matrix, table: ir.Value, buf: ir.Value, base: ir.Value) -> None:
    """The warp's fragment registers -> buf[row * cols + col], f64 values (tensor._values' decoding). Lane by
    lane, its registers in turn: each lane's E values are consecutive in buf (plain stores, no scatters)."""
    bld = e.bld
    arrs = [register_lanes(bld, table, r, base) for r in range(len(m.ops))]

    def lane(j: ir.Value) -> None:
        at = bld.mul(j, ir.Constant(I64, m.E))
        for r, arr in enumerate(arrs):
            v = bld.load(bld.gep(arr, [j]))
            for h in range(m.per):
                bld.store(_decode(e, m.et, v, h), bld.gep(buf, [bld.add(at, ir.Constant(I64, r * m.per + h))]))
    loop(bld, f, m.lanes, lane)


def _decode(e: _Builder, et: str, v: ir.Value, h: int) -> ir.Value:
    """Element h of a 32-bit register (low half first) as an f64 value."""
    bld = e.bld
    if et == "tf32":  # the low 13 mantissa bits are ignored
        return bld.fpext(bld.bitcast(bld.and_(v, ir.Constant(I32, 0xFFFFE000)), F32), F64)
    if et == "f32":
        return bld.fpext(bld.bitcast(v, F32), F64)
    half = bld.trunc(bld.lshr(v, ir.Constant(I32, 16)) if h else v, I16)
    return bld.fpext(codegen_half.widen(e, et, half), F64)


def _scatter(e: _Builder, f: ir.Function, d: Matrix, table: ir.Value, out: ir.Value, base: ir.Value) -> None:
    """D's f64 values -> the warp's fragment registers, rounded to nearest (fpround.narrow); lane by lane."""
    bld = e.bld
    arrs = [register_lanes(bld, table, r, base) for r in range(len(d.ops))]

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
    loop(bld, f, 32, lane)


def _product_fn(g: Any, M: int, N: int, K: int, *, columns: bool = False) -> ir.Function:
    """The module's `wmma_f64_m<M>n<N>k<K>(a, b, c, d)`: d = a @ b + c on f64 matrices, each element's products
    summed in ascending k from +0.0, then c added. One helper per shape, layout and module (a call per warp,
    compiled once). `fma(x, y, acc)` equals `acc + x * y` here: the products of .f16/.bf16/.tf32 values are
    exact in f64 (22 significant bits at most, no underflow).

    Row-major matrices (`columns=False`): a row of d is one <N x double> vector, b's row k times the splat of
    a[m][k]; column-major ones (`columns=True`, the `wmma_f64c_` helpers): a column of d is one <M x double>
    vector, a's column k times the splat of b[k][n]. Either way a group of 4 (or 2, or 1) such vectors at a
    time, so the FMAs of different rows or columns overlap instead of waiting on each other."""
    name = f"wmma_f64{'c' if columns else ''}_m{M}n{N}k{K}"
    f, fresh = helper_fn(g, name, ir.FunctionType(ir.VoidType(), [F64P] * 4))
    if not fresh:
        return f
    for arg in f.args:
        arg.add_attribute("noalias")
    a, b, c, d = f.args
    # width: the vector's length; outer: how many vectors d has; vec[k * width]: the vector operand's k-th;
    # scal[o * K + k]: the scalar operand's element for vector o and step k
    width, outer, vec, scal = (M, N, a, b) if columns else (N, M, b, a)
    vt = ir.VectorType(F64, width)
    vtp = vt.as_pointer()
    fma_name = f"llvm.fma.v{width}f64"
    fma = g.module.globals.get(fma_name) or ir.Function(g.module, ir.FunctionType(vt, [vt, vt, vt]), name=fma_name)
    group = next(r for r in (4, 2, 1) if outer % r == 0)
    bld = ir.IRBuilder(f.append_basic_block("entry"))
    zero = ir.Constant(vt, None)
    splat_mask = ir.Constant(ir.VectorType(I32, width), [0] * width)

    def c64(v: int) -> ir.Value:
        return ir.Constant(I64, v)

    def vec_at(ptr: ir.Value, at: ir.Value) -> ir.Value:
        return bld.bitcast(bld.gep(ptr, [at]), vtp)

    def block(o0: ir.Value) -> None:
        o0 = bld.mul(o0, c64(group))
        pre = bld.block
        head, body, done = (f.append_basic_block() for _ in range(3))
        bld.branch(head)
        bld.position_at_end(head)
        k = bld.phi(I64)
        k.add_incoming(c64(0), pre)
        accs = []
        for _ in range(group):
            phi = bld.phi(vt)
            phi.add_incoming(zero, pre)
            accs.append(phi)
        bld.cbranch(bld.icmp_signed("<", k, c64(K)), body, done)
        bld.position_at_end(body)
        vk = bld.load(vec_at(vec, bld.mul(k, c64(width))), align=8)
        for q, acc in enumerate(accs):
            sv = bld.load(bld.gep(scal, [bld.add(bld.mul(bld.add(o0, c64(q)), c64(K)), k)]))
            splat = bld.shuffle_vector(bld.insert_element(ir.Constant(vt, ir.Undefined), sv, c64(0)),
                                       ir.Constant(vt, ir.Undefined), splat_mask)
            acc.add_incoming(bld.call(fma, [splat, vk, acc]), body)
        k.add_incoming(bld.add(k, c64(1)), body)
        bld.branch(head)
        bld.position_at_end(done)
        for q, acc in enumerate(accs):
            at = bld.mul(bld.add(o0, c64(q)), c64(width))
            cv = bld.load(vec_at(c, at), align=8)
            bld.store(bld.fadd(acc, cv), vec_at(d, at), align=8)
    loop(bld, f, outer // group, block)
    bld.ret_void()
    return f


def helper_fn(g: Any, name: str, ty: ir.FunctionType) -> tuple[ir.Function, bool]:
    """The module's internal helper function `name` of type `ty` (kept out of line: one copy per module, a
    call per warp); True when it was just declared and its body is still to be written."""
    f = g._helpers.get(name)
    if f is not None:
        return f, False
    f = ir.Function(g.module, ty, name=name)
    f.linkage = "internal"
    f.attributes.add("noinline")
    g._helpers[name] = f
    return f, True


def loop(bld: ir.IRBuilder, f: ir.Function, count: int, body: Callable[[ir.Value], None]) -> None:
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
