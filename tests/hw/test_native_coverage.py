"""Native executor coverage: kernels with instructions the native code generator does not compile (atomics,
warp votes, directed rounding, local memory, calls) run natively except for the blocks holding them, which
the reference handlers run (hw/native/partial.py). Each kernel is compiled by NVRTC and runs on both
executors from the same inputs: outputs bit-identical, LaunchReport counters identical, fault reports
identical; the trace says which blocks ran on the reference and why."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
from strata import trace  # noqa: E402
from strata.errors import DeviceFault  # noqa: E402

SRC = r"""
extern "C" __global__ void float_sum(int n, const float* x, float* total, unsigned* slots, int* order) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i] * 1.5f + 0.25f;                  // native arithmetic around the atomics
    atomicAdd(total, v);                             // one address: the sum's bits depend on the order
    order[i] = (int)atomicAdd(slots, 1u);            // each thread's ticket: the order itself
  }
}
extern "C" __global__ void ballots(int n, const int* x, unsigned* out, int* any_all, int* sums) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int scale = n * 3 + 1;                             // uniform: defined beside the vote, read after it
  int v = i < n ? x[i] : 0;
  unsigned b = __ballot_sync(0xffffffffu, v > 0);
  int a = __any_sync(0xffffffffu, v > 100) + 2 * __all_sync(0xffffffffu, v >= 0);
  int s = __reduce_add_sync(0xffffffffu, v);
  unsigned peers = __match_any_sync(0xffffffffu, v & 3);
  if (i < n) {
    out[i] = b ^ (peers * (unsigned)scale);
    any_all[i] = a * scale + (i & 31);
    sums[i] = s + scale;
  }
}
extern "C" __global__ void histogram(int n, const int* x, unsigned* bins) {
  __shared__ unsigned local[16];
  int t = threadIdx.x;
  if (t < 16) local[t] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[x[i] & 15], 1u);                // shared atomics: the block's own
  __syncthreads();
  if (t < 16) atomicAdd(&bins[t], local[t]);
}
extern "C" __global__ void local_array(int n, const int* idx, float* out) {
  float tmp[24];                                     // indexed by a loaded value: stays in local memory
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;                                // (native block) the rest runs on the reference
  for (int k = 0; k < 24; ++k) tmp[k] = (float)(i * k) * 0.5f;
  out[i] = tmp[idx[i] % 24] + tmp[(idx[i] + 5) % 24];
}
extern "C" __global__ void atomic_overrun(int n, unsigned* counts) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 2 * n) return;                            // (native block)
  atomicAdd(&counts[i % n], 1u);                     // threads past the allocation fault in the atomic
}
"""


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC)


def _both(monkeypatch: pytest.MonkeyPatch, fn: Any, grid: Any, block: Any, make: Any) -> tuple[list[np.ndarray], Any]:
    """Run on both executors from the same inputs; outputs bit-identical, counters identical. Returns the
    native outputs and the native run's trace."""
    results = {}
    for ex in ("reference", "native"):
        monkeypatch.setenv("STRATA_EXECUTOR", ex)
        args, outs = make()
        with trace.record() as rec:
            r = fn(grid, block, args)
            r.wait()
        assert r.executor == ex
        results[ex] = (dataclasses.asdict(r.counters), [o.get() for o in outs], rec)
    (c_ref, o_ref, _), (c_nat, o_nat, rec) = results["reference"], results["native"]
    for a, b in zip(o_ref, o_nat, strict=True):
        assert a.tobytes() == b.tobytes()
    assert c_nat == c_ref
    return o_nat, rec


def _partial(rec: Any) -> list[dict[str, Any]]:
    return [e.args for e in rec.events if e.name == "native_partial"]


