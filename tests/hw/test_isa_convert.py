# Property tests of `cvt` (strata/hw/isa/convert.py) over every integer/float type pair and rounding
# mode against exact rational oracles (fractions.Fraction, rounded once here), plus the packed
# f16x2/bf16x2, tf32 and fp8 forms, run through hand-written PTX kernels on the real engine.
"""cvt on the virtual GPU: bit-exact conversions between all PTX scalar types."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import ml_dtypes
import numpy as np
import ptx_harness
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import strata.cuda as cuda

LANES = 64
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
INTS = ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")
FLOATS = ("f16", "bf16", "f32", "f64")
FRND = ("rn", "rz", "rm", "rp")
IRND = ("rni", "rzi", "rmi", "rpi")

_NP: dict[str, Any] = {
    "u8": np.uint8, "s8": np.int8, "u16": np.uint16, "s16": np.int16, "u32": np.uint32, "s32": np.int32,
    "u64": np.uint64, "s64": np.int64, "f16": np.uint16, "bf16": np.uint16, "f32": np.float32,
    "f64": np.float64, "b16": np.uint16, "b32": np.uint32, "f16x2": np.uint32, "bf16x2": np.uint32,
    "tf32": np.uint32, "pred": np.bool_,
}
_BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32, "f64": np.uint64}
# (precision, emin, largest finite) of each float format
FMT: dict[str, tuple[int, int, Fraction]] = {
    "f16": (11, -14, Fraction(65504)), "bf16": (8, -126, Fraction(2**8 - 1) * 2**120),
    "f32": (24, -126, Fraction(2**24 - 1) * 2**104), "f64": (53, -1022, Fraction(2**53 - 1) * 2**971),
    "tf32": (11, -126, Fraction(2**11 - 1) * 2**117), "e4m3": (4, -6, Fraction(448)),
    "e5m2": (3, -14, Fraction(57344)),
}
CANON = {"f16": 0x7FFF, "bf16": 0x7FFF, "f32": 0x7FFFFFFF, "tf32": 0x7FFFFFFF}

# ------------------------------------------------------------------------------------------------
# Harness (ptx_harness)
# ------------------------------------------------------------------------------------------------


def run(body: str, ins: Sequence[tuple[str, Any]], out: str, init: Any = None) -> np.ndarray:
    """Run `body` (writing %o0) over lanes; inputs (type, array). Returns %o0 per lane."""
    return ptx_harness.run_lanes(body, ins, [(out, init)], _NP)[0]


def check(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    g = np.asarray(got).view(f"u{np.asarray(got).itemsize}")
    w = np.asarray(want).astype(g.dtype) if np.asarray(want).dtype.kind in "ui" else want.view(g.dtype)
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, what + ": " + ", ".join(f"lane {i}: got {int(g[i]):#x} want {int(w[i]):#x}"
                                                  for i in bad[:8])


def check_cvt(form: str, ins: Sequence[tuple[str, Any]], out: str, want: np.ndarray) -> None:
    """Run `form %o0, %i0[, %i1]` and check it bit-exactly against want (a failure names the form)."""
    operands = ", ".join(f"%i{k}" for k in range(len(ins)))
    check(run(f"{form} %o0, {operands};", ins, out), want, form)


# ------------------------------------------------------------------------------------------------
# Oracles
# ------------------------------------------------------------------------------------------------


def value(t: str, b: Any) -> float:
    """The float value of bits b of format t."""
    if t == "f16":
        return float(np.uint16(b).view(np.float16))
    if t == "bf16":
        return float((np.uint32(b) << np.uint32(16)).view(np.float32))
    if t == "f32":
        return float(np.uint32(b).view(np.float32))
    return float(np.uint64(b).view(np.float64))


def round_q(q: Fraction, fmt: str, mode: str) -> float:
    """IEEE rounding of a rational (rn, rna, rz, rm, rp); inf or the largest finite on overflow."""
    if q == 0:
        return 0.0
    p, emin, top = FMT[fmt]
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length() + 1
    while Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    m = math.floor(a / quantum)
    rem = a / quantum - m
    if mode == "rn":
        m += rem > Fraction(1, 2) or (rem == Fraction(1, 2) and m % 2 == 1)
    elif mode == "rna":
        m += rem >= Fraction(1, 2)
    elif rem and ((mode == "rp" and not neg) or (mode == "rm" and neg)):
        m += 1
    v = m * quantum
    if v > top:
        to_inf = mode in ("rn", "rna") or (mode == "rp" and not neg) or (mode == "rm" and neg)
        r = math.inf if to_inf else float(top)
    else:
        r = float(v)
    return -r if neg else r


def encode(fmt: str, v: float) -> int:
    """Bits of a float value representable in fmt (NaN -> the canonical NaN)."""
    if math.isnan(v):
        return CANON.get(fmt, 0)
    if fmt == "f16":
        return int(np.float16(v).view(np.uint16))
    if fmt == "bf16":
        return int(np.array(v, ml_dtypes.bfloat16).view(np.uint16))
    if fmt in ("f32", "tf32"):
        return int(np.float32(v).view(np.uint32))
    return int(np.float64(v).view(np.uint64))


def narrow(x: float, fmt: str, mode: str) -> int:
    """Bits of x rounded into fmt (a float input; inf/NaN pass, NaN canonical)."""
    if math.isnan(x) or math.isinf(x):
        return encode(fmt, x)
    if x == 0:
        return encode(fmt, x)
    r = round_q(Fraction(x), fmt, mode)
    return encode(fmt, r if r != 0 else math.copysign(0.0, x))


def int_range(t: str) -> tuple[int, int]:
    w = np.dtype(_NP[t]).itemsize * 8
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if t[0] == "s" else (0, (1 << w) - 1)


def to_int(x: float, irnd: str, src: str, dst: str) -> int:
    lo, hi = int_range(dst)
    w = np.dtype(_NP[dst]).itemsize * 8
    if math.isnan(x):
        v = (1 << (w - 1)) if (src == "f64" or w == 64) else 0
        return v - (1 << w) if (dst[0] == "s" and v >> (w - 1)) else v
    if math.isinf(x):
        return hi if x > 0 else lo
    q = Fraction(x)
    n = {"rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil, "rni": round}[irnd](q)  # round(): ties even
    return min(max(n, lo), hi)


# ------------------------------------------------------------------------------------------------
# Strategies
# ------------------------------------------------------------------------------------------------


def ints(t: str) -> st.SearchStrategy[np.ndarray]:
    lo, hi = int_range(t)
    big = [2**24 + 1, 2**53 + 1, 65519, 65520, 2**31 - 64, 2**63 - 512]
    edges = sorted({lo, hi, 0, 1, -1 if lo else 2, hi // 2, hi // 2 + 1, lo // 2,
                    *(v for v in big if v <= hi)})
    small = st.integers(max(lo, -70000), min(hi, 70000))
    el = st.one_of(st.sampled_from(edges), st.integers(lo, hi), small)
    return arrays(_NP[t], LANES, elements=el)


_FEDGE = {
    "f16": [0, 0x8000, 1, 0x03FF, 0x0400, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x3800, 0x3E00, 0xB800,
            0x4100],
    "bf16": [0, 0x8000, 1, 0x007F, 0x0080, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0, 0x3F80, 0x3F00, 0x3FC0, 0x4F00,
             0x5F00],
    "f32": [0, 0x80000000, 1, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
            0x3F000000, 0x3FC00000, 0xBF000000, 0x4F000000, 0x4EFFFFFF, 0xCF000000, 0x5F000000, 0x5F800000,
            0xDF000000, 0x477FEFFF, 0x477FF000, 0x33000001, 0x337FFFFF],
    "f64": [0, 1 << 63, 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000,
            0xFFF0000000000000, 0x7FF8000000000000, 0x3FE0000000000000, 0x3FF8000000000000,
            0x41E0000000000000, 0x41DFFFFFFFC00000, 0xC1E0000000000000, 0x43E0000000000000,
            0x43F0000000000000, 0xC3E0000000000000, 0x47EFFFFFE0000000, 0x47EFFFFFF0000000,
            0x36A0000000000000, 0x3690000000000001, 0x40EFFE0000000000, 0x40EFFDFFFFFFFFFF],
}
_SHAPE = {"f16": (16, 15, 10), "bf16": (16, 127, 7), "f32": (32, 127, 23), "f64": (64, 1023, 52)}


def floats(t: str, spread: int = 70) -> st.SearchStrategy[np.ndarray]:
    w, bias, mb = _SHAPE[t]
    near = st.builds(lambda s, e, m: (s << (w - 1)) | ((bias + e) << mb) | m, st.integers(0, 1),
                     st.integers(-min(spread, bias - 1), min(spread, bias)), st.integers(0, (1 << mb) - 1))
    halfway = st.builds(lambda k, s: np.float64((k + 0.5) * s).view(np.uint64) if t == "f64" else 0,
                        st.integers(-100, 100), st.sampled_from([1.0, -1.0]))
    el = st.one_of(st.sampled_from(_FEDGE[t]), st.integers(0, 2**w - 1), near)
    if t == "f64":
        el = st.one_of(el, halfway.map(int))
    return arrays(_BITS[t], LANES, elements=el)


def _as_input(t: str, b: np.ndarray) -> np.ndarray:
    return b.view(_NP[t]) if t in ("f32", "f64") else b


def type_pairs(a: str, a_types: Sequence[str], b: str, b_types: Sequence[str]) -> Callable[[Any], Any]:
    """Parametrize a property test over every (a, b) type pair; it draws its lanes from `data`."""
    def wrap(test: Any) -> Any:
        return pytest.mark.parametrize(b, b_types)(pytest.mark.parametrize(a, a_types)(
            SETTINGS(given(data=st.data())(test))))
    return wrap


# ------------------------------------------------------------------------------------------------
# int <-> float, float -> float, int <-> int
# ------------------------------------------------------------------------------------------------


@type_pairs("it", INTS, "ft", FLOATS)
def test_int_to_float(it: str, ft: str, data: st.DataObject) -> None:
    v = data.draw(ints(it))
    for mode in FRND:
        want = np.array([encode(ft, round_q(Fraction(int(x)), ft, mode)) for x in v], _BITS[ft])
        check_cvt(f"cvt.{mode}.{ft}.{it}", [(it, v)], ft, want)


@type_pairs("it", INTS, "ft", FLOATS)
def test_float_to_int(it: str, ft: str, data: st.DataObject) -> None:
    b = data.draw(floats(ft))
    x = [value(ft, v) for v in b]
    for irnd in IRND:
        want = np.array([to_int(v, irnd, ft, it) for v in x], dtype=object).astype(_NP[it])
        check_cvt(f"cvt.{irnd}.{it}.{ft}", [(ft, _as_input(ft, b))], it, want)


@type_pairs("at", FLOATS, "dt", FLOATS)
def test_float_to_float(at: str, dt: str, data: st.DataObject) -> None:
    b = data.draw(floats(at))
    x = [value(at, v) for v in b]
    widening = FMT[dt][0] >= FMT[at][0] and FMT[dt][1] <= FMT[at][1]
    modes: Sequence[str | None] = [None] if (widening or at == dt) else FRND
    for mode in modes:
        rnd = f".{mode}" if mode else ""
        if widening:  # exact; NaN payloads are kept, so compare NaN-ness there
            got = run(f"cvt{rnd}.{dt}.{at} %o0, %i0;", [(at, _as_input(at, b))], dt)
            want = np.array([encode(dt, v) if not math.isnan(v) else 0 for v in x], _BITS[dt])
            nan = np.isnan(np.array(x))
            gv = np.array([value(dt, g) for g in got.view(_BITS[dt])])
            assert np.isnan(gv[nan]).all()
            check(got.view(_BITS[dt])[~nan], want[~nan], f"cvt.{dt}.{at}")
        else:
            want = np.array([narrow(v, dt, mode or "rn") for v in x], _BITS[dt])
            check_cvt(f"cvt{rnd}.{dt}.{at}", [(at, _as_input(at, b))], dt, want)
    if at == dt:  # integer rounding within a type
        for irnd in IRND:
            want = np.array([encode(dt, v if not math.isfinite(v) else
                                    math.copysign(float(to_int_exact(v, irnd)), v)) for v in x], _BITS[dt])
            if dt == "f64":  # f64 NaNs keep their payload
                nan = np.isnan(np.array(x))
                want[nan] = b[nan]
            check_cvt(f"cvt.{irnd}.{dt}.{at}", [(at, _as_input(at, b))], dt, want)


def to_int_exact(x: float, irnd: str) -> int:
    return {"rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil, "rni": round}[irnd](Fraction(x))


@type_pairs("at", INTS, "dt", INTS)
def test_int_to_int(at: str, dt: str, data: st.DataObject) -> None:
    v = data.draw(ints(at))
    lo, hi = int_range(dt)
    w = np.dtype(_NP[dt]).itemsize * 8
    wrap = [((int(x) & ((1 << w) - 1)) ^ (1 << (w - 1))) - (1 << (w - 1)) if dt[0] == "s"
            else int(x) & ((1 << w) - 1) for x in v]
    check_cvt(f"cvt.{dt}.{at}", [(at, v)], dt, np.array(wrap, dtype=object).astype(_NP[dt]))
    sat = [min(max(int(x), lo), hi) for x in v]
    check_cvt(f"cvt.sat.{dt}.{at}", [(at, v)], dt, np.array(sat, dtype=object).astype(_NP[dt]))


def test_sign_and_zero_extension_into_wide_registers() -> None:
    """A narrow destination type in a wider register: sign-extended for signed, zeroed otherwise."""
    v = np.array([-1, 127, -128, 300, 0, -300] * 8, np.int32)
    got = run("cvt.s8.s32 %o0, %i0;\ncvt.s32.s16 %o0, %o0;", [("s32", v)], "s32")
    assert got.tolist() == [int(np.int8(np.int32(x).astype(np.int8))) for x in v]
    got = run("cvt.u8.s32 %o0, %i0;", [("s32", v)], "u32")
    assert got.tolist() == [int(x) & 0xFF for x in v]
    f = np.array([1.5, -2.5, 1e10, -1e10, np.nan, 200.0, -200.0, 0.0] * 8, np.float32)
    got = run("cvt.rni.s8.f32 %o0, %i0;", [("f32", f)], "s32")  # saturates to the s8 range
    assert got[:8].tolist() == [2, -2, 127, -128, 0, 127, -128, 0]


# ------------------------------------------------------------------------------------------------
# Modifiers: ftz, sat, relu, satfinite
# ------------------------------------------------------------------------------------------------


def _flush(x: float, fmt: str = "f32") -> float:
    return math.copysign(0.0, x) if 0 < abs(x) < 2.0 ** FMT[fmt][1] else x


def _sat(x: float) -> float:
    return 0.0 if math.isnan(x) or x <= 0 else min(x, 1.0)


@SETTINGS
@given(data=st.data())
def test_ftz_and_sat(data: st.DataObject) -> None:
    b32 = data.draw(floats("f32"))
    x = [value("f32", v) for v in b32]
    f32 = b32.view(np.float32)
    got = run("cvt.ftz.f64.f32 %o0, %i0;", [("f32", f32)], "f64")
    want = np.array([_flush(v) for v in x], np.float64)
    assert np.array_equal(got, want, equal_nan=True) and (np.signbit(got) == np.signbit(want)).all()
    got = run("cvt.sat.f32.f32 %o0, %i0;", [("f32", f32)], "f32")
    check(got, np.array([_sat(v) for v in x], np.float32))
    got = run("cvt.rzi.ftz.f32.f32 %o0, %i0;", [("f32", f32)], "f32")
    want = [v if not math.isfinite(v) else math.copysign(float(math.trunc(_flush(v))), v) for v in x]
    check(got, np.array([encode("f32", w) for w in want], np.uint32))
    got = run("cvt.rpi.ftz.s32.f32 %o0, %i0;", [("f32", f32)], "s32")  # subnormals are zero first
    check(got, np.array([to_int(_flush(v), "rpi", "f32", "s32") for v in x], np.int64).astype(np.int32))
    b64 = data.draw(floats("f64", spread=140))
    x64 = [value("f64", v) for v in b64]
    for mode in FRND:
        want = [_sat(_flush(value("f32", narrow(v, "f32", mode)))) for v in x64]
        check_cvt(f"cvt.{mode}.ftz.sat.f32.f64", [("f64", b64.view(np.float64))], "f32",
                  np.array([encode("f32", w) for w in want], np.uint32))
    got = run("cvt.rn.sat.f16.f64 %o0, %i0;", [("f64", b64.view(np.float64))], "f16")
    check(got, np.array([encode("f16", _sat(value("f16", narrow(v, "f16", "rn")))) for v in x64], np.uint16))


@pytest.mark.parametrize("ft", ["f16", "bf16"])
@SETTINGS
@given(data=st.data())
def test_relu_and_satfinite(ft: str, data: st.DataObject) -> None:
    b = data.draw(floats("f32"))
    x = [value("f32", v) for v in b]
    top = float(FMT[ft][2])
    for mode in ("rn", "rz"):
        want = []
        for v in x:
            r = value(ft, narrow(v, ft, mode))
            if math.isinf(r):
                r = math.copysign(top, r)
            if not math.isnan(r) and (r < 0 or math.copysign(1, r) < 0):
                r = 0.0
            want.append(encode(ft, r))
        check_cvt(f"cvt.{mode}.relu.satfinite.{ft}.f32", [("f32", b.view(np.float32))], ft, np.array(want, np.uint16))


# ------------------------------------------------------------------------------------------------
# Packed, tf32, fp8
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pt", ["f16x2", "bf16x2"])
@SETTINGS
@given(data=st.data())
def test_pack_two_f32(pt: str, data: st.DataObject) -> None:
    a, b = data.draw(floats("f32")), data.draw(floats("f32"))
    et = pt.removesuffix("x2")
    for mode in FRND:
        hi = np.array([narrow(value("f32", v), et, mode) for v in a], np.uint32)
        lo = np.array([narrow(value("f32", v), et, mode) for v in b], np.uint32)
        check_cvt(f"cvt.{mode}.{pt}.f32", [("f32", a.view(np.float32)), ("f32", b.view(np.float32))], pt,
                  (hi << 16) | lo)  # a -> upper half


@SETTINGS
@given(data=st.data())
def test_tf32(data: st.DataObject) -> None:
    b = data.draw(floats("f32"))
    x = [value("f32", v) for v in b]
    for mode in ("rna", "rn", "rz"):
        got = run(f"cvt.{mode}.tf32.f32 %o0, %i0;", [("f32", b.view(np.float32))], "tf32")
        want = np.array([encode("tf32", v) if not math.isfinite(v) or v == 0 else
                         encode("tf32", round_q(Fraction(v), "tf32", mode) or math.copysign(0.0, v))
                         for v in x], np.uint32)
        check(got, want, f"cvt.{mode}.tf32.f32")
        assert (got[~np.isnan(np.array(x))] & 0x1FFF == 0).all()
    big = np.float32([np.inf, -np.inf, np.finfo(np.float32).max])  # the last rounds up to inf
    got = run("cvt.rna.satfinite.tf32.f32 %o0, %i0;", [("f32", big)], "tf32")
    assert got.tolist() == [0x7F7FE000, 0xFF7FE000, 0x7F7FE000]


@pytest.mark.parametrize("f8", ["e4m3x2", "e5m2x2"])
@SETTINGS
@given(data=st.data())
def test_fp8_pairs(f8: str, data: st.DataObject) -> None:
    fmt = f8[:4]
    dt = np.dtype(ml_dtypes.float8_e4m3fn if fmt == "e4m3" else ml_dtypes.float8_e5m2)
    a, b = data.draw(floats("f32", spread=20)), data.draw(floats("f32", spread=20))
    top = float(FMT[fmt][2])

    def enc(v: float, relu: bool) -> int:
        if math.isnan(v):
            return 0x7F
        r = round_q(Fraction(v), fmt, "rn") if math.isfinite(v) and v else v
        r = math.copysign(min(abs(r), top), r) if r else math.copysign(0.0, v)
        if relu and (r < 0 or math.copysign(1, r) < 0):
            r = 0.0
        return int(np.array(r, dt).view(np.uint8))

    for relu in (False, True):
        m = ".relu" if relu else ""
        want = [(enc(value("f32", u), relu) << 8) | enc(value("f32", v), relu) for u, v in zip(a, b)]
        check_cvt(f"cvt.rn.satfinite{m}.{f8}.f32", [("f32", a.view(np.float32)), ("f32", b.view(np.float32))],
                  "b16", np.array(want, np.uint16))
    # decode every fp8 pair back to f16x2 (exact)
    codes = (np.arange(LANES * 4) * 257).astype(np.uint16)  # (k, k) for every code k
    vals = codes.astype(np.uint8).view(dt).astype(np.float32)
    hi = (codes >> 8).astype(np.uint8).view(dt).astype(np.float32)
    want = np.array([(encode("f16", float(h)) << 16) | encode("f16", float(v)) for h, v in zip(hi, vals)],
                    np.uint32)
    check_cvt(f"cvt.rn.f16x2.{f8}", [("b16", codes)], "f16x2", want)
    # and f16x2 -> fp8 pair
    h = (np.arange(LANES, dtype=np.uint32) * 2654435761) & 0x7BFF7BFF
    want = [(enc(value("f16", int(v) >> 16), False) << 8) | enc(value("f16", int(v) & 0xFFFF), False)
            for v in h]
    check_cvt(f"cvt.rn.satfinite.{f8}.f16x2", [("f16x2", h)], "b16", np.array(want, np.uint16))


# ------------------------------------------------------------------------------------------------
# Lowering checks and NVRTC end to end
# ------------------------------------------------------------------------------------------------


def test_rejected_forms_and_classes() -> None:
    regs = (".reg .b16 %h<4>;", ".reg .b32 %r<4>;", ".reg .f32 %f<4>;", ".reg .f64 %d<4>;")
    ptx_harness.assert_load_fails(cuda.PTXSyntaxError, regs, [
        "cvt.s32.f32 %r1, %f1;", "cvt.f32.s32 %f1, %r1;", "cvt.f32.f64 %f1, %d1;", "cvt.rni.f32.f64 %f1, %d1;",
        "cvt.rn.rz.f32.f64 %f1, %d1;", "cvt.rn.e4m3x2.f32 %h1, %f1, %f2;"])
    ptx_harness.assert_load_fails(cuda.UnsupportedInstruction, regs, [
        "cvt.rs.f16x2.f32 %r1, %f1, %f2, %r2;", "cvt.rn.satfinite.e2m1x2.f32 %h1, %f1, %f2;"])
    x = np.arange(LANES, dtype=np.int32)
    body = "cvt.rn.f32.s32 %o0, %i0;\ncvt.s64.s32 %a, %i0;\ncvt.f64.f32 %a, %o0;"  # %a: a harness scratch
    _, rep = ptx_harness.launch_lanes(body, [("s32", x)], [("f32", None)], _NP)
    counts = rep.counters.thread_instructions
    assert counts["fp32"] >= LANES and counts["fp64"] >= LANES


def test_nvrtc_conversions() -> None:
    mod = cuda.compile(r'''#include <cuda_fp16.h>
extern "C" __global__ void k(const float* f, const double* d, const long long* l, float* of,
                             int* oi, unsigned short* oh, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
    of[i] = __ll2float_rz(l[i]); of[n + i] = __double2float_ru(d[i]); of[2 * n + i] = __ull2float_rd(l[i]);
    oi[i] = __float2int_rn(f[i]); oi[n + i] = __double2int_rd(d[i]); oi[2 * n + i] = __float2uint_ru(f[i]);
    oh[i] = __half_as_ushort(__float2half_rz(f[i])); oh[n + i] = __half_as_ushort(__double2half(d[i]));
}''')
    r = np.random.default_rng(0)
    n = 256
    f = (r.standard_normal(n) * 10.0 ** r.integers(-3, 12, n)).astype(np.float32)
    d = r.standard_normal(n) * 10.0 ** r.integers(-10, 12, n)
    ll = r.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    of, oi, oh = cuda.zeros(3 * n, np.float32), cuda.zeros(3 * n, np.int32), cuda.zeros(2 * n, np.uint16)
    mod.get_function("k")((2,), (128,), (cuda.to_device(f), cuda.to_device(d), cuda.to_device(ll), of, oi, oh,
                                         np.int32(n)))
    gf, gi, gh = of.get().reshape(3, n), oi.get().reshape(3, n), oh.get().reshape(2, n)
    check(gf[0], np.array([encode("f32", round_q(Fraction(int(v)), "f32", "rz")) for v in ll], np.uint32))
    check(gf[1], np.array([narrow(float(v), "f32", "rp") for v in d], np.uint32))
    ull = [int(v) % 2**64 for v in ll]
    check(gf[2], np.array([encode("f32", round_q(Fraction(v), "f32", "rm")) for v in ull], np.uint32))
    check(gi[0], np.array([to_int(float(v), "rni", "f32", "s32") for v in f], np.int64).astype(np.int32))
    check(gi[1], np.array([to_int(float(v), "rmi", "f64", "s32") for v in d], np.int64).astype(np.int32))
    check(gi[2], np.array([to_int(float(v), "rpi", "f32", "u32") for v in f], np.int64).astype(np.uint32)
          .view(np.int32))
    check(gh[0], np.array([narrow(float(v), "f16", "rz") for v in f], np.uint16))
    check(gh[1], np.array([narrow(float(v), "f16", "rn") for v in d], np.uint16))
