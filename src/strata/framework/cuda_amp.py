"""`torch.cuda.amp` under strata's torch alias: the older spellings `torch.cuda.amp.autocast(...)`
(autocast on "cuda", float16 by default, as PyTorch's) and `torch.cuda.amp.GradScaler(...)`.

Example:
    >>> from strata.framework import cuda_amp
    >>> with cuda_amp.autocast() as region:
    ...     region.device_type, str(region.fast_dtype)
    ('cuda', 'strata.float16')
"""

from __future__ import annotations

from typing import Any

from strata.framework import amp, grad_scaler
from strata.framework import dtypes as dt
from strata.framework.amp_api import custom_bwd, custom_fwd


class autocast(amp.autocast):  # noqa: N801 - PyTorch's name
    """`torch.autocast("cuda", ...)` with torch.cuda.amp's signature (float16 by default)."""

    def __init__(self, enabled: bool = True, dtype: dt.dtype = dt.float16, cache_enabled: bool = True) -> None:
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(grad_scaler.GradScaler):
    """`torch.amp.GradScaler("cuda", ...)` with torch.cuda.amp's signature."""

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True, **kwargs: Any) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
