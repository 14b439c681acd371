"""`torch.nn.parallel` for strata: `DataParallel` as a pass-through on one device (the wrapped module
runs as is on the device its parameters live on; PyTorch's splitting of the batch across GPUs is not
done), so programs that wrap their model keep working and `model.module` reaches the original.
`DistributedDataParallel` is strata.distributed's (strata/framework/distributed/ddp.py).

Example:
    >>> import strata.nn as nn
    >>> from strata.framework.nn.parallel import DataParallel
    >>> net = DataParallel(nn.Linear(2, 3))
    >>> type(net.module).__name__, sorted(net.state_dict())
    ('Linear', ['module.bias', 'module.weight'])
"""

from __future__ import annotations

from typing import Any

from strata.framework.nn.module import Module


class DataParallel(Module):
    """Wraps `module`; `forward` calls it unchanged (one device: see the module docstring).

    Args:
        module: the module to wrap (reached again as `.module`; state-dict keys gain "module.").
        device_ids, output_device, dim: accepted and recorded as PyTorch records them.
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids) if device_ids is not None else [0]
        self.output_device = output_device if output_device is not None else self.device_ids[0]
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def __getattr__(name: str) -> Any:
    """`DistributedDataParallel` is strata.distributed's (imported on first use: it needs the process group)."""
    if name == "DistributedDataParallel":
        from strata.framework.distributed.ddp import DistributedDataParallel

        return DistributedDataParallel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def data_parallel(module: Module, inputs: Any, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                  module_kwargs: Any = None) -> Any:
    """The functional DataParallel: `module(inputs)` on the one device."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))


__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]  # noqa: F822 - the module __getattr__
