"""The math functions of strata's AMD device header (hip/amd_math.h, the device library's role) in a HIP kernel on
a virtual MI300X, against NumPy / Python's math in float64: every float function within 2 ulp of the correctly
rounded result, the double ones within a few ulp over wide domains, and the special values
(inf, NaN, zeros, poles) as C's <math.h> defines them."""

from __future__ import annotations

import math
import shutil
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")

RNG = np.random.default_rng(424242)
N = 2048

# name -> (C expression of x and y, NumPy/math oracle in float64, domain of x, domain of y)
F32: dict[str, tuple[str, Callable[..., np.ndarray], tuple[float, float], tuple[float, float]]] = {
    "expf": ("expf(x)", lambda x, y: np.exp(x), (-80, 80), (0, 1)),
    "logf": ("logf(y)", lambda x, y: np.log(y), (0, 1), (1e-30, 1e30)),
    "sinf": ("sinf(x)", lambda x, y: np.sin(x), (-3e38, 3e38), (0, 1)),  # every magnitude (Payne-Hanek)
    "cosf": ("cosf(x)", lambda x, y: np.cos(x), (-3e38, 3e38), (0, 1)),
    "tanf": ("tanf(x)", lambda x, y: np.tan(x), (-1.5, 1.5), (0, 1)),
    "powf": ("powf(y, x)", lambda x, y: np.power(y, x), (-10, 10), (1e-3, 50)),
    "erff": ("erff(x)", lambda x, y: np.vectorize(math.erf)(x), (-4, 4), (0, 1)),
    "tanhf": ("tanhf(x)", lambda x, y: np.tanh(x), (-10, 10), (0, 1)),
    "atan2f": ("atan2f(x, y)", lambda x, y: np.arctan2(x, y), (-100, 100), (-100, 100)),
    "cbrtf": ("cbrtf(x)", lambda x, y: np.cbrt(x), (-1e6, 1e6), (0, 1)),
    "log1pf": ("log1pf(y)", lambda x, y: np.log1p(y), (0, 1), (-0.999, 1e6)),
    "expm1f": ("expm1f(x)", lambda x, y: np.expm1(x), (-20, 20), (0, 1)),
    "asinf": ("asinf(y)", lambda x, y: np.arcsin(y), (0, 1), (-1, 1)),
    "hypotf": ("hypotf(x, y)", lambda x, y: np.hypot(x, y), (-1e3, 1e3), (-1e3, 1e3)),
}
F64: dict[str, tuple[str, Callable[..., np.ndarray], tuple[float, float], tuple[float, float], int]] = {
    "exp": ("exp(x)", lambda x, y: np.exp(x), (-700, 700), (0, 1), 2),
    "log": ("log(y)", lambda x, y: np.log(y), (0, 1), (1e-300, 1e300), 2),
    "sin": ("sin(x)", lambda x, y: np.sin(x), (-1e300, 1e300), (0, 1), 2),
    "cos": ("cos(x)", lambda x, y: np.cos(x), (-1e300, 1e300), (0, 1), 2),
    "tan": ("tan(x)", lambda x, y: np.tan(x), (-1e300, 1e300), (0, 1), 4),
    "tanh": ("tanh(x)", lambda x, y: np.tanh(x), (-20, 20), (0, 1), 4),
    "erf": ("erf(x)", lambda x, y: np.vectorize(math.erf)(x), (-5, 5), (0, 1), 16),  # (near erf = +-1)
    "cbrt": ("cbrt(y)", lambda x, y: np.cbrt(y), (0, 1), (-1e300, 1e300), 2),
    "log1p": ("log1p(y)", lambda x, y: np.log1p(y), (0, 1), (-0.999, 1e10), 2),
    "atan2": ("atan2(x, y)", lambda x, y: np.arctan2(x, y), (-1e3, 1e3), (-1e3, 1e3), 4),
    "pow": ("pow(y, x)", lambda x, y: np.power(y, x), (-60, 60), (1e-5, 1e5), 2),  # |y log x| up to ~690
}


