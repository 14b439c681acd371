# Property tests of the .f32/.f64 floating-point family (strata/hw/isa/floating.py) against exact
# rational oracles (fractions.Fraction, rounded once per IEEE mode by a helper written here), run
# through the real path: hand-written PTX kernels loaded with strata.cuda.Module.from_ptx.
"""Floating-point instructions of the virtual GPU: bit-exact IEEE ops, documented .approx bounds.

Each kernel loads its operands from global memory into `%i0, %i1, ...`, runs the instruction under
test and stores `%o0`. The output is loaded first, so a guarded instruction's inactive lanes must
keep their initial value, which is checked too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import ptx_harness
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import strata.cuda as cuda
from strata.hw.isa import floating

LANES = 64
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODES = ("rn", "rz", "rm", "rp")

_NP: dict[str, Any] = {"f32": np.float32, "f64": np.float64, "b32": np.uint32, "b64": np.uint64,
                       "pred": np.bool_}
_UINT = {"f32": np.uint32, "f64": np.uint64}
CANON32 = 0x7FFFFFFF

# ------------------------------------------------------------------------------------------------
# Harness: one kernel per (body, operand types), launched over the given lanes (ptx_harness)
# ------------------------------------------------------------------------------------------------


def run(body: str, ins: Sequence[tuple[str, Any]], out: str, init: Any = None) -> np.ndarray:
    """Run `body` (writing %o0) over lanes; inputs (type, array). Returns %o0 per lane."""
    return ptx_harness.run_lanes(body, ins, [(out, init)], _NP)[0]


def bits(x: Any, t: str) -> np.ndarray:
    return np.asarray(x, _NP[t]).view(_UINT[t])


# ------------------------------------------------------------------------------------------------
# Oracle: exact rational arithmetic rounded once
# ------------------------------------------------------------------------------------------------

FORMATS = {"f32": (24, -126, 127), "f64": (53, -1022, 1023)}


def round_exact(q: Fraction, t: str, mode: str) -> float:
    """IEEE rounding of the exact nonzero rational q to format t (inf/max on overflow per mode)."""
    p, emin, emax = FORMATS[t]
    neg = q < 0
    n, d = abs(q.numerator), q.denominator
    e = n.bit_length() - d.bit_length()  # 2^e <= n/d < 2^(e+2)
    if n < d << e if e >= 0 else (n << -e) < d:
        e -= 1
    qe = max(e, emin) - p + 1  # exponent of the last place
    num, den = (n, d << qe) if qe >= 0 else (n << -qe, d)
    m, rem = divmod(num, den)
    if mode == "rn":
        up = 2 * rem > den or (2 * rem == den and m % 2 == 1)
    else:
        up = rem != 0 and {"rz": False, "rm": neg, "rp": not neg}[mode]
    m += up
    top = (2 ** p - 1) * 2 ** (emax - p + 1)
    if m * Fraction(2) ** qe > top:
        inf = mode == "rn" or (mode == "rm" and neg) or (mode == "rp" and not neg)
        v = math.inf if inf else float(top)
    else:
        v = float(m * Fraction(2) ** qe)
    return -v if neg else v


def exact_op(op: str, xs: Sequence[float], t: str, mode: str) -> float:
    """Correct IEEE result of op on floats xs (finite, infinite or NaN), rounded with mode."""
    if any(math.isnan(x) for x in xs):
        return math.nan
    if op == "sqrt":
        (x,) = xs
        if x < 0:
            return math.nan
        if x == 0 or math.isinf(x):
            return x
        return round_exact(_sqrt_sticky(Fraction(x)), t, mode)
    if not all(math.isfinite(x) for x in xs) or (op in ("div", "rcp") and xs[-1] == 0):
        return _special(op, xs)
    f = [Fraction(x) for x in xs]
    q = {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
         "div": lambda: f[0] / f[1], "rcp": lambda: 1 / f[0], "fma": lambda: f[0] * f[1] + f[2]}[op]()
    if q == 0:
        return _zero_sign(op, xs, mode)
    r = round_exact(q, t, mode)
    return r if r != 0 else math.copysign(0.0, q)


def _special(op: str, xs: Sequence[float]) -> float:
    """Non-finite operands or a zero divisor: IEEE results that no rounding mode changes."""
    with np.errstate(all="ignore"):
        x = [np.float64(v) for v in xs]
        if op == "fma":
            if np.isfinite(x[0]) and np.isfinite(x[1]):  # finite*finite is finite: c decides
                return float(x[2])
            return float(x[0] * x[1] + x[2])
        return float({"add": lambda: x[0] + x[1], "sub": lambda: x[0] - x[1],
                      "mul": lambda: x[0] * x[1], "div": lambda: x[0] / x[1],
                      "rcp": lambda: 1.0 / x[0]}[op]())


def _zero_sign(op: str, xs: Sequence[float], mode: str) -> float:
    if op in ("mul", "div"):
        return -0.0 if (math.copysign(1, xs[0]) * math.copysign(1, xs[1])) < 0 else 0.0
    if op == "fma":
        a, b, c = xs
        p = 0.0 if a == 0 or b == 0 else 1.0  # a nonzero product cancels c exactly
        pneg = math.copysign(1, a) * math.copysign(1, b) < 0
        terms = [(p, pneg), (c, math.copysign(1, c) < 0)]
    else:
        a, b = xs
        bneg = math.copysign(1, b) < 0
        terms = [(a, math.copysign(1, a) < 0), (b, bneg if op == "add" else not bneg)]
    if all(v == 0 for v, _ in terms) and terms[0][1] == terms[1][1]:
        return -0.0 if terms[0][1] else 0.0
    return -0.0 if mode == "rm" else 0.0


def _sqrt_sticky(q: Fraction) -> Fraction:
    """A rational that rounds like sqrt(q) in formats of <= 53 bits: exact, or an odd midpoint."""
    k = 0
    while q * 4**k < 2**200:
        k += 8
    s = q * 4**k  # sqrt(s) = sqrt(q) * 2^k has >= 100 integer bits
    n = s.numerator // s.denominator
    r = math.isqrt(n)
    exact = r * r == n and s.denominator == 1
    return (Fraction(r) if exact else Fraction(2 * r + 1, 2)) / 2**k


def oracle(op: str, t: str, mode: str, cols: Sequence[np.ndarray], ftz: bool = False,
           sat: bool = False) -> np.ndarray:
    """Expected result bits, lane by lane; f32 NaNs are the canonical 0x7fffffff."""
    dt = _NP[t]
    out = np.empty(len(cols[0]), dtype=dt)
    for i in range(len(out)):
        xs = [float(c[i]) for c in cols]
        if ftz:
            xs = [_flush32(x) for x in xs]
        r = exact_op(op, xs, t, mode)
        if ftz:
            r = _flush32(r)
        if sat:
            r = 0.0 if math.isnan(r) or r <= 0 else min(r, 1.0)
        out[i] = r
    b = out.view(_UINT[t]).copy()
    if t == "f32":
        b[np.isnan(out)] = CANON32
    return b


def _flush32(x: float) -> float:
    return math.copysign(0.0, x) if 0 < abs(x) < 2.0**-126 else x


def same_bits(got: np.ndarray, want: np.ndarray, t: str) -> None:
    """Bit-exact comparison (f64 NaNs: any NaN, since PTX keeps host-dependent payloads)."""
    g, w = got.view(_UINT[t]), want.view(_UINT[t])
    ok = g == w
    if t == "f64":
        ok |= np.isnan(got.view(np.float64)) & np.isnan(want.view(np.float64))
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, "lanes " + ", ".join(
        f"{i}: got {g[i]:#x} ({got.view(_NP[t])[i]!r}) want {w[i]:#x} ({want.view(_NP[t])[i]!r})"
        for i in bad[:6])


# ------------------------------------------------------------------------------------------------
# Value strategies: raw bit patterns plus the edges of each format
# ------------------------------------------------------------------------------------------------

_EDGE32 = [0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x00800001, 0x7F7FFFFF,
           0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFC00001, 0x3F800000,
           0xBF800000, 0x3F800001, 0x3F7FFFFF, 0x40000000, 0x4B000000, 0x33800000, 0x34000000,
           0x0C000000, 0x7E800000, 0x00400000]
_EDGE64 = [0, 1 << 63, 1, 0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
           0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x3FF0000000000000,
           0xBFF0000000000000, 0x3FF0000000000001, 0x3FEFFFFFFFFFFFFF, 0x3CA0000000000000,
           0x0360000000000000, 0x7C90000000000000, 0x0000000000000003]


def _near(width: int, bias: int, mbits: int, spread: int) -> st.SearchStrategy[int]:
    """Floats with exponents near 0 (so sums and products of them interact)."""
    return st.builds(lambda s, e, m: (s << (width - 1)) | ((bias + e) << mbits) | m,
                     st.integers(0, 1), st.integers(-spread, spread), st.integers(0, (1 << mbits) - 1))


def _elements(t: str) -> st.SearchStrategy[int]:
    if t == "f32":
        return st.one_of(st.sampled_from(_EDGE32), st.integers(0, 2**32 - 1), _near(32, 127, 23, 30),
                         _near(32, 127, 23, 3))
    return st.one_of(st.sampled_from(_EDGE64), st.integers(0, 2**64 - 1), _near(64, 1023, 52, 60),
                     _near(64, 1023, 52, 3))


def floats(t: str) -> st.SearchStrategy[np.ndarray]:
    return arrays(_UINT[t], LANES, elements=_elements(t)).map(lambda b: b.view(_NP[t]))


# ------------------------------------------------------------------------------------------------
# IEEE operations, every rounding mode, bit-exact
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@SETTINGS
@given(data=st.data())
def test_add_sub_mul(op: str, mode: str, t: str, data: st.DataObject) -> None:
    x, y = data.draw(floats(t)), data.draw(floats(t))
    got = run(f"{op}.{mode}.{t} %o0, %i0, %i1;", [(t, x), (t, y)], t)
    same_bits(got, oracle(op, t, mode, [x, y]), t)


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(data=st.data())
def test_fma(t: str, mode: str, data: st.DataObject) -> None:
    x, y, z = (data.draw(floats(t)) for _ in range(3))
    got = run(f"fma.{mode}.{t} %o0, %i0, %i1, %i2;", [(t, x), (t, y), (t, z)], t)
    same_bits(got, oracle("fma", t, mode, [x, y, z]), t)


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("mode", MODES)
@SETTINGS
@given(data=st.data())
def test_div_rcp_sqrt(t: str, mode: str, data: st.DataObject) -> None:
    x, y = data.draw(floats(t)), data.draw(floats(t))
    got = run(f"div.{mode}.{t} %o0, %i0, %i1;", [(t, x), (t, y)], t)
    same_bits(got, oracle("div", t, mode, [x, y]), t)
    got = run(f"rcp.{mode}.{t} %o0, %i0;", [(t, x)], t)
    same_bits(got, oracle("rcp", t, mode, [x]), t)
    got = run(f"sqrt.{mode}.{t} %o0, %i0;", [(t, x)], t)
    same_bits(got, oracle("sqrt", t, mode, [x]), t)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "fma", "mad"])
@pytest.mark.parametrize("mods", [".rn.ftz", ".rz.ftz.sat", ".rn.sat", ".rm.ftz", ".rp.sat"])
@SETTINGS
@given(data=st.data())
def test_ftz_sat_f32(op: str, mods: str, data: st.DataObject) -> None:
    n = 3 if op in ("fma", "mad") else 2
    xs = [data.draw(floats("f32")) for _ in range(n)]
    regs = ", ".join(f"%i{k}" for k in range(n))
    got = run(f"{op}{mods}.f32 %o0, {regs};", [("f32", x) for x in xs], "f32")
    mode = mods.split(".")[1]
    want = oracle("fma" if op == "mad" else op, "f32", mode, xs, ftz="ftz" in mods, sat="sat" in mods)
    same_bits(got, want, "f32")


@pytest.mark.parametrize("body,op,n", [
    ("div.rn.ftz.f32 %o0, %i0, %i1;", "div", 2), ("div.rz.ftz.f32 %o0, %i0, %i1;", "div", 2),
    ("sqrt.rp.ftz.f32 %o0, %i0;", "sqrt", 1), ("rcp.rm.ftz.f32 %o0, %i0;", "rcp", 1)])
@SETTINGS
@given(data=st.data())
def test_ftz_div_sqrt_rcp(body: str, op: str, n: int, data: st.DataObject) -> None:
    xs = [data.draw(floats("f32")) for _ in range(n)]
    got = run(body, [("f32", x) for x in xs], "f32")
    same_bits(got, oracle(op, "f32", body.split(".")[1], xs, ftz=True), "f32")


def test_default_rounding_is_nearest() -> None:
    """No rounding modifier: add/sub/mul round to nearest (never fused); legacy mad.f32 is fma.rn."""
    r = np.random.default_rng(7)
    x, y, z = (r.standard_normal(LANES).astype(np.float32) for _ in range(3))
    for op in ("add", "sub", "mul"):
        got = run(f"{op}.f32 %o0, %i0, %i1;", [("f32", x), ("f32", y)], "f32")
        same_bits(got, oracle(op, "f32", "rn", [x, y]), "f32")
    got = run("mad.f32 %o0, %i0, %i1, %i2;", [("f32", x), ("f32", y), ("f32", z)], "f32")
    same_bits(got, oracle("fma", "f32", "rn", [x, y, z]), "f32")


# ------------------------------------------------------------------------------------------------
# fma.rn.f32 fast path: the lanes where rounding p + c in f64 first would be wrong
# ------------------------------------------------------------------------------------------------


def _double_rounding_cases(r: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """a*b + c exactly a hair off an f32 midpoint, so that RN64 lands on the midpoint."""
    c_bits = (r.integers(0x0D000000, 0x7E000000, n) | 1).astype(np.uint32)  # odd mantissas
    c = c_bits.view(np.float32)
    ulp = np.spacing(np.abs(c)).astype(np.float64)
    s = r.choice([-1.0, 1.0], n)
    # (1 + 2^-23) * (1 - 2^-23) = 1 - 2^-46: the product is half an ulp minus a tiny bit
    a = (s * ulp / 2 * (1 + 2.0**-23)).astype(np.float32)
    b = np.full(n, 1 - 2.0**-23, dtype=np.float32)
    c = np.where(s < 0, -c, c).astype(np.float32) * np.float32(1)
    # the subnormal boundary: max subnormal (odd) + 2^-150 (1 - 2^-46)
    a[:4] = np.float32(2.0**-75 * (1 + 2.0**-23))
    b[:4] = np.float32(2.0**-75 * (1 - 2.0**-23))
    c[:4] = np.array([0x007FFFFF, 0x007FFFFD, 0x00000001, 0x00000003], np.uint32).view(np.float32)
    return a, b, c


def test_fma_rn_f32_double_rounding_lanes() -> None:
    r = np.random.default_rng(1)
    a, b, c = _double_rounding_cases(r, LANES)
    with np.errstate(all="ignore"):
        naive = (a.astype(np.float64) * b + c).astype(np.float32)
    want = oracle("fma", "f32", "rn", [a, b, c])
    assert (naive.view(np.uint32) != want).sum() > LANES // 2  # the naive way is wrong here
    got = run("fma.rn.f32 %o0, %i0, %i1, %i2;", [("f32", a), ("f32", b), ("f32", c)], "f32")
    same_bits(got, want, "f32")
    got = run("fma.rn.ftz.f32 %o0, %i0, %i1, %i2;", [("f32", a), ("f32", b), ("f32", c)], "f32")
    same_bits(got, oracle("fma", "f32", "rn", [a, b, c], ftz=True), "f32")


def test_fma_rn_f32_fast_path_matches_exact_path() -> None:
    """Many lanes at once through the vectorized fast path vs. the round-to-odd path."""
    r = np.random.default_rng(2)
    n = 20000
    parts = [_double_rounding_cases(r, 2000)]
    u = r.integers(0, 2**32, (3, n - 2000), dtype=np.uint64).astype(np.uint32).view(np.float32)
    parts.append(tuple(u))
    a, b, c = (np.concatenate([p[k] for p in parts]) for k in range(3))
    got = run("fma.rn.f32 %o0, %i0, %i1, %i2;", [("f32", a), ("f32", b), ("f32", c)], "f32")
    with np.errstate(all="ignore"):
        want = floating.fma32(a, b, c, "rn")
    want = np.where(np.isnan(want), np.uint32(CANON32).view(np.float32), want)
    same_bits(got, want.astype(np.float32), "f32")
    idx = r.choice(n, 300, replace=False)  # and the exact path against the rational oracle
    same_bits(want[idx].astype(np.float32), oracle("fma", "f32", "rn", [a[idx], b[idx], c[idx]]), "f32")


def test_fma_f64_extreme_magnitudes() -> None:
    """Boldo-Melquiond's out-of-range lanes (tiny/huge products, subnormal results, overflow)."""
    tiny, huge = 2.0**-1074, 2.0**1000
    rows = [(tiny, 0.5, tiny), (2.0**-600, 2.0**-500, 2.0**-1070), (2.0**-537, 2.0**-537, -2.0**-1074),
            (huge, 2.0**30, -huge), (2.0**1023, 2.0, -2.0**1023), (2.0**1023, 1.5, 2.0**1023),
            (1 + 2.0**-52, 1 - 2.0**-52, -1.0), (3.0, 2.0**-1070, 2.0**-1074), (0.0, np.inf, 1.0),
            (2.0**600, 2.0**600, -np.inf), (-0.0, 5.0, 0.0), (2.0**-1000, 2.0**-60, 1.0),
            (np.nan, 0.0, 1.0), (1e308, 10.0, -np.inf), (1e-300, 1e-300, 0.0), (2.0**-1022, 0.5, 0.0)]
    x, y, z = (np.array(c, dtype=np.float64) for c in zip(*rows))
    for mode in MODES:
        got = run(f"fma.{mode}.f64 %o0, %i0, %i1, %i2;", [("f64", x), ("f64", y), ("f64", z)], "f64")
        same_bits(got, oracle("fma", "f64", mode, [x, y, z]), "f64")


