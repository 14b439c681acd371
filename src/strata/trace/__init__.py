"""Structured events from every layer, and `record()` to collect them.

A leaf package: every layer may import it. When nothing records, `emit` and `span` cost one
attribute check. A correlation id links one user call to everything it caused below it.

Example:
    >>> import strata.trace as trace
    >>> with trace.record() as t:
    ...     with trace.span("L3", "cudaLaunchKernel", kernel="saxpy"):
    ...         trace.emit("L0", "execute", lanes=1024)
    >>> [(e.layer, e.name) for e in t.events]
    [('L0', 'execute'), ('L3', 'cudaLaunchKernel')]
"""

from strata.trace.events import (
    Event,
    Recording,
    correlated,
    current_correlation,
    current_depth,
    emit,
    record,
    recording,
    span,
)

__all__ = ["Event", "Recording", "correlated", "current_correlation", "current_depth", "emit", "record", "recording",
           "span"]
