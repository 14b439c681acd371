"""The event record: layer, name, arguments, host time span, modeled device time, correlation id."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

LAYERS = ("L5", "L4", "L3", "L2", "L1", "L0")


@dataclass
class Event:
    """One thing a layer did. Times: host `start`/`end` in seconds (perf_counter); modeled device
    `device_start`/`device_end` in seconds on the modeled timeline, when the layer knows them."""

    layer: str
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    start: float = 0.0
    end: float = 0.0
    device_start: float | None = None
    device_end: float | None = None
    correlation: int = 0
    depth: int = 0
    # (queue id, packet index) of the packet whose execution emitted this event, on a device thread;
    # the walk shows such events under that packet's doorbell
    anchor: tuple[int, int] | None = None


class Recording:
    """Events collected by one `record()` block, in the order they finished."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def by_correlation(self) -> dict[int, list[Event]]:
        out: dict[int, list[Event]] = {}
        for e in self.events:
            out.setdefault(e.correlation, []).append(e)
        return out

    def walk(self, *, ecosystems: bool = True, collapse: bool = True) -> str:
        """Each user call's path down the layers, with CUDA/ROCm counterpart names and repeats collapsed
        (see strata.trace.walk)."""
        from strata.trace.walk import walk  # walk.py builds on this module
        return walk(self, ecosystems=ecosystems, collapse=collapse)

    def save_html(self, path: Any, ceilings: dict[str, Any] | None = None, title: str = "strata trace") -> Any:
        """Write the self-contained HTML report (see strata.trace.report)."""
        from strata.trace.report import save_html  # report.py builds on this module
        return save_html(self, path, ceilings, title)

    def save_perfetto(self, path: Any, gpu: str = "") -> Any:
        """Write the recording as Chrome/Perfetto trace JSON (see strata.trace.perfetto)."""
        from strata.trace.perfetto import save_perfetto  # perfetto.py builds on this module
        return save_perfetto(self, path, gpu)


class _State(threading.local):
    def __init__(self) -> None:
        self.stack: list[int] = []  # open span depths' correlation ids
        self.depth = 0
        self.anchor: tuple[int, int] | None = None


_recordings: list[Recording] = []
_state = _State()
_ids = itertools.count(1)


def recording() -> bool:
    """True when some `record()` block is collecting events."""
    return bool(_recordings)


def current_correlation() -> int:
    """The id of the outermost open span on this thread (the user call in progress), 0 if none."""
    return _state.stack[0] if _state.stack else 0


def emit(layer: str, name: str, /, *, device_start: float | None = None, device_end: float | None = None,
         correlation: int | None = None, **args: Any) -> None:
    """Record an instantaneous event (no-op unless recording). `correlation` links it to the call
    that caused it when it happens on another thread (a device engine, an interrupt)."""
    if not _recordings:
        return
    now = time.perf_counter()
    ev = Event(layer, name, args, now, now, device_start, device_end,
               correlation or current_correlation() or next(_ids), _state.depth, _state.anchor)
    for r in _recordings:
        r.events.append(ev)


class _Unrecorded:
    """`span` while nothing records: hands the block its arguments and does nothing else (a generator-based
    context manager costs several times as much, and every launch opens a few spans)."""

    __slots__ = ("args",)

    def __init__(self, args: dict[str, Any]) -> None:
        self.args = args

    def __enter__(self) -> dict[str, Any]:
        return self.args

    def __exit__(self, *exc: object) -> None:
        return None


def span(layer: str, name: str, /, **args: Any) -> contextlib.AbstractContextManager[dict[str, Any]]:
    """Record an event covering the block; the yielded dict may gain arguments along the way."""
    if not _recordings:
        return _Unrecorded(args)
    return _span(layer, name, args)


@contextlib.contextmanager
def _span(layer: str, name: str, args: dict[str, Any]) -> Iterator[dict[str, Any]]:
    top = not _state.stack
    cid = next(_ids) if top else _state.stack[0]
    _state.stack.append(cid)
    depth = _state.depth
    _state.depth += 1
    start = time.perf_counter()
    try:
        yield args
    finally:
        _state.depth -= 1
        _state.stack.pop()
        ev = Event(layer, name, args, start, time.perf_counter(), args.pop("device_start", None),
                   args.pop("device_end", None), cid, depth, _state.anchor)
        for r in _recordings:
            r.events.append(ev)


_NOTHING = contextlib.nullcontext()  # `correlated` while nothing records (stateless: shared by every thread)


def correlated(correlation: int, depth: int = 0,
               anchor: tuple[int, int] | None = None) -> contextlib.AbstractContextManager[None]:
    """Attribute events recorded in this block (on this thread) to `correlation`, the id of the
    call that caused them, nested at `depth`; device threads use it for the packets they run, with
    `anchor` = (queue id, packet index) naming the packet. While nothing records it does nothing, at the
    cost of no generator (the command processor enters it for every packet)."""
    if not _recordings:
        return _NOTHING
    return _correlated(correlation, depth, anchor)


@contextlib.contextmanager
def _correlated(correlation: int, depth: int, anchor: tuple[int, int] | None) -> Iterator[None]:
    saved = list(_state.stack), _state.depth, _state.anchor
    # correlation 0: work submitted before the recording began (no call to attribute it to)
    _state.stack, _state.depth, _state.anchor = [correlation] if correlation else [], depth, anchor
    try:
        yield
    finally:
        _state.stack, _state.depth, _state.anchor = saved


def current_depth() -> int:
    """How deeply nested the open spans on this thread are."""
    return _state.depth


@contextlib.contextmanager
def record() -> Iterator[Recording]:
    """Collect events from every layer while the block runs."""
    rec = Recording()
    _recordings.append(rec)
    try:
        yield rec
    finally:
        _recordings.remove(rec)
