"""The native executor of the virtual GPU (L0): kernels' lowered basic blocks compiled to x86 code
through llvmlite, run beside the reference NumPy executor (see docs/executor.md)."""

from __future__ import annotations

import functools


@functools.cache
def available() -> bool:
    """Whether llvmlite imports (the native executor needs it)."""
    try:
        import llvmlite.binding  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return True


__all__ = ["available"]
