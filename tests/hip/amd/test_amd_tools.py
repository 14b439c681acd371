"""`strata hipcc` (HIP file -> AMD code object from the shell), hipGetDeviceProperties on an MI300X and
hipFuncGetAttributes of code-object kernels. The hipcc compile test skips without clang-19 (`make amd`);
the others use the checked-in code objects."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata import cli
from strata.hip import amd, capi
from strata.hip.amd import CodeObjectModule
from strata.hip.hipcc import hipcc_command
from strata.hw.amdgpu.codeobject import parse

HERE = Path(__file__).parent
needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")


# -- strata hipcc

def test_hipcc_uses_strata_clang_command_and_passes_flags_through() -> None:
    cmd = hipcc_command(["-DN=4", "k.hip", "-o", "out.co", "--offload-arch=gfx90a", "-ffast-math"])
    assert cmd == amd.clang_command("gfx90a", ["-DN=4", "k.hip", "-o", "out.co", "-ffast-math"])
    assert hipcc_command(["k.hip"])[-3:] == ["k.hip", "-o", "k.co"]  # default output beside the source
    assert "--offload-arch=gfx942:sramecc+:xnack-" in hipcc_command(["--offload-arch", "gfx942:sramecc+:xnack-",
                                                                     "k.hip", "-ok.co"])


@pytest.mark.parametrize("argv, message", [
    (["k.hip", "--offload-arch=gfx1100"], "gfx1100 is not supported"),
    (["-O2"], "no input file"),
    (["k.hip", "--offload-arch"], "needs a value"),
])
def test_hipcc_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["hipcc", *argv]) == 2
    assert message in capsys.readouterr().err


def test_hipcc_without_clang_names_the_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("strata.hip.hipcc.clang_path", lambda: None)
    assert cli.main(["hipcc", str(tmp_path / "k.hip"), "-o", str(tmp_path / "k.co")]) == 2
    err = capsys.readouterr().err
    assert "clang-19 is not installed" in err and "make amd" in err and "apt-get install clang-19" in err
    assert not (tmp_path / "k.co").exists()


@needs_clang
def test_hipcc_builds_a_code_object_strata_loads_and_runs(tmp_path: Path, mi300x: cuda.Device) -> None:
    src = tmp_path / "scale.hip"
    src.write_text('''#include <hip/hip_runtime.h>
extern "C" __global__ void scale(int n, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = y[i] * FACTOR + warpSize;
}''')
    out = tmp_path / "scale.co"
    assert cli.main(["hipcc", "-DFACTOR=3.0f", str(src), "-o", str(out), "--offload-arch=gfx942"]) == 0
    mod = CodeObjectModule.from_file(out)
    assert mod.arch == "gfx942" and mod.kernels == ["scale"]
    x = np.random.default_rng(0).random(300, np.float32)
    y = hip.to_device(x)
    mod.get_function("scale")(2, 256, (np.int32(300), y))
    # clang contracts y * 3 + 64 into one fma (rounded once): exact in float64, then rounded to float32
    np.testing.assert_array_equal(y.get(), (x.astype(np.float64) * 3 + 64).astype(np.float32))


@needs_clang
def test_hipcc_reports_clang_errors(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "bad.hip"
    src.write_text('extern "C" __global__ void k(int* p) { *p = undeclared; }\n')
    assert cli.main(["hipcc", str(src), "-o", str(tmp_path / "bad.co")]) != 0
    assert "undeclared" in capfd.readouterr().err


# -- hipGetDeviceProperties on an MI300X

def test_mi300x_device_properties_are_amd_values(mi300x: cuda.Device) -> None:
    for p in (hip.get_device_properties(), capi.hipGetDeviceProperties(mi300x.index)):
        assert p.name == "AMD Instinct MI300X" and p.gcnArchName == "gfx942:sramecc+:xnack-"
        assert (p.warpSize, p.multiProcessorCount, p.maxThreadsPerBlock) == (64, 304, 1024)
        assert p.sharedMemPerBlock == 64 * 1024 and (p.major, p.minor) == (9, 4)
    # the arch part is what a code object must match (strata.hip.amd loads it on spec.arch)
    assert hip.get_device_properties().gcnArchName.split(":")[0] == mi300x.spec.arch


def test_nvidia_device_properties_unchanged() -> None:
    dev = cuda.Device(model="h200")
    p = hip.get_device_properties(dev)
    assert (p.warpSize, p.gcnArchName, p.sharedMemPerBlock) == (32, "sm_90", 48 * 1024)


# -- hipFuncGetAttributes from the code object metadata

@pytest.mark.parametrize("co, kernel", [("sgemm", "sgemm"), ("reduce", None), ("saxpy", "saxpy")])
def test_func_attributes_of_checked_in_code_objects(co: str, kernel: str | None, mi300x: cuda.Device) -> None:
    mod = CodeObjectModule.from_file(HERE / f"{co}.co")
    name = kernel or mod.kernels[0]
    k = mod.get_function(name)
    # the oracle: the metadata note read independently of the module (its .vgpr_count etc.)
    meta = next(m for m in parse((HERE / f"{co}.co").read_bytes()).metadata["amdhsa.kernels"]
                if m[".name"] == name)
    a = capi.hipFuncGetAttributes(k)
    assert a.num_regs == meta[".vgpr_count"] and a.shared_size_bytes == meta[".group_segment_fixed_size"]
    assert isinstance(a, amd.AmdFuncAttributes) and a.sgprs == meta[".sgpr_count"]
    assert a.local_size_bytes == meta[".private_segment_fixed_size"]
    assert capi.hipFuncGetAttribute(4, k) == meta[".vgpr_count"]  # HIP_FUNC_ATTRIBUTE_NUM_REGS
    assert capi.hipFuncGetAttribute(1, k) == meta[".group_segment_fixed_size"]  # ..._SHARED_SIZE_BYTES


def test_sgemm_attributes_match_its_tiles(mi300x: cuda.Device) -> None:
    a = CodeObjectModule.from_file(HERE / "sgemm.co").get_function("sgemm").attributes
    assert a.shared_size_bytes == 2 * 16 * 16 * 4  # two 16x16 float tiles in LDS (sgemm.hip)
    assert 0 < a.num_regs <= 512 and a.binary_version == 94