# ------------------------------------------------------------------------------------------------
# NaNs, predication, literals, copysign
# ------------------------------------------------------------------------------------------------


def test_f32_nan_results_are_canonical() -> None:
    x = np.array([np.inf, 0.0, np.nan, -1.0, np.inf, 0.0], np.float32)
    y = np.array([-np.inf, 0.0, 1.0, 0.5, 0.0, np.inf], np.float32)
    for body in ("add.f32 %o0, %i0, %i1;", "mul.rn.f32 %o0, %i0, %i1;", "div.rn.f32 %o0, %i0, %i1;",
                 "fma.rn.f32 %o0, %i0, %i1, %i1;", "sub.rz.f32 %o0, %i0, %i0;"):
        ins = [("f32", x), ("f32", y)]
        got = run(body, ins, "f32")
        nan = np.isnan(got)
        assert nan.any() and (got.view(np.uint32)[nan] == CANON32).all(), body
    got = run("sqrt.rn.f32 %o0, %i0;", [("f32", np.float32([-1, -np.inf, np.nan, 4]))], "f32")
    assert got.view(np.uint32).tolist()[:3] == [CANON32] * 3 and got[3] == 2


@pytest.mark.parametrize("body,n", [("fma.rn.f32 %o0, %i1, %i2, %i3;", 3), ("add.f32 %o0, %i1, %i2;", 2),
                                    ("div.rz.f64 %o0, %i1, %i2;", 2), ("sqrt.approx.f32 %o0, %i1;", 1)])
