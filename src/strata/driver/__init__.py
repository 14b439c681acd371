"""L1: the kernel driver. Opens the virtual GPUs, manages their VRAM, copies memory, submits work.

In this issue the driver is thin: it owns device discovery and the VRAM allocator, and passes
launches straight to the device. The issue 'Kernel driver and system runtime' adds queues,
copy engines, doorbells and interrupts behind the same calls.
"""

from strata.driver.device import DeviceFile, open_device
from strata.driver.vram import VramManager

__all__ = ["DeviceFile", "VramManager", "open_device"]
