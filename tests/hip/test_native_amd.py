"""The native executor on AMD (gfx9, wave64) dispatches against the reference wave64 executor: the same
clang-compiled HIP kernels run on both, with outputs bit for bit, counters, isa counts and fault reports
identical, NumPy as the oracle; kernels it does not compile fall back whole with the reason.

Most tests use the checked-in gfx942 code objects of tests/hip/amd (no compiler needed); the end-to-end ones
compile the benchmarks' HIP sources with clang-19 and skip without it. tests/conftest.py compiles at once
(STRATA_NATIVE_AFTER_MS=0) for this file."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from strata import trace
from strata.errors import DeviceFault, LaunchTimeout
from strata.hw import native
from strata.hw.amdgpu import kernarg
from strata.hw.amdgpu.codeobject import KernelInfo
from strata.hw.amdgpu.executor import AmdLaunch, execute, load_program

from ..hw.native_harness import on_both_executors
from .amd.test_amd_executor import Board, f32, i32, kernel, p64

pytestmark = pytest.mark.skipif(not native.available(), reason="llvmlite not installed (the native executor needs it)")
needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")


Setup = Callable[[Board], tuple[list[bytes], list[tuple[int, int, Any]]]]  # -> (args, outputs (addr, n, dtype))


def run(monkeypatch: pytest.MonkeyPatch, executor: str, k: KernelInfo, grid: tuple[int, int, int],
        block: tuple[int, int, int], setup: Setup, batch_lanes: int = 1 << 16) -> dict[str, Any]:
    """One dispatch on one executor from fresh inputs: outputs, counters, isa counts, executor, trace events."""
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    b = Board()
    args, outs = setup(b)
    seg = kernarg.build(k, args, grid, block)
    addr = b.put(seg + bytes(-len(seg) % 256), "kernarg")
    launch = AmdLaunch(grid, block, addr, k.group_segment_fixed_size)
    isa: dict[str, int] = {}
    with trace.record() as rec:
        counters = execute(load_program(k), launch, b.mem, batch_lanes=batch_lanes, isa_counts=isa)
    return {"outs": [b.get(a, n, dt) for a, n, dt in outs], "counters": dataclasses.asdict(counters), "isa": isa,
            "executor": launch.executor, "events": [(e.name, e.args) for e in rec.events]}


def both(monkeypatch: pytest.MonkeyPatch, k: KernelInfo, grid: tuple[int, int, int], block: tuple[int, int, int],
         setup: Setup, batch_lanes: int = 1 << 16) -> list[np.ndarray]:
    """The dispatch on the reference, then natively with -O0 code and with -O3 code (STRATA_NATIVE_OPT): the
    native executor ran it, with the same bits, counters and isa counts. Returns the outputs."""
    ref = run(monkeypatch, "reference", k, grid, block, setup, batch_lanes)
    assert ref["executor"] == "reference"
    for opt in ("0", "3"):
        monkeypatch.setenv("STRATA_NATIVE_OPT", opt)
        nat = run(monkeypatch, "native", k, grid, block, setup, batch_lanes)
        assert nat["executor"] == "native", [e for e in nat["events"] if e[0] == "native_fallback"]
        assert [e[1]["opt"] for e in nat["events"] if e[0] == "native_compile"] in ([], [int(opt)])
        for a, b in zip(ref["outs"], nat["outs"], strict=True):
            assert a.tobytes() == b.tobytes(), f"-O{opt}"
        assert nat["counters"] == ref["counters"], f"-O{opt}"
        assert nat["isa"] == ref["isa"], f"-O{opt}"
    return list(nat["outs"])


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(17)


def test_saxpy_partial_last_workgroup(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    n = 1000  # 4 workgroups of 256, the last one partly past n: EXEC masks and a skipped branch
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        xa, ya = b.put(x), b.put(y)
        return [i32(n), f32(2.5), p64(xa), p64(ya)], [(ya, n, np.float32)]
    (out,) = both(monkeypatch, kernel("saxpy", "saxpy"), (4, 1, 1), (256, 1, 1), setup)
    want = (np.float64(2.5) * x + y.astype(np.float64)).astype(np.float32)  # one rounding of the exact fma
    assert np.array_equal(out, want)


@pytest.mark.parametrize("batch_lanes", [1 << 16, 256])  # all workgroups in one batch, or one per batch
def test_tiled_sgemm_barriers_and_lds(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator,
                                      batch_lanes: int) -> None:
    m, n, kk = 40, 50, 70  # partial tiles: bounds checks inside the loop, LDS reads and writes, s_barrier
    a, bm = rng.random((m, kk), np.float32), rng.random((kk, n), np.float32)

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        aa, ba, ca = b.put(a), b.put(bm), b.put(np.zeros((m, n), np.float32))
        return [p64(aa), p64(ba), p64(ca), i32(m), i32(n), i32(kk)], [(ca, m * n, np.float32)]
    (out,) = both(monkeypatch, kernel("sgemm", "sgemm"), (4, 3, 1), (16, 16, 1), setup, batch_lanes)
    np.testing.assert_allclose(out.reshape(m, n), a.astype(np.float64) @ bm, rtol=1e-5)


def test_lds_tree_reduction(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    n, blocks = 5000, 20  # one active lane stores: per-wave ideal sectors; waves leave the loop at different trips
    x = rng.random(n, np.float32)

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        xa, oa = b.put(x), b.put(np.zeros(blocks, np.float32))
        return [p64(xa), p64(oa), i32(n)], [(oa, blocks, np.float32)]
    (out,) = both(monkeypatch, kernel("reduce", "reduce_sum"), (blocks, 1, 1), (256, 1, 1), setup)
    np.testing.assert_allclose(out, np.pad(x, (0, blocks * 256 - n)).reshape(blocks, 256).sum(1, dtype=np.float64),
                               rtol=1e-5)


def test_dwordx4_loads_and_stores(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    a = rng.standard_normal((100, 4)).astype(np.float32)  # float4 in, float4 out: 16-byte accesses, 100 of 128 lanes

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        ob = b.put(np.zeros(400, np.float32))
        return [p64(b.put(a)), p64(ob), i32(100)], [(ob, 400, np.float32)]
    (out,) = both(monkeypatch, kernel("misc", "vec4"), (1, 1, 1), (128, 1, 1), setup)
    np.testing.assert_array_equal(out.reshape(100, 4), np.stack([a[:, 3], a[:, 2] * 2, a[:, 1] + 1, a[:, 0]], axis=1))


def test_short_loads_and_byte_permutes(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    n = 600  # halves packed in pairs: global_load_ushort at 2-byte addresses, v_perm_b32
    ha, hb = rng.standard_normal(n).astype(np.float16), rng.standard_normal(n).astype(np.float16)

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        o2 = b.put(np.zeros(2 * n, np.float16))
        return [p64(b.put(ha)), p64(b.put(hb)), p64(o2), i32(n)], [(o2, 2 * n, np.float16)]
    (out,) = both(monkeypatch, kernel("subdword", "pack_halves"), (3, 1, 1), (256, 1, 1), setup)
    np.testing.assert_array_equal(out.reshape(n, 2), np.stack([ha, hb[::-1]], 1))


def test_shuffles_ballots_any_all(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    x = rng.integers(0, 100, 256).astype(np.int32)  # ds_bpermute butterflies, v_cmp masks written to memory

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        oa, ba = b.put(np.zeros(4 * 256, np.int32)), b.put(np.zeros(4, np.uint64))
        return [p64(b.put(x)), p64(oa), p64(ba)], [(oa, 4 * 256, np.int32), (ba, 4, np.uint64)]
    out, ballots = both(monkeypatch, kernel("breadth", "lanes"), (1, 1, 1), (256, 1, 1), setup)
    waves = x.reshape(4, 64)
    np.testing.assert_array_equal(out.reshape(256, 4)[:, 0], np.repeat(waves.sum(1), 64))
    bits = (waves & 1).astype(np.uint64) << np.arange(64, dtype=np.uint64)
    np.testing.assert_array_equal(ballots, np.bitwise_or.reduce(bits, axis=1))


def fault(monkeypatch: pytest.MonkeyPatch, executor: str) -> tuple[dict[str, Any], str]:
    k = kernel("saxpy", "saxpy")
    n = 100
    try:
        run(monkeypatch, executor, k, (1, 1, 1), (128, 1, 1), lambda b: (
            [i32(n), f32(1.0), p64(b.put(np.ones(n, np.float32))), p64(b.put(np.zeros(n - 10, np.float32), "y"))],
            []))
    except DeviceFault as e:
        return e.report, e.message
    raise AssertionError("no fault")


def test_out_of_bounds_fault_report_is_the_reference_one(monkeypatch: pytest.MonkeyPatch) -> None:
    ref_report, ref_msg = fault(monkeypatch, "reference")
    with trace.record() as rec:
        nat_report, nat_msg = fault(monkeypatch, "native")
    assert not [e for e in rec.events if e.name == "native_fallback"]
    assert nat_report == ref_report and nat_msg == ref_msg
    assert nat_report["work_item"] == (90, 0, 0) and nat_report["instruction"].startswith("global_load_dword")


def test_faults_in_many_workgroups_report_the_reference_one(monkeypatch: pytest.MonkeyPatch,
                                                            rng: np.random.Generator) -> None:
    m, n, kk = 40, 50, 70  # C holds 30 of its 40 rows: the stores of 5 of the 12 workgroups fault, on both threads
    a, bm = rng.random((m, kk), np.float32), rng.random((kk, n), np.float32)
    reports = {}
    for ex in ("reference", "native"):
        with pytest.raises(DeviceFault) as info:
            run(monkeypatch, ex, kernel("sgemm", "sgemm"), (4, 3, 1), (16, 16, 1), lambda b: (
                [p64(b.put(a)), p64(b.put(bm)), p64(b.put(np.zeros((30, n), np.float32), "c")), i32(m), i32(n),
                 i32(kk)], []))
        reports[ex] = info.value.report
    assert reports["native"] == reports["reference"]
    assert reports["native"]["instruction"].startswith("global_store_dword") and \
        reports["native"]["workgroup"] == (0, 1, 0)


def test_unsupported_instruction_falls_back_whole_with_the_reason(monkeypatch: pytest.MonkeyPatch,
                                                                   rng: np.random.Generator) -> None:
    k = kernel("breadth", "atomics")  # global atomics: not compiled
    blocks, n = 3, 3 * 128
    inits = [[0, 0], [0, 0], [0], [-5], [5000], [7], [0], [0] * n]

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        addrs = [b.put(np.array(v, np.int32)) for v in inits]
        return [p64(a) for a in addrs], [(addrs[0], 1, np.int32)]
    got = run(monkeypatch, "native", k, (blocks, 1, 1), (128, 1, 1), setup)
    assert got["executor"] == "reference"
    reasons = [e[1]["reason"] for e in got["events"] if e[0] == "native_fallback"]
    assert reasons and reasons[0].startswith("not compiled: global_atomic_")  # the instruction, disassembled
    assert got["outs"][0][0] == np.arange(n).sum()  # the reference ran it


def test_load_read_before_its_wait_falls_back(monkeypatch: pytest.MonkeyPatch, rng: np.random.Generator) -> None:
    k = kernel("saxpy", "saxpy")
    wait = (0xBF8C0F70).to_bytes(4, "little")  # s_waitcnt vmcnt(0) before v_fmac_f32
    assert k.code.count(wait) == 1
    k.code = k.code.replace(wait, (0xBF800000).to_bytes(4, "little"))  # s_nop 0: v_fmac reads stale registers
    n = 64
    x, y = rng.random(n, np.float32) + 1, rng.random(n, np.float32) + 1

    def setup(b: Board) -> tuple[list[bytes], list[tuple[int, int, Any]]]:
        xa, ya = b.put(x), b.put(y)
        return [i32(n), f32(2.0), p64(xa), p64(ya)], [(ya, n, np.float32)]
    got = run(monkeypatch, "native", k, (1, 1, 1), (64, 1, 1), setup)
    assert got["executor"] == "reference"
    assert any("s_waitcnt" in e[1]["reason"] for e in got["events"] if e[0] == "native_fallback")
    assert np.all(got["outs"][0] == 0)  # the reference's stale read, kept


# ---------------------------------------------------------------------------------------- end to end (clang)
SAXPY = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

SGEMM = r"""#include <hip/hip_runtime.h>
#define TILE 32
extern "C" __global__ void sgemm_tiled(int m, int n, int k, const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c) {
  __shared__ float a_tile[TILE][TILE];
  __shared__ float b_tile[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int t = 0; t < k; t += TILE) {
    a_tile[ty][tx] = (row < m && t + tx < k) ? a[row * k + t + tx] : 0.0f;
    b_tile[ty][tx] = (t + ty < k && col < n) ? b[(t + ty) * n + col] : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < TILE; ++kk) acc += a_tile[ty][kk] * b_tile[kk][tx];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = acc;
}
"""

LANES = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void lanes(const float* x, float* out, int* picked) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  for (int o = 32; o > 0; o >>= 1) v += __shfl_down(v, o);
  if (threadIdx.x % 64 == 0) out[i / 64] = v;
  picked[i] = __builtin_amdgcn_readlane(i * 3, 5);
}
"""

