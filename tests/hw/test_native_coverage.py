"""Native executor coverage: kernels with instructions the native code generator does not compile (atomics,
warp votes, directed division, local memory, calls) run natively except for the blocks holding them, which
the reference handlers run (hw/native/partial.py). Each kernel is compiled by NVRTC and runs on both
executors from the same inputs: outputs bit-identical, LaunchReport counters identical, fault reports
identical; the trace says which blocks ran on the reference and why."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

from native_harness import on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402
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
extern "C" __global__ void uniform_beside_fallback(int n, const float* a, float* b, int* c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int scale = n * 3 + 1;                             // uniform, defined in the block of the div.rz
  float r = __fdiv_rz(a[i], 3.0f);                   // (directed division: that block runs on the reference)
  for (int k = 0; k < (i & 3); ++k) r = r * 0.5f + (float)scale;   // native blocks reading scale
  b[i] = r;
  c[i] = scale + i;
}
extern "C" __global__ void warp_groups(int n, const int* x, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lane = threadIdx.x & 31;
  int v = i < n ? x[i] : 0;
  unsigned* o = out + 8 * i;
  if (v & 1) {                                       // divergent: the odd values' lanes
    unsigned am = __activemask();
    o[0] = am;
    o[1] = __ballot_sync(am, v > 50);
    o[2] = (unsigned)__reduce_min_sync(am, v);
    o[3] = __reduce_max_sync(am, (unsigned)v);
    int pred;
    o[4] = __match_all_sync(am, v & 1, &pred);       // all odd: the group, pred true
    o[5] = pred + 2 * __all_sync(am, v > -50) + 4 * __uni_sync(am, v > 0);
    o[6] = __match_any_sync(am, v & 6);
    o[7] = (unsigned)__reduce_max_sync(am, v);
  } else {                                           // the even ones: each half-warp its own group
    unsigned g = __activemask() & (lane < 16 ? 0x0000ffffu : 0xffff0000u);
    o[0] = __reduce_and_sync(g, (unsigned)v);
    o[1] = __reduce_or_sync(g, (unsigned)v);
    o[2] = __reduce_xor_sync(g, (unsigned)v);
    o[3] = __reduce_add_sync(g, (unsigned)v);
    o[4] = __ballot_sync(g, v > 0);
    o[5] = (unsigned)__reduce_min_sync(g, v);
    o[6] = __reduce_min_sync(g, (unsigned)v);
    o[7] = __any_sync(g, v > 90);
  }
}
extern "C" __global__ void prefix_faults(int n, int shift_x, int shift_y, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i + shift_x];                          // native: the block's ops before the div.rz
  y[i + shift_y] = __fdiv_rz(v, 3.0f);               // the div.rz on the reference, the store native again
}
__device__ int counter_table[64];
__device__ float scale_of;
__constant__ float weights[16];
extern "C" __global__ void module_variables(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i] * weights[i & 15] + scale_of;       // ld.const / ld.global at a variable's address
  counter_table[i & 63] = i;                          // st.global at a variable's address (+ offset)
  y[i] = v + (float)counter_table[(i + 1) & 63];
}
extern "C" __global__ void set_scale(float s) { scale_of = s; }
__device__ __noinline__ float pure_helper(float x, int k) { return x * (float)k + 1.0f; }
__device__ __noinline__ void counting_helper(int* c, int k) { atomicAdd(c, k); }
extern "C" __global__ void calls(int n, const float* x, float* y, int* c, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = pure_helper(x[i], i & 7);                   // a call: its block runs on the reference
  if (count) counting_helper(c, i);                  // a callee with a global atomic: chunks in order
}
extern "C" __global__ void pure_calls(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = pure_helper(x[i], i & 7);
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
extern "C" __global__ void every_atomic(int n, const int* k, const float* f, const double* d, int* ints,
                                        unsigned* uints, float* floats, double* doubles, unsigned long long* u64s,
                                        long long* s64s, int* olds, float* fold, double* dold, long long* lold) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = k[i], slot = v & 3;
  int o = atomicAdd(&ints[slot], v);
  o ^= atomicMin(&ints[4 + slot], v) * 3;
  o += atomicMax(&ints[8 + slot], v) * 5;
  o ^= (int)atomicMin(&uints[slot], (unsigned)v) * 7;
  o += (int)atomicMax(&uints[4 + slot], (unsigned)v) * 11;
  o ^= atomicAnd(&ints[12 + slot], v) * 13;
  o += atomicOr(&ints[16 + slot], v) * 17;
  o ^= atomicXor(&ints[20 + slot], v) * 19;
  o += atomicExch(&ints[24 + slot], v) * 23;
  o ^= atomicCAS(&ints[28 + slot], v & 7, v) * 29;
  o += (int)atomicInc(&uints[8 + slot], 5u) * 31;
  o ^= (int)atomicDec(&uints[12 + slot], 6u) * 37;
  if (v & 4) atomicAdd(&ints[32 + slot], 1);                        // guarded, result unused: red
  olds[i] = o;
  fold[i] = atomicAdd(&floats[slot], f[i]);
  dold[i] = atomicAdd(&doubles[slot], d[i]);
  lold[i] = (long long)atomicAdd(&u64s[slot], (unsigned long long)(long long)v)
          ^ atomicMin(&s64s[slot], (long long)v * 1000000007LL) ^ atomicMax(&s64s[4 + slot], (long long)v * 3);
}
extern "C" __global__ void shared_atomics(int n, const int* k, const float* f, int* out, float* fout) {
  __shared__ int si[8];
  __shared__ float sf[4];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  if (t < 8) si[t] = t < 4 ? 0 : 0x7fffffff;
  if (t < 4) sf[t] = 0.f;
  __syncthreads();
  int v = i < n ? k[i] : 0;
  int o = atomicAdd(&si[v & 3], v) ^ atomicMin(&si[4 + (v & 3)], v) ^ atomicExch(&si[(v >> 2) & 3], v);
  float fo = atomicAdd(&sf[v & 3], i < n ? f[i] : 0.f);     // shared f32 add: no flush to zero
  __syncthreads();
  if (i < n) { out[i] = o; fout[i] = fo; }
  if (t < 8) out[n + blockIdx.x * 8 + t] = si[t];
  if (t < 4) fout[n + blockIdx.x * 4 + t] = sf[t];
}
extern "C" __global__ void generic_atomics(int n, int* g, int* out) {
  __shared__ int s[1];
  int t = threadIdx.x;
  if (t == 0) s[0] = 0;
  __syncthreads();
  int* p = (t & 1) ? &s[0] : &g[blockIdx.x];                    // one generic atomic, lanes in two spaces
  int o = atomicAdd(p, t + 1);
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = o + (t == 0 ? 1000 * s[0] : 0);
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
    """Run on both executors from the same inputs (native_harness). Returns the native outputs and the native
    run's trace."""
    outs, _, rec = on_both_executors(monkeypatch, lambda args: fn(grid, block, args), make)
    return outs, rec


