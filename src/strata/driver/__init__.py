"""L1: the kernel driver. Discovers and opens the virtual GPUs, manages VRAM and pinned host memory,
creates hardware queues bound to the compute and copy engines, rings doorbells, delivers interrupts
and reports telemetry (the role of nvidia.ko, and of amdgpu + KFD).
"""

from strata.driver.device import DeviceFile, open_device, opened_devices
from strata.driver.discovery import DeviceNode, list_devices
from strata.driver.hostmem import HOST_MEMORY
from strata.driver.interrupts import EVENTS
from strata.driver.vram import PAGE_SIZE, VramManager, VramStats

__all__ = ["EVENTS", "HOST_MEMORY", "PAGE_SIZE", "DeviceFile", "DeviceNode", "VramManager", "VramStats",
           "list_devices", "open_device", "opened_devices"]
