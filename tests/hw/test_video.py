# Tests of the video instructions (strata/hw/isa/video.py): NVRTC kernels using the SIMD intrinsics it
# lowers to vabsdiff4/vabsdiff2 (__vabsdiffu4, __vsadu4, __vsadu2, __vabs4, __vabsss4, __vabsdiffs4,
# __vsads4) against NumPy oracles of the CUDA math API's definitions, and hand-written PTX for every
# scalar and SIMD form (selectors, .sat, secondary ops, merges, masks, .add) against a per-element
# Python transcription of the PTX ISA pseudocode (9.7.18).
"""Video instructions: scalar vop/vshl/vshr/vmad/vset and SIMD vop2/vop4/vset2/vset4."""

from __future__ import annotations

import numpy as np
import ptx_harness
import pytest

from strata.errors import PTXSyntaxError

N = 96
EDGES = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x80FF7F01,
         0x017F80FF, 0x12345678, 0xFEDCBA98, 0x00FF00FF]
_NP = {"u32": np.uint32, "b32": np.uint32}


def _inputs(seed: int, k: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for j in range(k):
        x = rng.integers(0, 2**32, size=N, dtype=np.uint64).astype(np.uint32)
        x[:len(EDGES)] = np.roll(np.array(EDGES, dtype=np.uint32), 5 * j)
        small = rng.integers(0, 40, size=16).astype(np.uint32)  # shift amounts near the limits
        x[len(EDGES):len(EDGES) + 16] = small
        out.append(x)
    return out


def _run(body: str, n_in: int, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    ins = _inputs(seed, n_in)
    (out,) = ptx_harness.run_lanes(body, [("u32", x) for x in ins], [("u32", None)], _NP)
    return ins, out


# -- the oracle: the ISA pseudocode element by element, in Python integers ------------------------------

def _part(w: int, sel: str, signed: bool) -> int:
    if not sel:
        v, bits = w, 32
    else:
        bits = 8 if sel[0] == "b" else 16
        v = (w >> (bits * int(sel[1]))) & ((1 << bits) - 1)
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def _clamp(x: int, bits: int, signed: bool) -> int:
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)
    return min(max(x, lo), hi)


def _primary(op: str, x: int, y: int) -> int:
    return {"vadd": x + y, "vsub": x - y, "vabsdiff": abs(x - y), "vmin": min(x, y), "vmax": max(x, y),
            "vavrg": (x + y + 1) >> 1 if x + y >= 0 else (x + y) >> 1}[op]


def _cmp(cmp: str, x: int, y: int) -> int:
    return int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp])


def scalar_oracle(op: str, dt: str, at: str, bt: str, a: int, b: int, c: int, *, asel: str = "", bsel: str = "",
                  dsel: str = "", sat: bool = False, op2: str = "", mode: str = "", cmp: str = "") -> int:
    ta, tb = _part(a, asel, at == "s32"), _part(b, bsel, bt == "s32")
    if op == "vset":
        tmp = _cmp(cmp, ta, tb)
    elif op in ("vshl", "vshr"):
        tb = min(tb, 32) if mode == "clamp" else tb & 31
        tmp = ta << tb if op == "vshl" else ta >> tb
    else:
        tmp = _primary(op, ta, tb)
    if sat:
        tmp = _clamp(tmp, 8 if dsel[:1] == "b" else 16 if dsel[:1] == "h" else 32, dt == "s32")
    if op2:
        cv = _part(c, "", dt == "s32")
        tmp = {"add": tmp + cv, "min": min(tmp, cv), "max": max(tmp, cv)}[op2]
    elif dsel:
        bits = 8 if dsel[0] == "b" else 16
        pos = bits * int(dsel[1])
        tmp = ((tmp & ((1 << bits) - 1)) << pos) | (c & ~(((1 << bits) - 1) << pos) & 0xFFFFFFFF)
    return tmp & 0xFFFFFFFF


