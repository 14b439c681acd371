"""`strata smi`: the devices, their telemetry and the contexts open on them, like nvidia-smi / rocm-smi.

Source of truth for what `strata smi` shows and where each value comes from: the device identity from
the driver's enumeration (`DeviceFile.node`), clocks, power, temperature, utilization and memory from
`DeviceFile.telemetry_sample()`, and the contexts from `DeviceFile.contexts`. Nothing is computed here
but the formatting; docs/telemetry.md says what each reading means.

Example:
    >>> rows = smi_json([0])
    >>> rows[0]["index"], rows[0]["pci_bus_id"], rows[0]["memory_total"] == open_device(0).gpu.spec.hbm_bytes
    (0, '0000:18:00.0', True)
    >>> print(smi_table([0]))  # doctest: +ELLIPSIS
    +-----...-----+
    | strata-smi ...Driver: strata.driver (L1: the kernel driver) ...Devices: 1 |
    +-----...-----+
    | GPU  Name                                | Bus-Id                 | SM clock     Mem clock  |
    | Temp   Pwr:Usage/Cap                     |           Memory-Usage | GPU-Util     Copy-Util  |
    |=====...=====|
    |   0  NVIDIA H200 (SXM)                   | 0000:18:00.0           | ...MHz    3125MHz    |
    | ...C    ...W /  700W                     | ...MiB / 144384MiB | ...% ...%... |
    +-----...-----+
    <BLANKLINE>
    +-----...-----+
    | Contexts:... |
    |  GPU   Context  Description... |
    |=====...=====|
    ...
    +-----...-----+
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import strata
from strata import driver
from strata.driver import DeviceFile, list_devices, open_device, opened_devices

MIB = 1 << 20
# Inner widths of the three device columns (identity | memory | clocks and utilization).
WIDTHS = (42, 24, 25)
TABLE_WIDTH = sum(WIDTHS) + len(WIDTHS) - 1  # inner width of a full-width row


def smi_json(devices: Iterable[int | DeviceFile] | None = None) -> list[dict[str, Any]]:
    """One reading per device, as `nvidia-smi --query-gpu` would give it: identity, telemetry, contexts.

    Each dict holds the device's identity (`index`, `model`, `product`, `pci_bus_id`, `vendor_id`,
    `device_id`, `arch`, `compute_capability`, `node_path`), every `TelemetrySample` field under its
    own name (bytes, MHz, W, °C, percent, modeled seconds) and `contexts`, a list of
    `{"id": ..., "description": ...}` from `DeviceFile.contexts`.

    Args:
        devices: device indices or opened `DeviceFile`s; None means every present device
            (`list_devices()`) plus any other device this process opened. Devices not open yet are
            opened, as nvidia-smi does.
    Returns:
        A list of JSON-serialisable dicts, in the order of `devices` (by index when None).
    Raises:
        CudaError: cudaErrorInvalidDevice for an index that names no device.

    Example:
        >>> [(r["index"], r["model"], r["sm_clock_mhz"] > 0) for r in smi_json([0])]
        [(0, 'h200', True)]
    """
    return [_reading(dev) for dev in _device_files(devices)]


def smi_table(devices: Iterable[int | DeviceFile] | None = None) -> str:
    """The nvidia-smi-style table: a header, one two-line block per device, then the contexts open.

    Memory is shown in whole MiB rounded down (bytes // 2**20), power in whole watts, temperature in
    whole °C and utilization in whole percent ("<1%" for a nonzero reading below one percent).

    Args:
        devices: as for `smi_json`.
    Returns:
        The table as one string (no trailing newline).
    Raises:
        CudaError: cudaErrorInvalidDevice for an index that names no device.

    Example:
        >>> "| GPU  Name" in smi_table([0])
        True
    """
    rows = smi_json(devices)
    border = _border("-" * w for w in WIDTHS)
    lines = [
        _border(["-" * TABLE_WIDTH]),
        _row([_spread(f"strata-smi {strata.__version__}", f"Driver: {_driver_name()}",
                      f"Devices: {len(rows)}", width=TABLE_WIDTH - 2)], [TABLE_WIDTH]),
        border,
        _row(["GPU  Name", "Bus-Id", "SM clock     Mem clock"], WIDTHS),
        _row(["Temp   Pwr:Usage/Cap", "Memory-Usage".rjust(WIDTHS[1] - 2), "GPU-Util     Copy-Util"], WIDTHS),
        "|" + "+".join("=" * w for w in WIDTHS) + "|",
    ]
    for r in rows:
        lines.append(_row([f"{r['index']:>3}  {r['product']}", r["pci_bus_id"],
                           f"{r['sm_clock_mhz']:>6.0f}MHz  {r['memory_clock_mhz']:>6.0f}MHz"], WIDTHS))
        power = f"{r['power_w']:>4.0f}W / {r['power_limit_w']:>4.0f}W"
        memory = f"{r['memory_used'] // MIB}MiB / {r['memory_total'] // MIB}MiB"
        util = f"{_percent(r['utilization_gpu']):>6}       {_percent(r['utilization_memory_copy']):>6}"
        lines.append(_row([f"{r['temperature_c']:>3.0f}C   {power}", memory.rjust(WIDTHS[1] - 2), util], WIDTHS))
        lines.append(border)
    lines += ["", _border(["-" * TABLE_WIDTH]), _row(["Contexts:"], [TABLE_WIDTH]),
              _row([" GPU   Context  Description"], [TABLE_WIDTH]), "|" + "=" * TABLE_WIDTH + "|"]
    contexts = [(r["index"], c) for r in rows for c in r["contexts"]]
    for index, c in contexts:
        lines.append(_row([f"{index:>4}  {c['id']:>8}  {c['description']}"], [TABLE_WIDTH]))
    if not contexts:
        lines.append(_row(["No contexts open"], [TABLE_WIDTH]))
    lines.append(_border(["-" * TABLE_WIDTH]))
    return "\n".join(lines)


def smi_topo(devices: Iterable[int | DeviceFile] | None = None) -> str:
    """The GPU connection matrix as `nvidia-smi topo -m` prints it (`rocm-smi --showtopo`'s XGMI on AMD):
    one row and column per device, the path label in each cell (`hw/topology.py`), then the legend.

    Example:
        >>> print(smi_topo([0]).splitlines()[1].split())
        ['GPU0', 'X']
    """
    from strata.hw.topology import system_for, topo_matrix

    files = _device_files(devices)
    specs = [f.gpu.spec for f in files]
    matrix = topo_matrix(specs)
    names = [f"GPU{f.index}" for f in files]
    width = max([7, *(len(n) + 2 for n in names)])
    lines = [(" " * width + "".join(n.ljust(width) for n in names)).rstrip()]
    for name, row in zip(names, matrix, strict=True):
        lines.append((name.ljust(width) + "".join(cell.ljust(width) for cell in row)).rstrip())
    system = system_for(specs)
    lines += ["", f"System: {system.product} ({system.gpus} GPUs, {system.link_name})" if system is not None
              else "System: no single modeled platform holds these GPUs",
              "", "Legend:", "",
              "  X    = Self",
              "  SYS  = Connection traversing PCIe and the host (no peer-to-peer: different vendors)",
              "  NV#  = Connection traversing a bonded set of # NVLinks (through NVSwitch)",
              "  XGMI = Connection traversing one AMD Infinity Fabric (xGMI) link"]
    return "\n".join(lines)


# -- data


def _device_files(devices: Iterable[int | DeviceFile] | None) -> list[DeviceFile]:
    if devices is not None:
        return [d if isinstance(d, DeviceFile) else open_device(int(d)) for d in devices]
    # Devices this process added on demand (e.g. Device(model="h100") past the present ones) count too.
    indices = {n.index for n in list_devices()} | {d.index for d in opened_devices()}
    return [open_device(i) for i in sorted(indices)]


def _reading(dev: DeviceFile) -> dict[str, Any]:
    node = dev.node
    sample = dev.telemetry_sample()
    contexts = dict(dev.contexts)  # a snapshot: runtime threads may add or clear contexts meanwhile
    return {
        "index": dev.index,
        "model": node.model,
        "product": node.product,
        "pci_bus_id": dev.pci_bus_id,
        "vendor_id": node.vendor_id,
        "device_id": node.device_id,
        "arch": node.arch,
        "compute_capability": list(node.compute_capability),
        "node_path": node.node_path,
        **dataclasses.asdict(sample),
        "contexts": [{"id": cid, "description": desc} for cid, desc in sorted(contexts.items())],
    }


def _driver_name() -> str:
    """The driver package and the role its docstring gives it, e.g. 'strata.driver (L1: the kernel driver)'."""
    summary = (driver.__doc__ or "").strip().split(". ", 1)[0]
    return f"{driver.__name__} ({summary})" if summary else driver.__name__


# -- formatting


def _percent(value: float) -> str:
    return "<1%" if 0 < value < 1 else f"{value:.0f}%"


def _spread(*parts: str, width: int) -> str:
    """`parts` spread over `width` characters: first left, last right, the rest evenly between."""
    gaps = len(parts) - 1
    spare = max(width - sum(len(p) for p in parts), gaps * 2)
    out = parts[0]
    for i, p in enumerate(parts[1:]):
        out += " " * (spare // gaps + (1 if i < spare % gaps else 0)) + p
    return out


def _row(cells: Iterable[str], widths: Iterable[int]) -> str:
    """`| cell | cell |` with each cell padded (or cut) to its column's inner width."""
    out = []
    for cell, w in zip(cells, widths):
        text = cell if len(cell) <= w - 2 else cell[: w - 3] + "…"
        out.append(" " + text.ljust(w - 2) + " ")
    return "|" + "|".join(out) + "|"


def _border(fills: Iterable[str]) -> str:
    return "+" + "+".join(fills) + "+"
