# Property tests of the half-precision family (strata/hw/isa/half.py): f16/f16x2/bf16/bf16x2
# add, sub, mul, fma with .ftz/.sat/.relu against exact rational oracles rounded once, and
# ex2/tanh.approx within the PTX ISA bounds, run through hand-written PTX kernels.
"""Half-precision instructions of the virtual GPU on raw 16/32-bit register bits."""

from __future__ import annotations

import math
from collections.abc import Sequence
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
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_NP: dict[str, Any] = {"b16": np.uint16, "b32": np.uint32, "pred": np.bool_}
FORMATS = {"f16": (11, -14, 15), "bf16": (8, -126, 127)}
CANON = 0x7FFF

# ------------------------------------------------------------------------------------------------
# Harness (ptx_harness)
# ------------------------------------------------------------------------------------------------


def run(body: str, ins: Sequence[tuple[str, Any]], out: str, init: Any = None) -> np.ndarray:
    """Run `body` (writing %o0) over lanes; inputs (type, array). Returns %o0 per lane."""
    return ptx_harness.run_lanes(body, ins, [(out, init)], _NP)[0]


# ------------------------------------------------------------------------------------------------
# Oracle
# ------------------------------------------------------------------------------------------------


def decode(et: str, b: int) -> float:
    if et == "f16":
        return float(np.uint16(b).view(np.float16))
    return float((np.uint32(b) << np.uint32(16)).view(np.float32))


def encode(et: str, v: float) -> int:
    """Bits of a value exactly representable in et (NaN -> canonical)."""
    if math.isnan(v):
        return CANON
    if et == "f16":
        return int(np.float16(v).view(np.uint16))
    return int(np.array(v, dtype=ml_dtypes.bfloat16).view(np.uint16))


def round_rn(q: Fraction, et: str) -> float:
    """Round a nonzero rational to nearest-even in et; inf on overflow; signed zero on underflow."""
    p, emin, emax = FORMATS[et]
    neg = q < 0
    a = abs(q)
    e = math.floor(math.log2(a.numerator)) - math.floor(math.log2(a.denominator)) + 1
    while Fraction(2) ** e > a:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    m, rem = divmod(a, quantum)
    if rem * 2 > quantum or (rem * 2 == quantum and m % 2 == 1):
        m += 1
    v = m * quantum
    top = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    f = math.inf if v > top else float(v)
    return -f if neg else f


def elem_oracle(op: str, et: str, xs: Sequence[int], ftz: bool, sat: bool, relu: bool) -> int:
    v = [decode(et, b) for b in xs]
    tiny = 2.0 ** FORMATS[et][1]
    if ftz:
        v = [math.copysign(0.0, x) if abs(x) < tiny else x for x in v]
    if any(math.isnan(x) for x in v):
        r = math.nan
    elif not all(math.isfinite(x) for x in v):
        with np.errstate(all="ignore"):
            x = [np.float64(t) for t in v]
            r = float({"add": lambda: x[0] + x[1], "sub": lambda: x[0] - x[1], "mul": lambda: x[0] * x[1],
                       "fma": lambda: x[0] * x[1] + x[2]}[op]())
    else:
        f = [Fraction(x) for x in v]
        q = {"add": lambda: f[0] + f[1], "sub": lambda: f[0] - f[1], "mul": lambda: f[0] * f[1],
             "fma": lambda: f[0] * f[1] + f[2]}[op]()
        if q == 0:  # exact zero: IEEE sign rules in round-to-nearest
            if op == "mul":
                r = -0.0 if math.copysign(1, v[0]) * math.copysign(1, v[1]) < 0 else 0.0
            else:
                if op == "fma":
                    pneg = math.copysign(1, v[0]) * math.copysign(1, v[1]) < 0
                    t1 = (0.0 if v[0] * v[1] == 0 else 1.0, pneg)
                    t2 = (v[2], math.copysign(1, v[2]) < 0)
                else:
                    t1 = (v[0], math.copysign(1, v[0]) < 0)
                    t2 = (v[1], (math.copysign(1, v[1]) < 0) != (op == "sub"))
                same = t1[0] == 0 and t2[0] == 0 and t1[1] == t2[1]
                r = -0.0 if same and t1[1] else 0.0
        else:
            r = round_rn(q, et)
            r = r if r != 0 else math.copysign(0.0, q)
    if ftz and abs(r) < tiny:
        r = math.copysign(0.0, r)
    if sat:
        r = 0.0 if (math.isnan(r) or r <= 0) else min(r, 1.0)
    if relu and not math.isnan(r) and (r < 0 or math.copysign(1, r) < 0):
        r = 0.0
    return encode(et, r)


