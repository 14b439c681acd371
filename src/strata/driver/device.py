"""Device discovery and opening: the virtual GPUs present, like device nodes a runtime opens."""

from __future__ import annotations

import numpy as np

from strata import trace
from strata.driver.vram import VramManager
from strata.errors import CudaError
from strata.hw.catalog import get_spec
from strata.hw.engine import LaunchConfig, LaunchResult
from strata.hw.gpu import VirtualGPU
from strata.hw.jit import Program
from strata.hw.ptx.ir import Module


class DeviceFile:
    """An opened virtual GPU: its hardware, VRAM manager, and the calls a runtime makes.

    Example:
        >>> dev = open_device(0, "h100")
        >>> dev.gpu.spec.name
        'h100'
    """

    def __init__(self, index: int, model: str) -> None:
        self.index = index
        self.gpu = VirtualGPU(model)
        self.vram = VramManager(self.gpu.memory)
        self.pci_bus_id = f"0000:{0x18 + index:02x}:00.0"

    # -- memory
    def alloc(self, size: int, tag: str = "") -> int:
        with trace.span("L1", "vram_alloc", size=size):
            return self.vram.alloc(size, tag)

    def free(self, address: int) -> None:
        with trace.span("L1", "vram_free", address=hex(address)):
            self.vram.free(address)

    def _check_range(self, address: int, size: int, op: str) -> None:
        a = self.gpu.memory.allocation_at(address)
        if size and (a is None or address + size > a.end):
            raise CudaError("cudaErrorInvalidValue",
                            f"[{op}] device range {address:#x}+{size} is not inside one allocation")

    def copy_to_device(self, address: int, data: np.ndarray) -> None:
        """DMA host -> device (the copy engines arrive with the runtime issue)."""
        self._check_range(address, data.nbytes, "memcpy HtoD")
        with trace.span("L1", "dma_htod", bytes=data.nbytes):
            self.gpu.memory.write(address, data)

    def copy_from_device(self, address: int, out: np.ndarray) -> None:
        self._check_range(address, out.nbytes, "memcpy DtoH")
        with trace.span("L1", "dma_dtoh", bytes=out.nbytes):
            out.reshape(-1).view(np.uint8)[:] = self.gpu.memory.view(address, out.nbytes)

    def memset(self, address: int, value: int, size: int) -> None:
        self._check_range(address, size, "memset")
        self.gpu.memory.fill(address, size, value)

    # -- programs
    def load_program(self, module: Module, addresses: dict[str, int]) -> Program:
        return self.gpu.load(module, addresses)

    def submit(self, program: Program, kernel: str, config: LaunchConfig) -> LaunchResult:
        """Ring the doorbell: in this thin driver the launch runs to completion here."""
        with trace.span("L1", "doorbell", kernel=kernel):
            return self.gpu.launch(program, kernel, config)


_open: dict[int, DeviceFile] = {}


def open_device(index: int = 0, model: str | None = None) -> DeviceFile:
    """Open virtual GPU `index` (model from STRATA_GPU unless given; reopening returns the same)."""
    from strata import config

    dev = _open.get(index)
    if dev is None or (model is not None and get_spec(model).name != dev.gpu.spec.name):
        if index < 0:
            raise CudaError("cudaErrorInvalidDevice", f"device index must be >= 0, got {index}")
        dev = DeviceFile(index, model or config.settings().gpu)
        _open[index] = dev
    return dev
