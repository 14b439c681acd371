# Source of truth for the surface instructions of the virtual GPU (PTX ISA 9.7.10.x): suld.b, sust.b,
# sust.p and suq, on surface objects (a u64 handle naming a SurfaceDescriptor in DeviceMemory.descriptors).
"""Surface instructions: suld.b (unformatted load), sust.b (unformatted store), sust.p (formatted store),
suq (query).

    suld.b.{1d,2d,3d,a1d,a2d}{.cop}{.v2,.v4}.{b8,b16,b32,b64}{.trap,.clamp,.zero}  d, [surf, coords];
    sust.b.{1d,2d,3d,a1d,a2d}{.cop}{.v2,.v4}.{b8,b16,b32,b64}{.trap,.clamp,.zero}  [surf, coords], c;
    sust.p.{1d,2d,3d,a1d,a2d}{.cop}{.v2,.v4}.b32{.trap,.clamp,.zero}  [surf, coords], c;  (x in texels)
    suq.{width,height,depth,array_size}.b32  d, [surf];

Coordinates are .s32. The x coordinate of .b accesses is a byte offset into a row (CUDA C++'s
surf2Dread(s, x, y) takes x in bytes); y is a row, z a depth slice; the array geometries put the
layer first: a1d is {layer, x}, a2d is {layer, x, y, _} (cubemap faces are layers: face + 6 * layer).
3d's fourth coordinate is ignored.

strata sees every resource as `slices` 2-D slices of `height` rows of `width` texels (hw.texture.Resource):
1d uses slice 0 row 0, 2d slice 0, 3d slice z, a1d/a2d slice layer. An access of `size` bytes (the
element size times the vector width) is in range when 0 <= x <= row bytes - size, 0 <= y < height and
0 <= slice < slices. Out of range, the mode decides: .trap faults (cudaErrorIllegalAddress, naming the
coordinates and the surface's extent), .clamp moves each coordinate to the nearest in-range one (x to the
last whole element of the row), .zero loads zeros and drops stores. x must be a multiple of the access
size (the texture unit's alignment rule; cudaErrorMisalignedAddress otherwise, in every mode).

Every texel access is then checked by memcheck against the resource's allocation, like a global
access, so a surface over a freed array faults as a use after free. Counters: surface bytes count
as global loads and stores (the texture units read and write L2 like the load/store units do).

Example:
    >>> _geometry_dims("a2d")
    (3, 'layer', ('x', 'y'))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.errors import CudaError
from strata.hw.isa.registry import DTYPES, LaneFault, Op, lowers, write
from strata.hw.memory import GLOBAL_BASE
from strata.hw.ptx.ir import Imm, Instruction, Reg, Sink, Sym, Vec
from strata.hw.texture import Resource

_GEOMS = ("1d", "2d", "3d", "a1d", "a2d")
_MODES = ("trap", "clamp", "zero")
_CACHE_OPS = ("ca", "cg", "cs", "cv", "wb", "wt")
_ELEMS = ("b8", "b16", "b32", "b64")
_QUERIES = ("width", "height", "depth", "array_size")


def _geometry_dims(geom: str) -> tuple[int, str | None, tuple[str, ...]]:
    """(coordinates the geometry reads, what the first is when it is an array index, spatial axes)."""
    return {
        "1d": (1, None, ("x",)),
        "2d": (2, None, ("x", "y")),
        "3d": (3, None, ("x", "y", "z")),
        "a1d": (2, "layer", ("x",)),
        "a2d": (3, "layer", ("x", "y")),
    }[geom]


def _parse_mods(ins: Instruction, ctx: Any) -> tuple[str, int, str, str]:
    """(geometry, vector width, element type, out-of-range mode) of a suld.b / sust.b."""
    mods = ins.mods
    if not mods or mods[0] not in ("b", "p"):
        raise ctx.fail(f"{ins.full_opcode}: expected {ins.opcode}.b or {ins.opcode}.p")
    if mods[0] == "p" and ins.opcode != "sust":
        raise ctx.unsupported()  # suld.p (formatted loads) is not in current PTX
    geom = vec_s = elem = mode = None
    vec = 1
    for m in mods[1:]:
        if m in _GEOMS and geom is None:
            geom = m
        elif m in ("v2", "v4") and vec_s is None:
            vec_s, vec = m, int(m[1:])
        elif m in _ELEMS and elem is None:
            elem = m
        elif m in _MODES and mode is None:
            mode = m
        elif m in _CACHE_OPS:
            continue  # cache hints: no architectural effect
        else:
            raise ctx.fail(f"{ins.full_opcode}: unexpected modifier .{m}")
    if geom is None or elem is None:
        raise ctx.fail(f"{ins.full_opcode} needs a geometry (.1d/.2d/.3d/.a1d/.a2d) and a type (.b8/.b16/.b32/.b64)")
    if vec * DTYPES[elem].itemsize > 16:
        raise ctx.fail(f"{ins.full_opcode}: a surface access moves at most 16 bytes, not {vec} x {elem}")
    return geom, vec, elem, mode or "trap"


class _Target:
    """The `[surf, coords]` operand: the handle's slot and the slots of (x, y, slice) as .s32."""

    def __init__(self, ins: Instruction, ctx: Any, op: Any, geom: str) -> None:
        if not isinstance(op, Vec) or len(op.elems) != 2:
            raise ctx.fail(f"{ins.full_opcode} takes [surface, coordinates]")
        handle, coords = op.elems
        if isinstance(handle, Sym):
            raise ctx.unsupported(f"{ins.full_opcode} on the .surfref {handle.name} (surface references; use a "
                                  "surface object)")
        if not isinstance(handle, Reg | Imm):
            raise ctx.fail(f"{ins.full_opcode}: the surface must be a .u64 register holding a surface object")
        self.handle = ctx.src(handle, "u64")
        elems = coords.elems if isinstance(coords, Vec) else (coords,)
        need, layered, axes = _geometry_dims(geom)
        want = 4 if need == 3 else need  # 3d and a2d take a 4-vector whose last element is ignored
        if len(elems) != want or any(isinstance(e, Sink) for e in elems[:need]):
            raise ctx.fail(f"{ins.full_opcode}: .{geom} takes {want} coordinate(s), got {len(elems)}")
        slots = [ctx.src(e, "s32") for e in elems[:need]]
        if layered:
            self.slice: int | None = slots.pop(0)
        else:
            self.slice = slots[2] if len(slots) == 3 else None
        self.x = slots[0]
        self.y = slots[1] if len(slots) > 1 else None


