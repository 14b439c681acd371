"""`strata.version` (PyTorch's `torch.version`): which GPU platform the framework was "built" for, read
from the current device as PyTorch's ROCm and CUDA builds report it: on an AMD device `hip` is set and
`cuda` is None (PyTorch on ROCm), on an NVIDIA device the reverse.

Example:
    >>> import strata
    >>> strata.version.cuda, strata.version.hip  # the default device is an H200
    ('12.8', None)
"""

from __future__ import annotations

from strata.cuda import current_device

__all__ = ["CUDA_VERSION", "HIP_VERSION", "attribute", "git_version"]  # and `cuda`, `hip` (module __getattr__)

CUDA_VERSION = "12.8"
HIP_VERSION = "6.4.0"  # the ROCm release whose APIs the HIP face and the libraries' ROCm names follow
git_version = "strata"


def attribute(name: str) -> str | None:
    """`cuda` or `hip` for the current device: the version string of its platform, None for the other."""
    amd = current_device().spec.vendor == "amd"
    if name == "cuda":
        return None if amd else CUDA_VERSION
    if name == "hip":
        return HIP_VERSION if amd else None
    raise AttributeError(f"module 'strata.version' has no attribute {name!r}")


def __getattr__(name: str) -> str | None:
    return attribute(name)