def _partial(rec: Any) -> list[dict[str, Any]]:
    return [e.args for e in rec.events if e.name == "native_partial"]


def _compiled(mod: Any, kernel: str) -> Any:
    from strata.hw.native import executor

    ck = executor.compiled(mod.loaded(cuda.current_device()).program, kernel)
    assert isinstance(ck, executor.CompiledKernel)
    return ck


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
    assert not _partial(rec) and not [e for e in rec.events if e.name == "native_fallback"]  # all native
    assert "atom.global.add" in (_compiled(mod, "float_sum").serial or "")  # chunks in the reference's order


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
    assert not _partial(rec)
    assert _compiled(mod, "ballots").serial is None  # warp operations stay inside a chunk: both host threads run


def test_uniform_register_defined_in_a_reference_block(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 1000
    a = np.random.default_rng(6).standard_normal(n).astype(np.float32)

    def make() -> Any:
        b, c = cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.zeros(n, np.int32))
        return (np.int32(n), cuda.to_device(a), b, c), [b, c]

    (b, c), rec = _both(monkeypatch, mod.get_function("uniform_beside_fallback"), 4, 256, make)
    (info,) = _partial(rec)
    assert any("div.rz.f32" in why for why in info["reasons"]) and info["serial"] is None
    assert any("(ops " in why for why in info["reasons"])  # the block's ops before the div.rz ran natively
    assert _compiled(mod, "uniform_beside_fallback").pieces  # and those after it, as a second native piece
    np.testing.assert_array_equal(c, np.arange(n, dtype=np.int32) + np.int32(3 * n + 1))
    r = a / np.float32(3)  # within an ulp of the round-toward-zero quotient; then the loop, on the device's values
    assert np.all(np.abs(b[(np.arange(n) & 3) == 0] - r[(np.arange(n) & 3) == 0]) <= np.spacing(np.abs(r))[
        (np.arange(n) & 3) == 0])


