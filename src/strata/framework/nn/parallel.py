"""`torch.nn.parallel` for strata: `DataParallel` as a pass-through on one device (the wrapped module
runs as is on the device its parameters live on; PyTorch's splitting of the batch across GPUs is not
done), so programs that wrap their model keep working and `model.module` reaches the original.
`DistributedDataParallel` needs a process group, which strata does not provide: constructing one raises
PyTorch's error for that case.

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


class DistributedDataParallel(Module):
    """Needs an initialised process group (torch.distributed), which strata does not have.

    Raises:
        RuntimeError: always, with PyTorch's message for a missing default process group.
    """

    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group. (strata provides no torch.distributed; use the module directly "
                           "or nn.DataParallel)")


def data_parallel(module: Module, inputs: Any, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                  module_kwargs: Any = None) -> Any:
    """The functional DataParallel: `module(inputs)` on the one device."""
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return module(*inputs, **(module_kwargs or {}))


__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
