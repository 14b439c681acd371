"""L5 trace events: each framework op reports itself as PyTorch's profiler names it (`aten::mm`,
`aten::add`, `autograd::engine::evaluate_function: MmBackward0`, `Optimizer.step#AdamW.step`), so a
walk starts at the op the user called and descends through the library call, the launch, the packets
and the doorbell to the kernel.

`op(name)` wraps a function in a `trace.span("L5", name)`; when nothing records it costs one check.

Example:
    >>> import strata, strata.trace as trace
    >>> a = strata.ones(2, 2)
    >>> with trace.record() as rec:
    ...     b = a @ a
    >>> [e.name for e in rec.events if e.layer == "L5"]
    ['aten::matmul']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from strata import trace

F = TypeVar("F", bound=Callable[..., Any])


def op(name: str) -> Callable[[F], F]:
    """Decorate a framework op so it records an L5 span `name` while a recording is on."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def traced(*args: Any, **kwargs: Any) -> Any:
            if not trace.recording():
                return fn(*args, **kwargs)
            with trace.span("L5", name):
                return fn(*args, **kwargs)
        return traced  # type: ignore[return-value]
    return decorate


def span(name: str, **args: Any) -> Any:
    """An L5 span for code that is not one function (an autograd node, an optimizer step)."""
    return trace.span("L5", name, **args)