def test_global_atomics_keep_the_reference_order(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    monkeypatch.setenv("STRATA_CHUNK_LANES", "256")  # 16 chunks: two host threads would reorder them
    n = 4000
    x = np.random.default_rng(3).standard_normal(n).astype(np.float32)

    def make() -> Any:
        total, slots, order = (cuda.to_device(np.zeros(1, np.float32)), cuda.to_device(np.zeros(1, np.uint32)),
                               cuda.to_device(np.full(n, -1, np.int32)))
        return (np.int32(n), cuda.to_device(x), total, slots, order), [total, slots, order]

    (total, slots, order), rec = _both(monkeypatch, mod.get_function("float_sum"), 16, 256, make)
    assert slots[0] == n and sorted(order.tolist()) == list(range(n))
    np.testing.assert_allclose(total[0], (x.astype(np.float64) * 1.5 + 0.25).sum(), rtol=1e-4)
    (info,) = _partial(rec)
    assert any("atom.global.add.f32" in why for why in info["reasons"]) and "atom" in info["serial"]
    assert not [e for e in rec.events if e.name == "native_fallback"]


def test_warp_votes_and_a_uniform_register_beside_them(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 900  # the last warp is partly past n (its lanes still vote)
    x = np.random.default_rng(5).integers(-20, 200, n).astype(np.int32)

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(n, dt)) for dt in (np.uint32, np.int32, np.int32)]
        return (np.int32(n), cuda.to_device(x), *outs), outs

    (ballot, any_all, sums), rec = _both(monkeypatch, mod.get_function("ballots"), 4, 256, make)
    scale = n * 3 + 1
    v = np.zeros(1024, np.int64)
    v[:n] = x
    w = v.reshape(-1, 32)
    bits = ((w > 0) << np.arange(32)).sum(axis=1).astype(np.uint64)
    want_sum = w.sum(axis=1)
    want_a = (w > 100).any(axis=1).astype(np.int64) + 2 * (w >= 0).all(axis=1)
    np.testing.assert_array_equal(sums, (np.repeat(want_sum, 32)[:n] + scale).astype(np.int32))
    np.testing.assert_array_equal(any_all, (np.repeat(want_a, 32)[:n] * scale + np.arange(n) % 32).astype(np.int32))
    key = w & 3
    peers = ((key[:, None, :] == key[:, :, None]) << np.arange(32)).sum(axis=2).astype(np.uint64).reshape(-1)
    want_b = (np.repeat(bits, 32) ^ (peers * np.uint64(scale))) & np.uint64(0xFFFFFFFF)
    np.testing.assert_array_equal(ballot, want_b[:n].astype(np.uint32))
    (info,) = _partial(rec)
    assert any("vote" in why or "match" in why or "redux" in why for why in info["reasons"])
    assert info["serial"] is None  # warp operations stay inside a chunk: both host threads may run


def test_shared_atomics_run_chunks_in_parallel(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    monkeypatch.setenv("STRATA_CHUNK_LANES", "512")
    n = 5000
    x = np.random.default_rng(7).integers(0, 1 << 20, n).astype(np.int32)

    def make() -> Any:
        bins = cuda.to_device(np.zeros(16, np.uint32))
        return (np.int32(n), cuda.to_device(x), bins), [bins]

    (bins,), rec = _both(monkeypatch, mod.get_function("histogram"), 8, 128, make)
    np.testing.assert_array_equal(bins, np.bincount(x & 15, minlength=16))
    (info,) = _partial(rec)
    assert "atom.global" in (info["serial"] or "")  # the final global atomicAdd orders the chunks


def test_local_memory_kernel_runs_natively(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 700
    idx = np.random.default_rng(9).integers(0, 1000, n).astype(np.int32)

    def make() -> Any:
        out = cuda.to_device(np.zeros(n, np.float32))
        return (np.int32(n), cuda.to_device(idx), out), [out]

    (out,), rec = _both(monkeypatch, mod.get_function("local_array"), 3, 256, make)
    i = np.arange(n)
    want = (i * (idx % 24)).astype(np.float32) * np.float32(0.5) + (i * ((idx + 5) % 24)).astype(np.float32) * \
        np.float32(0.5)
    np.testing.assert_array_equal(out, want)
    assert not [e for e in rec.events if e.name == "native_fallback"]


def _fault(monkeypatch: pytest.MonkeyPatch, mod: Any, executor: str) -> dict[str, Any]:
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    counts = cuda.to_device(np.zeros(100, np.uint32))
    try:
        with pytest.raises(DeviceFault) as info:
            mod.get_function("atomic_overrun")(2, 128, (np.int32(200), counts)).wait()
    finally:
        cuda.current_device().reset()
    return {"message": str(info.value).replace(hex(info.value.report["address"]), "A").replace(hex(counts.ptr), "C"),
            "report": {k: v for k, v in info.value.report.items() if k not in ("address", "nearest")}}


def test_fault_in_a_reference_block_is_the_references(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    ref, nat = _fault(monkeypatch, mod, "reference"), _fault(monkeypatch, mod, "native")
    assert ref["report"]["thread"] == (100, 0, 0) and ref["report"]["block"] == (0, 0, 0)
    assert nat == ref