def test_shared_atomics_run_chunks_in_parallel(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    monkeypatch.setenv("STRATA_CHUNK_LANES", "512")
    n = 5000
    x = np.random.default_rng(7).integers(0, 1 << 20, n).astype(np.int32)

    def make() -> Any:
        bins = cuda.to_device(np.zeros(16, np.uint32))
        return (np.int32(n), cuda.to_device(x), bins), [bins]

    (bins,), rec = _both(monkeypatch, mod.get_function("histogram"), 8, 128, make)
    np.testing.assert_array_equal(bins, np.bincount(x & 15, minlength=16))
    assert not _partial(rec)
    assert "atom.global.add.u32" in (_compiled(mod, "histogram").serial or "")  # the final one orders the chunks


def test_local_memory_kernel_runs_natively(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 700
    idx = np.random.default_rng(9).integers(0, 1000, n).astype(np.int32)

    def make() -> Any:
        out = cuda.to_device(np.zeros(n, np.float32))
        return (np.int32(n), cuda.to_device(idx), out), [out]

    (out,), rec = _both(monkeypatch, mod.get_function("local_array"), 3, 256, make)
    assert len(_compiled(mod, "local_array").pieces[1]) > 2  # native pieces between the local accesses
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


def test_every_atomic_operation_on_global_memory(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    monkeypatch.setenv("STRATA_CHUNK_LANES", "512")  # several chunks: their order matters
    n = 3000
    rng = np.random.default_rng(11)
    k = rng.integers(-(1 << 30), 1 << 30, n).astype(np.int32)
    f = rng.standard_normal(n).astype(np.float32)
    slot = k & 3
    f[slot == 2] = np.float32(3e-39)  # subnormals: global f32 atomics flush them (slot 2 stays +0)
    f[np.flatnonzero(slot == 3)[5]] = np.float32(np.nan)  # slot 3 turns NaN: the canonical one
    d = rng.standard_normal(n)

    def make() -> Any:
        ints = np.zeros(36, np.int32)
        ints[4:8], ints[8:12], ints[12:16] = 0x7FFFFFFF, -(1 << 31), -1
        uints = np.zeros(16, np.uint32)
        uints[0:4] = 0xFFFFFFFF
        s64 = np.zeros(8, np.int64)
        s64[0:4], s64[4:8] = np.iinfo(np.int64).max, np.iinfo(np.int64).min
        bufs = [cuda.to_device(a) for a in (ints, uints, np.zeros(4, np.float32), np.zeros(4, np.float64),
                                            np.zeros(4, np.uint64), s64, np.zeros(n, np.int32),
                                            np.zeros(n, np.float32), np.zeros(n, np.float64), np.zeros(n, np.int64))]
        return (np.int32(n), cuda.to_device(k), cuda.to_device(f), cuda.to_device(d), *bufs), bufs

    (ints, uints, floats, doubles, u64s, s64s, *_), rec = _both(monkeypatch, mod.get_function("every_atomic"), 12,
                                                                256, make)
    assert not _partial(rec)
    for s in range(4):  # the order-independent results against NumPy
        ks = k[slot == s].astype(np.int64)
        assert ints[s] == np.array(int(ks.sum()) & 0xFFFFFFFF, np.uint32).view(np.int32)
        assert ints[4 + s] == ks.min() and ints[8 + s] == ks.max()
        assert uints[s] == ks.astype(np.uint32).min() and uints[4 + s] == ks.astype(np.uint32).max()
        assert ints[12 + s] == np.bitwise_and.reduce(ks.astype(np.int32))
        assert ints[16 + s] == np.bitwise_or.reduce(ks.astype(np.int32))
        assert ints[20 + s] == np.bitwise_xor.reduce(ks.astype(np.int32))
        assert ints[32 + s] == np.count_nonzero(ks & 4)
        assert int(u64s[s]) == int(ks.sum()) & ((1 << 64) - 1)
        assert s64s[s] == (ks * 1000000007).min() and s64s[4 + s] == (ks * 3).max()
        np.testing.assert_allclose(doubles[s], d[slot == s].sum(), rtol=1e-9)
    np.testing.assert_allclose(floats[:2], [f[slot == s].astype(np.float64).sum() for s in range(2)], rtol=1e-3)
    assert floats.view(np.uint32)[2] == 0 and floats.view(np.uint32)[3] == 0x7FFFFFFF


def test_shared_atomics_and_their_returned_values(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 1000
    rng = np.random.default_rng(12)
    k = rng.integers(-1000, 1000, n).astype(np.int32)
    f = rng.standard_normal(n).astype(np.float32)
    f[::7] = np.float32(2e-39)  # subnormals stay: shared memory f32 atomics do not flush

    def make() -> Any:
        out, fout = cuda.to_device(np.zeros(n + 32, np.int32)), cuda.to_device(np.zeros(n + 16, np.float32))
        return (np.int32(n), cuda.to_device(k), cuda.to_device(f), out, fout), [out, fout]

    (out, fout), rec = _both(monkeypatch, mod.get_function("shared_atomics"), 4, 256, make)
    assert not _partial(rec)
    kk = np.zeros(1024, np.int64)
    kk[:n] = k
    blocks = kk.reshape(4, 256)
    for b in range(4):
        for s in range(4):
            assert out[n + 8 * b + 4 + s] == min(0x7FFFFFFF, blocks[b][(blocks[b] & 3) == s].min(initial=1 << 31))


def test_generic_atomic_over_two_spaces_goes_to_the_reference(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    def make() -> Any:
        g, out = cuda.to_device(np.zeros(2, np.int32)), cuda.to_device(np.zeros(256, np.int32))
        return (np.int32(0), g, out), [g, out]

    (g, out), rec = _both(monkeypatch, mod.get_function("generic_atomics"), 2, 128, make)
    assert g.tolist() == [sum(range(1, 129, 2))] * 2  # the even threads (t + 1 odd) hit global memory
    assert out[0] == 1000 * sum(range(2, 129, 2)) and out[128] == out[0]


def test_warp_reductions_in_divergent_groups_and_half_warps(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 512
    x = np.random.default_rng(8).integers(-100, 100, n).astype(np.int32)

    def make() -> Any:
        out = cuda.to_device(np.zeros(8 * n, np.uint32))
        return (np.int32(n), cuda.to_device(x), out), [out]

    (out,), rec = _both(monkeypatch, mod.get_function("warp_groups"), 2, 256, make)
    assert not _partial(rec)
    out = out.reshape(n, 8)
    u = x.astype(np.uint32)
    for w in range(n // 32):  # the oracle, warp by warp
        lanes = np.arange(32 * w, 32 * w + 32)
        odd = lanes[(x[lanes] & 1) == 1]
        am = sum(1 << (int(i) & 31) for i in odd)
        bits = lambda sel: sum(1 << (int(i) & 31) for i in sel)  # noqa: E731
        for i in odd:
            assert out[i, 0] == am and out[i, 1] == bits(odd[x[odd] > 50])
            assert out[i, 2] == np.uint32(x[odd].min().astype(np.int32).view(np.uint32)) and out[i, 3] == u[odd].max()
            assert out[i, 4] == am and out[i, 5] == 1 + 2 * bool((x[odd] > -50).all()) + 4 * bool(
                (x[odd] > 0).all() or (x[odd] <= 0).all())
            assert out[i, 6] == bits(odd[(x[odd] & 6) == (x[i] & 6)])
            assert out[i, 7] == np.int32(x[odd].max()).view(np.uint32)
        even = lanes[(x[lanes] & 1) == 0]
        for half in (even[(even & 31) < 16], even[(even & 31) >= 16]):
            if not half.size:
                continue
            want = [np.bitwise_and.reduce(u[half]), np.bitwise_or.reduce(u[half]), np.bitwise_xor.reduce(u[half]),
                    np.uint32(int(u[half].astype(np.uint64).sum()) & 0xFFFFFFFF), bits(half[x[half] > 0]),
                    np.int32(x[half].min()).view(np.uint32), u[half].min(), int((x[half] > 90).any())]
            for i in half:
                assert out[i].tolist() == [int(v) for v in want]


FLOAT_SRC = r"""
extern "C" __global__ void float_funcs(int n, const float* a, const float* b, const double* c, float* out,
                                       double* dout) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  double z = c[i], r, q;
  out[8 * i + 0] = __frcp_rn(x);
  out[8 * i + 1] = __fsqrt_rn(x);
  out[8 * i + 2] = rsqrtf(x);
  out[8 * i + 3] = __fdividef(x, y);
  out[8 * i + 4] = copysignf(x, y);
  out[8 * i + 5] = sqrtf(y);
  out[8 * i + 6] = 1.0f / y;
  out[8 * i + 7] = x / y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(z));
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(q) : "d"(z));
  dout[6 * i + 0] = __drcp_rn(z);
  dout[6 * i + 1] = sqrt(z);
  dout[6 * i + 2] = rsqrt(z);
  dout[6 * i + 3] = copysign(z, (double)x);
  dout[6 * i + 4] = r;
  dout[6 * i + 5] = q;
}
"""


@pytest.mark.parametrize("fast", [False, True], ids=["ieee", "fast_math"])
def test_rcp_sqrt_rsqrt_div_approx_copysign(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    fmod = cuda.compile(FLOAT_SRC, options=["--use_fast_math"] if fast else [])
    rng = np.random.default_rng(13)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3e38, -3e38, 2.0**127, 1.0, -4.0],
                       np.float32)
    n = 600
    a = np.concatenate([special, rng.standard_normal(n - special.size).astype(np.float32) * 10])
    b = np.concatenate([special[::-1], (rng.standard_normal(n - special.size) * 1e3).astype(np.float32)])
    b[rng.integers(0, n, 20)] = np.float32(2.0**126) * 1.5  # div.approx's large denominators
    c = np.concatenate([[0.0, -0.0, np.inf, np.nan, 5e-324, -2.0, 1e300], rng.standard_normal(n - 7) * 1e5])

    def make() -> Any:
        out, dout = cuda.to_device(np.zeros(8 * n, np.float32)), cuda.to_device(np.zeros(6 * n, np.float64))
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), out, dout), [out, dout]

    (out, dout), rec = _both(monkeypatch, fmod.get_function("float_funcs"), 3, 256, make)
    assert not _partial(rec)
    out, dout = out.reshape(n, 8), dout.reshape(n, 6)
    normal = (np.abs(a) > 1e-30) & (np.abs(a) < 1e30) & (np.abs(b) > 1e-30) & (np.abs(b) < 1e30) & (a > 0) & (b > 0)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(out[normal, 0], 1 / a[normal], rtol=1e-6)
        np.testing.assert_allclose(out[normal, 1], np.sqrt(a[normal]), rtol=1e-6)
        np.testing.assert_allclose(out[normal, 2], 1 / np.sqrt(a[normal]), rtol=1e-6)
        np.testing.assert_allclose(out[normal, 3], a[normal] / b[normal], rtol=1e-6)
        np.testing.assert_array_equal(out[:, 4], np.copysign(np.abs(a), b))
        ok = np.isfinite(c) & (np.abs(c) > 1e-300) & (c > 0)
        np.testing.assert_allclose(dout[ok, 0], 1 / c[ok], rtol=1e-15)
        np.testing.assert_allclose(dout[ok, 1], np.sqrt(c[ok]), rtol=1e-15)
        np.testing.assert_allclose(dout[ok, 4], 1 / c[ok], rtol=1e-6)  # upper 32 bits only
        np.testing.assert_allclose(dout[ok, 5], 1 / np.sqrt(c[ok]), rtol=1e-6)


HALF_SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halves(int n, const float* a, const float* b, unsigned short* o, unsigned* o2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float fa = a[i], fb = b[i];
  __half x = __float2half_rn(fa), y = __float2half_rn(fb);           // cvt.rn.f16.f32
  __nv_bfloat16 u = __float2bfloat16_rn(fa), v = __float2bfloat16_rn(fb);  // cvt.rn.bf16.f32
  __half r[6] = {x, __hadd(x, y), __hsub(x, y), __hmul(x, y), __hadd_sat(x, y), __hmul_sat(x, y)};
  for (int k = 0; k < 6; ++k) o[8 * i + k] = __half_as_ushort(r[k]);
  o[8 * i + 6] = __bfloat16_as_ushort(__hadd(u, v));
  o[8 * i + 7] = __bfloat16_as_ushort(__hsub(u, v));
  __half2 p = __halves2half2(x, y), q = __halves2half2(y, __float2half_rn(fa * 0.5f));
  __half2 s = __hadd2(p, q), m = __hmul2(p, q);
  o2[2 * i] = *(unsigned*)&s;
  o2[2 * i + 1] = *(unsigned*)&m;
}
"""


HALF_ATOMIC_SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void half_atomics(int n, const float* a, __half* h, __half2* h2, __nv_bfloat16* b,
                                        __nv_bfloat162* b2, unsigned short* olds) {
  __shared__ __half sh[4];
  int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x;
  if (t < 4) sh[t] = __float2half_rn(0.0f);
  __syncthreads();
  float v = i < n ? a[i] : 0.0f;
  __half old = atomicAdd(&h[i & 3], __float2half_rn(v));
  atomicAdd(&h2[i & 1], __floats2half2_rn(v, -2.0f * v));
  atomicAdd(&b[i & 3], __float2bfloat16_rn(v));
  atomicAdd(&b2[i & 1], __floats2bfloat162_rn(v * 0.5f, v));
  __half s = atomicAdd(&sh[i & 3], __float2half_rn(v * 4.0f));
  __syncthreads();
  if (i < n) { olds[2 * i] = __half_as_ushort(old); olds[2 * i + 1] = __half_as_ushort(s); }
  if (t < 4) h[4 + 4 * blockIdx.x + t] = sh[t];
}
"""


def test_half_atomic_add(monkeypatch: pytest.MonkeyPatch) -> None:
    hmod = cuda.compile(HALF_ATOMIC_SRC)
    monkeypatch.setenv("STRATA_CHUNK_LANES", "256")
    n = 900
    a = (np.random.default_rng(23).standard_normal(n) * 4).astype(np.float32)
    a[7], a[100] = 70000.0, np.nan  # an overflow to inf (slot 3), a NaN (slot 0): canonical NaNs follow

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(k, dt)) for k, dt in ((4 + 4 * 4, np.uint16), (2, np.uint32), (4, np.uint16),
                                                              (2, np.uint32), (2 * n, np.uint16))]
        return (np.int32(n), cuda.to_device(a), *outs), outs

    (h, h2, b, b2, olds), rec = _both(monkeypatch, hmod.get_function("half_atomics"), 4, 256, make)
    # (the shared __half's generic address, cvta.shared, runs on the reference; the atomics before it natively)
    assert all("atom" not in why for info in _partial(rec) for why in info["reasons"])
    assert h[0] == 0x7FFF and h[3] == 0x7C00  # NaN canonical; +inf stays +inf
    want = np.float16(0)
    with np.errstate(all="ignore"):
        for v in a[np.arange(n) % 4 == 1]:  # the serial order of lanes, one rounding each
            want = np.float16(np.float32(want) + np.float32(np.float16(v)))
    assert h[1] == want.view(np.uint16)


HALF_FMA_SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void half_fma(int n, const float* a, const float* b, const float* c, unsigned short* o,
                                    unsigned* o2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __float2half_rn(a[i]), y = __float2half_rn(b[i]), z = __float2half_rn(c[i]);
  __nv_bfloat16 u = __float2bfloat16_rn(a[i]), v = __float2bfloat16_rn(b[i]), w = __float2bfloat16_rn(c[i]);
  o[6 * i + 0] = __half_as_ushort(__hfma(x, y, z));
  o[6 * i + 1] = __half_as_ushort(__hfma_sat(x, y, z));
  o[6 * i + 2] = __half_as_ushort(__hfma_relu(x, y, z));
  o[6 * i + 3] = __bfloat16_as_ushort(__hmul(u, v));
  o[6 * i + 4] = __bfloat16_as_ushort(__hfma(u, v, w));
  o[6 * i + 5] = __bfloat16_as_ushort(__hfma_relu(u, v, w));
  __half2 p = __halves2half2(x, z), q = __halves2half2(y, x);
  __nv_bfloat162 r = __halves2bfloat162(u, w), s = __halves2bfloat162(v, u);
  __half2 f = __hfma2(p, q, p);
  __nv_bfloat162 g = __hmul2(r, s);
  o2[2 * i] = *(unsigned*)&f;
  o2[2 * i + 1] = *(unsigned*)&g;
}
"""


HALF_CMP_SRC = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void half_compare(int n, const float* a, const float* b, unsigned* o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = __float2half_rn(a[i]), y = __float2half_rn(b[i]);
  __nv_bfloat16 u = __float2bfloat16_rn(a[i]), v = __float2bfloat16_rn(b[i]);
  __half2 p = __halves2half2(x, y), q = __halves2half2(y, x);
  unsigned r = __hlt(x, y) | __hle(x, y) << 1 | __hgt(x, y) << 2 | __heq(x, y) << 3 | __hne(x, y) << 4 |
               __hltu(x, y) << 5 | __hgeu(x, y) << 6 | __hneu(x, y) << 7 | __hlt(u, v) << 8 | __hequ(u, v) << 9 |
               __hbgt2(p, q) << 10 | __hble2(p, q) << 11 | (x < __float2half_rn(0.5f)) << 12;
  unsigned pk;
  asm("{ .reg .pred p, q; setp.lt.f16x2 p|q, %1, %2; selp.u32 %0, 1, 2, p; @q add.u32 %0, %0, 4; }"
      : "=r"(pk) : "r"(*(unsigned*)&p), "r"(*(unsigned*)&q));
  o[i] = r | pk << 13;
  __half2 mx = __hmax2(p, q), mn = __hmin2(p, q);
  o[n + 4 * i] = *(unsigned*)&mx;
  o[n + 4 * i + 1] = *(unsigned*)&mn;
  o[n + 4 * i + 2] = __half_as_ushort(__habs(x)) | __half_as_ushort(__hneg(y)) << 16;
  o[n + 4 * i + 3] = __bfloat16_as_ushort(__hmax(u, v)) | __bfloat16_as_ushort(__hmin(u, v)) << 16;
}
"""


def test_half_comparisons(monkeypatch: pytest.MonkeyPatch) -> None:
    hmod = cuda.compile(HALF_CMP_SRC)
    rng = np.random.default_rng(31)
    n = 400
    a, b = (rng.integers(-4, 4, n).astype(np.float32) * 0.5 for _ in range(2))
    a[:8] = [np.nan, 0.0, -0.0, 1e-7, np.inf, 1.0, np.nan, -1e-7]
    b[:8] = [1.0, -0.0, 0.0, 2e-7, np.inf, np.nan, np.nan, 0.0]

    def make() -> Any:
        o = cuda.to_device(np.zeros(5 * n, np.uint32))
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), o), [o]

    (o,), rec = _both(monkeypatch, hmod.get_function("half_compare"), 2, 256, make)
    o, mm = o[:n], o[n:].reshape(n, 4)
    x16, y16 = a.astype(np.float16), b.astype(np.float16)
    both = ~np.isnan(x16) & ~np.isnan(y16) & (x16 != y16)
    np.testing.assert_array_equal((mm[both, 0] & 0xFFFF).astype(np.uint16), np.maximum(x16, y16)[both].view(np.uint16))
    assert (mm[np.isnan(x16) & np.isnan(y16), 0] & 0xFFFF == 0x7FFF).all()  # two NaNs: the canonical one
    reasons = [why for info in _partial(rec) for why in info["reasons"]]
    assert all(why.startswith("set.") for why in reasons)  # (set.f16x2 is not native; setp, min, max, abs, neg are)
    x, y = a.astype(np.float16), b.astype(np.float16)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(o & 1, (x < y).astype(np.uint32))
        np.testing.assert_array_equal((o >> 5) & 1, ~(x >= y) & 1)  # unordered: true with a NaN
        np.testing.assert_array_equal((o >> 3) & 1, (x == y).astype(np.uint32))
        np.testing.assert_array_equal(o >> 13, np.where(x < y, 1, 2) + 4 * (y < x))  # p: low halves, q: high


