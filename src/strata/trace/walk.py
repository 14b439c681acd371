"""The walk: each user call of a recording, followed down the layers, with each step's CUDA-ecosystem
and ROCm-ecosystem names, and repeats collapsed so a training loop stays readable.

A call's first occurrence is printed in full. A later call that took the same path (the same events
in the same nesting, arguments aside) prints as one line naming the call it repeats; runs of those
merge into one line with a count; and when the whole recording is one block of calls repeated (a
training loop), the block is printed once and the repeats are counted.

Example:
    >>> rec = Recording()
    >>> for call in (1, 2, 3):
    ...     rec.events += [Event("L3", "cudaLaunchKernel", {"kernel": "k"}, call, call + 0.5, correlation=call),
    ...                    Event("L1", "doorbell", {"queue": 1}, call + 0.1, call + 0.1, correlation=call, depth=1)]
    >>> print(walk(rec, ecosystems=False))
    call #1
      L3 cudaLaunchKernel(kernel=k)
        L1 doorbell(queue=1)
    ... the same 1 call(s) repeat 2 more time(s)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from strata.trace.ecosystem import counterparts
from strata.trace.events import Event, Recording

MAX_ARG = 60


def _fmt_arg(v: Any) -> str:
    s = f"{v:.4g}" if isinstance(v, float) else str(v)
    return s if len(s) <= MAX_ARG else s[:MAX_ARG - 3] + "..."


def _line(e: Event, ecosystems: bool) -> str:
    args = ", ".join(f"{k}={_fmt_arg(v)}" for k, v in e.args.items() if k not in ("cuda", "rocm"))
    text = f"{'  ' * (e.depth + 1)}{e.layer} {e.name}({args})"
    if ecosystems:
        cuda, rocm = counterparts(e.layer, e.name, e.args)
        if cuda or rocm:
            text += f"    [CUDA: {cuda or '-'} | ROCm: {rocm or '-'}]"
    return text


def _calls(rec: Recording) -> list[tuple[int, list[Event]]]:
    """(correlation, events in walk order) for each call, in the order the calls began."""
    calls = [(cid, _walk_order(evs)) for cid, evs in rec.by_correlation().items()]
    return sorted(calls, key=lambda c: min(e.start for e in c[1]))


def _walk_order(events: list[Event]) -> list[Event]:
    """Host events in start order, each packet's device-side events (they run later, on the engine's
    thread) right after the doorbell that submitted the packet."""
    host = sorted((e for e in events if e.anchor is None), key=lambda e: (e.start, e.depth))
    by_packet: dict[tuple[int, int], list[Event]] = {}
    for e in sorted((e for e in events if e.anchor is not None), key=lambda e: e.start):
        by_packet.setdefault(e.anchor, []).append(e)  # type: ignore[arg-type]
    ordered: list[Event] = []
    for e in host:
        ordered.append(e)
        if e.layer == "L1" and e.name == "doorbell":
            ordered += by_packet.pop((e.args.get("queue"), e.args.get("index")), [])  # type: ignore[arg-type]
    return ordered + [e for evs in by_packet.values() for e in evs]  # packets whose doorbell is elsewhere


def _signature(events: Sequence[Event]) -> tuple[tuple[int, str, str], ...]:
    return tuple((e.depth, e.layer, e.name) for e in events)


def _period(sigs: Sequence[Any]) -> int:
    """The smallest p with sigs[i] == sigs[i - p] for every i >= p and at least two repeats; 0 if none."""
    n = len(sigs)
    for p in range(1, n // 2 + 1):
        if all(sigs[i] == sigs[i - p] for i in range(p, n)):
            return p
    return 0


def walk(rec: Recording, *, ecosystems: bool = True, collapse: bool = True) -> str:
    """The recording's calls walked down the layers (see the module docstring)."""
    calls = _calls(rec)
    earlier = sum(len(evs) for _, evs in calls if all(e.anchor is not None for e in evs))
    calls = [c for c in calls if any(e.anchor is None for e in c[1])]
    sigs = [_signature(evs) for _, evs in calls]
    shown = calls
    tail = ""
    if collapse:
        p = _period(sigs)
        if p:
            shown = calls[:p]
            tail = f"... the same {p} call(s) repeat {len(calls) // p - 1} more time(s)"
            if len(calls) % p:
                tail += f" (and {len(calls) % p} more)"
    lines: list[str] = []
    first_of: dict[Any, int] = {}
    pending: tuple[str, int] | None = None  # a repeated-call line and how many times in a row

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            text, count = pending
            lines.append(text + (f" x{count}" if count > 1 else ""))
            pending = None

    for (cid, evs), sig in zip(shown, sigs, strict=False):
        if collapse and sig in first_of:
            top = evs[0]
            text = f"call #{cid}: {top.layer} {top.name} (same path as call #{first_of[sig]})"
            key = f"{top.layer} {top.name} (same path as call #{first_of[sig]})"
            if pending is not None and pending[0].endswith(key):
                pending = (pending[0], pending[1] + 1)
            else:
                flush()
                pending = (text, 1)
            continue
        flush()
        first_of.setdefault(sig, cid)
        lines.append(f"call #{cid}")
        lines.extend(_line(e, ecosystems) for e in evs)
    flush()
    if tail:
        lines.append(tail)
    if earlier:
        lines.append(f"({earlier} device event(s) of work submitted before the recording began not shown)")
    return "\n".join(lines)