def test_guarded_lanes_keep_their_value(body: str, n: int) -> None:
    t = "f64" if ".f64" in body else "f32"
    r = np.random.default_rng(3)
    xs = [r.standard_normal(LANES).astype(_NP[t]) + 2 for _ in range(n)]
    p = r.random(LANES) < 0.5
    init = np.full(LANES, 12345.0, _NP[t])
    got = run(f"@%i0 {body}", [("pred", p)] + [(t, x) for x in xs], t, init=init)
    full = run(body, [("pred", p)] + [(t, x) for x in xs], t)
    assert (got[~p] == 12345.0).all()
    same_bits(got[p], full[p], t)


def test_float_literals() -> None:
    x = np.arange(LANES, dtype=np.float32)
    got = run("fma.rn.f32 %o0, %i0, 0f40000000, 0f3F800000;", [("f32", x)], "f32")
    assert (got == 2 * x + 1).all()
    got = run("mul.rn.f32 %o0, %i0, 0d3FB999999999999A;", [("f32", x)], "f32")  # 0.1 as f64 -> f32
    assert (got == x * np.float32(0.1)).all()
    got = run("add.rn.f64 %o0, %i0, 0d3FF0000000000000;", [("f64", x.astype(np.float64))], "f64")
    assert (got == x + 1).all()