def oracle(op: str, t: str, cols: Sequence[np.ndarray], ftz: bool = False, sat: bool = False,
           relu: bool = False) -> np.ndarray:
    et = t.removesuffix("x2")
    if not t.endswith("x2"):
        return np.array([elem_oracle(op, et, [int(c[i]) for c in cols], ftz, sat, relu)
                         for i in range(len(cols[0]))], dtype=np.uint16)
    lo = oracle(op, et, [c & 0xFFFF for c in cols], ftz, sat, relu).astype(np.uint32)
    hi = oracle(op, et, [c >> 16 for c in cols], ftz, sat, relu).astype(np.uint32)
    return lo | (hi << 16)


def check(got: np.ndarray, want: np.ndarray) -> None:
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, ", ".join(f"lane {i}: got {int(got[i]):#x} want {int(want[i]):#x}" for i in bad[:8])


# ------------------------------------------------------------------------------------------------
# Strategies
# ------------------------------------------------------------------------------------------------

_EDGE16 = {"f16": [0, 0x8000, 1, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
                   0x3C00, 0xBC00, 0x3C01, 0x3BFF, 0x3800, 0x4000, 0x1400, 0x5BFF],
           "bf16": [0, 0x8000, 1, 0x8001, 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81,
                    0x3F80, 0xBF80, 0x3F81, 0x3F7F, 0x3F00, 0x4000, 0x3C00, 0x4300]}


def _near(et: str) -> st.SearchStrategy[int]:
    bias, mb = (15, 10) if et == "f16" else (127, 7)
    lo = -min(bias - 1, 12)
    return st.builds(lambda s, e, m: (s << 15) | ((bias + e) << mb) | m, st.integers(0, 1),
                     st.integers(lo, min(bias, 12)), st.integers(0, (1 << mb) - 1))


def halves(et: str) -> st.SearchStrategy[np.ndarray]:
    el = st.one_of(st.sampled_from(_EDGE16[et]), st.integers(0, 0xFFFF), _near(et))
    return arrays(np.uint16, LANES, elements=el)


def values(t: str) -> st.SearchStrategy[np.ndarray]:
    et = t.removesuffix("x2")
    if not t.endswith("x2"):
        return halves(et)
    return st.tuples(halves(et), halves(et)).map(
        lambda p: p[0].astype(np.uint32) | (p[1].astype(np.uint32) << 16))


def _reg(t: str) -> str:
    return "b32" if t.endswith("x2") else "b16"


# ------------------------------------------------------------------------------------------------
# Arithmetic: bit-exact
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("t", ["f16", "f16x2", "bf16", "bf16x2"])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@SETTINGS
@given(data=st.data())
def test_add_sub_mul(t: str, op: str, data: st.DataObject) -> None:
    x, y = data.draw(values(t)), data.draw(values(t))
    r = _reg(t)
    for mods in ("", ".rn"):
        got = run(f"{op}{mods}.{t} %o0, %i0, %i1;", [(r, x), (r, y)], r)
        check(got, oracle(op, t, [x, y]))


@pytest.mark.parametrize("t", ["f16", "f16x2"])
@pytest.mark.parametrize("op,mods", [("add", ".ftz"), ("sub", ".sat"), ("mul", ".rn.ftz.sat"),
                                     ("fma", ".rn.ftz"), ("fma", ".rn.sat"), ("fma", ".rn.ftz.relu")])
@SETTINGS
@given(data=st.data())
def test_f16_modifiers(t: str, op: str, mods: str, data: st.DataObject) -> None:
    n = 3 if op == "fma" else 2
    xs = [data.draw(values(t)) for _ in range(n)]
    r = _reg(t)
    regs = ", ".join(f"%i{k}" for k in range(n))
    got = run(f"{op}{mods}.{t} %o0, {regs};", [(r, x) for x in xs], r)
    check(got, oracle(op, t, xs, ftz="ftz" in mods, sat="sat" in mods, relu="relu" in mods))


@pytest.mark.parametrize("t", ["f16", "f16x2", "bf16", "bf16x2"])
@pytest.mark.parametrize("relu", [False, True])
@SETTINGS
@given(data=st.data())
def test_fma(t: str, relu: bool, data: st.DataObject) -> None:
    xs = [data.draw(values(t)) for _ in range(3)]
    r = _reg(t)
    got = run(f"fma.rn{'.relu' if relu else ''}.{t} %o0, %i0, %i1, %i2;", [(r, x) for x in xs], r)
    check(got, oracle("fma", t, xs, relu=relu))


