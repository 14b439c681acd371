"""Per-layer time: self times add up to the outermost spans' time, waits are counted apart, the modeled
device time is the kernels' and copies' modeled spans."""

from __future__ import annotations

import numpy as np
import pytest

import strata.cuda as cuda
import strata.trace as trace
from strata.trace.events import Event, Recording
from strata.trace.summary import format_layer_times, layer_times

SOURCE = r'extern "C" __global__ void inc(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1.0f; }'


def test_self_times_partition_the_outer_spans() -> None:
    rec = Recording()
    rec.events = [Event("L5", "op", {}, 0.0, 10.0), Event("L4", "lib", {}, 1.0, 6.0, depth=1),
                  Event("L3", "launch", {}, 2.0, 3.0, depth=2), Event("L2", "signal_wait", {}, 7.0, 9.0, depth=1),
                  Event("L1", "doorbell", {}, 2.5, 2.5, depth=3)]
    t = layer_times(rec)
    assert (t["L5"].host_s, t["L4"].host_s, t["L3"].host_s, t["L2"].host_s) == (3.0, 4.0, 1.0, 2.0)
    assert t["L2"].wait_s == 2.0 and t["L1"].host_s == 0.0 and t["L1"].events == 1


def test_a_real_launch_and_copy() -> None:
    k = cuda.compile(SOURCE, name="summary.cu").get_function("inc")
    x = cuda.to_device(np.zeros(256, np.float32))
    with trace.record() as rec:
        k.launch(2, 128, (x,))
        got = x.get()
    assert got.tolist() == [1.0] * 256
    t = layer_times(rec)
    kernels = [e for e in rec.events if e.layer == "L0" and e.name == "kernel"]
    assert t["L0"].device_s == pytest.approx(sum(e.device_end - e.device_start for e in kernels))
    assert t["L0"].engine_s > 0 and t["L3"].host_s > 0 and t["L2"].wait_s > 0
    outer = [e for e in rec.events if e.anchor is None and e.depth == 0]
    assert sum(v.host_s for v in t.values()) == pytest.approx(sum(e.end - e.start for e in outer))
    text = format_layer_times(t)
    assert "L0 hardware" in text and "us" in text and text.splitlines()[-1].startswith("  total")
