# Property tests of the integer / bit / comparison PTX family (strata/hw/isa/integer.py) against
# plain-Python references written from the PTX ISA text, run through the real path: hand-written
# PTX kernels loaded with strata.cuda.Module.from_ptx that load operands, apply one op and store.
"""Integer, bit-manipulation and comparison instructions of the virtual GPU.

Every kernel reads its operands from global memory into `%i0, %i1, ...` (one element per lane),
runs the instruction under test, and stores `%o0, %o1, ...`. Outputs are loaded first, so lanes an
instruction does not execute (guards) keep their initial value and that is checked too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import ptx_harness
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import strata.cuda as cuda
from strata.hw.isa.integer import lop3_function

LANES = 64
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_NP: dict[str, Any] = {
    "u16": np.uint16,
    "s16": np.int16,
    "b16": np.uint16,
    "u32": np.uint32,
    "s32": np.int32,
    "b32": np.uint32,
    "u64": np.uint64,
    "s64": np.int64,
    "b64": np.uint64,
    "f32": np.float32,
    "f64": np.float64,
    "f16": np.float16,
    "bf16": np.uint16,
    "f16x2": np.uint32,
    "bf16x2": np.uint32,
    "u16x2": np.uint32,
    "s16x2": np.uint32,
    "pred": np.bool_,
}


def _bits(t: str) -> int:
    return 1 if t == "pred" else np.dtype(_NP[t]).itemsize * 8


# ------------------------------------------------------------------------------------------------
# Harness (ptx_harness)
# ------------------------------------------------------------------------------------------------


def run(body: str, ins: Sequence[tuple[str, Any]], outs: Sequence[tuple[str, Any]]) -> list[np.ndarray]:
    """Run `body` with inputs (type, array) -> outputs (type, initial array or None)."""
    return ptx_harness.run_lanes(body, ins, outs, _NP)


# ------------------------------------------------------------------------------------------------
# Values and references
# ------------------------------------------------------------------------------------------------


def _edges(w: int, signed: bool) -> list[int]:
    m = (1 << w) - 1
    vals = {0, 1, 2, 3, m, m - 1, 1 << (w - 1), (1 << (w - 1)) - 1, (1 << (w - 1)) + 1, 0xFF, 0x100}
    if w > 32:
        vals |= {0xFFFFFFFF, 1 << 32, (1 << 32) + 1}
    vals = {v & m for v in vals}
    return sorted(v - (1 << w) if signed and v >> (w - 1) else v for v in vals)


def ints(t: str) -> st.SearchStrategy[int]:
    w = _bits(t)
    signed = t[0] == "s"
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return st.one_of(
        st.sampled_from(_edges(w, signed)),
        st.integers(lo, hi),
        st.integers(-8, 8).map(lambda v: v if signed else v & ((1 << w) - 1)),
    )


def lanes(t: str, elements: st.SearchStrategy[Any] | None = None) -> st.SearchStrategy[np.ndarray]:
    return arrays(_NP[t], LANES, elements=elements if elements is not None else ints(t))


def wrap(v: int, t: str) -> int:
    """Python int -> the value a register of type t holds (two's complement for signed)."""
    w = _bits(t)
    v &= (1 << w) - 1
    return v - (1 << w) if t[0] == "s" and v >> (w - 1) else v


def ref(fn: Callable[..., int], t: str, *cols: np.ndarray) -> np.ndarray:
    return np.array([wrap(fn(*(int(x) for x in row)), t) for row in zip(*cols)], dtype=_NP[t])


def same(out: np.ndarray, expected: np.ndarray) -> None:
    assert out.dtype == expected.dtype and out.shape == expected.shape
    u = f"u{out.dtype.itemsize}" if out.dtype != np.bool_ else np.bool_
    bad = np.nonzero(out.view(u) != expected.view(u))[0]
    assert bad.size == 0, f"lanes {bad[:8]}: got {out[bad[:8]]} expected {expected[bad[:8]]}"


def sx(v: int, w: int) -> int:
    v &= (1 << w) - 1
    return v - (1 << w) if v >> (w - 1) else v


INT_ARITH = ["u16", "s16", "u32", "s32", "u64", "s64"]


# ------------------------------------------------------------------------------------------------
# add / sub / carries
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", INT_ARITH)
@pytest.mark.parametrize("op", ["add", "sub"])
@SETTINGS
@given(data=st.data())
def test_add_sub(op: str, t: str, data: Any) -> None:
    a, b = data.draw(lanes(t)), data.draw(lanes(t))
    (out,) = run(f"{op}.{t} %o0, %i0, %i1;", [(t, a), (t, b)], [(t, None)])
    same(out, ref((lambda x, y: x + y) if op == "add" else (lambda x, y: x - y), t, a, b))


@pytest.mark.parametrize("op", ["add", "sub"])
@SETTINGS
@given(data=st.data())
def test_add_sub_sat_s32(op: str, data: Any) -> None:
    a, b = data.draw(lanes("s32")), data.draw(lanes("s32"))
    (out,) = run(f"{op}.sat.s32 %o0, %i0, %i1;", [("s32", a), ("s32", b)], [("s32", None)])
    fn = (lambda x, y: x + y) if op == "add" else (lambda x, y: x - y)
    same(out, ref(lambda x, y: max(-(1 << 31), min((1 << 31) - 1, fn(x, y))), "s32", a, b))


@pytest.mark.parametrize("op", ["add", "sub"])
@pytest.mark.parametrize("t", ["u16x2", "s16x2"])
@SETTINGS
@given(data=st.data())
def test_add_sub_packed(op: str, t: str, data: Any) -> None:
    a, b = data.draw(lanes("u32")), data.draw(lanes("u32"))
    (out,) = run(f"{op}.{t} %o0, %i0, %i1;", [("u32", a), ("u32", b)], [("u32", None)])

    def f(x: int, y: int) -> int:
        parts = [(((x >> s) & 0xFFFF) + (1 if op == "add" else -1) * ((y >> s) & 0xFFFF)) & 0xFFFF for s in (0, 16)]
        return parts[0] | parts[1] << 16

    same(out, ref(f, "u32", a, b))


def _limbs(vals: Sequence[int], n: int, w: int) -> list[np.ndarray]:
    return [np.array([(v >> (w * i)) & ((1 << w) - 1) for v in vals], dtype=_NP[f"u{w}"]) for i in range(n)]


@pytest.mark.parametrize("w", [32, 64])
@pytest.mark.parametrize("op", ["add", "sub"])
@SETTINGS
@given(data=st.data())
def test_carry_chain_128bit(w: int, op: str, data: Any) -> None:
    """add.cc/addc.cc/addc (and sub.cc/subc) chains compute exact 128-bit sums/differences."""
    n = 128 // w
    big = st.one_of(
        st.integers(0, (1 << 128) - 1),
        st.sampled_from([0, 1, (1 << 128) - 1, (1 << 64) - 1, 1 << 64, (1 << 96) - 1]),
    )
    xs = data.draw(st.lists(big, min_size=LANES, max_size=LANES))
    ys = data.draw(st.lists(big, min_size=LANES, max_size=LANES))
    t = f"u{w}"
    c = "sub" if op == "sub" else "add"
    lines = [f"{op}.cc.{t} %o0, %i0, %i{n};"]
    lines += [f"{c}c.cc.{t} %o{i}, %i{i}, %i{n + i};" for i in range(1, n - 1)]
    lines += [f"{c}c.{t} %o{n - 1}, %i{n - 1}, %i{2 * n - 1};"]
    ins = [(t, limb) for limb in _limbs(xs, n, w) + _limbs(ys, n, w)]
    outs = run("\n".join(lines), ins, [(t, None)] * n)
    mask = (1 << 128) - 1
    expect = [((x + y) if op == "add" else (x - y)) & mask for x, y in zip(xs, ys)]
    for i, limb in enumerate(_limbs(expect, n, w)):
        same(outs[i], limb)


@SETTINGS
@given(data=st.data())
def test_madc_extended_multiply(data: Any) -> None:
    """The PTX manual's 64x64 -> 128-bit multiply from 32-bit limbs with mad.cc/madc."""
    xs = data.draw(st.lists(st.integers(0, (1 << 64) - 1), min_size=LANES, max_size=LANES))
    ys = data.draw(st.lists(st.integers(0, (1 << 64) - 1), min_size=LANES, max_size=LANES))
    body = """
    mul.lo.u32 %o0, %i0, %i2;
    mul.hi.u32 %o1, %i0, %i2;
    mad.lo.cc.u32 %o1, %i1, %i2, %o1;
    madc.hi.u32 %o2, %i1, %i2, 0;
    mad.lo.cc.u32 %o1, %i0, %i3, %o1;
    madc.hi.cc.u32 %o2, %i0, %i3, %o2;
    addc.u32 %o3, 0, 0;
    mad.lo.cc.u32 %o2, %i1, %i3, %o2;
    madc.hi.u32 %o3, %i1, %i3, %o3;
    """
    x0, x1 = _limbs(xs, 2, 32)
    y0, y1 = _limbs(ys, 2, 32)
    outs = run(body, [("u32", x0), ("u32", x1), ("u32", y0), ("u32", y1)], [("u32", None)] * 4)
    for i, limb in enumerate(_limbs([x * y for x, y in zip(xs, ys)], 4, 32)):
        same(outs[i], limb)


@SETTINGS
@given(data=st.data())
def test_subc_borrow_semantics(data: Any) -> None:
    """subc computes a - (b + CF) with CF the borrow of the previous sub.cc (64-bit values)."""
    a, b, c, d = (data.draw(lanes("u64")) for _ in range(4))
    outs = run(
        "sub.cc.u64 %o0, %i0, %i1;\nsubc.cc.u64 %o1, %i2, %i3;\nsubc.u64 %o2, 0, 0;",
        [("u64", a), ("u64", b), ("u64", c), ("u64", d)],
        [("u64", None)] * 3,
    )
    borrow1 = [int(x) < int(y) for x, y in zip(a, b)]
    same(outs[1], ref(lambda x, y, br: x - y - br, "u64", c, d, np.array(borrow1, dtype=np.uint64)))
    borrow2 = [int(x) < int(y) + br for x, y, br in zip(c, d, borrow1)]
    same(outs[2], ref(lambda br: -br, "u64", np.array(borrow2, dtype=np.uint64)))


# ------------------------------------------------------------------------------------------------
# mul / mad / mul24 / mad24 / sad
# ------------------------------------------------------------------------------------------------


def _product(mode: str, t: str) -> tuple[str, Callable[[int, int], int]]:
    """The result type of mul/mad.{lo,hi,wide}.t and a reference for its product."""
    w = _bits(t)
    rt = f"{t[0]}{2 * w}" if mode == "wide" else t
    return rt, {"lo": lambda x, y: x * y, "hi": lambda x, y: (x * y) >> w, "wide": lambda x, y: x * y}[mode]


@pytest.mark.parametrize("t", INT_ARITH)
@pytest.mark.parametrize("mode", ["lo", "hi", "wide"])
@SETTINGS
@given(data=st.data())
def test_mul(t: str, mode: str, data: Any) -> None:
    if mode == "wide" and t.endswith("64"):
        return
    a, b = data.draw(lanes(t)), data.draw(lanes(t))
    rt, fn = _product(mode, t)
    (out,) = run(f"mul.{mode}.{t} %o0, %i0, %i1;", [(t, a), (t, b)], [(rt, None)])
    same(out, ref(fn, rt, a, b))


@pytest.mark.parametrize("t", INT_ARITH)
@pytest.mark.parametrize("mode", ["lo", "hi", "wide"])
@SETTINGS
@given(data=st.data())
def test_mad(t: str, mode: str, data: Any) -> None:
    if mode == "wide" and t.endswith("64"):
        return
    rt, part = _product(mode, t)
    a, b, c = data.draw(lanes(t)), data.draw(lanes(t)), data.draw(lanes(rt))
    (out,) = run(f"mad.{mode}.{t} %o0, %i0, %i1, %i2;", [(t, a), (t, b), (rt, c)], [(rt, None)])
    same(out, ref(lambda x, y, z: part(x, y) + z, rt, a, b, c))


@SETTINGS
@given(data=st.data())
def test_mad_accumulate_in_place(data: Any) -> None:
    """`mad.lo.s32 d, a, b, d` (the loop accumulator) must read d before overwriting it."""
    a, b, c = data.draw(lanes("s32")), data.draw(lanes("s32")), data.draw(lanes("s32"))
    (out,) = run("mad.lo.s32 %o0, %i0, %i1, %o0;", [("s32", a), ("s32", b)], [("s32", c)])
    same(out, ref(lambda x, y, z: x * y + z, "s32", a, b, c))
    (out,) = run("mad.wide.s32 %o0, %i0, %i1, %o0;", [("s32", a), ("s32", b)], [("s64", c.astype(np.int64))])
    same(out, ref(lambda x, y, z: x * y + z, "s64", a, b, c))


@SETTINGS
@given(data=st.data())
def test_mad_hi_sat_s32(data: Any) -> None:
    a, b, c = (data.draw(lanes("s32")) for _ in range(3))
    (out,) = run("mad.hi.sat.s32 %o0, %i0, %i1, %i2;", [("s32", a), ("s32", b), ("s32", c)], [("s32", None)])
    same(out, ref(lambda x, y, z: max(-(1 << 31), min((1 << 31) - 1, ((x * y) >> 32) + z)), "s32", a, b, c))


@pytest.mark.parametrize("t", ["u32", "s32"])
@pytest.mark.parametrize("mode", ["lo", "hi"])
@SETTINGS
@given(data=st.data())
def test_mul24_mad24(t: str, mode: str, data: Any) -> None:
    a, b, c = (data.draw(lanes(t)) for _ in range(3))
    outs = run(
        f"mul24.{mode}.{t} %o0, %i0, %i1;\nmad24.{mode}.{t} %o1, %i0, %i1, %i2;",
        [(t, a), (t, b), (t, c)],
        [(t, None), (t, None)],
    )

    def part(x: int, y: int) -> int:
        x24, y24 = (sx(x, 24), sx(y, 24)) if t == "s32" else (x & 0xFFFFFF, y & 0xFFFFFF)
        p = x24 * y24
        return p >> 16 if mode == "hi" else p

    same(outs[0], ref(part, t, a, b))
    same(outs[1], ref(lambda x, y, z: wrap(part(x, y), t) + z, t, a, b, c))


@SETTINGS
@given(data=st.data())
def test_mad24_hi_sat(data: Any) -> None:
    a, b, c = (data.draw(lanes("s32")) for _ in range(3))
    (out,) = run("mad24.hi.sat.s32 %o0, %i0, %i1, %i2;", [("s32", a), ("s32", b), ("s32", c)], [("s32", None)])
    same(
        out,
        ref(
            lambda x, y, z: max(-(1 << 31), min((1 << 31) - 1, wrap((sx(x, 24) * sx(y, 24)) >> 16, "s32") + z)),
            "s32",
            a,
            b,
            c,
        ),
    )


@pytest.mark.parametrize("t", INT_ARITH)
@SETTINGS
@given(data=st.data())
def test_sad(t: str, data: Any) -> None:
    a, b, c = (data.draw(lanes(t)) for _ in range(3))
    (out,) = run(f"sad.{t} %o0, %i0, %i1, %i2;", [(t, a), (t, b), (t, c)], [(t, None)])
    same(out, ref(lambda x, y, z: z + abs(x - y), t, a, b, c))


# ------------------------------------------------------------------------------------------------
# div / rem
# ------------------------------------------------------------------------------------------------


def _tdiv(x: int, y: int, t: str, rem: bool) -> int:
    """Truncating division; zero divisor -> all ones (strata's documented choice)."""
    if y == 0:
        return -1
    q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    return x - q * y if rem else q


@pytest.mark.parametrize("t", INT_ARITH)
@SETTINGS
@given(data=st.data())
def test_div_rem(t: str, data: Any) -> None:
    a = data.draw(lanes(t))
    b = data.draw(lanes(t, st.one_of(ints(t), st.just(0), st.sampled_from([1, 2, 3, 7]))))
    outs = run(f"div.{t} %o0, %i0, %i1;\nrem.{t} %o1, %i0, %i1;", [(t, a), (t, b)], [(t, None), (t, None)])
    same(outs[0], ref(lambda x, y: _tdiv(x, y, t, False), t, a, b))
    same(outs[1], ref(lambda x, y: _tdiv(x, y, t, True), t, a, b))


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@pytest.mark.parametrize("divisor", [0, 1, 3, -7, 16, 1 << 31])
def test_div_rem_immediate(t: str, divisor: int) -> None:
    a = np.array(_edges(_bits(t), t[0] == "s") * 4, dtype=_NP[t])
    outs = run(f"div.{t} %o0, %i0, {divisor};\nrem.{t} %o1, %i0, {divisor};", [(t, a)], [(t, None), (t, None)])
    dv = wrap(divisor, t)
    same(outs[0], ref(lambda x: _tdiv(x, dv, t, False), t, a))
    same(outs[1], ref(lambda x: _tdiv(x, dv, t, True), t, a))


# ------------------------------------------------------------------------------------------------
# abs / neg / min / max (integer)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", ["s16", "s32", "s64"])
@SETTINGS
@given(data=st.data())
def test_abs_neg_int(t: str, data: Any) -> None:
    a = data.draw(lanes(t))
    outs = run(f"abs.{t} %o0, %i0;\nneg.{t} %o1, %i0;", [(t, a)], [(t, None), (t, None)])
    same(outs[0], ref(abs, t, a))  # |INT_MIN| wraps to INT_MIN
    same(outs[1], ref(lambda x: -x, t, a))


@pytest.mark.parametrize("t", INT_ARITH)
@SETTINGS
@given(data=st.data())
def test_min_max_int(t: str, data: Any) -> None:
    a, b = data.draw(lanes(t)), data.draw(lanes(t))
    outs = run(f"min.{t} %o0, %i0, %i1;\nmax.{t} %o1, %i0, %i1;", [(t, a), (t, b)], [(t, None), (t, None)])
    same(outs[0], ref(min, t, a, b))
    same(outs[1], ref(max, t, a, b))


@SETTINGS
@given(data=st.data())
def test_min_max_relu(data: Any) -> None:
    a, b = data.draw(lanes("s32")), data.draw(lanes("s32"))
    outs = run(
        "min.relu.s32 %o0, %i0, %i1;\nmax.relu.s32 %o1, %i0, %i1;",
        [("s32", a), ("s32", b)],
        [("s32", None), ("s32", None)],
    )
    same(outs[0], ref(lambda x, y: max(0, min(x, y)), "s32", a, b))
    same(outs[1], ref(lambda x, y: max(0, max(x, y)), "s32", a, b))


@pytest.mark.parametrize("t", ["u16x2", "s16x2"])
@pytest.mark.parametrize("op", ["min", "max", "min.relu", "max.relu"])
@SETTINGS
@given(data=st.data())
def test_min_max_packed(t: str, op: str, data: Any) -> None:
    if "relu" in op and t == "u16x2":
        return
    a, b = data.draw(lanes("u32")), data.draw(lanes("u32"))
    (out,) = run(f"{op}.{t} %o0, %i0, %i1;", [("u32", a), ("u32", b)], [("u32", None)])
    pick = min if op.startswith("min") else max

    def f(x: int, y: int) -> int:
        r = 0
        for s in (0, 16):
            xv, yv = (x >> s) & 0xFFFF, (y >> s) & 0xFFFF
            if t == "s16x2":
                xv, yv = sx(xv, 16), sx(yv, 16)
            v = pick(xv, yv)
            if "relu" in op:
                v = max(v, 0)
            r |= (v & 0xFFFF) << s
        return r

    same(out, ref(f, "u32", a, b))


# ------------------------------------------------------------------------------------------------
# Bit counting, bit fields
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", ["b32", "b64"])
@SETTINGS
@given(data=st.data())
def test_popc_clz_brev(t: str, data: Any) -> None:
    a = data.draw(lanes(t))
    w = _bits(t)
    outs = run(
        f"popc.{t} %o0, %i0;\nclz.{t} %o1, %i0;\nbrev.{t} %o2, %i0;",
        [(t, a)],
        [("u32", None), ("u32", None), (t, None)],
    )
    same(outs[0], ref(lambda x: bin(x).count("1"), "u32", a))
    same(outs[1], ref(lambda x: w - x.bit_length(), "u32", a))
    same(outs[2], ref(lambda x: int(f"{x:0{w}b}"[::-1], 2), t, a))


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@SETTINGS
@given(data=st.data())
def test_bfind(t: str, data: Any) -> None:
    a = data.draw(lanes(t))
    w = _bits(t)
    outs = run(f"bfind.{t} %o0, %i0;\nbfind.shiftamt.{t} %o1, %i0;", [(t, a)], [("u32", None), ("u32", None)])

    def find(x: int, shiftamt: bool) -> int:
        if t[0] == "s" and x < 0:
            x = ~x
        x &= (1 << w) - 1
        for i in range(w - 1, -1, -1):
            if x >> i & 1:
                return w - 1 - i if shiftamt else i
        return 0xFFFFFFFF

    same(outs[0], ref(lambda x: find(x, False), "u32", a))
    same(outs[1], ref(lambda x: find(x, True), "u32", a))


field_bounds = st.one_of(st.integers(0, 70), st.integers(0, 0xFFFFFFFF), st.sampled_from([0, 255, 256, 0x1FF]))


@pytest.mark.parametrize("t", ["u32", "s32", "u64", "s64"])
@SETTINGS
@given(data=st.data())
def test_bfe(t: str, data: Any) -> None:
    a = data.draw(lanes(t))
    b, c = data.draw(lanes("u32", field_bounds)), data.draw(lanes("u32", field_bounds))
    (out,) = run(f"bfe.{t} %o0, %i0, %i1, %i2;", [(t, a), ("u32", b), ("u32", c)], [(t, None)])
    w = _bits(t)

    def bfe(x: int, pos: int, ln: int) -> int:
        x &= (1 << w) - 1
        msb, pos, ln = w - 1, pos & 0xFF, ln & 0xFF
        sbit = 0 if t[0] == "u" or ln == 0 else (x >> min(pos + ln - 1, msb)) & 1
        return sum(((x >> (pos + i)) & 1 if i < ln and pos + i <= msb else sbit) << i for i in range(w))

    same(out, ref(bfe, t, a, b, c))


@pytest.mark.parametrize("t", ["b32", "b64"])
@SETTINGS
@given(data=st.data())
def test_bfi(t: str, data: Any) -> None:
    a, b = data.draw(lanes(t)), data.draw(lanes(t))
    c, d = data.draw(lanes("u32", field_bounds)), data.draw(lanes("u32", field_bounds))
    (out,) = run(f"bfi.{t} %o0, %i0, %i1, %i2, %i3;", [(t, a), (t, b), ("u32", c), ("u32", d)], [(t, None)])
    w = _bits(t)

    def bfi(x: int, y: int, pos: int, ln: int) -> int:
        pos, ln = pos & 0xFF, ln & 0xFF
        r = y
        for i in range(ln):
            if pos + i > w - 1:
                break
            r = (r & ~(1 << (pos + i))) | (((x >> i) & 1) << (pos + i))
        return r

    same(out, ref(bfi, t, a, b, c, d))


@pytest.mark.parametrize("mode", ["clamp", "wrap"])
@SETTINGS
@given(data=st.data())
def test_bmsk_szext(mode: str, data: Any) -> None:
    a, b = data.draw(lanes("u32", field_bounds)), data.draw(lanes("u32", field_bounds))
    x = data.draw(lanes("u32"))
    outs = run(
        f"bmsk.{mode}.b32 %o0, %i0, %i1;\nszext.{mode}.s32 %o1, %i2, %i1;\nszext.{mode}.u32 %o2, %i2, %i1;",
        [("u32", a), ("u32", b), ("u32", x)],
        [("u32", None)] * 3,
    )
    ones = 0xFFFFFFFF

    def bmsk(pa: int, wb: int) -> int:
        a1, b1 = pa & 31, wb & 31
        mask0 = (ones << a1) & ones
        s = a1 + b1
        mask1 = (ones << s) & ones if s < 32 else 0
        over = s >= 32
        if mode == "clamp":
            if pa >= 32:
                mask0, over = 0, True
            over = over or wb >= 32
        if over:
            mask1 = 0
        elif b1 == 0:
            mask1 = ones
        return mask0 & ~mask1 & ones

    def szext(v: int, n: int, signed: bool) -> int:
        b1 = n & 31
        too_large = n >= 32 and mode == "clamp"
        mask = 0 if too_large else (ones << b1) & ones
        sbit = 0 if (b1 == 0 or too_large or not signed) else (v >> ((b1 - 1) & 31)) & 1
        return (v & ~mask & ones) | (mask if sbit else 0)

    same(outs[0], ref(bmsk, "u32", a, b))
    same(outs[1], ref(lambda v, n: szext(v, n, True), "u32", x, b))
    same(outs[2], ref(lambda v, n: szext(v, n, False), "u32", x, b))


@SETTINGS
@given(data=st.data())
def test_fns(data: Any) -> None:
    mask = data.draw(lanes("u32"))
    base = data.draw(lanes("u32", st.integers(0, 31)))
    off = data.draw(lanes("s32", st.integers(-34, 34)))
    (out,) = run("fns.b32 %o0, %i0, %i1, %i2;", [("u32", mask), ("u32", base), ("s32", off)], [("u32", None)])

    def fns(mk: int, b: int, o: int) -> int:
        if o == 0:
            return b if mk >> b & 1 else 0xFFFFFFFF
        pos, count, inc = b, abs(o) - 1, 1 if o > 0 else -1
        while 0 <= pos < 32:
            if mk >> pos & 1:
                if count == 0:
                    return pos
                count -= 1
            pos += inc
        return 0xFFFFFFFF

    same(out, ref(fns, "u32", mask, base, off))
    examples = run(
        "fns.b32 %o0, %i0, %i1, %i2;",
        [("u32", np.full(4, 0xAAAAAAAA)), ("u32", [3, 3, 2, 2]), ("s32", [1, -1, 1, -1])],
        [("u32", None)],
    )[0]
    assert examples.tolist() == [3, 3, 3, 1]  # the PTX manual's examples


@pytest.mark.parametrize("at", ["u32", "s32"])
@pytest.mark.parametrize("bt", ["u32", "s32"])
@SETTINGS
@given(data=st.data())
def test_dp4a_dp2a(at: str, bt: str, data: Any) -> None:
    ct = "u32" if at == bt == "u32" else "s32"
    a, b, c = data.draw(lanes("u32")), data.draw(lanes("u32")), data.draw(lanes(ct))
    outs = run(
        f"dp4a.{at}.{bt} %o0, %i0, %i1, %i2;\ndp2a.lo.{at}.{bt} %o1, %i0, %i1, %i2;\n"
        f"dp2a.hi.{at}.{bt} %o2, %i0, %i1, %i2;",
        [("u32", a), ("u32", b), (ct, c)],
        [(ct, None)] * 3,
    )

    def parts(x: int, n: int, signed: bool) -> list[int]:
        w = 32 // n
        return [sx(x >> (w * i), w) if signed else (x >> (w * i)) & ((1 << w) - 1) for i in range(n)]

    same(
        outs[0],
        ref(
            lambda x, y, z: z + sum(p * q for p, q in zip(parts(x, 4, at == "s32"), parts(y, 4, bt == "s32"))),
            ct,
            a,
            b,
            c,
        ),
    )
    for k, first in ((1, 0), (2, 2)):
        same(
            outs[k],
            ref(
                lambda x, y, z, f=first: (
                    z + sum(p * q for p, q in zip(parts(x, 2, at == "s32"), parts(y, 4, bt == "s32")[f : f + 2]))
                ),
                ct,
                a,
                b,
                c,
            ),
        )


# ------------------------------------------------------------------------------------------------
# prmt, lop3
# ------------------------------------------------------------------------------------------------

# Byte selected for output bytes (b0, b1, b2, b3), per mode and c[1:0] (the PTX manual's table).
PRMT_TABLE = {
    "f4e": [(0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4, 5, 6)],
    "b4e": [(0, 7, 6, 5), (1, 0, 7, 6), (2, 1, 0, 7), (3, 2, 1, 0)],
    "rc8": [(0, 0, 0, 0), (1, 1, 1, 1), (2, 2, 2, 2), (3, 3, 3, 3)],
    "ecl": [(0, 1, 2, 3), (1, 1, 2, 3), (2, 2, 2, 3), (3, 3, 3, 3)],
    "ecr": [(0, 0, 0, 0), (0, 1, 1, 1), (0, 1, 2, 2), (0, 1, 2, 3)],
    "rc16": [(0, 1, 0, 1), (2, 3, 2, 3), (0, 1, 0, 1), (2, 3, 2, 3)],
}


def prmt_ref(mode: str | None, a: int, b: int, c: int) -> int:
    src = [(a | b << 32) >> (8 * i) & 0xFF for i in range(8)]
    r = 0
    for i in range(4):
        if mode is None:
            ctl = (c >> (4 * i)) & 0xF
            byte = src[ctl & 7]
            if ctl & 8:
                byte = 0xFF if byte & 0x80 else 0
        else:
            byte = src[PRMT_TABLE[mode][c & 3][i]]
        r |= byte << (8 * i)
    return r


@pytest.mark.parametrize("mode", [None, "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])
@SETTINGS
@given(data=st.data())
def test_prmt(mode: str | None, data: Any) -> None:
    a, b, c = data.draw(lanes("u32")), data.draw(lanes("u32")), data.draw(lanes("u32"))
    imm = data.draw(st.integers(0, 0xFFFF))
    m = f".{mode}" if mode else ""
    outs = run(
        f"prmt.b32{m} %o0, %i0, %i1, %i2;\nprmt.b32{m} %o1, %i0, %i1, {imm};",
        [("u32", a), ("u32", b), ("u32", c)],
        [("u32", None), ("u32", None)],
    )
    same(outs[0], ref(lambda x, y, z: prmt_ref(mode, x, y, z), "u32", a, b, c))
    same(outs[1], ref(lambda x, y: prmt_ref(mode, x, y, imm), "u32", a, b))


def lop3_ref(lut: int, a: int, b: int, c: int) -> int:
    return sum(((lut >> ((a >> i & 1) << 2 | (b >> i & 1) << 1 | (c >> i & 1))) & 1) << i for i in range(32))


def test_lop3_function_all_luts() -> None:
    """Every one of the 256 immLut functions, bit by bit against the truth table."""
    rng = np.random.default_rng(7)
    a, b, c = (rng.integers(0, 1 << 32, 48, dtype=np.uint64).astype(np.uint32) for _ in range(3))
    f = 0xFFFFFFFF
    a[:8], b[:8], c[:8] = [0, 0, 0, 0, f, f, f, f], [0, 0, f, f] * 2, [0, f] * 4
    for lut in range(256):
        got = np.asarray(lop3_function(lut)(a, b, c), dtype=np.uint32)
        assert got.dtype == np.uint32
        same(got, ref(lambda x, y, z, lut=lut: lop3_ref(lut, x, y, z), "u32", a, b, c))
    assert lop3_function(0xF0 & 0xCC & 0xAA)(np.uint32(7), np.uint32(3), np.uint32(1)) == 1


@SETTINGS
@given(data=st.data())
def test_lop3_kernel_and_predicate_forms(data: Any) -> None:
    a, b, c = (data.draw(lanes("u32", st.one_of(st.integers(0, 3), ints("u32")))) for _ in range(3))
    q = data.draw(lanes("pred", st.booleans()))
    lut = data.draw(st.integers(0, 255))
    outs = run(
        f"lop3.b32 %o0, %i0, %i1, %i2, {lut};\nlop3.or.b32 %o1|%o2, %i0, %i1, %i2, {lut}, %i3;\n"
        f"lop3.and.b32 _|%o3, %i0, %i1, %i2, {lut}, !%i3;",
        [("u32", a), ("u32", b), ("u32", c), ("pred", q)],
        [("u32", None), ("u32", None), ("pred", None), ("pred", None)],
    )
    expect = ref(lambda x, y, z: lop3_ref(lut, x, y, z), "u32", a, b, c)
    same(outs[0], expect)
    same(outs[1], expect)
    same(outs[2], (expect != 0) | q)
    same(outs[3], (expect != 0) & ~q)


# ------------------------------------------------------------------------------------------------
# Logic and shifts
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", ["b16", "b32", "b64"])
@SETTINGS
@given(data=st.data())
def test_logic(t: str, data: Any) -> None:
    a, b = data.draw(lanes(t)), data.draw(lanes(t))
    outs = run(
        f"and.{t} %o0, %i0, %i1;\nor.{t} %o1, %i0, %i1;\nxor.{t} %o2, %i0, %i1;\nnot.{t} %o3, %i0;\ncnot.{t} %o4, %i0;",
        [(t, a), (t, b)],
        [(t, None)] * 5,
    )
    same(outs[0], a & b)
    same(outs[1], a | b)
    same(outs[2], a ^ b)
    same(outs[3], ~a)
    same(outs[4], (a == 0).astype(a.dtype))


@SETTINGS
@given(data=st.data())
def test_logic_pred(data: Any) -> None:
    a, b = data.draw(lanes("pred", st.booleans())), data.draw(lanes("pred", st.booleans()))
    outs = run(
        "and.pred %o0, %i0, %i1;\nor.pred %o1, %i0, !%i1;\nxor.pred %o2, %i0, %i1;\nnot.pred %o3, %i0;",
        [("pred", a), ("pred", b)],
        [("pred", None)] * 4,
    )
    same(outs[0], a & b)
    same(outs[1], a | ~b)
    same(outs[2], a ^ b)
    same(outs[3], ~a)


shift_amounts = st.one_of(
    st.integers(0, 70),
    st.integers(0, 0xFFFFFFFF),
    st.sampled_from([15, 16, 31, 32, 63, 64, 1 << 31, 0xFFFFFFFF]),
)


def _shift_ref(op: str, t: str) -> Callable[[int, int], int]:
    w = _bits(t)

    def f(x: int, n: int) -> int:
        if op == "shl":
            return x << min(n, w)
        if t[0] == "s":
            return x >> min(n, w)  # Python >> on a negative int fills with the sign
        return (x & ((1 << w) - 1)) >> min(n, w)

    return f


@pytest.mark.parametrize("t", ["b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"])
@pytest.mark.parametrize("op", ["shl", "shr"])
@SETTINGS
@given(data=st.data())
def test_shift_clamps(t: str, op: str, data: Any) -> None:
    if op == "shl" and t[0] != "b":
        return
    a = data.draw(lanes(t))
    n = data.draw(lanes("u32", shift_amounts))
    imm = data.draw(st.sampled_from([0, 1, 5, _bits(t) - 1, _bits(t), _bits(t) + 3, 1 << 31]))
    outs = run(f"{op}.{t} %o0, %i0, %i1;\n{op}.{t} %o1, %i0, {imm};", [(t, a), ("u32", n)], [(t, None)] * 2)
    same(outs[0], ref(_shift_ref(op, t), t, a, n))
    same(outs[1], ref(lambda x: _shift_ref(op, t)(x, imm), t, a))


@pytest.mark.parametrize("d", ["l", "r"])
@pytest.mark.parametrize("mode", ["clamp", "wrap"])
@SETTINGS
@given(data=st.data())
def test_shf(d: str, mode: str, data: Any) -> None:
    a, b = data.draw(lanes("u32")), data.draw(lanes("u32"))
    c = data.draw(lanes("u32", shift_amounts))
    (out,) = run(f"shf.{d}.{mode}.b32 %o0, %i0, %i1, %i2;", [("u32", a), ("u32", b), ("u32", c)], [("u32", None)])

    def shf(x: int, y: int, n: int) -> int:
        n = min(n, 32) if mode == "clamp" else n & 31
        both = y << 32 | x
        return (both << n) >> 32 if d == "l" else both >> n

    same(out, ref(shf, "u32", a, b, c))


# ------------------------------------------------------------------------------------------------
# setp / set / selp / slct / testp
# ------------------------------------------------------------------------------------------------

INT_CMPS = {
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "lt": lambda x, y: x < y,
    "le": lambda x, y: x <= y,
    "gt": lambda x, y: x > y,
    "ge": lambda x, y: x >= y,
}
UNSIGNED_CMPS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}
BOOL = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}


@pytest.mark.parametrize("t", ["u16", "s16", "u32", "s32", "u64", "s64", "b32", "b64"])
@pytest.mark.parametrize("cmp", [*INT_CMPS, *UNSIGNED_CMPS])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_setp_int(t: str, cmp: str, data: Any) -> None:
    if t[0] == "b" and cmp not in ("eq", "ne"):
        return
    a = data.draw(lanes(t))
    b = data.draw(st.one_of(lanes(t), st.just(a.copy())))
    (out,) = run(f"setp.{cmp}.{t} %o0, %i0, %i1;", [(t, a), (t, b)], [("pred", None)])
    w = _bits(t)
    if cmp in UNSIGNED_CMPS:
        fn = INT_CMPS[UNSIGNED_CMPS[cmp]]
        expect = [fn(int(x) & ((1 << w) - 1), int(y) & ((1 << w) - 1)) for x, y in zip(a, b)]
    else:
        expect = [INT_CMPS[cmp](int(x), int(y)) for x, y in zip(a, b)]
    same(out, np.array(expect))


@pytest.mark.parametrize("boolop", ["and", "or", "xor"])
@pytest.mark.parametrize("neg", ["", "!"])
@SETTINGS
@given(data=st.data())
def test_setp_boolop_pair(boolop: str, neg: str, data: Any) -> None:
    a, b = data.draw(lanes("s32")), data.draw(lanes("s32"))
    c = data.draw(lanes("pred", st.booleans()))
    outs = run(
        f"setp.lt.{boolop}.s32 %o0|%o1, %i0, %i1, {neg}%i2;\nsetp.ge.{boolop}.s32 _|%o2, %i0, %i1, {neg}%i2;",
        [("s32", a), ("s32", b), ("pred", c)],
        [("pred", None)] * 3,
    )
    t = a < b
    cv = ~c if neg else c
    same(outs[0], BOOL[boolop](t, cv))
    same(outs[1], BOOL[boolop](~t, cv))
    same(outs[2], BOOL[boolop](t, cv))  # the complement of ge is lt


FLOAT_CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def fcmp_ref(cmp: str, x: float, y: float) -> bool:
    un = math.isnan(x) or math.isnan(y)
    if cmp == "num":
        return not un
    if cmp == "nan":
        return un
    base = {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp.rstrip("u")]
    return (un or base) if cmp.endswith("u") else (not un and base)


F32_EDGES = [
    0x00000000,
    0x80000000,
    0x3F800000,
    0xBF800000,
    0x7F800000,
    0xFF800000,
    0x7FC00000,
    0xFFC00000,
    0x7F800001,
    0x00000001,
    0x80000001,
    0x007FFFFF,
    0x00800000,
    0x7F7FFFFF,
    0xFF7FFFFF,
    0x7FFFFFFF,
]
F64_EDGES = [
    0,
    1 << 63,
    0x3FF0000000000000,
    0xBFF0000000000000,
    0x7FF0000000000000,
    0xFFF0000000000000,
    0x7FF8000000000000,
    0xFFF8000000000001,
    1,
    (1 << 63) | 1,
    0x000FFFFFFFFFFFFF,
    0x0010000000000000,
]
F16_EDGES = [
    0x0000,
    0x8000,
    0x3C00,
    0xBC00,
    0x7C00,
    0xFC00,
    0x7E00,
    0xFE01,
    0x0001,
    0x8001,
    0x03FF,
    0x0400,
    0x7BFF,
    0x7FFF,
]
BF16_EDGES = [
    0x0000,
    0x8000,
    0x3F80,
    0xBF80,
    0x7F80,
    0xFF80,
    0x7FC0,
    0xFFC1,
    0x0001,
    0x8001,
    0x007F,
    0x0080,
    0x7F7F,
    0x7FFF,
]


def fbits(w: int, edges: list[int], pool: list[int] | None = None) -> st.SearchStrategy[np.ndarray]:
    pool_s = st.sampled_from(pool) if pool else st.nothing()
    el = st.one_of(st.sampled_from(edges), st.integers(0, (1 << w) - 1), pool_s)
    return arrays(_NP[f"u{w}"], LANES, elements=el)


def to_float(bits: int, fmt: str) -> float:
    if fmt == "f32":
        return float(np.array([bits], np.uint32).view(np.float32)[0])
    if fmt == "f64":
        return float(np.array([bits], np.uint64).view(np.float64)[0])
    if fmt == "f16":
        return float(np.array([bits], np.uint16).view(np.float16)[0])
    return float(np.array([bits << 16], np.uint32).view(np.float32)[0])  # bf16


_FMT = {
    "f32": (32, 0x80000000, 0x7F800000, 0x7FFFFFFF, F32_EDGES),
    "f64": (64, 1 << 63, 0x7FF0000000000000, (1 << 63) - 1, F64_EDGES),
    "f16": (16, 0x8000, 0x7C00, 0x7FFF, F16_EDGES),
    "bf16": (16, 0x8000, 0x7F80, 0x7FFF, BF16_EDGES),
}


def flush(bits: int, fmt: str) -> int:
    _, sign, exp, _, _ = _FMT[fmt]
    return bits & sign if bits & exp == 0 else bits


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("cmp", FLOAT_CMPS)
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_setp_float_unordered(t: str, cmp: str, data: Any) -> None:
    w = _bits(t)
    edges = _FMT[t][4]
    ab = data.draw(fbits(w, edges))
    bb = data.draw(st.one_of(fbits(w, edges, [int(x) for x in ab[:8]]), st.just(ab.copy())))
    ftz = data.draw(st.booleans()) if t == "f32" else False
    mod = ".ftz" if ftz else ""
    a, b = ab.view(_NP[t]), bb.view(_NP[t])
    outs = run(
        f"setp.{cmp}{mod}.{t} %o0|%o1, %i0, %i1;\nsetp.{cmp}{mod}.{t} %o2, %i0, %i1;",
        [(t, a), (t, b)],
        [("pred", None)] * 3,
    )
    fl = (lambda v: flush(v, t)) if ftz else (lambda v: v)
    expect = np.array([fcmp_ref(cmp, to_float(fl(int(x)), t), to_float(fl(int(y)), t)) for x, y in zip(ab, bb)])
    same(outs[0], expect)
    same(outs[1], ~expect)
    same(outs[2], expect)


@pytest.mark.parametrize("t", ["f16", "bf16", "f16x2", "bf16x2"])
@pytest.mark.parametrize("cmp", ["lt", "ne", "equ", "geu", "nan"])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_setp_half(t: str, cmp: str, data: Any) -> None:
    fmt = t[:-2] if t.endswith("x2") else t
    edges = _FMT[fmt][4]
    w = 32 if t.endswith("x2") else 16
    if w == 32:
        edges = [e | (f << 16) for e, f in zip(edges, reversed(edges))]
    ab, bb = data.draw(fbits(w, edges)), data.draw(fbits(w, edges))
    if w == 16:
        outs = run(f"setp.{cmp}.{t} %o0, %i0, %i1;", [(f"u{w}", ab), (f"u{w}", bb)], [("pred", None)])
        same(
            outs[0],
            np.array([fcmp_ref(cmp, to_float(int(x), fmt), to_float(int(y), fmt)) for x, y in zip(ab, bb)]),
        )
        return
    outs = run(f"setp.{cmp}.{t} %o0|%o1, %i0, %i1;", [("u32", ab), ("u32", bb)], [("pred", None)] * 2)
    for k, s in enumerate((0, 16)):  # p compares the low halves, q the high halves
        same(
            outs[k],
            np.array(
                [
                    fcmp_ref(cmp, to_float(int(x) >> s & 0xFFFF, fmt), to_float(int(y) >> s & 0xFFFF, fmt))
                    for x, y in zip(ab, bb)
                ]
            ),
        )


@pytest.mark.parametrize("stype", ["s32", "u64", "f32", "f64"])
@pytest.mark.parametrize("dtype", ["u32", "s32", "f32"])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_set(stype: str, dtype: str, data: Any) -> None:
    if stype[0] == "f":
        ab = data.draw(fbits(_bits(stype), _FMT[stype][4]))
        bb = data.draw(fbits(_bits(stype), _FMT[stype][4]))
        a, b = ab.view(_NP[stype]), bb.view(_NP[stype])
        cmp = data.draw(st.sampled_from(FLOAT_CMPS))
        t = [fcmp_ref(cmp, float(x), float(y)) for x, y in zip(a, b)]
    else:
        a, b = data.draw(lanes(stype)), data.draw(lanes(stype))
        cmp = data.draw(st.sampled_from(list(INT_CMPS)))
        t = [INT_CMPS[cmp](int(x), int(y)) for x, y in zip(a, b)]
    c = data.draw(lanes("pred", st.booleans()))
    outs = run(
        f"set.{cmp}.{dtype}.{stype} %o0, %i0, %i1;\nset.{cmp}.xor.{dtype}.{stype} %o1, %i0, %i1, !%i2;",
        [(stype, a), (stype, b), ("pred", c)],
        [("u32", None)] * 2,
    )
    true = 0x3F800000 if dtype == "f32" else 0xFFFFFFFF
    tv = np.array(t)
    same(outs[0], np.where(tv, true, 0).astype(np.uint32))
    same(outs[1], np.where(tv ^ ~c, true, 0).astype(np.uint32))


def test_set_half_destinations() -> None:
    a = np.array([0x3C00 | 0x4000 << 16, 0x7E00 | 0xBC00 << 16], np.uint32)  # f16x2 (1, 2), (nan, -1)
    b = np.array([0x4000 | 0x3C00 << 16, 0x0000 | 0x0000 << 16], np.uint32)  # (2, 1), (0, 0)
    outs = run(
        "set.lt.f16x2.f16x2 %o0, %i0, %i1;\nset.ltu.u32.f16x2 %o1, %i0, %i1;",
        [("u32", a), ("u32", b)],
        [("u32", None)] * 2,
    )
    assert outs[0].tolist() == [0x3C00, 0x3C00 << 16]
    assert outs[1].tolist() == [0xFFFF, 0xFFFFFFFF]
    h = np.array([0x3C00, 0x7E00], np.uint16)
    (o,) = run("set.gtu.f16.f16 %o0, %i0, %i1;", [("u16", h), ("u16", np.zeros(2, np.uint16))], [("u16", None)])
    assert o.tolist() == [0x3C00, 0x3C00]


@pytest.mark.parametrize("t", ["b16", "u32", "s64", "f32", "f64"])
@SETTINGS
@given(data=st.data())
def test_selp(t: str, data: Any) -> None:
    w = _bits(t)
    a = data.draw(lanes(f"u{w}")).view(_NP[t])
    b = data.draw(lanes(f"u{w}")).view(_NP[t])
    c = data.draw(lanes("pred", st.booleans()))
    lit = "0f3F800000" if t == "f32" else ("0d3FF0000000000000" if t == "f64" else "7")
    outs = run(
        f"selp.{t} %o0, %i0, %i1, %i2;\nselp.{t} %o1, %i0, {lit}, !%i2;",
        [(t, a), (t, b), ("pred", c)],
        [(t, None)] * 2,
    )
    same(outs[0], np.where(c, a, b))
    lit_v = np.array([1.0 if t[0] == "f" else 7]).astype(_NP[t])
    same(outs[1], np.where(~c, a, lit_v))


@pytest.mark.parametrize("ct", ["s32", "f32"])
@SETTINGS
@given(data=st.data())
def test_slct(ct: str, data: Any) -> None:
    a, b = data.draw(lanes("u32")), data.draw(lanes("u32"))
    c = data.draw(lanes("s32")) if ct == "s32" else data.draw(fbits(32, F32_EDGES)).view(np.float32)
    outs = run(f"slct.u32.{ct} %o0, %i0, %i1, %i2;", [("u32", a), ("u32", b), (ct, c)], [("u32", None)])
    same(outs[0], np.where(c >= 0, a, b))  # -0.0 >= 0 picks a; NaN picks b
    if ct == "f32":
        (o,) = run("slct.ftz.u32.f32 %o0, %i0, %i1, %i2;", [("u32", a), ("u32", b), (ct, c)], [("u32", None)])
        flushed = np.where(np.abs(c) < np.finfo(np.float32).tiny, 0, c)
        same(o, np.where(flushed >= 0, a, b))


@pytest.mark.parametrize("t", ["f32", "f64"])
@SETTINGS
@given(data=st.data())
def test_testp(t: str, data: Any) -> None:
    a = data.draw(fbits(_bits(t), _FMT[t][4])).view(_NP[t])
    tests = ["finite", "infinite", "number", "notanumber", "normal", "subnormal"]
    outs = run("\n".join(f"testp.{x}.{t} %o{k}, %i0;" for k, x in enumerate(tests)), [(t, a)], [("pred", None)] * 6)
    tiny = float(np.finfo(_NP[t]).tiny)
    vals = [float(x) for x in a]
    expect = {
        "finite": [math.isfinite(v) for v in vals],
        "infinite": [math.isinf(v) for v in vals],
        "number": [not math.isnan(v) for v in vals],
        "notanumber": [math.isnan(v) for v in vals],
        "normal": [math.isfinite(v) and abs(v) >= tiny for v in vals],
        "subnormal": [0 < abs(v) < tiny for v in vals],
    }
    for k, x in enumerate(tests):
        same(outs[k], np.array(expect[x]))


# ------------------------------------------------------------------------------------------------
# Float min / max / abs / neg
# ------------------------------------------------------------------------------------------------


def fminmax_ref(op: str, x: int, y: int, fmt: str, nan: bool = False, ftz: bool = False, xorsign: bool = False) -> int:
    _, sign, _, canon, _ = _FMT[fmt]
    if ftz:
        x, y = flush(x, fmt), flush(y, fmt)
    s = (x ^ y) & sign
    if xorsign:
        x, y = x & ~sign, y & ~sign
    fx, fy = to_float(x, fmt), to_float(y, fmt)
    xn, yn = math.isnan(fx), math.isnan(fy)
    if (xn and yn) or (nan and (xn or yn)):
        return canon
    if xn or yn:
        r = y if xn else x
    elif fx == fy:  # equal values have equal bits except +0/-0: min prefers -0, max +0
        r = (x | y) if op == "min" else (x & y)
    else:
        r = x if (fx < fy) == (op == "min") else y
    return r | s if xorsign else r


@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16", "f16x2", "bf16x2"])
@pytest.mark.parametrize("op", ["min", "max"])
@SETTINGS
@given(data=st.data())
def test_min_max_float(t: str, op: str, data: Any) -> None:
    fmt = t[:-2] if t.endswith("x2") else t
    w, _, _, _, edges = _FMT[fmt]
    packed = t.endswith("x2")
    bw = 32 if packed else w
    if packed:
        edges = [e | (f << 16) for e, f in zip(edges, reversed(edges))]
    ab = data.draw(fbits(bw, edges))
    bb = data.draw(fbits(bw, edges, [int(v) for v in ab[:6]]))
    mods = [""]
    if fmt != "f64":
        mods += [".NaN", ".xorsign.abs"]
    if fmt in ("f32", "f16"):
        mods += [".ftz", ".ftz.NaN"]
    bt = f"u{bw}"
    body = "\n".join(f"{op}{m}.{t} %o{k}, %i0, %i1;" for k, m in enumerate(mods))
    outs = run(body, [(bt, ab), (bt, bb)], [(bt, None)] * len(mods))
    for k, m in enumerate(mods):
        kw = dict(nan="NaN" in m, ftz="ftz" in m, xorsign="xorsign" in m)

        def f(x: int, y: int, kw: dict[str, bool] = kw) -> int:
            if not packed:
                return fminmax_ref(op, x, y, fmt, **kw)
            return (
                fminmax_ref(op, x & 0xFFFF, y & 0xFFFF, fmt, **kw) | fminmax_ref(op, x >> 16, y >> 16, fmt, **kw) << 16
            )

        same(outs[k], ref(f, bt, ab, bb))


def test_min_max_float_spot_values() -> None:
    nan, pz, nz = np.float32("nan"), np.float32(0.0), np.float32(-0.0)
    a = np.array([nan, 1.0, nan, pz, nz, -np.inf], np.float32)
    b = np.array([2.0, nan, nan, nz, pz, 3.0], np.float32)
    mn, mx = run(
        "min.f32 %o0, %i0, %i1;\nmax.f32 %o1, %i0, %i1;",
        [("f32", a), ("f32", b)],
        [("f32", None), ("f32", None)],
    )
    assert mn.view(np.uint32).tolist() == [
        0x40000000,
        0x3F800000,
        0x7FFFFFFF,
        0x80000000,
        0x80000000,
        0xFF800000,
    ]
    assert mx.view(np.uint32).tolist() == [
        0x40000000,
        0x3F800000,
        0x7FFFFFFF,
        0x00000000,
        0x00000000,
        0x40400000,
    ]
    (m3,) = run(
        "max.f32 %o0, %i0, %i1, %i2;",
        [("f32", a), ("f32", b), ("f32", np.full(6, 2.5, np.float32))],
        [("f32", None)],
    )
    assert m3.tolist() == [2.5, 2.5, 2.5, 2.5, 2.5, 3.0]


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("op", ["min", "max"])
@SETTINGS
@given(data=st.data())
def test_min_max_float_literal(t: str, op: str, data: Any) -> None:
    """A literal operand (ReLU: `max.f32 d, x, 0f00000000`) gives the same results as registers."""
    w = _bits(t)
    ab = data.draw(fbits(w, _FMT[t][4]))
    lits = [0.0, -0.0, 1.0, -2.5, math.inf, -math.inf, math.nan]
    lit = data.draw(st.sampled_from(lits))
    bits = int(np.array([lit], _NP[t]).view(_NP[f"u{w}"])[0])
    text = f"0f{bits:08X}" if w == 32 else f"0d{bits:016X}"
    body = f"{op}.{t} %o0, %i0, {text};\n{op}.{t} %o1, {text}, %i0;"
    outs = run(body, [(t, ab.view(_NP[t]))], [(t, None)] * 2)
    expect = ref(lambda x: fminmax_ref(op, x, bits, t), f"u{w}", ab)
    same(outs[0].view(_NP[f"u{w}"]), expect)
    same(outs[1].view(_NP[f"u{w}"]), ref(lambda x: fminmax_ref(op, bits, x, t), f"u{w}", ab))


@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16", "f16x2", "bf16x2"])
@SETTINGS
@given(data=st.data())
def test_abs_neg_float(t: str, data: Any) -> None:
    fmt = t[:-2] if t.endswith("x2") else t
    w, sign, _, _, edges = _FMT[fmt]
    packed = t.endswith("x2")
    bw = 32 if packed else w
    a = data.draw(fbits(bw, edges))
    ftz = fmt in ("f32", "f16")
    body = f"abs.{t} %o0, %i0;\nneg.{t} %o1, %i0;"
    if ftz:
        body += f"\nabs.ftz.{t} %o2, %i0;\nneg.ftz.{t} %o3, %i0;"
    bt = f"u{bw}"
    outs = run(body, [(bt, a)], [(bt, None)] * (4 if ftz else 2))

    def each(fn: Callable[[int], int]) -> Callable[[int], int]:
        return (lambda x: fn(x & 0xFFFF) | fn(x >> 16) << 16) if packed else fn

    same(outs[0], ref(each(lambda x: x & ~sign), bt, a))
    same(outs[1], ref(each(lambda x: x ^ sign), bt, a))
    if ftz:
        same(outs[2], ref(each(lambda x: flush(x, fmt) & ~sign), bt, a))
        same(outs[3], ref(each(lambda x: flush(x, fmt) ^ sign), bt, a))


# ------------------------------------------------------------------------------------------------
# Masks, counters, unsupported forms
# ------------------------------------------------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_guarded_lanes_keep_their_registers(data: Any) -> None:
    """Under `@%p`, lanes with p false keep their old destination values (every kind of lowering)."""
    a, b = data.draw(lanes("s32")), data.draw(lanes("s32"))
    g = data.draw(lanes("pred", st.booleans()))
    init = data.draw(lanes("s32"))
    body = (
        "@%i2 add.s32 %o0, %i0, %i1;\n@!%i2 mul.wide.s32 %o1, %i0, %i1;\n"
        "@%i2 setp.lt.s32 %o2|%o3, %i0, %i1;\n@%i2 div.s32 %o4, %i0, %i1;\n"
        "@%i2 selp.b32 %o5, %i0, %i1, %i2;\n@%i2 shl.b32 %o6, %i0, %i1;"
    )
    outs = run(
        body,
        [("s32", a), ("s32", b), ("pred", g)],
        [
            ("s32", init),
            ("s64", init.astype(np.int64)),
            ("pred", init > 0),
            ("pred", init < 0),
            ("s32", init),
            ("s32", init),
            ("s32", init),
        ],
    )
    same(outs[0], np.where(g, ref(lambda x, y: x + y, "s32", a, b), init))
    same(outs[1], np.where(~g, a.astype(np.int64) * b, init.astype(np.int64)))
    same(outs[2], np.where(g, a < b, init > 0))
    same(outs[3], np.where(g, a >= b, init < 0))
    same(outs[4], np.where(g, ref(lambda x, y: _tdiv(x, y, "s32", False), "s32", a, b), init))
    same(outs[5], np.where(g, a, init))
    same(outs[6], np.where(g, ref(lambda x, y: _shift_ref("shl", "b32")(x, y & 0xFFFFFFFF), "s32", a, b), init))


def test_instruction_classes_are_counted() -> None:
    a = np.arange(64, dtype=np.float32)
    ins, outs = ("f32", "f32", "f64"), ("pred", "pred", "f32", "s32")
    k = ptx_harness.lane_kernel(
        "setp.lt.f32 %o0, %i0, %i1;\nsetp.lt.f64 %o1, %i2, %i2;\nmax.f32 %o2, %i0, %i1;\nadd.s32 %o3, %o3, 1;",
        ins,
        outs,
    )
    bufs = [
        cuda.to_device(x)
        for x in (
            a,
            a,
            a.astype(np.float64),
            np.zeros(64, np.uint8),
            np.zeros(64, np.uint8),
            a,
            np.zeros(64, np.int32),
        )
    ]
    rep = k((1,), (64,), (*bufs, np.uint32(64)))
    empty = ptx_harness.lane_kernel("", ins, outs)((1,), (64,), (*bufs, np.uint32(64)))
    diff = {
        c: rep.counters.thread_instructions[c] - empty.counters.thread_instructions[c]
        for c in rep.counters.thread_instructions
    }
    assert diff["fp32"] == 2 * 64 and diff["fp64"] == 64 and diff["integer"] == 64


@pytest.mark.parametrize(
    "line",
    [
        "add.cc.u16 %o0, %i0, %i0;",
        "mul.wide.u64 %o0, %i0, %i0;",
        "min.relu.u32 %o0, %i0, %i0;",
        "add.sat.u32 %o0, %i0, %i0;",
        "mad.lo.sat.s32 %o0, %i0, %i0, %i0;",
        "shl.u32 %o0, %i0, 1;",
        "bfind.b32 %o0, %i0;",
        "abs.u32 %o0, %i0;",
    ],
)
def test_unsupported_forms_fail_at_load(line: str) -> None:
    with pytest.raises(cuda.UnsupportedInstruction):  # the driver JIT lowers at first launch
        run(line, [("u32", np.zeros(4, np.uint32))], [("u32", None)])


def test_mul_hi_64_spot_values() -> None:
    m = (1 << 64) - 1
    xs = [m, m, 1 << 63, (1 << 63) - 1, 0x123456789ABCDEF0, 3]
    ys = [m, 2, 1 << 63, (1 << 63) - 1, 0xFEDCBA9876543210, 1 << 63]
    a, b = np.array(xs, np.uint64), np.array(ys, np.uint64)
    hu, hs = run(
        "mul.hi.u64 %o0, %i0, %i1;\nmul.hi.s64 %o1, %i0, %i1;",
        [("u64", a), ("u64", b)],
        [("u64", None), ("s64", None)],
    )
    assert hu.tolist() == [(x * y) >> 64 for x, y in zip(xs, ys)]
    assert hs.tolist() == [(sx(x, 64) * sx(y, 64)) >> 64 for x, y in zip(xs, ys)]