def test_fma_single_rounding() -> None:
    """a*b + c where rounding the product or the sum separately would be wrong."""
    one_ulp = 2.0**-10
    a = np.full(LANES, np.float16(1 + one_ulp)).view(np.uint16)
    b = np.full(LANES, np.float16(1 - one_ulp)).view(np.uint16)  # a*b = 1 - 2^-20
    c = np.full(LANES, np.float16(-1.0)).view(np.uint16)
    got = run("fma.rn.f16 %o0, %i0, %i1, %i2;", [("b16", a), ("b16", b), ("b16", c)], "b16")
    assert (got == np.float16(-(2.0**-20)).view(np.uint16)).all()  # exact: -2^-20 is a subnormal f16
    # f16 midpoint + tiny: 2048 + 1 (a tie) + 2^-10 * 2^-10 must round up, not to even
    a = np.full(LANES, np.float16(1 + one_ulp)).view(np.uint16)
    b = np.full(LANES, np.float16(1 + one_ulp)).view(np.uint16)  # a*b = 1 + 2^-9 + 2^-20
    c = np.full(LANES, np.float16(2048.0)).view(np.uint16)
    got = run("fma.rn.f16 %o0, %i0, %i1, %i2;", [("b16", a), ("b16", b), ("b16", c)], "b16")
    check(got, oracle("fma", "f16", [a, b, c]))
    assert (got == np.float16(2050.0).view(np.uint16)).all()


def test_nan_results_are_canonical() -> None:
    x = np.array([0x7C00, 0x7E01, 0x0000, 0xFE00] * 16, np.uint16)
    y = np.array([0xFC00, 0x3C00, 0x7C00, 0x3C00] * 16, np.uint16)
    got = run("add.f16 %o0, %i0, %i1;", [("b16", x), ("b16", y)], "b16")
    assert (got[0::4] == CANON).all() and (got[1::4] == CANON).all() and (got[3::4] == CANON).all()
    xb = np.array([0x7F80, 0xFFC1, 0x0000, 0x3F80] * 16, np.uint16)  # inf, NaN, 0, 1
    yb = np.array([0x0000, 0x3F80, 0xFF80, 0x7FA0] * 16, np.uint16)  # 0, 1, -inf, sNaN
    got = run("mul.bf16 %o0, %i0, %i1;", [("b16", xb), ("b16", yb)], "b16")
    assert (got == CANON).all()


def test_guard_and_packed_halves() -> None:
    r = np.random.default_rng(0)
    x = r.integers(0, 2**32, LANES, dtype=np.uint64).astype(np.uint32)
    y = r.integers(0, 2**32, LANES, dtype=np.uint64).astype(np.uint32)
    p = r.random(LANES) < 0.5
    got = run("@%i0 add.f16x2 %o0, %i1, %i2;", [("pred", p), ("b32", x), ("b32", y)], "b32",
              init=np.full(LANES, 0xDEADBEEF, np.uint32))
    assert (got[~p] == 0xDEADBEEF).all()
    check(got[p], oracle("add", "f16x2", [x[p], y[p]]))


# ------------------------------------------------------------------------------------------------
# ex2 / tanh approx
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body,et,fn,lo,hi,kind,bound", [
    ("ex2.approx.f16", "f16", np.exp2, -14.0, 15.9, "rel", 2.0**-9.9),  # normal results
    ("ex2.approx.ftz.bf16", "bf16", np.exp2, -120.0, 120.0, "rel", 2.0**-7),
    ("tanh.approx.f16", "f16", np.tanh, -8.0, 8.0, "abs", 2.0**-10.987),
    ("tanh.approx.bf16", "bf16", np.tanh, -8.0, 8.0, "abs", 2.0**-8),
])
def test_half_approx(body: str, et: str, fn: Any, lo: float, hi: float, kind: str, bound: float) -> None:
    r = np.random.default_rng(1)
    v = r.uniform(lo, hi, 256)
    if et == "f16":
        xb = v.astype(np.float16).view(np.uint16)
    else:
        xb = v.astype(ml_dtypes.bfloat16).view(np.uint16)
    xf = np.array([decode(et, int(b)) for b in xb])
    want = fn(xf)
    for t in (et, et + "x2"):
        xin = xb if t == et else (xb.astype(np.uint32) | (xb[::-1].astype(np.uint32) << 16))
        got = run(f"{body.replace('.' + et, '.' + t)} %o0, %i0;", [(_reg(t), xin)], _reg(t))
        lo_bits = got if t == et else (got & 0xFFFF)
        g = np.array([decode(et, int(b)) for b in lo_bits])
        err = np.abs(g - want) / (np.abs(want) if kind == "rel" else 1.0)
        assert err.max() <= bound, (t, float(err.max()))
    specials = np.array([0x7C00, 0xFC00, 0x0000, 0x8000, 0x7E00] if et == "f16"
                        else [0x7F80, 0xFF80, 0x0000, 0x8000, 0x7FC0], np.uint16)
    got = run(f"{body} %o0, %i0;", [("b16", specials)], "b16")
    inf, one = (0x7C00, 0x3C00) if et == "f16" else (0x7F80, 0x3F80)
    if body.startswith("ex2"):
        assert got.tolist() == [inf, 0, one, one, CANON]
    else:
        assert got.tolist() == [one, 0x8000 | one, 0, 0x8000, CANON]


