"""Devices as the CUDA runtime presents them: `Device(i)`, `Device(model="h100")`, the current device.

Each Device wraps an opened virtual GPU (L1) and its primary context (L2).
"""

from __future__ import annotations

from strata import config, trace
from strata.driver import DeviceFile, open_device, opened_devices
from strata.hw.catalog import GPUSpec, get_spec
from strata.runtime import Context, primary_context


class Device:
    """A virtual GPU. Device 0 is a virtual H200 unless `STRATA_DEVICES`/`STRATA_GPU` say otherwise.

    `Device(i)` is present device i; `Device(model="h100")` is the first opened or present device of
    that model, or a new virtual device of that model if none is present.

    Example:
        >>> d = Device(model="h100")
        >>> d.name, d.multiProcessorCount, (d.major, d.minor)
        ('NVIDIA H100 80GB HBM3 (SXM5)', 132, (9, 0))
    """

    _by_index: dict[int, Device] = {}

    def __new__(cls, index: int | str | None = None, *, model: str | None = None) -> Device:
        if isinstance(index, str):
            index, model = None, index
        if index is None:
            model = get_spec(model or config.settings().devices[0]).name
            index = _index_for_model(model)
        dev = cls._by_index.get(index)
        if dev is None:
            dev = super().__new__(cls)
            dev._init(open_device(index, model))
            cls._by_index[index] = dev
        return dev

    def _init(self, file: DeviceFile) -> None:
        self.index = file.index
        self.file = file
        self.spec: GPUSpec = file.gpu.spec
        self.context: Context = primary_context(file)  # streams, sticky errors; survives reset()

    # -- cudaDeviceProp names
    @property
    def name(self) -> str:
        return self.spec.product

    @property
    def multiProcessorCount(self) -> int:  # noqa: N802 - cudaDeviceProp's name
        return self.spec.sm_count

    @property
    def totalGlobalMem(self) -> int:  # noqa: N802 - cudaDeviceProp's name
        return self.spec.hbm_bytes

    @property
    def major(self) -> int:
        return self.spec.compute_capability[0]

    @property
    def minor(self) -> int:
        return self.spec.compute_capability[1]

    @property
    def pciBusId(self) -> str:  # noqa: N802 - cudaDeviceProp's name (as cudaDeviceGetPCIBusId prints it)
        return self.file.pci_bus_id

    # -- whole-device operations
    def synchronize(self) -> None:
        """cudaDeviceSynchronize: wait for all work; raises a sticky fault (DeviceFault, ...)."""
        with trace.span("L3", "cudaDeviceSynchronize", device=self.index):
            self.context.synchronize()

    def reset(self) -> None:
        """cudaDeviceReset: drop queued work, free all memory and modules, clear a sticky error.
        DeviceArrays and loaded modules of this device become invalid; other devices are untouched."""
        with trace.span("L3", "cudaDeviceReset", device=self.index):
            self.context.reset()

    @property
    def error(self) -> BaseException | None:
        """The sticky error of this device's context, if a kernel faulted (cudaPeekAtLastError)."""
        return self.context.error

    def __repr__(self) -> str:
        return f"<strata.cuda.Device {self.index}: virtual {self.spec.product}>"


def _index_for_model(model: str) -> int:
    for f in opened_devices():
        if f.gpu.spec.name == model:
            return f.index
    present = config.settings().devices
    opened = {f.index for f in opened_devices()}
    for i, m in enumerate(present):
        if m == model and i not in opened:
            return i
    return max([len(present) - 1, *opened]) + 1


_explicit: Device | None = None  # set by set_device; otherwise device 0 of STRATA_DEVICES/STRATA_GPU
_default: dict[str, Device] = {}  # default model -> its Device (the lookup runs on every launch)


def current_device() -> Device:
    """The device calls go to: set by `set_device`, else the default device."""
    if _explicit is not None:
        return _explicit
    model = config.settings().devices[0]
    dev = _default.get(model)
    if dev is None:
        dev = _default[model] = Device()
    return dev


def set_device(device: Device | int | str) -> Device:
    """Make `device` (a Device, an index or a model name) current for later allocations and launches."""
    global _explicit
    _explicit = device if isinstance(device, Device) else Device(device)
    return _explicit


def synchronize() -> None:
    """cudaDeviceSynchronize on the current device."""
    current_device().synchronize()
