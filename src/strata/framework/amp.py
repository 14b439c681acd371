"""Automatic mixed precision: `strata.autocast(device_type, dtype=...)`, as `torch.autocast`.

Inside the region, ops that gain from lower precision (matmul, linear, conv2d, bmm,
scaled_dot_product_attention) cast their floating inputs to the autocast dtype (bfloat16 by default on
"cuda" and "cpu"; float16 on "cuda" if asked), and ops that need range or accuracy (softmax,
log_softmax, layer_norm, cross_entropy, mse_loss, ...) cast to float32, as PyTorch's autocast op lists
do. Outside a region, or with `enabled=False`, nothing is cast. Regions nest; the state is per thread.

Example:
    >>> import strata
    >>> a = strata.ones(2, 2, device="cuda")
    >>> with strata.autocast("cuda", dtype=strata.bfloat16):
    ...     c = a @ a
    >>> c.dtype, (a @ a).dtype
    (strata.bfloat16, strata.float32)
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from strata.framework import dtypes as dt

F = TypeVar("F", bound=Callable[..., Any])

_DEFAULT_DTYPE = {"cuda": dt.bfloat16, "cpu": dt.bfloat16}
_ALLOWED = {"cuda": (dt.float16, dt.bfloat16), "cpu": (dt.float16, dt.bfloat16)}


class _State(threading.local):
    def __init__(self) -> None:
        self.dtype: dict[str, dt.dtype | None] = {"cuda": None, "cpu": None}


_state = _State()


class autocast:  # noqa: N801 - PyTorch's name
    """Run the region's eligible ops in `dtype` on `device_type` ("cuda" or "cpu"); a context manager
    and a decorator.

    Raises:
        RuntimeError: an unknown device type, or a dtype autocast does not support there.
    """

    def __init__(self, device_type: str, dtype: dt.dtype | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if device_type not in _DEFAULT_DTYPE:
            raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
        self.device_type = device_type
        self.fast_dtype = dtype if dtype is not None else _DEFAULT_DTYPE[device_type]
        if enabled and self.fast_dtype not in _ALLOWED[device_type]:
            raise RuntimeError(f"In {device_type} autocast, but the target dtype is not supported. "
                               f"Supported dtypes: {', '.join(str(d) for d in _ALLOWED[device_type])}")
        self.enabled = enabled
        self._prev: list[dt.dtype | None] = []

    def __enter__(self) -> autocast:
        self._prev.append(_state.dtype[self.device_type])
        _state.dtype[self.device_type] = self.fast_dtype if self.enabled else None
        return self

    def __exit__(self, *exc: object) -> None:
        _state.dtype[self.device_type] = self._prev.pop()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return wrapped  # type: ignore[return-value]


def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether an autocast region is active for `device_type` on this thread."""
    return _state.dtype.get(device_type) is not None


def get_autocast_dtype(device_type: str = "cuda") -> dt.dtype:
    """The dtype autocast lowers to on `device_type` (the default when no region is active)."""
    return _state.dtype.get(device_type) or _DEFAULT_DTYPE[device_type]


def _cast_all(target: Callable[[Any], dt.dtype | None], tensors: tuple[Any, ...]) -> tuple[Any, ...]:
    out = []
    for t in tensors:
        to = target(t) if t is not None and hasattr(t, "dtype") and t.dtype.is_floating_point else None
        out.append(t.to(to) if to is not None and to is not t.dtype else t)
    return tuple(out)


def lower_precision(*tensors: Any) -> tuple[Any, ...]:
    """The arguments of a lower-precision op (matmul, linear, conv, attention): floating tensors cast
    to the autocast dtype of their device when a region is active there; everything else unchanged."""
    active = _state.dtype
    if active["cuda"] is None and active["cpu"] is None:  # (no region anywhere: every matmul asks)
        return tensors
    return _cast_all(lambda t: active.get(t.device.type), tensors)


def full_precision(*tensors: Any) -> tuple[Any, ...]:
    """The arguments of a float32 op (softmax, norms, losses): floating tensors of lower precision cast
    to float32 when an autocast region is active on their device."""
    if _state.dtype["cuda"] is None and _state.dtype["cpu"] is None:
        return tensors

    def target(t: Any) -> dt.dtype | None:
        return dt.float32 if _state.dtype.get(t.device.type) is not None and t.dtype.itemsize < 4 else None
    return _cast_all(target, tensors)