EDGES = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void edges(const float* a, const float* b, const float* c, const unsigned* u, float* f,
                                 unsigned* r, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  unsigned p = u[i], q = u[n - 1 - i];
  f[8 * i + 0] = fmaf(x, y, z);
  f[8 * i + 1] = x + y;
  f[8 * i + 2] = x * y - z;
  f[8 * i + 3] = fminf(x, y);
  f[8 * i + 4] = fmaxf(x, z);
  f[8 * i + 5] = floorf(x) + truncf(y);
  f[8 * i + 6] = rintf(z);
  f[8 * i + 7] = (float)(int)p + (float)q;
  r[8 * i + 0] = __umulhi(p, q);
  r[8 * i + 1] = __popc(p) + __clz(q);
  r[8 * i + 2] = __brev(p) ^ (q >> (p & 31));
  r[8 * i + 3] = (unsigned)((int)p >> (q & 31)) + (p << 3);
  r[8 * i + 4] = min(p, q) * max((int)p, (int)q);
  r[8 * i + 5] = (p >> 5) & 0x3ff;
  r[8 * i + 6] = (unsigned)(int)x;
  r[8 * i + 7] = (unsigned)y;
}
"""

SPIN = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void spin(volatile int* flag, int* out) {
  int i = 0;
  while (flag[0] == 0) ++i;
  out[threadIdx.x] = i;
}
"""