def simd_oracle(op: str, n: int, dt: str, at: str, bt: str, a: int, b: int, c: int, *, asel: str, bsel: str,
                mask: str, sat: bool = False, add: bool = False, cmp: str = "") -> int:
    bits = 32 // n
    both = a | (b << 32)

    def lane(sel: str, i: int, signed: bool) -> int:
        k = int(sel[1:][n - 1 - i])
        v = (both >> (bits * k)) & ((1 << bits) - 1)
        return v - (1 << bits) if signed and v >> (bits - 1) else v

    lanes = {int(x) for x in mask[1:]}
    d = c if add else 0
    for i in range(n):
        x, y = lane(asel, i, at == "s32"), lane(bsel, i, bt == "s32")
        t = _cmp(cmp, x, y) if op == "vset" else _primary(op, x, y)
        if sat:
            t = _clamp(t, bits, dt == "s32")
        if add:
            d += t if i in lanes else 0
        else:
            src = t if i in lanes else (c >> (bits * i))
            d |= (src & ((1 << bits) - 1)) << (bits * i)
    return d & 0xFFFFFFFF


def _check(got: np.ndarray, want: list[int], ins: list[np.ndarray], what: str) -> None:
    w = np.array(want, dtype=np.uint64).astype(np.uint32)
    bad = np.flatnonzero(got != w)
    assert bad.size == 0, f"{what}: " + "; ".join(
        f"lane {i} in {[hex(int(x[i])) for x in ins]}: got {int(got[i]):#x} want {int(w[i]):#x}" for i in bad[:4])


# -- scalar forms ---------------------------------------------------------------------------------------

SCALAR_CASES = [
    # (op, dtype, atype, btype, asel, bsel, dsel, sat, op2)
    ("vadd", "u32", "u32", "u32", "", "", "", False, ""),
    ("vadd", "s32", "u32", "s32", "b0", "h0", "", True, ""),
    ("vsub", "s32", "s32", "u32", "h1", "h1", "", True, ""),
    ("vsub", "u32", "s32", "s32", "", "", "", True, ""),
    ("vabsdiff", "s32", "s32", "s32", "b0", "b2", "h0", True, ""),
    ("vabsdiff", "u32", "u32", "u32", "b3", "b1", "b2", False, ""),
    ("vmin", "s32", "s32", "s32", "", "", "", True, "add"),
    ("vmax", "u32", "s32", "u32", "h0", "b3", "", False, "min"),
    ("vmax", "s32", "s32", "s32", "b1", "h1", "", True, "max"),
    ("vadd", "u32", "s32", "s32", "b2", "b2", "b3", True, ""),
    ("vsub", "s32", "u32", "u32", "h0", "h1", "h1", True, ""),
]


@pytest.mark.parametrize("case", SCALAR_CASES, ids=lambda c: ".".join(x for x in (c[0], *c[1:4], *c[4:7]) if x)
                         + (".sat" if c[7] else "") + (f".{c[8]}" if c[8] else ""))
def test_scalar_video_ops(case: tuple) -> None:
    op, dt, at, bt, asel, bsel, dsel, sat, op2 = case
    mods = f"{op}.{dt}.{at}.{bt}" + (".sat" if sat else "") + (f".{op2}" if op2 else "")
    d = "%o0" + (f".{dsel}" if dsel else "")
    a, b = "%i0" + (f".{asel}" if asel else ""), "%i1" + (f".{bsel}" if bsel else "")
    c = ", %i2" if (op2 or dsel) else ""
    ins, got = _run(f"{mods} {d}, {a}, {b}{c};", 3, seed=len(mods))
    want = [scalar_oracle(op, dt, at, bt, int(x), int(y), int(z), asel=asel, bsel=bsel, dsel=dsel, sat=sat, op2=op2)
            for x, y, z in zip(*ins, strict=True)]
    _check(got, want, ins, mods)


