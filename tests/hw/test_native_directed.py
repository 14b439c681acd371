"""f32 add, sub, mul and fma with directed rounding (.rz, .rm, .rp: CUDA's __fadd_rz, __fmul_rd, __fmaf_ru,
...) run natively (codegen_float.directed32), bit for bit the reference's, and both equal the exact result
rounded in that direction (Python fractions) on edge values: zeros of both signs, subnormals, results that
cancel exactly, overflow past FLT_MAX, infinities and NaN."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

from native_harness import on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402

SRC = r"""
#define ALL(F) F(add, __fadd_rz, __fadd_rd, __fadd_ru) F(sub, __fsub_rz, __fsub_rd, __fsub_ru) \
               F(mul, __fmul_rz, __fmul_rd, __fmul_ru)
#define K(name, rz, rd, ru) \
extern "C" __global__ void name(int n, const float* a, const float* b, float* z, float* d, float* u) { \
  int i = blockIdx.x * blockDim.x + threadIdx.x; \
  if (i < n) { z[i] = rz(a[i], b[i]); d[i] = rd(a[i], b[i]); u[i] = ru(a[i], b[i]); } }
ALL(K)
extern "C" __global__ void fma3(int n, const float* a, const float* b, const float* c, float* z, float* d, float* u) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    z[i] = __fmaf_rz(a[i], b[i], c[i]); d[i] = __fmaf_rd(a[i], b[i], c[i]); u[i] = __fmaf_ru(a[i], b[i], c[i]);
  }
}
"""
N = 4096
F32_MAX = float(np.finfo(np.float32).max)


def _operands(k: int) -> list[np.ndarray]:
    """k operand arrays: random magnitudes over the whole f32 range, edge values, and pairs that cancel."""
    rng = np.random.default_rng(17 + k)
    edge = np.array([0.0, -0.0, 1e-45, -1e-45, 1.2e-38, -1.2e-38, 1.0, -1.0, F32_MAX, -F32_MAX, np.inf, -np.inf,
                     np.nan, 3.0, 1.0 / 3.0, 2.0**-126, 2.0**127], np.float32)
    out = []
    for j in range(k):
        v = (rng.uniform(1, 2, N) * rng.choice([-1.0, 1.0], N) * 2.0 ** rng.integers(-150, 127, N)).astype(np.float32)
        v[: len(edge) * 8] = np.resize(np.roll(edge, j), len(edge) * 8)
        out.append(v)
    out[1][-256:] = -out[0][-256:] if k == 2 else out[1][-256:]  # exact cancellations: a + (-a)
    if k == 2:
        out[1][-512:-256] = out[0][-512:-256]  # a - a
    return out


def _rounded(v: Fraction, rnd: str) -> np.float32:
    """The exact value v rounded to f32 toward rnd ('rz', 'rm', 'rp')."""
    big = Fraction(F32_MAX)
    if abs(v) > big:  # past FLT_MAX: infinity in the direction of the value, FLT_MAX back toward zero
        away = (rnd == "rp") if v > 0 else (rnd == "rm")
        return np.float32(np.copysign(np.inf if away else F32_MAX, float(v)))
    up, down = np.float32(np.inf), np.float32(-np.inf)
    r = np.float32(float(v))
    while Fraction(float(r)) > v:
        r = np.nextafter(r, down)
    while r != np.float32(F32_MAX) and Fraction(float(np.nextafter(r, up))) <= v:
        r = np.nextafter(r, up)
    if Fraction(float(r)) == v:
        return r
    floor, ceil = r, np.nextafter(r, up)  # (the ceiling of a tiny negative value is -0)
    return floor if rnd == "rm" or (rnd == "rz" and v > 0) else ceil


def _check_exact(ops: list[np.ndarray], outs: list[np.ndarray], exact: Any) -> int:
    """Compare finite, nonzero exact results with the fractions oracle; returns how many were compared."""
    checked = 0
    for i in range(N):
        vals = [float(o[i]) for o in ops]
        if not all(np.isfinite(vals)):
            continue
        v = exact(*[Fraction(x) for x in vals])
        if v == 0:
            continue  # (the sign of an exact zero: compared between the executors)
        for out, rnd in zip(outs, ("rz", "rm", "rp"), strict=True):
            assert out[i].tobytes() == _rounded(v, rnd).tobytes(), (i, vals, rnd, out[i], _rounded(v, rnd))
        checked += 1
    return checked


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "fma"])
def test_directed_rounding_native_equals_reference_and_exact(monkeypatch: pytest.MonkeyPatch, mod: Any,
                                                              op: str) -> None:
    k = 3 if op == "fma" else 2
    ops = _operands(k)

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        outs = [cuda.empty(N) for _ in range(3)]
        return (np.int32(N), *[cuda.to_device(o) for o in ops], *outs), outs

    fn = mod.get_function("fma3" if op == "fma" else op)
    outs, _, rec = on_both_executors(monkeypatch, lambda args: fn(N // 256, 256, args), make)
    assert not [e for e in rec.events if e.name == "native_partial"]  # every instruction native
    exact = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
             "fma": lambda a, b, c: a * b + c}[op]
    assert _check_exact(ops, outs, exact) > N // 2
    if op in ("add", "sub"):  # exact zero sums: -0 rounding down, +0 otherwise (IEEE 754 6.3)
        i = N - 100 if op == "add" else N - 300
        assert ops[0][i] != 0 and [o[i].tobytes() for o in outs] == [np.float32(z).tobytes() for z in (0.0, -0.0, 0.0)]