@needs_clang
def test_bench_saxpy_and_sgemm_through_hip(monkeypatch: pytest.MonkeyPatch, mi300x: Any,
                                          rng: np.random.Generator) -> None:
    import strata.hip as hip

    n = 70_000
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    k = hip.compile(SAXPY).get_function("saxpy")

    def make_saxpy() -> tuple[tuple[Any, ...], list[Any]]:
        dx, dy = hip.to_device(x), hip.to_device(y)
        return (np.int32(n), np.float32(3.0), dx, dy), [dy]
    (out,), _, _ = on_both_executors(monkeypatch, lambda args: k((n + 255) // 256, 256, args), make_saxpy)
    assert np.array_equal(out, (np.float64(3.0) * x + y.astype(np.float64)).astype(np.float32))

    size = 96  # 3 x 3 tiles of 32 x 32: 1024-lane workgroups of 16 waves meeting at s_barrier
    a, b = rng.standard_normal((size, size), np.float32), rng.standard_normal((size, size), np.float32)
    g = hip.compile(SGEMM).get_function("sgemm_tiled")

    def make_gemm() -> tuple[tuple[Any, ...], list[Any]]:
        dc = hip.zeros((size, size), np.float32)
        return (np.int32(size), np.int32(size), np.int32(size), hip.to_device(a), hip.to_device(b), dc), [dc]
    (c,), _, _ = on_both_executors(monkeypatch, lambda args: g((3, 3), (32, 32), args), make_gemm)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@needs_clang
def test_cross_lane_shuffles_and_readlane(monkeypatch: pytest.MonkeyPatch, mi300x: Any,
                                          rng: np.random.Generator) -> None:
    import strata.hip as hip

    k = hip.compile(LANES).get_function("lanes")
    x = rng.standard_normal(512).astype(np.float32)

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out, picked = hip.zeros(8, np.float32), hip.zeros(512, np.int32)
        return (hip.to_device(x), out, picked), [out, picked]
    (out, picked), _, _ = on_both_executors(monkeypatch, lambda args: k(2, 256, args), make)
    np.testing.assert_allclose(out, x.reshape(8, 64).sum(1, dtype=np.float64), rtol=1e-5, atol=1e-5)
    assert np.array_equal(picked, np.repeat(np.arange(8) * 64 + 5, 64) * 3)


@needs_clang
def test_float_and_integer_edge_values(monkeypatch: pytest.MonkeyPatch, mi300x: Any, rng: np.random.Generator) -> None:
    import strata.hip as hip

    n = 1000
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, 3.4e38, -3.4e38, 0.5, -0.5,
                     1.5, 2.5, -2.5, 2147483648.0, -2147483904.0, 4294967296.0], np.float32)
    a, b, c = (np.where(rng.random(n) < 0.3, rng.choice(edge, n), (rng.standard_normal(n) * 1e3).astype(np.float32))
               .astype(np.float32) for _ in range(3))
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    u[:4] = [0, 0xFFFFFFFF, 0x80000000, 1]
    k = hip.compile(EDGES).get_function("edges")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        f, r = hip.zeros(8 * n, np.float32), hip.zeros(8 * n, np.uint32)
        return (*(hip.to_device(v) for v in (a, b, c, u)), f, r, np.int32(n)), [f, r]
    (f, r), _, _ = on_both_executors(monkeypatch, lambda args: k(-(-n // 256), 256, args), make)
    f, r = f.reshape(n, 8), r.reshape(n, 8)
    with np.errstate(all="ignore"):
        assert np.array_equal(f[:, 1], a + b, equal_nan=True)
        assert np.array_equal(f[:, 6], np.rint(c), equal_nan=True)
    assert np.array_equal(r[:, 0], ((u.astype(np.uint64) * u[::-1].astype(np.uint64)) >> 32).astype(np.uint32))
    assert np.array_equal(r[:, 5], (u >> 5) & 0x3FF)


@needs_clang
def test_runaway_kernel_hits_the_watchdog(monkeypatch: pytest.MonkeyPatch, mi300x: Any) -> None:
    import strata.cuda as cuda
    import strata.hip as hip

    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "0.5")
    k = hip.compile(SPIN).get_function("spin")
    flag, out = hip.zeros(1, np.int32), hip.zeros(64, np.int32)
    with trace.record() as rec:
        try:
            with pytest.raises(LaunchTimeout):
                k(1, 64, (flag, out)).wait()
        finally:
            cuda.current_device().reset()
    assert not [e for e in rec.events if e.name == "native_fallback"]



IDS = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void ids(unsigned* out, const float* x, float* y) {
  int b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  int t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[b * blockDim.x * blockDim.y * blockDim.z + t] =
      blockIdx.x | blockIdx.y << 4 | blockIdx.z << 8 | threadIdx.x << 12 | threadIdx.y << 16 | threadIdx.z << 20;
  if (t < 64) y[b * 64 + t] = 2.0f * x[b * 64 + t] + y[b * 64 + t];  // a whole wave of contiguous dwords
}
"""


@needs_clang
@pytest.mark.parametrize("block", [(5, 3, 7), (64, 1, 1)])  # two waves, the second partial (EXEC off past 105); one
def test_waves_start_with_the_reference_registers_over_many_batches(monkeypatch: pytest.MonkeyPatch, mi300x: Any,
                                                                    rng: np.random.Generator,
                                                                    block: tuple[int, int, int]) -> None:
    """The native code sets each wave's registers as it starts it: workgroup ids in x, y, z, packed work-item ids
    in v0 and EXEC as the reference sets them, in every batch (two workgroups each: a batch's first workgroup is
    not 0)."""
    import strata.hip as hip
    from strata.hw.amdgpu import executor as amd_ref

    monkeypatch.setattr(amd_ref, "VGPR_BATCH_BYTES", 1)
    monkeypatch.setenv("STRATA_CHUNK_LANES", str(64 * -(-block[0] * block[1] * block[2] // 64)))
    grid = (3, 2, 4)
    threads = block[0] * block[1] * block[2]
    x, y = rng.random(24 * 64, np.float32), rng.random(24 * 64, np.float32)
    k = hip.compile(IDS).get_function("ids")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out, dy = hip.zeros(24 * threads, np.uint32), hip.to_device(y)
        return (out, hip.to_device(x), dy), [out, dy]
    (out, got_y), _, _ = on_both_executors(monkeypatch, lambda args: k(grid, block, args), make)
    bz, by, bx, tz, ty, tx = np.indices((4, 2, 3, block[2], block[1], block[0])).reshape(6, -1)
    assert np.array_equal(out, (bx | by << 4 | bz << 8 | tx << 12 | ty << 16 | tz << 20).astype(np.uint32))
    assert np.array_equal(got_y, (np.float64(2.0) * x + y.astype(np.float64)).astype(np.float32))


@needs_clang
def test_amd_code_starts_at_O0_and_a_hot_kernel_is_recompiled_at_O3(monkeypatch: pytest.MonkeyPatch,
                                                                     rng: np.random.Generator, tmp_path: Any) -> None:
    """The two code tiers (docs/executor.md) on a CDNA kernel: -O0 at first, -O3 once hot, the same bits and
    counters on both, and both against NumPy."""
    from strata.hw.native import amd_executor, optimizer, tiering

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    monkeypatch.setenv("STRATA_NATIVE_OPT", "auto")
    k = kernel("saxpy", "saxpy")
    prog = load_program(k)
    n = 1000
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    want = (np.float64(2.5) * x + y.astype(np.float64)).astype(np.float32)

    def dispatch() -> tuple[bytes, dict[str, Any], int]:
        b = Board()
        xa, ya = b.put(x), b.put(y)
        seg = kernarg.build(k, [i32(n), f32(2.5), p64(xa), p64(ya)], (4, 1, 1), (256, 1, 1))
        launch = AmdLaunch((4, 1, 1), (256, 1, 1), b.put(seg + bytes(-len(seg) % 256), "kernarg"),
                           k.group_segment_fixed_size)
        counters = execute(prog, launch, b.mem, batch_lanes=1 << 16)
        assert launch.executor == "native"
        out = b.get(ya, n, np.float32)
        np.testing.assert_array_equal(out, want)
        ck = amd_executor.compiled(prog)
        assert isinstance(ck, amd_executor.CompiledAmd)
        return out.tobytes(), dataclasses.asdict(counters), ck.opt

    first = dispatch()
    assert first[2] == 0
    monkeypatch.setattr(tiering, "OPTIMIZE_AFTER_S", 0.0)
    monkeypatch.setattr(tiering, "COMPILE_S_PER_INSTRUCTION", 0.0)
    dispatch()  # queues the -O3 recompile
    assert optimizer.settle(60.0) and not optimizer.errors
    hot = dispatch()
    assert hot == (first[0], first[1], 3)
