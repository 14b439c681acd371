"""Where the time went, layer by layer: each layer's host wall time spent in its own code (a span's time
minus the spans nested in it), the engine threads' wall time (the emulation of the device's work), and
the modeled device time of the work the layer put on the device's timeline.

Example:
    >>> from strata.trace.events import Event, Recording
    >>> rec = Recording()
    >>> rec.events = [Event("L3", "cudaLaunchKernel", {}, 0.0, 1.0),
    ...               Event("L2", "cuLaunchKernel", {}, 0.25, 0.75, depth=1),
    ...               Event("L0", "kernel", {}, 2.0, 2.0, 0.0, 1e-6, anchor=(1, 0))]
    >>> t = layer_times(rec)
    >>> t["L3"].host_s, t["L2"].host_s, t["L0"].device_s
    (0.5, 0.5, 1e-06)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from strata.trace.events import Event, Recording

WAITS = frozenset({"signal_wait"})  # spans in which the host is blocked on the device
LAYERS = {"L5": "framework", "L4": "math libraries", "L3": "programming interface", "L2": "system runtime",
          "L1": "kernel driver", "L0": "hardware"}


@dataclass
class LayerTime:
    """One layer's share: `host_s` its own host wall time on the caller's thread, `wait_s` the part of
    that spent blocked on the device, `engine_s` its own wall time on the device's engine threads
    (emulating the work), `device_s` the modeled device time of the work it placed on the device's
    timeline (kernels, DMA), `events` how many events it reported."""

    host_s: float = 0.0
    wait_s: float = 0.0
    engine_s: float = 0.0
    device_s: float = 0.0
    events: int = 0


def layer_times(rec: Recording) -> dict[str, LayerTime]:
    """Each layer's LayerTime (every layer L5..L0 present, zeros where it did nothing)."""
    out = {layer: LayerTime() for layer in LAYERS}
    for e in rec.events:
        t = out.setdefault(e.layer, LayerTime())
        t.events += 1
        if e.device_start is not None and e.device_end is not None:
            t.device_s += e.device_end - e.device_start
    host = [e for e in rec.events if e.anchor is None]
    for layer, s in _self_times(host).items():
        out[layer].host_s += s
    for e in host:
        if e.name in WAITS:
            out[e.layer].wait_s += e.end - e.start
    for layer, s in _self_times(e for e in rec.events if e.anchor is not None).items():
        out[layer].engine_s += s
    return out


def _self_times(events: Iterable[Event]) -> dict[str, float]:
    """Per layer, the time of its spans minus the spans directly nested in them (spans of one thread
    nest; instants count nothing)."""
    spans = sorted((e for e in events if e.end > e.start), key=lambda e: (e.start, -e.end))
    own: dict[str, float] = {}
    stack: list[Event] = []
    for e in spans:
        while stack and stack[-1].end <= e.start:
            stack.pop()
        own[e.layer] = own.get(e.layer, 0.0) + (e.end - e.start)
        if stack and e.end <= stack[-1].end:
            parent = stack[-1]
            own[parent.layer] -= e.end - e.start
        stack.append(e)
    return own


def format_layer_times(times: dict[str, LayerTime]) -> str:
    """A table of `layer_times`: host wall, engine-thread wall and modeled device time per layer."""
    def ms(s: float) -> str:
        return f"{s * 1e3:10.1f} ms" if s else " " * 13

    def us(s: float) -> str:
        return f"{s * 1e6:10.1f} us" if s else " " * 13

    lines = [f"  {'layer':<26}{'host wall':>13}{'(waiting)':>14}{'engine wall':>14}{'device (modeled)':>20}"]
    for layer, name in LAYERS.items():
        t = times[layer]
        lines.append(f"  {layer + ' ' + name:<26}{ms(t.host_s)} {ms(t.wait_s)} {ms(t.engine_s)}{us(t.device_s):>20}")
    total = [sum(getattr(t, f) for t in times.values()) for f in ("host_s", "wait_s", "engine_s", "device_s")]
    lines.append(f"  {'total':<26}{ms(total[0])} {ms(total[1])} {ms(total[2])}{us(total[3]):>20}")
    return "\n".join(lines)