def _lanes(f: Any, m: np.ndarray | None, slot: int | None, dtype: Any) -> np.ndarray | None:
    if slot is None:
        return None
    v = np.broadcast_to(np.asarray(f.V[slot], dtype=dtype), (f.chunk.n,))
    return v if m is None else v[m]


def _fault(ins: Instruction, lane: int, message: str, name: str, address: int, size: int, access: str,
           reason: str, nearest: str) -> LaneFault:
    return LaneFault(lane, ins, message, name, address=address, size=size, access=access, space="surface",
                     reason=reason, nearest=nearest)


def _extent(r: Resource) -> str:
    shape = f"{r.width}x{r.height}" + (f"x{r.slices}" if r.slices > 1 else "")
    return f"{r.kind} surface of {shape} texels of {r.format.texel_bytes} bytes ({r.width * r.format.texel_bytes} " \
        "bytes a row)"


def _addresses(f: Any, m: np.ndarray | None, tgt: _Target, size: int, mode: str, ins: Instruction,
               access: str, x_scale: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(selected lanes, their texel byte addresses, in-range mask or None when all are in range).

    Applies the out-of-range mode (.trap raises here) and memcheck."""
    chunk = f.chunk
    sel = np.arange(chunk.n) if m is None else np.flatnonzero(m)
    handles = _lanes(f, m, tgt.handle, np.uint64)
    x = _lanes(f, m, tgt.x, np.int32)
    y = _lanes(f, m, tgt.y, np.int32)
    z = _lanes(f, m, tgt.slice, np.int32)
    assert handles is not None and x is not None
    x = x.astype(np.int64) * x_scale  # sust.p: x counts texels, not bytes
    y = np.zeros_like(x) if y is None else y.astype(np.int64)
    z = np.zeros_like(x) if z is None else z.astype(np.int64)
    addr = np.zeros(sel.size, dtype=np.uint64)
    ok_all = np.ones(sel.size, dtype=bool)
    table = chunk.mem.descriptors
    for h in np.unique(handles).tolist():
        mine = handles == h
        rows: Any = slice(None) if bool(mine.all()) else np.flatnonzero(mine)
        try:
            res = table.surface(int(h)).resource
        except CudaError:
            lane = int(sel[int(np.flatnonzero(mine)[0])])
            raise _fault(ins, lane, f"{ins.full_opcode}: {int(h):#x} is not a live surface object",
                         "cudaErrorIllegalInstruction", 0, size, access, "invalid surface object",
                         "no surface object with that handle") from None
        rx, ry, rz = x[rows], y[rows], z[rows]
        row_bytes = res.width * res.format.texel_bytes
        mis = rx % size != 0
        if mis.any():
            i = int(np.flatnonzero(mis)[0])
            lane = int(sel[rows][i])
            raise _fault(ins, lane, f"{ins.full_opcode}: x = {int(rx[i])} bytes is not a multiple of the {size}-byte "
                         f"access", "cudaErrorMisalignedAddress", 0, size, access, "misaligned", _extent(res))
        ok = (rx >= 0) & (rx <= row_bytes - size) & (ry >= 0) & (ry < res.height) & (rz >= 0) & (rz < res.slices)
        if not ok.all():
            if mode == "trap":
                i = int(np.flatnonzero(~ok)[0])
                lane = int(sel[rows][i])
                where = f"x = {int(rx[i])} bytes, y = {int(ry[i])}, slice/layer = {int(rz[i])}"
                raise _fault(ins, lane, f"Surface {access} out of range with .trap: {where} outside the "
                             f"{_extent(res)}", "cudaErrorIllegalAddress", 0, size, access, "out of range (.trap)",
                             _extent(res))
            if mode == "clamp":
                last = (row_bytes - size) // size * size
                rx = np.clip(rx, 0, max(last, 0))
                ry = np.clip(ry, 0, res.height - 1)
                rz = np.clip(rz, 0, res.slices - 1)
                ok = np.ones_like(ok)
            else:  # zero: those lanes read zeros / store nothing; point them at the first texel for now
                rx, ry, rz = np.where(ok, rx, 0), np.where(ok, ry, 0), np.where(ok, rz, 0)
            if row_bytes < size:  # even the clamped access does not fit the row
                raise _fault(ins, int(sel[0]), f"{ins.full_opcode}: a {size}-byte access does not fit a row of "
                             f"{row_bytes} bytes", "cudaErrorIllegalAddress", res.address, size, access,
                             "out of range", _extent(res))
        addr[rows] = (np.uint64(res.address) + (rz * res.slice_pitch + ry * res.pitch + rx).astype(np.uint64))
        ok_all[rows] = ok
    checked = addr if ok_all.all() else addr[ok_all]
    bad = chunk.mem.check(checked, size) if checked.size else None
    if bad is not None:
        lanes = sel if ok_all.all() else sel[ok_all]
        name = "cudaErrorMisalignedAddress" if bad.kind == "misaligned" else "cudaErrorIllegalAddress"
        raise _fault(ins, int(lanes[bad.lane]), f"Invalid surface {access} of size {size} bytes at address "
                     f"{bad.address:#x}: {bad.kind}", name, bad.address, size, access, bad.kind, bad.nearest)
    return sel, addr, None if ok_all.all() else ok_all


def _count(f: Any, lanes: int, nbytes: int, store: bool) -> None:
    c = f.chunk.launch.counters
    sectors = -(-lanes * nbytes // 32)
    if store:
        c.global_store_bytes += lanes * nbytes
        c.global_store_sectors += sectors
        c.global_store_ideal_sectors += sectors
        c.global_store_requests += -(-lanes // 32)
    else:
        c.global_load_bytes += lanes * nbytes
        c.global_load_sectors += sectors
        c.global_load_ideal_sectors += sectors
        c.global_load_requests += -(-lanes // 32)


@lowers("suld")
def lower_suld(ins: Instruction, ctx: Any) -> Op:
    """suld.b.{geom}{.vec}.{b8..b64}{.mode} d, [surf, coords]: load `vec` elements from a surface."""
    geom, vec, elem, mode = _parse_mods(ins, ctx)
    if len(ins.operands) != 2:
        raise ctx.fail(f"{ins.full_opcode} takes a destination and [surface, coordinates]")
    dst_op = ins.operands[0]
    elems = dst_op.elems if isinstance(dst_op, Vec) else (dst_op,)
    if len(elems) != vec:
        raise ctx.fail(f"{ins.full_opcode} expects {vec} destination register(s), got {len(elems)}")
    dsts = [None if isinstance(e, Sink) else ctx.dst(e, elem) for e in elems]
    tgt = _Target(ins, ctx, ins.operands[1], geom)
    et = DTYPES[elem]
    size = et.itemsize * vec
    cols = np.arange(size)

    def run(f: Any, m: Any) -> None:
        sel, addr, ok = _addresses(f, m, tgt, size, mode, ins, "read")
        if sel.size == 0:
            return
        off = (addr - np.uint64(GLOBAL_BASE)).astype(np.int64)
        data = f.chunk.mem.bytes[off[:, None] + cols[None, :]]
        if ok is not None:
            data[~ok] = 0
        values = np.ascontiguousarray(data).view(et)  # (lanes, vec)
        full = None if m is None else m
        for k, d in enumerate(dsts):
            if d is None:
                continue
            if full is None:
                write(f.V[d], values[:, k], None)
            else:
                f.V[d][sel] = values[:, k]
        _count(f, int(sel.size), size, False)

    return Op(run, "memory", exact=True)


@lowers("sust")
def lower_sust(ins: Instruction, ctx: Any) -> Op:
    """sust.b.{geom}{.vec}.{b8..b64}{.mode} [surf, coords], c: store `vec` elements to a surface;
    sust.p.{geom}{.vec}.b32{.mode}: a formatted store of one texel (see _lower_sust_p)."""
    geom, vec, elem, mode = _parse_mods(ins, ctx)
    if ins.mods[0] == "p":
        return _lower_sust_p(ins, ctx, geom, vec, elem, mode)
    if len(ins.operands) != 2:
        raise ctx.fail(f"{ins.full_opcode} takes [surface, coordinates] and a source")
    src_op = ins.operands[1]
    elems = src_op.elems if isinstance(src_op, Vec) else (src_op,)
    if len(elems) != vec:
        raise ctx.fail(f"{ins.full_opcode} expects {vec} source operand(s), got {len(elems)}")
    srcs = [ctx.src(e, elem) for e in elems]
    tgt = _Target(ins, ctx, ins.operands[0], geom)
    et = DTYPES[elem]
    size = et.itemsize * vec
    cols = np.arange(size)

    def run(f: Any, m: Any) -> None:
        sel, addr, ok = _addresses(f, m, tgt, size, mode, ins, "write")
        if sel.size == 0:
            return
        values = np.empty((sel.size, vec), dtype=et)
        for k, s in enumerate(srcs):
            v = np.broadcast_to(np.asarray(f.V[s]), (f.chunk.n,))
            values[:, k] = v if m is None else v[m]
        raw = values.view(np.uint8).reshape(sel.size, size)
        off = (addr - np.uint64(GLOBAL_BASE)).astype(np.int64)
        if ok is not None:
            raw, off = raw[ok], off[ok]
        # lanes storing to the same texel: the last lane wins (one of the orders the hardware allows)
        f.chunk.mem.bytes[off[:, None] + cols[None, :]] = raw
        _count(f, int(off.size), size, True)

    return Op(run, "memory", exact=True)


def _lower_sust_p(ins: Instruction, ctx: Any, geom: str, vec: int, elem: str, mode: str) -> Op:
    """sust.p: the sources are the texel's R, G, B, A as 32-bit values (.f32 for float formats, .u32 / .s32
    for unsigned / signed ones), converted to the surface's format: floats round to half when the texels
    are half; integers saturate to the component's range (strata's choice where the ISA only says
    "converted"). Source elements beyond the texel's channels are ignored; channels beyond the sources are
    written as 0 (the ISA leaves them unpredictable). x counts texels."""
    if elem != "b32":
        raise ctx.fail(f"{ins.full_opcode}: sust.p stores .b32 values")
    src_op = ins.operands[1] if len(ins.operands) == 2 else None
    elems = src_op.elems if isinstance(src_op, Vec) else (src_op,)
    if src_op is None or len(elems) != vec:
        raise ctx.fail(f"{ins.full_opcode} expects [surface, coordinates] and {vec} source operand(s)")
    srcs = [ctx.src(e, "b32") for e in elems]
    tgt = _Target(ins, ctx, ins.operands[0], geom)

    def run(f: Any, m: Any) -> None:
        n = f.chunk.n
        handles = np.broadcast_to(np.asarray(f.V[tgt.handle], dtype=np.uint64), (n,))
        active = np.ones(n, dtype=bool) if m is None else m
        for h in np.unique(handles[active]).tolist():
            mh = active & (handles == h)
            try:
                fmt = f.chunk.mem.descriptors.surface(int(h)).resource.format
            except CudaError:
                lane = int(np.flatnonzero(mh)[0])
                raise _fault(ins, lane, f"{ins.full_opcode}: {int(h):#x} is not a live surface object",
                             "cudaErrorIllegalInstruction", 0, 4, "write", "invalid surface object",
                             "no surface object with that handle") from None
            size = fmt.texel_bytes
            sel, addr, ok = _addresses(f, mh, tgt, size, mode, ins, "write", x_scale=size)
            if sel.size == 0:
                continue
            texels = np.zeros((sel.size, fmt.channels), dtype=fmt.dtype)
            for c in range(min(vec, fmt.channels)):
                bits = np.broadcast_to(np.asarray(f.V[srcs[c]], dtype=np.uint32), (n,))[sel]
                texels[:, c] = _convert(bits, np.dtype(fmt.dtype))
            raw = texels.view(np.uint8).reshape(sel.size, size)
            off = (addr - np.uint64(GLOBAL_BASE)).astype(np.int64)
            if ok is not None:
                raw, off = raw[ok], off[ok]
            f.chunk.mem.bytes[off[:, None] + np.arange(size)[None, :]] = raw
            _count(f, int(off.size), size, True)

    return Op(run, "memory", exact=True)


def _convert(bits: np.ndarray, dt: np.dtype) -> np.ndarray:
    """32-bit source values (bits) as components of type `dt` (see _lower_sust_p)."""
    if dt.kind == "f":
        return bits.view(np.float32).astype(dt)
    if dt.kind == "u":
        return np.minimum(bits, np.iinfo(dt).max).astype(dt)
    info = np.iinfo(dt)
    return np.clip(bits.view(np.int32), info.min, info.max).astype(dt)


@lowers("suq")
def lower_suq(ins: Instruction, ctx: Any) -> Op:
    """suq.{width,height,depth,array_size}.b32 d, [surf]: the surface's extent in elements."""
    mods = ins.mods
    if len(mods) != 2 or mods[1] != "b32":
        raise ctx.fail(f"{ins.full_opcode}: expected suq.<query>.b32")
    if mods[0] not in _QUERIES:
        raise ctx.unsupported()  # channel_data_type, channel_order, memory_layout: not modeled
    query = mods[0]
    if len(ins.operands) != 2:
        raise ctx.fail(f"{ins.full_opcode} takes a destination and [surface]")
    d = ctx.dst(ins.operands[0], "b32")
    op = ins.operands[1]
    handle = op.elems[0] if isinstance(op, Vec) and len(op.elems) == 1 else getattr(op, "base", None)
    if isinstance(handle, Sym):
        raise ctx.unsupported(f"{ins.full_opcode} on the .surfref {handle.name} (surface references)")
    if not isinstance(handle, Reg):
        raise ctx.fail(f"{ins.full_opcode}: the surface must be a .u64 register holding a surface object")
    hslot = ctx.src(handle, "u64")

    def run(f: Any, m: Any) -> None:
        handles = _lanes(f, m, hslot, np.uint64)
        assert handles is not None
        sel = np.arange(f.chunk.n) if m is None else np.flatnonzero(m)
        out = np.zeros(sel.size, dtype=np.uint32)
        for h in np.unique(handles).tolist():
            try:
                r = f.chunk.mem.descriptors.surface(int(h)).resource
            except CudaError:
                lane = int(sel[int(np.flatnonzero(handles == h)[0])])
                raise _fault(ins, lane, f"{ins.full_opcode}: {int(h):#x} is not a live surface object",
                             "cudaErrorIllegalInstruction", 0, 4, "read", "invalid surface object",
                             "no surface object with that handle") from None
            out[handles == h] = _query(r, query)
        if m is None:
            write(f.V[d], out, None)
        else:
            f.V[d][sel] = out

    return Op(run, "memory", exact=True)


def _query(r: Resource, query: str) -> int:
    if query == "width":
        return r.width
    if query == "height":
        return r.height
    if query == "depth":
        return r.depth if r.kind == "3d" else 1
    return r.slices if r.kind != "3d" else 1  # array_size: layers (cubemap faces count as layers)
