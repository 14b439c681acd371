"""STRATA_GPU=mi250x and STRATA_DEVICES=...,mi250x select the MI250X (gfx90a) the catalogue describes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from strata import config

HERE = Path(__file__).parent


def test_mi250x_is_a_gpu_model_for_strata_gpu_and_strata_devices() -> None:
    assert config.settings({"STRATA_GPU": "MI250X"}).gpu == "mi250x"
    assert config.settings({"STRATA_DEVICES": "h200,2xmi250x"}).devices == ("h200", "mi250x", "mi250x")
    with pytest.raises(ValueError, match="mi250x"):  # the message lists it among the models
        config.settings({"STRATA_GPU": "mi260x"})


_PROGRAM = """
import numpy as np, strata.cuda as cuda, strata.hip as hip
from strata.hip.amd import CodeObjectModule
props = hip.get_device_properties()
print(cuda.device_count(), props.gcnArchName, props.warpSize)
mod = CodeObjectModule.from_file(r"{co}")
n = 1000
x, y = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
dy = hip.to_device(y)
mod.get_function("saxpy")(4, 256, (np.int32(n), np.float32(2), hip.to_device(x), dy))
print(bool((dy.get() == 2 * x + 1).all()))
"""


def test_strata_devices_mi250x_runs_gfx90a_code_in_a_process() -> None:
    env = {**os.environ, "STRATA_DEVICES": "mi250x", "STRATA_GPU": "mi250x"}
    out = subprocess.run([sys.executable, "-c", _PROGRAM.format(co=HERE / "gfx90a" / "saxpy.co")], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    count, arch, warp, ok = out.stdout.split()
    assert (count, arch.split(":")[0], warp, ok) == ("1", "gfx90a", "64", "True")
