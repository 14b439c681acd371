"""`strata trace`: run a program with recording on, then print its walk down the layers and write the
Chrome/Perfetto trace and the HTML report. The pieces live in the leaf package strata.trace; this module
adds what only the top of the stack knows: the chosen GPU's roofline ceilings, and how to run a program.

Example:
    >>> ceilings("h200")["name"], ceilings("h200")["hbm_bytes_per_s"]
    ('H200', 4800000000000.0)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strata import trace


def ceilings(model: str | None = None) -> dict[str, Any]:
    """The roofline ceilings of GPU `model` (default: device 0's model): FP32 SIMT peak, the dense
    tensor-core BF16 peak and peak HBM bandwidth, from the device catalogue."""
    from strata import config
    from strata.hw.catalog import get_spec

    spec = get_spec(model or config.settings().devices[0])
    return {"name": spec.name.upper(), "peak_flops": spec.peak_flops["fp32"],
            "tensor_peak_flops": spec.peak_flops.get("tensor_bf16", 0.0), "hbm_bytes_per_s": spec.hbm_bandwidth}


def trace_call(fn: Callable[[], Any], out_dir: str | Path | None = None, *, model: str | None = None,
               title: str = "strata trace", show_walk: bool = True,
               collapse: bool = True) -> tuple[Any, trace.Recording]:
    """Run `fn` with recording on (waiting for the devices before the recording ends, so every kernel's
    events are in it); print the walk; write trace.json and report.html to `out_dir` when given. If `fn`
    (or the final wait) raises, the walk and files are still produced, then the error is re-raised."""
    from strata.runtime import contexts

    error: BaseException | None = None
    result = None
    with trace.record() as rec:
        try:
            result = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised below, after the trace is written
            error = e
        for ctx in contexts():
            try:
                ctx.synchronize()
            except Exception as e:  # noqa: BLE001 - a sticky device fault: re-raised below
                error = error or e
    if show_walk:
        print(rec.walk(collapse=collapse))
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        roof = ceilings(model)
        rec.save_perfetto(out / "trace.json", roof["name"])
        rec.save_html(out / "report.html", roof, title=title)
        print(f"\nwrote {out / 'trace.json'} (open in ui.perfetto.dev or chrome://tracing) and {out / 'report.html'}",
              file=sys.stderr)
    if error is not None:
        raise error
    return result, rec
