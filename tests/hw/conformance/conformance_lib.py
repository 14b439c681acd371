# Source of truth for the conformance corpus machinery: the kernel registry, the two compilers
# (NVRTC through `strata.cuda.compile`, nvcc PTX through `cuda.Module.from_ptx`), the launch helper
# and the exact-rounding / ulp oracles every family file shares. No test lives here.
"""Shared machinery for the virtual-GPU conformance corpus.

Each family file (``test_conf_*.py``) registers its CUDA C++ sources with :func:`kernel` at import
time, and decorates each test with :func:`both_compilers` so the same test body runs against the PTX
NVRTC emits (always) and the PTX ``nvcc -ptx -arch=sm_90`` emits (only when nvcc is on PATH).
``opcode_census.py`` imports the family files and walks :data:`REGISTRY`.

Example (the entry-point scan used by :func:`kernel`):
    >>> _KERNEL_RE.findall('extern "C" __global__ void copy(const int* a, int* b) { }')
    ['copy']
"""

from __future__ import annotations

import functools
import math
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

try:  # ml_dtypes ships bfloat16 for NumPy; only the half tests need it.
    import ml_dtypes

    BF16: Any = ml_dtypes.bfloat16
except ImportError:  # pragma: no cover - the venv always has it
    BF16 = None

# ----------------------------------------------------------------------------------------------
# Registry
# ----------------------------------------------------------------------------------------------

