"""How the native AMD executor schedules waves, against the reference wave64 executor: a kernel without barriers
keeps a running wave's VGPRs on the stack and must hand them over whole when the wave stops early (a one-instruction
replay on the reference); a kernel with barriers runs workgroup by workgroup, releasing a workgroup's barrier
itself, and must still let other workgroups run while one waits on memory. Outputs bit for bit and counters as the
reference's, NumPy as the oracle."""

from __future__ import annotations

import shutil
from typing import Any

import numpy as np
import pytest

from strata.hw import native

from .native_harness import fault_report, on_both_executors

pytestmark = [
    pytest.mark.skipif(not native.available(), reason="llvmlite not installed (the native executor needs it)"),
    pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)"),
]


@pytest.fixture
def mi300x(mi300x: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """tests/conftest.py's MI300X, compiling at the first launch."""
    monkeypatch.setenv("STRATA_NATIVE_AFTER_MS", "0")
    return mi300x


# Each wave's load reads from two allocations (odd lanes from a, even lanes from b): the native check cannot serve
# it, so every wave stops there and the reference runs that one load. The values computed before it (t, u) live
# in VGPRs across the stop.
SPREAD = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void spread(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float t = 1.5f * (float)i + 0.25f, u = (float)(i * 7 % 13);
  const float* p = (i & 1) ? a : b;
  float v = p[i];
  out[i] = v * t + u;
}
"""


def test_waves_stopped_for_the_reference_keep_their_stack_registers(monkeypatch: pytest.MonkeyPatch,
                                                                   mi300x: Any) -> None:
    import strata.hip as hip

    n = 64 * 37 + 5  # a partial last wave
    rng = np.random.default_rng(5)
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    k = hip.compile(SPREAD).get_function("spread")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out = hip.zeros(n, np.float32)
        return (hip.to_device(a), hip.to_device(b), out, np.int32(n)), [out]
    (got,), counters, _ = on_both_executors(monkeypatch, lambda args: k(-(-n // 128), 128, args), make)
    i = np.arange(n)
    v = np.where(i & 1, a, b)
    t = (np.float32(1.5) * i.astype(np.float32) + np.float32(0.25)).astype(np.float32)
    want = (v.astype(np.float64) * t + (i * 7 % 13)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert counters["global_load_requests"] >= -(-n // 64)


# A workgroup reduction through LDS with two barriers per step, and between them a load from two allocations
# (odd workgroups' odd lanes read b): waves of some workgroups stop for the reference between barriers.
TREE = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void tree(const float* a, const float* b, float* out) {
  __shared__ float s[256];
  int t = threadIdx.x, g = blockIdx.x;
  const float* p = ((g & 1) && (t & 1)) ? b : a;
  s[t] = p[g * 256 + t];
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) {
    float x = t < k ? s[t] + s[t + k] : 0.0f;
    __syncthreads();
    if (t < k) s[t] = x;
    __syncthreads();
  }
  if (t == 0) out[g] = s[0];
}
"""


@pytest.mark.parametrize("one_batch", [True, False])
def test_barriers_released_per_workgroup_with_replays(monkeypatch: pytest.MonkeyPatch, mi300x: Any,
                                                      one_batch: bool) -> None:
    import strata.hip as hip
    from strata.hw.amdgpu import executor as amd_ref

    if not one_batch:  # one workgroup per batch
        monkeypatch.setattr(amd_ref, "VGPR_BATCH_BYTES", 1)
        monkeypatch.setenv("STRATA_CHUNK_LANES", "64")
    groups = 9
    rng = np.random.default_rng(6)
    a = rng.integers(-50, 50, groups * 256).astype(np.float32)  # (integers: every order of the sum is exact)
    b = rng.integers(-50, 50, groups * 256).astype(np.float32)
    k = hip.compile(TREE).get_function("tree")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out = hip.zeros(groups, np.float32)
        return (hip.to_device(a), hip.to_device(b), out), [out]
    (got,), counters, _ = on_both_executors(monkeypatch, lambda args: k(groups, 256, args), make)
    t = np.arange(256)
    src = np.stack([np.where((g & 1) & (t & 1), b[g * 256:(g + 1) * 256], a[g * 256:(g + 1) * 256])
                    for g in range(groups)])
    assert np.array_equal(got, src.sum(axis=1).astype(np.float32))
    assert counters["barriers"] == groups * 4 * (1 + 2 * 8)  # (4 waves per workgroup, 17 barriers each)


# Workgroup 0 waits (after a barrier of its own) for a flag that the last workgroup sets: its waves yield after
# their fuel, the other workgroups run, and the call comes back to it (how long it spins depends on the order of
# the waves, so only the outputs are compared).
WAIT = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void wait_flag(volatile int* flag, int* out) {
  __shared__ int s[128];
  int t = threadIdx.x, g = blockIdx.x;
  s[t] = g * 1000 + t;
  __syncthreads();
  int seen = 0;
  if (g == 0) {
    while (flag[0] == 0) {}
    seen = flag[0];
  } else if (g == gridDim.x - 1 && t == 0) {
    flag[0] = 7;
  }
  __syncthreads();
  out[g * 128 + t] = s[127 - t] + 100000 * seen;
}
"""


def test_a_workgroup_waiting_on_a_later_one_lets_it_run(mi300x: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import strata.hip as hip

    groups = 5
    k = hip.compile(WAIT).get_function("wait_flag")
    t = np.arange(128)
    want = np.stack([g * 1000 + 127 - t for g in range(groups)])
    want[0] += 700000
    for ex in ("reference", "native"):
        monkeypatch.setenv("STRATA_EXECUTOR", ex)
        flag, out = hip.zeros(1, np.int32), hip.zeros(groups * 128, np.int32)
        r = k(groups, 128, (flag, out))
        r.wait()
        assert r.executor == ex
        assert np.array_equal(out.get().reshape(groups, 128), want)


# 64-bit shifts by constants below and above 32 (v_lshlrev_b64, v_lshrrev_b64, v_ashrrev_i64 by 7 and 45) and
# v_lshl_add_u64 with carries into the high words: the native code does them on 32-bit word pairs.
SHIFTS = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void shifts(const unsigned long long* x, unsigned long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long v = x[i];
  long long s = (long long)v;
  unsigned long long* o = out + 8 * (long long)i;
  o[0] = v << 3; o[1] = v << 37; o[2] = v >> 5; o[3] = v >> 40;
  o[4] = (unsigned long long)(s >> 7); o[5] = (unsigned long long)(s >> 45);
  o[6] = v << 32; o[7] = (unsigned long long)(s >> 32) + (v >> 63);
}
"""


def test_64_bit_shifts_and_adds_on_word_pairs(monkeypatch: pytest.MonkeyPatch, mi300x: Any) -> None:
    import strata.hip as hip

    n = 64 * 5 - 9
    rng = np.random.default_rng(8)
    x = rng.integers(0, 1 << 64, n, dtype=np.uint64)
    x[:4] = [0, 0xFFFFFFFFFFFFFFFF, 0x8000000000000000, 0x00000000FFFFFFFF]
    k = hip.compile(SHIFTS).get_function("shifts")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out = hip.zeros(8 * n, np.uint64)
        return (hip.to_device(x), out, np.int32(n)), [out]
    (got,), _, _ = on_both_executors(monkeypatch, lambda args: k(-(-n // 64), 64, args), make)
    s = x.view(np.int64)
    want = np.stack([x << np.uint64(3), x << np.uint64(37), x >> np.uint64(5), x >> np.uint64(40),
                     (s >> 7).view(np.uint64), (s >> 45).view(np.uint64), x << np.uint64(32),
                     (s >> 32).view(np.uint64) + (x >> np.uint64(63))], axis=1).ravel()
    assert np.array_equal(got, want)


# LDS reads at lane-chosen byte offsets into the workgroup's 64 floats: up to the last dword they are served
# natively; one past the end or misaligned, the native check sends the wave to the reference, whose fault report
# is the one raised.
LDS_INDEX = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void lds_index(const int* idx, float* out) {
  __shared__ float s[64];
  int t = threadIdx.x, g = blockIdx.x;
  if (t < 64) s[t] = (float)(g * 100 + t);
  __syncthreads();
  int j = idx[g * blockDim.x + t];
  out[g * blockDim.x + t] = *(const float*)((const char*)s + j);
}
"""
LDS_GROUPS, LDS_THREADS = 6, 128


def lds_offsets(bad: str | None) -> np.ndarray:
    idx = 4 * np.random.default_rng(9).integers(0, 64, LDS_GROUPS * LDS_THREADS).astype(np.int32)
    idx[5 * LDS_THREADS:5 * LDS_THREADS + 64] = 4 * 63  # workgroup 5's first wave: every lane the last dword
    if bad == "past_the_end":
        idx[3 * LDS_THREADS + 70] = 4 * 64  # workgroup 3, its second wave
    elif bad == "misaligned":
        idx[3 * LDS_THREADS + 70] = 4 * 3 + 2
    return idx


@pytest.mark.parametrize("bad", [None, "misaligned"])
def test_lds_accesses_up_to_the_last_dword_and_misaligned(monkeypatch: pytest.MonkeyPatch, mi300x: Any,
                                                          bad: str | None) -> None:
    """(A misaligned dword read is served by the reference handler, bytes assembled: the same bits natively.)"""
    import strata.hip as hip

    idx = lds_offsets(bad)
    k = hip.compile(LDS_INDEX).get_function("lds_index")

    def make() -> tuple[tuple[Any, ...], list[Any]]:
        out = hip.zeros(LDS_GROUPS * LDS_THREADS, np.float32)
        return (hip.to_device(idx), out), [out]
    (got,), _, _ = on_both_executors(monkeypatch, lambda args: k(LDS_GROUPS, LDS_THREADS, args), make)
    g = np.repeat(np.arange(LDS_GROUPS), LDS_THREADS)
    fine = idx % 4 == 0
    assert np.array_equal(got[fine], (g * 100 + idx // 4)[fine].astype(np.float32))
    assert fine.all() == (bad is None)


def test_lds_access_past_the_end_reports_the_reference_fault(monkeypatch: pytest.MonkeyPatch, mi300x: Any) -> None:
    import strata.hip as hip

    idx = lds_offsets("past_the_end")
    k = hip.compile(LDS_INDEX).get_function("lds_index")

    def launch() -> Any:
        return k(LDS_GROUPS, LDS_THREADS, (hip.to_device(idx), hip.zeros(LDS_GROUPS * LDS_THREADS, np.float32)))
    reports = [fault_report(monkeypatch, ex, launch) for ex in ("reference", "native")]
    assert reports[0] == reports[1]
    assert reports[1]["workgroup"] == (3, 0, 0) and reports[1]["work_item"] == (70, 0, 0)


# Waves that loop over a barrier until a flag nobody sets: workgroup barriers are released inside the native
# code, which must still return to Python often enough for the watchdog to stop the launch.
BARRIER_LOOP = r"""#include <hip/hip_runtime.h>
extern "C" __global__ void barrier_loop(volatile int* flag, int* out) {
  int i = 0;
  do {
    ++i;
    __syncthreads();
  } while (flag[0] == 0);
  out[blockIdx.x * blockDim.x + threadIdx.x] = i;
}
"""


def test_a_kernel_looping_over_barriers_hits_the_watchdog(monkeypatch: pytest.MonkeyPatch, mi300x: Any) -> None:
    import strata.cuda as cuda
    import strata.hip as hip
    from strata import trace
    from strata.errors import LaunchTimeout

    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    monkeypatch.setenv("STRATA_KERNEL_TIMEOUT", "0.5")
    k = hip.compile(BARRIER_LOOP).get_function("barrier_loop")
    flag, out = hip.zeros(1, np.int32), hip.zeros(4 * 128, np.int32)
    with trace.record() as rec:
        try:
            with pytest.raises(LaunchTimeout):
                k(4, 128, (flag, out)).wait()
        finally:
            cuda.current_device().reset()
    assert not [e for e in rec.events if e.name == "native_fallback"]
