"""The walk (layers, ecosystem names, collapsed repeats) and the Chrome/Perfetto export of real recordings."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
import strata.trace as trace
from strata.trace.perfetto import DEVICE_PID, HOST_PID, chrome_trace

SRC = r'extern "C" __global__ void twice(float* x, int n) {' \
      r' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }'


@pytest.fixture(scope="module")
def twice() -> cuda.Kernel:
    return cuda.compile(SRC).get_function("twice")


def _record(twice: cuda.Kernel, launches: int) -> trace.Recording:
    x = cuda.to_device(np.ones(64, np.float32))
    twice.launch(1, 64, (x, np.int32(64)))
    cuda.synchronize()
    with trace.record() as rec:
        for _ in range(launches):
            twice.launch(1, 64, (x, np.int32(64)))
        cuda.synchronize()
    assert x.get()[0] == 2.0 ** (launches + 1)
    return rec


def test_walk_names_each_layer_and_its_counterparts(twice: cuda.Kernel) -> None:
    text = _record(twice, 1).walk()
    for needle in ("L3 cudaLaunchKernel", "L2 cuLaunchKernel", "L2 aql_kernel_dispatch", "L1 doorbell",
                   "L0 execute", "hipLaunchKernel", "hipModuleLaunchKernel", "AQL kernel dispatch packet",
                   "KFD", "GPFIFO"):
        assert needle in text, needle


def test_walk_collapses_a_repeated_loop(twice: cuda.Kernel) -> None:
    rec = _record(twice, 6)
    full = rec.walk(collapse=False)
    short = rec.walk()
    assert full.count("L3 cudaLaunchKernel") >= 6
    assert short.count("L3 cudaLaunchKernel") < full.count("L3 cudaLaunchKernel")
    assert "repeat" in short or "same path as call" in short


def test_perfetto_document_follows_the_trace_event_format(twice: cuda.Kernel, tmp_path: Path) -> None:
    rec = _record(twice, 3)
    path = rec.save_perfetto(tmp_path / "t.json", "H200")
    doc = json.loads(path.read_text())
    events = doc["traceEvents"]
    assert events and doc["displayTimeUnit"] in ("ms", "ns")
    for e in events:
        assert e["ph"] in ("X", "M", "s", "f"), e
        assert isinstance(e["pid"], int)
        if e["ph"] == "X":
            assert isinstance(e["ts"], float | int) and e["ts"] >= 0 and e["dur"] > 0
            assert isinstance(e["name"], str) and isinstance(e["args"], dict)
    kernels = [e for e in events if e["ph"] == "X" and e["pid"] == DEVICE_PID]
    assert len(kernels) == 3  # one modeled kernel per launch on the device's compute track
    starts = sorted(e["ts"] for e in kernels)
    assert all(b >= a for a, b in zip(starts, starts[1:], strict=False))
    flows_s = {e["id"] for e in events if e["ph"] == "s"}
    flows_f = {e["id"] for e in events if e["ph"] == "f"}
    assert flows_s == flows_f and len(flows_s) == 3
    layers = {e["cat"] for e in events if e["ph"] == "X" and e["pid"] == HOST_PID}
    assert {"L3", "L2", "L1", "L0"} <= layers


def test_event_args_carry_both_ecosystems(twice: cuda.Kernel) -> None:
    doc = chrome_trace(_record(twice, 1))
    launch = next(e for e in doc["traceEvents"] if e.get("name") == "cudaLaunchKernel")
    assert launch["args"]["CUDA ecosystem"] == "cudaLaunchKernel"
    assert launch["args"]["ROCm ecosystem"] == "hipLaunchKernel"