@pytest.mark.parametrize("form", [
    ("vshl", "u32", "u32", "clamp", "", False, ""), ("vshl", "s32", "s32", "clamp", "", True, ""),
    ("vshl", "u32", "s32", "wrap", "", True, ""), ("vshr", "s32", "s32", "clamp", "", False, ""),
    ("vshr", "u32", "u32", "wrap", "h1", False, ""), ("vshr", "s32", "s32", "wrap", "b1", True, "add"),
    ("vshl", "s32", "u32", "clamp", "h0", True, "max"),
])
def test_scalar_shifts(form: tuple) -> None:
    op, dt, at, mode, asel, sat, op2 = form
    mods = f"{op}.{dt}.{at}.u32" + (".sat" if sat else "") + f".{mode}" + (f".{op2}" if op2 else "")
    a = "%i0" + (f".{asel}" if asel else "")
    c = ", %i2" if op2 else ""
    ins, got = _run(f"{mods} %o0, {a}, %i1{c};", 3, seed=7)
    # the shift amount lanes: small values (< 40) in part of the lanes, full-range values elsewhere
    want = [scalar_oracle(op, dt, at, "u32", int(x), int(y), int(z), asel=asel, sat=sat, op2=op2, mode=mode)
            for x, y, z in zip(*ins, strict=True)]
    _check(got, want, ins, mods)


@pytest.mark.parametrize("form", ["vset.u32.s32.lt %o0, %i0, %i1;", "vset.s32.s32.ge.add %o0, %i0.b1, %i1.b0, %i2;",
                                  "vset.u32.u32.ne %o0.b2, %i0.h1, %i1.h0, %i2;",
                                  "vset.s32.u32.eq.max %o0, %i0.b3, %i1.b3, %i2;"])
def test_scalar_vset(form: str) -> None:
    ins, got = _run(form, 3, seed=11)
    head, _, rest = form.partition(" ")
    _, at, bt, cmp, *op2 = head.split(".")
    ops = [o.strip().rstrip(";") for o in rest.split(",")]
    sel = [o.partition(".")[2] for o in ops]
    want = [scalar_oracle("vset", "u32", at, bt, int(x), int(y), int(z), asel=sel[1], bsel=sel[2], dsel=sel[0],
                          op2=op2[0] if op2 else "", cmp=cmp) for x, y, z in zip(*ins, strict=True)]
    _check(got, want, ins, form)


def _vmad_oracle(dt: str, at: str, bt: str, a: int, b: int, c: int, *, asel: str = "", bsel: str = "",
                 aneg: bool = False, bneg: bool = False, cneg: bool = False, po: bool = False, shr: int = 0,
                 sat: bool = False) -> int:
    ta, tb = _part(a, asel, at == "s32"), _part(b, bsel, bt == "s32")
    signed = at == "s32" or bt == "s32" or aneg != bneg or cneg
    prod = -(ta * tb) if aneg != bneg else ta * tb
    cv = c - (1 << 32) if signed and c >> 31 else c
    if cneg:
        cv = -cv if signed else -c
    r = (prod + cv + (1 if po else 0)) >> shr
    if sat:
        r = _clamp(r, 32, signed)
    return r & 0xFFFFFFFF


@pytest.mark.parametrize("form", [
    "vmad.u32.u32.u32 %o0, %i0, %i1, %i2;", "vmad.s32.s32.s32.sat %o0, %i0, %i1, -%i2;",
    "vmad.s32.u32.u32.sat %o0, -%i0, %i1, %i2;", "vmad.u32.u32.u32.shr15 %o0, %i0.h0, %i1.h0, %i2;",
    "vmad.s32.s32.u32.sat.shr7 %o0, %i0.b1, -%i1.h1, %i2;", "vmad.u32.u32.u32.po.sat %o0, %i0, %i1, %i2;",
    "vmad.s32.s32.s32.po.shr7 %o0, %i0.h1, %i1.b2, %i2;",
])
def test_vmad(form: str) -> None:
    ins, got = _run(form, 3, seed=13)
    head, _, rest = form.partition(" ")
    _, dt, at, bt, *flags = head.split(".")
    ops = [o.strip().rstrip(";") for o in rest.split(",")][1:]
    neg = [o.startswith("-") for o in ops]
    sel = [o.lstrip("-").partition(".")[2] for o in ops]
    shr = 7 if "shr7" in flags else 15 if "shr15" in flags else 0
    want = [_vmad_oracle(dt, at, bt, int(x), int(y), int(z), asel=sel[0], bsel=sel[1], aneg=neg[0], bneg=neg[1],
                         cneg=neg[2], po="po" in flags, shr=shr, sat="sat" in flags)
            for x, y, z in zip(*ins, strict=True)]
    _check(got, want, ins, form)


