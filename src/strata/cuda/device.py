"""Devices as the CUDA runtime presents them: `Device(model="h200")`, the current device."""

from __future__ import annotations

from strata import config
from strata.driver import DeviceFile, open_device
from strata.hw.catalog import GPUSpec, get_spec


class Device:
    """A virtual GPU. The default device is a virtual H200; `STRATA_GPU=h100|h200|a100` changes it.

    `Device(model="h100")` opens (or returns) the virtual device of that model; each model gets its
    own device, so memory on one is not visible on another.

    Example:
        >>> d = Device(model="h100")
        >>> d.name, d.multiProcessorCount
        ('NVIDIA H100 80GB HBM3 (SXM5)', 132)
    """

    _by_model: dict[str, Device] = {}

    def __new__(cls, model: str | None = None) -> Device:
        key = get_spec(model or config.settings().gpu).name
        dev = cls._by_model.get(key)
        if dev is None:
            dev = super().__new__(cls)
            dev._init(key, len(cls._by_model))
            cls._by_model[key] = dev
        return dev

    def _init(self, key: str, index: int) -> None:
        self.index = index
        self.file: DeviceFile = open_device(index, key)
        self.spec: GPUSpec = self.file.gpu.spec

    @property
    def name(self) -> str:
        return self.spec.product

    @property
    def multiProcessorCount(self) -> int:  # noqa: N802 - cudaDeviceProp's name
        return self.spec.sm_count

    @property
    def totalGlobalMem(self) -> int:  # noqa: N802 - cudaDeviceProp's name
        return self.spec.hbm_bytes

    def __repr__(self) -> str:
        return f"<strata.cuda.Device {self.index}: virtual {self.spec.product}>"


_explicit: Device | None = None  # set by set_device; otherwise STRATA_GPU decides


def current_device() -> Device:
    """The device calls go to: set by `set_device`, else the default model's device."""
    return _explicit if _explicit is not None else Device(config.settings().gpu)


def set_device(device: Device | str) -> Device:
    """Make `device` (a Device or a model name) current for later allocations and launches."""
    global _explicit
    _explicit = device if isinstance(device, Device) else Device(device)
    return _explicit
