"""The CDNA engine's float32 fma (v_fma_f32, v_fmac_f32, v_pk_fma_f32) against an exact oracle: the product
and sum in rational arithmetic, rounded once to the nearest float32 (ties to even). The engine computes the
sum in float64 and rounds again; these inputs are chosen so that the second rounding would go wrong (inexact
float64 sums exactly halfway between two float32s), beside exact halfway sums (which must stay as they are),
float32 subnormal results and random values."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from strata.hw.amdgpu.executor import _fma32


def _round_f32(x: Fraction) -> np.float32:
    """The float32 nearest to x, ties to even (exact: candidates compared as fractions)."""
    guess = np.float32(float(x))
    cands = {guess, np.nextafter(guess, np.float32(np.inf)), np.nextafter(guess, np.float32(-np.inf))}
    best = min(cands, key=lambda c: (abs(Fraction(float(c)) - x), int(np.array(c).view(np.uint32)) & 1))
    return np.float32(best)


def _oracle(a: np.ndarray, b: np.ndarray, d: np.ndarray) -> np.ndarray:
    return np.array([_round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                     for x, y, z in zip(a, b, d, strict=True)], np.float32)


def _tie_cases() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Inexact float64 sums that land on a float32 midpoint: d = 1 + 2^-23 (odd last bit) and
    a * b = 2^-24 (1 - 2^-46), just under half a float32 ulp. The float64 sum rounds up onto the midpoint and
    a second rounding (ties to even) goes up, while the exact value is below it: the answer is d itself."""
    u = 2.0 ** -23
    a = np.array([1 + u, -(1 + u), 1 + u, 1 + u], np.float32)
    b = np.array([2.0 ** -24 * (1 - u), 2.0 ** -24 * (1 - u), 2.0 ** -24 * (1 + u), 2.0 ** -25], np.float32)
    d = np.array([1 + u, -(1 + u), 1.0, 1 + u], np.float32)
    naive = (a.astype(np.float64) * b + d).astype(np.float32)
    assert naive[0] != d[0] and naive[1] != d[1]  # the traps are real: double rounding gets them wrong
    return a, b, d


def test_fma32_matches_exact_rounding_on_double_rounding_traps() -> None:
    a, b, d = _tie_cases()
    np.testing.assert_array_equal(_fma32(a, b, d).view(np.uint32), _oracle(a, b, d).view(np.uint32))


def test_fma32_exact_ties_and_subnormals() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.random(200).astype(np.float32), rng.random(200).astype(np.float32)
    two = np.full(200, 2.0, np.float32)  # 2x + y is exact in float64 and often a float32 midpoint
    np.testing.assert_array_equal(_fma32(two, x, y).view(np.uint32), _oracle(two, x, y).view(np.uint32))
    tiny = np.float32(np.finfo(np.float32).tiny)
    a = np.array([tiny, tiny * 3, -tiny, 1e-30, 2.0 ** -75], np.float32)
    b = np.array([0.75, 0.3, 0.5, 1e-10, 2.0 ** -75], np.float32)
    d = np.array([0.0, -tiny, tiny * 0.25, 0.0, 2.0 ** -149], np.float32)
    np.testing.assert_array_equal(_fma32(a, b, d).view(np.uint32), _oracle(a, b, d).view(np.uint32))


@pytest.mark.parametrize("seed", [0, 1])
def test_fma32_random_wide_exponents(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 400
    a = (rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)).astype(np.float32)
    b = (rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)).astype(np.float32)
    d = (rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n)).astype(np.float32)
    np.testing.assert_array_equal(_fma32(a, b, d).view(np.uint32), _oracle(a, b, d).view(np.uint32))


def test_mad32_rounds_twice_and_flushes_denormals() -> None:
    """v_mad_f32/v_mac_f32 (gfx90a): round(round(a * b) + d) with denormals flushed, unlike the fma."""
    from strata.hw.amdgpu.executor import _mad32

    a, b, d = _tie_cases()
    twice = np.array([_round_f32(Fraction(float(_round_f32(Fraction(float(x)) * Fraction(float(y))))) +
                                 Fraction(float(z))) for x, y, z in zip(a, b, d, strict=True)], np.float32)
    np.testing.assert_array_equal(_mad32(a, b, d).view(np.uint32), twice.view(np.uint32))
    assert (_mad32(a, b, d) != _fma32(a, b, d)).any()  # the traps tell the two apart
    tiny = np.finfo(np.float32).tiny
    got = _mad32(np.array([tiny, 1.0], np.float32), np.array([0.5, tiny / 4], np.float32),
                 np.array([0.0, 0.0], np.float32))
    assert got.tolist() == [0.0, 0.0]  # a denormal product is flushed; a denormal input reads as zero


def test_fma64_product_underflowing_to_zero() -> None:
    """A product of nonzero doubles below the smallest subnormal: the fma still rounds the exact a * b + c (a
    zero result keeps the product's sign when c is +0; a subnormal c is the result). The float64 product alone
    is a zero, and adding c to it lost the sign (and any rounding direction the product set)."""
    from strata.hw.amdgpu.executor import _fma64

    a = np.array([4.76e-312, 1e-200, -1e-200, 1e-200, 3e-170], np.float64)
    b = np.array([-7.16e-308, 1e-200, 1e-200, -1e-200, 3e-170], np.float64)
    c = np.array([0.0, 0.0, 5e-324, 1.0, -0.0], np.float64)
    got = _fma64(a, b, c)
    want = []
    for x, y, z in zip(a, b, c, strict=True):
        q = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        want.append(q.numerator / q.denominator)  # CPython rounds int / int correctly, to signed zeros too
    np.testing.assert_array_equal(got.view(np.uint64), np.array(want, np.float64).view(np.uint64))
