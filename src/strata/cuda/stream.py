"""Streams and events as the CUDA runtime names them (cudaStream_t, cudaEvent_t).

Thin faces over the runtime's (L2) streams and events on the current device's primary context.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> s = cuda.Stream()
    >>> start, end = cuda.Event(), cuda.Event()
    >>> h = cuda.pinned_empty(1 << 20, np.uint8); d = cuda.empty(1 << 20, np.uint8)
    >>> start.record(s); d.set(h, stream=s); end.record(s); end.synchronize()
    >>> round(start.elapsed_time(end), 4)  # ms of modeled device time: 1 MiB over PCIe Gen5 (pinned)
    0.0213
"""

from __future__ import annotations

from strata import trace
from strata.cuda.device import Device, current_device
from strata.runtime import Event as _RuntimeEvent
from strata.runtime import Stream as _RuntimeStream


class Stream(_RuntimeStream):
    """A CUDA stream on `device` (default: the current device). `non_blocking=True` is
    cudaStreamNonBlocking: it does not synchronize with the legacy default stream."""

    def __init__(self, *, non_blocking: bool = False, device: Device | None = None) -> None:
        dev = device or current_device()
        with trace.span("L3", "cudaStreamCreate", non_blocking=non_blocking):
            super().__init__(dev.context, non_blocking=non_blocking)

    def synchronize(self) -> None:
        with trace.span("L3", "cudaStreamSynchronize"):
            super().synchronize()

    def wait_event(self, event: _RuntimeEvent) -> None:
        with trace.span("L3", "cudaStreamWaitEvent"):
            super().wait_event(event)


class Event(_RuntimeEvent):
    """A CUDA event. `timing=False` is cudaEventDisableTiming; `elapsed_time` is in milliseconds of
    modeled device time."""

    def __init__(self, *, timing: bool = True, blocking_sync: bool = False, device: Device | None = None) -> None:
        super().__init__((device or current_device()).context, timing=timing, blocking_sync=blocking_sync)

    def record(self, stream: _RuntimeStream | None = None) -> None:
        with trace.span("L3", "cudaEventRecord"):
            super().record(stream)

    def synchronize(self) -> None:
        with trace.span("L3", "cudaEventSynchronize"):
            super().synchronize()