def test_copysign() -> None:
    a = np.array([1.0, -1.0, 0.0, -0.0, np.nan, -np.inf] * 2, np.float32)
    b = np.array([-2.0, 3.0, -0.0, 5.0, -1.0, np.nan] * 2, np.float32)
    got = run("copysign.f32 %o0, %i0, %i1;", [("f32", a), ("f32", b)], "f32")
    want = (b.view(np.uint32) & 0x7FFFFFFF) | (a.view(np.uint32) & 0x80000000)
    assert (got.view(np.uint32) == want).all()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    got = run("copysign.f64 %o0, %i0, %i1;", [("f64", a64), ("f64", b64)], "f64")
    assert (np.signbit(got) == np.signbit(a)).all()
    assert np.array_equal(np.abs(got), np.abs(b64), equal_nan=True)


# ------------------------------------------------------------------------------------------------
# .approx operations: within the PTX ISA's documented bounds, special values exact
# ------------------------------------------------------------------------------------------------


def _approx_inputs(lo: float, hi: float, n: int = 512) -> np.ndarray:
    r = np.random.default_rng(4)
    return r.uniform(lo, hi, n).astype(np.float32)


@pytest.mark.parametrize("body,fn,lo,hi,kind,bound", [
    ("sin.approx.f32", np.sin, -2 * np.pi, 2 * np.pi, "abs", 2.0**-20.5),
    ("cos.approx.ftz.f32", np.cos, -2 * np.pi, 2 * np.pi, "abs", 2.0**-20.5),
    ("lg2.approx.f32", np.log2, 0.5, 2.0, "abs", 2.0**-22),
    ("lg2.approx.ftz.f32", np.log2, 2.0, 1e30, "rel", 2.0**-22),
    ("ex2.approx.f32", np.exp2, -125.0, 127.0, "ulp", 2),
    ("ex2.approx.ftz.f32", np.exp2, -10.0, 10.0, "ulp", 2),
    ("tanh.approx.f32", np.tanh, -10.0, 10.0, "rel", 2.0**-11),
    ("rsqrt.approx.f32", lambda x: 1 / np.sqrt(x), 1e-30, 1e30, "rel", 2.0**-22.9),
    ("rcp.approx.f32", lambda x: 1 / x, -1e30, 1e30, "ulp", 1),
    ("rcp.approx.ftz.f32", lambda x: 1 / x, 1e-3, 1e3, "ulp", 1),
    ("sqrt.approx.f32", np.sqrt, 0.0, 1e30, "rel", 2.0**-23),
])
def test_approx_within_documented_bounds(body: str, fn: Any, lo: float, hi: float, kind: str,
                                         bound: float) -> None:
    x = _approx_inputs(lo, hi)
    got = run(f"{body} %o0, %i0;", [("f32", x)], "f32").astype(np.float64)
    want = fn(x.astype(np.float64))
    if kind == "abs":
        err = np.abs(got - want)
    elif kind == "rel":
        err = np.abs(got - want) / np.abs(want)
    else:
        err = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert err.max() <= bound, (body, float(err.max()))