def test_half_fma_and_bf16_mul(monkeypatch: pytest.MonkeyPatch) -> None:
    import ml_dtypes

    hmod = cuda.compile(HALF_FMA_SRC)
    rng = np.random.default_rng(29)
    n = 600
    a, b, c = ((rng.standard_normal(n) * s).astype(np.float32) for s in (30, 30, 500))
    a[:6] = [0.0, -0.0, np.inf, np.nan, 1e-7, 255.9]
    b[:6] = [np.inf, 1.0, 0.0, 1.0, 1e-7, 255.9]
    c[:6] = [1.0, -0.0, 1.0, 1.0, -1e-7, 65504.0]

    def make() -> Any:
        o, o2 = cuda.to_device(np.zeros(6 * n, np.uint16)), cuda.to_device(np.zeros(2 * n, np.uint32))
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), o, o2), [o, o2]

    (o, _o2), rec = _both(monkeypatch, hmod.get_function("half_fma"), 3, 256, make)
    assert not _partial(rec)
    o = o.reshape(n, 6)
    with np.errstate(all="ignore"):
        x, y, z = (v.astype(np.float16).astype(np.float64) for v in (a, b, c))
        exact = x * y + z  # 11-bit significands: the product is exact; a single rounding below for most
        fine = np.isfinite(exact) & (np.abs(exact) < 60000) & (np.abs(exact) > 1e-3)
        np.testing.assert_allclose(o[fine, 0].view(np.float16).astype(np.float64), exact[fine], rtol=1e-3)
        u, v = (t.astype(ml_dtypes.bfloat16).astype(np.float64) for t in (a, b))
        prod = u * v
        fine = np.isfinite(prod)
        np.testing.assert_array_equal(o[fine, 3], prod[fine].astype(np.float32).astype(ml_dtypes.bfloat16).view(
            np.uint16))