# -- SIMD forms -----------------------------------------------------------------------------------------

SIMD_CASES = [
    # (opcode, dtype, atype, btype, asel, bsel, mask, sat, add, cmp)
    ("vadd4", "u32", "u32", "u32", "", "", "", False, False, ""),
    ("vadd4", "s32", "s32", "s32", "", "", "", True, False, ""),
    ("vsub4", "u32", "u32", "u32", "b0123", "b4444", "b310", True, False, ""),
    ("vavrg4", "s32", "s32", "u32", "", "", "", False, False, ""),
    ("vabsdiff4", "u32", "s32", "s32", "b7531", "b6420", "", False, True, ""),
    ("vmin4", "s32", "u32", "u32", "b0000", "b2222", "b0", False, True, ""),
    ("vmax4", "u32", "s32", "s32", "", "", "b21", True, False, ""),
    ("vadd2", "s32", "s32", "s32", "", "", "", True, False, ""),
    ("vsub2", "u32", "u32", "s32", "h01", "h23", "h1", True, False, ""),
    ("vavrg2", "u32", "u32", "u32", "", "", "", False, False, ""),
    ("vabsdiff2", "u32", "u32", "u32", "", "", "", False, True, ""),
    ("vmin2", "s32", "s32", "s32", "h33", "h00", "", False, False, ""),
    ("vmax2", "u32", "s32", "s32", "", "", "h0", False, True, ""),
    ("vset4", "", "s32", "u32", "", "", "", False, False, "lt"),
    ("vset4", "", "u32", "u32", "b3311", "", "b32", False, True, "ne"),
    ("vset2", "", "s32", "s32", "", "h10", "", False, False, "ge"),
    ("vset2", "", "u32", "s32", "", "", "h1", False, True, "gt"),
]


@pytest.mark.parametrize("case", SIMD_CASES, ids=lambda c: ".".join(x for x in c[:7] if x) + (".sat" if c[7] else "")
                         + (".add" if c[8] else "") + (f".{c[9]}" if c[9] else ""))
def test_simd_video_ops(case: tuple) -> None:
    opcode, dt, at, bt, asel, bsel, mask, sat, add, cmp = case
    n = int(opcode[-1])
    vset = opcode.startswith("vset")
    mods = opcode + (f".{dt}" if dt else "") + f".{at}.{bt}" + (f".{cmp}" if cmp else "") + \
        (".sat" if sat else "") + (".add" if add else "")
    d = "%o0" + (f".{mask}" if mask else "")
    a, b = "%i0" + (f".{asel}" if asel else ""), "%i1" + (f".{bsel}" if bsel else "")
    ins, got = _run(f"{mods} {d}, {a}, {b}, %i2;", 3, seed=n * 31 + len(mods))
    dflt = ("b3210", "b7654") if n == 4 else ("h10", "h32")
    want = [simd_oracle("vset" if vset else opcode[:-1], n, dt or "u32", at, bt, int(x), int(y), int(z),
                        asel=asel or dflt[0], bsel=bsel or dflt[1], mask=mask or dflt[0], sat=sat, add=add, cmp=cmp)
            for x, y, z in zip(*ins, strict=True)]
    _check(got, want, ins, mods)


