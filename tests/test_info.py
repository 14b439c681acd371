"""`strata info`: this machine's stack layer by layer, and real GPU drivers detected from device nodes,
driver version files and management tools (faked under a temporary root)."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import numpy as np
import pytest

from strata import cli
from strata.cuda.compiler import nvrtc_version
from strata.info import detect_real_gpus


def test_info_on_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    for layer in ("L5 framework", "L4 math libraries", "L3 CUDA / HIP", "L2 runtime", "L1 device 0", "L0 virtual GPUs"):
        assert layer in out
    assert f"NVRTC {'.'.join(map(str, nvrtc_version()))}" in out
    assert f"Python {platform.python_version()}, NumPy {np.__version__}" in out
    assert "virtual NVIDIA H200" in out and "h100" in out and "mi300x" in out
    real = detect_real_gpus()
    assert ("none detected" in out) == (not real["detected"])


def test_info_json_parses(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["L1"]["devices"][0]["arch"] == "sm_90" and "float32" in facts["L5"]["dtypes"]
    assert set(facts["real_gpu"]) == {"detected", "nodes", "driver_versions", "management_libraries",
                                      "management_tools"}


def test_fake_nvidia_and_amd_drivers_are_detected(tmp_path: Path) -> None:
    assert detect_real_gpus(tmp_path, path=str(tmp_path / "bin"))["detected"] is False
    (tmp_path / "dev" / "dri").mkdir(parents=True)
    for node in ("nvidia0", "nvidia1", "nvidiactl", "kfd", "dri/renderD128"):
        (tmp_path / "dev" / node).touch()
    version = tmp_path / "proc" / "driver" / "nvidia" / "version"
    version.parent.mkdir(parents=True)
    version.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.86.15\nGCC version: 12\n")
    (tmp_path / "bin").mkdir()
    tool = tmp_path / "bin" / "nvidia-smi"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    real = detect_real_gpus(tmp_path, path=str(tmp_path / "bin"))
    assert real["detected"] is True
    assert real["nodes"]["nvidia"] == ["/dev/nvidia0", "/dev/nvidia1", "/dev/nvidiactl",
                                       "/proc/driver/nvidia/version"]
    assert real["nodes"]["amd"] == ["/dev/kfd", "/dev/dri/renderD128"]
    assert "570.86.15" in real["driver_versions"]["nvidia"]
    assert real["management_tools"] == {"nvidia": os.fspath(tool)}
