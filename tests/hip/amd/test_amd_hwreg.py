"""The MODE register on the CDNA engine: s_getreg_b32 / s_setreg_b32 / s_setreg_imm32_b32 on HW_REG_MODE.
clang emits s_setreg_imm32_b32 for every float division in a kernel built with -fgpu-flush-denormals-to-zero
(denormals on around the fma steps), which the engine could not even decode before; the division itself is
checked in test_amd_float_edges.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.hw.amdgpu.decoder import decode
from strata.hw.amdgpu.errors import UnsupportedAmdInstruction

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed (make amd)")
_LLVM = ("llvm-mc-19", "llvm-objdump-19", "llvm-objcopy-19")
needs_llvm = pytest.mark.skipif(any(shutil.which(t) is None for t in _LLVM),
                                reason="llvm-mc-19, llvm-objdump-19 or llvm-objcopy-19 not installed (make amd)")

SRC = """#include <hip/hip_runtime.h>
#define MODE_DENORM32 ((1 << 0) | (4 << 6) | ((2 - 1) << 11))   // hwreg(HW_REG_MODE, 4, 2)
#define MODE_ROUND32 ((1 << 0) | (0 << 6) | ((2 - 1) << 11))    // hwreg(HW_REG_MODE, 0, 2)
extern "C" __global__ void modes(const float* a, float* o, unsigned* m, int on) {
    int i = threadIdx.x;
    m[0] = __builtin_amdgcn_s_getreg(MODE_DENORM32);
    if (on) __builtin_amdgcn_s_setreg(MODE_DENORM32, 3);
    m[1] = __builtin_amdgcn_s_getreg(MODE_DENORM32);
    o[i] = a[i] * 0.75f;
}
extern "C" __global__ void round_up(float* o) {
    __builtin_amdgcn_s_setreg(MODE_ROUND32, 2);
    o[threadIdx.x] = 1.0f / 3.0f + o[threadIdx.x];
}"""


@needs_clang
@pytest.mark.parametrize("flush", [True, False])
def test_mode_starts_from_the_descriptor_and_s_setreg_changes_it(mi300x: cuda.Device, flush: bool) -> None:
    mod = hip.compile(SRC, options=["-fgpu-flush-denormals-to-zero"] if flush else [])
    t = np.finfo(np.float32).tiny
    a = np.full(64, t / 2, np.float32)  # a denormal: 0.75 of it is one too
    for on in (0, 1):
        o, m = hip.zeros(64, np.float32), hip.zeros(2, np.uint32)
        mod.get_function("modes")(1, 64, (hip.to_device(a), o, m, np.int32(on)))
        start = 0 if flush else 3  # FLOAT_DENORM_MODE_32 of the kernel descriptor
        assert m.get().tolist() == [start, 3 if on else start]
        kept = on or not flush
        np.testing.assert_array_equal(o.get(), a * np.float32(0.75) if kept else np.zeros(64, np.float32))


@needs_clang
def test_a_rounding_mode_is_refused_not_ignored(mi300x: cuda.Device) -> None:
    mod = hip.compile(SRC)
    o = hip.zeros(64, np.float32)
    with pytest.raises(UnsupportedAmdInstruction, match="rounding mode"):
        mod.get_function("round_up")(1, 64, (o,))
        hip.synchronize()


@needs_llvm
def test_hwreg_operands_print_as_objdump_does(tmp_path: Path) -> None:
    asm = tmp_path / "hw.s"
    asm.write_text("\n".join([
        "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3", "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0x12345",
        "s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), -1", "s_getreg_b32 s3, hwreg(HW_REG_MODE, 4, 2)",
        "s_setreg_b32 hwreg(HW_REG_MODE, 0, 8), s5", "s_getreg_b32 s3, hwreg(HW_REG_MODE)",
        "s_setreg_imm32_b32 hwreg(HW_REG_TRAPSTS, 0, 1), 65", "s_getreg_b32 s3, hwreg(30, 0, 1)"]) + "\n")
    obj, raw = tmp_path / "hw.o", tmp_path / "hw.bin"
    subprocess.run(["llvm-mc-19", "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942", "-filetype=obj", str(asm), "-o",
                    str(obj)], check=True)
    subprocess.run(["llvm-objcopy-19", "-O", "binary", "--only-section=.text", str(obj), str(raw)], check=True)
    listing = subprocess.run(["llvm-objdump-19", "-d", "--mcpu=gfx942", str(obj)], check=True, capture_output=True,
                             text=True).stdout
    want = [line.split("//")[0].strip() for line in listing.splitlines() if line.startswith("\ts_")]
    assert [i.text for i in decode(raw.read_bytes(), "hw")] == want and len(want) == 8
