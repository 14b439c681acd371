"""strata: a whole GPU software stack in Python, from a PyTorch-style framework down to a virtual
GPU that executes real PTX. See README.md and ARCHITECTURE.md.
"""

__version__ = "0.1.0"

# L5: the PyTorch-style surface (`strata.tensor`, `strata.float32`, `strata.device`, ...).
from strata.framework import *  # noqa: E402,F403
from strata.framework import __all__ as _framework_all  # noqa: E402
from strata.framework import version  # noqa: E402 - torch.version: cuda or hip by the current device

__all__ = [*_framework_all, "version"]
