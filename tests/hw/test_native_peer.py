"""The native executor on a device with peer access enabled (NCCL's transport): kernels reading and writing
an enabled peer's memory through unified addresses run natively, with outputs, counters and interconnect
bytes (`Device.peer_traffic`) identical to the reference executor's, and the same fault report when a lane
leaves the peer's allocation or peer access is not enabled."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llvmlite", reason="the native executor needs llvmlite")

import strata.cuda as cuda  # noqa: E402
import strata.cuda.device as device_mod  # noqa: E402
from strata import trace  # noqa: E402
from strata.errors import DeviceFault  # noqa: E402

SRC = r"""
extern "C" __global__ void axpy(float* y, const float* x, const float* z, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + z[i];
}
extern "C" __global__ void add4(float4* y, const float4* a, const float4* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float4 u = a[i], v = b[i]; y[i] = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w); }
}
extern "C" __global__ void interleave(float* y, const float* p, const float* q, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float* s = (i & 1) ? p : q;                      // one load whose warp spans two devices
    if (i < n) y[i] = s[i] * 2.0f;
}
"""
N = 3000  # not a multiple of the block: a partial last warp


@pytest.fixture
def devs(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[cuda.Device, cuda.Device]]:
    """(d0, d1): the default device and a second NVIDIA device; d1 is current and may access d0."""
    d0 = cuda.current_device()
    d1 = cuda.Device(model="h100" if d0.spec.name != "h100" else "a100")
    monkeypatch.setattr(device_mod, "_explicit", device_mod._explicit)  # restored after the test
    cuda.set_device(d1)
    if d0.file.gpu.memory.slot not in d1.file.gpu.memory.peers:
        d1.enable_peer_access(d0)
    yield d0, d1
    for a, b in ((d0, d1), (d1, d0)):
        if b.file.gpu.memory.slot in a.file.gpu.memory.peers:
            a.disable_peer_access(b)


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SRC, name="native_peer.cu")


def _run(monkeypatch: pytest.MonkeyPatch, executor: str, d0: cuda.Device, d1: cuda.Device,
         launch: Callable[[], Any], outs: list[Any]) -> tuple[dict[str, Any], list[bytes], dict[int, int]]:
    """One launch on d1 under `executor`: (counters, outputs' bytes, d1's interconnect bytes per peer)."""
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    before = d1.peer_traffic()
    with trace.record() as rec:
        r = launch()
        r.wait()
    assert r.executor == executor
    assert not [e for e in rec.events if e.name == "native_fallback"]
    after = d1.peer_traffic()
    moved = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    return dataclasses.asdict(r.counters), [o.get().tobytes() for o in outs], moved


def _both(monkeypatch: pytest.MonkeyPatch, d0: cuda.Device, d1: cuda.Device,
          make: Callable[[], tuple[Callable[[], Any], list[Any]]]) -> tuple[list[bytes], dict[int, int]]:
    """The same launch (fresh inputs each time) on both executors: everything identical."""
    ref = _run(monkeypatch, "reference", d0, d1, *make())
    nat = _run(monkeypatch, "native", d0, d1, *make())
    assert nat[1] == ref[1]
    assert nat[0] == ref[0]
    assert nat[2] == ref[2]
    return nat[1], nat[2]


def test_reads_and_writes_of_peer_memory(monkeypatch: pytest.MonkeyPatch, devs: Any, mod: cuda.Module) -> None:
    d0, d1 = devs
    rng = np.random.default_rng(0)
    xh, zh = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)

    def make() -> tuple[Callable[[], Any], list[Any]]:
        cuda.set_device(d0)
        x0, y0 = cuda.to_device(xh), cuda.zeros(N, np.float32)  # on the peer
        cuda.set_device(d1)
        z1 = cuda.to_device(zh)  # on the launching device
        return lambda: mod.get_function("axpy")(-(-N // 256), 256, (y0, x0, z1, np.float32(2), np.int32(N))), [y0]

    (y,), moved = _both(monkeypatch, d0, d1, make)
    np.testing.assert_array_equal(np.frombuffer(y, np.float32), np.float32(2) * xh + zh)
    assert moved == {d0.index: 2 * N * 4}  # x read and y written over the interconnect, per active lane


def test_full_chunks_of_peer_memory(monkeypatch: pytest.MonkeyPatch, devs: Any, mod: cuda.Module) -> None:
    """Full chunks at lane-indexed addresses take the whole-chunk check (hw/native/chunkcheck.py), which
    counts a peer allocation's bytes in closed form: the same as the reference's per-lane count."""
    d0, d1 = devs
    n = 8 * 512
    monkeypatch.setenv("STRATA_CHUNK_LANES", "512")
    rng = np.random.default_rng(3)
    xh, zh = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)

    def make() -> tuple[Callable[[], Any], list[Any]]:
        cuda.set_device(d0)
        x0, y0 = cuda.to_device(xh), cuda.zeros(n, np.float32)
        cuda.set_device(d1)
        z1 = cuda.to_device(zh)
        return lambda: mod.get_function("axpy")(n // 256, 256, (y0, x0, z1, np.float32(-2), np.int32(n))), [y0]

    (y,), moved = _both(monkeypatch, d0, d1, make)
    np.testing.assert_array_equal(np.frombuffer(y, np.float32), np.float32(-2) * xh + zh)
    assert moved == {d0.index: 2 * n * 4}


def test_vector_loads_from_peer_memory(monkeypatch: pytest.MonkeyPatch, devs: Any, mod: cuda.Module) -> None:
    d0, d1 = devs
    n = 1000
    rng = np.random.default_rng(1)
    ah, bh = rng.standard_normal(4 * n).astype(np.float32), rng.standard_normal(4 * n).astype(np.float32)

    def make() -> tuple[Callable[[], Any], list[Any]]:
        cuda.set_device(d0)
        a0 = cuda.to_device(ah)
        cuda.set_device(d1)
        b1, y1 = cuda.to_device(bh), cuda.zeros(4 * n, np.float32)
        return lambda: mod.get_function("add4")(4, 256, (y1, a0, b1, np.int32(n))), [y1]

    (y,), moved = _both(monkeypatch, d0, d1, make)
    np.testing.assert_array_equal(np.frombuffer(y, np.float32), ah + bh)
    assert moved == {d0.index: n * 16}


def test_a_warp_spanning_own_and_peer_memory(monkeypatch: pytest.MonkeyPatch, devs: Any, mod: cuda.Module) -> None:
    d0, d1 = devs
    rng = np.random.default_rng(2)
    ph, qh = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)

    def make() -> tuple[Callable[[], Any], list[Any]]:
        cuda.set_device(d0)
        p0 = cuda.to_device(ph)
        cuda.set_device(d1)
        q1, y1 = cuda.to_device(qh), cuda.zeros(N, np.float32)
        return lambda: mod.get_function("interleave")(-(-N // 256), 256, (y1, p0, q1, np.int32(N))), [y1]

    (y,), moved = _both(monkeypatch, d0, d1, make)
    np.testing.assert_array_equal(np.frombuffer(y, np.float32), np.where(np.arange(N) & 1, ph, qh) * 2)
    assert moved == {d0.index: (N // 2) * 4}  # the odd lanes' reads


def _fault(monkeypatch: pytest.MonkeyPatch, executor: str, d0: cuda.Device, d1: cuda.Device,
           mod: cuda.Module, n_alloc: int, enabled: bool) -> dict[str, Any]:
    """The fault report of axpy told N elements where the peer's x holds `n_alloc`, with pointers named."""
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    cuda.set_device(d0)
    x0 = cuda.to_device(np.ones(n_alloc, np.float32))
    cuda.set_device(d1)
    y1, z1 = cuda.zeros(N, np.float32), cuda.to_device(np.ones(N, np.float32))
    if not enabled:
        d1.disable_peer_access(d0)
    assert (d0.file.gpu.memory.slot in d1.file.gpu.memory.peers) == enabled
    before = d1.peer_traffic().get(d0.index, 0)
    try:
        with trace.record() as rec, pytest.raises(DeviceFault) as info:
            mod.get_function("axpy")(-(-N // 256), 256, (y1, x0, z1, np.float32(1), np.int32(N))).wait()
        moved = d1.peer_traffic().get(d0.index, 0) - before
    finally:
        d1.reset()  # the fault is sticky on the context (and a reset ends peer access, as CUDA's does)
        if d0.file.gpu.memory.slot not in d1.file.gpu.memory.peers:
            d1.enable_peer_access(d0)
    assert not [e for e in rec.events if e.name == "native_fallback"]

    def named(text: str) -> str:
        for ptr, name in ((x0.ptr, "X"), (y1.ptr, "Y"), (z1.ptr, "Z"), (info.value.report["address"], "A")):
            text = re.sub(rf"{hex(ptr)}\b", name, text)
        return text

    report = {k: named(v) if isinstance(v, str) else v for k, v in info.value.report.items() if k != "address"}
    report["offset"] = info.value.report["address"] - x0.ptr
    return {"message": named(str(info.value)), "report": report, "moved": moved}


@pytest.mark.parametrize("enabled", [True, False], ids=["past-the-peer-allocation", "peer-access-not-enabled"])
def test_peer_fault_report_is_the_references(monkeypatch: pytest.MonkeyPatch, devs: Any, mod: cuda.Module,
                                             enabled: bool) -> None:
    d0, d1 = devs
    n_alloc = 2000 if enabled else N  # enabled: lanes 2000.. read past x (block 7, thread 208)
    ref = _fault(monkeypatch, "reference", d0, d1, mod, n_alloc, enabled)
    nat = _fault(monkeypatch, "native", d0, d1, mod, n_alloc, enabled)
    r = ref["report"]
    if enabled:
        assert r["offset"] == 2000 * 4 and r["block"] == (7, 0, 0) and r["thread"] == (208, 0, 0)
        assert r["nearest"].startswith("0 bytes after the end of allocation X")  # the peer reports its own
    else:
        assert r["offset"] == 0 and r["block"] == (0, 0, 0) and "not enabled" in r["nearest"]
    assert nat == ref


STREAM_SRC = r"""
#define LANES 16384
extern "C" __global__ void copy4(float* y, const float* x) {   // branch-free: 4 loads and 4 stores a thread
    const unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
    y += i; x += i;                                            // then constant offsets, as NCCL's tiles
#pragma unroll
    for (int k = 0; k < 4; ++k) y[k * LANES] = x[k * LANES];
}
"""


def test_wide_copy_kernels_run_natively(monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch-free kernel of global loads and stores (NCCL's tiles) runs natively over a chunk of 16,384
    lanes as over fewer (it once went to the reference executor from 16,384 lanes; the whole-chunk check made
    native code as fast or faster there), with no fallback event. Results are the copy either way."""
    fn = cuda.compile(STREAM_SRC, name="stream.cu").get_function("copy4")
    x = np.random.default_rng(3).standard_normal(4 * 16384).astype(np.float32)
    monkeypatch.setenv("STRATA_EXECUTOR", "native")
    for blocks in (64, 4):
        dx, dy = cuda.to_device(x), cuda.zeros(x.size, np.float32)
        with trace.record() as rec:
            r = fn(blocks, 256, (dy, dx))
            r.wait()
        assert r.executor == "native"
        assert [e.args["reason"] for e in rec.events if e.name == "native_fallback"] == []
        lanes = blocks * 256
        got = dy.get().reshape(4, 16384)[:, :lanes]
        np.testing.assert_array_equal(got, x.reshape(4, 16384)[:, :lanes])


def _after_free(monkeypatch: pytest.MonkeyPatch, executor: str, d0: cuda.Device, d1: cuda.Device,
                mod: cuda.Module) -> dict[str, Any]:
    """axpy reads the peer's x once (the native executor keeps its allocation table), then again after x is
    freed: the second launch faults, the report naming the freed allocation."""
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    cuda.set_device(d0)
    x0 = cuda.to_device(np.ones(N, np.float32))
    cuda.set_device(d1)
    y1, z1 = cuda.zeros(N, np.float32), cuda.to_device(np.ones(N, np.float32))
    args = (y1, np.uint64(x0.ptr), z1, np.float32(1), np.int32(N))
    mod.get_function("axpy")(-(-N // 256), 256, args).wait()
    np.testing.assert_array_equal(y1.get(), 2)
    ptr = x0.ptr
    x0.free()
    try:
        with pytest.raises(DeviceFault) as info:
            mod.get_function("axpy")(-(-N // 256), 256, args).wait()
    finally:
        d1.reset()
        if d0.file.gpu.memory.slot not in d1.file.gpu.memory.peers:
            d1.enable_peer_access(d0)
    report = {k: v for k, v in info.value.report.items() if k not in ("address", "nearest")}
    report["nearest"] = info.value.report["nearest"].replace(hex(ptr), "X")
    return report


def test_a_freed_peer_allocation_faults_after_a_launch_that_read_it(monkeypatch: pytest.MonkeyPatch, devs: Any,
                                                                    mod: cuda.Module) -> None:
    d0, d1 = devs
    ref = _after_free(monkeypatch, "reference", d0, d1, mod)
    nat = _after_free(monkeypatch, "native", d0, d1, mod)
    assert "freed allocation X" in ref["nearest"] and ref["thread"] == (0, 0, 0)
    assert nat == ref
