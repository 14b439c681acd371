"""The CUDA conformance corpus through the HIP face on both paths: every registered kernel HIP can express is
hipified, compiled by NVRTC for an H200 (`--fmad=false`) and by clang-19 for an MI300X (`-ffp-contract=off`),
launched on both with the same seeded inputs built from its signature, and every buffer is compared bit for bit
(NaN against NaN of any payload: NVIDIA's canonical NaN and AMD's quiet NaN differ by design).

Rule for "HIP can express it": the hipified source compiles with strata's AMD device header. What does not, or
what cannot give the same bits on a wave64 GPU, is in EXCLUDED with the reason; `test_every_corpus_kernel_is_
classified` keeps the two tables covering the registry, and `test_header_gaps_still_fail_to_compile` fails when
the header gains what a kernel needed, so the kernel moves into the comparison.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.hip import CompileError
from strata.hip.hipify import hipify

CONF = Path(__file__).resolve().parents[2] / "hw" / "conformance"
needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")


def _load_corpus() -> dict[str, Any]:
    """Import the family files (they register their kernels at import) and return the registry."""
    if str(CONF) not in sys.path:
        sys.path.insert(0, str(CONF))
    import conformance_lib  # type: ignore[import-not-found]  # on sys.path only at run time

    for path in sorted(CONF.glob("test_conf_*.py")):
        name = f"_conf_family_{path.stem}"
        if name not in sys.modules:
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
    return conformance_lib.REGISTRY


REGISTRY: dict[str, Any] = _load_corpus()

# ------------------------------------------------------------------------------------------------------------
# What is left out, and why (one table). Keys are "corpus name" (every kernel of it) or "corpus name:kernel".
# ------------------------------------------------------------------------------------------------------------
WARP = "warp-width dependent: 32-lane masks, lane ids or warpSize in the results"
APPROX = "documented approximation (fast math: __sinf/__expf/tanh.approx differ by design)"
ORDER = "results depend on the order atomics land in"
NOT_HIP = "not in HIP's device API"
DEVICE_MATH = ("device math: CUDA's libdevice and strata's AMD header (hip/amd_math.h) compute these with different "
               "algorithms, so they agree within 2 ulp, not bit for bit (test_device_math_agrees_within_ulps)")


def _gap(what: str) -> str:
    return f"strata's AMD header lacks {what} (HIP has it)"


EXCLUDED: dict[str, str] = {
    # Compile-time gaps (checked to still fail by test_header_gaps_still_fail_to_compile).
    "float.libdevice_f32_precise": DEVICE_MATH,
    "float.libdevice_f64": DEVICE_MATH,
    "int.funnel_shift_sad_dp4a_avg": NOT_HIP + " (__dp4a, __dp2a_lo/hi)",
    "int.fns_find_nth_set": NOT_HIP + " (__fns)",
    "memory.generic_pointers_isspacep": NOT_HIP + " (__isShared/__isGlobal/__isLocal/__isConstant)",
    "memory.cache_hint_loads_stores": NOT_HIP + " (__ldcg/__ldcs/__stcg cache-operator loads and stores)",
    "special.clock_monotonic": NOT_HIP + " (__nanosleep); clock values differ per machine anyway",
    "float.fast_math_approx": APPROX,
    "warp.vote_ballot_activemask": WARP + " (also: the header has no __uni_sync)",
    "warp.match_any_all": WARP + " (also: the header has no __match_*_sync)",
    "warp.redux_sync": WARP + " (also: the header has no __reduce_*_sync)",
    # Compile on both paths, but cannot give the same bits on a wave64 GPU.
    "warp.shfl_variants": WARP + " (__shfl_up by 1 with the default width reads lane 31 from lane 32 on wave64)",
    "special.grid_block_3d_registers": WARP + " (stores warpSize)",
    "memory.constant_and_device_globals:bump": "no buffer of its own: it changes module globals read_globals reads",
    "special.trap:trap_if": "a trap is a launch error, not a result (its fault path is tested in test_amd_executor)",
}
# The compile-time gaps: these sources must still fail to compile for gfx942.
HEADER_GAPS = [k for k, why in EXCLUDED.items() if why.startswith(("strata's AMD header", NOT_HIP))]
# Why warp.* kernels that stay in are width-independent: every collective in them stays inside an aligned group
# of 32 lanes (xor/down offsets <= 16 read from lane 0 of each group), so a wave64 computes each half as a warp32.


# ------------------------------------------------------------------------------------------------------------
# Driving a kernel from its signature
# ------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Domain:
    """Values for one parameter: integers in [lo, hi) (stored in the parameter's type), or uniform floats."""

    lo: float
    hi: float
    integral: bool = True


@dataclass(frozen=True)
class Drive:
    """How to launch one kernel. Defaults cover the corpus's 1-D `if (i >= n) return;` kernels."""

    grid: int | tuple[int, ...] = 2
    block: int | tuple[int, ...] = 256
    size: int = 500                    # the value of every size parameter (n, n2, n4, rows, cols, M, N, K)
    sizes: dict[str, int] = field(default_factory=dict)          # a size parameter's own value
    scalars: dict[str, Any] = field(default_factory=dict)        # other value parameters
    domains: dict[str, Domain] = field(default_factory=dict)     # input values (UB avoided, indices in bounds)
    prep: Callable[[dict[str, np.ndarray]], None] | None = None  # fix-ups across parameters (divisors, ...)
    raw: dict[str, Callable[[np.random.Generator], np.ndarray]] = field(default_factory=dict)  # struct inputs
    shared_mem: int = 0
    compare: dict[str, Any] = field(default_factory=dict)        # "sorted", "skip" or a slice, per buffer


SIZE_NAMES = {"n", "n2", "n4", "rows", "cols", "M", "N", "K"}
ITEMS_PER_SIZE = 32  # buffer elements per unit of size: the corpus indexes outputs up to out[29 * n + i]


def _divisors(a: dict[str, np.ndarray]) -> None:
    """C leaves x / 0 and INT_MIN / -1 undefined; the two ISAs answer differently (PTX: all ones)."""
    for num, den in (("a", "b"), ("c", "d")):
        x, y = a[num], a[den]
        y[y == 0] = 1
        y[(x == np.iinfo(x.dtype).min) & (y == -1)] = 1


def _no_nan(a: dict[str, np.ndarray]) -> None:
    """NaN -> integer is a documented difference: PTX gives 1 << (width - 1) from a double or into 64 bits (0 only
    float -> 32-bit), AMD's conversions (v_cvt_i32_f64, ...) give 0; the other special values stay."""
    for v in a.values():
        if v.dtype.kind == "f":
            v[np.isnan(v)] = np.inf


def _node_offsets(a: dict[str, np.ndarray]) -> None:
    """Byte offsets of whole 16-byte nodes."""
    a["offsets"] *= 16


def _walk_nodes(r: np.random.Generator) -> np.ndarray:
    n = 500
    nodes = np.zeros(ITEMS_PER_SIZE * n, dtype=[("value", "<i4"), ("next", "<i4"), ("weight", "<f8")])
    nodes["value"] = r.integers(-1000, 1000, nodes.size)
    nodes["next"] = r.integers(0, n, nodes.size)
    nodes["weight"] = r.standard_normal(nodes.size)
    return nodes.view(np.uint8)


DRIVES: dict[str, Drive] = {
    "elementwise.matrix_2d_grid": Drive(grid=(4, 5), block=(16, 8), sizes={"rows": 37, "cols": 53}),
    "int.div_rem_signed_unsigned": Drive(prep=_divisors),
    # C leaves shifts by >= the width undefined: PTX clamps the amount, AMD uses its low bits.
    "int.shift_by_width_or_more": Drive(domains={"s": Domain(0, 32)}),
    # float -> signed char of an out-of-range value is undefined.
    "cvt.narrowing_and_sign_extension": Drive(domains={"f": Domain(-127.0, 127.0, integral=False)}),
    "memory.pointer_arithmetic_64bit": Drive(raw={"nodes": _walk_nodes}, domains={"offsets": Domain(0, 500)},
                                             prep=_node_offsets),
    "shared.tiled_transpose_padded": Drive(grid=(3, 2), block=(32, 8), sizes={"rows": 50, "cols": 70}),
    "shared.tiled_matmul": Drive(grid=(3, 3), block=(16, 16), sizes={"M": 33, "N": 47, "K": 29}),
    "shared.dynamic_extern_shared:reverse_block": Drive(grid=4, block=96, shared_mem=96 * 4),
    "shared.dynamic_extern_shared:two_arrays": Drive(grid=1, block=96, shared_mem=96 * 4 + 96 * 8),
    "special.threadfence_last_block": Drive(grid=5, block=128, size=600),
    "special.device_assert": Drive(domains={"v": Domain(0, 2**30)}),
    # `v >>= 2` until zero never ends for a negative v.
    "control.divergence_loops_switch": Drive(domains={"in": Domain(0, 2**31)}),
    # is_even(t) recurses t deep: past t = 127 it overflows the 1 KiB default stack on the PTX path, and past
    # about 60 the 4 KiB dynamic stack of an AMD work-item at -O0 (64-byte frames).
    "control.calls_params_structs_recursion": Drive(grid=1, block=64, size=50),
    "control.early_return_before_barrier": Drive(grid=1, block=128, size=100),
    "control.reconvergence_then_collective": Drive(grid=1, block=64),
    "atomics.histogram_global_and_shared": Drive(domains={"keys": Domain(0, 64)}),
    # Integer-valued floats: their sums are exact in any order.
    "atomics.float_fractional_tolerance": Drive(domains={"x": Domain(-100, 100)}),
    "atomics.min_max_sub_exch": Drive(compare={"exch_old": ORDER, "exch": ORDER}),
    "atomics.bitwise_inc_dec": Drive(compare={"inc_old": "sorted"}),
    # Integer-valued starting sums and addends (exact in any order); the tickets are a permutation.
    "atomics.add_all_types": Drive(domains={"v": Domain(-1000, 1000), "f": Domain(-100, 100), "d": Domain(-100, 100),
                                            "h2": Domain(0, 4)}, compare={"tickets": "sorted"}),
    # One CAS on a zeroed word wins: which thread is up to the order the CASes land in.
    "atomics.cas_loops": Drive(domains={"dsum": Domain(-100, 100), "winner": Domain(0, 1)},
                               compare={"winner": ORDER, "won": "sorted"}),
    "cvt.float_to_int_all_modes": Drive(prep=_no_nan),
    "cvt.double_to_int_all_modes": Drive(prep=_no_nan),
    # the double butterfly stays inside 32-lane groups; lo reads lane 31 - t % 32 at the default width, which on a
    # wave64 is in the other half for lanes 32-63
    "warp.shfl_64bit_and_partial_mask:shfl64": Drive(compare={"lo": WARP}),
    "special.syncthreads_count_and_or": Drive(grid=4, domains={"in": Domain(-60, 100)}),
    "half.bf16_scalar_and_packed_ops": Drive(compare={"o": "bf16"}),
    "half.conversions": Drive(compare={"ob": "bf16"}),
    "atomics.shared_memory_all_ops": Drive(grid=1, block=160, domains={"v": Domain(-5000, 5000)},
                                           compare={"out": slice(0, 7)}),  # out[7] is a CAS race by design
}

_TYPES: dict[str, Any] = {
    "int": np.int32, "unsigned": np.uint32, "unsigned int": np.uint32, "long long": np.int64,
    "unsigned long long": np.uint64, "float": np.float32, "double": np.float64, "short": np.int16,
    "unsigned short": np.uint16, "signed char": np.int8, "char": np.int8, "unsigned char": np.uint8,
    "float4": np.float32, "int2": np.int32, "double2": np.float64, "Node": np.uint8,
    "__half": np.float16, "__half2": np.float16,  # a __half2 buffer as its halves
    # bfloat16 as bit patterns (every exponent, NaNs too), compared as "bf16"
    "__hip_bfloat16": np.uint16, "__nv_bfloat16": np.uint16,
}


@dataclass(frozen=True)
class Param:
    name: str
    ctype: str
    pointer: bool


def signature(source: str, kernel: str) -> list[Param]:
    """The parameters of `extern "C" __global__ void kernel(...)` in `source`."""
    m = re.search(rf'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\([^)]*\)\s+)?void\s+{kernel}\s*\(([^)]*)\)',
                  source)
    assert m, f"no signature for {kernel}"
    params = []
    for text in filter(None, (p.strip() for p in m.group(1).split(","))):
        words = re.sub(r"\b(const|volatile|__restrict__)\b", " ", text).replace("*", " * ").split()
        params.append(Param(words[-1], " ".join(w for w in words[:-1] if w != "*"), "*" in words))
    for p in params:
        assert p.ctype in _TYPES, f"{kernel}: parameter {p.name} has a type this driver does not know: {p.ctype}"
    return params


def _random(r: np.random.Generator, dtype: Any, count: int, dom: Domain | None) -> np.ndarray:
    dt = np.dtype(dtype)
    if dom is not None:
        if dom.integral:
            return r.integers(int(dom.lo), int(dom.hi), count).astype(dt)
        return r.uniform(dom.lo, dom.hi, count).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        out = r.integers(info.min, info.max, count, dtype=dt, endpoint=True)
        out[:4] = [info.min, info.max, 0, -1 if dt.kind == "i" else 1]
        return out
    # Floats spanning many binades, a quarter of them random bit patterns (every exponent: denormal operands,
    # huge gaps, overflowing quotients), with the special values every ISA must agree on.
    out = (r.standard_normal(count) * 10.0 ** r.integers(-3, 4, count)).astype(dt)
    u = np.dtype(f"u{dt.itemsize}")
    raw = r.integers(0, np.iinfo(u).max, count, dtype=u, endpoint=True).view(dt)
    out = np.where(r.random(count) < 0.25, raw, out).astype(dt)
    fi = np.finfo(dt)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, fi.tiny / 4, -fi.tiny / 3, fi.max, 1.0, -1.0, 0.5]
    k = min(count, len(special)) if count > 1 else 0  # a scalar stays an ordinary value
    out[:k] = np.array(special[:k], dt)
    return out


