"""The native executor's whole-chunk fast path (hw/native/chunkcheck.py) against the reference executor.

A chunk whose lanes all take part in a global access at addresses following the lane index is checked
once per access (not per warp), gets its memory counters in closed form and runs at lane-indexed
addresses. These kernels run over several full chunks (STRATA_CHUNK_LANES), so the fast path decides,
next to chunks where it must not (a partial last chunk, a fault, a misaligned or strided address, an
in-place shift whose store reaches a later lane's load): outputs bit-identical, every counter identical,
fault reports identical."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

from native_harness import fault_report, on_both_executors  # noqa: E402

import strata.cuda as cuda  # noqa: E402
from strata.errors import LaunchTimeout  # noqa: E402

SRC = r"""
extern "C" __global__ void axpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void shifted(int off, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i + off] * 3.0f;                             // x + off: warps straddle 32-byte sectors
}
extern "C" __global__ void quad(const float4* x, float4* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 v = x[i];
  y[i] = make_float4(v.w, v.x * 2.0f, v.y + 1.0f, -v.z);  // 16-byte lanes
}
extern "C" __global__ void neighbours(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[2 * i] + x[2 * i + 1] + x[2 * i + 2];        // a group of three at a stride of 2: not lane-indexed
}
extern "C" __global__ void spread(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = x[i] + x[i + 1] + x[i + 64];                    // one leader and two followers at constant offsets
}
extern "C" __global__ void inplace_shift(float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i + 1] = y[i] * 2.0f;                               // each lane's store is the next lane's load
}
extern "C" __global__ void unaligned(const char* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  y[i] = *(const float*)(x + 4 * i + 2);                // a misaligned load
}
extern "C" __global__ void branchy(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (x[i] > 0.5f) y[i] = x[i] * 2.0f;                  // uniform in most chunks, divergent in one
  else y[i] = -x[i];
}
extern "C" __global__ void tile_sum(const float* x, float* y) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * 256 + t;
  s[t] = x[i];
  __syncthreads();                                      // every lane of each block: completes in the driver
  y[i] = s[t] + s[255 - t];
}
extern "C" __global__ void fill(float v, float* y) {
  y[blockIdx.x * blockDim.x + threadIdx.x] = v;         // a store alone
}
"""
CHUNK = 1024  # lanes a chunk: four blocks of 256
BLOCK = 256


@pytest.fixture(scope="module")
def mod() -> Any:
    return cuda.compile(SRC, name="native_fastpath.cu")


@pytest.fixture(autouse=True)
def chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_CHUNK_LANES", str(CHUNK))


def _both(monkeypatch: pytest.MonkeyPatch, fn: Any, grid: int, make: Any) -> list[np.ndarray]:
    """The same launch (fresh inputs each time) on both executors: outputs and counters identical (native_harness),
    and no part of the native run fell back."""
    outs, _, rec = on_both_executors(monkeypatch, lambda args: fn(grid, BLOCK, args), make)
    assert not [e for e in rec.events if e.name == "native_fallback"]
    return outs


_fault = fault_report


def test_saxpy_full_chunks_and_a_partial_one(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 5 * CHUNK + 300  # five full chunks, then one whose last lanes fail the bounds check
    rng = np.random.default_rng(1)
    # the arrays go on past n: the lanes that do not take part have addresses inside them, at i * 4 too
    x, y = rng.standard_normal(n + CHUNK).astype(np.float32), rng.standard_normal(n + CHUNK).astype(np.float32)
    x[7], y[9] = np.nan, np.inf

    def make() -> Any:
        dy = cuda.to_device(y)
        return (np.int32(n), np.float32(1.5), cuda.to_device(x), dy), [dy]

    (out,) = _both(monkeypatch, mod.get_function("axpy"), -(-n // BLOCK), make)
    want = (np.float32(1.5) * x[:n].astype(np.float64) + y[:n]).astype(np.float32)  # fma: one rounding
    np.testing.assert_array_equal(out, np.concatenate([want, y[n:]]))


@pytest.mark.parametrize("off", [0, 1, 3, 8])
def test_sectors_of_a_shifted_base(monkeypatch: pytest.MonkeyPatch, mod: Any, off: int) -> None:
    n = 4 * CHUNK
    x = np.arange(n + 8, dtype=np.float32)

    def make() -> Any:
        dy = cuda.to_device(np.zeros(n, np.float32))
        return (np.int32(off), cuda.to_device(x), dy), [dy]

    (out,) = _both(monkeypatch, mod.get_function("shifted"), n // BLOCK, make)
    np.testing.assert_array_equal(out, x[off:off + n] * np.float32(3))


@pytest.mark.parametrize("kernel", ["quad", "neighbours", "spread"])
def test_vectors_groups_and_strides(monkeypatch: pytest.MonkeyPatch, mod: Any, kernel: str) -> None:
    n = 3 * CHUNK
    x = np.random.default_rng(2).standard_normal(4 * n + 64).astype(np.float32)
    words = 4 if kernel == "quad" else 1

    def make() -> Any:
        dy = cuda.to_device(np.zeros(words * n, np.float32))
        return (cuda.to_device(x), dy), [dy]

    (out,) = _both(monkeypatch, mod.get_function(kernel), n // BLOCK, make)
    if kernel == "quad":
        v = x[:4 * n].reshape(n, 4)
        want = np.stack([v[:, 3], v[:, 0] * np.float32(2), v[:, 1] + np.float32(1), -v[:, 2]], axis=1).ravel()
    elif kernel == "neighbours":
        want = x[0:2 * n:2] + x[1:2 * n + 1:2] + x[2:2 * n + 2:2]
    else:
        want = x[:n] + x[1:n + 1] + x[64:n + 64]
    np.testing.assert_array_equal(out, want)


def test_store_only_segment(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 4 * CHUNK

    def make() -> Any:
        dy = cuda.to_device(np.zeros(n, np.float32))
        return (np.float32(-2.5), dy), [dy]

    (out,) = _both(monkeypatch, mod.get_function("fill"), n // BLOCK, make)
    assert (out == np.float32(-2.5)).all()


def test_in_place_shift_runs_in_the_references_order(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    # every lane reads y[i] before any lane writes y[i + 1] (instruction by instruction over the chunk):
    # run lane by lane, each store would feed the next lane's load. One full chunk (blocks of other
    # chunks reading what this one writes would race, as on a GPU)
    n = CHUNK
    y = np.arange(n + 1, dtype=np.float32)

    def make() -> Any:
        dy = cuda.to_device(y)
        return (dy,), [dy]

    (out,) = _both(monkeypatch, mod.get_function("inplace_shift"), n // BLOCK, make)
    np.testing.assert_array_equal(out, np.concatenate([y[:1], y[:n] * np.float32(2)]))


@pytest.mark.parametrize("short", [1, CHUNK + 5, 4 * CHUNK - 40])
def test_fault_past_the_end_is_the_references(monkeypatch: pytest.MonkeyPatch, mod: Any, short: int) -> None:
    # x holds `short` elements fewer than the grid reads: the fault is in the last chunk, in an earlier
    # one, or in the first; the chunks before it pass the whole-chunk check
    n = 4 * CHUNK

    def launch() -> Any:
        x, y = cuda.to_device(np.ones(n - short, np.float32)), cuda.to_device(np.zeros(n, np.float32))
        return mod.get_function("shifted")(n // BLOCK, BLOCK, (np.int32(0), x, y))

    ref, nat = _fault(monkeypatch, "reference", launch), _fault(monkeypatch, "native", launch)
    first_bad = n - short
    assert ref["block"] == (first_bad // BLOCK, 0, 0) and ref["thread"] == (first_bad % BLOCK, 0, 0)
    assert nat == ref


def test_misaligned_access_is_the_references(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 2 * CHUNK

    def launch() -> Any:
        return mod.get_function("unaligned")(n // BLOCK, BLOCK, (cuda.to_device(np.zeros(4 * n + 8, np.uint8)),
                                                                cuda.to_device(np.zeros(n, np.float32))))

    ref, nat = _fault(monkeypatch, "reference", launch), _fault(monkeypatch, "native", launch)
    assert ref["block"] == (0, 0, 0) and ref["thread"] == (0, 0, 0)
    assert nat == ref


def test_saxpy_takes_the_fast_path(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    """The code generator gives SAXPY's load-load-store segment the whole-chunk check and the lane-indexed
    real run (the differential tests above then exercise it), and a shared-memory segment neither."""
    from strata.hw.jit import Program
    from strata.hw.native import chunkcheck
    from strata.hw.native import codegen as cg
    from strata.hw.ptx.parser import parse

    seen: list[int] = []
    real = chunkcheck.linear_address

    def spy(g: Any, d: Any, i: Any) -> Any:
        seen.append(id(d))
        return real(g, d, i)

    monkeypatch.setattr(chunkcheck, "linear_address", spy)
    program = Program(parse(mod.ptx), {})
    cg.KernelCodegen(program, program.functions["axpy"]).build()
    assert len(seen) == 3  # x[i], y[i] loaded and y[i] stored at a0 + 4 i
    shared = cuda.compile(r"""
    extern "C" __global__ void stage(const float* x, float* y) {
      __shared__ float s[256];
      s[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
      __syncthreads();
      y[blockIdx.x * 256 + threadIdx.x] = s[255 - threadIdx.x];
    }""")
    seen.clear()
    program = Program(parse(shared.ptx), {})
    cg.KernelCodegen(program, program.functions["stage"]).build()
    assert len(seen) == 0  # the global load sits in a segment with a shared store: per warp, for the bank counts


@pytest.mark.parametrize("lanes", [256, CHUNK])
def test_chunks_after_a_finished_one(monkeypatch: pytest.MonkeyPatch, mod: Any, lanes: int) -> None:
    """After a chunk that one driver call ran to the end, a worker runs its next chunks on the same registers
    without new Python objects (executor.chunks); one that diverges (chunk 5 here), faults or is due for a
    poll (every 32 blocks: 256-lane chunks of this 3-block kernel poll every 11th) gets them back and goes on
    from the driver call's result: outputs and counters as the reference's."""
    monkeypatch.setenv("STRATA_CHUNK_LANES", str(lanes))
    n = 40 * lanes
    x = np.random.default_rng(5).random(n, dtype=np.float32) * np.float32(0.4) + np.float32(0.6)
    x[5 * lanes + 3::7][:20] = np.float32(0.1)  # a few lanes of chunk 5 take the other path

    def make() -> Any:
        dy = cuda.to_device(np.zeros(n, np.float32))
        return (cuda.to_device(x), dy), [dy]

    (out,) = _both(monkeypatch, mod.get_function("branchy"), n // BLOCK, make)
    np.testing.assert_array_equal(out, np.where(x > np.float32(0.5), x * np.float32(2), -x))


def test_chunks_with_a_barrier(monkeypatch: pytest.MonkeyPatch, mod: Any) -> None:
    n = 24 * BLOCK
    x = np.random.default_rng(6).standard_normal(n).astype(np.float32)

    def make() -> Any:
        dy = cuda.to_device(np.zeros(n, np.float32))
        return (cuda.to_device(x), dy), [dy]

    (out,) = _both(monkeypatch, mod.get_function("tile_sum"), n // BLOCK, make)
    v = x.reshape(-1, BLOCK)
    np.testing.assert_array_equal(out, (v + v[:, ::-1]).ravel())


def test_launch_budget_stops_a_run_of_chunks_where_the_reference_does(monkeypatch: pytest.MonkeyPatch,
                                                                      mod: Any) -> None:
    # chunks after a finished one skip the Python run loop: the budget (and the polls) must still stop them at
    # the reference's block, with the chunks before it written and the ones after it not
    monkeypatch.setenv("STRATA_CHUNK_LANES", "256")
    n = 40 * 256
    x = np.ones(n, np.float32)
    monkeypatch.setenv("STRATA_LAUNCH_BUDGET", str(17 * 256 * 10 + 5))  # within the launch, not at a chunk's end
    got = {}
    for ex in ("reference", "native"):
        monkeypatch.setenv("STRATA_EXECUTOR", ex)
        dy = cuda.to_device(np.zeros(n, np.float32))
        dev = cuda.current_device()
        try:
            with pytest.raises(LaunchTimeout) as info:
                mod.get_function("branchy")(n // BLOCK, BLOCK, (cuda.to_device(x), dy)).wait()
            # (the device's memory as the launch left it: the context refuses copies until it is reset)
            written = np.frombuffer(dev.file.gpu.memory.read(dy.ptr, 4 * n), np.float32).copy()
        finally:
            dev.reset()
        got[ex] = (str(info.value).split(" s; ")[-1], written.tobytes())
    assert 0 < np.count_nonzero(np.frombuffer(got["reference"][1], np.float32)) < n  # (stopped part way)
    assert got["native"] == got["reference"]


# A branch on a negated guard (`@!%p bra`), hand-written (NVRTC rarely emits one): the driver counts the
# lanes that take it 64 at a time; every lane of a chunk taking it, none, or some must count as the reference.
NEG_BRANCH_PTX = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry negbra(.param .u64 out, .param .u32 limit)
{
    .reg .pred %p;
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [limit];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r2, %r2, %r3, %tid.x;
    setp.lt.u32 %p, %r2, %r1;
    @!%p bra DONE;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r2;
DONE:
    ret;
}
"""


@pytest.mark.parametrize("limit", [0, 100, 2 * CHUNK + 64, 1 << 30])
def test_negated_branch_counts(monkeypatch: pytest.MonkeyPatch, limit: int) -> None:
    fn = cuda.Module.from_ptx(NEG_BRANCH_PTX).get_function("negbra")
    n = 4 * CHUNK

    def make() -> Any:
        d = cuda.to_device(np.full(n, 7, np.uint32))
        return (d, np.uint32(limit)), [d]

    (out,) = _both(monkeypatch, fn, n // BLOCK, make)
    want = np.full(n, 7, np.uint32)
    want[:min(limit, n)] = np.arange(min(limit, n), dtype=np.uint32)
    np.testing.assert_array_equal(out, want)
