"""`strata smi`: the table and JSON show what the driver and its telemetry report, after real work.

Oracles: `DeviceFile.vram.stats()`, `DeviceFile.telemetry_sample()`, `DeviceFile.contexts` and the
driver's enumeration (`list_devices`); nothing in these tests restates a number the code computes.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import re
from collections.abc import Iterator

import numpy as np
import pytest

import strata
import strata.cuda as cuda
from strata.cli import main
from strata.driver import DeviceFile, list_devices, open_device, opened_devices
from strata.driver.telemetry import TelemetrySample
from strata.smi import smi_json, smi_table

SCALE = r"""
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""
SAMPLE_FIELDS = [f.name for f in dataclasses.fields(TelemetrySample)]
MIB = 1 << 20
# The second line of a device block: temperature, power, memory used / total, utilizations.
MEMORY = re.compile(r"\|\s+(\d+)MiB / (\d+)MiB \|")


@pytest.fixture(scope="module")
def busy_device() -> Iterator[cuda.Device]:
    """The current device after real work: a kernel compiled and launched a few times, memory held."""
    dev = cuda.current_device()
    held = cuda.empty((3 * MIB + 12345) // 4, np.float32)  # more than 3 MiB, not a whole number of MiB
    x = cuda.to_device(np.arange(4096, dtype=np.float32))
    scale = cuda.compile(SCALE).get_function("scale")
    for _ in range(3):
        scale(32, 128, (x, np.float32(2), np.int32(4096)))
    np.testing.assert_array_equal(x.get(), np.arange(4096, dtype=np.float32) * 8)
    dev.synchronize()
    yield dev
    del held, x


def _block(table: str, index: int) -> list[str]:
    """The two lines of device `index`'s block in the table."""
    lines = table.splitlines()
    for i, line in enumerate(lines):
        if re.match(rf"\|\s+{index}  \S", line):
            return lines[i:i + 2]
    raise AssertionError(f"no block for device {index} in\n{table}")


def _settled(dev: DeviceFile) -> int:
    """Collect garbage (DeviceArray finalizers free memory) and wait for the device; return bytes used."""
    gc.collect()
    assert dev.wait_idle()
    return dev.vram.stats().used


def test_table_shows_memory_used_and_context_after_work(busy_device) -> None:
    file = busy_device.file
    used = _settled(file)
    table = smi_table()
    assert _settled(file) == used  # nothing changed while the table was made
    assert used >= 3 * MIB
    first, second = _block(table, file.index)
    assert file.node.product in first and file.pci_bus_id in first
    m = MEMORY.search(second)
    assert m is not None, second
    assert (int(m.group(1)), int(m.group(2))) == (used // MIB, file.vram.stats().total // MIB)
    assert int(m.group(1)) > 0

    sample = file.telemetry_sample()
    assert sample.utilization_gpu > 0  # the launches are in the last window
    assert f"{sample.sm_clock_mhz:.0f}MHz" in first and f"{sample.memory_clock_mhz:.0f}MHz" in first
    assert re.search(rf"\b{sample.power_w:.0f}W /\s+{sample.power_limit_w:.0f}W", second), second
    assert re.match(rf"\|\s+{sample.temperature_c:.0f}C ", second), second

    assert file.contexts, "running work opens the primary context"
    lines = table.splitlines()
    for cid, desc in file.contexts.items():
        assert any(re.match(rf"\|\s+{file.index}\s+{cid}\s+{re.escape(desc)}\s+\|$", ln) for ln in lines), table
    assert f"pid {os.getpid()}" in table


def test_header_names_version_driver_and_device_count(busy_device) -> None:
    table = smi_table()
    header = table.splitlines()[1]
    count = len({n.index for n in list_devices()} | {d.index for d in opened_devices()})
    assert f"strata-smi {strata.__version__}" in header
    assert "strata.driver" in header
    assert f"Devices: {count}" in header
    assert len({len(line) for line in table.splitlines() if line}) == 1  # a fixed-width table


def test_json_matches_telemetry_sample(busy_device, capsys) -> None:
    file = busy_device.file
    _settled(file)
    assert main(["smi", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["index"] for r in rows] == sorted(r["index"] for r in rows)
    row = next(r for r in rows if r["index"] == file.index)
    sample = dataclasses.asdict(file.telemetry_sample())
    assert {k: row[k] for k in SAMPLE_FIELDS} == sample
    assert row["memory_used"] == file.vram.stats().used > 0
    assert row["pci_bus_id"] == file.pci_bus_id and row["model"] == file.node.model
    assert row["contexts"] == [{"id": cid, "description": d} for cid, d in sorted(file.contexts.items())]


def test_cli_prints_the_table(busy_device, capsys) -> None:
    assert main(["smi"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("+") and f"strata-smi {strata.__version__}" in out
    assert busy_device.file.pci_bus_id in out and "Contexts:" in out


def test_multiple_devices_are_opened_and_shown(monkeypatch) -> None:
    # Devices are cached per index for the life of the process, so put the two new models at indices
    # no test has opened yet; the indices before them are already open and keep what they are.
    start = max((d.index for d in opened_devices()), default=-1) + 1
    models = ["h200"] * start + ["h200", "mi300x"]
    monkeypatch.setenv("STRATA_DEVICES", ",".join(models))
    present = list_devices()
    assert [n.model for n in present[start:]] == ["h200", "mi300x"]

    rows = smi_json()
    by_index = {r["index"]: r for r in rows}
    assert set(by_index) >= {n.index for n in present}
    for node in present[start:]:
        row = by_index[node.index]
        assert (row["model"], row["product"], row["pci_bus_id"], row["node_path"]) == \
            (node.model, node.product, node.pci_bus_id, node.node_path)
        dev = open_device(node.index)  # smi opened it
        assert dev in opened_devices()
        assert {k: row[k] for k in SAMPLE_FIELDS} == dataclasses.asdict(dev.telemetry_sample())
        assert row["memory_used"] == 0 and row["utilization_gpu"] == 0 and row["contexts"] == []

    table = smi_table()
    assert f"Devices: {len(rows)}" in table.splitlines()[1]
    for node in present[start:]:
        first, second = _block(table, node.index)
        assert node.product in first and node.pci_bus_id in first
        assert MEMORY.search(second).group(1) == "0"
    # the NVIDIA and the AMD device report different memory clocks, each from its own telemetry
    clocks = {by_index[n.index]["memory_clock_mhz"] for n in present[start:]}
    assert len(clocks) == 2


def test_selected_devices_and_invalid_index() -> None:
    dev = open_device(0)
    assert [r["index"] for r in smi_json([dev, 0])] == [0, 0]
    table = smi_table([0])
    assert "Devices: 1" in table
    with pytest.raises(cuda.CudaError, match="cudaErrorInvalidDevice"):
        smi_json([10_000])


def test_no_contexts_line_for_a_device_without_contexts(monkeypatch) -> None:
    start = max((d.index for d in opened_devices()), default=-1) + 1
    monkeypatch.setenv("STRATA_DEVICES", ",".join(["a100"] * (start + 1)))
    table = smi_table([start])
    assert "No contexts open" in table
    assert open_device(start).contexts == {}
