"""The walk puts each packet's device-side events (run later on an engine thread) under the doorbell
that submitted the packet, and leaves out device work submitted before the recording began."""

from __future__ import annotations

import numpy as np

import strata.cuda as cuda
import strata.trace as trace

SOURCE = r'extern "C" __global__ void bump(float* x) { x[threadIdx.x] += 1.0f; }'


def test_device_events_follow_their_doorbell() -> None:
    k = cuda.compile(SOURCE, name="walk_order.cu").get_function("bump")
    x = cuda.to_device(np.zeros(32, np.float32))
    k.launch(1, 32, (x,))  # queued before the recording: if it runs during it, the walk leaves it out
    with trace.record() as rec:
        for _ in range(2):
            k.launch(1, 32, (x,))
        cuda.synchronize()
    assert x.get().tolist() == [3.0] * 32
    lines = rec.walk(collapse=False).splitlines()
    names = [ln.split("(")[0].split()[-1] for ln in lines if ln.startswith("  ")]
    # each launch: ... doorbell, then its execute and kernel rows, before the next launch begins
    doorbells = [i for i, n in enumerate(names) if n == "doorbell"]
    assert len(doorbells) == 2
    for i in doorbells:
        assert names[i + 1:i + 3] == ["execute", "kernel"], names
    assert names.index("cudaLaunchKernel", doorbells[0]) > doorbells[0] + 2
    firsts = [lines[i + 1] for i, ln in enumerate(lines) if ln.startswith("call #")]
    assert all(f.split()[0] in ("L3", "L2") for f in firsts), firsts  # no call made of device events only
    ours = [e for e in rec.events if e.anchor is not None and e.correlation in {d.correlation for d in rec.events
                                                                               if d.name == "doorbell"}]
    assert all(e.depth > 0 for e in ours)


def test_a_loop_between_a_prologue_and_an_epilogue_collapses() -> None:
    from strata.trace.events import Event, Recording

    rec = Recording()
    names = ["compile+step", "fwd", "bwd"] + ["fwd", "bwd"] * 4 + ["item"]
    for cid, name in enumerate(names, start=1):
        rec.events.append(Event("L5", name, {}, float(cid), cid + 0.5, correlation=cid))
        if name == "compile+step":
            rec.events.append(Event("L3", "nvrtcCompileProgram", {}, cid + 0.1, cid + 0.2, correlation=cid, depth=1))
    text = rec.walk(ecosystems=False)
    assert "... the last 2 call(s) repeat 4 more time(s)" in text
    lines = text.splitlines()
    assert lines[-2:] == ["call #12", "  L5 item()"]  # after the loop, printed as usual
    assert text.count("L5 fwd()") == 1 and "nvrtcCompileProgram" in text