_KERNEL_RE = re.compile(r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+(\w+)')


@dataclass(frozen=True)
class KernelSource:
    """One CUDA C++ translation unit of the corpus.

    Attributes:
        name: unique corpus name (``family.what``), used as test id and census key.
        source: the CUDA C++ text, compiled as-is by NVRTC and by nvcc.
        options: compiler options understood by both NVRTC and nvcc (e.g. ``--use_fast_math``).
        kernels: the ``extern "C"`` entry points found in ``source``.
    """

    name: str
    source: str
    options: tuple[str, ...] = ()
    kernels: tuple[str, ...] = field(default=())


REGISTRY: dict[str, KernelSource] = {}


def kernel(name: str, source: str, options: Sequence[str] = ()) -> KernelSource:
    """Register a corpus translation unit and return it (module-level, at import time)."""
    kernels = tuple(_KERNEL_RE.findall(source))
    if not kernels:
        raise ValueError(f'[corpus] {name}: no extern "C" __global__ kernel in source')
    ks = KernelSource(name=name, source=source, options=tuple(options), kernels=kernels)
    old = REGISTRY.get(name)
    if old is not None and old != ks:
        raise ValueError(f"[corpus] duplicate kernel name {name!r}")
    REGISTRY[name] = ks
    return ks


# ----------------------------------------------------------------------------------------------
# Compilers
# ----------------------------------------------------------------------------------------------


def _find_nvcc() -> str | None:
    """nvcc from STRATA_NVCC (a path, or 0 to disable), else from PATH; None when absent."""
    raw = os.environ.get("STRATA_NVCC")
    if raw is not None and raw.strip() == "0":
        return None
    return shutil.which(raw.strip() if raw else "nvcc")


NVCC = _find_nvcc()

COMPILERS = [
    pytest.param("nvrtc", id="nvrtc"),
    pytest.param(
        "nvcc",
        id="nvcc",
        marks=[pytest.mark.nvcc, pytest.mark.skipif(NVCC is None, reason="nvcc absent (or STRATA_NVCC=0)")],
    ),
]


def both_compilers(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Parametrize a test over ``compiler`` in ("nvrtc", "nvcc")."""
    return pytest.mark.parametrize("compiler", COMPILERS)(fn)


def nvcc_ptx(ks: KernelSource) -> str:
    """PTX for ``ks`` from ``nvcc -ptx -arch=sm_90`` (raises CalledProcessError with the log)."""
    assert NVCC is not None
    with tempfile.TemporaryDirectory(prefix="strata_conf_") as tmp:
        src = os.path.join(tmp, f"{ks.name.replace('.', '_')}.cu")
        out = src[:-3] + ".ptx"
        with open(src, "w") as f:
            f.write(ks.source)
        cmd = [NVCC, "-ptx", "-arch=sm_90", "-std=c++17", "-lineinfo", *ks.options, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"[nvcc] {ks.name} failed:\n{proc.stderr}")
        with open(out) as f:
            return f.read()


@functools.cache
def build(ks: KernelSource, compiler: str) -> Any:
    """Compile ``ks`` once per compiler and return the ``strata.cuda`` Module."""
    import strata.cuda as cuda  # imported late so the census script works without the emulator

    if compiler == "nvrtc":
        return cuda.compile(ks.source, options=ks.options)
    if compiler == "nvcc":
        return cuda.Module.from_ptx(nvcc_ptx(ks))
    raise ValueError(f"[corpus] unknown compiler {compiler!r}")


def run(
    ks: KernelSource,
    compiler: str,
    kernel_name: str,
    grid: Sequence[int] | int,
    block: Sequence[int] | int,
    *args: Any,
    shared_mem: int = 0,
    report: bool = False,
) -> Any:
    """Launch ``kernel_name`` from ``ks`` and return the arrays read back, in argument order.

    NumPy arrays are copied to the device and back (their order in ``args`` is the order of the
    returned list); NumPy scalars are passed by value; Python ints pass as raw pointers.
    With ``report=True`` returns ``(arrays, LaunchReport)``.
    """
    import strata.cuda as cuda

    if kernel_name not in ks.kernels:
        raise ValueError(f"[corpus] {ks.name} has no kernel {kernel_name!r} ({ks.kernels})")
    grid_t = (grid,) if isinstance(grid, int) else tuple(grid)
    block_t = (block,) if isinstance(block, int) else tuple(block)
    fn = build(ks, compiler).get_function(kernel_name)
    dev: list[Any] = []
    packed: list[Any] = []
    for a in args:
        if isinstance(a, np.ndarray):
            d = cuda.to_device(a)
            dev.append(d)
            packed.append(d)
        elif isinstance(a, (np.generic, int)):
            packed.append(a)
        else:
            raise TypeError(f"[corpus] unsupported kernel argument type {type(a).__name__}")
    rep = fn.launch(grid_t, block_t, tuple(packed), shared_mem=shared_mem)
    outs = [d.get() for d in dev]
    for d in dev:
        d.free()
    return (outs, rep) if report else outs


# ----------------------------------------------------------------------------------------------
# Comparisons
# ----------------------------------------------------------------------------------------------


def _check_meta(actual: np.ndarray, expected: np.ndarray) -> None:
    assert isinstance(actual, np.ndarray), f"expected ndarray, got {type(actual).__name__}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != expected {expected.shape}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != expected {expected.dtype}"


def _fail_report(actual: np.ndarray, expected: np.ndarray, bad: np.ndarray, what: str) -> str:
    idx = np.argwhere(bad)[:8]
    lines = [f"{int(bad.sum())} of {bad.size} elements differ ({what}); first mismatches:"]
    for i in idx:
        t = tuple(int(v) for v in i)
        lines.append(f"  [{', '.join(map(str, t))}] got {actual[t]!r} expected {expected[t]!r}")
    return "\n".join(lines)


def assert_exact(actual: np.ndarray, expected: np.ndarray) -> None:
    """Exact equality with matching shape and dtype.

    Floats: NaN equals NaN (any payload), and +0.0 / -0.0 are distinguished, which is what
    "bit-exact up to NaN payload" means (PTX returns the canonical NaN 0x7fffffff; NumPy 0x7fc00000).
    """
    _check_meta(actual, expected)
    if actual.dtype.kind == "f" or actual.dtype == BF16:
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        same = (a == e) & (np.signbit(a) == np.signbit(e))
        same |= np.isnan(a) & np.isnan(e)
    else:
        same = actual == expected
    assert bool(np.all(same)), _fail_report(actual, expected, ~same, "exact")


def _ordered(x: np.ndarray) -> np.ndarray:
    """Map floats to integers whose difference counts ulps (monotone; -0 and +0 both map to 0)."""
    nbits = 8 * x.dtype.itemsize
    u = x.view(f"u{x.dtype.itemsize}")
    # Python ints for float64 so the subtraction below cannot overflow int64.
    u = u.astype(object) if nbits == 64 else u.astype(np.int64)
    sign = u >> (nbits - 1)
    mag = u & ((1 << (nbits - 1)) - 1)
    return np.where(sign == 1, -mag, mag)


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Number of representable values between two float arrays (same dtype), elementwise."""
    d = np.abs(_ordered(actual) - _ordered(expected))
    return np.asarray(d, dtype=np.float64)


def assert_ulp(actual: np.ndarray, expected: np.ndarray, max_ulp: float | np.ndarray) -> None:
    """Within ``max_ulp`` units in the last place (NaN must match NaN, infinities exactly)."""
    _check_meta(actual, expected)
    a64 = actual.astype(np.float64)
    e64 = expected.astype(np.float64)
    nan_a, nan_e = np.isnan(a64), np.isnan(e64)
    bad = nan_a != nan_e
    both = ~(nan_a | nan_e)
    inf = np.isinf(e64) | np.isinf(a64)
    bad |= both & inf & (a64 != e64)
    fin = both & ~inf
    dist = np.zeros(actual.shape)
    if fin.any():
        dist[fin] = ulp_distance(actual[fin], expected[fin])
    bad |= fin & (dist > max_ulp)
    assert not bad.any(), _fail_report(actual, expected, bad, f"max_ulp={max_ulp}, worst={dist.max()}")


def assert_close(actual: np.ndarray, expected: np.ndarray, *, rtol: float = 0.0, atol: float = 0.0) -> None:
    """|actual - expected| <= atol + rtol * |expected| (NaN must match NaN, infinities exactly)."""
    _check_meta(actual, expected)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    bad = nan_a != nan_e
    ok = ~(nan_a | nan_e)
    inf = np.isinf(a) | np.isinf(e)
    bad |= ok & inf & (a != e)
    fin = ok & ~inf
    err = np.where(fin, np.abs(a - e), 0.0)
    bad |= fin & (err > atol + rtol * np.abs(np.where(fin, e, 0.0)))
    assert not bad.any(), _fail_report(actual, expected, bad, f"rtol={rtol}, atol={atol}")


# ----------------------------------------------------------------------------------------------
# Exact rounding oracles (Fractions, so no double rounding anywhere)
# ----------------------------------------------------------------------------------------------

# dtype -> (precision p incl. hidden bit, emin, emax)
_FORMATS: dict[Any, tuple[int, int, int]] = {
    np.dtype(np.float16): (11, -14, 15),
    np.dtype(np.float32): (24, -126, 127),
    np.dtype(np.float64): (53, -1022, 1023),
}
if BF16 is not None:
    _FORMATS[np.dtype(BF16)] = (8, -126, 127)

MODES = ("rn", "rz", "ru", "rd")


def round_fraction(q: Fraction, dtype: Any, mode: str = "rn", *, negative_zero: bool = False) -> float:
    """Round the exact rational ``q`` to ``dtype`` with IEEE mode rn/rz/ru/rd; returns a Python float.

    Handles subnormals and overflow (rz/ru/rd saturate to the largest finite value on the side the
    mode points away from). ``negative_zero`` gives the sign of an exact zero.
    """
    p, emin, emax = _FORMATS[np.dtype(dtype)]
    if q == 0:
        return -0.0 if negative_zero else 0.0
    neg = q < 0
    a = -q if neg else q
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)  # below emin the quantum stays fixed (subnormals)
    quantum = Fraction(2) ** (e - p + 1)
    m = a / quantum
    lo = m.numerator // m.denominator
    rem = m - lo
    if mode == "rn":
        up = rem > Fraction(1, 2) or (rem == Fraction(1, 2) and lo % 2 == 1)
    elif mode == "rz":
        up = False
    elif mode == "ru":
        up = rem > 0 and not neg
    elif mode == "rd":
        up = rem > 0 and neg
    else:
        raise ValueError(f"[round_fraction] unknown mode {mode!r}")
    r = (lo + (1 if up else 0)) * quantum
    max_finite = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if r > max_finite:
        to_inf = mode == "rn" or (mode == "ru" and not neg) or (mode == "rd" and neg)
        r_f = float("inf") if to_inf else float(max_finite)
    else:
        r_f = float(r)  # exact: r is representable in float64 for every format we support
    return -r_f if neg else r_f


def to_fraction(x: Any) -> Fraction:
    return Fraction(float(x))


def exact_float_op(
    op: Callable[..., Fraction],
    dtype: Any,
    mode: str,
    *arrays: np.ndarray,
    special: Callable[..., np.ndarray],
    zero_sign: Callable[..., bool] | None = None,
) -> np.ndarray:
    """Elementwise ``round(op(*x), mode)`` computed exactly; non-finite inputs use ``special``.

    ``special`` receives float64 arrays and returns float64 results for elements with any NaN/inf
    input (those do not depend on the rounding mode). ``zero_sign`` gets the float inputs of an
    element whose exact result is zero and returns True when the zero is negative.
    """
    f64 = [np.asarray(a).astype(np.float64) for a in arrays]
    out = np.empty(f64[0].shape, dtype=np.float64)
    with np.errstate(all="ignore"):  # inf - inf, 0 * inf ... are the point of `special`
        spec = np.asarray(special(*f64), dtype=np.float64)
    for i in np.ndindex(out.shape):
        xs = [a[i] for a in f64]
        if not all(np.isfinite(x) for x in xs):
            out[i] = spec[i]
            continue
        try:
            q = op(*[Fraction(float(x)) for x in xs])
        except (ZeroDivisionError, ValueError):  # x/0, sqrt(<0): not mode dependent
            out[i] = spec[i]
            continue
        neg0 = bool(zero_sign(*xs)) if (q == 0 and zero_sign is not None) else False
        out[i] = round_fraction(q, dtype, mode, negative_zero=neg0)
    return out.astype(dtype)  # exact: every value is representable in dtype


def sqrt_fraction(q: Fraction) -> Fraction:
    """A rational that rounds like sqrt(q) for any format up to 64 bits of precision.

    Returns sqrt(q) exactly when it is rational-exact, else a value strictly inside the same
    2^-70-relative interval (a sticky bit), which no rounding boundary can separate from sqrt(q).
    """
    if q < 0:
        raise ValueError("sqrt of negative")
    if q == 0:
        return q
    e = q.numerator.bit_length() - q.denominator.bit_length()
    k = max(0, 72 - e // 2)  # sqrt(q) * 2^k has >= 70 integer bits
    scaled = q * Fraction(4) ** k
    n = scaled.numerator // scaled.denominator
    t = math.isqrt(n)
    exact = t * t == n and scaled.denominator == 1
    return (Fraction(t) if exact else t + Fraction(1, 2)) / Fraction(2) ** k


def add_zero_sign(mode: str) -> Callable[..., bool]:
    """IEEE sign of an exact-zero sum: -0 only for (-0)+(-0), or any cancellation under rd."""

    def sign(a: float, b: float) -> bool:
        if a == 0 and b == 0 and np.signbit(a) == np.signbit(b):
            return bool(np.signbit(a))
        return mode == "rd"

    return sign


def mul_zero_sign(a: float, b: float) -> bool:
    return bool(np.signbit(a) != np.signbit(b))


def fma_zero_sign(mode: str) -> Callable[..., bool]:
    def sign(a: float, b: float, c: float) -> bool:
        prod_neg = bool(np.signbit(a) != np.signbit(b))
        if (a == 0 or b == 0) and c == 0 and prod_neg == bool(np.signbit(c)):
            return prod_neg
        return mode == "rd"

    return sign


def exact_int_to_float(values: Sequence[int] | np.ndarray, dtype: Any, mode: str) -> np.ndarray:
    """Correctly rounded integer -> float conversion (cvt.r*.f*.{s,u}*)."""
    vals = [int(v) for v in np.asarray(values).ravel()]
    out = np.array([round_fraction(Fraction(v), dtype, mode) for v in vals], dtype=np.float64)
    return out.reshape(np.shape(values)).astype(dtype)


def float_to_int_sat(x: np.ndarray, itype: Any, mode: str) -> np.ndarray:
    """PTX cvt.{rni,rzi,rpi,rmi}.<int>.<float>: round to integer, then clamp to the range.

    NaN follows the PTX ISA (cvt, "Integer Notes"): 0 when the source is not .f64 and the
    destination is not 64-bit, otherwise ``1 << (bits - 1)`` (INT_MIN / 0x80..0 for unsigned).
    The source type is ``x.dtype``.
    """
    info = np.iinfo(itype)
    nbits = 8 * np.dtype(itype).itemsize
    src_f64 = np.asarray(x).dtype == np.float64
    nan_value = (1 << (nbits - 1)) if (src_f64 or nbits == 64) else 0
    if info.min < 0 and nan_value:
        nan_value = info.min
    out = []
    for v in np.asarray(x, dtype=np.float64).ravel():
        if np.isnan(v):
            out.append(nan_value)
            continue
        if np.isinf(v):
            out.append(info.max if v > 0 else info.min)
            continue
        q = Fraction(float(v))
        fl = q.numerator // q.denominator
        rem = q - fl
        if mode == "rn":
            r = fl + (1 if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and fl % 2) else 0)
        elif mode == "rz":
            r = fl if q >= 0 else -((-q.numerator) // q.denominator)
        elif mode == "ru":
            r = fl + (1 if rem > 0 else 0)
        elif mode == "rd":
            r = fl
        else:
            raise ValueError(mode)
        out.append(min(max(r, info.min), info.max))
    return np.array(out, dtype=object).reshape(np.shape(x)).astype(itype)


def f32(*v: Any) -> np.ndarray:
    return np.array(v, dtype=np.float32)


def bits_f32(words: Sequence[int]) -> np.ndarray:
    """Float32 array from raw IEEE bit patterns."""
    return np.array(words, dtype=np.uint32).view(np.float32)


def bits_f64(words: Sequence[int]) -> np.ndarray:
    return np.array(words, dtype=np.uint64).view(np.float64)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def fma_exact(a: np.ndarray, b: np.ndarray, c: np.ndarray, mode: str = "rn") -> np.ndarray:
    """Correctly rounded a*b+c in the dtype of ``a`` (single rounding, like fma.r*)."""
    return exact_float_op(
        lambda x, y, z: x * y + z,
        a.dtype,
        mode,
        a,
        b,
        c,
        special=lambda x, y, z: x * y + z,
        zero_sign=fma_zero_sign(mode),
    )


def binop_exact(op: str, a: np.ndarray, b: np.ndarray, mode: str = "rn") -> np.ndarray:
    """Correctly rounded add/sub/mul/div in the dtype of ``a`` with IEEE mode rn/rz/ru/rd."""
    fns: dict[str, tuple[Callable[..., Any], Callable[..., Any] | None]] = {
        "add": (lambda x, y: x + y, add_zero_sign(mode)),
        "sub": (lambda x, y: x - y, lambda x, y: add_zero_sign(mode)(x, -y)),
        "mul": (lambda x, y: x * y, mul_zero_sign),
        "div": (lambda x, y: x / y, mul_zero_sign),
    }
    fn, zs = fns[op]
    with np.errstate(all="ignore"):
        return exact_float_op(fn, a.dtype, mode, a, b, special=fn, zero_sign=zs)


def sqrt_exact(a: np.ndarray, mode: str = "rn") -> np.ndarray:
    """Correctly rounded sqrt in the dtype of ``a`` (sqrt(-0) = -0, sqrt(<0) = NaN)."""
    with np.errstate(all="ignore"):
        out = exact_float_op(sqrt_fraction, a.dtype, mode, a, special=np.sqrt)
    return np.where(a == 0, a, out).astype(a.dtype)


def rcp_exact(a: np.ndarray, mode: str = "rn") -> np.ndarray:
    """Correctly rounded 1/x in the dtype of ``a`` (1/±0 = ±inf)."""
    with np.errstate(all="ignore"):
        return exact_float_op(lambda x: 1 / x, a.dtype, mode, a, special=lambda x: 1.0 / x)