def test_div_approx_and_full() -> None:
    r = np.random.default_rng(5)
    a = r.standard_normal(256).astype(np.float32) * 1e3
    b = r.standard_normal(256).astype(np.float32)
    for body in ("div.approx.f32", "div.full.f32", "div.full.ftz.f32", "div.approx.ftz.f32"):
        got = run(f"{body} %o0, %i0, %i1;", [("f32", a), ("f32", b)], "f32")
        want = (a.astype(np.float64) / b).astype(np.float32)
        ulps = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32))
        assert ulps.max() <= 2, body
    # div.approx computes a * (1/b): for 2^126 < |b| < 2^128 that is 0 (or NaN for a = inf)
    a = np.float32([1.0, -3.0, np.inf, 5.0])
    b = np.float32([2.0**127, 2.0**127, 2.0**127, -2.0**126 * 1.5])
    got = run("div.approx.f32 %o0, %i0, %i1;", [("f32", a), ("f32", b)], "f32")
    assert got[0] == 0 and not np.signbit(got[0]) and np.signbit(got[1]) and np.isnan(got[2])
    assert got[3] == 0 and np.signbit(got[3])


@pytest.mark.parametrize("body,table", [
    ("sin.approx.f32", [(-np.inf, np.nan), (-0.0, -0.0), (0.0, 0.0), (np.inf, np.nan), (np.nan, np.nan)]),
    ("cos.approx.f32", [(-np.inf, np.nan), (-0.0, 1.0), (0.0, 1.0), (np.inf, np.nan)]),
    ("lg2.approx.f32", [(-np.inf, np.nan), (-1.0, np.nan), (-0.0, -np.inf), (0.0, -np.inf),
                        (np.inf, np.inf)]),
    ("ex2.approx.f32", [(-np.inf, 0.0), (-0.0, 1.0), (0.0, 1.0), (np.inf, np.inf), (np.nan, np.nan)]),
    ("tanh.approx.f32", [(-np.inf, -1.0), (-0.0, -0.0), (0.0, 0.0), (np.inf, 1.0), (1e-40, 1e-40)]),
    ("rsqrt.approx.f32", [(-np.inf, np.nan), (-1.0, np.nan), (-0.0, -np.inf), (0.0, np.inf), (np.inf, 0.0)]),
    ("rcp.approx.f32", [(-np.inf, -0.0), (-0.0, -np.inf), (0.0, np.inf), (np.inf, 0.0)]),
    ("sqrt.approx.f32", [(-np.inf, np.nan), (-1.0, np.nan), (-0.0, -0.0), (0.0, 0.0), (np.inf, np.inf)]),
])
def test_approx_special_values(body: str, table: list[tuple[float, float]]) -> None:
    x = np.array([k for k, _ in table], np.float32)
    got = run(f"{body} %o0, %i0;", [("f32", x)], "f32")
    want = np.array([v for _, v in table], np.float32)
    nan = np.isnan(want)
    assert (got.view(np.uint32)[nan] == CANON32).all(), body
    assert (got[~nan] == want[~nan]).all() and (np.signbit(got[~nan]) == np.signbit(want[~nan])).all(), body


