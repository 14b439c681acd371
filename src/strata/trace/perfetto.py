"""A recording as a Chrome/Perfetto trace (the JSON trace-event format): opens in ui.perfetto.dev and
chrome://tracing.

Two processes: "host" holds one track per layer (L5 framework .. L0 hardware) with every event on the
emulation's wall clock; "device (modeled)" holds one track per engine (compute, dma0, dma1) with the
kernels, copies and barriers at their times on the modeled device timeline. Flow arrows link each user
call (the outermost event of a correlation) to the device work it caused. Each event's arguments
include its CUDA-ecosystem and ROCm-ecosystem names.

Example:
    >>> rec = Recording()
    >>> rec.events += [Event("L3", "cudaLaunchKernel", {"kernel": "k"}, 0.0, 1e-3, correlation=1),
    ...                Event("L0", "kernel", {"kernel": "k"}, 5e-4, 5e-4, 0.0, 2e-6, correlation=1, depth=3)]
    >>> doc = chrome_trace(rec)
    >>> sorted({e["ph"] for e in doc["traceEvents"]})
    ['M', 'X', 'f', 's']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from strata.trace.ecosystem import LAYER_ROLES, counterparts
from strata.trace.events import LAYERS, Event, Recording

HOST_PID = 1
DEVICE_PID = 2
ENGINES = ("compute", "dma0", "dma1")
_US = 1e6


def _jsonable(v: Any) -> Any:
    if isinstance(v, str | int | float | bool) or v is None:
        return v
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    return str(v)


def _args(e: Event) -> dict[str, Any]:
    cuda, rocm = counterparts(e.layer, e.name, e.args)
    out = {k: _jsonable(v) for k, v in e.args.items()}
    out["correlation"] = e.correlation
    if cuda:
        out["CUDA ecosystem"] = cuda
    if rocm:
        out["ROCm ecosystem"] = rocm
    return out


def _engine(e: Event) -> str:
    engine = e.args.get("engine")
    return str(engine) if engine in ENGINES else "compute"


def _metadata(gpu: str) -> list[dict[str, Any]]:
    meta: list[dict[str, Any]] = [
        {"ph": "M", "pid": HOST_PID, "name": "process_name", "args": {"name": "host (emulation wall time)"}},
        {"ph": "M", "pid": HOST_PID, "name": "process_sort_index", "args": {"sort_index": 0}},
        {"ph": "M", "pid": DEVICE_PID, "name": "process_name", "args": {"name": f"device {gpu} (modeled time)"}},
        {"ph": "M", "pid": DEVICE_PID, "name": "process_sort_index", "args": {"sort_index": 1}},
    ]
    for i, layer in enumerate(LAYERS):
        package, cuda, rocm = LAYER_ROLES[layer]
        meta.append({"ph": "M", "pid": HOST_PID, "tid": i + 1, "name": "thread_name",
                     "args": {"name": f"{layer} {package} ({cuda} / {rocm})"}})
        meta.append({"ph": "M", "pid": HOST_PID, "tid": i + 1, "name": "thread_sort_index", "args": {"sort_index": i}})
    for i, engine in enumerate(ENGINES):
        meta.append({"ph": "M", "pid": DEVICE_PID, "tid": 100 + i, "name": "thread_name",
                     "args": {"name": f"engine {engine}"}})
    return meta


def chrome_trace(rec: Recording, gpu: str = "") -> dict[str, Any]:
    """The trace-event JSON document of `rec` (a dict ready for json.dump)."""
    events = rec.events
    origin = min((e.start for e in events), default=0.0)
    out = _metadata(gpu)
    tops: dict[int, Event] = {}
    for e in events:
        top = tops.get(e.correlation)
        if top is None or (e.depth, e.start) < (top.depth, top.start):
            tops[e.correlation] = e
    flow_id = 0
    for e in events:
        tid = LAYERS.index(e.layer) + 1 if e.layer in LAYERS else len(LAYERS) + 1
        out.append({"ph": "X", "pid": HOST_PID, "tid": tid, "name": e.name, "cat": e.layer,
                    "ts": (e.start - origin) * _US, "dur": max((e.end - e.start) * _US, 0.001), "args": _args(e)})
        if e.device_start is None or e.device_end is None:
            continue
        dev_tid = 100 + ENGINES.index(_engine(e))
        ts = e.device_start * _US
        out.append({"ph": "X", "pid": DEVICE_PID, "tid": dev_tid, "name": str(e.args.get("kernel", e.name)),
                    "cat": "device", "ts": ts, "dur": max((e.device_end - e.device_start) * _US, 0.001),
                    "args": _args(e)})
        top = tops[e.correlation]
        if top is e:
            continue
        flow_id += 1
        top_tid = LAYERS.index(top.layer) + 1 if top.layer in LAYERS else len(LAYERS) + 1
        out.append({"ph": "s", "pid": HOST_PID, "tid": top_tid, "name": "caused", "cat": "flow", "id": flow_id,
                    "ts": (top.start - origin) * _US})
        out.append({"ph": "f", "bp": "e", "pid": DEVICE_PID, "tid": dev_tid, "name": "caused", "cat": "flow",
                    "id": flow_id, "ts": ts})
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"producer": "strata", "device_clock": "modeled (docs/perf-model.md)"}}


def save_perfetto(rec: Recording, path: str | Path, gpu: str = "") -> Path:
    """Write `rec` as Chrome/Perfetto trace JSON to `path`; returns the path."""
    p = Path(path)
    p.write_text(json.dumps(chrome_trace(rec, gpu)), encoding="utf-8")
    return p