@pytest.mark.parametrize("fast", [False, True], ids=["ieee", "fast_math"])
def test_half_arithmetic_and_narrowing(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    import ml_dtypes

    hmod = cuda.compile(HALF_SRC, options=["--use_fast_math"] if fast else [])
    rng = np.random.default_rng(17)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-6, -3e-8, 6e-8, 65504.0, 65520.0, 1e5, 2.9e-8, 1e-40,
                        3e38, 0.5, 1.0, 1.5, -2.0], np.float32)
    n = 700
    a = np.concatenate([special, (rng.standard_normal(n - special.size) * 40).astype(np.float32)])
    b = np.concatenate([special[::-1], rng.standard_normal(n - special.size).astype(np.float32)])

    def make() -> Any:
        o, o2 = cuda.to_device(np.zeros(8 * n, np.uint16)), cuda.to_device(np.zeros(2 * n, np.uint32))
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), o, o2), [o, o2]

    (o, o2), rec = _both(monkeypatch, hmod.get_function("halves"), 3, 256, make)
    assert not _partial(rec)
    o = o.reshape(n, 8)
    with np.errstate(all="ignore"):
        h, hb = a.astype(np.float16), b.astype(np.float16)  # NumPy rounds f32 -> f16 to nearest even
    ok = ~np.isnan(a)
    np.testing.assert_array_equal(o[ok, 0], h[ok].view(np.uint16))
    assert (o[~ok, 0] == 0x7FFF).all()  # the canonical NaN
    fine = ok & ~np.isnan(b) & np.isfinite(h) & np.isfinite(hb)
    with np.errstate(all="ignore"):
        want = (h.astype(np.float32) + hb.astype(np.float32)).astype(np.float16)
        np.testing.assert_array_equal(o[fine & np.isfinite(want), 1], want[fine & np.isfinite(want)].view(np.uint16))
        bf = a.astype(ml_dtypes.bfloat16).astype(np.float32) + b.astype(ml_dtypes.bfloat16).astype(np.float32)
        sel = ~np.isnan(bf)
        np.testing.assert_array_equal(o[sel, 6], bf[sel].astype(ml_dtypes.bfloat16).view(np.uint16))