@pytest.mark.parametrize("bad", [
    "vadd.u32.u32.u32 %o0, %i0.b3210, %i1;",  # a SIMD selector on a scalar op
    "vadd.u32.u32.u32.add %o0, %i0, %i1;",  # a secondary op needs c
    "vadd.u32.u32.u32.add %o0.b0, %i0, %i1, %i2;",  # secondary op and merge together
    "vadd4.u32.u32.u32 %o0, %i0.b01, %i1, %i2;",  # selector of the wrong length
    "vadd2.u32.u32.u32 %o0.h01, %i0, %i1, %i2;",  # mask not in descending order
    "vadd4.u32.u32.u32.sat.add %o0, %i0, %i1, %i2;",  # .sat with .add
    "vmad.s32.s32.s32 %o0, -%i0, %i1, -%i2;",  # product and c both negated
    "vshl.u32.u32.u32 %o0, %i0, %i1;",  # no .clamp/.wrap
    "vadd.f32.u32.u32 %o0, %i0, %i1;",
    "add.u32 %o0, %i0.b1, %i1;",  # selectors belong to video instructions
])
def test_malformed_video_forms_are_rejected(bad: str) -> None:
    with pytest.raises(PTXSyntaxError):
        _run(bad, 3, seed=0)


# -- NVRTC: the SIMD intrinsics it lowers to vabsdiff4 / vabsdiff2 -------------------------------------------

INTRINSICS = r"""
extern "C" __global__ void simd(int n, const unsigned* a, const unsigned* b, unsigned* o) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned x = a[t], y = b[t];
    o[7 * t + 0] = __vabsdiffu4(x, y);
    o[7 * t + 1] = __vsadu4(x, y);
    o[7 * t + 2] = __vsadu2(x, y);
    o[7 * t + 3] = __vabs4(x);
    o[7 * t + 4] = __vabsss4(x);
    o[7 * t + 5] = __vabsdiffs4(x, y);
    o[7 * t + 6] = __vsads4(x, y);
}
"""


def _bytes(x: np.ndarray, signed: bool = False) -> np.ndarray:
    v = x.view(np.uint8).reshape(-1, 4).astype(np.int64)
    return np.where(v >= 128, v - 256, v) if signed else v


def test_nvrtc_simd_intrinsics() -> None:
    """CUDA math API: __vabsdiffu4 per-byte |a-b|; __vsadu4/__vsadu2 sums of unsigned |a-b|; __vabs4 per-byte
    |a| (wrapping -128); __vabsss4 saturating; __vabsdiffs4 per-byte |a-b| of signed bytes; __vsads4 their sum."""
    mod = ptx_harness.compiled(INTRINSICS)
    assert "vabsdiff4" in mod.ptx and "vabsdiff2" in mod.ptx
    a, b, _ = _inputs(17)
    (_, _, out), _ = ptx_harness.launch(mod, "simd", 1, 128, np.int32(N), a, b, np.zeros(7 * N, np.uint32))
    out = out.reshape(N, 7)

    def pack(lanes: np.ndarray) -> np.ndarray:
        return (lanes & 0xFF).astype(np.uint8).reshape(-1).view(np.uint32)

    ua, ub, sa, sb = _bytes(a), _bytes(b), _bytes(a, True), _bytes(b, True)
    ha, hb = a.view(np.uint16).reshape(-1, 2).astype(np.int64), b.view(np.uint16).reshape(-1, 2).astype(np.int64)
    np.testing.assert_array_equal(out[:, 0], pack(np.abs(ua - ub)))
    np.testing.assert_array_equal(out[:, 1], np.abs(ua - ub).sum(axis=1).astype(np.uint32))
    np.testing.assert_array_equal(out[:, 2], np.abs(ha - hb).sum(axis=1).astype(np.uint32))
    np.testing.assert_array_equal(out[:, 3], pack(np.abs(sa)))
    np.testing.assert_array_equal(out[:, 4], pack(np.minimum(np.abs(sa), 127)))
    np.testing.assert_array_equal(out[:, 5], pack(np.abs(sa - sb)))
    np.testing.assert_array_equal(out[:, 6], np.abs(sa - sb).sum(axis=1).astype(np.uint32))
