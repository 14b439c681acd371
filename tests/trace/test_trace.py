"""Trace core: events from every layer, linked by one correlation id per user call."""

import time

import numpy as np

import strata.cuda as cuda
from strata import trace


def test_launch_walks_down_the_layers():
    mod = cuda.compile('extern "C" __global__ void k(int* p) { p[threadIdx.x] = threadIdx.x; }', name="t.cu")
    p = cuda.zeros(32, np.int32)
    k = mod.get_function("k")
    with trace.record() as rec:
        k(1, 32, (p,))
        cuda.synchronize()  # the launch is asynchronous: the device runs it on its own thread
    launch = [e for e in rec.events if e.name == "cudaLaunchKernel"]
    assert len(launch) == 1
    cid = launch[0].correlation
    layers = {e.layer for e in rec.events if e.correlation == cid}
    assert {"L3", "L2", "L1", "L0"} <= layers
    execute = next(e for e in rec.events if e.name == "execute")
    assert execute.args["thread_instructions"] > 0 and execute.depth > launch[0].depth
    assert "L0 execute" in rec.walk()
    np.testing.assert_array_equal(p.get(), np.arange(32, dtype=np.int32))


def test_separate_calls_get_separate_correlations():
    with trace.record() as rec:
        with trace.span("L3", "a"):
            trace.emit("L0", "x")
        with trace.span("L3", "b"):
            trace.emit("L0", "y")
    by = rec.by_correlation()
    assert len(by) == 2 and all(len(v) == 2 for v in by.values())


def test_recording_off_is_cheap():
    assert not trace.recording()
    t = time.perf_counter()
    for _ in range(100_000):
        trace.emit("L0", "x", a=1)
    per_call = (time.perf_counter() - t) / 100_000
    assert per_call < 5e-6