def _prefix_fault(monkeypatch: pytest.MonkeyPatch, mod: Any, executor: str, sx: int, sy: int) -> dict[str, Any]:
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    x, y = cuda.to_device(np.ones(512, np.float32)), cuda.to_device(np.zeros(512, np.float32))
    try:
        with pytest.raises(DeviceFault) as info:
            mod.get_function("prefix_faults")(2, 256, (np.int32(512), np.int32(sx), np.int32(sy), x, y)).wait()
    finally:
        cuda.current_device().reset()
    return {k: v for k, v in info.value.report.items() if k not in ("address", "nearest")}


@pytest.mark.parametrize(("sx", "sy"), [(300, 0), (0, 400)], ids=["native_prefix", "native_piece_after"])
def test_faults_before_and_after_the_unsupported_instruction(monkeypatch: pytest.MonkeyPatch, mod: Any, sx: int,
                                                             sy: int) -> None:
    assert _compiled(mod, "prefix_faults").pieces  # the store after the div.rz is a native piece of its own
    ref, nat = _prefix_fault(monkeypatch, mod, "reference", sx, sy), _prefix_fault(monkeypatch, mod, "native", sx, sy)
    assert ref["thread"] == ((212 if sx else 112), 0, 0) and ref["block"] == (0, 0, 0)  # 512 elements each
    assert nat == ref


