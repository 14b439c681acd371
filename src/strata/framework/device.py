"""`strata.device`: where a tensor lives, "cpu" (host memory, NumPy) or "cuda:N" (virtual GPU N),
parsed and compared as torch.device is.

Example:
    >>> device("cuda:1"), str(device("cuda", 0)), device("cpu") == device("cpu"), device("cuda") == device("cuda:0")
    (device(type='cuda', index=1), 'cuda:0', True, False)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from strata.cuda import Device, current_device, set_device

_PATTERN = re.compile(r"^(cpu|cuda)(?::(\d+))?$")


class device:  # noqa: N801 - PyTorch's name
    """A device: `device("cuda:0")`, `device("cuda", 1)`, `device("cpu")`, `device(0)` (= cuda:0)."""

    __slots__ = ("type", "index")
    type: str
    index: int | None

    def __init__(self, type: Any, index: int | None = None) -> None:  # noqa: A002 - PyTorch's argument name
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object cannot be combined with an index")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            if type < 0:
                raise RuntimeError(f"Device index must not be negative, got {type}")
            self.type, self.index = "cuda", type
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments: got {type!r}")
        m = _PATTERN.match(type)
        if m is None:
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {type}")
        kind, idx = m.group(1), m.group(2)
        if idx is not None and index is not None:
            raise RuntimeError(f"type (string) must not include an index because index was passed explicitly: {type}")
        i = int(idx) if idx is not None else index
        if i is not None and i < 0:
            raise RuntimeError(f"Device index must not be negative, got {i}")
        self.type, self.index = kind, i

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")


# one device object per CUDA index for the tensors placed there, so the ops' fast paths can compare devices
# with `is` (equal devices made apart still compare equal with ==)
_CUDA: dict[int, device] = {}


def canonical(d: Any) -> device:
    """The device a tensor is placed on: "cuda" means the current CUDA device (index filled in)."""
    dev = d if isinstance(d, device) else device(d)
    if dev.type == "cpu":
        return CPU
    index = dev.index if dev.index is not None else current_device().index
    got = _CUDA.get(index)
    if got is None:
        got = _CUDA[index] = device("cuda", index)
    return got


_DEVICES: dict[int, Device] = {}


def cuda_device(index: int) -> Device:
    """The strata.cuda Device of CUDA index `index` (one object per index for the process's life, kept
    here: looking it up through Device() takes a lock on every op)."""
    d = _DEVICES.get(index)
    if d is None:
        d = _DEVICES[index] = Device(index)
    return d


_STAY = contextlib.nullcontext()


def on(dev: device) -> contextlib.AbstractContextManager[None]:
    """Make CUDA device `dev.index` current for the calls inside (kernel launches, mallocs)."""
    # (every op on "cuda" enters this, and its device is nearly always the current one already: then a
    # shared do-nothing context, cheaper than a generator's)
    if dev.type != "cuda" or dev.index is None or dev.index == current_device().index:
        return _STAY
    return _switch(dev.index)


@contextlib.contextmanager
def _switch(index: int) -> Iterator[None]:
    prev = current_device()
    set_device(index)
    try:
        yield
    finally:
        set_device(prev)