def inputs(name: str, kernel: str, drive: Drive, seed: int) -> tuple[list[Param], dict[str, Any]]:
    """Seeded arguments for every parameter: size parameters, scalars, and buffers of random data."""
    ks = REGISTRY[name]
    params = signature(ks.source, kernel)
    r = np.random.default_rng(seed)
    args: dict[str, Any] = {}
    for p in params:
        dt = _TYPES[p.ctype]
        if p.pointer:
            if p.name in drive.raw:
                args[p.name] = drive.raw[p.name](r)
            else:
                args[p.name] = _random(r, dt, ITEMS_PER_SIZE * drive.size, drive.domains.get(p.name))
        elif p.name in drive.scalars:
            args[p.name] = dt(drive.scalars[p.name])
        elif p.name in SIZE_NAMES:
            args[p.name] = dt(drive.sizes.get(p.name, drive.size))
        else:
            args[p.name] = _random(r, dt, 1, drive.domains.get(p.name))[0]
    if drive.prep is not None:
        drive.prep({k: v for k, v in args.items() if isinstance(v, np.ndarray)})
    return params, args


# ------------------------------------------------------------------------------------------------------------
# The two paths
# ------------------------------------------------------------------------------------------------------------
def hip_source(name: str) -> str:
    """The corpus source after hipify; strata's AMD header is included explicitly (clang is not hipRTC)."""
    src, _ = hipify(REGISTRY[name].source)
    return src if "hip_runtime.h" in src else "#include <hip/hip_runtime.h>\n" + src