def test_module_variables_at_constant_addresses(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 64  # one block: each lane's counter_table slot is its own
    x = np.arange(n, dtype=np.float32)
    w = np.linspace(0, 1, 16, dtype=np.float32)

    def make() -> Any:
        cuda.memcpy_to_symbol(mod, "weights", w)
        mod.get_function("set_scale")(1, 1, (np.float32(0.5),)).wait()
        y = cuda.to_device(np.zeros(n, np.float32))
        return (np.int32(n), cuda.to_device(x), y), [y]

    (y,), rec = _both(monkeypatch, mod.get_function("module_variables"), 1, 64, make)
    assert not _partial(rec)
    i = np.arange(n)
    np.testing.assert_array_equal(y, x * w[i & 15] + np.float32(0.5) + ((i + 1) & 63).astype(np.float32))


INT_SRC = r"""
extern "C" __global__ void bit_ops(int n, const unsigned* a, const unsigned* b, const unsigned long long* c,
                                   unsigned* out, unsigned long long* out64) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], r, s, u, v, w, p, q, z;
  unsigned long long l = c[i], e, f;
  int sx = (int)x;
  long long sl = (long long)l;
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(y & 63), "r"((y >> 8) & 63));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(s) : "r"(sx), "r"(y & 63), "r"((y >> 8) & 63));
  asm("bfe.u64 %0, %1, %2, %3;" : "=l"(e) : "l"(l), "r"(y & 127), "r"((y >> 8) & 127));
  asm("bfe.s64 %0, %1, %2, %3;" : "=l"(f) : "l"(sl), "r"(y & 127), "r"((y >> 8) & 127));
  asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(u) : "r"(x), "r"(y), "r"(x ^ y));
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(v) : "r"(x), "r"(y), "r"(x + y));
  asm("bfind.u32 %0, %1;" : "=r"(w) : "r"(x >> (y & 31)));
  asm("bfind.shiftamt.s32 %0, %1;" : "=r"(p) : "r"(sx));
  asm("bfind.u64 %0, %1;" : "=r"(q) : "l"(l >> (y & 63)));
  asm("bfind.s64 %0, %1;" : "=r"(z) : "l"(sl));
  unsigned m1, m2;
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(m1) : "r"(x), "r"(y), "r"(y >> 5));
  asm("prmt.b32.ecl %0, %1, %2, 2;" : "=r"(m2) : "r"(x), "r"(y));
  out[20 * i + 16] = __byte_perm(x, y, y);           // a selector per lane: nibbles, sign replication
  out[20 * i + 17] = __byte_perm(x, y, 0x7531);
  out[20 * i + 18] = m1;
  out[20 * i + 19] = m2;
  int as, ss;
  asm("add.sat.s32 %0, %1, %2;" : "=r"(as) : "r"(sx), "r"((int)y));
  asm("sub.sat.s32 %0, %1, %2;" : "=r"(ss) : "r"(sx), "r"((int)y));
  out64[3 * n + 2 * i] = ((unsigned long long)(unsigned)as << 32) | (unsigned)ss;
  out64[3 * n + 2 * i + 1] = ((unsigned long long)__sad(sx, (int)y, x) << 32) | __usad(x, y, 7u);
  unsigned* o = out + 20 * i;
  o[0] = __popc(x); o[1] = __popcll(l); o[2] = __clz(x >> (y & 31)); o[3] = __clzll(l >> (y & 63));
  o[4] = __brev(x); o[5] = __funnelshift_l(x, y, y >> 3); o[6] = __funnelshift_r(x, y, y >> 3);
  o[7] = __funnelshift_lc(x, y, y >> 3); o[8] = __funnelshift_rc(x, y, y >> 3);
  o[9] = r; o[10] = s; o[11] = u; o[12] = v; o[13] = w; o[14] = p; o[15] = q ^ (z << 8);
  out64[3 * i] = __brevll(l); out64[3 * i + 1] = e; out64[3 * i + 2] = f;
}
"""


def test_bit_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    imod = cuda.compile(INT_SRC)
    rng = np.random.default_rng(19)
    n = 500
    a = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    c = rng.integers(0, 1 << 63, n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    a[:6] = [0, 0xFFFFFFFF, 0x80000000, 1, 0x7FFFFFFF, 0xFFFF0000]
    c[:3] = [0, 0xFFFFFFFFFFFFFFFF, 1 << 63]

    def make() -> Any:
        out, out64 = cuda.to_device(np.zeros(20 * n, np.uint32)), cuda.to_device(np.zeros(5 * n, np.uint64))
        return (np.int32(n), cuda.to_device(a), cuda.to_device(b), cuda.to_device(c), out, out64), [out, out64]

    (out, out64), rec = _both(monkeypatch, imod.get_function("bit_ops"), 2, 256, make)
    assert not _partial(rec)
    out = out.reshape(n, 20)
    np.testing.assert_array_equal(out[:, 0], np.bitwise_count(a))
    src = (a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))).view(np.uint8).reshape(n, 8)
    np.testing.assert_array_equal(out[:, 17], src[:, [1, 3, 5, 7]].copy().view(np.uint32).reshape(n))
    sat = out64[3 * n:].reshape(n, 2)
    sx, sy = a.view(np.int32).astype(np.int64), b.view(np.int32).astype(np.int64)
    np.testing.assert_array_equal((sat[:, 0] >> np.uint64(32)).astype(np.uint32).view(np.int32),
                                  np.clip(sx + sy, -(1 << 31), (1 << 31) - 1))
    np.testing.assert_array_equal((sat[:, 1] & np.uint64(0xFFFFFFFF)).astype(np.int64),
                                  (np.abs(a.astype(np.int64) - b.astype(np.int64)) + 7) & 0xFFFFFFFF)
    np.testing.assert_array_equal(out[:, 1], np.bitwise_count(c))
    want_brev = np.array([int(f"{int(v):032b}"[::-1], 2) for v in a], np.uint32)
    np.testing.assert_array_equal(out[:, 4], want_brev)
    sh = (b >> 3) & 31
    both = a.astype(np.uint64) | (b.astype(np.uint64) << np.uint64(32))
    np.testing.assert_array_equal(out[:, 5], ((both << sh.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32))
    np.testing.assert_array_equal(out[:, 11], (a & b) | (a & (a ^ b)) | (b & (a ^ b)))  # 0xE8: majority



# -- a seeded random-kernel generator: straight-line code, divergent branches, loops, warp votes and
# reductions, global and shared atomics, bit and float functions, half conversions; the executors compare
def _random_kernel(rng: np.random.Generator, name: str) -> str:
    def v() -> str:
        return f"v{rng.integers(4)}"

    def f() -> str:
        return f"f{rng.integers(2)}"

    def c(lo: int = 1, hi: int = 97) -> int:
        return int(rng.integers(lo, hi))

    simple = [
        lambda: f"{v()} = {v()} * {c()} + ({v()} ^ {c()});",
        lambda: f"{v()} += (int)(__popc((unsigned){v()}) + __brev((unsigned){v()}) % {c()}u);",
        lambda: f"u ^= __funnelshift_l(u, (unsigned){v()}, {v()} & 31) + __clz({v()});",
        lambda: f"{f()} = {f()} * {c()}.5f + __fsqrt_rn(fabsf({f()}));",
        lambda: f"{f()} = __fdividef({f()}, fabsf({f()}) + 2.0f) + rsqrtf(fabsf({f()}) + 1.0f);",
        lambda: f"{f()} = __half2float(__hadd(__float2half_rn({f()}), __float2half_rn({f()} * 0.25f)));",
        lambda: f"{v()} += (int)({f()} * 3.0f) % 1000;",
        lambda: f"u ^= __ballot_sync(__activemask(), {v()} > {c(-50, 50)});",
        lambda: f"{v()} += __reduce_add_sync(__activemask(), {v()} & 255)"
                f" + __popc(__match_any_sync(__activemask(), {v()} & 3));",
        lambda: f"{v()} ^= __all_sync(__activemask(), {v()} > -{c()})"
                f" + 2 * __any_sync(__activemask(), {v()} == {c()});",
        lambda: f"atomicAdd(&gi[{v()} & 15], {v()});",
        lambda: f"{v()} = atomicMax(&gi[16 + ({v()} & 7)], {v()} % 1000);",
        lambda: f"{v()} ^= atomicCAS(&gi[24 + ({v()} & 7)], {v()} & 3, {v()});",
        lambda: f"{f()} += atomicAdd(&gf[{v()} & 3], {f()} * 0.5f);",
        lambda: f"{v()} += atomicAdd(&sh[{v()} & 31], {v()} & 7);",
        lambda: f"{v()} = (int)atomicInc(&gu[{v()} & 3], {c(3, 40)}u);",
        lambda: f"{f()} = __fmaf_rd({f()}, {f()}, 0.5f) + __fadd_ru({f()}, -{c()}.25f) * __fmul_rz({f()}, 0.75f);",
        lambda: f"{f()} = __expf(fminf({f()}, 20.0f)) - expf({f()} * 0.125f) + __log2f(fabsf({f()}) + 1.0f);",
    ]

    def stmt(depth: int) -> str:
        k = rng.integers(10)
        if depth < 2 and k == 0:
            cond = f"({v()} & {c(1, 8)}) == {c(0, 3)}"
            return f"if ({cond}) {{ {stmt(depth + 1)} {stmt(depth + 1)} }} else {{ {stmt(depth + 1)} }}"
        if depth < 2 and k == 1:
            return f"for (int t = 0; t < ({v()} & 3); ++t) {{ {stmt(depth + 1)} }}"
        return simple[int(rng.integers(len(simple)))]()

    body = "\n    ".join(stmt(0) for _ in range(int(rng.integers(6, 12))))
    return f"""
extern "C" __global__ void {name}(int n, const int* xi, const float* xf, int* oi, float* of, unsigned* ou, int* gi,
                                  float* gf, unsigned* gu) {{
  __shared__ int sh[32];
  if (threadIdx.x < 32) sh[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = i % n;
  int v0 = xi[j], v1 = xi[(j + 7) % n] >> 3, v2 = i, v3 = threadIdx.x;
  float f0 = xf[j], f1 = xf[(j + 3) % n] * 2.0f;
  unsigned u = (unsigned)v0 * 2654435761u;
    {body}
  __syncthreads();
  if (threadIdx.x < 32) atomicAdd(&gi[32 + threadIdx.x], sh[threadIdx.x]);
  if (i < n) {{
    oi[4 * i] = v0; oi[4 * i + 1] = v1; oi[4 * i + 2] = v2; oi[4 * i + 3] = v3;
    of[2 * i] = f0; of[2 * i + 1] = f1; ou[i] = u;
  }}
}}
"""


def _random_kernels(monkeypatch: pytest.MonkeyPatch, seed: int, count: int) -> None:
    rng = np.random.default_rng(seed)
    names = [f"rnd{k}" for k in range(count)]
    rmod = cuda.compile("#include <cuda_fp16.h>\n" + "".join(_random_kernel(rng, name) for name in names))
    monkeypatch.setenv("STRATA_CHUNK_LANES", "128")  # several chunks: atomics keep the reference's order
    n = 250
    xi = rng.integers(-1000, 1000, n).astype(np.int32)
    xf = rng.standard_normal(n).astype(np.float32)

    def make() -> Any:
        outs = [cuda.to_device(np.zeros(k, dt)) for k, dt in ((4 * n, np.int32), (2 * n, np.float32),
                                                              (n, np.uint32), (64, np.int32), (4, np.float32),
                                                              (4, np.uint32))]
        return (np.int32(n), cuda.to_device(xi), cuda.to_device(xf), *outs), outs

    for name in names:
        (_oi, of, *_), rec = _both(monkeypatch, rmod.get_function(name), 3, 96, make)
        assert not [e for e in rec.events if e.name == "native_fallback"], name
        assert np.isfinite(of).any()  # (the kernel ran: its float outputs are values)


def test_random_kernels_native_against_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    _random_kernels(monkeypatch, 2026, 3)  # (each kernel costs about a second of LLVM compile time)


FUZZ_KERNELS = 2000  # the slow run's goal: this many random kernels, in batches of 50, within FUZZ_BUDGET_S
FUZZ_BUDGET_S = 3600.0


@pytest.mark.slow
def test_many_random_kernels_native_against_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    goal = int(os.environ.get("STRATA_FUZZ_KERNELS", FUZZ_KERNELS))
    t0, done, seed = time.monotonic(), 0, 7
    while done < goal and time.monotonic() - t0 < FUZZ_BUDGET_S:
        _random_kernels(monkeypatch, seed, min(50, goal - done))
        done, seed = done + min(50, goal - done), seed + 1
    print(f"{done} random kernels compared in {time.monotonic() - t0:.0f} s")
    assert done >= min(goal, 200)


def test_calls_order_chunks_only_when_the_callee_does(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    assert _compiled(mod, "pure_calls").serial is None  # a pure device function: both host threads run
    assert "atom.global.add" in (_compiled(mod, "calls").serial or "")
    monkeypatch.setenv("STRATA_CHUNK_LANES", "256")
    n = 2000
    x = np.random.default_rng(21).standard_normal(n).astype(np.float32)

    def make() -> Any:
        y, c = cuda.to_device(np.zeros(n, np.float32)), cuda.to_device(np.zeros(1, np.int32))
        return (np.int32(n), cuda.to_device(x), y, c, np.int32(1)), [y, c]

    (y, c), rec = _both(monkeypatch, mod.get_function("calls"), 8, 256, make)
    np.testing.assert_array_equal(y, (x.astype(np.float64) * (np.arange(n) & 7) + 1).astype(np.float32))  # one fma
    assert c[0] == n * (n - 1) // 2
