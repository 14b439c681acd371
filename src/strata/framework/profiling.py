"""L5 trace events: each framework op reports itself as PyTorch's profiler names it (`aten::mm`,
`aten::add`, `autograd::engine::evaluate_function: MmBackward0`, `Optimizer.step#AdamW.step`), so a
walk starts at the op the user called and descends through the library call, the launch, the packets
and the doorbell to the kernel.

`op(name)` wraps a function in a `trace.span("L5", name)`; `named_op` does it for the dispatchers whose
first argument is the op's name (`unary_op("exp", x)`); `instrument` wraps a module's public ops in place
(so `ops.add`, looked up at call time, is the traced one). When nothing records, a traced op costs one
check.

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
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from strata import trace

F = TypeVar("F", bound=Callable[..., Any])


class _OpenOp(threading.local):
    name = ""  # the innermost L5 op running on this thread ("" outside any)


_open = _OpenOp()


def _call(name: str, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """fn(*args, **kwargs) inside an L5 span `name`, unless the op it implements is already open
    (`ops.add` dispatching to `binary_op("add")` is one op, not two)."""
    if _open.name == name:
        return fn(*args, **kwargs)
    saved, _open.name = _open.name, name
    try:
        with trace.span("L5", name):
            return fn(*args, **kwargs)
    finally:
        _open.name = saved


def traced_call(name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) inside the L5 span `name` (once: not again inside an op of the same name). The op
    table's front functions call it when a recording is on."""
    return _call(name, fn, args, {})


def op(name: str) -> Callable[[F], F]:
    """Decorate a framework op so it records an L5 span `name` while a recording is on."""
    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        def traced(*args: Any, **kwargs: Any) -> Any:
            if not trace.recording():
                return fn(*args, **kwargs)
            return _call(name, fn, args, kwargs)
        traced.l5_span = name  # type: ignore[attr-defined]  # marks it traced
        return traced  # type: ignore[return-value]
    return decorate


def span(name: str, **args: Any) -> Any:
    """An L5 span for code that is not one function (an autograd node, an optimizer step)."""
    return trace.span("L5", name, **args)


def named_op(fn: F) -> F:
    """Trace a dispatcher `fn(name, *args)` as the L5 span "aten::<name>"."""
    @functools.wraps(fn)
    def traced(name: str, *args: Any, **kwargs: Any) -> Any:
        if not trace.recording():
            return fn(name, *args, **kwargs)
        return _call("aten::" + name, fn, (name, *args), kwargs)
    return traced  # type: ignore[return-value]


def instrument(owner: Any, names: Mapping[str, str]) -> None:
    """Replace each function or method `owner.<attr>` (attr -> profiler name in `names`) by its traced
    self; `owner` is a module or a class (an inherited method is wrapped on `owner` itself). Attributes
    already traced or missing are skipped."""
    for attr, name in names.items():
        fn = getattr(owner, attr, None)
        if not callable(fn) or getattr(fn, "l5_span", None) == name:
            continue
        if hasattr(fn, "l5_span"):  # inherited under another name (AdamW's step is Adam's): trace it anew
            fn = fn.__wrapped__
        setattr(owner, attr, op(name)(fn))
