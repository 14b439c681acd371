"""Device discovery: which virtual GPUs are present, as the kernel driver enumerates them.

`STRATA_DEVICES` (default: one `STRATA_GPU`, an H200) says what is plugged in. Each device gets the
identity a user-mode runtime reads from the kernel driver: a PCI bus id, PCI vendor and device ids,
the model, its compute capability (or gfx target) and the device node it would open
(`/dev/nvidiaN` on NVIDIA; `/dev/kfd` plus a render node on AMD).

Example:
    >>> nodes = list_devices({"STRATA_DEVICES": "h200,mi300x"})
    >>> [(n.index, n.model, n.pci_bus_id, hex(n.vendor_id)) for n in nodes]
    [(0, 'h200', '0000:18:00.0', '0x10de'), (1, 'mi300x', '0000:19:00.0', '0x1002')]
    >>> nodes[1].node_path
    '/dev/kfd + /dev/dri/renderD129'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from strata import config
from strata.hw.catalog import GPUSpec, get_spec


@dataclass(frozen=True)
class DeviceNode:
    """One GPU as the driver enumerates it."""

    index: int
    model: str
    product: str
    pci_bus_id: str
    vendor_id: int
    device_id: int
    compute_capability: tuple[int, int]
    arch: str
    node_path: str

    @property
    def spec(self) -> GPUSpec:
        return get_spec(self.model)


def device_node(index: int, model: str) -> DeviceNode:
    """The identity of virtual device `index` of `model` (bus numbers start at 0x18, one per device)."""
    spec = get_spec(model)
    path = f"/dev/nvidia{index}" if spec.vendor == "nvidia" else f"/dev/kfd + /dev/dri/renderD{128 + index}"
    return DeviceNode(index, spec.name, spec.product, f"0000:{0x18 + index:02x}:00.0", spec.vendor_id,
                      spec.device_id, spec.compute_capability, spec.arch, path)


def list_devices(environ: Mapping[str, str] | None = None) -> list[DeviceNode]:
    """The virtual GPUs present, by index."""
    return [device_node(i, m) for i, m in enumerate(config.settings(environ).devices)]
