"""Running one launch on both executors, for the native executor's differential tests (test_native_*.py):
outputs bit for bit, counters identical, fault reports identical."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.errors import DeviceFault


def on_both_executors(monkeypatch: pytest.MonkeyPatch, launch: Callable[[Any], Any], make: Callable[[], Any]
                      ) -> tuple[list[np.ndarray], dict[str, Any], Any]:
    """`launch(args)` on the reference executor, then on the native one with its -O0 code and with its -O3 code
    (STRATA_NATIVE_OPT), each from fresh inputs (`make()` returns (args, output arrays)): the native executor
    really ran it (no whole-kernel fallback), the outputs are bit for bit the same and so are the counters.
    Returns the native -O3 run's outputs, counters and trace."""
    results = {}
    for ex, opt in (("reference", "auto"), ("native", "0"), ("native", "3")):
        monkeypatch.setenv("STRATA_EXECUTOR", ex)
        monkeypatch.setenv("STRATA_NATIVE_OPT", opt)
        args, outs = make()
        with trace.record() as rec:
            r = launch(args)
            r.wait()
        assert r.executor == ex, [e.args for e in rec.events if e.name == "native_fallback"]
        results[ex, opt] = (dataclasses.asdict(r.counters), [o.get() for o in outs], rec)
    c_ref, o_ref, _ = results["reference", "auto"]
    for opt in ("0", "3"):
        c_nat, o_nat, rec = results["native", opt]
        for a, b in zip(o_ref, o_nat, strict=True):
            assert a.tobytes() == b.tobytes(), f"-O{opt}"
        assert c_nat == c_ref, f"-O{opt}"
    return o_nat, c_nat, rec


def fault_report(monkeypatch: pytest.MonkeyPatch, executor: str, launch: Callable[[], Any]) -> dict[str, Any]:
    """The DeviceFault report of `launch()` on one executor (without the address and the nearest allocation,
    which differ between runs), the context reset after it; the native executor ran it whole, and its -O0 and
    -O3 code (STRATA_NATIVE_OPT) report the same."""
    if executor == "native":
        reports = []
        for opt in ("0", "3"):
            monkeypatch.setenv("STRATA_NATIVE_OPT", opt)
            reports.append(_fault_report(monkeypatch, executor, launch))
        assert reports[0] == reports[1]
        return reports[1]
    return _fault_report(monkeypatch, executor, launch)


def _fault_report(monkeypatch: pytest.MonkeyPatch, executor: str, launch: Callable[[], Any]) -> dict[str, Any]:
    monkeypatch.setenv("STRATA_EXECUTOR", executor)
    try:
        with trace.record() as rec, pytest.raises(DeviceFault) as info:
            launch().wait()
    finally:
        cuda.current_device().reset()  # the fault is sticky on the context
    assert not [e for e in rec.events if e.name == "native_fallback"]
    return {k: v for k, v in info.value.report.items() if k not in ("address", "nearest")}