def test_ex2_bf16_ftz_flushes_subnormals() -> None:
    x = np.array([0x0001, 0x8001, 0x007F], np.uint16)  # bf16 subnormals -> 2^0 = 1
    got = run("ex2.approx.ftz.bf16 %o0, %i0;", [("b16", x)], "b16")
    assert (got == 0x3F80).all()
    got = run("ex2.approx.ftz.bf16 %o0, %i0;", [("b16", np.array([0xC300], np.uint16))], "b16")  # 2^-128
    assert got[0] == 0


# ------------------------------------------------------------------------------------------------
# Lowering and end to end through NVRTC
# ------------------------------------------------------------------------------------------------


def test_rejected_forms_and_counters() -> None:
    regs = (".reg .b16 %h<4>;", ".reg .b32 %r<4>;")
    ptx_harness.assert_load_fails(cuda.UnsupportedInstruction, regs, [
        "add.ftz.bf16 %h1, %h2, %h3;", "add.rz.f16 %h1, %h2, %h3;", "fma.rn.oob.f16 %h1, %h2, %h3, %h1;"])
    ptx_harness.assert_load_fails(cuda.PTXSyntaxError, regs, [
        "fma.f16 %h1, %h2, %h3, %h1;", "fma.rn.sat.relu.f16 %h1, %h2, %h3, %h1;", "ex2.f16 %h1, %h2;"])
    x = np.full(LANES, 0x3C003C00, np.uint32)
    (out,), rep = ptx_harness.launch_lanes("fma.rn.f16x2 %o0, %i0, %i0, %i0;\nadd.f16x2 %o0, %o0, %i0;",
                                           [("b32", x)], [("b32", None)], _NP)
    assert rep.counters.flops["fp16"] == 6 * LANES
    assert (out == 0x42004200).all()  # 1*1+1 = 2, + 1 = 3


def test_nvrtc_half_intrinsics() -> None:
    mod = cuda.compile(r'''#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void k(const float* a, const float* b, float* o, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= n) return;
    __half x = __float2half_rn(a[i]), y = __float2half_rn(b[i]);
    o[i] = __half2float(__hfma(x, y, x));
    __half2 p = __halves2half2(x, y);
    __half2 q = __hmul2(p, p);
    o[n + i] = __high2float(q) + __low2float(q);
    __nv_bfloat16 u = __float2bfloat16_rn(a[i]), v = __float2bfloat16_rn(b[i]);
    o[2 * n + i] = __bfloat162float(__hfma(u, v, u));
}''')
    r = np.random.default_rng(2)
    a = r.standard_normal(200).astype(np.float32) * 4
    b = r.standard_normal(200).astype(np.float32)
    o = cuda.zeros(600, np.float32)
    mod.get_function("k")((2,), (128,), (cuda.to_device(a), cuda.to_device(b), o, np.int32(200)))
    got = o.get().reshape(3, 200)
    xh, yh = a.astype(np.float16), b.astype(np.float16)
    fma16 = oracle("fma", "f16", [xh.view(np.uint16), yh.view(np.uint16), xh.view(np.uint16)])
    assert np.array_equal(got[0], fma16.view(np.float16).astype(np.float32))
    sq = lambda h: oracle("mul", "f16", [h.view(np.uint16), h.view(np.uint16)]).view(np.float16)  # noqa: E731
    assert np.array_equal(got[1], sq(yh).astype(np.float32) + sq(xh).astype(np.float32))
    xb, yb = a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)
    fmab = oracle("fma", "bf16", [xb.view(np.uint16), yb.view(np.uint16), xb.view(np.uint16)])
    assert np.array_equal(got[2], (fmab.astype(np.uint32) << 16).view(np.float32))