def test_approx_f64_forms() -> None:
    x = np.array([4.0, 0.25, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 3.0, -2.0], np.float64)
    got = run("rcp.approx.ftz.f64 %o0, %i0;", [("f64", x)], "f64")
    gb = got.view(np.uint64)
    assert (gb & 0xFFFFFFFF == 0).all()  # the low word of the result is zero
    assert got[0] == 0.25 and got[1] == 4.0 and got[2] == -np.inf and got[3] == np.inf
    assert got[4] == 0 and got[5] == 0 and np.signbit(got[5]) and gb[6] == 0x7FFFFFFF00000000
    assert got[7] == np.inf and got[8] == -np.inf and abs(got[9] - 1 / 3) < 2.0**-20
    got = run("rsqrt.approx.ftz.f64 %o0, %i0;", [("f64", x)], "f64")
    assert got[0] == 0.5 and got[1] == 2.0 and got[2] == -np.inf and got[4] == 0
    assert np.isnan(got[5]) and got.view(np.uint64)[6] == 0x7FFFFFFF00000000 and got[8] == -np.inf
    assert np.isnan(got[10])
    got = run("rsqrt.approx.f64 %o0, %i0;", [("f64", x)], "f64")
    assert abs(got[9] - 1 / np.sqrt(3.0)) < 1e-15