def options(name: str, vendor: str) -> list[str]:
    """No contraction on either compiler, plus the corpus's own flags in each compiler's spelling."""
    flags: dict[str, dict[str, str | None]] = {
        "--ftz=true": {"nvidia": "--ftz=true", "amd": "-fgpu-flush-denormals-to-zero"},
        "--ftz=false": {"nvidia": "--ftz=false", "amd": None}}
    out = ["--fmad=false" if vendor == "nvidia" else "-ffp-contract=off"]
    for opt in REGISTRY[name].options:
        spelled = flags[opt][vendor]
        if spelled:
            out.append(spelled)
    return out


@pytest.fixture(scope="module")
def devices() -> Iterator[dict[str, cuda.Device]]:
    before = cuda.current_device()
    devs = {"nvidia": cuda.Device(model="h200"), "mi300x": cuda.Device(model="mi300x"),
            "mi250x": cuda.Device(model="mi250x")}
    try:
        yield devs
    finally:
        cuda.set_device(before)


_MODULES: dict[tuple[str, ...], Any] = {}
_NVIDIA: dict[str, dict[str, np.ndarray]] = {}  # the NVRTC path's buffers by "name:kernel", for both AMD targets


def run_on(dev: cuda.Device, name: str, kernel: str, drive: Drive, params: list[Param],
           args: dict[str, Any], extra: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Launch on `dev` (compiled once per device kind and `extra` options) and return every buffer read back."""
    cuda.set_device(dev)
    vendor = dev.spec.vendor
    key = (name, dev.spec.arch, *extra)
    if key not in _MODULES:
        _MODULES[key] = hip.compile(hip_source(name), options=[*options(name, vendor), *extra], name=f"{name}.hip")
    fn = _MODULES[key].get_function(kernel)
    bufs = {p.name: hip.to_device(args[p.name]) for p in params if p.pointer}
    packed = [bufs[p.name] if p.pointer else args[p.name] for p in params]
    fn(drive.grid, drive.block, packed, shared_mem=drive.shared_mem)
    hip.synchronize()
    out = {k: v.get() for k, v in bufs.items()}
    for v in bufs.values():
        v.free()
    return out


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def _bf16(a: np.ndarray) -> np.ndarray:
    return (a.astype(np.uint32) << np.uint32(16)).view(np.float32)


def assert_same_bits(what: str, got: np.ndarray, want: np.ndarray) -> None:
    """Bit for bit, NaN matching NaN of any payload."""
    same = _bits(got) == _bits(want)
    if got.dtype.kind == "f":
        same |= np.isnan(got) & np.isnan(want)
    if not same.all():
        bad = np.flatnonzero(~same)
        show = ", ".join(f"[{i}] amd {got[i]!r} nvidia {want[i]!r}" for i in bad[:6])
        raise AssertionError(f"{what}: {bad.size} of {got.size} elements differ: {show}")


def _cases() -> list[Any]:
    cases = []
    for name, ks in REGISTRY.items():
        if name in EXCLUDED:
            continue
        for k in ks.kernels:
            if f"{name}:{k}" not in EXCLUDED:
                cases.append(pytest.param(name, k, id=f"{name}:{k}"))
    return cases


@needs_clang
# gfx942 and gfx90a: clang emits different code for each; -O0 keeps pointers generic (FLAT atomics on LDS) and
# values in scratch, which -O3 code seldom exercises
@pytest.mark.parametrize("amd", ["mi300x", "mi250x", "mi300x -O0"])
@pytest.mark.parametrize(("name", "kernel"), _cases())
def test_same_bits_on_both_paths(devices: dict[str, cuda.Device], name: str, kernel: str, amd: str) -> None:
    drive = DRIVES.get(f"{name}:{kernel}", DRIVES.get(name, Drive()))
    params, args = inputs(name, kernel, drive, seed=sum(map(ord, f"{name}:{kernel}")))
    case = f"{name}:{kernel}"
    if case not in _NVIDIA:
        _NVIDIA[case] = run_on(devices["nvidia"], name, kernel, drive, params, args)
    want = _NVIDIA[case]
    model, *extra = amd.split()
    got = run_on(devices[model], name, kernel, drive, params, args, tuple(extra))
    for buf, w in want.items():
        how = drive.compare.get(buf)
        g = got[buf]
        if isinstance(how, str) and how not in ("sorted", "bf16"):
            continue  # a reason: the buffer's contents depend on the order atomics land in
        if how == "bf16":  # bfloat16 bit patterns: compared as the float32s they extend to (NaN matches NaN)
            g, w = _bf16(g), _bf16(w)
        elif how == "sorted":
            g, w = np.sort(g), np.sort(w)
        elif isinstance(how, slice):
            g, w = g[how], w[how]
        assert_same_bits(f"{name}:{kernel} buffer {buf}", g, w)


DEVICE_MATH_ULPS = 2  # each library is within about 1 ulp of the exact value (strata's float forms: correctly rounded)


def _ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ulps between floats of one dtype (NaN against NaN: 0), through their ordered integer images."""
    it = np.int32 if a.dtype == np.float32 else np.int64
    ia, ib = a.view(it).astype(np.int64), b.view(it).astype(np.int64)
    lo = np.iinfo(it).min
    oa, ob = np.where(ia < 0, lo - ia, ia), np.where(ib < 0, lo - ib, ib)
    return np.where(np.isnan(a) & np.isnan(b), 0, np.abs(oa - ob))


@needs_clang
@pytest.mark.parametrize("name", [n for n, why in EXCLUDED.items() if why == DEVICE_MATH])
def test_device_math_agrees_within_ulps(devices: dict[str, cuda.Device], name: str) -> None:
    """The device-math kernels (large sin/cos arguments, pow, erf, cbrt, atan2, log1p, ... over wide ranges) on
    both paths with the same inputs: every result within DEVICE_MATH_ULPS of the other path's (the other
    ecosystem as the oracle)."""
    for kernel in REGISTRY[name].kernels:
        drive = DRIVES.get(f"{name}:{kernel}", DRIVES.get(name, Drive()))
        params, args = inputs(name, kernel, drive, seed=sum(map(ord, f"{name}:{kernel}")))
        want = run_on(devices["nvidia"], name, kernel, drive, params, args)
        got = run_on(devices["mi300x"], name, kernel, drive, params, args)
        for buf, w in want.items():
            if w.dtype.kind != "f":
                assert_same_bits(f"{name}:{kernel} buffer {buf}", got[buf], w)
                continue
            far = _ulps(got[buf], w)
            at = int(far.argmax())
            assert far.max(initial=0) <= DEVICE_MATH_ULPS, (f"{name}:{kernel} buffer {buf}: {int(far.max())} ulps "
                                                            f"apart at {at} ({got[buf].flat[at]!r} vs {w.flat[at]!r})")


def test_every_corpus_kernel_is_classified() -> None:
    """Each registered kernel is compared, or excluded with a reason: a new corpus kernel must be placed."""
    known = {f"{n}:{k}" for n, ks in REGISTRY.items() for k in ks.kernels}
    listed = {k for k in EXCLUDED if ":" in k} | set(DRIVES)
    assert not {k for k in listed if ":" in k} - known, "EXCLUDED/DRIVES name kernels the corpus does not have"
    assert not {k for k in listed if ":" not in k} - set(REGISTRY), "EXCLUDED/DRIVES name unknown corpus sources"
    compared = {f"{n}:{k}" for n, k in (c.values for c in _cases())}
    assert len(compared) >= 40, f"only {len(compared)} corpus kernels compared"
    for case in compared:  # each compared kernel's parameters are all drivable
        n, k = case.split(":")
        signature(REGISTRY[n].source, k)


@needs_clang
def test_header_gaps_still_fail_to_compile() -> None:
    """The excluded-for-a-gap sources fail with clang today; one that compiles belongs in the comparison (or, if
    its results are approximations on one side, such as device-library math, under APPROX)."""
    compiles = []
    for name in HEADER_GAPS:
        try:
            hip.compile(hip_source(name), options=["-ffp-contract=off"], arch="gfx942")
        except CompileError:
            continue
        compiles.append(name)
    assert not compiles, f"these now compile with strata's AMD header: reclassify them in EXCLUDED: {compiles}"
