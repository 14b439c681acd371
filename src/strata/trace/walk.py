"""The walk: each user call of a recording, followed down the layers, with each step's CUDA-ecosystem
and ROCm-ecosystem names, and repeats collapsed so a training loop stays readable.

A call's first occurrence is printed in full. A later call that took the same path (the same events
in the same nesting, arguments aside) prints as one line naming the call it repeats; runs of those
merge into one line with a count; and a block of calls repeated back to back (the steps of a training
loop) is printed once and its repeats are counted, what comes before it (a first step that also compiled
its kernels) and after it (reading the loss) printed as usual.

Example:
    >>> rec = Recording()
    >>> for call in (1, 2, 3):
    ...     rec.events += [Event("L3", "cudaLaunchKernel", {"kernel": "k"}, call, call + 0.5, correlation=call),
    ...                    Event("L1", "doorbell", {"queue": 1}, call + 0.1, call + 0.1, correlation=call, depth=1)]
    >>> print(walk(rec, ecosystems=False))
    call #1
      L3 cudaLaunchKernel(kernel=k)
        L1 doorbell(queue=1)
    ... the last 1 call(s) repeat 2 more time(s)
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


MAX_PROLOGUE = 400  # calls before a loop's steady state that the search for a loop skips at most
MAX_PERIOD = 200  # calls in one step of a loop, at most


def _loop(sigs: Sequence[Any]) -> tuple[int, int, int]:
    """(s, p, k): the block of p calls starting at s repeated k >= 2 times in a row that covers the most
    calls (ties: the earliest, then the shortest block). A training loop: s skips its first step, which
    also compiled kernels, and what follows the loop (reading the loss) stays outside. (0, 0, 0) if none."""
    n = len(sigs)
    best = (0, 0, 0)
    for s in range(min(n, MAX_PROLOGUE)):
        for p in range(1, min(MAX_PERIOD, (n - s) // 2) + 1):
            if p * (n - s) // p <= best[1] * best[2]:
                break  # even repeating to the end would not beat the best
            i = s + p
            while i < n and sigs[i] == sigs[i - p]:
                i += 1
            k = (i - s) // p
            if k >= 2 and k * p > best[1] * best[2]:
                best = (s, p, k)
    return best


def walk(rec: Recording, *, ecosystems: bool = True, collapse: bool = True) -> str:
    """The recording's calls walked down the layers (see the module docstring)."""
    calls = _calls(rec)
    earlier = sum(len(evs) for _, evs in calls if all(e.anchor is not None for e in evs))
    calls = [c for c in calls if any(e.anchor is None for e in c[1])]
    sigs = [_signature(evs) for _, evs in calls]
    printer = _Printer(ecosystems, collapse)
    s, p, k = _loop(sigs) if collapse else (0, 0, 0)
    if p:
        printer.add(calls[:s + p], sigs[:s + p])
        printer.flush()
        printer.lines.append(f"... the last {p} call(s) repeat {k - 1} more time(s)")
        printer.add(calls[s + p * k:], sigs[s + p * k:])
    else:
        printer.add(calls, sigs)
    printer.flush()
    if earlier:
        printer.lines.append(f"({earlier} device event(s) of work submitted before the recording began not shown)")
    return "\n".join(printer.lines)


class _Printer:
    """Writes calls in full the first time their path is seen, then as one line naming that first call;
    consecutive such lines for the same path merge with a count."""

    def __init__(self, ecosystems: bool, collapse: bool) -> None:
        self.ecosystems, self.collapse = ecosystems, collapse
        self.lines: list[str] = []
        self.first_of: dict[Any, int] = {}
        self.pending: tuple[str, int] | None = None  # a repeated-call line and how many times in a row

    def flush(self) -> None:
        if self.pending is not None:
            text, count = self.pending
            self.lines.append(text + (f" x{count}" if count > 1 else ""))
            self.pending = None

    def add(self, calls: Sequence[tuple[int, list[Event]]], sigs: Sequence[Any]) -> None:
        for (cid, evs), sig in zip(calls, sigs, strict=True):
            if self.collapse and sig in self.first_of:
                top = evs[0]
                key = f"{top.layer} {top.name} (same path as call #{self.first_of[sig]})"
                if self.pending is not None and self.pending[0].endswith(key):
                    self.pending = (self.pending[0], self.pending[1] + 1)
                else:
                    self.flush()
                    self.pending = (f"call #{cid}: {key}", 1)
                continue
            self.flush()
            self.first_of.setdefault(sig, cid)
            self.lines.append(f"call #{cid}")
            self.lines.extend(_line(e, self.ecosystems) for e in evs)