# ------------------------------------------------------------------------------------------------
# Lowering: counters, rejected forms, and the family handing other types on
# ------------------------------------------------------------------------------------------------


def test_unsupported_and_malformed_forms_are_rejected() -> None:
    regs = (".reg .f32 %f<4>;", ".reg .f64 %d<4>;", ".reg .b64 %r<4>;")
    ptx_harness.assert_load_fails(cuda.UnsupportedInstruction, regs, ["add.rn.f32x2 %r1, %r2, %r3;"])
    ptx_harness.assert_load_fails(cuda.PTXSyntaxError, regs, [
        "fma.f32 %f1, %f2, %f3, %f1;", "add.rn.rz.f32 %f1, %f2, %f3;", "add.ftz.f64 %d1, %d2, %d3;",
        "div.approx.rn.f32 %f1, %f2, %f3;", "add.f32 %f1, %f2;"])
    ptx_harness.launch_entry(*regs, "add.rn.f32 %f1, %f2, %f3;\nadd.s64 %r1, %r2, %r3;\nmul.lo.s64 %r1, %r2, %r3;")


def test_counters_classes_and_flops() -> None:
    x = np.ones(LANES, np.float32)
    body = "fma.rn.f32 %o0, %i0, %i1, %o0;\nex2.approx.f32 %o0, %o0;\nadd.f64 %i2, %i2, %i2;"
    _, rep = ptx_harness.launch_lanes(body, [("f32", x), ("f32", x), ("f64", x.astype(np.float64))],
                                      [("f32", x)], _NP)
    c = rep.counters
    assert c.flops["fp32"] == 2 * LANES and c.flops["fp64"] == LANES
    assert c.thread_instructions["sfu"] == LANES


