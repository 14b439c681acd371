# Source of truth for the texture units of the virtual GPU: what tex, tld4, txq and istypep return for a
# texture object (a handle into DeviceMemory.descriptors, see strata/hw/texture.py).
"""Texture instructions: tex (1d, 2d, 3d, a1d, a2d, cube, acube; .level and .grad), tld4, txq, istypep.

The sampler follows the CUDA programming guide's appendix "Texture Fetching":

- Coordinates: unnormalized floats address texels directly; with normalized coordinates `x` becomes
  `x * N` along an axis of N texels. Integer (`.s32`) coordinates are texel indices, never filtered.
- Point filtering reads texel `floor(x)`.
- Linear filtering: `xB = x - 0.5`, `i = floor(xB)`, `alpha = frac(xB)` held, as on the hardware, in
  9-bit fixed point with 8 fractional bits (rounded to the nearest multiple of 1/256, so 1.0 is
  representable), then `(1 - alpha) * T[i] + alpha * T[i+1]` per axis, in float32; for 2-D the four
  weights are products of the per-axis ones, taps summed x fastest: T[i,j], T[i+1,j], T[i,j+1], T[i+1,j+1].
- Address modes act on texel indices: wrap (index mod N), mirror (period 2N, reflected), clamp (to
  [0, N-1]), border (the border colour, for every out-of-range tap of a linear filter too). Wrap and
  mirror need normalized coordinates (programming guide); with unnormalized ones they act as clamp.
- Textures over linear memory (tex1Dfetch) return zero for an out-of-range index, whatever the mode.
- Layer indices are clamped to [0, layers - 1]. Cubemap directions pick a face and (s, t) by the
  guide's cubemap table; within the face, addressing is clamp (no seamless filtering across faces).
- Read mode normalized float maps int8/int16 to [-1, 1] (v / 127 or v / 32767, at least -1) and
  uint8/uint16 to [0, 1] (v / 255, v / 65535); element type returns integers as they are.
- Channels a format lacks read as 0, except alpha, which reads as 1 (0 0 0 1).
- tld4.{r,g,b,a} returns one component of the four texels of the bilinear footprint of (x, y), in the
  PTX ISA's order (counter-clockwise from lower left): T[i,j+1], T[i+1,j+1], T[i+1,j], T[i,j].
- No mipmaps: tex.level and tex.grad read level 0 (the LOD and gradients are ignored).
- The optional residency predicate (`{d0, d1, d2, d3}|p`, sparse CUDA arrays' isResident) is always true.

Every texel read is a device-memory access that memcheck checks: a texture over a freed allocation
faults with the usual DeviceFault report (space 'global', access 'texture read'). A handle that is
not a live texture object is a cudaErrorIllegalInstruction fault naming the handle. Texture reads are
not counted in the global-load counters (they go through the texture cache on the hardware).

Example:
    >>> _alpha(np.array([0.3], dtype=np.float32)).tolist()  # 0.3 * 256 = 76.8 -> 77 / 256
    [0.30078125]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from strata.hw.isa.registry import LaneFault, Op, lowers, write
from strata.hw.memory import GLOBAL_BASE, DeviceMemory
from strata.hw.ptx.ir import Instruction, Mem, Pair, Reg, Sink, Vec
from strata.hw.texture import TextureDescriptor

# geometry suffix -> (resource kind, spatial dimensions, layered)
GEOMETRIES: dict[str, tuple[str, int, bool]] = {
    "1d": ("1d", 1, False), "2d": ("2d", 2, False), "3d": ("3d", 3, False),
    "a1d": ("1d_layered", 1, True), "a2d": ("2d_layered", 2, True),
    "cube": ("cube", 3, False), "acube": ("cube_layered", 3, True),
}
_RESULT_TYPES = ("f32", "s32", "u32")
_COMPONENTS = {"r": 0, "g": 1, "b": 2, "a": 3}
_BIG = np.float32(1 << 30)  # coordinates are clipped here before floor() so NaN/inf stay integers
_NORM_DIV = {np.dtype(np.int8): 127.0, np.dtype(np.uint8): 255.0, np.dtype(np.int16): 32767.0,
             np.dtype(np.uint16): 65535.0}


class TextureFault(Exception):
    """A texel access memcheck refused, or a bad handle: `index` is the position among the sampled lanes."""

    def __init__(self, index: int, message: str, cuda_name: str, **fields: Any) -> None:
        super().__init__(message)
        self.index, self.message, self.cuda_name, self.fields = index, message, cuda_name, fields


def _alpha(frac: np.ndarray) -> np.ndarray:
    """A filter weight in the texture unit's 9-bit fixed point (8 fractional bits), as float32."""
    return (np.rint(frac * np.float32(256)) / np.float32(256)).astype(np.float32)


