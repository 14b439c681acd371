"""NumPy calls with floating-point warnings silenced, cheaply.

The cpu kernels compute as PyTorch's do, silently: an overflow gives inf, 0/0 NaN, an out-of-range cast
wraps, and none of them warns. `np.errstate(all="ignore")` says so, but entering and leaving it costs
about four times a ufunc call on a small array, which dominated the per-op time of small tensors.
`quiet(fn, *args)` sets the same error mode through the context variable NumPy's errstate itself sets
(a precomputed "ignore all" state), falling back to `np.errstate` where that variable is absent.

Example:
    >>> import numpy as np
    >>> quiet(np.divide, np.float32(1), np.float32(0))
    np.float32(inf)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

try:  # NumPy >= 2: errstate is a context variable holding the error-mode object
    from numpy._core import _ufunc_config
except ImportError:  # pragma: no cover - older NumPy
    _ufunc_config = None  # type: ignore[assignment]
_extobj_contextvar: Any = getattr(_ufunc_config, "_extobj_contextvar", None)
_make_extobj: Any = getattr(_ufunc_config, "_make_extobj", None)


if _extobj_contextvar is not None and _make_extobj is not None:
    _IGNORE_ALL = _make_extobj(all="ignore")
    _set, _reset = _extobj_contextvar.set, _extobj_contextvar.reset

    def quiet(fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) with NumPy's floating-point warnings off (as inside `np.errstate(all="ignore")`)."""
        token = _set(_IGNORE_ALL)
        try:
            return fn(*args)
        finally:
            _reset(token)
else:  # pragma: no cover
    def quiet(fn: Callable[..., Any], *args: Any) -> Any:
        """fn(*args) with NumPy's floating-point warnings off."""
        with np.errstate(all="ignore"):
            return fn(*args)