def test_nvrtc_intrinsics_end_to_end() -> None:
    """CUDA C++ rounding intrinsics compiled by NVRTC reach these lowerings and agree bit-exactly."""
    mod = cuda.compile(r'''extern "C" __global__ void k(const float* a, const float* b, const float* c,
                                                        float* o, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
        o[i] = __fmaf_rz(a[i], b[i], c[i]); o[n + i] = __fdiv_ru(a[i], b[i]);
        o[2 * n + i] = __fsqrt_rd(fabsf(a[i])); o[3 * n + i] = __fadd_rd(a[i], c[i]); }''')
    r = np.random.default_rng(6)
    a, b, c = (r.standard_normal(256).astype(np.float32) * 10 for _ in range(3))
    o = cuda.zeros(4 * 256, np.float32)
    mod.get_function("k")((2,), (128,), (cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), o,
                                         np.int32(256)))
    got = o.get().reshape(4, 256)
    same_bits(got[0], oracle("fma", "f32", "rz", [a, b, c]), "f32")
    same_bits(got[1], oracle("div", "f32", "rp", [a, b]), "f32")
    same_bits(got[2], oracle("sqrt", "f32", "rm", [np.abs(a)]), "f32")
    same_bits(got[3], oracle("add", "f32", "rm", [a, c]), "f32")