def _address(i: np.ndarray, n: int, mode: str) -> tuple[np.ndarray, np.ndarray | None]:
    """(texel index in range, inside mask or None) for texel indices `i` along an axis of `n` texels."""
    if mode == "wrap":
        return np.mod(i, n), None
    if mode == "mirror":
        m = np.mod(i, 2 * n)
        return np.where(m < n, m, 2 * n - 1 - m), None
    if mode == "clamp":
        return np.clip(i, 0, n - 1), None
    inside = (i >= 0) & (i < n)
    return np.where(inside, i, 0), inside


def _cube(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(face, s, t) of cubemap directions, s and t normalized to [0, 1] (programming guide's table)."""
    ax, ay, az = np.abs(x), np.abs(y), np.abs(z)
    xmaj = (ax >= ay) & (ax >= az)
    ymaj = ~xmaj & (ay >= az)
    zmaj = ~xmaj & ~ymaj
    face = np.where(xmaj, np.where(x >= 0, 0, 1), np.where(ymaj, np.where(y >= 0, 2, 3), np.where(z >= 0, 4, 5)))
    m = np.where(xmaj, ax, np.where(ymaj, ay, az)).astype(np.float32)
    m = np.where(m == 0, np.float32(1), m)
    sc = np.where(xmaj, np.where(x >= 0, -z, z), np.where(ymaj, x, np.where(z >= 0, x, -x)))
    tc = np.where(xmaj | zmaj, -y, np.where(y >= 0, z, -z))
    half = np.float32(0.5)
    s = ((sc / m + np.float32(1)) * half).astype(np.float32)
    t = ((tc / m + np.float32(1)) * half).astype(np.float32)
    return face.astype(np.int64), s, t


def result_is_float(desc: TextureDescriptor) -> bool:
    """Whether fetches return floats (float formats, or normalized-float reads of 8/16-bit integers)."""
    return desc.resource.format.dtype.kind == "f" or desc.read_mode == "normalized_float"


def sample(mem: DeviceMemory, desc: TextureDescriptor, geom: str, coords: list[np.ndarray],
           layer: np.ndarray | None = None, *, integer_coords: bool = False, gather: int | None = None,
           linear_resource: bool = False) -> np.ndarray:
    """The four result components, as raw 32-bit words (k, 4) uint32, of fetching `desc` at `coords`.

    coords: one array per spatial dimension (float32, or int32 texel indices with integer_coords);
    layer: layer indices of a layered geometry; gather: the component tld4 returns (then the four
    words are the footprint's texels). Raises TextureFault for a texel memcheck refuses.
    """
    r = desc.resource
    kind, ndim, layered = GEOMETRIES[geom]
    if r.kind != kind:
        raise TextureFault(0, f"tex.{geom} on a texture whose resource is {r.kind!r}", "cudaErrorIllegalInstruction")
    k = coords[0].size
    slices = np.zeros(k, dtype=np.int64)
    normalized = desc.normalized_coords
    modes = list(desc.address_mode)
    if layered:
        assert layer is not None
        nl = max(r.layers, 1)
        slices = np.clip(layer.astype(np.int64), 0, nl - 1) * (6 if geom == "acube" else 1)
    if geom in ("cube", "acube"):
        face, s, t = _cube(*(c.astype(np.float32) for c in coords[:3]))
        slices = slices + face
        coords, ndim, normalized, modes = [s, t], 2, True, ["clamp", "clamp", "clamp"]
    dims = (r.width, r.height, r.depth)[:ndim]
    if not normalized:  # wrap and mirror are defined on normalized coordinates only
        modes = ["clamp" if m in ("wrap", "mirror") else m for m in modes]
    if linear_resource:
        modes = ["border"] * 3
    linear = not integer_coords and (desc.filter_mode == "linear" or gather is not None)
    base: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    for axis in range(ndim):
        c = coords[axis]
        if integer_coords:
            base.append(c.astype(np.int64))
            continue
        u = np.clip(np.nan_to_num(c.astype(np.float32), nan=0.0), -_BIG, _BIG)
        if normalized:
            u = u * np.float32(dims[axis])
        if linear:
            ub = u - np.float32(0.5)
            fl = np.floor(ub)
            base.append(fl.astype(np.int64))
            weights.append(_alpha(ub - fl))
        else:
            base.append(np.floor(u).astype(np.int64))
    taps = [(0, 0, 0)]
    if linear:
        taps = [(ox, oy, oz) for oz in range(2 if ndim > 2 else 1) for oy in range(2 if ndim > 1 else 1)
                for ox in range(2)]
        if gather is not None:  # tld4's order: lower left, lower right, upper right, upper left
            taps = [(0, 1, 0), (1, 1, 0), (1, 0, 0), (0, 0, 0)]
    values, border = _fetch(mem, desc, base, dims, modes, taps, slices, linear_resource)
    # values: (taps, k, 4) float32 or int64
    if gather is not None:
        out = values[:, :, gather].T  # (k, 4): one component of each footprint texel
    elif linear:
        one = np.float32(1)
        acc = None
        for t_i, offs in enumerate(taps):
            w = None
            for axis in range(ndim):
                wa = weights[axis] if offs[axis] else one - weights[axis]
                w = wa if w is None else (w * wa).astype(np.float32)
            assert w is not None
            term = values[t_i] * w[:, None]
            acc = term if acc is None else acc + term
        assert acc is not None
        out = acc.astype(np.float32)
    else:
        out = values[0]
    if result_is_float(desc):
        return np.ascontiguousarray(out, dtype=np.float32).view(np.uint32)
    signed = r.format.dtype.kind == "i"
    return np.ascontiguousarray(out.astype(np.int32 if signed else np.uint32)).view(np.uint32)


def _fetch(mem: DeviceMemory, desc: TextureDescriptor, base: list[np.ndarray], dims: tuple[int, ...],
           modes: list[str], taps: list[tuple[int, int, int]], slices: np.ndarray,
           linear_resource: bool) -> tuple[np.ndarray, np.ndarray]:
    """Read the taps' texels (memchecked) and convert them: ((taps, k, 4) values, (taps, k) border mask)."""
    r = desc.resource
    fmt = r.format
    tb, ch = fmt.texel_bytes, fmt.channels
    k = base[0].size
    nt = len(taps)
    offset = np.empty((nt, k), dtype=np.int64)
    inside = np.ones((nt, k), dtype=bool)
    strides = (tb, r.pitch, r.slice_pitch)
    for t_i, offs in enumerate(taps):
        off = slices * r.slice_pitch
        for axis, b in enumerate(base):
            idx, ok = _address(b + offs[axis] if offs[axis] else b, dims[axis], modes[axis])
            off = off + idx * strides[axis]
            if ok is not None:
                inside[t_i] &= ok
        offset[t_i] = off
    addr = (offset + (r.address - GLOBAL_BASE)).reshape(-1)
    keep = inside.reshape(-1)
    all_in = bool(keep.all())
    live = addr if all_in else addr[keep]
    if live.size:
        a64 = (live + GLOBAL_BASE).astype(np.uint64)
        bad = mem.check(a64, tb)
        if bad is not None:
            flat = bad.lane if all_in else int(np.flatnonzero(keep)[bad.lane])
            why = bad.kind
            raise TextureFault(
                flat % k, f"Invalid global texture read of size {tb} bytes at address {bad.address:#x}: {why}",
                "cudaErrorMisalignedAddress" if why == "misaligned" else "cudaErrorIllegalAddress",
                address=bad.address, size=tb, access="texture read", space="global", reason=why,
                nearest=bad.nearest)
    isz = fmt.dtype.itemsize
    typed = mem.typed(fmt.dtype)
    idx = (addr if all_in else np.where(keep, addr, 0)) // isz
    raw = typed[idx[:, None] + np.arange(ch)] if ch > 1 else typed[idx][:, None]
    floats = result_is_float(desc)
    if fmt.dtype.kind == "f":
        conv = raw.astype(np.float32)
    elif floats:
        conv = np.maximum(raw.astype(np.float32) / np.float32(_NORM_DIV[np.dtype(fmt.dtype)]), np.float32(-1))
    else:
        conv = raw.astype(np.int64)
    dt = np.float32 if floats else np.int64
    out = np.zeros((nt * k, 4), dtype=dt)
    out[:, 3] = 1
    out[:, :ch] = conv
    if not all_in:
        bc = np.asarray(desc.border_color, dtype=np.float64)
        border: np.ndarray = np.zeros(4, dtype=dt) if linear_resource else \
            bc.astype(np.float32) if floats else np.trunc(bc).astype(np.int64)
        fill = np.zeros(4, dtype=dt)
        fill[3] = 1
        fill[:ch] = border[:ch]
        out[~keep] = fill
    return out.reshape(nt, k, 4), ~inside


# -- lowering -----------------------------------------------------------------------------------------


def _coord_ops(ctx: Any, ins: Instruction, geom: str, ctype: str) -> tuple[int, list[int], int | None]:
    """(handle slot, coordinate slots, layer slot) of `[handle, {coords}]`."""
    if len(ins.operands) < 2 or not isinstance(ins.operands[1], Vec):
        raise ctx.fail(f"{ins.full_opcode} takes {{d0, d1, d2, d3}}, [texture, {{coordinates}}]")
    elems = ins.operands[1].elems
    if len(elems) != 2 or not isinstance(elems[1], Vec | Reg):
        raise ctx.unsupported(f"{ins.full_opcode} with a separate sampler (independent texturing mode)")
    if not isinstance(elems[0], Reg):
        raise ctx.unsupported(f"{ins.full_opcode} on a .texref variable (texture references)")
    handle = ctx.src(elems[0], "u64")
    cs = list(elems[1].elems) if isinstance(elems[1], Vec) else [elems[1]]
    _, ndim, layered = GEOMETRIES[geom]
    need = {1: 1, 2: 2, 3: 4}[ndim] if not layered else {1: 2, 2: 4, 3: 4}[ndim]
    if len(cs) != need:
        raise ctx.fail(f"{ins.full_opcode}: expected {need} coordinates, got {len(cs)}")
    layer = None
    if layered:
        layer = ctx.src(cs.pop(0), "s32")
    coords = [ctx.src(c, ctype) for c in cs[:ndim]]
    return handle, coords, layer


def _dst_ops(ctx: Any, ins: Instruction) -> list[int | None]:
    """Slots of the four destination registers, then the residency predicate's (`{d0..d3}|p`) or None."""
    d = ins.operands[0]
    pred = None
    if isinstance(d, Pair):  # sparse arrays' residency flag: strata's texels are always resident
        pred = ctx.dst(d.second, "pred")
        d = d.first
    if not isinstance(d, Vec) or len(d.elems) != 4:
        raise ctx.fail(f"{ins.full_opcode}: the destination must be a vector of four registers")
    return [None if isinstance(e, Sink) else ctx.dst(e, "u32") for e in d.elems] + [pred]


def _runner(ins: Instruction, geom: str, handle: int, coords: list[int], layer: int | None, dsts: list[int | None],
            integer: bool, gather: int | None) -> Any:
    def run(f: Any, m: Any) -> None:
        chunk, V = f.chunk, f.V
        n = chunk.n
        lanes = None if m is None else np.flatnonzero(m)
        if lanes is not None and lanes.size == 0:
            return

        def take(slot: int) -> np.ndarray:
            v = np.broadcast_to(np.asarray(V[slot]), (n,))
            return v if lanes is None else v[lanes]

        h = take(handle)
        cv = [take(s) for s in coords]
        lv = take(layer) if layer is not None else None
        mem = chunk.mem
        first = h[0]
        groups = [(None, first)] if (h == first).all() else [(h == u, u) for u in np.unique(h)]
        out = np.empty((h.size, 4), dtype=np.uint32)
        for sel, hv in groups:
            try:
                try:
                    desc = mem.descriptors.texture(int(hv))
                except Exception:
                    pos = 0 if sel is None else int(np.flatnonzero(sel)[0])
                    raise TextureFault(pos, f"{ins.full_opcode}: {int(hv):#x} is not a live texture object",
                                       "cudaErrorIllegalInstruction", handle=int(hv)) from None
                c_sel = cv if sel is None else [c[sel] for c in cv]
                l_sel = lv if (lv is None or sel is None) else lv[sel]
                res = sample(mem, desc, geom, c_sel, l_sel, integer_coords=integer, gather=gather,
                             linear_resource=getattr(desc, "linear", False))
            except TextureFault as e:
                pos = e.index if sel is None else int(np.flatnonzero(sel)[e.index])
                lane = pos if lanes is None else int(lanes[pos])
                raise LaneFault(lane, ins, e.message, e.cuda_name, **e.fields) from None
            if sel is None:
                out = res
            else:
                out[sel] = res
        resident = dsts[4]
        if resident is not None:
            write(V[resident], True, m)
        for i, d in enumerate(dsts[:4]):
            if d is None:
                continue
            col = out[:, i]
            if lanes is None:
                write(V[d], col, None)
            else:
                V[d][lanes] = col

    return run


@lowers("tex")
def lower_tex(ins: Instruction, ctx: Any) -> Op:
    """tex{.level,.grad,.base}.geom.v4.{f32,s32,u32}.{f32,s32} d, [t, c]{, lod | dPdx, dPdy}."""
    mods = list(ins.mods)
    if mods and mods[0] in ("level", "grad", "base"):
        mods.pop(0)  # no mipmaps: every LOD reads level 0
    if len(mods) != 4 or mods[0] not in GEOMETRIES or mods[1] != "v4" or mods[2] not in _RESULT_TYPES or \
            mods[3] not in ("f32", "s32"):
        raise ctx.unsupported()
    geom, ctype = mods[0], mods[3]
    if geom in ("cube", "acube") and ctype != "f32":
        raise ctx.fail(f"{ins.full_opcode}: cubemap coordinates must be .f32")
    handle, coords, layer = _coord_ops(ctx, ins, geom, ctype)
    dsts = _dst_ops(ctx, ins)
    return Op(_runner(ins, geom, handle, coords, layer, dsts, ctype == "s32", None), "memory", exact=True)


@lowers("tld4")
def lower_tld4(ins: Instruction, ctx: Any) -> Op:
    """tld4.{r,g,b,a}.{2d,a2d,cube,acube}.v4.{f32,s32,u32}.f32 d, [t, c]."""
    mods = list(ins.mods)
    if len(mods) != 5 or mods[0] not in _COMPONENTS or mods[1] not in ("2d", "a2d") or mods[2] != "v4" or \
            mods[3] not in _RESULT_TYPES or mods[4] != "f32":
        raise ctx.unsupported()
    geom = mods[1]
    handle, coords, layer = _coord_ops(ctx, ins, geom, "f32")
    dsts = _dst_ops(ctx, ins)
    return Op(_runner(ins, geom, handle, coords, layer, dsts, False, _COMPONENTS[mods[0]]), "memory", exact=True)


_ADDR = {"wrap": 0, "clamp": 1, "mirror": 2, "border": 3}  # cudaTextureAddressMode values
_QUERIES = ("width", "height", "depth", "normalized_coords", "filter_mode", "addr_mode_0", "addr_mode_1",
            "addr_mode_2", "array_size", "num_mipmap_levels", "num_samples")


def _query(desc: TextureDescriptor, what: str) -> int:
    r = desc.resource
    if what in ("width", "height", "depth"):
        return int(getattr(r, what))
    if what == "normalized_coords":
        return int(desc.normalized_coords)
    if what == "filter_mode":
        return int(desc.filter_mode == "linear")
    if what.startswith("addr_mode_"):
        return _ADDR[desc.address_mode[int(what[-1])]]
    if what == "array_size":
        return int(r.layers)
    if what == "num_mipmap_levels":
        return 1
    return 0  # num_samples: not a multisample texture


@lowers("txq")
def lower_txq(ins: Instruction, ctx: Any) -> Op:
    """txq{.level}.{width,height,depth,normalized_coords,filter_mode,addr_mode_N,array_size,
    num_mipmap_levels,num_samples}.b32 d, [t]{, lod}."""
    mods = list(ins.mods)
    if mods and mods[0] == "level":
        mods.pop(0)
    if len(mods) != 2 or mods[0] not in _QUERIES or mods[1] != "b32":
        raise ctx.unsupported()
    what = mods[0]
    if len(ins.operands) < 2 or not isinstance(ins.operands[1], Mem) or not isinstance(ins.operands[1].base, Reg):
        raise ctx.fail(f"{ins.full_opcode} takes d, [texture]")
    d = ctx.dst(ins.operands[0], "u32")
    handle = ctx.src(ins.operands[1].base, "u64")

    def run(f: Any, m: Any) -> None:
        n = f.chunk.n
        h = np.broadcast_to(np.asarray(f.V[handle]), (n,))
        lanes = np.arange(n) if m is None else np.flatnonzero(m)
        if lanes.size == 0:
            return
        out = np.zeros(n, dtype=np.uint32)
        for u in np.unique(h[lanes]):
            try:
                desc = f.chunk.mem.descriptors.texture(int(u))
            except Exception:
                lane = int(lanes[np.flatnonzero(h[lanes] == u)[0]])
                raise LaneFault(lane, ins, f"{ins.full_opcode}: {int(u):#x} is not a live texture object",
                                "cudaErrorIllegalInstruction", handle=int(u)) from None
            out[h == u] = _query(desc, what)
        write(f.V[d], out, m)

    return Op(run, "memory", exact=True)


@lowers("istypep")
def lower_istypep(ins: Instruction, ctx: Any) -> Op:
    """istypep.{texref,samplerref,surfref} p, a: whether `a` is a live object of that kind."""
    if len(ins.mods) != 1 or ins.mods[0] not in ("texref", "samplerref", "surfref") or len(ins.operands) != 2:
        raise ctx.unsupported()
    kind = ins.mods[0]
    p = ctx.dst(ins.operands[0], "pred")
    a = ctx.src(ins.operands[1], "u64")

    def run(f: Any, m: Any) -> None:
        n = f.chunk.n
        h = np.broadcast_to(np.asarray(f.V[a]), (n,))
        table = f.chunk.mem.descriptors
        out = np.zeros(n, dtype=bool)
        for u in np.unique(h):
            try:
                if kind == "texref":
                    table.texture(int(u))
                elif kind == "surfref":
                    table.surface(int(u))
                else:
                    continue  # no separate sampler objects in unified texturing mode
            except Exception:
                continue
            out[h == u] = True
        write(f.V[p], out, m)

    return Op(run, "integer", exact=True)
