"""`torch.amp` under strata's torch alias: `autocast` (strata.framework.amp), `GradScaler`, and the
`custom_fwd` / `custom_bwd` decorators of custom autograd functions.

Example:
    >>> from strata.framework import amp_api
    >>> sorted(n for n in amp_api.__all__ if not n.startswith("_"))[:3]
    ['GradScaler', 'autocast', 'custom_bwd']
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from strata.framework import dtypes as dt
from strata.framework.amp import autocast, get_autocast_dtype, is_autocast_enabled
from strata.framework.grad_scaler import GradScaler


def custom_fwd(fwd: Callable[..., Any] | None = None, *, device_type: str = "cuda",
               cast_inputs: dt.dtype | None = None) -> Any:
    """Decorator for a custom Function's forward: with `cast_inputs`, runs it with autocast off (strata
    applies no input cast of its own); otherwise runs it as is."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if cast_inputs is None:
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*args, **kwargs)
    return wrapped


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str = "cuda") -> Any:
    """Decorator for a custom Function's backward (runs it unchanged)."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd


__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_enabled"]
