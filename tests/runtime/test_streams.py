"""Streams, events, sticky errors and the modeled timeline, through strata.cuda down to the packets.

Kernels are real NVRTC output. A 'gate' is an event whose signal only the test completes: work queued
behind it on a stream cannot start until the test opens the gate, which makes asynchrony observable
without timing races.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable

import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.runtime import Signal, primary_context

SOURCE = r"""
extern "C" __global__ void append(int* log, int* count, int value) {
    // one thread records `value` at the next free slot: the order in which launches ran
    if (threadIdx.x == 0 && blockIdx.x == 0) log[atomicAdd(count, 1)] = value;
}
extern "C" __global__ void append2(int* log, int* count, int* all, int* all_count, int value, int all_value) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        log[atomicAdd(count, 1)] = value;
        all[atomicAdd(all_count, 1)] = all_value;
    }
}
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
extern "C" __global__ void spin(float* x, int iters) {
    float v = x[threadIdx.x];
    for (int k = 0; k < iters; ++k) v = v * 0.999f + 1.0f;
    x[threadIdx.x] = v;
}
extern "C" __global__ void oob(int* p, int n) { p[threadIdx.x + n] = 1; }
"""


@pytest.fixture(scope="module")
def mod() -> cuda.Module:
    return cuda.compile(SOURCE, name="streams.cu")


def gate(stream: cuda.Stream) -> Callable[[], None]:
    """Block `stream` behind a signal only the test completes; returns the function that opens it."""
    ev = cuda.Event()
    ev.signal = Signal(1, stream.context.event_id)
    stream.wait_event(ev)
    return lambda: ev.signal.store(0)  # type: ignore[union-attr]


def test_launch_returns_before_the_kernel_runs(mod: cuda.Module) -> None:
    s = cuda.Stream()
    x = cuda.to_device(np.ones(64, np.float32))
    open_gate = gate(s)
    report = mod.get_function("scale")(1, 64, (x, np.float32(2), np.int32(64)), stream=s)
    assert not report.done and not s.query()
    open_gate()
    s.synchronize()
    assert report.done and report.counters.total_thread_instructions > 0
    np.testing.assert_array_equal(x.get(), np.full(64, 2, np.float32))


def test_one_stream_runs_in_order(mod: cuda.Module) -> None:
    s = cuda.Stream()
    log, count = cuda.zeros(200, np.int32), cuda.zeros(1, np.int32)
    k = mod.get_function("append")
    for i in range(200):
        k(1, 32, (log, count, np.int32(i)), stream=s)
    s.synchronize()
    np.testing.assert_array_equal(log.get(), np.arange(200, dtype=np.int32))


def test_10000_launches_in_flight_across_8_streams(mod: cuda.Module) -> None:
    streams = [cuda.Stream(non_blocking=True) for _ in range(8)]
    logs = [cuda.zeros(1250, np.int32) for _ in range(8)]
    counts = [cuda.zeros(1, np.int32) for _ in range(8)]
    total = cuda.zeros(10000, np.int32)
    total_count = cuda.zeros(1, np.int32)
    k = mod.get_function("append2")
    reports = []
    for i in range(1250):
        for s, (stream, log, count) in enumerate(zip(streams, logs, counts, strict=True)):
            reports.append(k(1, 1, (log, count, total, total_count, np.int32(i), np.int32(s * 1250 + i)),
                             stream=stream))
    cuda.synchronize()
    assert all(r.done for r in reports)
    for log, count in zip(logs, counts, strict=True):  # none lost, duplicated or reordered per stream
        assert int(count.get()[0]) == 1250
        np.testing.assert_array_equal(log.get(), np.arange(1250, dtype=np.int32))
    assert int(total_count.get()[0]) == 10000
    np.testing.assert_array_equal(np.sort(total.get()), np.arange(10000, dtype=np.int32))


def test_wait_event_orders_work_across_streams(mod: cuda.Module) -> None:
    a, b = cuda.Stream(non_blocking=True), cuda.Stream(non_blocking=True)
    x = cuda.to_device(np.ones(32, np.float32))
    open_gate = gate(a)
    mod.get_function("scale")(1, 32, (x, np.float32(3), np.int32(32)), stream=a)
    done_a = cuda.Event()
    done_a.record(a)
    b.wait_event(done_a)
    second = mod.get_function("scale")(1, 32, (x, np.float32(5), np.int32(32)), stream=b)
    assert not second.done  # b waits for a, which waits for the gate
    open_gate()
    b.synchronize()
    np.testing.assert_array_equal(x.get(), np.full(32, 15, np.float32))
    assert second.device_start >= done_a.timestamp


def test_copy_overlaps_compute_on_the_modeled_timeline(mod: cuda.Module) -> None:
    compute, copy = cuda.Stream(non_blocking=True), cuda.Stream(non_blocking=True)
    x = cuda.to_device(np.ones(256, np.float32))
    host = cuda.pinned_empty(16 << 20, np.uint8)
    host[:] = 7
    dev = cuda.empty(16 << 20, np.uint8)
    before, after = cuda.Event(), cuda.Event()
    kernel = mod.get_function("spin")(1, 256, (x, np.int32(20000)), stream=compute)
    before.record(copy)
    dev.set(host, stream=copy)
    after.record(copy)
    cuda.synchronize()
    c0, c1 = before.timestamp, after.timestamp
    assert c1 - c0 == pytest.approx((16 << 20) / (64e9 * 0.85) + 2e-6)  # the DMA model, pinned
    assert c0 < kernel.device_end and kernel.device_start < c1  # the intervals overlap
    assert int(dev.get()[12345]) == 7


def test_one_stream_serializes_copy_and_kernel(mod: cuda.Module) -> None:
    s = cuda.Stream()
    n = 1 << 20
    host = cuda.pinned_empty(n, np.float32)
    host[:] = np.arange(n, dtype=np.float32)
    x = cuda.empty(n, np.float32)
    copied = cuda.Event()
    x.set(host, stream=s)
    copied.record(s)
    report = mod.get_function("scale")(n // 256, 256, (x, np.float32(2), np.int32(n)), stream=s)
    out = cuda.pinned_empty(n, np.float32)
    x.get(out, stream=s)
    s.synchronize()
    assert report.device_start >= copied.timestamp
    np.testing.assert_array_equal(out, np.arange(n, dtype=np.float32) * 2)


def test_legacy_default_stream_synchronizes_with_blocking_streams(mod: cuda.Module) -> None:
    x = cuda.to_device(np.ones(256, np.float32))
    on_default = mod.get_function("spin")(1, 256, (x, np.int32(5000)))
    blocking, non_blocking = cuda.Stream(), cuda.Stream(non_blocking=True)
    e_blocking, e_non_blocking = cuda.Event(), cuda.Event()
    e_blocking.record(blocking)  # must come after the default stream's kernel
    e_non_blocking.record(non_blocking)  # need not
    cuda.synchronize()
    assert e_blocking.timestamp >= on_default.device_end
    assert e_non_blocking.timestamp < on_default.device_end


def test_per_thread_default_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_DEFAULT_STREAM", "per-thread")
    ctx = cuda.current_device().context
    seen: list[object] = []
    t = threading.Thread(target=lambda: seen.append(ctx.stream(None)))
    t.start()
    t.join()
    assert ctx.stream(None) is not seen[0] and ctx.stream(None) is not ctx.null_stream


def test_event_elapsed_time_is_the_modeled_kernel_time(mod: cuda.Module) -> None:
    s = cuda.Stream()
    x = cuda.to_device(np.ones(256, np.float32))
    start, end = cuda.Event(), cuda.Event()
    start.record(s)
    report = mod.get_function("spin")(1, 256, (x, np.int32(1000)), stream=s)
    end.record(s)
    end.synchronize()
    assert start.elapsed_time(end) == pytest.approx(report.modeled.seconds * 1e3, rel=1e-9, abs=1e-12)


def test_event_errors() -> None:
    s = cuda.Stream()
    never = cuda.Event()
    done = cuda.Event()
    done.record(s)
    done.synchronize()
    with pytest.raises(cuda.CudaError) as info:
        never.elapsed_time(done)
    assert info.value.name == "cudaErrorInvalidResourceHandle"
    untimed = cuda.Event(timing=False)
    untimed.record(s)
    untimed.synchronize()
    with pytest.raises(cuda.CudaError, match="timing disabled"):
        untimed.elapsed_time(done)
    open_gate = gate(s)
    pending = cuda.Event()
    pending.record(s)
    assert not pending.query()
    with pytest.raises(cuda.CudaError) as info:
        done.elapsed_time(pending)
    assert info.value.name == "cudaErrorNotReady"
    open_gate()
    pending.synchronize()
    assert done.elapsed_time(pending) >= 0


def test_signal_wait_times_out_with_the_observed_value() -> None:
    from strata.runtime import Condition

    ctx = cuda.current_device().context
    sig = Signal(1, ctx.event_id)
    assert sig.wait(Condition.LT, 1, timeout=0.05) == 1
    threading.Timer(0.05, lambda: sig.store(0)).start()
    assert sig.wait(Condition.LT, 1, timeout=5.0) == 0


def test_out_of_memory_is_typed_and_says_how_much() -> None:
    free = cuda.current_device().file.vram.stats().free
    with pytest.raises(cuda.OutOfMemoryError) as info:
        cuda.empty(free + (1 << 30), np.uint8)
    e = info.value
    assert isinstance(e, MemoryError) and e.name == "cudaErrorMemoryAllocation"
    assert f"{free + (1 << 30):,}" in str(e) and "largest free block" in str(e)
    x = cuda.to_device(np.arange(4, dtype=np.int32))  # the device still works
    assert x.get().tolist() == [0, 1, 2, 3]


def test_memory_accounting_returns_to_zero(mod: cuda.Module) -> None:
    import gc

    gc.collect()  # arrays other tests dropped
    vram = cuda.current_device().file.vram
    before = vram.stats()
    arrays = [cuda.zeros(1000 * (i + 1), np.float32) for i in range(50)]
    mod.get_function("scale")(4, 256, (arrays[-1], np.float32(2), np.int32(1000)))
    assert vram.stats().used > before.used
    del arrays
    gc.collect()  # frees at once where the device is idle, else at the next call that may wait:
    cuda.synchronize()  # a finalizer never waits for the device (it may run where a lock is held)
    after = vram.stats()
    assert (after.used, after.largest_free_block) == (before.used, before.largest_free_block)


def test_pinned_copies_are_faster_than_pageable_on_the_model() -> None:
    s = cuda.Stream()
    n = 32 << 20
    dev = cuda.empty(n, np.uint8)

    def modeled(host: np.ndarray) -> float:
        a, b = cuda.Event(), cuda.Event()
        a.record(s)
        dev.set(host, stream=s)
        b.record(s)
        b.synchronize()
        return a.elapsed_time(b)

    pageable = np.full(n, 3, np.uint8)
    pinned = cuda.pinned_empty(n, np.uint8)
    pinned[:] = 3
    t_pageable, t_pinned = modeled(pageable), modeled(pinned)
    assert t_pageable / t_pinned == pytest.approx(1 / 0.42, rel=0.01)


def test_pageable_async_copy_has_consumed_the_buffer_on_return() -> None:
    s = cuda.Stream()
    open_gate = gate(s)
    host = np.full(1 << 16, 5, np.uint8)
    dev = cuda.empty(1 << 16, np.uint8)
    t = threading.Timer(0.05, open_gate)
    t.start()
    dev.set(host, stream=s)  # pageable: returns only once the DMA engine read it (after the gate)
    host[:] = 9
    s.synchronize()
    assert int(dev.get().max()) == 5


def test_fault_is_sticky_isolated_and_reset_recovers(mod: cuda.Module) -> None:
    dev = cuda.current_device()
    other = cuda.Device(model="h100" if dev.spec.name != "h100" else "a100")
    p = cuda.zeros(32, np.int32)
    mod.get_function("oob")(1, 32, (p, np.int32(1 << 20)))  # writes far past the end: queued, no error yet
    with pytest.raises(cuda.DeviceFault) as info:
        cuda.synchronize()
    assert info.value.name == "cudaErrorIllegalAddress" and "oob" in str(info.value)
    with pytest.raises(cuda.DeviceFault):  # sticky: every later call reports it
        mod.get_function("scale")(1, 32, (p, np.float32(2), np.int32(32)))
    with pytest.raises(cuda.DeviceFault):
        p.get()
    # another device keeps working meanwhile
    prev = cuda.current_device()
    cuda.set_device(other)
    try:
        y = cuda.to_device(np.ones(8, np.float32))
        mod.get_function("scale")(1, 8, (y, np.float32(4), np.int32(8)))
        assert y.get().tolist() == [4.0] * 8
    finally:
        cuda.set_device(prev)
    dev.reset()
    assert dev.error is None
    with pytest.raises(cuda.CudaError, match="reset"):
        p.get()
    z = cuda.to_device(np.ones(8, np.float32))
    mod.get_function("scale")(1, 8, (z, np.float32(3), np.int32(8)))
    assert z.get().tolist() == [3.0] * 8


def test_launch_blocking_reports_the_fault_at_the_launch(mod: cuda.Module, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_LAUNCH_BLOCKING", "1")
    p = cuda.zeros(32, np.int32)
    with pytest.raises(cuda.DeviceFault):
        mod.get_function("oob")(1, 32, (p, np.int32(1 << 20)))
    cuda.current_device().reset()


def test_every_packet_doorbell_and_interrupt_is_traced_to_its_call(mod: cuda.Module) -> None:
    x = cuda.to_device(np.ones(32, np.float32))
    with trace.record() as rec:
        mod.get_function("scale")(1, 32, (x, np.float32(2), np.int32(32)))
        cuda.synchronize()
    launch = next(e for e in rec.events if e.name == "cudaLaunchKernel")
    caused = {e.name for e in rec.events if e.correlation == launch.correlation}
    assert {"aql_kernel_dispatch", "doorbell", "kernel", "execute", "interrupt"} <= caused
    kernel = next(e for e in rec.events if e.name == "kernel")
    assert kernel.device_end is not None and kernel.device_start is not None
    assert kernel.device_end > kernel.device_start


def test_device_threads_shut_down_cleanly_at_exit(tmp_path: object) -> None:
    script = (
        "import numpy as np, strata.cuda as cuda\n"
        "m = cuda.compile('extern \"C\" __global__ void k(int* p) { p[threadIdx.x] = 1; }')\n"
        "p = cuda.zeros(32, np.int32)\n"
        "for _ in range(50): m.get_function('k')(1, 32, (p,), stream=cuda.Stream())\n"
        "print(int(p.get().sum()))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "32" and "Exception" not in out.stderr


def test_close_joins_the_engine_threads() -> None:
    from strata.driver.device import DeviceFile
    from strata.driver.discovery import device_node

    dev = DeviceFile(device_node(40, "a100"))
    ctx_stream = primary_context(dev).null_stream
    ptr = dev.alloc(64)
    ctx_stream.fill(ptr, 1, 64)
    ctx_stream.synchronize()
    threads = [e.thread for e in dev.cp.engines.values() if e.thread is not None]
    assert threads
    dev.close()
    assert not any(t.is_alive() for t in threads)