@pytest.fixture(scope="module", autouse=True)
def _mi300x() -> Iterator[None]:
    before = cuda.current_device()
    cuda.set_device(cuda.Device(model="mi300x"))
    try:
        yield
    finally:
        cuda.set_device(before)


def _kernel(exprs: list[str], ctype: str) -> str:
    body = "\n".join(f"  r[{j} * n] = {e};" for j, e in enumerate(exprs))
    return (f'extern "C" __global__ void k(int n, const {ctype}* a, const {ctype}* b, {ctype}* o) {{\n'
            f"  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n"
            f"  {ctype} x = a[i], y = b[i];\n  {ctype}* r = o + i;\n{body}\n}}\n")


def _run(exprs: list[str], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dt = x.dtype
    k = hip.compile(_kernel(exprs, "float" if dt == np.float32 else "double")).get_function("k")
    out = hip.zeros(len(exprs) * len(x), dt)
    k(-(-len(x) // 256), 256, (np.int32(len(x)), hip.to_device(x), hip.to_device(y), out))
    hip.synchronize()
    return out.get().reshape(len(exprs), len(x))


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in units of the last place of `want` (its dtype's spacing at want)."""
    with np.errstate(all="ignore"):
        return np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.spacing(np.abs(want))


def _draw(lo: float, hi: float, dtype: type) -> np.ndarray:
    if lo > 0 and hi / lo > 1e3:  # log-uniform over wide positive ranges
        return np.exp(RNG.uniform(np.log(lo), np.log(hi), N)).astype(dtype)
    if lo < 0 < hi and hi == -lo and hi > 1e3:  # both signs, log-uniform magnitudes
        mag = np.exp(RNG.uniform(np.log(1e-3), np.log(hi), N))
        return (mag * RNG.choice([-1.0, 1.0], N)).astype(dtype)
    return RNG.uniform(lo, hi, N).astype(dtype)


def test_float_functions_are_within_two_ulp() -> None:
    names = list(F32)
    xs = {n: _draw(*F32[n][2], np.float32) for n in names}
    ys = {n: _draw(*F32[n][3], np.float32) for n in names}
    for n in names:  # one kernel per function (each has its own argument domain)
        got = _run([F32[n][0]], xs[n], ys[n])[0]
        want = F32[n][1](xs[n].astype(np.float64), ys[n].astype(np.float64)).astype(np.float32)
        err = _ulps(got, want)
        assert np.nanmax(err) <= 2, f"{n}: {np.nanmax(err):.1f} ulp at x={xs[n][np.nanargmax(err)]!r}"


@pytest.mark.parametrize("name", list(F64))
def test_double_functions_on_their_documented_domains(name: str) -> None:
    expr, oracle, dx, dy, bound = F64[name]
    x, y = _draw(*dx, np.float64), _draw(*dy, np.float64)
    got = _run([expr], x, y)[0]
    want = oracle(x, y)
    err = _ulps(got, want)
    assert np.nanmax(err) <= bound, f"{name}: {np.nanmax(err):.1f} ulp at x={x[np.nanargmax(err)]!r}"


def test_special_values_are_cs() -> None:
    inf, nan = math.inf, math.nan
    x = np.array([0.0, -0.0, inf, -inf, nan, -1.0, 1.0], np.float64)
    exprs = ["log1p(x)", "cbrt(x)", "exp(x)", "tanh(x)", "erf(x)", "atan2(x, 1.0)"]
    got = _run(exprs, x, x)
    with np.errstate(all="ignore"):
        want = np.stack([np.log1p(x), np.cbrt(x), np.exp(x), np.tanh(x), np.vectorize(lambda v: math.erf(v))(x),
                         np.arctan2(x, 1.0)])
    exact = ~np.isfinite(want) | (want == 0)  # infinities, NaN and zeros exactly; other values within 2 ulp
    same = np.where(exact, (got == want) | (np.isnan(got) & np.isnan(want)), _ulps(got, want) <= 2)
    assert same.all(), [(exprs[j], x[i], got[j, i], want[j, i]) for j, i in zip(*np.nonzero(~same), strict=True)]
    assert np.signbit(got[1, 1]) and np.signbit(got[0, 1])  # cbrt(-0) and log1p(-0) keep the sign
